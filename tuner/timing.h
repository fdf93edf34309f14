// Event timing per METHOD.md: warm up, then replays of a graph of back-to-back launches between two
// events, rotating across input sets (together larger than 2x L2); statistics over the replays.
#pragma once
#include <cstdint>
#include <functional>

#include "tuner/hip/runtime.h"

namespace tunetab {

struct TimingPlan {
  double warmup_ms = 20;   // at least this much device time before measuring
  int repeats = 15;        // batches measured
  double batch_ms = 1.0;   // target device time of one batch
  int max_batch = 4096;
};

struct TimingStats {
  double median_us = 0, min_us = 0, max_us = 0;
  double spread = 0;            // (max - min) / median over the batches
  std::int64_t iterations = 0;  // launches measured
  int batch = 0, repeats = 0;
};

/// Rotating-set count so that `sets * set_bytes` exceeds twice the L2 (at least 2, at most `cap`).
int rotating_sets_for(std::int64_t set_bytes, std::int64_t l2_bytes, int cap = 512);

/// Times `launch_one(i)` (i = launch counter; the callee rotates sets by it) on stream `s`.
TimingStats time_launches(const std::function<void(int)>& launch_one, const Stream& s, const TimingPlan& plan);

}  // namespace tunetab
