// The coalescing, TLB and cache-geometry analyses on made-up curves whose
// answers are known, including curves that must yield no finding.
#include "analysis/cache_geometry.hpp"
#include "analysis/coalescing.hpp"
#include "analysis/miss_model.hpp"
#include "analysis/tlb.hpp"
#include "support/findings.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

namespace gpuscope::analysis {
namespace {

constexpr double KiB = 1024.0;
constexpr double MiB = 1024.0 * KiB;

// A series whose every point carries three samples 0.5% apart around y.
Series make(const std::string& id, const std::vector<double>& xs, const std::function<double(double)>& y,
            nlohmann::json meta = nlohmann::json::object()) {
  Series s;
  s.id = id;
  s.meta = std::move(meta);
  for (double x : xs) {
    Point p;
    p.x = x;
    p.y = y(x);
    p.samples = {p.y * 0.995, p.y, p.y * 1.005};
    s.points.push_back(p);
  }
  return s;
}

std::vector<double> range(double from, double to, double step = 1) {
  std::vector<double> v;
  for (double x = from; x <= to; x += step) v.push_back(x);
  return v;
}

std::vector<double> geometric(double from, double to, double ratio = std::sqrt(2.0)) {
  std::vector<double> v;
  for (double x = from; x <= to * 1.0001; x *= ratio) v.push_back(std::round(x));
  return v;
}

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

// --- coalescing -------------------------------------------------------------

TEST(Coalescing, OffsetsOffA32ByteGridRunAtTheSplitCost) {
  // Accesses split at 32 B (8 elements): offsets off that grid run at 0.8x.
  const Series off = make("coalescing.offset", range(0, 32),
                          [](double k) { return static_cast<int>(k) % 8 == 0 ? 100.0 : 80.0; });
  const OffsetReading r = read_offset_curve(off);
  EXPECT_EQ(r.aligned_period, 8);
  EXPECT_NEAR(r.ratio, 0.8, 1e-9);
  EXPECT_EQ(r.misaligned_points, 28);
  const auto fs = coalescing_findings(nullptr, &off, nullptr);
  const Finding* f = find(fs, "memory.coalescing.misaligned_ratio");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(number(*f), 0.8, 1e-9);
  EXPECT_NE(f->note.find("32 B"), std::string::npos) << f->note;
  EXPECT_EQ(f->evidence, std::vector<std::string>{"coalescing.offset"});
}

TEST(Coalescing, NoPenaltyMeansPeriodOneAndRatioNearOne) {
  const Series off = make("coalescing.offset", range(0, 32), [](double k) { return 100.0 - 0.05 * k; });
  const OffsetReading r = read_offset_curve(off);
  EXPECT_EQ(r.aligned_period, 1);
  EXPECT_GT(r.ratio, 0.98);
}

TEST(Coalescing, StrideCurveFlatteningAt64BytesGives64ByteSegments) {
  // DRAM-bound copy with 64 B segments: cost per element min(4m, 64) + 4.
  const Series str = make("coalescing.stride", range(1, 64),
                          [](double m) { return 800.0 * 8 / (std::min(4 * m, 64.0) + 4); });
  const StrideReading r = read_stride_curve(str, 4);
  EXPECT_EQ(r.segment_bytes, 64);
  const auto fs = coalescing_findings(nullptr, nullptr, &str);
  for (int k : {2, 4, 8, 16, 32, 64}) {
    const Finding* f = find(fs, "memory.coalescing.stride_" + std::to_string(k) + "_ratio");
    ASSERT_NE(f, nullptr) << k;
    EXPECT_NEAR(number(*f), 8 / (std::min(4.0 * k, 64.0) + 4), 1e-9) << k;
    ASSERT_TRUE(f->low && f->high);
    EXPECT_LE(*f->low, number(*f));
    EXPECT_GE(*f->high, number(*f));
  }
  EXPECT_NE(find(fs, "memory.coalescing.segment_bytes"), nullptr);
}

// The recovery benchmark's wide-119: one compute unit holding 4 groups of
// 128, 167 ns to memory. The copy is bound by its loads in flight (18.4
// GB/s) up to m = 13, where the 64 B segments' bytes take over: it falls
// 0.8x from m = 8 to 16, never 0.7x in a doubling, and is flat after.
TEST(Coalescing, ALatencyBoundCopyStillLevelsOffAtItsSegment) {
  const Series str = make("coalescing.stride", range(1, 64), [](double m) {
    return std::min(18.4, 128.8 * 8 / (std::min(4 * m, 64.0) + 4));
  });
  const StrideReading r = read_stride_curve(str, 4);
  EXPECT_EQ(r.segment_bytes, 64);
  EXPECT_EQ(r.last_steep_m, 0);
  EXPECT_EQ(r.flat_from_m, 16);
  EXPECT_GT(r.fall_ratio, 0.7);
  const auto fs = coalescing_findings(nullptr, nullptr, &str);
  const Finding* f = find(fs, "memory.coalescing.segment_bytes");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(number(*f), 64);
}

TEST(Coalescing, FlatStrideCurveHasNoSegment) {
  const Series str = make("coalescing.stride", range(1, 64), [](double) { return 50.0; });
  EXPECT_EQ(read_stride_curve(str).segment_bytes, 0);
  EXPECT_NE(read_stride_curve(str).unread.find("does not fall"), std::string::npos);
  EXPECT_EQ(find(coalescing_findings(nullptr, nullptr, &str), "memory.coalescing.segment_bytes"), nullptr);
}

TEST(Coalescing, WorkgroupSweepSaturatesWhereItReaches90Percent) {
  const Series wg = make("coalescing.workgroup", {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024},
                         [](double w) { return std::min(10.0 * w, 1000.0); });
  const auto fs = coalescing_findings(&wg, nullptr, nullptr);  // kept: `f` points into it
  const Finding* f = find(fs, "memory.coalescing.saturating_workgroup_size");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(number(*f), 128);
}

// --- tlb ------------------------------------------------------------------

// Caches: L1 hit 16 ns up to 1024 slots, L2 140 ns beyond (the control).
double cache_ns(double slots) { return slots <= 1024 ? 16 : 140; }

Series control_series(double max_slots) {
  return make("tlb.control", geometric(8, max_slots), cache_ns, {{"stride_bytes", 128}});
}

// Strided series with a first TLB level of `entries1` pages (penalty p1) and
// a second of entries2 (penalty p2), pages of `page` bytes.
Series strided(double stride, double page, double entries1, double p1, double entries2, double p2,
               double max_slots) {
  std::vector<double> xs;
  for (double n : geometric(8, max_slots)) xs.push_back(n * stride);
  return make("tlb.stride_" + std::to_string(static_cast<long>(stride)), xs,
              [=](double footprint) {
                const double slots = std::round(footprint / stride);
                const double pages = footprint / std::max(page, stride);
                return cache_ns(slots) + (pages > entries1 ? p1 : 0) + (pages > entries2 ? p2 : 0);
              },
              {{"stride_bytes", stride}});
}

TEST(Tlb, TwoLevelsFoundWithReachAndPenalty) {
  const Series control = control_series(65536);
  // 2 MiB pages: 16 entries (32 MiB reach, +30 ns) and 2048 entries (4 GiB, +200 ns more).
  const Series s = strided(2 * MiB, 2 * MiB, 16, 30, 2048, 200, 8192);
  const TlbCurve c = read_tlb_curve(s, control);
  ASSERT_EQ(c.steps.size(), 2u);
  EXPECT_GE(32 * MiB, c.steps[0].reach_low);
  EXPECT_LE(32 * MiB, c.steps[0].reach_high);
  EXPECT_NEAR(c.steps[0].penalty_ns, 30, 3);
  EXPECT_NEAR(c.steps[1].penalty_ns, 200, 10);
  const auto fs = tlb_findings(control, {&s});
  const Finding* reach = find(fs, "memory.tlb.reach_bytes");
  const Finding* pen = find(fs, "memory.tlb.miss_penalty_ns");
  ASSERT_TRUE(reach && pen);
  EXPECT_NEAR(std::log2(number(*reach)), std::log2(32 * MiB), 0.5);
  EXPECT_NEAR(number(*pen), 30, 3);
  EXPECT_NE(find(fs, "memory.tlb.L2.reach_bytes"), nullptr);
}

// One disturbed point on a step (its samples 10 to 200 ns about 46) does
// not hide the step that every other point shows at 0.5% scatter: a step
// is held to a typical point's noise on it (a recorded PoCL run's 13 ns
// scatter at 256 MiB beside 0.3 ns elsewhere had hidden a 2.4 ns step).
// The recovery benchmark's wide-151: 384 entries of 4 KiB pages (1.5 MiB,
// +222 ns), an L1 of 512 lines (26 ns) and an L2 at 71 ns. The control
// changes level between 512 and 724 slots, so the strided points there
// have no baseline and are left out; the bracket ran from 1.41 to 4 MiB
// and its one power of two, 2 MiB, was read. The 2 MiB point stands 165 ns
// above the L2, more than half the step: past the reach, it closes the
// bracket, whose middle is 1.68 MiB.
TEST(Tlb, APointWithoutABaselineStillClosesTheBracketWhereItIsPastTheStep) {
  const auto l1_then_l2 = [](double slots) { return slots <= 512 ? 26.0 : 71.0; };
  const Series control = make("tlb.control", geometric(8, 65536), l1_then_l2, {{"stride_bytes", 64}});
  std::vector<double> xs;
  for (double n : geometric(8, 8192)) xs.push_back(n * 4096);
  const Series s = make("tlb.stride_4096", xs,
                        [&](double footprint) {
                          const double slots = std::round(footprint / 4096);
                          return l1_then_l2(slots) + (slots > 384 ? 222.0 : 0.0);
                        },
                        {{"stride_bytes", 4096}});
  const TlbCurve c = read_tlb_curve(s, control);
  ASSERT_GE(c.steps.size(), 1u);
  EXPECT_LE(c.steps[0].reach_high, 2 * MiB);
  EXPECT_NEAR(c.steps[0].reach_bytes, 1.5 * MiB, 0.25 * 1.5 * MiB);
  EXPECT_NEAR(c.steps[0].penalty_ns, 222, 10);
}

TEST(Tlb, ADisturbedPointOnTheStepDoesNotHideIt) {
  const Series control = control_series(65536);
  // 2 MiB pages, 16 entries (32 MiB reach, +30 ns); slots 8 to 64.
  Series s = strided(2 * MiB, 2 * MiB, 16, 30, 1e9, 0, 64);
  ASSERT_EQ(s.points.back().x, 64 * 2 * MiB);
  s.points.back().samples = {10, s.points.back().y, 200};
  const TlbCurve c = read_tlb_curve(s, control);
  ASSERT_EQ(c.steps.size(), 1u);
  EXPECT_NEAR(c.steps[0].penalty_ns, 30, 3);
  EXPECT_GE(32 * MiB, c.steps[0].reach_low);
  EXPECT_LE(32 * MiB, c.steps[0].reach_high);
}

TEST(Tlb, CacheOverflowAloneIsNotATlbStep) {
  // The strided chase overflows L1 exactly as the control does: no step.
  const Series control = control_series(65536);
  const Series s = strided(64 * KiB, 2 * MiB, 1e9, 0, 1e9, 0, 65536);
  EXPECT_TRUE(read_tlb_curve(s, control).steps.empty());
  const auto fs = tlb_findings(control, {&s});
  const Finding* reach = find(fs, "memory.tlb.reach_bytes");
  ASSERT_NE(reach, nullptr);  // a lower bound
  EXPECT_EQ(reach->high, std::nullopt);
  EXPECT_LT(reach->confidence, 0.5);
  EXPECT_EQ(find(fs, "memory.tlb.miss_penalty_ns"), nullptr);
}

TEST(Tlb, StridesBelowThePageAgreeAndTellThePageSize) {
  const Series control = control_series(65536);
  // 64 KiB pages, 512 entries (32 MiB reach): a 4 KiB stride steps at 32 MiB,
  // a 2 MiB stride (larger than the page) only at 512 x 2 MiB = 1 GiB.
  const Series small = strided(4 * KiB, 64 * KiB, 512, 50, 1e12, 0, 65536);
  const Series large = strided(2 * MiB, 64 * KiB, 512, 50, 1e12, 0, 4096);
  const auto fs = tlb_findings(control, {&small, &large});
  const Finding* reach = find(fs, "memory.tlb.reach_bytes");
  ASSERT_NE(reach, nullptr);
  EXPECT_NEAR(std::log2(number(*reach)), std::log2(32 * MiB), 0.5);
  EXPECT_EQ(reach->evidence.front(), small.id);
  const Finding* page = find(fs, "memory.tlb.page_bytes");
  ASSERT_NE(page, nullptr);
  EXPECT_NEAR(std::log2(number(*page)), std::log2(64 * KiB), 1.01);
}

// A strided series over one TLB level of reach `reach` whose miss fraction
// at F = r reach is miss(r), penalty `penalty`; the caches as the control's.
Series shaped(double stride, double reach, double penalty, const std::function<double(double)>& miss,
              double max_slots) {
  std::vector<double> xs;
  for (double n : geometric(8, max_slots)) xs.push_back(n * stride);
  return make("tlb.stride_" + std::to_string(static_cast<long>(stride)), xs,
              [=](double footprint) {
                const double r = footprint / reach;
                return cache_ns(std::round(footprint / stride)) + (r > 1 ? penalty * miss(r) : 0);
              },
              {{"stride_bytes", stride}, {"line_bytes", 128}});
}

TEST(Tlb, GradualRisesAreReadWhereMissesBegin) {
  const Series control = control_series(65536);
  // Several loads per page in random order: 1 - R/F of them miss, half at
  // 2R, which the first rise's bracket put up to twice too far.
  const Series revisits = shaped(4 * KiB, 3 * MiB, 200, [](double r) { return 1 - 1 / r; }, 65536);
  const TlbCurve c = read_tlb_curve(revisits, control);
  ASSERT_EQ(c.steps.size(), 1u);
  EXPECT_NEAR(c.steps[0].reach_bytes / (3 * MiB), 1, 0.1);
  EXPECT_LE(c.steps[0].reach_low, 3 * MiB * 1.01);
  EXPECT_GE(c.steps[0].reach_high, 3 * MiB * 0.99);
  EXPECT_NEAR(c.steps[0].penalty_ns, 200, 20);
  EXPECT_NE(c.steps[0].shape.find("random order"), std::string::npos) << c.steps[0].shape;
  // One load per page, random replacement: 58% miss at 1.5R, 80% at 2R.
  const Series random =
      shaped(64 * KiB, 12 * MiB, 150, [](double r) { return 1 - random_replacement_hit_rate(r); }, 4096);
  const TlbCurve d = read_tlb_curve(random, control);
  ASSERT_EQ(d.steps.size(), 1u);
  EXPECT_NEAR(d.steps[0].reach_bytes / (12 * MiB), 1, 0.1);
  EXPECT_NEAR(d.steps[0].penalty_ns, 150, 15);
}

TEST(Tlb, AFewLoadsPerPageThroughAnLruTlbMissMoreThanRevisits) {
  const Series control = control_series(65536);
  // A 4 KiB stride over 16 KiB pages: 4 loads a page in random order, an
  // LRU TLB of 2048 entries (32 MiB), 246 ns a miss. At 1.4 R 40% of the
  // hops miss where 1 - R/F says 29%; read as that, the penalty came out
  // 301 ns.
  const Series s = shaped(
      4 * KiB, 32 * MiB, 246, [](double r) { return std::pow(1 - 1 / r, 0.75); }, 65536);
  const TlbCurve c = read_tlb_curve(s, control);
  ASSERT_EQ(c.steps.size(), 1u);
  EXPECT_NEAR(c.steps[0].reach_bytes / (32 * MiB), 1, 0.1);
  EXPECT_NEAR(c.steps[0].penalty_ns, 246, 12);
  EXPECT_NE(c.steps[0].shape.find("(s = 4)"), std::string::npos) << c.steps[0].shape;
}

TEST(Tlb, AStepTheCurveFallsBackFromIsNotTranslation) {
  const Series control = control_series(65536);
  // +40 ns over 11..32 slots (strided lines crowding cache sets), back to
  // nothing, then the real level at 1 MiB (+150 ns, LRU).
  Series s = shaped(4 * KiB, 1 * MiB, 150, [](double) { return 1.0; }, 65536);
  for (auto& p : s.points) {
    const double slots = std::round(p.x / (4 * KiB));
    if (slots >= 11 && slots <= 32) {
      p.y += 40;
      for (double& v : p.samples) v += 40;
    }
  }
  const TlbCurve c = read_tlb_curve(s, control);
  ASSERT_EQ(c.steps.size(), 1u);
  EXPECT_NEAR(std::log2(c.steps[0].reach_bytes), std::log2(1 * MiB), 0.5);
  EXPECT_NEAR(c.steps[0].penalty_ns, 150, 10);
}

TEST(Tlb, ACacheLevelTheStridedLinesReachEarlyIsNotTranslation) {
  // An L1 at 63 ns that the control's consecutive lines overflow past 362
  // slots, into an L2 at 149 ns; a 64 KiB stride's lines crowd its sets and
  // overflow it from 181 slots. The TLB: 768 entries of 64 KiB pages (48
  // MiB), randomly replaced, 219 ns a miss. The strided chase's 86 ns at
  // 181-256 slots is the L2 reached early, and the reach is 48 MiB, not 8.
  const Series control = make("tlb.control", geometric(8, 4096),
                              [](double n) { return n <= 362 ? 63.0 : 149.0; }, {{"stride_bytes", 128}});
  const double stride = 64 * KiB, reach = 48 * MiB;
  std::vector<double> xs;
  for (double n : geometric(8, 4096)) xs.push_back(n * stride);
  const Series s = make("tlb.stride_65536", xs,
                        [=](double footprint) {
                          const double r = footprint / reach;
                          const double cache = std::round(footprint / stride) <= 128 ? 63.0 : 149.0;
                          return cache + (r > 1 ? 219 * (1 - random_replacement_hit_rate(r)) : 0);
                        },
                        {{"stride_bytes", stride}, {"line_bytes", 128}});
  const TlbCurve c = read_tlb_curve(s, control);
  ASSERT_EQ(c.steps.size(), 1u);
  EXPECT_NEAR(c.steps[0].reach_bytes / reach, 1, 0.1);
  EXPECT_NEAR(c.steps[0].penalty_ns, 219, 22);

  // The TLB running out before the control reaches the L2: a 35 ns L1 the
  // control leaves past 45 slots for a 112 ns L2, which 2 MiB-strided lines
  // reach at 16 slots; 16 entries of 2 MiB pages (32 MiB), 212 ns a miss.
  const Series control2 = make("tlb.control", geometric(8, 65536),
                               [](double n) { return n <= 45 ? 35.0 : 112.0; }, {{"stride_bytes", 128}});
  std::vector<double> xs2;
  for (double n : geometric(8, 128)) xs2.push_back(n * 2 * MiB);
  const Series s2 = make("tlb.stride_2097152", xs2,
                         [](double footprint) {
                           const double slots = std::round(footprint / (2 * MiB));
                           return (slots < 16 ? 35.0 : 112.0) + (slots > 16 ? 212 : 0);
                         },
                         {{"stride_bytes", 2 * MiB}, {"line_bytes", 128}});
  const TlbCurve c2 = read_tlb_curve(s2, control2);
  ASSERT_EQ(c2.steps.size(), 1u);
  EXPECT_NEAR(std::log2(c2.steps[0].reach_bytes), std::log2(32 * MiB), 0.5);
  EXPECT_NEAR(c2.steps[0].penalty_ns, 212, 11);
}

TEST(Tlb, AMissCostingTheGapToTheNextCacheStaysTranslation) {
  // A 60 ns L1 the control overflows past 1448 slots into a 187 ns L2; 256
  // entries of 4 KiB pages (1 MiB), LRU, 124 ns a miss: past the reach the
  // strided chase stands at 184 ns, within noise of the L2, but it stays
  // 124 ns above the control once the control reaches the L2 too.
  const Series control = make("tlb.control", geometric(8, 65536),
                              [](double n) { return n <= 1448 ? 60.0 : 187.0; }, {{"stride_bytes", 64}});
  std::vector<double> xs;
  for (double n : geometric(8, 65536)) xs.push_back(n * 4 * KiB);
  const Series s = make("tlb.stride_4096", xs,
                        [](double footprint) {
                          const double slots = std::round(footprint / (4 * KiB));
                          return (slots <= 1448 ? 60.0 : 187.0) + (slots > 256 ? 124 : 0);
                        },
                        {{"stride_bytes", 4 * KiB}, {"line_bytes", 64}});
  const TlbCurve c = read_tlb_curve(s, control);
  ASSERT_EQ(c.steps.size(), 1u);
  EXPECT_NEAR(std::log2(c.steps[0].reach_bytes), std::log2(1 * MiB), 0.5);
  EXPECT_NEAR(c.steps[0].penalty_ns, 124, 6);
  // Past 1448 slots both chases load from the L2 and the miss still costs
  // 124 ns: a walk, whatever serves the data.
  const Finding* past = find(tlb_findings(control, {&s}), "memory.tlb.miss_penalty_past_l1_ns");
  ASSERT_NE(past, nullptr);
  EXPECT_NEAR(number(*past), 124, 3);
}

TEST(Tlb, AControlAboveTheStridedLinesIsNoBaseline) {
  // A 44 ns L1 and an exclusive 99 ns L2: the control's consecutive lines,
  // overflowing the L1 past 724 slots, pay up to 27 ns more than L2 hits
  // for a few octaves while the two levels swap lines; the 4 KiB-strided
  // lines sit on plain L2 hits. The TLB: 16 KiB pages, 48 MiB of reach,
  // several loads a page in random order (1 - R/F of them miss), 260 ns.
  const auto swapping = [](double n) {
    return n <= 724 ? 44.0 : 99 + 27 * std::pow(1448 / std::max(n, 1448.0), 0.6);
  };
  const Series control = make("tlb.control", geometric(8, 65536), swapping, {{"stride_bytes", 64}});
  const double reach = 48 * MiB;
  std::vector<double> xs;
  for (double n : geometric(8, 65536)) xs.push_back(n * 4 * KiB);
  const Series s = make("tlb.stride_4096", xs,
                        [=](double footprint) {
                          const double cache = std::round(footprint / (4 * KiB)) <= 724 ? 44.0 : 99.0;
                          return cache + (footprint > reach ? 260 * (1 - reach / footprint) : 0);
                        },
                        {{"stride_bytes", 4 * KiB}, {"line_bytes", 64}});
  const TlbCurve c = read_tlb_curve(s, control);
  ASSERT_EQ(c.steps.size(), 1u);
  EXPECT_NEAR(c.steps[0].reach_bytes / reach, 1, 0.1);
  EXPECT_GT(c.steps[0].reach_low, 32 * MiB);
  EXPECT_NEAR(c.steps[0].penalty_ns, 260, 26);
}

TEST(Tlb, WhatAMissAddsPastTheFirstCacheLevel) {
  // A lookup the device overlaps with the data's own miss: 60 ns on L1
  // hits, 20 ns once both chases load from the L2 (past 1448 slots). One
  // that cost nothing there would look like the strided lines' caches, and
  // the step is taken back (AStepTheCurveFallsBackFromIsNotTranslation).
  const Series control = make("tlb.control", geometric(8, 65536),
                              [](double n) { return n <= 1448 ? 30.0 : 250.0; }, {{"stride_bytes", 64}});
  std::vector<double> xs;
  for (double n : geometric(8, 65536)) xs.push_back(n * 4 * KiB);
  const auto strided = [&](double past_l2) {
    return make("tlb.stride_4096", xs,
                [=](double footprint) {
                  const double slots = std::round(footprint / (4 * KiB));
                  if (slots <= 256) return 30.0;
                  return slots <= 1448 ? 90.0 : 250.0 + past_l2;
                },
                {{"stride_bytes", 4 * KiB}, {"line_bytes", 64}});
  };
  const Series lookup = strided(20);
  const Finding* past = find(tlb_findings(control, {&lookup}), "memory.tlb.miss_penalty_past_l1_ns");
  ASSERT_NE(past, nullptr);
  EXPECT_NEAR(number(*past), 20, 1);
  // 150 ns past the L1 against 60 on L1 hits is the strided lines missing a
  // cache the control's hit, not translation: no reading.
  const Series crowded = strided(150);
  EXPECT_EQ(find(tlb_findings(control, {&crowded}), "memory.tlb.miss_penalty_past_l1_ns"), nullptr);
}

// The tlb probe's findings for a first level (28 MiB, +148 ns) and a second
// (127 MiB, +236 ns), held to a latency chase that stands at 590 ns at 28
// MiB and rises by about `past_second` from 128 to 512 MiB besides the first
// level's misses.
std::vector<Finding> two_tlb_levels_held_to(double past_second) {
  std::vector<Finding> tlb = {
      test::make_finding("memory.tlb.reach_bytes", 28 * MiB, "B", 0.75, 22 * MiB, 32 * MiB),
      test::make_finding("memory.tlb.miss_penalty_ns", 148.0, "ns", 0.75),
      test::make_finding("memory.tlb.L2.reach_bytes", 127 * MiB, "B", 0.5, 125 * MiB, 162 * MiB),
      test::make_finding("memory.tlb.L2.miss_penalty_ns", 236.0, "ns", 0.5)};
  const Series latency = make("latency.global", geometric(28 * MiB, 512 * MiB), [=](double x) {
    const double first = 148 * (1 - 28 * MiB / x);
    return 590 + first + (x >= 128 * MiB ? past_second * std::log2(x / (128 * MiB)) / 2 : 0);
  });
  EXPECT_EQ(hold_tlb_levels_to_chase(tlb, latency), past_second < 100 ? 1 : 0);
  return tlb;
}

TEST(Tlb, ALaterLevelTheLatencyChaseDoesNotShowIsNotTakenOut) {
  // The chase rises about 31 ns past 128 MiB, a fraction of what the two
  // levels would add.
  const auto flat = two_tlb_levels_held_to(31);
  EXPECT_LT(test::find_finding(flat, "memory.tlb.L2.reach_bytes")->confidence, 0.5);
  EXPECT_LT(test::find_finding(flat, "memory.tlb.L2.miss_penalty_ns")->confidence, 0.5);
  EXPECT_EQ(test::find_finding(flat, "memory.tlb.reach_bytes")->confidence, 0.75);
  // Rising by what they add, the second level stays.
  const auto rising = two_tlb_levels_held_to(190);
  EXPECT_EQ(test::find_finding(rising, "memory.tlb.L2.reach_bytes")->confidence, 0.5);
}

TEST(Tlb, AStepTwoStridesAgreeOnWinsOverAnEarlierLoneOne) {
  const Series control = control_series(65536);
  // 2 MiB pages, 16 entries (32 MiB): the 64 KiB and 2 MiB strides agree;
  // the 4 KiB stride shows a step of its own at 8 MiB (its lines' sets).
  const Series small = shaped(4 * KiB, 8 * MiB, 90, [](double) { return 1.0; }, 65536);
  const Series mid = shaped(64 * KiB, 32 * MiB, 120, [](double r) { return 1 - 1 / r; }, 8192);
  const Series large = shaped(2 * MiB, 32 * MiB, 120, [](double) { return 1.0; }, 256);
  const auto fs = tlb_findings(control, {&small, &mid, &large});
  const Finding* reach = find(fs, "memory.tlb.reach_bytes");
  ASSERT_NE(reach, nullptr);
  EXPECT_NEAR(number(*reach) / (32 * MiB), 1, 0.1);
  EXPECT_EQ(reach->evidence.front(), large.id);
  EXPECT_NEAR(number(*find(fs, "memory.tlb.miss_penalty_ns")), 120, 6);
  // Alone, the earliest step is still the reading.
  const auto lone = tlb_findings(control, {&small});
  ASSERT_NE(find(lone, "memory.tlb.reach_bytes"), nullptr);
  EXPECT_NEAR(std::log2(number(*find(lone, "memory.tlb.reach_bytes"))), std::log2(8 * MiB), 0.5);
}

// A 4 KiB stride over 16 KiB pages revisits each page, and its rise's
// shape blurs the penalty (here it rises to 240 ns through 1 - R/F); the 64
// KiB stride, whose step falls 4x later (pages of 64 KiB / 4 = 16 KiB), puts
// one load on each page and steps sharply by the miss's 200 ns. A 2 MiB
// stride stepping 30 ns at a power-of-two ratio (its lines crowding a
// cache's sets) is no such reading.
TEST(Tlb, APenaltyIsReadFromTheStrideWithOneLoadAPage) {
  const Series control = control_series(65536);
  const Series small = shaped(
      4 * KiB, 32 * MiB, 240, [](double r) { return 1 - 1 / r; }, 65536);
  const Series mid = shaped(
      64 * KiB, 128 * MiB, 200, [](double) { return 1.0; }, 4096);
  const Series crowded = shaped(
      2 * MiB, 64 * MiB, 30, [](double) { return 1.0; }, 128);
  const auto fs = tlb_findings(control, {&small, &mid});
  const Finding* reach = find(fs, "memory.tlb.reach_bytes");
  const Finding* pen = find(fs, "memory.tlb.miss_penalty_ns");
  ASSERT_TRUE(reach && pen);
  EXPECT_NEAR(number(*reach) / (32 * MiB), 1, 0.1);
  EXPECT_EQ(reach->evidence.front(), small.id);
  EXPECT_NEAR(number(*pen), 200, 6);
  EXPECT_EQ(pen->evidence.front(), mid.id);
  EXPECT_NE(pen->note.find("pages are about 16384 B"), std::string::npos) << pen->note;
  const auto without = tlb_findings(control, {&small, &crowded});
  ASSERT_NE(find(without, "memory.tlb.miss_penalty_ns"), nullptr);
  EXPECT_NEAR(number(*find(without, "memory.tlb.miss_penalty_ns")), 240, 12);
  EXPECT_EQ(find(without, "memory.tlb.miss_penalty_ns")->evidence.front(), small.id);
}

// A 4-way TLB of 4 KiB pages (the recovery benchmark's wide-185): the 4 KiB
// stride puts one load on each page and steps sharply by the whole 165 ns
// miss at 16 MiB; the 64 KiB stride lands on a few of the sets and steps
// 8x later by less (150 ns). Pages are not 8x the 4 KiB stride's there:
// a sharp step of two points or more is its own whole penalty, and no
// other stride's replaces it.
TEST(Tlb, ASharpStepIsItsOwnWholePenalty) {
  const Series control = control_series(65536);
  const Series small = shaped(4 * KiB, 16 * MiB, 165, [](double) { return 1.0; }, 65536);
  const Series mid = shaped(64 * KiB, 128 * MiB, 150, [](double) { return 1.0; }, 4096);
  const auto fs = tlb_findings(control, {&small, &mid});
  const Finding* pen = find(fs, "memory.tlb.miss_penalty_ns");
  ASSERT_NE(pen, nullptr);
  EXPECT_NEAR(number(*pen), 165, 8);
  EXPECT_EQ(pen->evidence.front(), small.id);
  EXPECT_EQ(pen->note.find("pages are about"), std::string::npos) << pen->note;
}

// Two strides agree on the reach (2 MiB pages); the larger is swept only
// to 1.4x it, where a randomly replaced TLB misses on about half the hops,
// so its rise is part of the penalty; the smaller's, swept to 16x, reaches
// it.
TEST(Tlb, APairsPenaltyComesFromTheStrideThatReachesItsWholeHeight) {
  const Series control = control_series(65536);
  const Series small = shaped(
      64 * KiB, 32 * MiB, 150, [](double r) { return 1 - 1 / r; }, 8192);
  const Series large = shaped(
      2 * MiB, 32 * MiB, 150, [](double r) { return 1 - random_replacement_hit_rate(r); }, 23);
  const auto fs = tlb_findings(control, {&small, &large});
  const Finding* reach = find(fs, "memory.tlb.reach_bytes");
  const Finding* pen = find(fs, "memory.tlb.miss_penalty_ns");
  ASSERT_TRUE(reach && pen);
  EXPECT_EQ(reach->evidence.front(), large.id);
  EXPECT_NEAR(number(*pen), 150, 8);
  EXPECT_EQ(pen->evidence.front(), small.id);
}

// 4096 entries of 4 KiB pages, randomly replaced, missing at 69 ns (drawn GPU
// wide-208): the 4 KiB stride steps at 16 MiB, the 64 KiB stride 16x later
// at 256 MiB (entries x stride), and the 2 MiB stride's lines, crowding a
// cache's sets, rise at 256 MiB too. The two later steps agree, but the
// first two scale with their strides: the pages are at most 4 KiB and the
// reach is the 4 KiB stride's, its height the whole penalty.
TEST(Tlb, StepsScalingWithTheirStridesOutweighALaterAgreement) {
  const Series control = control_series(131072);
  const auto random_misses = [](double r) { return 1 - random_replacement_hit_rate(r); };
  const Series small = shaped(4 * KiB, 16 * MiB, 69, random_misses, 131072);
  const Series mid = shaped(64 * KiB, 256 * MiB, 69, random_misses, 8192);
  const Series huge = shaped(2 * MiB, 256 * MiB, 76, [](double) { return 1.0; }, 256);
  const auto fs = tlb_findings(control, {&small, &mid, &huge});
  const Finding* reach = find(fs, "memory.tlb.reach_bytes");
  const Finding* pen = find(fs, "memory.tlb.miss_penalty_ns");
  ASSERT_TRUE(reach && pen);
  EXPECT_NEAR(number(*reach) / (16 * MiB), 1, 0.1) << reach->note;
  EXPECT_EQ(reach->evidence.front(), small.id);
  EXPECT_NEAR(number(*pen), 69, 4) << pen->note;
  EXPECT_EQ(pen->evidence.front(), small.id);
}

// The scaled pair stands only against a pair agreeing later. wide-266: 4096
// entries of 4 KiB pages, 4-way, missing at 67 ns; its 4 KiB stride steps at
// 16 MiB by three times that (its lines crowding a 128 B-line L2), its 64
// KiB stride 16x later, and its 2 MiB stride agrees on 16 MiB by the whole
// 67 ns. The pair agreeing on the earliest step reads the penalty from its
// larger stride, as it did before scaled pairs were read.
TEST(Tlb, APairAgreeingOnTheEarliestStepKeepsItsLargerStridesPenalty) {
  const Series control = control_series(131072);
  const Series small = shaped(4 * KiB, 16 * MiB, 201, [](double) { return 1.0; }, 131072);
  const Series mid = shaped(64 * KiB, 256 * MiB, 67, [](double) { return 1.0; }, 8192);
  const Series huge = shaped(2 * MiB, 16 * MiB, 67, [](double) { return 1.0; }, 256);
  const auto fs = tlb_findings(control, {&small, &mid, &huge});
  const Finding* reach = find(fs, "memory.tlb.reach_bytes");
  const Finding* pen = find(fs, "memory.tlb.miss_penalty_ns");
  ASSERT_TRUE(reach && pen);
  EXPECT_NEAR(number(*reach) / (16 * MiB), 1, 0.1) << reach->note;
  EXPECT_NEAR(number(*pen), 67, 4) << pen->note;
  EXPECT_EQ(pen->evidence.front(), huge.id);
}

// The latency probe's chase bounds the first level's penalty. A 4-way TLB
// of 64 KiB pages missing at 282 ns (as the recovery benchmark's wide-121,
// here reaching 192 MiB), behind DRAM at 329 ns. The 64 KiB and 2 MiB
// strides agree on the reach (the 2 MiB stride's pages fall on a 32nd of
// the sets, which hold as many stride blocks), but the 2 MiB stride's lines
// also overflow a cache that the control's fit, so it rises 123 ns more.
// The chase, missing on 1 - R/F of its loads, rises by 282 (1 - R/F): the
// pair's 64 KiB stride reads the penalty. A lone 2 MiB stride is capped at
// the bound, as an upper bound at confidence 0.5.
TEST(Tlb, APenaltyAboveWhatTheLatencyChaseAllowsIsNotTaken) {
  const Series control = control_series(65536);
  const Series mid = shaped(64 * KiB, 192 * MiB, 282, [](double) { return 1.0; }, 16384);
  const Series huge = shaped(2 * MiB, 192 * MiB, 405, [](double) { return 1.0; }, 512);
  const Series chase = make("latency.global", geometric(16 * MiB, 1024 * MiB), [](double x) {
    return 329 + (x > 192 * MiB ? 282 * (1 - 192 * MiB / x) : 0);
  });
  const Finding* unbounded = find(tlb_findings(control, {&mid, &huge}), "memory.tlb.miss_penalty_ns");
  ASSERT_NE(unbounded, nullptr);
  EXPECT_NEAR(number(*unbounded), 405, 20) << unbounded->note;  // the pair's larger stride, without the chase
  const auto fs = tlb_findings(control, {&mid, &huge}, &chase);
  const Finding* pen = find(fs, "memory.tlb.miss_penalty_ns");
  ASSERT_NE(pen, nullptr);
  EXPECT_NEAR(number(*pen), 282, 14) << pen->note;
  EXPECT_EQ(pen->evidence.front(), mid.id);
  EXPECT_NEAR(number(*find(fs, "memory.tlb.reach_bytes")) / (192 * MiB), 1, 0.25);

  const Finding* lone = find(tlb_findings(control, {&huge}, &chase), "memory.tlb.miss_penalty_ns");
  ASSERT_NE(lone, nullptr);
  EXPECT_LT(number(*lone), 1.15 * 282) << lone->note;
  EXPECT_GE(number(*lone), 282) << lone->note;
  EXPECT_LE(lone->confidence, 0.5);
  EXPECT_EQ(lone->high, number(*lone));
  EXPECT_NE(lone->note.find("An upper bound"), std::string::npos) << lone->note;
}

// The bound errs high, never low, where the reach is read late or a cache
// runs out before it. wide-126: 64 entries of 16 KiB pages (1 MiB), missing
// at 233 ns; a 256 KiB L2 (171 ns) runs out before the TLB does, and the
// reach was read at 3.5 MiB, where two thirds of the chase's loads already
// miss. Its latency there is not the one to rise from: the lowest over
// [R/4, R] is.
TEST(Tlb, TheLatencyChasesBoundErrsHighWhereTheReachIsReadLate) {
  const auto chase_over = [](double l2_bytes) {
    return make("latency.global", geometric(512 * KiB, 512 * MiB), [=](double x) {
      return (x <= l2_bytes ? 171.0 : 329.0) + (x > MiB ? 233 * (1 - MiB / x) : 0);
    });
  };
  const Series chase = chase_over(256 * KiB);
  const auto late = chase_penalty_bound(chase, 3.5 * MiB, 5.7 * MiB);
  ASSERT_TRUE(late);
  EXPECT_GE(*late, 233);
  const auto right = chase_penalty_bound(chase, MiB, 1.4 * MiB);
  ASSERT_TRUE(right);
  EXPECT_GE(*right, 233);
  // Where no cache runs out within [R/4, R] the bound is close.
  const auto flat = chase_penalty_bound(chase_over(0), MiB, 1.4 * MiB);
  ASSERT_TRUE(flat);
  EXPECT_GE(*flat, 233);
  EXPECT_LT(*flat, 1.15 * 233);
  EXPECT_FALSE(chase_penalty_bound(chase, 300 * MiB, 400 * MiB));  // no point from twice the reach on
}

// --- cache geometry -------------------------------------------------------------

Series pairs_series(const std::string& id, double hit, double mid, double miss, double fetch1,
                    double fetch2) {
  return make(id, {8, 16, 32, 64, 128, 256}, [=](double d) {
    const double second = d < fetch1 ? hit : d < fetch2 ? mid : miss;
    return (miss + second) / 2;
  });
}

TEST(CacheGeometry, PairsStepAtTheSectorSize) {
  const Series near = pairs_series("geometry.pairs_near", 16, 140, 140, 32, 32);
  const auto r = read_pairs_curve(near);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->fetch_bytes, 32);
}

TEST(CacheGeometry, FarPairsReadTheLastStep) {
  // L1 fills 32 B, the L2 fills 64 B from DRAM: steps at 32 (L1 hit -> L2 hit) and 64.
  const Series far = pairs_series("geometry.pairs_far", 16, 140, 600, 32, 64);
  const auto r = read_pairs_curve(far);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->fetch_bytes, 64);
  const auto fs = geometry_findings(nullptr, nullptr, &far, {}, nullptr, nullptr, 3);
  const Finding* f = find(fs, "memory.L3.fetch_bytes");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(number(*f), 64);
}

