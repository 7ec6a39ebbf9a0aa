// The Vulkan backend: devices "vulkan:N", GLSL compute shaders from
// src/kernels/vulkan/ (their contract: src/kernels/vulkan/README.md).
#pragma once

#include "backends/backend.hpp"

#include <cstddef>
#include <memory>

namespace gpuscope {

std::unique_ptr<Backend> make_vulkan_backend();

// Validation messages (warnings and errors) the Khronos validation layer has
// reported in this process; each is also printed on stderr as it comes.
// Counted only where the layer is on (VK_INSTANCE_LAYERS).
size_t vulkan_validation_messages();

}  // namespace gpuscope
