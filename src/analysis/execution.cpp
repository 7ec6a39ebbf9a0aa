#include "analysis/execution.hpp"

#include "analysis/execution_tuning.hpp"
#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gpuscope::analysis {

using namespace execution;

namespace {

// Relative spread of a point's samples (MAD sigma / median), floored at
// kMinNoiseFloor.
double rel_noise(const Point& p) {
  if (p.samples.size() < 2) return kMinNoiseFloor;
  return std::max(kMinNoiseFloor.value, summarize(p.samples).rel_spread);
}

std::string fmt_x(double x) { return fmt::format("{:g}", x); }

// The kernel facts the occupancy probe stored per REGS value, if any.
struct BuildFacts {
  std::optional<double> registers_used;
  double private_mem_bytes = 0;
};

BuildFacts build_facts(const Series& s, double x) {
  BuildFacts f;
  if (!s.meta.contains("kernels")) return f;
  for (const auto& k : s.meta["kernels"]) {
    if (!k.contains("regs") || k["regs"].get<double>() != x) continue;
    if (k.contains("registers_used") && k["registers_used"].is_number())
      f.registers_used = k["registers_used"].get<double>();
    if (k.contains("private_mem_bytes") && k["private_mem_bytes"].is_number())
      f.private_mem_bytes = k["private_mem_bytes"].get<double>();
  }
  return f;
}

// Theil-Sen: the median of all pairwise slopes, robust to a stray point;
// the quartiles of those slopes bound it.
struct Slope {
  double value = 0, q1 = 0, q3 = 0;
  size_t pairs = 0;
};

Slope theil_sen(const Series& s) {
  std::vector<double> slopes;
  for (size_t i = 0; i < s.points.size(); ++i)
    for (size_t j = i + 1; j < s.points.size(); ++j)
      if (s.points[j].x != s.points[i].x)
        slopes.push_back((s.points[j].y - s.points[i].y) / (s.points[j].x - s.points[i].x));
  Slope out;
  out.pairs = slopes.size();
  if (slopes.empty()) return out;
  out.value = median(slopes);
  out.q1 = quantile(slopes, 0.25);
  out.q3 = quantile(slopes, 0.75);
  return out;
}

// Indices where throughput falls from one point to the next by more than the
// two points' noise can explain (and by at least `min_drop`), and stays
// down: occupancy only ever falls as resources grow, so a later point that
// climbs back above the level before the drop shows the drop was noise.
std::vector<size_t> drops(const std::vector<const Point*>& pts, double min_drop) {
  std::vector<size_t> out;
  for (size_t i = 1; i < pts.size(); ++i) {
    const double noise = std::hypot(rel_noise(*pts[i]), rel_noise(*pts[i - 1]));
    const double threshold = std::max(min_drop, kDropSigmas * noise);
    double later = 0;
    for (size_t j = i; j < pts.size(); ++j) later = std::max(later, pts[j]->y);
    if (later < pts[i - 1]->y * (1 - threshold)) out.push_back(i);
  }
  return out;
}

// Throughput against a growing resource only ever falls; a curve where a
// later point stands more than kRoughRise above an earlier one (a CPU shared
// with other work) supports only guesses.
bool rough_curve(const std::vector<const Point*>& pts) {
  double lowest = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    if (i > 0 && pts[i]->y > kRoughRise * lowest) return true;
    lowest = i == 0 ? pts[i]->y : std::min(lowest, pts[i]->y);
  }
  return false;
}

}  // namespace

