// The seam between probes and device APIs. Probes are written against these
// few interfaces only; OpenCL implements them today, a simulator and CUDA /
// Vulkan later. Kernels are named by (source file, kernel name, build
// options) so that a backend that does not compile OpenCL C (the simulator)
// can recognise a kernel family and give it semantics of its own.
#pragma once

#include "core/device_info.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace gpuscope {

class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual size_t size_bytes() const = 0;
};

// Work-item counts per dimension; unused dimensions are 1.
struct Range {
  std::array<size_t, 3> dims{1, 1, 1};
  int rank = 1;
  static Range d1(size_t x) { return Range{{x, 1, 1}, 1}; }
  static Range d2(size_t x, size_t y) { return Range{{x, y, 1}, 2}; }
  size_t total() const { return dims[0] * dims[1] * dims[2]; }
};

// Bytes of local (shared) memory to reserve for a __local pointer argument.
struct LocalBytes {
  size_t bytes = 0;
};

using KernelArg = std::variant<Buffer*, int32_t, uint32_t, int64_t, uint64_t, float, double, LocalBytes>;

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual const std::string& name() const = 0;
  // Largest work-group this kernel can be launched with on its device.
  virtual size_t max_work_group_size() const = 0;
};

struct KernelSpec {
  std::string file;                  // embedded source file, e.g. "latency.cl"
  std::string kernel;                // entry point, e.g. "chase"
  std::vector<std::string> options;  // e.g. {"-DUNROLL=32"}
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;

  // Throws OutOfResources when the device refuses the allocation (callers
  // may retry smaller), DeviceError otherwise.
  virtual std::unique_ptr<Buffer> create_buffer(size_t bytes) = 0;
  virtual void write(Buffer& dst, size_t offset_bytes, std::span<const std::byte> src) = 0;
  virtual void read(const Buffer& src, size_t offset_bytes, std::span<std::byte> dst) = 0;

  // Builds (and caches) a kernel; throws BuildError carrying the build log.
  virtual Kernel& kernel(const KernelSpec& spec) = 0;

  // Runs one launch to completion and returns its device time in ns, taken
  // from the API's own profiling events (queued work excluded). `local` of
  // total() == 0 lets the driver choose.
  virtual double launch(Kernel& k, Range global, Range local, std::span<const KernelArg> args) = 0;

  // Convenience typed wrappers.
  template <class T>
  void write_values(Buffer& dst, std::span<const T> values, size_t offset_elems = 0) {
    write(dst, offset_elems * sizeof(T), std::as_bytes(values));
  }
  template <class T>
  std::vector<T> read_values(const Buffer& src, size_t count, size_t offset_elems = 0) {
    std::vector<T> out(count);
    read(src, offset_elems * sizeof(T), std::as_writable_bytes(std::span<T>(out)));
    return out;
  }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // the ID prefix, e.g. "opencl"
  // Every device this backend can open, with its full info. Never throws for
  // a missing runtime: an API with no platforms yields an empty list.
  virtual std::vector<DeviceInfo> enumerate() = 0;
  // Opens a device by its ID; throws UsageError for an unknown ID.
  virtual std::unique_ptr<Device> open(const std::string& id) = 0;
  // IDs this backend opens though enumerate() does not list them (the sim
  // backend's "sim:PATH.json", a user's device description).
  virtual bool opens_unlisted(const std::string& /*id*/) const { return false; }
};

// All backends compiled in, in the order devices are listed.
std::vector<std::unique_ptr<Backend>> make_backends();

// The devices of every backend, in `gpuscope list` order.
std::vector<DeviceInfo> enumerate_devices();

// Opens `id`, or the default device when `id` is empty: the first GPU, else
// the first device of any type. Throws UsageError naming the valid IDs.
std::unique_ptr<Device> open_device(const std::string& id);

}  // namespace gpuscope
