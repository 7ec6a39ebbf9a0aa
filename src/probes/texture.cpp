// Probe `texture`: the image (texture) path, as the Mali-G52 and Adreno 530 articles
// measured it on Mali-G52 and Adreno 530 (OpenCL read_imageui).
//
// Three experiments, each a series (analysis/texture.hpp reads them):
// - texture.latency: one work-item chases a random cycle of pixels through
//   read_imageui over growing footprints, as the latency probe does through
//   global loads: the texture path's own cache levels and latencies.
// - texture.pair_small / texture.pair_large: the texture chain and a global
//   chain advanced alternately, each waiting for the other, with the global
//   footprint swept and the texture footprint small or at 3/4 of the
//   texture path's first level: whether the two paths share that cache
//   (texture.shares_l1; the reasoning is in analysis/texture.hpp).
// - texture.bandwidth: every work-item of a full device makes independent
//   fetches over a few footprints: texture.bandwidth_gbps.
//
// Images are 1D buffer images (image1d_buffer_t over a buffer) where the
// device has them large enough, else 2D images. 1D: slots one cache line
// apart, as in the latency probe, laid out on the device by a link kernel.
// 2D: every pixel is a slot, because a 2D image's memory layout is the
// driver's (often tiled), so only a cycle through all of its pixels
// touches exactly the image's bytes of cache lines.
//
// `--texture-image 2d` forces the 2D path (tests, and measuring a device
// both ways); `buffer` forbids it.
//
// Launches are sized to 5 ms instead of the harness' 10 ms: the probe's
// GPU budget is 5 s for about 70 points, and 5 ms is still thousands of
// times the profiling timer's resolution and the launch overhead.
#include "analysis/texture.hpp"
#include "analysis/cache_hierarchy.hpp"
#include "core/error.hpp"
#include "core/random.hpp"
#include "core/random_cycle.hpp"
#include "core/stats.hpp"
#include "probes/chase_rig.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <numeric>

namespace gpuscope {
namespace {

constexpr uint32_t kHopsPerRound = 16;  // chase's unrolling
constexpr uint32_t kPairsPerRound = 8;  // pair_chase's unrolling
constexpr size_t kPixel = ImageDesc::kPixelBytes;
constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;
constexpr size_t kLinkGroup = 64;
constexpr uint32_t kWidthLog2 = 12;  // 2D images are 4096 pixels wide (every device's minimum is 8192)
// As in the latency probe: interference only adds time to a chase, so a
// point is the fast tail of its samples (all samples are kept).
constexpr double kLatencyQuantile = 0.1;

// A texture cycle placed in the image: slots base .. base + size - 1.
struct PlacedCycle {
  Cycle cycle;
  uint32_t base = 0;
  uint32_t cursor = 0;  // the slot (relative to base) the next walk starts from
};

Series texture_series(const std::string& id, const std::string& y_name, const std::string& y_unit) {
  return make_series(id, "texture", {"footprint", "B"}, {y_name, y_unit});
}

class TextureProbe {
 public:
  explicit TextureProbe(ProbeContext& ctx)
      : ctx_(ctx), dev_(ctx.device), info_(dev_.info()), images_(images_of(dev_)), budget_(ctx.budget()) {
    limits_ = images_.limits();
    harness_ = ctx.options.harness;
    harness_.target_launch_ms = std::min(harness_.target_launch_ms, 5.0);
    choose_images();
    const std::map<std::string, KernelParam> params = {{"image_2d", two_d_}, {"width_log2", kWidthLog2}};
    link_ = &dev_.kernel({"texture", "link", params});
    chase_ = &dev_.kernel({"texture", "chase", params});
    pair_ = &dev_.kernel({"texture", "pair_chase", params});
    bandwidth_ = &dev_.kernel({"texture", "bandwidth", params});
    allocate();
  }

