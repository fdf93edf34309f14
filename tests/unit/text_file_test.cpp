#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "test_files.h"
#include "tuner/text_file.h"

using namespace tunetab;
namespace fs = std::filesystem;

TEST(TextFile, ReplacesTheWholeFileAndLeavesNothingBeside) {
  tunetab::testing::TempDir dir("text_file");
  const std::string path = dir.write("t.csv", std::string(100000, 'x'));  // an older, longer file
  std::mt19937 rng(20261207);
  std::string text(4099, '\0');  // any bytes: NULs, CRs, high bytes
  for (char& c : text) c = static_cast<char>(rng());
  write_text_file(path, text);
  EXPECT_EQ(read_text_file(path), text);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(path).parent_path())) names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"t.csv"});
  write_text_file(path, "");
  EXPECT_EQ(read_text_file(path), "");
}

TEST(TextFile, ErrorsNameThePath) {
  tunetab::testing::TempDir dir("text_file_errors");
  const fs::path folder = fs::path(dir.write("a", "a")).parent_path();
  const std::string missing = (folder / "none" / "t.csv").string();
  tunetab::testing::expect_input_error([&] { read_text_file(missing); }, missing + ": cannot open for reading");
  tunetab::testing::expect_input_error([&] { write_text_file(missing, "a"); }, missing + ": cannot open for writing");
  // A folder where the file should be: the rename fails, the folder stays, and no temporary is left.
  fs::create_directories(folder / "busy" / "inner");
  const std::string busy = (folder / "busy").string();
  tunetab::testing::expect_input_error([&] { write_text_file(busy, "a"); }, busy + ": write failed");
  EXPECT_TRUE(fs::is_directory(busy));
  EXPECT_FALSE(fs::exists(busy + ".tmp"));
}
