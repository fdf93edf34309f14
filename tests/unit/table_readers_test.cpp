// Readers of the tables the gap report audits: AITER's tuned fused-MoE and GEMM CSVs, vLLM's MoE JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <sstream>

#include "exporters/aiter_tuned.h"
#include "exporters/vllm_moe_json.h"
#include "test_files.h"
#include "tuner/error.h"

using namespace tunetab;
using namespace tunetab::exporters;
using tunetab::testing::aiter_table;
using tunetab::testing::TempDir;
using tunetab::testing::expect_input_error;

namespace {

const char* const kFmoeHeader =
    "cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,use_g1u1,doweight_stage1,"
    "block_m,ksplit,us1,kernelName1,err1,us2,kernelName2,err2,us,run_1stage\n";
const char* const kFmoeKey =
    "4096,1536,16,8,ActivationType.Silu,torch.bfloat16,torch.float8_e4m3fn,torch.float8_e4m3fn,QuantType.per_1x128,1,0";

std::vector<AiterFmoeRow> fmoe(const std::string& text) {
  std::istringstream in(text);
  return read_aiter_fmoe(in, "t.csv");
}

std::vector<AiterGemmRow> gemm(const std::string& text, profile::Quant q) {
  std::istringstream in(text);
  return read_aiter_gemm(in, "g.csv", q);
}

class RealTableReaders : public tunetab::testing::WithAiterTables {};

/// Every file of shared/aiter-configs whose name holds `part` and is not an untuned table.
std::vector<std::string> tuned_files(const std::string& part) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(aiter_table(""))) {
    const std::string name = e.path().filename().string();
    if (name.find(part) != std::string::npos && name.find("untuned") == std::string::npos) out.push_back(e.path().string());
  }
  return out;
}

}  // namespace

TEST_F(RealTableReaders, FmoeWithoutGfxColumnTakesAitersGfxForItsCuNum) {
  const auto rows = read_aiter_fmoe(aiter_table("tuned_fmoe.csv"));
  ASSERT_EQ(rows.size(), 200u);
  const auto& r = rows[0];     // line 2
  EXPECT_EQ(r.gfx, "gfx942");  // cu_num 80, no gfx column
  EXPECT_EQ(r.cu_num, 80);
  EXPECT_EQ(r.token, 4);
  EXPECT_EQ(r.key.model_dim, 2304);
  EXPECT_EQ(r.key.inter_dim, 1536);
  EXPECT_EQ(r.key.act_type, "ActivationType.Gelu");
  EXPECT_EQ(r.key.doweight_stage1, 1);
  EXPECT_EQ(r.block_m, 32);
  EXPECT_FALSE(r.run_1stage);
  EXPECT_DOUBLE_EQ(r.us, 32.3123);
  EXPECT_DOUBLE_EQ(r.us2, 14.5115);
  EXPECT_EQ(r.line, 2);
}

TEST_F(RealTableReaders, FmoeOneStageRowsLeaveStageTwoEmpty) {
  // glm5_1 has the gfx column; line 2 runs one kernel: kernelName2 empty, us2 0.0.
  const auto rows = read_aiter_fmoe(aiter_table("model_configs/a8w8_blockscale_tuned_fmoe_glm5_1.csv"));
  ASSERT_EQ(rows.size(), 35u);
  EXPECT_EQ(rows[0].gfx, "gfx942");
  EXPECT_EQ(rows[0].cu_num, 304);
  EXPECT_TRUE(rows[0].run_1stage);
  EXPECT_EQ(rows[0].kernel_name2, "");
  EXPECT_DOUBLE_EQ(rows[0].us2, 0.0);
  // The hand-pinned rows the README names: token 4, block_m 1, us = 0.
  EXPECT_EQ(rows[2].line, 4);
  EXPECT_EQ(rows[2].token, 4);
  EXPECT_EQ(rows[2].block_m, 1);
  EXPECT_DOUBLE_EQ(rows[2].us, 0.0);
}

TEST_F(RealTableReaders, FmoeErrorsArePercentagesOrBareRatiosAndTagsAreKept) {
  const auto glm = read_aiter_fmoe(aiter_table("model_configs/a8w8_blockscale_tuned_fmoe_glm5.csv"));
  EXPECT_NEAR(glm[0].err2, 0.182, 1e-12);  // "18.2%"
  // gptoss_fp8fp4 line 18: bare "0.0" errors and _tag flydsl_fallback, after the xbf16 and flat columns.
  const auto gpt = read_aiter_fmoe(aiter_table("model_configs/gptoss_fp8fp4_tuned_fmoe.csv"));
  const auto it = std::find_if(gpt.begin(), gpt.end(), [](const AiterFmoeRow& r) { return r.line == 18; });
  ASSERT_NE(it, gpt.end());
  EXPECT_EQ(it->tag, "flydsl_fallback");
  EXPECT_DOUBLE_EQ(it->err1, 0.0);
  EXPECT_NE(it->rest.find("xbf16=0"), std::string::npos) << it->rest;
}

