// RAII over the HIP runtime subset: device selection and facts, buffers, modules, streams, events.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tuner/error.h"
#include "tuner/hip/hip_api.h"

#define TUNETAB_HIP_CHECK(expr)                                                                            \
  do {                                                                                                     \
    hipError_t tt_e_ = (expr);                                                                             \
    if (tt_e_ != hipSuccess)                                                                               \
      throw ::tunetab::Error(::tunetab::hip_error_kind(tt_e_), #expr, __FILE__, __LINE__,                  \
                             std::string(hipGetErrorName(tt_e_)) + ": " + hipGetErrorString(tt_e_));       \
  } while (0)

#define TUNETAB_HIPRTC_CHECK(expr)                                                                      \
  do {                                                                                                  \
    hiprtcResult tt_r_ = (expr);                                                                        \
    if (tt_r_ != HIPRTC_SUCCESS)                                                                        \
      throw ::tunetab::Error(::tunetab::ErrorKind::kCompile, #expr, __FILE__, __LINE__,                 \
                             hiprtcGetErrorString(tt_r_));                                              \
  } while (0)

namespace tunetab {

/// Maps a HIP error to the kind the runner stores: sticky faults (illegal address, ...) are kFault.
ErrorKind hip_error_kind(hipError_t e);

/// What tunetab records about the device a result was measured on.
struct DeviceFacts {
  int ordinal = 0;
  std::string name;
  std::string arch;         // "sm_90a", "gfx942", ...
  int cu_count = 0;         // multiprocessors (NVIDIA) or compute units (AMD)
  int clock_khz = 0;
  int mem_clock_khz = 0;
  int mem_bus_bits = 0;
  int l2_bytes = 0;
  int max_smem_per_block = 0;
  int driver_version = 0;
  int runtime_version = 0;
};

/// Number of usable devices; 0 (never an exception) when there is no driver or no device.
int device_count(std::string* why = nullptr);
/// The current device's multiprocessors (NVIDIA) or compute units (AMD).
int current_cu_count();
/// Makes `ordinal` current and reads its facts.
DeviceFacts open_device(int ordinal);

/// A write outside a buffer, found in its guard band: the side (after is checked first) and the offset of
/// that side's lowest corrupted byte, relative to the buffer's first byte (negative before it).
struct GuardViolation {
  std::string side;  // "before" or "after"
  std::int64_t offset = 0;
  std::int64_t corrupted_bytes = 0;
  bool wrapped = false;  // in the zone where int32-wrapped offsets land (see DeviceBuffer)
};

/// Scans guard bands read back from the device for bytes that are no longer `canary`.
std::optional<GuardViolation> find_guard_violation(const std::vector<unsigned char>& before,
                                                   const std::vector<unsigned char>& after, std::size_t payload_bytes,
                                                   unsigned char canary);

class DeviceBuffer;
/// "NAME: N byte(s) written before|after the buffer, nearest at byte offset X (buffer is B bytes)", or
/// nothing when the buffer's guards are intact.
std::optional<std::string> guard_violation_of(const std::string& name, const DeviceBuffer& buffer);

class DeviceBuffer {
 public:
  static constexpr unsigned char kCanary = 0xa5;

  DeviceBuffer() = default;
  /// `guard_bytes` of canary on each side (0: none); get() points past the leading guard. With
  /// `elem_bytes` (an output's element size) and more than 2^31 elements, the leading guard also covers
  /// where a store lands whose element offset was computed in int32 and wrapped (2^31 elements before the
  /// buffer onwards): such a store reads as a write before the buffer instead of hitting a neighbour.
  explicit DeviceBuffer(std::size_t bytes, std::size_t guard_bytes = 0, std::size_t elem_bytes = 0);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : base_(o.base_), ptr_(o.ptr_), bytes_(o.bytes_), guard_(o.guard_), wrap_span_(o.wrap_span_), wrap_zone_(o.wrap_zone_) {
    o.base_ = o.ptr_ = nullptr;
    o.bytes_ = o.guard_ = o.wrap_span_ = o.wrap_zone_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* src, std::size_t bytes, std::size_t offset = 0);
  void download(void* dst, std::size_t bytes, std::size_t offset = 0) const;
  void fill_bytes(unsigned char value);
  /// Refills both guard bands with the canary.
  void arm_guards();
  /// Reads both guard bands back; a violation if any canary byte changed.
  std::optional<GuardViolation> check_guards() const;

