// FP8 block-scaled GEMM (AITER's gemm_a8w8_blockscale; DeepGEMM's 1x128 / 128x128 recipe):
//   C[m,n] = sum over kb of (sum over k in block kb of A[m,k] B[n,k]) * a_scale[m, kb] * b_scale[n / 128, kb]
// A fp8 [m, k] row-major, B fp8 [n, k] row-major, C bf16 [m, n] row-major; the scales are fp32, row-major, in
// AITER's layout: x_scale [m, ceil(k / 128)] (per row, per 128 of K) and w_scale [ceil(n / 128), ceil(k / 128)]
// (per 128 x 128 block). (AITER's asm flatmm variant wants x_scale transposed, [k / 128, m]; not this one.)
// The fp8 format is a run-time argument: e4m3fn (NVIDIA, gfx950) or e4m3fnuz (gfx942); the tensor-core paths
// take e4m3fn only (the host rejects fnuz on NVIDIA targets).
//
// Every K tile is one scale block (128): each path multiplies a tile into a temporary fp32 fragment and then
// promotes it into the accumulator with the row's and the column block's scales. Paths (kMath): 0 portable
// FMA with software fp8 decode (every target); 1 mma.sync m16n8k32 e4m3 (sm_89+); 2 wgmma m64nNk32 e4m3
// from 128-byte swizzled shared memory (sm_90a); gemm_fp8_blockscale_tma (sm_90a, warp-specialized: TMA
// producer, wgmma consumers); and gemm_fp8_blockscale_skinny for M <= 16. Each arch path falls back to a
// portable one elsewhere. Split-K (run-time, splits aligned to 128 of K) reuses the bf16
// family's last-CTA reduction.
#pragma once
#include "gemm_bf16.h"

#if defined(TT_NVIDIA) && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 890)
#define TT_HAS_MMA_FP8 1  // mma.sync with e4m3 operands
#else
#define TT_HAS_MMA_FP8 0
#endif

namespace tt {

struct Fp8GemmArgs {
  GemmArgs g;            // a, b: fp8 bytes; c, workspace, counters, m, n, k, splits, k_per_split as for bf16
  const float* a_scale;  // [m, scale_k]
  const float* b_scale;  // [ceil(n / 128), scale_k]
  int scale_k;           // ceil(k / 128)
  int fnuz;              // 1: e4m3fnuz, 0: e4m3fn
};

#define TT_FP8_THREADS(kMath, kBlockM, kBlockN, kWarpM, kWarpN) \
  ((kMath) == 2 ? ((kBlockM) / 64) * 128 : ((kBlockM) / (kWarpM)) * ((kBlockN) / (kWarpN)) * 32)

template <int kBlockM, int kBlockN, int kWarpM, int kWarpN, int kStages, int kMath>
struct Fp8Shape {
  static constexpr int kBlockK = 128;  // one scale block
  static constexpr int kThreads = TT_FP8_THREADS(kMath, kBlockM, kBlockN, kWarpM, kWarpN);
  static constexpr int kWarpsN = kBlockN / kWarpN;
  // NOTE: a 16-byte row pad keeps ldmatrix free of bank conflicts; wgmma tiles (whose portable fallback
  // shares their budget) are unpadded and swizzled instead.
  static constexpr int kLd = kBlockK + (kMath == 2 ? 0 : 16);
  static constexpr int kStageBytes = (kBlockM + kBlockN) * kLd;
  static constexpr int kTN = 4;
  static constexpr int kThreadsN = (kBlockN / kTN) < kThreads ? (kBlockN / kTN) : kThreads;
  static constexpr int kThreadsM = kThreads / kThreadsN;
  static constexpr int kTM = kBlockM / kThreadsM;
  static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0 && kWarpM % 16 == 0 && kWarpN % 16 == 0, "warp tile");
  static_assert(kMath != 2 || (kWarpM == 64 && kWarpN == kBlockN && (kBlockN == 64 || kBlockN == 128) && kStages >= 3),
                "wgmma: a warpgroup per 64 x block_n, block_n 64 or 128, >= 3 stages");
  static_assert(kStages >= 2, "stages");
  static_assert(kThreadsM * kThreadsN == kThreads && kThreadsM * kTM == kBlockM, "portable thread layout");
};

