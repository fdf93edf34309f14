// Fused MoE stages at an MMA width of 128 tokens (sm_90a, e4m3fn): moe_stage_wgmma's structure (W by TMA, the
// tokens gathered by the producer warpgroup, e4m3 wgmma from shared memory promoted per 128-wide K block), two
// differences:
//   - stage 1 pairs its consumer warpgroups: 2g takes group g's 64 gate rows and 2g + 1 the matching 64 up rows
//     (kBlockM floats of accumulator and product a thread, where both halves would need twice a thread's 255
//     registers); after the K loop the up warpgroup hands its accumulator to the gate warpgroup through the
//     drained stage ring, which writes SiLU(gate) * up;
//   - the promotion reads each thread's token scales two adjacent columns at a time, in batches of loads ahead of
//     their FMAs (moe_wide_kblock). With moe_mma_kblock's scalar load before each column's FMAs, at 128 columns
//     and ~160 registers the warps waited on shared memory (Nsight Compute, session 13: the top stall, 40%; both
//     stages about twice as slow as 32 tokens wide).
// NOTE: a W tile crosses L2 once per 128 sorted rows, against four times at 32: at about 100 slots an expert (M of a
// few hundred at 32 experts, top-8) each expert's weights stream about once instead of three times through L2.
// In a header of its own so that moe_gemm.h's code objects (and the verdicts judged on them) keep their keys.
#pragma once
#include "moe_gemm.h"

namespace tt {

struct alignas(8) f32x2 {
  float x, y;
};

#if TT_HAS_WGMMA
/// A consumer warpgroup's e4m3 MMA of one 128-wide K block, D = W x tokens^T over 64 rows of W at `w` and kBlockM
/// token rows at `st` (both 128-byte swizzled), promoted into acc with the W block's scale and each column's token
/// scale. Element j*4 + e of a thread's accumulator is row (e / 2) * 8 + warp * 16 + lane / 4 of the 64, column
/// j*8 + 2 tq + e % 2 (as moe_mma_kblock's).
template <int kBlockM>
__device__ __forceinline__ void moe_wide_kblock(float (&acc)[kBlockM / 2], float (&tmp)[kBlockM / 2], const u8* w, const u8* st,
                                                const f32x2* token_scale, float w_scale, int tq) {
  fence_operands(tmp);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) wgmma_fp8<kBlockM>(tmp, wgmma_desc(w) + 2 * kk, wgmma_desc(st) + 2 * kk, kk);
  wgmma_commit();
  wgmma_wait<0>();
  fence_operands(tmp);
  constexpr int kJ = kBlockM / 8, kBatch = kJ < 4 ? kJ : 4;
#pragma unroll
  for (int j0 = 0; j0 < kJ; j0 += kBatch) {
    f32x2 sc[kBatch];
#pragma unroll
    for (int q = 0; q < kBatch; ++q) sc[q] = token_scale[(j0 + q) * 4 + tq];  // columns (j0 + q) * 8 + 2 tq, + 1
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      const float s0 = w_scale * sc[q].x, s1 = w_scale * sc[q].y;
      float* const a = acc + (j0 + q) * 4;
      const float* const t = tmp + (j0 + q) * 4;
      a[0] += t[0] * s0;
      a[1] += t[1] * s1;
      a[2] += t[2] * s0;
      a[3] += t[3] * s1;
    }
  }
}
#endif

