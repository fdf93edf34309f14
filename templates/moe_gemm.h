// Fused MoE, the two grouped GEMM stages over the routing-sorted rows (see MoeStageArgs). One template for
// both stages, every tile and both dtypes:
//   kStage 1: gate and up tiles of w1 side by side, out = SiLU(A Wg^T) * (A Wu^T), bf16, addressed by slot;
//   kStage 2: A (stage 1's output) w2^T times the slot's top-k weight, fp32 per split, addressed by slot.
//   kQuant 0: bf16 A and W; 1: e4m3fn A and W with 1x128 / 128x128 fp32 scales; 2: e4m3fnuz. In stage 2, FP8's
//   A is stage 1's output quantized per 1x128 by moe_quant_a (as AITER's 2-stage FP8 MoE quantizes it).
// FP8 operands are decoded to bf16 when the MMA fragments are built (exact: e4m3 fits bf16), multiplied
// on the bf16 tensor cores (mma.sync m16n8k16) per 128-wide K tile, and each tile's fp32 partial is
// promoted with its row and block scales, as a block-scaled FP8 GEMM does. NOTE: at the M this family
// serves the stages are weight-read bound; halving MMA throughput against e4m3 MMA costs nothing there,
// while FP8 storage halves the bytes.
// kMath 1: mma.sync (sm_80+, TT_HAS_MMA_SM80); kMath 0, and every other target: portable fp32 FMA.
// moe_stage_wgmma (sm_90a, e4m3fn): warp-specialized, the weights by TMA and the MMA on wgmma, see below.
#pragma once
#include "moe_common.h"
#include "moe_wgmma.h"
#include "tt_async.h"

