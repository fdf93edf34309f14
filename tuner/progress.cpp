#include "tuner/progress.h"

#include <unistd.h>

#include <cstdio>

namespace tunetab {

Progress::Progress(std::string label, std::size_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled && total > 0), tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

void Progress::tick(const std::string& note) {
  ++count_;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (tty_) {
    if (count_ == total_ || now - last_draw_ > std::chrono::milliseconds(100)) {
      last_draw_ = now;
      draw(note);
    }
  } else if (count_ == total_ || count_ * 20 / total_ > last_plain_ * 20 / total_) {
    last_plain_ = count_;
    draw(note);
  }
}

void Progress::draw(const std::string& note) {
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double eta = count_ ? secs / count_ * (total_ - count_) : 0;
  if (tty_) {
    const int width = 30, filled = static_cast<int>(width * count_ / total_);
    std::fprintf(stderr, "\r%s [%.*s%*s] %zu/%zu %.0fs ETA %.0fs %s\033[K", label_.c_str(), filled,
                 "##############################", width - filled, "", count_, total_, secs, eta, note.c_str());
  } else {
    std::fprintf(stderr, "%s: %zu/%zu (%.0fs elapsed, ETA %.0fs) %s\n", label_.c_str(), count_, total_, secs, eta,
                 note.c_str());
  }
  std::fflush(stderr);
}

void Progress::done() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  if (tty_) std::fprintf(stderr, "\n");
}

}  // namespace tunetab
