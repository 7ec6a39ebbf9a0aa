#include "backends/sim/sim_graphics.hpp"

#include "backends/sim/raster_model.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"
#include "core/random.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace gpuscope::sim {
namespace {

class SimGraphics : public GraphicsFacet {
 public:
  explicit SimGraphics(SimDevice& dev) : dev_(dev), order_rng_(dev.config().noise.seed ^ 0x7261737465720000ull) {}

  GraphicsLimits graphics_limits() const override {
    const RasterConfig& r = dev_.config().raster;
    GraphicsLimits l;
    l.max_width = r.max_width;
    l.max_height = r.max_height;
    l.max_colour_attachments = r.max_colour_attachments;
    for (PixelFormat f : {PixelFormat::kRgba8, PixelFormat::kRgba16f, PixelFormat::kRgba32f})
      if (r.rop_pixels_per_clock[static_cast<size_t>(f)] > 0) l.colour_formats.push_back(f);
    l.sample_counts = r.sample_counts;
    l.depth = r.rop_pixels_per_clock[static_cast<size_t>(PixelFormat::kDepth32f)] > 0;
    l.fragment_side_effects = r.fragment_side_effects;
    l.pipeline_statistics = r.pipeline_statistics;
    l.max_anisotropy = static_cast<float>(r.max_anisotropy);
    return l;
  }

  // The order comes from raster_order; which of the concurrent tiles shades
  // next is drawn from the noise seed (round-robin on a noiseless
  // description), so a trace is the same for the same seed and calls. The
  // time is the flat pass's, or the tickets' atomic adds to one counter
  // (serialised, atomics.contended_add_ns each) when those take longer.
  RasterTrace trace_raster(const PassDesc& pass, uint32_t stride) override {
    if (stride == 0) throw DeviceError("sim: trace_raster with a stride of 0 pixels");
    const SimConfig& c = dev_.config();
    const PassModel m = model_pass(c, pass, Shading{}, true);
    const bool noiseless = c.noise.relative_sigma == 0 && c.noise.outlier_probability == 0;
    uint32_t turn = 0;
    const uint32_t chunk = std::max(4u, c.core.wave_width);
    const TicketOrder order =
        raster_order(c.raster, pass, static_cast<uint32_t>(m.fragments), chunk, [&](uint32_t busy) {
          return noiseless ? turn++ % busy : order_rng_.below(busy);
        });
    RasterTrace t;
    t.stride = stride;
    t.cells_x = (pass.width + stride - 1) / stride;
    t.cells_y = (pass.height + stride - 1) / stride;
    t.ticket.assign(size_t{t.cells_x} * t.cells_y * pass.rects, RasterTrace::kNoTicket);
    for (size_t k = 0; k < order.pixel.size(); ++k) {
      const uint32_t x = order.pixel[k] % pass.width, y = order.pixel[k] / pass.width;
      if (x % stride != 0 || y % stride != 0) continue;
      uint32_t& cell = t.ticket[(size_t{order.rect[k]} * t.cells_y + y / stride) * t.cells_x + x / stride];
      cell = std::min(cell, static_cast<uint32_t>(k));
    }
    t.tickets = m.fragments;
    const double atomics_ns = c.raster.pass_overhead_ns + static_cast<double>(m.fragments) * c.atomics.contended_add_ns;
    t.timing.ns = dev_.with_noise(std::max(m.ns, atomics_ns));
    if (c.raster.pipeline_statistics) t.timing.fragments = m.fragments;
    dev_.spend_submission(t.timing.ns);
    return t;
  }

  FillResult fill(const PassDesc& pass, const Shading& shading, int passes, bool read_back) override {
    if (passes < 1) throw DeviceError("sim: fill of fewer than one pass");
    const SimConfig& c = dev_.config();
    const PassModel m = model_pass(c, pass, shading, false);
    FillResult out;
    out.passes.reserve(static_cast<size_t>(passes));
    for (int i = 0; i < passes; ++i) {
      PassTiming t;
      t.ns = dev_.with_noise(m.ns);
      if (c.raster.pipeline_statistics) t.fragments = m.fragments;
      out.passes.push_back(t);
    }
    double all_ns = 0;
    for (const PassTiming& t : out.passes) all_ns += t.ns;
    dev_.spend_submission(all_ns);
    if (read_back) out.pixels = pass_pixels(pass, shading);
    return out;
  }

  FrameTiming frame(const FrameDesc& f) override {
    const auto key = std::make_tuple(f.width, f.height, f.storage_write);
    const auto it = images_.find(key);
    const FrameModel m = model_frame(dev_.config(), f, it == images_.end() ? nullptr : &it->second);
    images_[key] = f;
    FrameTiming t;
    t.write_ns = dev_.with_noise(m.write_ns);
    t.read_ns = dev_.with_noise(m.read_ns);
    t.checksum = frame_checksum(f);
    dev_.spend_submission(t.write_ns);
    dev_.spend_submission(t.read_ns);
    return t;
  }

 private:
  SimDevice& dev_;
  SplitMix64 order_rng_;
  // The content each shared image (size, rendered or storage) holds.
  std::map<std::tuple<uint32_t, uint32_t, bool>, FrameDesc> images_;
};

}  // namespace

std::unique_ptr<GraphicsFacet> make_sim_graphics(SimDevice& dev) { return std::make_unique<SimGraphics>(dev); }

}  // namespace gpuscope::sim
