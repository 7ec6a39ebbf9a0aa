// A small PNG reader for the report's tests, written apart from the encoder
// (report/png_image.cpp) so that each checks the other: it verifies the
// signature, every chunk's CRC (bit by bit, no table), the zlib header and
// Adler-32, inflates stored, fixed and dynamic Huffman blocks (RFC 1951) and
// undoes the five row filters. Indexed 8-bit images only, the kind the
// reports write; anything else, or any damage, throws std::runtime_error.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::test {

struct DecodedPng {
  uint32_t width = 0, height = 0;
  std::vector<std::array<uint8_t, 3>> palette;
  std::vector<uint8_t> index;  // width * height, row-major from the top left
};

namespace png_detail {

inline uint32_t crc32_bitwise(std::string_view bytes) {
  uint32_t c = 0xffffffffu;
  for (char ch : bytes) {
    c ^= static_cast<uint8_t>(ch);
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}

inline uint32_t be32(std::string_view s, size_t at) {
  if (at + 4 > s.size()) throw std::runtime_error("png: truncated");
  return (uint32_t{static_cast<uint8_t>(s[at])} << 24) | (uint32_t{static_cast<uint8_t>(s[at + 1])} << 16) |
         (uint32_t{static_cast<uint8_t>(s[at + 2])} << 8) | uint32_t{static_cast<uint8_t>(s[at + 3])};
}

class BitReader {
 public:
  explicit BitReader(std::string_view data) : data_(data) {}
  uint32_t bits(int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      if (pos_ / 8 >= data_.size()) throw std::runtime_error("inflate: out of input");
      v |= uint32_t{(static_cast<uint8_t>(data_[pos_ / 8]) >> (pos_ % 8)) & 1u} << i;
      ++pos_;
    }
    return v;
  }
  void align() { pos_ = (pos_ + 7) / 8 * 8; }
  size_t byte_pos() const { return pos_ / 8; }
  void skip_bytes(size_t n) { pos_ += 8 * n; }
  std::string_view data() const { return data_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// A canonical Huffman code from code lengths, decoded bit by bit.
class Huffman {
 public:
  explicit Huffman(const std::vector<uint8_t>& lengths) {
    count_.assign(16, 0);
    for (uint8_t l : lengths) ++count_[l];
    count_[0] = 0;
    std::vector<uint16_t> offset(16, 0);
    for (int l = 1; l < 16; ++l) offset[l] = static_cast<uint16_t>(offset[l - 1] + count_[l - 1]);
    symbol_.assign(lengths.size(), 0);
    for (size_t s = 0; s < lengths.size(); ++s)
      if (lengths[s]) symbol_[offset[lengths[s]]++] = static_cast<uint16_t>(s);
  }
  int decode(BitReader& in) const {
    int code = 0, first = 0, index = 0;
    for (int len = 1; len < 16; ++len) {
      code |= static_cast<int>(in.bits(1));
      const int count = count_[len];
      if (code - first < count) return symbol_[index + code - first];
      index += count;
      first = (first + count) << 1;
      code <<= 1;
    }
    throw std::runtime_error("inflate: bad Huffman code");
  }

 private:
  std::vector<uint16_t> count_, symbol_;
};

inline std::string inflate(std::string_view deflated) {
  static constexpr uint16_t kLenBase[] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                          31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
  static constexpr uint8_t kLenExtra[] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                          2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
  static constexpr uint16_t kDistBase[] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                           33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                           1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
  static constexpr uint8_t kDistExtra[] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                           6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
  BitReader in(deflated);
  std::string out;
  for (bool last = false; !last;) {
    last = in.bits(1) != 0;
    const uint32_t type = in.bits(2);
    if (type == 0) {
      in.align();
      const size_t at = in.byte_pos();
      if (at + 4 > deflated.size()) throw std::runtime_error("inflate: truncated stored block");
      const uint16_t len = static_cast<uint16_t>(static_cast<uint8_t>(deflated[at]) |
                                                 (static_cast<uint8_t>(deflated[at + 1]) << 8));
      const uint16_t nlen = static_cast<uint16_t>(static_cast<uint8_t>(deflated[at + 2]) |
                                                  (static_cast<uint8_t>(deflated[at + 3]) << 8));
      if (static_cast<uint16_t>(~nlen) != len || at + 4 + len > deflated.size())
        throw std::runtime_error("inflate: bad stored block");
      out.append(deflated.substr(at + 4, len));
      in.skip_bytes(4 + len);
      continue;
    }
    if (type == 3) throw std::runtime_error("inflate: reserved block type");
    std::vector<uint8_t> lit(288), dist(30);
    if (type == 1) {
      for (int i = 0; i < 288; ++i) lit[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
      std::fill(dist.begin(), dist.end(), 5);
    } else {
      const uint32_t hlit = in.bits(5) + 257, hdist = in.bits(5) + 1, hclen = in.bits(4) + 4;
      static constexpr uint8_t kOrder[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                             11, 4,  12, 3, 13, 2, 14, 1, 15};
      std::vector<uint8_t> cl(19, 0);
      for (uint32_t i = 0; i < hclen; ++i) cl[kOrder[i]] = static_cast<uint8_t>(in.bits(3));
      const Huffman clh(cl);
      std::vector<uint8_t> lengths;
      while (lengths.size() < hlit + hdist) {
        const int sym = clh.decode(in);
        if (sym < 16) {
          lengths.push_back(static_cast<uint8_t>(sym));
        } else if (sym == 16) {
          if (lengths.empty()) throw std::runtime_error("inflate: repeat with nothing before");
          const uint8_t prev = lengths.back();
          for (uint32_t n = 3 + in.bits(2); n > 0; --n) lengths.push_back(prev);
        } else {
          for (uint32_t n = (sym == 17 ? 3 + in.bits(3) : 11 + in.bits(7)); n > 0; --n) lengths.push_back(0);
        }
      }
      if (lengths.size() != hlit + hdist) throw std::runtime_error("inflate: code lengths overrun");
      lit.assign(lengths.begin(), lengths.begin() + hlit);
      dist.assign(lengths.begin() + hlit, lengths.end());
    }
    const Huffman lh(lit), dh(dist);
    while (true) {
      const int sym = lh.decode(in);
      if (sym < 256) {
        out.push_back(static_cast<char>(sym));
        continue;
      }
      if (sym == 256) break;
      if (sym > 285) throw std::runtime_error("inflate: bad length symbol");
      const size_t len = kLenBase[sym - 257] + in.bits(kLenExtra[sym - 257]);
      const int ds = dh.decode(in);
      if (ds >= 30) throw std::runtime_error("inflate: bad distance symbol");
      const size_t d = kDistBase[ds] + in.bits(kDistExtra[ds]);
      if (d > out.size()) throw std::runtime_error("inflate: distance past the start");
      for (size_t k = 0; k < len; ++k) out.push_back(out[out.size() - d]);
    }
  }
  return out;
}

// A zlib stream's content: header checked, Adler-32 checked.
inline std::string zlib_decompress(std::string_view z) {
  if (z.size() < 6) throw std::runtime_error("zlib: too short");
  const auto cmf = static_cast<uint8_t>(z[0]), flg = static_cast<uint8_t>(z[1]);
  if ((cmf & 0x0f) != 8 || ((cmf << 8) | flg) % 31 != 0 || (flg & 0x20))
    throw std::runtime_error("zlib: bad header");
  const std::string out = inflate(z.substr(2, z.size() - 6));
  uint32_t a = 1, b = 0;
  for (char c : out) {
    a = (a + static_cast<uint8_t>(c)) % 65521;
    b = (b + a) % 65521;
  }
  if (((b << 16) | a) != be32(z, z.size() - 4)) throw std::runtime_error("zlib: Adler-32 mismatch");
  return out;
}

}  // namespace png_detail

inline DecodedPng decode_png(std::string_view png) {
  using namespace png_detail;
  if (png.substr(0, 8) != std::string_view("\x89PNG\r\n\x1a\n", 8))
    throw std::runtime_error("png: bad signature");
  DecodedPng img;
  std::string idat;
  bool ended = false, header = false;
  for (size_t at = 8; at < png.size() && !ended;) {
    const uint32_t len = be32(png, at);
    if (at + 12 + size_t{len} > png.size()) throw std::runtime_error("png: truncated chunk");
    const std::string_view type = png.substr(at + 4, 4), data = png.substr(at + 8, len);
    if (crc32_bitwise(png.substr(at + 4, 4 + size_t{len})) != be32(png, at + 8 + len))
      throw std::runtime_error("png: CRC mismatch in " + std::string(type));
    if (type == "IHDR") {
      if (len != 13) throw std::runtime_error("png: IHDR length");
      img.width = be32(data, 0);
      img.height = be32(data, 4);
      if (data[8] != 8 || data[9] != 3 || data[10] != 0 || data[11] != 0 || data[12] != 0)
        throw std::runtime_error("png: not an 8-bit indexed, non-interlaced image");
      header = true;
    } else if (type == "PLTE") {
      if (len % 3 || len == 0 || len > 768) throw std::runtime_error("png: PLTE length");
      for (size_t i = 0; i < len; i += 3)
        img.palette.push_back({static_cast<uint8_t>(data[i]), static_cast<uint8_t>(data[i + 1]),
                               static_cast<uint8_t>(data[i + 2])});
    } else if (type == "IDAT") {
      idat.append(data);
    } else if (type == "IEND") {
      ended = true;
    }
    at += 12 + size_t{len};
  }
  if (!header || !ended || img.palette.empty()) throw std::runtime_error("png: IHDR, PLTE or IEND missing");
  const std::string raw = zlib_decompress(idat);
  const size_t stride = img.width;
  if (raw.size() != (stride + 1) * img.height) throw std::runtime_error("png: image data size");
  img.index.assign(stride * img.height, 0);
  for (size_t y = 0; y < img.height; ++y) {
    const auto filter = static_cast<uint8_t>(raw[y * (stride + 1)]);
    for (size_t x = 0; x < stride; ++x) {
      const int v = static_cast<uint8_t>(raw[y * (stride + 1) + 1 + x]);
      const int left = x ? img.index[y * stride + x - 1] : 0;
      const int up = y ? img.index[(y - 1) * stride + x] : 0;
      const int corner = x && y ? img.index[(y - 1) * stride + x - 1] : 0;
      int pred = 0;
      switch (filter) {
        case 0:
          pred = 0;
          break;
        case 1:
          pred = left;
          break;
        case 2:
          pred = up;
          break;
        case 3:
          pred = (left + up) / 2;
          break;
        case 4: {
          const int p = left + up - corner, pa = std::abs(p - left), pb = std::abs(p - up),
                    pc = std::abs(p - corner);
          pred = pa <= pb && pa <= pc ? left : pb <= pc ? up : corner;
          break;
        }
        default:
          throw std::runtime_error("png: bad filter type");
      }
      img.index[y * stride + x] = static_cast<uint8_t>(v + pred);
    }
  }
  for (uint8_t i : img.index)
    if (i >= img.palette.size()) throw std::runtime_error("png: index past the palette");
  return img;
}

// The PNG inside a "data:image/png;base64,..." URI.
inline std::string png_from_data_uri(std::string_view uri) {
  const std::string_view prefix = "data:image/png;base64,";
  if (uri.substr(0, prefix.size()) != prefix) throw std::runtime_error("not a PNG data URI");
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : uri.substr(prefix.size())) {
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+')
      v = 62;
    else if (c == '/')
      v = 63;
    else if (c == '=')
      break;
    else
      throw std::runtime_error("base64: bad character");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace gpuscope::test
