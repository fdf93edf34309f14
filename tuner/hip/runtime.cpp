#include "tuner/hip/runtime.h"

#include <chrono>
#include <thread>
#include <utility>

#if defined(TUNETAB_PLATFORM_NVIDIA)
#include <dlfcn.h>

namespace tunetab::nvidia {

const Driver& driver() {
  static const Driver table = [] {
    Driver d;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return d;
#define TUNETAB_STR2(x) #x
#define TUNETAB_STR(x) TUNETAB_STR2(x)
#define TUNETAB_LOAD_FN(name) \
  d.name##_ = reinterpret_cast<decltype(d.name##_)>(dlsym(lib, TUNETAB_STR(name)));
    TUNETAB_CUDA_DRIVER_FUNCS(TUNETAB_LOAD_FN)
#undef TUNETAB_LOAD_FN
    d.loaded = true;
#define TUNETAB_CHECK_FN(name) if (!d.name##_) d.loaded = false;
    TUNETAB_CUDA_DRIVER_FUNCS(TUNETAB_CHECK_FN)
#undef TUNETAB_CHECK_FN
    return d;
  }();
  return table;
}

}  // namespace tunetab::nvidia
#endif

namespace tunetab {

ErrorKind hip_error_kind(hipError_t e) {
  switch (e) {
    case hipErrorIllegalAddress:
    case hipErrorLaunchTimeOut:
      return ErrorKind::kFault;
    default:
      return ErrorKind::kLaunch;
  }
}

int device_count(std::string* why) {
  int n = 0;
  hipError_t e = hipInit(0);
  if (e == hipSuccess) e = hipGetDeviceCount(&n);
  if (e != hipSuccess) {
    if (why) *why = std::string(hipGetErrorName(e)) + ": " + hipGetErrorString(e);
    return 0;
  }
  if (n == 0 && why) *why = "the driver reports no device";
  return n;
}

int current_cu_count() {
  int ordinal = 0, n = 0;
  TUNETAB_HIP_CHECK(hipGetDevice(&ordinal));
  TUNETAB_HIP_CHECK(hipDeviceGetAttribute(&n, hipDeviceAttributeMultiprocessorCount, ordinal));
  return n;
}

DeviceFacts open_device(int ordinal) {
  std::string why;
  const int n = device_count(&why);
  if (ordinal < 0 || ordinal >= n)
    throw_input("--device " + std::to_string(ordinal) + ": only " + std::to_string(n) + " device(s) present" +
                (why.empty() ? "" : " (" + why + ")"));
  TUNETAB_HIP_CHECK(hipSetDevice(ordinal));
  DeviceFacts f;
  f.ordinal = ordinal;
  char name[256] = {};
  TUNETAB_HIP_CHECK(hipDeviceGetName(name, sizeof(name), ordinal));
  f.name = name;
  auto attr = [&](hipDeviceAttribute_t a) {
    int v = 0;
    TUNETAB_HIP_CHECK(hipDeviceGetAttribute(&v, a, ordinal));
    return v;
  };
  f.cu_count = attr(hipDeviceAttributeMultiprocessorCount);
  f.clock_khz = attr(hipDeviceAttributeClockRate);
  f.mem_clock_khz = attr(hipDeviceAttributeMemoryClockRate);
  f.mem_bus_bits = attr(hipDeviceAttributeMemoryBusWidth);
  f.l2_bytes = attr(hipDeviceAttributeL2CacheSize);
  f.max_smem_per_block = attr(hipDeviceAttributeMaxSharedMemoryPerBlock);
#if defined(TUNETAB_PLATFORM_NVIDIA)
  int major = attr(hipDeviceAttributeComputeCapabilityMajor), minor = attr(hipDeviceAttributeComputeCapabilityMinor);
  f.arch = "sm_" + std::to_string(major) + std::to_string(minor) + (major == 9 ? "a" : "");
#else
  hipDeviceProp_t prop;
  TUNETAB_HIP_CHECK(hipGetDeviceProperties(&prop, ordinal));
  f.arch = prop.gcnArchName;
  if (auto colon = f.arch.find(':'); colon != std::string::npos) f.arch.resize(colon);  // drop ":sramecc+:xnack-"
#endif
  TUNETAB_HIP_CHECK(hipDriverGetVersion(&f.driver_version));
  TUNETAB_HIP_CHECK(hipRuntimeGetVersion(&f.runtime_version));
  return f;
}

std::optional<GuardViolation> find_guard_violation(const std::vector<unsigned char>& before,
                                                   const std::vector<unsigned char>& after, std::size_t payload_bytes,
                                                   unsigned char canary) {
  std::optional<GuardViolation> v;
  std::int64_t count = 0;
  auto scan = [&](const std::vector<unsigned char>& band, const char* side, std::int64_t first_offset) {
    for (std::size_t i = 0; i < band.size(); ++i)
      if (band[i] != canary) {
        if (!v) v = GuardViolation{side, first_offset + static_cast<std::int64_t>(i), 0};
        ++count;
      }
  };
  scan(after, "after", static_cast<std::int64_t>(payload_bytes));
  scan(before, "before", -static_cast<std::int64_t>(before.size()));
  if (v) v->corrupted_bytes = count;
  return v;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes, std::size_t guard_bytes, std::size_t elem_bytes)
    : bytes_(bytes), guard_(guard_bytes) {
  if (bytes == 0 && guard_bytes == 0) return;
  // NOTE: guards are multiples of 256 bytes so the payload keeps hipMalloc's alignment.
  guard_ = (guard_ + 255) / 256 * 256;
  std::size_t lead = guard_;
  if (elem_bytes > 0 && bytes / elem_bytes > (std::size_t{1} << 31)) {
    // Element offsets 2^31.. wrap to -2^31..: bytes -wrap_span_ .. -wrap_span_ + (bytes - wrap_span_).
    wrap_span_ = elem_bytes << 31;
    wrap_zone_ = std::min(bytes - wrap_span_, wrap_span_ - guard_);
    lead = wrap_span_;
  }
  TUNETAB_HIP_CHECK(hipMalloc(&base_, lead + bytes_ + guard_));
  ptr_ = static_cast<char*>(base_) + lead;
  arm_guards();
}
DeviceBuffer::~DeviceBuffer() {
  if (base_) (void)hipFree(base_);
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (base_) (void)hipFree(base_);
    base_ = std::exchange(o.base_, nullptr);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    guard_ = std::exchange(o.guard_, 0);
    wrap_span_ = std::exchange(o.wrap_span_, 0);
    wrap_zone_ = std::exchange(o.wrap_zone_, 0);
  }
  return *this;
}
void DeviceBuffer::arm_guards() {
  if (!guard_) return;
  char* const p = static_cast<char*>(ptr_);
  TUNETAB_HIP_CHECK(hipMemsetD8(p - guard_, kCanary, guard_));
  TUNETAB_HIP_CHECK(hipMemsetD8(p + bytes_, kCanary, guard_));
  if (wrap_zone_) TUNETAB_HIP_CHECK(hipMemsetD8(p - wrap_span_, kCanary, wrap_zone_));
}
std::optional<GuardViolation> DeviceBuffer::check_guards() const {
  if (!guard_) return std::nullopt;
  const char* const p = static_cast<const char*>(ptr_);
  std::vector<unsigned char> before(guard_), after(guard_);
  TUNETAB_HIP_CHECK(hipMemcpyDtoH(before.data(), const_cast<char*>(p - guard_), guard_));
  TUNETAB_HIP_CHECK(hipMemcpyDtoH(after.data(), const_cast<char*>(p + bytes_), guard_));
  if (auto v = find_guard_violation(before, after, bytes_, kCanary)) return v;
  // The wrap zone, in chunks (it can reach gigabytes).
  constexpr std::size_t kChunk = std::size_t{64} << 20;
  std::optional<GuardViolation> v;
  std::vector<unsigned char> band;
  for (std::size_t at = 0; at < wrap_zone_; at += kChunk) {
    band.resize(std::min(kChunk, wrap_zone_ - at));
    TUNETAB_HIP_CHECK(hipMemcpyDtoH(band.data(), const_cast<char*>(p - wrap_span_ + at), band.size()));
    if (auto c = find_guard_violation({}, band, 0, kCanary)) {
      if (!v) v = GuardViolation{"before", -static_cast<std::int64_t>(wrap_span_ - at) + c->offset, 0, true};
      v->corrupted_bytes += c->corrupted_bytes;
    }
  }
  return v;
}
std::optional<std::string> guard_violation_of(const std::string& name, const DeviceBuffer& buffer) {
  const auto v = buffer.check_guards();
  if (!v) return std::nullopt;
  return name + ": " + std::to_string(v->corrupted_bytes) + " byte(s) written " + v->side +
         " the buffer, nearest at byte offset " + std::to_string(v->offset) +
         (v->wrapped ? ", where an int32 element offset past 2^31 wraps to" : "") + " (buffer is " +
         std::to_string(buffer.bytes()) + " bytes)";
}
void DeviceBuffer::upload(const void* src, std::size_t bytes, std::size_t offset) {
  TUNETAB_ASSERT(offset + bytes <= bytes_, "upload past the end of a device buffer");
  TUNETAB_HIP_CHECK(hipMemcpyHtoD(static_cast<char*>(ptr_) + offset, const_cast<void*>(src), bytes));
}
void DeviceBuffer::download(void* dst, std::size_t bytes, std::size_t offset) const {
  TUNETAB_ASSERT(offset + bytes <= bytes_, "download past the end of a device buffer");
  TUNETAB_HIP_CHECK(hipMemcpyDtoH(dst, static_cast<char*>(ptr_) + offset, bytes));
}
void DeviceBuffer::fill_bytes(unsigned char value) {
  if (bytes_) TUNETAB_HIP_CHECK(hipMemsetD8(ptr_, value, bytes_));
}

