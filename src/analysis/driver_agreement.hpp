// What the driver claims beside what gpuscope measured: core counts and
// clocks, with whether they agree. Pure: reads a Results, touches no device.
#pragma once

#include "core/results.hpp"

#include <string>
#include <vector>

namespace gpuscope::analysis {

struct DriverCheck {
  std::string what;      // "shader cores", "clock", "model"
  std::string measured;  // the measured (or API-reported) side, with its finding id or field
  std::string claimed;   // the driver's side, with the driver and source
  bool agrees = true;
  std::string note;  // why they differ, where they do; empty when they agree
};

// Relative tolerance within which a measured clock agrees with the driver's.
inline constexpr double kClockTolerance = 0.10;
// Relative tolerance within which the measured FP32 FMA throughput agrees
// with the driver's rate per core x cores x clock: the throughput kernels
// reach 90 to 100% of a GPU's issue rate where the clock holds (the H100's
// and H200's recorded runs), a clock that moves by DVFS takes more.
inline constexpr double kFmaRateTolerance = 0.15;

// Every check the stored driver snapshots allow; empty when none were read.
// Beside the OS driver's facts, what a Vulkan driver said of its shader
// cores (snapshot "vulkan", driver/vulkan_shader_cores.hpp): its core count
// against the measured work-group period, its resident warps per core
// against exec.max_waves_per_cu, its subgroup sizes and wavefront size
// against exec.wave_width, and Arm's FMA rate per core against the measured
// FP32 FMA throughput.
std::vector<DriverCheck> check_driver_facts(const Results& r);

}  // namespace gpuscope::analysis