  std::vector<Series> run() {
    const bool quick = ctx_.options.quick;
    Series latency = texture_series(analysis::kTextureLatencySeries, "latency", "ns");
    latency.meta = common_meta();
    latency.meta["kernel"] = "texture/chase";
    latency.meta["pattern"] = "random single cycle, one work-item, read_imageui";

    // Coarse sweep: from 256 B (Adreno's texture cache is 1 KiB) at two
    // points per octave up to 4 MiB, one per octave beyond (quick: one).
    const double first = std::max<double>(256, 2.0 * static_cast<double>(stride_bytes_));
    for (double f = first; f <= static_cast<double>(max_footprint_) * 1.0001;
         f *= (quick || f >= 4.0 * kMiB) ? 2.0 : std::sqrt(2.0)) {
      measure_latency(latency, round_to_slots(f));
    }

    std::vector<Series> out;
    const analysis::Hierarchy h = analysis::infer_cache_hierarchy(latency);
    if (!h.levels.empty() && h.levels.front().end_reached) {
      auto pairs = measure_sharing(h.levels.front().capacity_bytes, h.levels.front().capacity_low);
      out.insert(out.end(), pairs.begin(), pairs.end());
    } else {
      latency.meta["sharing_skipped"] =
          "no first texture cache level with a measured end: the sharing experiment has nothing to size by";
      ctx_.progress("texture: no first-level texture cache found; sharing experiment skipped");
    }

    out.push_back(measure_bandwidth(h.levels.empty() ? 0.0 : h.levels.front().capacity_low));

    // Refinement of the latency staircase with what is left of the budget,
    // as fine as the latency probe's when not quick (1/16 octave): the
    // staircase inference reads an LRU cache's capacity where its misses
    // begin only from six or more points in the rise (analysis/miss_model.hpp),
    // and a 4-way rise spans a third of an octave.
    for (int r = 0; r < (quick ? 1 : 4) && budget_.remaining_s() > 0; ++r) {
      const auto xs = analysis::refinement_footprints(latency, quick ? 4 : 8, std::pow(2.0, quick ? 1.0 / 8 : 1.0 / 16),
                                                      static_cast<double>(stride_bytes_));
      if (xs.empty()) break;
      for (double x : xs) {
        if (budget_.exhausted()) break;
        measure_latency(latency, round_to_slots(x));
      }
    }
    latency.meta["wall_s"] = budget_.elapsed_s();
    latency.meta["budget_s"] = budget_.total_s();
    out.insert(out.begin(), std::move(latency));
    return out;
  }

 private:
  static ImageFacet& images_of(Device& dev) {
    ImageFacet* images = dev.images();
    if (!images) throw Unsupported(fmt::format("{} offers no images to compute kernels", dev.info().name));
    return *images;
  }

  nlohmann::json common_meta() const {
    return {{"image", two_d_ ? "image2d_t (RGBA uint32)" : "image1d_buffer_t (RGBA uint32)"},
            {"pixel_bytes", kPixel},
            {"stride_bytes", stride_bytes_},
            {"max_footprint_bytes", max_footprint_},
            {"image_limits",
             {{"max_buffer_pixels", limits_.max_buffer_pixels},
              {"max_2d_width", limits_.max_2d_width},
              {"max_2d_height", limits_.max_2d_height}}}};
  }

