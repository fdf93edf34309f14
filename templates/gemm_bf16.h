// bf16 GEMM, C[m,n] = A[m,k] * B[n,k]^T (torch linear / AITER tgemm layout), fp32 accumulation, bf16 out.
// One template for every config: block tile, warp tile, K stages, math path, vector width, index type.
// Split-K is a run-time argument: each split writes fp32 partials, and the last CTA of a tile to arrive
// (a per-tile counter it resets) sums them, so one launch serves every split count.
#pragma once
#include "tt_async.h"

namespace tt {

struct GemmArgs {
  const u16* a;       // [m, k] row-major bf16
  const u16* b;       // [n, k] row-major bf16
  u16* c;             // [m, n] row-major bf16
  float* workspace;   // [splits, m, n] fp32 partials; unused when splits == 1
  u32* counters;      // one per output tile; zero between launches
  int m, n, k;
  int splits;
  int k_per_split;    // a multiple of kBlockK
};

/// Threads of a config: a warp per warp tile; for wgmma (kMath 2) a warpgroup (128 threads) per 64 rows;
/// for warp-specialized wgmma (kMath 3) one more warpgroup, the producer that only copies.
#define TT_GEMM_THREADS(kMath, kBlockM, kBlockN, kWarpM, kWarpN)                     \
  ((kMath) >= 2 ? ((kBlockM) / 64) * 128 + ((kMath) == 3 ? 128 : 0)                 \
                : ((kBlockM) / (kWarpM)) * ((kBlockN) / (kWarpN)) * 32)

template <int kBlockM, int kBlockN, int kBlockK, int kWarpM, int kWarpN, int kStages, int kMath, int kVec>
struct GemmShape {
  static constexpr int kWarpsM = kBlockM / kWarpM;
  static constexpr int kWarpsN = kBlockN / kWarpN;
  static constexpr int kThreads = TT_GEMM_THREADS(kMath, kBlockM, kBlockN, kWarpM, kWarpN);
  // NOTE: a 16-byte row pad keeps ldmatrix free of bank conflicts; wgmma configs (whose portable
  // fallback shares their shared-memory budget) stay unpadded.
  static constexpr int kLd = kBlockK + (kMath >= 2 ? 0 : 8);
  static constexpr int kStageElems = (kBlockM + kBlockN) * kLd;
  static constexpr int kChunksPerRow = kBlockK / kVec;
  // Portable (SIMT) path: each thread owns a kTM x kTN micro-tile, strided across the block tile.
  // NOTE: 6 columns per thread for 192-wide tiles, so their 32 thread columns divide the block.
  static constexpr int kTN = kBlockN % 3 == 0 ? 6 : 4;
  static constexpr int kComputeThreads = kMath == 3 ? kThreads - 128 : kThreads;  // the producer only copies
  static constexpr int kThreadsN = (kBlockN / kTN) < kComputeThreads ? (kBlockN / kTN) : kComputeThreads;
  static constexpr int kThreadsM = kComputeThreads / kThreadsN;
  static constexpr int kTM = kBlockM / kThreadsM;
  static constexpr int kTNEff = kBlockN / kThreadsN;
  static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0, "warp tile must divide block tile");
  static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0, "warp tile is made of 16x16 mma tiles");
  static_assert(kBlockK % 16 == 0 && kBlockK % kVec == 0, "block K");
  static_assert(kVec == 8 || kVec == 4, "vector width: 8 (16 B) or 4 (8 B) elements");
  static_assert(kMath < 2 || (kBlockK % 64 == 0 && kVec == 8 && kWarpM == 64 && kWarpN == kBlockN &&
                               kStages >= 3 && (kBlockN == 64 || kBlockN == 128 || kBlockN == 192 || kBlockN == 256)),
                "wgmma: 128-byte swizzled K blocks of 64, 16-byte copies, >= 3 stages, a warpgroup per 64 x block_n");
  static_assert((kMath >= 2 && TT_HAS_WGMMA) || (kThreadsM * kThreadsN == kComputeThreads && kThreadsM * kTM == kBlockM),
                "SIMT thread layout");
};

#if TT_HAS_MMA_SM80
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const u32 (&a)[4], u32 b0, u32 b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
#endif

#if TT_HAS_WGMMA
// Generated once (m64nNk16, bf16 in, fp32 accumulate, A and B K-major from shared memory).
__device__ __forceinline__ void wgmma_m64n64k16(float (&d)[32], u64 desc_a, u64 desc_b) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        , "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        , "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
        , "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], u64 desc_a, u64 desc_b) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        , "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        , "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
        , "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        , "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
        , "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
        , "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
        , "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n192k16(float (&d)[96], u64 desc_a, u64 desc_b) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %98, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
      "}, %96, %97, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        , "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        , "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
        , "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        , "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
        , "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
        , "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
        , "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        , "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71])
        , "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79])
        , "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
        , "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], u64 desc_a, u64 desc_b) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        , "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        , "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
        , "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        , "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
        , "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
        , "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
        , "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        , "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71])
        , "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79])
        , "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
        , "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
        , "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103])
        , "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111])
        , "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119])
        , "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}
