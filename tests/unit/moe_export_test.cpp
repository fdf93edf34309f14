// Fused-MoE exporters: AITER's tuned_fmoe.csv and vLLM's fused-MoE JSON, written and read back through
// the readers the gap report uses (exporters/aiter_tuned.h, exporters/vllm_moe_json.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "exporters/aiter_fmoe.h"
#include "exporters/aiter_tuned.h"
#include "exporters/csv.h"
#include "exporters/vllm_moe_export.h"
#include "exporters/vllm_moe_json.h"
#include "test_files.h"

using namespace tunetab;
using namespace tunetab::exporters;

namespace {

std::vector<FmoeChoice> glm_rows() {
  std::vector<FmoeChoice> rows;
  const std::int64_t tokens[] = {1, 16, 256, 512, 4096};
  for (std::size_t i = 0; i < std::size(tokens); ++i) {
    FmoeChoice c;
    c.cu_num = 132;
    c.token = tokens[i];
    c.key = aiter_fmoe_key(6144, 2048, 32, 8, "torch.float8_e4m3fn");
    c.block_m = i < 2 ? 16 : 64;
    c.ksplit = i == 0 ? 2 : 0;
    c.kernel_name1 = "fp8_m16w16_n64x128_k128_s3_mma_sk" + std::to_string(i == 0 ? 2 : 1) + ".stage1";
    c.kernel_name2 = "fp8_m16w16_n64x128_k128_s3_mma_sk" + std::to_string(i == 0 ? 2 : 1) + ".stage2";
    c.us1 = 100.25 + static_cast<double>(i);
    c.us2 = 55.125 + static_cast<double>(i) / 3;
    c.us = c.us1 + c.us2 + 3.0;
    c.err1 = 0.0;
    c.err2 = i == 3 ? 0.004 : 0.0;
    rows.push_back(c);
  }
  return rows;
}

}  // namespace

TEST(AiterFmoeExport, HeaderIsAitersCanonicalHeader) {
  std::ostringstream os;
  write_aiter_fmoe(os, {});
  EXPECT_EQ(os.str(),
            "cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,use_g1u1,"
            "doweight_stage1,block_m,ksplit,us1,kernelName1,err1,us2,kernelName2,err2,us,run_1stage,tflops,bw,_tag\n");
  if (tunetab::testing::have_aiter_tables()) {
    std::ifstream real(tunetab::testing::aiter_table("tuned_fmoe.csv"));
    std::string header;
    std::getline(real, header);
    if (!header.empty() && header.back() == '\r') header.pop_back();
    EXPECT_EQ(header + "\n", os.str());
  }
}

TEST(AiterFmoeExport, WrittenRowsReadBackWithTheSameValues) {
  const auto rows = glm_rows();
  std::stringstream ss;
  write_aiter_fmoe(ss, rows);
  const auto back = read_aiter_fmoe(ss, "written.csv");
  ASSERT_EQ(back.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& w = rows[i];
    const auto& r = back[i];
    EXPECT_EQ(r.cu_num, w.cu_num);
    EXPECT_EQ(r.token, w.token);
    EXPECT_EQ(r.key, w.key);
    EXPECT_EQ(r.block_m, w.block_m);
    EXPECT_EQ(r.ksplit, w.ksplit);
    EXPECT_EQ(r.run_1stage, w.run_1stage);
    EXPECT_EQ(r.kernel_name1, w.kernel_name1);
    EXPECT_EQ(r.kernel_name2, w.kernel_name2);
    EXPECT_EQ(r.us1, w.us1);  // Python's repr: shortest round-trip digits
    EXPECT_EQ(r.us2, w.us2);
    EXPECT_EQ(r.us, w.us);
    EXPECT_NEAR(r.err1, w.err1, 5e-4);  // AITER's one-decimal percentages
    EXPECT_NEAR(r.err2, w.err2, 5e-4);
    EXPECT_EQ(r.gfx, "") << "cu_num 132 is no AMD part: AITER would take the running GPU's gfx";
    EXPECT_EQ(r.tag, "");
  }
  EXPECT_EQ(back[0].key.q_type, "QuantType.per_1x128");
  EXPECT_EQ(back[0].key.act_type, "ActivationType.Silu");
  // tflops and bw are computed when left 0: 2 * 4096 * 8 * 6144 * 3 * 2048 flops in `us`.
  const csv::Table t = [&] {
    std::stringstream again;
    write_aiter_fmoe(again, rows);
    return csv::read(again, "again.csv");
  }();
  const double tflops = csv::to_double(t, 4, "tflops");
  EXPECT_NEAR(tflops, 2.0 * 4096 * 8 * 6144 * 3 * 2048 / (rows[4].us * 1e-6) / 1e12, 0.01);
  EXPECT_GT(csv::to_double(t, 0, "bw"), 0);
}

