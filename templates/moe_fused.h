// Fused MoE, the 1-stage variant (sm_90a, FP8 e4m3fn per-1x128): both GEMMs of one expert in one kernel, for
// decode, where the pipeline's two stage launches and its intermediate's round trip through global memory
// are a visible share of a weight-read-bound time. Between the routing align and the quantization of the
// hidden states (moe_route.h) and the top-k reduce, one launch replaces stage 1, the intermediate's
// quantization and stage 2 (moe_gemm.h), through the same rounding steps (the products' order differs a little:
// the weights are applied per slice, and the reduce sums the slices):
//   a CTA takes a block of kBlockM sorted rows (one expert) and a slice of 128 columns of inter_dim (one
//   1x128 scale group of the intermediate): phase A computes SiLU(gate) * up for those columns (256 rows of
//   W1, the whole model_dim of K, e4m3 wgmma as stage 1), rounds it to bf16 and quantizes it per token to
//   e4m3 with one scale (as moe_quant_a does), into shared memory; phase B multiplies every 128-row tile of
//   W2's matching 128 columns by it (one K block each), and writes fp32 partials, times the slot's top-k
//   weight, to plane `slice` of the split workspace y [inter_dim / 128, rows, model_dim], which moe_reduce sums
//   in a fixed order. Each weight byte is read once per sorted block, as in the pipeline.
// Warp-specialized as moe_stage_wgmma: a producer warpgroup (thread 0 issues the TMA copies of W1 and W2 in
// 128-byte K x 128-row boxes; all 128 gather the tokens' e4m3 rows and scales by cp.async) and two consumer
// warpgroups, 64 rows of W each, over one stage ring that runs through both phases.
#pragma once
#include "moe_common.h"
#include "moe_wgmma.h"
#include "tt_async.h"

