// PNG for report.html's pictures (the raster order, the binning strip):
// 8-bit indexed images in one IDAT chunk, deflated by zlib at its best
// compression. Pictures of a few flat regions (tiles of one colour) shrink
// to a few bytes a row; noise stays near one byte a pixel.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope {

using Rgb = std::array<uint8_t, 3>;

// width x height pixels, row-major from the top left, each an index into
// `palette` (1 to 256 colours).
struct IndexedImage {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> index;
  std::vector<Rgb> palette;
};

// The PNG file's bytes (colour type 3, bit depth 8, no interlace, filter
// None on every row). Throws std::invalid_argument for an image without
// pixels, an index count other than width * height, an index past the
// palette, or a palette of 0 or more than 256 colours.
std::string encode_png(const IndexedImage& image);

// "data:image/png;base64,...", for an <img> or SVG <image> in the page.
std::string png_data_uri(const IndexedImage& image);

// A zlib stream (RFC 1950) of `data`, from zlib's compress2 at level 9.
// Throws std::runtime_error where zlib fails (out of memory).
std::string zlib_compress(std::span<const uint8_t> data);

// CRC-32 as PNG chunks and zip use it (reflected polynomial 0xEDB88320);
// `crc` continues an earlier call's result.
uint32_t crc32(std::span<const uint8_t> data, uint32_t crc = 0);
// Adler-32 as the zlib trailer uses it.
uint32_t adler32(std::span<const uint8_t> data);

// RFC 4648 base64 with padding.
std::string base64(std::string_view bytes);

}  // namespace gpuscope
