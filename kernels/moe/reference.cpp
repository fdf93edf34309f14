// Fused MoE: random operands, the Eigen reference, and the device workload (the pipeline's launches).
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "kernels/moe/moe.h"
#include "tuner/error.h"

namespace tunetab::moe {

namespace {

/// A split tile's partial (tt::moe_unit): a stage's consumer threads x their fp32 fragments, at most this many floats
/// (the largest in the space: stage 1 of 96-token tiles, 256 threads x 96).
constexpr std::int64_t kSplitPartialFloats = 32768;

bool fp8(Quant q) { return q != Quant::kBf16; }
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

/// Uniform [-amp, amp) bf16 values.
std::vector<std::uint16_t> random_scaled(std::size_t count, std::uint64_t seed, float amp) {
  std::vector<std::uint16_t> v = gemm::random_bf16(count, seed);
  const auto n = static_cast<std::int64_t>(count);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) v[i] = gemm::float_to_bf16(gemm::bf16_to_float(v[i]) * amp);
  return v;
}

float silu_ref(float x) { return x / (1.0f + std::exp(-x)); }

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Activations [rows, cols] as the kernels see them: bf16, or (FP8) quantized per 1x128 and dequantized.
RowMajor as_read(const Problem& p, const std::vector<std::uint16_t>& x, std::int64_t rows, std::int64_t cols) {
  RowMajor a(rows, cols);
  if (!fp8(p.quant)) {
    for (std::int64_t i = 0; i < rows * cols; ++i) a.data()[i] = gemm::bf16_to_float(x[i]);
    return a;
  }
  std::vector<std::uint8_t> q;
  std::vector<float> s;
  const bool fnuz = p.quant == Quant::kFp8Fnuz;
  quantize_rows_1x128(x, rows, cols, fnuz, q, s);
  const std::int64_t groups = ceil_div(cols, 128);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) a(r, c) = e4m3_to_float(q[r * cols + c], fnuz) * s[r * groups + c / 128];
  return a;
}

RowMajor dequantized_hidden(const Problem& p, const HostOperands& h) { return as_read(p, h.hidden, p.m, p.model_dim); }

/// Expert e's weight matrix [rows, cols] in float (dequantized with its 128x128 block scales).
RowMajor expert_weight(const Problem& p, const std::vector<std::uint16_t>& w, const std::vector<std::uint8_t>& wq,
                       const std::vector<float>& ws, std::int64_t e, std::int64_t rows, std::int64_t cols) {
  RowMajor m(rows, cols);
  const std::int64_t base = e * rows * cols;
  if (!fp8(p.quant)) {
    for (std::int64_t i = 0; i < rows * cols; ++i) m.data()[i] = gemm::bf16_to_float(w[base + i]);
    return m;
  }
  const bool fnuz = p.quant == Quant::kFp8Fnuz;
  const std::int64_t rb = ceil_div(rows, 128), cb = ceil_div(cols, 128);
#pragma omp parallel for
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      m(r, c) = e4m3_to_float(wq[base + r * cols + c], fnuz) * ws[(e * rb + r / 128) * cb + c / 128];
  return m;
}

}  // namespace

ToleranceSpec tolerance_spec(const Problem& p) { return fp8(p.quant) ? kToleranceFp8TwoStage : kToleranceBf16TwoStage; }

gemm::Tolerance tolerance(const Problem& p) {
  return gemm::tolerance_of(tolerance_spec(p));
}

HostOperands make_operands(const Problem& p, std::uint64_t seed) {
  HostOperands h;
  h.hidden = gemm::random_bf16(static_cast<std::size_t>(p.m * p.model_dim), seed);
  // NOTE: weights scaled by 2/sqrt(fan-in) keep the gate pre-activations O(1): SiLU's curved region.
  const float amp1 = 2.0f / std::sqrt(static_cast<float>(p.model_dim)), amp2 = 2.0f / std::sqrt(static_cast<float>(p.inter_dim));
  if (fp8(p.quant)) {
    // The same draws, quantized block by block: the bf16 weights (2.4 GB at GLM-5's shape) are never held.
    const bool fnuz = p.quant == Quant::kFp8Fnuz;
    random_blocks_128(p.experts, 2 * p.inter_dim, p.model_dim, seed ^ 0x5bd1e995ull, amp1, fnuz, h.w1q, h.w1s);
    random_blocks_128(p.experts, p.model_dim, p.inter_dim, seed ^ 0x1b873593ull, amp2, fnuz, h.w2q, h.w2s);
  } else {
    h.w1 = random_scaled(static_cast<std::size_t>(p.experts * 2 * p.inter_dim * p.model_dim), seed ^ 0x5bd1e995ull, amp1);
    h.w2 = random_scaled(static_cast<std::size_t>(p.experts * p.model_dim * p.inter_dim), seed ^ 0x1b873593ull, amp2);
  }
  h.routing = make_routing(p, seed);
  return h;
}

