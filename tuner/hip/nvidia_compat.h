// The HIP/hipRTC subset tunetab uses, mapped onto the CUDA driver API and NVRTC. This is the only place
// that names CUDA; everything else writes HIP. libcuda is loaded at run time (dlopen), so one binary
// starts on machines without a driver (CI) and reports "no device" there instead of failing to load.
#pragma once
#include <cuda.h>
#include <nvrtc.h>

#include <cstddef>

// ---- errors ---------------------------------------------------------------------------------------
using hipError_t = CUresult;
constexpr hipError_t hipSuccess = CUDA_SUCCESS;
constexpr hipError_t hipErrorNoDevice = CUDA_ERROR_NO_DEVICE;
constexpr hipError_t hipErrorNotInitialized = CUDA_ERROR_NOT_INITIALIZED;
constexpr hipError_t hipErrorLaunchTimeOut = CUDA_ERROR_LAUNCH_TIMEOUT;
constexpr hipError_t hipErrorIllegalAddress = CUDA_ERROR_ILLEGAL_ADDRESS;
constexpr hipError_t hipErrorNotReady = CUDA_ERROR_NOT_READY;

namespace tunetab::nvidia {

// X-list of the driver entry points; CUDA_DRIVER_API_NAME(x) expands versioned names (cuMemAlloc_v2).
#define TUNETAB_CUDA_DRIVER_FUNCS(X)                                                              \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)           \
  X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuCtxSynchronize)      \
  X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemsetD8)        \
  X(cuMemsetD32) X(cuMemGetInfo) X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction)     \
  X(cuLaunchKernel) X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuEventCreate) X(cuEventRecord) \
  X(cuEventSynchronize) X(cuEventElapsedTime) X(cuEventDestroy) X(cuEventQuery) X(cuStreamCreate)  \
  X(cuStreamSynchronize) X(cuStreamDestroy) X(cuStreamQuery) X(cuGetErrorName) X(cuGetErrorString)      \
  X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiateWithFlags) X(cuGraphLaunch)      \
  X(cuGraphExecDestroy) X(cuGraphDestroy) X(cuTensorMapEncodeTiled) X(cuLaunchKernelEx)              \
  X(cuCtxGetDevice) X(cuOccupancyMaxActiveBlocksPerMultiprocessor)

struct Driver {
#define TUNETAB_DECLARE_FN(name) decltype(&::name) name##_ = nullptr;
  TUNETAB_CUDA_DRIVER_FUNCS(TUNETAB_DECLARE_FN)
#undef TUNETAB_DECLARE_FN
  bool loaded = false;
};

/// The driver table, loaded on first use; loaded == false when libcuda.so.1 is absent.
const Driver& driver();

inline CUresult call_missing() { return CUDA_ERROR_STUB_LIBRARY; }

}  // namespace tunetab::nvidia

