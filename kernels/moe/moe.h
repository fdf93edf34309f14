// Host side of the fused-MoE family (SiLU, gate+up fused, bf16 or FP8 e4m3 per-1x128), a pipeline behind
// one problem key, launched in this order:
//   align    routing sort/align (vLLM's moe_align_block_size): slots (token * topk + k) grouped by expert,
//            each expert padded to block_m; sorted ids, the expert of each block, the padded row count
//   quant    FP8 only: hidden states to e4m3 with one fp32 scale per token per 128 columns
//   stage 1  per block of sorted rows: SiLU(x Wg^T) * (x Wu^T) -> inter [tokens * topk, inter_dim] bf16
//   quant    FP8 only, the same kernel again: inter to e4m3 with one fp32 scale per slot per 128 columns
//   stage 2  inter W2^T times the slot's top-k weight -> y [splits, tokens * topk, model_dim] fp32
//   reduce   out[t] = sum over k (and splits) of y[t * topk + k], bf16: a fixed order, so deterministic
// wgmma2 (sm_90a FP8) quantizes both stages' inputs into sorted order instead (moe_quant_sorted: the hidden states
// gathered by slot, padding rows untouched, scales transposed), and its stage 1 writes inter by sorted row, so that its
// stages copy their tokens by TMA; stage 2's output is by slot, as above (bf16), for the reduce.
// The 1-stage variant (Math::kFused, sm_90a FP8, decode) launches align, quant, one kernel for stage 1, the
// intermediate's quantization and stage 2 (partials per 128 columns of inter_dim as the splits), and reduce.
// FP8: weights e4m3 with one scale per 128x128 block; both stages' activations e4m3 per 1x128: stage 1's
// bf16 output is quantized as the hidden states are, as AITER's 2-stage FP8 MoE quantizes it (its a2), so
// stage 2 runs e4m3 x e4m3 like stage 1.
// Weights: w1 [E, 2 * inter_dim, model_dim] (gate rows, then up rows), w2 [E, model_dim, inter_dim].
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/family.h"
#include "kernels/gemm/gemm.h"
#include "kernels/tolerance.h"
#include "tuner/hip/runtime.h"

namespace tunetab::moe {

inline constexpr const char* kFamily = "fused_moe";

/// Operand types: bf16, or FP8 per-1x128 in e4m3fn (NVIDIA, gfx950) or e4m3fnuz (gfx942).
enum class Quant { kBf16 = 0, kFp8 = 1, kFp8Fnuz = 2 };
std::string to_string(Quant q);  // "bf16", "fp8", "fp8fnuz"
Quant quant_from_string(const std::string& s);
/// AITER's q_dtype spelling: torch.bfloat16, torch.float8_e4m3fn, torch.float8_e4m3fnuz.
std::string to_torch(Quant q);

/// Routing used for validation and timing: uniform top-k (balanced in expectation) or Zipf-skewed
/// expert popularity (a few hot experts, a long tail, some experts idle at small M).
enum class Routing { kBalanced = 0, kSkewed = 1 };
std::string to_string(Routing r);
Routing routing_from_string(const std::string& s);

struct Problem {
  std::int64_t m = 0;  // tokens
  std::int64_t model_dim = 0, inter_dim = 0, experts = 0, topk = 0;
  Quant quant = Quant::kBf16;
  Routing routing = Routing::kBalanced;

