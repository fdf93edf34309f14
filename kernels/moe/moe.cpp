#include "kernels/moe/moe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <regex>

#include "tuner/error.h"
#include "tuner/names.h"

namespace tunetab::moe {

namespace {
const std::pair<Quant, const char*> kQuantNames[] = {
    {Quant::kBf16, "bf16"}, {Quant::kFp8, "fp8"}, {Quant::kFp8Fnuz, "fp8fnuz"}};
const std::pair<Routing, const char*> kRoutingNames[] = {{Routing::kBalanced, "balanced"}, {Routing::kSkewed, "skewed"}};
const std::pair<Math, const char*> kMathNames[] = {
    {Math::kSimt, "simt"}, {Math::kTensorCore, "mma"}, {Math::kWgmma, "wgmma"}, {Math::kFused, "fused"},
    {Math::kWgmma2, "wgmma2"}};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
bool fp8(Quant q) { return q != Quant::kBf16; }
}  // namespace

std::string to_string(Quant q) { return name_of(kQuantNames, q); }
Quant quant_from_string(const std::string& s) { return value_named(kQuantNames, s, "fused-MoE quant"); }
std::string to_torch(Quant q) {
  switch (q) {
    case Quant::kBf16: return "torch.bfloat16";
    case Quant::kFp8: return "torch.float8_e4m3fn";
    case Quant::kFp8Fnuz: return "torch.float8_e4m3fnuz";
  }
  return "?";
}
std::string to_string(Routing r) { return name_of(kRoutingNames, r); }
Routing routing_from_string(const std::string& s) { return value_named(kRoutingNames, s, "routing"); }

std::string Problem::key() const {
  return "m=" + std::to_string(m) + ",model_dim=" + std::to_string(model_dim) + ",inter_dim=" + std::to_string(inter_dim) +
         ",experts=" + std::to_string(experts) + ",topk=" + std::to_string(topk) + ",act=silu,g1u1=1,quant=" +
         to_string(quant) + ",routing=" + to_string(routing);
}

nlohmann::json Problem::to_json() const {
  return {{"m", m},         {"model_dim", model_dim}, {"inter_dim", inter_dim},          {"experts", experts},
          {"topk", topk},   {"act", "silu"},          {"g1u1", true},                    {"quant", to_string(quant)},
          {"routing", to_string(routing)}};
}

Problem Problem::from_json(const nlohmann::json& j) {
  Problem p;
  try {
    p.m = j.at("m").get<std::int64_t>();
    p.model_dim = j.at("model_dim").get<std::int64_t>();
    p.inter_dim = j.at("inter_dim").get<std::int64_t>();
    p.experts = j.at("experts").get<std::int64_t>();
    p.topk = j.at("topk").get<std::int64_t>();
    p.quant = quant_from_string(j.value("quant", std::string("bf16")));
    p.routing = routing_from_string(j.value("routing", std::string("balanced")));
  } catch (const nlohmann::json::exception& e) {
    throw_input("fused_moe problem " + j.dump() + ": " + e.what());
  }
  if (j.value("act", std::string("silu")) != "silu") throw_input("fused_moe problem " + j.dump() + ": act must be silu");
  if (!j.value("g1u1", true)) throw_input("fused_moe problem " + j.dump() + ": only gate+up fused (g1u1) is implemented");
  return p;
}

std::int64_t Problem::weight_bytes() const {
  const std::int64_t e = fp8(quant) ? 1 : 2;
  std::int64_t b = experts * 3 * inter_dim * model_dim * e;
  if (fp8(quant)) b += experts * (ceil_div(2 * inter_dim, 128) * ceil_div(model_dim, 128) + ceil_div(model_dim, 128) * ceil_div(inter_dim, 128)) * 4;
  return b;
}

std::int64_t Problem::min_bytes() const { return weight_bytes() + 2 * m * model_dim * 2 + rows() * 8; }

int Config::shared_bytes(int stage) const {
  const int ea = fp8(quant) ? 1 : 2, eb = ea;
  const int w_rows = w_halves(stage) * half_rows(stage);  // a tile's rows of W: both halves
  if (math == Math::kFused) return stage == 1 ? stages * (2 * block_n1 + warp_m) * 128 + warp_m * 128 + 1024 : 0;
  if (math == Math::kWgmma) return stages * (w_rows + ea * warp_m) * 128 + 1024;
  if (math == Math::kWgmma2) return stages * (w_rows + ea * block_m) * 128 + 1024;  // a tile's block_m tokens
  return stages * (block_m * (block_k * ea + 16) + w_rows * (block_k * eb + 16));
}

std::string Config::name() const {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%s_m%dw%d_n%dx%d_k%d_s%d_%s_sk%d", to_string(quant).c_str(), block_m, warp_m, block_n1,
                block_n2, block_k, stages, name_of(kMathNames, math).c_str(), split_k);
  return buf;
}

