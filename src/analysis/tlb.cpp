#include "analysis/tlb.hpp"

#include "analysis/tlb_tuning.hpp"

#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuscope::analysis {

using namespace tlb;

namespace {

using StrideCurve = std::pair<const Series*, TlbCurve>;

bool within_factor(double ratio, double factor = kSameReadingFactor) {
  return ratio >= 1 / factor && ratio <= factor;
}

double first_reach(const TlbCurve& c) { return c.steps.front().reach_bytes; }

// Which stride's steps are read (docs/inference.md 4, rules
// earliest-step-scaled-by-stride and two-strides-confirm-reach).
struct ReachStride {
  const StrideCurve* best = nullptr;          // the stride whose steps are read; null: no rise anywhere
  const StrideCurve* pair_smaller = nullptr;  // the other stride of a confirmed pair
  const StrideCurve* scaled_by = nullptr;     // the larger stride scaling the earliest step
  bool confirmed = false;                     // another stride's first step agrees with best's
};

// Strides at or below the page size all put the first step at entries x
// page; larger strides put it later (entries x stride). So the reach is
// the earliest first step that another stride confirms (within
// kSameReadingFactor), read from the larger stride of the pair (agreeing,
// both are at most the page; the larger puts fewer loads on each page, so
// its rise is the steeper and its height the whole penalty sooner): a step
// that one stride alone shows may be the caches' (its lines crowding sets
// the control's do not), and one earlier than what two strides agree on
// is. Without a confirmed pair, the earliest step (the only reading where
// pages are smaller than the second stride); the note says which.
//
// The earliest step is confirmed the other way too: where a larger
// stride's first step falls as many times later as its stride is larger,
// both strides are at least the page and put the step at entries x stride,
// the same entry count running out; the pages are at most the smaller
// stride, whose step is then the reach and puts one load on each page. That
// reading stands against a pair agreeing later (a drawn GPU of 4096 entries
// of 4 KiB pages stepped at 16 MiB with the 4 KiB stride and 256 MiB with
// the 64 KiB one; its 2 MiB stride's lines, crowding a third of a 96-set
// L1, rose at 256 MiB too, and the pair of those two was read as the
// reach). Only for the earliest step: a scaled pair of two larger strides
// over a smaller stride's earlier step is two strides past the page, and
// the smaller stride's step the reach. And only where the agreeing pair
// puts the reach later: where a pair agrees on the earliest step itself,
// its larger stride reads the penalty as before (it puts fewer loads on
// each page; a drawn GPU's 4 KiB stride's lines crowded its 128 B-line L2
// past the reach, tripling that stride's rise).
ReachStride choose_reach_stride(const std::vector<StrideCurve>& curves) {
  ReachStride r;
  const StrideCurve* earliest = nullptr;
  for (const auto& c : curves)
    if (!c.second.steps.empty() && (!earliest || first_reach(c.second) < first_reach(earliest->second)))
      earliest = &c;
  for (const auto& b : curves) {
    if (!earliest || b.second.steps.empty() ||
        b.second.stride_bytes < kScalingStrideRatio * earliest->second.stride_bytes)
      continue;
    const double later = first_reach(b.second) / first_reach(earliest->second);
    const double strides = static_cast<double>(b.second.stride_bytes) / earliest->second.stride_bytes;
    if (within_factor(later / strides)) {
      r.scaled_by = &b;
      break;
    }
  }
  for (const auto& a : curves) {
    if (a.second.steps.empty()) continue;
    for (const auto& b : curves) {
      if (&a == &b || b.second.steps.empty() || b.second.stride_bytes <= a.second.stride_bytes) continue;
      const double ratio = first_reach(b.second) / first_reach(a.second);
      if (!within_factor(ratio)) continue;
      if (!r.best || std::min(first_reach(a.second), first_reach(b.second)) < first_reach(r.best->second)) {
        r.best = &b;
        r.pair_smaller = &a;
        r.confirmed = true;
      }
    }
  }
  if (r.scaled_by &&
      (!r.best || first_reach(r.best->second) > kSameReadingFactor * first_reach(earliest->second))) {
    r.best = earliest;
    r.pair_smaller = nullptr;
    r.confirmed = false;
  } else {
    r.scaled_by = nullptr;
  }
  if (!r.best) r.best = earliest;
  return r;
}

// Every stride's steps in words, for the notes.
std::string strides_summary(const std::vector<StrideCurve>& curves) {
  std::string summary;
  for (const auto& [s, c] : curves) {
    summary += fmt::format("{}{} B stride: ", summary.empty() ? "" : "; ", c.stride_bytes);
    if (c.steps.empty())
      summary += "no rise up to " +
                 fmt::format("{:.0f} MiB", c.footprint.empty() ? 0.0 : c.footprint.back() / 1048576);
    for (size_t i = 0; i < c.steps.size(); ++i)
      summary += fmt::format("{}+{:.1f} ns from {:.1f} MiB", i ? ", " : "", c.steps[i].penalty_ns,
                             c.steps[i].reach_bytes / 1048576);
  }
  return summary;
}

// Rule no-rise-is-a-lower-bound: the reach is at least the largest
// footprint swept with the smallest stride.
std::vector<Finding> no_rise_findings(const std::vector<StrideCurve>& curves, const Series& control,
                                      const std::string& summary) {
  std::vector<Finding> out;
  double reach = 0;
  const Series* ev = nullptr;
  for (const auto& [s, c] : curves)
    if (!c.footprint.empty() && c.footprint.back() > reach) {
      reach = c.footprint.back();
      ev = s;
    }
  if (!ev) return out;
  Finding f;
  f.id = "memory.tlb.reach_bytes";
  f.value = reach;
  f.unit = "B";
  f.low = reach;
  f.confidence = kNoRiseConfidence;
  f.evidence = {ev->id, control.id};
  f.method =
      "page-strided chase minus a same-size chase within few pages: no rise of the translation "
      "time anywhere on the sweep";
  f.note = "A lower bound: translation stayed cached over the whole sweep (" + summary + ").";
  out.push_back(std::move(f));
  return out;
}

// Where the first level's penalty comes from, where not from the chosen
// stride's own first step.
struct PenaltyReading {
  const StrideCurve* from = nullptr;  // another stride whose first step gives the penalty
  std::string why;                    // why that stride's (or why the bound)
  double cap = 0;                     // the chase's bound, where it replaces the reading
  std::string bound_note;             // why another stride's reading gave way to the chosen one's
};

// Rules one-load-a-page-reads-penalty and whole-rise-from-pair:
// - Where the chosen stride puts several loads on each page, the miss
//   curve's shape past the reach depends on the order they come in and on
//   the replacement (tlb_shape.hpp), and so does the penalty read through
//   it: a 4 KiB stride over 16 KiB pages read a drawn GPU's 246 ns as 301.
//   A larger stride whose first step falls a power of two (2 or more,
//   within kSameReadingFactor) later implies pages of that stride over the
//   power, larger than the chosen stride: it puts one load on each page, so
//   no revisits blur its rise. Its penalty is taken where its shape has one
//   load a page, its height is the miss's whole cost
//   (TlbStep::penalty_whole) and within kSameReadingFactor of the chosen
//   stride's (the same miss read through two shapes; a far lower rise is
//   the huge stride's lines crowding a cache's sets, which two drawn GPUs'
//   2 MiB strides showed at 16 MiB). Not where the chosen stride rose in
//   one sharp step of two points or more: no shape reads that height, it is
//   the whole miss, and a larger stride stepping later there is the TLB's
//   sets, not larger pages (a 4-way TLB of 4 KiB pages whose 64 KiB stride
//   stepped 8x later, read 150 ns for 165). The other shapes with one load
//   a page can be several loads a page misfitted (a 4 KiB stride over
//   16 KiB pages fitted with 2-way sets, read 79 ns for 87). Nor where a
//   larger stride's step scaled the chosen one's (scaled_by): the pages are
//   at most the chosen stride, which puts one load on each.
// - Where a confirmed pair's larger stride (the chosen one) shows only
//   part of the rise and the smaller one its whole height, the smaller's.
PenaltyReading penalty_stride(const std::vector<StrideCurve>& curves, const ReachStride& r) {
  PenaltyReading p;
  const TlbCurve& c = r.best->second;
  const bool own_step_whole = c.steps.front().sharp && c.steps.front().penalty_whole;
  for (const auto& o : curves) {
    if (own_step_whole || r.scaled_by || o.second.stride_bytes <= c.stride_bytes || o.second.steps.empty())
      continue;
    const TlbStep& os = o.second.steps.front();
    if (!os.penalty_whole || !os.one_load_per_page) continue;
    const double heights = os.penalty_ns / c.steps.front().penalty_ns;
    if (!within_factor(heights)) continue;
    const double later = os.reach_bytes / c.steps.front().reach_bytes, k = std::round(std::log2(later));
    if (k < 1 || !within_factor(later / std::exp2(k))) continue;
    const double page = o.second.stride_bytes / std::exp2(k);
    if (page <= c.stride_bytes) continue;
    p.from = &o;
    p.why = fmt::format(
        "its first step falls {:.1f}x later than the {} B stride's, so pages are about {} B and it puts "
        "one load on each, where the {} B stride puts several",
        later, c.stride_bytes, page, c.stride_bytes);
    return p;
  }
  if (r.pair_smaller && !c.steps.front().penalty_whole && r.pair_smaller->second.steps.front().penalty_whole) {
    p.from = r.pair_smaller;
    p.why = fmt::format(
        "its first step agrees with the {} B stride's on the reach and rises to the miss's whole cost, "
        "where the {} B stride's shows only part of it",
        c.stride_bytes, c.stride_bytes);
  }
  return p;
}

// Rule chase-bounds-penalty: the latency probe's chase bounds the first
// level's penalty from above (chase_penalty_bound). A reading above
// kPenaltyOverChaseBound x the bound is the strided lines missing caches
// that the control's lines hit. Then the stride that agrees on the reach
// (first steps within kSameReadingFactor) and reads closest to the bound,
// within kPenaltyOverChaseBound of it, gives the penalty; where none does,
// the bound itself, as an upper bound.
void hold_penalty_to_chase(const std::vector<StrideCurve>& curves, const ReachStride& r, const Series* chase,
                           PenaltyReading& p) {
  const TlbCurve& c = r.best->second;
  const StrideCurve& reading = p.from ? *p.from : *r.best;  // the stride the penalty comes from so far
  const TlbStep& first = reading.second.steps.front();
  const std::optional<double> bound =
      chase ? chase_penalty_bound(*chase, c.steps.front().reach_bytes, c.steps.front().reach_high)
            : std::nullopt;
  if (!bound || !(first.penalty_ns > kPenaltyOverChaseBound * *bound)) return;
  const StrideCurve* closest = nullptr;
  const auto off = [&](const TlbStep& st) { return std::abs(std::log(st.penalty_ns / *bound)); };
  for (const auto& o : curves) {
    if (o.second.steps.empty()) continue;
    const TlbStep& os = o.second.steps.front();
    const double at = os.reach_bytes / c.steps.front().reach_bytes;
    if (!within_factor(at) || os.penalty_ns > kPenaltyOverChaseBound * *bound) continue;
    if (!closest || off(os) < off(closest->second.steps.front())) closest = &o;
  }
  const std::string over = fmt::format(
      "the {} B stride's {:.1f} ns is more than {:g}x the {:.1f} ns that latency.global's rise past the "
      "reach allows (its lines missing caches the control's hit, or its rise misread)",
      reading.second.stride_bytes, first.penalty_ns, kPenaltyOverChaseBound.value, *bound);
  if (closest == r.best) {  // the chosen stride's own reading, where another's had replaced it
    p.from = nullptr;
    p.bound_note = fmt::format(" Its own reading stands: {}.", over);
  } else if (closest) {
    p.from = closest;
    p.why = fmt::format("it agrees on the reach and reads within {:g}x of the chase's bound, where {}",
                        kPenaltyOverChaseBound.value, over);
  } else {
    p.cap = *bound;
    p.why = over;
  }
}

double step_confidence(const TlbStep& st) {
  return st.points >= kStepSurePoints ? kStepSureConfidence : kStepFewPointsConfidence;
}

// memory.tlb[.L<n>].reach_bytes and .miss_penalty_ns for each step of the
// chosen stride; the first level's penalty as `p` says.
void level_findings(const Series& control, const ReachStride& r, const PenaltyReading& p, const Series* chase,
                    const std::string& summary, std::vector<Finding>& out) {
  const TlbCurve& c = r.best->second;
  const std::vector<std::string> evidence = {r.best->first->id, control.id};
  const std::string method = fmt::format(
      "chase with one load per {} B block minus a chase over as many lines within few pages; "
      "steps of the difference by change-point segmentation",
      c.stride_bytes);
  for (size_t i = 0; i < c.steps.size(); ++i) {
    const TlbStep& st = c.steps[i];
    const std::string prefix = i == 0 ? "memory.tlb." : fmt::format("memory.tlb.L{}.", i + 1);
    const double conf = step_confidence(st);
    Finding reach;
    reach.id = prefix + "reach_bytes";
    reach.value = st.reach_bytes;
    reach.unit = "B";
    reach.low = st.reach_low;
    reach.high = st.reach_high;
    reach.confidence = conf;
    reach.evidence = evidence;
    reach.method = method;
    reach.note = fmt::format(
        "{}Translation time per load rises by {:.1f} ns between {:.1f} and {:.1f} MiB of "
        "footprint{}.{} All strides: {}.",
        i == 0 ? "First TLB level to run out. " : fmt::format("TLB level {}. ", i + 1), st.penalty_ns,
        st.reach_low / 1048576, st.reach_high / 1048576,
        st.shape.empty() ? "" : "; the rise's shape: " + st.shape + ", read where misses begin",
        i > 0         ? ""
        : r.scaled_by ? fmt::format(" The {} B stride's first step falls {:.1f}x later, as many times as its "
                                    "stride is larger: both strides are at least the page, which is at most {} B.",
                                    r.scaled_by->second.stride_bytes,
                                    first_reach(r.scaled_by->second) / st.reach_bytes, c.stride_bytes)
        : r.confirmed ? fmt::format(" A larger stride's first step falls within {:.0f}% of it (pages at least that "
                                    "stride).",
                                    100 * (kSameReadingFactor - 1))
                      : fmt::format(" No other stride's first step falls within {:.0f}% of it.",
                                    100 * (kSameReadingFactor - 1)),
        summary);
    Finding pen;
    pen.id = prefix + "miss_penalty_ns";
    pen.value = st.penalty_ns;
    pen.unit = "ns";
    pen.low = st.penalty_low;
    pen.high = st.penalty_high;
    pen.confidence = conf;
    pen.evidence = evidence;
    pen.method = method;
    pen.note = i == 0
                   ? "Extra latency of a load whose page misses the first TLB level that runs out (and hits "
                     "the next)."
                   : "Extra latency over the previous TLB level's misses.";
    if (i == 0 && p.from) {
      const TlbStep& os = p.from->second.steps.front();
      pen.value = os.penalty_ns;
      pen.low = os.penalty_low;
      pen.high = os.penalty_high;
      pen.confidence = step_confidence(os);
      pen.evidence = {p.from->first->id, control.id};
      pen.method = fmt::format(
          "chase with one load per {} B block minus a chase over as many lines within few pages; the "
          "height of its first step",
          p.from->second.stride_bytes);
      pen.note += fmt::format(" Read from the {} B stride: {}. The {} B stride read {:.1f} ns{}.",
                              p.from->second.stride_bytes, p.why, c.stride_bytes, st.penalty_ns,
                              st.shape.empty() ? "" : " through the shape '" + st.shape + "'");
    }
    if (i == 0) pen.note += p.bound_note;
    if (i == 0 && p.cap > 0) {
      pen.value = p.cap;
      pen.high = p.cap;
      pen.low = std::min(pen.low.value_or(p.cap), p.cap);
      pen.confidence = std::min(pen.confidence, kStepFewPointsConfidence.value);
      pen.evidence.push_back(chase->id);
      pen.method += "; capped by latency.global's rise past the reach";
      pen.note += fmt::format(" An upper bound: {}, and no stride agreeing on the reach reads less.", p.why);
    }
    out.push_back(std::move(reach));
    out.push_back(std::move(pen));
  }
}

// Rule past-l1-penalty: what a first-level miss adds where the data misses
// the first cache level too: the difference past the reach, before any
// later level's step, at slot counts where the control itself has left its
// first plateau (kControlPastFirstLevel x its first point or more), so both
// chases load from a later cache or DRAM. A page walk adds its whole time
// there as on an L1 hit; a lookup a device overlaps with the data's own
// miss adds less (an H100's costs 80-130 cycles on an L1 hit and 10 on an
// L2 hit, bench/cuda_tlb.cu). A reading over kPastL1PenaltyFactor x the
// L1-hit penalty is the strided lines missing a cache the control hits.
std::optional<Finding> past_l1_finding(const Series& control, const ReachStride& r) {
  const TlbCurve& c = r.best->second;
  if (c.steps.empty() || control.points.empty()) return std::nullopt;
  const TlbStep& st = c.steps.front();
  const double end = c.steps.size() > 1 ? c.steps[1].reach_low : std::numeric_limits<double>::max();
  std::vector<double> past;
  for (size_t i = 0; i < c.footprint.size(); ++i)
    if (c.footprint[i] >= st.reach_high && c.footprint[i] < end &&
        c.control_ns[i] >= kControlPastFirstLevel * control.points.front().y)
      past.push_back(c.excess_ns[i] - c.base_ns);
  if (past.size() < kPastL1MinPoints || !(median(past) <= kPastL1PenaltyFactor * st.penalty_ns)) return std::nullopt;
  Finding f;
  f.id = "memory.tlb.miss_penalty_past_l1_ns";
  f.value = median(past);
  f.unit = "ns";
  f.low = *std::min_element(past.begin(), past.end());
  f.high = *std::max_element(past.begin(), past.end());
  f.confidence = past.size() >= kStepSurePoints ? kPastL1SureConfidence : kStepFewPointsConfidence;
  f.evidence = {r.best->first->id, control.id};
  f.method = fmt::format(
      "chase with one load per {} B block minus a chase over as many lines within few pages; "
      "steps of the difference by change-point segmentation; where the control's loads miss its first cache "
      "level too",
      c.stride_bytes);
  f.note = fmt::format(
      "Median of {} point(s) past the reach where the control stands at {:g}x its first level or more; "
      "{:.1f} ns on first-level hits (memory.tlb.miss_penalty_ns).",
      past.size(), kControlPastFirstLevel.value, st.penalty_ns);
  return f;
}

// Rule page-from-stride-ratio: for strides up to the page the first step
// falls at entries x page; beyond it at entries x stride. A larger stride
// whose step falls at the same footprint means pages at least that large;
// one whose step falls r times later means pages of about stride / r.
std::optional<Finding> page_size_finding(const std::vector<StrideCurve>& curves, const ReachStride& r) {
  const TlbCurve& c = r.best->second;
  for (const auto& [s, other] : curves) {
    if (other.stride_bytes <= c.stride_bytes || other.steps.empty()) continue;
    const double ratio = other.steps.front().reach_bytes / c.steps.front().reach_bytes;
    Finding f;
    f.id = "memory.tlb.page_bytes";
    f.evidence = {r.best->first->id, s->id};
    f.unit = "B";
    f.method =
        "first TLB step of two strides compared: strides up to the page size run out at the same "
        "footprint, larger ones proportionally later";
    if (ratio < kSamePageStepRatio) {
      f.value = other.stride_bytes;
      f.low = other.stride_bytes;
      f.confidence = kPageLowerBoundConfidence;
      f.note = fmt::format(
          "The {} B and {} B strides run out of TLB at about the same footprint ({:.2f}x): "
          "pages are at least {} B (a lower bound).",
          c.stride_bytes, other.stride_bytes, ratio, other.stride_bytes);
    } else {
      const double page = std::exp2(std::round(std::log2(other.stride_bytes / ratio)));
      f.value = page;
      f.low = std::max(c.stride_bytes, page / 2);
      f.high = std::min(other.stride_bytes, page * 2);
      f.confidence = kPageFromRatioConfidence;
      f.note = fmt::format(
          "The {} B stride runs out of TLB {:.1f}x later than the {} B stride: pages of about "
          "{} / {:.1f} B.",
          other.stride_bytes, ratio, c.stride_bytes, other.stride_bytes, ratio);
    }
    return f;
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> chase_penalty_bound(const Series& chase, double reach, double reach_high) {
  if (chase.points.empty()) return std::nullopt;
  const double most = std::max(reach, reach_high), end = chase.points.back().x;
  if (end < 2 * most) return std::nullopt;
  std::optional<double> from, to;  // the lowest latency in [reach / 4, reach], the highest in [end / 2, end]
  for (const Point& p : chase.points) {
    if (p.x >= reach / 4 && p.x <= reach && (!from || p.y < *from)) from = p.y;
    if (p.x >= end / 2 && (!to || p.y > *to)) to = p.y;
  }
  if (!from || !to || *to <= *from) return std::nullopt;
  return (*to - *from) / (1 - most / end);
}

// docs/inference.md 4: which stride reads the reach, where the first
// level's penalty comes from and whether the chase allows it, then each
// level's findings, the penalty past the L1 and the page size.
std::vector<Finding> tlb_findings(const Series& control, const std::vector<const Series*>& strided,
                                  const Series* chase) {
  std::vector<StrideCurve> curves;
  for (const Series* s : strided)
    if (s) curves.emplace_back(s, read_tlb_curve(*s, control));
  if (curves.empty()) return {};
  const ReachStride r = choose_reach_stride(curves);
  const std::string summary = strides_summary(curves);
  if (!r.best) return no_rise_findings(curves, control, summary);
  PenaltyReading p = penalty_stride(curves, r);
  hold_penalty_to_chase(curves, r, chase, p);
  std::vector<Finding> out;
  level_findings(control, r, p, chase, summary, out);
  if (std::optional<Finding> f = past_l1_finding(control, r)) out.push_back(std::move(*f));
  if (std::optional<Finding> f = page_size_finding(curves, r)) out.push_back(std::move(*f));
  return out;
}

int hold_tlb_levels_to_chase(std::vector<Finding>& tlb, const Series& latency) {
  struct Level {
    Finding* reach = nullptr;
    Finding* penalty = nullptr;
    bool dropped = false;
  };
  std::vector<Level> levels;
  for (const std::string prefix : {"memory.tlb.", "memory.tlb.L2.", "memory.tlb.L3.", "memory.tlb.L4."}) {
    Level l;
    for (Finding& f : tlb) {
      if (f.id == prefix + "reach_bytes") l.reach = &f;
      if (f.id == prefix + "miss_penalty_ns") l.penalty = &f;
    }
    if (!l.reach || !l.penalty) break;
    levels.push_back(l);
  }
  const auto& pts = latency.points;
  if (pts.size() < 2) return 0;
  // Share of loads missing a level of reach r at footprint x.
  const auto misses = [](double r, double x) { return x > r ? 1 - r / x : 0.0; };
  int dropped = 0;
  for (size_t k = 1; k < levels.size(); ++k) {
    const double reach = number(*levels[k].reach), pen = number(*levels[k].penalty);
    const Point* from = nullptr;
    for (const Point& p : pts)
      if (p.x >= reach) {
        from = &p;
        break;
      }
    const Point& to = pts.back();
    if (!from || to.x < 2 * from->x) continue;
    double expected = 0;
    for (const Level& l : levels) {
      if (l.dropped) continue;
      const double r = number(*l.reach), p = number(*l.penalty);
      expected += p * (misses(r, to.x) - misses(r, from->x));
    }
    const double own = pen * (misses(reach, to.x) - misses(reach, from->x));
    const double seen = to.y - from->y;
    if (own < kOwnShareOfLatency * from->y || seen >= kSeenShareOfExpected * expected) continue;
    const std::string why = fmt::format(
        " latency.global rises {:.1f} ns from {:.1f} to {:.1f} MiB, where the TLB levels read here would add "
        "{:.1f} ns ({:.1f} ns of it this level's): the strided lines' caches, not translation, so this level "
        "is not taken out of the staircases.",
        seen, from->x / 1048576, to.x / 1048576, expected, own);
    for (Finding* f : {levels[k].reach, levels[k].penalty}) {
      f->confidence = std::min(f->confidence, kUnseenLevelCap.value);
      f->note += why;
    }
    levels[k].dropped = true;
    ++dropped;
  }
  return dropped;
}

}  // namespace gpuscope::analysis
