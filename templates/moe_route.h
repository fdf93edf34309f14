// Fused MoE, the small kernels around the two GEMM stages: routing sort/align (vLLM's
// moe_align_block_size), per-token 1x128 FP8 activation quantization, and the deterministic top-k reduce.
#pragma once
#include "moe_common.h"

namespace tt {

/// The experts of slots i + j * kThreads (j < kBatch), -1 past the last slot: kBatch loads in flight at once.
template <int kThreads, int kBatch>
__device__ __forceinline__ void moe_slot_experts(const MoeAlignArgs& p, int i, int (&ids)[kBatch]) {
#pragma unroll
  for (int j = 0; j < kBatch; ++j) ids[j] = i + j * kThreads < p.rows ? p.topk_ids[i + j * kThreads] : -1;
}

/// One block of kThreads threads. Counts slots per expert, pads each expert to block_m, writes every
/// block's expert and scatters slot ids into their expert's range (and, given sorted_pos, each slot's sorted row).
/// Order inside an expert's range follows the atomics; nothing downstream depends on it (stage outputs are
/// addressed by slot id).
// NOTE: each thread keeps kBatch of its topk_ids loads in flight: one at a time, each pass over the slots waited
// on a load per 256 slots (9.4 us at M=336, top-8, ncu in session 20).
template <int kThreads>
__global__ void __launch_bounds__(kThreads) moe_align(MoeAlignArgs p) {
  constexpr int kMaxExperts = 1024;
  constexpr int kBatch = 4;
  __shared__ u32 count[kMaxExperts];
  __shared__ u32 cursor[kMaxExperts];
  __shared__ int offset[kMaxExperts + 1];
  const int tid = static_cast<int>(thread_x());
  for (int e = tid; e < p.experts; e += kThreads) count[e] = 0u;
  sync_block();
  for (int i0 = 0; i0 < p.rows; i0 += kThreads * kBatch) {
    int ids[kBatch];
    moe_slot_experts<kThreads>(p, i0 + tid, ids);
#pragma unroll
    for (int j = 0; j < kBatch; ++j)
      if (ids[j] >= 0) atomic_add(&count[ids[j]], 1u);
  }
  sync_block();
  if (tid == 0) {
    int total = 0;
    for (int e = 0; e < p.experts; ++e) {
      offset[e] = total;
      total += (static_cast<int>(count[e]) + p.block_m - 1) / p.block_m * p.block_m;
    }
    offset[p.experts] = total;
    *p.num_padded = total;
  }
  sync_block();
  for (int e = tid; e < p.experts; e += kThreads) {
    cursor[e] = 0u;
    for (int b = offset[e]; b < offset[e + 1]; b += p.block_m) p.expert_ids[b / p.block_m] = e;
    for (int r = offset[e] + static_cast<int>(count[e]); r < offset[e + 1]; ++r) p.sorted_ids[r] = p.rows;
  }
  sync_block();
  for (int i0 = 0; i0 < p.rows; i0 += kThreads * kBatch) {
    int ids[kBatch];
    moe_slot_experts<kThreads>(p, i0 + tid, ids);
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      if (ids[j] < 0) continue;
      const int i = i0 + j * kThreads + tid, r = offset[ids[j]] + static_cast<int>(atomic_add(&cursor[ids[j]], 1u));
      p.sorted_ids[r] = i;
      if (p.sorted_pos) p.sorted_pos[i] = r;
    }
  }
}

/// 256 threads: each group of 32 lanes quantizes one (token, 128 columns) group, 4 elements a lane:
/// scale = amax / e4m3 max (1 for an all-zero group), q = e4m3(x / scale).
template <bool kFnuz, typename Index>
__global__ void __launch_bounds__(256) moe_quant_a(MoeQuantArgs p) {
  const int tid = static_cast<int>(thread_x()), lane = tid % 32;
  const int groups = p.dim / 128;
  const int g = static_cast<int>(block_x()) * 8 + tid / 32;
  if (g >= p.tokens * groups) return;
  const int token = g / groups, col = (g % groups) * 128 + lane * 4;
  const Index off = static_cast<Index>(token) * static_cast<Index>(p.dim) + static_cast<Index>(col);
  const u32x2 raw = *reinterpret_cast<const u32x2*>(p.x + off);
  float v[4] = {bits_f32(raw.x << 16), bits_f32(raw.x & 0xffff0000u), bits_f32(raw.y << 16),
                bits_f32(raw.y & 0xffff0000u)};
  float amax = 0.f;
#pragma unroll
  for (int i = 0; i < 4; ++i) amax = bits_f32(f32_bits(v[i]) & 0x7fffffffu) > amax ? bits_f32(f32_bits(v[i]) & 0x7fffffffu) : amax;
#pragma unroll
  for (int m = 16; m > 0; m /= 2) {
    const float o = shfl_xor(amax, m);
    amax = o > amax ? o : amax;
  }
  const float scale = amax > 0.f ? amax / e4m3_max<kFnuz>() : 1.0f;
  u32 packed = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) packed |= f32_to_e4m3<kFnuz>(v[i] / scale) << (8 * i);
  *reinterpret_cast<u32*>(p.q + off) = packed;
  if (lane == 0) p.scale[static_cast<Index>(token) * groups + (g % groups)] = scale;
}

/// out[t, c] = bf16(sum over k < topk, s < splits of y[s, t * topk + k, c]), in that order. 256 threads
/// per block, 4 columns a thread; grid (ceil(dim / 1024), tokens).
template <typename Index>
__global__ void __launch_bounds__(256) moe_reduce(MoeReduceArgs p) {
  const int t = static_cast<int>(block_y());
  const int c = (static_cast<int>(block_x()) * 256 + static_cast<int>(thread_x())) * 4;
  if (c >= p.dim) return;
  const Index plane = static_cast<Index>(p.tokens) * p.topk * p.dim;
  float s[4] = {0.f, 0.f, 0.f, 0.f};
  for (int k = 0; k < p.topk; ++k)
    for (int sp = 0; sp < p.splits; ++sp) {
      const float* y = p.y + static_cast<Index>(sp) * plane + (static_cast<Index>(t) * p.topk + k) * p.dim + c;
      const u32x4 v = *reinterpret_cast<const u32x4*>(y);  // dim % 4 == 0 (host constraint)
      s[0] += bits_f32(v.x);
      s[1] += bits_f32(v.y);
      s[2] += bits_f32(v.z);
      s[3] += bits_f32(v.w);
    }
  u16* o = p.out + static_cast<Index>(t) * p.dim + c;
  *reinterpret_cast<u32x2*>(o) = u32x2{pack_bf16x2(s[0], s[1]), pack_bf16x2(s[2], s[3])};
}

}  // namespace tt
