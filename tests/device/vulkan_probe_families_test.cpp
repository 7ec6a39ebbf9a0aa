// The Vulkan twins of the compute, divergence, occupancy, icache, atomics,
// scheduling, sustain and lbm kernel families, on whatever Vulkan device
// the machine has (lavapipe in CI): each family builds in the parameter
// forms its probe uses and computes what its OpenCL twin computes; each of
// their probes runs --quick with the Khronos validation layer on, validates
// its results on the host, and the layer says nothing; the divergence
// probe measures lavapipe's wave width at each LP_NATIVE_VECTOR_WIDTH.
// Tests skip, with the reason, where no Vulkan device exists.
#include "backends/backend.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#include "bench/host_chase.hpp"
#include "support/chase_step.hpp"
#include "support/cli.hpp"
#include "support/host_chase_reading.hpp"
#include "support/sysfs_caches.hpp"
#include "support/vulkan_device.hpp"
#include "report/results_json.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

namespace gpuscope {
namespace {

class VulkanProbeFamilies : public test::VulkanDeviceTest {};

// divergence/diverge: blocks of 2^shift invocations alternate sides; every
// invocation of one side ends at the same sum, the host's.
TEST_F(VulkanProbeFamilies, DivergenceSidesComputeTheHostsSums) {
  const size_t n = 256, wg = 64;
  const uint32_t iters = 5, shift = 2;
  const float a = 0.999f, b = 0.001f;
  auto seed = dev().create_buffer(n * 4), out = dev().create_buffer(n * 4);
  dev().write_values<float>(*seed, std::vector<float>(n, 0.0f));
  Kernel& k = dev().kernel({"divergence", "diverge", {{"chains", 8}}});
  const KernelArg args[] = {seed.get(), out.get(), shift, iters, iters, a, b};
  dev().launch(k, Range::d1(n), Range::d1(wg), args);
  auto side = [&](float m, float c) {
    float sum = 0;
    for (int ch = 0; ch < 8; ++ch) {
      float x = static_cast<float>(ch);
      for (uint32_t i = 0; i < iters; ++i) x = std::fma(x, m, c);
      sum += x;
    }
    return sum;
  };
  const auto got = dev().read_values<float>(*out, n);
  for (size_t i = 0; i < n; ++i) {
    const float want = (((i % wg) >> shift) & 1u) == 0 ? side(a, b) : side(b, a);
    EXPECT_NEAR(got[i], want, 1e-5f * std::abs(want)) << i;
  }
}

// The wave width a kernel is built for, where the device lets it choose:
// every listed size builds and runs; one it does not list is Unsupported.
TEST_F(VulkanProbeFamilies, DivergenceBuildsForEveryRequiredSubgroupSize) {
  if (!features().subgroup_size_control) GTEST_SKIP() << "the device has no subgroup size control";
  ASSERT_FALSE(features().subgroup_sizes.empty());
  auto seed = dev().create_buffer(64 * 4), out = dev().create_buffer(64 * 4);
  dev().write_values<float>(*seed, std::vector<float>(64, 0.0f));
  for (uint32_t size : features().subgroup_sizes) {
    Kernel& k = dev().kernel({"divergence", "diverge", {{"chains", 8}, {"required_subgroup_size", int64_t{size}}}});
    const KernelArg args[] = {seed.get(), out.get(), uint32_t{0}, uint32_t{1}, uint32_t{1}, 0.5f, 0.25f};
    EXPECT_GT(dev().launch(k, Range::d1(64), Range::d1(std::min<size_t>(64, k.max_work_group_size())), args), 0);
  }
  EXPECT_THROW(dev().kernel({"divergence", "diverge", {{"chains", 8}, {"required_subgroup_size", 3}}}), Unsupported);
}

// icache/body: 8 accumulators of exact float adds end at 8 (s + iters *
// BODY / 8) + 28, summed.
TEST_F(VulkanProbeFamilies, IcacheBodyAddsExactly) {
  const size_t n = 64;
  const uint32_t iters = 3;
  std::vector<float> start(n);
  for (size_t i = 0; i < n; ++i) start[i] = static_cast<float>(i % 7);
  auto s = dev().create_buffer(n * 4), out = dev().create_buffer(n * 4);
  dev().write_values<float>(*s, start);
  for (int body : {64, 192, 4096}) {
    Kernel& k = dev().kernel({"icache", "body", {{"body", body}}});
    const KernelArg args[] = {s.get(), out.get(), iters, 1.0f};
    dev().launch(k, Range::d1(n), Range::d1(32), args);
    const auto got = dev().read_values<float>(*out, n);
    for (size_t i = 0; i < n; ++i)
      EXPECT_EQ(got[i], 8 * (start[i] + static_cast<float>(iters * body / 8)) + 28) << body << " " << i;
  }
}

// occupancy/occupancy: the same hash with and without shared scratch.
TEST_F(VulkanProbeFamilies, OccupancyHashIsTheSameWithAndWithoutScratch) {
  const uint32_t len = 97, wg = 32, groups = 4, steps = 3;
  std::vector<uint32_t> next(len);
  for (uint32_t i = 0; i < len; ++i) next[i] = (i + 13) % len;
  auto nb = dev().create_buffer(len * 4), out = dev().create_buffer(wg * groups * 4);
  dev().write_values<uint32_t>(*nb, next);
  for (int regs : {1, 8, 32}) {
    std::vector<uint32_t> results[2];
    for (bool scratch : {false, true}) {
      Kernel& k = dev().kernel({"occupancy", "occupancy", {{"regs", regs}, {"scratch", scratch}}});
      const KernelArg args[] = {nb.get(), out.get(), uint32_t{5}, len, steps};
      dev().launch(k, LaunchShape{Range::d1(wg * groups), Range::d1(wg), scratch ? wg * 4 : 0}, args);
      results[scratch] = dev().read_values<uint32_t>(*out, wg * groups);
    }
    EXPECT_EQ(results[0], results[1]) << regs;
    // The host's hash of invocation 0 of group 1.
    uint32_t p = 5 % len, h;
    std::vector<uint32_t> r(regs);
    for (int q = 0; q < regs; ++q) r[q] = static_cast<uint32_t>(q);
    const uint32_t kept = 0 ^ p;
    for (uint32_t s = 0; s < steps; ++s)
      for (int q = 0; q < regs; ++q) p = next[p], r[q] += p;
    h = p ^ kept;
    for (int q = 0; q < regs; ++q) h = (h ^ r[q]) * 0x9E3779B1u;
    EXPECT_EQ(results[0][wg], h) << regs;
  }
}

// atomics/add_throughput: every word gets iters adds (32 and 64 bits).
TEST_F(VulkanProbeFamilies, AtomicAddsCountEveryAdd) {
  const size_t n = 128;
  const uint32_t iters = 10;
  for (int width : {32, 64}) {
    if (width == 64 && !features().int64_atomics) continue;
    auto words = dev().create_buffer(n * 8);
    dev().write(*words, 0, std::vector<std::byte>(n * 8));
    Kernel& k = dev().kernel({"atomics", "add_throughput", {{"use_64", width == 64}}});
    for (uint32_t contended : {0u, 1u}) {
      dev().write(*words, 0, std::vector<std::byte>(n * 8));
      const KernelArg args[] = {words.get(), iters, contended};
      dev().launch(k, Range::d1(n), Range::d1(32), args);
      if (width == 32) {
        const auto got = dev().read_values<uint32_t>(*words, n);
        EXPECT_EQ(got[0], contended ? n * iters : iters);
        EXPECT_EQ(got[n - 1], contended ? 0u : iters);
      } else {
        const auto got = dev().read_values<uint64_t>(*words, n);
        EXPECT_EQ(got[0], contended ? n * iters : iters);
        EXPECT_EQ(got[n - 1], contended ? 0u : iters);
      }
    }
    for (const char* e : {"ping_pong_global", "ping_pong_local"})
      EXPECT_NO_THROW(dev().kernel({"atomics", e, {{"use_64", width == 64}}})) << e << width;
  }
}

// scheduling/resident: every group adds once to sink, the peak is at least 1.
TEST_F(VulkanProbeFamilies, SchedulingCountsEveryGroup) {
  auto running = dev().create_buffer(4), peak = dev().create_buffer(4), sink = dev().create_buffer(4);
  for (uint32_t scratch_words : {0u, 64u}) {
    for (auto* b : {running.get(), peak.get(), sink.get()}) dev().write_values<uint32_t>(*b, std::vector<uint32_t>{0});
    Kernel& k = dev().kernel({"scheduling", "resident", {}});
    const KernelArg args[] = {running.get(), peak.get(), sink.get(), scratch_words, uint32_t{100}};
    dev().launch(k, LaunchShape{Range::d1(64 * 16), Range::d1(64), scratch_words * 4}, args);
    EXPECT_EQ(dev().read_values<uint32_t>(*running, 1)[0], 0u);
    EXPECT_GE(dev().read_values<uint32_t>(*peak, 1)[0], 1u);
    EXPECT_EQ(dev().read_values<uint32_t>(*sink, 1)[0], scratch_words ? 16u * 2u : 16u);
  }
}

// compute: the forms a GLSL device cannot build fail with their reason,
// the ones it can build do.
TEST_F(VulkanProbeFamilies, ComputeFormsBuildOrSayWhyNot) {
  auto spec = [](Scalar s, int vec, const char* kind, const char* entry, const char* ops) {
    return KernelSpec{"compute",
                      entry,
                      {{"ops", ops},
                       {"scalar", s},
                       {"vec", vec},
                       {"kind", kind},
                       {"has_ptx", false},
                       {"chains", 4},
                       {"unroll", 4},
                       {"lat_unroll", 16},
                       {"unroll_slow", 2},
                       {"lat_unroll_slow", 4}}};
  };
  EXPECT_NO_THROW(dev().kernel(spec(Scalar::f32, 4, "FLOAT", "tp_FMA", "FAST")));
  EXPECT_NO_THROW(dev().kernel(spec(Scalar::f32, 1, "FLOAT", "lat_NATIVE_SIN", "NATIVE_SIN")));
  EXPECT_NO_THROW(dev().kernel(spec(Scalar::i32, 1, "INT", "tp_CVT", "CVT")));
  if (features().fp64) {
    try {
      dev().kernel(spec(Scalar::f64, 1, "FLOAT", "lat_EXP", "EXP"));
      ADD_FAILURE() << "GLSL has no double exp, yet the build succeeded";
    } catch (const BuildError& e) {
      EXPECT_NE(e.log.find("double-precision exp"), std::string::npos) << e.log;
    }
  }
  EXPECT_THROW(dev().kernel(spec(Scalar::u32, 1, "PTX_F16X2", "tp_FMA", "FAST")), BuildError);
}

// compute's dp4a through the API's integer dot product: where the device
// has it, the compute and oplatency probes time it after checking it on the
// host against the twin (the run fails otherwise); where it has not, the
// probe says why.
TEST_F(VulkanProbeFamilies, IntegerDotProductIsTimedWhereTheDeviceHasIt) {
  const auto dir = std::filesystem::temp_directory_path() / "gpuscope_vulkan_dp4a";
  std::filesystem::remove_all(dir);
  const auto r = test::run_gpuscope("run --quiet --no-replay --quick --probes compute,oplatency --ops int32.dp4a --device " +
                                        test::vulkan_device_id() + " --out " + dir.string(),
                                    "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("Vulkan validation"), std::string::npos) << r.output;
  const Results res = read_results_file((dir / "results.json").string());
  for (const char* id : {"compute.int8.dp4a", "oplatency.int8.dp4a"}) {
    const Series* s = res.find_series(id);
    if (!features().integer_dot_product) {
      EXPECT_EQ(s, nullptr) << id;
      continue;
    }
    ASSERT_NE(s, nullptr) << id;
    ASSERT_FALSE(s->points.empty());
    EXPECT_GT(s->points.front().y, 0);
  }
  if (!features().integer_dot_product) {
    const Series* summary = res.find_series("compute.summary");
    ASSERT_NE(summary, nullptr);
    EXPECT_NE(summary->meta["unsupported"].dump().find("integer dot product"), std::string::npos);
  }
}

// Each probe whose shaders this file covers, --quick on the Vulkan device,
// validation on: it runs (is not skipped), its host-side checks pass, and
// the layer says nothing.
class VulkanProbeRuns : public ::testing::TestWithParam<const char*> {};

// One probe on the Vulkan device with the validation layer on, --quick
// unless asked otherwise; its results, empty where the run failed.
Results run_probe(const std::string& probe, const std::string& env, const std::string& tag,
                  const std::string& more_options = "", bool quick = true) {
  const auto dir = std::filesystem::temp_directory_path() / ("gpuscope_vulkan_" + probe + tag);
  std::filesystem::remove_all(dir);
  const auto r = test::run_gpuscope(std::string("run --quiet --no-replay") + (quick ? " --quick" : "") + " --probes " + probe +
                                        " --device " + test::vulkan_device_id() + " --out " + dir.string() +
                                        more_options,
      "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation " + env);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("Vulkan validation"), std::string::npos) << r.output;
  if (r.exit_code != 0) return {};
  return read_results_file((dir / "results.json").string());
}

TEST_P(VulkanProbeRuns, QuickRunIsValidatedAndClean) {
  if (test::vulkan_device_id().empty()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
  const std::string probe = GetParam();
  const Results res = run_probe(probe, "", "");
  EXPECT_TRUE(res.skipped.empty()) << (res.skipped.empty() ? "" : res.skipped.front().reason);
  EXPECT_FALSE(res.series.empty());
}

INSTANTIATE_TEST_SUITE_P(Lavapipe, VulkanProbeRuns,
                         ::testing::Values("compute", "oplatency", "divergence", "occupancy", "icache", "atomics",
                                           "scheduling", "sustain", "lbm", "raster", "tilemem", "rop", "texfill",
                                           "fbcompress", "txelim"));

// lavapipe runs a subgroup as one SIMD vector: a pipeline that requires a
// subgroup size runs LP_NATIVE_VECTOR_WIDTH / 32 lanes (128, 256 and 512
// bits give 4, 8 and 16). The divergence probe must measure that width from
// its curve. The test reads the step off the curve itself (the smallest
// block whose rate is 1.6x that of blocks of 1), so a finding that echoed
// the driver's subgroupSize without a curve to show it would fail; and the
// build without a required size must report the step its own curve shows
// (Mesa 22.3's lavapipe ran those 16 lanes wide at every vector width here).
int step_on_curve(const Series& s) {
  if (s.points.empty() || s.points.front().x != 1) return 0;
  for (const auto& p : s.points)
    if (p.y >= 1.6 * s.points.front().y) return static_cast<int>(p.x);
  return 0;
}

// Why these tests cannot run here ("" where the Vulkan device is lavapipe).
std::string not_lavapipe() {
  const std::string id = test::vulkan_device_id();
  if (id.empty()) return "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
  const auto devices = enumerate_devices();
  const auto it = std::find_if(devices.begin(), devices.end(), [&](const DeviceInfo& d) { return d.id == id; });
  if (it == devices.end() || it->name.find("llvmpipe") == std::string::npos) return "the Vulkan device is not lavapipe";
  return "";
}

// llvmpipe rasterises in 64x64 tiles (its TILE_SIZE), walked row by row,
// each tile whole before its rectangle's next primitive: the raster probe
// must read exactly that off its ticket traces with one thread shading
// tiles, and with two shading them at once (their fragments interleave,
// and its last tile is shaded in two parts). With four threads on two
// cores neighbouring tiles are often shaded in lockstep, so what is read
// must be right but may be missing (see docs/graphics.md). And the tile
// never shrinks with the pixel's size (no tile memory): tilemem reads no
// knee, and 64 px at every layout with one thread.
TEST(LavapipeRaster, FindsSixtyFourPixelTilesInRowMajorOrderAndBinning) {
  if (const std::string why = not_lavapipe(); !why.empty()) GTEST_SKIP() << why;
  {
    const Results res = run_probe("raster", "LP_NUM_THREADS=4", "_LP_NUM_THREADS=4");
    for (const char* id : {"graphics.tile.width_px", "graphics.tile.height_px"})
      if (const Finding* f = res.find_finding(id)) EXPECT_EQ(number(*f), 64) << id << ": " << f->note;
    if (const Finding* f = res.find_finding("graphics.tile.order"))
      EXPECT_EQ(std::get<std::string>(f->value), "row-major") << f->note;
  }
  for (const char* threads : {"LP_NUM_THREADS=1", "LP_NUM_THREADS=2"}) {
    SCOPED_TRACE(threads);
    const Results res = run_probe("raster", threads, std::string("_") + threads);
    ASSERT_NE(res.find_series("graphics.raster.order"), nullptr);
    const Finding* w = res.find_finding("graphics.tile.width_px");
    const Finding* h = res.find_finding("graphics.tile.height_px");
    const Finding* order = res.find_finding("graphics.tile.order");
    const Finding* binning = res.find_finding("graphics.binning");
    ASSERT_TRUE(w && h && order && binning);
    EXPECT_EQ(number(*w), 64) << w->note;
    EXPECT_EQ(number(*h), 64) << h->note;
    EXPECT_EQ(std::get<std::string>(order->value), "row-major") << order->note;
    EXPECT_EQ(std::get<bool>(binning->value), true) << binning->note;
  }
  // One thread reads the 64 px tile at every layout. With two (the default
  // on the 2-core VM), a layout's trace now and then reads llvmpipe's inner
  // 16x16 block instead (2 runs of 6, one or two layouts of 8 each): most
  // layouts still read 64 px, and no knee is read either way, not even
  // where the block is read at the last layout (a tile past a knee holds a
  // quarter of the memory or more; GraphicsTileMemory tests).
  for (const char* threads : {"LP_NUM_THREADS=1", ""}) {
    SCOPED_TRACE(*threads ? threads : "llvmpipe's default threads");
    const Results mem = run_probe("tilemem", threads, std::string("_tilemem") + (*threads ? "_1" : ""));
    const Series* s = mem.find_series("graphics.tile_memory");
    ASSERT_NE(s, nullptr);
    ASSERT_GE(s->points.size(), 4u);
    size_t whole_tiles = 0;
    for (const Point& p : s->points) {
      if (p.y == 64.0 * 64) ++whole_tiles;
      if (*threads) EXPECT_EQ(p.y, 64.0 * 64) << p.x << " B per pixel";
    }
    EXPECT_GT(2 * whole_tiles, s->points.size());
    EXPECT_EQ(mem.find_finding("graphics.tile.memory_bytes"), nullptr);
  }
}

class LavapipeWaveWidth : public ::testing::TestWithParam<int> {};

// On a CPU the sweeps are timed between the host's other work, and a run
// disturbed throughout can read a wrong step: on the 2-core development VM
// (2026-11-28) about one run of this trio in twenty did, at any of the
// three widths (the plain sweep's step at 2 lanes of 4, 1.75x with two
// points astray; a required sweep of 8 lanes with no step at all). As in
// LatencyProbeOnPocl.FindsTheCpuL1AndL2, up to three runs are allowed;
// every run's readings are printed, and the last must pass every check.
TEST_P(LavapipeWaveWidth, DivergenceMeasuresTheVectorWidth) {
  if (const std::string why = not_lavapipe(); !why.empty()) GTEST_SKIP() << why;
  const int bits = GetParam(), lanes = bits / 32;
  const std::string sid = "divergence.blocks.subgroup_" + std::to_string(lanes);
  constexpr int kAttempts = 3;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    SCOPED_TRACE("attempt " + std::to_string(attempt));
    const Results res = run_probe("divergence", "LP_NATIVE_VECTOR_WIDTH=" + std::to_string(bits),
                                  "_" + std::to_string(bits) + "_" + std::to_string(attempt));
    const Series* required = res.find_series(sid);
    const Series* plain = res.find_series("divergence.blocks");
    const Finding* width = res.find_finding("exec.wave_width.subgroup_" + std::to_string(lanes));
    const Finding* measured = res.find_finding("exec.wave_width");
    std::cerr << "attempt " << attempt << ": required sweep's step " << (required ? step_on_curve(*required) : -1)
              << ", plain sweep's step " << (plain ? step_on_curve(*plain) : -1) << ", exec.wave_width "
              << (measured ? number(*measured) : -1) << " (" << lanes << " lanes)\n";
    const bool passed = required && plain && width && measured && step_on_curve(*required) == lanes &&
                        number(*width) == lanes && width->confidence >= 0.5 && number(*measured) >= 4 &&
                        number(*measured) == step_on_curve(*plain);
    if (attempt < kAttempts && !passed) continue;

    ASSERT_FALSE(res.series.empty());
    EXPECT_EQ(res.device.features.subgroup_sizes, std::vector<uint32_t>{static_cast<uint32_t>(lanes)});
    ASSERT_TRUE(res.device.features.subgroup_size_control) << "lavapipe lists subgroup size control";
    ASSERT_NE(required, nullptr) << sid;
    EXPECT_EQ(step_on_curve(*required), lanes) << sid;
    ASSERT_NE(width, nullptr);
    EXPECT_EQ(number(*width), lanes) << width->note;
    EXPECT_GE(width->confidence, 0.5) << width->note;
    ASSERT_EQ(width->evidence.size(), 1u);
    EXPECT_EQ(width->evidence.front(), sid);
    ASSERT_NE(plain, nullptr);
    ASSERT_NE(measured, nullptr);
    EXPECT_GE(number(*measured), 4) << measured->note;
    EXPECT_EQ(number(*measured), step_on_curve(*plain)) << measured->note;
    break;
  }
}

INSTANTIATE_TEST_SUITE_P(VectorWidths, LavapipeWaveWidth, ::testing::Values(128, 256, 512));

// lavapipe's chase shows the CPU's L1d and L2 by either method, with 4-lane
// subgroups (LP_NATIVE_VECTOR_WIDTH=128; the chase is built for the
// narrowest size listed). With 8 lanes, lavapipe's default on an AVX2 or
// AVX-512 host, every hop is a masked 8-lane gather of about 7 ns, longer
// than the L2's load-to-use time, and the curve is flat to the L2's end (on
// the 2-core development VM: 7.0 ns a hop from 1 KiB to 512 KiB, 9.6 ns at
// 1 MiB, 13.1 ns at 2 MiB).
//
// What this test holds the readings to is their order of size: the L1
// within a factor 2 of Linux's size, the L2 within a factor 3. That catches
// a chase that finds no step, a level lost or merged, a wrong stride or
// subtraction. How close the readings come is measured by
// bench/lavapipe_caches.sh, not here, beside the host's own chase
// (test::native_reading, tests/support/host_chase_reading.hpp: run right
// after each attempt over the same footprints and read by the same
// analysis). On a Zen 3 VM's 512 KiB L2 both read low
// and both move: the climb starts at 256 KiB, where 64 first-level TLB
// entries of 4 KiB pages run out (a latency-only run has no tlb probe to
// take translation out), and co-tenants share the core's caches. Over 13
// attempts on the development VM the host's own chase read that L2 at 86 to
// 526 KiB (medians 343 and 370 KiB), lavapipe 218 KiB to 1.76 MiB (medians
// 338 and 304 KiB); the CI VM read lavapipe's at 286-290 KiB in four of six
// quick runs. An Emerald Rapids VM's 2 MiB L2 climbs from 0.4 MiB (on 2
// MiB pages too: not translation), and the L3 that other VMs share after it
// jitters by a quarter: of 20 attempts through Mesa 22.3 and 25.0, 16 read
// the L2 within the factor (1.5 to 2.0 MiB, and 5.4 and 5.9 MiB) and 4
// outside it (0.46 to 0.50 MiB at the climb's start, 7.4 MiB with the L3
// merged in); the host's own chase, in 10 of 17. Where the host's own
// chase misses Linux's L2 by the factor too, the L2 is held to the host's
// reading instead (as LatencyProbeOnPocl): the test asks that lavapipe
// shows the caches the host shows. Both readings are printed for every
// attempt. Up to seven attempts (the index chase through Mesa 22.3 on that
// VM passed on the fifth in one CI run: two attempts showed no step at the
// L1, two merged the L3 into the L2), each the whole sweep (13 to 25 s), not
// --quick: with one point per octave and less refinement, one disturbed
// point at a level's edge merged two levels in 2 of 8 quick runs of the
// index chase (the L1 read 313 KiB; the L2 2.1 MiB), and in none of 6 whole
// sweeps.
//
// Where even the 4-lane curve rises less than test::kLeastVisibleStep
// from half Linux's L1 to twice it (tests/support/chase_step.hpp), the same
// holds as at 8 lanes: an L1 hit takes about 1 ns and an L2 hit 3 to 6 on
// current CPUs, and where lavapipe's own work each hop hides that
// difference nothing is left to read (an AVX2-only EPYC VM under Mesa 22.3:
// 11 to 13 ns a hop, the curve rising smoothly from 8 KiB, 1.05x across its
// 32 KiB L1; the analysis read it at confidence 0.12 to 0.23). The hop's
// cost alone does not decide it: an Emerald Rapids VM under Mesa 25.0 takes
// 8.3 ns a hop and still steps 1.43x at its 48 KiB L1 (tests/data/
// lavapipe_xeon/), while under Mesa 22.3, at 5.5 ns, one of six attempts by
// address rose only 1.19x, the others 1.4x and more. Such an attempt does
// not count; where none shows the step the test is skipped with the rise
// and the hop's cost, and asks only what the rest of the suite asks: that
// no such finding is confident. Where the step shows in fewer than half of
// the attempts and none of those reads both caches, the test is skipped
// too: on a host whose rises across the L1 scatter about 1.0 (a VM with a
// 32 KiB L1 under Mesa 22.3, 4.5 to 9.6 ns a hop from one attempt to the
// next, 0.83x to 1.17x in 12 of 14 attempts), the one attempt in seven that
// passes 1.2x does so where disturbed points fell, and read the L1 at 7-9
// KiB, a quarter of it. Such a step is not the L1's, and holding a reading
// to it would test the host's co-tenants. Every attempt's rise is printed,
// and the whole curve of an attempt that showed the step and missed the
// caches. CI runs this test again under bookworm-backports'
// Mesa 25, which loads an address the lanes share once
// (scripts/check_lavapipe_backports.sh), and fails it there on a skip.

class LavapipeLatency : public ::testing::TestWithParam<const char*> {};

TEST_P(LavapipeLatency, FindsTheCpuL1AndL2) {
  if (const std::string why = not_lavapipe(); !why.empty()) GTEST_SKIP() << why;
  const auto sys = test::sysfs_data_caches();
  ASSERT_TRUE(sys.count(1) && sys.count(2)) << "no cache sizes in /sys";
  const std::string chase = GetParam();
  const auto size = [](const Results& r, int level) {
    const Finding* f = r.find_finding("memory.L" + std::to_string(level) + ".capacity_bytes");
    return f ? number(*f) : -1.0;
  };
  constexpr int kAttempts = 7;
  int shown = 0;             // attempts whose curve showed the L1's step
  std::string buried;        // what the last attempt that showed none rose by
  std::ostringstream rises;  // every attempt's rise across the L1, in order
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    SCOPED_TRACE("attempt " + std::to_string(attempt));
    const Results res =
        run_probe("latency", "LP_NATIVE_VECTOR_WIDTH=128", "_" + chase, " --chase " + chase, /*quick=*/false);
    const Series* curve = res.find_series("latency.global");
    ASSERT_TRUE(curve && !curve->points.empty());
    const double step = test::step_across(*curve, sys.at(1));
    rises << (attempt > 1 ? ", " : "") << step << "x";
    if (step < test::kLeastVisibleStep) {
      for (const int level : {1, 2})
        if (const Finding* f = res.find_finding("memory.L" + std::to_string(level) + ".capacity_bytes"))
          EXPECT_LT(f->confidence, 0.8) << f->id << " read confidently from a curve that cannot show it";
      std::ostringstream why;
      why << "lavapipe's 4-lane chase rises " << step << "x from half Linux's L1 (" << sys.at(1)
          << " B) to twice it, less than " << test::kLeastVisibleStep << "x, at " << curve->points.front().y
          << " ns a hop";
      buried = why.str();
      std::cerr << chase << " chase, attempt " << attempt << ": " << buried << "\n";
      continue;
    }
    ++shown;
    // lavapipe's memory is the driver's, on pages as an allocation without
    // advice gets them.
    const Results native = test::native_reading(res, host_chase::Pages::kAsAllocated);
    constexpr double kFactor[] = {0, 2, 3};  // by level
    const auto near = [&](double got, double want, int level) {
      return got >= want / kFactor[level] && got <= want * kFactor[level];
    };
    // Each level near Linux's size, or the L2, where the host's own chase
    // misses Linux's too, near the host's (as LatencyProbeOnPocl).
    const auto near_linux = [&](double got, int level) {
      return near(got, sys.at(level), level) ||
             (level == 2 && size(native, 2) > 0 && !near(size(native, 2), sys.at(2), 2) &&
              near(got, size(native, 2), 2));
    };
    bool passed = true;
    for (const int level : {1, 2}) {
      passed = passed && near_linux(size(res, level), level);
      std::cerr << chase << " chase, attempt " << attempt << ": L" << level << " " << size(res, level)
                << " B (Linux: " << sys.at(level) << ", the host's own chase: " << size(native, level)
                << ")\n";
    }
    if (!passed) {
      std::cerr << chase << " chase, attempt " << attempt << ", footprint (KiB): ns a hop:";
      for (const Point& p : curve->points) std::cerr << " " << p.x / 1024 << ": " << p.y;
      std::cerr << "\n";
    }
    if (attempt < kAttempts && !passed) continue;

    for (const int level : {1, 2}) {
      const std::string id = "memory.L" + std::to_string(level) + ".capacity_bytes";
      ASSERT_NE(res.find_finding(id), nullptr) << id;
      EXPECT_TRUE(near_linux(size(res, level), level))
          << id << " " << size(res, level) << " B, Linux's " << sys.at(level) << " B: not within a factor "
          << kFactor[level]
          << (level == 2 ? " of it, nor of the host's own chase where that misses it too" : "");
    }
    // The method says which chase ran, and the series what was subtracted.
    const Finding* l1 = res.find_finding("memory.L1.capacity_bytes");
    const std::string said = chase == "index" ? "Chased by index" : "Chased by device address";
    EXPECT_NE(l1->method.find(said), std::string::npos) << l1->method;
    EXPECT_EQ(curve->meta.value("chase", ""), chase);
    if (chase == "index") {
      EXPECT_GT(curve->meta.value("index_arith_ns_per_hop", 0.0), 0.0);
      EXPECT_FALSE(curve->meta.value("index_arith_subtracted", true)) << "lavapipe is a CPU device";
    }
    return;
  }
  // No attempt read both caches.
  if (shown == 0)
    GTEST_SKIP() << "in all " << kAttempts << " attempts, " << buried
                 << ": its own cost buries the step from the L1 to the L2 on this host";
  if (2 * shown < kAttempts)
    GTEST_SKIP() << "the L1's step showed in " << shown << " of " << kAttempts << " attempts (rises "
                 << rises.str() << "; the last without it: " << buried << "): in most attempts its own cost "
                 << "buries the step from the L1 to the L2 on this host, and the others' rise past "
                 << test::kLeastVisibleStep
                 << "x is where disturbed points fell (their readings printed above)";
  ADD_FAILURE() << shown << " of " << kAttempts << " attempts showed the L1's step (rises " << rises.str()
                << "), and none of them read both caches within the factors (printed above)";
}

INSTANTIATE_TEST_SUITE_P(Chases, LavapipeLatency, ::testing::Values("address", "index"));

}  // namespace
}  // namespace gpuscope
