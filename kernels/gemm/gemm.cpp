#include "kernels/gemm/gemm.h"

#include <cstdio>
#include <regex>
#include <span>

#include "tuner/error.h"

namespace tunetab::gemm {

std::string to_string(DType d) {
  switch (d) {
    case DType::kBf16: return "bf16";
    case DType::kF16: return "f16";
    case DType::kF32: return "f32";
  }
  return "?";
}

std::string to_torch(DType d) {
  switch (d) {
    case DType::kBf16: return "torch.bfloat16";
    case DType::kF16: return "torch.float16";
    case DType::kF32: return "torch.float32";
  }
  return "?";
}

DType dtype_from_string(const std::string& s) {
  if (s == "bf16" || s == "torch.bfloat16") return DType::kBf16;
  if (s == "f16" || s == "fp16" || s == "torch.float16") return DType::kF16;
  if (s == "f32" || s == "fp32" || s == "torch.float32") return DType::kF32;
  throw_input("unknown dtype '" + s + "': expected bf16, f16, f32 or their torch.* names");
}

std::string Problem::key() const {
  return "m=" + std::to_string(m) + ",n=" + std::to_string(n) + ",k=" + std::to_string(k) + ",in=" + to_string(in) +
         ",out=" + to_string(out) + ",bias=" + (bias ? "1" : "0");
}

nlohmann::json Problem::to_json() const {
  return {{"m", m}, {"n", n}, {"k", k}, {"in", to_string(in)}, {"out", to_string(out)}, {"bias", bias}};
}

static const char* math_name(Math m) {
  switch (m) {
    case Math::kSimt: return "simt";
    case Math::kTensorCore: return "mma";
    case Math::kWgmma: return "wgmma";
    case Math::kWgmmaWs: return "wgws";
    case Math::kSkinny: return "skinny";
    case Math::kSkinnyMma: return "mskinny";
    case Math::kTma: return "tma";
  }
  return "?";
}

std::string Config::name() const {
  char buf[128];
  const std::string cluster = (cluster_m > 1 ? "_c" + std::to_string(cluster_m) : "") +
                              (cluster_n > 1 ? "_cn" + std::to_string(cluster_n) : "") + (swap_ab ? "_swap" : "");
  const std::string schedule = streamk_ctas > 0 ? "streamk" + std::to_string(streamk_ctas) : "sk" + std::to_string(split_k);
  std::snprintf(buf, sizeof(buf), "m%dn%dk%d_w%dx%d_s%d_%s%s_v%d_%s", block_m, block_n, block_k, warp_m, warp_n, stages,
                math_name(math), cluster.c_str(), vec, schedule.c_str());
  return buf;
}

Config Config::from_name(const std::string& name) {
  static const std::regex re(R"(m(\d+)n(\d+)k(\d+)_w(\d+)x(\d+)_s(\d+)_(mma|simt|wgmma|wgws|skinny|mskinny|tma)(?:_c(\d+))?(?:_cn(\d+))?(_swap)?_v(\d+)_(?:sk(\d+)|streamk(\d+)))");
  std::smatch mt;
  if (!std::regex_match(name, mt, re))
    throw_input("kernel name '" + name + "' is not a tunetab gemm_bf16 config (expected m<BM>n<BN>k<BK>_w<WM>x<WN>_s<S>_<math>[_c<C>][_cn<C>][_swap]_v<V>_sk<SK> or _streamk<CTAS>)");
  Config c;
  c.block_m = std::stoi(mt[1]);
  c.block_n = std::stoi(mt[2]);
  c.block_k = std::stoi(mt[3]);
  c.warp_m = std::stoi(mt[4]);
  c.warp_n = std::stoi(mt[5]);
  c.stages = std::stoi(mt[6]);
  c.math = mt[7] == "mma" ? Math::kTensorCore : mt[7] == "wgmma" ? Math::kWgmma : mt[7] == "wgws"   ? Math::kWgmmaWs
                     : mt[7] == "skinny"  ? Math::kSkinny
                     : mt[7] == "mskinny" ? Math::kSkinnyMma
                     : mt[7] == "tma"     ? Math::kTma
                                         : Math::kSimt;
  if (mt[8].matched) c.cluster_m = std::stoi(mt[8]);
  if (mt[9].matched) c.cluster_n = std::stoi(mt[9]);
  c.swap_ab = mt[10].matched;
  c.vec = std::stoi(mt[11]);
  if (mt[12].matched) c.split_k = std::stoi(mt[12]);
  if (mt[13].matched) c.streamk_ctas = std::stoi(mt[13]);
  return c;
}

nlohmann::json Config::to_json() const {
  return {{"block_m", block_m}, {"block_n", block_n}, {"block_k", block_k}, {"warp_m", warp_m},
          {"warp_n", warp_n},   {"stages", stages},   {"math", math_name(math)},
          {"vec", vec},         {"split_k", split_k}, {"cluster_m", cluster_m}, {"cluster_n", cluster_n}, {"streamk_ctas", streamk_ctas}, {"swap_ab", swap_ab}};
}

namespace {
struct Tile {
  int block_m, block_n, block_k, warp_m, warp_n;
};
// clang-format off
constexpr Tile kTiles[] = {
  // block_m block_n block_k warp_m warp_n      warps
  {  16,      64,     64,     16,    16 },  // 4: skinny M, weight-bandwidth bound
  {  16,     128,     64,     16,    32 },  // 4
  {  16,     256,     64,     16,    64 },  // 4
  {  32,     128,     64,     32,    32 },  // 4
  {  32,     256,     64,     32,    64 },  // 4
  {  64,      64,     64,     32,    32 },  // 4
  {  64,     128,     32,     32,    64 },  // 4
  {  64,     256,     32,     64,    64 },  // 4
  { 128,      64,     32,     64,    32 },  // 4
  { 128,     128,     32,     64,    64 },  // 4
  { 128,     128,     32,     64,    32 },  // 8
  { 128,     256,     32,     64,    64 },  // 8
  { 256,     128,     32,     64,    64 },  // 8
};
// wgmma (sm_90a): one warpgroup per 64 rows spanning block_n; 128-byte swizzled K tiles of 64.
constexpr Tile kWgmmaTiles[] = {
  {  64,      64,     64,     64,    64 },
  {  64,     128,     64,     64,   128 },
  {  64,     256,     64,     64,   256 },
  { 128,      64,     64,     64,    64 },
  { 128,     128,     64,     64,   128 },
  { 128,     256,     64,     64,   256 },
  {  64,     192,     64,     64,   192 },  // 192 wide: 128 x 192 tiles fill 132 SMs where 128 x 256 leave a third idle
  { 128,     192,     64,     64,   192 },
  {  64,      64,    128,     64,    64 },
  {  64,     128,    128,     64,   128 },
  { 128,     128,    128,     64,   128 },
  { 128,     256,    128,     64,   256 },
};
constexpr int kWgmmaStages[] = {3, 4, 5, 6};
// NOTE: few cluster variants until they have run on a GPU (each adds a screening per row).
constexpr int kClusterStages[] = {4};
constexpr int kClusterSplits[] = {1, 2};
// Stream-K runs one persistent CTA per SM: the SM counts of the sm_90 parts (H20, H100 PCIe, H100/H200 SXM).
constexpr int kStreamKStages[] = {4};
constexpr int kStreamKCtas[] = {78, 114, 132};
// Swapped operands (C^T = B A^T): {rows of N, columns of M}. The M widths cover a few hundred rows in few
// tiles (304 = 2 x 152 = 4 x 76 -> 80, 336 = 2 x 168 = 3 x 112 = 4 x 84 -> 88), the way cuBLAS's sm90 kernels
// tile these shapes (64 x 168, 192 x 88, 192 x 80: bench/cublas_kernels.py).
constexpr int kSwapRows[] = {64, 128, 192};
constexpr int kSwapCols[] = {72, 80, 88, 112, 152, 168};
// NOTE: a few hundred rows and short K are latency-bound: the bytes in flight per SM (stages x stage size)
// set the rate (Little's law), so the narrow tiles go up to the 8 stages that fit in shared memory.
constexpr int kSwapStages[] = {4, 6, 8};
// TMA tiles with more stages than kWgmmaStages, one split (most of them exceed shared memory: rejected unbuilt).
constexpr int kTmaDeepStages[] = {7, 8};
// TMA only: two consumer warpgroups per 64 rows, each warp_n = block_n / 2 wide (M = 64 tiles with two
// warpgroups' MMAs in flight). The widths between 128 and 320 let a few hundred rows fill the SMs in one
// wave (6 x 22 tiles of 64 x 144 cover 336 x 3072 on 132 SMs, 6 x 22 of 64 x 288 cover 336 x 6144).
constexpr Tile kTmaSplitNTiles[] = {
  {  64,     128,     64,     64,    64 },
  {  64,     144,     64,     64,    72 },
  {  64,     160,     64,     64,    80 },
  {  64,     192,     64,     64,    96 },
  {  64,     256,     64,     64,   128 },
  {  64,     288,     64,     64,   144 },
  {  64,     320,     64,     64,   160 },
  { 128,     256,     64,     64,   128 },
};
// TMA only: 128-row tiles as narrow as 72 (two consumer warpgroups each 64 x block_n): with M of a few
// hundred, three row tiles x N / block_n CTAs fill the 132 SMs in one wave (3 x 43 of 128 x 72 at
// 336 x 3072; 3 x 43 of 128 x 144 at 336 x 6144), where 64-row tiles halve each MMA's work.
constexpr int kTmaNarrowWidths[] = {72, 80, 88, 96, 144, 160, 176};
constexpr int kTmaNarrowStages[] = {4, 6, 8};
constexpr int kTmaNarrowSplits[] = {1, 2};
// TMA only: 64-row tiles 24 to 48 wide for a few dozen rows: 64 x 3072 takes 48 CTAs of 64 x 64 (a third of
// the SMs streaming B) but 96 of 64 x 32 or 128 of 64 x 24; the A tile each re-reads comes from L2.
constexpr int kTmaSlimWidths[] = {24, 32, 40, 48};
constexpr int kTmaSlimStages[] = {4, 6, 8};
constexpr int kTmaSlimSplits[] = {1, 2};
// skinny (M <= block_m): block_n columns per block, warp_n per warp, block_k = 256 x unroll.
constexpr int kSkinnyRows[] = {1, 2, 4, 8, 16};
constexpr Tile kSkinnyTiles[] = {
  {   0,       8,    256,      0,     2 },  // 4 warps
  {   0,      16,    256,      0,     4 },  // 4 warps
  {   0,      16,    512,      0,     2 },  // 8 warps
  {   0,      32,    512,      0,     4 },  // 8 warps
};
constexpr int kSkinnySplits[] = {1, 2, 3, 4, 6, 8};
// mskinny (M <= block_m, tensor cores, no shared-memory staging): {M fragments, N fragments, warps, chunks
// in flight per warp}; loads in flight per lane (N fragments + 2 x M fragments) x chunks <= 32 registers of
// 16 B, and the cross-warp reduction (warps x block_m x block_n floats) <= 48 KiB.
struct MmaSkinny {
  int m_frags, n_frags, warps, chunks;
};
constexpr MmaSkinny kMmaSkinny[] = {
  {1, 2, 4, 4}, {1, 2, 8, 4}, {1, 4, 4, 4}, {1, 4, 8, 4}, {1, 4, 8, 2}, {1, 8, 4, 2}, {1, 8, 8, 2},
  {2, 2, 8, 4}, {2, 4, 4, 4}, {2, 4, 8, 2}, {2, 8, 4, 2},
  {4, 2, 4, 2}, {4, 2, 8, 2}, {4, 4, 4, 2},
};
constexpr Tile kSimtTiles[] = {
  {  16,      64,     64,     16,    16 },
  {  64,      64,     32,     32,    32 },
};
constexpr int kStages[] = {2, 3, 4};
constexpr int kVecs[] = {8, 4};
constexpr int kSplits[] = {1, 2, 3, 4, 6, 8, 12, 16};
// clang-format on

Config make(const Tile& t, int stages, Math math, int vec, int split) {
  return Config{t.block_m, t.block_n, t.block_k, t.warp_m, t.warp_n, stages, math, vec, split};
}
}  // namespace

std::vector<Config> enumerate() {
  std::vector<Config> out;
  for (const Tile& t : kTiles)
    for (int s : kStages)
      for (int v : kVecs)
        for (int sk : kSplits) out.push_back(make(t, s, Math::kTensorCore, v, sk));
  for (const Tile& t : kWgmmaTiles)
    for (int s : kWgmmaStages)
      for (int sk : kSplits) out.push_back(make(t, s, Math::kWgmma, 8, sk));
  for (const Tile& t : kWgmmaTiles)
    for (int s : kWgmmaStages) out.push_back(make(t, s, Math::kWgmmaWs, 8, 1));
  for (const auto& tiles : {std::span<const Tile>(kWgmmaTiles), std::span<const Tile>(kTmaSplitNTiles)})
    for (const Tile& t : tiles)
      for (int s : kWgmmaStages)
        for (int sk : kSplits) out.push_back(make(t, s, Math::kTma, 8, sk));
  for (const auto& tiles : {std::span<const Tile>(kWgmmaTiles), std::span<const Tile>(kTmaSplitNTiles)})
    for (const Tile& t : tiles)
      for (int s : kTmaDeepStages) out.push_back(make(t, s, Math::kTma, 8, 1));
  for (int w : kTmaNarrowWidths)
    for (int s : kTmaNarrowStages)
      for (int sk : kTmaNarrowSplits) out.push_back(make(Tile{128, w, 64, 64, w}, s, Math::kTma, 8, sk));
  for (int w : kTmaSlimWidths)
    for (int s : kTmaSlimStages)
      for (int sk : kTmaSlimSplits) out.push_back(make(Tile{64, w, 64, 64, w}, s, Math::kTma, 8, sk));
  // Clusters of two CTAs along M multicast each B tile (half loaded by each): half the L2 reads of B.
  for (const auto& tiles : {std::span<const Tile>(kWgmmaTiles), std::span<const Tile>(kTmaSplitNTiles)})
    for (const Tile& t : tiles)
      if (t.block_n <= 256 && (t.block_n / 2) % 8 == 0)
        for (int s : kClusterStages)
          for (int sk : kClusterSplits) {
            Config c = make(t, s, Math::kTma, 8, sk);
            c.cluster_m = 2;
            out.push_back(c);
          }
  // Stream-K: every SM busy to the end whatever the tile count (a few hundred rows leave a fraction of a wave).
  for (const auto& tiles : {std::span<const Tile>(kWgmmaTiles), std::span<const Tile>(kTmaSplitNTiles)})
    for (const Tile& t : tiles)
      // NOTE: five warpgroups (128 x 256 in 64 x 128 parts) leave 96 registers a thread: the fixup spills.
      if ((t.block_m / 64) * (t.block_n / t.warp_n) <= 2)
      for (int s : kStreamKStages)
        for (int ctas : kStreamKCtas) {
          Config c = make(t, s, Math::kTma, 8, 1);
          c.streamk_ctas = ctas;
          out.push_back(c);
        }
  // NOTE: no clusters along N (cluster_n) in the space: sharing A by multicast measured 5-15% slower than the
  // same tile without clusters on every shape tried (session 5, docs/performance.md).
  for (int r : kSwapRows)
    for (int c : kSwapCols)
      for (int s : kSwapStages) {
        Config cfg = make(Tile{r, c, 64, 64, c}, s, Math::kTma, 8, 1);
        cfg.swap_ab = true;
        out.push_back(cfg);
      }
  for (int rows : kSkinnyRows)
    for (const Tile& t : kSkinnyTiles)
      for (int sk : kSkinnySplits)
        out.push_back(Config{rows, t.block_n, t.block_k, rows, t.warp_n, 1, Math::kSkinny, 8, sk});
  for (const MmaSkinny& t : kMmaSkinny)
    for (int sk : kSkinnySplits) {
      const int bm = 16 * t.m_frags, bn = 8 * t.n_frags;
      out.push_back(Config{bm, bn, 32 * t.chunks * t.warps, bm, bn, t.chunks, Math::kSkinnyMma, 8, sk});
    }
  for (const Tile& t : kSimtTiles)
    for (int sk : kSplits) out.push_back(make(t, 2, Math::kSimt, 8, sk));
  return out;
}

static std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::int64_t k_per_split(const Problem& p, const Config& c) {
  return ceil_div(ceil_div(p.k, c.split_k), c.block_k) * c.block_k;
}

std::optional<std::string> why_unsupported(const Problem& p, const Config& c, const Target& t) {
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return "M, N and K must be positive";
  if (p.in != DType::kBf16) return "inputs must be bf16 (got " + to_string(p.in) + ")";
  if (p.out != DType::kBf16) return "output must be bf16 (got " + to_string(p.out) + ")";
  if (p.bias) return "bias epilogue is not implemented";
  if (p.m > 0x7fffffff || p.n > 0x7fffffff || p.k > 0x7fffffff) return "M, N and K must each fit in int32";
  const bool skinny = c.math == Math::kSkinny || c.math == Math::kSkinnyMma;
  if (skinny && p.m > c.block_m)
    return "skinny kernel for M <= " + std::to_string(c.block_m) + " (M = " + std::to_string(p.m) + ")";
  if (skinny && p.k % 8 != 0) return "skinny kernel needs K % 8 == 0";
  if (ceil_div(c.rows(p.m, p.n), c.block_m) > 65535)
    return std::string(c.swap_ab ? "N" : "M") + " / block_m exceeds the grid's y limit (65535)";
  if (p.k % c.vec != 0) return "K (" + std::to_string(p.k) + ") must be a multiple of the vector width " + std::to_string(c.vec);
  if (t.max_smem_per_block > 0 && c.shared_bytes() > t.max_smem_per_block)
    return "needs " + std::to_string(c.shared_bytes()) + " B of shared memory, target has " +
           std::to_string(t.max_smem_per_block);
  if (c.wgmma() && t.nvidia && t.arch != "sm_90a") return "wgmma needs sm_90a (target " + t.arch + ")";
  // NOTE: the portable fallback lays threads out in columns of 4; 192 columns do not divide its threads.
  if (c.wgmma() && c.block_n == 192 && !t.nvidia) return "192-wide tiles exist only as sm_90a wgmma";
  if (c.math == Math::kTma && !t.nvidia) return "TMA exists only on sm_90a";
  if (c.cluster_m != 1 || c.cluster_n != 1) {
    const auto one_of = [](int v) { return v == 1 || v == 2 || v == 4; };
    if (c.math != Math::kTma || !one_of(c.cluster_m) || !one_of(c.cluster_n) || c.cluster_m * c.cluster_n > 4)
      return "clusters: TMA tiles, 1, 2 or 4 CTAs along M and N, at most 4 in all";
    if (c.cluster_m > 1 && (c.block_n > 256 || (c.block_n / c.cluster_m) % 8 != 0))
      return "clusters along M: TMA tiles up to 256 wide whose slices are whole 8-row atoms";
    if ((c.block_m / c.cluster_n) % 8 != 0) return "clusters along N: slices of block_m must be whole 8-row atoms";
  }
  if (c.math == Math::kWgmmaWs && c.split_k != 1) return "warp-specialized wgmma has no split-K epilogue";
  if (c.swap_ab && (c.math != Math::kTma || c.split_k != 1 || c.streamk_ctas != 0))
    return "swapped operands: TMA tiles without split-K or stream-K";
  if (c.streamk_ctas != 0) {
    if (c.math != Math::kTma || c.cluster_m != 1 || c.cluster_n != 1 || c.split_k != 1 || c.streamk_ctas < 0)
      return "stream-K: TMA tiles without clusters or split-K";
    if (t.cu_count > 0 && c.streamk_ctas != t.cu_count)
      return "stream-K over " + std::to_string(c.streamk_ctas) + " CTAs: the target has " + std::to_string(t.cu_count) + " SMs";
  }
  if (c.split_k > 1) {
    const std::int64_t kps = k_per_split(p, c);
    if (ceil_div(p.k, kps) != c.split_k) return "split-K " + std::to_string(c.split_k) + " leaves empty splits for K=" + std::to_string(p.k);
    const std::int64_t tiles = ceil_div(p.m, c.block_m) * ceil_div(p.n, c.block_n);
    // NOTE: split-K pays while the output tiles fill few waves; beyond that it only adds partial traffic.
    if (t.cu_count > 0 && tiles >= 4 * static_cast<std::int64_t>(t.cu_count))
      return "split-K only pays when output tiles (" + std::to_string(tiles) + ") < 4x CUs (" + std::to_string(t.cu_count) + ")";
    if (t.cu_count > 0 && tiles * c.split_k > 8 * static_cast<std::int64_t>(t.cu_count))
      return "split-K " + std::to_string(c.split_k) + " oversubscribes the CUs";
  }
  return std::nullopt;
}

std::int64_t workspace_floats(const Problem& p, const Config& c) {
  if (c.streamk_ctas > 0) return std::int64_t{2} * c.streamk_ctas * c.block_m * c.block_n;
  return c.split_k > 1 ? c.split_k * p.m * p.n : 0;
}

std::vector<BufferBound> index_bounds(const Problem& p, const Config& c) {
  std::vector<BufferBound> b = {{"A", p.m * p.k - 1}, {"B", p.n * p.k - 1}, {"C", p.m * p.n - 1}};
  if (const std::int64_t ws = workspace_floats(p, c); ws > 0) b.push_back({"workspace", ws - 1});
  return b;
}

std::vector<KernelSource> kernels(const Config& c, int index_bits) {
  KernelSource k;
  k.family = kFamily;
  k.source = "#include \"gemm_bf16.h\"\n";
  k.parameters = "tt::GemmArgs";
  const std::string index = index_bits == 64 ? "long long" : "int";
  if (c.math == Math::kTma) {
    k.parameters = "const tt::GemmTmaArgs";
    k.name_expression = "tt::gemm_bf16_tma<" + std::to_string(c.block_m) + ", " + std::to_string(c.block_n) + ", " +
                        std::to_string(c.block_k) + ", " + std::to_string(c.warp_n) + ", " + std::to_string(c.stages) +
                        ", " + index + ", " + std::to_string(c.cluster_m) + ", " + std::to_string(c.cluster_n) + ", " + (c.streamk_ctas > 0 ? "1" : "0") + ", " +
                        (c.swap_ab ? "1" : "0") + ">";
    return {k};
  }
  if (c.math == Math::kSkinnyMma) {
    k.name_expression = "tt::gemm_bf16_mskinny<" + std::to_string(c.block_m / 16) + ", " + std::to_string(c.block_n / 8) +
                        ", " + std::to_string(c.threads() / 32) + ", " + std::to_string(c.stages) + ", " + index + ">";
    return {k};
  }
  if (c.math == Math::kSkinny) {
    k.name_expression = "tt::gemm_bf16_skinny<" + std::to_string(c.block_m) + ", " + std::to_string(c.block_n) + ", " +
                        std::to_string(c.warp_n) + ", " + std::to_string(c.block_k / 256) + ", " + index + ">";
    return {k};
  }
  k.name_expression = "tt::gemm_bf16_tn<" + std::to_string(c.block_m) + ", " + std::to_string(c.block_n) + ", " +
                      std::to_string(c.block_k) + ", " + std::to_string(c.warp_m) + ", " + std::to_string(c.warp_n) +
                      ", " + std::to_string(c.stages) + ", " + std::to_string(static_cast<int>(c.math)) + ", " +
                      std::to_string(c.vec) + ", " + (index_bits == 64 ? "long long" : "int") + ">";
  return {k};
}

}  // namespace tunetab::gemm
