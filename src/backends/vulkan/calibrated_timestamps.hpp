// VK_EXT_calibrated_timestamps (or its KHR twin): pairings of the device's
// timestamp clock with a host clock, so that a host instant (the call that
// submits work) and the device's timestamps of that work are on one clock.
// The launch probe reads queued -> start through it (EventTimes::queued_ns).
#pragma once

#include "backends/vulkan/clock_pairing.hpp"

#include <volk.h>

#include <set>
#include <string>

namespace gpuscope::vulkan {

// The extension to enable on a device listing `exts` (EXT preferred, KHR
// else), or nullptr where it has neither.
const char* calibrated_timestamps_extension(const std::set<std::string>& exts);

class CalibratedTimestamps {
 public:
  // `extension`: the one enabled on `dev` (calibrated_timestamps_extension),
  // or nullptr. Never throws: what is missing is in why().
  CalibratedTimestamps(VkInstance instance, VkPhysicalDevice pd, VkDevice dev, const char* extension);

  bool usable() const { return get_ != nullptr; }
  const std::string& why() const { return why_; }  // why not usable
  // The host clock paired with the device's: "CLOCK_MONOTONIC_RAW" or "CLOCK_MONOTONIC".
  const char* host_clock() const;

  // The host clock now, in ns.
  uint64_t host_now_ns() const;
  // The tightest of a few pairings taken back to back. Throws DeviceError
  // where the driver fails the call.
  ClockPairing pair() const;

 private:
  PFN_vkGetCalibratedTimestampsEXT get_ = nullptr;
  VkDevice dev_ = VK_NULL_HANDLE;
  VkTimeDomainEXT host_domain_ = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
  std::string why_;
};

}  // namespace gpuscope::vulkan
