// FamilyAdapter traits of the bf16 GEMM family (shared with the planted-fault test family, which reuses its
// problem, workload and comparison).
#pragma once
#include <algorithm>

#include "kernels/gemm/gemm.h"
#include "tuner/family_ops.h"

namespace tunetab {

/// Input error naming the field when a problem's JSON lacks it or has the wrong type.
inline gemm::Problem gemm_problem_from_json(const Json& j) {
  gemm::Problem p;
  try {
    p.m = j.at("m").get<std::int64_t>();
    p.n = j.at("n").get<std::int64_t>();
    p.k = j.at("k").get<std::int64_t>();
    p.in = gemm::dtype_from_string(j.value("in", std::string("bf16")));
    p.out = gemm::dtype_from_string(j.value("out", std::string("bf16")));
    p.bias = j.value("bias", false);
  } catch (const nlohmann::json::exception& e) {
    throw_input("gemm problem " + j.dump() + ": " + e.what());
  }
  return p;
}

struct GemmBf16Traits {
  using Problem = gemm::Problem;
  using Config = gemm::Config;
  using Workload = gemm::Workload;
  static constexpr const char* kFamily = gemm::kFamily;

  static Problem problem_from_json(const Json& j) { return gemm_problem_from_json(j); }
  static Config config_from_name(const std::string& name) { return gemm::Config::from_name(name); }
  static std::vector<Config> enumerate() { return gemm::enumerate(); }
  static std::optional<std::string> why_unsupported(const Problem& p, const Config& c, const Target& t) {
    return gemm::why_unsupported(p, c, t);
  }
  static std::vector<BufferBound> index_bounds(const Problem& p, const Config& c) { return gemm::index_bounds(p, c); }
  static std::vector<KernelSource> kernels(const Config& c, int bits) { return gemm::kernels(c, bits); }
  static std::size_t workspace_bytes(const Problem& p, const Config& c) {
    return static_cast<std::size_t>(gemm::workspace_floats(p, c)) * sizeof(float);
  }
  static ToleranceSpec tolerance(const Problem&) { return kToleranceBf16; }
  static std::int64_t lookup_n(const Problem& p) { return p.n; }
  static std::unique_ptr<Workload> make_workload(const Problem& p, std::uint64_t seed, int sets, std::size_t ws) {
    return std::make_unique<Workload>(p, seed, sets, ws);
  }
  static gemm::Comparison compare(Workload& w, const ToleranceSpec& t) {
    const auto out = w.download_output();
    return gemm::compare(out.data(), w.reference().data(), out.size(), gemm::tolerance_of(t));
  }
};

}  // namespace tunetab