#endif

/// Stores two horizontally adjacent results: bf16 to C, or fp32 partials to `partial` (split-K).
template <typename Index>
__device__ __forceinline__ void store_pair(const GemmArgs& p, float* partial, int row, int col, float v0, float v1) {
  if (row >= p.m || col >= p.n) return;
  const Index off = static_cast<Index>(row) * static_cast<Index>(p.n) + static_cast<Index>(col);
  const bool both = col + 1 < p.n;
  const bool aligned = (p.n & 1) == 0;
  if (partial) {
    if (both && aligned) {
      float* q = partial + off;
      q[0] = v0;
      q[1] = v1;
    } else {
      partial[off] = v0;
      if (both) partial[off + 1] = v1;
    }
  } else if (both && aligned) {
    *reinterpret_cast<u32*>(p.c + off) = pack_bf16x2(v0, v1);
  } else {
    p.c[off] = f32_to_bf16(v0);
    if (both) p.c[off + 1] = f32_to_bf16(v1);
  }
}

/// Split-K: publishes this CTA's partials and counts arrivals on the tile's counter; the last CTA of
/// the tile to arrive sums every split's partials into C and resets the counter for the next launch.
template <int kTileM, int kTileN, int kThreads, typename Index>
__device__ __forceinline__ void splitk_finish(const GemmArgs& p, int tile, int bm0, int bn0, int tid) {
  __shared__ u32 s_is_last;
  fence_device();
  sync_block();
  if (tid == 0) {
    const u32 arrived = atomic_add(p.counters + tile, 1u);
    s_is_last = arrived == static_cast<u32>(p.splits - 1);
    if (s_is_last) p.counters[tile] = 0u;  // every split has arrived: reset for the next launch
  }
  sync_block();
  if (!s_is_last) return;
  fence_device();
  const Index plane = static_cast<Index>(p.m) * static_cast<Index>(p.n);
  const volatile float* ws = p.workspace;  // NOTE: volatile: other CTAs' partials, never from a stale L1
  for (int e = tid; e < kTileM * kTileN; e += kThreads) {
    const int row = bm0 + e / kTileN, col = bn0 + e % kTileN;
    if (row >= p.m || col >= p.n) continue;
    const Index off = static_cast<Index>(row) * static_cast<Index>(p.n) + static_cast<Index>(col);
    float sum = 0.f;
    for (int s = 0; s < p.splits; ++s) sum += ws[static_cast<Index>(s) * plane + off];
    p.c[off] = f32_to_bf16(sum);
  }
}

template <int kBlockM, int kBlockN, int kBlockK, int kWarpM, int kWarpN, int kStages, int kMath, int kVec,
          typename Index>
__global__ void __launch_bounds__(TT_GEMM_THREADS(kMath, kBlockM, kBlockN, kWarpM, kWarpN))
gemm_bf16_tn(GemmArgs p) {
  using S = GemmShape<kBlockM, kBlockN, kBlockK, kWarpM, kWarpN, kStages, kMath, kVec>;
  constexpr int kThreads = S::kThreads;
  constexpr int kLd = S::kLd;
  extern __shared__ u32x4 tt_dynamic_smem[];
  u16* const smem = reinterpret_cast<u16*>(tt_dynamic_smem);

  const int tid = static_cast<int>(thread_x());
  const int tiles_n = (p.n + kBlockN - 1) / kBlockN;
  const int bn0 = static_cast<int>(block_x()) * kBlockN;
  const int bm0 = static_cast<int>(block_y()) * kBlockM;
  const int split = static_cast<int>(block_z());
  const int k_begin = split * p.k_per_split;
  const int k_end = imin(p.k, k_begin + p.k_per_split);
  const int k_tiles = k_end > k_begin ? (k_end - k_begin + kBlockK - 1) / kBlockK : 0;

  auto load_stage = [&](int stage, int k0) {
    u16* sa = smem + stage * S::kStageElems;
    u16* sb = sa + kBlockM * kLd;
    constexpr int kChunksA = kBlockM * S::kChunksPerRow;
    constexpr int kChunksB = kBlockN * S::kChunksPerRow;
#pragma unroll
    for (int i = 0; i < (kChunksA + kThreads - 1) / kThreads; ++i) {
      const int c = tid + i * kThreads;
      if (kChunksA % kThreads == 0 || c < kChunksA) {
        const int row = c / S::kChunksPerRow, col = (c % S::kChunksPerRow) * kVec;
        const bool valid = bm0 + row < p.m && k0 + col < k_end;
        const u16* g = valid ? p.a + (static_cast<Index>(bm0 + row) * p.k + (k0 + col)) : p.a;
        copy_async<kVec * 2>(sa + row * kLd + col, g, valid);
      }
    }
#pragma unroll
    for (int i = 0; i < (kChunksB + kThreads - 1) / kThreads; ++i) {
      const int c = tid + i * kThreads;
      if (kChunksB % kThreads == 0 || c < kChunksB) {
        const int row = c / S::kChunksPerRow, col = (c % S::kChunksPerRow) * kVec;
        const bool valid = bn0 + row < p.n && k0 + col < k_end;
        const u16* g = valid ? p.b + (static_cast<Index>(bn0 + row) * p.k + (k0 + col)) : p.b;
        copy_async<kVec * 2>(sb + row * kLd + col, g, valid);
      }
    }
  };

  // Software pipeline: kStages - 1 tiles in flight ahead of the one being multiplied. (The wgmma path
  // keeps its own, swizzled, layout.)
  constexpr bool kSwizzled = kMath >= 2 && TT_HAS_WGMMA;
  if constexpr (!kSwizzled) {
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < k_tiles) load_stage(s, k_begin + s * kBlockK);
      copy_commit();
    }
  }

  float* partial = nullptr;
  if (p.splits > 1)
    partial = p.workspace + static_cast<Index>(split) * static_cast<Index>(p.m) * static_cast<Index>(p.n);