std::vector<Finding> wave_width_findings(const Series& s) {
  const auto& pts = s.points;
  if (pts.size() < 3) return {};
  // The step: the split of the block sizes into smaller and larger ones
  // whose mean throughputs differ the most (larger over smaller). A wave
  // holding both sides pays for both, so the step should be about 2x.
  // Geometric means: a split that puts fast points among the slow ones
  // pays for it (medians would not notice two misplaced points of seven).
  auto median_y = [&](size_t from, size_t to) {
    double sum = 0;
    for (size_t i = from; i < to; ++i) sum += std::log(std::max(pts[i].y, 1e-300));
    return std::exp(sum / static_cast<double>(to - from));
  };
  size_t w = 0;
  double step = 1;
  for (size_t i = 1; i < pts.size(); ++i) {
    const double lo = median_y(0, i), hi = median_y(i, pts.size());
    if (lo > 0 && hi / lo > step) {
      step = hi / lo;
      w = i;
    }
  }

  Finding f;
  f.id = "exec.wave_width";
  f.unit = "";
  f.evidence = {s.id};
  f.method =
      "Block size of consecutive work-items taking one branch side at which throughput steps up (the split "
      "of "
      "block sizes whose geometric-mean throughputs differ most): below it a wave holds both sides and pays "
      "for both.";
  if (step < kDivergenceStep) {
    // Flat: even single work-items alternating sides cost nothing extra.
    f.value = 1.0;
    f.low = 1.0;
    f.high = 1.0;
    f.confidence = 0.3;
    f.note = fmt::format(
        "No divergence penalty at any block size from {} to {} work-items (largest step {:.2f}x): the "
        "work-items do not run in lockstep (a CPU runs a work-group's work-items as a loop, vectorised only "
        "where the compiler could turn the branch into masks), or the compiler merged the two sides. A wave "
        "width of 1 in effect, not a hardware vector width.",
        fmt_x(pts.front().x), fmt_x(pts.back().x), step);
    return {f};
  }
  // How cleanly the points fall on either side of the step.
  const double threshold = std::sqrt(median_y(0, w) * median_y(w, pts.size()));
  int misplaced = 0;
  for (size_t i = 0; i < pts.size(); ++i)
    if ((i < w) != (pts[i].y < threshold)) ++misplaced;
  const double width = pts[w].x;
  f.value = width;
  const bool doubling = pts[w].x == 2 * pts[w - 1].x;
  f.low = doubling ? width : pts[w - 1].x + 1;
  f.high = width;
  double conf = 0.9;
  if (std::abs(std::log2(step) - 1) > kStepOffTwo) conf -= 0.25;  // not the 2x of two sides issued
  conf -= 0.2 * misplaced;
  if (w + 1 == pts.size()) conf -= 0.2;  // only the largest block was fast
  f.confidence = std::clamp(conf, 0.2, 0.95);
  f.note = fmt::format(
      "Blocks of {} or more agreeing work-items run {:.2f}x faster than smaller blocks (both sides issued: "
      "2x "
      "expected){}.",
      fmt_x(width), step,
      misplaced ? fmt::format("; {} point(s) on the wrong side of the step", misplaced) : "");
  return {f};
}

std::vector<Finding> required_wave_width_findings(const Series& s) {
  const auto required = s.meta.value("required_subgroup_size", 0);
  // A wave of `required` lanes shows as the step from blocks of `required`
  // to smaller ones: a sweep that stopped before twice it cannot tell.
  if (required <= 0 || s.points.empty() || s.points.back().x < 2.0 * required) return {};
  auto fs = wave_width_findings(s);
  if (fs.empty()) return {};
  Finding& width = fs.front();
  const std::string id = fmt::format("exec.wave_width.subgroup_{}", required);
  width.id = id;
  width.method = fmt::format("As exec.wave_width, with the kernel built to require subgroup size {}. ", required) +
                 width.method;
  Finding agrees;
  agrees.id = id + ".as_required";
  agrees.unit = "";
  agrees.evidence = {s.id};
  agrees.value = number(width) == required;
  agrees.confidence = width.confidence;
  agrees.method = "Whether the wave width measured under the request is the size required.";
  agrees.note = fmt::format("Required {}, measured {}.", required, fmt_x(number(width)));
  fs.push_back(agrees);
  return fs;
}

