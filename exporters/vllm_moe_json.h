// vLLM's fused-MoE Triton configs: one JSON file per (E, N, device, dtype, block shape), named
// E={E},N={N},device_name={name}[,dtype={dtype}][,block_shape=[{n},{k}]].json, that maps batch sizes M to
// kernel configs: {"1": {"BLOCK_SIZE_M": 16, ...}, "2": {...}}. vLLM serves an M from the key nearest to it.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tunetab::exporters {

/// What vLLM builds a config file's name from (get_config_file_name).
struct VllmMoeSelector {
  std::int64_t e = 0;       // experts on the rank
  std::int64_t n = 0;       // intermediate size per rank: w2.shape[2], the expert intermediate size / tp
  std::string device_name;  // torch's device name with '_' for spaces: NVIDIA_H200, AMD_Instinct_MI300X
  std::string dtype;        // empty for bf16/fp16 weights; fp8_w8a8, int8_w8a16, ...
  std::string block_shape;  // empty, or the quantization block as "[128,128]"
  bool operator==(const VllmMoeSelector&) const = default;
};

/// Parses the name of `path` (its last component); Input error naming the path and the expected form.
VllmMoeSelector parse_vllm_moe_file_name(const std::string& path);
/// The file name vLLM looks for.
std::string vllm_moe_file_name(const VllmMoeSelector& s);

/// One batch size's kernel config.
struct VllmMoeConfig {
  std::int64_t m = 0;
  std::int64_t block_size_m = 0;
  nlohmann::json config;
};

/// One config file.
struct VllmMoeFile {
  std::string source;
  VllmMoeSelector selector;
  std::vector<VllmMoeConfig> configs;  // file order; a key written twice is listed twice, with the value JSON keeps (the last)
};

/// Reads a config file; Input errors name the file and the key and say what was expected.
VllmMoeFile read_vllm_moe_json(const std::string& path);
/// Parses a config file's text; `path` names it (and gives the selector).
VllmMoeFile parse_vllm_moe_json(const std::string& text, const std::string& path);

}  // namespace tunetab::exporters
