// Gap reports: the consumer's lookup simulated over every M of every key, on hand-built tables and on the
// real AITER tables in shared/aiter-configs, with the expected ranges worked out by hand beside each test.
#include "exporters/gaps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <tuple>

#include "exporters/aiter_tuned.h"
#include "test_files.h"
#include "tuner/error.h"

namespace po = boost::program_options;
using namespace tunetab;
using namespace tunetab::exporters;
using tunetab::testing::aiter_table;
using tunetab::testing::TempDir;
using tunetab::testing::expect_input_error;

namespace {

using Range = std::tuple<std::string, std::int64_t, std::int64_t>;  // kind, m_first, m_last

const char* const kBf16Header =
    "gfx,cu_num,M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle,libtype,solidx,splitK,us,kernelName,err_ratio,tflops,bw\n";
const char* const kFmoeHeader =
    "gfx,cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,use_g1u1,doweight_stage1,"
    "block_m,ksplit,us1,kernelName1,err1,us2,kernelName2,err2,us,run_1stage\n";
const char* const kGlm5 = "model_configs/a8w8_blockscale_tuned_fmoe_glm5_1.csv";
const char* const kGlm47 = "model_configs/glm47_fp8_tuned_fmoe.csv";

profile::Matrix derive(const std::string& profile, const std::vector<std::string>& flags = {}) {
  po::variables_map vm;
  po::store(po::command_line_parser(flags).options(profile::envelope_options()).run(), vm);
  const auto env = profile::envelope_from(vm, tunetab::testing::repo_file(profile));
  return profile::derive_matrix(profile::read_model(env.hf_config), env);
}

/// The report on `tables` for the keys of `matrix`, every domain ending at m_max when it is given.
GapReport audit(TableFormat format, const std::vector<std::string>& tables, const profile::Matrix& matrix,
                std::int64_t m_max = 0) {
  auto options = GapOptions::from(matrix.envelope);
  const auto rows = read_rows(format, tables, options);
  auto keys = matrix_keys(format, matrix, options);
  if (m_max)
    for (auto& k : keys) k.domain.last = m_max;
  return find_gaps(format, keys, rows, options);
}

/// The gaps `keep` accepts, as (kind, first, last).
std::vector<Range> ranges(const GapReport& r, const std::function<bool(const Gap&)>& keep) {
  std::vector<Range> out;
  for (const auto& g : r.gaps)
    if (keep(g)) out.emplace_back(to_string(g.kind), g.m_first, g.m_last);
  return out;
}
std::vector<Range> serving(const GapReport& r) {
  return ranges(r, [](const Gap& g) { return is_serving_gap(g.kind); });
}

/// The lines of the defects of one kind.
std::vector<int> defect_lines(const GapReport& r, GapKind kind) {
  std::vector<int> out;
  for (const auto& g : r.gaps)
    if (g.kind == kind) out.push_back(g.row->line);
  return out;
}

std::string field_of(const KeyFields& k, const std::string& name) {
  for (const auto& [n, v] : k)
    if (n == name) return v;
  return "<absent>";
}

std::vector<std::string> file_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

class RealTableGaps : public tunetab::testing::WithAiterTables {};

}  // namespace

