// Probe `divergence`: throughput of a two-sided branch against the size of
// the blocks of consecutive work-items that agree on a side (the wave width:
// the Adreno 530 article's method, and the Mali-G52 article's "no penalty when 8 threads agree"), then
// the Adreno 530 article's partition test: which waves of a work-group share a scheduler.
//
// Shape of the experiment, and why (the kernel file says why the kernels
// look as they do):
// - Block sizes are powers of two from 1 to the work-group size: a wave
//   width is a power of two on every GPU we know, and a block as large as a
//   work-group cannot split a wave.
// - Launches fill every compute unit several times over, so the rate is the
//   device's, not one unit's.
// - The partition test runs only when the block test found a wave width
//   with confidence: its kernel switches whole waves on and off.
// - Where the device lets a kernel be built for a chosen wave width
//   (DeviceFeatures::subgroup_size_control: Vulkan's subgroup size control),
//   the block sweep runs again for each width it lists, with a build that
//   requires it (series divergence.blocks.subgroup_<n>).
// - On a CPU device (lavapipe, PoCL) the device's timestamps are the host's
//   clock, and the host's other work takes whole time slices out of a launch
//   (on the 2-core CI VM at load 7 a launch's rate halves or worse for a
//   second at a time, with both cores busy elsewhere exactly 2x: the size of
//   the step sought). There the block sizes are measured in interleaved
//   rounds of short launches of one work-group each, one launch per block
//   size per round in alternating order, and a point's rate is the fast
//   tail of its samples: the host's load only ever slows a launch, and a
//   1 ms launch often runs untouched between two time slices. lavapipe runs a subgroup as one SIMD vector (LP_NATIVE_VECTOR_WIDTH
//   / 32 lanes) and skips a masked-off loop only when no lane of the vector
//   takes it, so the step is there as on a GPU.
#include "analysis/execution.hpp"
#include "core/error.hpp"
#include "kernels/divergence_twin.hpp"
#include "kernels/fma_forms.hpp"
#include "probes/loop_trips.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

namespace gpuscope {
namespace {

constexpr int kChains = 8;  // the kernels' chains parameter
constexpr float kA = 0.999f, kB = 0.001f;
// A CPU device's sweep (the file's header says why): launches of about
// kCpuLaunchMs, kCpuRounds rounds, a point's rate the kCpuRateQuantile
// quantile of its samples.
constexpr double kCpuLaunchMs = 1;
constexpr int kCpuRounds = 21;
constexpr double kCpuRateQuantile = 0.9;

// What every work-item on one side computes: its chains start from 0 (the
// seed buffer holds zeros), each fma rounded as `form` says.
float expected_side(uint32_t iters, float m, float k, FmaForm form) {
  return divergence_twin::side_sum(0.0f, kChains, iters, m, k, form);
}

bool close(float got, float want) { return std::abs(got - want) <= 1e-5f * std::max(1.0f, std::abs(want)); }

// The sums one side's work-items may end at: fused first, and unfused only
// where a device needs it (fma_forms.hpp).
class SideSums {
 public:
  SideSums(uint32_t iters, float m, float k) : iters_(iters), m_(m), k_(k), fused_(expected_side(iters, m, k, FmaForm::fused)) {}
  float fused() const { return fused_; }
  bool matches(float got) {
    if (close(got, fused_)) return true;
    if (!have_unfused_) unfused_ = expected_side(iters_, m_, k_, FmaForm::unfused), have_unfused_ = true;
    return close(got, unfused_);
  }

 private:
  uint32_t iters_;
  float m_, k_;
  float fused_;
  float unfused_ = 0;
  bool have_unfused_ = false;
};

class DivergenceProbe {
 public:
  explicit DivergenceProbe(ProbeContext& ctx) : ctx_(ctx), dev_(ctx.device), info_(dev_.info()) {
    const std::map<std::string, KernelParam> chains = {{"chains", kChains}};
    diverge_ = &dev_.kernel({"divergence", "diverge", chains});
    partition_ = &dev_.kernel({"divergence", "partition", chains});
    const size_t cap = ctx.options.quick ? 256 : 1024;
    wg_ = std::bit_floor(std::min({cap, diverge_->max_work_group_size(), partition_->max_work_group_size(),
                                   static_cast<size_t>(info_.max_work_group_size)}));
    // GPUs: enough work-groups for every unit to hold several at once
    // (2048 work-items per unit is the most any GPU we know keeps resident)
    // and then some; CPUs: two work-groups per hardware thread.
    const size_t per_cu = info_.type == "gpu" ? std::max<size_t>(2, 4 * 2048 / wg_) : 2;
    global_ = wg_ * per_cu * std::max<uint32_t>(1, info_.compute_units);
    seed_ = dev_.create_buffer(global_ * sizeof(float));
    out_ = dev_.create_buffer(global_ * sizeof(float));
    dev_.write_values<float>(*seed_, std::vector<float>(global_, 0.0f));
  }

