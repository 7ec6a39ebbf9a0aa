// The texture path's analysis (analysis/texture.hpp) on synthetic series:
// the sharing experiment under caches that are shared, separate, or
// bypassed by the global path, and the texture ids of the staircase and
// bandwidth findings.
#include "analysis/texture.hpp"

#include "support/findings.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace gpuscope::analysis {
namespace {

constexpr double KiB = 1024.0;

// A device for the pair experiment: first-level caches with sharp (LRU)
// capacities, latencies of a hit and of the level behind.
struct PairDevice {
  bool shared = true;
  double texture_bytes = 64 * KiB;  // the texture path's first level (the shared one when shared)
  double global_bytes = 64 * KiB;   // the global path's first level (unused when shared)
  double texture_hit_ns = 30, texture_miss_ns = 150;
  double global_hit_ns = 20, global_miss_ns = 140;
  double noise = 0.01;  // relative sigma of each sample
  int points_per_octave = 3;
  unsigned seed = 7;
};

// One round (a texture fetch and a global load) with the texture chain over
// t bytes and the global chain over g bytes.
double round_ns(const PairDevice& d, double t, double g) {
  if (d.shared) {
    const bool fit = t + g <= d.texture_bytes;
    return fit ? d.texture_hit_ns + d.global_hit_ns : d.texture_miss_ns + d.global_miss_ns;
  }
  return (t <= d.texture_bytes ? d.texture_hit_ns : d.texture_miss_ns) +
         (g <= d.global_bytes ? d.global_hit_ns : d.global_miss_ns);
}

struct Pair {
  Series small, large;
  double large_bytes = 0;
};

// The probe's sweep: texture chains of c/8 and 3/4 c, global from c/16 to 2c.
Pair simulate(const PairDevice& d) {
  Pair p;
  p.small.id = kTexturePairSmallSeries;
  p.large.id = kTexturePairLargeSeries;
  const double c = d.texture_bytes;
  p.large_bytes = 0.75 * c;
  std::mt19937 rng(d.seed);
  std::normal_distribution<double> n01(0, 1);
  for (double g = c / 16; g <= 2 * c * 1.0001; g *= std::exp2(1.0 / d.points_per_octave)) {
    for (auto [series, t] : {std::pair{&p.small, c / 8}, std::pair{&p.large, p.large_bytes}}) {
      Point pt;
      pt.x = std::round(g);
      for (int i = 0; i < 5; ++i) pt.samples.push_back(round_ns(d, t, g) * (1 + d.noise * n01(rng)));
      pt.y = *std::min_element(pt.samples.begin(), pt.samples.end());
      series->points.push_back(pt);
    }
  }
  return p;
}

TextureSharing infer(const Pair& p) { return infer_texture_sharing(p.small, p.large, p.large_bytes); }

TEST(TextureSharing, OneSharedCacheIsFound) {
  PairDevice d;  // Hopper-like: one L1 for both paths
  d.texture_bytes = 224 * KiB;
  const TextureSharing s = infer(simulate(d));
  ASSERT_TRUE(s.measurable) << s.note;
  EXPECT_TRUE(s.shares) << s.note;
  EXPECT_GT(s.peak_excess, 2.0);
  EXPECT_GT(s.confidence, 0.6);
  // Where G + 3/4 c passes c, and G alone still fits.
  EXPECT_GT(s.peak_at_bytes, 224 * KiB / 4);
  EXPECT_LT(s.peak_at_bytes, 224 * KiB);
}

TEST(TextureSharing, SeparateCachesAreFound) {
  PairDevice d;  // Mali-G52-like: 8 KiB texture cache, 16 KiB load/store cache
  d.shared = false;
  d.texture_bytes = 8 * KiB;
  d.global_bytes = 16 * KiB;
  const TextureSharing s = infer(simulate(d));
  ASSERT_TRUE(s.measurable) << s.note;
  EXPECT_FALSE(s.shares) << s.note;
  EXPECT_GT(s.confidence, 0.5);
  EXPECT_LT(s.peak_excess, 1.1);
}

TEST(TextureSharing, GlobalPathBypassingL1IsNotSharing) {
  PairDevice d;  // Adreno-530-like: 1 KiB texture cache; global loads go straight to the 128 KiB L2
  d.shared = false;
  d.texture_bytes = 1 * KiB;
  d.global_bytes = 128 * KiB;
  d.global_hit_ns = 120;
  d.global_miss_ns = 400;
  const TextureSharing s = infer(simulate(d));
  ASSERT_TRUE(s.measurable) << s.note;
  EXPECT_FALSE(s.shares) << s.note;
  const auto f = texture_sharing_findings(s, "a", "b");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, "texture.shares_l1");
  EXPECT_EQ(std::get<bool>(f[0].value), false);
  EXPECT_EQ(f[0].evidence, (std::vector<std::string>{"a", "b"}));
}