Config Config::from_name(const std::string& name) {
  static const std::regex re(R"((bf16|fp8|fp8fnuz)_m(\d+)w(\d+)_n(\d+)x(\d+)_k(\d+)_s(\d+)_(mma|simt|wgmma2|wgmma|fused)_sk(\d+))");
  std::smatch mt;
  if (!std::regex_match(name, mt, re))
    throw_input("kernel name '" + name +
                "' is not a tunetab fused_moe config (expected <bf16|fp8|fp8fnuz>_m<BM>w<WM>_n<N1>x<N2>_k<BK>_s<S>_<mma|simt|wgmma|wgmma2|fused>_sk<SK>)");
  Config c;
  c.quant = quant_from_string(mt[1]);
  c.block_m = std::stoi(mt[2]);
  c.warp_m = std::stoi(mt[3]);
  c.block_n1 = std::stoi(mt[4]);
  c.block_n2 = std::stoi(mt[5]);
  c.block_k = std::stoi(mt[6]);
  c.stages = std::stoi(mt[7]);
  c.math = value_named(kMathNames, mt[8], "math");
  c.split_k = std::stoi(mt[9]);
  return c;
}

nlohmann::json Config::to_json() const {
  return {{"quant", to_string(quant)}, {"block_m", block_m}, {"warp_m", warp_m},   {"block_n1", block_n1},
          {"block_n2", block_n2},      {"block_k", block_k}, {"stages", stages},   {"math", name_of(kMathNames, math)},
          {"split_k", split_k}};
}

namespace {
struct MTile {
  int block_m, warp_m;
};
// clang-format off
// Four warps per CTA; block_m / warp_m of them along M, the rest along N.
constexpr MTile kMTiles[] = {
  // block_m warp_m   warps m x n
  {  16,      16 },  // 1 x 4: decode; every expert's weights streamed by many narrow CTAs
  {  32,      16 },  // 2 x 2
  {  64,      32 },  // 2 x 2
  { 128,      32 },  // 4 x 1
};
constexpr int kN1[] = {32, 64, 128};    // stage-1 columns of inter_dim (gate and up each)
constexpr int kN2[] = {64, 128};        // stage-2 columns of model_dim
constexpr int kStages[] = {3, 4};      // mma; the portable path runs 2
constexpr int kSplits[] = {1, 2, 4};    // stage-2 split of inter_dim
// wgmma (sm_90a, e4m3fn): {block_m (the routing's padding), warp_m (a CTA's sorted rows, the MMA width),
// rows of W per CTA in stage 1, in stage 2}, within a thread's registers (why_unsupported counts them): a CTA
// of 128 rows needs more than a thread has in stage 1. block_m / warp_m CTAs form a cluster that reads each W
// tile once from L2 and multicasts it: more tokens per W tile than one CTA's registers hold.
// NOTE: the stages' widths are independent: stage 1's 256 rows with stage 2's 128 beat both 256 x 256 and
// 128 x 128 from M=128 to 4096 (docs/performance.md, session 12; stage 2's 256-row CTAs fill fewer SMs), and the
// 64-token 128 x 256 wins from M=2048. 128-token CTAs (stage 1 paired into gate and up warpgroups) ran 1.5-2.5x
// slower at every M (session 13) and are not in the space.
struct WgmmaTile {
  int block_m, warp_m, n1, n2;
};
constexpr WgmmaTile kWgmmaTiles[] = {
  {  32, 32,  64,  64 }, {  32, 32, 128, 128 }, {  32, 32, 128, 256 }, {  32, 32, 256, 128 }, {  32, 32, 256, 256 },
  {  64, 64,  64,  64 }, {  64, 64,  64, 128 }, {  64, 64, 128, 128 }, {  64, 64, 128, 256 },
  // clusters of 2 and 4
  {  64, 32, 128, 128 }, {  64, 32, 256, 256 }, { 128, 32, 128, 128 }, { 128, 32, 128, 256 },
  { 128, 32, 256, 256 }, { 128, 64, 128, 128 },
};
constexpr int kWgmmaStages[] = {3, 4, 6};
// wgmma2 (tt::moe_stage_wgmma2, no clusters): the two wgmma pairings that won rows (sessions 12-13), and 96-token
// tiles, which hold an expert's slots at M 256..384 (session 14). Split-K 1: the wgmma configs keep the space's
// split-K, and its decode tiles.
// NOTE: 96 tokens with 64-row stage-1 CTAs (n1 64) lost 1.3x at M 304..512 (session 16: halving a CTA's rows of W
// doubles its token tile's L2 reads), and clusters of 2 sharing W by multicast lost at 512 and under skewed routing
// (session 17); neither is in the space.
// 96 tokens by 256 rows of W2 (n2 256): stage 2 in two 128-row halves a warpgroup (Config::w_halves), so that each
// token tile is read from L2 once per 256 output columns.
constexpr WgmmaTile kWgmma2Tiles[] = {
  {  32, 32, 256, 128 }, {  64, 64, 128, 256 }, {  96, 96, 128,  64 }, {  96, 96, 128, 128 }, {  96, 96, 128, 256 },
};
constexpr int kWgmma2Stages[] = {3, 4};
// wgmma2 with two token groups (block_m = 2 x warp_m): a consumer warpgroup per 64 rows of W and token group, so the
// W tile serves block_m tokens for warp_m tokens' registers. 128 tokens by 64 rows of W hold an expert's slots at
// M 257..512 with W read once from L2; 64 tokens by 64 rows the same at M 129..256. Their stages are 24-32 KB.
constexpr WgmmaTile kWgmma2GroupTiles[] = {
  {  64, 32,  64, 128 }, { 128, 64,  64,  64 }, { 128, 64,  64, 128 },
};
constexpr int kWgmma2GroupStages[] = {4, 6};
constexpr int kFusedStages[] = {3, 4, 5};  // 36 KB a stage
// clang-format on
}  // namespace