  std::vector<Series> run() {
    TimeBudget budget = ctx_.budget();
    std::vector<Series> out;
    Series blocks = block_series("divergence.blocks", wg_);
    sweep_blocks(blocks, *diverge_, wg_, budget);
    out.push_back(blocks);
    partition_test(out);
    // Where the device lets a kernel be built for one of several wave
    // widths, each is measured with a build of its own: the claim is the
    // request, the block sweep says what the hardware did with it. One
    // allowed width is measured too: it is still only a claim about builds
    // that ask for it (lavapipe at 128-bit vectors allows 4 alone, yet its
    // plain build steps at 8 lanes).
    if (info_.features.subgroup_size_control) {
      for (uint32_t size : info_.features.subgroup_sizes) {
        auto not_measured = [&](const std::string& why) {
          out.front().meta["subgroup_sizes_not_measured"][std::to_string(size)] = why;
          ctx_.progress(fmt::format("divergence: subgroup size {} not measured: {}", size, why));
        };
        try {
          Kernel& k = dev_.kernel({"divergence",
                                   "diverge",
                                   {{"chains", kChains}, {"required_subgroup_size", static_cast<int64_t>(size)}}});
          const size_t wg = std::bit_floor(std::min(wg_, k.max_work_group_size()));
          Series s = block_series(fmt::format("divergence.blocks.subgroup_{}", size), wg);
          s.meta["required_subgroup_size"] = size;
          // A step at the required width shows only with blocks of twice it.
          sweep_blocks(s, k, wg, budget, 2 * size_t{size});
          out.push_back(s);
        } catch (const DeviceError& e) {  // the build or the pipeline refused the size
          not_measured(e.what());
        } catch (const Unsupported& e) {
          not_measured(e.what());
        }
      }
    }
    return out;
  }

 private:
  Series block_series(const std::string& id, size_t wg) const {
    Series s;
    s.id = id;
    s.probe = "divergence";
    s.x = {"block", "work-items"};
    s.y = {"throughput", "Gop/s"};
    s.meta = {{"kernel", "divergence/diverge"},
              {"chains", kChains},
              {"work_group_size", wg},
              {"global_size", global_},
              {"op", "fp32 fma, both sides equally long"}};
    return s;
  }

  // Block sizes 1, 2, 4 ... up to the work-group size; past an exhausted
  // budget only while the blocks are below `must_reach`, the block size the
  // sweep must measure for its reading to be possible.
  void sweep_blocks(Series& s, Kernel& k, size_t wg, const TimeBudget& budget, size_t must_reach = 0) {
    if (info_.type == "cpu") {
      sweep_blocks_interleaved(s, k, wg);
      return;
    }
    uint64_t iters = first_iters_;
    for (size_t b = 1; b <= wg; b *= 2) {
      if (budget.exhausted() && s.points.size() >= 3 && b > must_reach) {
        s.meta["budget_note"] = "the budget ran out before the largest blocks";
        break;
      }
      iters = measure_blocks(s, k, wg, b, iters);
    }
  }

