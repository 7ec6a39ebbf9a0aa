#include "backends/sim/sim_device.hpp"

#include "backends/sim/family.hpp"
#include "backends/sim/sim_graphics.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numbers>

namespace gpuscope::sim {
namespace {

// Device addresses start here (nonzero, so a null pointer is never a
// buffer) and buffers are aligned to 1 MiB, like drivers' page-aligned
// allocations, so that cache sets and pages see realistic addresses.
constexpr uint64_t kFirstAddress = 1ull << 24;
constexpr uint64_t kAlign = 1ull << 20;

}  // namespace

// ---- SimBuffer -----------------------------------------------------------

SimBuffer::SimBuffer(std::shared_ptr<AddressSpace> space, uint64_t base, size_t bytes)
    : space_(std::move(space)), base_(base), bytes_(bytes), id_(space_->next_id++) {
  chunks_.resize((bytes + kChunkBytes - 1) / kChunkBytes);
  space_->buffers[base_] = this;
  space_->allocated_bytes += bytes_;
}

SimBuffer::~SimBuffer() {
  for (auto& c : chunks_)
    if (c && space_->spare_chunks.size() * kChunkBytes < kSimMaxAllocBytes)
      space_->spare_chunks.push_back(std::move(c));
  space_->buffers.erase(base_);
  space_->allocated_bytes -= bytes_;
}

size_t SimBuffer::resident_bytes() const {
  size_t n = 0;
  for (const auto& c : chunks_) n += c ? kChunkBytes : 0;
  return n;
}

void SimBuffer::check(uint64_t offset, size_t n) const {
  if (offset > bytes_ || n > bytes_ - offset)
    throw DeviceError(
        fmt::format("sim: access of {} B at offset {} is outside a {} B buffer", n, offset, bytes_));
}

void SimBuffer::read(uint64_t offset, std::span<std::byte> dst) const {
  check(offset, dst.size());
  size_t done = 0;
  while (done < dst.size()) {
    const uint64_t at = offset + done;
    const uint64_t c = at / kChunkBytes, in = at % kChunkBytes;
    const size_t n = std::min<size_t>(dst.size() - done, kChunkBytes - in);
    if (chunks_[c])
      std::memcpy(dst.data() + done, chunks_[c].get() + in, n);
    else
      std::memset(dst.data() + done, 0, n);
    done += n;
  }
}

void SimBuffer::visit(uint64_t offset, size_t n,
                      const std::function<void(const std::byte*, size_t)>& f) const {
  check(offset, n);
  for (size_t done = 0; done < n;) {
    const uint64_t at = offset + done;
    const uint64_t c = at / kChunkBytes, in = at % kChunkBytes;
    const size_t m = std::min<size_t>(n - done, kChunkBytes - in);
    f(chunks_[c] ? chunks_[c].get() + in : nullptr, m);
    done += m;
  }
}

void SimBuffer::write(uint64_t offset, std::span<const std::byte> src) {
  fill(offset, src.size(),
       [&](std::byte* p, uint64_t at, size_t n) { std::memcpy(p, src.data() + (at - offset), n); });
}

void SimBuffer::fill(uint64_t offset, size_t size,
                     const std::function<void(std::byte*, uint64_t, size_t)>& f) {
  check(offset, size);
  size_t done = 0;
  while (done < size) {
    const uint64_t at = offset + done;
    const uint64_t c = at / kChunkBytes, in = at % kChunkBytes;
    const size_t n = std::min<size_t>(size - done, kChunkBytes - in);
    if (!chunks_[c]) {
      // A new chunk (a freed buffer's, else fresh) reads as zeros where this
      // write does not cover it; one the write fills is not zeroed first.
      auto& spare = space_->spare_chunks;
      if (spare.empty()) {
        chunks_[c] = std::make_unique_for_overwrite<std::byte[]>(kChunkBytes);
      } else {
        chunks_[c] = std::move(spare.back());
        spare.pop_back();
      }
      if (n < kChunkBytes) {
        std::memset(chunks_[c].get(), 0, in);
        std::memset(chunks_[c].get() + in + n, 0, kChunkBytes - in - n);
      }
    }
    f(chunks_[c].get() + in, at, n);
    done += n;
  }
  last_write_ = ++space_->write_stamp;
}

// ---- SimLaunch -----------------------------------------------------------

SimLaunch::SimLaunch(SimDevice& dev, const KernelSpec& spec, const LaunchShape& shape,
                     std::span<const KernelArg> args)
    : dev_(dev), spec_(spec), shape_(shape), args_(args) {}

const SimConfig& SimLaunch::config() const { return dev_.config(); }
MemoryModel& SimLaunch::memory() { return dev_.memory(); }
std::shared_ptr<void>& SimLaunch::state_slot(const std::string& key) { return dev_.state_slot(key); }

namespace {
template <class T>
const T& arg_as(std::span<const KernelArg> args, size_t i, const KernelSpec& spec, const char* what) {
  if (i >= args.size())
    throw DeviceError(fmt::format("sim: kernel {} launched with {} arguments, argument {} missing",
                                  spec.entry, args.size(), i));
  if (const T* v = std::get_if<T>(&args[i])) return *v;
  throw DeviceError(fmt::format("sim: kernel {} argument {} is not {}", spec.entry, i, what));
}
}  // namespace

SimBuffer& SimLaunch::buffer(size_t i) const {
  Buffer* b = arg_as<Buffer*>(args_, i, spec_, "a buffer");
  auto* sb = dynamic_cast<SimBuffer*>(b);
  if (!sb) throw DeviceError(fmt::format("sim: kernel {} argument {} is not a sim buffer", spec_.entry, i));
  return *sb;
}
uint32_t SimLaunch::u32(size_t i) const { return arg_as<uint32_t>(args_, i, spec_, "a uint"); }
int32_t SimLaunch::i32(size_t i) const { return arg_as<int32_t>(args_, i, spec_, "an int"); }
uint64_t SimLaunch::u64(size_t i) const { return arg_as<uint64_t>(args_, i, spec_, "a ulong"); }
float SimLaunch::f32(size_t i) const { return arg_as<float>(args_, i, spec_, "a float"); }
std::pair<SimBuffer*, uint64_t> SimLaunch::resolve(uint64_t address) const {
  auto& bufs = dev_.address_space().buffers;
  auto it = bufs.upper_bound(address);
  if (it != bufs.begin()) {
    --it;
    if (address - it->first < it->second->size_bytes()) return {it->second, address - it->first};
  }
  throw DeviceError(
      fmt::format("sim: kernel {} accessed address {:#x}, outside every buffer (a GPU would fault)",
                  spec_.entry, address));
}

// ---- FamilyTable ---------------------------------------------------------

void FamilyTable::add(KernelModel m) {
  auto key = std::make_pair(m.family, m.entry);
  models_[key] = std::move(m);
}

const KernelModel* FamilyTable::find(const std::string& family, const std::string& entry) const {
  const auto it = models_.find({family, entry});
  return it == models_.end() ? nullptr : &it->second;
}

std::vector<std::pair<std::string, std::string>> FamilyTable::entries() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, model] : models_) out.push_back(key);
  return out;
}

