// Sim family `texture` (src/kernels/opencl/texture.cl): `link` lays a cycle out in a buffer; `chase`
// follows a cycle of pixel indices through read_imageui; `pair_chase`
// alternates a texture chain and a load/store chain; `bandwidth` makes
// independent fetches from every work-item. Build options IMAGE_2D (0: an
// image1d_buffer_t, pixel i at i; 1: an image2d_t, pixel i at
// (i & (2^WIDTH_LOG2 - 1), i >> WIDTH_LOG2)) and WIDTH_LOG2, as the .cl file
// defines them.
//
// Semantics: exactly the OpenCL C's. Every hop of a chase is followed and
// every fetch of `bandwidth` summed (by strided prefix sums, see below);
// a coordinate outside the image is a DeviceError (CLK_ADDRESS_NONE leaves
// it undefined).
//
// Speed. Chains: `link` keeps, beside the words it writes, the slot-to-slot
// map it was given (a shadow per buffer, valid while the buffer's write
// stamp is the one link left; two links into one buffer extend it, as
// pair_chase's two texture cycles do). A 2D image is written by the host
// (write_image), so its shadow is read back from the image's memory once per
// write. A hop whose value the shadow does not cover is read from the
// buffer, as the GPU would. Bandwidth: work-item (g, l) reads pixels
// (g S + l + k L) mod M for k < reads (L the work-group size, M the
// footprint, both powers of two); with L dividing M these are one residue
// class mod L walked cyclically, so with strided prefix sums
// Q[p] = H[p] + Q[p - L] (H a pixel's four channels summed) a work-item's
// sum costs O(1) whatever `reads` is. Q is memoised per image memory, write
// stamp, L and M.
//
// Time. Chases and pair_chase: the model is fed a window of the walk (at
// least 4096 hops and 3x the lines of the largest level), texture fetches through MemoryModel's texture path and pair_chase's
// loads through its load/store path, all from core 0; a launch's time is its
// hop count times the window's mean. As in family_latency.cpp a window
// continues the previous one along the cycle when the launch starts where an
// earlier launch ended (the caches then hold what a real walk leaves); other
// launches start their window at their own start. Whether pair_chase's two
// chains evict each other is the model's: a level the description puts on
// both paths is one cache. Bandwidth: the launch's bytes (work-items x reads
// x 16) pass through the texture path's levels down to the one whose
// capacity holds the footprint, or through all of them to DRAM; each level
// passed limits the rate (a per-core level at bytes_per_clock x clock per
// core, where the busiest core carries ceil(groups / cores) of the
// work-groups' equal shares; a shared level at bytes_per_clock x clock;
// DRAM at its bandwidth), the slowest sets the time. `link` is a streaming
// pass at DRAM bandwidth, as latency.cl's is.
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "backends/sim/sim_image.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>

namespace gpuscope::sim {
namespace {

constexpr uint32_t kHopsPerRound = 16;  // texture.cl's HOP16
constexpr uint32_t kPairsPerRound = 8;  // texture.cl's PAIR8
constexpr uint32_t kOff = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kWordsPerPixel = ImageDesc::kPixelBytes / sizeof(uint32_t);

// The image as the kernel's build options address it.
struct ImageView {
  const SimImage* img = nullptr;
  bool two_d = false;
  uint32_t width_log2 = 0;