std::vector<Finding> partition_findings(const std::vector<const Series*>& series) {
  // Observations: throughput at each stride relative to stride 1, with the
  // number of working waves of that series.
  struct Obs {
    double stride, active, ratio;
  };
  std::vector<Obs> obs;
  std::vector<std::string> ids;
  double max_stride = 1;
  for (const Series* s : series) {
    if (s == nullptr || s->points.size() < 2 || s->points.front().x != 1 || s->points.front().y <= 0)
      continue;
    const double active = s->meta.value("active_waves_per_group", 0.0);
    if (!(active >= 1 && active <= 1e6)) continue;  // a count of waves in one work-group
    ids.push_back(s->id);
    for (const auto& p : s->points) {
      // The model's error is a log ratio: a point that did no work (or
      // whose stride is not a count of waves) has no place in the fit.
      const double ratio = p.y / s->points.front().y;
      if (!(ratio > 0) || !std::isfinite(ratio) || !(p.x >= 1) || p.x > 1e9) continue;
      obs.push_back({p.x, active, ratio});
      max_stride = std::max(max_stride, p.x);
    }
  }
  if (obs.size() < 3) return {};
  // P round-robin partitions: waves 0, s, 2s, ... (a of them) cycle over
  // P / gcd(s, P) partitions, so the busiest holds ceil(a gcd(s, P) / P) of
  // them, against ceil(a / P) at stride 1; throughput goes as a over the
  // busiest partition's load.
  auto predicted = [](const Obs& o, double partitions) {
    const double g = std::gcd(static_cast<long>(o.stride), static_cast<long>(partitions));
    return std::ceil(o.active / partitions) / std::ceil(o.active * g / partitions);
  };
  struct Fit {
    double partitions, error;
  };
  std::vector<Fit> fits;
  // Powers of two and 3, 6, 12: GPUs with 3 execution engines per core exist
  // (Mali-G52); strides of 3 and 6 are what tell them apart.
  for (double p : {1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0}) {
    double err = 0;
    for (const Obs& o : obs) err += std::abs(std::log(o.ratio / predicted(o, p)));
    fits.push_back({p, err / static_cast<double>(obs.size())});
  }
  std::stable_sort(fits.begin(), fits.end(), [](const Fit& a, const Fit& b) { return a.error < b.error; });
  const Fit& best = fits[0];
  // Candidates the data cannot tell apart (all predictions equal on these
  // strides): the smallest is the one reported, the others named.
  std::vector<double> tied;
  for (const Fit& f : fits)
    if (f.error <= best.error + kTiedFitError) tied.push_back(f.partitions);
  if (tied.empty()) return {};  // every fit's error is NaN: nothing to choose between
  std::sort(tied.begin(), tied.end());

  Finding f;
  f.id = "exec.scheduler_partitions";
  f.value = tied.front();
  f.unit = "";
  f.evidence = ids;
  f.method =
      "Throughput of a few working waves spaced `stride` apart in one work-group per compute unit, against "
      "the model of P partitions taking waves round-robin (a waves at stride s load the busiest of them with "
      "ceil(a gcd(s, P) / P)); P in 1, 2, 3, 4, 6, 8, 12, 16 fitted by mean log error.";
  f.confidence = best.error < kGoodFitError ? 0.8 : best.error < kFairFitError ? 0.5 : 0.3;
  std::string detail;
  for (const Obs& o : obs)
    detail += fmt::format("{}{} waves at stride {}: {:.2f}x", detail.empty() ? "" : "; ", fmt_x(o.active),
                          fmt_x(o.stride), o.ratio);
  if (tied.size() > 1) {
    std::string others;
    for (size_t i = 1; i < tied.size(); ++i) others += (i > 1 ? ", " : "") + fmt_x(tied[i]);
    f.confidence = std::min(f.confidence, 0.4);
    f.note = fmt::format("Strides up to {} cannot tell {} partitions from {}. ", fmt_x(max_stride),
                         fmt_x(tied.front()), others);
  } else {
    f.low = f.high = tied.front();
  }
  f.note +=
      tied.front() == 1 && tied.size() == 1
          ? "Working waves ran at the same rate at every stride: one scheduler per compute unit, or waves "
            "not dealt to partitions by their index. "
          : fmt::format(
                "Waves of a work-group dealt round-robin to {} scheduler partitions fit best (model "
                "error {:.2f}). ",
                fmt_x(tied.front()), best.error);
  f.note += "Measured: " + detail + ".";
  return {f};
}