/// a_scale of `row` for K block `kb` (0 past the last row).
template <typename Index>
__device__ __forceinline__ float fp8_row_scale(const Fp8GemmArgs& p, int row, int kb) {
  return row < p.g.m ? p.a_scale[static_cast<Index>(row) * p.scale_k + kb] : 0.f;
}
/// b_scale of the 128-column block holding `col` (clamped: columns past N are never stored).
__device__ __forceinline__ float fp8_col_scale(const Fp8GemmArgs& p, int col, int kb) {
  const int nb = (imin(col, p.g.n - 1)) >> 7;
  return p.b_scale[nb * p.scale_k + kb];
}

/// Four e4m3 bytes (byte e of `w` is element e) to fp32: sm_89's hardware conversion for e4m3fn (exact:
/// every e4m3 value is a normal f16), the software decode for e4m3fnuz and on every other target.
__device__ __forceinline__ void fp8x4_to_f32(u32 w, bool fnuz, float* f) {
#if TT_HAS_MMA_FP8
  if (!fnuz) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      u32 pair;
      asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(pair) : "h"(static_cast<u16>(w >> (16 * h))));
      asm("{\n.reg .b16 lo, hi;\nmov.b32 {lo, hi}, %2;\ncvt.f32.f16 %0, lo;\ncvt.f32.f16 %1, hi;\n}\n"
          : "=f"(f[2 * h]), "=f"(f[2 * h + 1])
          : "r"(pair));
    }
    return;
  }
#endif
#pragma unroll
  for (int e = 0; e < 4; ++e) f[e] = fp8_e4m3_to_f32((w >> (8 * e)) & 0xffu, fnuz);
}

