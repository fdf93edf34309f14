// Shape lists for `tunetab tune`: the built-in list, --shapes strings and AITER untuned CSVs.
#pragma once
#include <string>
#include <vector>

#include "kernels/gemm/gemm.h"

namespace tunetab {

/// M in {1, 16, 64, 304, 336, 1024, 4096} x (N, K) in {(3072, 1536), (6144, 2048), (3072, 6144)}.
std::vector<gemm::Problem> default_gemm_shapes();

/// "M,N,K;M,N,K" or "MxNxK MxNxK" (separators ; space or newline); Input error naming the bad entry.
std::vector<gemm::Problem> parse_gemm_shapes(const std::string& text);

/// AITER's bf16 untuned CSV (M,N,K,bias,dtype,outdtype[,scaleAB,bpreshuffle]); also accepts a tuned table.
std::vector<gemm::Problem> read_aiter_untuned_gemm(const std::string& path);

}  // namespace tunetab
