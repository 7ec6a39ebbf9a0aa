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
#include "core/error.hpp"
#include "core/random.hpp"
#include "core/stats.hpp"
#include "kernels/bandwidth_twin.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <numeric>
#include <set>

namespace gpuscope {
namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;
constexpr size_t kGranuleBytes = 64;  // the host's check works in 64-byte granules (one uint16)

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
constexpr Access kRead{"read", 1, 0, {Src, N, Starts, Count, Sums}, 5};
constexpr Access kWrite{"write", 0, 1, {Dst, N, Starts, Count, Seed}, 5};
constexpr Access kCopy{"copy", 1, 1, {Src, Dst, N, Starts, Count}, 5};
// The grid-stride layout's kernels (bandwidth.cl), measured at the largest
// footprint only: DRAM's rate whatever order the per-group cursors impose.
constexpr Access kReadStream{"read_stream", 1, 0, {Src, N, First, Count, Sums}, 5};
constexpr Access kWriteStream{"write_stream", 0, 1, {Dst, N, First, Count, Seed}, 5};
constexpr Access kCopyStream{"copy_stream", 1, 1, {Src, Dst, N, First, Count}, 5};
// The whole-grid layout (one vector per work-item, groups in address order):
// stores only, where the order in which the front moves matters.
constexpr Access kWriteGrid{"write_grid", 0, 1, {Dst, N, First, Seed}, 4};
constexpr Access kCopyGrid{"copy_grid", 1, 1, {Src, Dst, N, First}, 4};

// Bytes one launch moves: each of `groups` work-groups walks `count` vectors
// of `vec_bytes` in every array the kernel reads or writes.
double bytes_moved(const Access& a, size_t groups, uint64_t count, size_t vec_bytes) {
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

std::string shape_text(const Shape& s) {
  return fmt::format("uint{} x{} unrolled, {} groups of {}",
                     s.vec == 1 ? std::string() : std::to_string(s.vec), s.unroll, s.groups, s.local);
}

class BandwidthProbe {
 public:
  explicit BandwidthProbe(ProbeContext& ctx) : ctx_(ctx), dev_(ctx.device), info_(dev_.info()) {
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

  std::vector<Series> run() {
    TimeBudget budget(ctx_.budget_s);
    const size_t cus = std::max<uint32_t>(1, info_.compute_units);
    Shape base;
    base.local = std::min<size_t>(cpu_ ? 64 : 256, max_local());
    base.groups = cus * (cpu_ ? 4 : 8);

    if (!cpu_) warm_clock(base);

    std::vector<Series> out;
    // Vector width at a footprint inside the first cache (the largest step of
    // the widest vector: 64 KiB on a GPU) and at the largest footprint.
    const std::vector<int> widths = quick_ ? std::vector<int>{1, 4, 16} : std::vector<int>{1, 2, 4, 8, 16};
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
      for (int u : {1, 2, 4, 8}) {
        Shape s = base;
        s.unroll = u;
        measure_into(unroll, kRead, s, max_fp_, u);
      }
      out.push_back(unroll);
    }

    // Footprint sweeps: two points per octave (one in quick mode) from the
    // smallest footprint the step allows to the largest allocated.
    for (const Access* a : {&kRead, &kWrite, &kCopy}) {
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
    for (const Access* a : {&kReadStream, &kWriteStream, &kCopyStream})
      out.push_back(stream_sweep(*a, base, false));
    for (const Access* a : {&kWriteGrid, &kCopyGrid}) out.push_back(stream_sweep(*a, base, true));

    // The work-group sweep, while the budget lasts (the footprint sweeps
    // above always run: they are what the cache matching needs).
    out.push_back(workgroup_sweep(base, cus, budget));
    for (auto& s : out) s.meta["probe_wall_s"] = budget.elapsed_s();
    out.front().meta["budget_s"] = budget.total_s();
    return out;
  }

 private:
  // Work-group sizes are powers of two (the checks work in 64-byte granules,
  // so a step must be a whole number of them) within the device's limit.
  size_t max_local() const {
    return std::bit_floor<size_t>(info_.max_work_group_size ? info_.max_work_group_size : 256);
  }

  Kernel& kernel(const Access& a, int vec, int unroll) const {
    return dev_.kernel({"bandwidth", a.kernel, {{"vec", vec}, {"unroll", unroll}}});
  }

  static Series bandwidth_series(const std::string& id, const std::string& xname, const std::string& xunit) {
    return make_series(id, "bandwidth", {xname, xunit}, {"bandwidth", "GB/s"},
                       {{"kernel", "bandwidth"}, {"detail", nlohmann::json::array()}});
  }

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

  void allocate() {
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

  uint32_t host_word(uint64_t i) const { return host_[i % host_.size()]; }

  // Sum (mod 2^32) of the source's words in granules [0, g).
  uint32_t prefix(uint64_t g) const {
    const uint64_t block = prefix_.size() - 1;
    return static_cast<uint32_t>(g / block) * prefix_[block] + prefix_[g % block];
  }

  // Sum of `count` granules walked circularly through the window of n
  // granules that begins at granule `window`, starting `first` into it.
  uint32_t circular_sum(uint64_t window, uint64_t n, uint64_t first, uint64_t count) const {
    const uint64_t full = count / n;
    const uint64_t rem = count % n;
    uint32_t sum = static_cast<uint32_t>(full) * (prefix(window + n) - prefix(window));
    const uint64_t a = window + first;
    if (first + rem <= n) return sum + (prefix(a + rem) - prefix(a));
    return sum + (prefix(window + n) - prefix(a)) + (prefix(window + first + rem - n) - prefix(window));
  }

  // One point's walk: per group a window shift r (vectors, < one step, whole
  // granules) and a cursor b (a multiple of the step, < n).
  struct Walk {
    Shape shape;
    uint64_t n = 0;                // footprint per array, vectors
    std::vector<uint32_t> r, b;    // per group
    std::vector<uint32_t> last_b;  // cursors of the last launch
    uint64_t last_count = 0;
  };

  // n: footprint per array in vectors, rounded down to whole steps. The
  // groups' starts are n/W apart in whole granules, dealt out in a random
  // order so that the groups a compute unit happens to run do not start
  // side by side.
  Walk make_walk(const Shape& s, uint64_t n) {
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

  double launch(const Access& a, Walk& w, uint64_t steps) {
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

  uint32_t seed() const { return static_cast<uint32_t>(launches_ * 0x2545f491u + 0x1234567u); }

  // Launches `a`'s kernel with its argument list (Access::args).
  double launch_args(const Access& a, Kernel& k, const Range& global, const Range& local, uint32_t n,
                     uint32_t first, uint32_t count) {
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

  void check(const Access& a, const Walk& w) {
    const Shape& s = w.shape;
    const uint64_t vb = s.vec_bytes();
    const uint64_t n_gran = w.n * vb / kGranuleBytes;
    const uint64_t count_gran = w.last_count * vb / kGranuleBytes;
    if (a.reads_only()) {
      const auto got = dev_.read_values<uint32_t>(*sums_, s.groups * s.local);
      const uint32_t sum = std::accumulate(got.begin(), got.end(), uint32_t{0});
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

  // Reads back one 64-byte granule of the destination and compares it with
  // what `a` (a write or a copy kernel) must have left there in the last
  // launch. n: the walk's footprint per array in vectors, for the message.
  void check_granule(const Access& a, uint64_t gran, const Shape& s, uint64_t n) {
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

  // The grid-stride walk (bandwidth.cl, read_stream etc.): n vectors per
  // array, a multiple of the step; `first` carries over between launches.
  struct Stream {
    Shape shape;
    bool grid = false;  // whole-grid layout: a step is one vector per work-item of `groups` groups
    uint64_t n = 0;
    uint64_t first = 0;
    uint64_t last_first = 0, last_count = 0;
  };

  double launch_stream(const Access& a, Stream& st, uint64_t steps) {
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
  void check_stream(const Access& a, const Stream& st) {
    const Shape& s = st.shape;
    const uint64_t vb = s.vec_bytes();
    const uint64_t n_gran = st.n * vb / kGranuleBytes;
    const uint64_t first_gran = st.last_first * vb / kGranuleBytes;
    const uint64_t count_gran = st.last_count * vb / kGranuleBytes;
    if (a.reads_only()) {
      const auto got = dev_.read_values<uint32_t>(*sums_, s.groups * s.local);
      const uint32_t sum = std::accumulate(got.begin(), got.end(), uint32_t{0});
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
  Series stream_sweep(const Access& a, const Shape& base, bool grid) {
    const std::string what = std::string(a.kernel).substr(0, std::string(a.kernel).find('_'));
    Series series =
        bandwidth_series((grid ? "bandwidth.grid." : "bandwidth.stream.") + what, "bytes_per_item", "B");
    series.meta["footprint_bytes"] = max_fp_ * a.arrays();
    series.meta["footprint"] = "bytes the stream covers in all arrays the kernel touches";
    series.meta["layout"] =
        grid ? "whole grid: one vector per work-item, groups in address order, a grid as large as the launch"
             : "grid-stride: each step the whole grid covers one contiguous stretch of unroll x global-size "
               "vectors";
    const std::vector<std::pair<int, int>> shapes =
        grid     ? (quick_ ? std::vector<std::pair<int, int>>{{4, 1}}
                           : std::vector<std::pair<int, int>>{{2, 1}, {4, 1}})
        : quick_ ? std::vector<std::pair<int, int>>{{4, 1}, {4, 4}}
                 : std::vector<std::pair<int, int>>{{4, 1}, {4, 2}, {4, 4}, {4, 8}, {16, 4}};
    for (const auto& [vec, unroll] : shapes) {
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

  // Streams the largest footprint until the device has been busy ~0.3 s
  // (0.1 s in quick mode): GPUs idle at a low clock and take a few hundred
  // milliseconds to reach their boost clock; the first points would
  // otherwise read low.
  void warm_clock(const Shape& s) {
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
  void measure_into(Series& series, const Access& a, const Shape& wanted, size_t footprint_bytes, double x) {
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

  // Bandwidth against the number of work-groups, 1 to 4x the compute units,
  // at a footprint inside the first cache with the largest work-groups, so
  // that one group can keep a core's cache port busy: a count just past a
  // multiple of the cores then leaves one core with an extra group while
  // the others idle, and the curve saw-tooths with the number of cores
  // that take groups in parallel (002 saw this on Adreno 530's SPs).
  Series workgroup_sweep(const Shape& base, size_t cus, const TimeBudget& budget) {
    Series s = bandwidth_series("bandwidth.workgroups", "workgroups", "");
    s.meta["compute_units"] = cus;
    Shape shape = base;
    shape.local = std::min<size_t>(cpu_ ? 256 : 1024, max_local());
    shape.vec = 4;
    const size_t fp = shape.step_bytes();
    s.meta["footprint_bytes"] = fp;
    s.meta["group_size"] = shape.local;
    std::set<size_t> counts;
    if (4 * cus + 1 <= 24) {
      for (size_t w = 1; w <= 4 * cus + 1; ++w) counts.insert(w);
    } else {
      for (size_t w = 1; w < cus; w *= 2) counts.insert(w);
      for (size_t k = 1; k <= 4; ++k) {
        for (long d : {-1L, 0L, 1L}) counts.insert(static_cast<size_t>(static_cast<long>(k * cus) + d));
        if (k < 4 && !quick_) counts.insert(k * cus + cus / 2);
      }
    }
    for (size_t w : counts) {
      if (budget.exhausted()) {
        s.meta["cut_short"] = "the probe's time budget ran out";
        break;
      }
      shape.groups = w;
      measure_into(s, kRead, shape, fp, static_cast<double>(w));
    }
    return s;
  }

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

}  // namespace

std::vector<Series> run_bandwidth_probe(ProbeContext& ctx) { return BandwidthProbe(ctx).run(); }

}  // namespace gpuscope