#if TT_HAS_MMA_FP8
__device__ __forceinline__ void mma_fp8_16832(float (&d)[4], const u32 (&a)[4], u32 b0, u32 b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
#endif


template <int kBlockM, int kBlockN, int kWarpM, int kWarpN, int kStages, int kMath, typename Index>
__global__ void __launch_bounds__(TT_FP8_THREADS(kMath, kBlockM, kBlockN, kWarpM, kWarpN))
gemm_fp8_blockscale(Fp8GemmArgs p) {
  using S = Fp8Shape<kBlockM, kBlockN, kWarpM, kWarpN, kStages, kMath>;
  constexpr int kThreads = S::kThreads, kLd = S::kLd, kBlockK = S::kBlockK;
  extern __shared__ u32x4 tt_dynamic_smem[];
  u8* const smem = reinterpret_cast<u8*>(tt_dynamic_smem);
  const GemmArgs& g = p.g;
  const u8* const a = reinterpret_cast<const u8*>(g.a);
  const u8* const b = reinterpret_cast<const u8*>(g.b);

  const int tid = static_cast<int>(thread_x());
  const int tiles_n = (g.n + kBlockN - 1) / kBlockN;
  const int bn0 = static_cast<int>(block_x()) * kBlockN;
  const int bm0 = static_cast<int>(block_y()) * kBlockM;
  const int split = static_cast<int>(block_z());
  const int k_begin = split * g.k_per_split;  // a multiple of 128: K tiles are scale blocks
  const int k_end = imin(g.k, k_begin + g.k_per_split);
  const int k_tiles = k_end > k_begin ? (k_end - k_begin + kBlockK - 1) / kBlockK : 0;
  float* partial = nullptr;
  if (g.splits > 1)
    partial = g.workspace + static_cast<Index>(split) * static_cast<Index>(g.m) * static_cast<Index>(g.n);

  // Copies K tile k0 of A and B into the stage at `sa` in 16-byte chunks (K % 16 == 0: a chunk is all inside
  // or all outside); with `swizzle`, chunk c of row r lands at chunk c ^ (r % 8) of its 128-byte row.
  // NOTE: `swizzle` is a constant at every call; a generic lambda would be host code to NVRTC.
  auto load_stage = [&](u8* sa, int k0, bool swizzle) {
    u8* sb = sa + kBlockM * kLd;
#pragma unroll
    for (int i = 0; i < ((kBlockM + kBlockN) * 8 + kThreads - 1) / kThreads; ++i) {
      const int c = tid + i * kThreads;
      if (((kBlockM + kBlockN) * 8) % kThreads == 0 || c < (kBlockM + kBlockN) * 8) {
        const bool is_a = c < kBlockM * 8;
        const int row = (is_a ? c : c - kBlockM * 8) / 8, ch = c % 8;
        const int grow = (is_a ? bm0 : bn0) + row;
        const bool valid = grow < (is_a ? g.m : g.n) && k0 + ch * 16 < k_end;
        const u8* src = is_a ? a : b;
        const u8* gp = valid ? src + (static_cast<Index>(grow) * g.k + (k0 + ch * 16)) : src;
        copy_async<16>((is_a ? sa : sb) + row * kLd + ((swizzle ? (ch ^ (row & 7)) : ch) << 4), gp, valid);
      }
    }
  };

#if TT_HAS_WGMMA
  if constexpr (kMath == 2) {
    // Stage bases 1024-byte aligned (the host adds 1 KiB of slack); (block_m + block_n) * 128 keeps them so.
    u8* const base = reinterpret_cast<u8*>((reinterpret_cast<u64>(tt_dynamic_smem) + 1023) & ~static_cast<u64>(1023));
    const int wg = tid / 128, warp = (tid % 128) / 32, lane = tid % 32;
    const int row0 = bm0 + wg * 64 + warp * 16 + lane / 4;
    float acc[kBlockN / 2], tmp[kBlockN / 2];
#pragma unroll
    for (int i = 0; i < kBlockN / 2; ++i) acc[i] = 0.f;
    // Loads run kStages - 1 tiles ahead: every MMA of tile kt - 1 was waited for before the barrier of
    // step kt, so the stage it read is free.
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < k_tiles) load_stage(base + s * S::kStageBytes, k_begin + s * kBlockK, true);
      copy_commit();
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
      copy_wait<kStages - 2>();
      fence_proxy_async();  // cp.async wrote through the generic proxy; wgmma reads through the async one
      sync_block();
      const int next = kt + kStages - 1;
      if (next < k_tiles) load_stage(base + (next % kStages) * S::kStageBytes, k_begin + next * kBlockK, true);
      copy_commit();
      const u8* sa = base + (kt % kStages) * S::kStageBytes;
      const u8* sb = sa + kBlockM * 128;
      fence_operands(tmp);
      wgmma_fence();
      // k32 step kk: +32 bytes (2 descriptor units) along the 128-byte swizzled row.
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const u64 da = wgmma_desc(sa + wg * 64 * 128) + 2 * kk;
        const u64 db = wgmma_desc(sb) + 2 * kk;
        wgmma_fp8<kBlockN>(tmp, da, db, kk);
      }
      wgmma_commit();
      wgmma_wait<0>();
      fence_operands(tmp);
      // Promotion: fragment element j*4 + e is row row0 + (e / 2) * 8, column bn0 + j*8 + (lane % 4)*2 + e % 2.
      const int kb = (k_begin + kt * kBlockK) >> 7;
      const float sa0 = fp8_row_scale<Index>(p, row0, kb), sa1 = fp8_row_scale<Index>(p, row0 + 8, kb);
#pragma unroll
      for (int j = 0; j < kBlockN / 8; ++j) {
        const float sbj = fp8_col_scale(p, bn0 + j * 8, kb);
        acc[j * 4 + 0] += tmp[j * 4 + 0] * (sa0 * sbj);
        acc[j * 4 + 1] += tmp[j * 4 + 1] * (sa0 * sbj);
        acc[j * 4 + 2] += tmp[j * 4 + 2] * (sa1 * sbj);
        acc[j * 4 + 3] += tmp[j * 4 + 3] * (sa1 * sbj);
      }
    }
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j) {
      const int col = bn0 + j * 8 + (lane % 4) * 2;
      store_pair<Index>(g, partial, row0, col, acc[j * 4 + 0], acc[j * 4 + 1]);
      store_pair<Index>(g, partial, row0 + 8, col, acc[j * 4 + 2], acc[j * 4 + 3]);
    }
  } else
#endif
  {
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < k_tiles) load_stage(smem + s * S::kStageBytes, k_begin + s * kBlockK, false);
      copy_commit();
    }
    // Step kt of the pipeline: waits for tile kt, refills the stage tile kt - 1 used (every thread is past
    // it after the barrier) kStages - 1 tiles ahead, and returns tile kt's stage.
    auto next_tile = [&](int kt) -> const u8* {
      copy_wait<kStages - 2>();
      sync_block();
      const int next = kt + kStages - 1;
      if (next < k_tiles) load_stage(smem + (next % kStages) * S::kStageBytes, k_begin + next * kBlockK, false);
      copy_commit();
      return smem + (kt % kStages) * S::kStageBytes;
    };
