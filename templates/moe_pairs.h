// Fused MoE stage 1 at an MMA width of 128 tokens (sm_90a, e4m3fn): moe_stage_wgmma's stage 1 with gate and up
// in separate consumer warpgroups. moe_stage_wgmma gives each consumer both halves of its 64 rows of W (an
// accumulator and a K block's product per half, 2 x kBlockM floats a thread), which at 128 tokens is more than
// a thread's 255 registers. Here warpgroup 2p takes pair p's 64 gate rows and 2p + 1 the matching 64 up rows
// (kBlockM floats a thread); after the K loop the up warpgroup hands its accumulator to the gate warpgroup through
// the drained stage ring, which writes SiLU(gate) * up. Same TMA box, stage layout, producer and promotion as
// moe_stage_wgmma, so the same numerics. NOTE: at 128 tokens a W tile crosses L2 once per 128 sorted rows,
// against four times at 32: at M of a few hundred (about 100 slots an expert) stage 1 streams each expert's
// weights about once instead of three times from L2, and the MMA is 128 wide.
// In a header of its own so that moe_gemm.h's code objects (and the verdicts judged on them) keep their keys.
#pragma once
#include "moe_gemm.h"

namespace tt {

// NOTE: no defaults: ROCm 5.2 hipRTC matches a name expression against the full argument list.
template <int kBlockM, int kRowsW, int kStages, typename Index>
__global__ void __launch_bounds__(2 * (kRowsW / 64) * 128 + 128) moe_stage1_pairs_wgmma(const TT_GRID_CONSTANT MoeStageTmaArgs args) {
  constexpr int kPairs = kRowsW / 64;
  constexpr int kConsumers = 2 * kPairs;
  constexpr int kThreads = kConsumers * 128 + 128;
  constexpr int kBlockK = 128;
  constexpr int kWBytes = 2 * kRowsW * kBlockK;  // gate rows, then up rows, e4m3 rows of 128 bytes
  constexpr int kStageBytes = kWBytes + kBlockM * kBlockK;
  static_assert(kRowsW % 64 == 0 && kRowsW <= 128 && (kBlockM == 64 || kBlockM == 128) && kStages >= 2,
                "moe pairs: 64 rows of W per warpgroup pair, one TMA box per half, an MMA width of 64 or 128");
  static_assert(kPairs * 64 * kBlockM * 4 <= kStages * kStageBytes, "moe pairs: the up halves' hand-off fits the ring");
  const MoeStageArgs& p = args.p;
  __shared__ int s_a_row[kBlockM];  // token row of each column, -1 for padding
  __shared__ int s_slot[kBlockM];   // slot of each column, -1 for padding
  const int tid = static_cast<int>(thread_x());
  const int bm0 = static_cast<int>(block_x()) * kBlockM;
  if (bm0 >= *p.num_padded) return;  // the grid covers the worst-case padding; this block is unused
  const int expert = p.expert_ids[block_x()];
  const int n0 = static_cast<int>(block_y()) * kRowsW;
  const int k_tiles = (p.k + kBlockK - 1) / kBlockK;
  const int w_rows = 2 * p.n;
  const int kb_count = p.k / 128;
  for (int r = tid; r < kBlockM; r += kThreads) {
    const int slot = p.sorted_ids[bm0 + r];
    const bool valid = slot < p.rows;
    s_slot[r] = valid ? slot : -1;
    s_a_row[r] = valid ? slot / p.topk : -1;
  }
  const u8* const a_base = static_cast<const u8*>(p.a);
#if TT_HAS_WGMMA
  extern __shared__ u32x4 tt_dynamic_smem[];
  __shared__ u64 full_bar[kStages], empty_bar[kStages];
  __shared__ float s_token_scale[kStages][kBlockM];
  u8* const base = reinterpret_cast<u8*>((reinterpret_cast<u64>(tt_dynamic_smem) + 1023) & ~static_cast<u64>(1023));
  const int wg = tid / 128, warp = (tid % 128) / 32, lane = tid % 32;
  if (tid == kConsumers * 128) prefetch_tensormap(&args.w);
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full_bar[s], 1 + 128);              // the TMA's expect_tx arrival and every producer thread's
      mbar_init(&empty_bar[s], kConsumers * 4);      // every consumer warp reads what it copies
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
      const int k0 = i * kBlockK;
      u8* const sw = base + s * kStageBytes;
      if (pt == 0) {
        mbar_arrive_expect_tx(&full_bar[s], kWBytes);
        for (int h = 0; h < 2; ++h) tma_load_2d(sw + h * kRowsW * 128, &args.w, k0, expert * w_rows + h * p.n + n0, &full_bar[s]);
      }
      moe_gather_tokens<kBlockM, Index>(sw + kWBytes, s_token_scale[s], s_a_row, a_base, p.a_scale, p.k, kb_count, k0, p.k, pt);
      copy_commit();
    }
    moe_release_rest<kStages>(full_bar, k_tiles);
  } else {
    const int half = wg & 1, pair = wg >> 1;  // half 0: gate rows, 1: up rows
    const int tq = lane % 4;
    const int wrow = half * p.n + n0 + pair * 64;  // this warpgroup's first row of W in the expert's 2 * n
    float acc[1][kBlockM / 2], tmp[1][kBlockM / 2];
#pragma unroll
    for (int j = 0; j < kBlockM / 2; ++j) acc[0][j] = 0.f;
    for (int i = 0; i < k_tiles; ++i) {
      const int s = i % kStages;
      const float w_scale[1] = {p.w_scale[(static_cast<Index>(expert) * (w_rows / 128) + wrow / 128) * kb_count + i]};
      mbar_wait(&full_bar[s], (i / kStages) & 1);
      const u8* const sw = base + s * kStageBytes;
      moe_mma_kblock<kBlockM, 1>(acc, tmp, sw + (half * kRowsW + pair * 64) * 128, 0, sw + kWBytes, s_token_scale[s], w_scale, tq);
      if (lane == 0) mbar_arrive(&empty_bar[s]);  // each warp after its own reads of the token scales
    }
    // The hand-off: once every consumer's MMAs are done with the ring (the producer wrote its last tile before
    // the last full barrier completed), the up warpgroup's thread t writes its accumulator where the gate
    // warpgroup's thread t, which holds the same rows and columns, reads it (consecutive t: no bank conflicts).
    float* const xch = reinterpret_cast<float*>(base) + pair * (kBlockM / 2) * 128;
    const int t = tid % 128;
    bar_sync_named(1, kConsumers * 128);
    if (half == 1) {
#pragma unroll
      for (int j = 0; j < kBlockM / 2; ++j) xch[j * 128 + t] = acc[0][j];
    }
    bar_sync_named(1, kConsumers * 128);
    if (half == 0) {
      const int r0 = n0 + pair * 64 + warp * 16 + lane / 4;  // this lane's columns of inter: r0 and r0 + 8
#pragma unroll
      for (int j = 0; j < kBlockM / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int ocol = r0 + (e / 2) * 8, slot = s_slot[j * 8 + 2 * tq + e % 2];
          if (slot < 0 || ocol >= p.n) continue;
          static_cast<u16*>(p.out)[static_cast<Index>(slot) * p.n + ocol] =
              f32_to_bf16(silu(acc[0][j * 4 + e]) * xch[(j * 4 + e) * 128 + t]);
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
    for (int h = 0; h < 2; ++h) {
      const Index wrow = static_cast<Index>(expert) * w_rows + h * p.n + ocol;
      for (int k = 0; k < p.k; ++k)
        acc[h] += e4m3_to_f32<false>(w_base[wrow * p.k + k]) *
                  p.w_scale[(static_cast<Index>(expert) * (w_rows / 128) + (h * p.n + ocol) / 128) * kb_count + k / 128] *
                  e4m3_to_f32<false>(a_base[static_cast<Index>(ar) * p.k + k]) * p.a_scale[static_cast<Index>(ar) * kb_count + k / 128];
    }
    static_cast<u16*>(p.out)[static_cast<Index>(slot) * p.n + ocol] = f32_to_bf16(silu(acc[0]) * acc[1]);
  }
#endif
}

}  // namespace tt