Module::Module(const std::vector<char>& image, const std::string& lowered_name) {
  TUNETAB_HIP_CHECK(hipModuleLoadData(&module_, image.data()));
  TUNETAB_HIP_CHECK(hipModuleGetFunction(&function_, module_, lowered_name.c_str()));
}
Module::~Module() {
  if (module_) (void)hipModuleUnload(module_);
}
Module& Module::operator=(Module&& o) noexcept {
  if (this != &o) {
    if (module_) (void)hipModuleUnload(module_);
    module_ = std::exchange(o.module_, nullptr);
    function_ = std::exchange(o.function_, nullptr);
  }
  return *this;
}
int Module::attribute(hipFunction_attribute a) const {
  int v = 0;
  TUNETAB_HIP_CHECK(hipFuncGetAttribute(&v, a, function_));
  return v;
}
void Module::allow_dynamic_shared(int bytes) {
#if defined(TUNETAB_PLATFORM_NVIDIA)
  TUNETAB_HIP_CHECK(TUNETAB_CU(cuFuncSetAttribute, function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
#else
  (void)bytes;  // NOTE: AMD exposes the whole LDS (64 KiB) without an opt-in.
#endif
}

int Module::resident_blocks(int threads, int dynamic_shared) const {
  int n = 0;
  TUNETAB_HIP_CHECK(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&n, function_, threads, static_cast<size_t>(dynamic_shared)));
  return n > 0 ? n : 1;
}

Stream::Stream() { TUNETAB_HIP_CHECK(hipStreamCreate(&stream_)); }
Stream::~Stream() {
  if (stream_) (void)hipStreamDestroy(stream_);
}
void Stream::synchronize() const { TUNETAB_HIP_CHECK(hipStreamSynchronize(stream_)); }
bool Stream::synchronize_for(double timeout_ms) const {
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    hipError_t e = hipStreamQuery(stream_);
    if (e == hipSuccess) return true;
    if (e != hipErrorNotReady) TUNETAB_HIP_CHECK(e);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (ms > timeout_ms) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(ms < 10 ? 20 : 1000));
  }
}

