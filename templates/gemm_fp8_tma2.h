// FP8 block-scaled GEMM on sm_90a, the second TMA kernel (gemm_fp8::Math::kTma2): gemm_fp8_blockscale_tma
// (gemm_fp8_blockscale.h) with a CTA per output tile (no persistent grid) and two changes, from session 14's
// Nsight Compute source counters of its m128n192 tile at 4096 x 6144 x 2048 (docs/bench/2026-12-02-s14/c1):
//  - the promotion: 340 instructions a K block per consumer warp, of which 96 FFMA are the work. The column
//    block of each fragment column was selected at run time (a compare, a select and two multiplies per 8
//    columns). Here the four scale products are formed once per K block and the block boundary is a compile-time
//    constant (a warpgroup's 64 or 128 columns lie in one 128-column block; 192 columns cross one boundary, after
//    8 or 16 of its 24 fragment columns: three unrolled promotions, one picked per tile);
//  - the epilogue, 24% of the samples: 4-byte stores of scattered rows. Here the bf16 tile goes through shared
//    memory (the stages, free once the last K block is consumed) and leaves in coalesced 16-byte row stores.
// NOTE: a header of its own, so that gemm_fp8_blockscale_tma's code keys (and the tuning verdicts stored against
// them) stay. Device-only; no std::.
#pragma once
#include "gemm_fp8_blockscale.h"

