// AITER's tuned tables as AITER reads them at run time: fused MoE (tuned_fmoe.csv and every
// model_configs/*tuned_fmoe*.csv) and GEMM (bf16_tuned_gemm.csv, a8w8_blockscale_tuned_gemm.csv,
// a8w8_tuned_gemm.csv and their model_configs/ companions). Columns are found by name, so tables with and
// without the gfx column, with the xbf16/flat/_tag columns or other extra ones, all read; a row that stops
// short of the header's last columns reads them as blank, as AITER's pandas does.
#pragma once
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "exporters/csv.h"
#include "tuner/profile/envelope.h"
#include "tuner/profile/matrix.h"

namespace tunetab::exporters {

/// The gfx AITER gives a row without one (a table without the column, or a blank field), from its cu_num:
/// 256 -> gfx950; 80, 228, 304 -> gfx942; empty for any other count (AITER then takes the running GPU's).
std::string aiter_gfx_from_cu_num(std::int64_t cu_num);

/// A key column's value as AITER compares it: integers and booleans in one spelling, text as written.
/// Errors name the file, line and column.
std::string aiter_key_field(const csv::Table& t, std::size_t row, const std::string& column);

/// One row of a tuned fused-MoE table.
struct AiterFmoeRow {
  std::string gfx;  // the gfx column, else aiter_gfx_from_cu_num (empty: the running GPU's)
  std::int64_t cu_num = 0;
  std::int64_t token = 0;  // the padded M the row was measured at
  profile::FmoeKey key;
  std::int64_t block_m = 0, ksplit = 0;
  bool run_1stage = false;  // one kernel: the stage-2 fields may be blank or zero
  std::string kernel_name1, kernel_name2;
  double us = 0, us1 = 0, us2 = 0;
  double err1 = 0, err2 = 0;  // fractions; AITER writes percentages ("0.8%")
  std::string tag;            // _tag; AITER keeps "flydsl_fallback" rows apart, for runs without FlyDSL
  std::string rest;           // every other field as name=value, to tell a repeated row from a conflicting one
  int line = 0;
};

/// Reads a tuned fused-MoE table; Input errors name the file, line and column.
std::vector<AiterFmoeRow> read_aiter_fmoe(const std::string& path);
std::vector<AiterFmoeRow> read_aiter_fmoe(std::istream& in, const std::string& source);

/// One row of a tuned GEMM table.
struct AiterGemmRow {
  std::string gfx;  // as AiterFmoeRow::gfx
  std::int64_t cu_num = 0, m = 0, n = 0, k = 0;
  std::vector<std::string> key_rest;  // the key after M, N, K, as in profile::aiter_gemm_fields
  std::string libtype, kernel_name;
  double us = 0;
  double err_ratio = 0;  // err_ratio (bf16) or errRatio (the others)
  std::string rest;      // as AiterFmoeRow::rest
  int line = 0;
};

/// Reads the tuned GEMM table of `quant` (bf16_tuned_gemm, a8w8_blockscale_tuned_gemm or a8w8_tuned_gemm
/// columns); Input errors name the file, line and column.
std::vector<AiterGemmRow> read_aiter_gemm(const std::string& path, profile::Quant quant);
std::vector<AiterGemmRow> read_aiter_gemm(std::istream& in, const std::string& source, profile::Quant quant);

}  // namespace tunetab::exporters