  // Word offset (in the image's memory) of the first channel of pixel i.
  uint64_t word_of(uint32_t i, const std::string& kernel) const {
    const ImageDesc& d = img->desc();
    uint64_t x = i, y = 0;
    if (two_d) {
      x = i & ((uint64_t{1} << width_log2) - 1);
      y = uint64_t{i} >> width_log2;
    }
    if (x >= d.width || y >= d.height)
      throw DeviceError(fmt::format("sim: texture {} read pixel ({}, {}) outside a {}x{} image", kernel, x, y,
                                    d.width, d.height));
    return img->offset(x, y) / sizeof(uint32_t);
  }
  uint64_t address_of(uint32_t i, const std::string& kernel) const {
    return img->memory().base_address() + word_of(i, kernel) * sizeof(uint32_t);
  }
};

ImageView view_of(SimLaunch& l, size_t arg) {
  ImageView v;
  v.img = &l.image(arg);
  v.two_d = l.spec().flag("image_2d");
  const long long log2 = l.spec().integer("width_log2", 12);
  if (v.two_d && (log2 < 0 || log2 > 31)) throw Unsupported(fmt::format("sim: texture with width_log2 = {}", log2));
  v.width_log2 = static_cast<uint32_t>(log2);
  const bool is_2d = v.img->desc().kind == ImageKind::k2D;
  if (is_2d != v.two_d)
    throw DeviceError(fmt::format("sim: texture {} built for {} images was given a {} image", l.spec().entry,
                                  v.two_d ? "2D" : "1D buffer", is_2d ? "2D" : "1D buffer"));
  return v;
}

// The chain words of one buffer as link (or a 2D image's write) left them:
// the word at slot s (word offset s x slot_words) holds next[s] x unit.
struct Shadow {
  uint64_t written = 0;  // the buffer's write stamp this holds for
  uint32_t slot_words = 0, unit = 0;
  std::vector<uint32_t> next;  // kOff: not known, read the buffer
};

struct Shadows {
  std::map<uint64_t, Shadow> by_buffer;  // buffer id -> shadow
};

// The shadow of `b`, valid or null.
const Shadow* valid_shadow(SimLaunch& l, const SimBuffer& b) {
  auto& all = l.state<Shadows>("texture.shadows").by_buffer;
  const auto it = all.find(b.id());
  return it != all.end() && it->second.written == b.last_write() ? &it->second : nullptr;
}

Shadow& fresh_shadow(SimLaunch& l, const SimBuffer& b) {
  auto& all = l.state<Shadows>("texture.shadows").by_buffer;
  // Buffer ids only grow: the oldest shadows are of buffers long replaced.
  while (all.size() >= 4 && !all.contains(b.id())) all.erase(all.begin());
  return all[b.id()];
}

// The value of the chain word at `word` of `b`.
uint32_t chain_word(const SimBuffer& b, const Shadow* s, uint64_t word) {
  if (s && word % s->slot_words == 0) {
    const uint64_t slot = word / s->slot_words;
    if (slot < s->next.size() && s->next[slot] != kOff) return s->next[slot] * s->unit;
  }
  return b.load<uint32_t>(word * sizeof(uint32_t));
}

// A 2D image's shadow, read from its memory after each host write: every
// pixel a slot, its first channel the value.
const Shadow* image_shadow(SimLaunch& l, const ImageView& v) {
  const SimBuffer& mem = v.img->memory();
  if (const Shadow* s = valid_shadow(l, mem)) return s;
  if (!v.two_d) return nullptr;  // a 1D image's words come from link
  Shadow& s = fresh_shadow(l, mem);
  const uint64_t pixels = mem.size_bytes() / ImageDesc::kPixelBytes;
  s.written = mem.last_write();
  s.slot_words = static_cast<uint32_t>(kWordsPerPixel);
  s.unit = 1;
  s.next.resize(pixels);
  constexpr uint64_t kChunkPixels = 1 << 14;
  std::vector<uint32_t> words(kChunkPixels * kWordsPerPixel);
  for (uint64_t p0 = 0; p0 < pixels; p0 += kChunkPixels) {
    const uint64_t n = std::min(kChunkPixels, pixels - p0);
    mem.read(p0 * ImageDesc::kPixelBytes,
             std::as_writable_bytes(std::span<uint32_t>(words.data(), n * kWordsPerPixel)));
    for (uint64_t j = 0; j < n; ++j) s.next[p0 + j] = words[j * kWordsPerPixel];
  }
  return &s;
}

// Where the model's window stands for walks that ended at a given point:
// (ending values) -> (model cursor values), for one set of buffer states.
struct Continuations {
  std::vector<uint64_t> written;  // write stamps of the buffers walked
  std::map<std::pair<uint32_t, uint32_t>, std::pair<uint32_t, uint32_t>> after;
};

std::pair<uint32_t, uint32_t> window_start(SimLaunch& l, const std::string& key,
                                           const std::vector<uint64_t>& written, std::pair<uint32_t, uint32_t> start) {
  auto& c = l.state<Continuations>(key);
  if (c.written != written) {
    c.written = written;
    c.after.clear();
  }
  const auto it = c.after.find(start);
  return it == c.after.end() ? start : it->second;
}

void remember(SimLaunch& l, const std::string& key, std::pair<uint32_t, uint32_t> end,
              std::pair<uint32_t, uint32_t> model) {
  auto& after = l.state<Continuations>(key).after;
  if (after.size() > 64) after.clear();
  after[end] = model;
}

// The largest level of either path: pair_chase's loads pass the load path's.
uint64_t window_hops(const SimConfig& c, uint64_t hops) {
  uint64_t max_lines = 0;
  for (const auto& lv : c.caches) max_lines = std::max<uint64_t>(max_lines, lv.capacity_bytes / lv.line_bytes);
  return std::min<uint64_t>(hops, std::max<uint64_t>(4096, 3 * max_lines));
}

// link(words, next, slot_words, value_per_slot, base_slot, count)
double link(SimLaunch& l) {
  SimBuffer& words = l.buffer(0);
  const SimBuffer& next = l.buffer(1);
  const uint32_t slot_words = l.u32(2);
  const uint32_t value_per_slot = l.u32(3);
  const uint32_t base = l.u32(4);
  const uint32_t count = l.u32(5);
  const size_t items = std::min<size_t>(count, l.global().total());  // if (i < count)
  if (slot_words == 0) throw DeviceError("sim: texture link with slot_words 0");
  const auto nexts = next.load_all<uint32_t>(items);
  const uint64_t slots = (words.size_bytes() / sizeof(uint32_t) + slot_words - 1) / slot_words;
  if (items && uint64_t{base} + items > slots)
    throw DeviceError("sim: texture link writes past its buffer");
  // Extend the buffer's shadow when link was the last to write it with this
  // layout; otherwise start one.
  const Shadow* old = valid_shadow(l, words);
  const bool extend = old && old->slot_words == slot_words && old->unit == value_per_slot;
  Shadow& s = fresh_shadow(l, words);
  if (!extend) {
    s.slot_words = slot_words;
    s.unit = value_per_slot;
    s.next.assign(slots, kOff);
  }
  for (size_t i = 0; i < items; ++i) {
    const uint32_t target = base + nexts[i];
    words.store<uint32_t>((uint64_t{base} + i) * slot_words * sizeof(uint32_t), target * value_per_slot);
    s.next[base + i] = target;
  }
  s.written = words.last_write();
  const double line = l.config().path_levels(CachePath::load_store).front()->line_bytes;
  return static_cast<double>(items) *
         (std::max<double>(line, static_cast<double>(slot_words) * sizeof(uint32_t)) + 4) /
         l.config().dram_bandwidth_gbps;
}

// chase(img, start, rounds, end)
double chase(SimLaunch& l) {
  const ImageView v = view_of(l, 0);
  const uint32_t start = l.u32(1);
  const uint32_t rounds = l.u32(2);
  SimBuffer& end = l.buffer(3);
  if (l.global().total() != 1) throw Unsupported("sim: texture chase is modelled for one work-item only");
  const std::string& kernel = l.spec().entry;
  const SimBuffer& mem = v.img->memory();
  const Shadow* s = image_shadow(l, v);
  const auto fetch = [&](uint32_t i) { return chain_word(mem, s, v.word_of(i, kernel)); };

  const uint64_t hops = uint64_t{rounds} * kHopsPerRound;
  const uint64_t window = window_hops(l.config(), hops);
  const std::vector<uint64_t> written = {mem.id(), mem.last_write()};
  uint32_t t = window_start(l, "texture.chase.window", written, {start, 0}).first;
  MemoryModel& model = l.memory();
  double window_ns = 0;
  for (uint64_t k = 0; k < window; ++k) {
    window_ns += model.access(v.address_of(t, kernel), CachePath::texture);
    t = fetch(t);
  }
  const uint32_t model_end = t;
  t = start;
  for (uint64_t k = 0; k < hops; ++k) t = fetch(t);
  remember(l, "texture.chase.window", {t, 0}, {model_end, 0});
  end.store<uint32_t>(0, t);
  return window == 0 ? 0 : window_ns / static_cast<double>(window) * static_cast<double>(hops);
}

// pair_chase(img, words, t_start, g_start, zero, rounds, end)
double pair_chase(SimLaunch& l) {
  const ImageView v = view_of(l, 0);
  const SimBuffer& words = l.buffer(1);
  const uint32_t t_start = l.u32(2), g_start = l.u32(3), zero = l.u32(4), rounds = l.u32(5);
  SimBuffer& end = l.buffer(6);
  if (l.global().total() != 1)
    throw Unsupported("sim: texture pair_chase is modelled for one work-item only");
  const std::string& kernel = l.spec().entry;
  const SimBuffer& mem = v.img->memory();
  const Shadow* ts = image_shadow(l, v);
  const Shadow* gs = valid_shadow(l, words);
  const uint64_t word_count = words.size_bytes() / sizeof(uint32_t);
  const auto load = [&](uint32_t g) {
    if (g >= word_count)
      throw DeviceError(fmt::format("sim: texture pair_chase loaded word {} of a {}-word buffer", g, word_count));
    return chain_word(words, gs, g);
  };
  // One PAIR: t = FETCH(img, t | (g & zero)).x; g = words[g | (t & zero)].
  const auto step = [&](uint32_t& t, uint32_t& g, MemoryModel* model, double& ns) {
    const uint32_t ti = t | (g & zero);
    if (model) ns += model->access(v.address_of(ti, kernel), CachePath::texture);
    t = chain_word(mem, ts, v.word_of(ti, kernel));
    const uint32_t gi = g | (t & zero);
    if (model) ns += model->access(words.base_address() + uint64_t{gi} * sizeof(uint32_t), CachePath::load_store);
    g = load(gi);
  };

  const uint64_t pairs = uint64_t{rounds} * kPairsPerRound;
  const uint64_t window = window_hops(l.config(), pairs);
  const std::vector<uint64_t> written = {mem.id(), mem.last_write(), words.id(), words.last_write()};
  auto [mt, mg] = window_start(l, "texture.pair.window", written, {t_start, g_start});
  double window_ns = 0;
  for (uint64_t k = 0; k < window; ++k) step(mt, mg, &l.memory(), window_ns);
  uint32_t t = t_start, g = g_start;
  double unused = 0;
  for (uint64_t k = 0; k < pairs; ++k) step(t, g, nullptr, unused);
  remember(l, "texture.pair.window", {t, g}, {mt, mg});
  end.store<uint32_t>(0, t);
  end.store<uint32_t>(sizeof(uint32_t), g);
  return window == 0 ? 0 : window_ns / static_cast<double>(window) * static_cast<double>(pairs);
}

// Strided prefix sums of pixel sums over a footprint (see the header).
struct PrefixMemo {
  uint64_t buffer_id = 0, written = 0;
  uint32_t stride = 0, pixels = 0;
  bool two_d = false;
  uint32_t width_log2 = 0;
  std::vector<uint32_t> q;
};

// H[p] for p < pixels, the four channels of pixel p summed (mod 2^32).
std::vector<uint32_t> pixel_sums(const ImageView& v, uint32_t pixels, const std::string& kernel) {
  std::vector<uint32_t> h(pixels);
  if (pixels == 0) return h;
  const SimBuffer& mem = v.img->memory();
  v.word_of(pixels - 1, kernel);  // the last pixel is in the image, so all before it are
  // Pixel indices are linear in memory unless a 2D image is narrower than
  // the kernel's row pitch: then read pixel by pixel.
  const bool linear = !v.two_d || v.img->desc().width == (uint64_t{1} << v.width_log2);
  constexpr uint32_t kChunkPixels = 1 << 14;
  std::vector<uint32_t> words(kChunkPixels * kWordsPerPixel);
  for (uint32_t p0 = 0; p0 < pixels; p0 += kChunkPixels) {
    const uint32_t n = std::min(kChunkPixels, pixels - p0);
    if (linear) {
      mem.read(uint64_t{p0} * ImageDesc::kPixelBytes,
               std::as_writable_bytes(std::span<uint32_t>(words.data(), n * kWordsPerPixel)));
    } else {
      for (uint32_t j = 0; j < n; ++j)
        mem.read(v.word_of(p0 + j, kernel) * sizeof(uint32_t),
                 std::as_writable_bytes(std::span<uint32_t>(words.data() + j * kWordsPerPixel, kWordsPerPixel)));
    }
    for (uint32_t j = 0; j < n; ++j) {
      const uint32_t* w = &words[j * kWordsPerPixel];
      h[p0 + j] = w[0] + w[1] + w[2] + w[3];
    }
  }
  return h;
}

const std::vector<uint32_t>& prefix_sums(SimLaunch& l, const ImageView& v, uint32_t stride, uint32_t pixels) {
  auto& m = l.state<PrefixMemo>("texture.bandwidth.prefix");
  const SimBuffer& mem = v.img->memory();
  if (m.buffer_id == mem.id() && m.written == mem.last_write() && m.stride == stride && m.pixels == pixels &&
      m.two_d == v.two_d && m.width_log2 == v.width_log2)
    return m.q;
  m = PrefixMemo{mem.id(), mem.last_write(), stride, pixels, v.two_d, v.width_log2, {}};
  m.q = pixel_sums(v, pixels, l.spec().entry);
  for (uint32_t p = stride; p < pixels; ++p) m.q[p] += m.q[p - stride];
  return m.q;
}

// The time model of `bandwidth` (see the header).
double texture_stream_ns(const SimConfig& c, double bytes, double footprint, size_t groups_launched) {
  const double cores = c.core.shader_cores;
  const double groups = static_cast<double>(std::max<size_t>(groups_launched, 1));
  const double busiest_share = std::ceil(groups / cores) / groups;
  double ns = 0;
  for (const CacheLevelConfig* lv : c.path_levels(CachePath::texture)) {
    const double rate = lv->bytes_per_clock * c.clock_ghz();  // GB/s = bytes/ns, per instance
    ns = std::max(ns, lv->per_core ? bytes * busiest_share / rate : bytes / rate);
    if (footprint <= static_cast<double>(lv->capacity_bytes)) return ns;
  }
  return std::max(ns, bytes / c.dram_bandwidth_gbps);
}

// bandwidth(img, pixel_mask, group_stride, reads, sums)
double bandwidth(SimLaunch& l) {
  const ImageView v = view_of(l, 0);
  const uint32_t mask = l.u32(1), group_stride = l.u32(2), reads = l.u32(3);
  SimBuffer& sums = l.buffer(4);
  const size_t lsize = l.local().total();
  if (lsize == 0) throw Unsupported("sim: texture bandwidth is modelled with an explicit work-group size");
  const size_t global = l.global().total();
  const size_t groups = global / lsize;
  if (sums.size_bytes() < global * sizeof(uint32_t)) throw DeviceError("sim: texture bandwidth sums buffer too small");
  const std::string& kernel = l.spec().entry;
  // Every pixel the launch may read must be in the image.
  const uint64_t footprint_pixels = uint64_t{mask} + 1;
  if (reads > 0) v.word_of(mask, kernel);

  std::vector<uint32_t> out(global, 0);
  const auto l32 = static_cast<uint32_t>(lsize);
  const bool classes = std::has_single_bit(footprint_pixels) && footprint_pixels <= UINT32_MAX &&
                       std::has_single_bit(l32) && l32 <= footprint_pixels;
  if (classes && reads > 0) {
    const auto m = static_cast<uint32_t>(footprint_pixels);
    const auto& q = prefix_sums(l, v, l32, m);
    const uint32_t per_class = m / l32;  // pixels of one residue class
    // Sum of class c's pixels at class positions j0 .. j0 + n - 1 (n <= per_class, wrapping).
    const auto run = [&](uint32_t c, uint32_t j0, uint32_t n) -> uint32_t {
      const auto upto = [&](uint32_t j) -> uint32_t { return j == 0 ? 0u : q[c + (j - 1) * l32]; };  // first j
      if (j0 + n <= per_class) return upto(j0 + n) - upto(j0);
      return (upto(per_class) - upto(j0)) + upto(j0 + n - per_class);
    };
    const uint32_t cycles = reads / per_class, rest = reads % per_class;
    for (size_t g = 0; g < groups; ++g) {
      for (size_t lid = 0; lid < lsize; ++lid) {
        const uint32_t a = (static_cast<uint32_t>(g) * group_stride + static_cast<uint32_t>(lid)) & (m - 1);
        const uint32_t c = a % l32, j0 = a / l32;
        out[g * lsize + lid] = cycles * run(c, 0, per_class) + run(c, j0, rest);
      }
    }
  } else if (reads > 0) {
    const auto h = pixel_sums(v, static_cast<uint32_t>(std::min<uint64_t>(footprint_pixels, UINT32_MAX)), kernel);
    for (size_t g = 0; g < groups; ++g)
      for (size_t lid = 0; lid < lsize; ++lid) {
        uint32_t i = static_cast<uint32_t>(g) * group_stride + static_cast<uint32_t>(lid), acc = 0;
        for (uint32_t k = 0; k < reads; ++k, i += l32) acc += h[i & mask];
        out[g * lsize + lid] = acc;
      }
  }
  sums.write(0, std::as_bytes(std::span<const uint32_t>(out)));
  const double bytes = static_cast<double>(global) * reads * static_cast<double>(ImageDesc::kPixelBytes);
  return texture_stream_ns(l.config(), bytes, static_cast<double>(footprint_pixels * ImageDesc::kPixelBytes),
                           groups);
}

}  // namespace

void register_sim_family_texture(FamilyTable& table) {
  table.add({"texture", "link", 0, link});
  table.add({"texture", "chase", 1, chase});
  table.add({"texture", "pair_chase", 1, pair_chase});
  table.add({"texture", "bandwidth", 0, bandwidth});
}

}  // namespace gpuscope::sim
