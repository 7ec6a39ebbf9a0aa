// The Vulkan backend on whatever Vulkan device the machine has (lavapipe in
// CI): every shader family it has builds in every parameter form its probes
// use, runs and gives the results its OpenCL twin gives; the Khronos
// validation layer, on for these tests, reports nothing; a shader that does
// not compile shows glslang's log; the backend reports itself absent, not
// failed, where no driver exists. Tests skip, with the reason, where no
// Vulkan device exists.
#include "backends/backend.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#include "backends/vulkan/vulkan_glsl.hpp"
#include "probes/cycle_counter.hpp"
#include "support/cli.hpp"
#include "support/vulkan_device.hpp"
#include "report/results_json.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <ostream>
#include <random>

namespace gpuscope {
namespace {

class VulkanFamilies : public test::VulkanDeviceTest {};

// A random cycle over n slots: next[i] is the slot after i.
std::vector<uint32_t> cycle(size_t n, uint32_t seed) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin() + 1, order.end(), std::mt19937(seed));
  std::vector<uint32_t> next(n);
  for (size_t k = 0; k < n; ++k) next[order[k]] = order[(k + 1) % n];
  return next;
}

TEST_F(VulkanFamilies, LatencyChaseEndsWhereTheHostsWalkEnds) {
  const uint32_t n = 1000, stride = 8, rounds = 7;
  const auto next = cycle(n, 1);
  auto slots = dev().create_buffer(size_t{n} * stride * 8);
  auto next_buf = dev().create_buffer(n * 4);
  auto end = dev().create_buffer(4);
  dev().write_values<uint32_t>(*next_buf, next);
  Kernel& link = dev().kernel({"latency", "link", {{"addr_bits", 64}}});
  Kernel& chase = dev().kernel({"latency", "chase", {{"addr_bits", 64}}});
  const KernelArg link_args[] = {slots.get(), next_buf.get(), stride, n};
  dev().launch(link, Range::d1(1024), Range::d1(64), link_args);
  const uint32_t start = 17;
  const KernelArg args[] = {slots.get(), start, stride, rounds, end.get()};
  EXPECT_GT(dev().launch(chase, Range::d1(1), Range::d1(1), args), 0);
  uint32_t p = start;
  for (uint32_t h = 0; h < rounds * 16; ++h) p = next[p];
  EXPECT_EQ(dev().read_values<uint32_t>(*end, 1)[0], p);
}

TEST_F(VulkanFamilies, ChaseLayoutWalksPerGroupCycles) {
  const uint32_t n = 300, groups = 3, rounds = 5;
  const auto next = cycle(n, 2);
  std::vector<uint32_t> from(n), to(n);
  for (uint32_t i = 0; i < n; ++i) from[i] = 4 * i, to[i] = 4 * next[i];
  auto mem = dev().create_buffer(size_t{n} * 4 * 8);
  auto from_buf = dev().create_buffer(n * 4), to_buf = dev().create_buffer(n * 4);
  dev().write_values<uint32_t>(*from_buf, from);
  dev().write_values<uint32_t>(*to_buf, to);
  const std::map<std::string, KernelParam> addr = {{"addr_bits", 64}};
  for (const char* e : {"link_pairs", "link_regions"}) EXPECT_NO_THROW(dev().kernel({"chase_layout", e, addr}));
  const KernelArg link_args[] = {mem.get(), from_buf.get(), to_buf.get(), n};
  dev().launch(dev().kernel({"chase_layout", "link_words", addr}), Range::d1(320), Range::d1(64), link_args);
  const std::vector<uint32_t> starts = {0, 4 * 10, 4 * 299};
  auto starts_buf = dev().create_buffer(groups * 4), ends = dev().create_buffer(groups * 4);
  dev().write_values<uint32_t>(*starts_buf, starts);
  const KernelArg args[] = {mem.get(), starts_buf.get(), rounds, ends.get()};
  dev().launch(dev().kernel({"chase_layout", "chase_groups", addr}), Range::d1(groups), Range::d1(1), args);
  const auto got = dev().read_values<uint32_t>(*ends, groups);
  for (uint32_t g = 0; g < groups; ++g) {
    uint32_t p = starts[g] / 4;
    for (uint32_t h = 0; h < rounds * 16; ++h) p = next[p];
    EXPECT_EQ(got[g], 4 * p) << "group " << g;
  }
}