std::vector<Finding> max_waves_findings(const Series& s, double wave_width, bool cpu) {
  const auto& pts = s.points;
  if (pts.size() < 2 || wave_width <= 0) return {};
  const double y0 = pts.front().y;
  size_t jump = 0;
  for (size_t i = 1; i < pts.size(); ++i) {
    if (pts[i].y > kSecondRoundJump * y0) {
      jump = i;
      break;
    }
    if (pts[i].y > kGradualRise * y0) return {};  // rising gradually: no clean capacity to read
  }
  if (jump == 0) return {};  // everything launched fit at once: capacity not reached
  const double fit_items = pts[jump - 1].x;
  const double over_items = pts[jump].x;
  Finding f;
  f.id = "exec.max_waves_per_cu";
  f.value = fit_items / wave_width;
  f.low = fit_items / wave_width;
  f.high = std::max(fit_items / wave_width, std::floor((over_items - 1) / wave_width));  // whole waves
  f.unit = "";
  f.evidence = {s.id};
  f.method = fmt::format(
      "Latency-bound launches of growing size: time stays flat while every work-group is resident and "
      "steps up once some must wait for a second round; work-items resident per compute unit / wave width "
      "({}).",
      fmt_x(wave_width));
  f.confidence = over_items <= kTightBracket * fit_items + wave_width ? 0.85 : 0.6;
  if (jump == 1 && !cpu && over_items == 2 * fit_items) {
    f.note = fmt::format(
        "One work-group of {} work-items fits at once per compute unit, two ({}) do not (time x{:.2f}): "
        "between {} and {} waves.",
        fmt_x(fit_items), fmt_x(over_items), pts[jump].y / y0, fmt_x(fit_items / wave_width),
        fmt_x(*f.high));
  } else if (jump == 1 && cpu) {
    f.confidence = 0.3;
    f.note = fmt::format(
        "Time already grew at the second launch size: at most {} work-items ({} waves of {}) at once per "
        "compute unit; on a CPU a compute unit is a hardware thread running work-groups one after another, "
        "and waves are not resident in the GPU sense.",
        fmt_x(fit_items), fmt_x(fit_items / wave_width), fmt_x(wave_width));
  } else {
    f.note = fmt::format("{} work-items fit at once per compute unit, {} do not (time x{:.2f}).",
                         fmt_x(fit_items), fmt_x(over_items), pts[jump].y / y0);
  }
  if (s.meta.contains("refinement") && s.meta["refinement"].is_string())
    f.note += " Refinement in smaller work-groups: " + s.meta["refinement"].get<std::string>() + ".";
  return {f};
}