// PoCL reads images in software: ~10 ns on every fetch flattens each step
// to ~20%; a shared CPU L1 must still be found, with two points per octave.
TEST(TextureSharing, SharedCacheBehindSoftwareImageReadsIsFound) {
  PairDevice d;
  d.texture_bytes = 48 * KiB;
  d.texture_hit_ns = 11;
  d.texture_miss_ns = 14;
  d.global_hit_ns = 1.2;
  d.global_miss_ns = 4;
  d.noise = 0.02;
  d.points_per_octave = 2;
  const TextureSharing s = infer(simulate(d));
  ASSERT_TRUE(s.measurable) << s.note;
  EXPECT_TRUE(s.shares) << s.note;
}

TEST(TextureSharing, OneDisturbedPointIsNotSharing) {
  PairDevice d;
  d.shared = false;
  d.texture_bytes = 64 * KiB;
  d.global_bytes = 256 * KiB;
  Pair p = simulate(d);
  // One point of the large series doubled (an interrupt), in mid-sweep.
  Point& spike = p.large.points[p.large.points.size() / 2];
  for (double& v : spike.samples) v *= 2;
  spike.y *= 2;
  const TextureSharing s = infer(p);
  ASSERT_TRUE(s.measurable) << s.note;
  EXPECT_FALSE(s.shares) << s.note;
}

TEST(TextureSharing, LargeChainThatDoesNotFitCannotDecide) {
  PairDevice d;
  d.shared = false;
  d.texture_bytes = 8 * KiB;  // the probe sized the chain by 64 KiB: the staircase was misread
  d.global_bytes = 64 * KiB;
  Pair p = simulate(PairDevice{.shared = false, .texture_bytes = 64 * KiB, .global_bytes = 64 * KiB});
  // Re-time the large series with the real (smaller) texture cache.
  for (Point& pt : p.large.points) {
    const double v = round_ns(d, p.large_bytes, pt.x);
    pt.samples.assign(5, v);
    pt.y = v;
  }
  const TextureSharing s = infer(p);
  EXPECT_FALSE(s.measurable);
  EXPECT_NE(s.note.find("did not fit"), std::string::npos) << s.note;
  EXPECT_TRUE(texture_sharing_findings(s, "a", "b").empty());
}

TEST(TextureSharing, TooFewPointsCannotDecide) {
  Pair p = simulate(PairDevice{});
  p.small.points.resize(3);
  const TextureSharing s = infer(p);
  EXPECT_FALSE(s.measurable);
  EXPECT_TRUE(texture_sharing_findings(s, "a", "b").empty());
}

Series staircase() {
  Series s;
  s.id = kTextureLatencySeries;
  for (double x = 256; x <= 512 * 1024 * KiB; x *= std::sqrt(2.0)) {
    const double y = x <= 8 * KiB ? 40 : x <= 1024 * KiB ? 200 : 500;
    s.points.push_back({x, y, {y, y * 1.01, y * 0.99, y, y}});
  }
  return s;
}