namespace tt {

#if TT_HAS_WGMMA
/// acc += tmp x scale for a warpgroup fragment kWarpN wide: fragment columns j < kJb (8 columns each) take the
/// lower column block's scales (s0 for row r0, s1 for row r0 + 8), the rest the upper block's.
template <int kWarpN, int kJb>
__device__ __forceinline__ void fp8_promote(float (&acc)[kWarpN / 2], const float (&tmp)[kWarpN / 2], float s0_lo, float s1_lo,
                                            float s0_hi, float s1_hi) {
#pragma unroll
  for (int j = 0; j < kWarpN / 8; ++j) {
    const float s0 = j < kJb ? s0_lo : s0_hi, s1 = j < kJb ? s1_lo : s1_hi;
    acc[j * 4 + 0] += tmp[j * 4 + 0] * s0;
    acc[j * 4 + 1] += tmp[j * 4 + 1] * s0;
    acc[j * 4 + 2] += tmp[j * 4 + 2] * s1;
    acc[j * 4 + 3] += tmp[j * 4 + 3] * s1;
  }
}
#endif

/// sm_90a, warp-specialized as gemm_fp8_blockscale_tma (kCtas 0): one producer thread copies each K block of A
/// and B by TMA into kStages stages; a consumer warpgroup per 64 rows x kWarpN columns multiplies a stage into a
/// K block product, releases it and promotes the product. After the last K block the consumers stage the bf16
/// tile in shared memory (rows padded by 16 bytes: the fragment's 8 rows x 4 column pairs of a warp store hit 32
/// banks) and copy it out in 16-byte row chunks. Split-K writes fp32 partials directly and reduces as the bf16
/// family does.
// NOTE: no defaults: ROCm 5.2 hipRTC matches a name expression against the full argument list.
template <int kBlockM, int kBlockN, int kWarpN, int kStages, typename Index>
__global__ void __launch_bounds__((kBlockM / 64) * (kBlockN / kWarpN) * 128 + 128)
gemm_fp8_blockscale_tma2(const TT_GRID_CONSTANT Fp8GemmTmaArgs args) {
  constexpr int kConsumersN = kBlockN / kWarpN;
  constexpr int kConsumers = (kBlockM / 64) * kConsumersN;
  constexpr int kThreads = kConsumers * 128 + 128;
  constexpr int kBlockK = 128;
  constexpr int kStageBytes = (kBlockM + kBlockN) * kBlockK;
  constexpr int kLdC = kBlockN * 2 + 16;  // bytes per staged output row
  using Regs = Fp8TmaRegs<kConsumers, kWarpN>;
  static_assert(kBlockM % 64 == 0 && kBlockM <= 256 && kBlockN <= 256 && kBlockN % kWarpN == 0 &&
                    (kWarpN == 64 || kWarpN == 128 || kWarpN == 192) && kStages >= 2,
                "fp8 tma2: a warpgroup per 64 x warp_n (64, 128 or 192), one box per operand");
  static_assert(kBlockM * kLdC <= kStages * kStageBytes, "fp8 tma2: the staged output tile fits the stages");
  static_assert(Regs::kRaised == 0 || Regs::kRaised >= Regs::kNeed, "fp8 tma2: the fragments do not fit a consumer's registers");
  const Fp8GemmArgs& p = args.p;
  const GemmArgs& g = p.g;
  const int tid = static_cast<int>(thread_x());
  const int bm0 = static_cast<int>(block_y()) * kBlockM, bn0 = static_cast<int>(block_x()) * kBlockN;
  const int split = static_cast<int>(block_z());
  const int k_begin = split * g.k_per_split;  // a multiple of 128
  const int k_end = imin(g.k, k_begin + g.k_per_split);
  const int k_tiles = k_end > k_begin ? (k_end - k_begin + kBlockK - 1) / kBlockK : 0;
  float* partial = g.splits > 1 ? g.workspace + static_cast<Index>(split) * static_cast<Index>(g.m) * static_cast<Index>(g.n) : nullptr;
#if TT_HAS_WGMMA
  extern __shared__ u32x4 tt_dynamic_smem[];
  __shared__ u64 full_bar[kStages], empty_bar[kStages];
  u8* const base = reinterpret_cast<u8*>((reinterpret_cast<u64>(tt_dynamic_smem) + 1023) & ~static_cast<u64>(1023));
  const int wg = tid / 128, wg_m = wg / kConsumersN, wg_n = wg % kConsumersN;
  if (tid == kConsumers * 128) {
    prefetch_tensormap(&args.a);
    prefetch_tensormap(&args.b);
  }
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full_bar[s], 1);
      mbar_init(&empty_bar[s], kConsumers);
    }
    fence_barrier_init();
  }
  sync_block();
  if (wg == kConsumers) {
    if constexpr (Regs::kRaised > 0) setmaxnreg_dec<40>();
    if (tid == kConsumers * 128) {
      for (int i = 0; i < k_tiles; ++i) {
        const int s = i % kStages;
        if (i >= kStages) mbar_wait(&empty_bar[s], ((i / kStages) - 1) & 1);
        mbar_arrive_expect_tx(&full_bar[s], kStageBytes);
        u8* sa = base + s * kStageBytes;
        const int k = k_begin + i * kBlockK;
        tma_load_2d(sa, &args.a, k, bm0, &full_bar[s]);
        tma_load_2d(sa + kBlockM * kBlockK, &args.b, k, bn0, &full_bar[s]);
      }
    }
  } else {
    if constexpr (Regs::kRaised > 0) setmaxnreg_inc<Regs::kRaised>();
    const int warp = (tid % 128) / 32, lane = tid % 32;
    const int kb0 = k_begin / kBlockK;
    const int r_tile = wg_m * 64 + warp * 16 + lane / 4;  // this lane's first row within the tile (and r + 8)
    const int row0 = bm0 + r_tile;
    const int c_wg = wg_n * kWarpN, n0 = bn0 + c_wg;
    // The warpgroup's columns span at most two 128-column scale blocks: lo, and hi from fragment column jb on
    // (jb = kWarpN / 8 when they lie in one block: always for 64 and 128, whose n0 is a multiple of warp_n).
    const int nb_lo = imin(n0, g.n - 1) >> 7, nb_hi = imin(n0 + kWarpN - 1, g.n - 1) >> 7;
    const int jb = kWarpN <= 128 || nb_hi == nb_lo ? kWarpN / 8 : ((nb_hi << 7) - n0) / 8;
    float acc[kWarpN / 2], tmp[kWarpN / 2];
#pragma unroll
    for (int r = 0; r < kWarpN / 2; ++r) acc[r] = 0.f;
    for (int i = 0; i < k_tiles; ++i) {
      const int s = i % kStages, kb = kb0 + i;
      // The scales first: their loads overlap the wait for the stage.
      const float sa0 = fp8_row_scale<Index>(p, row0, kb), sa1 = fp8_row_scale<Index>(p, row0 + 8, kb);
      const float sb_lo = p.b_scale[nb_lo * p.scale_k + kb];
      const float sb_hi = kWarpN <= 128 ? sb_lo : p.b_scale[nb_hi * p.scale_k + kb];
      mbar_wait(&full_bar[s], (i / kStages) & 1);
      const u8* sa = base + s * kStageBytes;
      const u8* sb = sa + kBlockM * kBlockK;
      fence_operands(tmp);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {  // k32 step kk: +32 bytes (2 descriptor units) along the swizzled row
        const u64 da = wgmma_desc(sa + wg_m * 64 * 128) + 2 * kk;
        const u64 db = wgmma_desc(sb + wg_n * kWarpN * 128) + 2 * kk;
        wgmma_fp8<kWarpN>(tmp, da, db, kk);
      }
      wgmma_commit();
      wgmma_wait<0>();
      fence_operands(tmp);
      if (tid % 128 == 0) mbar_arrive(&empty_bar[s]);  // the stage is read: the producer may refill it
      const float s0_lo = sa0 * sb_lo, s1_lo = sa1 * sb_lo, s0_hi = sa0 * sb_hi, s1_hi = sa1 * sb_hi;
      if constexpr (kWarpN == 192) {
        if (jb == 8) fp8_promote<kWarpN, 8>(acc, tmp, s0_lo, s1_lo, s0_hi, s1_hi);
        else if (jb == 16) fp8_promote<kWarpN, 16>(acc, tmp, s0_lo, s1_lo, s0_hi, s1_hi);
        else fp8_promote<kWarpN, kWarpN / 8>(acc, tmp, s0_lo, s1_lo, s0_hi, s1_hi);
      } else {
        fp8_promote<kWarpN, kWarpN / 8>(acc, tmp, s0_lo, s1_lo, s0_hi, s1_hi);
      }
    }
    // Fragment element j*4 + e is row r_tile + (e / 2) * 8, column c_wg + j*8 + (lane % 4)*2 + e % 2.
    if (partial) {
#pragma unroll
      for (int j = 0; j < kWarpN / 8; ++j) {
        const int col = n0 + j * 8 + (lane % 4) * 2;
        store_pair<Index>(g, partial, row0, col, acc[j * 4 + 0], acc[j * 4 + 1]);
        store_pair<Index>(g, partial, row0 + 8, col, acc[j * 4 + 2], acc[j * 4 + 3]);
      }
    } else {
      // Every consumer has read its last stage (the producer issued nothing after it): the stages are free.
      bar_sync_named(1, kConsumers * 128);
#pragma unroll
      for (int j = 0; j < kWarpN / 8; ++j) {
        u8* const c0 = base + r_tile * kLdC + (c_wg + j * 8 + (lane % 4) * 2) * 2;
        *reinterpret_cast<u32*>(c0) = pack_bf16x2(acc[j * 4 + 0], acc[j * 4 + 1]);
        *reinterpret_cast<u32*>(c0 + 8 * kLdC) = pack_bf16x2(acc[j * 4 + 2], acc[j * 4 + 3]);
      }
      bar_sync_named(1, kConsumers * 128);
      // 16-byte chunks (8 columns) of the tile's rows, consecutive threads along a row.
      constexpr int kChunksN = kBlockN / 8;
      const bool vec = (g.n & 7) == 0;  // 16-byte aligned rows
      for (int c = tid; c < kBlockM * kChunksN; c += kConsumers * 128) {
        const int r = c / kChunksN, col = bn0 + (c % kChunksN) * 8, row = bm0 + r;
        if (row >= g.m || col >= g.n) continue;
        const u8* src = base + r * kLdC + (c % kChunksN) * 16;
        u16* dst = g.c + static_cast<Index>(row) * static_cast<Index>(g.n) + static_cast<Index>(col);
        if (vec && col + 8 <= g.n) {
          *reinterpret_cast<u32x4*>(dst) = *reinterpret_cast<const u32x4*>(src);
        } else {
          for (int e = 0; e < 8 && col + e < g.n; ++e) dst[e] = reinterpret_cast<const u16*>(src)[e];
        }
      }
    }
  }
