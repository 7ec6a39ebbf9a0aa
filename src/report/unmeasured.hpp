// What a run could not measure, and why, gathered from where results.json
// keeps it: the skipped probes, and the reasons probes record in a series'
// meta when part of their work could not run (atomics: "not_measurable";
// compute: "unsupported", "not_measured_time_budget"; icache: "unsupported";
// texture: "sharing_skipped"; bandwidth: "cut_short"; transfer: "error";
// occupancy: "stopped"). Every report shows the list.
#pragma once

#include <string>
#include <vector>

#include "core/results.hpp"

namespace gpuscope {

struct Unmeasured {
  std::string what;    // the probe, series or experiment: "atomics.ping_pong.global (32-bit)"
  std::string reason;  // as the probe recorded it
  std::string series;  // the series whose meta holds the reason; "" for a skipped probe
};

// In results order: skipped probes first, then series by series.
std::vector<Unmeasured> unmeasured(const Results& r);

}  // namespace gpuscope