TEST(AiterFmoeExport, Bf16KeyUsesQuantTypeNo) {
  const auto k = aiter_fmoe_key(4096, 1536, 16, 8, "torch.bfloat16");
  EXPECT_EQ(k.q_type, "QuantType.No");
  EXPECT_EQ(k.q_dtype_a, "torch.bfloat16");
  EXPECT_EQ(k.use_g1u1, 1);
  EXPECT_EQ(k.doweight_stage1, 0);
}

class AiterFmoeRealTables : public tunetab::testing::WithAiterTables {};

TEST_F(AiterFmoeRealTables, RealRowsSurviveARewrite) {
  // AITER's own GLM-5 rows, rewritten through the exporter, read back with the same key and values.
  const auto real = read_aiter_fmoe(tunetab::testing::aiter_table("model_configs/a8w8_blockscale_tuned_fmoe_glm5_1.csv"));
  ASSERT_FALSE(real.empty());
  std::vector<FmoeChoice> rows;
  for (const auto& r : real) {
    FmoeChoice c;
    c.cu_num = r.cu_num;
    c.token = r.token;
    c.key = r.key;
    c.block_m = r.block_m;
    c.ksplit = r.ksplit;
    c.run_1stage = r.run_1stage;
    c.kernel_name1 = r.kernel_name1;
    c.kernel_name2 = r.kernel_name2;
    c.us1 = r.us1;
    c.us2 = r.us2;
    c.us = r.us;
    c.err1 = r.err1;
    c.err2 = r.err2;
    c.tag = r.tag;
    rows.push_back(c);
  }
  std::stringstream ss;
  write_aiter_fmoe(ss, rows);
  const auto back = read_aiter_fmoe(ss, "rewritten.csv");
  ASSERT_EQ(back.size(), real.size());
  for (std::size_t i = 0; i < real.size(); ++i) {
    EXPECT_EQ(back[i].key, real[i].key) << "line " << real[i].line;
    EXPECT_EQ(back[i].token, real[i].token);
    EXPECT_EQ(back[i].gfx, real[i].gfx) << "gfx comes back from cu_num";
    EXPECT_EQ(back[i].us, real[i].us);
    EXPECT_EQ(back[i].kernel_name1, real[i].kernel_name1);
    EXPECT_NEAR(back[i].err1, real[i].err1, 5e-4);
  }
}

TEST(VllmMoeExport, FileNameAndJsonReadBack) {
  tunetab::testing::TempDir dir("vllm_moe_export");
  const std::string folder = std::filesystem::path(dir.write("probe", "")).parent_path().string();
  const auto sel = vllm_moe_selector(32, 2048, "NVIDIA H200", true);
  EXPECT_EQ(vllm_moe_file_name(sel), "E=32,N=2048,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json");
  std::vector<VllmMoeChoice> rows;
  for (std::int64_t m : {4096, 1, 64, 16, 336}) {
    VllmMoeChoice c;
    c.m = m;
    c.block_size_m = m <= 16 ? 16 : 64;
    c.block_size_n = m <= 16 ? 64 : 128;
    c.num_stages = m <= 16 ? 4 : 3;
    rows.push_back(c);
  }
  const std::string path = write_vllm_moe_json(folder, sel, rows);
  const auto file = read_vllm_moe_json(path);
  EXPECT_EQ(file.selector, sel);
  ASSERT_EQ(file.configs.size(), 5u);
  const std::int64_t order[] = {1, 16, 64, 336, 4096};
  for (std::size_t i = 0; i < 5; ++i) {
    const auto& c = file.configs[i];
    EXPECT_EQ(c.m, order[i]) << "keys ascending";
    EXPECT_EQ(c.block_size_m, order[i] <= 16 ? 16 : 64);
    EXPECT_EQ(c.config["BLOCK_SIZE_N"], order[i] <= 16 ? 64 : 128);
    EXPECT_EQ(c.config["BLOCK_SIZE_K"], 128);
    EXPECT_EQ(c.config["GROUP_SIZE_M"], 1);
    EXPECT_EQ(c.config["num_warps"], 4);
    EXPECT_EQ(c.config["num_stages"], order[i] <= 16 ? 4 : 3);
    EXPECT_EQ(c.config.size(), 6u);
  }
  const auto bf16 = vllm_moe_selector(8, 7168, "NVIDIA H200", false);
  EXPECT_EQ(vllm_moe_file_name(bf16), "E=8,N=7168,device_name=NVIDIA_H200.json");
}

TEST(VllmMoeExport, RepeatedBatchSizeIsAnInputError) {
  std::vector<VllmMoeChoice> rows(2);
  rows[0].m = rows[1].m = 64;
  tunetab::testing::expect_input_error([&] { vllm_moe_config_json(rows); }, "batch size 64 chosen twice");
  rows[1].m = 0;
  tunetab::testing::expect_input_error([&] { vllm_moe_config_json(rows); }, "not positive");
}
