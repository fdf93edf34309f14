// The one include for HIP and hipRTC in host code. AMD: ROCm's headers. NVIDIA: nvidia_compat.h, because
// Debian's HIP 5.2 NVIDIA headers do not compile against CUDA 13.
#pragma once
#if defined(TUNETAB_PLATFORM_NVIDIA)
#include "tuner/hip/nvidia_compat.h"
#else
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>
#endif
