#include "analysis/coalescing.hpp"

#include "analysis/coalescing_tuning.hpp"
#include "analysis/unfound.hpp"
#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace gpuscope::analysis {

using namespace coalescing;

namespace {

// The largest m* sought: a bound for curves whose strides are not the
// probe's 1..64 (a results file written by hand).
constexpr int kMaxStride = 1 << 20;

std::optional<double> y_at(const Series& s, double x) {
  for (const auto& p : s.points)
    if (p.x == x && p.y > 0 && std::isfinite(p.y)) return p.y;
  return std::nullopt;
}

const Point* point_at(const Series& s, double x) {
  for (const auto& p : s.points)
    if (p.x == x) return &p;
  return nullptr;
}

// Relative spread of a point's samples (MAD sigma / median).
double spread(const Point& p) { return p.samples.empty() ? 0.0 : summarize(p.samples).rel_spread; }

// Confidence of a ratio of two points: high when both points' samples agree
// closely, lower as their spread approaches the effect.
double ratio_confidence(const Point& a, const Point& b) {
  const double s = std::hypot(spread(a), spread(b));
  return s < kRatioTightSpread ? 0.85 : s < kRatioLooseSpread ? 0.7 : 0.5;
}

Finding make(const std::string& id, double value, const std::string& unit, const std::string& evidence,
             const std::string& method) {
  Finding f;
  f.id = id;
  f.value = value;
  f.unit = unit;
  f.evidence = {evidence};
  f.method = method;
  return f;
}

}  // namespace

OffsetReading read_offset_curve(const Series& offset) {
  OffsetReading r;
  const auto base = y_at(offset, 0);
  if (!base) return r;
  std::vector<std::pair<int, double>> ratios;  // (k, y(k)/y(0)) for k >= 1
  for (const auto& p : offset.points)
    if (p.x >= 1 && p.y > 0) ratios.emplace_back(static_cast<int>(p.x), p.y / *base);
  if (ratios.empty()) return r;

  // The alignment period: the smallest p whose multiples all run like k = 0.
  for (int period = 1; period <= 32 && r.aligned_period == 0; period *= 2) {
    bool all_fast = true, any = false;
    for (auto [k, q] : ratios)
      if (k % period == 0) {
        any = true;
        all_fast = all_fast && q >= 1 - kSameWithin;
      }
    if (any && all_fast) r.aligned_period = period;
  }
  // Misaligned offsets: those off the period's grid, or off the 32-element
  // (128 B) grid when every offset runs like the aligned copy.
  const int grid = r.aligned_period >= 2 ? r.aligned_period : 32;
  std::vector<double> mis;
  double worst = 1e300;
  for (auto [k, q] : ratios) {
    if (k % grid == 0) continue;
    mis.push_back(q);
    if (q < worst) {
      worst = q;
      r.worst_offset = k;
    }
  }
  if (mis.empty()) return r;
  r.misaligned_points = static_cast<int>(mis.size());
  r.ratio = median(mis);
  r.ratio_low = *std::min_element(mis.begin(), mis.end());
  r.ratio_high = *std::max_element(mis.begin(), mis.end());
  return r;
}

StrideReading read_stride_curve(const Series& stride, double element_bytes) {
  StrideReading r;
  // A copy bound by the bytes it moves: the last doubling that falls
  // steeply.
  for (int m = 1; m <= 32; m *= 2) {
    const auto a = y_at(stride, m);
    const auto b = y_at(stride, 2 * m);
    if (!a || !b) continue;
    const double q = *b / *a;
    if (q < kSteepFall) {
      r.last_steep_m = m;
      r.last_steep_ratio = q;
      r.segment_bytes = 2 * m * element_bytes;
    }
  }
  if (r.segment_bytes > 0) return r;

  // A copy bound by its loads in flight: where the curve levels off. The
  // smallest power of two m* whose tail (every stride from m* on) is flat,
  // with a doubling of tail to show it: the median of each octave [o, 2o)
  // of it lies within the band around the tail's median. Octaves' medians,
  // not single points, so that one disturbed point does not hide where the
  // curve levels off.
  std::vector<const Point*> pts;  // measured strides with a usable rate, by m
  for (const auto& p : stride.points)
    if (p.x >= 1 && std::isfinite(p.x) && p.y > 0 && std::isfinite(p.y)) pts.push_back(&p);
  std::sort(pts.begin(), pts.end(), [](const Point* a, const Point* b) { return a->x < b->x; });
  if (pts.size() < 3) {
    r.unread = "the stride curve has fewer than three points";
    return r;
  }
  std::vector<double> spreads;
  for (const Point* p : pts) spreads.push_back(spread(*p));
  r.flat_within = std::max(kFlatWithin.value, kFlatSpreadFactor * median(spreads));
  const double last_m = pts.back()->x;
  const auto median_over = [&](double from, double to) {
    std::vector<double> ys;
    for (const Point* p : pts)
      if (p->x >= from && p->x < to) ys.push_back(p->y);
    return ys.empty() ? std::optional<double>() : std::optional(median(ys));
  };
  int flat_from = 0;
  double level = 0;
  for (int m = 2; 2 * m <= last_m && m <= kMaxStride && flat_from == 0; m *= 2) {
    const double med = *median_over(m, last_m + 1);
    bool flat = true;
    for (double o = m; o <= last_m && flat; o *= 2) {
      const auto octave = median_over(o, o * 2 > last_m ? last_m + 1 : o * 2);
      flat = !octave || std::abs(*octave / med - 1) <= r.flat_within;
    }
    if (flat) {
      flat_from = m;
      level = med;
    }
  }
  if (flat_from == 0) {
    r.unread = fmt::format(
        "the stride curve neither falls below {:.1f}x in a doubling of the stride nor levels off (each "
        "octave within {:.0f}% of one rate) for a doubling by m = {:.0f}",
        kSteepFall.value, 100 * r.flat_within, last_m);
    return r;
  }
  const auto before = y_at(stride, flat_from / 2);
  const double fall = before ? level / *before : 1;
  if (fall >= 1 - r.flat_within) {
    r.unread = fmt::format(
        "the stride curve does not fall (it runs within {:.0f}% of one rate from m = {} on): the copy moves "
        "elements at the same rate whatever bytes its loads fetch, as one bound by the loads it has in "
        "flight does",
        100 * r.flat_within, flat_from / 2);
    return r;
  }
  r.flat_from_m = flat_from;
  r.fall_ratio = fall;
  r.segment_bytes = flat_from * element_bytes;
  return r;
}

