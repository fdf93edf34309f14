#include "tuner/profile/matrix.h"

#include <algorithm>
#include <sstream>

#include "exporters/csv.h"
#include "tuner/error.h"

namespace tunetab::profile {

namespace {

const char* const kBf16Torch = "torch.bfloat16";
// NOTE: vLLM pads the vocabulary to a multiple of 64 before splitting lm_head across ranks.
constexpr std::int64_t kVocabPadding = 64;

/// value / parts; Input error naming the file, the field and the flag when it does not divide.
std::int64_t split(std::int64_t value, int parts, const Model& m, const std::string& field, const char* flag) {
  if (value % parts)
    throw_input(m.source + ": " + field + " " + std::to_string(value) + " is not divisible by " + flag + " " +
                std::to_string(parts));
  return value / parts;
}

std::string act_type(const Model& m) {
  if (m.hidden_act == "silu" || m.hidden_act == "swish") return "ActivationType.Silu";
  if (m.hidden_act.rfind("gelu", 0) == 0) return "ActivationType.Gelu";
  throw_input(m.source + ": field 'hidden_act' is '" + m.hidden_act + "': AITER's fused MoE takes silu or gelu");
}

/// Collects dense GEMM keys; a shape that several linears share is one key naming all of them.
class GemmKeys {
 public:
  explicit GemmKeys(const Envelope& env) : env_(env) {}
  /// A linear quantized as the deployment says, hit with up to max-num-batched-tokens rows.
  void add(const std::string& layer, std::int64_t n, std::int64_t k) { add(layer, n, k, env_.quant, env_.max_num_batched_tokens); }
  void add(const std::string& layer, std::int64_t n, std::int64_t k, Quant q, std::int64_t max_m) {
    for (auto& e : entries_) {
      if (e.key.n == n && e.key.k == k && e.key.quant == q) {
        e.key.layers.push_back(layer);
        e.domain.last = std::max(e.domain.last, max_m);
        return;
      }
    }
    entries_.push_back({GemmKey{n, k, q, {layer}}, MDomain{1, max_m}, {}, {}});
  }
  std::vector<Entry<GemmKey>> take() { return std::move(entries_); }