  // The CPU form of the sweep (the file's header says why): one work size
  // for every block size, calibrated on blocks of 1 (the slowest where
  // there is a step), then `rounds` rounds of one launch per block size.
  void sweep_blocks_interleaved(Series& s, Kernel& k, size_t wg) {
    // Short launches: a launch of about 1 ms often runs between two of the
    // host's time slices untouched, one of 10 ms seldom does.
    HarnessConfig hc = ctx_.options.harness;
    hc.target_launch_ms = std::min(hc.target_launch_ms, kCpuLaunchMs);
    const uint64_t max_iters = max_side_iters();
    std::vector<size_t> blocks;
    for (size_t b = 1; b <= wg; b *= 2) blocks.push_back(b);
    // One work-group per launch: one host thread runs it, so a launch is not
    // held up by whichever other thread the host's load stalls. The work is
    // sized on blocks of 1 (the slowest where there is a step) by the fastest
    // of three launches at each size: a single launch may carry the
    // pipeline's compilation or a time slice lost to the host (each several
    // ms), and the harness's calibration would shrink the work after either.
    const double target_ns = hc.target_launch_ms * 1e6;
    uint64_t iters = std::min(first_iters_, max_iters);
    for (int step = 0; step < 12; ++step) {
      double fastest = 0;
      for (int i = 0; i < 3; ++i) {
        const double t = launch_blocks(k, wg, 1, iters, wg);
        fastest = i == 0 ? t : std::min(fastest, t);
      }
      if (fastest >= target_ns / 2 || iters == max_iters) break;
      const double grow = std::clamp(target_ns / std::max(fastest, 1.0), 2.0, 16.0);
      iters = std::min(max_iters, static_cast<uint64_t>(static_cast<double>(iters) * grow));
    }
    for (size_t b : blocks) launch_blocks(k, wg, b, iters, wg);  // warm-up: every block size once
    std::vector<std::vector<double>> rates(blocks.size());
    const double work = static_cast<double>(wg * kChains) * static_cast<double>(iters);
    for (int r = 0; r < kCpuRounds; ++r)
      for (size_t j = 0; j < blocks.size(); ++j) {
        const size_t i = r % 2 == 0 ? j : blocks.size() - 1 - j;
        rates[i].push_back(work / launch_blocks(k, wg, blocks[i], iters, wg));
      }
    for (size_t i = 0; i < blocks.size(); ++i) {
      const double y =
          gpuscope::add_point(s, static_cast<double>(blocks[i]), rates[i], quantile(rates[i], kCpuRateQuantile));
      ctx_.progress(fmt::format("{} {:>5}  {:10.1f} Gop/s  (fast tail of {} interleaved launches)", s.id, blocks[i], y,
                                kCpuRounds));
    }
    s.meta["sweep"] = fmt::format(
        "interleaved: {} rounds of one launch per block size in alternating order, one work-group of {} per "
        "launch, {} iterations per side; y is the {:g}th percentile of a point's rates (the host's other work "
        "only ever slows a launch)",
        kCpuRounds, wg, iters, 100 * kCpuRateQuantile);
  }

  // Iterations per side the diverge kernel may run: a divergent invocation
  // runs both sides' loops, and where the device ends loops early (lavapipe:
  // 65535 trips per invocation, all loops together) a capped second side
  // would make divergence look free. The host check cannot see that: every
  // chain reaches its fixed point (1.0) within about 17k iterations.
  uint64_t max_side_iters() const { return std::max<uint64_t>(1, loop_trip_cap(info_.features, 1u << 25, 64) / 2); }

  // One timed launch of the diverge build `k` with blocks of `block`
  // work-items, `iters` iterations per side; checks every work-item's sum.
  double launch_blocks(Kernel& k, size_t wg, size_t block, uint64_t work, size_t global = 0) {
    if (global == 0) global = global_;
    const auto shift = static_cast<uint32_t>(std::countr_zero(block));
    const auto iters = static_cast<uint32_t>(work);
    const KernelArg args[] = {seed_.get(), out_.get(), shift, iters, iters, kA, kB};
    const double ns = dev_.launch(k, Range::d1(global), Range::d1(wg), args);
    const auto got = dev_.read_values<float>(*out_, global);
    SideSums want_a(iters, kA, kB), want_b(iters, kB, kA);
    for (size_t i = 0; i < global; ++i) {
      SideSums& want = (((i % wg) >> shift) & 1u) == 0 ? want_a : want_b;
      if (!want.matches(got[i]))
        throw ValidationError(fmt::format("divergence: work-item {} computed {} but the host expects {}", i, got[i],
                                          want.fused()));
    }
    return ns;
  }