TEST(Gaps, PaddedGemmLookupExtrapolatesPastItsOnlyRowAndOverflows) {
  TempDir dir("gaps_padded");
  const std::string table = dir.write(
      "bf16_tuned_gemm.csv",
      std::string(kBf16Header) +
          "gfx942,304,8192,6144,1280,False,torch.bfloat16,torch.bfloat16,False,False,hipblaslt,7,0,250.5,k,0.0,90.0,300.0\n");
  const std::string shapes = dir.write(
      "shapes.csv",
      "M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle\n768000,6144,1280,False,torch.bfloat16,torch.bfloat16,False,False\n");
  GapOptions o;
  o.gfx = "gfx942";
  o.cu_num = 304;
  auto rows = read_rows(TableFormat::kAiterBf16Gemm, {table}, o);
  const auto keys = csv_keys(TableFormat::kAiterBf16Gemm, shapes, o, 1);
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].domain, (profile::MDomain{1, 768000}));

  const auto start = std::chrono::steady_clock::now();
  const auto report = find_gaps(TableFormat::kAiterBf16Gemm, keys, rows, o);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.25);
  // By hand: up to 4096 no padding reaches 8192 (the fine one rounds to multiples of 64, the coarse one to
  // powers of two): miss. 4097..8192: the coarse padding is 8192 (and the fine one from 8065). Past 8192,
  // N = 6144 > 4096 so the coarse padding stays 8192: the row measured at 8192 serves up to 768000. C[M,N]
  // reaches 2^31 elements first at M = ceil(2^31 / 6144) = 349526 (349525 * 6144 = 2147481600 < 2^31).
  static_assert(349526LL * 6144 >= (1LL << 31) && 349525LL * 6144 < (1LL << 31));
  EXPECT_EQ(serving(report),
            (std::vector<Range>{{"miss", 1, 4096}, {"extrapolated", 8193, 768000}, {"index-overflow", 349526, 768000}}));
  EXPECT_EQ(report.gaps[1].row->m, 8192);
  EXPECT_EQ(report.gaps[1].row->line, 2);
  EXPECT_TRUE(report.has_serving_gaps());
  EXPECT_EQ(report.complete_keys, 0u);

  // A row proven with 64-bit indexing (the hook for tunetab's own rows) is no overflow.
  rows[0].index_bits = 64;
  EXPECT_EQ(serving(find_gaps(TableFormat::kAiterBf16Gemm, keys, rows, o)),
            (std::vector<Range>{{"miss", 1, 4096}, {"extrapolated", 8193, 768000}}));

  // The miss becomes AITER's untuned rows: the powers of two the lookup asks for, 1..4096.
  std::istringstream untuned(aiter_untuned_csv(TableFormat::kAiterBf16Gemm, report));
  std::vector<std::string> lines;
  for (std::string l; std::getline(untuned, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 14u);
  EXPECT_EQ(lines[0], "M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle");
  EXPECT_EQ(lines[1], "1,6144,1280,False,torch.bfloat16,torch.bfloat16,False,False");
  EXPECT_EQ(lines[13], "4096,6144,1280,False,torch.bfloat16,torch.bfloat16,False,False");
}

TEST(Gaps, IndexModelFirstOverflowM) {
  EXPECT_EQ(IndexModel::gemm(6144, 1280).first_overflow_m(0), 349526);
  EXPECT_EQ(IndexModel::gemm(1280, 6144).first_overflow_m(0), 349526);  // A[M,K] too
  EXPECT_EQ(IndexModel::gemm(100000, 30000).first_overflow_m(0), 1);    // B alone holds 3e9 elements
  // Fused MoE, 9 routed copies per token, 161 experts padded to 32 rows, rows of 5120: by hand
  // ceil(2^31 / 5120) = 419431 rows; (419431 - 161 * 32) / 9 = 46031.
  EXPECT_EQ(IndexModel::fused_moe(5120, 192, 161, 9).first_overflow_m(32), 46031);
  EXPECT_EQ(IndexModel::fused_moe(5120, 192, 161, 9).first_overflow_m(0), 46604);  // ceil(419431 / 9)
}

