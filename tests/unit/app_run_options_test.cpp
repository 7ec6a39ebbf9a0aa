// app/run_options: every `run` option is checked before device time is
// spent, with the option and its valid range named.
#include "app/run_options.hpp"

#include "core/error.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace gpuscope {
namespace {

std::string rejection(const RunArgs& a) {
  try {
    plan_run(a);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(RunOptions, DefaultsRunEveryProbeOnTheDefaultDevice) {
  const RunPlan p = plan_run({});
  EXPECT_EQ(p.probes.size(), probe_registry().size());
  EXPECT_EQ(p.device, "");
  EXPECT_EQ(p.max_launch_ms, 200);
}

TEST(RunOptions, ProbeListsMustNameEachProbeOnce) {
  RunArgs a;
  a.probes = "latency,bandwidth";
  ASSERT_EQ(plan_run(a).probes.size(), 2u);
  EXPECT_EQ(plan_run(a).probes[1]->name, "bandwidth");
  a.probes = "latency,latency";
  EXPECT_EQ(rejection(a), "--probes names 'latency' twice");
  a.probes = ",";
  EXPECT_NE(rejection(a).find("has an empty name"), std::string::npos);
  a.probes = "latency,";
  EXPECT_NE(rejection(a).find("has an empty name"), std::string::npos);
  a.probes = "";
  EXPECT_NE(rejection(a).find("--probes is empty"), std::string::npos);
  a.probes = "nosuchprobe";
  EXPECT_NE(rejection(a).find("unknown probe 'nosuchprobe'"), std::string::npos);
}

TEST(RunOptions, EmptyDeviceOrOutIsRefused) {
  RunArgs a;
  a.device = "";
  EXPECT_NE(rejection(a).find("--device is empty"), std::string::npos);
  RunArgs b;
  b.out = "";
  EXPECT_NE(rejection(b).find("--out is empty"), std::string::npos);
}

TEST(RunOptions, NumbersOutsideTheirRangeNameIt) {
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {std::nan(""), inf, -inf, 0.0, -5.0, 0.5, 1e6}) {
    RunArgs a;
    a.max_launch_ms = v;
    EXPECT_NE(rejection(a).find("is outside [1, 10000] ms"), std::string::npos) << v;
  }
  for (double v : {std::nan(""), inf, 0.0, -1.0, 1e-3, 1e9}) {
    RunArgs a;
    a.budget_scale = v;
    EXPECT_NE(rejection(a).find("--budget-scale"), std::string::npos) << v;
    EXPECT_NE(rejection(a).find("is outside [0.01, 100]"), std::string::npos) << v;
  }
  for (double v : {std::nan(""), inf, 0.0, -1.0, 0.05, 3601.0, 1e12}) {
    RunArgs a;
    a.sustain_s = v;
    EXPECT_NE(rejection(a).find("--sustain-s"), std::string::npos) << v;
    EXPECT_NE(rejection(a).find("is outside [0.1, 3600] s"), std::string::npos) << v;
  }
  RunArgs ok;
  ok.sustain_s = 60;
  ok.max_launch_ms = 10000;
  ok.budget_scale = 20;
  EXPECT_EQ(rejection(ok), "");
}

// The text of a numeric option as typed: empty, not a number, or out of
// range, each named with the range, and the number echoed as typed.
TEST(RunOptions, NumberOptionsEchoWhatWasTypedAndSayTheRange) {
  const auto refusal = [](const std::string& text) {
    try {
      number_option("--sustain-s", text, kMinSustainS, kMaxSustainS, " s");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(refusal(""), "--sustain-s is empty; give a number from 0.1 to 3600 s");
  EXPECT_EQ(refusal("abc"), "--sustain-s 'abc' is not a number; give a number from 0.1 to 3600 s");
  EXPECT_EQ(refusal("5s"), "--sustain-s '5s' is not a number; give a number from 0.1 to 3600 s");
  EXPECT_EQ(refusal("1e309"), "--sustain-s 1e309 is outside [0.1, 3600] s");
  EXPECT_EQ(refusal("-1e309"), "--sustain-s -1e309 is outside [0.1, 3600] s");
  EXPECT_EQ(refusal("nan"), "--sustain-s nan is outside [0.1, 3600] s");
  EXPECT_EQ(refusal("0"), "--sustain-s 0 is outside [0.1, 3600] s");
  EXPECT_EQ(number_option("--sustain-s", "2.5", kMinSustainS, kMaxSustainS, " s"), 2.5);
  EXPECT_EQ(number_option("--max-launch-ms", "10000", kMinLaunchMs, kMaxLaunchMs, " ms"), 10000);
}

TEST(RunOptions, OpsMustBeKnownEntriesOfTheComputeLists) {
  RunArgs a;
  a.ops = "fp64.fma,fp32.native_sin";
  EXPECT_EQ(plan_run(a).ops, (std::vector<std::string>{"fp64.fma", "fp32.native_sin"}));
  a.ops = "fp32.frobnicate";
  EXPECT_NE(rejection(a).find("--ops: unknown entry 'fp32.frobnicate'; valid: fp32.fma,"), std::string::npos)
      << rejection(a);
  a.ops = "fp32.fma,fp32.fma";
  EXPECT_EQ(rejection(a), "--ops names 'fp32.fma' twice");
  a.ops = "";
  EXPECT_NE(rejection(a).find("--ops is empty"), std::string::npos);
}

TEST(RunOptions, ComputePlanTakesKnownKeysWithinTheirLimits) {
  RunArgs a;
  a.compute_plan = "chains=4,unroll=64,local=128";
  EXPECT_EQ(plan_run(a).compute_plan, (std::map<std::string, int64_t>{{"chains", 4}, {"local", 128}, {"unroll", 64}}));
  for (const char* bad : {"chains=0", "chains=65", "chains=4x", "chains=", "chains", "warps=4", "unroll=-1"}) {
    a.compute_plan = bad;
    EXPECT_NE(rejection(a).find("--compute-plan: "), std::string::npos) << bad << ": " << rejection(a);
  }
  a.compute_plan = "chains=2,chains=4";
  EXPECT_EQ(rejection(a), "--compute-plan names 'chains' twice");
}

TEST(RunOptions, TextureImageKinds) {
  RunArgs a;
  EXPECT_EQ(plan_run(a).texture_images, TextureImages::automatic);
  a.texture_image = "2d";
  EXPECT_EQ(plan_run(a).texture_images, TextureImages::two_d);
  a.texture_image = "buffer";
  EXPECT_EQ(plan_run(a).texture_images, TextureImages::buffer_1d);
  a.texture_image = "3d";
  EXPECT_EQ(rejection(a), "--texture-image '3d': give auto, buffer or 2d");
}

TEST(RunOptions, ChaseMethods) {
  RunArgs a;
  EXPECT_EQ(plan_run(a).chase, ChaseMethod::automatic);
  a.chase = "address";
  EXPECT_EQ(plan_run(a).chase, ChaseMethod::address);
  a.chase = "index";
  EXPECT_EQ(plan_run(a).chase, ChaseMethod::index);
  for (const char* bad : {"", "Index", "pointer"}) {
    a.chase = bad;
    EXPECT_EQ(rejection(a), fmt::format("--chase '{}': give auto, address or index", bad));
  }
}

}  // namespace
}  // namespace gpuscope
