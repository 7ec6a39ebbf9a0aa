// Probe `bandwidth`: read, write and copy bandwidth of global memory against
// footprint (from inside the first cache to several times the last), against
// vector width, against loads in flight per work-item, and against the
// number of work-groups. The kernels and why they are shaped as they are:
// src/kernels/opencl/bandwidth.cl. The analysis that matches plateaus to cache
// levels: analysis/bandwidth.
//
// Shape of the experiment, and why:
// - Buffers hold random words (SplitMix64), so a device that compresses
//   memory gets nothing out of them, and written values are hashed likewise.
// - Every launch is checked: the read kernel's per-work-item sums must add up
//   to the host's sum of the vectors the launch walked (prefix sums over
//   64-byte granules make that O(groups)); write and copy results are read
//   back at sampled spots of the last launch's range and compared.
// - Enough work-groups to fill the device (8 per compute unit on a GPU) and
//   UNROLL = 4 independent loads per work-item in flight.
// - Before anything is timed on a GPU, ~0.3 s of streaming lets the clock
//   rise from idle (a cold H100 starts far below its boost clock).
// - Bandwidth counts the bytes each launch actually moves, from the table
//   below, not from the footprint.
// - DRAM is also measured in two other layouts at the largest footprint
//   (bandwidth.stream.*: grid-stride; bandwidth.grid.*: one vector per
//   work-item over a grid as large as the launch), because the per-group
//   cursors, right for matching caches, cost DRAM writes dearly. On the H200
//   (tests/data/h200/bandwidth_stream*.json) the cursors write
//   3.6 TB/s and copy 3.4; grid-stride 4.3 and 3.95; the whole grid 4.69 and
//   4.28, as CUDA does on the same GPU (4.68, 4.27; bench/cuda_stream_bw.cu).
//   Reads barely care (4.4-4.5 vs 4.5-4.6). Not the clock (1980 MHz
//   throughout, no throttle reason, <= 500 W of 700), nor the store hash
//   (constant values and streaming-store hints change nothing in CUDA), nor
//   loads in flight (unroll 1..8 equal): what differs is the order in
//   which the store front moves through memory. ~1000 cursors n/W apart
//   write ~1000 separate places at once; the persistent grid-stride groups
//   drift apart over their many steps; a grid dispatched in group order
//   keeps one compact front a few MB wide. Our reading, not measured (no
//   DRAM counters through OpenCL): dirty lines leave the L2 in its own
//   order, so a scattered front opens more DRAM rows per byte written, and
//   writes pay more for that than reads do. uint8/uint16 accesses
//   are far worse for stores (1.1 TB/s at uint16): each warp instruction
//   writes only part of every line it touches.
//
// The parts, by what they measure:
//   probe.cpp       the run: which sweeps, in what order; the buffers, their
//                   random contents and the host's sums; launching and
//                   checking any kernel of the table
//   footprint.cpp   the per-group cursor walk: bandwidth against footprint,
//                   vector width and unroll (measure_into), and the warm-up
//   stream.cpp      DRAM in the grid-stride and whole-grid layouts
//   workgroups.cpp  bandwidth against the number of work-groups
#pragma once

#include "backends/backend.hpp"
#include "harness/harness.hpp"
#include "probes/probe.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gpuscope::bandwidth_probe {

inline constexpr size_t kKiB = 1024;
inline constexpr size_t kMiB = 1024 * kKiB;
inline constexpr size_t kGranuleBytes = 64;  // the host's check works in 64-byte granules (one uint16)

// A kernel argument by what it is: the arrays, the footprint n in vectors,
// the per-group start buffer or the stream's first vector, the vectors
// walked, the per-work-item sums of a read, the seed of a hashed store.
enum class Arg { Src, Dst, N, Starts, First, Count, Sums, Seed };

