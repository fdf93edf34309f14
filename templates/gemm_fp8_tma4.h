// FP8 block-scaled GEMM on sm_90a, the fourth TMA kernel (gemm_fp8::Math::kTma4): gemm_fp8_blockscale_tma3 with each
// tile's scales copied once, in two bulk copies, instead of a stage's at a time.
// tma2 and tma3 copy each stage's scales with a producer warp of their own: 128 4-byte cp.async of a_scale rows K / 128
// floats apart, then cp.async.mbarrier.arrive on the stage's full barrier. ncu's source counters of tma3 at 336 x 3072
// x 6144 (H100, docs/bench/2026-12-05-s40/call1) showed that warp as the K loop's critical path: its waits for a free
// stage never blocked (0 of 3024) while the TMA thread's blocked in 2304 of 3024, and every consumer wait for a full
// stage (6912 of 6912) blocked. A TMA box of 4 scale columns x the tile's rows a stage (call 2) made the TMA thread
// the critical path instead (128 rows of 16 bytes beside the operands' 256 of 128), and ran 1.15-1.59x slower at K 2048.
// In AITER's row-major layout a tile's a_scale rows [bm0, bm0 + kBlockM) x K / 128 are one contiguous range, and so
// are its b_scale blocks' rows: the TMA thread copies both with cp.async.bulk at the start of the tile, on a barrier
// of their own, and the consumers wait for it once, before their K loop.
// Limits: scale rows of 16-byte multiples (ceil(K / 128) a multiple of 4; the A and B boxes zero-fill a K tail) and
// K <= kTma4MaxK (the scales' shared memory); a CTA a tile (no persistent grid: a next tile would overwrite the scales
// its consumers still read).
// Clusters (kClusterM x kClusterN > 1): kClusterN CTAs along N (grid x) share each A tile and kClusterM along M (grid
// y) each B tile: each CTA copies its slice of a shared tile to every CTA that shares it (TMA multicast), so L2 sends
// each tile once a cluster, and a stage is refilled only once the consumer warps of every CTA it feeds released it.
// The host pads the grid to whole clusters; a padding CTA loads and shares its slices and stores nothing. The cluster
// barrier is split (arrive after the barriers' init, wait before the first copy to or arrival on a peer), and the TMA
// thread's tail (its last stages released) replaces a barrier at the end (whose .release made every thread wait for
// its output stores): with both, 2-CTA clusters of 128 x 128 at 304 x 4096 x 2048 went from 1.13x the plain tile's
// time to about 1.0x on the H100 (docs/performance.md, session 43).
// NOTE: a header of its own, so that tma2's and tma3's code keys (and the verdicts stored against them) stay. Its
// consumer (but for its scale reads, 16-byte loads of 4 K blocks' scales) and epilogue are tma3's, copied: the change
// that folds tma2 and tma3 (their headers' notes) should make the scale path a template parameter and delete this
// copy. Device-only; no std::.
#pragma once
#include "gemm_fp8_tma3.h"

