// Worker processes: a job runs in a child process, so a GPU fault, an abort or a hang costs that child,
// not the run. The parent sends JSON requests over a pipe (as CBOR, so binary values such as code objects
// travel as bytes), waits with a deadline, and replaces the child after a crash or a timeout. Children are forked before the parent touches the GPU (a CUDA/HIP context
// does not survive fork), each opening its own device.
#pragma once
#include <sys/types.h>

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace tunetab {

struct WorkerReply {
  enum class Status { kOk, kCrashed, kTimedOut };
  Status status = Status::kOk;
  nlohmann::json body;  // the handler's reply (kOk); {"error": what} when the handler threw
  std::string detail;   // how the child ended (kCrashed, kTimedOut)
};

class Worker {
 public:
  using Handler = std::function<nlohmann::json(const nlohmann::json& request)>;

  /// `handler` runs in the child, once per request; the child is started on the first call.
  explicit Worker(Handler handler);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// Sends `request` and waits at most `timeout_ms` for the reply. After a crash or a timeout the child
  /// is gone (killed, reaped) and the next call starts a fresh one.
  WorkerReply call(const nlohmann::json& request, double timeout_ms);
  /// Children started so far beyond the first.
  int restarts() const { return restarts_; }
  /// Kills and reaps the child (if any): after a reply that says its device context is lost.
  void reset() { stop(true); }
  bool running() const { return pid_ >= 0; }

 private:
  void start();
  void stop(bool kill_first);
  std::string reap();
  Handler handler_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  int started_ = 0, restarts_ = 0;
};

}  // namespace tunetab