std::vector<Finding> occupancy_findings(const Series& s, std::optional<double> max_waves,
                                        std::optional<double> wave_width) {
  // Points whose build spilled to memory measure the spills, not occupancy.
  // A spill shows as more private memory than the smallest build's (PoCL
  // reports the same non-zero size for every build; NVIDIA reports 0).
  std::vector<const Point*> pts;
  std::vector<double> spilled;
  bool all_known = true;
  const double base_private = s.points.empty() ? 0 : build_facts(s, s.points.front().x).private_mem_bytes;
  for (const auto& p : s.points) {
    const BuildFacts b = build_facts(s, p.x);
    if (b.private_mem_bytes > base_private) {
      spilled.push_back(p.x);
      continue;
    }
    if (!b.registers_used) all_known = false;
    pts.push_back(&p);
  }
  if (pts.size() < 3) return {};
  // Occupancy depends on the registers a build uses, which the compiler
  // does not make monotone in the live values asked for (NVIDIA unrolls
  // small bodies further and uses more): points are ordered by registers
  // used, and builds using the same count pooled into one point.
  // Counts from some builds and not others (a build served from a driver's
  // cache logs none) cannot be mixed: then all points use live values.
  auto used = [&](const Point* p) {
    return all_known ? build_facts(s, p->x).registers_used.value_or(p->x) : p->x;
  };
  std::vector<Point> pooled;
  {
    std::vector<const Point*> by_regs = pts;
    std::stable_sort(by_regs.begin(), by_regs.end(),
                     [&](const Point* a, const Point* b) { return used(a) < used(b); });
    for (const Point* p : by_regs) {
      if (!pooled.empty() && pooled.back().x == used(p)) {
        auto& q = pooled.back();
        q.samples.insert(q.samples.end(), p->samples.begin(), p->samples.end());
        q.y = median(q.samples);
      } else {
        pooled.push_back(Point{used(p), p->y, p->samples});
      }
    }
  }
  pts.clear();
  for (const auto& p : pooled) pts.push_back(&p);
  if (pts.size() < 3) return {};
  auto regs = [](const Point* p) { return p->x; };
  const double ref = pts[0]->y;
  const auto cliffs = drops(pts, kMinOccupancyDrop);

  Finding f;
  f.id = "exec.registers.occupancy_cliffs";
  f.unit = all_known ? "registers" : "live values";
  f.evidence = {s.id};
  f.method = all_known
                 ? "Drops of a latency-bound kernel's throughput as the registers the driver reports it "
                   "using grow; each cliff is the first register count measured at the lower occupancy."
                 : "Drops of a latency-bound kernel's throughput as the values it keeps live grow (the "
                   "driver does not say how many registers it used, so cliffs are in live values, below "
                   "the registers by the kernel's own overhead).";
  std::vector<double> values;
  std::string detail;
  for (size_t i : cliffs) {
    values.push_back(regs(pts[i]));
    detail += fmt::format("{}{}..{}: {:.2f}x", detail.empty() ? "" : "; ", fmt_x(regs(pts[i - 1]) + 1),
                          fmt_x(regs(pts[i])), pts[i]->y / ref);
  }
  f.value = values;
  f.confidence =
      (all_known ? 0.8 : 0.5) * (pts.size() >= kFullCurvePoints ? 1.0 : 0.7) * (rough_curve(pts) ? 0.5 : 1.0);
  f.note = values.empty()
               ? "No occupancy drop over the register counts measured."
               : "Cliffs (range where each lies: throughput vs the first plateau): " + detail + ".";
  if (!spilled.empty()) {
    std::string xs;
    for (double x : spilled) xs += (xs.empty() ? "" : ", ") + fmt_x(x);
    f.note += " Builds that spilled to memory left out (live values " + xs + ").";
  }
  std::vector<Finding> out = {f};

  // The register file those plateaus imply: waves resident = max waves x
  // throughput / the first plateau's (which must be at full occupancy);
  // registers = waves x wave width x registers per work-item. Allocation
  // granularity (whole waves per scheduler partition) makes each product
  // somewhat below the file; the median is the estimate, min..max its range.
  if (all_known && max_waves && wave_width && !values.empty()) {
    std::vector<double> per_cu;
    for (const Point* p : pts) {
      if (p->y > kFullOccupancyShare * ref) continue;
      per_cu.push_back(*max_waves * p->y / ref * *wave_width * regs(p));
    }
    if (per_cu.size() >= 2) {
      Finding rf;
      rf.id = "exec.registers.per_cu";
      rf.value = median(per_cu);
      rf.low = *std::min_element(per_cu.begin(), per_cu.end());
      rf.high = *std::max_element(per_cu.begin(), per_cu.end());
      rf.unit = "registers";
      rf.evidence = {s.id};
      rf.method = fmt::format(
          "Waves resident at each reduced plateau (max waves per compute unit {} x throughput relative to "
          "the first plateau) x wave width {} x registers used, median over the plateaus.",
          fmt_x(*max_waves), fmt_x(*wave_width));
      rf.confidence = per_cu.size() >= kRegisterFilePlateaus ? 0.6 : 0.4;
      out.push_back(rf);
    }
  }
  return out;
}