TEST_F(RealTableReaders, RowsShortOfTheHeaderReadTheirLastFieldsAsBlank) {
  // dsv4_fp8fp4 line 9 has 28 fields under a 29-column header (no _tag); pandas pads it, so do we.
  const auto rows = read_aiter_fmoe(aiter_table("model_configs/dsv4_fp8fp4_tuned_fmoe.csv"));
  const auto it = std::find_if(rows.begin(), rows.end(), [](const AiterFmoeRow& r) { return r.line == 9; });
  ASSERT_NE(it, rows.end());
  EXPECT_EQ(it->token, 128);
  EXPECT_EQ(it->tag, "");
  EXPECT_DOUBLE_EQ(it->us, 344.664);
}

TEST_F(RealTableReaders, EveryRealTunedTableReads) {
  std::size_t files = 0;
  for (const auto& path : tuned_files("tuned_fmoe")) {
    EXPECT_NO_THROW(read_aiter_fmoe(path)) << path;
    ++files;
  }
  for (const auto& path : tuned_files("bf16_tuned_gemm")) {
    EXPECT_NO_THROW(read_aiter_gemm(path, profile::Quant::kBf16)) << path;
    ++files;
  }
  for (const auto& path : tuned_files("a8w8_blockscale_tuned_gemm")) {
    EXPECT_NO_THROW(read_aiter_gemm(path, profile::Quant::kFp8Block128)) << path;
    ++files;
  }
  EXPECT_GE(files, 40u);
}

TEST_F(RealTableReaders, GemmTablesFindTheirColumnsByName) {
  // bf16: err_ratio before tflops,bw; the key goes on after M, N, K with AITER's spelling.
  const auto bf16 = read_aiter_gemm(aiter_table("bf16_tuned_gemm.csv"), profile::Quant::kBf16);
  ASSERT_EQ(bf16.size(), 200u);
  EXPECT_EQ(bf16[0].gfx, "gfx950");
  EXPECT_EQ(bf16[0].m, 64);
  EXPECT_EQ(bf16[0].n, 256);
  EXPECT_EQ(bf16[0].k, 5120);
  EXPECT_EQ(bf16[0].key_rest, (std::vector<std::string>{"False", "torch.bfloat16", "torch.float32", "False", "False"}));
  EXPECT_DOUBLE_EQ(bf16[0].us, 7.9191);
  // a8w8 blockscale: errRatio last.
  const auto fp8 =
      read_aiter_gemm(aiter_table("model_configs/a8w8_blockscale_tuned_gemm_qwen3_235b.csv"), profile::Quant::kFp8Block128);
  ASSERT_EQ(fp8.size(), 128u);
  EXPECT_EQ(fp8[0].n, 1280);
  EXPECT_TRUE(fp8[0].key_rest.empty());
  EXPECT_EQ(fp8[0].libtype, "ck");
  EXPECT_DOUBLE_EQ(fp8[0].err_ratio, 0.0);
}

TEST(AiterTuned, GfxComesFromCuNumWhenTheColumnIsMissingOrBlank) {
  EXPECT_EQ(aiter_gfx_from_cu_num(256), "gfx950");
  EXPECT_EQ(aiter_gfx_from_cu_num(304), "gfx942");
  EXPECT_EQ(aiter_gfx_from_cu_num(80), "gfx942");
  EXPECT_EQ(aiter_gfx_from_cu_num(120), "");  // AITER takes the running GPU's
  const auto rows = gemm("gfx,cu_num,M,N,K,us,kernelName,errRatio\n,256,1,64,64,1.0,k,0.0\nnan,100,1,64,64,1.0,k,0.0\n",
                         profile::Quant::kFp8Block128);
  EXPECT_EQ(rows[0].gfx, "gfx950");
  EXPECT_EQ(rows[1].gfx, "");
}

TEST(AiterTuned, FmoeExtraColumnsAndBlankStageTwoOfOneStageRows) {
  std::string header = kFmoeHeader;
  header.insert(header.size() - 1, ",note");
  const auto rows = fmoe(header + "256,1," + kFmoeKey + ",16,0,44.5,k1,0.0%,,,,44.5,1,hello\n");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].run_1stage);
  EXPECT_EQ(rows[0].rest.substr(rows[0].rest.size() - 10), "note=hello");
}