#if TT_HAS_WGMMA
  if constexpr (kMath >= 2) {
    // Tiles in 128-byte swizzled rows (16-byte chunk c of row r stored at chunk c ^ (r % 8)), the layout
    // the wgmma descriptors name, one such block per 64 of K; stage bases 1024-byte aligned (the host
    // adds 1 KiB of slack).
    constexpr int kRowChunks = kBlockK / 8;
    constexpr int kStageBytes = (kBlockM + kBlockN) * kBlockK * 2;
    u8* const base = reinterpret_cast<u8*>((reinterpret_cast<u64>(tt_dynamic_smem) + 1023) & ~static_cast<u64>(1023));
    // Copies stage `stage` with the threads [t0, t0 + kCopiers): all of them, or the producer warpgroup.
    constexpr int kCopiers = kMath == 3 ? 128 : kThreads;
    const int t0 = kMath == 3 ? tid - (kThreads - 128) : tid;
    auto load_swizzled = [&](int stage, int k0) {
      u8* sa = base + stage * kStageBytes;
      u8* sb = sa + kBlockM * kBlockK * 2;
#pragma unroll
      for (int i = 0; i < (kBlockM * kRowChunks + kCopiers - 1) / kCopiers; ++i) {
        const int c = t0 + i * kCopiers;
        if ((kBlockM * kRowChunks) % kCopiers == 0 || c < kBlockM * kRowChunks) {
          const int row = c / kRowChunks, ch = c % kRowChunks;
          const bool valid = bm0 + row < p.m && k0 + ch * 8 < k_end;
          const u16* g = valid ? p.a + (static_cast<Index>(bm0 + row) * p.k + (k0 + ch * 8)) : p.a;
          copy_async<16>(sa + (ch / 8) * (kBlockM * 128) + row * 128 + (((ch % 8) ^ (row & 7)) << 4), g, valid);
        }
      }
#pragma unroll
      for (int i = 0; i < (kBlockN * kRowChunks + kCopiers - 1) / kCopiers; ++i) {
        const int c = t0 + i * kCopiers;
        if ((kBlockN * kRowChunks) % kCopiers == 0 || c < kBlockN * kRowChunks) {
          const int row = c / kRowChunks, ch = c % kRowChunks;
          const bool valid = bn0 + row < p.n && k0 + ch * 8 < k_end;
          const u16* g = valid ? p.b + (static_cast<Index>(bn0 + row) * p.k + (k0 + ch * 8)) : p.b;
          copy_async<16>(sb + (ch / 8) * (kBlockN * 128) + row * 128 + (((ch % 8) ^ (row & 7)) << 4), g, valid);
        }
      }
    };
    const int wg = tid / 128;
    float acc[kBlockN / 2];
#pragma unroll
    for (int i = 0; i < kBlockN / 2; ++i) acc[i] = 0.f;
    // The MMAs of one K tile: k16 step kk reads swizzle block kk / 4, +32 bytes (2 descriptor units) per
    // step inside it.
    auto mma_tile = [&](int stage) {
      const u8* sa = base + stage * kStageBytes;
      const u8* sb = sa + kBlockM * kBlockK * 2;
      fence_operands(acc);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kBlockK / 16; ++kk) {
        const u64 da = wgmma_desc(sa + (kk / 4) * (kBlockM * 128) + wg * 64 * 128) + 2 * (kk % 4);
        const u64 db = wgmma_desc(sb + (kk / 4) * (kBlockN * 128)) + 2 * (kk % 4);
        if constexpr (kBlockN == 64) wgmma_m64n64k16(acc, da, db);
        else if constexpr (kBlockN == 128) wgmma_m64n128k16(acc, da, db);
        else if constexpr (kBlockN == 192) wgmma_m64n192k16(acc, da, db);
        else wgmma_m64n256k16(acc, da, db);
      }
      wgmma_commit();
      wgmma_wait<1>();  // one group in flight: the MMAs of the previous tile are done
      fence_operands(acc);
    };
    if constexpr (kMath == 2) {
      // All warps copy and multiply. Loads run kStages - 2 tiles ahead; the stage refilled at step kt
      // last fed the MMAs of step kt - 2, which every warpgroup has waited for before the barrier.
      constexpr int kAhead = kStages - 2;
#pragma unroll
      for (int s = 0; s < kAhead; ++s) {
        if (s < k_tiles) load_swizzled(s, k_begin + s * kBlockK);
        copy_commit();
      }
      for (int kt = 0; kt < k_tiles; ++kt) {
        copy_wait<kAhead - 1>();
        fence_proxy_async();  // cp.async wrote through the generic proxy; wgmma reads through the async one
        sync_block();
        const int next = kt + kAhead;
        if (next < k_tiles) load_swizzled(next % kStages, k_begin + next * kBlockK);
        copy_commit();
        mma_tile(kt % kStages);
      }
    } else {
      // Warp-specialized: the last warpgroup copies, the others multiply; no block-wide barrier in the
      // loop. full[s]: the producer's 128 threads release stage s once their copies landed (each waits
      // for its own copies and fences them into the async proxy first). empty[s]: each consumer
      // warpgroup releases stage s once the MMAs that read it are done.
      constexpr int kConsumers = kBlockM / 64;
      constexpr int kLag = kStages - 2;  // tiles the producer keeps in flight before releasing one
      __shared__ u64 full_bar[kStages], empty_bar[kStages];
      if (tid == 0)
        for (int s = 0; s < kStages; ++s) {
          mbar_init(&full_bar[s], 128);
          mbar_init(&empty_bar[s], kConsumers);
        }
      sync_block();
      if (wg == kConsumers) {
        for (int kt = 0; kt < k_tiles; ++kt) {
          const int s = kt % kStages;
          if (kt >= kStages) mbar_wait(&empty_bar[s], ((kt / kStages) - 1) & 1);
          load_swizzled(s, k_begin + kt * kBlockK);
          copy_commit();
          if (kt >= kLag) {
            copy_wait<kLag>();
            fence_proxy_async();
            mbar_arrive(&full_bar[(kt - kLag) % kStages]);
          }
        }
        copy_wait<0>();
        fence_proxy_async();
        for (int kt = k_tiles - kLag > 0 ? k_tiles - kLag : 0; kt < k_tiles; ++kt) mbar_arrive(&full_bar[kt % kStages]);
        return;  // split-K is not offered with warp specialization (host constraint): nothing else to do
      } else {
        for (int kt = 0; kt < k_tiles; ++kt) {
          mbar_wait(&full_bar[kt % kStages], (kt / kStages) & 1);
          mma_tile(kt % kStages);
          if (kt > 0 && tid % 128 == 0) mbar_arrive(&empty_bar[(kt - 1) % kStages]);
        }
      }
    }
    wgmma_wait<0>();
    fence_operands(acc);
    if (kMath == 2 || wg < kBlockM / 64) {
    const int warp = (tid % 128) / 32, lane = tid % 32;
    const int row = bm0 + wg * 64 + warp * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j) {
      const int col = bn0 + j * 8 + (lane % 4) * 2;
      store_pair<Index>(p, partial, row, col, acc[j * 4 + 0], acc[j * 4 + 1]);
      store_pair<Index>(p, partial, row + 8, col, acc[j * 4 + 2], acc[j * 4 + 3]);
    }
    }
  } else
