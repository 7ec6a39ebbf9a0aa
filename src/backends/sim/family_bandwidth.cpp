// Sim family `bandwidth` (src/kernels/opencl/bandwidth.cl): `read`, `write` and `copy` walking each
// work-group's cursor around its window of n vectors (bandwidth.cl's header
// describes the walk); `read_stream`, `write_stream`, `copy_stream` (the
// grid-stride layout) and `write_grid`, `copy_grid` (one vector per
// work-item), modelled at the end of this file.
//
// Semantics: exactly the OpenCL C's results, computed without touching
// every vector where the result does not need it:
// - read: work-item lid's sum is the sum (mod 2^32) of the 32-bit words of
//   the vectors it loads, src[r + lid + k lsz + b_t] over its trips t. With
//   strided prefix sums Q[i] = HSUM(src[i]) + Q[i - S] (S = the step) over
//   the source, any run of trips is a difference of two Q's, so a launch
//   costs O(work-items) however far it walks. Q is memoised per source
//   buffer, step and vector width while the buffer is unchanged (its write
//   stamp), and extended as far as the walks reach. Where the prefix sums
//   would pass kMaxPrefixBytes of host memory (vectors of 4 or 8 B over
//   hundreds of MiB), the loads are summed one by one instead.
// - write and copy store what the kernel stores, vector by vector; a walk
//   longer than one pass over its window stores the same values again
//   (they depend on the index and the seed only; copy's source is another
//   buffer), so only the first pass is written, and a vector several
//   groups' walks store to is stored once. A copy also skips the ranges an
//   earlier copy between the same two unchanged buffers stored (copy_runs).
// Sums and stores work on the buffers' storage in place (SimBuffer::visit,
// ::fill), without a staging copy.
//
// Time: the launch's bytes (arrays x groups x count x vector bytes, the
// probe's own count) pass through every level down to the one that holds
// the footprint (arrays x n x vector bytes), nearest first on the load/store
// path, or through all of them to DRAM. Each level passed limits the rate:
// a shared level at bytes_per_clock x clock, a per-core level at that per
// core, where the busiest core carries ceil(groups / cores) of the groups'
// equal shares (so fewer groups than cores leave cores idle, and one group
// more than a multiple of the cores takes a second round), DRAM at its
// bandwidth. The slowest level sets the time. Streaming a footprint larger
// than a cache in cyclic order misses it entirely (the case for LRU; random
// replacement would keep some hits: not modelled, said here).
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"
#include "kernels/bandwidth_twin.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

