// FP8 block-scaled GEMM on sm_90a, the third TMA kernel (gemm_fp8::Math::kTma3): gemm_fp8_blockscale_tma2
// (gemm_fp8_tma2.h) with each consumer warpgroup's promotion overlapped with its own next MMAs, split-K 1 only.
// tma2 waits for a K block's MMAs (wgmma_wait<0>) before it promotes them, so a warpgroup's tensor work stops while
// it promotes; its other consumer warpgroup (if any) fills only part of the gap: without the promotion tma2's K loop
// ran 4-9% faster on the H200 (session 32's ablation). Here a consumer runs its K blocks in chunks of kChunk with two
// promotion fragments: it issues block j + 1's MMAs before it waits for block j's (wgmma_wait<1>) and promotes them,
// so only a chunk's last promotion runs with nothing in flight.
// NOTE: a chunk is straight-line code that ends with no group in flight: ptxas serializes every wgmma of a kernel that
// carries a group across a loop's back edge (C7514, docs/performance.md session 18), and a branch between a group's
// issue and its wait may do the same, so the promotion's column split (jb, per tile) picks a K loop instance
// outside the loop, not a branch inside it. K blocks past the last whole chunk run as tma2's (one at a time).
// NOTE: a header of its own, so that tma2's code keys (and the tuning verdicts stored against them) stay. Its producer
// and epilogue are tma2's, copied: the next change that re-keys tma2 anyway (and so re-tunes its rows) should make the
// chunked K loop a template parameter of tma2 and delete this copy. Device-only; no std::.
#pragma once
#include "gemm_fp8_tma2.h"

namespace tt {

#if TT_HAS_WGMMA
/// A tma3 consumer warpgroup's K loop over the stages of gemm_fp8_blockscale_tma3 (its stage layout and scale
/// rows), with the promotion's column split kJb (fragment columns j < kJb take the lower 128-column scale block).
template <int kBlockM, int kBlockN, int kWarpN, int kStages, int kScaleBlocksN>
struct Tma3Consumer {
  static constexpr int kBlockK = 128, kStageBytes = (kBlockM + kBlockN) * kBlockK, kChunk = 4;
  static constexpr bool kOneBlock = 128 % kWarpN == 0;
  u8* base;
  u64* full_bar;
  u64* empty_bar;
  const float (*s_ascale)[kBlockM];
  const float (*s_bscale)[kScaleBlocksN];
  int wg_m, wg_n, r_tile, lane, sb_lo_at, sb_hi_at;

  /// Waits for K block u's stage and issues its four MMAs into t (one commit group).
  __device__ __forceinline__ void issue(int u, float (&t)[kWarpN / 2]) const {
    const int s = u % kStages;
    mbar_wait(&full_bar[s], (u / kStages) & 1);
    const u8* sa = base + s * kStageBytes;
    const u8* sb = sa + kBlockM * kBlockK;
    fence_operands(t);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {  // k32 step kk: +32 bytes (2 descriptor units) along the swizzled row
      const u64 da = wgmma_desc(sa + wg_m * 64 * 128) + 2 * kk;
      const u64 db = wgmma_desc(sb + wg_n * kWarpN * 128) + 2 * kk;
      wgmma_fp8<kWarpN>(t, da, db, kk);
    }
    wgmma_commit();
  }
  /// Waits for K block u's MMAs (kInFlight: the next block's group stays in flight), releases its stage and
  /// promotes t into acc with the block's scales.
  template <int kJb, bool kInFlight>
  __device__ __forceinline__ void finish(int u, float (&t)[kWarpN / 2], float (&acc)[kWarpN / 2]) const {
    const int s = u % kStages;
    const float sa0 = s_ascale[s][r_tile], sa1 = s_ascale[s][r_tile + 8];
    const float sb_lo = s_bscale[s][sb_lo_at], sb_hi = kOneBlock ? sb_lo : s_bscale[s][sb_hi_at];
    if constexpr (kInFlight) wgmma_wait<1>();
    else wgmma_wait<0>();
    fence_operands(t);
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty_bar[s]);
    fp8_promote<kWarpN, kJb>(acc, t, sa0 * sb_lo, sa1 * sb_lo, sa0 * sb_hi, sa1 * sb_hi);
  }
  /// A tile's k_tiles K blocks from stage use `use` on (advanced past them): chunks of kChunk, each straight-line
  /// and ending with nothing in flight, then the rest one at a time.
  template <int kJb>
  __device__ __forceinline__ void k_loop(float (&acc)[kWarpN / 2], int& use, int k_tiles) const {
    float tmp[2][kWarpN / 2];
    int i = 0;
    for (; i + kChunk <= k_tiles; i += kChunk, use += kChunk) {
      issue(use, tmp[0]);
      issue(use + 1, tmp[1]);
      finish<kJb, true>(use, tmp[0], acc);
      issue(use + 2, tmp[0]);
      finish<kJb, true>(use + 1, tmp[1], acc);
      issue(use + 3, tmp[1]);
      finish<kJb, true>(use + 2, tmp[0], acc);
      finish<kJb, false>(use + 3, tmp[1], acc);
    }
    for (; i < k_tiles; ++i, ++use) {
      issue(use, tmp[0]);
      finish<kJb, false>(use, tmp[0], acc);
    }
  }
};
#endif