  // 1D buffer images where they hold at least 1 MiB (Mali's hold 64 Ki
  // pixels, 1 MiB: enough for its 8 KiB texture cache and 128 KiB L2), else
  // 2D images, else the probe cannot run.
  void choose_images() {
    const bool cpu = info_.type == "cpu";
    const bool quick = ctx_.options.quick;
    // --texture-image 2d takes the 2D path even where 1D buffer images
    // would do: to measure a device both ways and to test the 2D path.
    const bool want_2d = ctx_.options.texture_images == TextureImages::two_d;
    // GPU: past the largest L2s (60 MB on H200) far enough for a DRAM
    // plateau of three points at one per octave (H200: still rising from
    // 128 to 256 MiB, the random cycle's hits in L2 fading out); CPU: past
    // L2, a few L3 points when not quick (set-up runs on the same few cores).
    size_t want = cpu ? (quick ? 4 * kMiB : 64 * kMiB) : (quick ? 64 * kMiB : 512 * kMiB);
    want = std::min<size_t>(want, std::bit_floor(std::max<uint64_t>(info_.max_alloc_bytes, 1)));
    if (info_.global_mem_bytes) want = std::min<size_t>(want, std::bit_floor(info_.global_mem_bytes / 4));
    const size_t buffer_image_bytes = limits_.max_buffer_pixels * kPixel;
    if (!want_2d && buffer_image_bytes >= std::min<size_t>(want, kMiB)) {
      two_d_ = false;
      max_footprint_ = std::min(want, std::bit_floor(buffer_image_bytes));
      stride_bytes_ =
          std::max<size_t>(kPixel, info_.global_cache_line_bytes ? info_.global_cache_line_bytes : 64);
      stride_bytes_ = std::bit_ceil(stride_bytes_);
      return;
    }
    if (ctx_.options.texture_images == TextureImages::buffer_1d)
      throw Unsupported(fmt::format("--texture-image buffer: 1D buffer images of {} pixels are too small for a sweep",
                                    limits_.max_buffer_pixels));
    const size_t width = size_t{1} << kWidthLog2;
    if (limits_.max_2d_width >= width && limits_.max_2d_height >= 16) {
      two_d_ = true;
      stride_bytes_ = kPixel;
      // Every pixel a slot: host permutations and image writes grow with the
      // footprint, so 2D sweeps stop at 32 MiB.
      const size_t rows = std::bit_floor(limits_.max_2d_height);
      max_footprint_ = std::min({want, 32 * kMiB, width * rows * kPixel});
      return;
    }
    throw Unsupported(fmt::format(
        "images too small for a texture sweep: 1D buffer images of {} pixels, 2D images of {}x{} pixels",
        limits_.max_buffer_pixels, limits_.max_2d_width, limits_.max_2d_height));
  }

  size_t stride_pixels() const { return stride_bytes_ / kPixel; }

  ImageDesc image_desc(size_t bytes) const {
    ImageDesc d;
    d.kind = two_d_ ? ImageKind::k2D : ImageKind::kBuffer1D;
    d.format = ImageFormat::kRgba32Uint;
    if (two_d_) {
      d.width = size_t{1} << kWidthLog2;
      d.height = bytes / kPixel / d.width;
    } else {
      d.width = bytes / kPixel;
    }
    return d;
  }

  // The image for the largest footprint, halving on refusal.
  void allocate() {
    const size_t want = max_footprint_;
    const size_t smallest = two_d_ ? (size_t{1} << kWidthLog2) * kPixel * 16 : 64 * kKiB;
    for (size_t bytes = want; bytes >= smallest; bytes /= 2) {
      try {
        if (!two_d_) backing_ = dev_.create_buffer(bytes);
        image_ = images_.create_image(image_desc(bytes), backing_.get());
        const size_t slots = bytes / stride_bytes_;
        if (!two_d_) next_ = dev_.create_buffer(slots * sizeof(uint32_t));
        end_ = dev_.create_buffer(2 * sizeof(uint32_t));
        max_footprint_ = bytes;
        if (two_d_) pixels_.assign(bytes / sizeof(uint32_t), 0);
        if (bytes < want)
          ctx_.progress(fmt::format("texture: an image of {} MiB was refused, sweeping to {} KiB",
                                    want / kMiB, bytes / kKiB));
        return;
      } catch (const OutOfResources&) {
        image_.reset();
        backing_.reset();
        next_.reset();
      }
    }
    throw OutOfResources("texture: the device refused even the smallest image for the sweep");
  }

  size_t round_to_slots(double bytes) const {
    const auto slots =
        std::max<size_t>(2, static_cast<size_t>(std::llround(bytes / static_cast<double>(stride_bytes_))));
    return std::min(slots * stride_bytes_, max_footprint_);
  }

  // Places `c` in the image at slot `base`: each slot's first channel holds
  // the pixel index of its successor.
  void lay_out(const Cycle& c, uint32_t base) {
    if (two_d_) {
      for (uint32_t i = 0; i < c.size(); ++i) pixels_[static_cast<size_t>(base + i) * 4] = base + c.next[i];
      images_.write_image(*image_, std::as_bytes(std::span<const uint32_t>(pixels_)));
      return;
    }
    link(*backing_, c, static_cast<uint32_t>(stride_pixels() * 4), static_cast<uint32_t>(stride_pixels()),
         base);
  }

