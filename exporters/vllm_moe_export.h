// vLLM's fused-MoE JSON config files written from tunetab's chosen rows: one file per (E, N, device,
// dtype, block shape), keys by batch size M. exporters/vllm_moe_json.h reads them back.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exporters/vllm_moe_json.h"

namespace tunetab::exporters {

/// One batch size's chosen config, in vLLM's vocabulary: BLOCK_SIZE_M is the routing block (block_m),
/// BLOCK_SIZE_N the stage-1 N tile, BLOCK_SIZE_K the K tile, num_stages the pipeline depth.
struct VllmMoeChoice {
  std::int64_t m = 0;
  int block_size_m = 16, block_size_n = 64, block_size_k = 128;
  int group_size_m = 1;
  int num_warps = 4;
  int num_stages = 3;
  std::string config_name;  // tunetab's config, for the caller's records: vLLM's file has no field for it
  double us = 0;
};

/// The file vLLM opens for a fused MoE with `experts` local experts and `inter_dim` per-rank intermediate
/// size (w2.shape[2]) on `device_name` (torch's name, spaces as '_'); FP8 per-1x128 adds
/// dtype=fp8_w8a8 and block_shape=[128,128], bf16 adds neither.
VllmMoeSelector vllm_moe_selector(std::int64_t experts, std::int64_t inter_dim, const std::string& device_name, bool fp8_block128);

/// The file's JSON: batch sizes ascending, each {BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, GROUP_SIZE_M,
/// num_warps, num_stages}. Input error on a repeated or non-positive M.
nlohmann::ordered_json vllm_moe_config_json(const std::vector<VllmMoeChoice>& rows);

/// Writes the file into `dir` under vLLM's name for `selector` and returns its path.
std::string write_vllm_moe_json(const std::string& dir, const VllmMoeSelector& selector,
                                const std::vector<VllmMoeChoice>& rows);

}  // namespace tunetab::exporters