// Mid pairs: anchors past a 2 MiB L2 inside a 16 MiB third level. The L1
// fills 32 B sectors, the L2 128 B lines: steps at 32 (L1 hit -> L2 hit)
// and 128 (L2 hit -> third-level hit). They name the L2's unit only where
// the latency probe found a third level; with two, level 2 is the last and
// the far pairs tell its fill.
TEST(CacheGeometry, MidPairsReadTheSecondLevelsFillWhereAThirdExists) {
  const Series mid = pairs_series("geometry.pairs_mid", 38, 68, 119, 32, 128);
  const auto three = geometry_findings(nullptr, &mid, nullptr, {}, nullptr, nullptr, 3);
  const Finding* f = find(three, "memory.L2.fetch_bytes");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(number(*f), 128);
  EXPECT_EQ(f->evidence.front(), mid.id);
  EXPECT_EQ(find(geometry_findings(nullptr, &mid, nullptr, {}, nullptr, nullptr, 2), "memory.L2.fetch_bytes"),
            nullptr);
}

// A second level exclusive of the first (wide-106: a 24 KiB L1 of 128 B
// lines filled in 64 B sectors, a 16 MiB exclusive L2 of 128 B lines, 73,
// 193 and 333 ns). The near pairs' anchors hit the L2, whose line then
// moves up to the L1 and leaves the L2: a partner in the other sector finds
// its bytes in neither and comes from DRAM, (193 + 333) / 2 = 263 ns, above
// the 193 of both loads hitting the L2 from d = 128 on. The far pairs see
// only the L1's 64 B fill, which was read as the L2's. The bump tells both:
// the L2 is exclusive, and its line ends where the bump does.
TEST(CacheGeometry, NearPairsRisingAboveTheirLastPointReadAnExclusiveSecondLevelsLine) {
  const Series near = make("geometry.pairs_near", {8, 16, 32, 64, 128, 256},
                           [](double d) { return d < 64 ? 133.0 : d < 128 ? 263.0 : 193.0; });
  const Series far = pairs_series("geometry.pairs_far", 73, 333, 333, 64, 64);
  const auto r = read_exclusive_pairs(near);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->fetch_bytes, 128);
  EXPECT_DOUBLE_EQ(r->hit_ns, 193);
  EXPECT_DOUBLE_EQ(r->miss_ns, 263);
  const auto fs = geometry_findings(&near, nullptr, &far, {}, nullptr, nullptr, 2);
  const Finding* l1 = find(fs, "memory.L1.fetch_bytes");
  const Finding* l2 = find(fs, "memory.L2.fetch_bytes");
  ASSERT_TRUE(l1 && l2);
  EXPECT_EQ(number(*l1), 64);
  EXPECT_EQ(number(*l2), 128);
  EXPECT_EQ(l2->evidence.front(), near.id);
  EXPECT_NE(l2->note.find("exclusive"), std::string::npos) << l2->note;
  // An inclusive L2 keeps the line: the near pairs rise to their last point
  // and no more, and the far pairs tell the L2's fill.
  const Series inclusive = pairs_series("geometry.pairs_near", 73, 193, 193, 64, 64);
  EXPECT_FALSE(read_exclusive_pairs(inclusive));
  const auto both = geometry_findings(&inclusive, nullptr, &far, {}, nullptr, nullptr, 2);
  ASSERT_NE(find(both, "memory.L2.fetch_bytes"), nullptr);
  EXPECT_EQ(find(both, "memory.L2.fetch_bytes")->evidence.front(), far.id);
  // On a CPU the bump is its line prefetchers' doing: not read.
  const auto cpu = geometry_findings(&near, nullptr, &far, {}, nullptr, nullptr, 2, true);
  ASSERT_NE(find(cpu, "memory.L2.fetch_bytes"), nullptr);
  EXPECT_EQ(find(cpu, "memory.L2.fetch_bytes")->evidence.front(), far.id);
}

