#include "probes/bandwidth/bandwidth_probe.hpp"

#include "core/error.hpp"
#include "core/random.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace gpuscope::bandwidth_probe {

double BandwidthProbe::launch_stream(const Access& a, Stream& st, uint64_t steps) {
  const Shape& s = st.shape;
  const uint64_t step = s.step_vectors() * s.groups;
  const uint64_t count64 = steps * step;
  if (count64 > UINT32_MAX) throw DeviceError("bandwidth: a launch's stream exceeds 2^32 vectors");
  if (st.grid && count64 > st.n) throw DeviceError("bandwidth: a whole-grid launch exceeds its footprint");
  const auto count = static_cast<uint32_t>(count64);
  const auto n = static_cast<uint32_t>(st.n);
  const auto first = static_cast<uint32_t>(st.first);
  Kernel& k = kernel(a, s.vec, s.unroll);
  const Range global = Range::d1(st.grid ? count64 : s.groups * s.local), local = Range::d1(s.local);
  ++launches_;
  const double ns = launch_args(a, k, global, local, n, first, count);
  st.last_first = st.first;
  st.last_count = count64;
  check_stream(a, st);
  st.first = (st.first + count64) % st.n;
  return ns;
}

// The stream's last launch walked vectors [first, first + count) mod n of
// each array: the read sums must add up to that range's words; written
// or copied granules are sampled from it.
void BandwidthProbe::check_stream(const Access& a, const Stream& st) {
  const Shape& s = st.shape;
  const uint64_t vb = s.vec_bytes();
  const uint64_t n_gran = st.n * vb / kGranuleBytes;
  const uint64_t first_gran = st.last_first * vb / kGranuleBytes;
  const uint64_t count_gran = st.last_count * vb / kGranuleBytes;
  if (a.reads_only()) {
    const uint32_t sum = device_read_sum(s);
    const uint32_t want = circular_sum(0, n_gran, first_gran, count_gran);
    if (sum != want)
      throw ValidationError(
          fmt::format("bandwidth: read_stream sums add up to {:#x}, the host expects {:#x} "
                      "({}, {} B)",
                      sum, want, shape_text(s), st.n * vb));
    return;
  }
  SplitMix64 rng(launches_);
  for (int i = 0; i < 3; ++i) {
    const uint64_t j = rng.below(static_cast<uint32_t>(std::min<uint64_t>(count_gran, UINT32_MAX)));
    check_granule(a, (first_gran + j) % n_gran, s, st.n);
  }
}

std::vector<std::pair<int, int>> stream_shapes(bool quick, bool grid) {
  if (grid) return quick ? std::vector<std::pair<int, int>>{{4, 1}} : std::vector<std::pair<int, int>>{{2, 1}, {4, 1}};
  return quick ? std::vector<std::pair<int, int>>{{4, 1}, {4, 4}}
               : std::vector<std::pair<int, int>>{{4, 1}, {4, 2}, {4, 4}, {4, 8}, {16, 4}};
}

// One stream kernel at the largest footprint in a few shapes: x = bytes
// each work-item has in flight per step (vector bytes x unroll). uint4 at
// 1..8 accesses per work-item, and uint16 x 4 (does a wider access, which
// covers only part of each line per instruction, cost stores?). Groups as
// the footprint sweeps: 8 per compute unit of 256 (on the H200 2048
// work-items per SM, its full occupancy).
//
// grid: the whole-grid layout instead (write_grid, copy_grid), one vector
// per work-item, uint2 and uint4 (whole lines per warp instruction); a
// step is one vector for each of `groups` groups, a launch at most one
// pass over the footprint (~1 ms on the H200: still ~200x the launch
// overhead).
Series BandwidthProbe::stream_sweep(const Access& a, const Shape& base, bool grid) {
  const std::string what = std::string(a.kernel).substr(0, std::string(a.kernel).find('_'));
  Series series =
      bandwidth_series((grid ? "bandwidth.grid." : "bandwidth.stream.") + what, "bytes_per_item", "B");
  series.meta["footprint_bytes"] = max_fp_ * a.arrays();
  series.meta["footprint"] = "bytes the stream covers in all arrays the kernel touches";
  series.meta["layout"] =
      grid ? "whole grid: one vector per work-item, groups in address order, a grid as large as the launch"
           : "grid-stride: each step the whole grid covers one contiguous stretch of unroll x global-size "
             "vectors";
  for (const auto& [vec, unroll] : stream_shapes(quick_, grid)) {
    Shape s = base;
    s.vec = vec;
    s.unroll = unroll;
    const size_t kernel_max = kernel(a, s.vec, s.unroll).max_work_group_size();
    if (kernel_max < 16)
      throw Unsupported("bandwidth: the device runs these kernels only in work-groups below 16");
    s.local = std::min(s.local, std::bit_floor(kernel_max));
    Stream st;
    st.shape = s;
    st.grid = grid;
    const uint64_t step = s.step_vectors() * s.groups;
    st.n = max_fp_ / s.vec_bytes() / step * step;
    if (st.n == 0 || st.n > UINT32_MAX) continue;
    if (!sums_ || sums_->size_bytes() < s.groups * s.local * 4)
      sums_ = dev_.create_buffer(s.groups * s.local * 4);
    const uint64_t steps_per_pass = st.n / step;
    if (a.arrays_read > 0 && a.arrays_written > 0) {  // stale copies from earlier points must not pass
      Stream scrub = st;
      launch_stream(grid ? kWriteGrid : kWriteStream, scrub, steps_per_pass);
    }
    const uint64_t max_steps = grid ? steps_per_pass : UINT32_MAX / step;
    const Measurement m = measure([&](uint64_t steps) { return launch_stream(a, st, steps); },
                                  std::min(steps_per_pass, max_steps), max_steps, hc_);
    const double bytes_per_step = bytes_moved(a, 1, step, s.vec_bytes());
    const double x = static_cast<double>(s.vec_bytes()) * s.unroll;
    const double y = add_rate_point(series, x, m.ns_per_unit, bytes_per_step);
    series.meta["detail"].push_back(
        {{"x", x},
         {"kernel", a.kernel},
         {"layout", "stream"},
         {"vec", s.vec},
         {"unroll", s.unroll},
         {"local", s.local},
         {"groups", s.groups},
         {"footprint_bytes", st.n * s.vec_bytes() * a.arrays()},
         {"bytes_per_launch", bytes_per_step * static_cast<double>(m.work_per_launch)},
         {"launch_ms", m.launch_ms},
         {"outliers", m.summary.outliers}});
    ctx_.progress(fmt::format(
        "{} {:>10.1f} KiB  {:9.1f} GB/s  ({})", series.id,
        static_cast<double>(st.n * s.vec_bytes() * a.arrays()) / kKiB, y,
        grid ? fmt::format("uint{}, one per work-item, whole grid in groups of {}", s.vec, s.local)
             : shape_text(s)));
  }
  return series;
}

}  // namespace gpuscope::bandwidth_probe