// ---- SimDevice -----------------------------------------------------------

DeviceInfo sim_device_info(const SimConfig& c, const std::string& id) {
  DeviceInfo d;
  d.id = id;
  d.name = c.name + " (simulated)";
  d.vendor = c.vendor;
  d.type = "sim";
  d.api = "gpuscope sim (OpenCL C kernels modelled in C++)";
  d.driver_version = GPUSCOPE_VERSION;
  d.platform = "gpuscope simulator";
  d.compute_units = c.core.shader_cores;
  d.clock_mhz = static_cast<uint32_t>(std::lround(c.core.clock_mhz));
  d.global_mem_bytes = c.global_mem_bytes;
  d.max_alloc_bytes = std::min(c.max_alloc_bytes, kSimMaxAllocBytes);
  d.local_mem_bytes = c.local.bytes_per_work_group;
  d.local_mem_dedicated = c.local.on_chip;
  const auto levels = c.path_levels(CachePath::load_store);
  d.global_cache_bytes = levels.back()->capacity_bytes;
  d.global_cache_line_bytes = levels.front()->line_bytes;
  d.address_bits = c.address_bits;
  d.max_work_group_size = c.core.max_work_group_size;
  d.profiling = true;
  d.features.fp64 = c.rates.fp64;
  d.features.fp16 = c.rates.fp16;
  d.features.images = true;        // every sim device has images (ImagesConfig)
  d.features.host_mapping = true;  // timed_map, by the host link or zero-copy
  d.features.subgroup_sizes = {c.core.wave_width};  // what a driver would claim
  for (const auto& u : c.matrix.shapes)
    d.features.matrix_shapes.push_back({u.a, u.b, u.c, u.result, u.m, u.n, u.k, false});
  d.vendor_info["sim_description"] = c.source;
  if (!c.gpu_families.empty()) d.vendor_info["sim_gpu_families"] = c.gpu_families;
  if (c.max_alloc_bytes > kSimMaxAllocBytes)
    d.vendor_info["sim_note"] =
        fmt::format("max allocation capped at {} MiB of host memory (described: {} MiB)",
                    kSimMaxAllocBytes >> 20, c.max_alloc_bytes >> 20);
  return d;
}