// What each kernel moves per vector it walks over, BabelStream style: the
// bytes a launch moves are defined here, beside the kernel's name and its
// argument list (bandwidth.cl's parameters, in order), and every GB/s in the
// series is bytes_moved / device time.
struct Access {
  const char* kernel;  // entry point in bandwidth.cl, also the series suffix
  int arrays_read;
  int arrays_written;
  std::array<Arg, 5> args;
  size_t arg_count;
  int arrays() const { return arrays_read + arrays_written; }
  bool reads_only() const { return arrays_written == 0; }
  bool copies() const { return arrays_read > 0 && arrays_written > 0; }
};
using enum Arg;
inline constexpr Access kRead{"read", 1, 0, {Src, N, Starts, Count, Sums}, 5};
inline constexpr Access kWrite{"write", 0, 1, {Dst, N, Starts, Count, Seed}, 5};
inline constexpr Access kCopy{"copy", 1, 1, {Src, Dst, N, Starts, Count}, 5};
// The grid-stride layout's kernels (bandwidth.cl), measured at the largest
// footprint only: DRAM's rate whatever order the per-group cursors impose.
inline constexpr Access kReadStream{"read_stream", 1, 0, {Src, N, First, Count, Sums}, 5};
inline constexpr Access kWriteStream{"write_stream", 0, 1, {Dst, N, First, Count, Seed}, 5};
inline constexpr Access kCopyStream{"copy_stream", 1, 1, {Src, Dst, N, First, Count}, 5};
// The whole-grid layout (one vector per work-item, groups in address order):
// stores only, where the order in which the front moves matters.
inline constexpr Access kWriteGrid{"write_grid", 0, 1, {Dst, N, First, Seed}, 4};
inline constexpr Access kCopyGrid{"copy_grid", 1, 1, {Src, Dst, N, First}, 4};

// The kernels of each sweep of the run, in its order: the footprint sweeps
// (per-group cursors), the grid-stride streams and the whole-grid stores.
inline constexpr std::array<const Access*, 3> kFootprintAccesses = {&kRead, &kWrite, &kCopy};
inline constexpr std::array<const Access*, 3> kStreamAccesses = {&kReadStream, &kWriteStream, &kCopyStream};
inline constexpr std::array<const Access*, 2> kGridAccesses = {&kWriteGrid, &kCopyGrid};

// Bytes one launch moves: each of `groups` work-groups walks `count` vectors
// of `vec_bytes` in every array the kernel reads or writes.
inline double bytes_moved(const Access& a, size_t groups, uint64_t count, size_t vec_bytes) {
  return static_cast<double>(a.arrays()) * static_cast<double>(groups) * static_cast<double>(count) *
         static_cast<double>(vec_bytes);
}

// How a sweep launches: vector width (uint words per access), independent
// accesses per work-item per step, work-group size and count.
struct Shape {
  int vec = 4;
  int unroll = 4;
  size_t local = 256;
  size_t groups = 0;
  size_t vec_bytes() const { return static_cast<size_t>(vec) * 4; }
  size_t step_vectors() const { return static_cast<size_t>(unroll) * local; }
  size_t step_bytes() const { return step_vectors() * vec_bytes(); }
};

// "uint4 x4 unrolled, 1056 groups of 256", for progress lines and messages.
std::string shape_text(const Shape& s);

// The sweeps' shapes, named once for the probe and its build ahead: the
// vector widths read at, the loads in flight per work-item, the stream
// layouts' (vector width, unroll) pairs, and the base work-group size.
std::vector<int> vector_widths(bool quick);
inline constexpr std::array<int, 4> kUnrolls = {1, 2, 4, 8};
std::vector<std::pair<int, int>> stream_shapes(bool quick, bool grid);
size_t base_local(const DeviceInfo& info);

class BandwidthProbe {
 public:
  // Allocates the source and destination buffers (allocate); throws
  // OutOfResources when not even two 1 MiB buffers fit.
  explicit BandwidthProbe(ProbeContext& ctx);

  // Every series of the probe, in the order analysis/bandwidth reads them.
  std::vector<Series> run();

 private:
  // ---- probe.cpp: buffers, kernels, launches and checks any layout shares

  // Work-group sizes are powers of two (the checks work in 64-byte granules,
  // so a step must be a whole number of them) within the device's limit.
  size_t max_local() const;
  Kernel& kernel(const Access& a, int vec, int unroll) const;
  static Series bandwidth_series(const std::string& id, const std::string& xname, const std::string& xunit);

  // The largest footprint: on a GPU 4 GiB or 8x the cache the driver claims
  // (far past any GPU's last-level cache: 50-60 MB on H100/H200, 128-256 MB
  // on the largest AMD parts; on the H200 a 512 MiB footprint still hits the
  // 60 MB L2 often enough to read 5% above DRAM's steady rate), on a CPU
  // 256 MiB (32 MiB in quick mode, for the CI machine); always within the
  // device's max allocation and a quarter of its memory. Halved on refusal.
  // Each buffer has kSlackBytes past the footprint: a group's window may
  // start up to one step into the buffer (see bandwidth.cl).
  static constexpr size_t kSlackBytes = 256 * kKiB;
  static constexpr size_t kBlockBytes = 256 * kMiB;  // random data, repeated to fill larger buffers
  void allocate();