TEST(CacheGeometry, NearPairsPastTheSecondLevelReadTheFirstLevelsSector) {
  // A 128 B-line L1 filled in 64 B sectors, anchors past a 2 MiB L2 too: the
  // partner hits the L2 from d = 64 (the L1's sector) and misses it from
  // d = 128 (the L2's line). The L1's unit is the first step.
  const Series near = pairs_series("geometry.pairs_near", 26, 84, 178, 64, 128);
  const auto fs = geometry_findings(&near, nullptr, nullptr, {}, nullptr, nullptr, 2);
  const Finding* f = find(fs, "memory.L1.fetch_bytes");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(number(*f), 64);
}

TEST(CacheGeometry, FlatPairsGiveNoFetchUnit) {
  const Series flat = pairs_series("geometry.pairs_near", 140, 140, 140, 8, 8);
  EXPECT_FALSE(read_pairs_curve(flat));
}

// First level of C bytes in lines of L bytes: a chase with one slot per S
// bytes leaves it (half-hit) at C * max(S, L) / L... for S >= L, and C for S <= L.
// `read_as`: each stride's edge times this factor, as a half-hit footprint
// read between two sweep points can come out (none: every one exact).
std::vector<Series> line_curves(double capacity, double line, std::map<double, double> read_as = {}) {
  std::vector<Series> out;
  for (double s : {32.0, 64.0, 128.0, 256.0, 512.0}) {
    const double edge = capacity * std::max(s, line) / line * (read_as.count(s) ? read_as[s] : 1.0);
    out.push_back(make("geometry.line_" + std::to_string(static_cast<int>(s)),
                       geometric(s / 32 * 4 * KiB, s / 32 * MiB),
                       [=](double f) {
                         const double hit = std::clamp(edge / f, 0.0, 1.0);  // random replacement-ish
                         return hit * 16 + (1 - hit) * 140;
                       },
                       {{"stride_bytes", s}}));
  }
  return out;
}

