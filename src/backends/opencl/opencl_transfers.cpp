#include "backends/opencl/opencl_device.hpp"

#include "backends/opencl/opencl_library.hpp"
#include "core/error.hpp"

namespace gpuscope::opencl_detail {

// Times one enqueued copy: host time from the call until it is done (the
// call itself waits when blocking; otherwise the host spins on its event),
// device time from the event's profile.
template <class Enqueue>
TransferTiming ClDevice::timed_transfer(const char* what, bool blocking, Enqueue enqueue) {
  check_usable();
  try {
    TransferTiming t;
    cl::Event ev;
    const auto t0 = std::chrono::steady_clock::now();
    enqueue(blocking ? CL_TRUE : CL_FALSE, &ev);
    if (!blocking) spin_wait(ev);
    t.host_ns = ns_since(t0);
    t.device_ns = event_ns(ev);
    return t;
  } catch (const cl::Error& e) {
    rethrow(e, what);
  }
}

std::unique_ptr<Buffer> ClDevice::create_host_buffer(size_t bytes) {
  check_usable();
  if (bytes == 0 || bytes > info_.max_alloc_bytes)
    throw OutOfResources(fmt::format("{} bytes exceeds the device's max allocation", bytes));
  try {
    cl::Buffer b(context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes);
    const cl_uchar zero = 0;
    queue_.enqueueFillBuffer(b, zero, 0, bytes);
    queue_.finish();
    return std::make_unique<ClBuffer>(std::move(b), bytes, nullptr, lost_);
  } catch (const cl::Error& e) {
    rethrow(e, fmt::format("allocating {} host-allocated bytes", bytes));
  }
}

std::unique_ptr<HostStaging> ClDevice::create_pinned_host(size_t bytes) {
  check_usable();
  try {
    cl::Buffer b(context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes);
    return std::make_unique<ClPinned>(queue_, std::move(b), bytes, lost_);
  } catch (const cl::Error& e) {
    rethrow(e, fmt::format("allocating {} bytes of pinned host memory", bytes));
  }
}

TransferTiming ClDevice::timed_write(Buffer& dst, std::span<const std::byte> src, bool blocking) {
  return timed_transfer("timed write", blocking, [&](cl_bool block, cl::Event* ev) {
    queue_.enqueueWriteBuffer(as_cl(dst).buffer, block, 0, src.size(), src.data(), nullptr, ev);
  });
}

TransferTiming ClDevice::timed_read(const Buffer& src, std::span<std::byte> dst, bool blocking) {
  return timed_transfer("timed read", blocking, [&](cl_bool block, cl::Event* ev) {
    queue_.enqueueReadBuffer(as_cl(src).buffer, block, 0, dst.size(), dst.data(), nullptr, ev);
  });
}

MapTiming ClDevice::timed_map(Buffer& buf, MapDirection dir,
                              const std::function<void(std::span<std::byte>)>& touch) {
  check_usable();
  try {
    MapTiming t;
    const size_t bytes = buf.size_bytes();
    const cl_map_flags flags = dir == MapDirection::to_host ? CL_MAP_READ : CL_MAP_WRITE_INVALIDATE_REGION;
    cl::Event map_ev, unmap_ev;
    auto t0 = std::chrono::steady_clock::now();
    void* ptr = queue_.enqueueMapBuffer(as_cl(buf).buffer, CL_TRUE, flags, 0, bytes, nullptr, &map_ev);
    t.map_host_ns = ns_since(t0);
    t0 = std::chrono::steady_clock::now();
    touch({static_cast<std::byte*>(ptr), bytes});
    t.touch_ns = ns_since(t0);
    t0 = std::chrono::steady_clock::now();
    queue_.enqueueUnmapMemObject(as_cl(buf).buffer, ptr, nullptr, &unmap_ev);
    spin_wait(unmap_ev);
    t.unmap_host_ns = ns_since(t0);
    t.map_device_ns = event_ns(map_ev);
    t.unmap_device_ns = event_ns(unmap_ev);
    return t;
  } catch (const cl::Error& e) {
    rethrow(e, "timed map");
  }
}

SvmCapabilities ClDevice::capabilities() const {
  if (!load_opencl_library().svm)
    throw Unsupported("the OpenCL library exports no SVM entry points (an OpenCL 1.2 library)");
  cl_device_svm_capabilities caps = 0;
  if (clGetDeviceInfo(device_(), CL_DEVICE_SVM_CAPABILITIES, sizeof(caps), &caps, nullptr) != CL_SUCCESS)
    throw Unsupported("the device does not answer the SVM capabilities query (OpenCL 1.x)");
  SvmCapabilities c;
  c.coarse_grain_buffer = caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER;
  c.fine_grain_buffer = caps & CL_DEVICE_SVM_FINE_GRAIN_BUFFER;
  c.fine_grain_system = caps & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM;
  c.atomics = caps & CL_DEVICE_SVM_ATOMICS;
  return c;
}

MapTiming ClDevice::timed_map(size_t bytes, MapDirection dir,
                              const std::function<void(std::span<std::byte>)>& touch) {
  if (!capabilities().coarse_grain_buffer) throw Unsupported("the device offers no coarse-grained SVM");
  check_usable();
  void* ptr = clSVMAlloc(context_(), CL_MEM_READ_WRITE, bytes, 0);
  if (ptr == nullptr) throw OutOfResources(fmt::format("clSVMAlloc of {} bytes refused", bytes));
  struct Free {
    cl_context ctx;
    void* p;
    ~Free() { clSVMFree(ctx, p); }
  } guard{context_(), ptr};
  MapTiming t;
  const cl_map_flags flags = dir == MapDirection::to_host ? CL_MAP_READ : CL_MAP_WRITE_INVALIDATE_REGION;
  cl_event map_ev = nullptr, unmap_ev = nullptr;
  auto t0 = std::chrono::steady_clock::now();
  cl_int err = clEnqueueSVMMap(queue_(), CL_TRUE, flags, ptr, bytes, 0, nullptr, &map_ev);
  if (err != CL_SUCCESS) throw DeviceError(fmt::format("clEnqueueSVMMap failed with OpenCL error {}", err));
  t.map_host_ns = ns_since(t0);
  t0 = std::chrono::steady_clock::now();
  touch({static_cast<std::byte*>(ptr), bytes});
  t.touch_ns = ns_since(t0);
  t0 = std::chrono::steady_clock::now();
  err = clEnqueueSVMUnmap(queue_(), ptr, 0, nullptr, &unmap_ev);
  if (err != CL_SUCCESS) {
    clReleaseEvent(map_ev);
    throw DeviceError(fmt::format("clEnqueueSVMUnmap failed with OpenCL error {}", err));
  }
  const cl::Event map_event(map_ev), unmap_event(unmap_ev);  // take ownership
  spin_wait(unmap_event);
  t.unmap_host_ns = ns_since(t0);
  t.map_device_ns = event_ns(map_event);
  t.unmap_device_ns = event_ns(unmap_event);
  return t;
}

}  // namespace gpuscope::opencl_detail
