#include "tuner/profile/model.h"

#include <fstream>

#include "tuner/error.h"

namespace tunetab::profile {

namespace {

struct ArchSpec {
  const char* name;
  Attention attention;
  const char* experts;       // field holding the routed-expert count; nullptr: a dense model
  const char* expert_inter;  // field holding one routed expert's intermediate size
};

// clang-format off
const ArchSpec kArchs[] = {
  {"DeepseekV3ForCausalLM", Attention::kMla, "n_routed_experts",  "moe_intermediate_size"},
  {"DeepseekV2ForCausalLM", Attention::kMla, "n_routed_experts",  "moe_intermediate_size"},
  {"GlmMoeDsaForCausalLM",  Attention::kMla, "n_routed_experts",  "moe_intermediate_size"},
  {"Glm4MoeForCausalLM",    Attention::kGqa, "n_routed_experts",  "moe_intermediate_size"},
  {"Qwen3MoeForCausalLM",   Attention::kGqa, "num_experts",       "moe_intermediate_size"},
  {"MixtralForCausalLM",    Attention::kGqa, "num_local_experts", "intermediate_size"},
  {"MiniMaxM2ForCausalLM",  Attention::kGqa, "num_local_experts", "intermediate_size"},
  {"LlamaForCausalLM",      Attention::kGqa, nullptr,             nullptr},
  {"MistralForCausalLM",    Attention::kGqa, nullptr,             nullptr},
  {"Qwen2ForCausalLM",      Attention::kGqa, nullptr,             nullptr},
  {"Qwen3ForCausalLM",      Attention::kGqa, nullptr,             nullptr},
};
// clang-format on

const char* const kExpertCountFields[] = {"n_routed_experts", "num_experts", "num_local_experts"};

/// Typed reads of a config's fields; errors name the file, the field and the architecture.
class Fields {
 public:
  Fields(const nlohmann::json& j, const std::string& source, const std::string& arch)
      : j_(j), source_(source), arch_(arch) {}

  /// Present and not null (configs write `"q_lora_rank": null` for "none").
  bool has(const char* name) const {
    const auto it = j_.find(name);
    return it != j_.end() && !it->is_null();
  }
  std::int64_t required(const char* name) const {
    if (!has(name)) throw_input(source_ + ": field '" + name + "' missing (" + arch_ + " needs it)");
    return integer(name, 1);
  }
  std::int64_t optional(const char* name, std::int64_t fallback) const { return has(name) ? integer(name, 0) : fallback; }
  std::string string(const char* name, const std::string& fallback) const {
    if (!has(name)) return fallback;
    if (!j_[name].is_string()) throw_input(source_ + ": field '" + name + "' must be a string, got " + j_[name].dump());
    return j_[name].get<std::string>();
  }
  /// Whether some layers keep a dense MLP: DeepSeek/GLM's first_k_dense_replace and moe_layer_freq,
  /// Qwen-MoE's mlp_only_layers and decoder_sparse_step.
  bool has_dense_layers() const {
    const bool mlp_only = has("mlp_only_layers") && j_["mlp_only_layers"].is_array() && !j_["mlp_only_layers"].empty();
    return optional("first_k_dense_replace", 0) > 0 || optional("moe_layer_freq", 1) > 1 ||
           optional("decoder_sparse_step", 1) > 1 || mlp_only;
  }

 private:
  std::int64_t integer(const char* name, std::int64_t min) const {
    const auto& v = j_[name];
    if (!v.is_number_integer() || v.get<std::int64_t>() < min)
      throw_input(source_ + ": field '" + name + "' must be an integer >= " + std::to_string(min) + ", got " + v.dump());
    return v.get<std::int64_t>();
  }

