// The graphics half of the seam: render passes of full-screen rectangles,
// what a rasteriser, its tile memory, its ROPs and its texture units do with
// them. Vulkan implements it with real render passes; the sim from its raster
// model. Probes see only this.
//
// Every pass is timed as a whole, between a timestamp before its begin and
// one after its end: per-draw timestamps mean nothing on tilers, which defer
// all of a pass's fragment work to its end.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope {

// Attachment formats the probes render into. kDepth32f is the depth
// attachment's only format; the others are colour formats.
enum class PixelFormat { kRgba8, kRgba16f, kRgba32f, kDepth32f };

constexpr size_t pixel_bytes(PixelFormat f) {
  switch (f) {
    case PixelFormat::kRgba8: return 4;
    case PixelFormat::kRgba16f: return 8;
    case PixelFormat::kRgba32f: return 16;
    case PixelFormat::kDepth32f: return 4;
  }
  return 0;
}

// The name findings use: "rgba8", "rgba16f", "rgba32f", "depth32f".
std::string_view format_name(PixelFormat f);

// How the texture-fill shading samples its texture.
enum class TextureFilter {
  kPoint,      // nearest texel, base level
  kBilinear,   // 2x2 texels, base level
  kTrilinear,  // 2x2 texels from each of two mip levels
  kAniso,      // anisotropic (up to GraphicsLimits::max_anisotropy, at most 16) over a 4:1 footprint
};

// The name findings use: "point", "bilinear", "trilinear", "aniso".
std::string_view filter_name(TextureFilter f);

// What the device's graphics pipeline can do; zero or false where it cannot.
struct GraphicsLimits {
  uint32_t max_width = 0, max_height = 0;  // framebuffer, pixels
  uint32_t max_colour_attachments = 0;
  // Colour formats the device renders and blends into, and the MSAA sample
  // counts all of them support (1 always, when any).
  std::vector<PixelFormat> colour_formats;
  std::vector<uint32_t> sample_counts;
  bool depth = false;                 // a kDepth32f depth attachment
  bool fragment_side_effects = false; // fragment shaders may write storage buffers and use atomics (trace_raster)
  bool pipeline_statistics = false;   // PassTiming::fragments is counted by the device
  float max_anisotropy = 0;           // 0: no anisotropic filtering
  bool any() const { return max_width > 0; }
};

// One render pass over a width x height framebuffer: `rects` rectangles,
// each covering the whole framebuffer (one triangle, clipped to it, so that
// no primitive edge crosses the screen), drawn in order as one draw call. Every fragment writes every colour attachment; with `depth`,
// every fragment also writes depth (test ALWAYS, writes on). Attachments are
// cleared at the pass's start and stored at its end.
struct PassDesc {
  uint32_t width = 0, height = 0;                        // pixels
  std::vector<PixelFormat> colour{PixelFormat::kRgba8};  // colour attachments; may be empty when `depth`
  bool depth = false;
  uint32_t samples = 1;  // MSAA samples per pixel, one of GraphicsLimits::sample_counts; shading per pixel
  uint32_t rects = 1;
  // Additive blending (ONE, ONE) on every colour attachment: every fragment
  // reads and writes its pixel, so hidden-surface removal cannot drop it.
  bool blend = false;
  size_t bytes_per_pixel() const {
    size_t b = depth ? pixel_bytes(PixelFormat::kDepth32f) : 0;
    for (PixelFormat f : colour) b += pixel_bytes(f);
    return b * samples;
  }
};

// What fragments compute.
struct Shading {
  // Flat: rectangle i writes the constant colour flat_colour(i) (below).
  // Textured: each fragment takes `texture_samples` samples of a square
  // RGBA8 texture of `texture_px` pixels a side (mipmapped), at coordinates
  // that make `filter` do its full work (bilinear: between texel centres;
  // trilinear: between two mip levels; anisotropic: a 4:1 footprint), and
  // writes their mean.
  bool textured = false;
  TextureFilter filter = TextureFilter::kPoint;
  uint32_t texture_px = 0;
  uint32_t texture_samples = 1;
  // The fragment shader may discard: it holds a `discard` under a condition
  // that is never true at run time (a compare against a push constant the
  // compiler cannot fold), so no fragment is known to be opaque before it
  // is shaded and hidden-surface removal (forward pixel kill, early depth
  // kills) cannot drop an earlier fragment a later one covers. What is
  // written is unchanged (flat_colour, the texture mean, depth).
  bool may_discard = false;
};