#define TUNETAB_CU(name, ...) \
  (::tunetab::nvidia::driver().loaded ? ::tunetab::nvidia::driver().name##_(__VA_ARGS__) : ::tunetab::nvidia::call_missing())

// ---- types ----------------------------------------------------------------------------------------
using hipDevice_t = CUdevice;
using hipDeviceptr_t = void*;
using hipModule_t = CUmodule;
using hipFunction_t = CUfunction;
using hipStream_t = CUstream;
using hipEvent_t = CUevent;
using hipGraph_t = CUgraph;
using hipGraphExec_t = CUgraphExec;
using hipGraphNode_t = CUgraphNode;
using hipStreamCaptureMode = CUstreamCaptureMode;
constexpr auto hipStreamCaptureModeThreadLocal = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;

using hipDeviceAttribute_t = CUdevice_attribute;
constexpr auto hipDeviceAttributeMultiprocessorCount = CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
constexpr auto hipDeviceAttributeClockRate = CU_DEVICE_ATTRIBUTE_CLOCK_RATE;
constexpr auto hipDeviceAttributeMemoryClockRate = CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE;
constexpr auto hipDeviceAttributeMemoryBusWidth = CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH;
constexpr auto hipDeviceAttributeL2CacheSize = CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE;
constexpr auto hipDeviceAttributeComputeCapabilityMajor = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR;
constexpr auto hipDeviceAttributeComputeCapabilityMinor = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR;
constexpr auto hipDeviceAttributeMaxSharedMemoryPerBlock = CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN;
constexpr auto hipDeviceAttributeMaxThreadsPerBlock = CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK;

using hipFunction_attribute = CUfunction_attribute;
constexpr auto HIP_FUNC_ATTRIBUTE_NUM_REGS = CU_FUNC_ATTRIBUTE_NUM_REGS;
constexpr auto HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES;
constexpr auto HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;

// ---- runtime subset (HIP's spelling, driver semantics with the primary context) -------------------
inline hipError_t hipInit(unsigned flags) { return TUNETAB_CU(cuInit, flags); }
inline hipError_t hipDriverGetVersion(int* v) { return TUNETAB_CU(cuDriverGetVersion, v); }
inline hipError_t hipRuntimeGetVersion(int* v) { return TUNETAB_CU(cuDriverGetVersion, v); }
inline hipError_t hipGetDeviceCount(int* n) {
  *n = 0;
  hipError_t e = TUNETAB_CU(cuInit, 0);
  return e != CUDA_SUCCESS ? e : TUNETAB_CU(cuDeviceGetCount, n);
}
inline hipError_t hipSetDevice(int ordinal) {
  CUdevice dev;
  CUcontext ctx;
  hipError_t e = TUNETAB_CU(cuDeviceGet, &dev, ordinal);
  if (e == CUDA_SUCCESS) e = TUNETAB_CU(cuDevicePrimaryCtxRetain, &ctx, dev);
  if (e == CUDA_SUCCESS) e = TUNETAB_CU(cuCtxSetCurrent, ctx);
  return e;
}
inline hipError_t hipDeviceGetName(char* name, int len, int ordinal) {
  CUdevice dev;
  hipError_t e = TUNETAB_CU(cuDeviceGet, &dev, ordinal);
  return e != CUDA_SUCCESS ? e : TUNETAB_CU(cuDeviceGetName, name, len, dev);
}
inline hipError_t hipDeviceGetAttribute(int* v, hipDeviceAttribute_t attr, int ordinal) {
  CUdevice dev;
  hipError_t e = TUNETAB_CU(cuDeviceGet, &dev, ordinal);
  return e != CUDA_SUCCESS ? e : TUNETAB_CU(cuDeviceGetAttribute, v, attr, dev);
}
inline hipError_t hipGetDevice(int* ordinal) {
  CUdevice dev;
  hipError_t e = TUNETAB_CU(cuCtxGetDevice, &dev);
  *ordinal = static_cast<int>(dev);
  return e;
}
inline hipError_t hipDeviceSynchronize() { return TUNETAB_CU(cuCtxSynchronize); }
inline hipError_t hipMemGetInfo(size_t* free_bytes, size_t* total) { return TUNETAB_CU(cuMemGetInfo, free_bytes, total); }
inline hipError_t hipMalloc(void** p, size_t bytes) {
  CUdeviceptr d = 0;
  hipError_t e = TUNETAB_CU(cuMemAlloc, &d, bytes);
  *p = reinterpret_cast<void*>(d);
  return e;
}
inline hipError_t hipFree(void* p) { return TUNETAB_CU(cuMemFree, reinterpret_cast<CUdeviceptr>(p)); }
inline hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, const void* src, size_t bytes) {
  return TUNETAB_CU(cuMemcpyHtoD, reinterpret_cast<CUdeviceptr>(dst), src, bytes);
}
inline hipError_t hipMemcpyDtoH(void* dst, hipDeviceptr_t src, size_t bytes) {
  return TUNETAB_CU(cuMemcpyDtoH, dst, reinterpret_cast<CUdeviceptr>(src), bytes);
}
inline hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t bytes) {
  return TUNETAB_CU(cuMemcpyDtoD, reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), bytes);
}
inline hipError_t hipMemsetD8(hipDeviceptr_t dst, unsigned char v, size_t n) {
  return TUNETAB_CU(cuMemsetD8, reinterpret_cast<CUdeviceptr>(dst), v, n);
}
inline hipError_t hipMemsetD32(hipDeviceptr_t dst, int v, size_t n) {
  return TUNETAB_CU(cuMemsetD32, reinterpret_cast<CUdeviceptr>(dst), static_cast<unsigned>(v), n);
}
inline hipError_t hipModuleLoadData(hipModule_t* m, const void* image) { return TUNETAB_CU(cuModuleLoadData, m, image); }
inline hipError_t hipModuleUnload(hipModule_t m) { return TUNETAB_CU(cuModuleUnload, m); }
inline hipError_t hipModuleGetFunction(hipFunction_t* f, hipModule_t m, const char* name) {
  return TUNETAB_CU(cuModuleGetFunction, f, m, name);
}
inline hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                        unsigned by, unsigned bz, unsigned shmem, hipStream_t s, void** params,
                                        void** extra) {
  return TUNETAB_CU(cuLaunchKernel, f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}
namespace tunetab::nvidia {
/// cuLaunchKernelEx with a thread-block cluster (no HIP equivalent in ROCm 5.2).
inline CUresult launch_cluster(CUfunction f, const unsigned (&grid)[3], const unsigned (&block)[3],
                               const unsigned (&cluster)[3], unsigned shmem, CUstream s, void** params) {
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = cluster[0];
  attr.value.clusterDim.y = cluster[1];
  attr.value.clusterDim.z = cluster[2];
  CUlaunchConfig cfg{};
  cfg.gridDimX = grid[0];
  cfg.gridDimY = grid[1];
  cfg.gridDimZ = grid[2];
  cfg.blockDimX = block[0];
  cfg.blockDimY = block[1];
  cfg.blockDimZ = block[2];
  cfg.sharedMemBytes = shmem;
  cfg.hStream = s;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return TUNETAB_CU(cuLaunchKernelEx, &cfg, f, params, nullptr);
}
}  // namespace tunetab::nvidia
inline hipError_t hipFuncGetAttribute(int* v, hipFunction_attribute a, hipFunction_t f) {
  return TUNETAB_CU(cuFuncGetAttribute, v, a, f);
}
inline hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, hipFunction_t f, int threads,
                                                                   size_t dynamic_shared) {
  return TUNETAB_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor, blocks, f, threads, dynamic_shared);
}
inline hipError_t hipEventCreate(hipEvent_t* e) { return TUNETAB_CU(cuEventCreate, e, CU_EVENT_DEFAULT); }
inline hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) { return TUNETAB_CU(cuEventRecord, e, s); }
inline hipError_t hipEventSynchronize(hipEvent_t e) { return TUNETAB_CU(cuEventSynchronize, e); }
inline hipError_t hipEventQuery(hipEvent_t e) { return TUNETAB_CU(cuEventQuery, e); }
inline hipError_t hipEventElapsedTime(float* ms, hipEvent_t a, hipEvent_t b) { return TUNETAB_CU(cuEventElapsedTime, ms, a, b); }
inline hipError_t hipEventDestroy(hipEvent_t e) { return TUNETAB_CU(cuEventDestroy, e); }
inline hipError_t hipStreamCreate(hipStream_t* s) { return TUNETAB_CU(cuStreamCreate, s, CU_STREAM_NON_BLOCKING); }
inline hipError_t hipStreamSynchronize(hipStream_t s) { return TUNETAB_CU(cuStreamSynchronize, s); }
inline hipError_t hipStreamQuery(hipStream_t s) { return TUNETAB_CU(cuStreamQuery, s); }
inline hipError_t hipStreamDestroy(hipStream_t s) { return TUNETAB_CU(cuStreamDestroy, s); }
inline hipError_t hipStreamBeginCapture(hipStream_t s, hipStreamCaptureMode mode) {
  return TUNETAB_CU(cuStreamBeginCapture, s, mode);
}
inline hipError_t hipStreamEndCapture(hipStream_t s, hipGraph_t* g) { return TUNETAB_CU(cuStreamEndCapture, s, g); }
inline hipError_t hipGraphInstantiate(hipGraphExec_t* exec, hipGraph_t g, hipGraphNode_t*, char*, size_t) {
  return TUNETAB_CU(cuGraphInstantiateWithFlags, exec, g, 0);
}
inline hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t s) { return TUNETAB_CU(cuGraphLaunch, exec, s); }
inline hipError_t hipGraphExecDestroy(hipGraphExec_t exec) { return TUNETAB_CU(cuGraphExecDestroy, exec); }
inline hipError_t hipGraphDestroy(hipGraph_t g) { return TUNETAB_CU(cuGraphDestroy, g); }
inline const char* hipGetErrorName(hipError_t e) {
  const char* s = nullptr;
  if (e == CUDA_ERROR_STUB_LIBRARY && !::tunetab::nvidia::driver().loaded) return "CUDA_ERROR_STUB_LIBRARY";
  TUNETAB_CU(cuGetErrorName, e, &s);
  return s ? s : "unknown CUresult";
}
inline const char* hipGetErrorString(hipError_t e) {
  const char* s = nullptr;
  if (!::tunetab::nvidia::driver().loaded) return "the CUDA driver (libcuda.so.1) could not be loaded";
  TUNETAB_CU(cuGetErrorString, e, &s);
  return s ? s : "unknown CUresult";
}