#endif
#if TT_HAS_MMA_SM80
  if constexpr (kMath == 1) {
    constexpr int kMmaM = kWarpM / 16, kMmaN = kWarpN / 8;
    const int warp = tid / 32, lane = tid % 32;
    const int warp_m0 = (warp / S::kWarpsN) * kWarpM;
    const int warp_n0 = (warp % S::kWarpsN) * kWarpN;
    float acc[kMmaM][kMmaN][4];
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int j = 0; j < kMmaN; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

    for (int kt = 0; kt < k_tiles; ++kt) {
      copy_wait<kStages - 2>();
      sync_block();
      const int next = kt + kStages - 1;
      if (next < k_tiles) load_stage(next % kStages, k_begin + next * kBlockK);
      copy_commit();
      const u16* sa = smem + (kt % kStages) * S::kStageElems;
      const u16* sb = sa + kBlockM * kLd;
#pragma unroll
      for (int kk = 0; kk < kBlockK; kk += 16) {
        u32 af[kMmaM][4];
        u32 bf[kMmaN][2];
#pragma unroll
        for (int i = 0; i < kMmaM; ++i)
          ldmatrix_x4(af[i], sa + (warp_m0 + i * 16 + (lane % 16)) * kLd + kk + (lane / 16) * 8);
#pragma unroll
        for (int j = 0; j < kMmaN / 2; ++j) {
          u32 r[4];
          ldmatrix_x4(r, sb + (warp_n0 + j * 16 + (lane % 8) + (lane / 16) * 8) * kLd + kk + ((lane / 8) % 2) * 8);
          bf[2 * j][0] = r[0];
          bf[2 * j][1] = r[1];
          bf[2 * j + 1][0] = r[2];
          bf[2 * j + 1][1] = r[3];
        }
#pragma unroll
        for (int i = 0; i < kMmaM; ++i)
#pragma unroll
          for (int j = 0; j < kMmaN; ++j) mma_bf16_16816(acc[i][j], af[i], bf[j][0], bf[j][1]);
      }
    }
    copy_wait<0>();

#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int j = 0; j < kMmaN; ++j) {
        const int row = bm0 + warp_m0 + i * 16 + lane / 4;
        const int col = bn0 + warp_n0 + j * 8 + (lane % 4) * 2;
        store_pair<Index>(p, partial, row, col, acc[i][j][0], acc[i][j][1]);
        store_pair<Index>(p, partial, row + 8, col, acc[i][j][2], acc[i][j][3]);
      }
  } else
