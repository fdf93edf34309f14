// TEST ONLY: planted-fault GEMM kernels for the safety engine's fixtures (tests/gpu/safety_gpu_test.cpp,
// `tunetab tune --plant-faults`). Never part of a family's enumerate(): only the test family
// gemm_bf16_planted asks for them. A plain SIMT GEMM over 64x64 tiles (128 threads, the launch geometry of
// the gemm config m64n64k32_w32x32_s2_simt_v8_sk1), with one fault planted per kFault:
//   0 none        correct: the control
//   1 tail_store  the epilogue bounds rows by the tile instead of M: ragged M stores past the end of C
//   2 wrap32      the output offset is computed in 32 bits whatever the declared Index: wraps at M*N >= 2^31
//   3 hang        one thread spins on a flag nobody sets
//   4 skip_tile   the first tile is never computed
//   5 wrong       every result off by 6.25%
#pragma once
#include "gemm_bf16.h"

namespace tt {

template <int kFault, typename Index>
__global__ void __launch_bounds__(128) planted_gemm(GemmArgs p) {
  constexpr int kTile = 64;
  const int tid = static_cast<int>(thread_x());
  if (kFault == 3) {
    if (tid == 0) {
      volatile u32* flag = p.counters;  // zero between launches; nothing ever writes the magic value
      while (flag[0] != 0xdeadbeefu) {
      }
    }
    sync_block();
  }
  if (kFault == 4 && block_x() == 0 && block_y() == 0) return;
  const int bn0 = static_cast<int>(block_x()) * kTile, bm0 = static_cast<int>(block_y()) * kTile;
  const int row_limit = kFault == 1 ? bm0 + kTile : p.m;
  for (int e = tid; e < kTile * kTile; e += 128) {
    const int row = bm0 + e / kTile, col = bn0 + e % kTile;
    if (row >= row_limit || col >= p.n) continue;
    float acc = 0.f;
    if (row < p.m) {
      const u16* a = p.a + static_cast<Index>(row) * static_cast<Index>(p.k);
      const u16* b = p.b + static_cast<Index>(col) * static_cast<Index>(p.k);
      for (int kk = 0; kk < p.k; ++kk) acc += bf16_to_f32(a[kk]) * bf16_to_f32(b[kk]);
    }
    if (kFault == 5) acc *= 1.0625f;
    if (kFault == 2) {
      // NOTE: unsigned arithmetic, so the compiler cannot widen the product the way it may for a signed one.
      const int off = static_cast<int>(static_cast<u32>(row) * static_cast<u32>(p.n) + static_cast<u32>(col));
      p.c[off] = f32_to_bf16(acc);
    } else {
      p.c[static_cast<Index>(row) * static_cast<Index>(p.n) + static_cast<Index>(col)] = f32_to_bf16(acc);
    }
  }
}

}  // namespace tt