  // Word i of the source buffer (the random block, repeated).
  uint32_t host_word(uint64_t i) const;
  // Sum (mod 2^32) of the source's words in granules [0, g).
  uint32_t prefix(uint64_t g) const;
  // Sum of `count` granules walked circularly through the window of n
  // granules that begins at granule `window`, starting `first` into it.
  uint32_t circular_sum(uint64_t window, uint64_t n, uint64_t first, uint64_t count) const;

  // The seed the hashed stores of the current launch use.
  uint32_t seed() const;
  // Launches `a`'s kernel with its argument list (Access::args); device ns.
  double launch_args(const Access& a, Kernel& k, const Range& global, const Range& local, uint32_t n,
                     uint32_t first, uint32_t count);
  // What the last read launch of shape `s` summed: its per-work-item sums
  // added up, mod 2^32, for comparing with the host's circular_sum.
  uint32_t device_read_sum(const Shape& s) const;
  // Reads back one 64-byte granule of the destination and compares it with
  // what `a` (a write or a copy kernel) must have left there in the last
  // launch; throws ValidationError otherwise. n: the walk's footprint per
  // array in vectors, for the message.
  void check_granule(const Access& a, uint64_t gran, const Shape& s, uint64_t n);

  // ---- footprint.cpp: the per-group cursor walk

  // One point's walk: per group a window shift r (vectors, < one step, whole
  // granules) and a cursor b (a multiple of the step, < n).
  struct Walk {
    Shape shape;
    uint64_t n = 0;                // footprint per array, vectors
    std::vector<uint32_t> r, b;    // per group
    std::vector<uint32_t> last_b;  // cursors of the last launch
    uint64_t last_count = 0;
  };
  // The walk of footprint n vectors per array in shape `s`, rounded down
  // to whole steps, its groups starting n/W apart in a random order.
  Walk make_walk(const Shape& s, uint64_t n);
  // Launches `steps` steps of the walk, checks them and moves the cursors on;
  // device ns.
  double launch(const Access& a, Walk& w, uint64_t steps);
  // The host's check of the walk's last launch; throws ValidationError.
  void check(const Access& a, const Walk& w);
  // Streams the largest footprint until the device has been busy ~0.3 s
  // (0.1 s quick), so that a GPU is at its boost clock before any point.
  void warm_clock(const Shape& s);
  // Measures one point of `a` over `footprint_bytes` (all arrays together)
  // and adds it to `series` at `x`: GB/s per sample, its launch in meta.detail.
  void measure_into(Series& series, const Access& a, const Shape& wanted, size_t footprint_bytes, double x);

  // ---- stream.cpp: the grid-stride and whole-grid layouts

  // The grid-stride walk (bandwidth.cl, read_stream etc.): n vectors per
  // array, a multiple of the step; `first` carries over between launches.
  struct Stream {
    Shape shape;
    bool grid = false;  // whole-grid layout: a step is one vector per work-item of `groups` groups
    uint64_t n = 0;
    uint64_t first = 0;
    uint64_t last_first = 0, last_count = 0;
  };
  // Launches `steps` steps of the stream and checks them; device ns.
  double launch_stream(const Access& a, Stream& st, uint64_t steps);
  // The host's check of the stream's last launch; throws ValidationError.
  void check_stream(const Access& a, const Stream& st);
  // `a` at the largest footprint in a few shapes, x = bytes in flight per
  // work-item per step; `grid`: the whole-grid layout.
  Series stream_sweep(const Access& a, const Shape& base, bool grid);

  // ---- workgroups.cpp

  // Bandwidth against the number of work-groups, 1 to 4x the compute units,
  // at a footprint inside the first cache; cut short when `budget` runs out.
  Series workgroup_sweep(const Shape& base, size_t cus, const TimeBudget& budget);

  ProbeContext& ctx_;
  Device& dev_;
  const DeviceInfo& info_;
  bool cpu_ = false, quick_ = false;
  HarnessConfig hc_;
  size_t max_fp_ = 0;
  std::unique_ptr<Buffer> src_, dst_, starts_, sums_;
  std::vector<uint32_t> host_;    // the random block the source buffer repeats
  std::vector<uint32_t> prefix_;  // prefix_[g] = sum of the block's words in granules [0, g), mod 2^32
  uint64_t launches_ = 0;
};

}  // namespace gpuscope::bandwidth_probe
