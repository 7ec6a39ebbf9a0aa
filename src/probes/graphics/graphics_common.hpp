// What the graphics probes share: reaching the facet (or skipping with the
// reason), sizing passes, and checking a fill's read-back on the host.
#pragma once

#include "backends/graphics.hpp"
#include "core/error.hpp"
#include "probes/probe.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>

namespace gpuscope::graphics_probe {

// The device's graphics facet and its limits; throws Unsupported (the
// probe is skipped with the reason) where there is none.
inline GraphicsFacet& facet(ProbeContext& ctx, const char* probe) {
  GraphicsFacet* g = ctx.device.graphics();
  (void)probe;
  if (!g)
    throw Unsupported(fmt::format("{} has no graphics pipeline (no graphics queue, or an API without one)",
                                  ctx.device.info().name));
  if (!g->graphics_limits().any())
    throw Unsupported(fmt::format("{} reports no framebuffer size", ctx.device.info().name));
  return *g;
}

inline bool on_cpu(const ProbeContext& ctx) { return ctx.device.info().type == "cpu"; }

// Frames as small as on a CPU: a CPU, or the sim (which computes every
// frame's checksum pixel by pixel, and whose rates do not depend on size).
inline bool small_frames(const ProbeContext& ctx) { return on_cpu(ctx) || ctx.device.info().type == "sim"; }

inline bool has_format(const GraphicsLimits& l, PixelFormat f) {
  return std::find(l.colour_formats.begin(), l.colour_formats.end(), f) != l.colour_formats.end();
}
inline bool has_samples(const GraphicsLimits& l, uint32_t n) {
  return std::find(l.sample_counts.begin(), l.sample_counts.end(), n) != l.sample_counts.end();
}

// Passes a timed point takes (every one kept as a sample).
inline int passes_per_point(const ProbeContext& ctx) { return ctx.options.quick ? 3 : 5; }

// Rectangles a pass needs to last about target_ns, from one rectangle's
// time, within 1 .. max_rects (255 keeps RGBA8 blend sums below 1).
inline uint32_t rects_for(double one_rect_ns, double target_ns, uint32_t max_rects = 255) {
  if (!(one_rect_ns > 0)) return 1;
  return static_cast<uint32_t>(
      std::clamp(std::llround(target_ns / one_rect_ns), 1LL, static_cast<long long>(max_rects)));
}

// A pass's target time: ~5 ms, as the house's timed launches.
inline double target_pass_ns(const ProbeContext& ctx) {
  return std::min(5.0,
                  ctx.options.harness.target_launch_ms > 0 ? ctx.options.harness.target_launch_ms : 5.0) *
         1e6;
}

// Rectangles per pass for `pass` with `shading`: from a one-rectangle
// pass's time to about target_ns, then doubled while a pass of twice as
// many takes less than 1.9x as long (pro rata where 255 caps the double):
// the pass's fixed costs (the attachments' store at its end, the bins'
// setup; on a slow memory the store of a large RGBA32F framebuffer outlasts
// one rectangle's fill) still weigh, and the rate would read them. The
// count that first took 1.9x is kept, where the ROPs bound the pass (fixed
// costs at most about 5% of it, whether they overlap the fill or add to
// it), or the texture units. At most 255 rectangles; no doubling once a
// pass takes 10x the target.
inline uint32_t rects_for_fill(GraphicsFacet& g, PassDesc pass, const Shading& shading, double target_ns) {
  constexpr uint32_t kMaxRects = 255;  // keeps RGBA8 blend sums exact
  pass.rects = 1;
  const double one = g.fill(pass, shading, 2, false).passes.back().ns;  // the first warms pipelines and caches
  uint32_t rects = rects_for(one, target_ns, kMaxRects);
  pass.rects = rects;
  double t = rects == 1 ? one : g.fill(pass, shading, 2, false).passes.back().ns;
  while (rects < kMaxRects && t < 10 * target_ns) {
    pass.rects = std::min(2 * rects, kMaxRects);
    const double t2 = g.fill(pass, shading, 2, false).passes.back().ns;
    const bool proportional = t2 >= 1.9 * t * pass.rects / (2.0 * rects);
    rects = pass.rects;
    t = t2;
    if (proportional) break;
  }
  return rects;
}

// `passes` timed passes of `pass` with `shading`, the last read back, after
// as many untimed: a GPU idling at a low clock has ramped up by then (the
// H100's one-rectangle sizing pass and the passes after it ran at half the
// rate of a warm run's).
inline FillResult timed_fill(GraphicsFacet& g, const PassDesc& pass, const Shading& shading, int passes) {
  (void)g.fill(pass, shading, passes, false);
  return g.fill(pass, shading, passes, true);
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1u, exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<float>(mant | 0x400u), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

// The colour every pixel holds after a flat pass of `rects` rectangles:
// the last one's colour, or with blending the sum of all (from a cleared,
// zero attachment).
inline std::array<double, 4> expected_flat(uint32_t rects, bool blend) {
  std::array<double, 4> sum{};
  for (uint32_t i = blend ? 0 : rects - 1; i < rects; ++i) {
    const auto c = flat_colour(i);
    for (int k = 0; k < 4; ++k) sum[k] += c[k];
  }
  return sum;
}

// Checks a flat fill's read-back (the first colour attachment, sample 0)
// against expected_flat(); throws ValidationError naming the first pixel
// that differs. Depth-only passes are checked for size and range only (the
// depth a fragment writes is the backend's).
inline void check_flat_read_back(const FillResult& r, const PassDesc& pass, const char* probe) {
  const size_t pixels = size_t{pass.width} * pass.height;
  const PixelFormat f = pass.colour.empty() ? PixelFormat::kDepth32f : pass.colour.front();
  const size_t bytes = pixel_bytes(f);
  if (r.pixels.size() != pixels * bytes)
    throw ValidationError(fmt::format("{}: read-back of {} bytes, expected {} ({}x{} {})", probe,
                                      r.pixels.size(), pixels * bytes, pass.width, pass.height,
                                      format_name(f)));
  const auto want = expected_flat(pass.rects, pass.blend);
  const auto* data = reinterpret_cast<const unsigned char*>(r.pixels.data());
  for (size_t p = 0; p < pixels; ++p) {
    const unsigned char* px = data + p * bytes;
    for (int k = 0; k < 4; ++k) {
      double got = 0, tol = 0;
      switch (f) {
        case PixelFormat::kRgba8:
          got = px[k] / 255.0;
          tol = 0.6 / 255.0;
          break;
        case PixelFormat::kRgba16f: {
          uint16_t h;
          std::memcpy(&h, px + 2 * k, 2);
          got = half_to_float(h);
          // Each blend rounds to half precision (an ulp of 2^-11 near 1): the
          // error grows with the rectangles summed.
          tol = 2e-3 + 2.5e-4 * pass.rects;
          break;
        }
        case PixelFormat::kRgba32f: {
          float v;
          std::memcpy(&v, px + 4 * k, 4);
          got = v;
          tol = 1e-5 * pass.rects + 1e-6;
          break;
        }
        case PixelFormat::kDepth32f: {
          if (k > 0) break;
          float v;
          std::memcpy(&v, px, 4);
          if (!(v >= 0 && v <= 1))
            throw ValidationError(fmt::format("{}: depth {} at pixel {} lies outside [0, 1]", probe, v, p));
          break;
        }
      }
      if (f == PixelFormat::kDepth32f) break;
      if (std::fabs(got - want[k]) > tol)
        throw ValidationError(fmt::format(
            "{}: pixel ({}, {}) channel {} holds {:.6f}, expected {:.6f} ({} {} rectangle(s), {}blended)",
            probe, p % pass.width, p / pass.width, k, got, want[k], format_name(f), pass.rects,
            pass.blend ? "" : "not "));
    }
  }
}

// Fragment shader invocations a pass's statistics may count beyond its
// fragments: Vulkan lets them count helper invocations, the lanes of a 2x2
// quad a triangle covers only in part. A rectangle is one triangle clipped
// to the screen, so only quads cut by the screen's edge (odd sizes) could
// add some; lavapipe, drawing each rectangle as two triangles, counted the
// quads along their diagonal twice. Four per pixel of width + height
// bounds either.
inline uint64_t helper_allowance(const PassDesc& pass) {
  return uint64_t{4} * (uint64_t{pass.width} + pass.height) * pass.rects;
}

// Checks one pass's counted fragment shader invocations, where counted:
// one per pixel and rectangle when nothing may drop them (blending, side
// effects; `exact`), at most that otherwise (hidden-surface removal may
// drop covered fragments); plus, either way, helper_allowance().
inline void check_counted(const std::optional<uint64_t>& counted, const PassDesc& pass, bool exact,
                          const char* probe) {
  if (!counted) return;
  const uint64_t want = uint64_t{pass.width} * pass.height * pass.rects;
  if ((exact && *counted < want) || *counted > want + helper_allowance(pass))
    throw ValidationError(
        fmt::format("{}: the device counted {} fragment shader invocations in a pass of {}x{} px x {} "
                    "rectangles ({}{} fragments, up to {} helper invocations besides)",
                    probe, *counted, pass.width, pass.height, pass.rects, exact ? "" : "at most ", want,
                    helper_allowance(pass)));
}

// Checks a raster trace of `pass`: tickets taken (and counted, where the
// device counts) one per pixel and rectangle, give or take
// helper_allowance() (MSAA shades a pixel on an edge between two triangles
// once for each); the field sized for the pass and its stride, every
// recorded pixel shaded by every rectangle, no ticket recorded twice or
// beyond those taken.
inline void check_trace(const RasterTrace& t, const PassDesc& pass, const char* probe) {
  const uint64_t want = uint64_t{pass.width} * pass.height * pass.rects;
  if (t.tickets < want || t.tickets > want + helper_allowance(pass))
    throw ValidationError(fmt::format("{}: {} tickets taken in a pass of {}x{} px x {} rectangles, expected {}",
                                      probe, t.tickets, pass.width, pass.height, pass.rects, want));
  check_counted(t.timing.fragments, pass, true, probe);
  const uint64_t cells = uint64_t{t.cells_x} * t.cells_y;
  if (t.stride == 0 || t.cells_x != (pass.width + t.stride - 1) / t.stride ||
      t.cells_y != (pass.height + t.stride - 1) / t.stride || t.ticket.size() != cells * pass.rects)
    throw ValidationError(fmt::format("{}: a field of {} tickets for {}x{} px, stride {}, {} rectangles", probe,
                                      t.ticket.size(), pass.width, pass.height, t.stride, pass.rects));
  // t.tickets is bounded by the pass (checked above): one bit per ticket.
  std::vector<bool> seen(t.tickets, false);
  for (uint32_t k : t.ticket) {
    if (k == RasterTrace::kNoTicket)
      throw ValidationError(fmt::format("{}: a recorded pixel was never shaded by one of the rectangles", probe));
    if (k >= t.tickets) throw ValidationError(fmt::format("{}: ticket {} recorded of {} taken", probe, k, t.tickets));
    if (seen[k]) throw ValidationError(fmt::format("{}: ticket {} recorded at two pixels", probe, k));
    seen[k] = true;
  }
}

// Whether hidden-surface removal must shade every fragment of a fill:
// blended fragments read their pixel, and a shader that may discard leaves
// no fragment known to be opaque (Shading::may_discard).
inline bool nothing_droppable(const PassDesc& pass, const Shading& shading) {
  return pass.blend || shading.may_discard;
}

// check_counted on every pass of a fill of `pass` with `shading`, exact
// where nothing_droppable(); the count of the last pass (or -1).
inline double check_fragments(const FillResult& r, const PassDesc& pass, const Shading& shading,
                              const char* probe) {
  double last = -1;
  for (const PassTiming& t : r.passes) {
    check_counted(t.fragments, pass, nothing_droppable(pass, shading), probe);
    if (t.fragments) last = static_cast<double>(*t.fragments);
  }
  return last;
}

// The side of the square framebuffer the fill probes draw into: 1024 px on
// a GPU, 256 on a CPU (whose set-up shares the cores), within the limits.
inline uint32_t fill_side(const ProbeContext& ctx, const GraphicsLimits& l) {
  const uint32_t want = on_cpu(ctx) ? 256 : 1024;
  return std::min({want, l.max_width, l.max_height});
}

// frame_checksum(f), computed per square of one colour rather than per
// pixel (a flat frame is one square, noise one per pixel): the same sum,
// faster for large frames of large blocks.
inline uint64_t frame_checksum_by_blocks(const FrameDesc& f) {
  const auto channels = [](uint32_t t) {
    return uint64_t{t & 0xFFu} + ((t >> 8) & 0xFFu) + ((t >> 16) & 0xFFu) + (t >> 24);
  };
  uint32_t bw = 1, bh = 1;
  if (f.pattern == FramePattern::kFlat) {
    bw = std::max(f.width, 1u);
    bh = std::max(f.height, 1u);
  } else if (f.pattern == FramePattern::kBlocks) {
    bw = bh = f.block_px ? f.block_px : 1;
  }
  uint64_t sum = 0;
  for (uint32_t y = 0; y < f.height; y += bh)
    for (uint32_t x = 0; x < f.width; x += bw) {
      const uint64_t covered = uint64_t{std::min(bw, f.width - x)} * std::min(bh, f.height - y);
      sum += channels(frame_texel(f, x, y)) * covered;
    }
  return sum;
}

}  // namespace gpuscope::graphics_probe