std::vector<Config> enumerate() {
  std::vector<Config> out;
  for (Quant q : {Quant::kBf16, Quant::kFp8, Quant::kFp8Fnuz}) {
    // NOTE: one K tile per dtype keeps the jit space (every stage kernel x 2 index widths) near 140 code
    // objects per width; FP8's is its 128-wide scale block.
    const std::vector<int> ks = fp8(q) ? std::vector<int>{128} : std::vector<int>{64};
    for (const MTile& t : kMTiles)
      for (int n1 : kN1)
        for (int n2 : kN2)
          for (int k : ks)
            for (int s : kStages)
              for (int sk : kSplits) {
                Config c{q, t.block_m, t.warp_m, n1, n2, k, s, Math::kTensorCore, sk};
                // Keep the accumulators in registers: gate + up (x2 with FP8's per-tile partials).
                const int acc1 = (c.warp_m / 16) * (n1 / c.warps_n() / 8) * 4 * 2 * (fp8(q) ? 2 : 1);
                const int acc2 = (c.warp_m / 16) * (n2 / c.warps_n() / 8) * 4 * (fp8(q) ? 2 : 1);
                if (n1 % (c.warps_n() * 8) || n2 % (c.warps_n() * 8) || acc1 > 128 || acc2 > 128) continue;
                out.push_back(c);
              }
    if (q == Quant::kFp8)
      for (const WgmmaTile& t : kWgmmaTiles)
        for (int s : kWgmmaStages)
          for (int sk : kSplits) out.push_back(Config{q, t.block_m, t.warp_m, t.n1, t.n2, 128, s, Math::kWgmma, sk});
    if (q == Quant::kFp8)
      for (const WgmmaTile& t : kWgmma2Tiles)
        for (int s : kWgmma2Stages) out.push_back(Config{q, t.block_m, t.warp_m, t.n1, t.n2, 128, s, Math::kWgmma2, 1});
    if (q == Quant::kFp8)
      for (const WgmmaTile& t : kWgmma2GroupTiles)
        for (int s : kWgmma2GroupStages) out.push_back(Config{q, t.block_m, t.warp_m, t.n1, t.n2, 128, s, Math::kWgmma2, 1});
    if (q == Quant::kFp8)
      for (int s : kFusedStages) out.push_back(Config{q, 32, 32, 128, 128, 128, s, Math::kFused, 1});
    // The portable path, a few shapes (it is what AMD targets run today).
    for (const MTile& t : {kMTiles[0], kMTiles[2]})
      for (int sk : {1, 2}) out.push_back(Config{q, t.block_m, t.warp_m, 64, 64, fp8(q) ? 128 : 64, 2, Math::kSimt, sk});
  }
  return out;
}

std::int64_t max_padded_rows(const Problem& p, int block_m) {
  // Each expert with c slots takes ceil(c / block_m) * block_m rows: at most rows + experts * (block_m - 1),
  // and never more than the experts' blocks when every slot sits alone.
  const std::int64_t experts_hit = std::min(p.experts, p.rows());
  return ceil_div(p.rows() + experts_hit * (block_m - 1), block_m) * block_m;
}

std::int64_t max_blocks(const Problem& p, int block_m) { return max_padded_rows(p, block_m) / block_m; }

std::int64_t sorted_scale_ld(const Problem& p, int block_m) { return ceil_div(max_padded_rows(p, block_m), 4) * 4; }

std::int64_t k_per_split(const Problem& p, const Config& c) {
  return ceil_div(ceil_div(p.inter_dim, c.split_k), c.block_k) * c.block_k;
}

