// Probe `coalescing`: the three copy experiments of the Adreno 320/420 paper (its
// Figures 3-5), B[i] = A[i * m + k] with one 32-bit element per work-item:
//   coalescing.workgroup  copy throughput vs work-group size (1 .. the maximum), k = 0, m = 1
//   coalescing.offset     throughput vs offset k = 0..32 elements (misaligned reads), largest group
//   coalescing.stride     throughput vs stride m = 1..64 elements, largest group
// Throughput counts useful bytes only (4 read + 4 written per element), so a
// stride that makes the hardware fetch whole segments for one element each
// shows up as a lower figure: the ratio to m = 1 is the fraction of the
// fetched bytes that were used (analysis/coalescing reads the curves).
//
// Shape of the experiment, and why:
// - The copy B is several times any last-level cache (128 MiB on a GPU) so
//   that each launch streams from DRAM, as in the paper (256 MiB arrays):
//   an offset or stride penalty inside a cache would be a different effect.
// - The number of elements copied is the same for every stride; the source
//   spans count * 64 elements, filled on the device (a 8 GiB host copy would
//   cost seconds).
// - Each sample is the summed device time of as many back-to-back launches as
//   fill ~2 ms; a launch copies a fixed array, as the paper's did.
// - After each point the host reads a few chunks of B (start, a random place,
//   end) and compares them with the hash A was filled with; the chunks are
//   overwritten with a sentinel before the point, so a launch that did
//   nothing is caught.
#include "core/error.hpp"
#include "core/random.hpp"
#include "kernels/coalescing_twin.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace gpuscope {
namespace {

constexpr uint32_t kSeed = 0x5eed1234u;
constexpr uint32_t kMaxStride = 64;
constexpr uint32_t kMaxOffset = 32;
constexpr size_t kCheckElems = 1024;  // elements per checked chunk of B
constexpr uint32_t kSentinel = 0xA5A5A5A5u;

class CoalescingProbe {
 public:
  explicit CoalescingProbe(ProbeContext& ctx) : ctx_(ctx), dev_(ctx.device), info_(dev_.info()) {
    fill_ = &dev_.kernel({"coalescing", "fill", {}});
    copy_ = &dev_.kernel({"coalescing", "copy", {}});
    max_wg_ = std::max<size_t>(1, std::min<size_t>(copy_->max_work_group_size(),
                                                   info_.max_work_group_size ? info_.max_work_group_size
                                                                             : copy_->max_work_group_size()));
    hc_ = ctx.options.harness;
    // Many points, each a streaming copy: short samples keep the probe within
    // its budget, and a streaming launch has little jitter to average out.
    hc_.target_launch_ms = std::min(hc_.target_launch_ms, 2.0);
    hc_.min_samples = std::min(hc_.min_samples, 3);
    hc_.max_samples = std::min(hc_.max_samples, 7);
    allocate();
  }

  std::vector<Series> run() {
    TimeBudget budget = ctx_.budget();
    const bool quick = ctx_.options.quick;
    std::vector<Series> out;

    Series wg =
        copy_series("coalescing.workgroup", {"workgroup_size", ""}, "B[i] = A[i], one element per item");
    std::vector<size_t> sizes;
    for (size_t w = 1; w <= max_wg_; w *= 2) {
      sizes.push_back(w);
      if (!quick && w >= 8 && w * 3 / 2 <= max_wg_) sizes.push_back(w * 3 / 2);
    }
    if (sizes.back() != max_wg_) sizes.push_back(max_wg_);
    // Past the budget each sweep keeps only its landmarks (powers of two, the
    // maximum; offsets 0..4, 8, 16, 31, 32), so a slow device gets coarser
    // curves rather than a run that overstays.
    for (size_t w : sizes) {
      if (budget.exhausted() && !std::has_single_bit(w) && w != max_wg_) continue;
      measure_point(wg, static_cast<double>(w), w, 0, 1);
    }
    out.push_back(std::move(wg));

    Series off = copy_series("coalescing.offset", {"offset", "elements"}, "B[i] = A[i + k], largest group");
    for (uint32_t k = 0; k <= kMaxOffset; ++k) {
      if ((quick || budget.exhausted()) && k > 4 && k != 8 && k != 16 && k != 31 && k != 32) continue;
      measure_point(off, k, max_wg_, k, 1);
    }
    out.push_back(std::move(off));

    Series str = copy_series("coalescing.stride", {"stride", "elements"}, "B[i] = A[i * m], largest group");
    for (uint32_t m = 1; m <= max_stride_; ++m) {
      if ((quick || budget.exhausted()) && std::popcount(m) != 1 && m != 3 && m != 6 && m != 12 && m != 24 &&
          m != 48)
        continue;
      measure_point(str, m, max_wg_, 0, m);
    }
    str.meta["wall_s"] = budget.elapsed_s();
    out.push_back(std::move(str));
    return out;
  }

