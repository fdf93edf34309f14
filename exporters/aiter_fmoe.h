// AITER's tuned_fmoe.csv written from tunetab's chosen fused-MoE rows, in the column order of AITER's
// canonical table (aiter/configs/tuned_fmoe.csv); read_aiter_fmoe (exporters/aiter_tuned.h) reads it back.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tuner/profile/matrix.h"

namespace tunetab::exporters {

/// One chosen row: the key, the padded M (AITER's token), the config and its measurements. A plain struct
/// so the caller can fill it from the database. Stage 1 is kernelName1/us1/err1; a 2-stage pipeline puts
/// stage 2 (with its reduce) in kernelName2/us2/err2; `us` is the whole pipeline's time.
struct FmoeChoice {
  std::int64_t cu_num = 0;
  std::int64_t token = 0;
  profile::FmoeKey key;
  std::int64_t block_m = 0;
  std::int64_t ksplit = 0;    // AITER writes 0 for "no split"
  bool run_1stage = false;
  std::string kernel_name1, kernel_name2;
  double us1 = 0, us2 = 0, us = 0;
  double err1 = 0, err2 = 0;  // fractions of elements outside tolerance; written as AITER's percentages
  double tflops = 0, bw = 0;  // 0: computed from the key, token and us
  std::string tag;            // _tag; empty for tunetab rows
};

/// tuned_fmoe.csv's header, in order:
/// cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,use_g1u1,
/// doweight_stage1,block_m,ksplit,us1,kernelName1,err1,us2,kernelName2,err2,us,run_1stage,tflops,bw,_tag
const std::vector<std::string>& aiter_fmoe_columns_tuned();

/// AITER's fused-MoE key for a SiLU, gate+up-fused MoE with bf16 hidden states (doweight_stage1 0);
/// q_dtype is the torch spelling of both operand types (torch.bfloat16, torch.float8_e4m3fn[uz]).
profile::FmoeKey aiter_fmoe_key(std::int64_t model_dim, std::int64_t inter_dim, std::int64_t expert, std::int64_t topk,
                                const std::string& q_dtype);

/// TFLOP/s and GB/s as AITER's tuner reports them for a row (both stages' flops; weights of the experts
/// hit plus activations in and out).
double fmoe_tflops(const FmoeChoice& c);
double fmoe_bandwidth_gbs(const FmoeChoice& c);

/// Writes the header and one line per row, in the given order.
void write_aiter_fmoe(std::ostream& out, const std::vector<FmoeChoice>& rows);
/// The same into `path`; Input error naming the path when it cannot be written.
void write_aiter_fmoe(const std::string& path, const std::vector<FmoeChoice>& rows);

}  // namespace tunetab::exporters
