#include "kernels/gemm_fp8/gemm_fp8.h"

#include <cstdio>
#include <regex>
#include <span>
#include <utility>

#include "kernels/tolerance.h"
#include "tuner/error.h"
#include "tuner/names.h"

namespace tunetab::gemm_fp8 {

namespace {
// clang-format off
const std::pair<Fp8, const char*> kFp8Names[] = {{Fp8::kE4m3fn, "e4m3fn"}, {Fp8::kE4m3fnuz, "e4m3fnuz"}};
const std::pair<Fp8, const char*> kFp8Torch[] = {{Fp8::kE4m3fn, "torch.float8_e4m3fn"},
                                                 {Fp8::kE4m3fnuz, "torch.float8_e4m3fnuz"}};
const std::pair<Math, const char*> kMathNames[] = {
  {Math::kSimt, "simt"}, {Math::kTensorCore, "mma"}, {Math::kWgmma, "wgmma"}, {Math::kTma, "tma"},
  {Math::kSkinny, "skinny"}, {Math::kTma2, "tma2"}, {Math::kTma3, "tma3"}, {Math::kTma4, "tma4"}};
// clang-format on
}  // namespace

std::string to_string(Fp8 f) { return name_of(kFp8Names, f); }
std::string to_torch(Fp8 f) { return name_of(kFp8Torch, f); }

Fp8 fp8_from_string(const std::string& s) {
  for (const auto& [f, name] : kFp8Torch)
    if (s == name) return f;
  return value_named(kFp8Names, s, "fp8 dtype");
}

Fp8 native_fp8(const std::string& arch) {
  return arch == "gfx940" || arch == "gfx941" || arch == "gfx942" ? Fp8::kE4m3fnuz : Fp8::kE4m3fn;
}

double fp8_max(Fp8 f) { return f == Fp8::kE4m3fnuz ? 240.0 : 448.0; }

std::string Problem::key() const {
  return "m=" + std::to_string(m) + ",n=" + std::to_string(n) + ",k=" + std::to_string(k) + ",in=" + to_string(in) +
         ",out=" + gemm::to_string(out) + ",scale=1x128x128";
}

nlohmann::json Problem::to_json() const {
  return {{"m", m}, {"n", n}, {"k", k}, {"in", to_string(in)}, {"out", gemm::to_string(out)}, {"scale", "1x128x128"}};
}

std::string Config::name() const {
  char buf[128];
  const std::string pers = (persistent > 0 ? "_p" + std::to_string(persistent) : "") +
                           (cluster_m > 1 ? "_c" + std::to_string(cluster_m) : "") +
                           (cluster_n > 1 ? "_cn" + std::to_string(cluster_n) : "");
  std::snprintf(buf, sizeof(buf), "m%dn%dk%d_w%dx%d_s%d_%s%s_sk%d", block_m, block_n, block_k, warp_m, warp_n, stages,
                name_of(kMathNames, math).c_str(), pers.c_str(), split_k);
  return buf;
}

Config Config::from_name(const std::string& name) {
  static const std::regex re(
      R"(m(\d+)n(\d+)k(\d+)_w(\d+)x(\d+)_s(\d+)_([a-z][a-z0-9]*)(?:_p(\d+))?(?:_c(\d+))?(?:_cn(\d+))?_sk(\d+))");
  std::smatch mt;
  if (!std::regex_match(name, mt, re))
    throw_input("kernel name '" + name + "' is not a tunetab gemm_fp8_blockscale config (expected " +
                "m<BM>n<BN>k<BK>_w<WM>x<WN>_s<S>_simt|mma|wgmma|tma|tma2|tma3|tma4|skinny[_p<CTAS>][_c<CM>][_cn<CN>]_sk<SK>)");
  Config c;
  c.block_m = std::stoi(mt[1]);
  c.block_n = std::stoi(mt[2]);
  c.block_k = std::stoi(mt[3]);
  c.warp_m = std::stoi(mt[4]);
  c.warp_n = std::stoi(mt[5]);
  c.stages = std::stoi(mt[6]);
  c.math = value_named(kMathNames, mt[7].str(), "gemm_fp8_blockscale math path in '" + name + "'");
  if (mt[8].matched) c.persistent = std::stoi(mt[8]);
  if (mt[9].matched) c.cluster_m = std::stoi(mt[9]);
  if (mt[10].matched) c.cluster_n = std::stoi(mt[10]);
  // One name per config: a cluster of one CTA is written without its suffix (name() does so).
  if ((mt[9].matched && c.cluster_m < 2) || (mt[10].matched && c.cluster_n < 2))
    throw_input("kernel name '" + name + "': a cluster suffix (_c<CM>, _cn<CN>) names 2 or more CTAs");
  c.split_k = std::stoi(mt[11]);
  return c;
}

nlohmann::json Config::to_json() const {
  return {{"block_m", block_m}, {"block_n", block_n}, {"block_k", block_k}, {"warp_m", warp_m}, {"warp_n", warp_n},
          {"stages", stages},   {"math", name_of(kMathNames, math)},      {"split_k", split_k},
          {"persistent", persistent}, {"cluster_m", cluster_m}, {"cluster_n", cluster_n}};
}

namespace {
struct Tile {
  int block_m, block_n, warp_m, warp_n;
};
// clang-format off
// mma.sync m16n8k32: a warp per warp tile; the promotion keeps a second fp32 fragment, so warp tiles stay
// at <= 32 x 32 (64 accumulator registers).
constexpr Tile kMmaTiles[] = {
  // block_m block_n warp_m warp_n      warps
  {  16,      64,     16,    16 },  // 4: small M, weight-bandwidth bound
  {  16,     128,     16,    32 },  // 4
  {  32,     128,     32,    32 },  // 4
  {  64,      64,     32,    32 },  // 4
  {  64,     128,     32,    32 },  // 8
  { 128,      64,     32,    32 },  // 8
  { 128,     128,     32,    32 },  // 16
};
constexpr int kMmaStages[] = {2, 3, 4};
// wgmma (sm_90a): one warpgroup per 64 rows spanning block_n; K tiles of 128 bytes, 128-byte swizzled.
constexpr Tile kWgmmaTiles[] = {
  {  64,      64,     64,    64 },
  {  64,     128,     64,   128 },
  { 128,      64,     64,    64 },
  { 128,     128,     64,   128 },
};
constexpr int kWgmmaStages[] = {3, 4, 5};
// TMA + wgmma (sm_90a): a consumer warpgroup per 64 rows x warp_n, whose thread holds warp_n / 2 registers of
// accumulator and as many of promotion fragment besides ~32 (why_unsupported counts them; past the launch's even
// share the producer gives its registers up, setmaxnreg). warp_n 192, one wgmma 192 wide, needs that with two
// consumers; its tiles cover N with fewer CTAs and fewer promotions per MMA than 128-wide ones.
constexpr Tile kTmaTiles[] = {
  {  64,      64,     64,    64 },
  {  64,     128,     64,    64 },
  {  64,     128,     64,   128 },
  {  64,     192,     64,   192 },
  {  64,     256,     64,   128 },
  { 128,      64,     64,    64 },
  { 128,     128,     64,    64 },
  { 128,     128,     64,   128 },
  { 128,     192,     64,   192 },
};
constexpr int kTmaStages[] = {4, 6, 8};
// tma2: the TMA tiles, a CTA a tile or persistent (its staged output tile in a buffer of its own then). 4 stages
// only: on the H200, 6 was never faster than 4 on any tile at six shapes (docs/performance.md, session 15), and
// its wide tiles' staged output tile does not fit beside 6.
constexpr int kTma2Stages[] = {4};
// tma2 only: two consumer warpgroups of 96 columns, where one 192 wide waits on its own MMAs (ncu at 336 x 3072 x
// 6144, session 23). On the H200 they were 6-10% faster than the exported rows at M 256-512 and 1.2-1.3x slower
// at M >= 1024 (docs/performance.md, session 23).
// 64 x 96 with one consumer (128 registers a thread, ~95 KB of shared memory): two CTAs an SM, for the M 256-336 shapes
// whose tiles do not fill the SMs once (256 x 6144: 256 tiles; 336 x 4096: 258), where the tables stay 4-7% over
// cuBLASLt (docs/performance.md, session 37). The H200 tune of session 39 exported it at 32 rows (M 4..384).
constexpr Tile kTma2ExtraTiles[] = {
  {  64,     192,     64,    96 },
  { 128,      96,     64,    96 },
  {  64,      96,     64,    96 },
};
// tma3: tma2 (split-K 1) with each consumer's promotion overlapped with its own next MMAs (templates/gemm_fp8_tma3.h),
// on tiles of two consumers 96 or 128 wide, and 128 x 64 (its two promotion fragments do not fit 192 wide). On the
// H100 the tiles of one consumer ran 1.1-1.3x slower than tma2's at M 256-336 (their K loops already overlapped
// across CTAs); those of two 0.88-1.06x (docs/performance.md, session 38). The H200 tune of session 39 exported tma3 at
// 53 rows, among them three of the five M <= 336 shapes that were over cuBLASLt (now 0.97-0.99x).
constexpr Tile kTma3Tiles[] = {
  {  64,     192,     64,    96 },
  {  64,     256,     64,   128 },
  { 128,      64,     64,    64 },
  { 128,      96,     64,    96 },
  { 128,     128,     64,   128 },
};
// tma3's consumers hold two stages at a time: 6 stages ran 0.93-0.98x of tma2's 4 at six shapes on the H100
// (m128n96, M 256-2048), 4 and 6 both judged by the tune.
constexpr int kTma3Stages[] = {4, 6};
// tma4: tma3 with each tile's scales copied once by two bulk copies (templates/gemm_fp8_tma4.h), on tma3's tiles and
// stages, a CTA a tile, for ceil(K / 128) a multiple of 4 and K up to kTma4MaxK. On the H100 its 128-row tiles ran
// 0.79-0.94x of tma3's at 336 x 3072 x 6144, and at K 1536-2048 it is within a few percent of tma3 either way
// (docs/performance.md, session 41): the tune judges it per shape. A 64 x 160 tile of two 80-wide consumers (130 CTAs
// at 304 x 4096 where 64 x 192 makes 110) ran 1% faster than 64 x 192 and slower than 128 x 96 there (H100, session 42):
// these K loops are not bound by the SMs' MMA rate; not kept.
// tma4 clusters {cluster_m, cluster_n}: 2 or 4 CTAs along N sharing each A tile, 2 along M sharing each B tile, by TMA
// multicast (templates/gemm_fp8_tma4.h). Their K loops ask fewer bytes of L2 a K block: on the H100 a 128 x 128 K
// block took 0.38 us in clusters of 2 or 4 along N, 0.53-0.61 without (304 x 4096, K 2048 to 4096), and 304 x 4096 x
// 4096 ran 10-20% faster; at K 2048 within a few percent of the plain tile either way (docs/performance.md, session 43).
// 2 x 2 clusters ran up to 2x slower (likely: one CTA an SM, and a cluster of 4 waits for four free SMs of one GPC) and
// are not in the space.
constexpr std::pair<int, int> kTma4Clusters[] = {{1, 2}, {1, 4}, {2, 1}};
constexpr int kTmaSplits[] = {1, 2, 4};
// Persistent TMA grids: one CTA per SM of the H100 and H200 (why_unsupported matches it to the target).
constexpr int kTmaPersistentCtas[] = {132};
// skinny (M <= block_m): block_n columns per block, warp_n per warp, block_k = 512 x unroll.
constexpr int kSkinnyRows[] = {1, 2, 4, 8, 16};
constexpr Tile kSkinnyTiles[] = {
  {   0,       8,      0,     2 },  // 4 warps, unroll 1
  {   0,      16,      0,     4 },  // 4 warps, unroll 1
  {   0,      16,      0,     2 },  // 8 warps, unroll 2
  {   0,      32,      0,     4 },  // 8 warps, unroll 2
};
constexpr int kSkinnyUnroll[] = {1, 1, 2, 2};
constexpr Tile kSimtTiles[] = {
  {  16,      64,     16,    16 },
  {  64,      64,     32,    32 },
};
constexpr int kSplits[] = {1, 2, 3, 4, 6, 8};
// clang-format on
}  // namespace

std::vector<Config> enumerate() {
  std::vector<Config> out;
  auto add = [&](const Tile& t, int block_k, int stages, Math math, int split) {
    out.push_back(Config{t.block_m, t.block_n, block_k, t.warp_m, t.warp_n, stages, math, split});
  };
  for (const Tile& t : kMmaTiles)
    for (int s : kMmaStages)
      for (int sk : kSplits) add(t, 128, s, Math::kTensorCore, sk);
  for (const Tile& t : kWgmmaTiles)
    for (int s : kWgmmaStages)
      for (int sk : kSplits) add(t, 128, s, Math::kWgmma, sk);
  // A TMA kind's tile: a CTA a tile at each split, then the persistent grids (split-K 1).
  auto add_tma = [&](const Tile& t, int stages, Math math, std::span<const int> splits) {
    for (int sk : splits) add(t, 128, stages, math, sk);
    for (int ctas : kTmaPersistentCtas) {
      add(t, 128, stages, math, 1);
      out.back().persistent = ctas;
    }
  };
  for (const Tile& t : kTmaTiles)
    for (int s : kTmaStages) add_tma(t, s, Math::kTma, kTmaSplits);
  for (const auto& tiles : {std::span<const Tile>(kTmaTiles), std::span<const Tile>(kTma2ExtraTiles)})
    for (const Tile& t : tiles)
      for (int s : kTma2Stages) add_tma(t, s, Math::kTma2, kTmaSplits);
  constexpr int kSplitOne[] = {1};
  for (const Tile& t : kTma3Tiles)
    for (int s : kTma3Stages) add_tma(t, s, Math::kTma3, kSplitOne);
  for (const Tile& t : kTma3Tiles)
    for (int s : kTma3Stages) {
      add(t, 128, s, Math::kTma4, 1);
      for (const auto& [cm, cn] : kTma4Clusters) {
        add(t, 128, s, Math::kTma4, 1);
        out.back().cluster_m = cm;
        out.back().cluster_n = cn;
      }
    }
  for (int rows : kSkinnyRows)
    for (std::size_t i = 0; i < std::size(kSkinnyTiles); ++i)
      for (int sk : kSplits)
        add(Tile{rows, kSkinnyTiles[i].block_n, rows, kSkinnyTiles[i].warp_n}, 512 * kSkinnyUnroll[i], 1, Math::kSkinny, sk);
  for (const Tile& t : kSimtTiles)
    for (int sk : {1, 2, 4}) add(t, 128, 2, Math::kSimt, sk);
  return out;
}

static std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::int64_t k_per_split(const Problem& p, const Config& c) {
  return ceil_div(ceil_div(p.k, c.split_k), kScaleBlock) * kScaleBlock;
}

/// The sm_XX number of an NVIDIA arch ("sm_90a" -> 90), 0 for others.
static int sm_version(const std::string& arch) {
  return arch.rfind("sm_", 0) == 0 ? std::atoi(arch.c_str() + 3) : 0;
}

std::optional<std::string> why_unsupported(const Problem& p, const Config& c, const Target& t) {
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return "M, N and K must be positive";
  if (p.out != gemm::DType::kBf16) return "output must be bf16 (got " + gemm::to_string(p.out) + ")";
  if (p.m > 0x7fffffff || p.n > 0x7fffffff || p.k > 0x7fffffff) return "M, N and K must each fit in int32";
  if (p.k % 16 != 0) return "K (" + std::to_string(p.k) + ") must be a multiple of 16 (16-byte fp8 row vectors)";
  const bool tma = c.tma();
  if (tma && (!t.nvidia || t.arch != "sm_90a")) return "TMA exists only on sm_90a (target " + t.arch + ")";
  if (c.math == Math::kTma2 && c.warp_n != 64 && c.warp_n != 96 && c.warp_n != 128 && c.warp_n != 192)
    return "tma2: warp_n 64, 96, 128 or 192 (a warpgroup's columns in at most two 128-column scale blocks)";
  if (c.chunked()) {
    const std::string kind = name_of(kMathNames, c.math);
    if (c.warp_n != 64 && c.warp_n != 96 && c.warp_n != 128)
      return kind + ": warp_n 64, 96 or 128 (two promotion fragments and the accumulator in a consumer's registers)";
    if (c.split_k != 1) return kind + ": split-K 1 only";
  }
  if (c.math == Math::kTma4 && (p.scale_k() % 4 != 0 || p.k > kTma4MaxK))
    return "tma4: K (" + std::to_string(p.k) + ") must have a multiple of 4 scale blocks of 128 (its bulk copies' scale "
           "rows: multiples of 16 bytes) and be at most " + std::to_string(kTma4MaxK) + " (the tile's scales in shared memory)";
  if (c.math == Math::kTma4 && c.persistent > 0) return "tma4: a CTA a tile (no persistent grid)";
  const std::int64_t tiles = ceil_div(p.m, c.block_m) * ceil_div(p.n, c.block_n);
  if (c.cluster_m != 1 || c.cluster_n != 1) {
    const auto one_of = [](int v) { return v == 1 || v == 2 || v == 4; };
    if (c.math != Math::kTma4) return "clusters: tma4 only";
    if (!one_of(c.cluster_m) || !one_of(c.cluster_n) || c.cluster_m * c.cluster_n > 4)
      return "clusters: 1, 2 or 4 CTAs along M and N, at most 4 in all";
    if (c.block_n % c.cluster_m != 0 || (c.block_n / c.cluster_m) % 8 != 0 || c.block_m % c.cluster_n != 0 ||
        (c.block_m / c.cluster_n) % 8 != 0)
      return "clusters: each CTA's slice of a shared tile is whole 8-row swizzle atoms";
    // NOTE: speed rules (coverage checks with no CU count): a cluster along a dimension of one tile only adds padding CTAs.
    if (t.cu_count > 0 && c.cluster_m > 1 && ceil_div(p.m, c.block_m) < c.cluster_m)
      return "clusters along M need at least " + std::to_string(c.cluster_m) + " row tiles";
    if (t.cu_count > 0 && c.cluster_n > 1 && ceil_div(p.n, c.block_n) < c.cluster_n)
      return "clusters along N need at least " + std::to_string(c.cluster_n) + " column tiles";
  }
  if (c.persistent > 0) {
    if (!tma || c.split_k != 1) return "persistent grids are TMA kernels with split-K 1";
    if (t.cu_count > 0 && c.persistent != t.cu_count)
      return "persistent over " + std::to_string(c.persistent) + " CTAs: the target has " + std::to_string(t.cu_count) + " SMs";
    // NOTE: a speed rule, like split-K's (coverage checks with no CU count): with at most one tile per CTA
    // the persistent grid is the plain one.
    if (t.cu_count > 0 && tiles <= c.persistent)
      return "persistent only pays with more output tiles (" + std::to_string(tiles) + ") than CTAs (" +
             std::to_string(c.persistent) + ")";
  }
  if (tma) {
    // NOTE: mirrors tt::Fp8TmaRegs in templates/gemm_fp8_blockscale.h and tt::Fp8Tma3Regs in gemm_fp8_tma3.h.
    const int consumers = (c.block_m / 64) * (c.block_n / c.warp_n);
    const int need = c.chunked() ? 3 * c.warp_n / 2 + 40 : c.warp_n + 32;
    const int have = consumers >= 2 && need > 65536 / c.threads() ? ((65536 - 128 * 40) / (consumers * 128)) / 8 * 8
                                                                  : std::min(255, 65536 / c.threads());
    if (need > have)
      return "TMA: a consumer thread needs about " + std::to_string(need) + " registers, " + std::to_string(c.threads()) +
             " threads have " + std::to_string(have);
  }
  if (c.math == Math::kTma && c.warp_n != 64 && c.warp_n != 128 && c.warp_n != 192)
    return "tma: warp_n 64, 128 or 192 (tt_async.h's wgmma_fp8 widths)";
  if (t.nvidia && p.in == Fp8::kE4m3fnuz && (c.math == Math::kTensorCore || c.math == Math::kWgmma || tma))
    return "e4m3fnuz is an AMD format: NVIDIA fp8 tensor cores take e4m3fn (the simt and skinny paths decode it)";
  if (c.math == Math::kSkinny && p.m > c.block_m)
    return "skinny kernel for M <= " + std::to_string(c.block_m) + " (M = " + std::to_string(p.m) + ")";
  if (ceil_div(p.m, c.block_m * c.cluster_m) * c.cluster_m > 65535) return "M / block_m exceeds the grid's y limit (65535)";
  // NOTE: the dynamic and the static shared memory together: a persistent tma3 128 x 128 with 6 stages asked for the
  // whole 227 KiB dynamically and its launch failed (CUDA_ERROR_INVALID_VALUE, session 38).
  if (t.max_smem_per_block > 0 && c.shared_bytes() + c.static_shared_bytes() > t.max_smem_per_block)
    return "needs " + std::to_string(c.shared_bytes() + c.static_shared_bytes()) + " B of shared memory, target has " +
           std::to_string(t.max_smem_per_block);
  if (c.math == Math::kWgmma && t.nvidia && t.arch != "sm_90a") return "wgmma needs sm_90a (target " + t.arch + ")";
  if (c.math == Math::kTensorCore && t.nvidia && sm_version(t.arch) < 89)
    return "fp8 mma.sync needs sm_89 or later (target " + t.arch + ")";
  if (c.split_k > 1) {
    const std::int64_t kps = k_per_split(p, c);
    if (ceil_div(p.k, kps) != c.split_k)
      return "split-K " + std::to_string(c.split_k) + " leaves empty splits for K=" + std::to_string(p.k) +
             " in whole scale blocks of 128";
    // NOTE: split-K pays while the output tiles fill few waves; beyond that it only adds partial traffic.
    if (t.cu_count > 0 && tiles >= 4 * static_cast<std::int64_t>(t.cu_count))
      return "split-K only pays when output tiles (" + std::to_string(tiles) + ") < 4x CUs (" + std::to_string(t.cu_count) + ")";
    if (t.cu_count > 0 && tiles * c.split_k > 8 * static_cast<std::int64_t>(t.cu_count))
      return "split-K " + std::to_string(c.split_k) + " oversubscribes the CUs";
  }
  return std::nullopt;
}

std::vector<BufferBound> index_bounds(const Problem& p, const Config& c) {
  std::vector<BufferBound> b = {{"A", p.m * p.k - 1},
                                {"B", p.n * p.k - 1},
                                {"C", p.m * p.n - 1},
                                {"a_scale", p.m * p.scale_k() - 1},
                                {"b_scale", p.scale_n() * p.scale_k() - 1}};
  if (const std::size_t ws = workspace_bytes(p, c); ws > 0) b.push_back({"workspace", static_cast<std::int64_t>(ws / 4) - 1});
  return b;
}

std::size_t workspace_bytes(const Problem& p, const Config& c) {
  return c.split_k > 1 ? static_cast<std::size_t>(c.split_k * p.m * p.n) * sizeof(float) : 0;
}

std::vector<KernelSource> kernels(const Config& c, int index_bits) {
  KernelSource k;
  k.family = kFamily;
  k.source = "#include \"gemm_fp8_blockscale.h\"\n";
  k.parameters = "tt::Fp8GemmArgs";
  const std::string index = index_bits == 64 ? "long long" : "int";
  auto list = [](std::initializer_list<int> v) {
    std::string s;
    for (int x : v) s += std::to_string(x) + ", ";
    return s;
  };
  if (c.math == Math::kSkinny) {
    k.name_expression = "tt::gemm_fp8_blockscale_skinny<" + list({c.block_m, c.block_n, c.warp_n, c.block_k / 512}) + index + ">";
  } else if (c.math == Math::kTma2) {
    k.source = "#include \"gemm_fp8_tma2.h\"\n";
    k.parameters = "const tt::Fp8GemmTmaArgs";
    k.name_expression = "tt::gemm_fp8_blockscale_tma2<" + list({c.block_m, c.block_n, c.warp_n, c.stages}) +
                        (c.split_k > 1 ? "true, " : "false, ") + std::to_string(c.persistent) + ", " + index + ">";
  } else if (c.math == Math::kTma3) {
    k.source = "#include \"gemm_fp8_tma3.h\"\n";
    k.parameters = "const tt::Fp8GemmTmaArgs";
    k.name_expression =
        "tt::gemm_fp8_blockscale_tma3<" + list({c.block_m, c.block_n, c.warp_n, c.stages, c.persistent}) + index + ">";
  } else if (c.math == Math::kTma4) {
    k.source = "#include \"gemm_fp8_tma4.h\"\n";
    k.parameters = "const tt::Fp8GemmTma4Args";
    k.name_expression =
        "tt::gemm_fp8_blockscale_tma4<" + list({c.block_m, c.block_n, c.warp_n, c.stages, c.cluster_m, c.cluster_n}) + index + ">";
  } else if (c.math == Math::kTma) {
    k.parameters = "const tt::Fp8GemmTmaArgs";
    k.name_expression =
        "tt::gemm_fp8_blockscale_tma<" + list({c.block_m, c.block_n, c.warp_n, c.stages, c.persistent}) + index + ">";
  } else {
    k.name_expression = "tt::gemm_fp8_blockscale<" +
                        list({c.block_m, c.block_n, c.warp_m, c.warp_n, c.stages, static_cast<int>(c.math)}) + index + ">";
  }
  return {k};
}

Tolerance tolerance(Fp8) {
  return gemm::tolerance_of(kToleranceFp8Block128);
}

}  // namespace tunetab::gemm_fp8