namespace gpuscope::sim {
namespace {

// Host memory the read model's prefix sums may take (4 B per vector of the
// window, so at most the size of the largest buffer the sim allocates);
// past it, reads are summed directly, which costs every load a launch makes
// (a 10 ms launch of a data-centre GPU's model reads tens of GB).
constexpr uint64_t kMaxPrefixBytes = kSimMaxAllocBytes;

struct Walk {
  int vec = 4;  // uint words per vector
  uint32_t unroll = 4;
  uint32_t lsz = 0;   // work-group size
  uint32_t step = 0;  // UNROLL x lsz vectors
  size_t groups = 0;
  uint32_t n = 0;               // window, vectors
  uint32_t count = 0;           // vectors each group walks
  std::vector<uint32_t> start;  // per group
  uint64_t vec_bytes() const { return uint64_t{static_cast<uint32_t>(vec)} * 4; }
  uint32_t trips() const { return count == 0 ? 0 : (count + step - 1) / step; }
};

Walk walk_of(SimLaunch& l, const SimBuffer& starts, uint32_t n, uint32_t count) {
  Walk w;
  w.vec = static_cast<int>(l.spec().integer("vec", 0));
  if (w.vec != 1 && w.vec != 2 && w.vec != 4 && w.vec != 8 && w.vec != 16)
    throw DeviceError("sim: bandwidth needs vec 1, 2, 4, 8 or 16");
  const long long unroll = l.spec().integer("unroll", 4);
  if (unroll <= 0 || unroll > 1024) throw DeviceError("sim: bandwidth UNROLL out of range");
  w.unroll = static_cast<uint32_t>(unroll);
  w.lsz = static_cast<uint32_t>(l.local().total());
  if (w.lsz == 0) throw Unsupported("sim: bandwidth is modelled with an explicit work-group size");
  w.step = w.unroll * w.lsz;
  if (!std::has_single_bit(w.step)) throw DeviceError("sim: bandwidth needs a power-of-two step");
  w.groups = l.global().total() / w.lsz;
  w.n = n;
  w.count = count;
  if (n == 0 || n % w.step != 0) throw DeviceError("sim: bandwidth window is not a whole number of steps");
  if (starts.size_bytes() < w.groups * 4) throw DeviceError("sim: bandwidth start buffer too small");
  w.start = starts.load_all<uint32_t>(w.groups);
  for (uint32_t a : w.start)
    if ((a & ~(w.step - 1)) >= n) throw DeviceError("sim: bandwidth cursor outside its window");
  return w;
}

// The furthest vector a walk touches, plus one.
uint64_t reach(const Walk& w) {
  uint64_t top = 0;
  for (uint32_t a : w.start) top = std::max<uint64_t>(top, (a & (w.step - 1)) + uint64_t{w.n});
  return top;
}

void check_fits(const Walk& w, const SimBuffer& b, const char* what) {
  if (reach(w) * w.vec_bytes() > b.size_bytes())
    throw DeviceError(fmt::format("sim: bandwidth {} walks past its buffer", what));
}

// The time model (see the header): `bytes` moved through the levels down
// to the one holding `footprint`, by `groups` work-groups.
double level_ns(SimLaunch& l, double bytes, double footprint, size_t groups_launched) {
  const auto& c = l.config();
  const double cores = c.core.shader_cores;
  const double groups = static_cast<double>(std::max<size_t>(groups_launched, 1));
  const double busiest_share = std::ceil(groups / cores) / groups;
  double ns = 0;
  bool held = false;
  for (const CacheLevelConfig* lv : c.path_levels(CachePath::load_store)) {
    const double rate = lv->bytes_per_clock * c.clock_ghz();  // GB/s = bytes/ns, per instance
    ns = std::max(ns, lv->per_core ? bytes * busiest_share / rate : bytes / rate);
    if (footprint <= static_cast<double>(lv->capacity_bytes)) {
      held = true;
      break;
    }
  }
  if (!held) ns = std::max(ns, bytes / c.dram_bandwidth_gbps);
  return ns;
}

double stream_ns(SimLaunch& l, const Walk& w, int arrays) {
  const double bytes = static_cast<double>(arrays) * static_cast<double>(w.groups) * w.count * w.vec_bytes();
  const double footprint = static_cast<double>(arrays) * w.n * w.vec_bytes();
  return level_ns(l, bytes, footprint, w.groups);
}

// Strided prefix sums of a source buffer's vectors (see the header).
struct PrefixMemo {
  uint64_t buffer_id = 0, written = 0;
  uint32_t step = 0;
  int vec = 0;
  std::vector<uint32_t> q;  // q[i] = HSUM(v[i]) + q[i - step]
};

const std::vector<uint32_t>& prefix_sums(SimLaunch& l, const SimBuffer& src, const Walk& w, uint64_t upto) {
  auto& m = l.state<PrefixMemo>("bandwidth.prefix");
  if (m.buffer_id != src.id() || m.written != src.last_write() || m.step != w.step || m.vec != w.vec) {
    m = PrefixMemo{src.id(), src.last_write(), w.step, w.vec, {}};
  }
  const uint64_t have = m.q.size();
  if (upto <= have) return m.q;
  const size_t words = static_cast<size_t>(w.vec);
  constexpr uint64_t kChunkVectors = 1 << 16;
  m.q.resize(upto);
  for (uint64_t i0 = have; i0 < upto; i0 += kChunkVectors) {
    const uint64_t n = std::min(kChunkVectors, upto - i0);
    const auto data = src.load_all<uint32_t>(n * words, i0 * w.vec_bytes());
    for (uint64_t j = 0; j < n; ++j) {
      uint32_t h = 0;
      for (size_t k = 0; k < words; ++k) h += data[j * words + k];
      const uint64_t i = i0 + j;
      m.q[i] = h + (i >= w.step ? m.q[i - w.step] : 0u);
    }
  }
  return m.q;
}

// out[lid] += HSUM(v[k items + lid]) for k < rows, lid < items: the vectors
// v of `vec` words a row of `items` work-items loads, `rows` times (a loop
// the compiler vectorises for each width).
template <int Vec>
void add_hsums_of(const uint32_t* v, uint64_t rows, uint64_t items, uint32_t* out) {
  for (uint64_t k = 0; k < rows; ++k, v += items * Vec)
    for (uint64_t lid = 0; lid < items; ++lid) {
      uint32_t h = 0;
      for (int q = 0; q < Vec; ++q) h += v[lid * Vec + q];
      out[lid] += h;
    }
}

void add_hsums(const uint32_t* v, uint64_t rows, uint64_t items, int vec, uint32_t* out) {
  switch (vec) {
    case 1:
      return add_hsums_of<1>(v, rows, items, out);
    case 2:
      return add_hsums_of<2>(v, rows, items, out);
    case 4:
      return add_hsums_of<4>(v, rows, items, out);
    case 8:
      return add_hsums_of<8>(v, rows, items, out);
    default:
      return add_hsums_of<16>(v, rows, items, out);
  }
}

// out[(lid + j) mod items] += HSUM(vector j) for the `count` vectors of
// src from byte `offset`, read in place.
void add_hsums_from(const SimBuffer& src, uint64_t offset, uint64_t count, uint64_t lid, uint64_t items,
                    int vec, uint32_t* out) {
  const uint64_t vec_bytes = uint64_t{static_cast<uint32_t>(vec)} * 4;
  src.visit(offset, count * vec_bytes, [&](const std::byte* p, size_t n) {
    uint64_t left = n / vec_bytes;
    if (p == nullptr) {  // never written: zeros add nothing
      lid = (lid + left) % items;
      return;
    }
    const auto* v = reinterpret_cast<const uint32_t*>(p);
    while (left > 0) {
      const uint64_t m = std::min(left, items - lid);
      add_hsums(v, 1, m, vec, out + lid);
      v += m * static_cast<uint64_t>(vec);
      left -= m;
      lid += m;
      if (lid == items) lid = 0;
    }
  });
}

// read(src, n, start, count, sums)
double read(SimLaunch& l) {
  const SimBuffer& src = l.buffer(0);
  const uint32_t n = l.u32(1);
  const Walk w = walk_of(l, l.buffer(2), n, l.u32(3));
  SimBuffer& sums = l.buffer(4);
  check_fits(w, src, "read");
  if (sums.size_bytes() < w.groups * w.lsz * 4) throw DeviceError("sim: bandwidth sums buffer too small");
  std::vector<uint32_t> out(w.groups * w.lsz);
  if (reach(w) * sizeof(uint32_t) > kMaxPrefixBytes) {
    // Prefix sums would take too much host memory: sum the vectors each
    // work-item loads, one step's contiguous span at a time (cost: the
    // bytes the launch moves).
    for (size_t g = 0; g < w.groups; ++g) {
      const uint64_t r = w.start[g] & (w.step - 1);
      uint64_t b = w.start[g] & ~(w.step - 1);
      for (uint64_t t = 0; t < w.trips(); ++t) {
        // Vector k lsz + lid of the step is work-item lid's.
        add_hsums_from(src, (r + b) * w.vec_bytes(), w.step, 0, w.lsz, w.vec, out.data() + g * w.lsz);
        b += w.step;
        if (b >= w.n) b -= w.n;
      }
    }
    sums.write(0, std::as_bytes(std::span<const uint32_t>(out)));
    return stream_ns(l, w, 1);
  }
  const auto& q = prefix_sums(l, src, w, reach(w));
  // Sum of H[c + t S] for t in [t0, t0 + m): runs never leave the window.
  const auto run = [&](uint64_t c, uint64_t t0, uint64_t m) -> uint32_t {
    if (m == 0) return 0;
    const uint64_t last = c + (t0 + m - 1) * w.step;
    const uint64_t first = c + t0 * w.step;
    return q[last] - (first >= w.step ? q[first - w.step] : 0u);
  };
  const uint64_t per_pass = w.n / w.step;  // trips in one pass
  const uint64_t trips = w.trips();
  for (size_t g = 0; g < w.groups; ++g) {
    const uint64_t r = w.start[g] & (w.step - 1);
    const uint64_t t_start = (w.start[g] & ~(w.step - 1)) / w.step;  // b0 / S
    const uint64_t full = trips / per_pass, rem = trips % per_pass;
    const uint64_t first_run = std::min(rem, per_pass - t_start);
    for (uint32_t lid = 0; lid < w.lsz; ++lid) {
      uint32_t sum = 0;
      for (uint32_t k = 0; k < w.unroll; ++k) {
        const uint64_t c = r + lid + uint64_t{k} * w.lsz;
        sum += static_cast<uint32_t>(full) * run(c, 0, per_pass);
        sum += run(c, t_start, first_run) + run(c, 0, rem - first_run);
      }
      out[g * w.lsz + lid] = sum;
    }
  }
  sums.write(0, std::as_bytes(std::span<const uint32_t>(out)));
  return stream_ns(l, w, 1);
}

// Calls f(first_vector, vectors) once for each contiguous span of the
// vectors any group's walk stores to. A group's first pass covers at most
// two runs (its cursor wraps at n once), later passes repeat it, and what a
// store leaves depends on the vector's index only (write's hash, copy's
// source), so vectors that several groups store to are stored once.
template <class F>
void for_each_span(const Walk& w, F f) {
  const uint64_t covered = std::min<uint64_t>(w.trips(), w.n / w.step) * w.step;
  std::vector<std::pair<uint64_t, uint64_t>> runs;  // [begin, end)
  for (size_t g = 0; g < w.groups; ++g) {
    const uint64_t r = w.start[g] & (w.step - 1);
    const uint64_t b = w.start[g] & ~(w.step - 1);
    const uint64_t to_end = std::min(covered, w.n - b);
    if (to_end > 0) runs.emplace_back(r + b, r + b + to_end);
    if (covered > to_end) runs.emplace_back(r, r + covered - to_end);
  }
  std::sort(runs.begin(), runs.end());
  for (size_t i = 0; i < runs.size();) {
    auto [begin, end] = runs[i];
    for (++i; i < runs.size() && runs[i].first <= end; ++i) end = std::max(end, runs[i].second);
    f(begin, end - begin);
  }
}

// What bandwidth.cl's stores write to vectors [first, first + count): the twin's words.
template <int Vec>
void hashed_vectors_of(uint64_t first, uint64_t count, uint32_t seed, uint32_t* o) {
  for (uint64_t j = 0; j < count; ++j, o += Vec)
    bandwidth_twin::splat<Vec>(bandwidth_twin::vector_word(static_cast<uint32_t>(first + j), seed), o);
}

// Stores them into dst in place.
void store_hashed_vectors(SimBuffer& dst, uint64_t first, uint64_t count, int vec, uint32_t seed) {
  const uint64_t vec_bytes = uint64_t{static_cast<uint32_t>(vec)} * 4;
  // Buffers' pieces are whole vectors: chunks and offsets are multiples of them.
  dst.fill(first * vec_bytes, count * vec_bytes, [&](std::byte* p, uint64_t at, size_t n) {
    auto* o = reinterpret_cast<uint32_t*>(p);
    const uint64_t j = at / vec_bytes, m = n / vec_bytes;
    switch (vec) {
      case 1:
        return hashed_vectors_of<1>(j, m, seed, o);
      case 2:
        return hashed_vectors_of<2>(j, m, seed, o);
      case 4:
        return hashed_vectors_of<4>(j, m, seed, o);
      case 8:
        return hashed_vectors_of<8>(j, m, seed, o);
      default:
        return hashed_vectors_of<16>(j, m, seed, o);
    }
  });
}

// write(dst, n, start, count, seed)
double write(SimLaunch& l) {
  SimBuffer& dst = l.buffer(0);
  const uint32_t n = l.u32(1);
  const Walk w = walk_of(l, l.buffer(2), n, l.u32(3));
  const uint32_t seed = l.u32(4);
  check_fits(w, dst, "write");
  for_each_span(
      w, [&](uint64_t first, uint64_t count) { store_hashed_vectors(dst, first, count, w.vec, seed); });
  return stream_ns(l, w, 1);
}

// Sorted, disjoint byte ranges [begin, end) of a buffer.
using Runs = std::vector<std::pair<uint64_t, uint64_t>>;

Runs merged(Runs runs) {
  std::sort(runs.begin(), runs.end());
  Runs out;
  for (const auto& r : runs) {
    if (!out.empty() && r.first <= out.back().second)
      out.back().second = std::max(out.back().second, r.second);
    else
      out.push_back(r);
  }
  return out;
}

// The last copies from one buffer to another: what dst holds of src, valid
// while neither has been written since (their write stamps).
struct CopyMemo {
  uint64_t src_id = 0, src_written = 0, dst_id = 0, dst_written = 0;
  Runs held;  // byte ranges where dst holds src's bytes
};

// dst[b] = src[b] over `runs` (bytes, any order). A copy stores at each
// byte what src holds at the same offset and nothing else, so ranges that
// earlier copies between the same two unchanged buffers already stored are
// skipped: the probe repeats copies over one window with moving cursors.
void copy_runs(SimLaunch& l, const SimBuffer& src, SimBuffer& dst, Runs runs) {
  auto& m = l.state<CopyMemo>("bandwidth.copy");
  if (m.src_id != src.id() || m.src_written != src.last_write() || m.dst_id != dst.id() ||
      m.dst_written != dst.last_write())
    m = CopyMemo{src.id(), src.last_write(), dst.id(), dst.last_write(), {}};
  Runs copied;
  auto held = m.held.cbegin();
  for (auto [begin, end] : merged(std::move(runs))) {
    // Copy the parts of [begin, end) no held range covers.
    while (begin < end) {
      while (held != m.held.end() && held->second <= begin) ++held;
      const uint64_t stop = held == m.held.end() ? end : std::min(end, held->first);
      if (stop > begin) {
        dst.fill(begin, stop - begin,
                 [&](std::byte* p, uint64_t at, size_t n) { src.read(at, std::span<std::byte>(p, n)); });
        copied.emplace_back(begin, stop);
      }
      begin = held == m.held.end() || stop == end ? end : std::min(end, held->second);
    }
  }
  m.held.insert(m.held.end(), copied.begin(), copied.end());
  m.held = merged(std::move(m.held));
  m.dst_written = dst.last_write();
}

// copy(src, dst, n, start, count)
double copy(SimLaunch& l) {
  const SimBuffer& src = l.buffer(0);
  SimBuffer& dst = l.buffer(1);
  if (src.id() == dst.id()) throw Unsupported("sim: bandwidth copy onto its own source");
  const uint32_t n = l.u32(2);
  const Walk w = walk_of(l, l.buffer(3), n, l.u32(4));
  check_fits(w, src, "copy");
  check_fits(w, dst, "copy");
  Runs runs;
  for_each_span(w, [&](uint64_t first, uint64_t count) {
    runs.emplace_back(first * w.vec_bytes(), (first + count) * w.vec_bytes());
  });
  copy_runs(l, src, dst, std::move(runs));
  return stream_ns(l, w, 2);
}

// ---- Grid-stride and whole-grid layouts.
//
// read_stream / write_stream / copy_stream: each trip the whole grid (g
// work-items) covers vectors [b, b + UNROLL g), work-item j % g taking
// vector j of the stretch; b starts at `first` and advances by the stretch,
// wrapping at n by one subtraction, for ceil(count / stretch) trips. Values
// depend on the index only, so once b comes back to a value already seen
// the remaining trips repeat stores already made; reads are summed trip by
// trip (their cost is the bytes the launch moves). write_grid / copy_grid:
// vectors [first, first + global) mod n, one each. Time: level_ns over the
// bytes moved, the footprint being the n vectors of every array.
struct GridStride {
  int vec = 4;
  uint64_t stretch = 0;  // vectors per trip
  uint64_t n = 0, first = 0, trips = 0;
  size_t items = 0, groups = 0;
  uint64_t vec_bytes() const { return uint64_t{static_cast<uint32_t>(vec)} * 4; }
};

GridStride grid_stride_of(SimLaunch& l, uint32_t n, uint32_t first, uint64_t count, bool one_trip) {
  GridStride s;
  s.vec = static_cast<int>(l.spec().integer("vec", 0));
  if (s.vec != 1 && s.vec != 2 && s.vec != 4 && s.vec != 8 && s.vec != 16)
    throw DeviceError("sim: bandwidth needs vec 1, 2, 4, 8 or 16");
  const long long unroll = one_trip ? 1 : l.spec().integer("unroll", 4);
  if (unroll <= 0 || unroll > 1024) throw DeviceError("sim: bandwidth UNROLL out of range");
  s.items = l.global().total();
  const size_t lsz = l.local().total();
  s.groups = lsz ? (s.items + lsz - 1) / lsz : 1;
  s.stretch = static_cast<uint64_t>(unroll) * s.items;
  s.n = n;
  s.first = first;
  if (n == 0 || s.stretch == 0 || s.stretch > n || first >= n)
    throw DeviceError("sim: bandwidth stream does not fit its window");
  s.trips = one_trip ? 1 : (count + s.stretch - 1) / s.stretch;
  return s;
}

// Calls f(first_vector, vectors) for each trip's stretch, stopping where the
// trips start to repeat (for stores); `all` visits every trip (for sums).
template <class F>
void for_each_stretch(const GridStride& s, bool all, F f) {
  std::vector<bool> seen;
  uint64_t b = s.first;
  for (uint64_t t = 0; t < s.trips; ++t) {
    if (!all) {
      if (seen.empty()) seen.assign(s.n, false);
      if (seen[b]) break;
      seen[b] = true;
    }
    f(b, s.stretch);
    b += s.stretch;
    if (b >= s.n) b -= s.n;
  }
}

void check_stream_fits(const GridStride& s, const SimBuffer& b, bool wraps_in_window) {
  // Whole-grid launches wrap inside the window; a grid-stride stretch may
  // run past n (into the slack the probe's buffers hold) where n is not a
  // whole number of stretches.
  uint64_t top = s.n;
  if (!wraps_in_window)
    for_each_stretch(s, false, [&](uint64_t first, uint64_t count) { top = std::max(top, first + count); });
  if (top * s.vec_bytes() > b.size_bytes())
    throw DeviceError("sim: bandwidth stream walks past its buffer");
}

double stream_time(SimLaunch& l, const GridStride& s, int arrays) {
  const double bytes = static_cast<double>(arrays) * static_cast<double>(s.trips) * s.stretch * s.vec_bytes();
  return level_ns(l, bytes, static_cast<double>(arrays) * s.n * s.vec_bytes(), s.groups);
}

// read_stream(src, n, first, count, sums)
double read_stream(SimLaunch& l) {
  const SimBuffer& src = l.buffer(0);
  const GridStride s = grid_stride_of(l, l.u32(1), l.u32(2), l.u32(3), false);
  SimBuffer& sums = l.buffer(4);
  check_stream_fits(s, src, false);
  if (sums.size_bytes() < s.items * 4) throw DeviceError("sim: bandwidth sums buffer too small");
  // Vector j of a stretch is work-item j % items's.
  std::vector<uint32_t> out(s.items);
  for_each_stretch(s, true, [&](uint64_t first, uint64_t count) {
    add_hsums_from(src, first * s.vec_bytes(), count, 0, s.items, s.vec, out.data());
  });
  sums.write(0, std::as_bytes(std::span<const uint32_t>(out)));
  return stream_time(l, s, 1);
}

// write_stream(dst, n, first, count, seed) and write_grid(dst, n, first, seed)
double store_hashed(SimLaunch& l, bool grid) {
  SimBuffer& dst = l.buffer(0);
  const GridStride s = grid_stride_of(l, l.u32(1), l.u32(2), grid ? 0 : l.u32(3), grid);
  const uint32_t seed = l.u32(grid ? 3 : 4);
  check_stream_fits(s, dst, grid);
  for_each_stretch(s, false, [&](uint64_t first, uint64_t count) {
    // A whole-grid launch wraps at n inside its one stretch.
    const uint64_t head = grid ? std::min(count, s.n - first) : count;
    store_hashed_vectors(dst, first, head, s.vec, seed);
    if (head < count) store_hashed_vectors(dst, 0, count - head, s.vec, seed);
  });
  return stream_time(l, s, 1);
}

// copy_stream(src, dst, n, first, count) and copy_grid(src, dst, n, first)
double copy_vectors(SimLaunch& l, bool grid) {
  const SimBuffer& src = l.buffer(0);
  SimBuffer& dst = l.buffer(1);
  if (src.id() == dst.id()) throw Unsupported("sim: bandwidth copy onto its own source");
  const GridStride s = grid_stride_of(l, l.u32(2), l.u32(3), grid ? 0 : l.u32(4), grid);
  check_stream_fits(s, src, grid);
  check_stream_fits(s, dst, grid);
  Runs runs;
  const auto move = [&](uint64_t first, uint64_t count) {
    runs.emplace_back(first * s.vec_bytes(), (first + count) * s.vec_bytes());
  };
  for_each_stretch(s, false, [&](uint64_t first, uint64_t count) {
    const uint64_t head = grid ? std::min(count, s.n - first) : count;
    move(first, head);
    if (head < count) move(0, count - head);
  });
  copy_runs(l, src, dst, std::move(runs));
  return stream_time(l, s, 2);
}

double write_stream(SimLaunch& l) { return store_hashed(l, false); }
double write_grid(SimLaunch& l) { return store_hashed(l, true); }
double copy_stream(SimLaunch& l) { return copy_vectors(l, false); }
double copy_grid(SimLaunch& l) { return copy_vectors(l, true); }

}  // namespace

void register_sim_family_bandwidth(FamilyTable& table) {
  table.add({"bandwidth", "read", 0, read});
  table.add({"bandwidth", "write", 0, write});
  table.add({"bandwidth", "copy", 0, copy});
  table.add({"bandwidth", "read_stream", 0, read_stream});
  table.add({"bandwidth", "write_stream", 0, write_stream});
  table.add({"bandwidth", "copy_stream", 0, copy_stream});
  table.add({"bandwidth", "write_grid", 0, write_grid});
  table.add({"bandwidth", "copy_grid", 0, copy_grid});
}

}  // namespace gpuscope::sim