TEST(TextureFindings, StaircaseUsesTextureIds) {
  const Series s = staircase();
  const auto found = texture_hierarchy_findings(infer_cache_hierarchy(s), s.id);
  ASSERT_FALSE(found.empty());
  for (const Finding& f : found) {
    EXPECT_EQ(f.id.rfind("texture.", 0), 0u) << f.id;
    EXPECT_EQ(f.evidence, std::vector<std::string>{kTextureLatencySeries});
  }
  const auto get = [&](const std::string& id) {
    for (const Finding& f : found)
      if (f.id == id) return number(f);
    ADD_FAILURE() << "no " << id;
    return -1.0;
  };
  EXPECT_EQ(get("texture.cache_levels"), 2);
  EXPECT_NEAR(get("texture.L1.capacity_bytes"), 8 * KiB, 3 * KiB);
  EXPECT_NEAR(get("texture.L1.latency_ns"), 40, 1);
  EXPECT_NEAR(get("texture.L2.capacity_bytes"), 1024 * KiB, 400 * KiB);
  EXPECT_NEAR(get("texture.dram.latency_ns"), 500, 10);
}

TEST(TextureFindings, BandwidthIsTheHighestLevel) {
  Series s;
  s.id = kTextureBandwidthSeries;
  s.points = {{8 * KiB, 900, {880, 900, 910}}, {128 * KiB, 1000, {990, 1000, 1020}}, {1 << 30, 300, {300}}};
  const auto found = texture_bandwidth_findings(s);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].id, "texture.bandwidth_gbps");
  EXPECT_DOUBLE_EQ(number(found[0]), 1000);
  EXPECT_DOUBLE_EQ(*found[0].low, 990);
  EXPECT_DOUBLE_EQ(*found[0].high, 1020);
  EXPECT_TRUE(texture_bandwidth_findings(Series{}).empty());
}

// A level beyond the first standing within 5% of a load/store level's
// latency is that cache seen through the sampler: the surer capacity
// reading is given for both, and the note keeps the texture chase's own.
TEST(TextureFindings, ASharedLevelTakesTheSurerCapacityReading) {
  constexpr double MiB = 1024 * KiB;
  const std::vector<Finding> loads = {
      test::make_finding("memory.L1.capacity_bytes", 128 * KiB, "B", 0.9),
      test::make_finding("memory.L1.latency_ns", 40.0, "ns", 0.9),
      test::make_finding("memory.L2.capacity_bytes", 2 * MiB, "B", 0.6, 1.9 * MiB, 2.2 * MiB, {"latency.global"}),
      test::make_finding("memory.L2.latency_ns", 98.0, "ns", 0.9)};
  const auto texture_levels = [](double l2_ns, double l2_confidence) {
    return std::vector<Finding>{
        test::make_finding("texture.L1.capacity_bytes", 16 * KiB, "B", 0.3),
        test::make_finding("texture.L1.latency_ns", 41.0, "ns", 0.9),
        test::make_finding("texture.L2.capacity_bytes", 8 * MiB, "B", l2_confidence, 4 * MiB, 16 * MiB,
                           {"texture.latency"}),
        test::make_finding("texture.L2.latency_ns", l2_ns, "ns", 0.9)};
  };
  std::vector<Finding> shared = texture_levels(100, 0.3);
  share_level_capacities(shared, loads);
  EXPECT_EQ(number(shared[2]), 2 * MiB);
  EXPECT_EQ(*shared[2].low, 1.9 * MiB);
  EXPECT_EQ(shared[2].confidence, 0.6);
  EXPECT_EQ(shared[2].evidence, std::vector<std::string>{"latency.global"});
  EXPECT_NE(shared[2].note.find("The texture chase read 8 MiB"), std::string::npos) << shared[2].note;
  // The first level is the texture path's own, whatever its latency.
  EXPECT_EQ(number(shared[0]), 16 * KiB);

  // 20% slower than any load/store level: another cache, kept.
  std::vector<Finding> other = texture_levels(118, 0.3);
  share_level_capacities(other, loads);
  EXPECT_EQ(number(other[2]), 8 * MiB);
  // The texture chase's reading surer: kept.
  std::vector<Finding> surer = texture_levels(100, 0.7);
  share_level_capacities(surer, loads);
  EXPECT_EQ(number(surer[2]), 8 * MiB);
  EXPECT_EQ(surer[2].confidence, 0.7);
}

