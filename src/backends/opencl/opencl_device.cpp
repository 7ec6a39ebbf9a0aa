#include "backends/opencl/opencl_device.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <thread>
#include <vector>

namespace gpuscope::opencl_detail {

bool is_out_of_resources(cl_int err) {
  return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
         err == CL_OUT_OF_HOST_MEMORY || err == CL_INVALID_BUFFER_SIZE;
}

void rethrow(const cl::Error& e, const std::string& what) {
  const std::string msg = fmt::format("{}: {} failed with OpenCL error {}", what, e.what(), e.err());
  if (is_out_of_resources(e.err())) throw OutOfResources(msg);
  throw DeviceError(msg);
}

double ns_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
}

double event_ns(const cl::Event& ev) {
  return static_cast<double>(ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                             ev.getProfilingInfo<CL_PROFILING_COMMAND_START>());
}

namespace {

cl::NDRange nd_range(const Range& r) {
  switch (r.rank) {
    case 2:
      return cl::NDRange(r.dims[0], r.dims[1]);
    case 3:
      return cl::NDRange(r.dims[0], r.dims[1], r.dims[2]);
    default:
      return cl::NDRange(r.dims[0]);
  }
}

void set_arg(cl::Kernel& k, cl_uint i, const KernelArg& arg) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Buffer*>) {
          k.setArg(i, as_cl(*v).buffer);
        } else if constexpr (std::is_same_v<T, Image*>) {
          k.setArg(i, static_cast<ClImage&>(*v).memory);
        } else {
          k.setArg(i, v);
        }
      },
      arg);
}

// The arguments in order, then the dynamic local buffer, if any, as the
// kernel's last parameter (LaunchShape::local_bytes).
void set_args(cl::Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args) {
  for (cl_uint i = 0; i < args.size(); ++i) set_arg(k, i, args[i]);
  if (shape.local_bytes > 0) k.setArg(static_cast<cl_uint>(args.size()), cl::Local(shape.local_bytes));
}

cl::NDRange local_range(const LaunchShape& shape) {
  return shape.local.total() == 0 ? cl::NullRange : nd_range(shape.local);
}

}  // namespace

ClDevice::ClDevice(cl::Device device, DeviceInfo info) : device_(std::move(device)), info_(std::move(info)) {
  try {
    context_ = cl::Context(device_);
    queue_ = cl::CommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE);
  } catch (const cl::Error& e) {
    rethrow(e, "creating a context and profiling queue on " + info_.id);
  }
}

ClDevice::~ClDevice() {
  if (lost_->empty()) return;
  // One more reference, never released: releasing the queue could wait for
  // the launch that never ends. The queue holds its context.
  clRetainCommandQueue(queue_());
}

void ClDevice::check_usable() const {
  if (!lost_->empty()) throw DeviceLost(fmt::format("the device was lost: {} never finished", *lost_));
}

const DeviceInfo& ClDevice::info() const { return info_; }
ImageFacet* ClDevice::images() { return info_.features.images ? this : nullptr; }
HostTransferFacet* ClDevice::host_transfers() { return this; }
SvmFacet* ClDevice::svm() { return info_.features.shared_virtual_memory ? this : nullptr; }

std::unique_ptr<Buffer> ClDevice::create_buffer(size_t bytes) {
  check_usable();
  if (bytes == 0 || bytes > info_.max_alloc_bytes)
    throw OutOfResources(fmt::format("{} bytes exceeds the device's max allocation of {} bytes", bytes,
                                     info_.max_alloc_bytes));
  try {
    std::unique_ptr<HostMemory> host;
    if (info_.type == "cpu") host = std::make_unique<HostMemory>(bytes);
    cl::Buffer b = host ? cl::Buffer(context_, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host->ptr)
                        : cl::Buffer(context_, CL_MEM_READ_WRITE, bytes);
    // Drivers allocate lazily; touching both ends makes a refused
    // allocation fail here, where the caller can retry smaller, rather
    // than inside a timed launch.
    // The touches are 1-byte writes, not fills: NVIDIA's driver (580)
    // loses its queue (CL_INVALID_COMMAND_QUEUE, and the context with it)
    // on a 1-byte clEnqueueFillBuffer at an offset in [2 GiB, 4 GiB),
    // as if the fill kernel indexed with a signed 32-bit int.
    static const cl_uchar zero = 0;
    queue_.enqueueWriteBuffer(b, CL_FALSE, 0, 1, &zero);
    queue_.enqueueWriteBuffer(b, CL_FALSE, bytes - 1, 1, &zero);
    queue_.finish();
    return std::make_unique<ClBuffer>(std::move(b), bytes, std::move(host), lost_);
  } catch (const cl::Error& e) {
    rethrow(e, fmt::format("allocating {} bytes", bytes));
  }
}

