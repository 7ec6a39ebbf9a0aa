#include "analysis/system.hpp"

#include "analysis/confidence_factors.hpp"
#include "analysis/unfound.hpp"
#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscope::analysis {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

const Point* at_x(const Series* s, double x) {
  if (s == nullptr) return nullptr;
  for (const auto& p : s->points)
    if (p.x == x) return &p;
  return nullptr;
}

const Point* best_point(const Series* s) {
  if (s == nullptr || s->points.empty()) return nullptr;
  return &*std::max_element(s->points.begin(), s->points.end(),
                            [](const Point& a, const Point& b) { return a.y < b.y; });
}

Finding make(const std::string& id, double value, const std::string& unit, double confidence,
             std::vector<std::string> evidence, std::string method) {
  Finding f;
  f.id = id;
  f.value = value;
  f.unit = unit;
  f.confidence = confidence;
  f.evidence = std::move(evidence);
  f.method = std::move(method);
  return f;
}

// value = the point's y, interval = its samples' interquartile range.
void bound_by_samples(Finding& f, const Point& p) {
  if (p.samples.size() < 2) return;
  f.low = quantile(p.samples, 0.25);
  f.high = quantile(p.samples, 0.75);
}

std::string size_label(double bytes) {
  if (bytes >= kMiB) return fmt::format("{:g} MiB", bytes / kMiB);
  return fmt::format("{:g} KiB", bytes / 1024);
}

// Best rate of a link direction: pinned non-blocking (the copy engine's own
// time) where measured, else pageable.
std::optional<Finding> link_rate(const Results& r, const std::string& dir, const std::string& id) {
  const Series* pinned = r.find_series("transfer." + dir + ".pinned");
  const Series* pageable = r.find_series("transfer." + dir + ".pageable");
  const Series* s = best_point(pinned) ? pinned : pageable;
  const Point* p = best_point(s);
  if (p == nullptr) return std::nullopt;
  // A best rate reached only at small sizes has not left the per-call cost
  // behind: less sure.
  Finding f = make(id, p->y, "GB/s", p->x >= 16 * kMiB ? 0.85 : 0.5, {s->id},
                   fmt::format("highest rate over sizes 4 KiB..{} ({}), from the copy's own profiling "
                               "start->end",
                               size_label(s->points.back().x),
                               s->id.ends_with("pinned") ? "pinned host memory" : "pageable host memory"));
  bound_by_samples(f, *p);
  std::string note = fmt::format("best at {}", size_label(p->x));
  for (const char* other : {".pageable", ".pinned.blocking", ".pageable.blocking"}) {
    const Series* o = r.find_series("transfer." + dir + other);
    if (const Point* q = best_point(o)) {
      note += fmt::format("; {} {:.2f} GB/s", std::string(other).substr(1), q->y);
      f.evidence.push_back(o->id);
    }
  }
  f.note = note + ".";
  return f;
}

}  // namespace

std::optional<double> loglog_slope(const Series& s, double min_x) {
  std::vector<double> xs, ys;
  for (const auto& p : s.points)
    if (p.x >= min_x && p.x > 0 && p.y > 0) {
      xs.push_back(std::log(p.x));
      ys.push_back(std::log(p.y));
    }
  if (xs.size() < 3) return std::nullopt;
  // Theil-Sen: the median of the slopes between every pair of points, so
  // that one disturbed point (a CPU host's page faults, a co-tenant) cannot
  // tilt the answer as it would a least-squares fit.
  std::vector<double> slopes;
  for (size_t i = 0; i < xs.size(); ++i)
    for (size_t j = i + 1; j < xs.size(); ++j)
      if (xs[j] != xs[i]) slopes.push_back((ys[j] - ys[i]) / (xs[j] - xs[i]));
  if (slopes.empty()) return std::nullopt;
  return median(slopes);
}