 private:
  const Envelope& env_;
  std::vector<Entry<GemmKey>> entries_;
};

void add_attention(const Model& m, const Envelope& env, GemmKeys& gemm) {
  const int tp = env.tp;
  if (m.attention == Attention::kNone) return;
  const std::int64_t heads = split(m.heads, tp, m, "num_attention_heads", "--tp");
  if (m.attention == Attention::kGqa) {
    // NOTE: vLLM replicates KV heads when tp exceeds their count: each rank then keeps one.
    if (m.kv_heads < tp && tp % m.kv_heads)
      throw_input(m.source + ": num_key_value_heads " + std::to_string(m.kv_heads) + " neither divides nor is a multiple of --tp " +
                  std::to_string(tp));
    const std::int64_t kv = m.kv_heads >= tp ? split(m.kv_heads, tp, m, "num_key_value_heads", "--tp") : 1;
    gemm.add("qkv_proj", (heads + 2 * kv) * m.head_dim, m.hidden);
    gemm.add("o_proj", m.hidden, heads * m.head_dim);
    return;
  }
  // MLA as vLLM runs it. q_a_proj and kv_a_proj_with_mqa read the same hidden state and are fused into
  // one replicated GEMM. kv_b_proj is the prefill path's GEMM; decode absorbs it into batched GEMMs per
  // head (W_UK, W_UV), which are not dense GEMM keys and are left out here.
  const std::int64_t qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
  if (m.q_lora_rank) {
    gemm.add("fused_qkv_a_proj", m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim, m.hidden);
    gemm.add("q_b_proj", heads * qk_head, m.q_lora_rank);
  } else {
    gemm.add("q_proj", heads * qk_head, m.hidden);
    gemm.add("kv_a_proj_with_mqa", m.kv_lora_rank + m.qk_rope_head_dim, m.hidden);
  }
  gemm.add("kv_b_proj", heads * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank);
  gemm.add("o_proj", m.hidden, heads * m.v_head_dim);
  if (m.index_heads) {
    // DSA indexer, replicated. NOTE: AITER's GLM-5 tables tune wk and weights_proj as bf16 GEMMs and
    // wq_b in the checkpoint's FP8; we follow them.
    gemm.add("indexer.wq_b", m.index_heads * m.index_head_dim, m.q_lora_rank ? m.q_lora_rank : m.hidden);
    gemm.add("indexer.wk", m.index_head_dim, m.hidden, Quant::kBf16, env.max_num_batched_tokens);
    gemm.add("indexer.weights_proj", m.index_heads, m.hidden, Quant::kBf16, env.max_num_batched_tokens);
  }
}

/// The fused-MoE key, with the shared experts either fused into it or added as dense GEMMs.
FmoeKey moe_key(const Model& m, const Envelope& env, GemmKeys& gemm) {
  FmoeKey k;
  k.model_dim = m.hidden;
  k.topk = m.experts_per_token;
  if (env.ep > 1) {  // NOTE: under EP vLLM runs the MoE with TP 1: whole experts, E/ep of them per rank.
    k.expert = split(m.experts, env.ep, m, m.experts_field, "--ep");
    k.inter_dim = m.expert_intermediate;
  } else {
    k.expert = m.experts;
    k.inter_dim = split(m.expert_intermediate, env.tp, m, m.expert_intermediate_field, "--tp");
  }
  if (env.fuse_shared_experts) {
    if (!m.shared_intermediate) throw_input("--fuse-shared-experts: " + m.source + " has no shared experts");
    if (m.shared_intermediate % m.expert_intermediate)
      throw_input("--fuse-shared-experts: " + m.source + ": the shared experts' intermediate size " +
                  std::to_string(m.shared_intermediate) + " is not a whole number of experts of " +
                  std::to_string(m.expert_intermediate));
    // AITER runs each shared expert as one more expert that every token picks.
    const std::int64_t shared = m.shared_intermediate / m.expert_intermediate;
    k.expert += shared;
    k.topk += shared;
  } else if (m.shared_intermediate) {
    const std::int64_t s = split(m.shared_intermediate, env.tp, m, "shared experts' intermediate size", "--tp");
    gemm.add("shared_experts.gate_up_proj", 2 * s, m.hidden);
    gemm.add("shared_experts.down_proj", m.hidden, s);
  }
  k.act_type = act_type(m);
  k.dtype = kBf16Torch;
  switch (env.quant) {
    case Quant::kBf16:
      k.q_dtype_a = k.q_dtype_w = kBf16Torch;
      k.q_type = "QuantType.No";
      break;
    case Quant::kFp8Block128:
      k.q_dtype_a = k.q_dtype_w = env.fp8_torch_dtype();
      k.q_type = "QuantType.per_1x128";
      break;
    case Quant::kFp8PerToken:
      k.q_dtype_a = k.q_dtype_w = env.fp8_torch_dtype();
      k.q_type = "QuantType.per_Token";
      break;
  }
  return k;
}

template <typename Key>
void bucket(Entry<Key>& e, RuleKind rule, std::int64_t n, MDomain gemm_fine = {0, 0}) {
  e.rule = rule;
  e.buckets = LookupRule::make(rule, n, e.domain.last, gemm_fine).buckets(e.domain);
}

nlohmann::json buckets_json(const std::vector<Bucket>& buckets) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& b : buckets) out.push_back({{"m", b.m}, {"first", b.first}, {"last", b.last}});
  return out;
}

}  // namespace

const std::vector<std::string>& aiter_fmoe_columns() {
  static const std::vector<std::string> cols = {"token",     "model_dim", "inter_dim", "expert",   "topk",     "act_type",
                                                "dtype",     "q_dtype_a", "q_dtype_w", "q_type",   "use_g1u1", "doweight_stage1"};
  return cols;
}

const std::vector<AiterGemmFile>& aiter_gemm_files() {
  // clang-format off
  static const std::vector<AiterGemmFile> files = {
    {Quant::kBf16,         "bf16_untuned_gemm.csv",            {"M", "N", "K", "bias", "dtype", "outdtype", "scaleAB", "bpreshuffle"}},
    {Quant::kFp8Block128,  "a8w8_blockscale_untuned_gemm.csv", {"M", "N", "K"}},
    {Quant::kFp8PerToken,  "a8w8_untuned_gemm.csv",            {"M", "N", "K", "q_dtype_w"}},
  };
  // clang-format on
  return files;
}

const AiterGemmFile& aiter_gemm_file(Quant q) {
  for (const auto& f : aiter_gemm_files())
    if (f.quant == q) return f;
  TUNETAB_THROW(kInfra, "no AITER GEMM file for quantization " + to_string(q));
}

std::vector<std::string> aiter_gemm_fields(const GemmKey& key, const Envelope& env) {
  std::vector<std::string> out = {std::to_string(key.n), std::to_string(key.k)};
  switch (key.quant) {
    case Quant::kBf16: out.insert(out.end(), {"False", kBf16Torch, kBf16Torch, "False", "False"}); break;
    case Quant::kFp8Block128: break;
    case Quant::kFp8PerToken: out.push_back(env.fp8_torch_dtype()); break;
  }
  return out;
}