SimDevice::SimDevice(SimConfig cfg, std::string id)
    : cfg_(std::move(cfg)),
      info_(sim_device_info(cfg_, id)),
      memory_(cfg_, cfg_.noise.seed ^ 0x5eed),
      space_(std::make_shared<AddressSpace>()),
      noise_rng_(cfg_.noise.seed),
      graphics_(cfg_.raster.present ? make_sim_graphics(*this) : nullptr) {}

std::unique_ptr<Buffer> SimDevice::create_buffer(size_t bytes) {
  if (bytes == 0) throw DeviceError("sim: zero-byte buffer");
  if (bytes > info_.max_alloc_bytes)
    throw OutOfResources(
        fmt::format("sim: {} B exceeds the max allocation of {} B", bytes, info_.max_alloc_bytes));
  if (space_->allocated_bytes + bytes > cfg_.global_mem_bytes)
    throw OutOfResources(
        fmt::format("sim: {} B more would exceed the device's {} B", bytes, cfg_.global_mem_bytes));
  // First fit in the address space, 1 MiB aligned.
  const uint64_t limit = cfg_.address_bits == 32 ? (1ull << 32) : (1ull << 47);
  uint64_t base = kFirstAddress;
  for (const auto& [b, buf] : space_->buffers) {
    if (base + bytes <= b) break;
    base = std::max(base, (b + buf->size_bytes() + kAlign - 1) / kAlign * kAlign);
  }
  if (base + bytes > limit) throw OutOfResources("sim: device address space exhausted");
  return std::make_unique<SimBuffer>(space_, base, bytes);
}

double SimDevice::copy_ns(size_t bytes) const {
  return static_cast<double>(bytes) / cfg_.host.link_bandwidth_gbps + cfg_.launch_overhead_us * 1e3;
}

void SimDevice::write(Buffer& dst, size_t offset_bytes, std::span<const std::byte> src) {
  dynamic_cast<SimBuffer&>(dst).write(offset_bytes, src);
  modelled_ns_ += copy_ns(src.size());
}

void SimDevice::read(const Buffer& src, size_t offset_bytes, std::span<std::byte> dst) {
  dynamic_cast<const SimBuffer&>(src).read(offset_bytes, dst);
  modelled_ns_ += copy_ns(dst.size());
}

Kernel& SimDevice::kernel(const KernelSpec& spec) {
  const std::string key = spec.key();
  if (auto it = kernels_.find(key); it != kernels_.end()) return *it->second;
  const KernelModel* m = sim_families().find(spec.family, spec.entry);
  if (!m)
    throw Unsupported(
        fmt::format("the sim backend has no model of kernel '{}' of family '{}'", spec.entry, spec.family));
  const size_t max_wg = m->max_work_group_size
                            ? std::min<size_t>(m->max_work_group_size, cfg_.core.max_work_group_size)
                            : cfg_.core.max_work_group_size;
  auto k = std::make_unique<SimKernel>(spec, m, max_wg);
  auto& ref = *k;
  kernels_[key] = std::move(k);
  return ref;
}

SimBuildFacts SimKernel::facts(const SimConfig& c) const {
  SimBuildFacts f = model_->build ? model_->build(c, spec_) : SimBuildFacts{};
  if (f.code_bytes == 0) f.code_bytes = c.icache.base_code_bytes;
  return f;
}

KernelResources SimDevice::kernel_resources(Kernel& k) {
  auto& sk = dynamic_cast<SimKernel&>(k);
  const SimBuildFacts f = sk.facts(cfg_);
  KernelResources r;
  r.max_work_group_size = sk.max_work_group_size();
  r.preferred_work_group_multiple = cfg_.core.wave_width;
  r.private_mem_bytes = f.private_bytes;
  if (f.registers_per_item > 0) {
    r.registers = f.registers_per_item;
    r.registers_source = "the sim's register allocation model";
  }
  r.code_bytes = f.code_bytes;
  r.code_format = "machine code";
  return r;
}

