// Certificates: `<table>.cert.json` beside every exported table. Per row: the Ms it serves under the
// consumer's lookup rule and the Ms validated (every M up to a limit, then the explicit sample above it),
// the checks run, the tolerance, the index width and its proof, and the code object's hashes; with the
// device and tunetab version. `tunetab verify` re-runs what a certificate states.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/profile/lookup.h"

namespace tunetab::exporters {

inline constexpr const char* kCertificateFormat = "tunetab-certificate";
inline constexpr int kCertificateVersion = 1;

struct CertificateRow {
  int line = 0;                      // the row's line in the table (header is line 1)
  std::string family, config, kernel_name;
  nlohmann::json problem;            // the family's Problem::to_json()
  std::vector<profile::MDomain> served;     // the Ms the rule routes to this row, within the domain
  std::int64_t every_m_limit = 0;    // every served M up to this was validated
  std::vector<std::int64_t> sampled; // the served Ms above the limit that were validated
  std::int64_t ms_checked = 0;
  std::vector<std::string> checks;   // guard_bands, poison, reference_compare, index_proof
  nlohmann::json tolerance;          // ToleranceSpec::to_json()
  int index_bits = 0;
  std::int64_t proof_m = 0;          // the largest served M; every offset there fits index_bits
  nlohmann::json index_bounds;       // [{"buffer", "max_offset"}] at proof_m
  std::string code_key, code_hash;   // compile-cache key hash; hash of the code object's bytes
};

struct Certificate {
  std::string table;         // file name of the table, as written beside it
  std::string table_format;  // "aiter-bf16-gemm"
  std::string table_hash;    // hash_hex of the table's bytes
  std::string tunetab_version;
  std::string lookup_rule;   // profile::to_string(RuleKind)
  std::int64_t m_max = 0;    // the domain: 1..m_max
  nlohmann::json device;     // name, arch, cu_count, driver_version, compiler_version
  std::vector<CertificateRow> rows;
};

/// The checks every certified row has passed.
const std::vector<std::string>& certificate_checks();

nlohmann::json to_json(const Certificate& c);
/// Parses and schema-checks; Input errors name `source` and the field path ("rows[2].served[0]").
Certificate certificate_from_json(const nlohmann::json& j, const std::string& source);
void write_certificate(const std::string& path, const Certificate& c);
Certificate read_certificate(const std::string& path);
/// "<table>.cert.json".
std::string certificate_path_for(const std::string& table_path);

}  // namespace tunetab::exporters
