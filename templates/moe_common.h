// Fused MoE, shared device pieces: the argument blocks of every pipeline kernel, FP8 e4m3 encode/decode
// (e4m3fn: bias 7, max 448; e4m3fnuz: bias 8, max 240, no negative zero) and SiLU. Device-only; no std::.
// NOTE: the host mirrors (kernels/moe/) follow these field for field and bit for bit.
#pragma once
#include "tt_common.h"

namespace tt {

/// Routing sort/align (moe_align_block_size): token slots grouped by expert, each expert padded to block_m.
struct MoeAlignArgs {
  const int* topk_ids;  // [rows] expert of each (token, k) slot; rows = tokens * topk
  int* sorted_ids;      // [max_padded] slot ids grouped by expert; `rows` marks padding
  int* expert_ids;      // [max_blocks] expert of each block of block_m sorted rows
  int* num_padded;      // [1] sorted rows in use (a multiple of block_m)
  int* sorted_pos;      // [rows] each slot's sorted row (the inverse of sorted_ids), or null
  int rows;
  int experts;
  int block_m;
};

/// Per-token, per-128-of-K activation quantization (FP8 pipelines only).
struct MoeQuantArgs {
  const u16* x;    // [tokens, dim] bf16 hidden states
  u8* q;           // [tokens, dim] e4m3
  float* scale;    // [tokens, dim / 128]
  int tokens;
  int dim;         // a multiple of 128
};

/// One grouped GEMM stage over the sorted rows. Stage 1: A = hidden (token = slot / topk), W = w1
/// [E, 2n, k] (gate rows, then up rows), out = SiLU(gate) * up as bf16 [rows, n]. Stage 2: A = stage 1's
/// output (row = slot), W = w2 [E, n, k], out = topk_weight * A W^T as fp32 [splits, rows, n].
struct MoeStageArgs {
  const void* a;
  const float* a_scale;       // stage 1, FP8: [tokens, k / 128]
  const void* w;
  const float* w_scale;       // FP8: [E, rows of W / 128, k / 128]
  const int* sorted_ids;
  const int* expert_ids;
  const int* num_padded;
  const float* topk_weights;  // [rows]
  void* out;
  int rows;                   // tokens * topk; a sorted id >= rows is padding
  int topk;
  int n;                      // output columns: inter_dim (stage 1) or model_dim (stage 2)
  int k;                      // model_dim (stage 1) or inter_dim (stage 2)
  int k_per_split;            // a multiple of the K tile; splits = gridDim.z (stage 2)
};

/// Sums the topk (and split) fp32 rows of each token into bf16: a fixed order, so deterministic.
struct MoeReduceArgs {
  const float* y;  // [splits, tokens * topk, dim]
  u16* out;        // [tokens, dim]
  int tokens;
  int topk;
  int dim;
  int splits;
};

/// e4m3 byte to float; kFnuz selects e4m3fnuz (bias 8). NaN encodings are not produced by tunetab's
/// quantizers and decode as large finite values.
template <bool kFnuz>
__device__ __forceinline__ float e4m3_to_f32(u32 b) {
  const u32 sign = (b & 0x80u) << 24;
  const u32 e = (b >> 3) & 0xfu, m = b & 7u;
  if (e == 0) {
    // Subnormal: m * 2^-9 (fn) or m * 2^-10 (fnuz); exact in fp32.
    const float v = static_cast<float>(m) * (kFnuz ? (1.0f / 1024.0f) : (1.0f / 512.0f));
    return bits_f32(f32_bits(v) | sign);
  }
  return bits_f32(sign | ((e + (kFnuz ? 119u : 120u)) << 23) | (m << 20));
}

/// Largest finite e4m3 magnitude: 448 (fn) or 240 (fnuz).
template <bool kFnuz>
__device__ __forceinline__ float e4m3_max() { return kFnuz ? 240.0f : 448.0f; }

/// Float to e4m3, round to nearest even, saturating to +-max.
template <bool kFnuz>
__device__ __forceinline__ u32 f32_to_e4m3(float x) {
  const u32 bits = f32_bits(x);
  const u32 sign = (bits >> 24) & 0x80u;
  const u32 abits = bits & 0x7fffffffu;
  const float a = bits_f32(abits);
  constexpr u32 kBias = kFnuz ? 8u : 7u;
  u32 code;
  if (!(a < e4m3_max<kFnuz>())) {
    code = kFnuz ? 0x7fu : 0x7eu;
  } else if (abits < ((127u + 1u - kBias) << 23)) {
    // Below the smallest normal: a multiple of 2^(1 - bias - 3); a code of 8 is the smallest normal.
    const float scaled = a * (kFnuz ? 1024.0f : 512.0f);
    volatile float big = 8388608.0f;  // NOTE: volatile keeps (x + 2^23) - 2^23 (round to nearest even) intact
    code = static_cast<u32>((scaled + big) - big);
  } else {
    const u32 r = (abits + 0x7ffffu + ((abits >> 20) & 1u)) >> 20;  // exponent and 3 mantissa bits, rounded
    code = r - ((127u - kBias) << 3);
    const u32 max_code = kFnuz ? 0x7fu : 0x7eu;
    if (code > max_code) code = max_code;
  }
  if (kFnuz && code == 0) return 0u;  // e4m3fnuz has no negative zero (0x80 is its NaN)
  return code | sign;
}

__device__ __forceinline__ float moe_exp(float x) {
#if defined(TT_OFFLINE_HIP)
  return __builtin_expf(x);
#else
  return __expf(x);
#endif
}

__device__ __forceinline__ float silu(float x) { return x / (1.0f + moe_exp(-x)); }

}  // namespace tt