std::int64_t splits(const Problem& p, const Config& c) {
  return c.math == Math::kFused ? ceil_div(p.inter_dim, 128) : std::max(1, c.split_k);
}

std::optional<std::string> why_unsupported(const Problem& p, const Config& c, const Target& t) {
  if (p.m <= 0 || p.model_dim <= 0 || p.inter_dim <= 0 || p.experts <= 0 || p.topk <= 0)
    return "tokens, model_dim, inter_dim, experts and topk must be positive";
  if (p.topk > p.experts) return "topk (" + std::to_string(p.topk) + ") exceeds the experts (" + std::to_string(p.experts) + ")";
  if (p.experts > 1024) return "the align kernel holds at most 1024 experts";
  if (c.quant != p.quant) return "config is for " + to_string(c.quant) + ", problem is " + to_string(p.quant);
  if (p.model_dim % 8 || p.inter_dim % 8) return "model_dim and inter_dim must be multiples of 8";
  if (fp8(p.quant) && (p.model_dim % 128 || p.inter_dim % 128))
    return "FP8 per-1x128 needs model_dim and inter_dim to be multiples of 128";
  if (p.rows() + p.experts * static_cast<std::int64_t>(c.block_m) > 0x7fffffff) return "sorted rows must fit in int32";
  if (max_blocks(p, c.block_m) > 65535) return "sorted blocks (" + std::to_string(max_blocks(p, c.block_m)) + ") exceed the grid's y limit";
  if (c.math == Math::kFused) {
    if (!t.nvidia || t.arch != "sm_90a") return "the fused variant's wgmma and TMA exist only on sm_90a (target " + t.arch + ")";
    if (c.quant != Quant::kFp8) return "the fused variant takes e4m3fn weights";
    if (c.block_m != 32 || c.warp_m != 32 || c.block_n1 != 128 || c.block_n2 != 128 || c.split_k != 1)
      return "fused: 32 sorted rows, 128 columns of inter_dim and 128-row W2 tiles per CTA, no split-K";
    // NOTE: its partials (one plane per 128 columns of inter_dim) are what the reduce reads; once they pass an
    // eighth of the weights' bytes the pipeline's smaller intermediate costs less than the launch it saves.
    const std::int64_t partials = splits(p, c) * p.rows() * p.model_dim * 4;
    if (partials > p.weight_bytes() / 8)
      return "fused: its per-slice partials (" + std::to_string(partials >> 20) + " MiB) exceed an eighth of the weights (" +
             std::to_string((p.weight_bytes() / 8) >> 20) + " MiB): it serves decode only";
    // Static shared memory besides the stages: barriers, the tile's rows, the token scales per stage, the warps' amax.
    const int total = c.shared_bytes(1) + 2 * c.stages * 8 + 2 * c.warp_m * 4 + c.stages * c.warp_m * 4 + 8 * c.warp_m * 4;
    if (t.max_smem_per_block > 0 && total > t.max_smem_per_block)
      return "fused: needs " + std::to_string(total) + " B of shared memory, target has " + std::to_string(t.max_smem_per_block);
  } else if (c.math == Math::kWgmma || c.math == Math::kWgmma2) {
    const bool v2 = c.math == Math::kWgmma2;
    if (!t.nvidia || t.arch != "sm_90a") return "wgmma and TMA exist only on sm_90a (target " + t.arch + ")";
    if (c.quant != Quant::kFp8) return "the wgmma stages take e4m3fn weights";
    if (c.warp_m != 32 && c.warp_m != 64 && c.warp_m != 128 && !(v2 && c.warp_m == 96))
      return v2 ? "wgmma2: warp_m (a CTA's rows, the MMA width) 32, 64, 96 or 128"
                : "wgmma: warp_m (a CTA's rows, the MMA width) 32, 64 or 128";
    if (v2 && ((c.block_m != c.warp_m && c.block_m != 2 * c.warp_m) || c.block_m > 128))
      return "wgmma2: block_m (a CTA's tokens, at most 128) is one or two token groups of warp_m; no clusters";
    if (v2 && c.split_k != 1) return "wgmma2: split-K 1 (its persistent grid walks the whole K of each tile)";
    if (c.block_m % c.warp_m || (c.cluster() != 1 && c.cluster() != 2 && c.cluster() != 4))
      return "wgmma: block_m must be 1, 2 or 4 CTAs' warp_m (a cluster)";
    if (c.block_n1 % 64 || c.block_n2 % 64 || c.block_n1 > 256 || c.block_n2 > 256)
      return "wgmma: rows of W per CTA in 64-row warpgroups, at most 256";
    if (p.inter_dim % c.block_n1 || p.model_dim % c.block_n2)
      return "wgmma: inter_dim and model_dim must be multiples of the CTA's rows of W";
    // A consumer thread holds, besides ~32 registers of addresses and indices, an accumulator and a K block's
    // product per half (2 x block_m / 2 in stage 1, w_halves(2) x block_m / 2 in stage 2). wgmma2's producer warpgroup lowers its
    // allowance to 40 (setmaxnreg) where the consumers need more than an even share (tt::MoeWgmma2Regs).
    for (int stage : {1, 2}) {
      const int need = c.w_halves(stage) * c.warp_m + 32;
      const int threads = c.threads(stage), consumers = threads / 128 - 1;
      if (threads > 1024)
        return "wgmma: stage " + std::to_string(stage) + " takes " + std::to_string(consumers) + " consumer warpgroups, " +
               std::to_string(threads) + " threads (at most 1024)";
      int have = std::min(255, 65536 / threads);
      if (v2 && need > have) {
        const int share = 65536 / threads / 8 * 8;  // each warp's registers at launch: the CTA's pool
        have = std::min(255, (share * threads - 128 * 40) / (consumers * 128) / 8 * 8);
      }
      if (need > have)
        return "wgmma: stage " + std::to_string(stage) + " needs about " + std::to_string(need) + " registers a thread, " +
               std::to_string(threads) + " threads have " + std::to_string(have);
      // Static shared memory besides the stages: barriers, the tile's rows (wgmma2: two tiles' slots and top-k
      // weights, and their two barriers), the token scales per stage.
      const int rows = v2 ? 4 : 2;
      const int tokens = v2 ? c.block_m : c.warp_m;  // a CTA's
      const int total = c.shared_bytes(stage) + (2 * c.stages + (v2 ? 2 : 0)) * 8 + rows * tokens * 4 + c.stages * tokens * 4;
      if (t.max_smem_per_block > 0 && total > t.max_smem_per_block)
        return "wgmma: stage " + std::to_string(stage) + " needs " + std::to_string(total) + " B of shared memory, target has " +
               std::to_string(t.max_smem_per_block);
    }
  } else {
    const int halves_n1 = c.warps_n() * 8;
    if (c.block_m % c.warp_m || c.warp_m % 16 || Config::kWarps % c.warps_m()) return "block_m / warp_m must divide 4 warps";
    if (c.block_n1 % halves_n1 || c.block_n2 % halves_n1) return "N tiles must split into 8-column warp tiles";
    if (fp8(c.quant) && (128 % c.block_n1 || 128 % c.block_n2)) return "FP8 N tiles must divide the 128-row scale blocks";
  }
  if (fp8(c.quant) && c.block_k != 128) return "FP8 needs block_k 128 (one scale block per K tile)";
  if (c.block_k % 32 || c.stages < 2) return "block_k must be a multiple of 32 and stages >= 2";
  if (t.max_smem_per_block > 0 && std::max(c.shared_bytes(1), c.shared_bytes(2)) > t.max_smem_per_block)
    return "needs " + std::to_string(std::max(c.shared_bytes(1), c.shared_bytes(2))) + " B of shared memory, target has " +
           std::to_string(t.max_smem_per_block);
  if (c.split_k < 1) return "split-K must be >= 1";
  if (c.split_k > 1) {
    const std::int64_t kps = k_per_split(p, c);
    if (ceil_div(p.inter_dim, kps) != c.split_k)
      return "split-K " + std::to_string(c.split_k) + " leaves empty splits for inter_dim=" + std::to_string(p.inter_dim);
    const std::int64_t tiles = max_blocks(p, c.block_m) * ceil_div(p.model_dim, c.block_n2);
    // NOTE: as the GEMM: split-K only pays while stage 2's tiles fill few waves.
    if (t.cu_count > 0 && tiles >= 4 * static_cast<std::int64_t>(t.cu_count))
      return "split-K only pays when stage-2 tiles (" + std::to_string(tiles) + ") < 4x CUs (" + std::to_string(t.cu_count) + ")";
  }
  return std::nullopt;
}