Event::Event() { TUNETAB_HIP_CHECK(hipEventCreate(&event_)); }
Event::~Event() {
  if (event_) (void)hipEventDestroy(event_);
}
void Event::record(const Stream& s) { TUNETAB_HIP_CHECK(hipEventRecord(event_, s.get())); }
void Event::synchronize() const { TUNETAB_HIP_CHECK(hipEventSynchronize(event_)); }
float Event::elapsed_since(const Event& start) const {
  float ms = 0;
  TUNETAB_HIP_CHECK(hipEventElapsedTime(&ms, start.event_, event_));
  return ms;
}

void Graph::begin(const Stream& s) {
  TUNETAB_HIP_CHECK(hipStreamBeginCapture(s.get(), hipStreamCaptureModeThreadLocal));
}
void Graph::end(const Stream& s) {
  TUNETAB_HIP_CHECK(hipStreamEndCapture(s.get(), &graph_));
  TUNETAB_HIP_CHECK(hipGraphInstantiate(&exec_, graph_, nullptr, nullptr, 0));
}
Graph::~Graph() {
  if (exec_) (void)hipGraphExecDestroy(exec_);
  if (graph_) (void)hipGraphDestroy(graph_);
}
void Graph::replay(const Stream& s) { TUNETAB_HIP_CHECK(hipGraphLaunch(exec_, s.get())); }

