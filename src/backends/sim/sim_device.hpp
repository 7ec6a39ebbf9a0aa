// The sim backend: devices whose kernels are C++ models (family_*.cpp) and
// whose time comes from a parameterised model of a GPU (sim_config.hpp).
//
// Memory: a sim buffer has a device address range of its own (so pointers
// stored in buffers are real addresses the cache model can see) and is backed
// by host memory lazily, in 64 KiB chunks allocated on first write; reads of
// untouched chunks see zeros. The latency probe writes one word per cache
// line, so it still touches every chunk of its slot buffer: host memory is
// bounded by reporting a max allocation of at most kSimMaxAllocBytes (512 MiB,
// well past the last cache and the TLB reach of the mobile GPUs modelled, and
// close to what those devices report: Adreno 530 allows 472 MB per
// allocation), which the probes already respect when they size their sweeps.
#pragma once

#include "backends/backend.hpp"
#include "backends/sim/cache_model.hpp"
#include "backends/sim/sim_config.hpp"
#include "core/random.hpp"

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <vector>

namespace gpuscope::sim {

constexpr uint64_t kSimMaxAllocBytes = 512ull << 20;

// Live buffers by base address, shared by a device and its buffers.
struct AddressSpace {
  std::map<uint64_t, class SimBuffer*> buffers;  // base -> buffer
  uint64_t write_stamp = 0;                      // bumped by every write, device-wide
  uint64_t next_id = 1;
  uint64_t allocated_bytes = 0;
  // Storage chunks of freed buffers, reused by new ones (fresh host memory
  // costs a page fault per page); at most kSimMaxAllocBytes of them.
  std::vector<std::unique_ptr<std::byte[]>> spare_chunks;
};

class SimBuffer : public Buffer {
 public:
  SimBuffer(std::shared_ptr<AddressSpace> space, uint64_t base, size_t bytes);
  ~SimBuffer() override;
  size_t size_bytes() const override { return bytes_; }
  uint64_t base_address() const { return base_; }
  uint64_t id() const { return id_; }
  // Stamp of the last write (device-wide counter): memos of a buffer's
  // contents are valid while it is unchanged.
  uint64_t last_write() const { return last_write_; }
  size_t resident_bytes() const;
  // Allocated by create_host_buffer (CL_MEM_ALLOC_HOST_PTR): in host memory,
  // which kernels reach across the host link unless the description has
  // host.zero_copy.
  bool host_allocated = false;

  void read(uint64_t offset, std::span<std::byte> dst) const;
  void write(uint64_t offset, std::span<const std::byte> src);
  // In place, chunk by chunk in order, for families that would otherwise
  // copy through a staging buffer. visit: f(p, n) for each piece of
  // [offset, offset + n); p is null where nothing was ever written (zeros).
  // fill: f(p, at, n) must store all n bytes of the piece at offset `at`;
  // it counts as one write.
  void visit(uint64_t offset, size_t n, const std::function<void(const std::byte*, size_t)>& f) const;
  void fill(uint64_t offset, size_t n, const std::function<void(std::byte*, uint64_t, size_t)>& f);

  template <class T>
  T load(uint64_t offset) const {
    T v;
    read(offset, std::as_writable_bytes(std::span<T>(&v, 1)));
    return v;
  }
  template <class T>
  void store(uint64_t offset, T v) {
    write(offset, std::as_bytes(std::span<const T>(&v, 1)));
  }
  template <class T>
  std::vector<T> load_all(size_t count, uint64_t offset = 0) const {
    std::vector<T> out(count);
    read(offset, std::as_writable_bytes(std::span<T>(out)));
    return out;
  }

 private:
  static constexpr uint64_t kChunkBytes = 64 * 1024;
  void check(uint64_t offset, size_t n) const;
  std::shared_ptr<AddressSpace> space_;
  uint64_t base_;
  size_t bytes_;
  uint64_t id_;
  uint64_t last_write_ = 0;
  mutable std::vector<std::unique_ptr<std::byte[]>> chunks_;
};

class SimKernel : public Kernel {
 public:
  SimKernel(KernelSpec spec, const struct KernelModel* model, size_t max_wg)
      : spec_(std::move(spec)), model_(model), max_wg_(max_wg) {}
  const std::string& name() const override { return spec_.entry; }
  size_t max_work_group_size() const override { return max_wg_; }
  const KernelSpec& spec() const { return spec_; }
  const struct KernelModel& model() const { return *model_; }
  struct SimBuildFacts facts(const SimConfig& c) const;

