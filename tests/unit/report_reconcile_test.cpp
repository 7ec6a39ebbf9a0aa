// Cross-API reconciliation (report/reconcile.hpp) and `gpuscope compare` of
// two runs of one GPU: the tolerance classes, the flags, the likely reasons,
// and what is said when the runs are of different GPUs.
#include "support/cli.hpp"
#include "core/finding_catalogue.hpp"
#include "report/html_report.hpp"
#include "report/markdown_report.hpp"
#include "report/reconcile.hpp"
#include "report/reconcile_table.hpp"
#include "report/results_json.hpp"
#include "report/terminal_summary.hpp"
#include "support/findings.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpuscope {
namespace {

constexpr const char* kUuid = "0a1b2c3d-0000-1111-2222-333344445555";

// A finding at confidence 0.9 whose evidence is its area's series.
Finding make(std::string id, FindingValue v, std::string unit, std::string method = "m") {
  std::string evidence = id.substr(0, id.find('.')) + ".series";
  return test::make_finding(std::move(id), std::move(v), std::move(unit), 0.9, {}, {}, {std::move(evidence)}, "",
                            std::move(method));
}

Results run_of(std::string id, std::string uuid) {
  Results r;
  r.device.id = std::move(id);
  r.device.name = "GPU";
  r.device.uuid = std::move(uuid);
  r.device.clock_mhz = 1980;
  return r;
}

const ReconciledFinding& row(const Reconciliation& rc, const std::string& id) {
  for (const auto& r : rc.both)
    if (r.id == id) return r;
  throw std::runtime_error("no row " + id);
}

bool any_reason_has(const ReconciledFinding& r, const std::string& text) {
  for (const auto& why : r.reasons)
    if (why.find(text) != std::string::npos) return true;
  return false;
}

TEST(Reconcile, ToleranceClassComesFromTheUnit) {
  EXPECT_EQ(tolerance_class(make("memory.L1.capacity_bytes", 1.0, "B")), ToleranceClass::size);
  EXPECT_EQ(tolerance_class(make("exec.registers.per_cu", 1.0, "registers")), ToleranceClass::size);
  EXPECT_EQ(tolerance_class(make("memory.L1.latency_ns", 1.0, "ns")), ToleranceClass::latency);
  EXPECT_EQ(tolerance_class(make("compute.fp32.fma.latency_cycles", 1.0, "cycles")), ToleranceClass::latency);
  EXPECT_EQ(tolerance_class(make("launch.dispatch_us", 1.0, "us")), ToleranceClass::latency);
  EXPECT_EQ(tolerance_class(make("memory.dram.bandwidth_gbps", 1.0, "GB/s")), ToleranceClass::rate);
  EXPECT_EQ(tolerance_class(make("compute.fp32.fma.throughput_gops", 1.0, "Gop/s")), ToleranceClass::rate);
  EXPECT_EQ(tolerance_class(make("compute.fp32.fma.ops_per_clock_per_cu", 1.0, "op/clk/CU")), ToleranceClass::rate);
  EXPECT_EQ(tolerance_class(make("device.measured_clock_mhz", 1.0, "MHz")), ToleranceClass::rate);
  EXPECT_EQ(tolerance_class(make("compute.fp64.fma.rate_vs_fp32_fma", 0.5, "")), ToleranceClass::rate);
  EXPECT_EQ(tolerance_class(make("memory.coalescing.stride_4_ratio", 0.5, "")), ToleranceClass::rate);
  EXPECT_EQ(tolerance_class(make("exec.wave_width", 32.0, "")), ToleranceClass::exact);
  EXPECT_EQ(tolerance_class(make("host.zero_copy", false, "")), ToleranceClass::exact);
  EXPECT_EQ(tolerance_class(make("app.lbm.fp32.mass_rel_error", 1e-7, "")), ToleranceClass::none);
  EXPECT_DOUBLE_EQ(tolerance_of(ToleranceClass::size), 0.10);
  EXPECT_DOUBLE_EQ(tolerance_of(ToleranceClass::latency), 0.10);
  EXPECT_DOUBLE_EQ(tolerance_of(ToleranceClass::rate), 0.05);
}

TEST(Reconcile, FlagsByClassAndSaysWhy) {
  Results a = run_of("opencl:1:0", kUuid), b = run_of("vulkan:0", kUuid);
  b.device.clock_mhz = 1755;  // the Vulkan driver reports another clock
  a.device.features.fp16 = false;
  b.device.features.fp16 = true;
  a.findings = {make("memory.L1.capacity_bytes", 100.0, "B"),        // 9% off: within 10%
                make("memory.L2.capacity_bytes", 100.0, "B"),        // 11% off: outside
                make("memory.dram.bandwidth_gbps", 100.0, "GB/s"),   // 4%: within 5%
                make("local.bandwidth_gbps", 100.0, "GB/s"),         // 6%: outside
                make("memory.L1.latency_ns", 32.0, "ns", "a pointer chase p = *p"),
                make("compute.fp32.fma.latency_cycles", 4.0, "cycles"),
                make("compute.fp16.fma.throughput_gops", 1000.0, "Gop/s"),
                make("exec.wave_width", 32.0, ""),
                make("texture.shares_l1", true, ""),
                make("app.lbm.fp32.mass_rel_error", 1e-7, ""),
                make("host.h2d_gbps", 50.0, "GB/s")};
  a.findings.back().evidence = {"transfer.h2d"};
  b.findings = {make("memory.L1.capacity_bytes", 109.0, "B"),
                make("memory.L2.capacity_bytes", 111.0, "B"),
                make("memory.dram.bandwidth_gbps", 96.0, "GB/s"),
                make("local.bandwidth_gbps", 94.0, "GB/s"),
                make("memory.L1.latency_ns", 40.0, "ns", "an index chase, address arithmetic subtracted"),
                make("compute.fp32.fma.latency_cycles", 3.5, "cycles"),
                make("compute.fp16.fma.throughput_gops", 2000.0, "Gop/s"),
                make("exec.wave_width", 32.0, ""),
                make("texture.shares_l1", false, ""),
                make("app.lbm.fp32.mass_rel_error", 3e-7, ""),
                make("launch.dispatch_us", 5.0, "us")};
  b.skipped = {{"transfer", "unsupported: no host-visible device memory"}};
  const Reconciliation rc = reconcile(a, b, "[1]", "[2]");
  using S = ReconciledFinding::Status;
  EXPECT_EQ(rc.identity.verdict, DeviceIdentityMatch::Verdict::same);
  EXPECT_EQ(row(rc, "memory.L1.capacity_bytes").status, S::within);
  EXPECT_EQ(row(rc, "memory.L2.capacity_bytes").status, S::outside);
  EXPECT_NEAR(*row(rc, "memory.L2.capacity_bytes").ratio, 1.11, 1e-12);
  EXPECT_EQ(row(rc, "memory.dram.bandwidth_gbps").status, S::within);
  EXPECT_EQ(row(rc, "local.bandwidth_gbps").status, S::outside);
  EXPECT_EQ(row(rc, "exec.wave_width").status, S::within);
  EXPECT_EQ(row(rc, "texture.shares_l1").status, S::outside);
  EXPECT_FALSE(row(rc, "texture.shares_l1").ratio);
  EXPECT_EQ(row(rc, "app.lbm.fp32.mass_rel_error").status, S::not_compared);
  // The reasons the results record.
  const auto& l1 = row(rc, "memory.L1.latency_ns");
  EXPECT_EQ(l1.status, S::outside);
  EXPECT_TRUE(any_reason_has(l1, "measured differently")) << l1.reasons[0];
  EXPECT_TRUE(any_reason_has(l1, "index chase"));
  const auto& cycles = row(rc, "compute.fp32.fma.latency_cycles");
  EXPECT_TRUE(any_reason_has(cycles, "different clocks")) << cycles.reasons[0];
  EXPECT_TRUE(any_reason_has(cycles, "1755 MHz"));
  const auto& fp16 = row(rc, "compute.fp16.fma.throughput_gops");
  EXPECT_TRUE(any_reason_has(fp16, "fp16")) << fp16.reasons[0];
  // Nothing recorded to explain it: said so, never an empty list.
  const auto& l2 = row(rc, "memory.L2.capacity_bytes");
  ASSERT_EQ(l2.reasons.size(), 1u);
  EXPECT_NE(l2.reasons[0].find("no difference"), std::string::npos);
  // One-sided findings with the other run's reason.
  ASSERT_EQ(rc.only.size(), 2u);
  EXPECT_EQ(rc.only[0].id, "host.h2d_gbps");
  EXPECT_TRUE(rc.only[0].in_a);
  EXPECT_NE(rc.only[0].reason.find("skipped transfer: unsupported"), std::string::npos) << rc.only[0].reason;
  EXPECT_EQ(rc.only[1].id, "launch.dispatch_us");
  EXPECT_FALSE(rc.only[1].in_a);
  EXPECT_EQ(rc.count(S::outside), 6u);  // L2, local bandwidth, L1 latency, cycles, fp16, shares_l1
}

// What both reports show: the pairs of measured runs of one GPU, and each
// row's ratio, tolerance and verdict as text.
TEST(Reconcile, TableRowsAndPairs) {
  Results a = run_of("opencl:1:0", kUuid), b = run_of("vulkan:0", kUuid);
  Results other = run_of("opencl:2:0", "ffffffff-0000-1111-2222-333344445555"), ref = run_of("reference:x", kUuid);
  a.findings = {make("memory.L1.capacity_bytes", 100.0, "B"), make("memory.L2.capacity_bytes", 100.0, "B"),
                make("texture.shares_l1", true, ""), make("app.lbm.fp32.mass_rel_error", 1e-7, "")};
  b.findings = {make("memory.L1.capacity_bytes", 109.0, "B"), make("memory.L2.capacity_bytes", 111.0, "B"),
                make("texture.shares_l1", false, ""), make("app.lbm.fp32.mass_rel_error", 3e-7, "")};
  const std::vector<ReportRun> runs = {{"cl", &a, false}, {"ref", &ref, true}, {"other", &other, false},
                                       {"vk", &b, false}};
  const auto pairs = reconciled_pairs(runs);
  ASSERT_EQ(pairs.size(), 1u);  // references and other GPUs are not reconciled
  EXPECT_EQ(pairs[0].a, 0u);
  EXPECT_EQ(pairs[0].b, 3u);
  EXPECT_EQ(pairs[0].label_b, "vk");
  EXPECT_EQ(pairs[0].identity, identity_sentence(a, b));
  EXPECT_EQ(pairs[0].only_in_a, 0u);
  const auto& both = pairs[0].reconciliation.both;
  ASSERT_EQ(both.size(), 4u);
  const ReconcileRow within = reconcile_row(both[0]), outside = reconcile_row(both[1]),
                     differs = reconcile_row(both[2]), skipped = reconcile_row(both[3]);
  EXPECT_EQ(within.verdict, "ok");
  EXPECT_EQ(within.ratio, "1.09x");
  EXPECT_EQ(outside.verdict, "outside");
  EXPECT_EQ(outside.ratio, "1.11x");
  EXPECT_EQ(outside.tolerance_percent, "10%");
  EXPECT_EQ(outside.tolerance_class, "size");
  EXPECT_EQ(differs.verdict, "differs");
  EXPECT_EQ(differs.ratio, "");
  EXPECT_EQ(differs.tolerance_percent, "");
  EXPECT_EQ(differs.tolerance_class, "exact");
  EXPECT_EQ(skipped.verdict, "not compared");
  EXPECT_EQ(skipped.tolerance_class, "not compared");
}

// Two real runs of one H200, given one uuid: the reconciliation of a GPU
// with itself, where everything outside tolerance has a recorded reason or
// says it has none.
TEST(Reconcile, RecordedRunsOfOneGpu) {
  Results a = read_results_file(std::string(GPUSCOPE_TEST_DATA) + "/h200/full_run_cold_cache.json");
  Results b = read_results_file(std::string(GPUSCOPE_TEST_DATA) + "/h200/full_run_warm_cache.json");
  a.device.uuid = b.device.uuid = kUuid;
  const Reconciliation rc = reconcile(a, b, "[1]", "[2]");
  using S = ReconciledFinding::Status;
  EXPECT_GT(rc.both.size(), 150u);
  EXPECT_EQ(row(rc, "memory.L1.latency_ns").status, S::within);
  EXPECT_EQ(row(rc, "memory.dram.bandwidth_gbps").status, S::within);
  EXPECT_EQ(row(rc, "compute.fp32.fma.throughput_gops").status, S::within);
  // The TLB's miss penalty read 1.72 and 3.63 ns in the two runs.
  EXPECT_EQ(row(rc, "memory.tlb.miss_penalty_ns").status, S::outside);
  // The second run's driver gave no register counts: cliffs in live values.
  const auto& cliffs = row(rc, "exec.registers.occupancy_cliffs");
  EXPECT_EQ(cliffs.status, S::outside);
  EXPECT_TRUE(any_reason_has(cliffs, "live values"));
  // The icache's intervals overlap though the values are 1.25x apart.
  EXPECT_TRUE(any_reason_has(row(rc, "exec.icache_bytes"), "intervals overlap"));
  // The first run's compute budget ended before fp32 div.
  bool div_said = false;
  for (const auto& o : rc.only)
    if (o.id == "compute.fp32.div.throughput_gops")
      div_said = !o.in_a && o.reason.find("ran out of time before compute.fp32.div") != std::string::npos;
  EXPECT_TRUE(div_said);
  for (const auto& r : rc.both)
    if (r.status != S::within) EXPECT_FALSE(r.reasons.empty()) << r.id;
}

TEST(Reconcile, CompareSaysSameOrDifferentGpu) {
  Results a = run_of("opencl:1:0", kUuid), b = run_of("vulkan:0", kUuid);
  a.findings = {make("memory.L1.latency_ns", 32.0, "ns")};
  b.findings = {make("memory.L1.latency_ns", 40.0, "ns")};
  const std::string same = format_comparison({{"A", &a, false}, {"B", &b, false}});
  EXPECT_NE(same.find("the same GPU, through opencl and vulkan (same uuid " + std::string(kUuid)), std::string::npos)
      << same;
  EXPECT_NE(same.find("Reconciliation of [1] and [2]"), std::string::npos) << same;
  EXPECT_NE(same.find("OUTSIDE 10%"), std::string::npos) << same;
  const std::string html = render_html_report({{"A", &a, false}, {"B", &b, false}});
  EXPECT_NE(html.find("id=\"reconcile-1-2\""), std::string::npos);
  EXPECT_NE(html.find("class=\"outside\""), std::string::npos);
  const std::string md = format_markdown({{"A", &a, false}, {"B", &b, false}});
  EXPECT_NE(md.find("### Reconciliation: A and B"), std::string::npos) << md;
  EXPECT_NE(md.find("| L1 latency | 32 ns | 40 ns | 1.25x | 10% |"), std::string::npos) << md;

  b.device.uuid = "ffffffff-0000-1111-2222-333344445555";
  const std::string other = format_comparison({{"A", &a, false}, {"B", &b, false}});
  EXPECT_NE(other.find("different GPUs (uuids"), std::string::npos) << other;
  EXPECT_EQ(other.find("Reconciliation"), std::string::npos) << other;
  EXPECT_EQ(render_html_report({{"A", &a, false}, {"B", &b, false}}).find("id=\"reconcile-"), std::string::npos);

  b.device.uuid.clear();
  const std::string unknown = format_comparison({{"A", &a, false}, {"B", &b, false}});
  EXPECT_NE(unknown.find("not known to be one GPU: vulkan:0 records no uuid"), std::string::npos) << unknown;
}

TEST(Reconcile, CompareCommandOnTwoFilesOfOneGpu) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "gpuscope_reconcile_cli";
  fs::remove_all(dir);
  fs::create_directories(dir);
  Results a = read_results_file(std::string(GPUSCOPE_TEST_DATA) + "/h200/full_run_cold_cache.json");
  Results b = read_results_file(std::string(GPUSCOPE_TEST_DATA) + "/h200/full_run_warm_cache.json");
  a.device.pci_address = b.device.pci_address = "0000:1b:00.0";
  write_results_file_atomic(a, (dir / "a.json").string());
  write_results_file_atomic(b, (dir / "b.json").string());
  const auto r = test::run_gpuscope("compare " + (dir / "a.json").string() + " " + (dir / "b.json").string() +
                                    " --out " + (dir / "cmp.html").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("the same GPU, both through opencl (same PCI address 0000:1b:00.0)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("tlb miss penalty"), std::string::npos);
  std::ifstream in(dir / "cmp.html");
  std::stringstream html;
  html << in.rdbuf();
  EXPECT_NE(html.str().find("Reconciliation: "), std::string::npos);
}

}  // namespace
}  // namespace gpuscope
