// Probe `transfer`: how fast data moves between host and device, and whether
// the device reads host-allocated memory in place (zero copy). The
// experiments of the Adreno 320/420 paper (Table 1's c-to-g / g-to-c rates, zero copy
// through CL_MEM_ALLOC_HOST_PTR), 000's map/unmap that secretly copies the
// whole buffer and its coarse- vs fine-grained SVM, and 002's CPU-GPU link in
// both directions.
//
// Shape of the experiment, and why:
// - Sizes 4 KiB to 1 GiB by factors of 4: small transfers show the fixed
//   cost per call, large ones the link's rate. All variants are measured at
//   one size before the next, so a budget that runs out cuts only the
//   largest sizes, evenly.
// - Write (h2d) and read (d2h), from ordinary (pageable) host memory and from
//   pinned memory (a mapped CL_MEM_ALLOC_HOST_PTR buffer, what drivers DMA
//   from directly), each blocking (the API call's wall time, the caller's
//   view) and non-blocking (the command's own profiling start->end, the copy
//   engine's view).
// - Map/unmap of a whole buffer in both directions, for an ordinary device
//   buffer and an ALLOC_HOST_PTR one: the API's own cost (map + unmap, the
//   host's touch excluded) against size. A map that copies costs in
//   proportion to the size; a zero-copy map costs the same at 4 KiB and at
//   1 GiB. The bandwidth a program sees through a map (map + reading or
//   writing every byte + unmap) is a second series.
// - The same read kernel over an ordinary buffer and an ALLOC_HOST_PTR one:
//   if the latter lives in host memory across a link, the kernel reads it at
//   the link's rate, not the memory's. Together with the map cost this
//   decides host.zero_copy from evidence rather than from the device type.
// - Where the device offers coarse-grained SVM, the cost of handing an SVM
//   allocation to the host and back against size (000: "copies the entire
//   buffer on map").
#include "core/error.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <optional>

namespace gpuscope {
namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;
constexpr size_t kGiB = 1024 * kMiB;
constexpr size_t kReadGroup = 256;

// Samples at one size: 2 where one takes over 50 ms (256 MiB and up), 3, more while they are cheap (up to 15
// or ~20 ms of transfers), so that 4 KiB points, dominated by jitter, get many.
template <class Fn>
std::vector<double> sample(Fn&& once, double per_sample_ns_hint) {
  const int n = per_sample_ns_hint > 50e6  ? 2
                : per_sample_ns_hint > 5e6 ? 3
                : per_sample_ns_hint > 1e6 ? 5
                                           : 15;
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(once());
  return out;
}

double gbps(size_t bytes, double ns) { return static_cast<double>(bytes) / std::max(ns, 1.0); }

class TransferProbe {
 public:
  explicit TransferProbe(ProbeContext& ctx)
      : ctx_(ctx), dev_(ctx.device), info_(dev_.info()), xfer_(host_transfers_of(dev_)) {}

