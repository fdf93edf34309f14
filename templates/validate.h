// Device-side comparison of a bf16 output with its fp32 reference (kernels/validate): the tolerance rule of
// gemm::compare per element, reduced to one partial per block (no floating atomics, so it compiles for
// every target); the host adds the partials up.
#pragma once
#include "tt_common.h"

namespace tt {

/// One block's share. NOTE: mirrors tunetab::validate::Partial field for field.
struct ValidatePartial {
  double diff_sq;   // sum of (o - r)^2 over finite outputs
  double max_abs;   // max |o - r| over finite outputs
  i64 bad;          // non-finite, or |o - r| > atol + rtol * |r| (+ mag_rel * mag)
  i64 non_finite;
  i64 first_bad;    // -1: none
};

/// NOTE: mirrors tunetab::validate::Args field for field.
struct ValidateArgs {
  const u16* out;   // bf16 [count]
  const float* ref; // fp32 [count], same element order
  const float* mag; // fp32 [count], each element's sum |a_k b_k|, or null
  double atol;      // atol_rms * RMS(ref over the compared elements)
  double rtol;
  double mag_rel;   // slack per unit of mag
  i64 count;
  i64 blocks;       // the grid's size (grid-stride loop)
  ValidatePartial* partials;  // [blocks]
};

template <int kThreads>
__global__ void __launch_bounds__(kThreads) validate_bf16(ValidateArgs a) {
  __shared__ double s_sq[kThreads];
  __shared__ double s_max[kThreads];
  __shared__ i64 s_bad[kThreads];
  __shared__ i64 s_nf[kThreads];
  __shared__ i64 s_first[kThreads];
  const u32 t = thread_x();
  double sq = 0, mx = 0;
  i64 bad = 0, nf = 0, first = -1;
  const i64 stride = a.blocks * kThreads;
  for (i64 i = static_cast<i64>(block_x()) * kThreads + t; i < a.count; i += stride) {
    const u16 h = a.out[i];
    const double r = static_cast<double>(a.ref[i]);
    if ((h & 0x7f80u) == 0x7f80u) {  // NaN or Inf: exponent all ones
      ++nf;
      ++bad;
      if (first < 0) first = i;
      continue;
    }
    const double o = static_cast<double>(bf16_to_f32(h));
    const double d = o > r ? o - r : r - o;
    sq += d * d;
    if (d > mx) mx = d;
    if (d > a.atol + a.rtol * (r < 0 ? -r : r) + (a.mag ? a.mag_rel * static_cast<double>(a.mag[i]) : 0.0)) {
      ++bad;
      if (first < 0) first = i;  // a thread's indices ascend: its first is its smallest
    }
  }
  s_sq[t] = sq;
  s_max[t] = mx;
  s_bad[t] = bad;
  s_nf[t] = nf;
  s_first[t] = first;
  sync_block();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (t < static_cast<u32>(w)) {
      s_sq[t] += s_sq[t + w];
      if (s_max[t + w] > s_max[t]) s_max[t] = s_max[t + w];
      s_bad[t] += s_bad[t + w];
      s_nf[t] += s_nf[t + w];
      const i64 f = s_first[t + w];
      if (f >= 0 && (s_first[t] < 0 || f < s_first[t])) s_first[t] = f;
    }
    sync_block();
  }
  if (t == 0) {
    ValidatePartial p;
    p.diff_sq = s_sq[0];
    p.max_abs = s_max[0];
    p.bad = s_bad[0];
    p.non_finite = s_nf[0];
    p.first_bad = s_first[0];
    a.partials[block_x()] = p;
  }
}

}  // namespace tt