// Every vector width lays out as OpenCL's uintN: one group's read sums
// equal the host's sum over the words it walked.
TEST_F(VulkanFamilies, BandwidthReadSumsEveryVectorWidth) {
  const uint32_t local = 64, unroll = 2, step = unroll * local, n = 4 * step, count = 6 * step;
  for (int vec : {1, 2, 4, 8, 16}) {
    const size_t words = size_t{n + step} * vec;
    std::vector<uint32_t> data(words);
    for (size_t i = 0; i < words; ++i) data[i] = static_cast<uint32_t>(i * 2654435761u);
    auto src = dev().create_buffer(words * 4), start = dev().create_buffer(4), sums = dev().create_buffer(local * 4);
    dev().write_values<uint32_t>(*src, data);
    const uint32_t a = 5 + step;  // r = 5 within the step, cursor b = one step
    dev().write_values<uint32_t>(*start, std::vector<uint32_t>{a});
    for (const char* e : {"write", "copy", "read_stream", "write_stream", "copy_stream", "write_grid", "copy_grid"})
      EXPECT_NO_THROW(dev().kernel({"bandwidth", e, {{"vec", vec}, {"unroll", int(unroll)}}})) << e << vec;
    Kernel& k = dev().kernel({"bandwidth", "read", {{"vec", vec}, {"unroll", int(unroll)}}});
    const KernelArg args[] = {src.get(), n, start.get(), count, sums.get()};
    dev().launch(k, Range::d1(local), Range::d1(local), args);
    const auto got = dev().read_values<uint32_t>(*sums, local);
    uint32_t want = 0;
    uint32_t b = step;
    for (uint32_t done = 0; done < count; done += step) {
      for (uint32_t v = 0; v < step; ++v)
        for (int w = 0; w < vec; ++w) want += data[size_t{5 + b + v} * vec + w];
      b = b + step >= n ? b + step - n : b + step;
    }
    EXPECT_EQ(std::accumulate(got.begin(), got.end(), uint32_t{0}), want) << "vec " << vec;
  }
}

// Kernels and pipelines built ahead (on several threads) are found built; a
// broken one among them is not thrown there but when kernel() builds it.
TEST_F(VulkanFamilies, PrebuiltKernelsAreFoundBuiltAndFailuresWaitForKernel) {
  const std::vector<KernelSpec> specs = {{"bandwidth", "read", {{"vec", 1}, {"unroll", 4}}},
                                         {"bandwidth", "read", {{"vec", 2}, {"unroll", 4}}},
                                         {"bandwidth", "read", {{"vec", 3}, {"unroll", 4}}}};
  const double before_s = dev().build_s();
  dev().prebuild(specs, LaunchShape{Range::d1(64), Range::d1(64)});
  const double built_s = dev().build_s();
  EXPECT_GT(built_s, before_s);
  // As BandwidthReadSumsEveryVectorWidth launches read: one step is unroll x local.
  const uint32_t step = 4 * 64, n = 4 * step;
  auto src = dev().create_buffer(size_t{n + step} * 2 * 4), start = dev().create_buffer(4),
       sums = dev().create_buffer(64 * 4);
  dev().write_values<uint32_t>(*start, std::vector<uint32_t>{step});
  for (size_t i = 0; i < 2; ++i) {
    const KernelArg args[] = {src.get(), n, start.get(), 2 * step, sums.get()};
    dev().launch(dev().kernel(specs[i]), Range::d1(64), Range::d1(64), args);
  }
  EXPECT_EQ(dev().build_s(), built_s) << "kernel() or the launch built again what prebuild() had built";
  EXPECT_THROW(dev().kernel(specs[2]), BuildError);
}

TEST_F(VulkanFamilies, LaunchStoresItsValueInEveryLaunchOfABatch) {
  auto sink = dev().create_buffer(4);
  Kernel& k = dev().kernel({"launch", "empty", {}});
  const KernelArg args[] = {sink.get(), uint32_t{77}};
  const LaunchBatch b = dev().launch_batch(k, {Range::d1(1), Range::d1(1)}, args, 8);
  ASSERT_EQ(b.events.size(), 8u);
  for (size_t i = 1; i < b.events.size(); ++i) EXPECT_GE(b.events[i].start_ns, b.events[i - 1].end_ns);
  EXPECT_EQ(dev().read_values<uint32_t>(*sink, 1)[0], 77u);
}