namespace {

double element_bytes(const Series* s) {
  return s && s->meta.contains("element_bytes") ? s->meta["element_bytes"].get<double>() : 4.0;
}

// memory.coalescing.misaligned_ratio: the offset curve read.
std::optional<Finding> offset_finding(const Series& offset) {
  const OffsetReading r = read_offset_curve(offset);
  const Point* p0 = point_at(offset, 0);
  if (r.misaligned_points == 0 || !p0) return std::nullopt;
  Finding f = make("memory.coalescing.misaligned_ratio", r.ratio, "", offset.id,
                   "copy B[i] = A[i + k], k = 0..32 elements, at the largest work-group: median over "
                   "misaligned k of throughput(k) / throughput(0)");
  f.low = r.ratio_low;
  f.high = r.ratio_high;
  const Point* pw = point_at(offset, r.worst_offset);
  f.confidence = r.misaligned_points >= kMisalignedPoints && pw ? ratio_confidence(*p0, *pw) : 0.5;
  const double e = element_bytes(&offset);
  if (r.aligned_period == 1)
    f.note = fmt::format(
        "Every offset runs within {:.0f}% of the aligned copy (worst k = {}: {:.3f}): "
        "misaligned starts cost little here; neighbouring accesses share the segments "
        "a misaligned one straddles, and caches absorb the split.",
        100 * kSameWithin, r.worst_offset, r.ratio_low);
  else if (r.aligned_period > 1)
    f.note = fmt::format(
        "Offsets that are multiples of {} elements ({} B) run like the aligned copy; the "
        "others at {:.2f}x ({:.2f}..{:.2f}, worst k = {}): accesses are split at {} B "
        "boundaries.",
        r.aligned_period, r.aligned_period * e, r.ratio, r.ratio_low, r.ratio_high, r.worst_offset,
        r.aligned_period * e);
  else
    f.note = fmt::format(
        "No offset grid runs like k = 0 (worst k = {}: {:.2f}); the penalty does not "
        "follow a power-of-two alignment.",
        r.worst_offset, r.ratio_low);
  return f;
}

// The stride curve's reading in words, for every stride ratio's note.
std::string stride_reading_text(const StrideReading& r) {
  if (r.last_steep_m > 0)
    return fmt::format(
        " The curve falls steeply up to m = {} ({:.2f}x from m = {}) and levels off after: "
        "the memory side fetches {:.0f} B segments, so from a {:.0f} B stride on each "
        "element costs a whole segment.",
        2 * r.last_steep_m, r.last_steep_ratio, r.last_steep_m, r.segment_bytes, r.segment_bytes);
  if (r.flat_from_m > 0)
    return fmt::format(
        " The curve is flat at small strides (the copy bound by its loads in flight, not its bytes), "
        "falls {:.2f}x into m = {} and runs within {:.0f}% of one rate from there on: the memory side "
        "fetches {:.0f} B segments, so from a {:.0f} B stride on each element costs a whole segment.",
        r.fall_ratio, r.flat_from_m, 100 * r.flat_within, r.segment_bytes, r.segment_bytes);
  return "";
}

// memory.coalescing.stride_<k>_ratio: throughput at stride k over stride 1.
Finding stride_ratio_finding(const Series& stride, const Point& p1, const Point& pk, int k, const StrideReading& r) {
  const double e = element_bytes(&stride);
  Finding f = make(fmt::format("memory.coalescing.stride_{}_ratio", k), pk.y / p1.y, "", stride.id,
                   fmt::format("copy B[i] = A[i * m] at the largest work-group, throughput counted in "
                               "useful bytes: throughput(m = {}) / throughput(m = 1)",
                               k));
  const double q = pk.y / p1.y;
  f.low = q * (1 - kStrideRatioBand);
  f.high = q * (1 + kStrideRatioBand);
  if (!pk.samples.empty() && !p1.samples.empty()) {
    f.low = std::min(*f.low, quantile(pk.samples, 0.25) / quantile(p1.samples, 0.75));
    f.high = std::max(*f.high, quantile(pk.samples, 0.75) / quantile(p1.samples, 0.25));
  }
  f.confidence = ratio_confidence(p1, pk);
  const double ideal = e / std::min(e * k, r.segment_bytes > 0 ? r.segment_bytes : e * k);
  f.note = fmt::format("A stride of {} B uses {:.0f}% of what it fetches{}.{}", e * k, 100 * std::min(1.0, ideal),
                       r.segment_bytes > 0 ? fmt::format(" at {:.0f} B segments", r.segment_bytes) : "",
                       stride_reading_text(r));
  return f;
}

// The stride ratios and memory.coalescing.segment_bytes.
void stride_findings(const Series& stride, std::vector<Finding>& out) {
  const Point* p1 = point_at(stride, 1);
  const StrideReading r = read_stride_curve(stride, element_bytes(&stride));
  if (p1)
    for (int k : {2, 4, 8, 16, 32, 64}) {
      const Point* pk = point_at(stride, k);
      if (!pk || p1->y <= 0) continue;
      out.push_back(stride_ratio_finding(stride, *p1, *pk, k, r));
    }
  if (!(r.segment_bytes > 0)) {
    note_unfound("memory.coalescing.segment_bytes", r.unread, {stride.id});
    return;
  }
  Finding f = make("memory.coalescing.segment_bytes", r.segment_bytes, "B", stride.id,
                   r.last_steep_m > 0
                       ? fmt::format("the stride m after the stride curve's last fall below {:g}x per doubling, "
                                     "times the element size",
                                     kSteepFall.value)
                       : fmt::format("where no doubling falls below {:g}x: the smallest power-of-two stride m "
                                     "from which the stride curve runs flat (each octave within its noise of one "
                                     "rate, for a doubling or more) after falling into it, times the element size",
                                     kSteepFall.value));
  f.low = r.segment_bytes / 2;
  f.high = r.segment_bytes;
  f.confidence = r.last_steep_m > 0 && r.last_steep_ratio < kClearFall ? 0.7 : 0.5;
  f.note =
      "The unit in which the memory side serves a copy's strided reads (on NVIDIA the L2's fetch "
      "from DRAM); compare memory.L<n>.fetch_bytes from the geometry probe's chases.";
  out.push_back(std::move(f));
}

// memory.coalescing.saturating_workgroup_size.
std::optional<Finding> workgroup_finding(const Series& workgroup) {
  double best = 0;
  for (const auto& p : workgroup.points) best = std::max(best, p.y);
  const Point* sat = nullptr;
  for (const auto& p : workgroup.points)
    if (p.y >= bandwidth::kSaturatingShare * best) {
      sat = &p;
      break;
    }
  if (!sat || !(best > 0)) return std::nullopt;
  Finding f = make("memory.coalescing.saturating_workgroup_size", sat->x, "", workgroup.id,
                   fmt::format("copy B[i] = A[i] vs work-group size: the smallest size reaching {:.0f}% of the "
                               "best throughput",
                               100 * bandwidth::kSaturatingShare));
  f.confidence = workgroup.points.size() >= kWorkgroupPoints ? 0.7 : 0.4;
  const Point& first = workgroup.points.front();
  f.note = fmt::format(
      "Best {:.0f} GB/s; one work-item per group reaches {:.1f}% of it. Below saturation "
      "throughput grows with the group because the device keeps a bounded number of "
      "groups in flight per compute unit, so the group size sets the loads in flight.",
      best, 100 * first.y / best);
  return f;
}

}  // namespace

std::vector<Finding> coalescing_findings(const Series* workgroup, const Series* offset,
                                         const Series* stride) {
  std::vector<Finding> out;
  if (offset)
    if (std::optional<Finding> f = offset_finding(*offset)) out.push_back(std::move(*f));
  if (stride) stride_findings(*stride, out);
  if (workgroup && !workgroup->points.empty())
    if (std::optional<Finding> f = workgroup_finding(*workgroup)) out.push_back(std::move(*f));
  return out;
}

}  // namespace gpuscope::analysis