namespace tt {

/// Arguments of moe_fused_wgmma. W1 is [experts * 2 * inter_dim, model_dim] bytes and W2 [experts * model_dim,
/// inter_dim] bytes, each by a tensor map of 128-byte x 128-row boxes, 128-byte swizzled.
struct MoeFusedArgs {
  const u8* a;                // [tokens, model_dim] e4m3 hidden states
  const u8* w1;               // [E, 2 * inter_dim, model_dim] e4m3 (the maps' memory; the portable body reads it)
  const u8* w2;               // [E, model_dim, inter_dim] e4m3
  const float* a_scale;       // [tokens, model_dim / 128]
  const float* w1_scale;      // [E, 2 * inter_dim / 128, model_dim / 128]
  const float* w2_scale;      // [E, model_dim / 128, inter_dim / 128]
  const int* sorted_ids;
  const int* expert_ids;
  const int* num_padded;
  const float* topk_weights;  // [rows]
  float* y;                   // [inter_dim / 128, rows, model_dim]
  int rows;                   // tokens * topk; a sorted id >= rows is padding
  int topk;
  int model_dim;
  int inter_dim;
  TensorMap w1_map, w2_map;
};

// NOTE: no defaults: ROCm 5.2 hipRTC matches a name expression against the full argument list.
template <int kBlockM, int kStages, typename Index>
__global__ void __launch_bounds__(3 * 128) moe_fused_wgmma(const TT_GRID_CONSTANT MoeFusedArgs p) {
  constexpr int kConsumers = 2;   // 64 rows of W each: the slice's 128 columns, W2's 128-row tiles
  constexpr int kSlice = 128;     // columns of inter_dim per CTA: one scale group of the intermediate
  constexpr int kThreads = kConsumers * 128 + 128;
  constexpr int kW1Bytes = 2 * kSlice * 128;                // gate and up rows, one 128-byte K block
  constexpr int kStageBytes = kW1Bytes + kBlockM * 128;     // and the tokens' e4m3 K block (phase B: W2's tile)
  static_assert(kBlockM == 32 || kBlockM == 64, "moe fused: an MMA width of 32 or 64 tokens");
  static_assert(kStages >= 2, "moe fused: at least double buffering");
  static_assert(kStageBytes % 1024 == 0, "moe fused: stages (and the intermediate after them) 1 KiB aligned for the swizzle");
  __shared__ int s_a_row[kBlockM];  // token of each column, -1 for padding
  __shared__ int s_slot[kBlockM];   // slot of each column, -1 for padding
  const int tid = static_cast<int>(thread_x());
  const int block = static_cast<int>(block_x());
  const int bm0 = block * kBlockM;
  if (bm0 >= *p.num_padded) return;  // the grid covers the worst-case padding; this block is unused
  const int expert = p.expert_ids[block];
  const int slice = static_cast<int>(block_y());
  const int c0 = slice * kSlice;          // the slice's first column of inter_dim
  const int kb_a = p.model_dim / 128;     // phase A's K blocks (of model_dim)
  const int tiles = kb_a + p.model_dim / 128;  // and phase B's 128-row tiles of W2
  for (int r = tid; r < kBlockM; r += kThreads) {
    const int slot = p.sorted_ids[bm0 + r];
    const bool valid = slot < p.rows;
    s_slot[r] = valid ? slot : -1;
    s_a_row[r] = valid ? slot / p.topk : -1;
  }
#if TT_HAS_WGMMA
  extern __shared__ u32x4 tt_dynamic_smem[];
  __shared__ u64 full_bar[kStages], empty_bar[kStages];
  __shared__ float s_token_scale[kStages][kBlockM];    // phase A: each column's 1x128 hidden-state scale
  __shared__ float s_amax[kConsumers * 4][kBlockM];    // each consumer warp's |max| of each column's 16 rows
  u8* const base = reinterpret_cast<u8*>((reinterpret_cast<u64>(tt_dynamic_smem) + 1023) & ~static_cast<u64>(1023));
  u8* const s_inter = base + kStages * kStageBytes;    // kBlockM e4m3 rows of the slice, 128-byte swizzled
  const int wg = tid / 128, warp = (tid % 128) / 32, lane = tid % 32;
  if (tid == kConsumers * 128) {
    prefetch_tensormap(&p.w1_map);
    prefetch_tensormap(&p.w2_map);
  }
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full_bar[s], 1 + 128);     // the TMA's expect_tx arrival and every producer thread's
      mbar_init(&empty_bar[s], kConsumers * 4);  // every consumer warp, after its reads
    }
    fence_barrier_init();
  }
  sync_block();
  if (wg == kConsumers) {
    const int pt = tid - kConsumers * 128;
    // NOTE: phase B's tiles have no copies; their (empty) cp.async groups keep moe_release_ahead's count uniform.
    for (int i = 0; i < tiles; ++i) {
      const int s = i % kStages;
      moe_release_ahead<kStages>(full_bar, i);
      if (i >= kStages) mbar_wait(&empty_bar[s], ((i / kStages) - 1) & 1);
      u8* const sw = base + s * kStageBytes;
      if (i < kb_a) {
        const int k0 = i * 128;
        if (pt == 0) {
          mbar_arrive_expect_tx(&full_bar[s], kW1Bytes);
          const int w1_row = expert * 2 * p.inter_dim + c0;
          tma_load_2d(sw, &p.w1_map, k0, w1_row, &full_bar[s]);                                 // gate
          tma_load_2d(sw + kSlice * 128, &p.w1_map, k0, w1_row + p.inter_dim, &full_bar[s]);   // up
        }
        moe_gather_tokens<kBlockM, Index>(sw + kW1Bytes, s_token_scale[s], s_a_row, p.a, p.a_scale, p.model_dim, kb_a, k0,
                                          p.model_dim, pt);
      } else if (pt == 0) {
        mbar_arrive_expect_tx(&full_bar[s], 128 * 128);
        tma_load_2d(sw, &p.w2_map, c0, expert * p.model_dim + (i - kb_a) * 128, &full_bar[s]);
      }
      copy_commit();
    }
    moe_release_rest<kStages>(full_bar, tiles);
  } else {
    const int gq = lane / 4, tq = lane % 4;
    const int r0 = wg * 64 + warp * 16 + gq;  // this lane's rows of W: r0 and r0 + 8 (of each half in phase A)
    constexpr int kN = kBlockM / 2;           // accumulator registers per half: element j*4 + e is row
                                              // r0 + (e / 2) * 8, column j*8 + 2 tq + e % 2
    float acc[2][kN], tmp[2][kN];
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int j = 0; j < kN; ++j) acc[h][j] = 0.f;
    // Phase A: SiLU(gate) * up for the slice, as moe_stage_wgmma's stage 1 with 128 rows of W per half.
    for (int i = 0; i < kb_a; ++i) {
      const int s = i % kStages;
      // The warpgroup's 64 rows of each half lie in one 128-row scale block (c0 is a multiple of 128).
      float w_scale[2];
#pragma unroll
      for (int h = 0; h < 2; ++h)
        w_scale[h] = p.w1_scale[(static_cast<Index>(expert) * (2 * p.inter_dim / 128) + (h * p.inter_dim + c0) / 128) * kb_a + i];
      mbar_wait(&full_bar[s], (i / kStages) & 1);
      const u8* const sw = base + s * kStageBytes;
      moe_mma_kblock<kBlockM, 2>(acc, tmp, sw + wg * 64 * 128, kSlice * 128, sw + kW1Bytes, s_token_scale[s], w_scale, tq);
      if (lane == 0) mbar_arrive(&empty_bar[s]);  // after this warp's reads of the stage's token scales
    }
    // The intermediate: bf16(SiLU(gate) * up), then per column (a token's slot) one e4m3 scale over the slice's
    // 128 values, amax / e4m3 max (1 for an all-zero group), as moe_quant_a quantizes the pipeline's.
    // NOTE: amax starts at 0 and compares as moe_quant_a does, so a NaN is skipped the same way.
    float amax[kBlockM / 8][2];