TEST_F(RealTableGaps, Glm5FusedMoeMissesEveryMThatPadsTo512) {
  // README: glm5_1's key (6144, 2048, 32, 8) has tokens 1..256 and 1024..16384 but no 512, so every M in
  // 257..512 (padded to 512) runs AITER's default. The GLM-5 profile (EP8, gfx942, 304 CUs, M up to
  // 16384) hits exactly that key; every other bucket has its power of two. Index overflow needs
  // (8 M + 32 * 64) * 6144 >= 2^31, M >= 43435, past 16384.
  const auto report = audit(TableFormat::kAiterFmoe, {aiter_table(kGlm5)}, derive("profiles/glm-5-fp8-ep8-gfx942.cfg"));
  EXPECT_EQ(report.keys, 1u);
  EXPECT_EQ(report.complete_keys, 0u);
  EXPECT_EQ(serving(report), (std::vector<Range>{{"miss", 257, 512}}));
  const auto& key = report.gaps[0].key;
  EXPECT_EQ(field_of(key, "gfx"), "gfx942");
  EXPECT_EQ(field_of(key, "cu_num"), "304");
  EXPECT_EQ(field_of(key, "inter_dim"), "2048");
  EXPECT_EQ(field_of(key, "expert"), "32");
  // The hand-pinned rows (README): us = us1 = 0.0 at lines 4..11. No error above 5%, no repeat, no
  // unreachable row (every token a power of two).
  EXPECT_EQ(defect_lines(report, GapKind::kNonPositiveTime), (std::vector<int>{4, 5, 6, 7, 8, 9, 10, 11}));
  for (auto kind : {GapKind::kErrorRatio, GapKind::kUnreachable, GapKind::kDuplicate, GapKind::kConflict})
    EXPECT_EQ(report.count(kind), 0u) << to_string(kind);

  EXPECT_EQ(aiter_untuned_csv(TableFormat::kAiterFmoe, report),
            "token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,use_g1u1,doweight_stage1\n"
            "512,6144,2048,32,8,ActivationType.Silu,torch.bfloat16,torch.float8_e4m3fnuz,torch.float8_e4m3fnuz,QuantType.per_"
            "1x128,1,0\n");

  const auto json = to_json(report);
  EXPECT_EQ(json["gaps"][0]["kind"], "miss");
  EXPECT_EQ(json["gaps"][0]["m_first"], 257);
  EXPECT_EQ(json["gaps"][0]["m_last"], 512);
  EXPECT_EQ(json["gaps"][0]["key"]["model_dim"], 6144);
  EXPECT_EQ(json["gaps"][0]["key"]["q_type"], "QuantType.per_1x128");
  EXPECT_EQ(json["summary"]["miss"], 1);
  EXPECT_EQ(json["summary"]["non-positive-time"], 8);
  const std::string text = to_text(report);
  EXPECT_EQ(
      text.rfind("miss              M 257..512        gfx=gfx942 cu_num=304 model_dim=6144 inter_dim=2048 expert=32 topk=8 ", 0),
      0u)
      << text;
  EXPECT_NE(text.find("summary: 1 keys, 0 complete; 35 rows; miss 1 extrapolated 0 index-overflow 0;"), std::string::npos)
      << text;
}

TEST_F(RealTableGaps, CanonicalTableAheadOfTheModelTableAsAiterCombinesThem) {
  // tuned_fmoe.csv holds only cu_num 80 rows (gfx942 by AITER's inference): the GLM-5 key is served as
  // before. Its line 39 has token 56, which no M pads to (get_padded_M gives powers of two): unreachable.
  const auto report = audit(TableFormat::kAiterFmoe, {aiter_table("tuned_fmoe.csv"), aiter_table(kGlm5)},
                            derive("profiles/glm-5-fp8-ep8-gfx942.cfg"));
  EXPECT_EQ(report.rows, 235u);
  EXPECT_EQ(serving(report), (std::vector<Range>{{"miss", 257, 512}}));
  EXPECT_EQ(ranges(report, [](const Gap& g) { return g.kind == GapKind::kUnreachable; }),
            (std::vector<Range>{{"unreachable", 56, 56}}));
  EXPECT_EQ(defect_lines(report, GapKind::kUnreachable), (std::vector<int>{39}));
}

TEST_F(RealTableGaps, Glm45FusedMoeKeyIsCompleteAndItsOddTokensUnreachable) {
  // GLM-4.5 per-token FP8 at TP8 with the shared expert fused: key (5120, 192, 161, 9) on gfx950 (cu_num
  // 256, no gfx column), M up to 32768. glm47_fp8 has it at every power of two 1..32768 (lines 34..49).
  const auto matrix = derive("profiles/glm-4.5-fp8-per-token-tp8.cfg");
  const auto report = audit(TableFormat::kAiterFmoe, {aiter_table(kGlm47)}, matrix);
  EXPECT_EQ(report.keys, 1u);
  EXPECT_EQ(report.complete_keys, 1u);
  EXPECT_TRUE(serving(report).empty());
  EXPECT_FALSE(report.has_serving_gaps());
  // Key (5120, 1536, 41, 10) was tuned at tokens 3, 5, 6 and 7 too (lines 52, 54..56): AITER looks up
  // powers of two only.
  EXPECT_EQ(ranges(report, [](const Gap& g) { return g.kind == GapKind::kUnreachable; }),
            (std::vector<Range>{{"unreachable", 3, 3}, {"unreachable", 5, 5}, {"unreachable", 6, 6}, {"unreachable", 7, 7}}));
  EXPECT_EQ(defect_lines(report, GapKind::kUnreachable), (std::vector<int>{52, 54, 55, 56}));
  EXPECT_EQ(report.gaps.size(), 4u);

  // Up to M = 200000: 32769..131071 pads to 32768, and 131072.. pads to 131072, which is missing and
  // falls back to 32768 (AITER's tier fallback): one extrapolated range from line 49. Index overflow from
  // 46031 (block_m 32 there; see IndexModelFirstOverflowM).
  const auto wide = audit(TableFormat::kAiterFmoe, {aiter_table(kGlm47)}, matrix, 200000);
  EXPECT_EQ(serving(wide), (std::vector<Range>{{"extrapolated", 32769, 200000}, {"index-overflow", 46031, 200000}}));
  EXPECT_EQ(wide.gaps[0].row->line, 49);
}