  const nlohmann::json& j_;
  const std::string& source_;
  const std::string& arch_;
};

/// The spec of an architecture tunetab does not know, read from the fields present; Input error naming
/// the fields a MoE needs when any is missing.
ArchSpec generic_spec(const Fields& f, const std::string& source, const std::string& arch) {
  ArchSpec spec{nullptr, Attention::kNone, nullptr, f.has("moe_intermediate_size") ? "moe_intermediate_size" : "intermediate_size"};
  for (const char* name : kExpertCountFields)
    if (!spec.experts && f.has(name)) spec.experts = name;
  std::string missing;
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) missing += (missing.empty() ? "" : "; ") + what;
  };
  need(f.has("hidden_size"), "hidden_size");
  need(f.has(spec.expert_inter), "moe_intermediate_size or intermediate_size");
  need(spec.experts != nullptr, "the number of experts (n_routed_experts, num_experts or num_local_experts)");
  need(f.has("num_experts_per_tok"), "experts per token (num_experts_per_tok)");
  if (!missing.empty()) {
    std::string known;
    for (const auto& a : kArchs) known += std::string(known.empty() ? "" : ", ") + a.name;
    throw_input(source + ": unknown architecture '" + arch + "' (known: " + known +
                "); to read it as a generic MoE the file needs fields it lacks: " + missing);
  }
  spec.attention = f.has("kv_lora_rank") ? Attention::kMla : f.has("num_attention_heads") ? Attention::kGqa : Attention::kNone;
  return spec;
}

}  // namespace

nlohmann::json Model::to_json() const {
  nlohmann::json j = {{"source", source}, {"architecture", architecture}, {"hidden_size", hidden}};
  if (is_moe())
    j.update({{"experts", experts},
              {"experts_per_token", experts_per_token},
              {"expert_intermediate_size", expert_intermediate},
              {"shared_intermediate_size", shared_intermediate}});
  if (dense_intermediate) j["dense_intermediate_size"] = dense_intermediate;
  return j;
}

Model parse_model(const nlohmann::json& config, const std::string& source) {
  if (!config.is_object()) throw_input(source + ": expected a JSON object (a Hugging Face config.json)");
  std::string arch;
  if (const auto it = config.find("architectures"); it != config.end() && it->is_array() && !it->empty() && (*it)[0].is_string())
    arch = (*it)[0].get<std::string>();
  Model m;
  m.source = source;
  m.architecture = arch.empty() ? "(no architectures field)" : arch;
  const Fields f(config, source, m.architecture);

  const ArchSpec* spec = nullptr;
  for (const auto& a : kArchs)
    if (arch == a.name) spec = &a;
  const ArchSpec generic = spec ? ArchSpec{} : generic_spec(f, source, m.architecture);
  if (!spec) spec = &generic;
  const bool known = spec != &generic;

  m.hidden = f.required("hidden_size");
  m.hidden_act = f.string("hidden_act", m.hidden_act);
  m.vocab = known ? f.required("vocab_size") : f.optional("vocab_size", 0);

  m.attention = spec->attention;
  if (m.attention != Attention::kNone) m.heads = f.required("num_attention_heads");
  if (m.attention == Attention::kGqa) {
    m.kv_heads = f.optional("num_key_value_heads", m.heads);
    m.head_dim = f.optional("head_dim", m.hidden / m.heads);
  } else if (m.attention == Attention::kMla) {
    m.q_lora_rank = f.optional("q_lora_rank", 0);
    m.kv_lora_rank = f.required("kv_lora_rank");
    m.qk_nope_head_dim = f.required("qk_nope_head_dim");
    m.qk_rope_head_dim = f.required("qk_rope_head_dim");
    m.v_head_dim = f.required("v_head_dim");
    m.index_heads = f.optional("index_n_heads", 0);
    m.index_head_dim = f.optional("index_head_dim", 0);
  }

  if (!spec->experts) {
    m.dense_intermediate = f.required("intermediate_size");
    return m;
  }
  m.experts_field = spec->experts;
  m.expert_intermediate_field = spec->expert_inter;
  m.experts = f.required(spec->experts);
  m.experts_per_token = f.required("num_experts_per_tok");
  m.expert_intermediate = f.required(spec->expert_inter);
  if (f.has("n_shared_experts"))
    m.shared_intermediate = f.optional("n_shared_experts", 0) * m.expert_intermediate;
  else
    m.shared_intermediate = f.optional("shared_expert_intermediate_size", 0);
  // NOTE: where intermediate_size is the experts' own size (Mixtral, MiniMax) no layer is dense.
  if (m.expert_intermediate_field != "intermediate_size" && f.has_dense_layers())
    m.dense_intermediate = f.required("intermediate_size");
  return m;
}

Model read_model(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_input(path + ": cannot open the model config");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw_input(path + ": malformed JSON: " + e.what());
  }
  return parse_model(j, path);
}

}  // namespace tunetab::profile
