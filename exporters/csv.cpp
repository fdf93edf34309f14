#include "exporters/csv.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "tuner/error.h"
#include "tuner/text_file.h"

namespace tunetab::csv {

std::size_t Table::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  throw_input(source + ": missing column '" + name + "' in the header");
}

bool Table::has_column(const std::string& name) const {
  for (const auto& h : header)
    if (h == name) return true;
  return false;
}

static std::vector<std::string> parse_line(const std::string& text, std::size_t& pos, int& line, const std::string& source) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  const int start_line = line;
  while (pos < text.size()) {
    const char c = text[pos++];
    if (quoted) {
      if (c == '"') {
        if (pos < text.size() && text[pos] == '"') {
          fields.back() += '"';
          ++pos;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '\n') {
      ++line;
      break;
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  if (quoted) throw_input(source + ":" + std::to_string(start_line) + ": unterminated quoted field");
  return fields;
}

Table read(std::istream& in, const std::string& source, bool pad_short_rows) {
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  Table t;
  t.source = source;
  std::size_t pos = 0;
  int line = 1;
  bool have_header = false;
  while (pos < text.size()) {
    const int row_line = line;
    auto fields = parse_line(text, pos, line, source);
    if (fields.size() == 1 && fields[0].empty()) continue;  // blank line
    if (!have_header) {
      t.header = std::move(fields);
      have_header = true;
      continue;
    }
    if (pad_short_rows && fields.size() < t.header.size()) fields.resize(t.header.size());
    if (fields.size() != t.header.size())
      throw_input(source + ":" + std::to_string(row_line) + ": " + std::to_string(fields.size()) + " fields, header has " +
                  std::to_string(t.header.size()));
    t.rows.push_back(std::move(fields));
    t.line_of_row.push_back(row_line);
  }
  if (!have_header) throw_input(source + ": empty file, expected a CSV header");
  return t;
}

Table read_file(const std::string& path) {
  std::istringstream in(read_text_file(path));
  return read(in, path);
}

std::string escape(const std::string& f) {
  if (f.find_first_of(",\"\n\r") == std::string::npos) return f;
  std::string out = "\"";
  for (char c : f) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void write_row(std::ostream& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << escape(fields[i]);
  out << "\n";
}

std::string py_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string s(buf, res.ptr);  // shortest round-trip: [-]d[.ddd]e[+-]XX
  std::string sign;
  if (s[0] == '-') {
    sign = "-";
    s.erase(0, 1);
  }
  const std::size_t e = s.find('e');
  const int exp10 = std::atoi(s.c_str() + e + 1);
  std::string digits = s.substr(0, e);
  if (digits.size() > 1) digits.erase(1, 1);  // drop the '.'
  if (exp10 >= -4 && exp10 < 16) {
    std::string out;
    if (exp10 >= 0) {
      if (static_cast<int>(digits.size()) <= exp10 + 1) {
        out = digits + std::string(static_cast<std::size_t>(exp10 + 1) - digits.size(), '0') + ".0";
      } else {
        out = digits.substr(0, static_cast<std::size_t>(exp10 + 1)) + "." + digits.substr(static_cast<std::size_t>(exp10 + 1));
      }
    } else {
      out = "0." + std::string(static_cast<std::size_t>(-exp10 - 1), '0') + digits;
    }
    return sign + out;
  }
  std::string mant = digits.substr(0, 1);
  if (digits.size() > 1) mant += "." + digits.substr(1);
  char ebuf[16];
  std::snprintf(ebuf, sizeof(ebuf), "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
  return sign + mant + ebuf;
}

std::string py_round(double v, int digits) {
  // NOTE: Python rounds the exact binary value half-to-even; printing to `digits` places with %.*f
  // rounds the exact value too, and parsing back gives the double Python's round() returns.
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return py_float(std::strtod(buf, nullptr));
}

std::string py_bool(bool v) { return v ? "True" : "False"; }

const std::string& field(const Table& t, std::size_t row, const std::string& col) { return t.rows[row][t.column(col)]; }

static std::string where(const Table& t, std::size_t row, const std::string& col) {
  return t.source + ":" + std::to_string(t.line_of_row[row]) + ": column '" + col + "'";
}

std::int64_t to_int(const Table& t, std::size_t row, const std::string& col) {
  const std::string& f = field(t, row, col);
  std::int64_t v = 0;
  auto res = std::from_chars(f.data(), f.data() + f.size(), v);
  if (res.ec != std::errc() || res.ptr != f.data() + f.size() || f.empty())
    throw_input(where(t, row, col) + ": expected an integer, got '" + f + "'");
  return v;
}

double to_double(const Table& t, std::size_t row, const std::string& col) {
  const std::string& f = field(t, row, col);
  char* end = nullptr;
  const double v = std::strtod(f.c_str(), &end);
  if (f.empty() || end != f.c_str() + f.size()) throw_input(where(t, row, col) + ": expected a number, got '" + f + "'");
  return v;
}

Number to_number(const Table& t, std::size_t row, const std::string& col) {
  Number n(to_double(t, row, col));
  n.text = field(t, row, col);
  return n;
}

bool to_bool(const Table& t, std::size_t row, const std::string& col) {
  const std::string& f = field(t, row, col);
  if (f == "True" || f == "true" || f == "1") return true;
  if (f == "False" || f == "false" || f == "0") return false;
  throw_input(where(t, row, col) + ": expected True or False, got '" + f + "'");
}

}  // namespace tunetab::csv
