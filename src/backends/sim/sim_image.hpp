// Images on the sim backend. A sim image is a view of sim buffer memory, so
// that the texture path's cache lines are real device addresses the cache
// model sees: a 1D buffer image is its backing buffer (pixel i at byte
// 16 i, as OpenCL defines it); a 2D image gets a buffer of its own, laid out
// row-major (pixel (x, y) at byte 16 (y width + x)). Row-major rather than a
// driver's tiling: the texture probe's chase over the first n pixels then
// touches exactly n x 16 bytes of lines, and a tiled layout would make a
// footprint of part of a row touch the rows of its tiles too (more lines
// than the footprint), which is a property of a driver, not of the caches
// the description gives.
#pragma once

#include "backends/backend.hpp"
#include "backends/sim/sim_device.hpp"

#include <memory>

namespace gpuscope::sim {

class SimImage : public Image {
 public:
  // `memory` holds the pixels; `owned` is it when the image has its own
  // buffer (2D), empty for a view of a caller's buffer (1D).
  SimImage(ImageDesc desc, SimBuffer& memory, std::unique_ptr<Buffer> owned)
      : desc_(desc), memory_(&memory), owned_(std::move(owned)) {}
  const ImageDesc& desc() const override { return desc_; }
  SimBuffer& memory() const { return *memory_; }
  // Byte offset of pixel (x, y) in memory().
  uint64_t offset(uint64_t x, uint64_t y) const { return (y * desc_.width + x) * ImageDesc::kPixelBytes; }

 private:
  ImageDesc desc_;
  SimBuffer* memory_;
  std::unique_ptr<Buffer> owned_;
};

}  // namespace gpuscope::sim
