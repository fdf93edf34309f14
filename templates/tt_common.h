// Device-only prelude for every tunetab template: fixed-width types, thread and block indices, barriers,
// atomics and bf16 bit conversions, for NVRTC, hipRTC and offline clang (-x hip -nogpuinc) alike.
// No host headers and no std:: here: hipRTC and NVRTC have no standard library.
#pragma once

#if defined(TT_OFFLINE_HIP)
// Offline clang without HIP headers (compile checks for gfx942/gfx950): spell out what hipRTC provides.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))
#endif

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define TT_NVIDIA 1
#else
#define TT_AMD 1
#endif

namespace tt {

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;

#if defined(TT_OFFLINE_HIP)
__device__ __forceinline__ u32 thread_x() { return __builtin_amdgcn_workitem_id_x(); }
__device__ __forceinline__ u32 block_x() { return __builtin_amdgcn_workgroup_id_x(); }
__device__ __forceinline__ u32 block_y() { return __builtin_amdgcn_workgroup_id_y(); }
__device__ __forceinline__ u32 block_z() { return __builtin_amdgcn_workgroup_id_z(); }
__device__ __forceinline__ void sync_block() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
__device__ __forceinline__ void fence_device() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent"); }
__device__ __forceinline__ u32 atomic_add(u32* p, u32 v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
__device__ __forceinline__ u32 f32_bits(float f) { return __builtin_bit_cast(u32, f); }
__device__ __forceinline__ float bits_f32(u32 u) { return __builtin_bit_cast(float, u); }
__device__ __forceinline__ float shfl_xor(float v, int mask) {
  const int lane = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
  return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute((lane ^ mask) << 2, __builtin_bit_cast(int, v)));
}
#else
__device__ __forceinline__ u32 thread_x() { return threadIdx.x; }
__device__ __forceinline__ u32 block_x() { return blockIdx.x; }
__device__ __forceinline__ u32 block_y() { return blockIdx.y; }
__device__ __forceinline__ u32 block_z() { return blockIdx.z; }
__device__ __forceinline__ void sync_block() { __syncthreads(); }
__device__ __forceinline__ void fence_device() { __threadfence(); }
__device__ __forceinline__ u32 atomic_add(u32* p, u32 v) { return atomicAdd(p, v); }
__device__ __forceinline__ u32 f32_bits(float f) { return __float_as_uint(f); }
__device__ __forceinline__ float bits_f32(u32 u) { return __uint_as_float(u); }
#if defined(TT_NVIDIA)
__device__ __forceinline__ float shfl_xor(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
#else
__device__ __forceinline__ float shfl_xor(float v, int mask) { return __shfl_xor(v, mask); }
#endif
#endif

__device__ __forceinline__ float bf16_to_f32(u16 h) { return bits_f32(static_cast<u32>(h) << 16); }

/// Round to nearest even; NaN stays a quiet NaN.
__device__ __forceinline__ u16 f32_to_bf16(float f) {
#if defined(TT_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  // NOTE: one instruction and no branch (a branch on an accumulator between wgmma groups serializes them).
  u16 r;
  asm("cvt.rn.bf16.f32 %0, %1;\n" : "=h"(r) : "f"(f));
  return r;
#else
  u32 x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<u16>(x >> 16);
#endif
}

__device__ __forceinline__ u32 pack_bf16x2(float lo, float hi) {
#if defined(TT_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 r;  // one instruction, round to nearest even (as f32_to_bf16)
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
#else
  return static_cast<u32>(f32_to_bf16(lo)) | (static_cast<u32>(f32_to_bf16(hi)) << 16);
#endif
}

/// One e4m3 byte to fp32. fn (OCP, NVIDIA and gfx950): bias 7, S.1111.111 is NaN, max 448.
/// fnuz (gfx942): bias 8, 0x80 is the only NaN (no negative zero), max 240.
__device__ __forceinline__ float fp8_e4m3_to_f32(u32 byte, bool fnuz) {
  const u32 mag = byte & 0x7fu;
  if (fnuz ? byte == 0x80u : mag == 0x7fu) return bits_f32(0x7fc00000u);
  // NOTE: subnormals by an integer product, so no fp32 denormal (flushed on some targets) is involved.
  const float v = mag < 8u ? static_cast<float>(mag) * (fnuz ? 0.0009765625f : 0.001953125f)
                           : bits_f32((mag << 20) + ((fnuz ? 119u : 120u) << 23));
  return bits_f32(f32_bits(v) | ((byte & 0x80u) << 24));
}

struct alignas(16) u32x4 { u32 x, y, z, w; };
struct alignas(8) u32x2 { u32 x, y; };

}  // namespace tt