/// kStage 1: out = SiLU(A Wg^T) * (A Wu^T), bf16 by slot, kRowsW columns of inter_dim per CTA (gate and up each);
/// kStage 2: out[split] = topk_weight * (A W2^T), fp32 by slot, kRowsW columns of model_dim per CTA, split-K by
/// block z. A CTA is kBlockM sorted rows (one expert) by kRowsW rows of W; no clusters.
// NOTE: no defaults: ROCm 5.2 hipRTC matches a name expression against the full argument list.
template <int kStage, int kBlockM, int kRowsW, int kStages, typename Index>
__global__ void __launch_bounds__(((kStage == 1 ? 2 : 1) * (kRowsW / 64) + 1) * 128)
    moe_stage_wide_wgmma(const TT_GRID_CONSTANT MoeStageTmaArgs args) {
  constexpr int kHalves = kStage == 1 ? 2 : 1;
  constexpr int kGroups = kRowsW / 64;           // 64-row groups of W per half
  constexpr int kConsumers = kHalves * kGroups;  // a warpgroup per half and group
  constexpr int kThreads = kConsumers * 128 + 128;
  constexpr int kBlockK = 128;
  constexpr int kWBytes = kHalves * kRowsW * kBlockK;  // e4m3 rows of 128 bytes, gate rows before up rows
  constexpr int kStageBytes = kWBytes + kBlockM * kBlockK;
  static_assert(kStage == 1 || kStage == 2, "stage 1 or 2");
  static_assert(kRowsW % 64 == 0 && kRowsW <= 128 && (kBlockM == 64 || kBlockM == 128) && kStages >= 2,
                "moe wide: 64-row groups of W, one TMA box per half, an MMA width of 64 or 128");
  static_assert(kStage == 2 || kGroups * 64 * kBlockM * 4 <= kStages * kStageBytes, "moe wide: the up halves' hand-off fits the ring");
  const MoeStageArgs& p = args.p;
  __shared__ int s_a_row[kBlockM];  // token row (stage 1) or slot (stage 2) of each column, -1 for padding
  __shared__ int s_slot[kBlockM];   // slot of each column, -1 for padding
  const int tid = static_cast<int>(thread_x());
  const int bm0 = static_cast<int>(block_x()) * kBlockM;
  if (bm0 >= *p.num_padded) return;  // the grid covers the worst-case padding; this block is unused
  const int expert = p.expert_ids[block_x()];
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
  __shared__ f32x2 s_token_scale[kStages][kBlockM / 2];  // each column's 1x128 scale, two columns an element
  u8* const base = reinterpret_cast<u8*>((reinterpret_cast<u64>(tt_dynamic_smem) + 1023) & ~static_cast<u64>(1023));
  const int wg = tid / 128, warp = (tid % 128) / 32, lane = tid % 32;
  if (tid == kConsumers * 128) prefetch_tensormap(&args.w);
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full_bar[s], 1 + 128);          // the TMA's expect_tx arrival and every producer thread's
      mbar_init(&empty_bar[s], kConsumers * 4);  // every consumer warp reads what it copies
    }
    fence_barrier_init();
  }
  sync_block();
  if (wg == kConsumers) {
    const int pt = tid - kConsumers * 128;
    for (int i = 0; i < k_tiles; ++i) {
      const int s = i % kStages;
      moe_release_ahead<kStages>(full_bar, i);
      if (i >= kStages) mbar_wait(&empty_bar[s], ((i / kStages) - 1) & 1);
      const int k0 = k_begin + i * kBlockK;
      u8* const sw = base + s * kStageBytes;
      if (pt == 0) {
        mbar_arrive_expect_tx(&full_bar[s], kWBytes);
#pragma unroll
        for (int h = 0; h < kHalves; ++h)
          tma_load_2d(sw + h * kRowsW * 128, &args.w, k0, expert * w_rows + h * p.n + n0, &full_bar[s]);
      }
      moe_gather_tokens<kBlockM, Index>(sw + kWBytes, reinterpret_cast<float*>(s_token_scale[s]), s_a_row, a_base, p.a_scale,
                                        p.k, kb_count, k0, k_end, pt);
      copy_commit();
    }
    moe_release_rest<kStages>(full_bar, k_tiles);
  } else {
    const int half = wg % kHalves, group = wg / kHalves;  // stage 1: half 0 gate rows, 1 up rows
    const int tq = lane % 4;
    const int wrow = half * p.n + n0 + group * 64;  // this warpgroup's first row of W in the expert's w_rows
    float acc[kBlockM / 2], tmp[kBlockM / 2];
#pragma unroll
    for (int j = 0; j < kBlockM / 2; ++j) acc[j] = 0.f;
    for (int i = 0; i < k_tiles; ++i) {
      const int s = i % kStages, kb = (k_begin + i * kBlockK) / 128;
      const float w_scale = p.w_scale[(static_cast<Index>(expert) * (w_rows / 128) + wrow / 128) * kb_count + kb];
      mbar_wait(&full_bar[s], (i / kStages) & 1);
      const u8* const sw = base + s * kStageBytes;
      moe_wide_kblock<kBlockM>(acc, tmp, sw + (half * kRowsW + group * 64) * 128, sw + kWBytes, s_token_scale[s], w_scale, tq);
      if (lane == 0) mbar_arrive(&empty_bar[s]);  // each warp after its own reads of the token scales
    }
    const int r0 = n0 + group * 64 + warp * 16 + lane / 4;  // this lane's output columns: r0 and r0 + 8
    if constexpr (kStage == 1) {
      // The hand-off: once every consumer's MMAs are done with the ring (the producer's last tile landed before the
      // last full barrier completed), the up warpgroup's thread t writes its accumulator where the gate
      // warpgroup's thread t, which holds the same rows and columns, reads it (consecutive t: no bank conflicts).
      float* const xch = reinterpret_cast<float*>(base) + group * (kBlockM / 2) * 128;
      const int t = tid % 128;
      bar_sync_named(1, kConsumers * 128);
      if (half == 1) {
#pragma unroll
        for (int j = 0; j < kBlockM / 2; ++j) xch[j * 128 + t] = acc[j];
      }
      bar_sync_named(1, kConsumers * 128);
      if (half == 0) {
#pragma unroll
        for (int j = 0; j < kBlockM / 8; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int ocol = r0 + (e / 2) * 8, slot = s_slot[j * 8 + 2 * tq + e % 2];
            if (slot < 0 || ocol >= p.n) continue;
            static_cast<u16*>(p.out)[static_cast<Index>(slot) * p.n + ocol] =
                f32_to_bf16(silu(acc[j * 4 + e]) * xch[(j * 4 + e) * 128 + t]);
          }
      }
    } else {
#pragma unroll
      for (int j = 0; j < kBlockM / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int ocol = r0 + (e / 2) * 8, slot = s_slot[j * 8 + 2 * tq + e % 2];
          if (slot < 0 || ocol >= p.n) continue;
          static_cast<float*>(p.out)[(static_cast<Index>(split) * p.rows + slot) * p.n + ocol] = p.topk_weights[slot] * acc[j * 4 + e];
        }
    }
  }
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
      for (int k = k_begin; k < k_end; ++k)
        acc[h] += e4m3_to_f32<false>(w_base[wrow * p.k + k]) *
                  p.w_scale[(static_cast<Index>(expert) * (w_rows / 128) + (h * p.n + ocol) / 128) * kb_count + k / 128] *
                  e4m3_to_f32<false>(a_base[static_cast<Index>(ar) * p.k + k]) * p.a_scale[static_cast<Index>(ar) * kb_count + k / 128];
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
