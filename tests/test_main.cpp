// main() of every test binary: a test that runs an Executor starts device workers by re-executing this
// binary, which then serves them instead of running the tests.
#include <gtest/gtest.h>

#include <cstdio>

#include "tuner/safety/executor.h"

int main(int argc, char** argv) {
  tunetab::safety::serve_worker_if_requested();
  // NOTE: line-buffered, so that a test killed by a time limit (a device call's) leaves every line it printed
  // (the TIME lines of the timing tests) in a log redirected to a file.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
