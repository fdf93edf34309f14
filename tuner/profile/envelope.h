// The serving envelope of one deployment: parallelism, batch limits, quantization and device keys, named
// as vLLM names them. It comes from flags, a profile file (Boost.Program_options config-file syntax), or
// both, flags winning.
#pragma once
#include <cstdint>
#include <string>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "tuner/profile/lookup.h"

namespace tunetab::profile {

enum class Quant { kBf16, kFp8Block128, kFp8PerToken };
std::string to_string(Quant q);  // "bf16", "fp8-block128", "fp8-per-token"
/// Input error naming --quant and the accepted names otherwise.
Quant quant_from_string(const std::string& s);

/// One deployment's settings; defaults are vLLM's (max-num-batched-tokens 8192, max-num-seqs 256).
struct Envelope {
  std::string hf_config;                       // the model's config.json
  int tp = 1;                                  // tensor-parallel size
  int ep = 1;                                  // expert-parallel size: experts split E/ep, intermediate unsplit
  bool fuse_shared_experts = false;            // shared experts run inside the fused MoE (AITER)
  std::int64_t max_num_batched_tokens = 8192;  // tokens per forward pass: the largest M
  std::int64_t max_num_seqs = 256;             // sequences per forward pass: the largest lm_head M
  Quant quant = Quant::kBf16;
  std::string gfx = "gfx942";                  // device key; also picks the FP8 format
  int cu_num = 0;                              // device key; 0 in a flag means the gfx's usual count
  MDomain gemm_fine_rows{0, 0};                // AITER GEMM tables: Ms with rows at the fine padding (first 0: none)

  /// AITER's torch name of the FP8 type: e4m3fnuz on gfx940..gfx942, e4m3fn on gfx950 and NVIDIA.
  std::string fp8_torch_dtype() const;
  /// Input error naming the setting that is out of range.
  void validate() const;
  nlohmann::json to_json() const;
};

/// The envelope settings as flags (--tp, --quant, ...); a profile file uses the same names as keys.
boost::program_options::options_description envelope_options();

/// Adds the profile file `profile` (none when empty) to the parsed flags in `vm` without overriding them,
/// then builds and validates the envelope. A relative hf-config in the file is relative to the file.
/// `need_model` false: the envelope may name no config.json (only its device and batch keys are used).
Envelope envelope_from(boost::program_options::variables_map& vm, const std::string& profile, bool need_model = true);

}  // namespace tunetab::profile
