// SimDevice's images (sim_image.hpp) and SimLaunch's image arguments.
#include "backends/sim/sim_image.hpp"

#include "backends/sim/family.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

namespace gpuscope::sim {

ImageLimits SimDevice::limits() const {
  ImageLimits l;
  l.max_buffer_pixels = cfg_.images.max_buffer_pixels;
  l.max_2d_width = cfg_.images.max_2d_width;
  l.max_2d_height = cfg_.images.max_2d_height;
  return l;
}

std::unique_ptr<Image> SimDevice::create_image(const ImageDesc& desc, Buffer* backing) {
  const ImageLimits l = limits();
  if (desc.width == 0 || desc.height == 0) throw DeviceError("sim: an image needs at least one pixel");
  if (desc.kind == ImageKind::kBuffer1D) {
    if (l.max_buffer_pixels == 0)
      throw Unsupported(fmt::format("{} has no 1D buffer images (an OpenCL 1.2 feature)", info_.id));
    if (desc.height != 1) throw DeviceError("sim: a 1D buffer image has a height of 1");
    if (desc.width > l.max_buffer_pixels)
      throw OutOfResources(fmt::format("sim: a 1D buffer image of {} pixels exceeds the device's {}", desc.width,
                                       l.max_buffer_pixels));
    auto* b = dynamic_cast<SimBuffer*>(backing);
    if (!b || b->size_bytes() < desc.size_bytes())
      throw DeviceError("sim: a 1D buffer image needs a sim buffer of at least its size");
    return std::make_unique<SimImage>(desc, *b, nullptr);
  }
  if (desc.width > l.max_2d_width || desc.height > l.max_2d_height)
    throw OutOfResources(fmt::format("sim: a {}x{} image exceeds the device's {}x{}", desc.width, desc.height,
                                     l.max_2d_width, l.max_2d_height));
  auto own = create_buffer(desc.size_bytes());
  auto& memory = dynamic_cast<SimBuffer&>(*own);
  return std::make_unique<SimImage>(desc, memory, std::move(own));
}

void SimDevice::write_image(Image& dst, std::span<const std::byte> pixels) {
  auto& img = dynamic_cast<SimImage&>(dst);
  check_image_write(img.desc(), pixels.size());
  img.memory().write(0, pixels);
  modelled_ns_ += copy_ns(pixels.size());
}

SimImage& SimLaunch::image(size_t i) const {
  if (i >= args_.size())
    throw DeviceError(fmt::format("sim: kernel {} launched with {} arguments, argument {} missing", spec_.entry,
                                  args_.size(), i));
  Image* const* img = std::get_if<Image*>(&args_[i]);
  auto* si = img ? dynamic_cast<SimImage*>(*img) : nullptr;
  if (!si) throw DeviceError(fmt::format("sim: kernel {} argument {} is not a sim image", spec_.entry, i));
  return *si;
}

}  // namespace gpuscope::sim