TEST(AiterTuned, MalformedTablesNameFileLineAndColumn) {
  const std::string row_head = std::string("256,1,") + kFmoeKey + ",16,0,44.5,k1,0.0%,";
  expect_input_error([] { fmoe("cu_num,token\n256,1\n"); }, "t.csv: missing column");
  expect_input_error([&] { fmoe(kFmoeHeader + std::string("256,x,") + kFmoeKey + ",16,0,1,k,0%,1,k,0%,2,0\n"); },
                     "t.csv:2: column 'token': expected an integer, got 'x'");
  expect_input_error([&] { fmoe(kFmoeHeader + std::string("256,0,") + kFmoeKey + ",16,0,1,k,0%,1,k,0%,2,0\n"); },
                     "t.csv:2: column 'token': expected a positive integer");
  expect_input_error([&] { fmoe(kFmoeHeader + row_head + ",k2,1%,44.5,0\n"); },
                     "t.csv:2: column 'us2': expected a number, got ''");
  expect_input_error([&] { fmoe(kFmoeHeader + row_head + "1.0,k2,abc%,44.5,0\n"); }, "t.csv:2: column 'err2': expected a ratio");
  expect_input_error([&] { fmoe(kFmoeHeader + row_head + "1.0,k2,1%,44.5,0,extra\n"); }, "t.csv:2: 24 fields, header has 23");
  expect_input_error([] { gemm("gfx,cu_num,M,N,K,us,kernelName\ngfx942,304,1,64,64,1.0,k\n", profile::Quant::kFp8Block128); },
                     "g.csv: missing column 'errRatio' (or 'err_ratio')");
  expect_input_error([] { gemm("gfx,cu_num,M,N,K,us,kernelName,errRatio\ngfx942,304,1,64,64,1.0,k,0\n", profile::Quant::kBf16); },
                     "g.csv: missing column 'bias'");
  expect_input_error([] { read_aiter_fmoe("/nonexistent/tuned_fmoe.csv"); }, "/nonexistent/tuned_fmoe.csv: cannot open");
}

TEST(VllmMoeJson, FileNamesRoundTrip) {
  for (const char* name : {"E=8,N=7168,device_name=NVIDIA_H200.json",
                           "E=256,N=256,device_name=AMD_Instinct_MI300X,dtype=fp8_w8a8,block_shape=[128,128].json",
                           "E=16,N=1536,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8.json"})
    EXPECT_EQ(vllm_moe_file_name(parse_vllm_moe_file_name(std::string("/x/") + name)), name);
  const auto s =
      parse_vllm_moe_file_name("E=256,N=256,device_name=AMD_Instinct_MI300X,dtype=fp8_w8a8,block_shape=[128,128].json");
  EXPECT_EQ(s.e, 256);
  EXPECT_EQ(s.device_name, "AMD_Instinct_MI300X");
  EXPECT_EQ(s.dtype, "fp8_w8a8");
  EXPECT_EQ(s.block_shape, "[128,128]");
  expect_input_error([] { parse_vllm_moe_file_name("/x/moe_config.json"); },
                     "/x/moe_config.json: the file name must read E={E},N={N}");
}

TEST(VllmMoeJson, ConfigsInFileOrderWithRepeatedKeysListedTwice) {
  const auto f = parse_vllm_moe_json(R"({"triton_version": "3.4.0",
    "1": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 1, "num_warps": 4, "num_stages": 3},
    "64": {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 128},
    "1": {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 128}})",
                                     "/x/E=8,N=7168,device_name=NVIDIA_H200.json");
  EXPECT_EQ(f.selector.n, 7168);
  ASSERT_EQ(f.configs.size(), 3u);
  EXPECT_EQ(f.configs[0].m, 1);
  EXPECT_EQ(f.configs[1].m, 64);
  EXPECT_EQ(f.configs[1].block_size_m, 64);
  EXPECT_EQ(f.configs[2].m, 1);
  EXPECT_EQ(f.configs[0].block_size_m, 32);  // JSON keeps the last value of a repeated key
}

TEST(VllmMoeJson, MalformedConfigsSayWhatWasExpected) {
  const std::string name = "/x/E=8,N=7168,device_name=NVIDIA_H200.json";
  expect_input_error([&] { parse_vllm_moe_json("{\"1\": {", name); }, name + ": malformed JSON");
  expect_input_error([&] { parse_vllm_moe_json("[1, 2]", name); }, name + ": expected a JSON object that maps batch sizes");
  expect_input_error([&] { parse_vllm_moe_json(R"({"one": {}})", name); }, name + ": key \"one\": expected a batch size");
  expect_input_error([&] { parse_vllm_moe_json(R"({"0": {}})", name); }, "key \"0\": expected a batch size");
  expect_input_error([&] { parse_vllm_moe_json(R"({"2": 5})", name); }, "key \"2\": expected a kernel config object");
  expect_input_error([&] { parse_vllm_moe_json(R"({"2": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64}})", name); },
                     "key \"2\": BLOCK_SIZE_K: expected a positive integer");
  TempDir dir("readers");
  const std::string path = dir.write("E=8,N=7168,device_name=NVIDIA_H200.json",
                                     R"({"1": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64}})");
  EXPECT_EQ(read_vllm_moe_json(path).configs.size(), 1u);
}
