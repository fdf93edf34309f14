#include <gtest/gtest.h>

#include "tuner/timing.h"

using namespace tunetab;

TEST(Timing, RotatingSetsExceedTwiceL2) {
  const std::int64_t l2 = 60 << 20;
  for (std::int64_t bytes : {std::int64_t(9 << 20), std::int64_t(1 << 20), std::int64_t(91 << 20), std::int64_t(300 << 20)}) {
    const int sets = rotating_sets_for(bytes, l2);
    EXPECT_GE(sets, 2);
    EXPECT_GT(sets * bytes, 2 * l2) << bytes;
  }
  EXPECT_EQ(rotating_sets_for(1, l2, 64), 64);  // capped
  EXPECT_EQ(rotating_sets_for(1 << 30, l2), 2);  // never fewer than two
}
