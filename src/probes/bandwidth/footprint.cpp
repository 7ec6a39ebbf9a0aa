#include "probes/bandwidth/bandwidth_probe.hpp"

#include "core/error.hpp"
#include "core/random.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <numeric>

namespace gpuscope::bandwidth_probe {

// n: footprint per array in vectors, rounded down to whole steps. The
// groups' starts are n/W apart in whole granules, dealt out in a random
// order so that the groups a compute unit happens to run do not start
// side by side.
BandwidthProbe::Walk BandwidthProbe::make_walk(const Shape& s, uint64_t n) {
  Walk w;
  w.shape = s;
  const uint64_t step = s.step_vectors();
  w.n = n / step * step;
  if ((w.n + step) * s.vec_bytes() > max_fp_ + kSlackBytes)
    throw DeviceError("bandwidth: a walk would leave its buffer");
  std::vector<uint32_t> order(s.groups);
  std::iota(order.begin(), order.end(), 0u);
  SplitMix64 rng(0xd1ce + s.groups);
  for (size_t i = s.groups; i > 1; --i) std::swap(order[i - 1], order[rng.below(static_cast<uint32_t>(i))]);
  const uint64_t vec_per_granule = std::max<uint64_t>(1, kGranuleBytes / s.vec_bytes());
  const uint64_t n_gran = w.n / vec_per_granule;
  w.r.resize(s.groups);
  w.b.resize(s.groups);
  for (size_t g = 0; g < s.groups; ++g) {
    const uint64_t pos = order[g] * n_gran / s.groups * vec_per_granule;
    w.r[g] = static_cast<uint32_t>(pos % step);
    w.b[g] = static_cast<uint32_t>(pos - pos % step);
  }
  if (!starts_ || starts_->size_bytes() < s.groups * 4) starts_ = dev_.create_buffer(s.groups * 4);
  const size_t items = s.groups * s.local;
  if (!sums_ || sums_->size_bytes() < items * 4) sums_ = dev_.create_buffer(items * 4);
  return w;
}

double BandwidthProbe::launch(const Access& a, Walk& w, uint64_t steps) {
  const Shape& s = w.shape;
  const uint64_t count64 = steps * s.step_vectors();
  if (count64 > UINT32_MAX) throw DeviceError("bandwidth: a launch's walk exceeds 2^32 vectors");
  const auto count = static_cast<uint32_t>(count64);
  const auto n = static_cast<uint32_t>(w.n);
  std::vector<uint32_t> start(s.groups);
  for (size_t g = 0; g < s.groups; ++g) start[g] = w.r[g] + w.b[g];
  dev_.write_values<uint32_t>(*starts_, start);
  Kernel& k = kernel(a, s.vec, s.unroll);
  const Range global = Range::d1(s.groups * s.local), local = Range::d1(s.local);
  ++launches_;
  const double ns = launch_args(a, k, global, local, n, 0, count);
  w.last_b = w.b;
  w.last_count = count;
  check(a, w);
  for (auto& b : w.b) b = static_cast<uint32_t>((b + count64) % w.n);
  return ns;
}

void BandwidthProbe::check(const Access& a, const Walk& w) {
  const Shape& s = w.shape;
  const uint64_t vb = s.vec_bytes();
  const uint64_t n_gran = w.n * vb / kGranuleBytes;
  const uint64_t count_gran = w.last_count * vb / kGranuleBytes;
  if (a.reads_only()) {
    const uint32_t sum = device_read_sum(s);
    uint32_t want = 0;
    for (size_t g = 0; g < s.groups; ++g)
      want +=
          circular_sum(w.r[g] * vb / kGranuleBytes, n_gran, w.last_b[g] * vb / kGranuleBytes, count_gran);
    if (sum != want)
      throw ValidationError(
          fmt::format("bandwidth: read sums add up to {:#x}, the host expects {:#x} ({}, {} B)", sum, want,
                      shape_text(s), w.n * vb));
    return;
  }
  // Write and copy: a few granules of the last launch's walk, read back.
  SplitMix64 rng(launches_);
  for (int i = 0; i < 3; ++i) {
    const size_t g = rng.below(static_cast<uint32_t>(s.groups));
    const uint64_t j = rng.below(static_cast<uint32_t>(std::min<uint64_t>(count_gran, UINT32_MAX)));
    const uint64_t gran = w.r[g] * vb / kGranuleBytes + (w.last_b[g] * vb / kGranuleBytes + j) % n_gran;
    check_granule(a, gran, s, w.n);
  }
}

// Streams the largest footprint until the device has been busy ~0.3 s
// (0.1 s in quick mode): GPUs idle at a low clock and take a few hundred
// milliseconds to reach their boost clock; the first points would
// otherwise read low.
void BandwidthProbe::warm_clock(const Shape& s) {
  Walk w = make_walk(s, max_fp_ / s.vec_bytes());
  const double want_ns = (quick_ ? 0.1 : 0.3) * 1e9;
  double busy = 0;
  uint64_t steps = 16;
  for (int i = 0; i < 200 && busy < want_ns; ++i) {
    const double t = launch(kRead, w, steps);
    busy += t;
    if (t < 5e6) steps *= 2;
  }
}

// Measures one point and adds it to `series` at `x`: GB/s per sample.
void BandwidthProbe::measure_into(Series& series, const Access& a, const Shape& wanted, size_t footprint_bytes,
                                  double x) {
  Shape s = wanted;
  const size_t kernel_max = kernel(a, s.vec, s.unroll).max_work_group_size();
  if (kernel_max < 16)
    throw Unsupported("bandwidth: the device runs these kernels only in work-groups below 16");
  s.local = std::min(s.local, std::bit_floor(kernel_max));
  Walk w = make_walk(s, footprint_bytes / a.arrays() / s.vec_bytes());
  if (w.n == 0) return;  // footprint smaller than one step: not measurable with this shape
  const uint64_t steps_per_pass = w.n / s.step_vectors();
  // Copy checks against the source: first overwrite the destination with
  // the write pattern, so stale copies from an earlier point cannot pass.
  if (a.copies()) {
    Walk scrub = make_walk(s, w.n);
    launch(kWrite, scrub, (steps_per_pass + s.groups - 1) / s.groups);
  }
  // Initial work: one pass over the footprint shared among the groups.
  const uint64_t initial = std::max<uint64_t>(1, steps_per_pass / s.groups);
  const uint64_t max_steps = UINT32_MAX / s.step_vectors();
  const Measurement m =
      measure([&](uint64_t steps) { return launch(a, w, steps); }, initial, max_steps, hc_);
  const double bytes_per_step = bytes_moved(a, s.groups, s.step_vectors(), s.vec_bytes());
  const double y = add_rate_point(series, x, m.ns_per_unit, bytes_per_step);
  series.meta["detail"].push_back(
      {{"x", x},
       {"kernel", a.kernel},
       {"vec", s.vec},
       {"unroll", s.unroll},
       {"local", s.local},
       {"groups", s.groups},
       {"footprint_bytes", footprint_bytes},
       {"bytes_per_launch", bytes_per_step * static_cast<double>(m.work_per_launch)},
       {"launch_ms", m.launch_ms},
       {"outliers", m.summary.outliers}});
  ctx_.progress(fmt::format("{} {:>10.1f} KiB  {:9.1f} GB/s  ({})", series.id,
                            static_cast<double>(footprint_bytes) / kKiB, y, shape_text(s)));
}

}  // namespace gpuscope::bandwidth_probe
