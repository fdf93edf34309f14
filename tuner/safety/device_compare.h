// The validate kernel (kernels/validate) for this process's device: compiled once per process through
// jit::Compiler (and the code-object cache when one is given), loaded once, handed to every DeviceCompare.
// A device side enables it when it opens the device (tuner/safety/executor.cpp); without that, or when the
// kernel does not compile, validation falls back to the host compare.
#pragma once
#include <string>

#include "db/store.h"
#include "tuner/hip/runtime.h"

namespace tunetab::safety {

struct CompareKernel {
  const Module* module = nullptr;
  int cu_count = 0;
};

/// Lets device_compare_kernel() serve `device` (its arch and CU count); compiling waits for the first use.
void enable_device_compare(const DeviceFacts& device, db::Store* cache = nullptr);
/// Back to the host compare for this process (tests, debugging).
void disable_device_compare();
/// The loaded compare kernel, compiled on first use; nullptr when not enabled or when it failed to compile
/// (why_no_device_compare() says why).
const CompareKernel* device_compare_kernel();
std::string why_no_device_compare();

}  // namespace tunetab::safety