  std::vector<Series> run() {
    TimeBudget budget = ctx_.budget();
    const bool quick = ctx_.options.quick;
    const bool cpu = info_.type == "cpu";
    // 1 GiB on a GPU (a quarter of its memory at most); on a CPU device,
    // where both sides are the same memory, 64 MiB says as much.
    size_t max_bytes = quick ? (cpu ? 16 * kMiB : 256 * kMiB) : (cpu ? 64 * kMiB : kGiB);
    max_bytes = std::min<size_t>(max_bytes, info_.max_alloc_bytes);
    if (info_.global_mem_bytes) max_bytes = std::min<size_t>(max_bytes, info_.global_mem_bytes / 4);
    max_bytes = std::max<size_t>(std::bit_floor(max_bytes), 64 * kKiB);
    const size_t step = quick ? 16 : 4;

    // Buffers for the largest size, halved on refusal; smaller sizes use
    // their start.
    for (;; max_bytes /= 2) {
      try {
        device_buf_ = dev_.create_buffer(max_bytes);
        pinned_ = xfer_.create_pinned_host(max_bytes);
        break;
      } catch (const OutOfResources&) {
        device_buf_.reset();
        pinned_.reset();
        if (max_bytes <= 64 * kKiB) throw;
      }
    }
    pageable_.assign(max_bytes, std::byte{0});
    std::fill(pinned_->bytes().begin(), pinned_->bytes().end(), std::byte{1});

    const Axis size_axis{"size", "B"}, bw_axis{"bandwidth", "GB/s"}, cost_axis{"map+unmap time", "us"};
    std::vector<Series> bw;
    for (const char* dir : {"h2d", "d2h"})
      for (const char* mem : {"pageable", "pinned"})
        for (const char* mode : {"", ".blocking"})
          bw.push_back(
              make_series(fmt::format("transfer.{}.{}{}", dir, mem, mode), "transfer", size_axis, bw_axis));
    for (auto& s : bw) {
      const bool blocking = s.id.ends_with(".blocking");
      s.meta = {{"timing", blocking ? "host wall time of the blocking call"
                                    : "profiling start->end of a "
                                      "non-blocking command"},
                {"host_memory", s.id.find("pinned") != std::string::npos
                                    ? "mapped CL_MEM_ALLOC_HOST_PTR buffer (pinned)"
                                    : "ordinary heap memory (pageable)"}};
    }
    std::vector<Series> map_cost, map_bw;
    for (const char* kind : {"device", "host"})
      for (const char* dir : {"to_host", "to_device"}) {
        map_cost.push_back(
            make_series(fmt::format("transfer.map.{}.{}", kind, dir), "transfer", size_axis, cost_axis));
        map_bw.push_back(
            make_series(fmt::format("transfer.mapped.{}.{}", kind, dir), "transfer", size_axis, bw_axis));
      }
    for (auto& s : map_cost)
      s.meta = {{"buffer", s.id.find(".host.") != std::string::npos ? "CL_MEM_ALLOC_HOST_PTR"
                                                                    : "ordinary device buffer"},
                {"timing", "host wall time of map (blocking) + unmap (waited), the host's touch excluded"}};
    for (auto& s : map_bw) s.meta = {{"timing", "bytes / (map + host reads or writes every byte + unmap)"}};

    std::vector<size_t> sizes;
    for (size_t b = 4 * kKiB; b <= max_bytes; b *= step) sizes.push_back(b);
    if (sizes.back() != max_bytes) sizes.push_back(max_bytes);

    // Maps are measured to 64 MiB: past that they only repeat the trend
    // (on the H200 the 256 MiB maps cost a second of host touching and
    // pushed 1 GiB copies out of the budget).
    const size_t max_map_bytes = 64 * kMiB;
    nlohmann::json cut = nullptr;
    double copies_s = 0, maps_s = 0;  // what the last size took
    for (size_t bytes : sizes) {
      // Each size costs about `step` times the last: skip what would
      // overrun the budget rather than start it.
      const double predicted_s =
          static_cast<double>(step) * (copies_s + (bytes <= max_map_bytes ? maps_s : 0.0));
      if (budget.exhausted() || predicted_s > budget.remaining_s()) {
        cut = fmt::format("time budget spent before {} B", bytes);
        break;
      }
      const double t0 = budget.elapsed_s();
      measure_copies(bw, bytes);
      const double t1 = budget.elapsed_s();
      if (bytes <= max_map_bytes) measure_maps(map_cost, map_bw, bytes);
      copies_s = t1 - t0;
      maps_s = budget.elapsed_s() - t1;
      ctx_.progress(fmt::format("transfer {:>10} KiB  h2d {:.2f} / d2h {:.2f} GB/s (pinned)", bytes / kKiB,
                                bw[2].points.back().y, bw[6].points.back().y));
    }

    std::vector<Series> out;
    for (auto& s : bw) out.push_back(std::move(s));
    for (auto& s : map_cost) out.push_back(std::move(s));
    for (auto& s : map_bw) out.push_back(std::move(s));
    out.push_back(kernel_reads(quick));
    if (auto svm = svm_series(sizes, budget); svm) out.push_back(std::move(*svm));
    for (auto& s : out) {
      s.meta["wall_s"] = budget.elapsed_s();
      if (!cut.is_null()) s.meta["cut"] = cut;
    }
    return out;
  }

