// The FP8 block-scaled GEMM family's adapter (kernels/gemm_fp8): all the tuner, coverage, verify and
// certificates need to know about it. Tolerance: fp8 e4m3 with 1x128 / 128x128 block scales.
#include "kernels/gemm_fp8/gemm_fp8.h"
#include "tuner/family_ops.h"

namespace tunetab {

namespace {

struct GemmFp8Traits {
  using Problem = gemm_fp8::Problem;
  using Config = gemm_fp8::Config;
  using Workload = gemm_fp8::Workload;
  static constexpr const char* kFamily = gemm_fp8::kFamily;

  static Problem problem_from_json(const Json& j) {
    Problem p;
    try {
      p.m = j.at("m").get<std::int64_t>();
      p.n = j.at("n").get<std::int64_t>();
      p.k = j.at("k").get<std::int64_t>();
      p.in = gemm_fp8::fp8_from_string(j.value("in", std::string("e4m3fn")));
      p.out = gemm::dtype_from_string(j.value("out", std::string("bf16")));
    } catch (const nlohmann::json::exception& e) {
      throw_input("gemm_fp8_blockscale problem " + j.dump() + ": " + e.what());
    }
    return p;
  }
  static Config config_from_name(const std::string& name) { return Config::from_name(name); }
  static std::vector<Config> enumerate() { return gemm_fp8::enumerate(); }
  static std::optional<std::string> why_unsupported(const Problem& p, const Config& c, const Target& t) {
    return gemm_fp8::why_unsupported(p, c, t);
  }
  static std::vector<BufferBound> index_bounds(const Problem& p, const Config& c) { return gemm_fp8::index_bounds(p, c); }
  static std::vector<KernelSource> kernels(const Config& c, int bits) { return gemm_fp8::kernels(c, bits); }
  static std::size_t workspace_bytes(const Problem& p, const Config& c) { return gemm_fp8::workspace_bytes(p, c); }
  static ToleranceSpec tolerance(const Problem&) { return kToleranceFp8Block128; }
  static std::int64_t lookup_n(const Problem& p) { return p.n; }
  static std::unique_ptr<Workload> make_workload(const Problem& p, std::uint64_t seed, int sets, std::size_t ws) {
    return std::make_unique<Workload>(p, seed, sets, ws);
  }
  static gemm::Comparison compare(Workload& w, const ToleranceSpec& t) {
    return w.compare_output(w.download_output(), gemm::tolerance_of(t));
  }
};

}  // namespace

std::unique_ptr<FamilyOps> make_gemm_fp8_blockscale_ops() { return std::make_unique<FamilyAdapter<GemmFp8Traits>>(); }

}  // namespace tunetab