double SimDevice::with_noise(double ns) {
  const auto& n = cfg_.noise;
  // Box-Muller from two uniform draws in (0, 1].
  const double u1 = (static_cast<double>(noise_rng_.next() >> 11) + 1) * 0x1.0p-53;
  const double u2 = static_cast<double>(noise_rng_.next() >> 11) * 0x1.0p-53;
  const double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  double t = ns * std::exp(n.relative_sigma * z);
  const double u3 = static_cast<double>(noise_rng_.next() >> 11) * 0x1.0p-53;
  if (u3 < n.outlier_probability) {
    const double u4 = static_cast<double>(noise_rng_.next() >> 11) * 0x1.0p-53;
    t *= 1 + n.outlier_max_relative * u4;  // interference only ever adds time
  }
  return t;
}

double SimDevice::launch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args) {
  const double ns = run_launch(k, shape, args);
  check_bound(k, ns, 1);
  modelled_ns_ += cfg_.launch_overhead_us * 1e3 + ns;
  return ns;
}

void SimDevice::check_bound(const Kernel& k, double device_ns, int launches) {
  const double wait_ms = launch_bound().wait_ms(launches);
  if (device_ns <= wait_ms * 1e6) return;
  // The host waited the bound and its grace, in modelled time; a modelled
  // device always comes back, so it is never lost.
  modelled_ns_ += 2 * wait_ms * 1e6;
  const std::string what = launches == 1 ? "a launch" : fmt::format("a batch of {} launches", launches);
  // Named as the real backends name it: family/entry{params}.
  const auto* sk = dynamic_cast<const SimKernel*>(&k);
  const std::string name = sk ? sk->spec().key() : k.name();
  throw LaunchTimeout(std::isfinite(device_ns)
                          ? fmt::format("{} of {} ran past its bound of {:.0f} ms (modelled: {:.0f} ms)", what,
                                        name, wait_ms, device_ns * 1e-6)
                          : fmt::format("{} of {} ran past its bound of {:.0f} ms (the description's launch.endless: "
                                        "it never ends)",
                                        what, name, wait_ms),
                      false);
}

double SimDevice::run_launch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args) {
  auto& sk = dynamic_cast<SimKernel&>(k);
  const Range& global = shape.global;
  const Range& local = shape.local;
  if (local.total() > sk.max_work_group_size())
    throw DeviceError(fmt::format("sim: work-group of {} exceeds {}'s maximum {}", local.total(), sk.name(),
                                  sk.max_work_group_size()));
  for (int d = 0; d < 3; ++d)
    if (local.total() && global.dims[d] % local.dims[d] != 0)
      throw DeviceError(
          fmt::format("sim: global size {} is not a multiple of the work-group size {} (dim {})",
                      global.dims[d], local.dims[d], d));
  SimLaunch launch(*this, sk.spec(), shape, args);
  const double ns = sk.model().run(launch);
  const std::string name = sk.spec().family + "/" + sk.spec().entry;
  if (std::find(cfg_.launch.endless.begin(), cfg_.launch.endless.end(), name) != cfg_.launch.endless.end())
    return std::numeric_limits<double>::infinity();
  return with_noise(ns);
}

// ---- host transfers ------------------------------------------------------

namespace {

class SimHostStaging : public HostStaging {
 public:
  explicit SimHostStaging(size_t bytes) : data_(bytes) {}
  std::span<std::byte> bytes() override { return data_; }

 private:
  std::vector<std::byte> data_;
};

}  // namespace

std::unique_ptr<Buffer> SimDevice::create_host_buffer(size_t bytes) {
  auto b = create_buffer(bytes);
  dynamic_cast<SimBuffer&>(*b).host_allocated = true;
  return b;
}

std::unique_ptr<HostStaging> SimDevice::create_pinned_host(size_t bytes) {
  if (bytes > info_.max_alloc_bytes)
    throw OutOfResources(
        fmt::format("sim: {} B of pinned host memory exceeds {} B", bytes, info_.max_alloc_bytes));
  return std::make_unique<SimHostStaging>(bytes);
}