  // The link kernel: `c` into `words` at slot `base`, slots slot_words apart,
  // values in units of value_per_slot.
  void link(Buffer& words, const Cycle& c, uint32_t slot_words, uint32_t value_per_slot, uint32_t base) {
    dev_.write_values<uint32_t>(*next_, c.next);
    const size_t global = (c.size() + kLinkGroup - 1) / kLinkGroup * kLinkGroup;
    const KernelArg args[] = {&words, next_.get(), slot_words, value_per_slot, base, c.size()};
    dev_.launch(*link_, Range::d1(global), Range::d1(std::min(kLinkGroup, link_->max_work_group_size())),
                args);
  }

  uint32_t pixel_of(const PlacedCycle& p, uint32_t slot) const {
    return static_cast<uint32_t>((p.base + slot) * stride_pixels());
  }

  // rounds x 16 texture hops from p's cursor; checks the pixel it ended on.
  double chase(PlacedCycle& p, uint64_t rounds) {
    const auto r32 = static_cast<uint32_t>(std::min<uint64_t>(rounds, UINT32_MAX));
    const KernelArg args[] = {image_.get(), pixel_of(p, p.cursor), r32, end_.get()};
    const double ns = dev_.launch(*chase_, Range::d1(1), Range::d1(1), args);
    const uint32_t got = dev_.read_values<uint32_t>(*end_, 1)[0];
    const uint32_t want_slot = p.cycle.walk(p.cursor, static_cast<uint64_t>(r32) * kHopsPerRound);
    if (got != pixel_of(p, want_slot))
      throw ValidationError(
          fmt::format("texture: chase ended on pixel {} but the host's walk ends on {} "
                      "(footprint {} B)",
                      got, pixel_of(p, want_slot), p.cycle.size() * stride_bytes_));
    p.cursor = want_slot;
    return ns;
  }

  // Walks the cycle once where that takes a few launches' time at most, so
  // that every level able to hold it does; returns ns per hop seen.
  double warm(const std::function<double(uint64_t)>& run, uint64_t cycle_rounds) {
    const uint64_t first = std::min<uint64_t>(cycle_rounds, 64);
    double ns = run(first);
    uint64_t done = first;
    const double per_round = ns / static_cast<double>(first);
    const auto chunk =
        std::max<uint64_t>(1, static_cast<uint64_t>(harness_.target_launch_ms * 1e6 / per_round));
    while (done < cycle_rounds && ns < 6 * harness_.target_launch_ms * 1e6) {
      const uint64_t r = std::min(chunk, cycle_rounds - done);
      ns += run(r);
      done += r;
    }
    return per_round;
  }

  void measure_latency(Series& s, size_t footprint) {
    for (const auto& p : s.points)
      if (p.x == static_cast<double>(footprint)) return;
    const auto n = static_cast<uint32_t>(footprint / stride_bytes_);
    PlacedCycle pc{{}, 0, 0};
    random_cycle_into(pc.cycle, n, 0x7e47u ^ (uint64_t{n} * 0x9e3779b97f4a7c15ULL), cycle_threads(info_));
    lay_out(pc.cycle, 0);
    const auto run = [&](uint64_t rounds) { return chase(pc, rounds); };
    const double per_round = warm(run, (n + kHopsPerRound - 1) / kHopsPerRound);
    const auto initial =
        std::max<uint64_t>(1, static_cast<uint64_t>(harness_.target_launch_ms * 1e6 / 8 / per_round));
    const Measurement m = measure(run, initial, UINT32_MAX, after_warm_walk(harness_, info_));
    Point p;
    p.x = static_cast<double>(footprint);
    for (double v : m.ns_per_unit) p.samples.push_back(v / kHopsPerRound);
    p.y = quantile(p.samples, kLatencyQuantile);
    insert_point(s, p);
    ctx_.progress(
        fmt::format("texture latency {:>10.1f} KiB  {:8.2f} ns", static_cast<double>(footprint) / kKiB, p.y));
  }

