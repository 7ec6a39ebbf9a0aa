#include "backends/vulkan/vulkan_instance.hpp"

#include "backends/vulkan/vulkan_backend.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

// Vulkan structs are initialised by their sType alone ({VK_STRUCTURE_TYPE_...}),
// the rest zero: the API's own idiom, which this warning would flag on every one.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace gpuscope {
namespace vulkan {
namespace {

std::atomic<size_t> g_validation_messages{0};

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                             VkDebugUtilsMessageTypeFlagsEXT,
                                             const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  ++g_validation_messages;
  std::fprintf(stderr, "gpuscope: Vulkan validation: %s\n", data && data->pMessage ? data->pMessage : "(no text)");
  return VK_FALSE;
}

bool validation_requested() {
  const char* layers = std::getenv("VK_INSTANCE_LAYERS");
  return layers && std::strstr(layers, "VK_LAYER_KHRONOS_validation");
}

}  // namespace

const char* result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    default: return "VkResult";
  }
}

[[noreturn]] void fail(VkResult r, const std::string& what) {
  const std::string msg = fmt::format("{}: {} ({})", what, result_name(r), static_cast<int>(r));
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_TOO_MANY_OBJECTS)
    throw OutOfResources(msg);
  throw DeviceError(msg);
}

Instance::Instance() {
  if (volkInitialize() != VK_SUCCESS) {
    status = "absent: no Vulkan loader (libvulkan.so.1 could not be opened)";
    return;
  }
  uint32_t loader = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&loader);
  if (loader < VK_API_VERSION_1_1) {
    status = fmt::format("absent: the Vulkan loader is {}.{}, gpuscope needs 1.1 or newer",
                         VK_API_VERSION_MAJOR(loader), VK_API_VERSION_MINOR(loader));
    return;
  }
  api = std::min<uint32_t>(loader, VK_API_VERSION_1_3);
  uint32_t n = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> props(n);
  vkEnumerateInstanceExtensionProperties(nullptr, &n, props.data());
  std::set<std::string> have;
  for (const auto& p : props) have.insert(p.extensionName);
  std::vector<const char*> exts;
  const bool debug = validation_requested() && have.count(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  if (debug) exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  VkInstanceCreateFlags flags = 0;
  if (have.count(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {  // MoltenVK lists its devices only then
    exts.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "gpuscope";
  app.apiVersion = api;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.flags = flags;
  ci.pApplicationInfo = &app;
  ci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  ci.ppEnabledExtensionNames = exts.data();
  VkDebugUtilsMessengerCreateInfoEXT dbg{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  dbg.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  // Not GENERAL: the loader reports there that it added the layer.
  dbg.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  dbg.pfnUserCallback = on_validation;
  if (debug) ci.pNext = &dbg;  // also reports on vkCreateInstance itself
  const VkResult r = vkCreateInstance(&ci, nullptr, &instance);
  if (r != VK_SUCCESS) {
    status = fmt::format("absent: vkCreateInstance failed with {}{}", result_name(r),
                         r == VK_ERROR_INCOMPATIBLE_DRIVER ? " (no Vulkan driver, ICD, was found)" : "");
    instance = VK_NULL_HANDLE;
    return;
  }
  volkLoadInstance(instance);
  if (debug) {
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    vkCreateDebugUtilsMessengerEXT(instance, &dbg, nullptr, &messenger);
  }
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance, &count, nullptr);
  physical.resize(count);
  vkEnumeratePhysicalDevices(instance, &count, physical.data());
  physical.resize(count);
  usable = true;
  status = fmt::format("Vulkan loader {}.{}.{} (libvulkan.so.1 through volk), {} physical device(s){}",
                       VK_API_VERSION_MAJOR(loader), VK_API_VERSION_MINOR(loader), VK_API_VERSION_PATCH(loader),
                       count, debug ? ", Khronos validation on" : "");
}

Instance& process_instance() {
  static Instance* instance = new Instance();
  return *instance;
}

}  // namespace vulkan

size_t vulkan_validation_messages() { return vulkan::g_validation_messages.load(); }

}  // namespace gpuscope
