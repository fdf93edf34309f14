// Worker processes: a job runs in a child process, so a GPU fault, an abort or a hang costs that child,
// not the run. The parent sends JSON requests over a pipe (as CBOR, so binary values such as code objects
// travel as bytes), waits with a deadline, and replaces the child after a crash or a timeout. A worker
// that opens the GPU is a fresh process image (fork, then exec of this same program with a role): on the
// H200, children merely forked from tunetab failed cuInit (CUDA_ERROR_NOT_INITIALIZED) once the parent had
// run NVRTC compiles (the replacement of a hung worker, the second key of a profile tune), while children
// forked before that, exec'd processes, and forks of a bare C program that killed a spinning kernel were
// all fine. Each child opens its own device.
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

  /// `handler` runs in a forked child, once per request; the child is started on the first call.
  explicit Worker(Handler handler);
  /// The child execs this program (/proc/self/exe) to serve `role`: its main() must first call
  /// serve_if_requested() with a handler for that role.
  struct Exec {
    std::string role;
  };
  explicit Worker(Exec exec);
  /// In a program started as a worker (exec mode): serves requests with roles[role] and never returns.
  /// Elsewhere: returns at once.
  static void serve_if_requested(const std::function<Handler(const std::string& role)>& handler_for);
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
  std::string exec_role_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  int started_ = 0, restarts_ = 0;
};

}  // namespace tunetab