/// Registers of a tma3 consumer thread: its accumulator and two promotion fragments (kWarpN / 2 each) plus ~40 of
/// addresses and scales; kRaised as Fp8TmaRegs. NOTE: the host's constraint (kernels/gemm_fp8) counts the same.
template <int kConsumers, int kWarpN>
struct Fp8Tma3Regs {
  static constexpr int kNeed = 3 * kWarpN / 2 + 40;
  static constexpr int kRaised =
      kNeed <= 65536 / ((kConsumers + 1) * 128) || kConsumers < 2 ? 0 : ((65536 - 128 * 40) / (kConsumers * 128)) / 8 * 8;
};

// NOTE: one CTA an SM (minBlocksPerMultiprocessor 1), as moe_wgmma2.h's: without it ptxas ignored setmaxnreg in the
// two-consumer 96-wide tiles ("unable to determine register count at entry", C7508) and spilled. The offline AMD
// compile's macro takes one argument.
#if defined(TT_OFFLINE_HIP)
#define TT_FP8_TMA3_BOUNDS(threads) __launch_bounds__(threads)
#else
#define TT_FP8_TMA3_BOUNDS(threads) __launch_bounds__(threads, 1)
#endif

/// sm_90a: as gemm_fp8_blockscale_tma2 with split-K 1 (kCtas 0: a CTA a tile; kCtas > 0: persistent), and each
/// consumer's K blocks in chunks of kChunk whose promotions overlap the next block's MMAs (the header's comment).
// NOTE: no defaults: ROCm 5.2 hipRTC matches a name expression against the full argument list.
template <int kBlockM, int kBlockN, int kWarpN, int kStages, int kCtas, typename Index>
__global__ void TT_FP8_TMA3_BOUNDS((kBlockM / 64) * (kBlockN / kWarpN) * 128 + 128)
gemm_fp8_blockscale_tma3(const TT_GRID_CONSTANT Fp8GemmTmaArgs args) {
  constexpr int kConsumersN = kBlockN / kWarpN;
  constexpr int kConsumers = (kBlockM / 64) * kConsumersN;
  [[maybe_unused]] constexpr int kThreads = kConsumers * 128 + 128;  // the portable body's
  constexpr int kBlockK = 128;
  constexpr int kStageBytes = (kBlockM + kBlockN) * kBlockK;
  constexpr int kLdC = kBlockN * 2 + 16;  // bytes per staged output row
  constexpr bool kOneBlock = 128 % kWarpN == 0;  // as tma2's
  using Regs = Fp8Tma3Regs<kConsumers, kWarpN>;
  static_assert(kBlockM % 64 == 0 && kBlockM <= 256 && kBlockN <= 256 && kBlockN % kWarpN == 0 &&
                    (kWarpN == 64 || kWarpN == 96 || kWarpN == 128) && kStages >= 2,
                "fp8 tma3: a warpgroup per 64 x warp_n (64, 96 or 128), one box per operand");
  static_assert(kCtas > 0 || kBlockM * kLdC <= kStages * kStageBytes, "fp8 tma3: the staged output tile fits the stages");
  static_assert(Regs::kRaised == 0 || Regs::kRaised >= Regs::kNeed, "fp8 tma3: the fragments do not fit a consumer's registers");
  const Fp8GemmArgs& p = args.p;
  const GemmArgs& g = p.g;
  const int tid = static_cast<int>(thread_x());
  const int tiles_n = (g.n + kBlockN - 1) / kBlockN;
  const int tile_first = kCtas > 0 ? static_cast<int>(block_x()) : 0;
  const int tile_end = kCtas > 0 ? tiles_n * ((g.m + kBlockM - 1) / kBlockM) : 1;
  auto tile_m0 = [&](int t) { return (kCtas > 0 ? t / tiles_n : static_cast<int>(block_y())) * kBlockM; };
  auto tile_n0 = [&](int t) { return (kCtas > 0 ? t % tiles_n : static_cast<int>(block_x())) * kBlockN; };
  [[maybe_unused]] const int k_tiles = (g.k + kBlockK - 1) / kBlockK;
#if TT_HAS_WGMMA
  extern __shared__ u32x4 tt_dynamic_smem[];
  __shared__ u64 full_bar[kStages], empty_bar[kStages];
  constexpr int kScaleBlocksN = kBlockN / 128 + 2;
  __shared__ alignas(16) float s_ascale[kStages][kBlockM];
  __shared__ float s_bscale[kStages][kScaleBlocksN];
  u8* const base = reinterpret_cast<u8*>((reinterpret_cast<u64>(tt_dynamic_smem) + 1023) & ~static_cast<u64>(1023));
  u8* const out_tile = kCtas > 0 ? base + kStages * kStageBytes : base;
  const int tile_step = kCtas > 0 ? static_cast<int>(gridDim.x) : 1;
  const int wg = tid / 128, wg_m = wg / kConsumersN, wg_n = wg % kConsumersN;
  if (tid == kConsumers * 128) {
    prefetch_tensormap(&args.a);
    prefetch_tensormap(&args.b);
  }
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full_bar[s], 1 + 32);  // the TMA thread's expect_tx arrival and the scale warp's 32
      mbar_init(&empty_bar[s], kConsumers * 4);  // every consumer warp, once it has read the stage's scales
    }
    fence_barrier_init();
  }
  sync_block();
  if (wg == kConsumers) {
    // The producer warpgroup: tma2's TMA thread and scale warp.
    if constexpr (Regs::kRaised > 0) setmaxnreg_dec<40>();
    if (tid == kConsumers * 128) {
      int use = 0;
      for (int t = tile_first; t < tile_end; t += tile_step) {
        const int bm0 = tile_m0(t), bn0 = tile_n0(t);
        for (int i = 0; i < k_tiles; ++i, ++use) {
          const int s = use % kStages;
          if (use >= kStages) mbar_wait(&empty_bar[s], ((use / kStages) - 1) & 1);
          mbar_arrive_expect_tx(&full_bar[s], kStageBytes);
          u8* sa = base + s * kStageBytes;
          tma_load_2d(sa, &args.a, i * kBlockK, bm0, &full_bar[s]);
          tma_load_2d(sa + kBlockM * kBlockK, &args.b, i * kBlockK, bn0, &full_bar[s]);
        }
      }
    } else if (tid / 32 == kConsumers * 4 + 1) {
      const int lane = tid % 32;
      int use = 0;
      for (int t = tile_first; t < tile_end; t += tile_step) {
        const int bm0 = tile_m0(t), bn0 = tile_n0(t);
        const int nb_first = bn0 >> 7, nb_last = (imin(bn0 + kBlockN, g.n) - 1) >> 7;
        for (int i = 0; i < k_tiles; ++i, ++use) {
          const int s = use % kStages;
          if (use >= kStages) mbar_wait(&empty_bar[s], ((use / kStages) - 1) & 1);
#pragma unroll 1
          for (int r = lane; r < kBlockM; r += 32) {
            const int row = bm0 + r;
            const bool valid = row < g.m;  // rows past M: 0 (never stored)
            copy_async<4>(&s_ascale[s][r], p.a_scale + (valid ? static_cast<Index>(row) * p.scale_k + i : 0), valid);
          }
          if (lane < kScaleBlocksN)
            copy_async<4>(&s_bscale[s][lane], p.b_scale + imin(nb_first + lane, nb_last) * p.scale_k + i, true);
          scale_copies_arrive(&full_bar[s]);
        }
      }
    }
  } else {
    if constexpr (Regs::kRaised > 0) setmaxnreg_inc<Regs::kRaised>();
    const int warp = (tid % 128) / 32, lane = tid % 32;
    const int r_tile = wg_m * 64 + warp * 16 + lane / 4;  // this lane's first row within the tile (and r + 8)
    const int c_wg = wg_n * kWarpN;
    int use = 0;  // as the producer's
    for (int t = tile_first; t < tile_end; t += tile_step) {
      const int bm0 = tile_m0(t), bn0 = tile_n0(t);
      const int n0 = bn0 + c_wg;
      const int nb_lo = imin(n0, g.n - 1) >> 7, nb_hi = imin(n0 + kWarpN - 1, g.n - 1) >> 7;
      const int jb = kOneBlock || nb_hi == nb_lo ? kWarpN / 8 : ((nb_hi << 7) - n0) / 8;  // as tma2's
      const int sb_lo_at = nb_lo - (bn0 >> 7), sb_hi_at = nb_hi - (bn0 >> 7);
      float acc[kWarpN / 2];
#pragma unroll
      for (int r = 0; r < kWarpN / 2; ++r) acc[r] = 0.f;
      const Tma3Consumer<kBlockM, kBlockN, kWarpN, kStages, kScaleBlocksN> consumer{base, full_bar, empty_bar, s_ascale, s_bscale,
        wg_m, wg_n, r_tile, lane, sb_lo_at, sb_hi_at};
      if constexpr (kWarpN == 96) {
        if (jb == 4) consumer.template k_loop<4>(acc, use, k_tiles);
        else if (jb == 8) consumer.template k_loop<8>(acc, use, k_tiles);
        else consumer.template k_loop<kWarpN / 8>(acc, use, k_tiles);
      } else {
        consumer.template k_loop<kWarpN / 8>(acc, use, k_tiles);
      }
      {
        // tma2's epilogue: the bf16 tile through shared memory, out in 16-byte row chunks.
        bar_sync_named(1, kConsumers * 128);
#pragma unroll
        for (int j = 0; j < kWarpN / 8; ++j) {
          u8* const c0 = out_tile + r_tile * kLdC + (c_wg + j * 8 + (lane % 4) * 2) * 2;
          *reinterpret_cast<u32*>(c0) = pack_bf16x2(acc[j * 4 + 0], acc[j * 4 + 1]);
          *reinterpret_cast<u32*>(c0 + 8 * kLdC) = pack_bf16x2(acc[j * 4 + 2], acc[j * 4 + 3]);
        }
        bar_sync_named(1, kConsumers * 128);
        constexpr int kChunksN = kBlockN / 8;
        const bool vec = (g.n & 7) == 0;  // 16-byte aligned rows
        for (int c = tid; c < kBlockM * kChunksN; c += kConsumers * 128) {
          const int r = c / kChunksN, col = bn0 + (c % kChunksN) * 8, row = bm0 + r;
          if (row >= g.m || col >= g.n) continue;
          const u8* src = out_tile + r * kLdC + (c % kChunksN) * 16;
          u16* dst = g.c + static_cast<Index>(row) * static_cast<Index>(g.n) + static_cast<Index>(col);
          if (vec && col + 8 <= g.n) {
            *reinterpret_cast<u32x4*>(dst) = *reinterpret_cast<const u32x4*>(src);
          } else {
            for (int e = 0; e < 8 && col + e < g.n; ++e) dst[e] = reinterpret_cast<const u16*>(src)[e];
          }
        }
      }
    }
  }