TEST(CacheGeometry, LineIsWhereCapacityStartsDoubling) {
  for (double line : {64.0, 128.0}) {
    const auto curves = line_curves(224 * KiB, line);
    std::vector<const Series*> ptrs;
    for (const auto& c : curves) ptrs.push_back(&c);
    const auto r = read_line_curves(ptrs);
    ASSERT_TRUE(r) << line;
    EXPECT_EQ(r->line_bytes, line);
    EXPECT_FALSE(r->upper_bound_only);
    const auto fs =
        geometry_findings(nullptr, nullptr, nullptr, ptrs, nullptr, nullptr, 2);  // kept: `f` points into it
    const Finding* f = find(fs, "memory.line_bytes");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(number(*f), line);
  }
}

// Capacities read 30% high at 32 B and 22% low at 128 B around a 64 B line
// (the recovery benchmark's wide-119 read 69, 54, 84, 193 and 396 KiB for a
// 48 KiB L1): the step from 64 to 128 B is only 1.56x, yet the model of a
// 64 B line fits the five strides better than any other.
TEST(CacheGeometry, LineFitsEveryStrideNotOneDoubling) {
  const auto curves = line_curves(48 * KiB, 64, {{32.0, 1.3}, {128.0, 0.78}});
  std::vector<const Series*> ptrs;
  for (const auto& c : curves) ptrs.push_back(&c);
  const auto r = read_line_curves(ptrs);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->capacity_by_stride.size(), 5u);
  EXPECT_LT(r->capacity_by_stride[2].second / r->capacity_by_stride[1].second, 1.6);
  EXPECT_EQ(r->line_bytes, 64);
  EXPECT_FALSE(r->upper_bound_only || r->lower_bound_only);
  EXPECT_LT(r->misfit, r->runner_up_misfit);
}