#endif
  {
    // Portable path (AMD targets, and kMath == 0 everywhere): fp32 FMA on bf16 tiles in shared memory.
    constexpr int kTM = S::kTM, kTN = S::kTNEff;
    const bool computes = tid < S::kComputeThreads;
    const int tx = tid % S::kThreadsN, ty = tid / S::kThreadsN;
    float acc[kTM][kTN];
#pragma unroll
    for (int i = 0; i < kTM; ++i)
#pragma unroll
      for (int j = 0; j < kTN; ++j) acc[i][j] = 0.f;

    for (int kt = 0; kt < k_tiles; ++kt) {
      copy_wait<kStages - 2>();
      sync_block();
      const int next = kt + kStages - 1;
      if (next < k_tiles) load_stage(next % kStages, k_begin + next * kBlockK);
      copy_commit();
      const u16* sa = smem + (kt % kStages) * S::kStageElems;
      const u16* sb = sa + kBlockM * kLd;
      if (!computes) continue;
#pragma unroll 4
      for (int kk = 0; kk < kBlockK; ++kk) {
        float a[kTM], b[kTN];
#pragma unroll
        for (int i = 0; i < kTM; ++i) a[i] = bf16_to_f32(sa[(ty + i * S::kThreadsM) * kLd + kk]);
#pragma unroll
        for (int j = 0; j < kTN; ++j) b[j] = bf16_to_f32(sb[(tx + j * S::kThreadsN) * kLd + kk]);
#pragma unroll
        for (int i = 0; i < kTM; ++i)
#pragma unroll
          for (int j = 0; j < kTN; ++j) acc[i][j] += a[i] * b[j];
      }
    }
    copy_wait<0>();
#pragma unroll
    for (int i = 0; i < kTM; ++i)
#pragma unroll
      for (int j = 0; j < kTN; ++j) {
        const int row = bm0 + ty + i * S::kThreadsM, col = bn0 + tx + j * S::kThreadsN;
        if (computes && row < p.m && col < p.n) {
          const Index off = static_cast<Index>(row) * static_cast<Index>(p.n) + static_cast<Index>(col);
          if (partial) partial[off] = acc[i][j];
          else p.c[off] = f32_to_bf16(acc[i][j]);
        }
      }
  }

  if (p.splits > 1) splitk_finish<kBlockM, kBlockN, kThreads, Index>(p, static_cast<int>(block_y()) * tiles_n + static_cast<int>(block_x()), bm0, bn0, tid);
}

/// Arguments of the TMA kernel: the common ones plus a descriptor per operand (boxes of 64 x block rows).
struct GemmTmaArgs {
  GemmArgs p;
  TensorMap a, b;
};

