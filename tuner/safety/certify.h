// Certificates for exported tables, and `tunetab verify`: re-running a table's validation on this device.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "db/store.h"
#include "exporters/certificate.h"
#include "tuner/family_ops.h"
#include "tuner/profile/lookup.h"

namespace tunetab::safety {

/// The certificate of a table whose rows are `rows` (Store::covered_results, in table order). Each row's
/// served Ms are recomputed from the table itself under `rule` on 1..m_max; an Input error names the row
/// when its coverage did not validate all of them (rerun `tunetab tune` with the same --rule/--m-max).
exporters::Certificate certify(const FamilyOps& ops, const std::vector<db::BestRow>& rows, profile::RuleKind rule,
                               std::int64_t m_max, const std::string& table_name, const std::string& table_format,
                               const std::string& table_text);

struct VerifyOptions {
  std::string table;             // an aiter-bf16-gemm table tunetab exported
  std::string cert;              // its certificate ("" : none; the domain then comes from the options)
  profile::RuleKind rule = profile::RuleKind::kAiterGemm;
  std::int64_t m_max = 32768;
  std::int64_t every_m_limit = 16384;
  int device = 0;
  bool isolate = true;
  double launch_timeout_ms = 10000;
  std::uint64_t seed = 20261201;
  std::string cache_db;          // compile cache ("" : none)
  std::vector<std::string> jit_flags;
  bool progress = true;
};

/// Re-validates every row of the table on this device over the Ms it serves (and checks the certificate
/// against the table). Prints one line per row and a summary; returns 0 when all pass, 1 otherwise, and
/// 2 (after saying "no GPU") when there is no device.
int verify_table(const VerifyOptions& opt);

/// The family and config of a tunetab kernelName ("tunetab_<family>_<config>"); Input error otherwise.
std::pair<std::string, std::string> family_and_config(const std::string& kernel_name);

}  // namespace tunetab::safety
