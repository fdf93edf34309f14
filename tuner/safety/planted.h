// TEST ONLY: the planted faults of the gemm_bf16_planted family (templates/testing_faults.h) and the
// disposition the safety engine must give each.
#pragma once
#include <string>
#include <vector>

#include "tuner/names.h"

namespace tunetab {

inline constexpr const char* kPlantedFamily = "gemm_bf16_planted";

/// Values match kFault in templates/testing_faults.h.
enum class PlantedFault { kNone = 0, kTailStore = 1, kWrap32 = 2, kHang = 3, kSkipTile = 4, kWrong = 5 };
std::string planted_fault_name(PlantedFault f);  // "tail_store"; its config is "planted_tail_store"
PlantedFault planted_fault_from_name(const std::string& s);
/// "out_of_bounds", "out_of_bounds|faulted", "timed_out", "incorrect" or (kNone) "passed".
std::string expected_disposition(PlantedFault f);
/// Every fault but kNone.
std::vector<PlantedFault> planted_faults();

}  // namespace tunetab
