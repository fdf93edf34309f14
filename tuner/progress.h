// Progress for long work: a bar with rate and ETA on a terminal, plain lines (every ~5%) otherwise.
#pragma once
#include <chrono>
#include <cstddef>
#include <string>

namespace tunetab {

class Progress {
 public:
  Progress(std::string label, std::size_t total, bool enabled = true);
  void tick(const std::string& note = "");
  void done();

 private:
  void draw(const std::string& note);
  std::string label_;
  std::size_t total_, count_ = 0, last_plain_ = 0;
  bool enabled_, tty_, finished_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace tunetab
