// Host side of the FP8 block-scaled GEMM family (AITER's a8w8 blockscale):
//   C[m,n] = sum_kb (A[m, kb-block] . B[n, kb-block]) * a_scale[m, kb] * b_scale[n / 128, kb], bf16 out.
// A fp8 [m, k] and B fp8 [n, k] row-major; fp32 scales in AITER's layout, row-major:
// x_scale [m, ceil(k/128)] (per row, per 128 of K), w_scale [ceil(n/128), ceil(k/128)] (per 128 x 128 block).
// Same shape as kernels/gemm/gemm.h, so the runner adapts it generically; Comparison and compare() are the
// bf16 family's (the output is bf16 in both).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/family.h"
#include "kernels/gemm/gemm.h"
#include "tuner/hip/runtime.h"

namespace tunetab::gemm_fp8 {

inline constexpr const char* kFamily = "gemm_fp8_blockscale";
inline constexpr int kScaleBlock = 128;  // 1 x 128 activation scales, 128 x 128 weight scales
/// The largest K whose tile scales tma4 holds in shared memory. NOTE: mirrors tt::kTma4MaxK (gemm_fp8_tma4.h).
inline constexpr int kTma4MaxK = 8192;

/// e4m3fn (OCP: NVIDIA, gfx950; bias 7, max 448) or e4m3fnuz (gfx942; bias 8, max 240).
enum class Fp8 { kE4m3fn, kE4m3fnuz };
std::string to_string(Fp8 f);  // "e4m3fn"
std::string to_torch(Fp8 f);   // "torch.float8_e4m3fn"
/// Accepts both spellings; Input error otherwise.
Fp8 fp8_from_string(const std::string& s);
/// The format AITER's fp8 is on `arch`: e4m3fnuz on gfx942 (and gfx940/941), e4m3fn elsewhere.
Fp8 native_fp8(const std::string& arch);
double fp8_max(Fp8 f);  // 448 or 240

using gemm::Comparison;
using gemm::compare;
using gemm::Tolerance;

struct Problem {
  std::int64_t m = 0, n = 0, k = 0;
  Fp8 in = Fp8::kE4m3fn;
  gemm::DType out = gemm::DType::kBf16;

  std::int64_t scale_k() const { return (k + kScaleBlock - 1) / kScaleBlock; }
  std::int64_t scale_n() const { return (n + kScaleBlock - 1) / kScaleBlock; }
  std::string key() const;  // "m=304,n=3072,k=1536,in=e4m3fn,out=bf16,scale=1x128x128"
  nlohmann::json to_json() const;
  std::int64_t flops() const { return 2 * m * n * k; }
  /// fp8 operands, fp32 scales, bf16 output.
  std::int64_t min_bytes() const { return m * k + n * k + 4 * (m + scale_n()) * scale_k() + 2 * m * n; }
};

/// Portable FMA with software fp8 decode, mma.sync m16n8k32 e4m3 (sm_89+), wgmma m64nNk32 e4m3 (sm_90a),
/// warp-specialized TMA + wgmma (sm_90a: a producer warpgroup and a consumer warpgroup per 64 x warp_n), and
/// the skinny kernel for M <= block_m (block_k = 512 x unroll, warp_n columns per warp), and tma2: the TMA
/// kernel with a CTA per tile, its promotion's column blocks fixed at compile time and its bf16 tile stored through
/// shared memory in 16-byte rows (tt::gemm_fp8_blockscale_tma2).
/// tma3: tma2 (split-K 1) with each consumer's promotion overlapped with its own next MMAs (tt::gemm_fp8_blockscale_tma3).
/// tma4: tma3 (a CTA a tile) with each tile's scales copied once, in two bulk copies (tt::gemm_fp8_blockscale_tma4;
/// ceil(K / 128) a multiple of 4, K at most 8192), also in thread-block clusters sharing tiles by TMA multicast.
enum class Math { kSimt = 0, kTensorCore = 1, kWgmma = 2, kTma = 3, kSkinny = 4, kTma2 = 5, kTma3 = 6, kTma4 = 7 };

struct Config {
  int block_m = 0, block_n = 0, block_k = 128;  // block_k: one scale block for the tiled kernels
  int warp_m = 0, warp_n = 0;
  int stages = 0;
  Math math = Math::kTensorCore;
  int split_k = 1;  // run-time, except that tma2 compiles split-K 1 and split-K > 1 apart
  int persistent = 0;  // TMA: a grid of this many CTAs (one per SM) walking the tiles; 0: a CTA per tile
  int cluster_m = 1, cluster_n = 1;  // tma4: clusters of CTAs sharing B (along M) and A (along N) by TMA multicast

