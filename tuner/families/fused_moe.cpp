// The fused-MoE family's adapter (kernels/moe): a pipeline of kernels (align, [quant,] stage 1, stage 2,
// reduce) behind one problem key. Every module of the pipeline is loaded and opted in to its own dynamic
// shared memory (moe::dynamic_shared_bytes), and the modules are passed to the workload in launch order.
// Tolerance: bf16, or fp8 e4m3 per-1x128 (moe::tolerance_spec); the lookup N is inter_dim (vLLM's N).
#include "kernels/moe/moe.h"
#include "tuner/family_ops.h"

namespace tunetab {

namespace {

struct FusedMoeTraits {
  using Problem = moe::Problem;
  using Config = moe::Config;
  using Workload = moe::Workload;
  static constexpr const char* kFamily = moe::kFamily;
  // NOTE: the pipeline's time steps inside a bucket, where the experts' slots cross a multiple of block_m. On the H200
  // (session 29, M 257..512) m96w96 took 411-416 us up to M=320 and 557-668 us from 384 on. The mean over M
  // 257/384/512 put it 3rd of 5 configs; the mean over nine Ms put it 1st, 4-5% under the two m64w64 configs.
  static constexpr int kTimingPoints = 9;

  static Problem problem_from_json(const Json& j) { return moe::Problem::from_json(j); }
  static Config config_from_name(const std::string& name) { return Config::from_name(name); }
  static std::vector<Config> enumerate() { return moe::enumerate(); }
  static std::optional<std::string> why_unsupported(const Problem& p, const Config& c, const Target& t) {
    return moe::why_unsupported(p, c, t);
  }
  static std::vector<BufferBound> index_bounds(const Problem& p, const Config& c) { return moe::index_bounds(p, c); }
  static std::vector<KernelSource> kernels(const Config& c, int bits) { return moe::kernels(c, bits); }
  static std::vector<int> dynamic_shared_bytes(const Config& c) { return moe::dynamic_shared_bytes(c); }
  static std::size_t workspace_bytes(const Problem& p, const Config& c) { return moe::workspace_bytes(p, c); }
  static ToleranceSpec tolerance(const Problem& p) { return moe::tolerance_spec(p); }
  static std::int64_t lookup_n(const Problem& p) { return p.inter_dim; }
  static std::unique_ptr<Workload> make_workload(const Problem& p, std::uint64_t seed, int sets, std::size_t ws) {
    return std::make_unique<Workload>(p, seed, sets, ws);
  }
  /// The current M's rows against the first rows of the capacity's reference (Workload::set_m).
  static gemm::Comparison compare(Workload& w, const ToleranceSpec& t) {
    const auto out = w.download_output();
    return gemm::compare(out.data(), w.reference().data(), out.size(), gemm::tolerance_of(t));
  }
};

}  // namespace

std::unique_ptr<FamilyOps> make_fused_moe_ops() { return std::make_unique<FamilyAdapter<FusedMoeTraits>>(); }

}  // namespace tunetab
