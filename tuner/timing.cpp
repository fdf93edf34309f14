#include "tuner/timing.h"

#include <algorithm>
#include <vector>

namespace tunetab {

int rotating_sets_for(std::int64_t set_bytes, std::int64_t l2_bytes, int cap) {
  if (set_bytes <= 0) return 2;
  const std::int64_t need = (2 * l2_bytes + set_bytes - 1) / set_bytes + 1;
  return static_cast<int>(std::clamp<std::int64_t>(need, 2, cap));
}

TimingStats time_launches(const std::function<void(int)>& launch_one, const Stream& s, const TimingPlan& plan) {
  Event start, stop;
  int counter = 0;
  // Warm-up, doubling the batch until the warm-up budget is spent; it also estimates one launch's time.
  double per_launch_ms = 0, spent_ms = 0;
  for (int n = 1; spent_ms < plan.warmup_ms; n = std::min(n * 2, plan.max_batch)) {
    start.record(s);
    for (int i = 0; i < n; ++i) launch_one(counter++);
    stop.record(s);
    stop.synchronize();
    const double ms = stop.elapsed_since(start);
    spent_ms += ms;
    per_launch_ms = ms / n;
    if (n == plan.max_batch) break;
  }
  TimingStats st;
  st.batch = std::clamp(static_cast<int>(plan.batch_ms / std::max(per_launch_ms, 1e-4)), 1, plan.max_batch);
  st.repeats = plan.repeats;
  std::vector<double> us;
  // NOTE: the batch is captured once as a graph and replayed, so back-to-back launches are not limited by
  // the host's launch rate (a 3 us kernel launched from a loop measures the CPU, not the GPU).
  Graph graph(s, [&] {
    for (int i = 0; i < st.batch; ++i) launch_one(counter++);
  });
  graph.replay(s);
  for (int r = 0; r < plan.repeats; ++r) {
    start.record(s);
    graph.replay(s);
    stop.record(s);
    stop.synchronize();
    us.push_back(1000.0 * stop.elapsed_since(start) / st.batch);
  }
  std::sort(us.begin(), us.end());
  st.median_us = us.size() % 2 ? us[us.size() / 2] : 0.5 * (us[us.size() / 2 - 1] + us[us.size() / 2]);
  st.min_us = us.front();
  st.max_us = us.back();
  st.spread = st.median_us > 0 ? (st.max_us - st.min_us) / st.median_us : 0;
  st.iterations = static_cast<std::int64_t>(st.batch) * st.repeats;
  return st;
}

}  // namespace tunetab