void ClDevice::write(Buffer& dst, size_t offset, std::span<const std::byte> src) {
  check_usable();
  try {
    queue_.enqueueWriteBuffer(as_cl(dst).buffer, CL_TRUE, offset, src.size(), src.data());
  } catch (const cl::Error& e) {
    rethrow(e, "writing a buffer");
  }
}

void ClDevice::read(const Buffer& src, size_t offset, std::span<std::byte> dst) {
  check_usable();
  try {
    queue_.enqueueReadBuffer(as_cl(src).buffer, CL_TRUE, offset, dst.size(), dst.data());
  } catch (const cl::Error& e) {
    rethrow(e, "reading a buffer");
  }
}

double ClDevice::launch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args) {
  check_usable();
  auto& ck = static_cast<ClKernel&>(k);
  try {
    set_args(ck.kernel, shape, args);
    cl::Event ev;
    queue_.enqueueNDRangeKernel(ck.kernel, cl::NullRange, nd_range(shape.global), local_range(shape), nullptr,
                                &ev);
    wait_politely(ev, "a launch of " + k.name(), launch_bound().wait_ms());
    const auto start = ev.getProfilingInfo<CL_PROFILING_COMMAND_START>();
    const auto end = ev.getProfilingInfo<CL_PROFILING_COMMAND_END>();
    return static_cast<double>(end - start);
  } catch (const cl::Error& e) {
    rethrow(e, "launching " + k.name());
  }
}

LaunchBatch ClDevice::launch_batch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args,
                                   int count) {
  check_usable();
  auto& ck = static_cast<ClKernel&>(k);
  try {
    set_args(ck.kernel, shape, args);
    std::vector<cl::Event> evs(static_cast<size_t>(std::max(count, 1)));
    LaunchBatch b;
    const auto t0 = std::chrono::steady_clock::now();
    for (auto& ev : evs)
      queue_.enqueueNDRangeKernel(ck.kernel, cl::NullRange, nd_range(shape.global), local_range(shape),
                                  nullptr, &ev);
    spin_wait(evs.back(), fmt::format("a batch of {} launches of {}", evs.size(), k.name()),
              launch_bound().wait_ms(static_cast<int>(evs.size())));
    b.host_ns = ns_since(t0);
    queue_.finish();  // in-order queue: the others are done too; this only settles the events
    const auto origin = evs.front().getProfilingInfo<CL_PROFILING_COMMAND_QUEUED>();
    const auto rel = [origin](cl_ulong t) { return static_cast<double>(t) - static_cast<double>(origin); };
    for (const auto& ev : evs) {
      EventTimes t;
      t.queued_ns = rel(ev.getProfilingInfo<CL_PROFILING_COMMAND_QUEUED>());
      t.submit_ns = rel(ev.getProfilingInfo<CL_PROFILING_COMMAND_SUBMIT>());
      t.start_ns = rel(ev.getProfilingInfo<CL_PROFILING_COMMAND_START>());
      t.end_ns = rel(ev.getProfilingInfo<CL_PROFILING_COMMAND_END>());
      b.events.push_back(t);
    }
    return b;
  } catch (const cl::Error& e) {
    rethrow(e, "launching a batch of " + k.name());
  }
}

void ClDevice::wait_for(const cl::Event& ev, Poll poll, const std::string& what, double wait_ms) {
  queue_.flush();
  const auto start = std::chrono::steady_clock::now();
  const auto bound = std::chrono::duration<double, std::milli>(wait_ms);
  // Past the bound, a grace as long before the device is called lost: no
  // OpenCL call cancels a launch, so one that was only late leaves the
  // queue usable.
  bool late = false;
  auto nap = std::chrono::microseconds(20);
  for (;;) {
    const cl_int status = ev.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>();
    if (status < 0) throw DeviceError(fmt::format("{} failed on the device (status {})", what, status));
    const auto waited = std::chrono::steady_clock::now() - start;
    if (status == CL_COMPLETE) {
      if (!late) return;
      throw LaunchTimeout(fmt::format("{} ran past its bound of {:.0f} ms and ended after {:.0f} ms", what, wait_ms,
                                      ns_since(start) * 1e-6),
                          false);
    }
    if (waited > 2 * bound) {
      *lost_ = what;
      throw LaunchTimeout(fmt::format("{} ran past its bound of {:.0f} ms and was still running after {:.0f} ms: "
                                      "no OpenCL call ends it, so the device is lost",
                                      what, wait_ms, ns_since(start) * 1e-6),
                          true);
    }
    // Spinning past the bound only takes a core from the late launch.
    if (waited > bound) late = true;
    if (poll == Poll::nap || late) {
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::microseconds(1000));
    }
  }
}

}  // namespace gpuscope::opencl_detail