/// sm_90a, warp-specialized with TMA: one producer thread issues a tensor copy per operand and 64 of K
/// into 128-byte swizzled stages (the layout the wgmma descriptors name; out-of-bounds rows and the K tail
/// read as zeros), counted on the stage's mbarrier; one consumer warpgroup per 64 rows x kWarpN columns
/// (two per 64 rows when kWarpN = kBlockN / 2: more MMAs in flight for short tiles) waits for it,
/// multiplies with one MMA group in flight and releases the stage. Every stage can be in flight: no thread
/// waits for its own copies. Split-K as for gemm_bf16_tn (the producer warpgroup joins the epilogue).
template <int kBlockM, int kBlockN, int kBlockK, int kWarpN, int kStages, typename Index>
__global__ void __launch_bounds__((kBlockM / 64) * (kBlockN / kWarpN) * 128 + 128)
gemm_bf16_tma(const TT_GRID_CONSTANT GemmTmaArgs args) {
  constexpr int kConsumersN = kBlockN / kWarpN;
  constexpr int kConsumers = (kBlockM / 64) * kConsumersN;
  constexpr int kThreads = kConsumers * 128 + 128;
  static_assert(kBlockK % 64 == 0 && kStages >= 2 && kBlockM % 64 == 0 && kBlockN % kWarpN == 0 &&
                    (kWarpN == 64 || kWarpN == 128 || kWarpN == 192 || kWarpN == 256),
                "tma: K blocks of 64 (one 128-byte swizzle row), a warpgroup per 64 x warp_n");
  const GemmArgs& p = args.p;
  const int tid = static_cast<int>(thread_x());
  const int tiles_n = (p.n + kBlockN - 1) / kBlockN;
  const int bn0 = static_cast<int>(block_x()) * kBlockN;
  const int bm0 = static_cast<int>(block_y()) * kBlockM;
  const int split = static_cast<int>(block_z());
  float* partial = p.splits > 1 ? p.workspace + static_cast<Index>(split) * static_cast<Index>(p.m) * static_cast<Index>(p.n) : nullptr;
#if TT_HAS_WGMMA
  extern __shared__ u32x4 tt_dynamic_smem[];
  constexpr int kStageBytes = (kBlockM + kBlockN) * kBlockK * 2;
  __shared__ u64 full_bar[kStages], empty_bar[kStages];
  u8* const base = reinterpret_cast<u8*>((reinterpret_cast<u64>(tt_dynamic_smem) + 1023) & ~static_cast<u64>(1023));
  const int k_begin = split * p.k_per_split;
  const int k_end = imin(p.k, k_begin + p.k_per_split);
  const int k_tiles = k_end > k_begin ? (k_end - k_begin + kBlockK - 1) / kBlockK : 0;
  const int wg = tid / 128, wg_m = wg / kConsumersN, wg_n = wg % kConsumersN;
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full_bar[s], 1);
      mbar_init(&empty_bar[s], kConsumers);
    }
    fence_barrier_init();
  }
  sync_block();
  float acc[kWarpN / 2];
#pragma unroll
  for (int i = 0; i < kWarpN / 2; ++i) acc[i] = 0.f;
  if (wg == kConsumers) {
    if (tid == kConsumers * 128) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % kStages;
        if (kt >= kStages) mbar_wait(&empty_bar[s], ((kt / kStages) - 1) & 1);
        mbar_arrive_expect_tx(&full_bar[s], kStageBytes);
        u8* sa = base + s * kStageBytes;
        u8* sb = sa + kBlockM * kBlockK * 2;
        const int k0 = k_begin + kt * kBlockK;
#pragma unroll
        for (int kb = 0; kb < kBlockK / 64; ++kb) {
          tma_load_2d(sa + kb * (kBlockM * 128), &args.a, k0 + kb * 64, bm0, &full_bar[s]);
          tma_load_2d(sb + kb * (kBlockN * 128), &args.b, k0 + kb * 64, bn0, &full_bar[s]);
        }
      }
    }
  } else {
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % kStages;
      mbar_wait(&full_bar[s], (kt / kStages) & 1);
      const u8* sa = base + s * kStageBytes;
      const u8* sb = sa + kBlockM * kBlockK * 2;
      fence_operands(acc);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kBlockK / 16; ++kk) {
        const u64 da = wgmma_desc(sa + (kk / 4) * (kBlockM * 128) + wg_m * 64 * 128) + 2 * (kk % 4);
        const u64 db = wgmma_desc(sb + (kk / 4) * (kBlockN * 128) + wg_n * kWarpN * 128) + 2 * (kk % 4);
        if constexpr (kWarpN == 64) wgmma_m64n64k16(acc, da, db);
        else if constexpr (kWarpN == 128) wgmma_m64n128k16(acc, da, db);
        else if constexpr (kWarpN == 192) wgmma_m64n192k16(acc, da, db);
        else wgmma_m64n256k16(acc, da, db);
      }
      wgmma_commit();
      wgmma_wait<1>();  // the MMAs of the previous stage are done: release it to the producer
      fence_operands(acc);
      if (kt > 0 && tid % 128 == 0) mbar_arrive(&empty_bar[(kt - 1) % kStages]);
    }
    wgmma_wait<0>();
    fence_operands(acc);
    const int warp = (tid % 128) / 32, lane = tid % 32;
    const int row = bm0 + wg_m * 64 + warp * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < kWarpN / 8; ++j) {
      const int col = bn0 + wg_n * kWarpN + j * 8 + (lane % 4) * 2;
      store_pair<Index>(p, partial, row, col, acc[j * 4 + 0], acc[j * 4 + 1]);
      store_pair<Index>(p, partial, row + 8, col, acc[j * 4 + 2], acc[j * 4 + 3]);
    }
  }
#else
  // TMA and wgmma exist only on sm_90a (the host never selects this kernel elsewhere); portable bodies
  // compile it everywhere: each thread computes its share of the tile directly.
  for (int e = tid; e < kBlockM * kBlockN; e += kThreads) {
    const int row = bm0 + e / kBlockN, col = bn0 + e % kBlockN;
    if (row >= p.m || col >= p.n) continue;
    const int k_begin = split * p.k_per_split, k_end = imin(p.k, k_begin + p.k_per_split);
    float sum = 0.f;
    for (int k = k_begin; k < k_end; ++k)
      sum += bf16_to_f32(p.a[static_cast<Index>(row) * p.k + k]) * bf16_to_f32(p.b[static_cast<Index>(col) * p.k + k]);
    const Index off = static_cast<Index>(row) * static_cast<Index>(p.n) + static_cast<Index>(col);
    if (partial) partial[off] = sum;
    else p.c[off] = f32_to_bf16(sum);
  }