 private:
  // The eight copy variants at one size, in GB/s (bytes per ns).
  void measure_copies(std::vector<Series>& bw, size_t bytes) {
    for (auto& s : bw) {
      const bool h2d = s.id.starts_with("transfer.h2d");
      const bool pinned = s.id.find("pinned") != std::string::npos;
      const bool blocking = s.id.ends_with(".blocking");
      std::byte* host = pinned ? pinned_->bytes().data() : pageable_.data();
      auto once = [&] {
        const TransferTiming t = h2d ? xfer_.timed_write(*device_buf_, {host, bytes}, blocking)
                                     : xfer_.timed_read(*device_buf_, {host, bytes}, blocking);
        return blocking ? t.host_ns : t.device_ns;
      };
      const double warm = once();  // first touch of pages, driver staging set-up
      std::vector<double> ns = sample(once, warm);
      std::vector<double> rates;
      for (double t : ns) rates.push_back(gbps(bytes, t));
      add_point(s, static_cast<double>(bytes), rates);
    }
    // The copies must have moved the data: after a pinned read the host holds
    // what the last write put on the device.
    dev_.write(*device_buf_, 0, std::span<const std::byte>(pageable_.data(), std::min<size_t>(bytes, 4096)));
    std::vector<std::byte> back(std::min<size_t>(bytes, 4096));
    dev_.read(*device_buf_, 0, back);
    if (std::memcmp(back.data(), pageable_.data(), back.size()) != 0)
      throw ValidationError("transfer: data read back differs from the data written");
  }

  void measure_maps(std::vector<Series>& cost, std::vector<Series>& bw, size_t bytes) {
    auto dev_buf = dev_.create_buffer(bytes);
    auto host_buf = xfer_.create_host_buffer(bytes);
    // Zeroed through a mapping first (untimed): the read mappings below
    // check that they show these zeros.
    for (Buffer* b : {dev_buf.get(), host_buf.get()})
      xfer_.timed_map(*b, MapDirection::to_device,
                     [](std::span<std::byte> m) { std::memset(m.data(), 0, m.size()); });
    for (size_t i = 0; i < cost.size(); ++i) {
      const bool host_kind = cost[i].id.find(".host.") != std::string::npos;
      const MapDirection dir =
          cost[i].id.ends_with("to_host") ? MapDirection::to_host : MapDirection::to_device;
      Buffer& buf = host_kind ? *host_buf : *dev_buf;
      uint64_t checksum = 0;
      // The touch is what a program does with a mapping: read every byte
      // (summed, so the reads happen) or write every byte.
      auto touch = [&](std::span<std::byte> m) {
        if (dir == MapDirection::to_host) {
          const auto* w = reinterpret_cast<const uint64_t*>(m.data());
          uint64_t acc = 0;
          for (size_t k = 0; k < m.size() / 8; ++k) acc += w[k];
          checksum += acc;
        } else {
          std::memset(m.data(), 0, m.size());
        }
      };
      auto once = [&] { return xfer_.timed_map(buf, dir, touch); };
      const MapTiming warm = once();
      const double warm_total = warm.map_host_ns + warm.touch_ns + warm.unmap_host_ns;
      const int n = warm_total > 5e6 ? 3 : warm_total > 1e6 ? 5 : 15;
      std::vector<double> api_us, rates;
      for (int k = 0; k < n; ++k) {
        const MapTiming t = once();
        api_us.push_back((t.map_host_ns + t.unmap_host_ns) / 1e3);
        rates.push_back(gbps(bytes, t.map_host_ns + t.touch_ns + t.unmap_host_ns));
      }
      // Buffers start zeroed and only zeros are written: a read mapping
      // that showed anything else would be showing the wrong memory.
      if (checksum != 0) throw ValidationError("transfer: a mapped buffer showed bytes nobody wrote");
      add_point(cost[i], static_cast<double>(bytes), api_us);
      add_point(bw[i], static_cast<double>(bytes), rates);
    }
  }

