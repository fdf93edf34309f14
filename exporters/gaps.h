// Gap reports: shipped tuning tables (AITER's tuned CSVs, vLLM's fused-MoE JSON configs) audited against a
// deployment's support matrix. For every key the deployment hits, the consumer's lookup is simulated over
// the key's whole M domain, range by range, and every M the table serves badly is reported: no row (miss),
// a row measured at a smaller M (extrapolated), or sizes where 32-bit indices wrap (index-overflow). The
// tables' own defects (repeated keys, non-positive times, large errors, unreachable rows) come beside.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tuner/profile/lookup.h"
#include "tuner/profile/matrix.h"

namespace tunetab::exporters {

enum class TableFormat { kAiterFmoe, kAiterBf16Gemm, kAiterA8w8BlockscaleGemm, kVllmMoeJson };
std::string to_string(TableFormat f);  // "aiter-fmoe", "aiter-bf16-gemm", "aiter-a8w8-blockscale-gemm", "vllm-moe-json"
/// Input error listing the names when `s` is none of them.
TableFormat table_format_from_string(const std::string& s);

enum class GapKind { kMiss, kExtrapolated, kIndexOverflow, kDuplicate, kConflict, kNonPositiveTime, kErrorRatio, kUnreachable };
std::string to_string(GapKind k);  // "miss", "extrapolated", "index-overflow", "duplicate", "conflict", ...
/// Miss, extrapolated and index-overflow: Ms the consumer serves untested. The other kinds are table defects.
bool is_serving_gap(GapKind k);

/// A lookup key without its M: (column, value) pairs, spelled and ordered as the table kind has them.
using KeyFields = std::vector<std::pair<std::string, std::string>>;

/// The buffers of a key's problem that grow with M, to find the first M at which one of them holds 2^31
/// elements or more, where 32-bit element offsets wrap.
struct IndexModel {
  std::int64_t rows_per_m = 1;   // rows one more M adds: 1 for GEMM, topk for fused MoE (the routed copies)
  std::int64_t pad_blocks = 0;   // fused MoE: experts; the sort pads each expert's rows to a whole block_m
  std::int64_t row_elems = 0;    // elements per row of the widest such buffer
  std::int64_t fixed_elems = 0;  // the largest operand M does not grow (GEMM's B); at 2^31 every M wraps

  /// C[M,N] = A[M,K] B[N,K]^T: rows of max(N, K) elements; B holds N*K.
  static IndexModel gemm(std::int64_t n, std::int64_t k);
  /// AITER's sorted activations and outputs: M*topk + expert*block_m rows of max(model_dim, inter_dim)
  /// (moe_sorting allocates topk rows fewer; counting them errs on the safe side).
  static IndexModel fused_moe(std::int64_t model_dim, std::int64_t inter_dim, std::int64_t expert, std::int64_t topk);
  /// The first M at which a buffer reaches 2^31 elements, for a row whose sort pads to block_m.
  std::int64_t first_overflow_m(std::int64_t block_m) const;
};

/// A key the deployment hits, with its M domain.
struct AuditKey {
  KeyFields fields;
  profile::MDomain domain;
  std::optional<IndexModel> index;  // nullopt: sizes unknown, no index-overflow check
};

/// A table row as the audit sees it.
struct AuditRow {
  KeyFields key;
  std::int64_t m = 0;  // the M the row was measured at
  std::string source;  // file
  int line = 0;        // 0: none (JSON)
  std::string tag;     // AITER's _tag: rows with different tags are no repeats of each other
  bool serves = true;  // false: the consumer keeps the row out of this lookup (AITER's flydsl_fallback rows)
  std::string rest;    // every other field; two rows of one key and M that differ here conflict
  std::vector<std::pair<std::string, double>> times;   // microseconds; must be positive
  std::vector<std::pair<std::string, double>> errors;  // error ratios; must not pass GapOptions::max_err_ratio
  std::int64_t block_m = 0;                            // fused MoE: the block the sort pads each expert's rows to
  int index_bits = 0;  // 64: validated with 64-bit indexing (tunetab rows, later); 0: unknown (AITER, vLLM)

  /// "file:line", or the file alone when the row has no line.
  std::string where() const;
};

/// One gap or defect: a range of M of one key.
struct Gap {
  GapKind kind = GapKind::kMiss;
  KeyFields key;
  std::int64_t m_first = 0, m_last = 0;
  std::optional<AuditRow> row;  // the row that serves the range, or the defective row
  std::string detail;
};

/// Every gap of every key, then every defect of the tables.
struct GapReport {
  std::vector<Gap> gaps;
  std::size_t keys = 0;           // keys audited
  std::size_t complete_keys = 0;  // keys without a serving gap
  std::size_t rows = 0;           // table rows read
  /// Gaps (ranges) of one kind.
  std::size_t count(GapKind k) const;
  /// Some M is a miss, extrapolated or an index overflow: `tunetab gaps` exits 1.
  bool has_serving_gaps() const;
};

/// The deployment as a table's lookup sees it.
struct GapOptions {
  std::string gfx;  // AITER's device keys
  int cu_num = 0;
  std::string device_name;                       // vLLM's; empty: the one device the tables name
  profile::Quant quant = profile::Quant::kBf16;  // vLLM: the dtype and block shape of the file name
  double max_err_ratio = 0.05;                   // AITER's tuners' default --errRatio

  /// The envelope's device keys and quantization, the rest at their defaults.
  static GapOptions from(const profile::Envelope& env);
};

/// Every row of the tables at `paths`, in the order the consumer combines them (AITER concatenates them,
/// the first of repeated keys serving; for vLLM the first file per name serves, and in a file the last of a
/// repeated M). Rows without a gfx get AITER's inference, else `options.gfx`. For vLLM an empty
/// options.device_name becomes the tables' one device name (Input error when they name several).
std::vector<AuditRow> read_rows(TableFormat format, const std::vector<std::string>& paths, GapOptions& options);

/// The keys of `matrix` a table of `format` serves, each with its M domain.
std::vector<AuditKey> matrix_keys(TableFormat format, const profile::Matrix& matrix, const GapOptions& options);

/// The keys listed in a CSV with the key columns of `format` (AITER: its untuned CSV; vLLM: E,N). A key's
/// domain ends at its largest M when the file has the M column (token, M), else at `default_m_max`.
std::vector<AuditKey> csv_keys(TableFormat format, const std::string& path, const GapOptions& options,
                               std::int64_t default_m_max);

/// The serving gaps of `keys` under `rows` and the defects of `rows`.
GapReport find_gaps(TableFormat format, const std::vector<AuditKey>& keys, const std::vector<AuditRow>& rows,
                    const GapOptions& options);

/// One line per gap, then a summary line.
std::string to_text(const GapReport& report);
/// {"gaps": [{"key": {...}, "m_first", "m_last", "kind", "row", "detail"}], "summary": {...}}.
nlohmann::json to_json(const GapReport& report);

/// The rows the consumer's lookup asks for over every miss, as AITER's untuned CSV of `format`, for
/// tunetab or AITER's tuner to fill; Input error for vllm-moe-json.
std::string aiter_untuned_csv(TableFormat format, const GapReport& report);

}  // namespace tunetab::exporters