std::vector<float> reference_moe(const Problem& p, const HostOperands& h) {
  const RowMajor a = dequantized_hidden(p, h);
  const std::int64_t d = p.model_dim, n = p.inter_dim;
  std::vector<std::vector<std::int64_t>> slots(static_cast<std::size_t>(p.experts));
  for (std::int64_t s = 0; s < p.rows(); ++s) slots[h.routing.topk_ids[s]].push_back(s);
  std::vector<double> out(static_cast<std::size_t>(p.m * d), 0.0);
  for (std::int64_t e = 0; e < p.experts; ++e) {
    const auto& sl = slots[e];
    if (sl.empty()) continue;
    const std::int64_t rows = static_cast<std::int64_t>(sl.size());
    RowMajor ae(rows, d);
    for (std::int64_t r = 0; r < rows; ++r) ae.row(r) = a.row(sl[r] / p.topk);
    const RowMajor hidden = ae * expert_weight(p, h.w1, h.w1q, h.w1s, e, 2 * n, d).transpose();
    std::vector<std::uint16_t> inter_bf16(static_cast<std::size_t>(rows * n));
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < n; ++c) inter_bf16[r * n + c] = gemm::float_to_bf16(silu_ref(hidden(r, c)) * hidden(r, n + c));
    const RowMajor inter = as_read(p, inter_bf16, rows, n);
    const RowMajor y = inter * expert_weight(p, h.w2, h.w2q, h.w2s, e, d, n).transpose();
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t t = sl[r] / p.topk;
      const double w = h.routing.topk_weights[sl[r]];
      for (std::int64_t c = 0; c < d; ++c) out[t * d + c] += w * static_cast<double>(y(r, c));
    }
  }
  return std::vector<float>(out.begin(), out.end());
}

std::vector<float> reference_moe_naive(const Problem& p, const HostOperands& h) {
  const RowMajor a = dequantized_hidden(p, h);
  const std::int64_t d = p.model_dim, n = p.inter_dim;
  std::vector<float> out(static_cast<std::size_t>(p.m * d), 0.f);
  for (std::int64_t t = 0; t < p.m; ++t)
    for (std::int64_t k = 0; k < p.topk; ++k) {
      const std::int64_t slot = t * p.topk + k, e = h.routing.topk_ids[slot];
      const RowMajor w1 = expert_weight(p, h.w1, h.w1q, h.w1s, e, 2 * n, d);
      const RowMajor w2 = expert_weight(p, h.w2, h.w2q, h.w2s, e, d, n);
      std::vector<std::uint16_t> inter_bf16(static_cast<std::size_t>(n));
      for (std::int64_t j = 0; j < n; ++j) {
        double g = 0, u = 0;
        for (std::int64_t c = 0; c < d; ++c) {
          g += static_cast<double>(a(t, c)) * w1(j, c);
          u += static_cast<double>(a(t, c)) * w1(n + j, c);
        }
        inter_bf16[j] = gemm::float_to_bf16(silu_ref(static_cast<float>(g)) * static_cast<float>(u));
      }
      const RowMajor inter = as_read(p, inter_bf16, 1, n);
      for (std::int64_t c = 0; c < d; ++c) {
        double y = 0;
        for (std::int64_t j = 0; j < n; ++j) y += static_cast<double>(inter(0, j)) * w2(c, j);
        out[t * d + c] += h.routing.topk_weights[slot] * static_cast<float>(y);
      }
    }
  return out;
}

