// Probe `scheduling`: how many work-groups a compute unit holds at once, as a
// function of the work-group size and of the local memory each group takes
// (the Adreno 530 article's "one work-group in flight per SP").
//
// Shape of the experiment, and why:
// - scheduling.cl counts resident groups with an atomic counter (increment
//   on entry, decrement on exit, the largest value seen kept): no
//   timestamps, and no group ever waits for another, so it finishes on any
//   scheduler and needs no forward-progress guarantee.
// - Each group stays resident for kHold reads of the counter (about a
//   millisecond on a GPU), far longer than the device takes to fill every
//   slot, so the groups of a full wave overlap and the peak is the wave.
// - Launches hold several waves' worth of groups (4096 work-items per
//   compute unit, 4 to 64 groups each) so that the device is full; a peak
//   equal to every launched group is marked as a lower bound.
// - The peak divided by the compute units is groups per compute unit; three
//   launches per configuration, the highest peak kept (a peak can only be
//   undercounted, by groups that missed each other).
#include "core/error.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuscope {
namespace {

constexpr uint32_t kHold = 2048;

class SchedulingProbe {
 public:
  explicit SchedulingProbe(ProbeContext& ctx)
      : ctx_(ctx), dev_(ctx.device), info_(dev_.info()), cus_(std::max<uint32_t>(1, info_.compute_units)) {
    kernel_ = &dev_.kernel({"scheduling", "resident", {}});
    running_ = dev_.create_buffer(sizeof(uint32_t));
    peak_ = dev_.create_buffer(sizeof(uint32_t));
    sink_ = dev_.create_buffer(sizeof(uint32_t));
  }

  std::vector<Series> run() {
    TimeBudget budget = ctx_.budget();
    const bool quick = ctx_.options.quick;
    const size_t max_wg = std::min<size_t>(kernel_->max_work_group_size(), info_.max_work_group_size);
    const Axis per_cu{"resident work-groups per compute unit", ""};
    Series by_size = make_series("sched.by_wg_size", "scheduling", {"work-group size", "work-items"}, per_cu);
    std::vector<size_t> sizes =
        quick ? std::vector<size_t>{64, 256, 1024} : std::vector<size_t>{32, 64, 128, 256, 512, 1024};
    // The largest group the kernel allows is always tried: drivers may cap
    // it below the device's maximum for a given kernel.
    std::erase_if(sizes, [&](size_t wg) { return wg > max_wg; });
    if (sizes.empty() || sizes.back() < max_wg) sizes.push_back(max_wg);
    by_size.meta["lower_bound_at"] = nlohmann::json::array();
    by_size.meta["kernel_max_work_group_size"] = max_wg;
    for (size_t wg : sizes) {
      if (budget.exhausted()) break;
      measure(by_size, wg, 0, static_cast<double>(wg));
    }
    // While halving the group doubles the groups resident, the work-items a
    // compute unit holds bind, not its limit on work-groups: smaller groups,
    // down to one work-item, until the count stops doubling (the limit on
    // groups reached) or every launched group was resident.
    const auto resident = [&](double x) {
      for (const auto& p : by_size.points)
        if (p.x == x) return p.y;
      return 0.0;
    };
    for (size_t wg = sizes.front() / 2; wg >= 1 && sizes.size() >= 2 && !budget.exhausted(); wg /= 2) {
      const double at = resident(static_cast<double>(2 * wg)), above = resident(static_cast<double>(4 * wg));
      if (!(at > 0 && above > 0 && at >= 1.8 * above)) break;
      if (!by_size.meta["lower_bound_at"].empty()) break;
      measure(by_size, wg, 0, static_cast<double>(wg));
    }

    // Local memory per group at a small group size (64 work-items), up to
    // what one group may take.
    Series by_local =
        make_series("sched.by_local_bytes", "scheduling", {"local memory per group", "B"}, per_cu);
    by_local.meta["lower_bound_at"] = nlohmann::json::array();
    const size_t wg = std::min<size_t>(64, max_wg);
    // Leave 1 KiB of the device's local memory for what the runtime reserves.
    const size_t max_local = info_.local_mem_bytes > 2048 ? info_.local_mem_bytes - 1024 : 0;
    std::vector<size_t> locals{0};
    for (size_t b : quick ? std::vector<size_t>{16384} : std::vector<size_t>{4096, 8192, 16384, 32768})
      if (b < max_local) locals.push_back(b);
    if (max_local > 0) locals.push_back(max_local / 4 * 4);
    for (size_t bytes : locals) {
      if (budget.exhausted()) break;
      measure(by_local, wg, bytes, static_cast<double>(bytes));
    }
    by_local.meta["work_group_size"] = wg;
    std::vector<Series> out{by_size, by_local};
    for (auto& s : out) {
      s.meta["kernel"] = "scheduling/resident";
      s.meta["hold_reads"] = kHold;
      s.meta["compute_units"] = cus_;
      s.meta["wall_s"] = budget.elapsed_s();
    }
    return out;
  }