std::vector<Finding> local_occupancy_findings(const Series& s) {
  std::vector<const Point*> pts;
  for (const auto& p : s.points) pts.push_back(&p);
  if (pts.size() < 3) return {};
  const auto cliffs = drops(pts, kMinOccupancyDrop);
  Finding f;
  f.id = "exec.local.occupancy_cliffs_bytes";
  f.unit = "B";
  f.evidence = {s.id};
  f.method =
      "Drops of a latency-bound kernel's throughput as the local memory each work-group reserves grows: "
      "fewer work-groups fit on a compute unit.";
  std::vector<double> values;
  std::string detail;
  const double ref = std::max(pts[0]->y, pts[1]->y);
  for (size_t i : cliffs) {
    values.push_back(pts[i]->x);
    detail += fmt::format("{}{}..{} B: {:.2f}x", detail.empty() ? "" : "; ", fmt_x(pts[i - 1]->x + 1),
                          fmt_x(pts[i]->x), pts[i]->y / ref);
  }
  f.value = values;
  // A cliff at the last point has no later point to confirm it.
  const bool last_unconfirmed = !cliffs.empty() && cliffs.back() + 1 == pts.size();
  f.confidence =
      (pts.size() >= kFullCurvePoints ? 0.7 : 0.5) * (rough_curve(pts) ? 0.5 : 1.0) * (last_unconfirmed ? 0.7 : 1.0);
  f.note = values.empty() ? "No occupancy drop over the local memory sizes measured."
                          : "Cliffs (range, throughput vs the first plateau): " + detail + ".";
  return {f};
}

std::vector<Finding> code_bytes_findings(const Series& s) {
  if (s.points.size() < 3) return {};
  const Slope slope = theil_sen(s);
  if (slope.value <= 0) return {};
  const std::string format = s.meta.value("binary_format", std::string("unknown"));
  Finding f;
  f.id = "exec.code_bytes_per_op";
  f.value = slope.value;
  f.low = slope.q1;
  f.high = slope.q3;
  f.unit = "B";
  f.evidence = {s.id};
  f.method =
      "Theil-Sen slope of the program binary's size (CL_PROGRAM_BINARIES) against the adds in the loop "
      "body; interval: quartiles of the pairwise slopes.";
  const double spread = (slope.q3 - slope.q1) / slope.value;
  f.confidence = spread < kSlopeTightSpread ? 0.9 : spread < kSlopeLooseSpread ? 0.6 : 0.3;
  if (format == "ptx") {
    f.note =
        "The binary is PTX text (NVIDIA's virtual ISA), not machine code: this is bytes of assembly text per "
        "add, not of the instructions the GPU fetches.";
  } else if (format == "pocl") {
    f.note =
        "The binary is PoCL's container of LLVM IR for the program, not machine code: this is IR bytes per "
        "add.";
  } else if (format == "elf") {
    f.note = "The binary is an ELF object: bytes per add include any per-instruction headers.";
  } else if (format == "machine code") {
    f.note = "The binary is the program's machine code: bytes per add are the add's encoding.";
  } else {
    f.note = "Binary format: " + format + ".";
  }
  f.confidence = format == "ptx" || format == "pocl" ? std::min(f.confidence, 0.8) : f.confidence;
  return {f};
}

