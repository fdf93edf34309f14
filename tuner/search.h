// Search: which candidates a problem gets, and which are re-timed carefully. Exhaustive over the
// family's space after its constraints (they reject before anything compiles), then two timing phases:
// a short screen of every passing candidate and a careful re-time of the fastest few.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "db/store.h"
#include "kernels/gemm/gemm.h"

namespace tunetab {

struct GemmCandidate {
  gemm::Config config;
  int index_bits = 32;
  std::optional<std::string> unsupported;  // reason, when the constraints reject it
};

/// Every config of the space for `p` on `t`, each with its index width or the reason it is rejected.
std::vector<GemmCandidate> plan_candidates(const gemm::Problem& p, const Target& t);

/// Distinct code objects the supported candidates of `problems` need, in a stable order.
std::vector<KernelSource> needed_kernels(const std::vector<std::vector<GemmCandidate>>& plans);

/// The `n` fastest by screen time, for the final re-time.
std::vector<std::size_t> fastest(const std::vector<double>& median_us, std::size_t n);

/// What a stored result ranks by when a row's final phase picks its finalists (`fastest`): its screening median
/// (`screen_us`, which a final re-time keeps; a final stored before schema 4 has only its median) for a result that
/// passed screening, whether it passed since or the final phase quarantined it; none for one that failed screening.
/// So a resumed tune picks the finalists the run it resumes picked, and re-times none of them.
std::optional<double> screening_time(const db::ResultRecord& r);

/// An anchor row's passing results as the tiered search ranks them: fastest median first, screened and re-timed
/// alike (ties in their given order). NOTE: not db::rank_row's order, which puts every re-timed ("final") result
/// first: a resumed tune keeps earlier runs' finals, and they would crowd configs new to the space out of an
/// anchor's best (session 24: a 96-wide FP8 tile 5th by median at M=4096 was 9th behind stale finals, and the
/// M=512 row between the anchors never tried it).
std::vector<std::int64_t> anchor_ranking(const std::vector<db::ResultRecord>& passed);

/// Tiered search: the configs a row between anchor rows tries, in order: the `keep` fastest passing configs
/// of each nearest anchor (`anchor_ranked`, fastest first), then every config of `supported_here` that no
/// nearest anchor supported (`anchor_supported`: it was never measured there, e.g. the only config for this
/// M). Only configs in `supported_here` are returned, each once.
std::vector<std::string> tiered_configs(const std::vector<std::vector<std::string>>& anchor_ranked,
                                        const std::vector<std::set<std::string>>& anchor_supported,
                                        const std::vector<std::string>& supported_here, std::size_t keep);

}  // namespace tunetab
