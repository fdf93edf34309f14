#include "tuner/shapes.h"

#include <regex>
#include <set>

#include "exporters/csv.h"
#include "tuner/error.h"

namespace tunetab {

std::vector<gemm::Problem> default_gemm_shapes() {
  std::vector<gemm::Problem> out;
  const std::pair<int, int> nks[] = {{3072, 1536}, {6144, 2048}, {3072, 6144}};
  for (auto [n, k] : nks)
    for (int m : {1, 16, 64, 304, 336, 1024, 4096}) out.push_back(gemm::Problem{m, n, k});
  return out;
}

std::vector<gemm::Problem> parse_gemm_shapes(const std::string& text) {
  std::vector<gemm::Problem> out;
  static const std::regex entry(R"(\s*(\d+)\s*[,x]\s*(\d+)\s*[,x]\s*(\d+)\s*)");
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find_first_of(";\n ", start);
    const std::string item = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!item.empty()) {
      std::smatch m;
      if (!std::regex_match(item, m, entry))
        throw_input("--shapes: entry '" + item + "' is not M,N,K (or MxNxK)");
      gemm::Problem p{std::stoll(m[1]), std::stoll(m[2]), std::stoll(m[3])};
      if (p.m <= 0 || p.n <= 0 || p.k <= 0) throw_input("--shapes: entry '" + item + "' has a zero dimension");
      out.push_back(p);
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (out.empty()) throw_input("--shapes: no shapes given");
  return out;
}

std::vector<gemm::Problem> read_aiter_untuned_gemm(const std::string& path) {
  const csv::Table t = csv::read_file(path);
  std::vector<gemm::Problem> out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    gemm::Problem p;
    p.m = csv::to_int(t, i, "M");
    p.n = csv::to_int(t, i, "N");
    p.k = csv::to_int(t, i, "K");
    if (p.m <= 0 || p.n <= 0 || p.k <= 0)
      throw_input(path + ":" + std::to_string(t.line_of_row[i]) + ": M, N and K must be positive");
    if (t.has_column("bias")) p.bias = csv::to_bool(t, i, "bias");
    try {
      if (t.has_column("dtype")) p.in = gemm::dtype_from_string(csv::field(t, i, "dtype"));
      if (t.has_column("outdtype")) p.out = gemm::dtype_from_string(csv::field(t, i, "outdtype"));
    } catch (const Error& e) {
      throw_input(path + ":" + std::to_string(t.line_of_row[i]) + ": " + e.detail());
    }
    if (seen.insert(p.key()).second) out.push_back(p);
  }
  return out;
}

}  // namespace tunetab