// NOTE: mirror tt::MoeAlignArgs, tt::MoeQuantArgs, tt::MoeStageArgs and tt::MoeReduceArgs (templates/moe_common.h),
// and tt::MoeFusedArgs (templates/moe_fused.h).
struct AlignArgs {
  const int* topk_ids;
  int* sorted_ids;
  int* expert_ids;
  int* num_padded;
  int* sorted_pos;
  int rows, experts, block_m;
};
struct QuantArgs {
  const void* x;
  void* q;
  float* scale;
  int tokens, dim;
};
// NOTE: mirrors tt::MoeQuantSortedArgs (moe_wgmma2.h).
struct QuantSortedArgs {
  const void* x;
  const int* sorted_ids;
  const int* sorted_pos;
  const int* num_padded;
  void* q;
  float* scale;
  int rows, gather, dim, scale_ld;
};
struct StageArgs {
  const void* a;
  const float* a_scale;
  const void* w;
  const float* w_scale;
  const int* sorted_ids;
  const int* expert_ids;
  const int* num_padded;
  const float* topk_weights;
  void* out;
  int rows, topk, n, k, k_per_split;
};
struct FusedArgs {
  const void* a;
  const void* w1;
  const void* w2;
  const float* a_scale;
  const float* w1_scale;
  const float* w2_scale;
  const int* sorted_ids;
  const int* expert_ids;
  const int* num_padded;
  const float* topk_weights;
  void* y;
  int rows, topk, model_dim, inter_dim;
  TensorMap w1_map, w2_map;
};
struct ReduceArgs {
  const float* y;
  void* out;
  int tokens, topk, dim, splits;
};

Workload::Workload(const Problem& p, std::uint64_t seed, int rotating_sets, std::size_t workspace_bytes)
    : p_(p), capacity_(p) {
  h_ = make_operands(p, seed);
  const std::size_t guard =
      std::clamp<std::size_t>(16 * static_cast<std::size_t>(std::max(p.model_dim, p.inter_dim)) * 4, 64 << 10, 1 << 20);
  guard_ = guard;
  cu_count_ = current_cu_count();
  const std::size_t rows = static_cast<std::size_t>(p.rows());
  const std::size_t hidden_bytes = static_cast<std::size_t>(p.m * p.model_dim) * 2;
  for (int s = 0; s < std::max(1, rotating_sets); ++s) {
    const std::size_t g = s == 0 ? guard : 0;
    Set set{DeviceBuffer(hidden_bytes, g), DeviceBuffer(rows * 4, g), DeviceBuffer(rows * 4, g), DeviceBuffer(hidden_bytes, g)};
    set.hidden.upload(h_.hidden.data(), hidden_bytes);
    set.topk_ids.upload(h_.routing.topk_ids.data(), rows * 4);
    set.topk_weights.upload(h_.routing.topk_weights.data(), rows * 4);
    sets_.push_back(std::move(set));
  }
  auto upload = [&](DeviceBuffer& b, const void* data, std::size_t bytes) {
    b = DeviceBuffer(bytes, guard);
    b.upload(data, bytes);
  };
  if (fp8(p.quant)) {
    upload(w1_, h_.w1q.data(), h_.w1q.size());
    upload(w2_, h_.w2q.data(), h_.w2q.size());
    upload(w1s_, h_.w1s.data(), h_.w1s.size() * 4);
    upload(w2s_, h_.w2s.data(), h_.w2s.size() * 4);
  } else {
    upload(w1_, h_.w1.data(), h_.w1.size() * 2);
    upload(w2_, h_.w2.data(), h_.w2.size() * 2);
  }
  // The routing layout at its worst over every block_m the family offers (session 22: a list written here missed a
  // new block_m, and its sorted inputs ran past these buffers).
  std::int64_t padded = 0, blocks = 0;
  for (const Config& c : enumerate()) {
    padded = std::max(padded, max_padded_rows(p, c.block_m));
    blocks = std::max(blocks, max_blocks(p, c.block_m));
  }
  sorted_ = DeviceBuffer(static_cast<std::size_t>(padded) * 4, guard);
  sorted_pos_ = DeviceBuffer(rows * 4, guard);
  // The stages' inputs: by token (or slot), or (wgmma2) by sorted row with their scales transposed; the padded rows
  // are at least the slots (and tokens), their scales' row stride at least as many.
  const auto input_rows = static_cast<std::size_t>(padded);
  const auto scale_cols = static_cast<std::size_t>(ceil_div(padded, 4) * 4);
  if (fp8(p.quant)) {
    a_q_ = DeviceBuffer(input_rows * static_cast<std::size_t>(p.model_dim), guard);
    a_scale_ = DeviceBuffer(scale_cols * static_cast<std::size_t>(p.model_dim / 128) * 4, guard);
  }
  expert_ids_ = DeviceBuffer(static_cast<std::size_t>(blocks) * 4, guard);
  num_padded_ = DeviceBuffer(4, 64 << 10);
  inter_ = DeviceBuffer(input_rows * static_cast<std::size_t>(p.inter_dim) * 2, guard);
  if (fp8(p.quant)) {
    inter_q_ = DeviceBuffer(input_rows * static_cast<std::size_t>(p.inter_dim), guard);
    inter_scale_ = DeviceBuffer(scale_cols * static_cast<std::size_t>(p.inter_dim / 128) * 4, guard);
  }
  y_ = DeviceBuffer(std::max(workspace_bytes, rows * static_cast<std::size_t>(p.model_dim) * 4), guard);
  if (fp8(p.quant)) {
    partials_ = DeviceBuffer(2 * static_cast<std::size_t>(cu_count_) * kSplitPartialFloats * 4, guard);
    counters_ = DeviceBuffer(static_cast<std::size_t>(cu_count_) * 4, guard);
    TUNETAB_HIP_CHECK(hipMemsetD32(reinterpret_cast<hipDeviceptr_t>(counters_.get()), 0, static_cast<std::size_t>(cu_count_)));
  }
  // NOTE: copies above run on the default stream; launches use a non-blocking stream.
  TUNETAB_HIP_CHECK(hipDeviceSynchronize());
}