// The texture path has no level past the first that the load/store path
// lacks (the recovery benchmark's wide-114: a 6 MiB randomly replaced L2
// at 255 ns and translation misses past 24 MiB; the texture sweep caught
// its climb to DRAM as a third level at 443 ns). Such a last level is not
// counted; one the load/store staircase shows within 10% stays, and so
// does a level where the load/store path counts as many.
TEST(TextureFindings, ALastLevelTheLoadPathLacksIsNotCounted) {
  constexpr double MiB = 1024 * KiB;
  const std::vector<Finding> loads = {
      test::make_finding("memory.cache_levels", 2.0, "", 0.71),
      test::make_finding("memory.L1.latency_ns", 102.0, "ns", 0.99),
      test::make_finding("memory.L2.latency_ns", 253.0, "ns", 0.75)};
  const auto texture_levels = [](double l3_ns) {
    return std::vector<Finding>{
        test::make_finding("texture.cache_levels", 3.0, "", 0.56),
        test::make_finding("texture.L1.latency_ns", 102.0, "ns", 0.99),
        test::make_finding("texture.L2.capacity_bytes", 7.9 * MiB, "B", 0.43),
        test::make_finding("texture.L2.latency_ns", 253.0, "ns", 0.97),
        test::make_finding("texture.L3.capacity_bytes", 15.4 * MiB, "B", 0.40),
        test::make_finding("texture.L3.latency_ns", l3_ns, "ns", 0.56),
        test::make_finding("texture.dram.latency_ns", 527.0, "ns", 0.71)};
  };
  std::vector<Finding> climb = texture_levels(443);
  EXPECT_TRUE(hold_texture_levels_to_loads(climb, loads));
  EXPECT_EQ(number(*test::find_finding(climb, "texture.cache_levels")), 2);
  EXPECT_EQ(test::find_finding(climb, "texture.L3.capacity_bytes"), nullptr);
  EXPECT_EQ(test::find_finding(climb, "texture.L3.latency_ns"), nullptr);
  EXPECT_NE(test::find_finding(climb, "texture.L2.latency_ns"), nullptr);
  EXPECT_NE(test::find_finding(climb, "texture.dram.latency_ns"), nullptr);
  EXPECT_NE(test::find_finding(climb, "texture.cache_levels")->note.find("not counted"), std::string::npos);

  // Within 10% of the load/store L2: that cache seen through the sampler, kept.
  std::vector<Finding> near = texture_levels(270);
  EXPECT_FALSE(hold_texture_levels_to_loads(near, loads));
  EXPECT_EQ(number(*test::find_finding(near, "texture.cache_levels")), 3);
  // The load/store staircase counting three levels too: kept.
  std::vector<Finding> three = loads;
  three[0].value = 3.0;
  std::vector<Finding> same = texture_levels(443);
  EXPECT_FALSE(hold_texture_levels_to_loads(same, three));
  EXPECT_NE(test::find_finding(same, "texture.L3.latency_ns"), nullptr);
  // Adreno 530: global loads skip the 1 KiB texture L1 and start at the
  // 128 KiB UCHE (104 ns), the load/store path's one level and the texture
  // path's second: kept.
  const std::vector<Finding> uche = {test::make_finding("memory.cache_levels", 1.0, "", 0.71),
                                     test::make_finding("memory.L1.latency_ns", 102.9, "ns", 0.99)};
  std::vector<Finding> adreno = {test::make_finding("texture.cache_levels", 2.0, "", 0.71),
                                 test::make_finding("texture.L1.latency_ns", 44.6, "ns", 0.81),
                                 test::make_finding("texture.L2.latency_ns", 102.6, "ns", 0.99)};
  EXPECT_FALSE(hold_texture_levels_to_loads(adreno, uche));
  EXPECT_EQ(number(*test::find_finding(adreno, "texture.cache_levels")), 2);
}

}  // namespace
}  // namespace gpuscope::analysis
