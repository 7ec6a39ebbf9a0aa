#include "probes/bandwidth/bandwidth_probe.hpp"

#include "core/error.hpp"
#include "core/random.hpp"
#include "kernels/bandwidth_twin.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

namespace gpuscope {
namespace bandwidth_probe {

namespace {
size_t max_local_of(const DeviceInfo& info) {
  return std::bit_floor<size_t>(info.max_work_group_size ? info.max_work_group_size : 256);
}
}  // namespace

std::string shape_text(const Shape& s) {
  return fmt::format("uint{} x{} unrolled, {} groups of {}",
                     s.vec == 1 ? std::string() : std::to_string(s.vec), s.unroll, s.groups, s.local);
}

BandwidthProbe::BandwidthProbe(ProbeContext& ctx) : ctx_(ctx), dev_(ctx.device), info_(dev_.info()) {
  cpu_ = info_.type == "cpu";
  quick_ = ctx.options.quick;
  // Launches of ~5 ms and 3..7 samples: a bandwidth point is a steady
  // stream, its samples agree to ~1%, and the probe has ~100 points to
  // take in a few seconds. Still ~10^5 x the launch overhead per launch.
  hc_ = ctx.options.harness;
  hc_.target_launch_ms = std::min(hc_.target_launch_ms, 5.0);
  hc_.min_samples = std::min(hc_.min_samples, 3);
  hc_.max_samples = std::min(hc_.max_samples, 7);
  allocate();
}

std::vector<Series> BandwidthProbe::run() {
  TimeBudget budget = ctx_.budget();
  const size_t cus = std::max<uint32_t>(1, info_.compute_units);
  Shape base;
  base.local = base_local(info_);
  base.groups = cus * (cpu_ ? 4 : 8);

  if (!cpu_) warm_clock(base);

  std::vector<Series> out;
  // Vector width at a footprint inside the first cache (the largest step of
  // the widest vector: 64 KiB on a GPU) and at the largest footprint.
  const std::vector<int> widths = vector_widths(quick_);
  Shape widest = base;
  widest.vec = 16;
  const size_t small_fp = widest.step_bytes();
  Series vec_cache = bandwidth_series("bandwidth.vector_width.cache", "vector_width", "words");
  Series vec_dram = bandwidth_series("bandwidth.vector_width.dram", "vector_width", "words");
  vec_cache.meta["footprint_bytes"] = small_fp;
  vec_dram.meta["footprint_bytes"] = max_fp_;
  for (int w : widths) {
    Shape s = base;
    s.vec = w;
    measure_into(vec_cache, kRead, s, small_fp, w);
    measure_into(vec_dram, kRead, s, max_fp_, w);
  }
  // The width used for the footprint sweeps: the narrowest whose geometric
  // mean of the two rates is within 3% of the best one's. The smallest
  // footprint a sweep can take is one group's step (UNROLL x local size
  // vectors): 32 KiB at 16 words and 128 work-items, which leaves no point
  // inside a phone's 16-32 KiB first cache when wider vectors gain
  // nothing there (Adreno's); where width matters (the H100: 4 words, 12%
  // ahead of 2) the best stays.
  int best = 4;
  {
    double best_score = 0;
    std::vector<std::pair<int, double>> scores;
    for (size_t i = 0; i < vec_cache.points.size() && i < vec_dram.points.size(); ++i) {
      const double score = std::sqrt(vec_cache.points[i].y * vec_dram.points[i].y);
      scores.emplace_back(static_cast<int>(vec_cache.points[i].x), score);
      best_score = std::max(best_score, score);
    }
    std::sort(scores.begin(), scores.end());
    for (const auto& [w, score] : scores)
      if (score >= 0.97 * best_score) {
        best = w;
        break;
      }
  }
  base.vec = best;
  out.push_back(vec_cache);
  out.push_back(vec_dram);

  // Loads in flight per work-item, streaming from the largest footprint.
  if (!quick_ && budget.remaining_s() > 0.5 * budget.total_s()) {
    Series unroll = bandwidth_series("bandwidth.unroll.dram", "unroll", "loads");
    unroll.meta["footprint_bytes"] = max_fp_;
    for (int u : kUnrolls) {
      Shape s = base;
      s.unroll = u;
      measure_into(unroll, kRead, s, max_fp_, u);
    }
    out.push_back(unroll);
  }

  // Footprint sweeps: two points per octave (one in quick mode) from the
  // smallest footprint the step allows to the largest allocated.
  for (const Access* a : kFootprintAccesses) {
    Series s = bandwidth_series(std::string("bandwidth.") + a->kernel, "footprint", "B");
    s.meta["footprint"] =
        "bytes the walk covers in all arrays the kernel touches (copy: source + destination)";
    const size_t granule = base.step_bytes() * a->arrays();
    // Quick mode (CI on a 2-core VM): read at one point per octave, write
    // and copy at one per two octaves.
    const double ratio = quick_ ? (a->reads_only() ? 2.0 : 4.0) : std::sqrt(2.0);
    for (double f = static_cast<double>(std::max<size_t>(granule, 4 * kKiB));
         f <= static_cast<double>(max_fp_) * 1.0001; f *= ratio) {
      const size_t fp = std::max<size_t>(granule, static_cast<size_t>(std::llround(f / granule)) * granule);
      if (fp > max_fp_) break;
      if (!s.points.empty() && s.points.back().x == static_cast<double>(fp)) continue;
      measure_into(s, *a, base, fp, static_cast<double>(fp));
    }
    out.push_back(s);
  }

  // The grid-stride layout at the largest footprint, in a few shapes: the
  // analysis takes DRAM's read, write and copy rates as the best layout
  // measured there. Always run, like the footprint sweeps: ~15 points of
  // ~50 ms on a GPU.
  for (const Access* a : kStreamAccesses) out.push_back(stream_sweep(*a, base, false));
  for (const Access* a : kGridAccesses) out.push_back(stream_sweep(*a, base, true));

  // The work-group sweep, while the budget lasts (the footprint sweeps
  // above always run: they are what the cache matching needs).
  out.push_back(workgroup_sweep(base, cus, budget));
  for (auto& s : out) s.meta["probe_wall_s"] = budget.elapsed_s();
  out.front().meta["budget_s"] = budget.total_s();
  return out;
}

size_t BandwidthProbe::max_local() const { return max_local_of(info_); }

std::vector<int> vector_widths(bool quick) {
  return quick ? std::vector<int>{1, 4, 16} : std::vector<int>{1, 2, 4, 8, 16};
}

size_t base_local(const DeviceInfo& info) {
  return std::min<size_t>(info.type == "cpu" ? 64 : 256, max_local_of(info));
}

Kernel& BandwidthProbe::kernel(const Access& a, int vec, int unroll) const {
  return dev_.kernel({"bandwidth", a.kernel, {{"vec", vec}, {"unroll", unroll}}});
}

Series BandwidthProbe::bandwidth_series(const std::string& id, const std::string& xname,
                                        const std::string& xunit) {
  return make_series(id, "bandwidth", {xname, xunit}, {"bandwidth", "GB/s"},
                     {{"kernel", "bandwidth"}, {"detail", nlohmann::json::array()}});
}

void BandwidthProbe::allocate() {
  size_t want =
      cpu_ ? (quick_ ? 32 : 256) * kMiB : std::max<size_t>(size_t{4} << 30, 8 * info_.global_cache_bytes);
  if (info_.max_alloc_bytes < 2 * kMiB)
    throw OutOfResources("bandwidth: the device allows no 2 MiB buffer");
  want = std::min<size_t>(want, info_.max_alloc_bytes - kSlackBytes);
  if (info_.global_mem_bytes) want = std::min<size_t>(want, info_.global_mem_bytes / 4);
  want = std::bit_floor(want);
  for (size_t bytes = want; bytes >= 1 * kMiB; bytes /= 2) {
    try {
      src_ = dev_.create_buffer(bytes + kSlackBytes);
      dst_ = dev_.create_buffer(bytes + kSlackBytes);
      max_fp_ = bytes;
      break;
    } catch (const OutOfResources&) {
      src_.reset();
      dst_.reset();
    }
  }
  if (!src_) throw OutOfResources("bandwidth: could not allocate two 1 MiB buffers");

  // Random words: one block, written over the buffer as many times as it
  // takes (a repeat 256 MiB away gives a compressor nothing: compression
  // works on blocks of a few hundred bytes). Granule prefix sums of the
  // block for the read check.
  host_.resize(std::min(kBlockBytes, max_fp_ + kSlackBytes) / 4);
  SplitMix64 rng(0x5eed'ba4d'0000'0001ULL);
  for (size_t i = 0; i < host_.size(); i += 2) {
    const uint64_t r = rng.next();
    host_[i] = static_cast<uint32_t>(r);
    if (i + 1 < host_.size()) host_[i + 1] = static_cast<uint32_t>(r >> 32);
  }
  const size_t total_words = (max_fp_ + kSlackBytes) / 4;
  for (size_t w = 0; w < total_words; w += host_.size()) {
    const size_t len = std::min(host_.size(), total_words - w);
    dev_.write_values<uint32_t>(*src_, std::span<const uint32_t>(host_.data(), len), w);
  }
  prefix_.assign(host_.size() * 4 / kGranuleBytes + 1, 0);
  constexpr size_t words = kGranuleBytes / 4;
  for (size_t g = 0; g + 1 < prefix_.size(); ++g) {
    uint32_t sum = 0;
    for (size_t j = 0; j < words; ++j) sum += host_[g * words + j];
    prefix_[g + 1] = prefix_[g] + sum;
  }
}

uint32_t BandwidthProbe::host_word(uint64_t i) const { return host_[i % host_.size()]; }

uint32_t BandwidthProbe::prefix(uint64_t g) const {
  const uint64_t block = prefix_.size() - 1;
  return static_cast<uint32_t>(g / block) * prefix_[block] + prefix_[g % block];
}

uint32_t BandwidthProbe::circular_sum(uint64_t window, uint64_t n, uint64_t first, uint64_t count) const {
  const uint64_t full = count / n;
  const uint64_t rem = count % n;
  uint32_t sum = static_cast<uint32_t>(full) * (prefix(window + n) - prefix(window));
  const uint64_t a = window + first;
  if (first + rem <= n) return sum + (prefix(a + rem) - prefix(a));
  return sum + (prefix(window + n) - prefix(a)) + (prefix(window + first + rem - n) - prefix(window));
}

uint32_t BandwidthProbe::seed() const { return static_cast<uint32_t>(launches_ * 0x2545f491u + 0x1234567u); }

double BandwidthProbe::launch_args(const Access& a, Kernel& k, const Range& global, const Range& local,
                                   uint32_t n, uint32_t first, uint32_t count) {
  std::array<KernelArg, 5> args;
  for (size_t i = 0; i < a.arg_count; ++i) {
    switch (a.args[i]) {
      case Src: args[i] = src_.get(); break;
      case Dst: args[i] = dst_.get(); break;
      case N: args[i] = n; break;
      case Starts: args[i] = starts_.get(); break;
      case First: args[i] = first; break;
      case Count: args[i] = count; break;
      case Sums: args[i] = sums_.get(); break;
      case Seed: args[i] = seed(); break;
    }
  }
  return dev_.launch(k, global, local, std::span<const KernelArg>(args.data(), a.arg_count));
}

uint32_t BandwidthProbe::device_read_sum(const Shape& s) const {
  const auto got = dev_.read_values<uint32_t>(*sums_, s.groups * s.local);
  return std::accumulate(got.begin(), got.end(), uint32_t{0});
}

void BandwidthProbe::check_granule(const Access& a, uint64_t gran, const Shape& s, uint64_t n) {
  const uint64_t vb = s.vec_bytes();
  constexpr size_t words = kGranuleBytes / 4;
  const auto got = dev_.read_values<uint32_t>(*dst_, words, gran * words);
  std::vector<uint32_t> want(words);
  if (a.arrays_read > 0) {
    for (size_t k = 0; k < words; ++k) want[k] = host_word(gran * words + k);
  } else {
    const uint64_t first_vec = gran * kGranuleBytes / vb;
    uint32_t lanes[16];
    for (size_t v = 0; v * vb < kGranuleBytes; ++v) {
      const auto idx = static_cast<uint32_t>(first_vec + v);
      bandwidth_twin::splat(bandwidth_twin::vector_word(idx, seed()), s.vec, lanes);
      std::copy_n(lanes, s.vec, want.begin() + static_cast<std::ptrdiff_t>(v * s.vec));
    }
  }
  if (got != want)
    throw ValidationError(fmt::format("bandwidth: {} left wrong data at byte {} ({}, {} B per array)",
                                      a.kernel, gran * kGranuleBytes, shape_text(s), n * vb));
}

}  // namespace bandwidth_probe

std::vector<Series> run_bandwidth_probe(ProbeContext& ctx) {
  return bandwidth_probe::BandwidthProbe(ctx).run();
}

// The kernels the sweeps take at the base work-group size while 4 words
// (the default) stays the sweeps' width: reads at every width, loads in
// flight, the footprint sweeps and the stream layouts. Another width
// measured ahead, or a work-group size cut by a kernel's limit, is built
// when asked.
void build_bandwidth_ahead(Device& dev, const ProbeOptions& options) {
  using namespace bandwidth_probe;
  const DeviceInfo& info = dev.info();
  auto spec = [](const Access& a, int vec, int unroll) {
    return KernelSpec{"bandwidth", a.kernel, {{"vec", vec}, {"unroll", unroll}}};
  };
  std::vector<KernelSpec> specs;
  for (int w : vector_widths(options.quick)) specs.push_back(spec(kRead, w, 4));
  if (!options.quick)
    for (int u : kUnrolls) specs.push_back(spec(kRead, 4, u));
  for (const Access* a : kFootprintAccesses)
    if (a != &kRead) specs.push_back(spec(*a, 4, 4));
  for (const Access* a : kStreamAccesses)
    for (const auto& [vec, unroll] : stream_shapes(options.quick, false)) specs.push_back(spec(*a, vec, unroll));
  for (const Access* a : kGridAccesses)
    for (const auto& [vec, unroll] : stream_shapes(options.quick, true)) specs.push_back(spec(*a, vec, unroll));
  const size_t local = base_local(info);
  dev.build_ahead(specs, LaunchShape{Range::d1(local * std::max<uint32_t>(1, info.compute_units)), Range::d1(local)});
}

}  // namespace gpuscope