std::optional<bool> map_copies(const Series& s) {
  const auto slope = loglog_slope(s, 64 * 1024);
  if (!slope) return std::nullopt;
  const Point& last = s.points.back();
  const double implied_gbps = last.x / std::max(last.y * 1e3, 1e-9);  // bytes per ns
  return *slope >= kFlatMapSlope && implied_gbps < kCopyCeilingGbps;
}

std::vector<Finding> transfer_findings(const Results& r) {
  std::vector<Finding> out;
  if (auto f = link_rate(r, "h2d", "host.h2d_gbps")) out.push_back(*f);
  if (auto f = link_rate(r, "d2h", "host.d2h_gbps")) out.push_back(*f);

  const Series* mapped = r.find_series("transfer.mapped.host.to_host");
  if (const Point* p = best_point(mapped)) {
    Finding f =
        make("host.map_gbps", p->y, "GB/s", p->x >= 16 * kMiB ? 0.8 : 0.5, {mapped->id},
             "highest rate of reading an ALLOC_HOST_PTR buffer through a mapping: bytes / (map + host "
             "reads every byte + unmap)");
    bound_by_samples(f, *p);
    f.note = fmt::format("best at {}", size_label(p->x));
    for (const char* other : {"transfer.mapped.host.to_device", "transfer.mapped.device.to_host"})
      if (const Point* q = best_point(r.find_series(other))) {
        f.note += fmt::format("; {} {:.2f} GB/s", std::string(other).substr(16), q->y);
        f.evidence.push_back(other);
      }
    f.note += ".";
    out.push_back(f);
  }

  // Zero copy: the host-allocated buffer's map costs the same at every size
  // AND kernels read it as fast as an ordinary buffer.
  const Series* up = r.find_series("transfer.map.host.to_host");
  const Series* down = r.find_series("transfer.map.host.to_device");
  const Series* reads = r.find_series("transfer.kernel_read");
  if (up && down) {
    const auto s_up = loglog_slope(*up, 64 * 1024);
    const auto s_down = loglog_slope(*down, 64 * 1024);
    if (s_up && s_down) {
      const bool flat = !*map_copies(*up) && !*map_copies(*down);
      std::vector<std::string> evidence{up->id, down->id};
      std::optional<bool> in_place;
      double ratio = 0;
      const Point* dev_read = at_x(reads, 0);
      const Point* host_read = at_x(reads, 1);
      if (dev_read && host_read && dev_read->y > 0) {
        ratio = host_read->y / dev_read->y;
        in_place = ratio >= kInPlaceReadRatio;
        evidence.push_back(reads->id);
      }
      const bool zero_copy = flat && in_place.value_or(true);
      const bool agree = !in_place || *in_place == flat;
      Finding f = make(
          "host.zero_copy", 0.0, "", in_place ? (agree ? 0.9 : 0.6) : 0.6, evidence,
          fmt::format("ALLOC_HOST_PTR buffer: map+unmap cost against size (a copy: log-log slope >= {} and "
                      "slower than {:g} GB/s) and a kernel's read rate of it vs an ordinary buffer (>= "
                      "{:.0f}% = same memory)",
                      kFlatMapSlope, kCopyCeilingGbps, 100 * kInPlaceReadRatio));
      f.value = zero_copy;
      const Point& last = up->points.back();
      f.note = fmt::format("map+unmap slope {:.2f} (to host) and {:.2f} (to device); {:.1f} us at {}", *s_up,
                           *s_down, last.y, size_label(last.x));
      if (in_place)
        f.note +=
            fmt::format("; kernel reads it at {:.0f}% of an ordinary buffer's rate ({:.1f} vs {:.1f} GB/s)",
                        100 * ratio, host_read->y, dev_read->y);
      else
        f.note += "; kernel read rates not measured";
      if (const Series* d = r.find_series("transfer.map.device.to_host"))
        if (auto s = loglog_slope(*d, 64 * 1024))
          f.note += fmt::format("; an ordinary buffer's map {} (slope {:.2f}, {:.1f} us at {})",
                                *map_copies(*d) ? "copies" : "is free too", *s, d->points.back().y,
                                size_label(d->points.back().x));
      if (!agree)
        f.note += in_place.value_or(false)
                      ? "; maps copy although kernels read it in place: not zero copy"
                      : "; maps are free but kernels read it across a link: not zero copy";
      f.note += ".";
      out.push_back(f);
    }
  }

  // SVM: granularity offered, and whether handing a coarse-grained buffer
  // to the host copies it (000's observation).
  if (const Series* svm = r.find_series("transfer.svm.map")) {
    const auto& m = svm->meta;
    std::string kinds;
    for (const char* k : {"coarse_grain_buffer", "fine_grain_buffer", "fine_grain_system", "atomics"})
      if (m.contains(k) && m[k].get<bool>()) kinds += (kinds.empty() ? "" : ", ") + std::string(k);
    if (auto slope = loglog_slope(*svm, 64 * 1024)) {
      Finding f =
          make("host.svm_map_copies", 0.0, "", 0.8, {svm->id},
               fmt::format("coarse-grained SVM map+unmap cost against size (log-log slope >= {} = a copy)",
                           kFlatMapSlope));
      f.value = *map_copies(*svm);
      f.note = fmt::format("SVM offered: {}; slope {:.2f}, {:.1f} us at {}.", kinds.empty() ? "none" : kinds,
                           *slope, svm->points.back().y, size_label(svm->points.back().x));
      out.push_back(f);
    }
  }
  return out;
}