std::vector<int> dynamic_shared_bytes(const Config& c) {
  if (c.math == Math::kFused) return {0, 0, c.shared_bytes(1), 0};
  std::vector<int> out = {0};
  if (fp8(c.quant)) out.push_back(0);
  out.push_back(c.shared_bytes(1));
  out.push_back(c.shared_bytes(2));
  out.push_back(0);
  return out;
}

void Workload::launch(const Config& c, const std::vector<const Module*>& pipeline, int set, const Stream& s) {
  const Pipeline pl = pipeline_layout(c);
  const bool fused = c.math == Math::kFused;
  TUNETAB_ASSERT(pipeline.size() == (fused || !fp8(c.quant) ? 4u : 5u),
                 "fused_moe pipeline: align, [quant,] stage 1, stage 2, reduce (fused: align, quant, fused, reduce)");
  TUNETAB_ASSERT(y_.bytes() >= moe::workspace_bytes(p_, c), "stage-2 workspace holds fewer splits than the config uses");
  Set& st = sets_[static_cast<std::size_t>(set) % sets_.size()];
  const int rows = static_cast<int>(p_.rows());
  const unsigned blocks = static_cast<unsigned>(max_blocks(p_, c.block_m));

  AlignArgs align{static_cast<const int*>(st.topk_ids.get()), static_cast<int*>(sorted_.get()),
                  static_cast<int*>(expert_ids_.get()), static_cast<int*>(num_padded_.get()),
                  c.math == Math::kWgmma2 ? static_cast<int*>(sorted_pos_.get()) : nullptr, rows,
                  static_cast<int>(p_.experts), c.block_m};
  {
    void* params[] = {&align};
    LaunchDims d;
    d.block[0] = 1024;  // tt::moe_align<1024>
    tunetab::launch(*pipeline[pl.align], d, s, params);
  }
  // FP8: quantizes x [rows, dim] bf16 per 1x128 into q and scale (8 groups of 128 per 256-thread block).
  auto quantize = [&](const DeviceBuffer& x, DeviceBuffer& q, DeviceBuffer& scale, std::int64_t rows, std::int64_t dim) {
    QuantArgs a{x.get(), q.get(), static_cast<float*>(scale.get()), static_cast<int>(rows), static_cast<int>(dim)};
    void* params[] = {&a};
    LaunchDims d;
    d.grid[0] = static_cast<unsigned>(ceil_div(rows * (dim / 128), 8));
    d.block[0] = 256;
    tunetab::launch(*pipeline[pl.quant], d, s, params);
  };
  // wgmma2: the stages' inputs quantized into sorted order (padding rows untouched), their scales transposed
  // ([dim / 128, ld]); stage 1 reads the hidden states gathered (row = slot / topk), stage 2 its sorted output.
  const bool sorted_inputs = c.math == Math::kWgmma2;
  const std::int64_t padded = max_padded_rows(p_, c.block_m);
  const int ld = static_cast<int>(sorted_scale_ld(p_, c.block_m));
  auto quantize_sorted = [&](const DeviceBuffer& x, DeviceBuffer& q, DeviceBuffer& scale, int gather, std::int64_t dim) {
    QuantSortedArgs a{x.get(),          static_cast<const int*>(sorted_.get()), static_cast<const int*>(sorted_pos_.get()),
                      static_cast<const int*>(num_padded_.get()), q.get(), static_cast<float*>(scale.get()), rows, gather,
                      static_cast<int>(dim), ld};
    void* params[] = {&a};
    LaunchDims d;
    // Persistent (any grid): a warp a unit of 8 groups of 128 columns of a token (gather) or of a sorted row (to the
    // worst-case padding); at most one wave of resident blocks (a second wave would only queue behind the first).
    const std::int64_t units = (gather ? p_.m : padded) * ceil_div(dim / 128, 8);
    const std::int64_t wave = cu_count_ * pipeline[pl.quant]->resident_blocks(256, 0);
    d.grid[0] = static_cast<unsigned>(std::min<std::int64_t>(ceil_div(units, 8), wave));
    d.block[0] = 256;
    tunetab::launch(*pipeline[pl.quant], d, s, params);
  };
  if (sorted_inputs)
    quantize_sorted(st.hidden, a_q_, a_scale_, static_cast<int>(p_.topk), p_.model_dim);
  else if (pl.quant >= 0)
    quantize(st.hidden, a_q_, a_scale_, p_.m, p_.model_dim);
  // tt::moe_stage_wgmma2 is persistent: as many CTAs as the device holds at once, at most one a tile (grid x
  // sorted blocks x tiles of W, as launched for a CTA a tile).
  const auto persistent = [&](const Module& m, LaunchDims& d) {
    const unsigned tiles = d.grid[0] * d.grid[1];
    const unsigned fit = static_cast<unsigned>(cu_count_ * m.resident_blocks(static_cast<int>(d.block[0]), static_cast<int>(d.shared_bytes)));
    d.grid[0] = std::min(tiles, fit);
    d.grid[1] = 1;
  };
  const auto reduce = [&] {
    ReduceArgs r{static_cast<const float*>(y_.get()), st.out.get(), static_cast<int>(p_.m), static_cast<int>(p_.topk),
                 static_cast<int>(p_.model_dim), static_cast<int>(splits(p_, c))};
    void* params[] = {&r};
    LaunchDims d;
    d.grid[0] = static_cast<unsigned>(ceil_div(p_.model_dim, c.math == Math::kWgmma2 ? 2048 : 1024));  // 8 or 4 columns a thread
    d.grid[1] = static_cast<unsigned>(p_.m);
    d.block[0] = 256;
    tunetab::launch(*pipeline[pl.reduce], d, s, params);
  };
  if (fused) {
    // NOTE: mirrors tt::MoeFusedArgs: W1 and W2 by TMA in boxes of 128 bytes of K x 128 rows.
    FusedArgs f{a_q_.get(),
                w1_.get(),
                w2_.get(),
                static_cast<const float*>(a_scale_.get()),
                static_cast<const float*>(w1s_.get()),
                static_cast<const float*>(w2s_.get()),
                static_cast<const int*>(sorted_.get()),
                static_cast<const int*>(expert_ids_.get()),
                static_cast<const int*>(num_padded_.get()),
                static_cast<const float*>(st.topk_weights.get()),
                y_.get(),
                rows,
                static_cast<int>(p_.topk),
                static_cast<int>(p_.model_dim),
                static_cast<int>(p_.inter_dim),
                tensor_map_2d(w1_.get(), 1, p_.model_dim, p_.experts * 2 * p_.inter_dim, p_.model_dim, 128, 128),
                tensor_map_2d(w2_.get(), 1, p_.inter_dim, p_.experts * p_.model_dim, p_.inter_dim, 128, 128)};
    void* params[] = {&f};
    LaunchDims d;
    d.grid[0] = blocks;  // sorted blocks fastest: one expert's blocks share each W tile in L2
    d.grid[1] = static_cast<unsigned>(ceil_div(p_.inter_dim, 128));
    d.block[0] = static_cast<unsigned>(c.threads(1));
    d.shared_bytes = static_cast<unsigned>(c.shared_bytes(1));
    tunetab::launch(*pipeline[pl.stage1], d, s, params);
    reduce();
    return;
  }
  StageArgs s1{fp8(c.quant) ? a_q_.get() : st.hidden.get(),
               static_cast<const float*>(a_scale_.get()),
               w1_.get(),
               static_cast<const float*>(w1s_.get()),
               static_cast<const int*>(sorted_.get()),
               static_cast<const int*>(expert_ids_.get()),
               static_cast<const int*>(num_padded_.get()),
               static_cast<const float*>(st.topk_weights.get()),
               inter_.get(),
               rows,
               static_cast<int>(p_.topk),
               static_cast<int>(p_.inter_dim),
               static_cast<int>(p_.model_dim),
               static_cast<int>(p_.model_dim)};
  // NOTE: mirrors tt::MoeStageTmaArgs: the wgmma stages take W as [experts * rows of W, k] bytes by TMA, in
  // boxes of 128 bytes of K x the CTA's rows of W.
  struct TmaArgs {
    StageArgs p;
    TensorMap w;
  } t1, t2;
  // NOTE: mirrors tt::MoeStageTma2Args: wgmma2 also takes its input rows (sorted) as [padded rows, k] bytes by TMA,
  // in boxes of 128 bytes of K x block_m rows.
  struct Tma2Args {
    StageArgs p;
    TensorMap w;
    TensorMap a;
    int scale_ld;
    int split_max;
    float* partials;
    std::uint32_t* counters;
  } u1, u2;
  // A split tile's two partials: its consumer threads' fragments (kHalves x block_m / 2 each), at most
  // kSplitPartialFloats floats a half.
  const auto split_max = [&](int stage) {
    const int rows_w = c.half_rows(stage), halves = c.w_halves(stage);
    const std::int64_t floats = static_cast<std::int64_t>(halves) * (c.warp_m / 2) * (rows_w / 64) * (c.block_m / c.warp_m) * 128;
    return floats <= kSplitPartialFloats && partials_.get() != nullptr ? cu_count_ : 0;
  };
  const bool tma = c.math == Math::kWgmma || c.math == Math::kWgmma2;
  if (tma) {
    t1.p = s1;
    t1.w = tensor_map_2d(w1_.get(), 1, p_.model_dim, p_.experts * 2 * p_.inter_dim, p_.model_dim, 128,
                         c.block_n1 / c.cluster());
  }
  if (sorted_inputs)
    u1 = Tma2Args{s1,       t1.w, tensor_map_2d(a_q_.get(), 1, p_.model_dim, padded, p_.model_dim, 128, c.block_m), ld, split_max(1),
                  static_cast<float*>(partials_.get()), static_cast<std::uint32_t*>(counters_.get())};
  {
    void* params[] = {sorted_inputs ? static_cast<void*>(&u1) : tma ? static_cast<void*>(&t1) : static_cast<void*>(&s1)};
    LaunchDims d;
    d.grid[0] = static_cast<unsigned>(ceil_div(p_.inter_dim, c.block_n1));
    d.grid[1] = blocks * static_cast<unsigned>(c.cluster());
    if (tma) std::swap(d.grid[0], d.grid[1]);  // sorted blocks fastest: one expert's blocks share each W tile in L2
    d.cluster[0] = static_cast<unsigned>(c.cluster());  // along the sorted rows: one expert per cluster
    d.block[0] = static_cast<unsigned>(c.threads(1));
    d.shared_bytes = static_cast<unsigned>(c.shared_bytes(1));
    if (c.math == Math::kWgmma2) persistent(*pipeline[pl.stage1], d);
    tunetab::launch(*pipeline[pl.stage1], d, s, params);
  }
  if (sorted_inputs)
    quantize_sorted(inter_, inter_q_, inter_scale_, 0, p_.inter_dim);
  else if (pl.quant >= 0)
    quantize(inter_, inter_q_, inter_scale_, p_.rows(), p_.inter_dim);
  StageArgs s2 = s1;
  s2.a = pl.quant >= 0 ? inter_q_.get() : inter_.get();
  s2.a_scale = static_cast<const float*>(inter_scale_.get());
  s2.w = w2_.get();
  s2.w_scale = static_cast<const float*>(w2s_.get());
  s2.out = y_.get();
  s2.n = static_cast<int>(p_.model_dim);
  s2.k = static_cast<int>(p_.inter_dim);
  s2.k_per_split = static_cast<int>(k_per_split(p_, c));
  if (tma) {
    t2.p = s2;
    t2.w = tensor_map_2d(w2_.get(), 1, p_.inter_dim, p_.experts * p_.model_dim, p_.inter_dim, 128,
                         c.half_rows(2) / c.cluster());  // a box per half
  }
  if (sorted_inputs)
    u2 = Tma2Args{s2,       t2.w, tensor_map_2d(inter_q_.get(), 1, p_.inter_dim, padded, p_.inter_dim, 128, c.block_m), ld, split_max(2),
                  static_cast<float*>(partials_.get()), static_cast<std::uint32_t*>(counters_.get())};
  {
    void* params[] = {sorted_inputs ? static_cast<void*>(&u2) : tma ? static_cast<void*>(&t2) : static_cast<void*>(&s2)};
    LaunchDims d;
    d.grid[0] = static_cast<unsigned>(ceil_div(p_.model_dim, c.block_n2));
    d.grid[1] = blocks * static_cast<unsigned>(c.cluster());
    if (tma) std::swap(d.grid[0], d.grid[1]);
    d.grid[2] = static_cast<unsigned>(c.split_k);
    d.cluster[0] = static_cast<unsigned>(c.cluster());
    d.block[0] = static_cast<unsigned>(c.threads(2));
    d.shared_bytes = static_cast<unsigned>(c.shared_bytes(2));
    if (c.math == Math::kWgmma2) persistent(*pipeline[pl.stage2], d);
    tunetab::launch(*pipeline[pl.stage2], d, s, params);
  }
  reduce();
}