  // The sharing experiment, sized by the texture path's first level as the
  // latency staircase read it: capacity c_bytes, last footprint on its
  // plateau plateau_bytes. The large texture chain takes 3/4 of the
  // plateau's extent, not of the capacity: a gradual rise (random
  // replacement, uneven sets) puts the capacity well past the last
  // footprint that still hits throughout, and the chain must hit alone.
  std::vector<Series> measure_sharing(double c_bytes, double plateau_bytes) {
    const bool quick = ctx_.options.quick;
    const size_t large_bytes = round_to_slots(0.75 * plateau_bytes);
    const size_t small_bytes = round_to_slots(c_bytes / 8);
    if (small_bytes + large_bytes > max_footprint_) {
      ctx_.progress("texture: the first level is larger than the image; sharing experiment skipped");
      return {};
    }
    PlacedCycle small{random_cycle(static_cast<uint32_t>(small_bytes / stride_bytes_), 0x5a11), 0, 0};
    PlacedCycle large{random_cycle(static_cast<uint32_t>(large_bytes / stride_bytes_), 0x1a26e),
                      small.cycle.size(), 0};
    lay_out(small.cycle, small.base);
    lay_out(large.cycle, large.base);

    // Global footprints from c/16 to 2c: a shared cache shows between c/4
    // and c (analysis/texture.hpp); three points per octave (quick: two).
    const size_t g_min =
        round_to_slots(std::max<double>(c_bytes / 16, 2.0 * static_cast<double>(stride_bytes_)));
    const double g_max = 2 * c_bytes;
    words_ = dev_.create_buffer(round_to_slots(g_max * 1.1) + stride_bytes_);
    if (!next_)
      next_ = dev_.create_buffer(words_->size_bytes() / stride_bytes_ * sizeof(uint32_t) + 64);
    else if (next_->size_bytes() < words_->size_bytes() / stride_bytes_ * sizeof(uint32_t))
      next_ = dev_.create_buffer(words_->size_bytes() / stride_bytes_ * sizeof(uint32_t));

    Series s_small = texture_series(analysis::kTexturePairSmallSeries, "round", "ns");
    Series s_large = texture_series(analysis::kTexturePairLargeSeries, "round", "ns");
    for (Series* s : {&s_small, &s_large}) {
      s->x = {"global footprint", "B"};
      s->meta = common_meta();
      s->meta["kernel"] = "texture/pair_chase";
      s->meta["pattern"] =
          "one work-item alternating a dependent texture fetch and a dependent global load, each waiting "
          "for the other; y is one fetch plus one load";
      s->meta["texture_first_level_bytes"] = c_bytes;
      s->meta["texture_first_level_plateau_bytes"] = plateau_bytes;
    }
    s_small.meta["texture_bytes"] = small_bytes;
    s_large.meta["texture_bytes"] = large_bytes;

    const double step = std::pow(2.0, quick ? 0.5 : 1.0 / 3);
    size_t last = 0;
    for (double g = static_cast<double>(g_min); g <= g_max * 1.0001; g *= step) {
      const size_t bytes = round_to_slots(g);
      if (bytes == last) continue;
      last = bytes;
      const auto n = static_cast<uint32_t>(bytes / stride_bytes_);
      Cycle gc = random_cycle(n, 0x6106a1 ^ n);
      const auto words_per_slot = static_cast<uint32_t>(stride_bytes_ / sizeof(uint32_t));
      link(*words_, gc, words_per_slot, words_per_slot, 0);
      uint32_t g_cursor = 0;
      for (auto [pc, s] : {std::pair{&small, &s_small}, std::pair{&large, &s_large}}) {
        const auto run = [&, pc = pc](uint64_t rounds) {
          return pair_chase(*pc, gc, g_cursor, words_per_slot, rounds);
        };
        const uint64_t longest = std::max<uint64_t>(n, pc->cycle.size());
        const double per_round = warm(run, (longest + kPairsPerRound - 1) / kPairsPerRound);
        const auto initial =
            std::max<uint64_t>(1, static_cast<uint64_t>(harness_.target_launch_ms * 1e6 / 8 / per_round));
        const Measurement m = measure(run, initial, UINT32_MAX, harness_);
        Point p;
        p.x = static_cast<double>(bytes);
        for (double v : m.ns_per_unit) p.samples.push_back(v / kPairsPerRound);
        p.y = quantile(p.samples, kLatencyQuantile);
        insert_point(*s, p);
      }
      ctx_.progress(fmt::format(
          "texture pair {:>10.1f} KiB global: {:8.2f} ns (texture {} KiB) {:8.2f} ns (texture {} KiB)",
          static_cast<double>(bytes) / kKiB, s_small.points.back().y, small_bytes / kKiB,
          s_large.points.back().y, large_bytes / kKiB));
    }
    words_.reset();
    return {s_small, s_large};
  }

