// Search: which candidates a problem gets, and which are re-timed carefully. Exhaustive over the
// family's space after its constraints (they reject before anything compiles), then two timing phases:
// a short screen of every passing candidate and a careful re-time of the fastest few.
#pragma once
#include <optional>
#include <string>
#include <vector>

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

}  // namespace tunetab