std::size_t workspace_bytes(const Problem& p, const Config& c) {
  return static_cast<std::size_t>(splits(p, c)) * static_cast<std::size_t>(p.rows() * p.model_dim) * 4;
}

std::vector<BufferBound> index_bounds(const Problem& p, const Config& c) {
  const std::int64_t rows = p.rows();
  std::vector<BufferBound> b = {
      {"hidden", p.m * p.model_dim - 1},
      {"w1", p.experts * 2 * p.inter_dim * p.model_dim - 1},
      {"w2", p.experts * p.model_dim * p.inter_dim - 1},
      {"inter", rows * p.inter_dim - 1},
      {"inter_q", rows * p.inter_dim - 1},
      {"y", splits(p, c) * rows * p.model_dim - 1},
      {"out", p.m * p.model_dim - 1},
      {"sorted_ids", max_padded_rows(p, c.block_m) - 1},
  };
  if (c.math == Math::kWgmma2) {  // the stages' inputs and stage 1's output by sorted row, their scales transposed
    const std::int64_t padded = max_padded_rows(p, c.block_m), ld = sorted_scale_ld(p, c.block_m);
    b.push_back({"a_q (sorted)", padded * p.model_dim - 1});
    b.push_back({"inter (sorted)", padded * p.inter_dim - 1});
    b.push_back({"scales (sorted)", (std::max(p.model_dim, p.inter_dim) / 128) * ld - 1});
  }
  return b;
}

