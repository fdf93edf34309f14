// AITER's a8w8_blockscale_tuned_gemm.csv (and its model_configs/ companions): reader, writer, and the rows
// tunetab exports from its store for the gemm_fp8_blockscale family.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "db/store.h"
#include "exporters/csv.h"

namespace tunetab::exporters {

/// One row, in AITER's column order: gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio
struct AiterA8w8BlockscaleRow {
  std::string gfx;
  std::int64_t cu_num = 0, m = 0, n = 0, k = 0;
  std::string libtype;
  std::int64_t kernel_id = 0, split_k = 0;
  csv::Number us;
  std::string kernel_name;
  csv::Number tflops, bw, err_ratio;
  int line = 0;  // source line when read from a file
};

const std::vector<std::string>& aiter_a8w8_blockscale_columns();

/// Reads a tuned table; columns are found by name. Errors name the file, line and column.
std::vector<AiterA8w8BlockscaleRow> read_aiter_a8w8_blockscale(const std::string& path);
std::vector<AiterA8w8BlockscaleRow> read_aiter_a8w8_blockscale(std::istream& in, const std::string& source);
void write_aiter_a8w8_blockscale(std::ostream& out, const std::vector<AiterA8w8BlockscaleRow>& rows);

/// The best passing gemm_fp8_blockscale result of every (device, problem) in the store, as AITER rows
/// (libtype "tunetab", kernelId the stored config id). AITER's table has no dtype column: a device
/// exports only the problems in its native fp8 (e4m3fnuz on gfx942, e4m3fn elsewhere).
std::vector<AiterA8w8BlockscaleRow> aiter_a8w8_blockscale_rows(db::Store& store);
/// `best` (e.g. Store::covered_results) as AITER rows, one each, in order, whatever their fp8 format (the
/// caller picks the rows of its consumer); gfx and cu_num are the tuning device's.
std::vector<AiterA8w8BlockscaleRow> aiter_a8w8_blockscale_rows(const std::vector<db::BestRow>& best);

}  // namespace tunetab::exporters
