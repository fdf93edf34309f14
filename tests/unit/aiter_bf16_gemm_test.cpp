#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "db/store.h"
#include "exporters/aiter_bf16_gemm.h"
#include "tuner/error.h"
#include "tuner/text_file.h"

using namespace tunetab;
namespace fs = std::filesystem;

static std::vector<fs::path> real_tables() {
  std::vector<fs::path> out;
  const fs::path root = fs::path(TUNETAB_SHARED_DIR) / "aiter-configs";
  if (!fs::exists(root)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (name.find("bf16_tuned_gemm") != std::string::npos && name.find("batched") == std::string::npos) out.push_back(e.path());
  }
  return out;
}

TEST(AiterBf16Gemm, RoundTripsEveryRealTableByteForByte) {
  const auto tables = real_tables();
  if (tables.empty()) GTEST_SKIP() << "shared/aiter-configs not found at " << TUNETAB_SHARED_DIR;
  ASSERT_GE(tables.size(), 10u);
  std::size_t rows = 0;
  for (const auto& path : tables) {
    const auto parsed = exporters::read_aiter_bf16_gemm(path.string());
    std::ostringstream out;
    exporters::write_aiter_bf16_gemm(out, parsed);
    EXPECT_EQ(out.str(), read_text_file(path)) << path;
    rows += parsed.size();
  }
  EXPECT_GT(rows, 1000u);
}

TEST(AiterBf16Gemm, ReadsKnownRowOfCanonicalTable) {
  const fs::path path = fs::path(TUNETAB_SHARED_DIR) / "aiter-configs" / "bf16_tuned_gemm.csv";
  if (!fs::exists(path)) GTEST_SKIP();
  const auto rows = exporters::read_aiter_bf16_gemm(path.string());
  ASSERT_FALSE(rows.empty());
  // First data row of the file (checked by eye): gfx950,256,64,256,5120,...,asm,5,13,7.9191,...
  EXPECT_EQ(rows[0].gfx, "gfx950");
  EXPECT_EQ(rows[0].cu_num, 256);
  EXPECT_EQ(rows[0].m, 64);
  EXPECT_EQ(rows[0].k, 5120);
  EXPECT_EQ(rows[0].outdtype, "torch.float32");
  EXPECT_EQ(rows[0].libtype, "asm");
  EXPECT_EQ(rows[0].split_k, 13);
  EXPECT_DOUBLE_EQ(rows[0].us, 7.9191);
  EXPECT_EQ(rows[0].line, 2);
  EXPECT_EQ(rows[0].us.str(), "7.9191");
}

TEST(AiterBf16Gemm, MissingColumnAndBadValueAreInputErrors) {
  std::istringstream missing("gfx,cu_num,M,N,K\nsm_90,132,1,2,3\n");
  try {
    exporters::read_aiter_bf16_gemm(missing, "cut.csv");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("cut.csv: missing column 'bias'"), std::string::npos) << e.what();
  }
  std::ostringstream good;
  exporters::AiterBf16GemmRow r;
  r.gfx = "sm_90";
  r.m = 1;
  r.n = 2;
  r.k = 8;
  exporters::write_aiter_bf16_gemm(good, {r});
  std::string text = good.str();
  text.replace(text.find(",False,"), 7, ",maybe,");
  std::istringstream bad(text);
  try {
    exporters::read_aiter_bf16_gemm(bad, "bad.csv");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:2: column 'bias'"), std::string::npos) << e.what();
  }
}

TEST(AiterBf16Gemm, ExportsOnlyTheFastestPassingResult) {
  db::Store s(":memory:");
  const auto dev = s.upsert_device({"NVIDIA H200", "sm_90a", 132, 1980000, 3201000, 60 << 20, 13000, 13000, "nvrtc 13.0"});
  const auto run = s.begin_run("test", "t", dev);
  const auto prob = s.upsert_problem("gemm_bf16", "m=16,n=64,k=32,in=bf16,out=bf16,bias=0",
                                     R"({"m":16,"n":64,"k":32,"in":"bf16","out":"bf16","bias":false})");
  auto put = [&](const char* name, db::Disposition d, double us, const char* phase) {
    const auto cfg = s.upsert_config("gemm_bf16", name, std::string(R"({"split_k":)") + (name[0] == 'b' ? "2" : "1") + "}");
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
    r.tflops = 1;
    r.bw_gbs = 2;
    r.timing_phase = phase;
    s.put_result(r, "t");
  };
  put("a_fast_but_wrong", db::Disposition::kIncorrect, 1.0, "screen");
  put("b_screened_fast", db::Disposition::kPassed, 2.0, "screen");
  put("c_final", db::Disposition::kPassed, 3.0, "final");
  put("d_final_slower", db::Disposition::kPassed, 4.0, "final");
  const auto rows = exporters::aiter_bf16_gemm_rows(s);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].kernel_name, "tunetab_gemm_bf16_c_final");  // final timings outrank screening ones
  EXPECT_EQ(rows[0].gfx, "sm_90a");
  EXPECT_EQ(rows[0].cu_num, 132);
  EXPECT_DOUBLE_EQ(rows[0].us, 3.0);
}
