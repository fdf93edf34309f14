// Minimal RFC 4180 CSV: quoted fields, CRLF or LF, errors that name file and line. Plus Python's float
// repr, which pandas (and so every AITER table) writes.
#pragma once
#include <cstdint>
#include <istream>
#include <map>
#include <string>
#include <vector>

namespace tunetab::csv {

struct Table {
  std::string source;                          // file name, for errors
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> line_of_row;                // 1-based line numbers in the source

  /// Column index by name; Input error naming the file when it is absent.
  std::size_t column(const std::string& name) const;
  bool has_column(const std::string& name) const;
};

/// Reads a whole CSV; blank lines are skipped; a row whose field count differs from the header's is an error,
/// but with `pad_short_rows` a shorter row reads its missing trailing fields as empty, as pandas does.
Table read(std::istream& in, const std::string& source, bool pad_short_rows = false);
Table read_file(const std::string& path);

std::string escape(const std::string& field);
void write_row(std::ostream& out, const std::vector<std::string>& fields);

/// Python's repr(float): shortest round-trip digits, fixed for 1e-4 <= |v| < 1e16, else d.ddde+XX.
std::string py_float(double v);
/// Python's repr(round(v, digits)).
std::string py_round(double v, int digits);
std::string py_bool(bool v);

/// A number read from a table keeps its text, so a table that was not written by Python's repr
/// (some AITER tables print "26.3710") round-trips byte for byte; a computed one prints as repr.
struct Number {
  double value = 0;
  std::string text;
  Number() = default;
  Number(double v) : value(v) {}  // NOLINT: implicit, a computed value
  std::string str() const { return text.empty() ? py_float(value) : text; }
  operator double() const { return value; }  // NOLINT
};
Number to_number(const Table& t, std::size_t row, const std::string& col);

/// Field parsers whose errors name the file, line and column.
std::int64_t to_int(const Table& t, std::size_t row, const std::string& col);
double to_double(const Table& t, std::size_t row, const std::string& col);
bool to_bool(const Table& t, std::size_t row, const std::string& col);
const std::string& field(const Table& t, std::size_t row, const std::string& col);

}  // namespace tunetab::csv
