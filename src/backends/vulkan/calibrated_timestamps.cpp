#include "backends/vulkan/calibrated_timestamps.hpp"

#include "core/error.hpp"

#include <fmt/format.h>

#include <ctime>
#include <vector>

namespace gpuscope::vulkan {
namespace {

// Headers before 1.3.276 name the EXT extension only; the KHR one has the
// same entry points, structures and enum values.
constexpr const char* kKhr = "VK_KHR_calibrated_timestamps";
constexpr int kPairings = 3;

}  // namespace

const char* calibrated_timestamps_extension(const std::set<std::string>& exts) {
  if (exts.count(VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME)) return VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
  if (exts.count(kKhr)) return kKhr;
  return nullptr;
}

CalibratedTimestamps::CalibratedTimestamps(VkInstance instance, VkPhysicalDevice pd, VkDevice dev,
                                           const char* extension)
    : dev_(dev) {
  if (!extension) {
    why_ = "the device has no VK_EXT_calibrated_timestamps or VK_KHR_calibrated_timestamps";
    return;
  }
  const bool khr = std::string(extension) == kKhr;
  const auto domains_fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT>(vkGetInstanceProcAddr(
      instance, khr ? "vkGetPhysicalDeviceCalibrateableTimeDomainsKHR" : "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT"));
  const auto get_fn = reinterpret_cast<PFN_vkGetCalibratedTimestampsEXT>(
      vkGetDeviceProcAddr(dev, khr ? "vkGetCalibratedTimestampsKHR" : "vkGetCalibratedTimestampsEXT"));
  if (!domains_fn || !get_fn) {
    why_ = fmt::format("{} is listed but its entry points are missing", extension);
    return;
  }
  uint32_t n = 0;
  std::vector<VkTimeDomainEXT> domains;
  if (domains_fn(pd, &n, nullptr) == VK_SUCCESS) {
    domains.resize(n);
    if (domains_fn(pd, &n, domains.data()) != VK_SUCCESS) domains.clear();
    domains.resize(std::min<size_t>(n, domains.size()));
  }
  bool device = false, raw = false, mono = false;
  for (VkTimeDomainEXT d : domains) {
    device |= d == VK_TIME_DOMAIN_DEVICE_EXT;
    raw |= d == VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT;
    mono |= d == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
  }
  if (!device || !(raw || mono)) {
    why_ = fmt::format("{} pairs no device clock with CLOCK_MONOTONIC or CLOCK_MONOTONIC_RAW here", extension);
    return;
  }
  // The raw clock is not slewed by NTP: its rate is the oscillator's.
  host_domain_ = raw ? VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT : VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
  get_ = get_fn;
}

const char* CalibratedTimestamps::host_clock() const {
  return host_domain_ == VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT ? "CLOCK_MONOTONIC_RAW" : "CLOCK_MONOTONIC";
}

uint64_t CalibratedTimestamps::host_now_ns() const {
  timespec ts{};
  clock_gettime(host_domain_ == VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT ? CLOCK_MONOTONIC_RAW : CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

ClockPairing CalibratedTimestamps::pair() const {
  if (!get_) throw DeviceError("calibrated timestamps: " + why_);
  VkCalibratedTimestampInfoEXT info[2] = {{VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr, VK_TIME_DOMAIN_DEVICE_EXT},
                                          {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr, host_domain_}};
  ClockPairing best;
  for (int i = 0; i < kPairings; ++i) {
    uint64_t t[2] = {0, 0}, deviation = 0;
    const VkResult r = get_(dev_, 2, info, t, &deviation);
    if (r != VK_SUCCESS) throw DeviceError(fmt::format("vkGetCalibratedTimestamps failed ({})", static_cast<int>(r)));
    const ClockPairing p{t[0], t[1], deviation};
    best = i == 0 ? p : tighter(best, p);
  }
  return best;
}

}  // namespace gpuscope::vulkan