std::vector<Finding> launch_findings(const Results& r) {
  std::vector<Finding> out;
  const Series* dispatch = r.find_series("launch.dispatch");
  const Series* roundtrip = r.find_series("launch.roundtrip");
  const Series* b2b = r.find_series("launch.back_to_back");
  const Series* gap = r.find_series("launch.back_to_back_gap");
  if (const Point* p = at_x(dispatch, 1)) {
    // Vulkan's queueing is the host's submit call put on the device's clock
    // (calibrated timestamps): the pairing's deviation widens the interval.
    const std::string how = dispatch->meta.value("method", std::string("profiling events"));
    const double deviation_us = dispatch->meta.value("calibration_deviation_us", 0.0);
    Finding f = make("launch.dispatch_us", p->y, "us", 0.8, {dispatch->id},
                     "median queued->start of isolated one-work-item launches of an empty kernel (" + how + ")");
    bound_by_samples(f, *p);
    if (deviation_us > 0) {
      if (f.low && f.high) {
        f.low = std::max(0.0, *f.low - deviation_us);
        f.high = *f.high + deviation_us;
      }
      f.note = fmt::format("the host and device clocks were paired within {:.3g} us (the driver's maxDeviation), "
                           "which widens the interval",
                           deviation_us);
    }
    if (dispatch->points.size() > 1)
      f.note += fmt::format("{}{:.1f} us for {:g} work-items", f.note.empty() ? "" : "; ",
                            dispatch->points.back().y, dispatch->points.back().x);
    if (const Point* q = best_point(gap); q && gap) {
      const auto& pts = gap->points;
      f.note += fmt::format("{}back to back the device starts one every {:.2f} us",
                            f.note.empty() ? "" : "; ", pts.back().y);
      f.evidence.push_back(gap->id);
    }
    if (!f.note.empty()) f.note += ".";
    out.push_back(f);
  }
  if (const Point* p = at_x(roundtrip, 1)) {
    Finding f =
        make("launch.roundtrip_us", p->y, "us", 0.8, {roundtrip->id},
             "median host time from enqueue to seeing completion (spinning) of isolated empty launches");
    bound_by_samples(f, *p);
    if (b2b && !b2b->points.empty()) {
      f.note = fmt::format("kept busy with batches of {:g}, a launch costs the host {:.2f} us",
                           b2b->points.back().x, b2b->points.back().y);
      f.evidence.push_back(b2b->id);
    }
    if (!f.note.empty()) f.note += ".";
    out.push_back(f);
  }
  if (b2b && !b2b->points.empty()) {
    const Point& p = b2b->points.back();
    Finding f = make(
        "launch.back_to_back_us", p.y, "us", 0.7, {b2b->id},
        fmt::format("host time per launch over batches of {:g} empty launches enqueued back to back", p.x));
    bound_by_samples(f, p);
    out.push_back(f);
  }
  return out;
}