void Workload::set_m(std::int64_t m) {
  TUNETAB_ASSERT(m >= 1 && m <= capacity_.m, "set_m(" + std::to_string(m) + ") outside 1.." + std::to_string(capacity_.m));
  p_.m = m;
}

/// Bytes of `out` the current M writes, and the guard-sized window after them that must stay untouched.
static std::pair<std::size_t, std::size_t> out_window(const Problem& p, const Problem& capacity, std::size_t guard) {
  const std::size_t used = static_cast<std::size_t>(p.m * p.model_dim) * 2;
  const std::size_t cap = static_cast<std::size_t>(capacity.m * capacity.model_dim) * 2;
  return {used, std::min(guard, cap - used)};
}

void Workload::poison_output() {
  sets_[0].out.fill_bytes(0xff);
  if (const auto [used, window] = out_window(p_, capacity_, guard_); window > 0)
    TUNETAB_HIP_CHECK(hipMemsetD8(reinterpret_cast<hipDeviceptr_t>(static_cast<char*>(sets_[0].out.get()) + used),
                                  DeviceBuffer::kCanary, window));
  inter_.fill_bytes(0xff);
  // The stages' quantized inputs and their scales as NaN too (e4m3fn and fp32): the wgmma2 pipeline leaves their
  // padding rows unwritten, and no stored output may depend on them.
  for (DeviceBuffer* b : {&a_q_, &a_scale_, &inter_q_, &inter_scale_, &sorted_pos_})
    if (b->bytes()) b->fill_bytes(0xff);
  if (counters_.bytes())  // a launch cut short may leave a split tile's counter raised
    TUNETAB_HIP_CHECK(hipMemsetD32(reinterpret_cast<hipDeviceptr_t>(counters_.get()), 0, counters_.bytes() / 4));
  y_.fill_bytes(0xff);
  for (DeviceBuffer* b : {&sets_[0].hidden, &sets_[0].topk_ids, &sets_[0].topk_weights, &sets_[0].out, &w1_, &w2_, &w1s_,
                          &w2s_, &a_q_, &a_scale_, &sorted_, &sorted_pos_, &expert_ids_, &num_padded_, &inter_, &inter_q_,
                          &inter_scale_, &y_, &partials_, &counters_})
    if (b->bytes()) b->arm_guards();
  TUNETAB_HIP_CHECK(hipDeviceSynchronize());  // ordered before the launch on the non-blocking stream
}