TEST_F(RealTableGaps, Qwen3Tp2GemmRowsPast8192ServeOnlyTheirOwnM) {
  // Qwen3-235B FP8 at TP4: qkv_proj (2304, 4096) and o_proj (4096, 2048), both in the complete qwen3_235b
  // table at every power of two 1..32768: complete.
  const std::string table = aiter_table("model_configs/a8w8_blockscale_tuned_gemm_qwen3_235b.csv");
  const auto tp4 = audit(TableFormat::kAiterA8w8BlockscaleGemm, {table}, derive("profiles/qwen3-235b-fp8-tp4.cfg"));
  EXPECT_EQ(tp4.keys, 2u);
  EXPECT_EQ(tp4.complete_keys, 2u);
  // At TP2 qkv_proj is (4608, 4096): N > 4096, so past 8192 the coarse padding is 8192 (line 111). The
  // 16384 and 32768 rows are hit by M itself and by the fine padding (multiples of 128) from 16257 and
  // 32641 only. o_proj (4096, 4096) stays complete.
  const auto tp2 =
      audit(TableFormat::kAiterA8w8BlockscaleGemm, {table}, derive("profiles/qwen3-235b-fp8-tp4.cfg", {"--tp", "2"}));
  EXPECT_EQ(tp2.complete_keys, 1u);
  EXPECT_EQ(serving(tp2), (std::vector<Range>{{"extrapolated", 8193, 16256}, {"extrapolated", 16385, 32640}}));
  EXPECT_EQ(field_of(tp2.gaps[0].key, "N"), "4608");
  EXPECT_EQ(tp2.gaps[0].row->line, 111);
  EXPECT_EQ(tp2.gaps[1].row->line, 111);
}

TEST_F(RealTableGaps, RepeatedKeysAcrossCombinedTablesAreDuplicatesOrConflicts) {
  // A model_configs file that repeats glm5_1's token-1024 row (line 32) as it is and its token-256 row
  // (line 31) with another kernel: AITER's merge stops on both; the first table's rows serve.
  const auto lines = file_lines(aiter_table(kGlm5));
  std::string changed = lines[30];
  changed.replace(changed.find("_ZN5aiter"), 9, "_ZN5other");
  TempDir dir("gaps_repeat");
  const std::string extra =
      dir.write("a8w8_blockscale_tuned_fmoe_extra.csv", lines[0] + "\n" + lines[31] + "\n" + changed + "\n");
  const auto report = audit(TableFormat::kAiterFmoe, {aiter_table(kGlm5), extra}, derive("profiles/glm-5-fp8-ep8-gfx942.cfg"));
  EXPECT_EQ(serving(report), (std::vector<Range>{{"miss", 257, 512}}));
  EXPECT_EQ(ranges(report, [](const Gap& g) { return g.kind == GapKind::kDuplicate || g.kind == GapKind::kConflict; }),
            (std::vector<Range>{{"duplicate", 1024, 1024}, {"conflict", 256, 256}}));
  EXPECT_EQ(defect_lines(report, GapKind::kDuplicate), (std::vector<int>{2}));
  EXPECT_EQ(defect_lines(report, GapKind::kConflict), (std::vector<int>{3}));
  const auto dup =
      std::find_if(report.gaps.begin(), report.gaps.end(), [](const Gap& g) { return g.kind == GapKind::kDuplicate; });
  EXPECT_NE(dup->detail.find("a8w8_blockscale_tuned_fmoe_glm5_1.csv:32 field for field"), std::string::npos) << dup->detail;
}