  /// "m=304,model_dim=6144,inter_dim=2048,experts=32,topk=8,act=silu,g1u1=1,quant=fp8,routing=skewed"
  std::string key() const;
  nlohmann::json to_json() const;
  /// Parses to_json()'s form; Input error naming the field when one is missing or malformed.
  static Problem from_json(const nlohmann::json& j);
  /// AITER's key is built from these fields by exporters::aiter_fmoe_key (act SiLU, g1u1, doweight_stage1 0).
  std::int64_t rows() const { return m * topk; }
  /// Both stages: 2 * rows * model_dim * 3 * inter_dim.
  std::int64_t flops() const { return 2 * rows() * model_dim * 3 * inter_dim; }
  /// Weights of the experts hit (all, for the M this family targets), activations in and out.
  std::int64_t min_bytes() const;
  /// Bytes of every expert's weights (and scales): the weight-read roofline.
  std::int64_t weight_bytes() const;
};

/// Portable FMA, mma.sync (bf16 tensor cores; FP8 operands decoded to bf16 per fragment), or (sm_90a, e4m3fn)
/// wgmma: weights by TMA, a consumer warpgroup per 64 rows of W (tt::moe_stage_wgmma; block_n1 / block_n2 are
/// its rows of W per CTA, warp_m its sorted rows, the MMA width; block_m / warp_m CTAs form a cluster that shares
/// each W tile by multicast), or (sm_90a, e4m3fn) the 1-stage variant, both GEMMs in one kernel
/// (tt::moe_fused_wgmma: a CTA per sorted block and 128 columns of inter_dim, block_n1 = block_n2 = 128; for
/// decode, where its per-slice partials stay small), or (sm_90a, e4m3fn) wgmma2: as wgmma without clusters
/// (block_m, a CTA's sorted rows, is warp_m or two token groups of warp_m that share each W tile: a consumer warpgroup
/// per 64 rows of W and token group), persistent, its inputs in sorted order so that its producer copies tokens by TMA
/// (tt::moe_stage_wgmma2).
enum class Math { kSimt = 0, kTensorCore = 1, kWgmma = 2, kFused = 3, kWgmma2 = 4 };

struct Config {
  Quant quant = Quant::kBf16;  // picks the code object, so it is part of the config
  int block_m = 16;            // sorted rows per block (expert padding granularity)
  int warp_m = 16;             // rows per warp: block_m / warp_m warps along M, 4 warps in all
  int block_n1 = 64;           // stage-1 columns of inter_dim per CTA (gate and up each)
  int block_n2 = 64;           // stage-2 columns of model_dim per CTA
  int block_k = 128;           // K tile of both stages (FP8: 128, one scale block)
  int stages = 3;              // cp.async pipeline depth
  Math math = Math::kTensorCore;
  int split_k = 1;             // stage-2 split of inter_dim; run-time (does not change the code object)