 private:
  void measure(Series& s, size_t wg, size_t local_bytes, double x) {
    const size_t groups_per_cu = std::clamp<size_t>(4096 / wg, 4, 64);
    const size_t groups = groups_per_cu * cus_;
    const auto words = static_cast<uint32_t>(local_bytes / 4);
    std::vector<double> samples;
    uint32_t best = 0;
    for (int i = 0; i < 3; ++i) {
      dev_.write_values<uint32_t>(*running_, std::vector<uint32_t>{0});
      dev_.write_values<uint32_t>(*peak_, std::vector<uint32_t>{0});
      dev_.write_values<uint32_t>(*sink_, std::vector<uint32_t>{0});
      const KernelArg args[] = {running_.get(), peak_.get(), sink_.get(), words, kHold};
      dev_.launch(*kernel_, {Range::d1(groups * wg), Range::d1(wg), std::max<size_t>(local_bytes, 4)}, args);
      const uint32_t peak = dev_.read_values<uint32_t>(*peak_, 1)[0];
      const uint32_t running = dev_.read_values<uint32_t>(*running_, 1)[0];
      const uint32_t sink = dev_.read_values<uint32_t>(*sink_, 1)[0];
      // Every group entered and left once; each group's leader added
      // (scratch[1 % words] + 1) = 2 when it has scratch (1 for a 1-word
      // scratch), 1 without.
      const uint32_t per_group = words == 0 ? 1 : words == 1 ? 1 : 2;
      if (running != 0 || peak == 0 || peak > groups || sink != per_group * groups)
        throw ValidationError(
            fmt::format("scheduling: counters ended at running {} peak {} sink {} for {} groups", running,
                        peak, sink, groups));
      best = std::max(best, peak);
      samples.push_back(static_cast<double>(peak) / cus_);
    }
    Point p;
    p.x = x;
    p.y = static_cast<double>(best) / cus_;
    p.samples = samples;
    insert_point(s, p);
    if (best == groups) s.meta["lower_bound_at"].push_back(x);
    s.meta["detail"].push_back({{"x", x},
                                {"work_group_size", wg},
                                {"local_bytes", local_bytes},
                                {"groups_launched", groups},
                                {"peak_resident", best}});
    ctx_.progress(fmt::format("scheduling: groups of {} with {} B local: {} resident ({:.2f} per CU)", wg,
                              local_bytes, best, p.y));
  }

  ProbeContext& ctx_;
  Device& dev_;
  const DeviceInfo& info_;
  uint32_t cus_;
  Kernel* kernel_ = nullptr;
  std::unique_ptr<Buffer> running_, peak_, sink_;
};

}  // namespace

std::vector<Series> run_scheduling_probe(ProbeContext& ctx) { return SchedulingProbe(ctx).run(); }

}  // namespace gpuscope
