#include "backends/opencl/opencl_device.hpp"

#include "backends/opencl/opencl_device_info.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <vector>

namespace gpuscope::opencl_detail {

namespace {

cl::ImageFormat cl_format(ImageFormat f) {
  return cl::ImageFormat(CL_RGBA, f == ImageFormat::kRgba32Float ? CL_FLOAT : CL_UNSIGNED_INT32);
}

const char* kind_name(ImageKind k) { return k == ImageKind::kBuffer1D ? "1D buffer image" : "2D image"; }

}  // namespace

ImageLimits ClDevice::limits() const {
  ImageLimits l;
  size_t w = 0, h = 0, buffer_pixels = 0;
  if (query(device_, CL_DEVICE_IMAGE2D_MAX_WIDTH, w)) l.max_2d_width = w;
  if (query(device_, CL_DEVICE_IMAGE2D_MAX_HEIGHT, h)) l.max_2d_height = h;
  // OpenCL 1.2 query: a 1.1 device does not answer, and has no 1D buffer images.
  if (query(device_, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, buffer_pixels)) l.max_buffer_pixels = buffer_pixels;
  return l;
}

std::unique_ptr<Image> ClDevice::create_image(const ImageDesc& desc, Buffer* backing) {
  const ImageLimits l = limits();
  const cl_mem_object_type type =
      desc.kind == ImageKind::kBuffer1D ? CL_MEM_OBJECT_IMAGE1D_BUFFER : CL_MEM_OBJECT_IMAGE2D;
  if (desc.kind == ImageKind::kBuffer1D && l.max_buffer_pixels == 0)
    throw Unsupported(fmt::format("{} has no 1D buffer images (an OpenCL 1.2 feature)", info_.id));
  if (!format_supported(type, desc.format))
    throw Unsupported(fmt::format("{} does not support RGBA {} {}s", info_.id,
                                  desc.format == ImageFormat::kRgba32Float ? "float" : "uint32",
                                  kind_name(desc.kind)));
  const bool too_big = desc.kind == ImageKind::kBuffer1D
                           ? desc.width > l.max_buffer_pixels
                           : desc.width > l.max_2d_width || desc.height > l.max_2d_height;
  if (desc.width == 0 || desc.height == 0 || too_big)
    throw OutOfResources(fmt::format(
        "a {}x{} {} exceeds the device's limits (1D buffer: {} pixels, 2D: {}x{})", desc.width, desc.height,
        kind_name(desc.kind), l.max_buffer_pixels, l.max_2d_width, l.max_2d_height));
  try {
    if (desc.kind == ImageKind::kBuffer1D) {
      if (backing == nullptr || backing->size_bytes() < desc.size_bytes())
        throw DeviceError("a 1D buffer image needs a backing buffer of at least its size");
      cl::Image1DBuffer img(context_, CL_MEM_READ_ONLY, cl_format(desc.format), desc.width,
                            as_cl(*backing).buffer);
      return std::make_unique<ClImage>(cl::Memory(img(), true), desc);
    }
    cl::Image2D img(context_, CL_MEM_READ_ONLY, cl_format(desc.format), desc.width, desc.height);
    return std::make_unique<ClImage>(cl::Memory(img(), true), desc);
  } catch (const cl::Error& e) {
    rethrow(e, fmt::format("creating a {}x{} {}", desc.width, desc.height, kind_name(desc.kind)));
  }
}

void ClDevice::write_image(Image& dst, std::span<const std::byte> pixels) {
  check_usable();
  auto& img = static_cast<ClImage&>(dst);
  const ImageDesc& d = img.desc();
  check_image_write(d, pixels.size());
  try {
    const cl::array<size_t, 3> origin{0, 0, 0};
    const cl::array<size_t, 3> region{d.width, d.height, 1};
    const cl::Image2D view(img.memory(), true);
    queue_.enqueueWriteImage(view, CL_TRUE, origin, region, 0, 0, pixels.data());
  } catch (const cl::Error& e) {
    rethrow(e, "writing an image");
  }
}

bool ClDevice::format_supported(cl_mem_object_type type, ImageFormat f) const {
  std::vector<cl::ImageFormat> formats;
  try {
    context_.getSupportedImageFormats(CL_MEM_READ_ONLY, type, &formats);
  } catch (const cl::Error&) {
    return false;
  }
  const cl::ImageFormat want = cl_format(f);
  return std::any_of(formats.begin(), formats.end(), [&](const cl::ImageFormat& g) {
    return g.image_channel_order == want.image_channel_order &&
           g.image_channel_data_type == want.image_channel_data_type;
  });
}

}  // namespace gpuscope::opencl_detail
