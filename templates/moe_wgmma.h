// Fused MoE on sm_90a, the pieces its warp-specialized kernels share (moe_stage_wgmma in moe_gemm.h, the 1-stage
// moe_fused_wgmma in moe_fused.h): the producer's token gather and its deferred release of a stage ring, and the
// consumers' e4m3 MMA of one 128-wide K block with its promotion. Device-only; no std::.
#pragma once
#include "moe_common.h"
#include "tt_async.h"

namespace tt {

#if TT_HAS_WGMMA
/// The 128 producer threads (pt 0..127) copy kBlockM token rows of one 128-byte K block by cp.async into the
/// 128-byte swizzled K-major layout wgmma_desc reads (chunk g of row r at chunk g ^ (r % 8)), zero-filled for
/// padding rows (token -1) and past k_end, and each row's 1x128 scale (k0 / 128 of `kb_count` per token).
template <int kBlockM, typename Index>
__device__ __forceinline__ void moe_gather_tokens(u8* st, float* scales, const int* token, const u8* a, const float* a_scale,
                                                  int k, int kb_count, int k0, int k_end, int pt) {
  for (int c = pt; c < kBlockM * 8; c += 128) {
    const int r = c / 8, g = c % 8, col = k0 + g * 16;
    const int ar = token[r];
    const bool valid = ar >= 0 && col < k_end;
    copy_async<16>(st + r * 128 + ((g ^ (r & 7)) << 4), valid ? a + static_cast<Index>(ar) * k + col : a, valid);
    if (g == 0) copy_async<4>(&scales[r], ar >= 0 ? a_scale + static_cast<Index>(ar) * kb_count + k0 / 128 : a_scale, ar >= 0);
  }
}

/// The producer's release of its ring's stages. NOTE: a tile's cp.async copies are waited for kAhead =
/// kStages - 1 tiles later, and the tile is released to the consumers then (its TMA bytes complete on the same
/// barrier): the producer runs kStages - 1 tiles ahead instead of waiting for each tile's gather loads (blocking
/// loads made every K block cost a global-load latency whatever its bytes). Call moe_release_ahead at the top of
/// iteration i, before waiting for a free stage (after it, the consumers would wait for every hand-off), one
/// copy_commit() per iteration, then moe_release_rest after the loop.
template <int kStages>
__device__ __forceinline__ void moe_release_ahead(u64* full_bar, int i) {
  constexpr int kAhead = kStages - 1;
  if (i >= kAhead) {
    copy_wait<kAhead - 1>();  // this thread's copies of tile i - kAhead have landed
    fence_proxy_async();      // generic-proxy writes, before wgmma reads them through the async proxy
    mbar_arrive(&full_bar[(i - kAhead) % kStages]);
  }
}
template <int kStages>
__device__ __forceinline__ void moe_release_rest(u64* full_bar, int tiles) {
  constexpr int kAhead = kStages - 1;
  copy_wait<0>();
  fence_proxy_async();
  for (int i = tiles > kAhead ? tiles - kAhead : 0; i < tiles; ++i) mbar_arrive(&full_bar[i % kStages]);
}

/// A consumer warpgroup's e4m3 MMA of one 128-wide K block, D = W x tokens^T: kHalves groups of 64 rows of W at
/// `w` (half h `half_bytes` further), kBlockM token rows at `st`, both 128-byte swizzled; then the product is
/// promoted into acc with each half's W block scale and each column's token scale. Element j*4 + e of a thread's
/// accumulator is row r0 + (e / 2) * 8 of W (r0 = warp * 16 + lane / 4 within the 64), column j*8 + 2 tq + e % 2.
template <int kBlockM, int kHalves>
__device__ __forceinline__ void moe_mma_kblock(float (&acc)[kHalves][kBlockM / 2], float (&tmp)[kHalves][kBlockM / 2],
                                               const u8* w, int half_bytes, const u8* st, const float* token_scale,
                                               const float (&w_scale)[kHalves], int tq) {
#pragma unroll
  for (int h = 0; h < kHalves; ++h) fence_operands(tmp[h]);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {  // k32 step kk: +32 bytes (2 descriptor units) along the swizzled row
    const u64 db = wgmma_desc(st) + 2 * kk;
#pragma unroll
    for (int h = 0; h < kHalves; ++h) wgmma_fp8<kBlockM>(tmp[h], wgmma_desc(w + h * half_bytes) + 2 * kk, db, kk);
  }
  wgmma_commit();
  // NOTE: the K block's product must be complete to be promoted; the other consumer warpgroups' MMAs overlap
  // this one's promotion.
  wgmma_wait<0>();
#pragma unroll
  for (int h = 0; h < kHalves; ++h) fence_operands(tmp[h]);
#pragma unroll
  for (int j = 0; j < kBlockM / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float sa = token_scale[j * 8 + 2 * tq + e % 2];
#pragma unroll
      for (int h = 0; h < kHalves; ++h) acc[h][j * 4 + e] += tmp[h][j * 4 + e] * (w_scale[h] * sa);
    }
}
#endif

}  // namespace tt
