// The reports' PNG encoder (report/png_image.hpp) against the tests' own
// reader (support/png_reader.hpp): pictures of every kind come back pixel
// for pixel, every chunk's CRC and the zlib checksum hold, flat pictures
// compress, and the checksums and base64 agree with their published test
// vectors.
#include "report/png_image.hpp"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>

#include "support/png_reader.hpp"

namespace gpuscope {
namespace {

std::span<const uint8_t> bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

IndexedImage image_of(uint32_t w, uint32_t h, size_t colours) {
  IndexedImage img;
  img.width = w;
  img.height = h;
  img.index.assign(size_t{w} * h, 0);
  for (size_t i = 0; i < colours; ++i)
    img.palette.push_back(
        {static_cast<uint8_t>(i), static_cast<uint8_t>(255 - i), static_cast<uint8_t>(i * 7)});
  return img;
}

void expect_round_trip(const IndexedImage& img, const std::string& what) {
  const std::string png = encode_png(img);
  test::DecodedPng d;
  ASSERT_NO_THROW(d = test::decode_png(png)) << what;
  EXPECT_EQ(d.width, img.width) << what;
  EXPECT_EQ(d.height, img.height) << what;
  EXPECT_EQ(d.palette, img.palette) << what;
  EXPECT_EQ(d.index, img.index) << what;
}

TEST(PngImage, PicturesOfEveryKindDecodePixelForPixel) {
  IndexedImage flat = image_of(512, 512, 1);
  expect_round_trip(flat, "one colour");

  IndexedImage noise = image_of(300, 200, 256);
  std::mt19937 rng(5);
  for (auto& i : noise.index) i = static_cast<uint8_t>(rng());
  expect_round_trip(noise, "noise over 256 colours");

  IndexedImage tiles = image_of(512, 512, 255);
  for (uint32_t y = 0; y < 512; ++y)
    for (uint32_t x = 0; x < 512; ++x)
      tiles.index[y * 512 + x] = static_cast<uint8_t>((x / 64 + 8 * (y / 64)) * 3 + (x + y) % 3);
  expect_round_trip(tiles, "tiles with a fine pattern");

  expect_round_trip(image_of(1, 1, 2), "one pixel");
  IndexedImage wide = image_of(70000, 2, 3);  // rows longer than the 32 KiB window
  for (size_t i = 0; i < wide.index.size(); ++i) wide.index[i] = static_cast<uint8_t>((i / 40000) % 3);
  expect_round_trip(wide, "rows past the window");
}

TEST(PngImage, FlatPicturesCompress) {
  IndexedImage tiles = image_of(512, 512, 64);
  for (uint32_t y = 0; y < 512; ++y)
    for (uint32_t x = 0; x < 512; ++x) tiles.index[y * 512 + x] = static_cast<uint8_t>(x / 64 + 8 * (y / 64));
  // 64 flat tiles: a row is 8 runs, and most rows repeat the row above.
  EXPECT_LT(encode_png(tiles).size(), 8000u);
  IndexedImage noise = image_of(256, 256, 256);
  std::mt19937 rng(9);
  for (auto& i : noise.index) i = static_cast<uint8_t>(rng());
  // Noise cannot shrink; deflate's stored blocks keep it near 8 bits a byte.
  EXPECT_LT(encode_png(noise).size(), 256u * 256 * 9 / 8 + 2000);
}

TEST(PngImage, ZlibStreamsInflate) {
  std::mt19937 rng(3);
  std::string mixed;
  for (int i = 0; i < 100000; ++i)
    mixed.push_back(static_cast<char>(i % 1000 < 500 ? 'a' + (rng() % 3) : rng()));
  for (const std::string& data : {std::string(), std::string("a"), std::string(100000, 'x'), mixed}) {
    const std::string z = zlib_compress(bytes(data));
    EXPECT_EQ(test::png_detail::zlib_decompress(z), data) << data.size() << " bytes";
  }
}

TEST(PngImage, ChecksumsAndBase64MatchTheirTestVectors) {
  EXPECT_EQ(crc32(bytes("123456789")), 0xcbf43926u);
  EXPECT_EQ(crc32(bytes("56789"), crc32(bytes("1234"))), 0xcbf43926u) << "CRCs chain";
  EXPECT_EQ(adler32(bytes("Wikipedia")), 0x11e60398u);
  EXPECT_EQ(base64(""), "");
  EXPECT_EQ(base64("f"), "Zg==");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("foo"), "Zm9v");
  EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
  const IndexedImage img = image_of(3, 2, 2);
  EXPECT_EQ(test::png_from_data_uri(png_data_uri(img)), encode_png(img));
}

TEST(PngImage, BadImagesAreRefused) {
  EXPECT_THROW(encode_png(image_of(0, 5, 1)), std::invalid_argument);
  IndexedImage short_index = image_of(4, 4, 2);
  short_index.index.pop_back();
  EXPECT_THROW(encode_png(short_index), std::invalid_argument);
  IndexedImage past = image_of(4, 4, 2);
  past.index[3] = 2;
  EXPECT_THROW(encode_png(past), std::invalid_argument);
  EXPECT_THROW(encode_png(image_of(4, 4, 0)), std::invalid_argument);
  IndexedImage big_palette = image_of(4, 4, 256);
  big_palette.palette.push_back({1, 2, 3});
  EXPECT_THROW(encode_png(big_palette), std::invalid_argument);
}

TEST(PngImage, TheReaderCatchesDamage) {
  std::string png = encode_png(image_of(16, 16, 4));
  png[png.size() / 2] ^= 0x10;  // inside IDAT: its CRC no longer holds
  EXPECT_THROW(test::decode_png(png), std::runtime_error);
}

}  // namespace
}  // namespace gpuscope
