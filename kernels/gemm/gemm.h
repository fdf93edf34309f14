// Host side of the bf16 GEMM family: C[m,n] = A[m,k] * B[n,k]^T, bf16 in, fp32 accumulate, bf16 out.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/family.h"
#include "tuner/hip/runtime.h"

namespace tunetab::gemm {

inline constexpr const char* kFamily = "gemm_bf16";

enum class DType { kBf16, kF16, kF32 };
std::string to_string(DType d);       // "bf16"
std::string to_torch(DType d);        // "torch.bfloat16", AITER's spelling
DType dtype_from_string(const std::string& s);  // accepts both spellings; Input error otherwise

struct Problem {
  std::int64_t m = 0, n = 0, k = 0;
  DType in = DType::kBf16;
  DType out = DType::kBf16;
  bool bias = false;

  std::string key() const;  // "m=304,n=3072,k=1536,in=bf16,out=bf16,bias=0"
  nlohmann::json to_json() const;
  std::int64_t flops() const { return 2 * m * n * k; }
  std::int64_t min_bytes() const { return 2 * (m * k + n * k + m * n); }
};

/// Portable FMA, mma.sync, sm_90a wgmma, wgmma with a producer warpgroup (warp-specialized), and the
/// skinny kernel for M <= block_m (gemm_bf16_skinny: block_k = 256 x unroll, warp_n columns per warp), and
/// the tensor-core skinny kernel for M <= block_m (gemm_bf16_mskinny: block_m = 16 x M fragments, block_n =
/// 8 x N fragments, stages = 32-wide K chunks in flight per warp, block_k = 32 x stages x warps).
/// kTma: sm_90a wgmma fed by TMA (gemm_bf16_tma: one producer thread, every stage in flight).
enum class Math { kSimt = 0, kTensorCore = 1, kWgmma = 2, kWgmmaWs = 3, kSkinny = 4, kSkinnyMma = 5, kTma = 6 };

struct Config {
  int block_m = 0, block_n = 0, block_k = 0;
  int warp_m = 0, warp_n = 0;
  int stages = 0;
  Math math = Math::kTensorCore;
  int vec = 8;       // elements per global load: 8 (16 B) or 4 (8 B)
  int split_k = 1;   // run-time: does not change the code object
  int cluster_m = 1; // kTma: CTAs per cluster along M sharing each B tile by TMA multicast ("_c2" in the name)
  int cluster_n = 1; // kTma: CTAs per cluster along N sharing each A tile by TMA multicast ("_cn2")
  /// kTma: stream-K over this many persistent CTAs (the target's SM count; "_streamk132" in place of
  /// "_sk1"), 0 for one CTA per tile and split. Run-time like split_k: the code object is the same for any count.
  int streamk_ctas = 0;
  /// kTma: C^T = B A^T ("_swap"): block_m tiles N and block_n tiles M, so M of a few hundred fits one tile
  /// width (multiples of 8) instead of 64-row MMA granules. No split-K or stream-K. (Clusters are in the
  /// kernel's frame: cluster_n shares the block_m rows, of B here.)
  bool swap_ab = false;

