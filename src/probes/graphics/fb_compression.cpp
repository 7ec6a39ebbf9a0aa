// Probe `fbcompress`: framebuffer compression, from what a frame costs to
// read. A frame of flat colour, of N x N blocks of one colour each (N = 1,
// 2, 4 .. 64) and of noise is written, rendered (a colour attachment the
// driver may compress) or through a storage image (which it may not), then
// read by a compute pass sampling every pixel (GraphicsFacet::frame). A
// compressor working on B x B blocks stores frames of N >= B blocks in
// fewer bytes, so their reads get faster from N = B on.
//
// graphics.fb_compression.rendered / .storage: x the block side in px, with
// flat frames at x = 0 and noise at x = the frame's width; y read GB/s (the
// frame's RGBA8 bytes per read ns), every pass a sample. Every read's
// checksum must equal frame_checksum(). Frames are 4096 px a side on a GPU
// (64 MiB: more than the last-level caches of most GPUs), 512 on a CPU
// and in the sim.
#include "analysis/graphics.hpp"
#include "probes/graphics/graphics_common.hpp"
#include "probes/graphics/graphics_probes.hpp"
#include "probes/series_util.hpp"

namespace gpuscope {

std::vector<Series> run_fbcompress_probe(ProbeContext& ctx) {
  GraphicsFacet& g = graphics_probe::facet(ctx, "fbcompress");
  const GraphicsLimits l = g.graphics_limits();
  if (!graphics_probe::has_format(l, PixelFormat::kRgba8))
    throw Unsupported("the device cannot render into RGBA8");
  const uint32_t side =
      std::min({graphics_probe::small_frames(ctx) ? 512u : 4096u, l.max_width, l.max_height});
  struct Kind {
    FrameDesc f;
    double x;
  };
  std::vector<Kind> kinds;
  FrameDesc base;
  base.width = side;
  base.height = side;
  base.seed = 0x5eed;
  base.pattern = FramePattern::kFlat;
  kinds.push_back({base, 0});
  for (uint32_t n = 1; n <= 64; n *= 2) {
    base.pattern = FramePattern::kBlocks;
    base.block_px = n;
    kinds.push_back({base, static_cast<double>(n)});
  }
  base.pattern = FramePattern::kNoise;
  base.block_px = 1;
  kinds.push_back({base, static_cast<double>(side)});
  std::vector<uint64_t> checksums;
  for (const Kind& k : kinds) checksums.push_back(graphics_probe::frame_checksum_by_blocks(k.f));

  const double frame_bytes = static_cast<double>(side) * side * 4;
  const int passes = graphics_probe::passes_per_point(ctx);
  std::vector<Series> out;
  std::string storage_skipped;
  for (bool storage : {false, true}) {
    Series s = make_series(storage ? analysis::kFbStorageSeries : analysis::kFbRenderedSeries, "fbcompress",
                           {"block", "px"}, {"read bandwidth", "GB/s"});
    s.meta = {{"width", side},
              {"height", side},
              {"written",
               storage ? "a compute shader into a storage image" : "a render pass into a colour attachment"},
              {"x", "block side in px; 0: flat colour; the frame's width: noise"},
              {"write_ns", nlohmann::json::object()}};
    try {
      for (size_t i = 0; i < kinds.size(); ++i) {
        FrameDesc f = kinds[i].f;
        f.storage_write = storage;
        std::vector<double> rates, writes;
        g.frame(f);  // warm: pipelines, the image, caches
        for (int p = 0; p < passes; ++p) {
          const FrameTiming t = g.frame(f);
          if (t.checksum != checksums[i])
            throw ValidationError(
                fmt::format("fbcompress: the read of a {} frame (block {} px) summed {}, expected {}",
                            storage ? "storage" : "rendered", f.block_px, t.checksum, checksums[i]));
          rates.push_back(frame_bytes / t.read_ns);
          writes.push_back(t.write_ns);
        }
        s.meta["write_ns"][fmt::format("{:.0f}", kinds[i].x)] = writes;
        const double y = add_point(s, kinds[i].x, rates);
        ctx.progress(fmt::format("fbcompress {:<8} x={:<5.0f} {:8.1f} GB/s", storage ? "storage" : "rendered",
                                 kinds[i].x, y));
      }
      out.push_back(std::move(s));
    } catch (const Unsupported& e) {
      if (!storage) throw;
      storage_skipped = e.what();
    }
    ctx.progress_fraction(storage ? 1.0 : 0.5);
  }
  if (!storage_skipped.empty()) out.front().meta["storage_skipped"] = storage_skipped;
  return out;
}

}  // namespace gpuscope