// ---- Hopper tensor memory access (no HIP equivalent; used only behind TUNETAB_PLATFORM_NVIDIA) ----------
namespace tunetab::nvidia {
/// A 2-D tensor map for TMA loads of bf16 (element_bytes 2) or fp8 bytes (1): rows of `inner` elements,
/// `row_bytes` apart; boxes of box_inner x box_outer, 128-byte swizzled (box_inner * element_bytes must be 128),
/// out-of-bounds elements read as zero.
inline CUresult encode_tensor_map_2d(CUtensorMap* map, const void* base, int element_bytes, cuuint64_t inner,
                                     cuuint64_t outer, cuuint64_t row_bytes, cuuint32_t box_inner, cuuint32_t box_outer) {
  const cuuint64_t dims[2] = {inner, outer};
  const cuuint64_t strides[1] = {row_bytes};
  const cuuint32_t box[2] = {box_inner, box_outer};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUtensorMapDataType type = element_bytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  return TUNETAB_CU(cuTensorMapEncodeTiled, map, type, 2, const_cast<void*>(base), dims, strides, box, element_strides,
                    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}
}  // namespace tunetab::nvidia

// ---- hipRTC on NVRTC ------------------------------------------------------------------------------
using hiprtcResult = nvrtcResult;
using hiprtcProgram = nvrtcProgram;
constexpr hiprtcResult HIPRTC_SUCCESS = NVRTC_SUCCESS;
inline const char* hiprtcGetErrorString(hiprtcResult r) { return nvrtcGetErrorString(r); }
inline hiprtcResult hiprtcVersion(int* major, int* minor) { return nvrtcVersion(major, minor); }
inline hiprtcResult hiprtcCreateProgram(hiprtcProgram* p, const char* src, const char* name, int num_headers,
                                        const char* const* headers, const char* const* include_names) {
  return nvrtcCreateProgram(p, src, name, num_headers, headers, include_names);
}
inline hiprtcResult hiprtcDestroyProgram(hiprtcProgram* p) { return nvrtcDestroyProgram(p); }
inline hiprtcResult hiprtcAddNameExpression(hiprtcProgram p, const char* expr) { return nvrtcAddNameExpression(p, expr); }
inline hiprtcResult hiprtcCompileProgram(hiprtcProgram p, int n, const char* const* opts) { return nvrtcCompileProgram(p, n, opts); }
inline hiprtcResult hiprtcGetLoweredName(hiprtcProgram p, const char* expr, const char** lowered) {
  return nvrtcGetLoweredName(p, expr, lowered);
}
inline hiprtcResult hiprtcGetProgramLogSize(hiprtcProgram p, size_t* n) { return nvrtcGetProgramLogSize(p, n); }
inline hiprtcResult hiprtcGetProgramLog(hiprtcProgram p, char* log) { return nvrtcGetProgramLog(p, log); }
// NOTE: tunetab compiles for a real arch (sm_90a), so the code object is a CUBIN, not PTX.
inline hiprtcResult hiprtcGetCodeSize(hiprtcProgram p, size_t* n) { return nvrtcGetCUBINSize(p, n); }
inline hiprtcResult hiprtcGetCode(hiprtcProgram p, char* code) { return nvrtcGetCUBIN(p, code); }