#else
  // As tma2's portable body (the host never selects this kernel off sm_90a): each thread computes its share.
  const u8* const a = reinterpret_cast<const u8*>(g.a);
  const u8* const b = reinterpret_cast<const u8*>(g.b);
  for (int t = tile_first; t < tile_end; t += kCtas > 0 ? kCtas : 1) {
    const int bm0 = tile_m0(t), bn0 = tile_n0(t);
    for (int e = tid; e < kBlockM * kBlockN; e += kThreads) {
      const int row = bm0 + e / kBlockN, col = bn0 + e % kBlockN;
      if (row >= g.m || col >= g.n) continue;
      float sum = 0.f;
      for (int k0 = 0; k0 < g.k; k0 += kBlockK) {
        float dot = 0.f;
        for (int k = k0; k < imin(g.k, k0 + kBlockK); ++k)
          dot += fp8_e4m3_to_f32(a[static_cast<Index>(row) * g.k + k], p.fnuz != 0) *
                 fp8_e4m3_to_f32(b[static_cast<Index>(col) * g.k + k], p.fnuz != 0);
        sum += dot * (fp8_row_scale<Index>(p, row, k0 >> 7) * fp8_col_scale(p, col, k0 >> 7));
      }
      g.c[static_cast<Index>(row) * static_cast<Index>(g.n) + static_cast<Index>(col)] = f32_to_bf16(sum);
    }
  }
#endif
}

}  // namespace tt
