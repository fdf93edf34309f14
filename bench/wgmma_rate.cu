// The fp8 wgmma rate a persistent MoE stage's consumers can reach, without memory: each CTA (one an SM) runs `wgs`
// consumer warpgroups; with kPromote each runs the stage kernels' own K block (moe_mma_kblock_desc: four m64nNk32
// steps per half, the halves interleaved, wgmma_wait<0>, then acc += tmp x (w scale x token scale), the token
// scales read from shared memory) on shared memory filled once with random e4m3 bytes; without, only its MMAs.
// No producer, no barriers, no global traffic in the loop: the time a K block takes here is what the consumers
// alone need.
//   build (device): nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I templates bench/wgmma_rate.cu -o wr
//   run: ./wr   (prints one line per variant: us a K block per CTA, and TFLOP/s over 132 SMs)
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "moe_wgmma2.h"  // moe_mma_kblock_desc; wgmma_fp8 at N = 32, 64, 96, 128, 192

using tt::u64;
using tt::u8;

template <int N, int kHalves, int kPromote, int kWgs>
__global__ void __launch_bounds__(kWgs * 128, 1) consumers(const u8* rnd, float* out, int iters) {
#if TT_HAS_WGMMA
  extern __shared__ __align__(1024) u8 smem[];
  const int tid = threadIdx.x, wg = tid / 128, wgs = kWgs, lane = tid % 32;
  constexpr int kA = 64 * 128;  // a warpgroup's 64 rows of W per half, one K block
  const int a_bytes = kHalves * wgs * kA, b_bytes = N * 128;
  for (int i = tid; i < (a_bytes + b_bytes) / 16; i += blockDim.x)
    reinterpret_cast<uint4*>(smem)[i] = reinterpret_cast<const uint4*>(rnd)[i];
  float* ts = reinterpret_cast<float*>(smem + a_bytes + b_bytes);
  for (int i = tid; i < N; i += blockDim.x) ts[i] = 1.f + 0.001f * i;
  __syncthreads();
  const int uwg = __shfl_sync(0xffffffffu, wg, 0);
  const u64 da = tt::wgmma_desc(smem + uwg * kHalves * kA), db = tt::wgmma_desc(smem + a_bytes);
  const u64 half = kA >> 4;
  float acc[kHalves][N / 2], tmp[kHalves][N / 2];
#pragma unroll
  for (int h = 0; h < kHalves; ++h)
#pragma unroll
    for (int j = 0; j < N / 2; ++j) acc[h][j] = 0.f;
  const int tq = lane % 4;
  float ws[kHalves];
#pragma unroll
  for (int h = 0; h < kHalves; ++h) ws[h] = 0.5f / (h + 1);
  for (int it = 0; it < iters; ++it) {
    if constexpr (kPromote) {
      tt::moe_mma_kblock_desc<N, kHalves>(acc, tmp, da, half, db, ts, ws, tq);  // the stage kernels' own K block
    } else {  // its MMA half alone
#pragma unroll
      for (int h = 0; h < kHalves; ++h) tt::fence_operands(tmp[h]);
      tt::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
#pragma unroll
        for (int h = 0; h < kHalves; ++h) tt::wgmma_fp8<N>(tmp[h], da + h * half + 2 * kk, db + 2 * kk, kk);
      tt::wgmma_commit();
      tt::wgmma_wait<0>();
#pragma unroll
      for (int h = 0; h < kHalves; ++h) {
        tt::fence_operands(tmp[h]);
        acc[h][0] += tmp[h][0] + tmp[h][N / 2 - 1];  // keep the products live
      }
    }
  }
  float s = 0.f;
#pragma unroll
  for (int h = 0; h < kHalves; ++h)
#pragma unroll
    for (int j = 0; j < N / 2; ++j) s += acc[h][j];
  out[blockIdx.x * blockDim.x + tid] = s;
#endif
}

template <int N, int kHalves, int kPromote, int wgs>
void run(const u8* rnd, float* out, int sms) {
  const int smem = kHalves * wgs * 64 * 128 + N * 128 + N * 4 + 1024;
  auto k = consumers<N, kHalves, kPromote, wgs>;
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  const int iters = 4000;
  k<<<sms, wgs * 128, smem>>>(rnd, out, 64);  // warm-up
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  float best = 1e30f;
  for (int rep = 0; rep < 5; ++rep) {
    cudaEventRecord(a);
    k<<<sms, wgs * 128, smem>>>(rnd, out, iters);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0.f;
    cudaEventElapsedTime(&ms, a, b);
    best = ms < best ? ms : best;
  }
  const cudaError_t err = cudaGetLastError();
  const double us_kb = best * 1e3 / iters;
  const double flops = 2.0 * 64 * N * 128 * kHalves * wgs * static_cast<double>(iters) * sms;
  std::printf("N=%3d halves=%d wgs=%d promote=%d  %.3f us a K block per CTA  %6.0f TFLOP/s  %s\n", N, kHalves, wgs, kPromote, us_kb,
              flops / (best * 1e-3) / 1e12, err == cudaSuccess ? "" : cudaGetErrorString(err));
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const size_t bytes = 1 << 20;
  u8* h = static_cast<u8*>(std::malloc(bytes));
  srand(7);
  for (size_t i = 0; i < bytes; ++i) {
    u8 v = static_cast<u8>(rand());
    h[i] = (v & 0x7f) == 0x7f ? 0x3c : v;  // no e4m3 NaN codes
  }
  u8* rnd;
  float* out;
  cudaMalloc(&rnd, bytes);
  cudaMalloc(&out, sms * 512 * sizeof(float));
  cudaMemcpy(rnd, h, bytes, cudaMemcpyHostToDevice);
  std::printf("%d SMs\n", sms);
  // The exported M=512 row's stage 1 (m64, two consumers, gate + up) and stage 2 (m64, four consumers, one half).
  run<64, 2, 0, 2>(rnd, out, sms);
  run<64, 2, 0, 1>(rnd, out, sms);
  run<64, 1, 0, 4>(rnd, out, sms);
  run<64, 1, 0, 2>(rnd, out, sms);
  run<64, 2, 1, 2>(rnd, out, sms);
  run<64, 2, 1, 1>(rnd, out, sms);
  run<64, 1, 1, 4>(rnd, out, sms);
  run<64, 1, 1, 2>(rnd, out, sms);
  // The 96- and 32-token tiles' stage 1, and wider tokens without promotion (what a larger MMA gives).
  run<96, 2, 0, 2>(rnd, out, sms);
  run<96, 2, 1, 2>(rnd, out, sms);
  run<32, 2, 0, 4>(rnd, out, sms);
  run<32, 2, 1, 4>(rnd, out, sms);
  run<128, 2, 0, 2>(rnd, out, sms);
  run<128, 1, 1, 2>(rnd, out, sms);
  run<64, 2, 0, 3>(rnd, out, sms);
  run<64, 2, 1, 3>(rnd, out, sms);
  run<192, 1, 0, 2>(rnd, out, sms);
  return 0;
}