void launch(const Module& m, const LaunchDims& d, const Stream& s, void** args) {
  if (d.cluster[0] * d.cluster[1] * d.cluster[2] > 1) {
#if defined(TUNETAB_PLATFORM_NVIDIA)
    TUNETAB_HIP_CHECK(nvidia::launch_cluster(m.function(), d.grid, d.block, d.cluster, d.shared_bytes, s.get(), args));
    return;
#else
    throw Error(ErrorKind::kLaunch, "", nullptr, 0, "thread-block clusters exist only on NVIDIA sm_90 and later");
#endif
  }
  TUNETAB_HIP_CHECK(hipModuleLaunchKernel(m.function(), d.grid[0], d.grid[1], d.grid[2], d.block[0], d.block[1],
                                          d.block[2], d.shared_bytes, s.get(), args, nullptr));
}

#if defined(TUNETAB_PLATFORM_NVIDIA)
static_assert(sizeof(TensorMap) == sizeof(CUtensorMap));  // NOTE: 64-byte alignment is what TMA needs (CUDA 13 declares 128)
bool has_tensor_maps() { return true; }
TensorMap tensor_map_2d(const void* base, int element_bytes, std::uint64_t inner, std::uint64_t outer,
                        std::uint64_t row_bytes, unsigned box_inner, unsigned box_outer) {
  TUNETAB_ASSERT((element_bytes == 1 || element_bytes == 2) && box_inner * element_bytes == 128,
                 "tensor maps: bf16 or fp8 elements in 128-byte rows of a box");
  TensorMap t;
  TUNETAB_HIP_CHECK(nvidia::encode_tensor_map_2d(reinterpret_cast<CUtensorMap*>(&t), base, element_bytes, inner, outer,
                                                 row_bytes, box_inner, box_outer));
  return t;
}
#else
bool has_tensor_maps() { return false; }
TensorMap tensor_map_2d(const void*, int, std::uint64_t, std::uint64_t, std::uint64_t, unsigned, unsigned) {
  throw Error(ErrorKind::kLaunch, "", nullptr, 0, "tensor maps (TMA) exist only on NVIDIA sm_90 and later");
}
#endif

}  // namespace tunetab
