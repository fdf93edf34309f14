// The bf16 GEMM family's adapter: the whole of what the tuner needs to know about kernels/gemm.
#include "kernels/gemm/gemm.h"
#include "tuner/families/gemm_traits.h"
#include "tuner/family_ops.h"

namespace tunetab {

std::unique_ptr<FamilyOps> make_gemm_bf16_ops() { return std::make_unique<FamilyAdapter<GemmBf16Traits>>(); }

}  // namespace tunetab