TEST(CacheGeometry, LineAtMostTheSmallestStrideWhenEveryDoublingDoubles) {
  const auto curves = line_curves(224 * KiB, 16);
  std::vector<const Series*> ptrs;
  for (const auto& c : curves) ptrs.push_back(&c);
  const auto r = read_line_curves(ptrs);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->line_bytes, 32);
  EXPECT_TRUE(r->upper_bound_only);
}

// Lone chase: L1 16 ns to 200 KiB, L2 140 ns to 8 MiB. With G groups, a
// shared L2 holds 1/G of its capacity per group.
Series sharing_series(const std::string& id, double l2_bytes_per_group, double dram = 350) {
  return make(id, geometric(4 * KiB, 8 * MiB), [=](double f) {
    if (f <= 200 * KiB) return 16.0;
    if (f <= l2_bytes_per_group) return 140.0;
    return dram;
  });
}

TEST(CacheGeometry, PrivateL1AndSharedL2) {
  const Series lone = sharing_series("geometry.shared_1", 50 * MiB);
  Series all = sharing_series("geometry.shared_132", 50 * MiB / 132);
  all.meta["groups"] = 132;
  const auto readings = read_sharing(lone, all);
  ASSERT_GE(readings.size(), 1u);
  EXPECT_FALSE(readings[0].shared);
  const auto fs = geometry_findings(nullptr, nullptr, nullptr, {}, &lone, &all, 2);
  const Finding* l1 = find(fs, "memory.L1.shared_by_cus");
  const Finding* l2 = find(fs, "memory.L2.shared_by_cus");
  ASSERT_TRUE(l1 && l2);
  EXPECT_FALSE(std::get<bool>(l1->value));
  EXPECT_TRUE(std::get<bool>(l2->value));
}