Pipeline pipeline_layout(const Config& c) {
  if (c.math == Math::kFused) return Pipeline{0, 1, 2, -1, 3};
  if (fp8(c.quant)) return Pipeline{0, 1, 2, 3, 4};
  return Pipeline{0, -1, 1, 2, 3};
}

std::vector<KernelSource> kernels(const Config& c, int index_bits) {
  const std::string index = index_bits == 64 ? "long long" : "int";
  std::vector<KernelSource> out;
  auto add = [&](const char* header, std::string expr, const char* params) {
    out.push_back(KernelSource{kFamily, std::string("#include \"") + header + "\"\n", std::move(expr), params});
  };
  add("moe_route.h", "tt::moe_align<1024>", "tt::MoeAlignArgs");
  const std::string fnuz = c.quant == Quant::kFp8Fnuz ? "true" : "false";
  if (c.math == Math::kWgmma2)  // its inputs in sorted order, so that its producers copy tokens by TMA
    add("moe_wgmma2.h", "tt::moe_quant_sorted<" + fnuz + ", " + index + ">", "tt::MoeQuantSortedArgs");
  else if (fp8(c.quant))
    add("moe_route.h", "tt::moe_quant_a<" + fnuz + ", " + index + ">", "tt::MoeQuantArgs");
  for (int stage : {1, 2}) {
    if (c.math == Math::kFused) {
      if (stage == 1)
        add("moe_fused.h", "tt::moe_fused_wgmma<" + std::to_string(c.warp_m) + ", " + std::to_string(c.stages) + ", " + index + ">",
            "const tt::MoeFusedArgs");
      continue;
    }
    const int bn = stage == 1 ? c.block_n1 : c.block_n2;
    if (c.math == Math::kWgmma2) {
      // NOTE: the kernel steps its two stage-2 halves' W scales by half_rows / 128 rows: whole 128-row blocks only.
      TUNETAB_ASSERT(c.w_halves(stage) == 1 || stage == 1 || c.half_rows(stage) % 128 == 0,
                     "wgmma2: stage-2 halves of whole 128-row scale blocks (" + c.name() + ")");
      add("moe_wgmma2.h",
          "tt::moe_stage_wgmma2<" + std::to_string(stage) + ", " + std::to_string(c.block_m) + ", " + std::to_string(c.warp_m) +
              ", " + std::to_string(c.half_rows(stage)) + ", " + std::to_string(c.w_halves(stage)) + ", " +
              std::to_string(c.stages) + ", " + index + ">",
          "const tt::MoeStageTma2Args");
      continue;
    }
    if (c.math == Math::kWgmma) {
      add("moe_gemm.h",
          "tt::moe_stage_wgmma<" + std::to_string(stage) + ", " + std::to_string(c.warp_m) + ", " + std::to_string(bn) +
              ", " + std::to_string(c.stages) + ", " + std::to_string(c.cluster()) + ", " + index + ">",
          "const tt::MoeStageTmaArgs");
      continue;
    }
    const int warp_n = bn / c.warps_n();
    add("moe_gemm.h",
        "tt::moe_stage<" + std::to_string(stage) + ", " + std::to_string(static_cast<int>(c.quant)) + ", " +
            std::to_string(c.block_m) + ", " + std::to_string(c.warp_m) + ", " + std::to_string(bn) + ", " +
            std::to_string(warp_n) + ", " + std::to_string(c.block_k) + ", " + std::to_string(c.stages) + ", " +
            std::to_string(static_cast<int>(c.math)) + ", " + index + ">",
        "tt::MoeStageArgs");
  }
  if (c.math == Math::kWgmma2)
    add("moe_wgmma2.h", "tt::moe_reduce_bf16<" + index + ">", "tt::MoeReduceArgs");  // bf16 stage-2 rows
  else
    add("moe_route.h", "tt::moe_reduce<" + index + ">", "tt::MoeReduceArgs");
  return out;
}