 private:
  void* base_ = nullptr;  // allocation start (leading guard)
  void* ptr_ = nullptr;   // payload
  std::size_t bytes_ = 0;
  std::size_t guard_ = 0;
  std::size_t wrap_span_ = 0;  // 2^31 elements in bytes: a wrapped int32 offset lands this far before ptr_
  std::size_t wrap_zone_ = 0;  // bytes of canary from ptr_ - wrap_span_ that wrapped stores can reach
};

class Module {
 public:
  Module() = default;
  /// Loads a code object (CUBIN or HSACO) and resolves `lowered_name`.
  Module(const std::vector<char>& image, const std::string& lowered_name);
  ~Module();
  Module(Module&& o) noexcept : module_(o.module_), function_(o.function_) { o.module_ = nullptr; o.function_ = nullptr; }
  Module& operator=(Module&& o) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  hipFunction_t function() const { return function_; }
  int attribute(hipFunction_attribute a) const;
  /// Raises the dynamic shared-memory limit where the platform needs an opt-in (NVIDIA, > 48 KiB).
  void allow_dynamic_shared(int bytes);
  /// CTAs of `threads` threads and `dynamic_shared` bytes that fit on one multiprocessor at once (a persistent
  /// grid's size per multiprocessor); at least 1.
  int resident_blocks(int threads, int dynamic_shared) const;

 private:
  hipModule_t module_ = nullptr;
  hipFunction_t function_ = nullptr;
};

class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  hipStream_t get() const { return stream_; }
  void synchronize() const;
  /// Waits for the stream at most `timeout_ms`; false if it is still busy then (a hung kernel).
  bool synchronize_for(double timeout_ms) const;

 private:
  hipStream_t stream_ = nullptr;
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(const Stream& s);
  void synchronize() const;
  /// Milliseconds from `start` to this event.
  float elapsed_since(const Event& start) const;

 private:
  hipEvent_t event_ = nullptr;
};

/// A captured sequence of launches on a stream, replayed as one graph (removes per-launch CPU overhead).
class Graph {
 public:
  /// Captures everything `record` enqueues on `s`.
  template <typename F>
  Graph(const Stream& s, F&& record) {
    begin(s);
    record();
    end(s);
  }
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  void replay(const Stream& s);

 private:
  void begin(const Stream& s);
  void end(const Stream& s);
  hipGraph_t graph_ = nullptr;
  hipGraphExec_t exec_ = nullptr;
};

/// One kernel launch: grid, block, dynamic shared memory, and its argument pointers.
struct LaunchDims {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
  unsigned cluster[3] = {1, 1, 1};  // thread-block cluster (NVIDIA sm_90); the grid must be a multiple of it
};
void launch(const Module& m, const LaunchDims& d, const Stream& s, void** args);

/// An opaque TMA descriptor (CUtensorMap's size and alignment), passed to kernels by value.
struct alignas(64) TensorMap {
  std::uint64_t opaque[16] = {};
};
/// Whether this platform has tensor memory access (NVIDIA sm_90 and later, through the CUDA driver).
bool has_tensor_maps();
/// A 2-D tensor map of bf16 (element_bytes 2) or fp8 (1) elements: rows of `inner` elements, `row_bytes` apart;
/// box_inner x box_outer boxes (box_inner * element_bytes = 128), 128-byte swizzle, zero fill out of bounds.
/// Launch error where the platform has none.
TensorMap tensor_map_2d(const void* base, int element_bytes, std::uint64_t inner, std::uint64_t outer,
                        std::uint64_t row_bytes, unsigned box_inner, unsigned box_outer);

}  // namespace tunetab