std::optional<std::string> Workload::guard_violation() const {
  const std::pair<const char*, const DeviceBuffer*> buffers[] = {
      {"hidden", &sets_[0].hidden}, {"topk_ids", &sets_[0].topk_ids}, {"topk_weights", &sets_[0].topk_weights},
      {"out", &sets_[0].out},       {"w1", &w1_},                     {"w2", &w2_},
      {"w1_scale", &w1s_},          {"w2_scale", &w2s_},              {"a_q", &a_q_},
      {"a_scale", &a_scale_},       {"sorted_ids", &sorted_},         {"sorted_pos", &sorted_pos_},
      {"expert_ids", &expert_ids_},
      {"num_padded", &num_padded_}, {"inter", &inter_},               {"inter_q", &inter_q_},
      {"inter_scale", &inter_scale_}, {"y", &y_},                     {"partials", &partials_},
      {"counters", &counters_}};
  for (const auto& [name, buf] : buffers) {
    if (!buf->bytes()) continue;
    if (auto v = guard_violation_of(name, *buf)) return v;
  }
  if (const auto [used, window] = out_window(p_, capacity_, guard_); window > 0) {
    std::vector<unsigned char> band(window);
    sets_[0].out.download(band.data(), window, used);
    if (auto v = find_guard_violation({}, band, used, DeviceBuffer::kCanary))
      return "out: " + std::to_string(v->corrupted_bytes) + " byte(s) written after the M=" + std::to_string(p_.m) +
             " rows, nearest at byte offset " + std::to_string(v->offset) + " (M=" + std::to_string(p_.m) + " uses " +
             std::to_string(used) + " bytes of a " + std::to_string(capacity_.m) + "-token allocation)";
  }
  return std::nullopt;
}