Alignment align_cpu(const std::vector<int>& topk_ids, int experts, int block_m) {
  TUNETAB_ASSERT(experts > 0 && block_m > 0, "experts and block_m must be positive");
  Alignment a;
  a.counts.assign(static_cast<std::size_t>(experts), 0);
  for (int e : topk_ids) {
    TUNETAB_ASSERT(e >= 0 && e < experts, "expert id out of range");
    ++a.counts[static_cast<std::size_t>(e)];
  }
  std::vector<int> offset(static_cast<std::size_t>(experts) + 1, 0);
  for (int e = 0; e < experts; ++e)
    offset[e + 1] = offset[e] + static_cast<int>(ceil_div(a.counts[e], block_m)) * block_m;
  a.num_padded = offset[experts];
  const int rows = static_cast<int>(topk_ids.size());
  a.sorted_ids.assign(static_cast<std::size_t>(a.num_padded), rows);
  a.expert_ids.assign(static_cast<std::size_t>(a.num_padded / block_m), -1);
  for (int e = 0; e < experts; ++e)
    for (int b = offset[e]; b < offset[e + 1]; b += block_m) a.expert_ids[b / block_m] = e;
  std::vector<int> cursor(offset.begin(), offset.end() - 1);
  for (int i = 0; i < rows; ++i) a.sorted_ids[cursor[topk_ids[i]]++] = i;
  return a;
}

namespace {
/// splitmix64 stream.
struct Rng {
  std::uint64_t s;
  explicit Rng(std::uint64_t seed) : s(seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull) {}
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
};
}  // namespace

RoutingData make_routing(const Problem& p, std::uint64_t seed) {
  Rng rng(seed ^ 0x7f4a7c159e3779b9ull);
  const int e = static_cast<int>(p.experts), k = static_cast<int>(p.topk);
  // Expert popularity: uniform, or Zipf (s = 1.2) over a random ranking of the experts.
  std::vector<double> weight(static_cast<std::size_t>(e), 1.0);
  if (p.routing == Routing::kSkewed) {
    std::vector<int> rank(static_cast<std::size_t>(e));
    std::iota(rank.begin(), rank.end(), 0);
    for (int i = e - 1; i > 0; --i) std::swap(rank[i], rank[static_cast<int>(rng.next() % static_cast<std::uint64_t>(i + 1))]);
    for (int i = 0; i < e; ++i) weight[rank[i]] = 1.0 / std::pow(static_cast<double>(i + 1), 1.2);
  }
  RoutingData r;
  r.topk_ids.reserve(static_cast<std::size_t>(p.rows()));
  r.topk_weights.reserve(static_cast<std::size_t>(p.rows()));
  std::vector<double> w(weight.size());
  for (std::int64_t t = 0; t < p.m; ++t) {
    // k distinct experts, each drawn with probability proportional to its popularity among those left.
    w = weight;
    std::vector<float> logits;
    for (int j = 0; j < k; ++j) {
      double total = 0;
      for (double x : w) total += x;
      double u = rng.uniform() * total;
      int pick = e - 1;
      for (int i = 0; i < e; ++i) {
        if (w[i] <= 0) continue;
        if (u < w[i]) {
          pick = i;
          break;
        }
        u -= w[i];
      }
      while (w[pick] <= 0) pick = (pick + e - 1) % e;  // rounding at the end of the scan
      w[pick] = 0;
      r.topk_ids.push_back(pick);
      logits.push_back(static_cast<float>(2.0 * rng.uniform() - 1.0));
    }
    // Softmax over the picked logits: positive weights that sum to 1, as a renormalized router gives.
    const float mx = *std::max_element(logits.begin(), logits.end());
    float sum = 0;
    for (float& l : logits) sum += (l = std::exp(l - mx));
    for (float l : logits) r.topk_weights.push_back(l / sum);
  }
  return r;
}

float e4m3_max(bool fnuz) { return fnuz ? 240.0f : 448.0f; }

float e4m3_to_float(std::uint8_t b, bool fnuz) {
  const std::uint32_t sign = static_cast<std::uint32_t>(b & 0x80u) << 24;
  const std::uint32_t e = (b >> 3) & 0xfu, m = b & 7u;
  std::uint32_t bits;
  if (e == 0) {
    const float v = static_cast<float>(m) * (fnuz ? 1.0f / 1024.0f : 1.0f / 512.0f);
    std::memcpy(&bits, &v, 4);
    bits |= sign;
  } else {
    bits = sign | ((e + (fnuz ? 119u : 120u)) << 23) | (m << 20);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint8_t float_to_e4m3(float x, bool fnuz) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, 4);
  const std::uint32_t sign = (bits >> 24) & 0x80u;
  const std::uint32_t abits = bits & 0x7fffffffu;
  float a;
  std::memcpy(&a, &abits, 4);
  const std::uint32_t bias = fnuz ? 8u : 7u, max_code = fnuz ? 0x7fu : 0x7eu;
  std::uint32_t code;
  if (!(a < e4m3_max(fnuz))) {
    code = max_code;
  } else if (abits < ((127u + 1u - bias) << 23)) {
    code = static_cast<std::uint32_t>(std::nearbyint(a * (fnuz ? 1024.0f : 512.0f)));
  } else {
    const std::uint32_t r = (abits + 0x7ffffu + ((abits >> 20) & 1u)) >> 20;
    code = std::min(r - ((127u - bias) << 3), max_code);
  }
  if (fnuz && code == 0) return 0;
  return static_cast<std::uint8_t>(code | sign);
}

