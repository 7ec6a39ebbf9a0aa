// Sim family `local` (src/kernels/opencl/local.cl): local_chase / global_chase (one work-item walks a
// cycle of byte offsets), local_read / global_read (conflict-free reads of a
// window, summed per work-item) and local_touch (the allocation test).
//
// Semantics: the OpenCL C's results. The chases end where the cycle takes
// them after rounds x 16 hops (the walk is indexed once, so a launch of
// billions of hops costs O(slots)); the reads' sums come from the window's
// per-vector word sums, the round bases being periodic (r x stride mod N).
// A launch whose local allocations exceed the description's
// local_memory.bytes_per_work_group is refused with DeviceError, as a
// driver refuses it (CL_OUT_OF_RESOURCES).
//
// Time:
// - latency: global chase hops at the hit latency of the first load/store
//   level that holds the footprint (DRAM past them all); local hops at
//   local_memory.latency_ns when the description puts local memory on chip,
//   else exactly the global path's latency (backed by ordinary memory
//   through the load/store cache, the Mali-G52 article on Mali Bifrost).
// - bandwidth: global reads stream through the load/store levels down to
//   the one holding the window, the slowest setting the rate (per-core
//   levels once per core); local reads at local_memory.bytes_per_clock per
//   core (the description's measured local rate: on Bifrost the load/store
//   cache serves local float4 reads at 32 B/clk against 16 for buffers).
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"
#include "kernels/local_twin.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace gpuscope::sim {
namespace {

constexpr uint32_t kHopsPerRound = 16;  // X16 in local.cl

void check_local(SimLaunch& l, size_t bytes) {
  const uint64_t limit = l.config().local.bytes_per_work_group;
  if (bytes > limit)
    throw DeviceError(
        fmt::format("sim: {} B of local memory exceeds the device's {} B per work-group (launch "
                    "refused, CL_OUT_OF_RESOURCES)",
                    bytes, limit));
}

// Dependent-load latency of the load/store path at a footprint.
double global_latency_ns(const SimConfig& c, double footprint) {
  for (const CacheLevelConfig* lv : c.path_levels(CachePath::load_store))
    if (footprint <= static_cast<double>(lv->capacity_bytes)) return lv->hit_latency_ns;
  return c.dram_latency_ns;
}

double local_latency_ns(const SimConfig& c, double footprint) {
  return c.local.on_chip ? c.local.latency_ns : global_latency_ns(c, footprint);
}

// Streaming rate (GB/s) of the load/store path at a footprint, as the
// bandwidth family models it with every core busy.
double global_stream_gbps(const SimConfig& c, double footprint) {
  double gbps = INFINITY;
  for (const CacheLevelConfig* lv : c.path_levels(CachePath::load_store)) {
    gbps = std::min(gbps, lv->bytes_per_clock * c.clock_ghz() * (lv->per_core ? c.core.shader_cores : 1));
    if (footprint <= static_cast<double>(lv->capacity_bytes)) return gbps;
  }
  return std::min(gbps, c.dram_bandwidth_gbps);
}

// Where a walk of `hops` over next-offsets (bytes) from offset 0 ends.
uint32_t walk_end(const std::vector<uint32_t>& words, uint64_t hops, const char* what) {
  std::vector<int64_t> seen(words.size(), -1);
  std::vector<uint32_t> path;
  uint32_t p = 0;
  for (uint64_t h = 0;; ++h) {
    if (p % 4 != 0 || p / 4 >= words.size())
      throw DeviceError(fmt::format("sim: local {} follows an offset outside its memory", what));
    if (h == hops) return p;
    if (seen[p / 4] >= 0) {
      // A cycle from seen[p/4] with period h - seen: index it.
      const uint64_t start = static_cast<uint64_t>(seen[p / 4]), period = h - start;
      return path[start + (hops - start) % period];
    }
    seen[p / 4] = static_cast<int64_t>(h);
    path.push_back(p);
    p = words[p / 4];
  }
}

// local_chase(next, n, rounds, end, __local l)
double local_chase(SimLaunch& l) {
  const SimBuffer& next = l.buffer(0);
  const uint32_t n = l.u32(1), rounds = l.u32(2);
  SimBuffer& end = l.buffer(3);
  const size_t lbytes = l.local_bytes();
  check_local(l, lbytes);
  if (uint64_t{n} * 4 > lbytes || uint64_t{n} * 4 > next.size_bytes())
    throw DeviceError("sim: local local_chase copies past its memory");
  const uint64_t hops = uint64_t{rounds} * kHopsPerRound;
  // Local memory beyond the n copied words is undefined; the walk may not go there.
  end.store<uint32_t>(0, walk_end(next.load_all<uint32_t>(n), hops, "local_chase"));
  const auto& c = l.config();
  return static_cast<double>(hops) * local_latency_ns(c, 4.0 * n) +
         static_cast<double>(n) * global_latency_ns(c, 4.0 * n);  // the copy-in: one load each
}

// global_chase(g, rounds, end)
double global_chase(SimLaunch& l) {
  const SimBuffer& g = l.buffer(0);
  const uint32_t rounds = l.u32(1);
  SimBuffer& end = l.buffer(2);
  const uint64_t hops = uint64_t{rounds} * kHopsPerRound;
  const auto words = g.load_all<uint32_t>(g.size_bytes() / 4);
  end.store<uint32_t>(0, walk_end(words, hops, "global_chase"));
  return static_cast<double>(hops) * global_latency_ns(l.config(), static_cast<double>(g.size_bytes()));
}

struct ReadShape {
  int vec = 1;
  uint32_t wg = 0, m = 0, n = 0;  // N = M x WG vectors
};

ReadShape read_shape(SimLaunch& l) {
  ReadShape s;
  s.vec = static_cast<int>(l.spec().integer("vec", 1));
  if (s.vec != 1 && s.vec != 2 && s.vec != 4) throw DeviceError("sim: local needs VEC 1, 2 or 4");
  const long long wg = l.spec().integer("wg", 0), m = l.spec().integer("m", 0);
  if (wg <= 0 || m <= 0) throw DeviceError("sim: local read kernels need the wg and m parameters");
  s.wg = static_cast<uint32_t>(wg);
  s.m = static_cast<uint32_t>(m);
  s.n = s.m * s.wg;
  if (l.local().total() != s.wg)  // reqd_work_group_size(WG, 1, 1)
    throw DeviceError(fmt::format("sim: local read kernels require work-groups of {}", s.wg));
  return s;
}

// Every work-item's sum: rounds x M loads of window vectors h[(base_r + lid
// + m WG)], base_r = (r stride) mod N, h = per-vector word sums of the
// memory read (index < 2N). Bases repeat with period N / gcd(stride, N).
std::vector<uint32_t> read_sums(const ReadShape& s, const std::vector<uint32_t>& h, uint32_t rounds,
                                uint32_t stride, size_t groups) {
  const uint64_t period = s.n / std::gcd<uint64_t>(stride % s.n, s.n);
  std::vector<uint32_t> one(s.wg, 0);
  for (uint64_t r = 0; r < std::min<uint64_t>(period, rounds); ++r) {
    const uint64_t base = (r * stride) % s.n;
    // Rounds with this base: r, r + period, ... below rounds.
    const auto times = static_cast<uint32_t>((rounds - 1 - r) / period + 1);
    for (uint32_t lid = 0; lid < s.wg; ++lid) {
      uint32_t sum = 0;
      for (uint32_t m = 0; m < s.m; ++m) sum += h[base + lid + uint64_t{m} * s.wg];
      one[lid] += times * sum;
    }
  }
  std::vector<uint32_t> out;
  out.reserve(groups * s.wg);
  for (size_t g = 0; g < groups; ++g) out.insert(out.end(), one.begin(), one.end());
  return out;
}

std::vector<uint32_t> vector_sums(const SimBuffer& b, const ReadShape& s, uint64_t vectors, bool wrap_n) {
  const uint64_t stored = wrap_n ? s.n : vectors;
  if (stored * s.vec * 4 > b.size_bytes()) throw DeviceError("sim: local reads past its buffer");
  const auto words = b.load_all<uint32_t>(stored * s.vec);
  std::vector<uint32_t> h(vectors, 0);
  for (uint64_t i = 0; i < vectors; ++i)
    for (int k = 0; k < s.vec; ++k) h[i] += words[(i % stored) * s.vec + k];
  return h;
}

// local_read(src, rounds, stride, sums, __local lmem): lmem[i] = src[i % N], i < 2N.
double local_read(SimLaunch& l) {
  const ReadShape s = read_shape(l);
  const SimBuffer& src = l.buffer(0);
  const uint32_t rounds = l.u32(1), stride = l.u32(2);
  SimBuffer& sums = l.buffer(3);
  const size_t lbytes = l.local_bytes();
  check_local(l, lbytes);
  if (uint64_t{2} * s.n * s.vec * 4 > lbytes) throw DeviceError("sim: local local_read writes past lmem");
  const size_t groups = l.global().total() / s.wg;
  const auto out = read_sums(s, vector_sums(src, s, 2 * uint64_t{s.n}, true), rounds, stride, groups);
  if (out.size() * 4 > sums.size_bytes()) throw DeviceError("sim: local sums buffer too small");
  sums.write(0, std::as_bytes(std::span<const uint32_t>(out)));
  const auto& c = l.config();
  const double window = static_cast<double>(s.n) * s.vec * 4;
  const double bytes = static_cast<double>(groups) * rounds * window;
  const double gbps = c.local.bytes_per_clock * c.clock_ghz() * c.core.shader_cores;
  // The fill: 2N vectors per group from global memory.
  const double fill = static_cast<double>(groups) * 2 * window / global_stream_gbps(c, window);
  return bytes / gbps + fill;
}

// global_read(win, rounds, stride, sums)
double global_read(SimLaunch& l) {
  const ReadShape s = read_shape(l);
  const SimBuffer& win = l.buffer(0);
  const uint32_t rounds = l.u32(1), stride = l.u32(2);
  SimBuffer& sums = l.buffer(3);
  const size_t groups = l.global().total() / s.wg;
  const auto out = read_sums(s, vector_sums(win, s, 2 * uint64_t{s.n}, false), rounds, stride, groups);
  if (out.size() * 4 > sums.size_bytes()) throw DeviceError("sim: local sums buffer too small");
  sums.write(0, std::as_bytes(std::span<const uint32_t>(out)));
  const double window = static_cast<double>(s.n) * s.vec * 4;
  const double bytes = static_cast<double>(groups) * rounds * window;
  return bytes / global_stream_gbps(l.config(), 2 * window);
}

// local_touch(words, sums, __local l)
double local_touch(SimLaunch& l) {
  const uint32_t words = l.u32(0);
  SimBuffer& sums = l.buffer(1);
  const size_t lbytes = l.local_bytes();
  check_local(l, lbytes);
  if (uint64_t{words} * 4 > lbytes) throw DeviceError("sim: local local_touch writes past its memory");
  const size_t items = l.global().total();
  const size_t lsz = l.local().total() ? l.local().total() : items;
  if (items * 4 > sums.size_bytes()) throw DeviceError("sim: local sums buffer too small");
  std::vector<uint32_t> out(items, 0);
  for (size_t gid = 0; gid < items; ++gid) {
    const size_t lid = gid % lsz;
    uint32_t s = 0;
    for (uint64_t i = lsz - 1 - lid; i < words; i += lsz) s += local_twin::touch_word(static_cast<uint32_t>(i));
    out[gid] = s;
  }
  sums.write(0, std::as_bytes(std::span<const uint32_t>(out)));
  const auto& c = l.config();
  return 2.0 * words * 4 / (c.local.bytes_per_clock * c.clock_ghz()) + c.local.latency_ns;
}

}  // namespace

void register_sim_family_local(FamilyTable& table) {
  table.add({"local", "local_chase", 1, local_chase});
  table.add({"local", "global_chase", 1, global_chase});
  table.add({"local", "local_read", 0, local_read});
  table.add({"local", "global_read", 0, global_read});
  table.add({"local", "local_touch", 0, local_touch});
}

}  // namespace gpuscope::sim
