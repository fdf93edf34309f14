// main() of every test binary: a test that runs an Executor starts device workers by re-executing this
// binary, which then serves them instead of running the tests.
#include <gtest/gtest.h>

#include "tuner/safety/executor.h"

int main(int argc, char** argv) {
  tunetab::safety::serve_worker_if_requested();
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