// With calibrated timestamps the host's submit call is put on the device's
// clock: every launch of the batch is queued by it (queued_ns 0, the
// origin), starts after it and within the host's round trip of it, and the
// pairing's deviation is kept. Without the extension nothing is claimed.
TEST_F(VulkanFamilies, CalibratedTimestampsPutTheSubmitBeforeTheStart) {
  const auto& exts = dev().info().extensions;
  const bool calibrated =
      std::find(exts.begin(), exts.end(), "VK_EXT_calibrated_timestamps") != exts.end() ||
      std::find(exts.begin(), exts.end(), "VK_KHR_calibrated_timestamps") != exts.end();
  auto sink = dev().create_buffer(4);
  Kernel& k = dev().kernel({"launch", "empty", {}});
  const KernelArg args[] = {sink.get(), uint32_t{5}};
  for (int count : {1, 4}) {
    const LaunchBatch b = dev().launch_batch(k, {Range::d1(1), Range::d1(1)}, args, count);
    ASSERT_EQ(b.events.size(), static_cast<size_t>(count));
    for (const EventTimes& e : b.events) {
      ASSERT_EQ(e.queued_ns.has_value(), calibrated);
      EXPECT_FALSE(e.submit_ns.has_value());
      if (!calibrated) continue;
      EXPECT_EQ(*e.queued_ns, 0.0);
      ASSERT_TRUE(e.queued_deviation_ns.has_value());
      const double slack = *e.queued_deviation_ns;
      EXPECT_GT(e.start_ns, -slack) << "a launch started before its submission";
      EXPECT_LT(e.end_ns, b.host_ns + slack) << "a launch ended after the host saw the batch complete";
    }
  }
  EXPECT_EQ(dev().read_values<uint32_t>(*sink, 1)[0], 5u);
}

TEST_F(VulkanFamilies, CoalescingCopiesStridedElements) {
  const uint32_t count = 4096, stride = 3, offset = 5, seed = 9;
  const uint64_t elems = uint64_t{count} * stride + offset;
  auto a = dev().create_buffer(elems * 4), b = dev().create_buffer(count * 4);
  const KernelArg fill_args[] = {a.get(), elems, seed};
  dev().launch(dev().kernel({"coalescing", "fill", {}}), Range::d1(1024), Range::d1(64), fill_args);
  const KernelArg copy_args[] = {a.get(), b.get(), offset, stride, count};
  dev().launch(dev().kernel({"coalescing", "copy", {}}), Range::d1(count), Range::d1(128), copy_args);
  const auto got = dev().read_values<uint32_t>(*b, count);
  auto hash = [](uint32_t i, uint32_t s) {
    uint32_t x = (i ^ s) * 0x9E3779B1u;
    x ^= x >> 15;
    x *= 0x85EBCA77u;
    x ^= x >> 13;
    return x;
  };
  for (uint32_t i = 0; i < count; i += 97) EXPECT_EQ(got[i], hash(i * stride + offset, seed)) << i;
}

TEST_F(VulkanFamilies, TransferReadSumAddsEveryWord) {
  const uint32_t group = 64, groups = 4;
  const uint64_t vecs = 10000;
  std::vector<uint32_t> data(vecs * 4);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint32_t>(i * 7 + 1);
  auto buf = dev().create_buffer(data.size() * 4), partial = dev().create_buffer(groups * 4);
  dev().write_values<uint32_t>(*buf, data);
  const KernelArg args[] = {buf.get(), vecs, partial.get()};
  dev().launch(dev().kernel({"transfer", "read_sum", {{"group", int(group)}}}), Range::d1(group * groups),
               Range::d1(group), args);
  const auto got = dev().read_values<uint32_t>(*partial, groups);
  EXPECT_EQ(std::accumulate(got.begin(), got.end(), uint32_t{0}),
            std::accumulate(data.begin(), data.end(), uint32_t{0}));
}

