// AITER's bf16_tuned_gemm.csv: reader, writer, and the rows tunetab exports from its store.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "db/store.h"
#include "exporters/csv.h"

namespace tunetab::exporters {

/// One row, in AITER's column order:
/// gfx,cu_num,M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle,libtype,solidx,splitK,us,kernelName,err_ratio,tflops,bw
struct AiterBf16GemmRow {
  std::string gfx;
  std::int64_t cu_num = 0, m = 0, n = 0, k = 0;
  bool bias = false;
  std::string dtype = "torch.bfloat16", outdtype = "torch.bfloat16";
  bool scale_ab = false, bpreshuffle = false;
  std::string libtype;
  std::int64_t solidx = 0, split_k = 0;
  csv::Number us;
  std::string kernel_name;
  csv::Number err_ratio, tflops, bw;
  int line = 0;  // source line when read from a file
};

const std::vector<std::string>& aiter_bf16_gemm_columns();

/// Reads a tuned table; columns are found by name. Errors name the file, line and column.
std::vector<AiterBf16GemmRow> read_aiter_bf16_gemm(const std::string& path);
std::vector<AiterBf16GemmRow> read_aiter_bf16_gemm(std::istream& in, const std::string& source);
void write_aiter_bf16_gemm(std::ostream& out, const std::vector<AiterBf16GemmRow>& rows);

/// The best passing result of every (device, problem) in the store, as AITER rows (libtype "tunetab").
std::vector<AiterBf16GemmRow> aiter_bf16_gemm_rows(db::Store& store);
/// `best` (e.g. Store::covered_results(family)) as AITER rows, one each, in order; kernelName is
/// "tunetab_<family>_<config>".
std::vector<AiterBf16GemmRow> aiter_bf16_gemm_rows(const std::vector<db::BestRow>& best);

}  // namespace tunetab::exporters
