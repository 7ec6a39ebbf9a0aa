// libFuzzer target: sim descriptions (`--device sim:PATH`) through the
// reader and the model's ground truth for them. Bad input must end in
// UsageError (exit 2), and what is accepted must lie within the bounds the
// sim states (sim_config.hpp).
#include "backends/sim/raster_model.hpp"
#include "backends/sim/sim_config.hpp"
#include "core/error.hpp"
#include "json_mutator.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

// Mutations of the document rather than its bytes (json_mutator.hpp).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return gpuscope::fuzz::mutate_json(data, size, max_size, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuscope;
  const std::string text(reinterpret_cast<const char*>(data), size);
  sim::SimConfig c;
  try {
    c = sim::parse_sim_config_text(text, "fuzz.json");
  } catch (const UsageError&) {
    return 0;
  }
  if (c.caches.empty() || c.caches.size() > sim::kSimMaxCacheLevels) __builtin_trap();
  uint64_t lines = 0;
  for (const auto& l : c.caches) {
    if (l.capacity_bytes > sim::kSimMaxCacheBytes) __builtin_trap();
    lines += l.capacity_bytes / l.line_bytes * (l.per_core ? c.core.shader_cores : 1);
  }
  if (lines > sim::kSimMaxModelLines || c.tlb.entries > sim::kSimMaxTlbEntries) __builtin_trap();
  for (double footprint : {1024.0, 1048576.0, 2147483648.0}) {
    (void)sim::expected_chase(c, footprint);
    (void)sim::expected_chase(c, footprint, sim::CachePath::texture);
    (void)sim::chase_latency_beyond_caches(c, footprint);
  }
  // The raster model on what the reader accepted: a tile that fits its
  // memory or OutOfResources; a small pass modelled with finite time and
  // traced as every one of its fragments.
  if (c.raster.present) {
    for (uint64_t bpp = 1; bpp <= 4096; bpp *= 2) {
      try {
        const sim::TileSize t = sim::effective_tile(c.raster, bpp);
        if (t.pixels() == 0 || (c.raster.tile_memory_bytes && bpp * t.pixels() > c.raster.tile_memory_bytes))
          __builtin_trap();
      } catch (const OutOfResources&) {
      }
    }
    const PassDesc pass{.width = 40, .height = 24, .rects = 2, .blend = true};
    try {
      const sim::PassModel m = sim::model_pass(c, pass, Shading{}, false);
      if (!(m.ns >= 0 && m.ns < 1e30)) __builtin_trap();
      const sim::TicketOrder o = sim::raster_order(c.raster, pass, 4096, 4, [](uint32_t busy) { return busy - 1; });
      if (o.pixel.size() != 40u * 24u * 2u) __builtin_trap();
    } catch (const DeviceError&) {
    } catch (const Unsupported&) {
    }
  }
  return 0;
}
