// Builds the later probes' kernels (ProbeDef::build_ahead: bandwidth,
// compute, oplatency, matrix, occupancy, icache, lbm) on a thread of its own
// while the first probes of a run measure: on an H200 through Vulkan the
// icache, occupancy and matrix builds took 2.8 s of a whole run's probes on
// a fresh machine, and 1.5 s with the driver's cache warm (glslang compiling
// icache's 16384-add body on the host); the bandwidth, compute, oplatency
// and lbm builds another 1.7 s cold.
//
// On GPUs only, as ResultsSaver: a CPU device's kernels run on the host's
// cores, which the builds would take from them, and the sim builds nothing
// (and under qemu-user, where the arm64 check runs it, starting a thread
// did not return).
#pragma once

#include "backends/backend.hpp"
#include "probes/probe.hpp"

#include <thread>
#include <vector>

namespace gpuscope {

class BuildAhead {
 public:
  // Starts building, in run order, for each of `probes` that has a
  // build_ahead, when `enabled`; else does nothing.
  BuildAhead(Device& device, std::vector<const ProbeDef*> probes, const ProbeOptions& options, bool enabled);
  ~BuildAhead();  // join()
  BuildAhead(const BuildAhead&) = delete;
  BuildAhead& operator=(const BuildAhead&) = delete;

  // Waits for the builds to end. Before the device is closed or reopened.
  void join();

 private:
  std::thread thread_;
};

}  // namespace gpuscope
