#include <gtest/gtest.h>

#include <sstream>

#include "exporters/csv.h"
#include "tuner/error.h"

using namespace tunetab;

TEST(Csv, PyFloatMatchesPythonRepr) {
  // Expected strings are Python 3.11's repr() of the same doubles.
  const std::pair<double, const char*> cases[] = {
      {0.0001, "0.0001"}, {1e-05, "1e-05"}, {123456789012345678.0, "1.2345678901234568e+17"}, {1e16, "1e+16"},
      {9999999999999998.0, "9999999999999998.0"}, {0.1, "0.1"}, {4094.8, "4094.8"}, {7.9191, "7.9191"},
      {100.0, "100.0"}, {1.5, "1.5"}, {-2.5e-7, "-2.5e-07"}, {1e22, "1e+22"}, {123.456, "123.456"},
      {0.00012345, "0.00012345"}, {5e-324, "5e-324"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
      {0.0, "0.0"}};
  for (auto [v, want] : cases) EXPECT_EQ(csv::py_float(v), want) << v;
}

TEST(Csv, PyRoundMatchesPythonRound) {
  EXPECT_EQ(csv::py_round(2.675, 2), "2.67");
  EXPECT_EQ(csv::py_round(0.125, 2), "0.12");
  EXPECT_EQ(csv::py_round(1234.56785, 4), "1234.5678");
  EXPECT_EQ(csv::py_round(3.0, 4), "3.0");
  EXPECT_EQ(csv::py_round(1180.384999, 2), "1180.38");
}

TEST(Csv, QuotedFieldsAndCrlf) {
  std::istringstream in("a,b,c\r\n1,\"x,y\",\"say \"\"hi\"\"\"\r\n\r\n2,,3\n");
  const auto t = csv::read(in, "mem.csv");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][1], "x,y");
  EXPECT_EQ(t.rows[0][2], "say \"hi\"");
  EXPECT_EQ(t.rows[1][1], "");
  EXPECT_EQ(t.line_of_row[1], 4);
  std::ostringstream out;
  csv::write_row(out, t.rows[0]);
  EXPECT_EQ(out.str(), "1,\"x,y\",\"say \"\"hi\"\"\"\n");
}

TEST(Csv, WrongFieldCountNamesFileAndLine) {
  std::istringstream in("a,b\n1,2\n3\n");
  try {
    csv::read(in, "broken.csv");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("broken.csv:3"), std::string::npos) << e.what();
  }
}

TEST(Csv, BadNumberNamesColumn) {
  std::istringstream in("M,N\n12,abc\n");
  const auto t = csv::read(in, "t.csv");
  try {
    csv::to_int(t, 0, "N");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv:2: column 'N'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(csv::field(t, 0, "K"), Error);
}