std::vector<Finding> atomics_findings(const Results& r) {
  std::vector<Finding> out;
  const auto latency = [&](const char* series, const char* id, const char* where) {
    const Series* s = r.find_series(series);
    if (s == nullptr) return;
    // 32-bit where measured, else 64-bit; neither: not measurable (the
    // series' meta says why), and no number is claimed.
    const Point* p = at_x(s, 32);
    const bool wide = p == nullptr;
    if (wide) p = at_x(s, 64);
    if (p == nullptr) return;
    Finding f =
        make(id, p->y, "ns", 0.8, {s->id},
             fmt::format("compare-and-swap ping-pong between two work-items {}: time per hand-off, from one "
                         "player's successful compare-and-swap to the other's (launch time / moves). Both poll "
                         "with back-to-back compare-and-swaps, so when the counter changes the waiting "
                         "player's next one is on average half a round trip from where atomics execute: a "
                         "hand-off is about half a round trip plus the atomic unit's own time, not a whole "
                         "round trip, and can read below that level's load latency",
                         where));
    bound_by_samples(f, *p);
    if (wide) {
      f.note = "64-bit counter (the 32-bit ping-pong was not measurable).";
    } else if (const Point* q = at_x(s, 64)) {
      f.note = fmt::format("64-bit: {:.1f} ns.", q->y);
    }
    out.push_back(f);
  };
  latency("atomics.ping_pong.global", "atomics.global.latency_ns",
          "of different work-groups (global memory)");
  latency("atomics.ping_pong.local", "atomics.local.latency_ns", "of one work-group (local memory)");
  const Series* un = r.find_series("atomics.add.uncontended");
  if (const Point* p = at_x(un, 32)) {
    Finding f =
        make("atomics.global.add_throughput_gops", p->y, "Gops", 0.8, {un->id},
             "32-bit atomic adds per second, every work-item of a full device adding to its own word");
    bound_by_samples(f, *p);
    std::string note;
    if (const Point* q = at_x(un, 64)) note += fmt::format("64-bit {:.2f} Gops", q->y);
    const Series* co = r.find_series("atomics.add.contended");
    if (const Point* q = at_x(co, 32)) {
      note += fmt::format("{}all on one word {:.3f} Gops ({:.0f}x slower)", note.empty() ? "" : "; ", q->y,
                          p->y / std::max(q->y, 1e-12));
      f.evidence.push_back(co->id);
    }
    if (!note.empty()) f.note = note + ".";
    out.push_back(f);
  }
  return out;
}

