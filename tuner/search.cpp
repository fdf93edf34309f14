#include "tuner/search.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>

namespace tunetab {

std::vector<GemmCandidate> plan_candidates(const gemm::Problem& p, const Target& t) {
  std::vector<GemmCandidate> out;
  for (const gemm::Config& c : gemm::enumerate()) {
    GemmCandidate cand;
    cand.config = c;
    cand.unsupported = gemm::why_unsupported(p, c, t);
    cand.index_bits = required_index_bits(gemm::index_bounds(p, c));
    out.push_back(std::move(cand));
  }
  return out;
}

std::vector<KernelSource> needed_kernels(const std::vector<std::vector<GemmCandidate>>& plans) {
  std::vector<KernelSource> out;
  std::set<std::string> seen;
  for (const auto& plan : plans)
    for (const auto& cand : plan) {
      if (cand.unsupported) continue;
      for (auto& k : gemm::kernels(cand.config, cand.index_bits))
        if (seen.insert(k.name_expression).second) out.push_back(std::move(k));
    }
  return out;
}

std::vector<std::size_t> fastest(const std::vector<double>& median_us, std::size_t n) {
  std::vector<std::size_t> idx(median_us.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return median_us[a] < median_us[b]; });
  idx.resize(std::min(n, idx.size()));
  return idx;
}

std::optional<double> screening_time(const db::ResultRecord& r) {
  if (r.screen_us) return r.screen_us;
  if (r.disposition != db::Disposition::kPassed) return std::nullopt;
  return r.median_us.value_or(std::numeric_limits<double>::infinity());
}

std::vector<std::int64_t> anchor_ranking(const std::vector<db::ResultRecord>& passed) {
  std::vector<double> median_us;
  for (const auto& r : passed) median_us.push_back(r.median_us.value_or(std::numeric_limits<double>::infinity()));
  std::vector<std::int64_t> out;
  for (std::size_t i : fastest(median_us, median_us.size())) out.push_back(passed[i].config_id);
  return out;
}

std::vector<std::string> tiered_configs(const std::vector<std::vector<std::string>>& anchor_ranked,
                                        const std::vector<std::set<std::string>>& anchor_supported,
                                        const std::vector<std::string>& supported_here, std::size_t keep) {
  const std::set<std::string> here(supported_here.begin(), supported_here.end());
  std::vector<std::string> out;
  std::set<std::string> taken;
  auto take = [&](const std::string& c) {
    if (here.count(c) && taken.insert(c).second) out.push_back(c);
  };
  for (const auto& ranked : anchor_ranked) {
    std::size_t n = 0;
    for (const auto& c : ranked) {
      if (n == keep) break;
      if (!here.count(c)) continue;  // NOTE: a config this row cannot run does not use up a place
      take(c);
      ++n;
    }
  }
  for (const auto& c : supported_here) {
    bool seen = false;
    for (const auto& s : anchor_supported) seen = seen || s.count(c) > 0;
    if (!seen) take(c);
  }
  return out;
}

}  // namespace tunetab
