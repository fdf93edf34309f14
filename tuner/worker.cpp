#include "tuner/worker.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tuner/error.h"

extern char** environ;

namespace tunetab {

namespace {

bool write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

/// Reads exactly n bytes; false on EOF or error. With a deadline, false also when it passes.
bool read_all(int fd, void* data, std::size_t n, std::chrono::steady_clock::time_point deadline, bool* timed_out) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    if (timed_out) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd pfd{fd, POLLIN, 0};
      const int r = ::poll(&pfd, 1, static_cast<int>(std::max<std::int64_t>(0, left.count())));
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) {
        *timed_out = true;
        return false;
      }
    }
    const ssize_t got = ::read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

bool send_message(int fd, const nlohmann::json& j) {
  const std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(j);
  const std::uint64_t size = bytes.size();
  return write_all(fd, &size, sizeof(size)) && write_all(fd, bytes.data(), bytes.size());
}

[[noreturn]] void serve(int in, int out, const Worker::Handler& handler) {
  for (;;) {
    std::uint64_t size = 0;
    if (!read_all(in, &size, sizeof(size), {}, nullptr)) ::_exit(0);  // parent gone or closed the pipe
    std::vector<std::uint8_t> bytes(size);
    if (!read_all(in, bytes.data(), size, {}, nullptr)) ::_exit(0);
    nlohmann::json reply;
    try {
      reply = handler(nlohmann::json::from_cbor(bytes));
    } catch (const std::exception& e) {
      reply = {{"error", e.what()}};
    }
    if (!send_message(out, reply)) ::_exit(0);
  }
}

}  // namespace

Worker::Worker(Handler handler) : handler_(std::move(handler)) {}
Worker::Worker(Exec exec) : exec_role_(std::move(exec.role)) {}

namespace {
constexpr const char* kWorkerEnv = "TUNETAB_WORKER";  // "ROLE:IN_FD,OUT_FD" in an exec'd worker
}  // namespace

void Worker::serve_if_requested(const std::function<Handler(const std::string& role)>& handler_for) {
  const char* spec = std::getenv(kWorkerEnv);
  if (!spec) return;
  const std::string s = spec;
  const auto colon = s.find(':'), comma = s.find(',');
  if (colon == std::string::npos || comma == std::string::npos || comma < colon) ::_exit(126);
  const std::string role = s.substr(0, colon);
  const int in = std::atoi(s.substr(colon + 1, comma - colon - 1).c_str()), out = std::atoi(s.substr(comma + 1).c_str());
  ::unsetenv(kWorkerEnv);
  Handler h = handler_for(role);
  if (!h) ::_exit(126);
  serve(in, out, h);
}

Worker::~Worker() { stop(true); }

void Worker::start() {
  // NOTE: a child that dies between calls must not take the parent down with SIGPIPE on the next write.
  ::signal(SIGPIPE, SIG_IGN);
  int down[2], up[2];
  if (::pipe(down) != 0 || ::pipe(up) != 0) TUNETAB_THROW(kInfra, "pipe() failed: " + std::string(std::strerror(errno)));
  // NOTE: exec mode builds the child's environment before fork(): only async-signal-safe calls after it.
  std::vector<std::string> env_strings;
  std::vector<char*> envp;
  if (!exec_role_.empty()) {
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, kWorkerEnv, std::strlen(kWorkerEnv)) != 0) env_strings.emplace_back(*e);
    env_strings.push_back(std::string(kWorkerEnv) + "=" + exec_role_ + ":" + std::to_string(down[0]) + "," +
                          std::to_string(up[1]));
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
  }
  const pid_t pid = ::fork();
  if (pid < 0) TUNETAB_THROW(kInfra, "fork() failed: " + std::string(std::strerror(errno)));
  if (pid == 0) {
    ::close(down[1]);
    ::close(up[0]);
    if (exec_role_.empty()) serve(down[0], up[1], handler_);
    // The worker keeps only stdio and its two pipe ends (not the parent's database or other pipes).
    for (int fd = 3; fd < 1024; ++fd)
      if (fd != down[0] && fd != up[1]) ::close(fd);
    char arg0[] = "tunetab-worker";
    char* argv[] = {arg0, nullptr};
    ::execve("/proc/self/exe", argv, envp.data());
    ::_exit(127);
  }
  ::close(down[0]);
  ::close(up[1]);
  pid_ = pid;
  to_child_ = down[1];
  from_child_ = up[0];
  if (started_++ > 0) ++restarts_;
}

std::string Worker::reap() {
  int status = 0;
  if (::waitpid(pid_, &status, 0) != pid_) return "worker vanished";
  if (WIFSIGNALED(status))
    return "worker killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status)) return "worker exited with code " + std::to_string(WEXITSTATUS(status));
  return "worker ended";
}

void Worker::stop(bool kill_first) {
  if (pid_ < 0) return;
  ::close(to_child_);
  ::close(from_child_);
  if (kill_first) ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  to_child_ = from_child_ = -1;
}

WorkerReply Worker::call(const nlohmann::json& request, double timeout_ms) {
  if (pid_ < 0) start();
  WorkerReply reply;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(static_cast<std::int64_t>(timeout_ms * 1000));
  bool timed_out = false;
  std::uint64_t size = 0;
  std::vector<std::uint8_t> bytes;
  const bool ok = send_message(to_child_, request) &&
                  read_all(from_child_, &size, sizeof(size), deadline, &timed_out) &&
                  (bytes.resize(size), read_all(from_child_, bytes.data(), size, deadline, &timed_out));
  if (ok) {
    reply.body = nlohmann::json::from_cbor(bytes);
    return reply;
  }
  if (timed_out) {
    reply.status = WorkerReply::Status::kTimedOut;
    reply.detail = "no reply within " + std::to_string(timeout_ms) + " ms; worker killed";
    stop(true);
    return reply;
  }
  reply.status = WorkerReply::Status::kCrashed;
  ::close(to_child_);
  ::close(from_child_);
  reply.detail = reap();
  pid_ = -1;
  to_child_ = from_child_ = -1;
  return reply;
}

}  // namespace tunetab