 private:
  Series copy_series(const std::string& id, Axis x, const std::string& pattern) const {
    return make_series(id, "coalescing", std::move(x), {"throughput", "GB/s"},
                       {{"kernel", "coalescing/copy"},
                        {"pattern", pattern},
                        {"elements", count_},
                        {"element_bytes", 4},
                        {"bytes_per_element_counted", 8},
                        {"max_workgroup_size", max_wg_}});
  }

  // Elements copied per launch: 128 MiB of B on a GPU (8 MiB on a CPU, 2 MiB
  // quick), fewer when the device cannot hold the strided source.
  void allocate() {
    const bool cpu = info_.type == "cpu";
    size_t count = cpu ? (ctx_.options.quick ? (512u << 10) : (2u << 20)) : (32u << 20);
    size_t cap = info_.max_alloc_bytes ? info_.max_alloc_bytes : SIZE_MAX;
    if (info_.global_mem_bytes) cap = std::min<size_t>(cap, info_.global_mem_bytes / 4);
    max_stride_ = kMaxStride;
    while (count > 4096 && (count * max_stride_ + kMaxOffset) * 4 > cap) count /= 2;
    while ((count * max_stride_ + kMaxOffset) * 4 > cap && max_stride_ > 1) max_stride_ /= 2;
    for (;;) {
      try {
        const size_t a_elems = count * max_stride_ + kMaxOffset;
        a_ = dev_.create_buffer(a_elems * 4);
        b_ = dev_.create_buffer(count * 4);
        a_elems_ = a_elems;
        break;
      } catch (const OutOfResources&) {
        a_.reset();
        if (count <= 4096) throw OutOfResources("coalescing: could not allocate the copy's source");
        count /= 2;
      }
    }
    count_ = count;
    const size_t grid = std::min<size_t>(count_, size_t{1} << 20);
    const size_t local = std::min<size_t>(64, fill_->max_work_group_size());
    const KernelArg args[] = {a_.get(), static_cast<uint64_t>(a_elems_), kSeed};
    dev_.launch(*fill_, Range::d1((grid + local - 1) / local * local), Range::d1(local), args);
  }

  double copy(size_t wg, uint32_t offset, uint32_t stride) {
    const size_t global = (count_ + wg - 1) / wg * wg;
    const KernelArg args[] = {a_.get(), b_.get(), offset, stride, static_cast<uint32_t>(count_)};
    return dev_.launch(*copy_, Range::d1(global), Range::d1(wg), args);
  }

  std::vector<size_t> check_starts() {
    const size_t last = count_ > kCheckElems ? count_ - kCheckElems : 0;
    return {0, static_cast<size_t>(rng_.next() % (last + 1)), last};
  }

  // Measures one configuration; x is the series' x for it.
  void measure_point(Series& s, double x, size_t wg, uint32_t offset, uint32_t stride) {
    const auto starts = check_starts();
    const size_t len = std::min(kCheckElems, count_);
    const std::vector<uint32_t> sentinel(len, kSentinel);
    for (size_t st : starts) dev_.write_values<uint32_t>(*b_, sentinel, st);

    const Measurement m = measure(
        [&](uint64_t launches) {
          double ns = 0;
          for (uint64_t i = 0; i < launches; ++i) ns += copy(wg, offset, stride);
          return ns;
        },
        1, 2000, hc_);

    for (size_t st : starts) {
      const auto got = dev_.read_values<uint32_t>(*b_, len, st);
      for (size_t j = 0; j < len; ++j) {
        const size_t i = st + j;
        const uint32_t want = coalescing_twin::value(static_cast<uint32_t>(i * stride + offset), kSeed);
        if (got[j] != want)
          throw ValidationError(
              fmt::format("coalescing: B[{}] = {:#x} after copy with offset {} stride {} "
                          "group {}, expected {:#x}",
                          i, got[j], offset, stride, wg, want));
      }
    }

    const double bytes = 8.0 * static_cast<double>(count_);
    const double y = add_rate_point(s, x, m.ns_per_unit, bytes);  // GB/s = B/ns
    ctx_.progress(fmt::format("{} {:>5} {:9.1f} GB/s ({} samples, {:.1f} ms)", s.id, x, y, m.ns_per_unit.size(),
                              m.launch_ms));
  }

  ProbeContext& ctx_;
  Device& dev_;
  const DeviceInfo& info_;
  HarnessConfig hc_;
  Kernel* fill_ = nullptr;
  Kernel* copy_ = nullptr;
  size_t max_wg_ = 1;
  size_t count_ = 0;
  size_t a_elems_ = 0;
  uint32_t max_stride_ = kMaxStride;
  std::unique_ptr<Buffer> a_, b_;
  SplitMix64 rng_{0xc0a1e5ceULL};
};

}  // namespace

std::vector<Series> run_coalescing_probe(ProbeContext& ctx) { return CoalescingProbe(ctx).run(); }

}  // namespace gpuscope