TEST_F(VulkanFamilies, LocalTouchAndChaseUseTheDynamicLocalBuffer) {
  const uint32_t words = 2048, items = 64;
  auto sums = dev().create_buffer(items * 4);
  const KernelArg args[] = {words, sums.get()};
  dev().launch(dev().kernel({"local", "local_touch", {}}), {Range::d1(items), Range::d1(items), words * 4}, args);
  const auto got = dev().read_values<uint32_t>(*sums, items);
  const uint64_t w = words;
  EXPECT_EQ(std::accumulate(got.begin(), got.end(), uint32_t{0}),
            static_cast<uint32_t>(static_cast<uint32_t>(w * (w - 1) / 2) * 0x9e3779b1u));

  const uint32_t n = 256, rounds = 3;
  const auto next = cycle(n, 3);
  std::vector<uint32_t> bytes(n);
  for (uint32_t i = 0; i < n; ++i) bytes[i] = 4 * next[i];
  auto next_buf = dev().create_buffer(n * 4), end = dev().create_buffer(4);
  dev().write_values<uint32_t>(*next_buf, bytes);
  const KernelArg chase_args[] = {next_buf.get(), n, rounds, end.get()};
  dev().launch(dev().kernel({"local", "local_chase", {}}), {Range::d1(1), Range::d1(1), n * 4}, chase_args);
  uint32_t p = 0;
  for (uint32_t h = 0; h < rounds * 16; ++h) p = next[p];
  EXPECT_EQ(dev().read_values<uint32_t>(*end, 1)[0], 4 * p);
  const KernelArg global_args[] = {next_buf.get(), rounds, end.get()};
  dev().launch(dev().kernel({"local", "global_chase", {}}), Range::d1(1), Range::d1(1), global_args);
  EXPECT_EQ(dev().read_values<uint32_t>(*end, 1)[0], 4 * p);
  for (int vec : {1, 2, 4})
    for (const char* e : {"local_read", "global_read"})
      EXPECT_NO_THROW(dev().kernel({"local", e, {{"vec", vec}, {"wg", 64}, {"m", 4}}})) << e << vec;
}

TEST_F(VulkanFamilies, ClockChainGivesTheHostsValue) {
  auto out = dev().create_buffer(3 * 8);
  const uint32_t rounds = 100, seed = 12345;
  for (bool counters : {false, true}) {
    if (counters && !features().cycle_counter) continue;
    const KernelArg args[] = {out.get(), rounds, seed};
    dev().launch(dev().kernel({"clock", "chain", {{"counters", counters}}}), Range::d1(1), Range::d1(1), args);
    uint32_t x = seed;
    for (uint32_t i = 0; i < rounds * 16; ++i) x = x * x + (seed | 1u);
    const auto got = dev().read_values<uint64_t>(*out, 3);
    EXPECT_EQ(got[2], x);
    if (!counters) EXPECT_EQ(got[0], 0u);
  }
}

// Counters need the subgroup clock; lavapipe's counts the host's ns, as its
// device clock does, and the check says so instead of inventing a clock.
TEST_F(VulkanFamilies, CycleCounterCheckSaysWhatTheCounterCounts) {
  const CounterVerdict v = check_cycle_counter(dev());
  if (!features().cycle_counter) {
    EXPECT_FALSE(v.usable);
    EXPECT_THROW(dev().kernel({"clock", "chain", {{"counters", true}}}), BuildError);
    return;
  }
  if (dev().info().vendor_info.value("vk_driver_name", std::string()) == "llvmpipe") {
    EXPECT_FALSE(v.usable) << "read as a counter of " << v.mhz << " MHz beside a timer of " << v.timer_mhz << " MHz";
    EXPECT_NE(v.why.find("timer counting ns"), std::string::npos) << v.why;
  } else {
    EXPECT_TRUE(v.usable || !v.why.empty());
    if (v.usable) EXPECT_GT(v.mhz, 0);
  }
}

TEST_F(VulkanFamilies, DeviceInfoIdentifiesThePhysicalDevice) {
  const DeviceInfo& info = dev().info();
  EXPECT_TRUE(info.api.starts_with("Vulkan 1.")) << info.api;
  EXPECT_EQ(info.uuid.size(), 36u) << info.uuid;
  EXPECT_GT(info.local_mem_bytes, 0u);
  EXPECT_GT(info.max_alloc_bytes, 0u);
  EXPECT_FALSE(info.features.subgroup_sizes.empty());
  const KernelResources r = dev().kernel_resources(dev().kernel({"launch", "empty", {}}));
  EXPECT_EQ(r.code_format, "spirv");
  EXPECT_GT(r.code_bytes.value_or(0), 20u);
}