std::vector<std::string> FmoeKey::fields() const {
  return {std::to_string(model_dim), std::to_string(inter_dim), std::to_string(expert), std::to_string(topk),
          act_type, dtype, q_dtype_a, q_dtype_w, q_type, std::to_string(use_g1u1), std::to_string(doweight_stage1)};
}

Matrix derive_matrix(const Model& model, const Envelope& env, const Rules& rules) {
  Matrix out{model, env, {}, {}};
  GemmKeys gemm(env);
  add_attention(model, env, gemm);
  if (model.dense_intermediate) {
    const std::int64_t i = split(model.dense_intermediate, env.tp, model, "intermediate_size", "--tp");
    gemm.add("mlp.gate_up_proj", 2 * i, model.hidden);
    gemm.add("mlp.down_proj", model.hidden, i);
  }
  if (model.is_moe()) {
    out.fmoe.push_back({moe_key(model, env, gemm), MDomain{1, env.max_num_batched_tokens}, {}, {}});
    // NOTE: the router stays unquantized in FP8 checkpoints and is replicated on every rank.
    gemm.add("mlp.gate", model.experts, model.hidden, Quant::kBf16, env.max_num_batched_tokens);
  } else if (env.ep > 1) {
    throw_input("--ep " + std::to_string(env.ep) + ": " + model.source + " is a dense model, it has no experts to split");
  }
  if (model.vocab) {
    const std::int64_t padded = (model.vocab + kVocabPadding - 1) / kVocabPadding * kVocabPadding;
    // lm_head runs on one row per sequence (the sampled positions), not on every token of the step.
    gemm.add("lm_head", split(padded, env.tp, model, "vocab_size (padded to a multiple of 64)", "--tp"), model.hidden,
             Quant::kBf16, env.max_num_seqs);
  }
  out.gemm = gemm.take();
  for (auto& e : out.fmoe) bucket(e, rules.fmoe, 0);
  for (auto& e : out.gemm) bucket(e, rules.gemm, e.key.n, env.gemm_fine_rows);
  return out;
}

nlohmann::json to_json(const Matrix& m) {
  nlohmann::json fmoe = nlohmann::json::array(), gemm = nlohmann::json::array();
  for (const auto& e : m.fmoe) {
    const auto& k = e.key;
    fmoe.push_back({{"model_dim", k.model_dim}, {"inter_dim", k.inter_dim}, {"expert", k.expert}, {"topk", k.topk},
                    {"act_type", k.act_type}, {"dtype", k.dtype}, {"q_dtype_a", k.q_dtype_a}, {"q_dtype_w", k.q_dtype_w},
                    {"q_type", k.q_type}, {"use_g1u1", k.use_g1u1}, {"doweight_stage1", k.doweight_stage1},
                    {"m_domain", {e.domain.first, e.domain.last}}, {"rule", to_string(e.rule)},
                    {"buckets", buckets_json(e.buckets)}});
  }
  for (const auto& e : m.gemm) {
    gemm.push_back({{"layers", e.key.layers}, {"N", e.key.n}, {"K", e.key.k}, {"quant", to_string(e.key.quant)},
                    {"m_domain", {e.domain.first, e.domain.last}}, {"rule", to_string(e.rule)},
                    {"buckets", buckets_json(e.buckets)}});
  }
  return {{"model", m.model.to_json()}, {"envelope", m.envelope.to_json()}, {"fmoe", fmoe}, {"gemm", gemm}};
}

std::vector<std::pair<std::string, std::string>> aiter_untuned_tables(const Matrix& m) {
  std::vector<std::pair<std::string, std::string>> files;
  if (!m.fmoe.empty()) {
    std::ostringstream os;
    csv::write_row(os, aiter_fmoe_columns());
    for (const auto& e : m.fmoe) {
      for (const auto& b : e.buckets) {
        std::vector<std::string> row = {std::to_string(b.m)};
        for (auto& f : e.key.fields()) row.push_back(std::move(f));
        csv::write_row(os, row);
      }
    }
    files.emplace_back("untuned_fmoe.csv", os.str());
  }
  for (const auto& file : aiter_gemm_files()) {
    std::ostringstream os;
    for (const auto& e : m.gemm) {
      if (e.key.quant != file.quant) continue;
      for (const auto& b : e.buckets) {
        std::vector<std::string> row = {std::to_string(b.m)};
        for (auto& f : aiter_gemm_fields(e.key, m.envelope)) row.push_back(std::move(f));
        csv::write_row(os, row);
      }
    }
    if (os.tellp() == 0) continue;
    std::ostringstream with_header;
    csv::write_row(with_header, file.columns);
    files.emplace_back(file.name, with_header.str() + os.str());
  }
  return files;
}

}  // namespace tunetab::profile