std::vector<Finding> scheduling_findings(const Results& r) {
  std::vector<Finding> out;
  const Series* by_size = r.find_series("sched.by_wg_size");
  const Series* by_local = r.find_series("sched.by_local_bytes");
  double best = 0;
  const Series* best_series = nullptr;
  const Point* best_p = nullptr;
  std::vector<std::string> evidence;
  for (const Series* s : {by_size, by_local}) {
    if (s == nullptr || s->points.empty()) continue;
    evidence.push_back(s->id);
    for (const auto& p : s->points)
      if (p.y > best) {
        best = p.y;
        best_series = s;
        best_p = &p;
      }
  }
  if (best_p == nullptr) return out;
  const auto lower_bound = [](const Series* s, double x) {
    if (!s->meta.contains("lower_bound_at")) return false;
    for (const auto& v : s->meta["lower_bound_at"])
      if (v.get<double>() == x) return true;
    return false;
  };
  const auto per_cu_table = [](const Series* s, const char* unit) {
    std::string t;
    for (const auto& p : s->points)
      t += fmt::format("{}{:g}{}: {:.2f}", t.empty() ? "" : ", ", p.x, unit, p.y);
    return t;
  };

  // Resident groups per CU are whole numbers; the peak over all CUs divided
  // by the CU count is their mean at the fullest moment, so round it.
  const double rounded = std::max(1.0, std::round(best));
  Finding most =
      make("sched.max_workgroups_per_cu", rounded, "", std::abs(best - rounded) < 0.1 ? 0.85 : 0.5, evidence,
           "most work-groups resident at once (atomic counter on entry/exit, groups held ~1 ms) divided "
           "by the compute units, over group sizes and local memory per group");
  most.low = std::floor(best) >= 1 ? std::floor(best) : 1.0;
  // The smallest group size still held back by the work-items a compute
  // unit holds (half the size, twice the groups resident): the limit on
  // groups was not reached, only a lower bound.
  bool items_bound = false;
  if (by_size && by_size->points.size() >= 2 && best_series == by_size && best_p == &by_size->points.front()) {
    const Point& a = by_size->points[0];
    const Point& b = by_size->points[1];
    items_bound = b.x == 2 * a.x && a.y >= 1.8 * b.y && a.x > 1;
  }
  if (items_bound) {
    most.confidence = std::min(most.confidence, 0.45);
    most.high.reset();
  } else if (!lower_bound(best_series, best_p->x)) {
    most.high = std::max(1.0, std::ceil(best));
  }
  std::string note;
  if (by_size && !by_size->points.empty()) note += "by group size: " + per_cu_table(by_size, "");
  if (by_local && !by_local->points.empty())
    note +=
        fmt::format("{}by local bytes per group: {}", note.empty() ? "" : "; ", per_cu_table(by_local, " B"));
  if (best < 1) note += "; fewer groups ran at once than there are compute units";
  if (lower_bound(best_series, best_p->x))
    note += "; every launched group was resident at once: a lower bound";
  if (items_bound)
    note += "; at the smallest group size tried, halving the group still doubled the groups resident (the "
            "work-items a compute unit holds bound, not its limit on groups): a lower bound";
  most.note = note + ".";
  out.push_back(most);

  Finding one = make("sched.one_workgroup_per_cu", 0.0, "", 0.8, evidence,
                     "whether any configuration had more work-groups resident than compute units");
  one.value = best <= 1.0 + 1e-9;
  if (by_local) {
    double local_best = 0;
    for (const auto& p : by_local->points)
      if (p.x > 0) local_best = std::max(local_best, p.y);
    if (local_best > 0 && local_best <= 1.0 + 1e-9 && best > 1.0 + 1e-9)
      one.note = "groups that use local memory ran one per compute unit.";
  }
  out.push_back(one);

  if (by_size && !by_size->points.empty()) {
    double items = 0;
    const Point* at = nullptr;
    for (const auto& p : by_size->points)
      if (p.x * std::round(p.y) > items) {
        items = p.x * std::round(p.y);
        at = &p;
      }
    if (at && items > 0) {
      Finding f = make("sched.max_workitems_per_cu", items, "", 0.7, {by_size->id},
                       "largest group size x resident groups per compute unit over the group sizes tried");
      f.note = fmt::format("reached with groups of {:g}.", at->x);
      out.push_back(f);
    }
  }
  return out;
}

std::vector<Finding> level_cycle_findings(const Results& r, const std::vector<Finding>& found) {
  std::vector<Finding> out;
  double mhz = 0, factor = 0;
  std::string basis;
  for (const auto& f : found)
    if (f.id == "device.measured_clock_mhz" && f.confidence >= kPassOnConfidence && number(f) > 0) {
      mhz = number(f);
      factor = 1;
      basis = fmt::format("the measured {:.0f} MHz (device.measured_clock_mhz)", mhz);
    }
  if (mhz <= 0 && r.device.clock_mhz > 0) {
    mhz = r.device.clock_mhz;
    factor = 0.6;
    basis = fmt::format("the reported {:.0f} MHz (the clock under load was not measured; too high a count if the "
                        "device ran slower)",
                        mhz);
  }
  if (mhz <= 0) return out;
  for (const auto& ns : found) {
    if (!ns.id.starts_with("memory.") || !ns.id.ends_with(".latency_ns")) continue;
    const std::string level = ns.id.substr(0, ns.id.size() - std::string_view(".latency_ns").size());
    if (level.find('.', std::string_view("memory.").size()) != std::string::npos) continue;  // memory.tlb.*
    Finding f = make(level + ".latency_cycles", number(ns) * mhz / 1e3, "cycles", ns.confidence * factor,
                     ns.evidence, "the level's latency in ns times the clock in MHz");
    if (ns.low) f.low = *ns.low * mhz / 1e3;
    if (ns.high) f.high = *ns.high * mhz / 1e3;
    f.note = "at " + basis + ".";
    out.push_back(f);
  }
  return out;
}