#if TT_HAS_MMA_FP8
    if constexpr (kMath == 1) {
      constexpr int kMmaM = kWarpM / 16, kMmaN = kWarpN / 8;
      const int warp = tid / 32, lane = tid % 32;
      const int warp_m0 = (warp / S::kWarpsN) * kWarpM;
      const int warp_n0 = (warp % S::kWarpsN) * kWarpN;
      float acc[kMmaM][kMmaN][4];
#pragma unroll
      for (int i = 0; i < kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < kMmaN; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;
      for (int kt = 0; kt < k_tiles; ++kt) {
        const u8* sa = next_tile(kt);
        const u8* sb = sa + kBlockM * kLd;
        float tmp[kMmaM][kMmaN][4];
#pragma unroll
        for (int i = 0; i < kMmaM; ++i)
#pragma unroll
          for (int j = 0; j < kMmaN; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) tmp[i][j][e] = 0.f;
        // An m16n8k32 fp8 fragment is, byte for byte, the m16n8k16 bf16 one: ldmatrix's b16 addressing serves.
#pragma unroll
        for (int kk = 0; kk < kBlockK; kk += 32) {
          u32 af[kMmaM][4];
          u32 bf[kMmaN][2];
#pragma unroll
          for (int i = 0; i < kMmaM; ++i)
            ldmatrix_x4(af[i], reinterpret_cast<const u16*>(sa + (warp_m0 + i * 16 + (lane % 16)) * kLd + kk + (lane / 16) * 16));
#pragma unroll
          for (int j = 0; j < kMmaN / 2; ++j) {
            u32 r[4];
            ldmatrix_x4(r, reinterpret_cast<const u16*>(sb + (warp_n0 + j * 16 + (lane % 8) + (lane / 16) * 8) * kLd + kk +
                                                        ((lane / 8) % 2) * 16));
            bf[2 * j][0] = r[0];
            bf[2 * j][1] = r[1];
            bf[2 * j + 1][0] = r[2];
            bf[2 * j + 1][1] = r[3];
          }
#pragma unroll
          for (int i = 0; i < kMmaM; ++i)
#pragma unroll
            for (int j = 0; j < kMmaN; ++j) mma_fp8_16832(tmp[i][j], af[i], bf[j][0], bf[j][1]);
        }
        const int kb = (k_begin + kt * kBlockK) >> 7;
#pragma unroll
        for (int i = 0; i < kMmaM; ++i) {
          const int row = bm0 + warp_m0 + i * 16 + lane / 4;
          const float sa0 = fp8_row_scale<Index>(p, row, kb), sa1 = fp8_row_scale<Index>(p, row + 8, kb);
#pragma unroll
          for (int j = 0; j < kMmaN; ++j) {
            const float sbj = fp8_col_scale(p, bn0 + warp_n0 + j * 8, kb);
            acc[i][j][0] += tmp[i][j][0] * (sa0 * sbj);
            acc[i][j][1] += tmp[i][j][1] * (sa0 * sbj);
            acc[i][j][2] += tmp[i][j][2] * (sa1 * sbj);
            acc[i][j][3] += tmp[i][j][3] * (sa1 * sbj);
          }
        }
      }
      copy_wait<0>();
#pragma unroll
      for (int i = 0; i < kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < kMmaN; ++j) {
          const int row = bm0 + warp_m0 + i * 16 + lane / 4;
          const int col = bn0 + warp_n0 + j * 8 + (lane % 4) * 2;
          store_pair<Index>(g, partial, row, col, acc[i][j][0], acc[i][j][1]);
          store_pair<Index>(g, partial, row + 8, col, acc[i][j][2], acc[i][j][3]);
        }
    } else
#endif
    {
      // Portable path (AMD targets, kMath 0 everywhere): fp32 FMA on fp8 decoded in software, 4 bytes a load.
      constexpr int kTM = S::kTM, kTN = kBlockN / S::kThreadsN;
      const int tx = tid % S::kThreadsN, ty = tid / S::kThreadsN;
      const bool fnuz = p.fnuz != 0;
      float acc[kTM][kTN];
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] = 0.f;
      for (int kt = 0; kt < k_tiles; ++kt) {
        const u8* sa = next_tile(kt);
        const u8* sb = sa + kBlockM * kLd;
        float tmp[kTM][kTN];
#pragma unroll
        for (int i = 0; i < kTM; ++i)
#pragma unroll
          for (int j = 0; j < kTN; ++j) tmp[i][j] = 0.f;
        for (int kk = 0; kk < kBlockK; kk += 4) {
          u32 av[kTM], bv[kTN];
#pragma unroll
          for (int i = 0; i < kTM; ++i) av[i] = *reinterpret_cast<const u32*>(sa + (ty + i * S::kThreadsM) * kLd + kk);
#pragma unroll
          for (int j = 0; j < kTN; ++j) bv[j] = *reinterpret_cast<const u32*>(sb + (tx + j * S::kThreadsN) * kLd + kk);
          float af[kTM][4], bf[kTN][4];
#pragma unroll
          for (int i = 0; i < kTM; ++i) fp8x4_to_f32(av[i], fnuz, af[i]);
#pragma unroll
          for (int j = 0; j < kTN; ++j) fp8x4_to_f32(bv[j], fnuz, bf[j]);
#pragma unroll
          for (int e = 0; e < 4; ++e)
#pragma unroll
            for (int i = 0; i < kTM; ++i)
#pragma unroll
              for (int j = 0; j < kTN; ++j) tmp[i][j] += af[i][e] * bf[j][e];
        }
        const int kb = (k_begin + kt * kBlockK) >> 7;
#pragma unroll
        for (int i = 0; i < kTM; ++i) {
          const float sa_i = fp8_row_scale<Index>(p, bm0 + ty + i * S::kThreadsM, kb);
#pragma unroll
          for (int j = 0; j < kTN; ++j) acc[i][j] += tmp[i][j] * (sa_i * fp8_col_scale(p, bn0 + tx + j * S::kThreadsN, kb));
        }
      }
      copy_wait<0>();
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) {
          const int row = bm0 + ty + i * S::kThreadsM, col = bn0 + tx + j * S::kThreadsN;
          if (row < g.m && col < g.n) {
            const Index off = static_cast<Index>(row) * static_cast<Index>(g.n) + static_cast<Index>(col);
            if (partial) partial[off] = acc[i][j];
            else g.c[off] = f32_to_bf16(acc[i][j]);
          }
        }
    }
  }
  if (g.splits > 1) splitk_finish<kBlockM, kBlockN, kThreads, Index>(g, static_cast<int>(block_y()) * tiles_n + static_cast<int>(block_x()), bm0, bn0, tid);
}

