// Probe `icache`: throughput of a loop of BODY independent float adds as
// BODY grows past the instruction cache (the Mali-G52 article: peak up to 512 adds, a
// second drop past 1280, ~8 KB), and the program binary's size against BODY
// (the Mali-G52 article: 6-7 bytes per add).
//
// Shape of the experiment, and why (icache.cl says why the kernel looks as
// it does):
// - Bodies from 64 adds (about a kilobyte of machine code on any GPU) to
//   24576 (hundreds of KiB), two or three per octave, one build each.
// - Launches fill every compute unit several times over with work-items
//   that all run the same body, so the rate is issue-bound while the body
//   is cached.
// - The binary is whatever CL_PROGRAM_BINARIES gives; its format is
//   recorded (PTX text on NVIDIA, PoCL's container on PoCL) because only a
//   machine-code binary's bytes are the bytes an instruction cache holds.
#include "analysis/execution.hpp"
#include "core/error.hpp"
#include "probes/loop_trips.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <set>

namespace gpuscope {
namespace {

// Accumulators stay below 2^21 so that 8 x each (the kernel's sum) is below
// 2^24, where floats hold every integer exactly.
constexpr uint64_t kMaxAddsPerAccumulator = (1u << 21) - 64;

// The loop bodies the probe builds, in the order it measures them.
std::vector<int> body_sizes(bool quick, bool gpu) {
  // PoCL compiles large bodies slowly: its quick form stops at 4096.
  if (quick) return gpu ? std::vector<int>{64, 256, 1024, 4096, 16384} : std::vector<int>{64, 256, 1024, 4096};
  // Coarse first, then the points between: a budget that runs out costs
  // resolution, not range.
  return {64, 256, 1024, 2048, 4096, 8192, 16384, 512, 1536, 2560, 3072, 6144};
}

// The work-group and the grid the bodies are launched with.
size_t body_group(const DeviceInfo& info) { return std::bit_floor(std::min<size_t>(256, info.max_work_group_size)); }
size_t body_grid(const DeviceInfo& info) {
  const size_t cus = std::max<uint32_t>(1, info.compute_units);
  // Anything but a CPU is treated as a GPU, as the other probes do.
  return info.type != "cpu" ? cus * 4 * 2048 : cus * body_group(info) * 2;
}

std::vector<KernelSpec> body_specs(const std::vector<int>& bodies) {
  std::vector<KernelSpec> specs;
  for (int n : bodies) specs.push_back({"icache", "body", {{"body", n}}});
  return specs;
}

class IcacheProbe {
 public:
  explicit IcacheProbe(ProbeContext& ctx) : ctx_(ctx), dev_(ctx.device), info_(dev_.info()) {
    wg_ = body_group(info_);
    gpu_ = info_.type != "cpu";
    global_ = body_grid(info_);
    std::vector<float> start(global_);
    for (size_t i = 0; i < global_; ++i) start[i] = static_cast<float>(i % 16);
    start_ = dev_.create_buffer(global_ * sizeof(float));
    out_ = dev_.create_buffer(global_ * sizeof(float));
    dev_.write_values<float>(*start_, start);
  }

  std::vector<Series> run() {
    const bool quick = ctx_.options.quick;
    TimeBudget budget = ctx_.budget();
    const std::vector<int> bodies = body_sizes(quick, gpu_);
    Series body;
    body.id = "icache.body";
    body.probe = "icache";
    body.x = {"loop body", "adds"};
    body.y = {"throughput", "Gop/s"};
    body.meta = {{"kernel", "icache/body"},
                 {"accumulators", 8},
                 {"global_size", global_},
                 {"work_group_size", wg_}};
    Series binary;
    binary.id = "icache.binary";
    binary.probe = "icache";
    binary.x = {"loop body", "adds"};
    binary.y = {"program binary", "B"};
    binary.meta = {{"source", "the program binary the driver holds for each build (kernel_resources)"}};
    // Where the machine code has a fixed instruction size, bytes per add are
    // known whatever the binary the driver returns (NVIDIA's is PTX text):
    // stated as known, not measured.
    if (const uint32_t bytes = info_.features.instruction_bytes; bytes > 0) {
      body.meta["machine_bytes_per_op"] = bytes;
      body.meta["machine_bytes_source"] =
          fmt::format("the instruction set's fixed {}-byte encoding, one add instruction per add", bytes);
    }

    // The binary's size against the adds, where the backend reports code
    // bytes; one series point per body built.
    auto record_binary = [&](Kernel& k, int n) {
      const KernelResources res = dev_.kernel_resources(k);
      if (!res.code_bytes) {
        binary.meta["unsupported"] = "the backend reports no program binary for this device";
        return;
      }
      if (!binary.meta.contains("binary_format")) binary.meta["binary_format"] = res.code_format;
      const auto bytes = static_cast<double>(*res.code_bytes);
      insert_point(binary, Point{static_cast<double>(n), bytes, {bytes}});
    };
    dev_.prebuild(body_specs(bodies), LaunchShape{Range::d1(global_), Range::d1(wg_)});
    for (int n : bodies) {
      if (budget.exhausted() && body.points.size() >= 3) {
        body.meta["budget_note"] = fmt::format("the budget ran out before {} adds", n);
        break;
      }
      Kernel& k = dev_.kernel({"icache", "body", {{"body", n}}});
      measure_body(body, k, n);
      record_binary(k, n);  // after a launch: the statistics are read from the pipeline it used
    }
    // Bisection of the drop, in whole blocks of 64 adds, to within a
    // sixteenth of the body that fits: half an octave between the listed
    // bodies would put the capacity anywhere in a 50% range.
    for (;;) {
      const auto [fit, over] = drop_bracket(body);
      const int mid = bisection_mid(fit, over);
      if (mid == 0) break;
      if (budget.exhausted()) {
        body.meta["budget_note"] = fmt::format("the budget ran out bisecting the drop between {} and {} adds", fit, over);
        break;
      }
      if (!speculated_.count(mid)) prebuild_bisection(fit, over);
      Kernel& k = dev_.kernel({"icache", "body", {{"body", mid}}});
      measure_body(body, k, mid);
      record_binary(k, mid);
    }
    body.meta["wall_s"] = budget.elapsed_s();
    std::vector<Series> out = {body};
    if (!binary.points.empty()) out.push_back(binary);
    return out;
  }