TEST(Gaps, FusedMoeRetriesAnyActivationAndFallsBackFromTheTopTier) {
  TempDir dir("gaps_act");
  const std::string key = "4096,1536,16,8,%s,torch.bfloat16,torch.float8_e4m3fn,torch.float8_e4m3fn,QuantType.per_1x128,1,0";
  const auto row = [&](int token, const char* act, int block_m) {
    char k[256];
    std::snprintf(k, sizeof(k), key.c_str(), act);
    return "gfx950,256," + std::to_string(token) + "," + k + "," + std::to_string(block_m) +
           ",0,10.0,k1,0.0%,10.0,k2,0.0%,20.0,0\n";
  };
  const std::string table = dir.write(
      "tuned_fmoe.csv", std::string(kFmoeHeader) + row(1, "ActivationType.Silu", 32) + row(2, "ActivationType.Silu", 32) +
                            row(32768, "ActivationType.Silu", 32) + row(32768, "ActivationType.Gelu", 64));
  char gelu[256], swiglu[256];
  std::snprintf(gelu, sizeof(gelu), key.c_str(), "ActivationType.Gelu");
  std::snprintf(swiglu, sizeof(swiglu), key.c_str(), "ActivationType.Swiglu");
  const std::string shapes = dir.write("untuned_fmoe.csv",
                                       "token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,use_g1u1,"
                                       "doweight_stage1\n40000," +
                                           std::string(gelu) + "\n200000," + swiglu + "\n");
  GapOptions o;
  o.gfx = "gfx950";
  o.cu_num = 256;
  const auto rows = read_rows(TableFormat::kAiterFmoe, {table}, o);
  const auto keys = csv_keys(TableFormat::kAiterFmoe, shapes, o, 1);
  ASSERT_EQ(keys.size(), 2u);
  const auto report = find_gaps(TableFormat::kAiterFmoe, keys, rows, o);
  // Gelu: M 1 and 2 take the Silu rows (act_type retried as a wildcard); 3..16384 pad to powers of two
  // without rows; 16385..40000 pad to 32768, where the exact Gelu row (line 5) wins over the Silu one.
  // Swiglu: no exact row anywhere, the Silu rows serve; from 131072 the missing top tier falls back to
  // 32768 (line 4). The 32768 rows reach 2^31 elements at (2^31 / 4096 - 16 * 32) / 8 = 65472 (Silu row).
  EXPECT_EQ(serving(report), (std::vector<Range>{{"miss", 3, 16384},
                                                 {"extrapolated", 32769, 40000},
                                                 {"miss", 3, 16384},
                                                 {"extrapolated", 32769, 200000},
                                                 {"index-overflow", 65472, 200000}}));
  EXPECT_EQ(report.gaps[1].row->line, 5);
  EXPECT_EQ(report.gaps[3].row->line, 4);
}

TEST(Gaps, FusedMoeRowsAtTokensNoMPadsToAreUnreachable) {
  TempDir dir("gaps_unreachable");
  std::string text = kFmoeHeader;
  for (int token : {3, 64, 65536, 131072, 262144})
    text +=
        "gfx942,304," + std::to_string(token) +
        ",7168,256,257,9,ActivationType.Silu,torch.bfloat16,torch.float8_e4m3fnuz,torch.float8_e4m3fnuz,QuantType.per_1x128,1,0,"
        "32,0,10.0,k1,0.0%,10.0,k2,0.0%,20.0,0\n";
  GapOptions o;
  const auto rows = read_rows(TableFormat::kAiterFmoe, {dir.write("tuned_fmoe.csv", text)}, o);
  const auto report = find_gaps(TableFormat::kAiterFmoe, {}, rows, o);
  EXPECT_EQ(ranges(report, [](const Gap&) { return true; }),
            (std::vector<Range>{{"unreachable", 3, 3}, {"unreachable", 65536, 65536}, {"unreachable", 262144, 262144}}));
}