TransferTiming SimDevice::timed_write(Buffer& dst, std::span<const std::byte> src, bool /*blocking*/) {
  dynamic_cast<SimBuffer&>(dst).write(0, src);
  TransferTiming t;
  t.device_ns = with_noise(static_cast<double>(src.size()) / cfg_.host.link_bandwidth_gbps);
  t.host_ns = t.device_ns + with_noise(cfg_.launch_overhead_us * 1e3);
  modelled_ns_ += t.host_ns;
  return t;
}

TransferTiming SimDevice::timed_read(const Buffer& src, std::span<std::byte> dst, bool /*blocking*/) {
  dynamic_cast<const SimBuffer&>(src).read(0, dst);
  TransferTiming t;
  t.device_ns = with_noise(static_cast<double>(dst.size()) / cfg_.host.link_bandwidth_gbps);
  t.host_ns = t.device_ns + with_noise(cfg_.launch_overhead_us * 1e3);
  modelled_ns_ += t.host_ns;
  return t;
}

MapTiming SimDevice::timed_map(Buffer& buf, MapDirection dir,
                               const std::function<void(std::span<std::byte>)>& touch) {
  auto& b = dynamic_cast<SimBuffer&>(buf);
  const double api_ns = cfg_.launch_overhead_us * 1e3;
  const double copy_ns =
      cfg_.host.zero_copy ? 0.0 : static_cast<double>(b.size_bytes()) / cfg_.host.link_bandwidth_gbps;
  // The host's view of the buffer, in host memory kept on the device
  // between maps (a new allocation per map would cost the host a page fault
  // per page, more than the copy). For to_device the old contents are
  // invalidated (CL_MAP_WRITE_INVALIDATE_REGION): the mapping starts from
  // them here all the same, which no caller may rely on.
  auto& slot = state_slot("host.map_view");
  if (!slot) slot = std::make_shared<std::vector<std::byte>>();
  auto& staging = *static_cast<std::vector<std::byte>*>(slot.get());
  if (staging.size() < b.size_bytes()) staging.resize(b.size_bytes());
  const std::span<std::byte> view(staging.data(), b.size_bytes());
  b.read(0, view);
  MapTiming t;
  t.map_device_ns = with_noise(api_ns + (dir == MapDirection::to_host ? copy_ns : 0.0));
  t.map_host_ns = t.map_device_ns;
  const auto t0 = std::chrono::steady_clock::now();
  touch(view);
  t.touch_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  if (dir == MapDirection::to_device) b.write(0, view);
  t.unmap_device_ns = with_noise(api_ns + (dir == MapDirection::to_device ? copy_ns : 0.0));
  t.unmap_host_ns = t.unmap_device_ns;
  modelled_ns_ += t.map_host_ns + t.unmap_host_ns;
  return t;
}

// ---- SimBackend ----------------------------------------------------------

namespace {

class SimBackend : public Backend {
 public:
  std::string name() const override { return "sim"; }
  std::string availability() const override {
    return fmt::format("built in: {} presets; sim:PATH.json opens a description of your own", sim_presets().size());
  }
  std::vector<DeviceInfo> enumerate() override {
    std::vector<DeviceInfo> out;
    for (const auto& p : sim_presets())
      out.push_back(sim_device_info(load_sim_preset(p.name), "sim:" + p.name));
    return out;
  }
  // "sim:NAME" opens a preset; any other "sim:PATH" a description file.
  bool opens_unlisted(const std::string& id) const override {
    return id.starts_with("sim:") && id.size() > 4;
  }
  std::unique_ptr<Device> open(const std::string& id) override {
    if (!id.starts_with("sim:")) throw UsageError(fmt::format("not a sim device: '{}'", id));
    const std::string what = id.substr(4);
    for (const auto& p : sim_presets())
      if (p.name == what) return std::make_unique<SimDevice>(load_sim_preset(what), id);
    try {
      return std::make_unique<SimDevice>(load_sim_config_file(what), id);
    } catch (const UsageError& e) {
      if (what.ends_with(".json")) throw;
      std::string presets;
      for (const auto& p : sim_presets()) presets += " " + p.name;
      throw UsageError(fmt::format("{}; nor is it a sim preset:{}", e.what(), presets));
    }
  }
};

}  // namespace

std::unique_ptr<Backend> make_sim_backend() { return std::make_unique<SimBackend>(); }

}  // namespace gpuscope::sim