namespace tt {

#define TT_MOE_THREADS(kBlockM, kWarpM, kBlockN, kWarpN) (((kBlockM) / (kWarpM)) * ((kBlockN) / (kWarpN)) * 32)

#if TT_HAS_MMA_SM80
__device__ __forceinline__ void moe_mma_16816(float (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
#endif

#if TT_HAS_MMA_SM80
/// Two e4m3 bytes to a bf16 pair in five instructions: sign and magnitude moved into bf16 position (a
/// value 2^(bias - 127) too small; e4m3 subnormals land on bf16 subnormals), then one exact bf16x2
/// multiply by 2^(127 - bias). NOTE: bf16 FMA keeps subnormals, so every code decodes exactly.
template <bool kFnuz>
__device__ __forceinline__ u32 e4m3x2_to_bf16x2_fast(u32 two) {
  const u32 x = __byte_perm(two, 0u, 0x4140);  // byte 0 -> bits 0..7, byte 1 -> bits 16..23
  const u32 r = ((x & 0x007f007fu) << 4) | ((x & 0x00800080u) << 8);
  const u32 scale = kFnuz ? 0x7b007b00u : 0x7b807b80u;  // 2^119 or 2^120 in both halves
  u32 d;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;\n" : "=r"(d) : "r"(r), "r"(scale), "r"(0x80008000u));
  return d;
}

/// Four adjacent K elements [k, k + 4) of a shared-memory row as two bf16 pairs, in one load.
template <bool kFp8, bool kFnuz>
__device__ __forceinline__ void moe_quad(const u8* row, int k, u32& lo, u32& hi) {
  if constexpr (kFp8) {
    const u32 w = *reinterpret_cast<const u32*>(row + k);
    lo = e4m3x2_to_bf16x2_fast<kFnuz>(w & 0xffffu);
    hi = e4m3x2_to_bf16x2_fast<kFnuz>(w >> 16);
  } else {
    const u32x2 w = *reinterpret_cast<const u32x2*>(row + 2 * k);
    lo = w.x;
    hi = w.y;
  }
}
#endif

/// One element of a shared-memory row as float.
template <bool kFp8, bool kFnuz>
__device__ __forceinline__ float moe_elem(const u8* row, int k) {
  if constexpr (kFp8) return e4m3_to_f32<kFnuz>(row[k]);
  else return bf16_to_f32(reinterpret_cast<const u16*>(row)[k]);
}

template <int kStage, int kQuant, int kBlockM, int kWarpM, int kBlockN, int kWarpN, int kBlockK, int kStages, int kMath,
          typename Index>
__global__ void __launch_bounds__(TT_MOE_THREADS(kBlockM, kWarpM, kBlockN, kWarpN)) moe_stage(MoeStageArgs p) {
  constexpr bool kDual = kStage == 1;
  constexpr bool kFp8W = kQuant != 0;
  constexpr bool kFnuz = kQuant == 2;
  constexpr bool kFp8A = kFp8W;
  constexpr int kEA = kFp8A ? 1 : 2, kEB = kFp8W ? 1 : 2;  // bytes per element
  constexpr int kHalves = kDual ? 2 : 1;
  constexpr int kLdA = kBlockK * kEA + 16, kLdB = kBlockK * kEB + 16;  // NOTE: +16 B per row: no bank conflicts
  constexpr int kTileA = kBlockM * kLdA;
  constexpr int kStageBytes = kTileA + kHalves * kBlockN * kLdB;
  constexpr int kWarpsN = kBlockN / kWarpN;
  constexpr int kThreads = TT_MOE_THREADS(kBlockM, kWarpM, kBlockN, kWarpN);
  constexpr int kChunksA = kBlockM * kBlockK * kEA / 16, kChunksB = kBlockN * kBlockK * kEB / 16;
  static_assert(kStage == 1 || kStage == 2, "stage 1 or 2");
  static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0 && kWarpM % 16 == 0 && kWarpN % 8 == 0, "warp tile");
  static_assert(kBlockK % 32 == 0 && (!kFp8W || kBlockK == 128), "K tile (FP8: one 128-wide scale block)");
  static_assert(kStages >= 2, "at least double buffering");

  extern __shared__ u32x4 tt_dynamic_smem[];
  u8* const smem = reinterpret_cast<u8*>(tt_dynamic_smem);
  __shared__ int s_a_row[kBlockM];  // A row of each tile row (token or slot), -1 for padding
  __shared__ int s_slot[kBlockM];   // slot id of each tile row, -1 for padding

  const int tid = static_cast<int>(thread_x());
  const int block = static_cast<int>(block_y());
  const int bm0 = block * kBlockM;
  if (bm0 >= *p.num_padded) return;  // the grid covers the worst-case padding; this block is unused
  const int expert = p.expert_ids[block];
  const int n0 = static_cast<int>(block_x()) * kBlockN;
  const int split = static_cast<int>(block_z());
  const int k_begin = split * p.k_per_split;
  const int k_end = imin(p.k, k_begin + p.k_per_split);
  const int k_tiles = k_end > k_begin ? (k_end - k_begin + kBlockK - 1) / kBlockK : 0;
  const int w_rows = kHalves * p.n;
  for (int r = tid; r < kBlockM; r += kThreads) {
    const int slot = p.sorted_ids[bm0 + r];
    const bool valid = slot < p.rows;
    s_slot[r] = valid ? slot : -1;
    s_a_row[r] = valid ? (kStage == 1 ? slot / p.topk : slot) : -1;
  }
  sync_block();

  const u8* const a_base = static_cast<const u8*>(p.a);
  const u8* const w_base = static_cast<const u8*>(p.w) + static_cast<Index>(expert) * w_rows * static_cast<Index>(p.k) * kEB;
  auto load_stage = [&](int stage, int k0) {
    u8* sa = smem + stage * kStageBytes;
    u8* sb = sa + kTileA;
    constexpr int kRowChunksA = kBlockK * kEA / 16, kRowChunksB = kBlockK * kEB / 16;
#pragma unroll
    for (int i = 0; i < (kChunksA + kThreads - 1) / kThreads; ++i) {
      const int c = tid + i * kThreads;
      if (kChunksA % kThreads == 0 || c < kChunksA) {
        const int row = c / kRowChunksA, ch = c % kRowChunksA;
        const int col = k0 + ch * (16 / kEA);
        const int ar = s_a_row[row];
        const bool valid = ar >= 0 && col < k_end;
        const u8* g = valid ? a_base + (static_cast<Index>(ar) * p.k + col) * kEA : a_base;
        copy_async<16>(sa + row * kLdA + ch * 16, g, valid);
      }
    }
#pragma unroll
    for (int h = 0; h < kHalves; ++h)
#pragma unroll
      for (int i = 0; i < (kChunksB + kThreads - 1) / kThreads; ++i) {
        const int c = tid + i * kThreads;
        if (kChunksB % kThreads == 0 || c < kChunksB) {
          const int row = c / kRowChunksB, ch = c % kRowChunksB;
          const int col = k0 + ch * (16 / kEB);
          const bool valid = n0 + row < p.n && col < k_end;
          const u8* g = valid ? w_base + (static_cast<Index>(h * p.n + n0 + row) * p.k + col) * kEB : w_base;
          copy_async<16>(sb + (h * kBlockN + row) * kLdB + ch * 16, g, valid);
        }
      }
  };

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load_stage(s, k_begin + s * kBlockK);
    copy_commit();
  }

  // FP8 scales of one K tile: the block scale of each half's 128 rows of W (the CTA's kBlockN rows lie in
  // one block: n % 128 == 0, kBlockN divides 128), and the activation scale of a tile row.
  const int kb_count = p.k / 128;
  auto w_scale = [&](int h, int k0) -> float {
    if constexpr (kFp8W)
      return p.w_scale[(static_cast<Index>(expert) * (w_rows / 128) + (h * p.n + n0) / 128) * kb_count + k0 / 128];
    else
      return 1.f;
  };
  auto a_scale = [&](int r, int k0) -> float {
    if constexpr (kFp8A) {
      const int ar = s_a_row[r];
      return ar >= 0 ? p.a_scale[static_cast<Index>(ar) * kb_count + k0 / 128] : 0.f;
    } else {
      return 1.f;
    }
  };

  // Epilogue of one output element pair (c, c + 1) of tile row r: (gate, up) values in stage 1; stage 2
  // stores the first of each pair (u0, u1 unused).
  auto store_pair = [&](int r, int c, float g0, float u0, float g1, float u1) {
    const int slot = s_slot[r];
    const int col = n0 + c;
    if (slot < 0 || col >= p.n) return;
    const bool both = col + 1 < p.n;
    if constexpr (kStage == 1) {
      u16* o = static_cast<u16*>(p.out) + static_cast<Index>(slot) * p.n + col;
      const float v0 = silu(g0) * u0, v1 = silu(g1) * u1;
      if (both) *reinterpret_cast<u32*>(o) = pack_bf16x2(v0, v1);  // n % 8 == 0 (host constraint)
      else o[0] = f32_to_bf16(v0);
    } else {
      const float w = p.topk_weights[slot];
      float* o = static_cast<float*>(p.out) + (static_cast<Index>(split) * p.rows + slot) * p.n + col;
      if (both) *reinterpret_cast<u32x2*>(o) = u32x2{f32_bits(w * g0), f32_bits(w * g1)};
      else o[0] = w * g0;
    }
  };

#if TT_HAS_MMA_SM80
  if constexpr (kMath == 1) {
    constexpr int kMmaM = kWarpM / 16, kMmaN = kWarpN / 8;
    const int warp = tid / 32, lane = tid % 32, gq = lane / 4, tq = lane % 4;
    const int wm0 = (warp / kWarpsN) * kWarpM, wn0 = (warp % kWarpsN) * kWarpN;
    float acc[kHalves][kMmaM][kMmaN][4];
    float part[kFp8W ? kHalves : 1][kFp8W ? kMmaM : 1][kFp8W ? kMmaN : 1][4];
#pragma unroll
    for (int h = 0; h < kHalves; ++h)
#pragma unroll
      for (int i = 0; i < kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < kMmaN; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[h][i][j][e] = 0.f;

    for (int kt = 0; kt < k_tiles; ++kt) {
      copy_wait<kStages - 2>();
      sync_block();
      const int next = kt + kStages - 1;
      if (next < k_tiles) load_stage(next % kStages, k_begin + next * kBlockK);
      copy_commit();
      const u8* sa = smem + (kt % kStages) * kStageBytes;
      const u8* sb = sa + kTileA;
      if constexpr (kFp8W) {
#pragma unroll
        for (int h = 0; h < kHalves; ++h)
#pragma unroll
          for (int i = 0; i < kMmaM; ++i)
#pragma unroll
            for (int j = 0; j < kMmaN; ++j)
#pragma unroll
              for (int e = 0; e < 4; ++e) part[h][i][j][e] = 0.f;
      }
#pragma unroll
      for (int kk = 0; kk < kBlockK; kk += 16) {
        u32 af[kMmaM][4];
#pragma unroll
        for (int i = 0; i < kMmaM; ++i) {
          const u8* r0 = sa + (wm0 + i * 16 + gq) * kLdA;
          const u8* r1 = r0 + 8 * kLdA;
          // NOTE: a dot product does not care which physical K a fragment's k index stands for: lane tq
          // takes K [kk + 4 tq, kk + 4 tq + 4) as its fragment's k (2tq, 2tq+1, 2tq+8, 2tq+9), in A and B
          // alike, so each operand pair comes from one conflict-free load instead of two.
          moe_quad<kFp8A, kFnuz>(r0, kk + 4 * tq, af[i][0], af[i][2]);
          moe_quad<kFp8A, kFnuz>(r1, kk + 4 * tq, af[i][1], af[i][3]);
        }
#pragma unroll
        for (int h = 0; h < kHalves; ++h)
#pragma unroll
          for (int j = 0; j < kMmaN; ++j) {
            const u8* br = sb + (h * kBlockN + wn0 + j * 8 + gq) * kLdB;
            u32 b0, b1;
            moe_quad<kFp8W, kFnuz>(br, kk + 4 * tq, b0, b1);
#pragma unroll
            for (int i = 0; i < kMmaM; ++i) {
              if constexpr (kFp8W) moe_mma_16816(part[h][i][j], af[i][0], af[i][1], af[i][2], af[i][3], b0, b1);
              else moe_mma_16816(acc[h][i][j], af[i][0], af[i][1], af[i][2], af[i][3], b0, b1);
            }
          }
      }
      if constexpr (kFp8W) {
        const int k0 = k_begin + kt * kBlockK;
#pragma unroll
        for (int h = 0; h < kHalves; ++h) {
          const float sw = w_scale(h, k0);
#pragma unroll
          for (int i = 0; i < kMmaM; ++i) {
            const float s0 = sw * a_scale(wm0 + i * 16 + gq, k0), s1 = sw * a_scale(wm0 + i * 16 + gq + 8, k0);
#pragma unroll
            for (int j = 0; j < kMmaN; ++j) {
              acc[h][i][j][0] += part[h][i][j][0] * s0;
              acc[h][i][j][1] += part[h][i][j][1] * s0;
              acc[h][i][j][2] += part[h][i][j][2] * s1;
              acc[h][i][j][3] += part[h][i][j][3] * s1;
            }
          }
        }
      }
    }
    copy_wait<0>();
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int j = 0; j < kMmaN; ++j) {
        const int r = wm0 + i * 16 + gq, c = wn0 + j * 8 + 2 * tq;
        const int hu = kHalves - 1;  // the up half in stage 1; unused in stage 2
        store_pair(r, c, acc[0][i][j][0], acc[hu][i][j][0], acc[0][i][j][1], acc[hu][i][j][1]);
        store_pair(r + 8, c, acc[0][i][j][2], acc[hu][i][j][2], acc[0][i][j][3], acc[hu][i][j][3]);
      }
  } else
#endif
  {
    // Portable path: each thread owns kTM x kTN outputs (of both halves), strided across the tile.
    constexpr int kThreadsN = (kBlockN / 2) < kThreads ? (kBlockN / 2) : kThreads;
    constexpr int kThreadsM = kThreads / kThreadsN;
    constexpr int kTM = kBlockM / kThreadsM > 0 ? kBlockM / kThreadsM : 1;
    constexpr int kTN = kBlockN / kThreadsN;
    static_assert(kThreadsN * kTN == kBlockN, "portable thread layout (N)");
    const int tx = tid % kThreadsN, ty = tid / kThreadsN;
    float acc[kHalves][kTM][kTN];
    float part[kHalves][kTM][kTN];
#pragma unroll
    for (int h = 0; h < kHalves; ++h)
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[h][i][j] = 0.f;
    for (int kt = 0; kt < k_tiles; ++kt) {
      copy_wait<kStages - 2>();
      sync_block();
      const int next = kt + kStages - 1;
      if (next < k_tiles) load_stage(next % kStages, k_begin + next * kBlockK);
      copy_commit();
      const u8* sa = smem + (kt % kStages) * kStageBytes;
      const u8* sb = sa + kTileA;
#pragma unroll
      for (int h = 0; h < kHalves; ++h)
#pragma unroll
        for (int i = 0; i < kTM; ++i)
#pragma unroll
          for (int j = 0; j < kTN; ++j) part[h][i][j] = 0.f;
      {
#pragma unroll 4
        for (int kk = 0; kk < kBlockK; ++kk) {
          float a[kTM], b[kHalves][kTN];
#pragma unroll
          for (int i = 0; i < kTM; ++i) {
            const int r = ty + i * kThreadsM;
            a[i] = r < kBlockM ? moe_elem<kFp8A, kFnuz>(sa + r * kLdA, kk) : 0.f;
          }
#pragma unroll
          for (int h = 0; h < kHalves; ++h)
#pragma unroll
            for (int j = 0; j < kTN; ++j) b[h][j] = moe_elem<kFp8W, kFnuz>(sb + (h * kBlockN + tx + j * kThreadsN) * kLdB, kk);
#pragma unroll
          for (int h = 0; h < kHalves; ++h)
#pragma unroll
            for (int i = 0; i < kTM; ++i)
#pragma unroll
              for (int j = 0; j < kTN; ++j) part[h][i][j] += a[i] * b[h][j];
        }
      }
      const int k0 = k_begin + kt * kBlockK;
#pragma unroll
      for (int h = 0; h < kHalves; ++h) {
        const float sw = w_scale(h, k0);
#pragma unroll
        for (int i = 0; i < kTM; ++i) {
          const int r = ty + i * kThreadsM;
          const float s = r < kBlockM ? sw * a_scale(r, k0) : 0.f;
#pragma unroll
          for (int j = 0; j < kTN; ++j) acc[h][i][j] += kFp8W ? part[h][i][j] * s : part[h][i][j];
        }
      }
    }
    copy_wait<0>();
#pragma unroll
    for (int i = 0; i < kTM; ++i)
#pragma unroll
      for (int j = 0; j < kTN; ++j) {
        const int r = ty + i * kThreadsM, c = tx + j * kThreadsN;
        if (r >= kBlockM) continue;
        const float g = acc[0][i][j], u = acc[kHalves - 1][i][j];
        // One element: store_pair's second value lies past this thread's column, so store singly.
        const int slot = s_slot[r];
        const int col = n0 + c;
        if (slot < 0 || col >= p.n) continue;
        if constexpr (kStage == 1) {
          static_cast<u16*>(p.out)[static_cast<Index>(slot) * p.n + col] = f32_to_bf16(silu(g) * u);
        } else {
          static_cast<float*>(p.out)[(static_cast<Index>(split) * p.rows + slot) * p.n + col] = p.topk_weights[slot] * g;
        }
      }
  }
}

/// Arguments of moe_stage_wgmma: the stage's, plus a tensor map of W as [experts * rows of W, k] bytes
/// (boxes of 128 bytes of K x kRowsW rows, 128-byte swizzled).
struct MoeStageTmaArgs {
  MoeStageArgs p;
  TensorMap w;
};

/// sm_90a, FP8 e4m3fn weights (both stages as moe_stage, kQuant 1), warp-specialized and swapped: the CTA
/// computes D = W_tile x tokens^T, kRowsW rows of W (per half: gate and up in stage 1) by kBlockM sorted
/// rows, so the weights, the bytes that matter, stream by TMA in 128-byte K blocks (one scale block), and the
/// few tokens of an expert fill one MMA width. The grid runs the sorted blocks fastest: the blocks of one
/// expert read the same W tile at about the same time, from L2 after the first.
///   producer warpgroup: thread 0 copies the W rows by TMA; all 128 gather the block's token rows (e4m3: the
///     hidden states in stage 1, the quantized intermediate in stage 2) by cp.async into the 128-byte swizzled
///     K-major layout, and each token's 1x128 scale.
///   consumer warpgroups (64 rows of W each): e4m3 wgmma m64 x kBlockM x 32 from shared memory. Each K block's
///     fp32 product is promoted into the accumulator with the W block's scale and the token's: exact operands,
///     fp32 sums, as the dense FP8 GEMM.
/// kCluster > 1: clusters of kCluster CTAs along the sorted rows (the routing is padded to kCluster x kBlockM
/// per expert, so a cluster's CTAs share one expert): each CTA's producer copies 1/kCluster of the W tile and
/// multicasts it to the whole cluster, so the W tile crosses L2 once per kCluster x kBlockM tokens while each
/// CTA keeps kBlockM tokens' registers; a consumer releases a stage in every CTA of the cluster.
// NOTE: no defaults: ROCm 5.2 hipRTC matches a name expression against the full argument list.
template <int kStage, int kBlockM, int kRowsW, int kStages, int kCluster, typename Index>
__global__ void __launch_bounds__((kRowsW / 64) * 128 + 128) moe_stage_wgmma(const TT_GRID_CONSTANT MoeStageTmaArgs args) {
  constexpr int kHalves = kStage == 1 ? 2 : 1;
  constexpr int kConsumers = kRowsW / 64;
  constexpr int kThreads = kConsumers * 128 + 128;
  constexpr int kBlockK = 128;
  constexpr int kWBytes = kHalves * kRowsW * kBlockK;                     // e4m3 rows of 128 bytes
  constexpr int kTokenBytes = kBlockM * kBlockK;                          // e4m3 rows of 128 bytes
  constexpr int kStageBytes = kWBytes + kTokenBytes;
  static_assert(kStage == 1 || kStage == 2, "stage 1 or 2");
  static_assert(kRowsW % 64 == 0 && kRowsW <= 256 && (kBlockM == 32 || kBlockM == 64 || kBlockM == 128) && kStages >= 2,
                "moe wgmma: 64 rows of W per consumer warpgroup, one TMA box per half, an MMA width of 32, 64 or 128");
  static_assert((kCluster == 1 || kCluster == 2 || kCluster == 4) && (kRowsW / kCluster) % 8 == 0,
                "moe wgmma: clusters of 1, 2 or 4, each CTA's slice of W whole 8-row swizzle atoms");
  const MoeStageArgs& p = args.p;
  __shared__ int s_a_row[kBlockM];  // token row (stage 1) or slot (stage 2) of each column, -1 for padding
  __shared__ int s_slot[kBlockM];   // slot of each column, -1 for padding
  const int tid = static_cast<int>(thread_x());
  const int block = static_cast<int>(block_x());
  const int bm0 = block * kBlockM;
  // NOTE: the padding is a multiple of kCluster x kBlockM, so a cluster's CTAs return together (or none does).
  if (bm0 >= *p.num_padded) return;  // the grid covers the worst-case padding; this block is unused
  const int expert = p.expert_ids[block / kCluster];
  const int n0 = static_cast<int>(block_y()) * kRowsW;
  const int split = static_cast<int>(block_z());
  const int k_begin = split * p.k_per_split;
  const int k_end = imin(p.k, k_begin + p.k_per_split);
  const int k_tiles = k_end > k_begin ? (k_end - k_begin + kBlockK - 1) / kBlockK : 0;
  const int w_rows = kHalves * p.n;
  const int kb_count = p.k / 128;
  for (int r = tid; r < kBlockM; r += kThreads) {
    const int slot = p.sorted_ids[bm0 + r];
    const bool valid = slot < p.rows;
    s_slot[r] = valid ? slot : -1;
    s_a_row[r] = valid ? (kStage == 1 ? slot / p.topk : slot) : -1;
  }
  const u8* const a_base = static_cast<const u8*>(p.a);
#if TT_HAS_WGMMA
  extern __shared__ u32x4 tt_dynamic_smem[];
  __shared__ u64 full_bar[kStages], empty_bar[kStages];
  __shared__ float s_token_scale[kStages][kBlockM];  // each column's 1x128 scale
  u8* const base = reinterpret_cast<u8*>((reinterpret_cast<u64>(tt_dynamic_smem) + 1023) & ~static_cast<u64>(1023));
  const int wg = tid / 128, warp = (tid % 128) / 32, lane = tid % 32;
  if (tid == kConsumers * 128) prefetch_tensormap(&args.w);
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full_bar[s], 1 + 128);  // the TMA's expect_tx arrival and every producer thread's
      mbar_init(&empty_bar[s], kConsumers * 4 * kCluster);  // every consumer warp of the cluster reads what it copies
    }
    fence_barrier_init();
  }
  if constexpr (kCluster > 1) cluster_sync();  // every CTA's barriers exist before any multicast or remote arrive
  else sync_block();
  [[maybe_unused]] const u32 rank = kCluster > 1 ? cluster_ctaid_x() : 0u;
  if (wg == kConsumers) {
    const int pt = tid - kConsumers * 128;
    for (int i = 0; i < k_tiles; ++i) {
      const int s = i % kStages;
      moe_release_ahead<kStages>(full_bar, i);
      if (i >= kStages) mbar_wait(&empty_bar[s], ((i / kStages) - 1) & 1);
      const int k0 = k_begin + i * kBlockK;
      u8* const sw = base + s * kStageBytes;
      u8* const st = sw + kWBytes;
      if (pt == 0) {
        mbar_arrive_expect_tx(&full_bar[s], kWBytes);  // every CTA's slices land here
#pragma unroll
        for (int h = 0; h < kHalves; ++h) {
          if constexpr (kCluster > 1) {
            constexpr int kSlice = kRowsW / kCluster;  // this CTA's rows of the tile, for the whole cluster
            tma_load_2d_multicast(sw + (h * kRowsW + rank * kSlice) * 128, &args.w, k0,
                                  expert * w_rows + h * p.n + n0 + rank * kSlice, &full_bar[s],
                                  static_cast<u16>((1u << kCluster) - 1));
          } else {
            tma_load_2d(sw + h * kRowsW * 128, &args.w, k0, expert * w_rows + h * p.n + n0, &full_bar[s]);
          }
        }
      }
      moe_gather_tokens<kBlockM, Index>(st, s_token_scale[s], s_a_row, a_base, p.a_scale, p.k, kb_count, k0, k_end, pt);
      copy_commit();
    }
    moe_release_rest<kStages>(full_bar, k_tiles);
  } else {
    const int gq = lane / 4, tq = lane % 4;
    const int r0 = wg * 64 + warp * 16 + gq;  // this lane's rows of W in each half: r0 and r0 + 8
    float acc[kHalves][kBlockM / 2], tmp[kHalves][kBlockM / 2];
#pragma unroll
    for (int h = 0; h < kHalves; ++h)
#pragma unroll
      for (int j = 0; j < kBlockM / 2; ++j) acc[h][j] = 0.f;
    for (int i = 0; i < k_tiles; ++i) {
      const int s = i % kStages, kb = (k_begin + i * kBlockK) / 128;
      // The warpgroup's 64 rows of each half lie in one 128-row scale block (n0 is a multiple of 64).
      float w_scale[kHalves];
#pragma unroll
      for (int h = 0; h < kHalves; ++h)
        w_scale[h] = p.w_scale[(static_cast<Index>(expert) * (w_rows / 128) + (h * p.n + n0 + wg * 64) / 128) * kb_count + kb];
      mbar_wait(&full_bar[s], (i / kStages) & 1);
      const u8* const sw = base + s * kStageBytes;
      moe_mma_kblock<kBlockM, kHalves>(acc, tmp, sw + wg * 64 * 128, kRowsW * 128, sw + kWBytes, s_token_scale[s], w_scale, tq);
      // After the scale reads: the producers may refill it all (with a cluster, each CTA's producer refills its
      // slice of every CTA's stage, so the stage is released in all of them). NOTE: each warp releases it after
      // its own reads of the token scales: one arrival per warpgroup let the refill race its other warps' reads.
      if (lane == 0) {
        if constexpr (kCluster > 1) {
#pragma unroll
          for (u32 r = 0; r < kCluster; ++r) mbar_arrive_cluster(&empty_bar[s], r);
        } else {
          mbar_arrive(&empty_bar[s]);
        }
      }
    }
#pragma unroll
    for (int j = 0; j < kBlockM / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int ocol = n0 + r0 + (e / 2) * 8, slot = s_slot[j * 8 + 2 * tq + e % 2];
        if (slot < 0 || ocol >= p.n) continue;
        if constexpr (kStage == 1) {
          static_cast<u16*>(p.out)[static_cast<Index>(slot) * p.n + ocol] =
              f32_to_bf16(silu(acc[0][j * 4 + e]) * acc[kHalves - 1][j * 4 + e]);
        } else {
          static_cast<float*>(p.out)[(static_cast<Index>(split) * p.rows + slot) * p.n + ocol] =
              p.topk_weights[slot] * acc[0][j * 4 + e];
        }
      }
  }
  // A CTA stays until the cluster is done: the others still multicast into it and arrive on its barriers.
  if constexpr (kCluster > 1) cluster_sync();
