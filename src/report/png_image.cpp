#include "report/png_image.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace gpuscope {

namespace {

// Bits into bytes, least significant first (RFC 1951 3.1.1).
class BitWriter {
 public:
  explicit BitWriter(std::string& out) : out_(out) {}
  // `count` (at most 16) bits of `bits`, lowest first: extra bits, headers.
  void put(uint32_t bits, int count) {
    acc_ |= bits << used_;
    used_ += count;
    while (used_ >= 8) {
      out_.push_back(static_cast<char>(acc_ & 0xff));
      acc_ >>= 8;
      used_ -= 8;
    }
  }
  // A Huffman code: its most significant bit goes first.
  void put_code(uint32_t code, int length) {
    uint32_t reversed = 0;
    for (int i = 0; i < length; ++i) reversed |= ((code >> i) & 1u) << (length - 1 - i);
    put(reversed, length);
  }
  void flush() {
    if (used_ > 0) out_.push_back(static_cast<char>(acc_ & 0xff));
    acc_ = 0;
    used_ = 0;
  }

 private:
  std::string& out_;
  uint32_t acc_ = 0;
  int used_ = 0;
};

// The fixed literal/length code (RFC 1951 3.2.6).
void put_symbol(BitWriter& w, unsigned symbol) {
  if (symbol < 144)
    w.put_code(0x30 + symbol, 8);
  else if (symbol < 256)
    w.put_code(0x190 + symbol - 144, 9);
  else if (symbol < 280)
    w.put_code(symbol - 256, 7);
  else
    w.put_code(0xc0 + symbol - 280, 8);
}

constexpr std::array<uint16_t, 29> kLengthBase = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                                  15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                                  67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr std::array<uint8_t, 29> kLengthExtra = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                                  2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr std::array<uint16_t, 30> kDistanceBase = {
    1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
    193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr std::array<uint8_t, 30> kDistanceExtra = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                                    6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

// The largest base not above `v`: its code's index.
template <size_t N>
size_t code_index(const std::array<uint16_t, N>& bases, unsigned v) {
  size_t i = N - 1;
  while (bases[i] > v) --i;
  return i;
}

void put_match(BitWriter& w, unsigned length, unsigned distance) {
  const size_t l = code_index(kLengthBase, length);
  put_symbol(w, 257 + static_cast<unsigned>(l));
  if (kLengthExtra[l]) w.put(length - kLengthBase[l], kLengthExtra[l]);
  const size_t d = code_index(kDistanceBase, distance);
  w.put_code(static_cast<uint32_t>(d), 5);
  if (kDistanceExtra[d]) w.put(distance - kDistanceBase[d], kDistanceExtra[d]);
}

constexpr size_t kWindow = 32768;  // the farthest a match may reach back
constexpr unsigned kMinMatch = 3, kMaxMatch = 258;
constexpr int kHashBits = 15;
constexpr int kMaxChain = 64;  // candidates tried per position: ample for flat pictures

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
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = crc ^ 0xffffffffu;
  for (uint8_t b : data) c = table[(c ^ b) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

uint32_t adler32(std::span<const uint8_t> data) {
  constexpr uint32_t kMod = 65521;
  uint32_t a = 1, b = 0;
  for (uint8_t v : data) {
    a = (a + v) % kMod;
    b = (b + a) % kMod;
  }
  return (b << 16) | a;
}

std::string zlib_compress(std::span<const uint8_t> data) {
  std::string out;
  out.push_back(0x78);  // deflate, 32 KiB window
  out.push_back(0x01);  // no dictionary, check bits: 0x7801 is a multiple of 31
  BitWriter w(out);
  w.put(1, 1);  // the final block
  w.put(1, 2);  // fixed Huffman codes

  const size_t n = data.size();
  std::vector<int64_t> head(size_t{1} << kHashBits, -1);
  std::vector<int64_t> prev(kWindow, -1);
  const auto hash = [&](size_t i) {
    return ((uint32_t{data[i]} << 10) ^ (uint32_t{data[i + 1]} << 5) ^ data[i + 2]) & ((1u << kHashBits) - 1);
  };
  const auto insert = [&](size_t i) {
    if (i + kMinMatch > n) return;
    const uint32_t h = hash(i);
    prev[i % kWindow] = head[h];
    head[h] = static_cast<int64_t>(i);
  };
  for (size_t i = 0; i < n;) {
    unsigned best = 0;
    size_t best_distance = 0;
    if (i + kMinMatch <= n) {
      const size_t limit = std::min<size_t>(kMaxMatch, n - i);
      int64_t candidate = head[hash(i)];
      for (int chain = 0;
           candidate >= 0 && i - static_cast<size_t>(candidate) <= kWindow && chain < kMaxChain; ++chain) {
        const size_t c = static_cast<size_t>(candidate);
        unsigned len = 0;
        while (len < limit && data[c + len] == data[i + len]) ++len;
        if (len > best) {
          best = len;
          best_distance = i - c;
          if (len == limit) break;
        }
        const int64_t next = prev[c % kWindow];
        if (next >= candidate) break;  // a slot reused by a newer position: the chain ends here
        candidate = next;
      }
    }
    if (best >= kMinMatch) {
      put_match(w, best, static_cast<unsigned>(best_distance));
      for (size_t k = 0; k < best; ++k) insert(i + k);
      i += best;
    } else {
      put_symbol(w, data[i]);
      insert(i);
      ++i;
    }
  }
  put_symbol(w, 256);  // end of block
  w.flush();
  put_u32_be(out, adler32(data));
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