namespace tt {

/// The largest K tma4's shared memory holds the scales of (64 scale columns a row). NOTE: the host's
/// gemm_fp8::kTma4MaxK mirrors it.
inline constexpr int kTma4MaxK = 8192;

/// tma4's arguments: the TMA kernels' (boxes of the tile's rows, or of a cluster slice's) and A's map again in 64-row
/// boxes, for a tile whose last 64-row half (or more) lies wholly past M: that tile copies A in 64-row boxes and skips
/// the halves past M. NOTE: the host's gemm_fp8 launch mirrors it.
struct Fp8GemmTma4Args {
  Fp8GemmArgs p;
  TensorMap a, b, a64;
};

#if TT_HAS_WGMMA
/// One contiguous copy of `bytes` (a multiple of 16, both addresses 16-byte aligned) to shared memory, completing its
/// bytes on `bar`. NOTE: moe_wgmma2.h's bulk_load; a shared header would change its code keys.
__device__ __forceinline__ void tma4_bulk_load(void* smem, const void* gmem, u32 bytes, u64* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(smem_addr(smem)),
               "l"(gmem), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}

__device__ __forceinline__ int tma4_nonneg(int v) { return v > 0 ? v : 0; }

/// The cluster barrier in two halves (CUTLASS's cluster_arrive_relaxed / cluster_wait): a CTA arrives once its mbarriers
/// are initialised (fence_barrier_init orders them) and waits only before its first copy to, or arrival on, a peer.
/// Not .aligned: the producer warp's lanes wait on different paths.
__device__ __forceinline__ void tma4_cluster_arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed;\n" ::: "memory"); }
__device__ __forceinline__ void tma4_cluster_wait() { asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory"); }

/// Four consecutive scales; ld_scales4 reads them in one 16-byte shared load (p 16-byte aligned).
struct alignas(16) Tma4Scales4 { float v[4]; };
__device__ __forceinline__ Tma4Scales4 ld_scales4(const float* p) { return *reinterpret_cast<const Tma4Scales4*>(p); }

/// tma3's consumer (Tma3Consumer) over gemm_fp8_blockscale_tma4's stages, with the tile's scales in shared memory:
/// a_scale's rows [kBlockM][scale_k] and b_scale's [column block][scale_k], K block kb in column kb.
template <int kBlockM, int kBlockN, int kWarpN, int kStages, int kClusterM, int kClusterN>
struct Tma4Consumer {
  static constexpr int kBlockK = 128, kStageBytes = (kBlockM + kBlockN) * kBlockK, kChunk = 4;
  static constexpr bool kOneBlock = 128 % kWarpN == 0;
  u8* base;
  u64* full_bar;
  u64* empty_bar;
  const float* sa_row0;  // this lane's row r_tile's scales (and r_tile + 8's, 8 rows on)
  const float* sb_lo_row;
  const float* sb_hi_row;
  int scale_k, lane;
  u32 cx, cy;  // this CTA's place in its cluster (0, 0 without one)

  /// Stage s is read: every producer that fills it may refill it. In a cluster those are the producers of this CTA's
  /// cluster row (A's slices) and column (B's), this CTA's own once.
  // NOTE: this release and the producer's multicast masks are gemm_bf16.h's TMA kernel's, copied: sharing them through
  // tt_async.h would re-key every kernel (and the stored verdicts); the next change that re-keys them all should.
  __device__ __forceinline__ void release(int s) const {
    if constexpr (kClusterM * kClusterN == 1) {
      mbar_arrive(&empty_bar[s]);
    } else {
#pragma unroll
      for (u32 q = 0; q < kClusterN; ++q) mbar_arrive_cluster(&empty_bar[s], cy * kClusterN + q);
#pragma unroll
      for (u32 q = 0; q < kClusterM; ++q)
        if (q != cy) mbar_arrive_cluster(&empty_bar[s], cx + q * kClusterN);
    }
  }
  /// Waits for K block u's stage and issues its four MMAs into t (one commit group).
  __device__ __forceinline__ void issue(int u, float (&t)[kWarpN / 2], int wg_m, int wg_n) const {
    const int s = u % kStages;
    mbar_wait(&full_bar[s], (u / kStages) & 1);
    const u8* sa = base + s * kStageBytes;
    const u8* sb = sa + kBlockM * kBlockK;
    fence_operands(t);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {  // k32 step kk: +32 bytes (2 descriptor units) along the swizzled row
      const u64 da = wgmma_desc(sa + wg_m * 64 * 128) + 2 * kk;
      const u64 db = wgmma_desc(sb + wg_n * kWarpN * 128) + 2 * kk;
      wgmma_fp8<kWarpN>(t, da, db, kk);
    }
    wgmma_commit();
  }
  /// Waits for K block u's MMAs (kInFlight: the next block's group stays in flight), releases its stage and
  /// promotes t into acc with that block's scales (sa0 / sa1: rows r_tile / r_tile + 8; sb_lo / sb_hi: the warp's
  /// column blocks).
  template <int kJb, bool kInFlight>
  __device__ __forceinline__ void finish(int u, float sa0, float sa1, float sb_lo, float sb_hi, float (&t)[kWarpN / 2],
                                         float (&acc)[kWarpN / 2]) const {
    const int s = u % kStages;
    if constexpr (kInFlight) wgmma_wait<1>();
    else wgmma_wait<0>();
    fence_operands(t);
    __syncwarp();
    if (lane == 0) release(s);
    fp8_promote<kWarpN, kJb>(acc, t, sa0 * sb_lo, sa1 * sb_lo, sa0 * sb_hi, sa1 * sb_hi);
  }
  /// The tile's k_tiles K blocks from stage use `use` on: chunks of kChunk, each straight-line and ending with
  /// nothing in flight, then the rest one at a time.
  template <int kJb>
  __device__ __forceinline__ void k_loop(float (&acc)[kWarpN / 2], int use, int k_tiles, int wg_m, int wg_n) const {
    float tmp[2][kWarpN / 2];
    int i = 0;
    for (; i + kChunk <= k_tiles; i += kChunk, use += kChunk) {
      // The chunk's scales, a 16-byte load a row (rows and i 16-byte aligned: scale_k and kChunk multiples of 4).
      // a_scale's rows lie scale_k floats apart: single floats put a warp's 8 rows into 2 banks at K 2048 or 6144
      // (4-way conflicts), into 1 at K 4096 or 8192 (8-way).
      const Tma4Scales4 a0 = ld_scales4(sa_row0 + i), a1 = ld_scales4(sa_row0 + 8 * scale_k + i);
      const Tma4Scales4 b_lo = ld_scales4(sb_lo_row + i);
      const Tma4Scales4 b_hi = kOneBlock ? b_lo : ld_scales4(sb_hi_row + i);
      issue(use, tmp[0], wg_m, wg_n);
      issue(use + 1, tmp[1], wg_m, wg_n);
      finish<kJb, true>(use, a0.v[0], a1.v[0], b_lo.v[0], b_hi.v[0], tmp[0], acc);
      issue(use + 2, tmp[0], wg_m, wg_n);
      finish<kJb, true>(use + 1, a0.v[1], a1.v[1], b_lo.v[1], b_hi.v[1], tmp[1], acc);
      issue(use + 3, tmp[1], wg_m, wg_n);
      finish<kJb, true>(use + 2, a0.v[2], a1.v[2], b_lo.v[2], b_hi.v[2], tmp[0], acc);
      finish<kJb, false>(use + 3, a0.v[3], a1.v[3], b_lo.v[3], b_hi.v[3], tmp[1], acc);
    }
    for (; i < k_tiles; ++i, ++use) {
      issue(use, tmp[0], wg_m, wg_n);
      const float sb_lo = sb_lo_row[i], sb_hi = kOneBlock ? sb_lo : sb_hi_row[i];
      finish<kJb, false>(use, sa_row0[i], sa_row0[8 * scale_k + i], sb_lo, sb_hi, tmp[0], acc);
    }
  }
};
#endif

/// sm_90a: gemm_fp8_blockscale_tma3 (a CTA a tile, split-K 1) whose TMA thread first copies the tile's scales in two
/// bulk copies (the header's comment); the producer's other warps idle.
// NOTE: no defaults: ROCm 5.2 hipRTC matches a name expression against the full argument list.
template <int kBlockM, int kBlockN, int kWarpN, int kStages, int kClusterM, int kClusterN, typename Index>
__global__ void TT_FP8_TMA3_BOUNDS((kBlockM / 64) * (kBlockN / kWarpN) * 128 + 128)
gemm_fp8_blockscale_tma4(const TT_GRID_CONSTANT Fp8GemmTma4Args args) {
  constexpr int kConsumersN = kBlockN / kWarpN;
  constexpr int kConsumers = (kBlockM / 64) * kConsumersN;
  [[maybe_unused]] constexpr int kThreads = kConsumers * 128 + 128;  // the portable body's
  constexpr int kBlockK = 128;
  constexpr int kStageBytes = (kBlockM + kBlockN) * kBlockK;
  constexpr int kLdC = kBlockN * 2 + 16;  // bytes per staged output row
  constexpr bool kOneBlock = 128 % kWarpN == 0;  // as tma2's
  using Regs = Fp8Tma3Regs<kConsumers, kWarpN>;
  static_assert(kBlockM % 64 == 0 && kBlockM <= 256 && kBlockN <= 256 && kBlockN % kWarpN == 0 &&
                    (kWarpN == 64 || kWarpN == 96 || kWarpN == 128) && kStages >= 2,
                "fp8 tma4: a warpgroup per 64 x warp_n (64, 96 or 128), one box per operand");
  static_assert(kBlockM * kLdC <= kStages * kStageBytes, "fp8 tma4: the staged output tile fits the stages");
  static_assert(Regs::kRaised == 0 || Regs::kRaised >= Regs::kNeed, "fp8 tma4: the fragments do not fit a consumer's registers");
  constexpr bool kCluster = kClusterM * kClusterN > 1;
  constexpr int kSliceA = kBlockM / kClusterN, kSliceB = kBlockN / kClusterM;  // rows a CTA copies of each shared tile
  static_assert(kSliceA * kClusterN == kBlockM && kSliceB * kClusterM == kBlockN && kSliceA % 8 == 0 && kSliceB % 8 == 0 &&
                    kClusterM * kClusterN <= 8,
                "fp8 tma4: cluster slices of whole 8-row swizzle atoms, at most 8 CTAs");
  const Fp8GemmArgs& p = args.p;
  const GemmArgs& g = p.g;
  const int tid = static_cast<int>(thread_x());
  const int bm0 = static_cast<int>(block_y()) * kBlockM, bn0 = static_cast<int>(block_x()) * kBlockN;
  [[maybe_unused]] const int k_tiles = (g.k + kBlockK - 1) / kBlockK;
#if TT_HAS_WGMMA
  extern __shared__ u32x4 tt_dynamic_smem[];
  __shared__ u64 full_bar[kStages], empty_bar[kStages], scale_bar;
  // The tile's scales (the bulk copies' destinations): a_scale's rows [kBlockM][scale_k], the rows of its (at most
  // kScaleBlocksN) 128-column blocks of b_scale [kScaleBlocksN][scale_k]; rows past M or past N's blocks unwritten
  // (their products are never stored).
  constexpr int kMaxScaleK = kTma4MaxK / 128;
  constexpr int kScaleBlocksN = kBlockN / 128 + 2;
  __shared__ alignas(16) float s_ascale[kBlockM * kMaxScaleK];
  __shared__ alignas(16) float s_bscale[kScaleBlocksN * kMaxScaleK];
  u8* const base = reinterpret_cast<u8*>((reinterpret_cast<u64>(tt_dynamic_smem) + 1023) & ~static_cast<u64>(1023));
  const int wg = tid / 128, wg_m = wg / kConsumersN, wg_n = wg % kConsumersN;
  const int scale_k = p.scale_k;
  const int nb_first = bn0 >> 7, nb_last = (imin(bn0 + kBlockN, g.n) - 1) >> 7;
  // A partial tile (rows past M) with M >= kBlockM moves up to rows [M - kBlockM, M): its box holds no row past M, and
  // its rows above bm0 (the tile before's, computed again) are not stored. Otherwise (M < kBlockM, or a cluster's
  // padding CTA), without a cluster along N, a tile whose last 64-row half (or more) lies wholly past M copies A in
  // 64-row boxes and skips those halves.
  const bool move_up = g.m >= kBlockM && g.m - bm0 > 0 && g.m - bm0 < kBlockM;
  const int am0 = move_up ? g.m - kBlockM : bm0;
  const bool a_halves = kClusterN == 1 && !move_up && g.m - bm0 <= kBlockM - 64;
  // The TMA thread initialises the barriers, so that it may use them before the cluster barrier completes.
  if (tid == kConsumers * 128) {
    prefetch_tensormap(&args.a);
    prefetch_tensormap(&args.b);
    if (a_halves) prefetch_tensormap(&args.a64);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full_bar[s], 1);  // the TMA thread's expect_tx arrival
      mbar_init(&empty_bar[s], kConsumers * 4 * (kClusterM + kClusterN - 1));  // every consumer warp the stage feeds
    }
    mbar_init(&scale_bar, 1);
    fence_barrier_init();
  }
  // NOTE: in a cluster the peers' copies and arrivals target these barriers: every thread arrives on the cluster
  // barrier once they are initialised, and waits on it before its first copy to, or arrival on, a peer.
  if constexpr (kCluster) tma4_cluster_arrive_relaxed();
  else sync_block();
  // This CTA's place in its cluster: rank = cx + cy * kClusterN; its cluster row shares A, its column B.
  const u32 cx = kCluster ? cluster_ctaid_x() : 0u, cy = kCluster ? cluster_ctaid_y() : 0u;
  if (wg == kConsumers) {
    // The producer warpgroup: its first thread issues every copy.
    if constexpr (Regs::kRaised > 0) setmaxnreg_dec<40>();
    if (tid == kConsumers * 128) {
      // A cluster's padding CTA copies no scales past M (rows) or past N's last block (columns); one padded only
      // along N may still copy its rows' A scales and a B block's row that its columns start in.
      const u32 a_bytes = static_cast<u32>(tma4_nonneg(imin(kBlockM, g.m - am0)) * scale_k * 4);
      const u32 b_bytes = static_cast<u32>(tma4_nonneg(nb_last - nb_first + 1) * scale_k * 4);
      mbar_arrive_expect_tx(&scale_bar, a_bytes + b_bytes);
      if (a_bytes > 0) tma4_bulk_load(s_ascale, p.a_scale + static_cast<Index>(am0) * scale_k, a_bytes, &scale_bar);
      if (b_bytes > 0) tma4_bulk_load(s_bscale, p.b_scale + nb_first * scale_k, b_bytes, &scale_bar);
      // In a cluster each CTA copies its slice of the shared tiles to every CTA that shares them (TMA multicast):
      // the whole stage lands in each CTA, peers' slices included.
      if constexpr (kCluster) tma4_cluster_wait();  // the peers' barriers are initialised: copies to them may start
      const int ra = static_cast<int>(cx) * kSliceA, rb = static_cast<int>(cy) * kSliceB;
      const u16 row_mask = static_cast<u16>(((1u << kClusterN) - 1) << (cy * kClusterN));
      u16 column_mask = 0;
#pragma unroll
      for (int j = 0; j < kClusterM; ++j) column_mask |= static_cast<u16>(1u << (cx + j * kClusterN));
      // A tile of zero-filled rows past M was its launch's slowest on the H100 (the last tile row of M 304 in 128-row
      // tiles, 80 of its rows zero-filled: docs/performance.md, session 48). Such a tile moves up (am0) where M allows;
      // where not (a_halves: M < kBlockM, a padding CTA), it copies A in 64-row boxes and not the halves past M. On the
      // H100 moving up beat the zero fill at M 336 and 352 (session 52: tiles of 128 rows, geomean 0.969 and 0.979).
      // NOTE: two loops, not one with a branch per copy: whole tiles keep the one-box loop as it compiled before
      // (one loop for both came with whole tiles 4-14% slower on the H100; split, they time as before: session 50).
      if (a_halves) {
        const int a_boxes = tma4_nonneg((g.m - bm0 + 63) / 64);
        const u32 stage_bytes = static_cast<u32>(kStageBytes - (kBlockM / 64 - a_boxes) * 64 * kBlockK);
        for (int i = 0; i < k_tiles; ++i) {
          const int s = i % kStages;
          if (i >= kStages) mbar_wait(&empty_bar[s], ((i / kStages) - 1) & 1);
          mbar_arrive_expect_tx(&full_bar[s], stage_bytes);
          u8* sa = base + s * kStageBytes;
          u8* sb = sa + kBlockM * kBlockK;
          for (int h = 0; h < a_boxes; ++h) tma_load_2d(sa + h * 64 * kBlockK, &args.a64, i * kBlockK, bm0 + h * 64, &full_bar[s]);
          if constexpr (kClusterM > 1) tma_load_2d_multicast(sb + rb * kBlockK, &args.b, i * kBlockK, bn0 + rb, &full_bar[s], column_mask);
          else tma_load_2d(sb, &args.b, i * kBlockK, bn0, &full_bar[s]);
        }
      } else {
        for (int i = 0; i < k_tiles; ++i) {
          const int s = i % kStages;
          if (i >= kStages) mbar_wait(&empty_bar[s], ((i / kStages) - 1) & 1);
          mbar_arrive_expect_tx(&full_bar[s], kStageBytes);
          u8* sa = base + s * kStageBytes;
          u8* sb = sa + kBlockM * kBlockK;
          if constexpr (kClusterN > 1) tma_load_2d_multicast(sa + ra * kBlockK, &args.a, i * kBlockK, am0 + ra, &full_bar[s], row_mask);
          else tma_load_2d(sa, &args.a, i * kBlockK, am0, &full_bar[s]);
          if constexpr (kClusterM > 1) tma_load_2d_multicast(sb + rb * kBlockK, &args.b, i * kBlockK, bn0 + rb, &full_bar[s], column_mask);
          else tma_load_2d(sb, &args.b, i * kBlockK, bn0, &full_bar[s]);
        }
      }
      // NOTE: in a cluster, the producer's tail (as CUTLASS's): it waits until every stage it filled has been released
      // by the consumers of every CTA it feeds, so no peer's arrival on this CTA's barriers and none of its own copies
      // into a peer are still in flight when this CTA exits; no cluster barrier at the end, whose release would make
      // every thread wait for its output stores.
      if constexpr (kCluster)
        for (int i = k_tiles > kStages ? k_tiles - kStages : 0; i < k_tiles; ++i) mbar_wait(&empty_bar[i % kStages], (i / kStages) & 1);
    } else if constexpr (kCluster) {
      tma4_cluster_wait();
    }
  } else {
    if constexpr (Regs::kRaised > 0) setmaxnreg_inc<Regs::kRaised>();
    const int warp = (tid % 128) / 32, lane = tid % 32;
    const int r_tile = wg_m * 64 + warp * 16 + lane / 4;  // this lane's first row within the tile (and r + 8)
    const int c_wg = wg_n * kWarpN;
    const int n0 = bn0 + c_wg;
    const int nb_lo = imin(n0, g.n - 1) >> 7, nb_hi = imin(n0 + kWarpN - 1, g.n - 1) >> 7;
    const int jb = kOneBlock || nb_hi == nb_lo ? kWarpN / 8 : ((nb_hi << 7) - n0) / 8;  // as tma2's
    float acc[kWarpN / 2];
#pragma unroll
    for (int r = 0; r < kWarpN / 2; ++r) acc[r] = 0.f;
    // A consumer whose columns all lie past N (in a padding CTA: nb_lo may be < nb_first) reads B-block row 0 (perhaps
    // unwritten); its products are never stored.
    const int lo_row = tma4_nonneg(nb_lo - nb_first), hi_row = tma4_nonneg(nb_hi - nb_first);
    const Tma4Consumer<kBlockM, kBlockN, kWarpN, kStages, kClusterM, kClusterN> consumer{base, full_bar, empty_bar,
      s_ascale + r_tile * scale_k, s_bscale + lo_row * scale_k, s_bscale + hi_row * scale_k, scale_k, lane, cx, cy};
    if constexpr (kCluster) tma4_cluster_wait();  // the barriers are initialised (and the peers' too)
    mbar_wait(&scale_bar, 0);
    // NOTE: a warpgroup whose rows all lie past M multiplies A rows the producer did not copy (stale shared memory);
    // its products are never stored. (A loop of its own that only waited and released came with whole tiles 5-15%
    // slower on the H100: docs/performance.md, session 48.)
    if constexpr (kWarpN == 96) {
      if (jb == 4) consumer.template k_loop<4>(acc, 0, k_tiles, wg_m, wg_n);
      else if (jb == 8) consumer.template k_loop<8>(acc, 0, k_tiles, wg_m, wg_n);
      else consumer.template k_loop<kWarpN / 8>(acc, 0, k_tiles, wg_m, wg_n);
    } else {
      consumer.template k_loop<kWarpN / 8>(acc, 0, k_tiles, wg_m, wg_n);
    }
    {
      // tma2's epilogue: the bf16 tile through shared memory (the stages, free after the last K block), out in
      // 16-byte row chunks.
      u8* const out_tile = base;
      bar_sync_named(1, kConsumers * 128);
#pragma unroll
      for (int j = 0; j < kWarpN / 8; ++j) {
        u8* const c0 = out_tile + r_tile * kLdC + (c_wg + j * 8 + (lane % 4) * 2) * 2;
        *reinterpret_cast<u32*>(c0) = pack_bf16x2(acc[j * 4 + 0], acc[j * 4 + 1]);
        *reinterpret_cast<u32*>(c0 + 8 * kLdC) = pack_bf16x2(acc[j * 4 + 2], acc[j * 4 + 3]);
      }
      bar_sync_named(1, kConsumers * 128);
      constexpr int kChunksN = kBlockN / 8;
      const bool vec = (g.n & 7) == 0;  // 16-byte aligned rows
      for (int c = tid; c < kBlockM * kChunksN; c += kConsumers * 128) {
        const int r = c / kChunksN, col = bn0 + (c % kChunksN) * 8, row = am0 + r;
        if (row < bm0 || row >= g.m || col >= g.n) continue;
        const u8* src = out_tile + r * kLdC + (c % kChunksN) * 16;
        u16* dst = g.c + static_cast<Index>(row) * static_cast<Index>(g.n) + static_cast<Index>(col);
        if (vec && col + 8 <= g.n) {
          *reinterpret_cast<u32x4*>(dst) = *reinterpret_cast<const u32x4*>(src);
        } else {
          for (int e = 0; e < 8 && col + e < g.n; ++e) dst[e] = reinterpret_cast<const u16*>(src)[e];
        }
      }
    }
  }
#else
  // As tma2's portable body (the host never selects this kernel off sm_90a): each thread computes its share.
  const u8* const a = reinterpret_cast<const u8*>(g.a);
  const u8* const b = reinterpret_cast<const u8*>(g.b);
  for (int e = tid; e < kBlockM * kBlockN; e += kThreads) {
    const int row = bm0 + e / kBlockN, col = bn0 + e % kBlockN;
    if (row >= g.m || col >= g.n) continue;
    float sum = 0.f;
    for (int k0 = 0; k0 < g.k; k0 += kBlockK) {
      float dot = 0.f;
      for (int k = k0; k < imin(g.k, k0 + kBlockK); ++k)
        dot += fp8_e4m3_to_f32(a[static_cast<Index>(row) * g.k + k], p.fnuz != 0) *
               fp8_e4m3_to_f32(b[static_cast<Index>(col) * g.k + k], p.fnuz != 0);
      sum += dot * (fp8_row_scale<Index>(p, row, k0 >> 7) * fp8_col_scale(p, col, k0 >> 7));
    }
    g.c[static_cast<Index>(row) * static_cast<Index>(g.n) + static_cast<Index>(col)] = f32_to_bf16(sum);
  }
#endif
}

}  // namespace tt
