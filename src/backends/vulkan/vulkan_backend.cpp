// The Vulkan backend: whether Vulkan is there, which devices it lists, and
// opening one. The pieces behind it, in the order a run meets them:
//   vulkan_instance   the loader (volk) and the process's instance, validation messages
//   vulkan_physical   one physical device read, and described as a DeviceInfo
//   vulkan_device     the opened device (VkDev) and its objects; its parts in
//                     vulkan_kernels, vulkan_launch and vulkan_transfers
#include "backends/vulkan/vulkan_backend.hpp"

#include "backends/vulkan/vulkan_device.hpp"
#include "backends/vulkan/vulkan_instance.hpp"
#include "backends/vulkan/vulkan_physical.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace gpuscope {
namespace {

using vulkan::Instance;
using vulkan::Physical;
using vulkan::process_instance;

class VkBackendImpl final : public Backend {
 public:
  std::string name() const override { return "vulkan"; }

  std::string availability() const override {
    Instance& in = process_instance();
    if (!in.usable) return in.status;
    std::string s = in.status;
    for (size_t i = 0; i < in.physical.size(); ++i) {
      Physical p(in.physical[i], in.api);
      if (const std::string why = p.unusable(); !why.empty())
        s += fmt::format("; {} not used: {}", p.props.properties.deviceName, why);
    }
    return s;
  }

  std::vector<DeviceInfo> enumerate() override {
    std::vector<DeviceInfo> out;
    for (auto& [index, p] : usable()) out.push_back(vulkan::describe(*p, index));
    return out;
  }

  std::unique_ptr<Device> open(const std::string& id) override {
    size_t want = 0;
    char tail = 0;
    if (std::sscanf(id.c_str(), "vulkan:%zu%c", &want, &tail) != 1)
      throw UsageError("unknown Vulkan device '" + id + "'");
    for (auto& [index, p] : usable()) {
      if (index != want) continue;
      DeviceInfo info = vulkan::describe(*p, index);
      return std::make_unique<vulkan::VkDev>(std::move(p), std::move(info));
    }
    throw UsageError("unknown Vulkan device '" + id + "'");
  }

 private:
  // Usable devices, numbered in the loader's order counting only those.
  static std::vector<std::pair<size_t, std::unique_ptr<Physical>>> usable() {
    std::vector<std::pair<size_t, std::unique_ptr<Physical>>> out;
    Instance& in = process_instance();
    if (!in.usable) return out;
    for (VkPhysicalDevice pd : in.physical) {
      auto p = std::make_unique<Physical>(pd, in.api);
      if (p->unusable().empty()) out.emplace_back(out.size(), std::move(p));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Backend> make_vulkan_backend() { return std::make_unique<VkBackendImpl>(); }

}  // namespace gpuscope
