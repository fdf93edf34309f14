#include "tuner/family_ops.h"

#include <algorithm>

namespace tunetab {

std::vector<Candidate> FamilyOps::plan(const Json& problem, const Target& t, std::int64_t proof_m) const {
  const std::int64_t m = m_of(problem);
  TUNETAB_ASSERT(proof_m >= m, "the index proof's M must be at least the problem's");
  std::vector<Candidate> out;
  for (const std::string& c : configs()) {
    Candidate cand;
    cand.config = c;
    cand.proof_m = proof_m;
    cand.unsupported = why_unsupported(problem, c, t);
    cand.index_bits = proven_index_bits(problem, c, proof_m);
    out.push_back(std::move(cand));
  }
  return out;
}

namespace {
struct Registry {
  std::vector<std::unique_ptr<FamilyOps>> families;
  Registry() {
    // One line per family adapter.
    families.push_back(make_gemm_bf16_ops());
    families.push_back(make_gemm_bf16_planted_ops());
    families.push_back(make_gemm_fp8_blockscale_ops());
    families.push_back(make_fused_moe_ops());
  }
};
const Registry& registry() {
  static const Registry r;
  return r;
}
}  // namespace

const FamilyOps& family_ops(const std::string& name) {
  for (const auto& f : registry().families)
    if (f->family() == name) return *f;
  std::string names;
  for (const auto& n : family_names()) names += (names.empty() ? "" : ", ") + n;
  throw_input("family '" + name + "': expected one of " + names);
}

std::vector<std::string> family_names() {
  std::vector<std::string> out;
  for (const auto& f : registry().families) out.push_back(f->family());
  return out;
}

}  // namespace tunetab
