// A profile's tuned tables: the rows of a tune plan that passed coverage, written in each consumer's
// format with a certificate beside each file, then audited with the gap report (exporters/gaps.h) against
// the same support matrix.
//   bf16_tuned_gemm.csv               gemm_bf16 keys (AITER)
//   a8w8_blockscale_tuned_gemm.csv    gemm_fp8_blockscale keys (AITER)
//   tuned_fmoe.csv                    fused_moe keys (AITER)
//   E=..,N=..,device_name=..[,dtype=fp8_w8a8,block_shape=[128,128]].json   one per fused_moe key (vLLM)
// Table keys (gfx, cu_num) are the profile's, the consumer's GPU; each certificate names the device that
// validated the rows, and says `"proxy": true` when that is not the consumer's GPU.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "db/store.h"
#include "exporters/gaps.h"
#include "tuner/profile/matrix.h"
#include "tuner/tune_plan.h"

namespace tunetab {

struct ExportOptions {
  std::string dir;               // created when absent
  std::string device;            // only rows tuned on the device of this name ("": any)
  std::string vllm_device_name;  // vLLM's file names ("": the tuning device's name, spaces as '_')
  std::vector<std::string> jit_flags;  // the tune's: a row is exported only if it judged the code they build now
};

struct ExportedTable {
  exporters::TableFormat format = exporters::TableFormat::kAiterBf16Gemm;
  std::string path, cert_path;
  std::size_t rows = 0;
};

struct ExportResult {
  std::vector<ExportedTable> tables;
  std::vector<std::string> missing;  // "<key label> M=64: no row passed coverage": not exported
  std::vector<std::string> notes;    // what the certificates say beside the rows (proxy device, timing)
};

/// Writes every table the plan's families fill into opt.dir, each with `<file>.cert.json`, and reads each
/// back. A table with no covered row is still written (header only), so the gap report names its misses.
ExportResult export_plan(db::Store& store, const TunePlan& plan, const profile::Matrix& matrix, const ExportOptions& opt);

/// The device whose rows export_plan takes for `plan` from `store` (named `store_name` in messages): `requested`
/// when given, else the one device the plan's families have covered rows of ("" when none). A table mixing two
/// GPUs' choices would certify neither: several devices without `requested` are an Input error, as is a
/// `requested` device the store holds no covered row of while it holds others'.
std::string export_device(db::Store& store, const TunePlan& plan, const std::string& requested, const std::string& store_name);

/// One gap report per table kind written (the vLLM files together, as vLLM reads them).
struct TableGaps {
  exporters::TableFormat format;
  std::vector<std::string> paths;
  exporters::GapReport report;
};
/// The gap report of the exported tables against the matrix they were tuned for.
std::vector<TableGaps> check_gaps(const std::vector<ExportedTable>& tables, const profile::Matrix& matrix);

}  // namespace tunetab