 private:
  void measure_body(Series& s, Kernel& k, int n) {
    const uint64_t adds_per_iter = static_cast<uint64_t>(n) / 8;
    // Large bodies may cap the work-group lower; global_ is a multiple of
    // every power of two up to wg_.
    const size_t local = std::bit_floor(std::min(wg_, k.max_work_group_size()));
    auto launch = [&](uint64_t work) {
      const auto iters = static_cast<uint32_t>(work);
      const KernelArg args[] = {start_.get(), out_.get(), iters, 1.0f};
      const double ns = dev_.launch(k, Range::d1(global_), Range::d1(local), args);
      const auto got = dev_.read_values<float>(*out_, global_);
      const uint64_t adds = iters * adds_per_iter;
      for (size_t i = 0; i < global_; ++i) {
        const double want = 8.0 * (static_cast<double>(i % 16) + static_cast<double>(adds)) + 28.0;
        if (static_cast<double>(got[i]) != want)
          throw ValidationError(
              fmt::format("icache: work-item {} (BODY={}, {} iterations) computed {}, expected {}", i, n,
                          iters, got[i], want));
      }
      return ns;
    };
    // Start from the previous body's adds per launch: one calibration
    // launch usually lands.
    const uint64_t max_iters = loop_trip_cap(dev_.info().features, kMaxAddsPerAccumulator / adds_per_iter, 8);
    const uint64_t initial = std::clamp<uint64_t>(last_adds_ / static_cast<uint64_t>(n), 1, max_iters);
    const Measurement m = measure(launch, initial, max_iters, ctx_.options.harness);
    last_adds_ = m.work_per_launch * static_cast<uint64_t>(n);
    const double ops_per_iter = static_cast<double>(global_) * n;
    const double y = add_rate_point(s, n, m.ns_per_unit, ops_per_iter);
    ctx_.progress(fmt::format("icache.body {:>6}  {:10.1f} Gop/s  (spread {:.1f}%, {:.1f} ms launches)", n, y, 100 * m.summary.rel_spread, m.launch_ms));
  }

  // The body that halves the bracket (fit, over), in whole blocks of 64
  // adds; 0 once the bracket is within a sixteenth of the body that fits.
  static int bisection_mid(int fit, int over) {
    if (over == 0 || over - fit <= std::max(64, fit / 16)) return 0;
    const int mid = (fit + over) / 2 / 64 * 64;
    return mid <= fit || mid >= over ? 0 : mid;
  }

  // Builds every body the next kBisectionDepth steps may measure from the
  // bracket (fit, over), at once on several threads where the backend can
  // (Device::prebuild; nothing elsewhere): one build's wait instead of one
  // per step (an H200's cold driver cache: 1.85 s of bisection builds,
  // glslang compiling bodies of thousands of adds). A step the measurements
  // take elsewhere builds its body when asked.
  void prebuild_bisection(int fit, int over) {
    constexpr int kBisectionDepth = 3;
    std::vector<int> bodies;
    const auto add = [&](const auto& self, int f, int o, int depth) -> void {
      const int mid = bisection_mid(f, o);
      if (mid == 0 || depth == 0) return;
      bodies.push_back(mid);
      speculated_.insert(mid);
      self(self, mid, o, depth - 1);  // mid fits
      self(self, f, mid, depth - 1);  // mid is past the drop
    };
    add(add, fit, over, kBisectionDepth);
    dev_.prebuild(body_specs(bodies), LaunchShape{Range::d1(global_), Range::d1(wg_)});
  }

  // The largest body still at 85% of the plateau (the median of the three
  // smallest) below the first body under it; over = 0 when none is under.
  static std::pair<int, int> drop_bracket(const Series& s) {
    if (s.points.size() < 3) return {0, 0};
    const double ref = median(std::vector<double>{s.points[0].y, s.points[1].y, s.points[2].y});
    int fit = 0;
    for (const auto& p : s.points) {
      if (p.y < 0.85 * ref) return {fit, static_cast<int>(p.x)};
      fit = static_cast<int>(p.x);
    }
    return {fit, 0};
  }

  ProbeContext& ctx_;
  Device& dev_;
  const DeviceInfo& info_;
  bool gpu_ = true;
  size_t wg_ = 256, global_ = 0;
  uint64_t last_adds_ = 256;  // the previous body's adds per work-item per launch
  std::set<int> speculated_;  // bodies prebuild_bisection has asked for
  std::unique_ptr<Buffer> start_, out_;
};

}  // namespace

std::vector<Series> run_icache_probe(ProbeContext& ctx) { return IcacheProbe(ctx).run(); }

void build_icache_ahead(Device& dev, const ProbeOptions& options) {
  const DeviceInfo& info = dev.info();
  dev.build_ahead(body_specs(body_sizes(options.quick, info.type != "cpu")),
                  LaunchShape{Range::d1(body_grid(info)), Range::d1(body_group(info))});
}

}  // namespace gpuscope
