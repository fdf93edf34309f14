// Files for tests: the real AITER tables in shared/, the repository's own files, and a scratch folder.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "tuner/error.h"

namespace tunetab::testing {

inline std::string aiter_table(const std::string& rel) { return std::string(TUNETAB_SHARED_DIR) + "/aiter-configs/" + rel; }
inline std::string repo_file(const std::string& rel) { return std::string(TUNETAB_SOURCE_DIR) + "/" + rel; }
inline bool have_aiter_tables() { return std::filesystem::exists(aiter_table("model_configs")); }

/// Runs `f`, which must throw an Input error whose message holds `want`.
inline void expect_input_error(const std::function<void()>& f, const std::string& want) {
  try {
    f();
    ADD_FAILURE() << "no error; wanted one with: " << want;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

/// A fixture whose tests skip when shared/aiter-configs is absent.
class WithAiterTables : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_aiter_tables()) GTEST_SKIP() << "shared/aiter-configs not present";
  }
};

/// A fresh folder under the temp directory, removed with the object.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / ("tunetab_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  /// Writes `text` to `name` in the folder and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const auto p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace tunetab::testing