#endif
  if (p.splits > 1) splitk_finish<kBlockM, kBlockN, kThreads, Index>(p, static_cast<int>(block_y()) * tiles_n + static_cast<int>(block_x()), bm0, bn0, tid);
}

/// Skinny GEMM for M <= kMaxM (decode batches), bound by reading B once: each warp owns kWarpN columns of
/// its split of K, streams their B rows and A's (few, L1-resident) rows with 16-byte loads, 8 elements per
/// lane and kUnroll steps of 256 in flight, then reduces across the warp with shuffles.
template <int kMaxM, int kBlockN, int kWarpN, int kUnroll, typename Index>
__global__ void __launch_bounds__((kBlockN / kWarpN) * 32) gemm_bf16_skinny(GemmArgs p) {
  constexpr int kThreads = (kBlockN / kWarpN) * 32;
  static_assert(kBlockN % kWarpN == 0 && kMaxM * kWarpN <= 128, "skinny tile");
  const int tid = static_cast<int>(thread_x()), warp = tid / 32, lane = tid % 32;
  const int bn0 = static_cast<int>(block_x()) * kBlockN;
  const int n0 = bn0 + warp * kWarpN;
  const int split = static_cast<int>(block_z());
  const int k_begin = split * p.k_per_split;
  const int k_end = imin(p.k, k_begin + p.k_per_split);
  float acc[kMaxM][kWarpN];
#pragma unroll
  for (int m = 0; m < kMaxM; ++m)
#pragma unroll
    for (int j = 0; j < kWarpN; ++j) acc[m][j] = 0.f;
  for (int k0 = k_begin + lane * 8; k0 < k_end; k0 += 256 * kUnroll) {
    u32x4 bv[kUnroll][kWarpN];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int j = 0; j < kWarpN; ++j) {
        const int k = k0 + u * 256;  // K % 8 == 0: a lane's 8 elements are all inside or all outside
        const bool ok = k < k_end && n0 + j < p.n;
        bv[u][j] = ok ? *reinterpret_cast<const u32x4*>(p.b + (static_cast<Index>(n0 + j) * p.k + k)) : u32x4{0, 0, 0, 0};
      }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int k = k0 + u * 256;
#pragma unroll
      for (int m = 0; m < kMaxM; ++m) {
        if (k >= k_end || m >= p.m) continue;
        const u32x4 av = *reinterpret_cast<const u32x4*>(p.a + (static_cast<Index>(m) * p.k + k));
        const u32 aw[4] = {av.x, av.y, av.z, av.w};
#pragma unroll
        for (int j = 0; j < kWarpN; ++j) {
          const u32 bw[4] = {bv[u][j].x, bv[u][j].y, bv[u][j].z, bv[u][j].w};
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            acc[m][j] += bits_f32(aw[e] << 16) * bits_f32(bw[e] << 16);
            acc[m][j] += bits_f32(aw[e] & 0xffff0000u) * bits_f32(bw[e] & 0xffff0000u);
          }
        }
      }
    }
  }
  // Butterfly: every lane ends with the warp's sums; lane e % 32 stores element e.
#pragma unroll
  for (int m = 0; m < kMaxM; ++m)
#pragma unroll
    for (int j = 0; j < kWarpN; ++j)
#pragma unroll
      for (int off = 16; off > 0; off /= 2) acc[m][j] += shfl_xor(acc[m][j], off);
  float* partial = p.splits > 1 ? p.workspace + static_cast<Index>(split) * static_cast<Index>(p.m) * static_cast<Index>(p.n) : nullptr;
#pragma unroll
  for (int m = 0; m < kMaxM; ++m)
#pragma unroll
    for (int j = 0; j < kWarpN; ++j) {
      const int col = n0 + j;
      if ((m * kWarpN + j) % 32 != lane || m >= p.m || col >= p.n) continue;
      const Index off = static_cast<Index>(m) * static_cast<Index>(p.n) + static_cast<Index>(col);
      if (partial) partial[off] = acc[m][j];
      else p.c[off] = f32_to_bf16(acc[m][j]);
    }
  if (p.splits > 1) splitk_finish<kMaxM, kBlockN, kThreads, Index>(p, static_cast<int>(block_x()), 0, bn0, tid);
}