  bool wgmma() const { return math == Math::kWgmma || math == Math::kWgmmaWs || math == Math::kTma; }
  /// A warp per warp tile; for wgmma a warpgroup (128 threads) per 64 rows, plus the producer warpgroup
  /// when warp-specialized. Mirrors TT_GEMM_THREADS.
  int threads() const {
    if (math == Math::kSkinny) return (block_n / warp_n) * 32;
    if (math == Math::kSkinnyMma) return block_k / (32 * stages) * 32;
    if (math == Math::kTma) return (block_m / 64) * (block_n / warp_n) * 128 + 128;
    if (wgmma()) return (block_m / 64) * 128 + (math == Math::kWgmma ? 0 : 128);
    return (block_m / warp_m) * (block_n / warp_n) * 32;
  }
  /// Padded tiles for the portable and mma.sync paths; wgmma's swizzled tiles are unpadded and need
  /// 1 KiB of alignment slack (its portable fallback uses the same unpadded budget).
  int shared_bytes() const {
    if (math == Math::kSkinny || math == Math::kSkinnyMma) return 0;  // mskinny: static, under 48 KiB
    return wgmma() ? stages * (block_m + block_n) * block_k * 2 + 1024
                                : stages * (block_m + block_n) * (block_k + 8) * 2;
  }
  /// Rows per TMA box of the kernel's A (block_m rows) and B (block_n rows) tiles: a cluster's CTAs each load
  /// their slice of a shared tile and multicast it; a box holds at most 256 rows. Mirrors tt::tma_box_rows.
  int tma_box_a() const { return tma_box_rows(block_m, cluster_n); }
  int tma_box_b() const { return tma_box_rows(block_n, cluster_m); }
  static constexpr int tma_box_rows(int block, int share) {
    int rows = block / share;
    while (rows > 256) rows /= 2;
    return rows;
  }
  /// The problem's M and N as the kernel's rows and columns (swapped by swap_ab).
  std::int64_t rows(std::int64_t m, std::int64_t n) const { return swap_ab ? n : m; }
  std::int64_t cols(std::int64_t m, std::int64_t n) const { return swap_ab ? m : n; }
  /// "m128n128k32_w64x64_s4_mma_v8_sk1": stable, and parsed back by from_name().
  std::string name() const;
  static Config from_name(const std::string& name);
  nlohmann::json to_json() const;
  bool operator==(const Config&) const = default;
};

/// The whole config space (every tile, stage count, math path, vector width and split-K).
std::vector<Config> enumerate();

/// Reason the config cannot serve the problem on the target, or nullopt.
std::optional<std::string> why_unsupported(const Problem& p, const Config& c, const Target& t);

/// Splits K evenly into multiples of block_k.
std::int64_t k_per_split(const Problem& p, const Config& c);
std::vector<BufferBound> index_bounds(const Problem& p, const Config& c);
/// fp32 elements of workspace the config needs: split-K's partial planes, or stream-K's two tile slots a CTA.
std::int64_t workspace_floats(const Problem& p, const Config& c);

/// The pipeline: one kernel; `index_bits` picks the 32- or 64-bit address arithmetic instance.
std::vector<KernelSource> kernels(const Config& c, int index_bits);

/// Device inputs and outputs for one problem, with rotating copies for timing.
class Workload {
 public:
  /// Buffers sized for p.m rows (the capacity); set_m() then serves any smaller M from the same allocation.
  Workload(const Problem& p, std::uint64_t seed, int rotating_sets, std::size_t workspace_bytes);
  int sets() const { return static_cast<int>(sets_.size()); }
  std::int64_t capacity_m() const { return capacity_m_; }
  std::int64_t m() const { return p_.m; }
  /// Launches, checks and downloads from now on use M = m (1..capacity_m()); the inputs' first m rows and
  /// the reference's first m rows are the capacity's, so nothing is reallocated or recomputed.
  void set_m(std::int64_t m);
  /// Launches the candidate on input set `set`.
  void launch(const Config& c, const std::vector<const Module*>& pipeline, int set, const Stream& s);
  /// Before a validation launch: set 0's output to NaN (0xFFFF), so any element left unwritten fails,
  /// and every guard band re-armed.
  void poison_output();
  /// After a validation launch: the first buffer whose guard band changed, as "C: 2 bytes after ...". Below
  /// the capacity, the guard-sized window of C right after row m is checked as well.
  std::optional<std::string> guard_violation() const;
  std::vector<std::uint16_t> download_output() const;
  /// Set 0's output on the device (the capacity's allocation; the current M uses its first m * n elements).
  const void* device_output() const { return sets_[0].c.get(); }
  /// C = A B^T on the CPU (Eigen, fp32 accumulation) at the capacity, computed once and cached; the
  /// current M's reference is its first m * n elements.
  const std::vector<float>& reference();

 private:
  struct Set {
    DeviceBuffer a, b, c;
  };
  Problem p_;
  std::vector<std::uint16_t> a_, b_;
  std::vector<float> ref_;
  std::vector<Set> sets_;
  DeviceBuffer workspace_, counters_;
  std::int64_t capacity_m_ = 0;
  std::size_t guard_ = 0;
};

/// Elementwise comparison of a bf16 output with the fp32 reference.
struct Comparison {
  double rel_l2 = 0;
  double max_abs = 0;
  double err_ratio = 0;         // fraction of elements outside atol + rtol * |ref|
  std::int64_t non_finite = 0;  // NaN or Inf: never passes (unwritten outputs are NaN)
  std::int64_t first_bad = -1;
  bool passed = false;
  std::string summary() const;
};
struct Tolerance {
  double rtol = 1.0 / 128;    // bf16 output rounding is 2^-9 relative; 4x margin
  double atol_rms = 1e-3;     // absolute slack, as a fraction of the reference's RMS
  double max_rel_l2 = 5e-3;
  double mag_rel = 0;         // slack as a fraction of each element's magnitude sum (compare's `mag`)
};
/// compare()'s per-element slack for a reference value `ref` (and its magnitude sum `mag`, 0 without one).
inline double element_slack(double atol, double rtol, double ref, double mag_rel, double mag) {
  return atol + rtol * (ref < 0 ? -ref : ref) + mag_rel * mag;
}
/// A tolerance spec (kernels/tolerance.h) as compare() takes it.
template <typename Spec>
Tolerance tolerance_of(const Spec& s) {
  return Tolerance{s.rtol, s.atol_rms, s.max_rel_l2, s.mag_rel};
}
Comparison compare(const std::vector<std::uint16_t>& out, const std::vector<float>& ref, const Tolerance& tol);
/// The same over the first `count` elements of `ref` (a smaller M's prefix of the capacity's reference). With
/// `mag` (sum |a_k b_k| per element, same order), an element may also be off by tol.mag_rel * mag[i].
Comparison compare(const std::uint16_t* out, const float* ref, std::size_t count, const Tolerance& tol,
                   const float* mag = nullptr);

/// Host-side reference (Eigen), exposed for tests.
std::vector<float> reference_gemm(const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b,
                                  std::int64_t m, std::int64_t n, std::int64_t k);
float bf16_to_float(std::uint16_t h);
std::uint16_t float_to_bf16(float f);
/// Uniform [-1, 1) bf16 values from a fixed seed (splitmix64).
std::vector<std::uint16_t> random_bf16(std::size_t count, std::uint64_t seed);
/// Element i of random_bf16(count, seed), for any count > i.
std::uint16_t random_bf16_at(std::uint64_t seed, std::size_t i);

}  // namespace tunetab::gemm