#pragma unroll
    for (int j = 0; j < kBlockM / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float v = bf16_to_f32(f32_to_bf16(silu(acc[0][j * 4 + e]) * acc[1][j * 4 + e]));
        acc[0][j * 4 + e] = v;
        const float a = bits_f32(f32_bits(v) & 0x7fffffffu);
        if (e < 2) amax[j][e] = 0.f;
        amax[j][e % 2] = a > amax[j][e % 2] ? a : amax[j][e % 2];
      }
#pragma unroll
    for (int j = 0; j < kBlockM / 8; ++j)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
#pragma unroll
        for (int m = 4; m < 32; m *= 2) {  // across gq: the warp's 16 rows
          const float o = shfl_xor(amax[j][c], m);
          amax[j][c] = o > amax[j][c] ? o : amax[j][c];
        }
        if (gq == 0) s_amax[wg * 4 + warp][j * 8 + 2 * tq + c] = amax[j][c];
      }
    bar_sync_named(1, kConsumers * 128);
    float out_scale[kBlockM / 8][2];  // each of this thread's columns: its intermediate scale x its top-k weight
#pragma unroll
    for (int j = 0; j < kBlockM / 8; ++j)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int col = j * 8 + 2 * tq + c;
        float m = s_amax[0][col];
#pragma unroll
        for (int w = 1; w < kConsumers * 4; ++w) m = s_amax[w][col] > m ? s_amax[w][col] : m;
        const float scale = m > 0.f ? m / e4m3_max<false>() : 1.0f;
        const int slot = s_slot[col];
        out_scale[j][c] = slot >= 0 ? scale * p.topk_weights[slot] : 0.f;
