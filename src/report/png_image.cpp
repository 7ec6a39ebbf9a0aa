#include "report/png_image.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <stdexcept>
#include <string_view>

namespace gpuscope {

namespace {

void put_u32_be(std::string& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xff));
}

std::span<const uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

void put_chunk(std::string& png, const char* type, std::string_view data) {
  put_u32_be(png, static_cast<uint32_t>(data.size()));
  std::string typed = type;
  typed += data;
  png += typed;
  put_u32_be(png, crc32(bytes_of(typed)));
}

}  // namespace

uint32_t crc32(std::span<const uint8_t> data, uint32_t crc) {
  return static_cast<uint32_t>(crc32_z(crc, data.data(), data.size()));
}

uint32_t adler32(std::span<const uint8_t> data) {
  return static_cast<uint32_t>(adler32_z(adler32_z(0, nullptr, 0), data.data(), data.size()));
}

std::string zlib_compress(std::span<const uint8_t> data) {
  uLongf size = compressBound(static_cast<uLong>(data.size()));
  std::string out(size, '\0');
  const int status = compress2(reinterpret_cast<Bytef*>(out.data()), &size, data.data(),
                               static_cast<uLong>(data.size()), Z_BEST_COMPRESSION);
  if (status != Z_OK) throw std::runtime_error(fmt::format("zlib_compress: compress2 returned {}", status));
  out.resize(size);
  return out;
}

std::string encode_png(const IndexedImage& image) {
  const size_t pixels = size_t{image.width} * image.height;
  if (pixels == 0) throw std::invalid_argument("encode_png: an image without pixels");
  if (image.index.size() != pixels)
    throw std::invalid_argument(fmt::format("encode_png: {} indices for {}x{} pixels", image.index.size(),
                                            image.width, image.height));
  if (image.palette.empty() || image.palette.size() > 256)
    throw std::invalid_argument(fmt::format("encode_png: a palette of {} colours", image.palette.size()));
  const uint8_t top = *std::max_element(image.index.begin(), image.index.end());
  if (top >= image.palette.size())
    throw std::invalid_argument(
        fmt::format("encode_png: index {} past the palette's {} colours", top, image.palette.size()));

  std::string png = "\x89PNG\r\n\x1a\n";
  std::string ihdr;
  put_u32_be(ihdr, image.width);
  put_u32_be(ihdr, image.height);
  ihdr +=
      std::string{'\x08', '\x03', '\x00', '\x00', '\x00'};  // 8 bits, indexed, deflate, filters, no interlace
  put_chunk(png, "IHDR", ihdr);
  std::string plte;
  for (const Rgb& c : image.palette)
    for (uint8_t v : c) plte.push_back(static_cast<char>(v));
  put_chunk(png, "PLTE", plte);
  std::vector<uint8_t> raw;
  raw.reserve(pixels + image.height);
  for (uint32_t y = 0; y < image.height; ++y) {
    raw.push_back(0);  // filter None: indices do not predict each other as intensities do
    const auto row = image.index.begin() + static_cast<ptrdiff_t>(size_t{y} * image.width);
    raw.insert(raw.end(), row, row + image.width);
  }
  put_chunk(png, "IDAT", zlib_compress(raw));
  put_chunk(png, "IEND", "");
  return png;
}

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t left = std::min<size_t>(3, bytes.size() - i);
    uint32_t v = 0;
    for (size_t k = 0; k < 3; ++k) v = (v << 8) | (k < left ? static_cast<uint8_t>(bytes[i + k]) : 0u);
    for (size_t k = 0; k < 4; ++k) out.push_back(k <= left ? kAlphabet[(v >> (18 - 6 * k)) & 63] : '=');
  }
  return out;
}

std::string png_data_uri(const IndexedImage& image) {
  return "data:image/png;base64," + base64(encode_png(image));
}

}  // namespace gpuscope
