#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tuner/error.h"
#include "tuner/shapes.h"

using namespace tunetab;

TEST(Shapes, DefaultListIsTheAcceptanceMatrix) {
  const auto s = default_gemm_shapes();
  ASSERT_EQ(s.size(), 21u);
  EXPECT_EQ(s[0].m, 1);
  EXPECT_EQ(s[0].n, 3072);
  EXPECT_EQ(s[0].k, 1536);
  EXPECT_EQ(s[20].m, 4096);
  EXPECT_EQ(s[20].k, 6144);
}

TEST(Shapes, ParsesBothSpellings) {
  const auto s = parse_gemm_shapes("1,3072,1536; 304x6144x2048\n16,8,8");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[1].m, 304);
  EXPECT_EQ(s[1].n, 6144);
  EXPECT_EQ(s[2].k, 8);
}

TEST(Shapes, BadEntriesNameThemselves) {
  for (const char* bad : {"1,2", "a,b,c", "0,64,64", ""}) {
    try {
      parse_gemm_shapes(bad);
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInput);
      EXPECT_NE(std::string(e.what()).find("--shapes"), std::string::npos);
    }
  }
}

TEST(Shapes, ReadsRealAiterUntunedFile) {
  const std::string path = std::string(TUNETAB_SHARED_DIR) + "/aiter-configs/bf16_untuned_gemm.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP();
  const auto s = read_aiter_untuned_gemm(path);
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s[0].m, 64);
  EXPECT_EQ(s[0].n, 256);
  EXPECT_EQ(s[0].k, 5120);
  EXPECT_EQ(s[0].out, gemm::DType::kF32);  // this file asks for fp32 output: tune marks it not_supported
}

TEST(Shapes, UnknownDtypeInCsvNamesLine) {
  const auto path = std::filesystem::temp_directory_path() / "tunetab_bad_untuned.csv";
  std::ofstream(path) << "M,N,K,bias,dtype,outdtype\n1,64,64,False,torch.bfloat16,torch.bfloat16\n2,64,64,False,torch.int3,torch.bfloat16\n";
  try {
    read_aiter_untuned_gemm(path.string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(":3: unknown dtype 'torch.int3'"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}
