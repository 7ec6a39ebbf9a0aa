// Every field of a parsed SimConfig as one flat JSON object keyed by the
// field's path ("core.clock_mhz", "caches[1].hit_latency_ns"): what the
// sim runs on, independent of how the description spelled it. The preset
// tests compare it with tests/data/sim_presets/*.json field by field.
#pragma once

#include "backends/graphics.hpp"
#include "backends/sim/sim_config.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <string>

namespace gpuscope::test {

inline std::string replacement_name(sim::Replacement r) {
  switch (r) {
    case sim::Replacement::lru:
      return "lru";
    case sim::Replacement::random:
      return "random";
    case sim::Replacement::plru:
      return "plru";
  }
  return "?";
}

inline std::string cache_path_name(sim::CachePath p) {
  switch (p) {
    case sim::CachePath::load_store:
      return "load_store";
    case sim::CachePath::texture:
      return "texture";
    case sim::CachePath::both:
      return "both";
  }
  return "?";
}

inline std::string fragment_order_name(sim::FragmentOrder o) {
  switch (o) {
    case sim::FragmentOrder::row_major:
      return "row-major";
    case sim::FragmentOrder::row_major_quads:
      return "row-major-quads";
    case sim::FragmentOrder::morton:
      return "morton";
  }
  return "?";
}

// The flat field map. Every member of SimConfig and of the structs it holds
// appears, except `source` (the description as written, compared apart).
inline nlohmann::json sim_config_fields(const sim::SimConfig& c) {
  nlohmann::json f = nlohmann::json::object();
  f["id_name"] = c.id_name;
  f["name"] = c.name;
  f["vendor"] = c.vendor;

  const auto& k = c.core;
  f["core.shader_cores"] = k.shader_cores;
  f["core.units_per_core"] = k.units_per_core;
  f["core.lanes_per_unit"] = k.lanes_per_unit;
  f["core.wave_width"] = k.wave_width;
  f["core.waves_per_unit"] = k.waves_per_unit;
  f["core.register_file_bytes_per_unit"] = k.register_file_bytes_per_unit;
  f["core.register_alloc_granularity"] = k.register_alloc_granularity;
  f["core.max_registers_per_item"] = k.max_registers_per_item;
  f["core.clock_mhz"] = k.clock_mhz;
  f["core.workgroups_per_core"] = k.workgroups_per_core;
  f["core.max_work_group_size"] = k.max_work_group_size;

  f["caches.count"] = c.caches.size();
  for (size_t i = 0; i < c.caches.size(); ++i) {
    const auto& l = c.caches[i];
    const std::string p = fmt::format("caches[{}].", i);
    f[p + "name"] = l.name;
    f[p + "capacity_bytes"] = l.capacity_bytes;
    f[p + "line_bytes"] = l.line_bytes;
    f[p + "sector_bytes"] = l.sector_bytes;
    f[p + "associativity"] = l.associativity;
    f[p + "replacement"] = replacement_name(l.replacement);
    f[p + "hit_latency_ns"] = l.hit_latency_ns;
    f[p + "bytes_per_clock"] = l.bytes_per_clock;
    f[p + "path"] = cache_path_name(l.path);
    f[p + "per_core"] = l.per_core;
    f[p + "exclusive"] = l.exclusive;
  }

  f["tlb.entries"] = c.tlb.entries;
  f["tlb.page_bytes"] = c.tlb.page_bytes;
  f["tlb.associativity"] = c.tlb.associativity;
  f["tlb.replacement"] = replacement_name(c.tlb.replacement);
  f["tlb.miss_penalty_ns"] = c.tlb.miss_penalty_ns;

  f["dram_latency_ns"] = c.dram_latency_ns;
  f["dram_bandwidth_gbps"] = c.dram_bandwidth_gbps;
  f["global_mem_bytes"] = c.global_mem_bytes;
  f["max_alloc_bytes"] = c.max_alloc_bytes;
  f["address_bits"] = c.address_bits;

  f["local.bytes_per_work_group"] = c.local.bytes_per_work_group;
  f["local.on_chip"] = c.local.on_chip;
  f["local.latency_ns"] = c.local.latency_ns;
  f["local.bytes_per_clock"] = c.local.bytes_per_clock;
  f["local.workgroups_per_core_with_local"] = c.local.workgroups_per_core_with_local;

  f["rates.ops.count"] = c.rates.ops.size();
  for (size_t i = 0; i < c.rates.ops.size(); ++i) {
    const auto& o = c.rates.ops[i];
    const std::string p = fmt::format("rates.ops[{}].", i);
    f[p + "type"] = o.type;
    f[p + "op"] = o.op;
    f[p + "per_clock_per_core"] = o.per_clock_per_core;
    f[p + "latency_ns"] = o.latency_ns;
  }
  f["rates.dual_issue_fma_add"] = c.rates.dual_issue_fma_add;
  f["rates.fma_emulated"] = c.rates.fma_emulated;
  f["rates.fma_emulated_cycles_per_wave"] = c.rates.fma_emulated_cycles_per_wave;
  f["rates.special_function_rate"] = c.rates.special_function_rate;
  f["rates.fp64"] = c.rates.fp64;
  f["rates.fp16"] = c.rates.fp16;

  f["divergence_granularity"] = c.divergence_granularity;

  f["atomics.global_latency_ns"] = c.atomics.global_latency_ns;
  f["atomics.local_latency_ns"] = c.atomics.local_latency_ns;
  f["atomics.global_adds_per_clock"] = c.atomics.global_adds_per_clock;
  f["atomics.contended_add_ns"] = c.atomics.contended_add_ns;

  f["icache.capacity_bytes"] = c.icache.capacity_bytes;
  f["icache.bytes_per_op"] = c.icache.bytes_per_op;
  f["icache.base_code_bytes"] = c.icache.base_code_bytes;
  f["icache.miss_bytes_per_clock"] = c.icache.miss_bytes_per_clock;

  f["images.max_buffer_pixels"] = c.images.max_buffer_pixels;
  f["images.max_2d_width"] = c.images.max_2d_width;
  f["images.max_2d_height"] = c.images.max_2d_height;

  f["host.link_bandwidth_gbps"] = c.host.link_bandwidth_gbps;
  f["host.zero_copy"] = c.host.zero_copy;
  f["launch_overhead_us"] = c.launch_overhead_us;
  f["launch.dispatch_us"] = c.launch.dispatch_us;
  f["launch.back_to_back_us"] = c.launch.back_to_back_us;
  f["launch.endless"] = c.launch.endless;

  const auto& g = c.governor;
  f["governor.present"] = g.present;
  f["governor.idle_mhz"] = g.idle_mhz;
  f["governor.ramp_ms"] = g.ramp_ms;
  f["governor.idle_after_ms"] = g.idle_after_ms;
  f["governor.throttle_after_s"] = g.throttle_after_s;
  f["governor.throttled_fraction"] = g.throttled_fraction;
  f["governor.throttle_ramp_s"] = g.throttle_ramp_s;

  f["matrix.shapes.count"] = c.matrix.shapes.size();
  for (size_t i = 0; i < c.matrix.shapes.size(); ++i) {
    const auto& s = c.matrix.shapes[i];
    const std::string p = fmt::format("matrix.shapes[{}].", i);
    f[p + "a"] = s.a;
    f[p + "b"] = s.b;
    f[p + "c"] = s.c;
    f[p + "result"] = s.result;
    f[p + "m"] = s.m;
    f[p + "n"] = s.n;
    f[p + "k"] = s.k;
    f[p + "macs_per_clock_per_core"] = s.macs_per_clock_per_core;
    f[p + "latency_cycles"] = s.latency_cycles;
  }

  const auto& r = c.raster;
  f["raster.present"] = r.present;
  f["raster.tile_width_px"] = r.tile_width_px;
  f["raster.tile_height_px"] = r.tile_height_px;
  f["raster.tile_memory_bytes"] = r.tile_memory_bytes;
  f["raster.tile_align_width_px"] = r.tile_align_width_px;
  f["raster.tile_align_height_px"] = r.tile_align_height_px;
  f["raster.tile_order"] = std::string(sim::tile_order_name(r.tile_order));
  f["raster.fragment_order"] = fragment_order_name(r.fragment_order);
  f["raster.binning"] = r.binning;
  f["raster.tiles_in_flight"] = r.tiles_in_flight;
  f["raster.pass_overhead_ns"] = r.pass_overhead_ns;
  f["raster.tile_overhead_clocks"] = r.tile_overhead_clocks;
  f["raster.hidden_surface_removal"] = r.hidden_surface_removal;
  f["raster.rops_per_core"] = r.rops_per_core;
  for (PixelFormat p :
       {PixelFormat::kRgba8, PixelFormat::kRgba16f, PixelFormat::kRgba32f, PixelFormat::kDepth32f}) {
    const std::string name(format_name(p));
    f["raster.rop_pixels_per_clock." + name] = r.rop_pixels_per_clock[static_cast<size_t>(p)];
    f["raster.rop_blend_pixels_per_clock." + name] = r.rop_blend_pixels_per_clock[static_cast<size_t>(p)];
  }
  f["raster.texture_units_per_core"] = r.texture_units_per_core;
  for (TextureFilter t :
       {TextureFilter::kPoint, TextureFilter::kBilinear, TextureFilter::kTrilinear, TextureFilter::kAniso})
    f["raster.texels_per_clock." + std::string(filter_name(t))] = r.texels_per_clock[static_cast<size_t>(t)];
  f["raster.fb_compression_block_px"] = r.fb_compression_block_px;
  f["raster.fb_compression_read_saving"] = r.fb_compression_read_saving;
  f["raster.transaction_elimination"] = r.transaction_elimination;
  f["raster.pipeline_statistics"] = r.pipeline_statistics;
  f["raster.fragment_side_effects"] = r.fragment_side_effects;
  f["raster.sample_counts"] = r.sample_counts;
  f["raster.max_anisotropy"] = r.max_anisotropy;
  f["raster.max_width"] = r.max_width;
  f["raster.max_height"] = r.max_height;
  f["raster.max_colour_attachments"] = r.max_colour_attachments;

  f["noise.relative_sigma"] = c.noise.relative_sigma;
  f["noise.outlier_probability"] = c.noise.outlier_probability;
  f["noise.outlier_max_relative"] = c.noise.outlier_max_relative;
  f["noise.seed"] = c.noise.seed;
  return f;
}

}  // namespace gpuscope::test