  // rounds x 8 alternating texture/global hops; checks both ends.
  double pair_chase(PlacedCycle& t, const Cycle& g, uint32_t& g_cursor, uint32_t words_per_slot,
                    uint64_t rounds) {
    const auto r32 = static_cast<uint32_t>(std::min<uint64_t>(rounds, UINT32_MAX));
    const KernelArg args[] = {
        image_.get(), words_.get(), pixel_of(t, t.cursor), g_cursor * words_per_slot, uint32_t{0},
        r32,          end_.get()};
    const double ns = dev_.launch(*pair_, Range::d1(1), Range::d1(1), args);
    const auto got = dev_.read_values<uint32_t>(*end_, 2);
    const uint64_t hops = static_cast<uint64_t>(r32) * kPairsPerRound;
    const uint32_t t_want = t.cycle.walk(t.cursor, hops);
    const uint32_t g_want = g.walk(g_cursor, hops);
    if (got[0] != pixel_of(t, t_want) || got[1] != g_want * words_per_slot)
      throw ValidationError(
          fmt::format("texture: pair chase ended on pixel {} and word {}, the host's walks on {} and {}",
                      got[0], got[1], pixel_of(t, t_want), g_want * words_per_slot));
    t.cursor = t_want;
    g_cursor = g_want;
    return ns;
  }