/// Arguments of the TMA kernel: the common ones plus a descriptor per operand (boxes of 128 bytes of K x
/// the tile's rows, 128-byte swizzled).
struct Fp8GemmTmaArgs {
  Fp8GemmArgs p;
  TensorMap a, b;
};


/// Registers of a consumer thread of gemm_fp8_blockscale_tma: kNeed, its fp32 fragments (accumulator and
/// promotion fragment, kWarpN / 2 each) plus ~32 of addresses and scales; kRaised, what it may raise its
/// allowance to (setmaxnreg) with the producer warpgroup lowered to 40, or 0 when the launch's even share
/// suffices. NOTE: the host's constraint (kernels/gemm_fp8) counts the same.
template <int kConsumers, int kWarpN>
struct Fp8TmaRegs {
  static constexpr int kNeed = kWarpN + 32;
  static constexpr int kRaised =
      kNeed <= 65536 / ((kConsumers + 1) * 128) || kConsumers < 2 ? 0 : ((65536 - 128 * 40) / (kConsumers * 128)) / 8 * 8;
};

/// sm_90a, warp-specialized (DeepGEMM's recipe): one producer thread copies each K block of 128 (one scale
/// block, one 128-byte swizzled row per operand row) by TMA into kStages stages, counted on the stage's
/// mbarrier; one consumer warpgroup per 64 rows x kWarpN columns multiplies a stage into a temporary fp32
/// fragment (four m64nNk32 MMAs), releases the stage, and promotes the fragment into its accumulator with the
/// row's and the column block's scales, loaded before the wait. The consumer warpgroups of a CTA interleave:
/// one promotes while another's MMAs run. Where the fragments need more registers than the launch's even
/// share (warp_n 192 with two consumers), the producer warpgroup gives its own up (setmaxnreg). (Overlapping
/// a warpgroup's own promotion with its next MMAs, with two fragments, makes ptxas serialize the wgmmas and
/// spill: C7514/C7517.) Split-K as for gemm_bf16_tn (splits aligned to 128 of K).
/// kCtas > 0: persistent, a grid of kCtas CTAs (one per SM) walking the output tiles in the grid's order
/// (tile t, t + kCtas, ...; N fastest). The stages and their phases run on across tiles, so the producer
/// loads the next tile's first K blocks while the consumers store the last one: a tile's load latency and
/// launch cost hide behind its predecessor (short K: a few K blocks per tile). The sm_90a path strides by the
/// grid it was given (one row of at most kCtas CTAs); the portable one by kCtas. Split-K 1 only.
// NOTE: no defaults: ROCm 5.2 hipRTC matches a name expression against the full argument list.
template <int kBlockM, int kBlockN, int kWarpN, int kStages, int kCtas, typename Index>
__global__ void __launch_bounds__((kBlockM / 64) * (kBlockN / kWarpN) * 128 + 128)
gemm_fp8_blockscale_tma(const TT_GRID_CONSTANT Fp8GemmTmaArgs args) {
  constexpr int kConsumersN = kBlockN / kWarpN;
  constexpr int kConsumers = (kBlockM / 64) * kConsumersN;
  constexpr int kThreads = kConsumers * 128 + 128;
  constexpr int kBlockK = 128;
  using Regs = Fp8TmaRegs<kConsumers, kWarpN>;
  // NOTE: a warpgroup's columns [n0, n0 + kWarpN) start at a multiple of kWarpN: with kWarpN <= 128, or 192
  // (n0 % 128 is 0 or 64), they span at most two 128-column scale blocks.
  static_assert(kBlockM % 64 == 0 && kBlockM <= 256 && kBlockN <= 256 && kBlockN % kWarpN == 0 && kWarpN % 8 == 0 &&
                    (kWarpN <= 128 || kWarpN == 192) && kStages >= 2,
                "fp8 tma: a warpgroup per 64 x warp_n (at most two column scale blocks), one box per operand");
  static_assert(Regs::kRaised == 0 || Regs::kRaised >= Regs::kNeed, "fp8 tma: the fragments do not fit a consumer's registers");
  const Fp8GemmArgs& p = args.p;
  const GemmArgs& g = p.g;
  const int tid = static_cast<int>(thread_x());
  const int tiles_n = (g.n + kBlockN - 1) / kBlockN;
  // The tiles this CTA computes: its own (kCtas 0), or every kCtas-th of the tiles in grid order.
  const int tile_first = kCtas > 0 ? static_cast<int>(block_x()) : 0;
  const int tile_end = kCtas > 0 ? tiles_n * ((g.m + kBlockM - 1) / kBlockM) : 1;
  constexpr int kTileStep = kCtas > 0 ? kCtas : 1;
  auto tile_n0 = [&](int t) { return (kCtas > 0 ? t % tiles_n : static_cast<int>(block_x())) * kBlockN; };
  auto tile_m0 = [&](int t) { return (kCtas > 0 ? t / tiles_n : static_cast<int>(block_y())) * kBlockM; };
  const int split = static_cast<int>(block_z());
  const int k_begin = split * g.k_per_split;  // a multiple of 128
  const int k_end = imin(g.k, k_begin + g.k_per_split);
  const int k_tiles = k_end > k_begin ? (k_end - k_begin + kBlockK - 1) / kBlockK : 0;
  float* partial = g.splits > 1 ? g.workspace + static_cast<Index>(split) * static_cast<Index>(g.m) * static_cast<Index>(g.n) : nullptr;
#if TT_HAS_WGMMA
  extern __shared__ u32x4 tt_dynamic_smem[];
  constexpr int kStageBytes = (kBlockM + kBlockN) * kBlockK;
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
  const int tile_step = kCtas > 0 ? static_cast<int>(gridDim.x) : 1;
  if (wg == kConsumers) {
    if constexpr (Regs::kRaised > 0) setmaxnreg_dec<40>();
    if (tid == kConsumers * 128) {
      int use = 0;  // stage uses so far, across tiles: stage use % kStages, phase use / kStages
      for (int t = tile_first; t < tile_end; t += tile_step) {
        const int bm0 = tile_m0(t), bn0 = tile_n0(t);
        for (int i = 0; i < k_tiles; ++i, ++use) {
          const int s = use % kStages;
          if (use >= kStages) mbar_wait(&empty_bar[s], ((use / kStages) - 1) & 1);
          mbar_arrive_expect_tx(&full_bar[s], kStageBytes);
          u8* sa = base + s * kStageBytes;
          const int k = k_begin + i * kBlockK;
          tma_load_2d(sa, &args.a, k, bm0, &full_bar[s]);
          tma_load_2d(sa + kBlockM * kBlockK, &args.b, k, bn0, &full_bar[s]);
        }
      }
    }
  } else {
    if constexpr (Regs::kRaised > 0) setmaxnreg_inc<Regs::kRaised>();
    const int warp = (tid % 128) / 32, lane = tid % 32;
    const int kb0 = k_begin / kBlockK;
    int use = 0;  // as the producer's
    for (int t = tile_first; t < tile_end; t += tile_step) {
      const int row0 = tile_m0(t) + wg_m * 64 + warp * 16 + lane / 4;
      const int n0 = tile_n0(t) + wg_n * kWarpN;
      // The warpgroup's columns span at most two 128-column scale blocks: lo, and hi from column col_hi on.
      const int nb_lo = imin(n0, g.n - 1) >> 7, nb_hi = imin(n0 + kWarpN - 1, g.n - 1) >> 7;
      const int col_hi = nb_hi << 7;
      float acc[kWarpN / 2], tmp[kWarpN / 2];
#pragma unroll
      for (int r = 0; r < kWarpN / 2; ++r) acc[r] = 0.f;
      for (int i = 0; i < k_tiles; ++i, ++use) {
        const int s = use % kStages, kb = kb0 + i;
        // The scales first: their loads overlap the wait for the stage.
        const float sa0 = fp8_row_scale<Index>(p, row0, kb), sa1 = fp8_row_scale<Index>(p, row0 + 8, kb);
        const float sb_lo = p.b_scale[nb_lo * p.scale_k + kb], sb_hi = p.b_scale[nb_hi * p.scale_k + kb];
        mbar_wait(&full_bar[s], (use / kStages) & 1);
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
        // Fragment element j*4 + e is row row0 + (e / 2) * 8, column n0 + j*8 + (lane % 4)*2 + e % 2.
#pragma unroll
        for (int j = 0; j < kWarpN / 8; ++j) {
          const float sbj = n0 + j * 8 >= col_hi ? sb_hi : sb_lo;
          acc[j * 4 + 0] += tmp[j * 4 + 0] * (sa0 * sbj);
          acc[j * 4 + 1] += tmp[j * 4 + 1] * (sa0 * sbj);
          acc[j * 4 + 2] += tmp[j * 4 + 2] * (sa1 * sbj);
          acc[j * 4 + 3] += tmp[j * 4 + 3] * (sa1 * sbj);
        }
      }
#pragma unroll
      for (int j = 0; j < kWarpN / 8; ++j) {
        const int col = n0 + j * 8 + (lane % 4) * 2;
        store_pair<Index>(g, partial, row0, col, acc[j * 4 + 0], acc[j * 4 + 1]);
        store_pair<Index>(g, partial, row0 + 8, col, acc[j * 4 + 2], acc[j * 4 + 3]);
      }
    }
  }
#else
  // TMA and wgmma exist only on sm_90a (the host never selects this kernel elsewhere); a portable body
  // compiles it everywhere: each thread computes its share of the tile directly.
  const u8* const a = reinterpret_cast<const u8*>(g.a);
  const u8* const b = reinterpret_cast<const u8*>(g.b);
  for (int t = tile_first; t < tile_end; t += kTileStep) {
    for (int e = tid; e < kBlockM * kBlockN; e += kThreads) {
      const int row = tile_m0(t) + e / kBlockN, col = tile_n0(t) + e % kBlockN;
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
  }
#endif
  if (kCtas == 0 && g.splits > 1)
    splitk_finish<kBlockM, kBlockN, kThreads, Index>(g, static_cast<int>(block_y()) * tiles_n + static_cast<int>(block_x()),
                                                     tile_m0(0), tile_n0(0), tid);
}

/// Skinny FP8 GEMM for M <= kMaxM (decode batches), bound by reading B once: each warp owns kWarpN columns,
/// a lane streams 16 bytes of each (16 of K, inside one scale block) and of A's few rows, kUnroll steps of
/// 512 in flight, applies the two scales to its 16-element partial dot products, and the warp reduces with
/// shuffles.
template <int kMaxM, int kBlockN, int kWarpN, int kUnroll, typename Index>
__global__ void __launch_bounds__((kBlockN / kWarpN) * 32) gemm_fp8_blockscale_skinny(Fp8GemmArgs p) {
  constexpr int kThreads = (kBlockN / kWarpN) * 32;
  static_assert(kBlockN % kWarpN == 0 && kMaxM * kWarpN <= 128, "skinny tile");
  const GemmArgs& g = p.g;
  const u8* const a = reinterpret_cast<const u8*>(g.a);
  const u8* const b = reinterpret_cast<const u8*>(g.b);
  const bool fnuz = p.fnuz != 0;
  const int tid = static_cast<int>(thread_x()), warp = tid / 32, lane = tid % 32;
  const int bn0 = static_cast<int>(block_x()) * kBlockN;
  const int n0 = bn0 + warp * kWarpN;
  const int split = static_cast<int>(block_z());
  const int k_begin = split * g.k_per_split;
  const int k_end = imin(g.k, k_begin + g.k_per_split);
  float acc[kMaxM][kWarpN];
#pragma unroll
  for (int m = 0; m < kMaxM; ++m)
#pragma unroll
    for (int j = 0; j < kWarpN; ++j) acc[m][j] = 0.f;
  for (int k0 = k_begin + lane * 16; k0 < k_end; k0 += 512 * kUnroll) {
    u32x4 bv[kUnroll][kWarpN];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int j = 0; j < kWarpN; ++j) {
        const int k = k0 + u * 512;  // K % 16 == 0: a lane's 16 bytes are all inside or all outside
        const bool ok = k < k_end && n0 + j < g.n;
        bv[u][j] = ok ? load_stream16(b + (static_cast<Index>(n0 + j) * g.k + k)) : u32x4{0, 0, 0, 0};
      }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int k = k0 + u * 512;
      if (k >= k_end) continue;
      const int kb = k >> 7;
      float bf[kWarpN][16];
      float sb[kWarpN];
#pragma unroll
      for (int j = 0; j < kWarpN; ++j) {
        const u32 w[4] = {bv[u][j].x, bv[u][j].y, bv[u][j].z, bv[u][j].w};
#pragma unroll
        for (int q = 0; q < 4; ++q) fp8x4_to_f32(w[q], fnuz, bf[j] + 4 * q);
        sb[j] = fp8_col_scale(p, n0 + j, kb);
      }
#pragma unroll
      for (int m = 0; m < kMaxM; ++m) {
        if (m >= g.m) continue;
        const u32x4 av = *reinterpret_cast<const u32x4*>(a + (static_cast<Index>(m) * g.k + k));
        const u32 w[4] = {av.x, av.y, av.z, av.w};
        float af[16];
#pragma unroll
        for (int q = 0; q < 4; ++q) fp8x4_to_f32(w[q], fnuz, af + 4 * q);
        const float sa = p.a_scale[static_cast<Index>(m) * p.scale_k + kb];
#pragma unroll
        for (int j = 0; j < kWarpN; ++j) {
          float dot = 0.f;
#pragma unroll
          for (int e = 0; e < 16; ++e) dot += af[e] * bf[j][e];
          acc[m][j] += dot * (sa * sb[j]);
        }
      }
    }
  }
  // Butterfly: every lane ends with the warp's sums; lane e % 32 stores element e.
#pragma unroll
  for (int m = 0; m < kMaxM; ++m)
#pragma unroll
    for (int j = 0; j < kWarpN; ++j)
#pragma unroll
      for (int off = 16; off > 0; off /= 2) acc[m][j] += shfl_xor(acc[m][j], off);
  float* partial = g.splits > 1 ? g.workspace + static_cast<Index>(split) * static_cast<Index>(g.m) * static_cast<Index>(g.n) : nullptr;
#pragma unroll
  for (int m = 0; m < kMaxM; ++m)
#pragma unroll
    for (int j = 0; j < kWarpN; ++j) {
      const int col = n0 + j;
      if ((m * kWarpN + j) % 32 != lane || m >= g.m || col >= g.n) continue;
      const Index off = static_cast<Index>(m) * static_cast<Index>(g.n) + static_cast<Index>(col);
      if (partial) partial[off] = acc[m][j];
      else g.c[off] = f32_to_bf16(acc[m][j]);
    }
  if (g.splits > 1) splitk_finish<kMaxM, kBlockN, kThreads, Index>(g, static_cast<int>(block_x()), 0, bn0, tid);
}

}  // namespace tt
