// AITER's a8w8_blockscale_tuned_gemm.csv: real tables round-trip byte for byte; the store exports AITER rows.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "db/store.h"
#include "exporters/aiter_a8w8_blockscale.h"
#include "tuner/error.h"
#include "tuner/text_file.h"

using namespace tunetab;
namespace fs = std::filesystem;

namespace {

/// The canonical table and every model_configs/ one with its columns (not the bpreshuffle variant, whose
/// columns differ).
std::vector<fs::path> real_tables() {
  std::vector<fs::path> out;
  const fs::path root = fs::path(TUNETAB_SHARED_DIR) / "aiter-configs";
  if (!fs::exists(root)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (name.find("a8w8_blockscale") != std::string::npos && name.find("tuned_gemm") != std::string::npos &&
        name.find("untuned") == std::string::npos && name.find("bpreshuffle") == std::string::npos)
      out.push_back(e.path());
  }
  return out;
}

}  // namespace

TEST(AiterA8w8Blockscale, RoundTripsEveryRealTableByteForByte) {
  const auto tables = real_tables();
  if (tables.empty()) GTEST_SKIP() << "shared/aiter-configs not found at " << TUNETAB_SHARED_DIR;
  ASSERT_GE(tables.size(), 9u);
  std::size_t rows = 0;
  for (const auto& path : tables) {
    const auto parsed = exporters::read_aiter_a8w8_blockscale(path.string());
    std::ostringstream out;
    exporters::write_aiter_a8w8_blockscale(out, parsed);
    EXPECT_EQ(out.str(), read_text_file(path)) << path;
    rows += parsed.size();
  }
  EXPECT_GT(rows, 500u);
}

TEST(AiterA8w8Blockscale, ReadsKnownRowOfCanonicalTable) {
  const fs::path path = fs::path(TUNETAB_SHARED_DIR) / "aiter-configs" / "a8w8_blockscale_tuned_gemm.csv";
  if (!fs::exists(path)) GTEST_SKIP();
  const auto rows = exporters::read_aiter_a8w8_blockscale(path.string());
  ASSERT_FALSE(rows.empty());
  // First data row (checked by eye): gfx950,256,1,2048,3072,ck,8,2,4.8294,a8w8_blockscale_1x128x128_...,2.61,1304.22,0.0
  EXPECT_EQ(rows[0].gfx, "gfx950");
  EXPECT_EQ(rows[0].cu_num, 256);
  EXPECT_EQ(rows[0].m, 1);
  EXPECT_EQ(rows[0].n, 2048);
  EXPECT_EQ(rows[0].k, 3072);
  EXPECT_EQ(rows[0].libtype, "ck");
  EXPECT_EQ(rows[0].kernel_id, 8);
  EXPECT_EQ(rows[0].split_k, 2);
  EXPECT_DOUBLE_EQ(rows[0].us, 4.8294);
  EXPECT_EQ(rows[0].kernel_name.rfind("a8w8_blockscale_1x128x128_256x16x64x256", 0), 0u);
  EXPECT_DOUBLE_EQ(rows[0].bw, 1304.22);
  EXPECT_EQ(rows[0].err_ratio.str(), "0.0");
  EXPECT_EQ(rows[0].line, 2);
}

TEST(AiterA8w8Blockscale, MissingColumnAndBadValueAreInputErrors) {
  std::istringstream missing("gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw\ngfx942,304,1,2,3,ck,1,0,1.0,x,1.0,1.0\n");
  try {
    exporters::read_aiter_a8w8_blockscale(missing, "cut.csv");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("cut.csv: missing column 'errRatio'"), std::string::npos) << e.what();
  }
  std::istringstream bad(
      "gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio\ngfx942,304,1,2,3,ck,one,0,1.0,x,1.0,1.0,0.0\n");
  try {
    exporters::read_aiter_a8w8_blockscale(bad, "bad.csv");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:2: column 'kernelId'"), std::string::npos) << e.what();
  }
}

TEST(AiterA8w8Blockscale, ExportsTheFastestPassingResultInTheDevicesNativeFormat) {
  db::Store s(":memory:");
  const auto dev = s.upsert_device({"AMD Instinct MI300X", "gfx942", 304, 2100000, 1300000, 256 << 20, 60300, 60300, "hiprtc 6.2"});
  const auto run = s.begin_run("test", "t", dev);
  auto put = [&](const char* in, const char* name, db::Disposition d, double us) {
    const std::string key = std::string("m=16,n=3072,k=1536,in=") + in + ",out=bf16,scale=1x128x128";
    const auto prob = s.upsert_problem("gemm_fp8_blockscale", key,
                                       std::string(R"({"m":16,"n":3072,"k":1536,"in":")") + in +
                                           R"(","out":"bf16","scale":"1x128x128"})");
    const auto cfg = s.upsert_config("gemm_fp8_blockscale", name, R"({"split_k":2})");
    db::ResultRecord r;
    r.run_id = run;
    r.device_id = dev;
    r.problem_id = prob;
    r.config_id = cfg;
    r.disposition = d;
    r.median_us = us;
    r.min_us = us;
    r.spread = 0.01;
    r.err_ratio = 0;
    r.tflops = 97.51234;
    r.bw_gbs = 2;
    r.timing_phase = "final";
    s.put_result(r, "t");
  };
  put("e4m3fnuz", "m16n64k128_w16x16_s2_mma_sk2", db::Disposition::kIncorrect, 1.0);
  put("e4m3fnuz", "m16n128k128_w16x32_s3_mma_sk2", db::Disposition::kPassed, 5.25);
  put("e4m3fnuz", "m16n128k128_w16x32_s4_mma_sk2", db::Disposition::kPassed, 6.5);
  put("e4m3fn", "m16n64k128_w16x16_s4_mma_sk2", db::Disposition::kPassed, 2.0);  // not gfx942's fp8
  const auto rows = exporters::aiter_a8w8_blockscale_rows(s);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].kernel_name, "tunetab_gemm_fp8_blockscale_m16n128k128_w16x32_s3_mma_sk2");
  EXPECT_EQ(rows[0].gfx, "gfx942");
  EXPECT_EQ(rows[0].cu_num, 304);
  EXPECT_EQ(rows[0].split_k, 2);
  EXPECT_EQ(rows[0].libtype, "tunetab");
  std::ostringstream out;
  exporters::write_aiter_a8w8_blockscale(out, rows);
  EXPECT_NE(out.str().find("gfx942,304,16,3072,1536,tunetab,"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find(",2,5.25,tunetab_gemm_fp8_blockscale_m16n128k128_w16x32_s3_mma_sk2,97.51,2.0,0.0\n"),
            std::string::npos)
      << out.str();
  std::istringstream back(out.str());
  EXPECT_EQ(exporters::read_aiter_a8w8_blockscale(back, "export").size(), 1u);
}