  /// The TMA producer + wgmma consumer kernels (sm_90a only).
  bool tma() const { return math == Math::kTma || math == Math::kTma2 || math == Math::kTma3 || math == Math::kTma4; }
  /// tma3 and tma4: the consumers' promotion overlapped with their next MMAs (two fragments a thread), split-K 1.
  bool chunked() const { return math == Math::kTma3 || math == Math::kTma4; }

  /// Mirrors TT_FP8_THREADS.
  int threads() const {
    if (math == Math::kSkinny) return (block_n / warp_n) * 32;
    if (math == Math::kWgmma) return (block_m / 64) * 128;
    if (tma()) return (block_m / 64) * (block_n / warp_n) * 128 + 128;
    return (block_m / warp_m) * (block_n / warp_n) * 32;
  }
  /// Tiles of 128 bytes of K per row: padded by 16 bytes except wgmma's and TMA's swizzled ones, which need
  /// 1 KiB of alignment slack (their portable fallback shares the budget). A persistent tma2, 3 or 4 adds its staged bf16
  /// output tile (rows of block_n x 2 + 16 bytes), which the others keep in their stages.
  int shared_bytes() const {
    if (math == Math::kSkinny) return 0;
    const bool swizzled = math == Math::kWgmma || tma();
    const int out_tile = (math == Math::kTma2 || chunked()) && persistent > 0 ? block_m * (block_n * 2 + 16) : 0;
    return swizzled ? stages * (block_m + block_n) * 128 + 1024 + out_tile : stages * (block_m + block_n) * 144;
  }
  /// Static shared memory of the TMA kernels, beside shared_bytes(): each stage's two mbarriers, and tma2's and tma3's
  /// scale rows a stage (block_m A-row scales, block_n / 128 + 2 B-block scales) plus split-K's flag and alignment;
  /// tma4's tile scales (block_m rows and block_n / 128 + 2 B-block rows of kTma4MaxK / 128 floats) and their barrier.
  /// NOTE: mirrors the __shared__ arrays of templates/gemm_fp8_blockscale.h and gemm_fp8_tma2.h, 3 and 4.
  int static_shared_bytes() const {
    if (!tma()) return 0;
    if (math == Math::kTma4)
      return 2 * stages * 8 + 8 + (block_m + block_n / 128 + 2) * (kTma4MaxK / kScaleBlock) * 4 + 32;
    return 2 * stages * 8 + (math == Math::kTma ? 0 : stages * (block_m + block_n / 128 + 2) * 4 + 32);
  }
  /// "m128n128k128_w64x128_s4_wgmma_sk1" ("..._tma_p132_sk1" persistent, "..._tma4_c2_sk1" / "..._tma4_cn2_sk1"
  /// clusters along M / N): stable, parsed back by from_name().
  std::string name() const;
  static Config from_name(const std::string& name);
  nlohmann::json to_json() const;
  bool operator==(const Config&) const = default;
};

std::vector<Config> enumerate();

/// Reason the config cannot serve the problem on the target, or nullopt.
std::optional<std::string> why_unsupported(const Problem& p, const Config& c, const Target& t);

/// Splits K evenly into multiples of 128 (a split never cuts a scale block).
std::int64_t k_per_split(const Problem& p, const Config& c);
std::vector<BufferBound> index_bounds(const Problem& p, const Config& c);
/// fp32 workspace a launch needs: split-K's partial planes; 0 for none.
std::size_t workspace_bytes(const Problem& p, const Config& c);

/// The pipeline: one kernel; `index_bits` picks the 32- or 64-bit address arithmetic instance. The fp8
/// format is a run-time argument, so one code object serves e4m3fn and e4m3fnuz.
std::vector<KernelSource> kernels(const Config& c, int index_bits);

/// The tolerance a format is validated with: kToleranceFp8Block128 (kernels/tolerance.h) for both; the
/// operands are exact, the error is the fp8 MMA's reduced-precision accumulation plus bf16 rounding (its
/// mag_rel term takes the Workload's magnitude()).
Tolerance tolerance(Fp8 f);

/// Quantized operands: fp8 codes and their scales, in AITER's layout.
struct Operands {
  std::vector<std::uint8_t> a, b;
  std::vector<float> a_scale, b_scale;
};
/// Random bf16-like data with magnitudes that vary by row and by 128 x 128 block, quantized as AITER's
/// per_token_group_quant / block quant do (scale = amax / fp8 max); never a zero code, signs mixed.
Operands random_operands(const Problem& p, std::uint64_t seed);

/// Device inputs and outputs for one problem, with rotating copies for timing.
class Workload {
 public:
  /// Buffers sized for p.m rows (the capacity); set_m() then serves any smaller M from the same allocation.
  Workload(const Problem& p, std::uint64_t seed, int rotating_sets, std::size_t workspace_bytes);
  int sets() const { return static_cast<int>(sets_.size()); }
  std::int64_t capacity_m() const { return capacity_m_; }
  std::int64_t m() const { return p_.m; }
  /// Launches, checks and downloads from now on use M = m (1..capacity_m()): the operands' first m rows
  /// (and their scales) are the capacity's, and so is the reference's prefix.
  void set_m(std::int64_t m);
  void launch(const Config& c, const std::vector<const Module*>& pipeline, int set, const Stream& s);
  /// From now on every set's launch writes set 0's output (the inputs still rotate): a timing method in which
  /// the output stays in L2, as a caller's reused output buffer may (tests' TUNETAB_TIME_OUTPUT=one).
  void share_output(bool on) { share_output_ = on; }
  /// Before a validation launch: set 0's output to NaN (0xFFFF) and every guard band re-armed.
  void poison_output();
  /// After a validation launch: the first buffer whose guard band changed, as "C: 2 bytes after ..."; below
  /// the capacity, the guard-sized window of C right after row m as well.
  std::optional<std::string> guard_violation() const;
  /// The current M's m x n output.
  std::vector<std::uint16_t> download_output() const;
  /// Set 0's output on the device (the capacity's allocation; the current M uses its first m * n elements).
  const void* device_output() const { return sets_[0].c.get(); }
  /// The Eigen reference on the dequantized operands at the capacity, computed once and cached; the
  /// current M's is its first m * n elements (so compare(download_output(), reference()) needs M = capacity).
  const std::vector<float>& reference();
  /// Each element's sum |a_k b_k| at the capacity (the tolerance's mag_rel term), computed once and cached.
  const std::vector<float>& magnitude();
  /// The current M's output against the reference's prefix with `tol` and the magnitudes: the tuner's rule.
  Comparison compare_output(const std::vector<std::uint16_t>& out, const Tolerance& tol);
  const Operands& operands() const { return ops_; }

 private:
  struct Set {
    DeviceBuffer a, b, a_scale, b_scale, c;
  };
  Problem p_;
  Operands ops_;
  std::vector<float> ref_, mag_;
  std::vector<Set> sets_;
  DeviceBuffer workspace_, counters_;
  std::int64_t capacity_m_ = 0;
  std::size_t guard_ = 0;
  bool share_output_ = false;
  /// Bytes of C the current M writes, and the size of the window after them that must stay untouched.
  std::pair<std::size_t, std::size_t> c_window() const;
};

/// fp8 e4m3 code to float (NaN codes give NaN) and float to the nearest code (ties to even, saturating
/// at the format's max, NaN to the NaN code).
float fp8_to_float(std::uint8_t code, Fp8 f);
std::uint8_t float_to_fp8(float v, Fp8 f);

/// C = dequant(A) dequant(B)^T in fp32 (Eigen), exposed for tests.
std::vector<float> reference_gemm(const Problem& p, const Operands& o);
/// |dequant(A)| |dequant(B)|^T: each element's sum |a_k b_k|, the scale of the fp8 MMA's rounding error.
std::vector<float> magnitude_gemm(const Problem& p, const Operands& o);

}  // namespace tunetab::gemm_fp8