#else
  // TMA and wgmma exist only on sm_90a (the host never selects this kernel elsewhere); a portable body
  // compiles it everywhere: each thread computes its outputs directly.
  sync_block();
  const u8* const w_base = static_cast<const u8*>(p.w);
  for (int e = tid; e < kRowsW * kBlockM; e += kThreads) {
    const int r = e / kBlockM, c = e % kBlockM;
    const int slot = s_slot[c], ar = s_a_row[c], ocol = n0 + r;
    if (slot < 0 || ocol >= p.n) continue;
    float acc[2] = {0.f, 0.f};
    for (int h = 0; h < kHalves; ++h) {
      const Index wrow = static_cast<Index>(expert) * w_rows + h * p.n + ocol;
      for (int k = k_begin; k < k_end; ++k) {
        const float w = e4m3_to_f32<false>(w_base[wrow * p.k + k]) *
                        p.w_scale[(static_cast<Index>(expert) * (w_rows / 128) + (h * p.n + ocol) / 128) * kb_count + k / 128];
        const float x = e4m3_to_f32<false>(a_base[static_cast<Index>(ar) * p.k + k]) * p.a_scale[static_cast<Index>(ar) * kb_count + k / 128];
        acc[h] += w * x;
      }
    }
    if constexpr (kStage == 1) {
      static_cast<u16*>(p.out)[static_cast<Index>(slot) * p.n + ocol] = f32_to_bf16(silu(acc[0]) * acc[1]);
    } else {
      static_cast<float*>(p.out)[(static_cast<Index>(split) * p.rows + slot) * p.n + ocol] = p.topk_weights[slot] * acc[0];
    }
  }
#endif
}

}  // namespace tt