/// Tensor-core skinny GEMM for M <= 16 * kMFrags (decode and small prefill batches), bound by streaming B
/// once: no shared-memory staging. A warp loads, per 32 of K, one 16-byte chunk of B per lane (8 rows x
/// 4 chunks per n8 fragment) and the matching 16-byte chunks of A straight into mma.sync fragments.
/// NOTE: K is permuted inside each 32-wide chunk (lane q's 8 contiguous elements feed logical k 2q, 2q+1,
/// 2q+8, 2q+9 of two k16 steps); A and B share the permutation, so the sum over K is unchanged.
/// The warps of a CTA split its K range (kUnroll chunks of 32 per step each) and reduce through shared
/// memory; split-K across CTAs (run-time) goes through the workspace as for the other kernels.
template <int kMFrags, int kNFrags, int kWarps, int kUnroll, typename Index>
__global__ void __launch_bounds__(kWarps * 32) gemm_bf16_mskinny(GemmArgs p) {
  constexpr int kThreads = kWarps * 32;
  constexpr int kTileM = 16 * kMFrags, kTileN = 8 * kNFrags;
  static_assert(kWarps * kTileM * kTileN * 4 <= 48 * 1024, "mskinny: the cross-warp reduction fits in 48 KiB");
  __shared__ float red[kWarps][kTileM * kTileN];
  const int tid = static_cast<int>(thread_x());
  const int bn0 = static_cast<int>(block_x()) * kTileN;
  const int split = static_cast<int>(block_z());
  const int k_begin = split * p.k_per_split;
  const int k_end = imin(p.k, k_begin + p.k_per_split);
  float* partial = p.splits > 1 ? p.workspace + static_cast<Index>(split) * static_cast<Index>(p.m) * static_cast<Index>(p.n) : nullptr;
#if TT_HAS_MMA_SM80
  const int warp = tid / 32, lane = tid % 32, q = lane % 4, r = lane / 4;
  float acc[kMFrags][kNFrags][4];
#pragma unroll
  for (int i = 0; i < kMFrags; ++i)
#pragma unroll
    for (int j = 0; j < kNFrags; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;
  for (int k0 = k_begin + warp * (32 * kUnroll); k0 < k_end; k0 += kWarps * 32 * kUnroll) {
    u32x4 bv[kUnroll][kNFrags], av[kUnroll][kMFrags][2];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int k = k0 + u * 32 + q * 8;  // K % 8 == 0: a lane's 8 elements are all inside or all outside
#pragma unroll
      for (int j = 0; j < kNFrags; ++j) {
        const int n = bn0 + j * 8 + r;
        const bool ok = k < k_end && n < p.n;
        bv[u][j] = ok ? load_stream16(p.b + (static_cast<Index>(n) * p.k + k)) : u32x4{0, 0, 0, 0};
      }
#pragma unroll
      for (int i = 0; i < kMFrags; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int m = i * 16 + h * 8 + r;
          const bool ok = k < k_end && m < p.m;
          av[u][i][h] = ok ? *reinterpret_cast<const u32x4*>(p.a + (static_cast<Index>(m) * p.k + k)) : u32x4{0, 0, 0, 0};
        }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int i = 0; i < kMFrags; ++i) {
        const u32 a_lo[4] = {av[u][i][0].x, av[u][i][1].x, av[u][i][0].y, av[u][i][1].y};
        const u32 a_hi[4] = {av[u][i][0].z, av[u][i][1].z, av[u][i][0].w, av[u][i][1].w};
#pragma unroll
        for (int j = 0; j < kNFrags; ++j) {
          mma_bf16_16816(acc[i][j], a_lo, bv[u][j].x, bv[u][j].y);
          mma_bf16_16816(acc[i][j], a_hi, bv[u][j].z, bv[u][j].w);
        }
      }
  }
  // Fragment (i, j): rows i*16 + r (+8), columns j*8 + 2q (+1).
#pragma unroll
  for (int i = 0; i < kMFrags; ++i)
#pragma unroll
    for (int j = 0; j < kNFrags; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        red[warp][(i * 16 + r + (e / 2) * 8) * kTileN + j * 8 + 2 * q + (e % 2)] = acc[i][j][e];
#else
  // Portable path: the threads of slot w = tid % kWarps cover every output of the tile for K slice w.
  for (int e = tid / kWarps; e < kTileM * kTileN; e += kThreads / kWarps) {
    const int m = e / kTileN, n = bn0 + e % kTileN;
    float sum = 0.f;
    if (m < p.m && n < p.n)
      for (int k = k_begin + tid % kWarps; k < k_end; k += kWarps)
        sum += bf16_to_f32(p.a[static_cast<Index>(m) * p.k + k]) * bf16_to_f32(p.b[static_cast<Index>(n) * p.k + k]);
    red[tid % kWarps][e] = sum;
  }
#endif
  sync_block();
  for (int e = tid; e < kTileM * kTileN; e += kThreads) {
    const int m = e / kTileN, n = bn0 + e % kTileN;
    if (m >= p.m || n >= p.n) continue;
    float sum = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += red[w][e];
    const Index off = static_cast<Index>(m) * static_cast<Index>(p.n) + static_cast<Index>(n);
    if (partial) partial[off] = sum;
    else p.c[off] = f32_to_bf16(sum);
  }
  if (p.splits > 1) splitk_finish<kTileM, kTileN, kThreads, Index>(p, static_cast<int>(block_x()), 0, bn0, tid);
}

}  // namespace tt