std::vector<Finding> icache_findings(const Series& s, const Series* binary) {
  const auto& pts = s.points;
  if (pts.size() < 3) return {};
  // The plateau: the median of the three smallest bodies (a stray fast or
  // slow point must not set it).
  const double ref = median(std::vector<double>{pts[0].y, pts[1].y, pts[2].y});
  if (ref <= 0) return {};
  // The first body from which throughput stays below kPeakShare of the
  // plateau, provided it ends below kStillFast: a lasting drop, read where
  // it begins.
  size_t first_slow = pts.size();
  for (size_t i = pts.size(); i-- > 0;) {
    if (pts[i].y >= kPeakShare * ref) break;
    first_slow = i;
  }
  if (first_slow < pts.size() && pts.back().y >= kStillFast * ref) first_slow = pts.size();
  // Rough curves (a CPU shared with other work) make any reading a guess.
  std::vector<const Point*> all;
  for (const auto& p : pts) all.push_back(&p);
  const bool rough = rough_curve(all);
  Finding ops;
  ops.id = "exec.icache_ops";
  ops.unit = "ops";
  ops.evidence = {s.id};
  ops.method =
      "Largest loop body (adds) still at >= 85% of peak throughput and the first body after which it stays "
      "below: the instruction cache holds between the two.";
  if (first_slow == pts.size()) {
    ops.value = pts.back().x;
    ops.low = pts.back().x;
    ops.confidence = rough ? 0.2 : 0.3;
    ops.note = fmt::format(
        "No lasting drop up to {} adds per loop: the instruction cache (or its backing level) "
        "holds at least that much, or misses cost nothing here.",
        fmt_x(pts.back().x));
    return {ops};
  }
  if (first_slow == 0) return {};
  const double fit = pts[first_slow - 1].x;
  const double over = pts[first_slow].x;
  ops.value = fit;
  ops.low = fit;
  ops.high = over;
  ops.confidence = (over <= 2 * fit ? 0.75 : 0.5) * (rough ? 0.5 : 1.0);
  ops.note = fmt::format("Throughput {:.2f}x of peak at {} adds (fits up to {}).", pts[first_slow].y / ref,
                         fmt_x(over), fmt_x(fit));
  // A further drop past the first: a second level of instruction caching.
  const double after = pts[first_slow].y;
  for (size_t i = first_slow + 1; i < pts.size(); ++i) {
    if (pts[i].y < kStaysSlow * after) {
      ops.note += fmt::format(" A second drop to {:.2f}x by {} adds (a second instruction-cache level).",
                              pts[i].y / ref, fmt_x(pts[i].x));
      break;
    }
  }

  // Bytes: from an encoding known for the device, or a machine-code binary.
  std::optional<double> bytes_per_op;
  std::string source;
  if (s.meta.contains("machine_bytes_per_op") && s.meta["machine_bytes_per_op"].is_number()) {
    bytes_per_op = s.meta["machine_bytes_per_op"].get<double>();
    source = s.meta.value("machine_bytes_source", std::string("the device's known encoding"));
  } else if (const std::string format = binary ? binary->meta.value("binary_format", std::string()) : "";
             format == "elf" || format == "machine code") {
    const auto cb = code_bytes_findings(*binary);
    if (!cb.empty()) {
      bytes_per_op = number(cb.front());
      source = "the slope of the machine-code binary's size";
    }
  }
  std::vector<Finding> out = {ops};
  if (bytes_per_op) {
    Finding bytes = ops;
    bytes.id = "exec.icache_bytes";
    bytes.unit = "B";
    bytes.value = fit * *bytes_per_op;  // NOLINT: a double, not a list
    bytes.low = fit * *bytes_per_op;
    bytes.high = over * *bytes_per_op;
    bytes.method += fmt::format(" Bytes: {} B per add, from {}.", fmt_x(*bytes_per_op), source);
    bytes.confidence = ops.confidence * 0.8;
    out.push_back(bytes);
  } else {
    out.front().note +=
        " No machine-code size per add is known for this device (its program binary is not machine code), so "
        "the capacity is given in adds only.";
  }
  return out;
}

}  // namespace gpuscope::analysis