#else
  // TMA and wgmma exist only on sm_90a (the host never selects this kernel elsewhere); a portable body
  // compiles it everywhere: each thread computes its share of the tile directly.
  const u8* const a = reinterpret_cast<const u8*>(g.a);
  const u8* const b = reinterpret_cast<const u8*>(g.b);
  for (int e = tid; e < kBlockM * kBlockN; e += kThreads) {
    const int row = bm0 + e / kBlockN, col = bn0 + e % kBlockN;
    if (row >= g.m || col >= g.n) continue;
    float sum = 0.f;
    for (int k0 = k_begin; k0 < k_end; k0 += kBlockK) {
      float dot = 0.f;
      for (int k = k0; k < imin(k_end, k0 + kBlockK); ++k)
        dot += fp8_e4m3_to_f32(a[static_cast<Index>(row) * g.k + k], p.fnuz != 0) *
               fp8_e4m3_to_f32(b[static_cast<Index>(col) * g.k + k], p.fnuz != 0);
      sum += dot * (fp8_row_scale<Index>(p, row, k0 >> 7) * fp8_col_scale(p, col, k0 >> 7));
    }
    const Index off = static_cast<Index>(row) * static_cast<Index>(g.n) + static_cast<Index>(col);
    if (partial) partial[off] = sum;
    else g.c[off] = f32_to_bf16(sum);
  }
#endif
  if (g.splits > 1)
    splitk_finish<kBlockM, kBlockN, kThreads, Index>(g, static_cast<int>(block_y()) * ((g.n + kBlockN - 1) / kBlockN) +
                                                            static_cast<int>(block_x()), bm0, bn0, tid);
}

}  // namespace tt