 private:
  KernelSpec spec_;
  const struct KernelModel* model_;
  size_t max_wg_;
};

// The device, with images and host transfers (no SVM).
class SimDevice : public Device, public ImageFacet, public HostTransferFacet {
 public:
  explicit SimDevice(SimConfig cfg, std::string id);
  const DeviceInfo& info() const override { return info_; }
  std::unique_ptr<Buffer> create_buffer(size_t bytes) override;
  void write(Buffer& dst, size_t offset_bytes, std::span<const std::byte> src) override;
  void read(const Buffer& src, size_t offset_bytes, std::span<std::byte> dst) override;
  Kernel& kernel(const KernelSpec& spec) override;
  // What the modelled compiler reports for a build (the family's
  // KernelModel::build): registers where the family models them, spills,
  // and the size of the build's machine code.
  KernelResources kernel_resources(Kernel& k) override;
  using Device::launch;
  double launch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args) override;
  LaunchBatch launch_batch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args,
                           int count) override;  // sim_device_launch.cpp
  ImageFacet* images() override { return this; }
  HostTransferFacet* host_transfers() override { return this; }
  // Modelled time since the device opened, in s: every launch's kernel time
  // plus launch_overhead_us (the host's round trip), a batch's host_ns,
  // every copy at the host link's bandwidth plus launch_overhead_us, every
  // timed transfer's and map's host time. Host work outside the device
  // (building a random cycle, checking outputs) is not in it.
  double budget_clock_s() const override { return modelled_ns_ * 1e-9; }
  // Adds a submission's modelled device time plus launch_overhead_us to the
  // budget clock: what the graphics facet's passes and frames cost.
  void spend_submission(double device_ns) { modelled_ns_ += cfg_.launch_overhead_us * 1e3 + device_ns; }

  // Host transfers (probe transfer). Copies move the bytes; their time is
  // the description's host link (bytes / link_bandwidth_gbps) plus, for the
  // host's view, launch_overhead_us of API cost. Maps of a zero-copy device
  // (host.zero_copy) cost launch_overhead_us whatever the size; elsewhere a
  // map copies the whole buffer across the link (to_host on map, to_device
  // on unmap: the Mali-G52 article's Mali). touch_ns is the host's real work, timed.
  std::unique_ptr<Buffer> create_host_buffer(size_t bytes) override;
  std::unique_ptr<HostStaging> create_pinned_host(size_t bytes) override;
  TransferTiming timed_write(Buffer& dst, std::span<const std::byte> src, bool blocking) override;
  TransferTiming timed_read(const Buffer& src, std::span<std::byte> dst, bool blocking) override;
  MapTiming timed_map(Buffer& buf, MapDirection dir,
                      const std::function<void(std::span<std::byte>)>& touch) override;

  // Images: the description's limits; pixels in sim buffers (sim_image.hpp).
  ImageLimits limits() const override;
  std::unique_ptr<Image> create_image(const ImageDesc& desc, Buffer* backing) override;
  void write_image(Image& dst, std::span<const std::byte> pixels) override;

  // Render passes on the description's raster model (sim_graphics.cpp);
  // nullptr when the description has no raster section.
  GraphicsFacet* graphics() override { return graphics_.get(); }

  const SimConfig& config() const { return cfg_; }
  MemoryModel& memory() { return memory_; }
  AddressSpace& address_space() { return *space_; }
  std::shared_ptr<void>& state_slot(const std::string& key) { return state_[key]; }
  // Multiplies a modelled time by the description's measurement noise.
  double with_noise(double ns);

 private:
  // One launch's noisy kernel time, without advancing the modelled clock;
  // infinite for the description's launch.endless kernels.
  double run_launch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args);
  // Throws LaunchTimeout (never lost) when `launches` launches submitted
  // together take longer than the launch bound's wait, advancing the
  // modelled clock by the wait and its grace, as a real backend's host spends them.
  void check_bound(const Kernel& k, double device_ns, int launches);
  // A copy of `bytes` across the host link, as the modelled clock counts it.
  double copy_ns(size_t bytes) const;
  double modelled_ns_ = 0;  // budget_clock_s, in ns
  SimConfig cfg_;
  DeviceInfo info_;
  MemoryModel memory_;
  std::shared_ptr<AddressSpace> space_;
  std::map<std::string, std::unique_ptr<SimKernel>> kernels_;
  std::map<std::string, std::shared_ptr<void>> state_;
  SplitMix64 noise_rng_;
  std::unique_ptr<GraphicsFacet> graphics_;
};

// DeviceInfo of a description as a sim device `id` reports it.
DeviceInfo sim_device_info(const SimConfig& c, const std::string& id);

std::unique_ptr<Backend> make_sim_backend();

}  // namespace gpuscope::sim