// The recovery benchmark's wide-102: 96 KiB L1s with random replacement
// (a gradual rise, so the lone chase settles on the L2 only at 256 KiB), a
// 768 KiB L2 shared by 12 units, 64 KiB a group: the 12 groups have left
// the L2 before the lone plateau's first point, and were read as keeping
// their regions (exits compared from 256 KiB on).
TEST(CacheGeometry, ASharedLevelLeftBeforeTheLonePlateauStartsIsShared) {
  const auto table = [](std::vector<std::pair<double, double>> knots) {
    return [knots](double f) {
      if (f <= knots.front().first) return knots.front().second;
      for (size_t i = 1; i < knots.size(); ++i)
        if (f <= knots[i].first) {
          const double t = std::log(f / knots[i - 1].first) / std::log(knots[i].first / knots[i - 1].first);
          return knots[i - 1].second + t * (knots[i].second - knots[i - 1].second);
        }
      return knots.back().second;
    };
  };
  const auto xs = geometric(1 * KiB, 8 * MiB);
  const Series lone = make("geometry.shared_1", xs,
                           table({{90 * KiB, 51}, {128 * KiB, 78}, {181 * KiB, 97}, {256 * KiB, 106},
                                  {724 * KiB, 110}, {1024 * KiB, 273}, {2896 * KiB, 274}, {8 * MiB, 396}}));
  Series all = make("geometry.shared_12", xs,
                    table({{90 * KiB, 51}, {128 * KiB, 132}, {181 * KiB, 229}, {256 * KiB, 287},
                           {512 * KiB, 381}, {1024 * KiB, 428}, {8 * MiB, 470}}));
  all.meta["groups"] = 12;
  const auto fs = geometry_findings(nullptr, nullptr, nullptr, {}, &lone, &all, 2);
  const Finding* l1 = find(fs, "memory.L1.shared_by_cus");
  const Finding* l2 = find(fs, "memory.L2.shared_by_cus");
  ASSERT_TRUE(l1 && l2);
  EXPECT_FALSE(std::get<bool>(l1->value));
  EXPECT_TRUE(std::get<bool>(l2->value)) << l2->note;
}

