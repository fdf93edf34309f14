// FP8 block-scaled GEMM on sm_90a, stream-K (gemm_fp8::Math::kStreamK): tma2's producer, MMAs and promotion
// (gemm_fp8_tma2.h) over a persistent grid of one CTA an SM that shares the problem's (tile, K block) units
// evenly, as gemm_bf16_tma's kStreamK does.
// NOTE: why: at a few hundred rows the output tiles fill a fraction of the SMs or a wave and a part (336 x 3072:
// 72 tiles of 128 x 128 on 132 SMs), and tma2 lost to cuBLASLt by up to 1.25x there (docs/performance.md, session
// 15); its split-K was 1.6-5x slower than none (session 16). A header of its own, so tma2's code keys (and the
// verdicts stored against them) stay. Device-only; no std::.
#pragma once
#include "gemm_fp8_tma2.h"

namespace tt {

#if TT_HAS_WGMMA
/// Stores a consumer thread's kWarpN / 2 accumulators of the tile at (m0, n0) as bf16 to C (bounds-checked pairs).
template <int kWarpN, typename Index>
__device__ __forceinline__ void fp8_store_fragment(const GemmArgs& g, const float (&acc)[kWarpN / 2], int row0, int col0) {
#pragma unroll
  for (int j = 0; j < kWarpN / 8; ++j) {
    store_pair<Index>(g, nullptr, row0, col0 + j * 8, acc[j * 4 + 0], acc[j * 4 + 1]);
    store_pair<Index>(g, nullptr, row0 + 8, col0 + j * 8, acc[j * 4 + 2], acc[j * 4 + 3]);
  }
}
#endif

/// sm_90a: args.p.g.splits persistent CTAs (the SMs) share the units u = tile * k_iters + K block, CTA c
/// owning [c * units / ctas, (c + 1) * units / ctas); tiles in M-fastest order (neighbours share B, the
/// weight). One producer thread copies every unit's A and B by TMA into kStages stages, running ahead across
/// tiles; a consumer warpgroup per 64 rows x kWarpN columns multiplies, releases and promotes each unit as tma2
/// does. A CTA stores a tile whose K range it owns whole; otherwise it publishes its promoted fp32 partial and
/// the CTA that completes the tile's count sums every contributor's in CTA order and stores it (streamk_fixup,
/// gemm_bf16.h: the result does not depend on arrival order, and nobody waits on another CTA).
// NOTE: no defaults: ROCm 5.2 hipRTC matches a name expression against the full argument list.
template <int kBlockM, int kBlockN, int kWarpN, int kStages, typename Index>
__global__ void __launch_bounds__((kBlockM / 64) * (kBlockN / kWarpN) * 128 + 128)
gemm_fp8_blockscale_streamk(const TT_GRID_CONSTANT Fp8GemmTmaArgs args) {
  constexpr int kConsumersN = kBlockN / kWarpN;
  constexpr int kConsumers = (kBlockM / 64) * kConsumersN;
  [[maybe_unused]] constexpr int kThreads = kConsumers * 128 + 128;  // the portable body's
  constexpr int kBlockK = 128;
  constexpr int kStageBytes = (kBlockM + kBlockN) * kBlockK;
  using Regs = Fp8TmaRegs<kConsumers, kWarpN>;
  static_assert(kBlockM % 64 == 0 && kBlockM <= 256 && kBlockN <= 256 && kBlockN % kWarpN == 0 &&
                    (kWarpN == 64 || kWarpN == 128 || kWarpN == 192) && kStages >= 2,
                "fp8 stream-K: a warpgroup per 64 x warp_n (64, 128 or 192), one box per operand");
  static_assert(Regs::kRaised == 0 || Regs::kRaised >= Regs::kNeed, "fp8 stream-K: the fragments do not fit a consumer's registers");
  const Fp8GemmArgs& p = args.p;
  const GemmArgs& g = p.g;
  const int tid = static_cast<int>(thread_x());
  const int tiles_m = (g.m + kBlockM - 1) / kBlockM, tiles_n = (g.n + kBlockN - 1) / kBlockN;
  const int k_iters = (g.k + kBlockK - 1) / kBlockK;
#if TT_HAS_WGMMA
  const long long units = static_cast<long long>(tiles_m) * tiles_n * k_iters;
  const long long u_begin = units * block_x() / g.splits, u_end = units * (block_x() + 1) / g.splits;
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
      int i = 0;  // units issued: stage i % kStages
      for (long long u = u_begin; u < u_end; ++u, ++i) {
        const int t = static_cast<int>(u / k_iters), kb = static_cast<int>(u - static_cast<long long>(t) * k_iters);
        const int s = i % kStages;
        if (i >= kStages) mbar_wait(&empty_bar[s], ((i / kStages) - 1) & 1);
        mbar_arrive_expect_tx(&full_bar[s], kStageBytes);
        u8* sa = base + s * kStageBytes;
        tma_load_2d(sa, &args.a, kb * kBlockK, (t % tiles_m) * kBlockM, &full_bar[s]);
        tma_load_2d(sa + kBlockM * kBlockK, &args.b, kb * kBlockK, (t / tiles_m) * kBlockN, &full_bar[s]);
      }
    }
  } else {
    if constexpr (Regs::kRaised > 0) setmaxnreg_inc<Regs::kRaised>();
    const int warp = (tid % 128) / 32, lane = tid % 32;
    const int r_tile = wg_m * 64 + warp * 16 + lane / 4;  // this lane's first row within the tile (and r + 8)
    const int c_wg = wg_n * kWarpN;
    float acc[kWarpN / 2], tmp[kWarpN / 2];
    int i = 0;  // units consumed: stage i % kStages, phase (i / kStages) & 1
    for (long long seg = u_begin; seg < u_end;) {
      // A segment: this CTA's units of tile t, from seg to the tile's end or the CTA's.
      const int t = static_cast<int>(seg / k_iters);
      const long long tile_first = static_cast<long long>(t) * k_iters;
      const long long seg_end = u_end < tile_first + k_iters ? u_end : tile_first + k_iters;
      const int row0 = (t % tiles_m) * kBlockM + r_tile, n0 = (t / tiles_m) * kBlockN + c_wg;
      // As tma2: the warpgroup's columns span at most two 128-column scale blocks, hi from fragment column jb on.
      const int nb_lo = imin(n0, g.n - 1) >> 7, nb_hi = imin(n0 + kWarpN - 1, g.n - 1) >> 7;
      const int jb = kWarpN <= 128 || nb_hi == nb_lo ? kWarpN / 8 : ((nb_hi << 7) - n0) / 8;
#pragma unroll
      for (int r = 0; r < kWarpN / 2; ++r) acc[r] = 0.f;
      for (long long u = seg; u < seg_end; ++u, ++i) {
        const int s = i % kStages, kb = static_cast<int>(u - tile_first);
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
      // Fragment element j*4 + e is row row0 + (e / 2) * 8, column n0 + j*8 + (lane % 4)*2 + e % 2.
      const int col0 = n0 + (lane % 4) * 2;
      if (seg == tile_first && seg_end == tile_first + k_iters) {
        fp8_store_fragment<kWarpN, Index>(g, acc, row0, col0);
      } else if (streamk_fixup<kBlockM * kBlockN, kConsumers * 128>(g, acc, t, seg == u_begin ? 0 : 1,
                                                                     static_cast<int>(seg_end - seg), k_iters, units, tid)) {
        fp8_store_fragment<kWarpN, Index>(g, acc, row0, col0);
      }
      seg = seg_end;
    }
  }
#else
  // TMA and wgmma exist only on sm_90a (the host never selects this kernel elsewhere); a portable body
  // compiles it everywhere: the CTAs stride over whole tiles, each thread computing its outputs directly.
  const u8* const a = reinterpret_cast<const u8*>(g.a);
  const u8* const b = reinterpret_cast<const u8*>(g.b);
  for (int t = static_cast<int>(block_x()); t < tiles_m * tiles_n; t += g.splits) {
    const int bm0 = (t % tiles_m) * kBlockM, bn0 = (t / tiles_m) * kBlockN;
    for (int e = tid; e < kBlockM * kBlockN; e += kThreads) {
      const int row = bm0 + e / kBlockN, col = bn0 + e % kBlockN;
      if (row >= g.m || col >= g.n) continue;
      float sum = 0.f;
      for (int kb = 0; kb < k_iters; ++kb) {
        float dot = 0.f;
        for (int k = kb * kBlockK; k < imin(g.k, (kb + 1) * kBlockK); ++k)
          dot += fp8_e4m3_to_f32(a[static_cast<Index>(row) * g.k + k], p.fnuz != 0) *
                 fp8_e4m3_to_f32(b[static_cast<Index>(col) * g.k + k], p.fnuz != 0);
        sum += dot * (fp8_row_scale<Index>(p, row, kb) * fp8_col_scale(p, col, kb));
      }
      g.c[static_cast<Index>(row) * static_cast<Index>(g.n) + static_cast<Index>(col)] = f32_to_bf16(sum);
    }
  }
#endif
}

}  // namespace tt
