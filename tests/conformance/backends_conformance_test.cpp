// The backend conformance suite: on every admitted device, every kernel
// family's entries that the probes use build, run, validate and time.
//
// Each (device, family) test runs the probes that use the family, quick and
// with short launches, through a RecordingDevice. The probes check every
// kernel's output on the host (they throw ValidationError on a wrong value),
// so a probe that returns has validated what it ran; the test then asserts
// that the family's entries were built and launched with a device time > 0,
// and that the series they made hold finite points. A feature the device
// lacks (Unsupported) skips the test with the probe's reason, unless the
// device's features claim it (kMustRunWhere: a texture probe that skips on
// a device with images fails).
//
// A backend is admitted by one line in kAdmitted; its devices are found at
// run time from enumerate_devices(), with no environment to set.
#include "backends/backend.hpp"
#include "backends/sim/family.hpp"
#include "core/error.hpp"
#include "kernels/kernel_sources.hpp"
#include "probes/probe.hpp"

#include "support/recording_device.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gpuscope::test {
namespace {

// Which devices of which backend the suite runs on.
struct Admission {
  std::string backend;  // the device ID's prefix: "sim", "opencl", "vulkan"
  std::function<bool(const DeviceInfo&)> admits;
};

const std::vector<Admission> kAdmitted = {
    // One preset: the sim models every family the same way on every preset.
    {"sim", [](const DeviceInfo& d) { return d.id == "sim:mali-g52"; }},
    // The CPU device (PoCL), which every CI machine has; GPUs have their own runs.
    {"opencl", [](const DeviceInfo& d) { return d.type == "cpu"; }},
    {"vulkan", [](const DeviceInfo&) { return true; }},
};

// The probes that run each kernel family's entries.
const std::map<std::string, std::vector<std::string>> kFamilyProbes = {
    {"atomics", {"atomics"}},     {"bandwidth", {"bandwidth"}},         {"chase_layout", {"tlb", "geometry"}},
    {"clock", {"clock"}},         {"coalescing", {"coalescing"}},       {"compute", {"compute", "oplatency"}},
    {"divergence", {"divergence"}}, {"icache", {"icache"}},             {"latency", {"latency"}},
    {"launch", {"launch"}},       {"lbm", {"lbm"}},                     {"local", {"local"}},
    {"matrix", {"matrix"}},
    {"occupancy", {"occupancy"}}, {"scheduling", {"scheduling"}},       {"sustain", {"sustain"}},
    {"texture", {"texture"}},     {"transfer", {"transfer"}},
};

// Families whose probes must run, not skip, on a device whose features say
// it has what they need.
const std::map<std::string, std::function<bool(const DeviceFeatures&)>> kMustRunWhere = {
    {"texture", [](const DeviceFeatures& f) { return f.images; }},
};

std::string backend_of(const std::string& id) { return id.substr(0, id.find(':')); }

std::vector<std::string> admitted_devices() {
  std::vector<std::string> ids;
  for (const auto& d : enumerate_devices())
    for (const auto& a : kAdmitted)
      if (backend_of(d.id) == a.backend && a.admits(d)) ids.push_back(d.id);
  return ids;
}

struct Case {
  std::string device;
  std::string family;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.device << " " << c.family; }

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const auto& id : admitted_devices())
    for (const auto& [family, probes] : kFamilyProbes) out.push_back({id, family});
  return out;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string n = info.param.device + "_" + info.param.family;
  for (auto& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

// Quick runs with launches of about a millisecond: the suite checks that
// kernels work, not what they measure.
ProbeOptions conformance_options() {
  ProbeOptions o;
  o.quick = true;
  o.harness.target_launch_ms = 1;
  o.harness.max_launch_ms = 20;
  o.harness.min_samples = 3;
  o.harness.max_samples = 3;
  o.harness.warmup_launches = 1;
  o.budget_scale = 0.25;
  o.sustain_s = 0.3;
  return o;
}

class BackendConformance : public testing::TestWithParam<Case> {};

TEST_P(BackendConformance, FamilyBuildsRunsValidatesAndTimes) {
  const Case& c = GetParam();
  auto inner = open_device(c.device);
  RecordingDevice dev(*inner);
  const ProbeOptions opts = conformance_options();
  std::vector<Series> series;
  for (const auto& name : kFamilyProbes.at(c.family)) {
    const ProbeDef& def = find_probe(name);
    ProbeContext ctx{dev, opts, planned_budget_s(def, opts, dev.info())};
    try {
      auto s = def.run(ctx);
      series.insert(series.end(), s.begin(), s.end());
    } catch (const Unsupported& e) {
      if (const auto it = kMustRunWhere.find(c.family); it != kMustRunWhere.end() && it->second(dev.info().features))
        FAIL() << c.device << " says it has what " << c.family << " needs, yet probe " << name
               << " refused: " << e.what();
      GTEST_SKIP() << c.device << " cannot run probe " << name << ": " << e.what();
    }
  }

  // Per entry: every launch timed, and at least one entry launched. A probe
  // may build an entry it then has no use for on this device (divergence's
  // partition kernel where the wave is one lane wide), or build a spec for
  // its resources alone (icache's code-size sweep): those are listed, not
  // failed.
  std::map<std::string, std::vector<double>> launches_by_entry;
  for (const auto& [key, rec] : dev.kernels()) {
    if (rec.spec.family != c.family) continue;
    auto& ns = launches_by_entry[rec.spec.entry];
    ns.insert(ns.end(), rec.device_ns.begin(), rec.device_ns.end());
  }
  ASSERT_FALSE(launches_by_entry.empty()) << "the probes of " << c.family << " built none of its kernels";
  std::string entries, unlaunched;
  for (const auto& [entry, ns] : launches_by_entry) {
    (ns.empty() ? unlaunched : entries) += " " + entry;
    for (double t : ns) EXPECT_TRUE(std::isfinite(t) && t > 0) << c.family << "/" << entry << ": device time " << t;
  }
  ASSERT_FALSE(entries.empty()) << "the probes of " << c.family << " launched none of its kernels";
  RecordProperty("entries_run", entries);
  RecordProperty("entries_built_not_launched", unlaunched);
  std::printf("%s %s: entries run:%s; built, not launched:%s\n", c.device.c_str(), c.family.c_str(),
              entries.c_str(), unlaunched.empty() ? " none" : unlaunched.c_str());

  // What the kernels measured: finite points. A probe may leave a series
  // empty (a summary, or a sweep its budget cut), so only one is required
  // to hold points.
  size_t with_points = 0;
  for (const auto& s : series) {
    with_points += s.points.empty() ? 0 : 1;
    for (const auto& p : s.points) EXPECT_TRUE(std::isfinite(p.x) && std::isfinite(p.y)) << s.id << " at " << p.x;
  }
  EXPECT_GT(with_points, 0u) << "no series with points from the probes of " << c.family;
}

INSTANTIATE_TEST_SUITE_P(Admitted, BackendConformance, testing::ValuesIn(cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BackendConformance);

// The family list above is complete: every OpenCL source file and every sim
// family has probes that run it, and every family listed has one or the other.
TEST(BackendConformanceTable, CoversEveryKernelFamily) {
  std::set<std::string> families;
  for (const auto& src : embedded_kernels()) {
    const std::string path(src.path);
    if (path.rfind("opencl/", 0) == 0 && path.size() > 10 && path.ends_with(".cl"))
      families.insert(path.substr(7, path.size() - 10));
  }
  for (const auto& [family, entry] : sim::sim_families().entries()) families.insert(family);
  std::set<std::string> listed;
  for (const auto& [family, probes] : kFamilyProbes) {
    listed.insert(family);
    for (const auto& p : probes) EXPECT_NO_THROW(find_probe(p)) << family;
  }
  EXPECT_EQ(families, listed);
}

// The suite runs somewhere: the sim is compiled into every build.
TEST(BackendConformanceTable, AdmitsASimDevice) {
  const auto ids = admitted_devices();
  EXPECT_NE(std::find(ids.begin(), ids.end(), "sim:mali-g52"), ids.end());
}

}  // namespace
}  // namespace gpuscope::test
