// Internal to the Vulkan backend: the process's Vulkan instance (the loader
// opened through volk, the instance created once), the Khronos validation
// layer's callback, and how a failed call becomes an exception.
#pragma once

#include <volk.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpuscope::vulkan {

// "VK_ERROR_DEVICE_LOST" and the like; "VkResult" for codes not named.
const char* result_name(VkResult r);

// Throws OutOfResources for the out-of-memory and too-many-objects codes,
// DeviceError for any other, the message naming `what` and the code.
[[noreturn]] void fail(VkResult r, const std::string& what);
inline void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) fail(r, what);
}

// The process's Vulkan instance: the loader opened once, the instance
// created once and kept until exit (destroying it from a static destructor
// would race the layers' own teardown). With VK_INSTANCE_LAYERS naming the
// Khronos validation layer, its warnings and errors are printed on stderr
// and counted (vulkan_validation_messages()).
struct Instance {
  bool usable = false;
  std::string status;  // the loader and instance, or why there is none
  VkInstance instance = VK_NULL_HANDLE;
  uint32_t api = 0;  // the instance version asked for
  std::vector<VkPhysicalDevice> physical;

  Instance();
};

// Created on first use, never destroyed: see Instance.
Instance& process_instance();

}  // namespace gpuscope::vulkan