#pragma unroll
        for (int e = c; e < 4; e += 2) {
          const int k = r0 + (e / 2) * 8;  // the column of the slice: K of phase B
          s_inter[col * 128 + (((k >> 4) ^ (col & 7)) << 4) + (k & 15)] =
              static_cast<u8>(f32_to_e4m3<false>(acc[0][j * 4 + e] / scale));
        }
      }
    fence_proxy_async();  // generic-proxy writes, before wgmma reads them through the async proxy
    bar_sync_named(1, kConsumers * 128);
    // Phase B: each 128-row tile of W2's slice columns times the intermediate, one K block.
    for (int i = kb_a; i < tiles; ++i) {
      const int s = i % kStages, row0 = (i - kb_a) * 128;
      const float w2s =
          p.w2_scale[(static_cast<Index>(expert) * (p.model_dim / 128) + (row0 + wg * 64) / 128) * (p.inter_dim / 128) + slice];
      mbar_wait(&full_bar[s], (i / kStages) & 1);
      const u8* const sw = base + s * kStageBytes;
      fence_operands(tmp[0]);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) wgmma_fp8<kBlockM>(tmp[0], wgmma_desc(sw + wg * 64 * 128) + 2 * kk, wgmma_desc(s_inter) + 2 * kk, kk);
      wgmma_commit();
      wgmma_wait<0>();
      fence_operands(tmp[0]);
      if (lane == 0) mbar_arrive(&empty_bar[s]);
#pragma unroll
      for (int j = 0; j < kBlockM / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int slot = s_slot[j * 8 + 2 * tq + e % 2];
          if (slot < 0) continue;
          p.y[(static_cast<Index>(slice) * p.rows + slot) * p.model_dim + row0 + r0 + (e / 2) * 8] =
              tmp[0][j * 4 + e] * (w2s * out_scale[j][e % 2]);
        }
    }
  }
#else
  // TMA and wgmma exist only on sm_90a (the host never selects this kernel elsewhere); a portable body
  // compiles it everywhere: each thread computes its outputs directly, through the same rounding steps.
  sync_block();
  const u8* const w1 = p.w1;
  const u8* const w2 = p.w2;
  for (int c = tid; c < kBlockM; c += kThreads) {
    const int slot = s_slot[c], ar = s_a_row[c];
    if (slot < 0) continue;
    float m = 0.f;
    for (int pass = 0; pass < 2; ++pass) {  // the slice's amax, then its values
      const float scale = m > 0.f ? m / e4m3_max<false>() : 1.0f;
      for (int r = 0; r < kSlice; ++r) {
        float g = 0.f, u = 0.f;
        for (int k = 0; k < p.model_dim; ++k) {
          const float x = e4m3_to_f32<false>(p.a[static_cast<Index>(ar) * p.model_dim + k]) * p.a_scale[static_cast<Index>(ar) * kb_a + k / 128];
          const Index gr = static_cast<Index>(expert) * 2 * p.inter_dim + c0 + r, ur = gr + p.inter_dim;
          const Index sb = static_cast<Index>(expert) * (2 * p.inter_dim / 128);
          g += x * e4m3_to_f32<false>(w1[gr * p.model_dim + k]) * p.w1_scale[(sb + (c0 + r) / 128) * kb_a + k / 128];
          u += x * e4m3_to_f32<false>(w1[ur * p.model_dim + k]) * p.w1_scale[(sb + (p.inter_dim + c0 + r) / 128) * kb_a + k / 128];
        }
        const float v = bf16_to_f32(f32_to_bf16(silu(g) * u));
        if (pass == 0) {
          const float a = bits_f32(f32_bits(v) & 0x7fffffffu);
          m = a > m ? a : m;
          continue;
        }
        const float q = e4m3_to_f32<false>(f32_to_e4m3<false>(v / scale)) * scale;
        for (int row = 0; row < p.model_dim; ++row) {
          const Index wr = static_cast<Index>(expert) * p.model_dim + row;
          const float w = e4m3_to_f32<false>(w2[wr * p.inter_dim + c0 + r]) *
                          p.w2_scale[(static_cast<Index>(expert) * (p.model_dim / 128) + row / 128) * (p.inter_dim / 128) + slice];
          float* const y = p.y + (static_cast<Index>(slice) * p.rows + slot) * p.model_dim + row;
          *y = (r == 0 ? 0.f : *y) + p.topk_weights[slot] * w * q;
        }
      }
    }
  }
#endif
}

}  // namespace tt