void quantize_rows_1x128(const std::vector<std::uint16_t>& x, std::int64_t rows, std::int64_t cols, bool fnuz,
                         std::vector<std::uint8_t>& q, std::vector<float>& scale) {
  const std::int64_t groups = ceil_div(cols, 128);
  q.assign(static_cast<std::size_t>(rows * cols), 0);
  scale.assign(static_cast<std::size_t>(rows * groups), 1.f);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t g = 0; g < groups; ++g) {
      const std::int64_t c0 = g * 128, c1 = std::min(cols, c0 + 128);
      float amax = 0;
      for (std::int64_t c = c0; c < c1; ++c) amax = std::max(amax, std::fabs(gemm::bf16_to_float(x[r * cols + c])));
      const float s = amax > 0 ? amax / e4m3_max(fnuz) : 1.0f;
      scale[r * groups + g] = s;
      for (std::int64_t c = c0; c < c1; ++c) q[r * cols + c] = float_to_e4m3(gemm::bf16_to_float(x[r * cols + c]) / s, fnuz);
    }
}

namespace {

/// Quantizes [batch, rows, cols] per 128x128 block; fill(b, i, j, h, w, block) writes block (i, j) of batch b,
/// h rows by w columns (smaller at ragged edges), row-major into `block`, so each value is produced once.
template <typename Fill>
void quantize_blocks_of(Fill fill, std::int64_t batch, std::int64_t rows, std::int64_t cols, bool fnuz,
                        std::vector<std::uint8_t>& q, std::vector<float>& scale) {
  const std::int64_t rb = ceil_div(rows, 128), cb = ceil_div(cols, 128);
  q.assign(static_cast<std::size_t>(batch * rows * cols), 0);
  scale.assign(static_cast<std::size_t>(batch * rb * cb), 1.f);
#pragma omp parallel for collapse(2)
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < rb; ++i) {
      std::vector<float> block(128 * 128);
      for (std::int64_t j = 0; j < cb; ++j) {
        const std::int64_t h = std::min(rows, (i + 1) * 128) - i * 128, w = std::min(cols, (j + 1) * 128) - j * 128;
        fill(b, i, j, h, w, block.data());
        float amax = 0;
        for (std::int64_t e = 0; e < h * w; ++e) amax = std::max(amax, std::fabs(block[e]));
        const float s = amax > 0 ? amax / e4m3_max(fnuz) : 1.0f;
        scale[(b * rb + i) * cb + j] = s;
        for (std::int64_t r = 0; r < h; ++r)
          for (std::int64_t c = 0; c < w; ++c)
            q[b * rows * cols + (i * 128 + r) * cols + j * 128 + c] = float_to_e4m3(block[r * w + c] / s, fnuz);
      }
    }
}

}  // namespace

void quantize_blocks_128(const std::vector<std::uint16_t>& x, std::int64_t batch, std::int64_t rows, std::int64_t cols,
                         bool fnuz, std::vector<std::uint8_t>& q, std::vector<float>& scale) {
  quantize_blocks_of(
      [&](std::int64_t b, std::int64_t i, std::int64_t j, std::int64_t h, std::int64_t w, float* block) {
        const std::uint16_t* xb = x.data() + b * rows * cols + i * 128 * cols + j * 128;
        for (std::int64_t r = 0; r < h; ++r)
          for (std::int64_t c = 0; c < w; ++c) block[r * w + c] = gemm::bf16_to_float(xb[r * cols + c]);
      },
      batch, rows, cols, fnuz, q, scale);
}

void random_blocks_128(std::int64_t batch, std::int64_t rows, std::int64_t cols, std::uint64_t seed, float amp, bool fnuz,
                       std::vector<std::uint8_t>& q, std::vector<float>& scale) {
  quantize_blocks_of(
      [&](std::int64_t b, std::int64_t i, std::int64_t j, std::int64_t h, std::int64_t w, float* block) {
        for (std::int64_t r = 0; r < h; ++r)
          for (std::int64_t c = 0; c < w; ++c) {
            const auto at = static_cast<std::size_t>(b * rows * cols + (i * 128 + r) * cols + j * 128 + c);
            // As random_scaled in make_operands: the bf16 draw, scaled, rounded to bf16 again.
            block[r * w + c] = gemm::bf16_to_float(gemm::float_to_bf16(gemm::bf16_to_float(gemm::random_bf16_at(seed, at)) * amp));
          }
      },
      batch, rows, cols, fnuz, q, scale);
}

}  // namespace tunetab::moe