TEST_F(VulkanFamilies, ShaderFamilyWithoutASourceIsUnsupported) {
  EXPECT_THROW(dev().kernel({"no_such_family", "main", {}}), Unsupported);
}

TEST(VulkanGlsl, CompileErrorCarriesGlslangsLog) {
  try {
    compile_glsl_compute("#version 450\nlayout(local_size_x = 1) in;\nvoid main() { undeclared = 1; }\n", "broken",
                         2);
    FAIL() << "a broken shader compiled";
  } catch (const BuildError& e) {
    EXPECT_NE(e.log.find("undeclared"), std::string::npos) << e.log;
  }
}

TEST(VulkanBackend, NoDriverIsAbsenceNotFailure) {
  const auto r = test::run_gpuscope("list --verbose", "VK_DRIVER_FILES=/nonexistent VK_ICD_FILENAMES=/nonexistent");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("vulkan  absent"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("vulkan:0"), std::string::npos) << r.output;
}

// No loader at all: libvulkan hidden behind /dev/null in a private mount
// namespace (needs root; skipped without).
TEST(VulkanBackend, NoLoaderIsAbsenceNotFailure) {
  if (std::system("unshare -m true 2>/dev/null") != 0) GTEST_SKIP() << "cannot make a mount namespace here";
  const std::string cmd =
      "unshare -m sh -c 'for f in $(ldconfig -p | awk \"/libvulkan\\.so/{print \\$NF}\" | sort -u); do "
      "mount --bind /dev/null $f; done; " +
      std::string(GPUSCOPE_BINARY) + " list --verbose' 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  EXPECT_EQ(pclose(pipe), 0) << out;
  EXPECT_NE(out.find("vulkan  absent: no Vulkan loader"), std::string::npos) << out;
}

// Each probe with Vulkan shaders, --quick on the Vulkan device, validation
// on: it runs (is not skipped), its host-side checks pass, the layer says
// nothing, and its main series has points. Findings are asked only where the
// curve's shape is not at the mercy of a shared CI machine's noise (tlb's
// rise, geometry's steps, and the clock, which needs a reported clock or a
// counter, are not: on lavapipe under load they come and go between runs).
struct ProbeCase {
  const char* probe;
  const char* series;
  bool findings;
};

void PrintTo(const ProbeCase& c, std::ostream* os) { *os << c.probe; }

class VulkanProbes : public ::testing::TestWithParam<ProbeCase> {};

TEST_P(VulkanProbes, QuickRunIsValidatedAndClean) {
  const std::string id = test::vulkan_device_id();
  if (id.empty()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
  const ProbeCase c = GetParam();
  const auto dir = std::filesystem::temp_directory_path() / ("gpuscope_vulkan_" + std::string(c.probe));
  std::filesystem::remove_all(dir);
  const auto r = test::run_gpuscope(
      "run --quiet --no-replay --quick --probes " + std::string(c.probe) + " --device " + id + " --out " + dir.string(),
      "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("Vulkan validation"), std::string::npos) << r.output;
  const Results res = read_results_file((dir / "results.json").string());
  EXPECT_TRUE(res.skipped.empty()) << res.skipped.front().reason;
  const Series* s = res.find_series(c.series);
  ASSERT_NE(s, nullptr) << c.series;
  EXPECT_FALSE(s->points.empty());
  for (const auto& p : s->points) EXPECT_GT(p.y, 0) << c.series << " at " << p.x;
  if (c.findings) EXPECT_FALSE(res.findings.empty());
}

INSTANTIATE_TEST_SUITE_P(Lavapipe, VulkanProbes,
                         ::testing::Values(ProbeCase{"latency", "latency.global", true},
                                           ProbeCase{"bandwidth", "bandwidth.read", true},
                                           ProbeCase{"local", "local.latency", true},
                                           ProbeCase{"launch", "launch.roundtrip", true},
                                           ProbeCase{"transfer", "transfer.h2d.pinned", true},
                                           ProbeCase{"coalescing", "coalescing.stride", true},
                                           ProbeCase{"tlb", "tlb.stride_4096", false},
                                           ProbeCase{"geometry", "geometry.pairs_near", false},
                                           ProbeCase{"clock", "clock.chain", false}),
                         [](const auto& info) { return std::string(info.param.probe); });

}  // namespace
}  // namespace gpuscope