  // The partition test, on the wave width the block sweep found; its series
  // go to `out`, or its reason for not running to out.front()'s meta.
  void partition_test(std::vector<Series>& out) {
    const Series& blocks = out.front();
    const auto width = analysis::wave_width_findings(blocks);
    if (width.empty() || width.front().confidence < 0.5 || number(width.front()) < 2) {
      out.front().meta["partition_test"] = "not run: no confident wave width";
      return;
    }
    const auto wave = static_cast<size_t>(number(width.front()));
    const size_t waves_per_group = wg_ / wave;
    if (waves_per_group < 4) {
      out.front().meta["partition_test"] = "not run: fewer than 4 waves per work-group";
      return;
    }
    // Three sets: 4 working waves (so up to 4 partitions all get work at
    // stride 1); 2 working waves (which tells 2 partitions from 4 where a
    // work-group holds only 8 waves); and 3 working waves at strides 1, 2,
    // 3, 4, 6, 8, ..., since power-of-two strides cannot see a partition
    // count that is not a power of two (Mali-G52's 3 execution engines: 4
    // waves on 3 partitions land 2-1-1 at every power-of-two stride, the
    // shape of one partition; stride 3 puts 3 waves on one).
    struct Set {
      size_t active;
      const char* id;
    };
    for (const Set set : {Set{4, "divergence.partition"}, Set{2, "divergence.partition_pairs"},
                          Set{3, "divergence.partition_triples"}}) {
      // The last working wave, (active - 1) x stride, must be in the group.
      const size_t max_stride = (waves_per_group - 1) / (set.active - 1);
      if (max_stride < 2) continue;
      Series part;
      part.id = set.id;
      part.probe = "divergence";
      part.x = {"stride", "waves"};
      part.y = {"throughput", "Gop/s"};
      part.meta = {{"kernel", "divergence/partition"},
                   {"wave_width", wave},
                   {"work_group_size", wg_},
                   {"active_waves_per_group", set.active},
                   {"work_groups_per_compute_unit", 1},
                   {"chains", kChains}};
      std::vector<size_t> strides;
      for (size_t stride = 1; stride <= max_stride; stride *= 2) {
        strides.push_back(stride);
        if (set.active == 3 && stride >= 2 && 3 * stride / 2 <= max_stride) strides.push_back(3 * stride / 2);
      }
      std::sort(strides.begin(), strides.end());
      for (size_t stride : strides) measure_partition(part, wave, stride, set.active);
      out.push_back(part);
    }
  }

  // One block size on kernel `k` (a diverge build) in work-groups of `wg`,
  // starting the calibration from `iters`; returns the iterations it settled on.
  uint64_t measure_blocks(Series& s, Kernel& k, size_t wg, size_t block, uint64_t iters_from) {
    auto launch = [&](uint64_t work) { return launch_blocks(k, wg, block, work); };
    // Each block size starts from the previous one's work: rates differ by
    // at most 2x, so one calibration launch usually lands.
    const uint64_t max_iters = max_side_iters();
    const Measurement m = measure(launch, std::min(iters_from, max_iters), max_iters, ctx_.options.harness);
    add_point(s, static_cast<double>(block), m, static_cast<double>(global_ * kChains));
    return m.work_per_launch;
  }

  void measure_partition(Series& s, size_t wave, size_t stride, size_t active) {
    // One work-group per compute unit (the block scheduler spreads them
    // before doubling up), as in the Adreno 530 article where a unit holds one: the waves
    // of other work-groups would fill the partitions this one leaves idle.
    const size_t global = wg_ * std::max<uint32_t>(1, info_.compute_units);
    auto launch = [&](uint64_t work) {
      const auto iters = static_cast<uint32_t>(work);
      const KernelArg args[] = {seed_.get(),
                                out_.get(),
                                static_cast<uint32_t>(wave),
                                static_cast<uint32_t>(stride),
                                static_cast<uint32_t>(active),
                                iters,
                                kA,
                                kB};
      const double ns = dev_.launch(*partition_, Range::d1(global), Range::d1(wg_), args);
      const auto got = dev_.read_values<float>(*out_, global);
      SideSums want(iters, kA, kB);
      for (size_t i = 0; i < global; ++i) {
        const size_t w = (i % wg_) / wave;
        if (w % stride == 0 && w / stride < active && !want.matches(got[i]))
          throw ValidationError(
              fmt::format("divergence: partition work-item {} computed {}, expected {}", i, got[i], want.fused()));
      }
      return ns;
    };
    const uint64_t max_iters = loop_trip_cap(info_.features, 1u << 24, 64);
    const Measurement m = measure(launch, std::min<uint64_t>(256, max_iters), max_iters, ctx_.options.harness);
    const double lanes = static_cast<double>(global / wg_ * active * wave);
    add_point(s, static_cast<double>(stride), m, lanes * kChains);
  }

  // Throughput samples in Gop/s from ns per loop iteration.
  void add_point(Series& s, double x, const Measurement& m, double ops_per_iter) {
    const double y = add_rate_point(s, x, m.ns_per_unit, ops_per_iter);
    ctx_.progress(fmt::format("{} {:>5g}  {:10.1f} Gop/s  (spread {:.1f}%, {:.1f} ms launches)", s.id, x, y,
                              100 * m.summary.rel_spread, m.launch_ms));
  }

  ProbeContext& ctx_;
  Device& dev_;
  const DeviceInfo& info_;
  Kernel* diverge_ = nullptr;
  Kernel* partition_ = nullptr;
  size_t wg_ = 1, global_ = 1;
  uint64_t first_iters_ = 16;
  std::unique_ptr<Buffer> seed_, out_;
};

}  // namespace

std::vector<Series> run_divergence_probe(ProbeContext& ctx) { return DivergenceProbe(ctx).run(); }

}  // namespace gpuscope