std::vector<std::uint16_t> Workload::download_output() const {
  std::vector<std::uint16_t> out(static_cast<std::size_t>(p_.m * p_.model_dim));
  sets_[0].out.download(out.data(), out.size() * 2);
  return out;
}

Alignment Workload::download_alignment(int block_m) const {
  Alignment a;
  num_padded_.download(&a.num_padded, 4);
  TUNETAB_ASSERT(a.num_padded >= 0 && a.num_padded <= max_padded_rows(p_, block_m), "num_padded out of range");
  a.sorted_ids.resize(static_cast<std::size_t>(a.num_padded));
  a.expert_ids.resize(static_cast<std::size_t>(a.num_padded / block_m));
  if (a.num_padded) {
    sorted_.download(a.sorted_ids.data(), a.sorted_ids.size() * 4);
    expert_ids_.download(a.expert_ids.data(), a.expert_ids.size() * 4);
  }
  a.sorted_pos.resize(static_cast<std::size_t>(p_.rows()));
  sorted_pos_.download(a.sorted_pos.data(), a.sorted_pos.size() * 4);
  a.counts.assign(static_cast<std::size_t>(p_.experts), 0);
  for (std::int64_t s = 0; s < p_.rows(); ++s) ++a.counts[static_cast<std::size_t>(h_.routing.topk_ids[s])];
  return a;
}

const std::vector<float>& Workload::reference() {
  if (ref_.empty()) ref_ = reference_moe(capacity_, h_);
  return ref_;
}

}  // namespace tunetab::moe
