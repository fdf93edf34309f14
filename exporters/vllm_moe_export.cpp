#include "exporters/vllm_moe_export.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "tuner/error.h"
#include "tuner/text_file.h"

namespace tunetab::exporters {

VllmMoeSelector vllm_moe_selector(std::int64_t experts, std::int64_t inter_dim, const std::string& device_name,
                                  bool fp8_block128) {
  VllmMoeSelector s;
  s.e = experts;
  s.n = inter_dim;
  s.device_name = device_name;
  std::replace(s.device_name.begin(), s.device_name.end(), ' ', '_');
  if (fp8_block128) {
    s.dtype = "fp8_w8a8";
    s.block_shape = "[128,128]";
  }
  return s;
}

nlohmann::ordered_json vllm_moe_config_json(const std::vector<VllmMoeChoice>& rows) {
  std::vector<VllmMoeChoice> sorted = rows;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.m < b.m; });
  std::set<std::int64_t> seen;
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  for (const auto& r : sorted) {
    if (r.m <= 0) throw_input("vLLM fused-MoE config: batch size " + std::to_string(r.m) + " is not positive");
    if (!seen.insert(r.m).second) throw_input("vLLM fused-MoE config: batch size " + std::to_string(r.m) + " chosen twice");
    doc[std::to_string(r.m)] = {{"BLOCK_SIZE_M", r.block_size_m}, {"BLOCK_SIZE_N", r.block_size_n},
                                {"BLOCK_SIZE_K", r.block_size_k}, {"GROUP_SIZE_M", r.group_size_m},
                                {"num_warps", r.num_warps},       {"num_stages", r.num_stages}};
  }
  return doc;
}

std::string write_vllm_moe_json(const std::string& dir, const VllmMoeSelector& selector,
                                const std::vector<VllmMoeChoice>& rows) {
  const std::string path = (std::filesystem::path(dir) / vllm_moe_file_name(selector)).string();
  const std::string text = vllm_moe_config_json(rows).dump(4) + "\n";  // vLLM's benchmark_moe writes indent=4
  write_text_file(path, text);
  return path;
}

}  // namespace tunetab::exporters
