// `gpuscope run --device A,B,...` or `--device all`: every device in turn,
// each into its own folder under --out, then the comparison of them.
#pragma once

#include "app/run_options.hpp"

#include <functional>
#include <string>

namespace gpuscope {

// One device's whole run into `one.out` (cmd_run): its exit status, 0 or 1
// when a probe failed; throws for a device that could not run or finish.
using RunOneDevice = std::function<int(const RunPlan& one)>;

// Runs each of `plan`'s devices with `run_one`, one at a time, into
// --out/<device_folder_name>, printing a heading before each (bold with
// `color`). A device that fails keeps what it finished, its failure recorded
// in its results.json under skipped "device", and the others still run.
// Then prints the comparison of every device that left results and writes
// it to --out/compare.html (two or more), and the list of outcomes. Every ID
// is checked (UsageError) before any device time is spent. Returns 1 when
// any device or probe failed, else 0.
int run_each_device(const RunPlan& plan, const std::string& command_line, bool color,
                    const RunOneDevice& run_one);

}  // namespace gpuscope