TEST(Gaps, VllmServesTheNearestKeyOfTheDevicesFile) {
  TempDir dir("gaps_vllm");
  const char* config =
      R"({"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 1, "num_warps": 4, "num_stages": 3})";
  std::string json = "{";
  for (const char* m : {"1", "2", "4", "64", "4"}) json += std::string(json.size() > 1 ? "," : "") + "\"" + m + "\": " + config;
  json += "}";
  const std::string h200 = dir.write("E=8,N=7168,device_name=NVIDIA_H200.json", json);
  // Mixtral-8x7B bf16 at TP2: E = 8, N = 14336 / 2 = 7168, the file without dtype or block shape.
  const auto matrix = derive("profiles/mixtral-8x7b-bf16-tp2.cfg");
  const auto report = audit(TableFormat::kVllmMoeJson, {h200}, matrix, 100);
  // By hand, nearest key (a tie to the smaller): 3 -> 2; 5..34 -> 4 (34 is as far from 4 as from 64);
  // 35..64 -> 64; 65..100 -> 64. Every M finds a row; those above their row's M are extrapolated.
  EXPECT_EQ(serving(report), (std::vector<Range>{{"extrapolated", 3, 3}, {"extrapolated", 5, 34}, {"extrapolated", 65, 100}}));
  EXPECT_EQ(field_of(report.gaps[0].key, "device_name"), "NVIDIA_H200");
  EXPECT_EQ(ranges(report, [](const Gap& g) { return !is_serving_gap(g.kind); }), (std::vector<Range>{{"duplicate", 4, 4}}));

  // Another device's file: the tables no longer name one device, and the deployment must say which.
  const std::string mi300 = dir.write("E=8,N=7168,device_name=AMD_Instinct_MI300X.json", "{}");
  auto o = GapOptions::from(matrix.envelope);
  expect_input_error(
      [&] {
        read_rows(TableFormat::kVllmMoeJson, {h200, mi300}, o);
      },
      "--device-name: the tables name several devices");
  o.device_name = "AMD_Instinct_MI300X";
  const auto rows = read_rows(TableFormat::kVllmMoeJson, {h200, mi300}, o);
  auto keys = matrix_keys(TableFormat::kVllmMoeJson, matrix, o);
  keys[0].domain.last = 100;
  EXPECT_EQ(serving(find_gaps(TableFormat::kVllmMoeJson, keys, rows, o)), (std::vector<Range>{{"miss", 1, 100}}));
  expect_input_error([&] { aiter_untuned_csv(TableFormat::kVllmMoeJson, report); },
                     "--emit-untuned: vllm-moe-json has no untuned CSV");
}

TEST(Gaps, FormatNamesAndBadKeyFiles) {
  for (auto f :
       {TableFormat::kAiterFmoe, TableFormat::kAiterBf16Gemm, TableFormat::kAiterA8w8BlockscaleGemm, TableFormat::kVllmMoeJson})
    EXPECT_EQ(table_format_from_string(to_string(f)), f);
  expect_input_error([] { table_format_from_string("aiter"); }, "--format 'aiter': expected one of aiter-fmoe, aiter-bf16-gemm");
  TempDir dir("gaps_keys");
  GapOptions o;
  expect_input_error([&] { csv_keys(TableFormat::kAiterA8w8BlockscaleGemm, dir.write("a.csv", "M,N\n1,64\n"), o, 8192); },
                     "a.csv: missing column 'K'");
  expect_input_error([&] { csv_keys(TableFormat::kAiterA8w8BlockscaleGemm, dir.write("b.csv", "M,N,K\n1,0,64\n"), o, 8192); },
                     "b.csv:2: column 'N': expected a positive integer");
  expect_input_error([&] { csv_keys(TableFormat::kVllmMoeJson, dir.write("c.csv", "E,N,M\n8,7168,-1\n"), o, 8192); },
                     "c.csv:2: column 'M': expected a positive integer");
  // Without an M column every key ends at the default.
  const auto keys = csv_keys(TableFormat::kAiterA8w8BlockscaleGemm, dir.write("d.csv", "N,K\n64,64\n64,64\n128,64\n"), o, 4000);
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].domain, (profile::MDomain{1, 4000}));
}