  // The read kernel over an ordinary and a host-allocated buffer of the same
  // size: x = 0 for the ordinary buffer, 1 for ALLOC_HOST_PTR.
  Series kernel_reads(bool quick) {
    Series s = make_series("transfer.kernel_read", "transfer", {"buffer (0 device, 1 ALLOC_HOST_PTR)", ""},
                           {"kernel read bandwidth", "GB/s"});
    const size_t bytes = std::min<size_t>(device_buf_->size_bytes(), quick ? 64 * kMiB : 256 * kMiB);
    const size_t count = bytes / 16;
    const size_t group = std::min(kReadGroup, static_cast<size_t>(info_.max_work_group_size));
    auto& k = dev_.kernel({"transfer", "read_sum", {{"group", group}}});
    if (k.max_work_group_size() < group) throw Unsupported("transfer: read kernel needs groups of 256");
    const size_t groups = std::max<size_t>(1, std::min<size_t>(info_.compute_units * 16, count / group));
    auto partial = dev_.create_buffer(groups * sizeof(uint32_t));
    // Every word holds 1, so the sum is the number of words (mod 2^32);
    // written 16 MiB at a time (bytes is a multiple of it or below it).
    const size_t piece = std::min<size_t>(bytes, 16 * kMiB);
    const std::vector<uint32_t> ones(piece / 4, 1u);
    const std::span<const std::byte> ones_bytes = std::as_bytes(std::span<const uint32_t>(ones));
    // The device kind is the transfers' buffer (its first `bytes`): the
    // copies above are done with it.
    std::unique_ptr<Buffer> host_buf = xfer_.create_host_buffer(bytes);
    Buffer* bufs[2] = {device_buf_.get(), host_buf.get()};
    for (Buffer* b : bufs)
      for (size_t at = 0; at < bytes; at += piece)
        dev_.write(*b, at, ones_bytes.first(std::min(piece, bytes - at)));
    auto once = [&](Buffer& buf) {
      const KernelArg args[] = {&buf, static_cast<uint64_t>(count), partial.get()};
      const double ns = dev_.launch(k, Range::d1(groups * group), Range::d1(group), args);
      const auto parts = dev_.read_values<uint32_t>(*partial, groups);
      const uint32_t sum = std::accumulate(parts.begin(), parts.end(), 0u);
      if (sum != static_cast<uint32_t>(bytes / 4))
        throw ValidationError(fmt::format("transfer: read_sum gave {} for {} words of 1", sum, bytes / 4));
      return gbps(bytes, ns);
    };
    // Interleaved, so that a disturbance (a co-tenant on a CPU host) falls
    // on both kinds alike rather than on whichever was measured second.
    std::vector<double> rates[2];
    for (int i = -1; i < 5; ++i)
      for (int kind = 0; kind < 2; ++kind) {
        const double r = once(*bufs[kind]);
        if (i >= 0) rates[kind].push_back(r);
      }
    for (int kind = 0; kind < 2; ++kind) add_point(s, kind, rates[kind]);
    s.meta = {{"bytes", bytes}, {"kernel", "transfer/read_sum"}, {"groups", groups}, {"group", group}};
    return s;
  }

  // Coarse-grained SVM handed to the host and back, against size. Absent
  // when the device offers no SVM; the capabilities go into the meta.
  std::optional<Series> svm_series(const std::vector<size_t>& sizes, const TimeBudget& budget) {
    constexpr size_t max_svm_bytes = 64 * kMiB;
    SvmFacet* svm = dev_.svm();
    if (!svm) return std::nullopt;
    const SvmCapabilities caps = svm->capabilities();
    Series s = make_series("transfer.svm.map", "transfer", {"size", "B"}, {"map+unmap time", "us"});
    s.meta = {{"coarse_grain_buffer", caps.coarse_grain_buffer},
              {"fine_grain_buffer", caps.fine_grain_buffer},
              {"fine_grain_system", caps.fine_grain_system},
              {"atomics", caps.atomics},
              {"timing", "host wall time of clEnqueueSVMMap(read) + clEnqueueSVMUnmap, touch excluded"}};
    if (!caps.coarse_grain_buffer) return s;
    for (size_t bytes : sizes) {
      if (budget.exhausted() || bytes > max_svm_bytes) break;
      try {
        auto touch = [](std::span<std::byte> m) {
          volatile std::byte sink{};
          for (size_t k = 0; k < m.size(); k += 4096) sink = m[k];
          (void)sink;
        };
        svm->timed_map(bytes, MapDirection::to_host, touch);
        std::vector<double> us;
        for (int i = 0; i < 5; ++i) {
          const MapTiming t = svm->timed_map(bytes, MapDirection::to_host, touch);
          us.push_back((t.map_host_ns + t.unmap_host_ns) / 1e3);
        }
        add_point(s, static_cast<double>(bytes), us);
      } catch (const DeviceError& e) {
        s.meta["error"] = e.what();
        break;
      }
    }
    return s;
  }

  static HostTransferFacet& host_transfers_of(Device& dev) {
    HostTransferFacet* x = dev.host_transfers();
    if (!x) throw Unsupported("the device offers no timed host transfers");
    return *x;
  }

  ProbeContext& ctx_;
  Device& dev_;
  const DeviceInfo& info_;
  HostTransferFacet& xfer_;
  std::unique_ptr<Buffer> device_buf_;
  std::unique_ptr<HostStaging> pinned_;
  std::vector<std::byte> pageable_;
};

}  // namespace

std::vector<Series> run_transfer_probe(ProbeContext& ctx) { return TransferProbe(ctx).run(); }

}  // namespace gpuscope
