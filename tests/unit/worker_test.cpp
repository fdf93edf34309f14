#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <unistd.h>

#include "tuner/worker.h"

using namespace tunetab;

namespace {

/// A handler that answers, throws, crashes or hangs on request: the failures a candidate can cause.
nlohmann::json handler(const nlohmann::json& req) {
  const std::string what = req.at("do");
  if (what == "abort") std::abort();
  if (what == "segv") std::raise(SIGSEGV);
  if (what == "hang") ::pause();  // never returns: no signal is sent to it
  if (what == "throw") throw std::runtime_error("bad candidate");
  return {{"echo", req.at("n").get<int>() * 2}, {"pid", static_cast<int>(::getpid())}};
}

}  // namespace

TEST(Worker, RepliesFromAnotherProcess) {
  Worker w(handler);
  const auto r = w.call({{"do", "echo"}, {"n", 21}}, 5000);
  ASSERT_EQ(r.status, WorkerReply::Status::kOk);
  EXPECT_EQ(r.body.at("echo"), 42);
  EXPECT_NE(r.body.at("pid").get<int>(), static_cast<int>(::getpid()));
  EXPECT_EQ(w.call({{"do", "echo"}, {"n", 1}}, 5000).body.at("pid"), r.body.at("pid"));  // same child reused
  EXPECT_EQ(w.restarts(), 0);
}

TEST(Worker, CrashCostsTheWorkerNotTheRun) {
  Worker w(handler);
  const int first = w.call({{"do", "echo"}, {"n", 1}}, 5000).body.at("pid");
  const auto crashed = w.call({{"do", "abort"}}, 5000);
  EXPECT_EQ(crashed.status, WorkerReply::Status::kCrashed);
  EXPECT_NE(crashed.detail.find("signal " + std::to_string(SIGABRT)), std::string::npos) << crashed.detail;
  const auto segv = w.call({{"do", "segv"}}, 5000);
  EXPECT_EQ(segv.status, WorkerReply::Status::kCrashed);
  EXPECT_NE(segv.detail.find("signal " + std::to_string(SIGSEGV)), std::string::npos) << segv.detail;
  // The sweep goes on in a fresh child.
  const auto after = w.call({{"do", "echo"}, {"n", 5}}, 5000);
  ASSERT_EQ(after.status, WorkerReply::Status::kOk);
  EXPECT_EQ(after.body.at("echo"), 10);
  EXPECT_NE(after.body.at("pid").get<int>(), first);
  EXPECT_EQ(w.restarts(), 2);
}

TEST(Worker, HangIsKilledAtTheDeadline) {
  Worker w(handler);
  const auto t0 = std::chrono::steady_clock::now();
  const auto hung = w.call({{"do", "hang"}}, 300);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(hung.status, WorkerReply::Status::kTimedOut);
  EXPECT_GE(ms, 290);
  EXPECT_LT(ms, 5000);
  EXPECT_EQ(w.call({{"do", "echo"}, {"n", 2}}, 5000).body.at("echo"), 4);
  EXPECT_EQ(w.restarts(), 1);
}

TEST(Worker, HandlerExceptionIsAReplyNotACrash) {
  Worker w(handler);
  const auto r = w.call({{"do", "throw"}}, 5000);
  ASSERT_EQ(r.status, WorkerReply::Status::kOk);
  EXPECT_EQ(r.body.at("error"), "bad candidate");
  EXPECT_EQ(w.restarts(), 0);
}

// Exec mode: the child is a fresh image of this test binary (tests/test_main.cpp serves the role), so it
// shares nothing with the parent but its two pipe ends.
TEST(Worker, ExecModeServesTheRoleInAFreshProcessAndUnknownRolesDie) {
  Worker probe(Worker::Exec{"probe"});
  const auto r = probe.call({{"op", "count"}}, 30000);
  ASSERT_EQ(r.status, WorkerReply::Status::kOk) << r.detail;
  EXPECT_TRUE(r.body.contains("count"));
  EXPECT_TRUE(r.body.contains("why"));
  Worker bogus(Worker::Exec{"no-such-role"});
  const auto dead = bogus.call({{"op", "count"}}, 30000);
  EXPECT_EQ(dead.status, WorkerReply::Status::kCrashed);
  EXPECT_NE(dead.detail.find("code 126"), std::string::npos) << dead.detail;
}
