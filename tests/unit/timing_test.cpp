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

#include "tuner/hip/runtime.h"

TEST(GuardBand, CleanBandsPass) {
  const std::vector<unsigned char> band(512, DeviceBuffer::kCanary);
  EXPECT_FALSE(find_guard_violation(band, band, 1000, DeviceBuffer::kCanary));
}

TEST(GuardBand, WriteAfterTheEndNamesTheFirstByte) {
  const std::vector<unsigned char> before(512, DeviceBuffer::kCanary);
  std::vector<unsigned char> after(512, DeviceBuffer::kCanary);
  after[6] = 0x00;  // an epilogue storing 4 bytes, 6 bytes past the end
  after[7] = 0x3f;
  after[9] = 0x11;
  const auto v = find_guard_violation(before, after, 1000, DeviceBuffer::kCanary);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->side, "after");
  EXPECT_EQ(v->offset, 1006);
  EXPECT_EQ(v->corrupted_bytes, 3);
}

TEST(GuardBand, WriteBeforeTheStartNamesTheLowestByte) {
  std::vector<unsigned char> before(512, DeviceBuffer::kCanary);
  const std::vector<unsigned char> after(512, DeviceBuffer::kCanary);
  before[508] = 0;  // a 2-byte store 4 bytes before the buffer
  before[509] = 0;
  const auto v = find_guard_violation(before, after, 1000, DeviceBuffer::kCanary);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->side, "before");
  EXPECT_EQ(v->offset, -4);
  EXPECT_EQ(v->corrupted_bytes, 2);
}