TEST(CacheGeometry, GroupsSlowerThanTheNextLevelAreNotSurelyOneCache) {
  // Private 64 KiB L1s (16 ns), L2 60 ns: all 16 groups at once run at
  // 150 ns from 8 KiB per group on, slower than the L2 itself, which
  // crowding one L1 does not explain (their pages thrashing one TLB does).
  const auto curve = [](const std::string& id, double crowded_from) {
    return make(id, geometric(4 * KiB, 8 * MiB), [=](double f) {
      if (f >= crowded_from) return 150.0;
      return f <= 64 * KiB ? 16.0 : f <= 4 * MiB ? 60.0 : 300.0;
    });
  };
  const Series lone = curve("geometry.shared_1", 1e12);
  Series all = curve("geometry.shared_16", 8 * KiB);
  all.meta["groups"] = 16;
  const auto fs = geometry_findings(nullptr, nullptr, nullptr, {}, &lone, &all, 2);
  const Finding* l1 = find(fs, "memory.L1.shared_by_cus");
  ASSERT_NE(l1, nullptr);
  EXPECT_LE(l1->confidence, 0.6);
  EXPECT_NE(l1->note.find("translation"), std::string::npos) << l1->note;
}

TEST(CacheGeometry, GroupsThatRanOneAfterAnotherGiveNoSharingReading) {
  const Series lone = sharing_series("geometry.shared_1", 50 * MiB);
  Series all = lone;
  all.id = "geometry.shared_2";
  all.meta["groups"] = 2;
  for (auto& p : all.points) p.y *= 2;  // serialised: every hop twice as long
  const auto fs = geometry_findings(nullptr, nullptr, nullptr, {}, &lone, &all, 2);
  EXPECT_EQ(find(fs, "memory.L1.shared_by_cus"), nullptr);
}

}  // namespace
}  // namespace gpuscope::analysis