// The colour rectangle `i` writes under flat shading, as RGBA in [0, 1]:
// small enough that additive blending of up to 255 rectangles stays below
// 1 in RGBA8 (each channel a multiple of 1/255).
std::array<float, 4> flat_colour(uint32_t rect);

// One pass's device time, and the fragment shader invocations the device
// counted in it (pipeline statistics), where it counts them.
struct PassTiming {
  double ns = 0;
  std::optional<uint64_t> fragments;
};

struct FillResult {
  std::vector<PassTiming> passes;
  // With read_back: the first colour attachment after the last pass (or, for
  // a depth-only pass, the depth attachment), rows of width pixels tightly
  // packed, sample 0 of each pixel; empty otherwise.
  std::vector<std::byte> pixels;
};

// The order in which a pass shaded its fragments: each fragment took a
// ticket from one atomic counter (0, 1, ... in the order the device ran the
// atomic adds), and the fragments at every `stride`-th pixel along each
// axis recorded theirs into a field by pixel and rectangle.
struct RasterTrace {
  static constexpr uint32_t kNoTicket = UINT32_MAX;
  uint32_t stride = 1;                // pixels between recorded pixels, along x and y
  uint32_t cells_x = 0, cells_y = 0;  // recorded pixels per row and column: ceil(width / stride) ...
  // ticket[(r * cells_y + cy) * cells_x + cx]: the ticket of rectangle r's
  // fragment at pixel (cx * stride, cy * stride); the lowest where the pixel
  // was shaded more than once (MSAA shades a pixel on an edge between two
  // triangles once for each), kNoTicket where it was never shaded.
  std::vector<uint32_t> ticket;
  uint64_t tickets = 0;  // tickets taken in all (every fragment shaded, recorded or not)
  PassTiming timing;
};

// What a frame holds: a function of (seed, pixel) every backend computes
// exactly as frame_texel() below does.
enum class FramePattern {
  kFlat,    // one colour
  kBlocks,  // block_px x block_px squares of one colour each
  kNoise,   // every pixel its own colour
};

struct FrameDesc {
  uint32_t width = 0, height = 0;  // pixels, RGBA8
  FramePattern pattern = FramePattern::kFlat;
  uint32_t block_px = 1;  // kBlocks' square side
  uint32_t seed = 0;
  // false: rendered (a colour attachment, which the driver may compress);
  // true: written by a compute shader into a storage image (which it may not).
  bool storage_write = false;
};

// frame(): the write and the read of one frame, each timed on the device.
// The read is a compute pass sampling every pixel once (through the texture
// path) and summing; `checksum` is that sum, as frame_checksum() gives it.
struct FrameTiming {
  double write_ns = 0;
  double read_ns = 0;
  uint64_t checksum = 0;
};

// The RGBA8 texel (R in the low byte) of `pixel` (x, y) of a frame.
uint32_t frame_texel(const FrameDesc& f, uint32_t x, uint32_t y);
// The sum over every pixel of its four channels, as the read pass computes it.
uint64_t frame_checksum(const FrameDesc& f);

class GraphicsFacet {
 public:
  virtual ~GraphicsFacet() = default;
  virtual GraphicsLimits graphics_limits() const = 0;

  // Draws `pass` with a fragment shader that takes a ticket from an atomic
  // counter, records it in RasterTrace::ticket where its pixel lies on the
  // `stride` grid (stride >= 1), and writes flat_colour of its rectangle.
  // Needs fragment_side_effects; throws Unsupported without it.
  virtual RasterTrace trace_raster(const PassDesc& pass, uint32_t stride) = 0;

  // Draws `pass` `passes` times back to back, each timed. Throws
  // Unsupported for a format, sample count or filter the device lacks,
  // OutOfResources when the framebuffer does not fit.
  virtual FillResult fill(const PassDesc& pass, const Shading& shading, int passes, bool read_back) = 0;

  // Writes the frame `f` describes, then reads it. Frames of the same size
  // and kind (rendered or storage) share one image across calls, so that a
  // frame written twice with the same seed is redrawn over identical
  // content (what transaction elimination looks for).
  virtual FrameTiming frame(const FrameDesc& f) = 0;
};

}  // namespace gpuscope
