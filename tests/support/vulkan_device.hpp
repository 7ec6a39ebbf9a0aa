// The first Vulkan device, opened with the Khronos validation layer on, for
// tests that must fail on any message the layer reports.
#pragma once

#include "backends/backend.hpp"
#include "backends/vulkan/vulkan_backend.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace gpuscope::test {

// The id of the first device the Vulkan backend lists; empty where none.
inline std::string vulkan_device_id() {
  for (const auto& d : enumerate_devices())
    if (d.id.starts_with("vulkan:")) return d.id;
  return "";
}

// Skips where there is no Vulkan device; fails a test after which the
// validation layer has reported anything.
class VulkanDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Before the process's first Vulkan call (ctest runs each test in a
    // process of its own), so the instance is created with the layer on.
    setenv("VK_INSTANCE_LAYERS", "VK_LAYER_KHRONOS_validation", 0);
    const std::string id = vulkan_device_id();
    if (id.empty()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
    dev_ = open_device(id);
    before_ = vulkan_validation_messages();
  }
  void TearDown() override {
    dev_.reset();
    EXPECT_EQ(vulkan_validation_messages(), before_) << "the validation layer reported problems (stderr)";
  }
  Device& dev() { return *dev_; }
  const DeviceFeatures& features() { return dev_->info().features; }

  std::unique_ptr<Device> dev_;
  size_t before_ = 0;
};

}  // namespace gpuscope::test
