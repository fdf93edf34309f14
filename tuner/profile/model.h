// What tunetab needs of a Hugging Face config.json to derive a model's GEMM and fused-MoE problems, read
// per architecture; an unknown architecture is read generically when it has the fields a MoE needs.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace tunetab::profile {

enum class Attention { kNone, kGqa, kMla };

/// The shapes of a model's linears and experts, as its config.json gives them.
struct Model {
  std::string source;           // the file, for errors
  std::string architecture;     // architectures[0]
  std::int64_t hidden = 0;      // hidden_size: the GEMMs' K (and fused MoE's model_dim)
  std::string hidden_act = "silu";
  std::int64_t vocab = 0;       // 0: unknown, no lm_head key

  Attention attention = Attention::kNone;
  std::int64_t heads = 0;       // query heads (GQA and MLA)
  std::int64_t kv_heads = 0;    // GQA
  std::int64_t head_dim = 0;    // GQA
  std::int64_t q_lora_rank = 0; // MLA; 0: queries projected from the hidden state directly
  std::int64_t kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;  // MLA
  std::int64_t index_heads = 0, index_head_dim = 0;  // DSA indexer (GLM-5, DeepSeek-V3.2); 0: none

  std::int64_t dense_intermediate = 0;   // dense MLP layers' intermediate size; 0: no dense MLP layer
  std::int64_t experts = 0;              // routed experts; 0: a dense model
  std::int64_t experts_per_token = 0;
  std::int64_t expert_intermediate = 0;  // one routed expert's intermediate size
  std::int64_t shared_intermediate = 0;  // all shared experts together; 0: none
  std::string experts_field, expert_intermediate_field;  // the config's names for the two, for errors

  bool is_moe() const { return experts > 0; }
  nlohmann::json to_json() const;
};

/// Reads and parses a config.json; Input errors name the file and the field.
Model read_model(const std::string& path);
/// Parses a config.json already read; `source` names it in errors.
Model parse_model(const nlohmann::json& config, const std::string& source);

}  // namespace tunetab::profile
