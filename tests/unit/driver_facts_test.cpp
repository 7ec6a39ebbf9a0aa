// The driver-fact readers on sysfs trees laid out as each driver writes them
// (tests/data/sysfs/), their filtering by device, their round trip through
// results.json and the agreement checks. The command line around them:
// tests/device/app_driver_facts_cli_test.cpp; the checks on recorded H100
// runs: tests/recorded/driver_agreement_test.cpp.
#include "analysis/driver_agreement.hpp"
#include "driver/driver_readers.hpp"
#include "report/driver_section.hpp"
#include "report/results_json.hpp"

#include "support/driver_facts.hpp"
#include "support/findings.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace gpuscope::test {
namespace {

TEST(DriverFacts, MaliKbaseGpuinfoCoreMaskAndDevfreq) {
  const auto snaps = read_mali_kbase(kSysfsTrees / "mali_kbase_g52_2core");
  ASSERT_EQ(snaps.size(), 1u);
  const auto& s = snaps[0];
  EXPECT_EQ(s.driver, "mali_kbase");
  EXPECT_EQ(str(s, "model"), "Mali-G52");
  EXPECT_EQ(num(s, "cores"), 2);
  EXPECT_EQ(str(s, "revision"), "r1p0");
  EXPECT_EQ(str(s, "product_id"), "0x7212");
  EXPECT_EQ(str(s, "core_mask.current"), "0x3");
  EXPECT_EQ(num(s, "core_mask.available_cores"), 2);
  EXPECT_DOUBLE_EQ(num(s, "clock.current_mhz"), 800);
  EXPECT_NEAR(num(s, "clock.min_mhz"), 125, 0.01);
  EXPECT_EQ(str(s, "clock.available_mhz"), "125 250 285.714 400 500 666.667 800");
  EXPECT_EQ(fact(s, "cores").source, "/sys/class/misc/mali0/device/gpuinfo");
  EXPECT_TRUE(s.notes.empty());
}

TEST(DriverFacts, KgslModelClocksAndBusy) {
  const auto snaps = read_kgsl(kSysfsTrees / "kgsl_adreno530");
  ASSERT_EQ(snaps.size(), 1u);
  const auto& s = snaps[0];
  EXPECT_EQ(str(s, "model"), "Adreno530v2");
  EXPECT_DOUBLE_EQ(num(s, "clock.current_mhz"), 510);
  EXPECT_DOUBLE_EQ(num(s, "clock.max_mhz"), 624);
  EXPECT_DOUBLE_EQ(num(s, "clock.min_mhz"), 133);
  EXPECT_NEAR(num(s, "busy_percent"), 41.25, 1e-9);
  EXPECT_EQ(fact(s, "clock.current_mhz").source, "/sys/class/kgsl/kgsl-3d0/gpuclk");
}

TEST(DriverFacts, AmdgpuDpmTablesHwmonAndPci) {
  const auto cards = read_drm_cards(kSysfsTrees / "amdgpu_navi21");
  ASSERT_EQ(cards.size(), 1u);
  const auto& c = cards[0];
  EXPECT_EQ(c.driver, "amdgpu");
  EXPECT_DOUBLE_EQ(num(c, "clock.current_mhz"), 2250);
  EXPECT_DOUBLE_EQ(num(c, "clock.min_mhz"), 500);
  EXPECT_DOUBLE_EQ(num(c, "clock.max_mhz"), 2500);
  EXPECT_DOUBLE_EQ(num(c, "memory.clock.current_mhz"), 1000);
  EXPECT_DOUBLE_EQ(num(c, "busy_percent"), 97);
  EXPECT_DOUBLE_EQ(num(c, "temperature_c"), 61);
  EXPECT_DOUBLE_EQ(num(c, "power_w"), 255);
  const auto pci = read_pci_display_devices(kSysfsTrees / "amdgpu_navi21");
  ASSERT_EQ(pci.size(), 1u) << "the host bridge is not a display device";
  EXPECT_EQ(str(pci[0], "pci.vendor_id"), "0x1002");
  EXPECT_EQ(str(pci[0], "pci.device_id"), "0x73bf");
  EXPECT_EQ(str(pci[0], "driver"), "amdgpu");
  EXPECT_EQ(num(pci[0], "pci.link.current_width"), 16);
}

TEST(DriverFacts, I915AndXeFrequencies) {
  const auto i915 = read_drm_cards(kSysfsTrees / "i915_tigerlake");
  ASSERT_EQ(i915.size(), 1u);
  EXPECT_EQ(i915[0].driver, "i915");
  EXPECT_DOUBLE_EQ(num(i915[0], "clock.current_mhz"), 1300);
  EXPECT_DOUBLE_EQ(num(i915[0], "clock.actual_mhz"), 1295);
  EXPECT_DOUBLE_EQ(num(i915[0], "clock.rp0_mhz"), 1350);
  const auto xe = read_drm_cards(kSysfsTrees / "xe_battlemage");
  ASSERT_EQ(xe.size(), 1u);
  EXPECT_EQ(xe[0].driver, "xe");
  EXPECT_DOUBLE_EQ(num(xe[0], "clock.max_mhz"), 2850);
  EXPECT_DOUBLE_EQ(num(xe[0], "clock.actual_mhz"), 2800);
}

TEST(DriverFacts, MalformedFilesAreIgnoredWithANote) {
  DeviceInfo any;
  DriverQuery q;
  q.sysfs_root = kSysfsTrees / "malformed";
  q.explicit_root = true;
  q.use_nvml = false;
  const auto snaps = read_driver_facts(any, q);
  size_t notes = 0;
  for (const auto& s : snaps) {
    notes += s.notes.size();
    for (const auto& f : s.facts) EXPECT_NE(f.key, "clock.current_mhz") << s.driver << " took " << f.value;
    for (const auto& n : s.notes)
      EXPECT_EQ(n.find('\033'), std::string::npos) << "control characters reach notes";
  }
  // gpuinfo, cur_freq, available_frequencies, max_freq (a directory),
  // min_freq (NUL), gpubusy, gpuclk, max_gpuclk (too long), pp_dpm_sclk,
  // pp_dpm_mclk (a clock past 64 bits), gpu_busy_percent. core_mask has no
  // line to take and is passed over.
  EXPECT_EQ(notes, 11u);
}

TEST(DriverFacts, OnlyDriversThatFitTheDeviceAreRead) {
  DriverQuery q;
  q.sysfs_root = kSysfsTrees / "amdgpu_navi21";
  q.use_nvml = false;
  DeviceInfo amd;
  amd.type = "gpu";
  amd.vendor = "Advanced Micro Devices, Inc.";
  EXPECT_EQ(read_driver_facts(amd, q).size(), 2u);  // the card and its PCI function
  DeviceInfo intel = amd;
  intel.vendor = "Intel(R) Corporation";
  EXPECT_TRUE(read_driver_facts(intel, q).empty());
  DeviceInfo cpu = amd;
  cpu.type = "cpu";
  EXPECT_TRUE(read_driver_facts(cpu, q).empty());
  q.explicit_root = true;  // a tree the user named: everything in it
  EXPECT_EQ(read_driver_facts(intel, q).size(), 2u);
  for (const auto& s : read_driver_facts(intel, q)) EXPECT_EQ(s.when, "start");
}

TEST(DriverFacts, SnapshotsSurviveResultsJson) {
  Results r;
  r.device.id = "opencl:0:0";
  r.device.name = "Mali-G52";
  r.device.driver = read_mali_kbase(kSysfsTrees / "mali_kbase_g52_2core");
  r.device.driver[0].when = "end";
  r.device.driver[0].notes.push_back("a note");
  const Results back = results_from_json(to_json(r));
  ASSERT_EQ(back.device.driver.size(), 1u);
  EXPECT_EQ(back.device.driver[0].when, "end");
  EXPECT_EQ(back.device.driver[0].facts.size(), r.device.driver[0].facts.size());
  EXPECT_EQ(str(back.device.driver[0], "model"), "Mali-G52");
  EXPECT_EQ(back.device.driver[0].notes, std::vector<std::string>{"a note"});
  auto j = to_json(r);
  j["device"]["driver"][0]["facts"][0]["value"] = nlohmann::json::array();
  EXPECT_THROW(results_from_json(j), std::exception);
}

Finding measured(const std::string& id, double v) { return test::make_finding(id, v, "", 0.9, {}, {}, {}, "", ""); }

TEST(DriverAgreement, CoresAndClockAgreeOrSayWhyNot) {
  Results r;
  r.device.name = "Mali-G52 r1p0";
  r.device.compute_units = 2;
  r.device.vendor_info["arm_compute_units_bitfield"] = uint64_t{0x3};
  r.device.driver = read_mali_kbase(kSysfsTrees / "mali_kbase_g52_2core");
  r.findings.push_back(measured("memory.bandwidth.workgroup_period", 2));
  r.findings.push_back(measured("device.measured_clock_mhz", 795));
  auto checks = analysis::check_driver_facts(r);
  ASSERT_EQ(checks.size(), 6u);  // model, three core counts, clock max and current
  for (const auto& c : checks) EXPECT_TRUE(c.agrees) << c.what << ": " << c.measured << " vs " << c.claimed;

  r.findings[1] = measured("device.measured_clock_mhz", 1200);  // above the 800 MHz maximum
  r.device.compute_units = 4;
  checks = analysis::check_driver_facts(r);
  int disagreements = 0;
  for (const auto& c : checks) disagreements += c.agrees ? 0 : 1;
  EXPECT_EQ(disagreements, 3);  // compute units, clock max, clock current
  const std::string text = driver_section_text(r);
  EXPECT_NE(text.find("DISAGREES"), std::string::npos) << text;
  EXPECT_NE(driver_section_html(r).str().find("disagrees"), std::string::npos);
  EXPECT_NE(driver_section_markdown(r).find("**disagrees**"), std::string::npos);
}

TEST(DriverAgreement, NoSnapshotsNoSection) {
  Results r;
  r.findings.push_back(measured("device.measured_clock_mhz", 795));
  EXPECT_TRUE(analysis::check_driver_facts(r).empty());
  EXPECT_EQ(driver_section_html(r).str(), "");
  EXPECT_EQ(driver_section_text(r), "");
}

}  // namespace
}  // namespace gpuscope::test
