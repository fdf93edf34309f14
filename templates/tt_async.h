// Asynchronous copies and the sm_80/sm_90a building blocks shared by the GEMM-like templates: cp.async
// (with a plain-copy fallback on every other target), ldmatrix, wgmma shared-memory descriptors and fences,
// and mbarriers. Arch features are guarded; on AMD targets only the portable fallbacks exist.
#pragma once
#include "tt_common.h"

#if defined(TT_NVIDIA) && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
#define TT_HAS_MMA_SM80 1   // mma.sync bf16, ldmatrix, cp.async
#else
#define TT_HAS_MMA_SM80 0
#endif
#if defined(TT_NVIDIA) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TT_HAS_WGMMA 1      // sm_90a: warpgroup MMA from shared-memory descriptors
#else
#define TT_HAS_WGMMA 0
#endif

// A kernel parameter whose address is taken (a TMA descriptor) must stay in parameter space.
#if TT_HAS_WGMMA
#define TT_GRID_CONSTANT __grid_constant__
#else
#define TT_GRID_CONSTANT
#endif

namespace tt {

/// An opaque TMA descriptor (CUtensorMap), encoded on the host (tunetab::tensor_map_2d) and passed by value.
struct alignas(64) TensorMap {
  u64 opaque[16];
};

__device__ __forceinline__ int imin(int a, int b) { return a < b ? a : b; }

template <int kBytes>
__device__ __forceinline__ void copy_async(void* smem, const void* gmem, bool valid) {
#if TT_HAS_MMA_SM80
  const u32 s = static_cast<u32>(__cvta_generic_to_shared(smem));
  const int src_bytes = valid ? kBytes : 0;  // NOTE: src-size 0 zero-fills: ragged M/N/K tails read nothing
  if constexpr (kBytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(gmem), "n"(kBytes), "r"(src_bytes));
#else
  if constexpr (kBytes == 16) {
    u32x4 v = {0, 0, 0, 0};
    if (valid) v = *static_cast<const u32x4*>(gmem);
    *static_cast<u32x4*>(smem) = v;
  } else {
    u32x2 v = {0, 0};
    if (valid) v = *static_cast<const u32x2*>(gmem);
    *static_cast<u32x2*>(smem) = v;
  }
#endif
}

__device__ __forceinline__ void copy_commit() {
#if TT_HAS_MMA_SM80
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int kPending>
__device__ __forceinline__ void copy_wait() {
#if TT_HAS_MMA_SM80
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
#endif
}

#if TT_HAS_MMA_SM80
__device__ __forceinline__ void ldmatrix_x4(u32 (&r)[4], const u16* p) {
  const u32 s = static_cast<u32>(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}

#endif

/// A 16-byte load of data read once (streamed weights): read-only path, not kept in L1.
__device__ __forceinline__ u32x4 load_stream16(const void* g) {
#if TT_HAS_MMA_SM80
  u32x4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(g));
  return v;
#else
  return *static_cast<const u32x4*>(g);
#endif
}

#if TT_HAS_WGMMA
/// Shared-memory matrix descriptor: K-major rows of 128 bytes, 128-byte swizzle, 8-row groups 1024 B apart.
__device__ __forceinline__ u64 wgmma_desc(const void* smem) {
  const u32 addr = static_cast<u32>(__cvta_generic_to_shared(smem));
  return static_cast<u64>((addr & 0x3ffffu) >> 4) | (static_cast<u64>(1) << 16) |
         (static_cast<u64>(1024 >> 4) << 32) | (static_cast<u64>(1) << 62);
}
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
__device__ __forceinline__ u32 smem_addr(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void mbar_init(u64* bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
/// Release-arrive: this thread's prior writes are visible to whoever completes a wait on the phase.
__device__ __forceinline__ void mbar_arrive(u64* bar) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(smem_addr(bar)) : "memory");
}
/// Waits until the phase with `parity` has completed (acquire).
__device__ __forceinline__ void mbar_wait(u64* bar, u32 parity) {
  asm volatile(
      "{\n.reg .pred done;\nWAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

/// Makes mbarrier initialisation visible to the async proxy (TMA completions) before first use.
__device__ __forceinline__ void fence_barrier_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
/// Arrives once and adds `bytes` to the transaction count the phase waits for.
__device__ __forceinline__ void mbar_arrive_expect_tx(u64* bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
/// TMA: copies the box at (inner, outer) of `map` to shared memory and completes its bytes on `bar`.
/// Fetches a tensor map into the TMA unit's descriptor cache ahead of the first copy that names it.
__device__ __forceinline__ void prefetch_tensormap(const TensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<u64>(map)) : "memory");
}
__device__ __forceinline__ void tma_load_2d(void* smem, const TensorMap* map, int inner, int outer, u64* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          smem_addr(smem)),
      "l"(reinterpret_cast<u64>(map)), "r"(inner), "r"(outer), "r"(smem_addr(bar))
      : "memory");
}

/// Thread-block clusters (sm_90): this CTA's position in its cluster (rank = x + y * cluster width), and a
/// barrier over every thread of every CTA.
__device__ __forceinline__ u32 cluster_ctaid_x() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctaid.x;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ u32 cluster_ctaid_y() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctaid.y;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
/// Arrives on the mbarrier at the same shared-memory offset in CTA `rank` of the cluster.
// NOTE: CTA-scope release (CUTLASS's ClusterBarrier::arrive): a consumer only signals that it has finished
// reading a stage. .release.cluster put a GPU-wide MEMBAR before every arrive (2x slower main loop).
__device__ __forceinline__ void mbar_arrive_cluster(u64* bar, u32 rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_addr(bar)),
      "r"(rank)
      : "memory");
}
/// TMA multicast: the box lands at the same offset in every CTA of `mask` and completes its bytes on the
/// mbarrier at `bar`'s offset in each of them.
__device__ __forceinline__ void tma_load_2d_multicast(void* smem, const TensorMap* map, int inner, int outer, u64* bar,
                                                      u16 mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, "
      "%3}], [%4], %5;\n" ::"r"(smem_addr(smem)),
      "l"(reinterpret_cast<u64>(map)), "r"(inner), "r"(outer), "r"(smem_addr(bar)), "h"(mask)
      : "memory");
}

/// A release/acquire fence at GPU scope (lighter than fence.sc, which __threadfence is).
__device__ __forceinline__ void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;\n" ::: "memory"); }
/// Barrier `id` (1..15) over the first `threads` threads of the CTA (a subset of warps, e.g. the consumers).
__device__ __forceinline__ void bar_sync_named(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/// Keeps the compiler from moving accumulator accesses across the asynchronous MMA.
template <int kN>
__device__ __forceinline__ void fence_operands(float (&d)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

#endif

}  // namespace tt