std::vector<Finding> clock_findings(const Results& r) {
  std::vector<Finding> out;
  const double reported = r.device.clock_mhz;
  if (const Series* c = r.find_series("clock.counters"); c && !c->points.empty()) {
    const Point& p = c->points.front();
    // The probe's method names the counter where it is not NVIDIA's PTX pair
    // (the subgroup clock through Vulkan, over the launch's timestamps).
    const std::string how = c->meta.value("method", std::string());
    Finding f = make("device.measured_clock_mhz", p.y, "MHz", 0.9, {c->id},
                     how.empty() || how.starts_with("%clock64")
                         ? "SM cycle counter (%clock64) over the global ns timer (%globaltimer) across a ~10 ms "
                           "dependent chain, median of launches"
                         : how + "; across a ~10 ms dependent chain, median of launches");
    f.low = *std::min_element(p.samples.begin(), p.samples.end());
    f.high = *std::max_element(p.samples.begin(), p.samples.end());
    std::string note;
    if (reported > 0)
      note = fmt::format("{:.1f}% of the reported {:.0f} MHz", 100 * p.y / reported, reported);
    if (c->meta.contains("cycles_per_step"))
      note += fmt::format("; the chain's multiply-add takes {:.2f} cycles",
                          c->meta["cycles_per_step"].get<double>());
    f.note = note + ".";
    out.push_back(f);
    return out;
  }
  const Series* chain = r.find_series("clock.chain");
  if (chain == nullptr || chain->points.empty()) return out;
  if (reported <= 0) {
    const std::string why = chain->meta.value("note", std::string());
    note_unfound("device.measured_clock_mhz",
                 "no cycle counter was read" + (why.empty() ? std::string() : " (" + why + ")") +
                     ", and without a reported clock the chain's time per step cannot be turned into cycles",
                 {chain->id});
    return out;
  }
  const Point& p = chain->points.front();
  const double ns = p.y;
  if (ns <= 0) return out;
  const double cycles = ns * reported / 1e3;  // at the reported clock
  const double whole = std::max(1.0, std::round(cycles));
  const double off = std::abs(cycles - whole);  // 0: consistent with whole cycles; 0.5: no evidence
  const double mhz = whole * 1e3 / ns;
  Finding f =
      make("device.measured_clock_mhz", mhz, "MHz", std::clamp(0.6 * (1 - 2 * off), 0.1, 0.6), {chain->id},
           "a dependent multiply-add chain's time per step, assuming a step takes a whole number of "
           "cycles (the one nearest the reported clock's reading)");
  const double lo_ns = quantile(p.samples, 0.25), hi_ns = quantile(p.samples, 0.75);
  f.low = whole * 1e3 / std::max(hi_ns, 1e-9);
  f.high = whole * 1e3 / std::max(lo_ns, 1e-9);
  f.note = fmt::format(
      "{:.3f} ns per step = {:.2f} cycles at the reported {:.0f} MHz; read as {:g} cycles. Were it {:g} or "
      "{:g} "
      "cycles, the clock would be {:.0f} or {:.0f} MHz: without a cycle counter this is an estimate.",
      ns, cycles, reported, whole, whole - 1, whole + 1, (whole - 1) * 1e3 / ns, (whole + 1) * 1e3 / ns);
  out.push_back(f);
  return out;
}

}  // namespace gpuscope::analysis