  static constexpr int kWarps = 4;
  int warps_m() const { return block_m / warp_m; }
  /// wgmma: CTAs per cluster along the sorted rows (block_m is the routing's padding, warp_m a CTA's rows).
  int cluster() const { return math == Math::kWgmma ? block_m / warp_m : 1; }
  int warps_n() const { return kWarps / warps_m(); }
  /// Halves of W a stage's consumer warpgroup multiplies, half_rows(stage) rows each: in stage 1 two (gate and up);
  /// in stage 2 one, or (wgmma2, 96-token groups and 256 rows of W2) two adjacent 128-row halves, as stage 1 does:
  /// four warpgroups' 96-token fragments would not fit their registers.
  int w_halves(int stage) const {
    return stage == 1 || (math == Math::kWgmma2 && warp_m == 96 && block_n2 == 256) ? 2 : 1;
  }
  int half_rows(int stage) const { return stage == 1 ? block_n1 : block_n2 / w_halves(2); }
  /// Threads of a stage's CTA: four warps, or (wgmma) a warpgroup per 64 rows of W and the producer's.
  int threads(int stage = 1) const {
    if (math == Math::kFused) return 3 * 128;
    if (math == Math::kWgmma) return ((stage == 1 ? block_n1 : block_n2) / 64) * 128 + 128;
    if (math == Math::kWgmma2) return (half_rows(stage) / 64) * (block_m / warp_m) * 128 + 128;
    return kWarps * 32;
  }
  /// Dynamic shared memory of a stage: kStages x (A tile + W tile(s)), rows padded by 16 bytes (wgmma:
  /// unpadded 128-byte swizzled rows, e4m3 tokens, 1 KiB of alignment slack; fused: its one kernel's, as
  /// stage 1's, with the intermediate's tile, and none for stage 2).
  int shared_bytes(int stage) const;
  /// The larger of the two stages': what every module of the pipeline may opt in to.
  int shared_bytes() const { return shared_bytes(1) > shared_bytes(2) ? shared_bytes(1) : shared_bytes(2); }
  /// "fp8_m16w16_n64x128_k128_s3_mma_sk2": stable, parsed back by from_name().
  std::string name() const;
  static Config from_name(const std::string& name);
  nlohmann::json to_json() const;
  bool operator==(const Config&) const = default;
};

/// The whole config space, every dtype.
std::vector<Config> enumerate();

/// Reason the config cannot serve the problem on the target, or nullopt.
std::optional<std::string> why_unsupported(const Problem& p, const Config& c, const Target& t);

/// Upper bounds of the routing layout for any routing: sorted rows and blocks after padding.
std::int64_t max_padded_rows(const Problem& p, int block_m);
std::int64_t max_blocks(const Problem& p, int block_m);
/// wgmma2: the row stride of its inputs' transposed scales ([dim / 128, stride] fp32): the padded rows, rounded up to 4.
std::int64_t sorted_scale_ld(const Problem& p, int block_m);
/// Stage 2's K per split: inter_dim split evenly into multiples of block_k.
std::int64_t k_per_split(const Problem& p, const Config& c);
/// Planes of the split workspace that the reduce sums: split_k, or (fused) one per 128 columns of inter_dim.
std::int64_t splits(const Problem& p, const Config& c);
std::vector<BufferBound> index_bounds(const Problem& p, const Config& c);
/// Stage 2's fp32 output planes, splits x tokens * topk x model_dim: the Workload's workspace.
std::size_t workspace_bytes(const Problem& p, const Config& c);

/// Indices into kernels()'s result (FP8 launches `quant` twice: the hidden states, then the intermediate; the
/// fused variant once, and its one kernel is `stage1`, with `stage2` -1).
struct Pipeline {
  int align = 0, quant = -1, stage1 = 1, stage2 = 2, reduce = 3;
};
Pipeline pipeline_layout(const Config& c);
/// The pipeline's translation units in launch order: align, [quant,] stage 1, stage 2, reduce (fused: align,
/// quant, the fused kernel, reduce).
std::vector<KernelSource> kernels(const Config& c, int index_bits);
/// Dynamic shared memory of each kernel of kernels(), in the same order (above 48 KiB a module must opt in).
std::vector<int> dynamic_shared_bytes(const Config& c);

/// CPU mirror of the align kernel, in slot order inside each expert (the GPU's order inside an expert
/// follows its atomics). Padding slots hold `rows`.
struct Alignment {
  std::vector<int> sorted_ids;  // num_padded entries
  std::vector<int> expert_ids;  // num_padded / block_m entries
  std::vector<int> counts;      // slots per expert
  std::vector<int> sorted_pos;  // each slot's sorted row (the GPU's, rows entries; wgmma2 pipelines write it)
  int num_padded = 0;
};
Alignment align_cpu(const std::vector<int>& topk_ids, int experts, int block_m);

/// Router output: topk distinct experts per token and their normalized (softmax over the picked
/// logits) weights, for `routing`.
struct RoutingData {
  std::vector<int> topk_ids;        // [m * topk]
  std::vector<float> topk_weights;  // [m * topk], each token's sum is 1
};
RoutingData make_routing(const Problem& p, std::uint64_t seed);

/// e4m3 codecs, bit-identical to templates/moe_common.h.
float e4m3_to_float(std::uint8_t b, bool fnuz);
std::uint8_t float_to_e4m3(float x, bool fnuz);
float e4m3_max(bool fnuz);

/// bf16 matrix [rows, cols] quantized per 1 x 128 (activations; the kernel does the same on the GPU).
void quantize_rows_1x128(const std::vector<std::uint16_t>& x, std::int64_t rows, std::int64_t cols, bool fnuz,
                         std::vector<std::uint8_t>& q, std::vector<float>& scale);
/// bf16 matrices [batch, rows, cols] quantized per 128 x 128 block (weights).
void quantize_blocks_128(const std::vector<std::uint16_t>& x, std::int64_t batch, std::int64_t rows, std::int64_t cols,
                         bool fnuz, std::vector<std::uint8_t>& q, std::vector<float>& scale);
/// Random bf16 weights [batch, rows, cols] (element i: gemm::random_bf16_at(seed, i) x amp, rounded to bf16),
/// quantized as quantize_blocks_128 would quantize them, without holding the bf16 tensor.
void random_blocks_128(std::int64_t batch, std::int64_t rows, std::int64_t cols, std::uint64_t seed, float amp, bool fnuz,
                       std::vector<std::uint8_t>& q, std::vector<float>& scale);

/// Host operands of one problem: what is uploaded, and what the reference is computed from.
struct HostOperands {
  std::vector<std::uint16_t> hidden;  // [m, model_dim] bf16
  std::vector<std::uint16_t> w1, w2;  // bf16 weights (Quant::kBf16)
  std::vector<std::uint8_t> w1q, w2q; // e4m3 weights (FP8)
  std::vector<float> w1s, w2s;        // their 128x128 block scales
  RoutingData routing;
};
HostOperands make_operands(const Problem& p, std::uint64_t seed);

/// out[m, model_dim] in fp32 from the dequantized operands (Eigen, fp32 accumulation), with stage 1's
/// output rounded to bf16 as the kernels keep it (FP8: then quantized per 1x128 and dequantized, as stage 2 reads it).
std::vector<float> reference_moe(const Problem& p, const HostOperands& h);
/// The same with plain loops (tests check the Eigen path against it on tiny problems).
std::vector<float> reference_moe_naive(const Problem& p, const HostOperands& h);

/// The project's tolerance for the problem's dtype (kernels/tolerance.h): bf16_2stage or fp8_block128_2stage.
/// Both the kernels and the reference round stage 1's output to bf16 (FP8: and quantize it per 1x128); the
/// reference is computed from the same dequantized operands, so the remaining error is summation order (and the
/// fp8 MMA's reduced-precision sums), carried through the intermediate, and bf16 output rounding.
ToleranceSpec tolerance_spec(const Problem& p);
/// The same, as gemm::compare() takes it.
gemm::Tolerance tolerance(const Problem& p);

/// Device inputs and outputs for one problem, with rotating copies for timing.
class Workload {
 public:
  /// Weights are shared by the sets (at real shapes they alone exceed 2x L2 many times over); hidden
  /// states, routing and outputs rotate. The stage-2 workspace is `workspace_bytes` (at least one split;
  /// workspace_bytes(p, c) of the largest split_k to launch). Buffers are sized for p.m tokens (the
  /// capacity); set_m() then serves any smaller M from the same allocation: a token's output depends on
  /// its own hidden state and routing only, so the first m tokens' reference rows are the capacity's.
  Workload(const Problem& p, std::uint64_t seed, int rotating_sets, std::size_t workspace_bytes);
  int sets() const { return static_cast<int>(sets_.size()); }
  std::int64_t capacity_m() const { return capacity_.m; }
  std::int64_t m() const { return p_.m; }
  void set_m(std::int64_t m);
  /// Launches the whole pipeline of `c` on input set `set`; `pipeline` holds kernels(c, bits)'s modules.
  void launch(const Config& c, const std::vector<const Module*>& pipeline, int set, const Stream& s);
  /// NaN (0xFFFF) into the output and the intermediate buffers, every guard band re-armed; below the
  /// capacity, a guard-sized window of `out` after row m is filled with the canary.
  void poison_output();
  /// The first buffer whose guard band changed (or the window after row m), as "out: 2 bytes after ...".
  std::optional<std::string> guard_violation() const;
  /// The current M's rows of `out`.
  std::vector<std::uint16_t> download_output() const;
  /// The align kernel's output of the last launch on set 0: sorted ids, expert ids, padded count.
  Alignment download_alignment(int block_m) const;
  /// The capacity's reference (fp32 [capacity_m, model_dim]); the current M's is its first m * model_dim.
  const std::vector<float>& reference();
  const HostOperands& host() const { return h_; }

 private:
  struct Set {
    DeviceBuffer hidden, topk_ids, topk_weights, out;
  };
  Problem p_, capacity_;
  HostOperands h_;
  std::vector<float> ref_;
  std::vector<Set> sets_;
  DeviceBuffer w1_, w2_, w1s_, w2s_;
  DeviceBuffer a_q_, a_scale_, sorted_, sorted_pos_, expert_ids_, num_padded_, inter_, inter_q_, inter_scale_, y_;
  // wgmma2 (FP8): the fp32 partials and arrival counters of a persistent stage's split last round (tt::moe_unit),
  // for up to cu_count_ split tiles; the counters are zeroed once here and reset by the kernel.
  DeviceBuffer partials_, counters_;
  std::size_t guard_ = 0;
  int cu_count_ = 0;  // the device's multiprocessors: a persistent stage's grid
};

}  // namespace tunetab::moe