  // first_level_plateau_bytes: the last footprint on the latency
  // staircase's first plateau (0: none found). A first level smaller than
  // the smallest fixed footprint (Adreno's 1 KiB texture caches) gets a
  // footprint of its own, half of it, or its rate would never be seen.
  Series measure_bandwidth(double first_level_plateau_bytes) {
    const bool quick = ctx_.options.quick;
    std::vector<size_t> footprints;
    const size_t own = std::bit_floor(static_cast<size_t>(first_level_plateau_bytes / 2));
    if (own >= kPixel && own < 8 * kKiB) footprints.push_back(own);
    for (size_t f :
         quick ? std::vector<size_t>{8 * kKiB, 128 * kKiB, 4 * kMiB}
               : std::vector<size_t>{8 * kKiB, 32 * kKiB, 128 * kKiB, 2 * kMiB, 32 * kMiB, 128 * kMiB})
      if (f <= max_footprint_) footprints.push_back(f);
    const size_t data_bytes = footprints.back();

    // Random pixels: nothing a compressing memory system could flatter.
    std::vector<uint32_t> data(data_bytes / sizeof(uint32_t));
    SplitMix64 rng(0xba4d);
    for (auto& w : data) w = static_cast<uint32_t>(rng.next());
    if (two_d_) {
      std::copy(data.begin(), data.end(), pixels_.begin());
      images_.write_image(*image_, std::as_bytes(std::span<const uint32_t>(pixels_)));
    } else {
      dev_.write_values<uint32_t>(*backing_, data);
    }

    const size_t wg = std::min<size_t>(256, bandwidth_->max_work_group_size());
    // GPU: 2048 work-items per compute unit (a full H100 SM); CPU: a few
    // work-groups per core.
    const size_t per_cu = info_.type == "cpu" ? 4 * wg : std::max<size_t>(2048, wg);
    const size_t global = std::max<size_t>(1, info_.compute_units) * per_cu / wg * wg;
    const size_t groups = global / wg;
    auto sums = dev_.create_buffer(global * sizeof(uint32_t));

    Series s = texture_series(analysis::kTextureBandwidthSeries, "bandwidth", "GB/s");
    s.meta = common_meta();
    s.meta["kernel"] = "texture/bandwidth";
    s.meta["global_work_items"] = global;
    s.meta["work_group"] = wg;
    s.meta["pattern"] =
        "independent fetches; a work-group reads consecutive pixels from its own start, starts spread evenly "
        "over the footprint";
    s.meta["group_stride_pixels"] = nlohmann::json::array();
    for (size_t f : footprints) {
      const auto mask = static_cast<uint32_t>(f / kPixel - 1);
      // Work-groups start evenly spread over the footprint (whole work-group
      // widths apart, at least one), so that at any moment they read all of
      // it: a pixel is read again only after the whole footprint has been,
      // and a footprint larger than a cache streams from the level behind
      // it. (Starts bunched together would let the groups of one compute
      // unit feed each other from its L1 and read far past the L2 as if
      // from it, as an H200 recording with bunched starts shows:
      // tests/data/README.md.)
      const auto group_stride = static_cast<uint32_t>(std::max(wg, f / kPixel / groups / wg * wg));
      s.meta["group_stride_pixels"].push_back(group_stride);
      const auto run = [&](uint64_t reads) {
        const auto r32 = static_cast<uint32_t>(reads);
        const KernelArg args[] = {image_.get(), mask, group_stride, r32, sums.get()};
        const double ns = dev_.launch(*bandwidth_, Range::d1(global), Range::d1(wg), args);
        check_sums(*sums, data, global, wg, group_stride, mask, r32);
        return ns;
      };
      const Measurement m = measure(run, 16, 1u << 20, harness_);
      const double bytes_per_unit = static_cast<double>(global * kPixel);
      const double y = add_rate_point(s, static_cast<double>(f), m.ns_per_unit, bytes_per_unit);
      ctx_.progress(
          fmt::format("texture bandwidth {:>10.1f} KiB  {:10.1f} GB/s", static_cast<double>(f) / kKiB, y));
    }
    return s;
  }

  // Recomputes the sums of 17 work-items spread over the launch.
  void check_sums(const Buffer& sums, const std::vector<uint32_t>& data, size_t global, size_t wg,
                  uint32_t group_stride, uint32_t mask, uint32_t reads) {
    const auto got = dev_.read_values<uint32_t>(sums, global);
    for (size_t k = 0; k <= 16; ++k) {
      const size_t gid = std::min(global - 1, k * (global / 16));
      const auto group = static_cast<uint32_t>(gid / wg);
      const auto lid = static_cast<uint32_t>(gid % wg);
      uint32_t i = group * group_stride + lid;
      uint32_t want = 0;
      for (uint32_t r = 0; r < reads; ++r) {
        const size_t px = i & mask;
        want += data[px * 4] + data[px * 4 + 1] + data[px * 4 + 2] + data[px * 4 + 3];
        i += static_cast<uint32_t>(wg);
      }
      if (got[gid] != want)
        throw ValidationError(
            fmt::format("texture: bandwidth work-item {} summed {:#x}, the host {:#x}", gid, got[gid], want));
    }
  }

  ProbeContext& ctx_;
  Device& dev_;
  const DeviceInfo& info_;
  ImageFacet& images_;
  TimeBudget budget_;
  HarnessConfig harness_;
  ImageLimits limits_;
  bool two_d_ = false;
  size_t stride_bytes_ = 64;
  size_t max_footprint_ = 0;
  Kernel *link_ = nullptr, *chase_ = nullptr, *pair_ = nullptr, *bandwidth_ = nullptr;
  std::unique_ptr<Buffer> backing_, next_, end_, words_;
  std::unique_ptr<Image> image_;
  std::vector<uint32_t> pixels_;  // 2D only: the host copy of the whole image
};

}  // namespace

std::vector<Series> run_texture_probe(ProbeContext& ctx) { return TextureProbe(ctx).run(); }

}  // namespace gpuscope
