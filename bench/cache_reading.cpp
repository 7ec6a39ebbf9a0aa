// A CPU device's cache reading set beside two references: Linux's sizes
// (sysfs) and the host's own chase (host_chase.hpp) over the same
// footprints, read by the same analysis. Both the device's chase and the
// host's move with what the host's co-tenants hold of its caches, so a
// reading is judged against the host's as well as against Linux's. Used by
// bench/pocl_caches.sh and bench/lavapipe_caches.sh.
//
// Usage: gpuscope_cache_reading RESULTS_JSON huge|as-allocated
//   RESULTS_JSON: a run with the latency probe on a CPU device (PoCL,
//   lavapipe); huge|as-allocated: the pages the device's buffers get (PoCL
//   puts them on transparent huge pages; lavapipe's are the driver's own).
// Output, one line per level 1 and 2, sizes in bytes (-1: not found):
//   L<level> <device> <host's chase> <Linux>
// then `rise <x>`: how much the device's curve rises from half Linux's L1
// to twice it (tests/support/chase_step.hpp; 1 where no step shows).
#include "analysis/analyze.hpp"
#include "core/results.hpp"
#include "core/stats.hpp"
#include "host_chase.hpp"
#include "report/results_json.hpp"
#include "support/chase_step.hpp"

#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace {

using namespace gpuscope;

// The data (or unified) caches of cpu0 by level, in bytes; empty where /sys
// has none.
std::map<int, double> sysfs_data_caches() {
  std::map<int, double> sizes;
  for (int i = 0; i < 8; ++i) {
    const std::filesystem::path dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i);
    std::ifstream level(dir / "level"), type(dir / "type"), size(dir / "size");
    int l = 0;
    std::string t, s;
    if (!(level >> l) || !(type >> t) || !(size >> s)) continue;
    if (t == "Instruction") continue;
    double bytes = std::stod(s);
    if (s.back() == 'K') bytes *= 1024;
    if (s.back() == 'M') bytes *= 1024 * 1024;
    sizes[l] = bytes;
  }
  return sizes;
}

// The host's own chase over every footprint of `probe`'s latency curve, on
// `pages`, each point read as the probe reads one (the 10th percentile of
// its samples, kLatencyQuantile in src/probes/latency.cpp) and the curve by
// the same analysis. No findings where `probe` has no latency curve.
Results native_reading(const Results& probe, host_chase::Pages pages) {
  constexpr int kRounds = 15;
  constexpr double kRoundNs = 4e6;
  Results native;
  native.device = probe.device;
  const Series* measured = probe.find_series("latency.global");
  if (!measured) return native;
  Series curve = *measured;
  curve.meta = {{"chase_method", "Chased natively on the host (bench/host_chase.hpp)."}};
  for (Point& p : curve.points) {
    p.samples = host_chase::time_footprint(static_cast<size_t>(p.x), pages, kRounds, kRoundNs);
    p.y = quantile(p.samples, 0.1);
  }
  native.series = {curve};
  native.findings = analysis::analyze_all(native);
  return native;
}

double capacity(const Results& r, int level) {
  const Finding* f = r.find_finding("memory.L" + std::to_string(level) + ".capacity_bytes");
  return f ? number(*f) : -1.0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string pages_arg = argc == 3 ? argv[2] : "";
  if (pages_arg != "huge" && pages_arg != "as-allocated") {
    std::fprintf(stderr, "usage: gpuscope_cache_reading RESULTS_JSON huge|as-allocated\n");
    return 2;
  }
  try {
    const Results device = read_results_file(argv[1]);
    const Results host = native_reading(
        device, pages_arg == "huge" ? host_chase::Pages::kHuge : host_chase::Pages::kAsAllocated);
    const auto linux_sizes = sysfs_data_caches();
    for (const int level : {1, 2}) {
      const auto it = linux_sizes.find(level);
      std::printf("L%d %.0f %.0f %.0f\n", level, capacity(device, level), capacity(host, level),
                  it == linux_sizes.end() ? -1.0 : it->second);
    }
    const Series* curve = device.find_series("latency.global");
    const auto l1 = linux_sizes.find(1);
    std::printf("rise %.3f\n", curve && l1 != linux_sizes.end() ? test::step_across(*curve, l1->second) : -1.0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuscope_cache_reading: %s\n", e.what());
    return 1;
  }
  return 0;
}
