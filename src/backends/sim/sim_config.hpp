// The description of a simulated GPU: every parameter the sim backend's
// timing model uses, read from JSON (a preset embedded at build time, or a
// user's file) and validated strictly. Units are in the names; times in ns,
// sizes in bytes, rates per clock of the shader core clock.
//
// In the JSON, any number may be written plainly (`"clock_mhz": 800`) or
// annotated with where it comes from:
//   "clock_mhz": {"value": 800, "basis": "spec", "source": "published.md"}
// basis is one of measured, spec, assumed. Presets annotate every value.
// A description may name a GPU family ("family": "valhall") and give only
// what differs from it (gpu_family.hpp); the reader sees the resolved whole.
#pragma once

#include "backends/graphics.hpp"
#include "core/matrix_arithmetic.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuscope::sim {

// What the sim can run, and so accepts (the model keeps every cache line in
// host memory): at most 8 cache levels of at most 1 GiB each, 2^23 lines in
// all counting a per-core level once per shader core (about 200 MiB), and
// TLBs of at most 2^20 entries.
inline constexpr size_t kSimMaxCacheLevels = 8;
inline constexpr uint64_t kSimMaxCacheBytes = uint64_t{1} << 30;
inline constexpr uint64_t kSimMaxModelLines = uint64_t{1} << 23;
inline constexpr uint64_t kSimMaxTlbEntries = uint64_t{1} << 20;

enum class Replacement { lru, random, plru };
// Which accesses a cache serves: buffer loads/stores, image reads, or both.
enum class CachePath { load_store, texture, both };

struct CacheLevelConfig {
  std::string name;  // "L1", "texture", "L2", "SLC": a label only
  uint64_t capacity_bytes = 0;
  uint32_t line_bytes = 64;
  // What a miss fetches from the next level: the whole line, or only the
  // sector holding the address (NVIDIA's L1 tags 128 B lines but fills
  // 32 B sectors). A power of two dividing line_bytes; line_bytes when the
  // description leaves it out.
  uint32_t sector_bytes = 64;
  uint32_t associativity = 4;  // ways; capacity / line for fully associative
  Replacement replacement = Replacement::lru;
  double hit_latency_ns = 0;   // load-to-use latency of a dependent load that hits here (total)
  double bytes_per_clock = 0;  // per instance (per core when per_core, else whole cache)
  CachePath path = CachePath::both;
  bool per_core = false;  // one instance per shader core (an L1) or one shared (an L2)
  // Exclusive: the level holds only what the nearer levels on its path
  // evicted (a victim cache); a hit here moves the line nearer and drops it
  // here. Inclusive (the default): a line filled into a nearer level stays
  // here too. A dependent chase over an exclusive hierarchy keeps hitting up
  // to the sum of the capacities, this level's and the nearer ones'.
  bool exclusive = false;

  bool serves_loads() const { return path != CachePath::texture; }
  bool serves_texture() const { return path != CachePath::load_store; }
};

struct TlbConfig {
  uint32_t entries = 0;  // 0: no TLB modelled
  uint64_t page_bytes = 4096;
  uint32_t associativity = 0;  // 0: fully associative
  Replacement replacement = Replacement::lru;
  double miss_penalty_ns = 0;  // added to an access whose page misses
  uint64_t reach_bytes() const { return static_cast<uint64_t>(entries) * page_bytes; }
};

struct CoreConfig {
  uint32_t shader_cores = 1;
  uint32_t units_per_core = 1;  // execution engines / SIMDs per core
  uint32_t lanes_per_unit = 32;
  uint32_t wave_width = 32;      // work-items issued together (warp / wave / quad)
  uint32_t waves_per_unit = 16;  // waves resident per unit at full occupancy
  uint64_t register_file_bytes_per_unit = 65536;
  uint32_t register_alloc_granularity = 1;  // registers per work-item are allocated in these steps
  uint32_t max_registers_per_item = 64;
  double clock_mhz = 0;
  uint32_t workgroups_per_core = 8;  // work-groups in flight per core
  uint32_t max_work_group_size = 256;
};

struct LocalMemoryConfig {
  uint64_t bytes_per_work_group = 32768;
  bool on_chip = true;  // false: backed by ordinary memory through the load/store cache
  double latency_ns = 0;
  double bytes_per_clock = 32;                  // per core
  uint32_t workgroups_per_core_with_local = 0;  // 0: no extra limit
};

// Throughput of one operation on one type, per clock per shader core.
struct OpRate {
  std::string type;  // "float", "half", "int", "char", "double", ...
  std::string op;    // "add", "mul", "fma", "mad", "div", "sqrt", ...
  double per_clock_per_core = 0;
  double latency_ns = 0;  // dependent-chain latency of one op (0: derived from the rate)
};

struct RatesConfig {
  std::vector<OpRate> ops;
  bool dual_issue_fma_add = false;  // an FMA and an ADD can issue together
  bool fma_emulated = false;        // fma() is emulated in software
  double fma_emulated_cycles_per_wave = 0;
  double special_function_rate = 0.25;  // relative to the base FP32 rate
  bool fp64 = false;
  bool fp16 = true;
};

// Atomic operations. A round trip is one atomic whose result the next one
// depends on (a compare-and-swap ping-pong between two players); an
// uncontended add is one to a word of its own, which pipelines.
struct AtomicsConfig {
  double global_latency_ns = 0;          // round trip of a global atomic, core to L2 and back
  double local_latency_ns = 0;           // round trip of a local-memory atomic
  double global_adds_per_clock = 1;      // uncontended global atomic adds, whole device, per clock
  double contended_add_ns = 0;           // one add to a word every work-item adds to (serialised)
};

// The instruction cache of a shader core and what the code it holds costs.
struct IcacheConfig {
  uint64_t capacity_bytes = 0;     // 0: no instruction cache modelled (every body fits)
  double bytes_per_op = 8;         // code bytes of one FP32 add in a kernel body
  uint64_t base_code_bytes = 512;  // the rest of a kernel's binary
  double miss_bytes_per_clock = 8; // code refetched per clock per core once a loop does not fit
};

// Launch machinery beyond launch_overhead_us (the host's cost of one
// launch it waits for, queued to completion seen).
struct LaunchConfig {
  double dispatch_us = 0;       // queued -> start on the device's timestamps
  double back_to_back_us = 0;   // start -> start of consecutive launches in a full queue
  // Kernels ("family/entry", e.g. "sustain/fma_load") whose launches never
  // end: a hung device, so that tests see the launch bound cut them
  // (LaunchBound, LaunchTimeout). Empty in every preset.
  std::vector<std::string> endless;
};

// The image (texture) objects the device offers, sizes in pixels (16-byte
// RGBA32 pixels). Absent from a description: OpenCL 1.2's minimums for a
// device with images (65536-pixel 1D buffer images, 8192 x 8192 2D images).
struct ImagesConfig {
  uint64_t max_buffer_pixels = 65536;  // largest image1d_buffer_t; 0: none (an OpenCL 1.1 device)
  uint64_t max_2d_width = 8192, max_2d_height = 8192;
};

struct HostConfig {
  double link_bandwidth_gbps = 8;  // host<->device copies
  bool zero_copy = false;          // host-visible buffers without a copy
};

// The clock governor (DVFS and thermal limit) that sustain.cl's model runs
// under; the other families keep core.clock_mhz. Absent: the clock holds
// core.clock_mhz always. Times in the device's busy/idle timeline: busy is
// modelled launch time, idle the host's wall time between launches.
struct GovernorConfig {
  bool present = false;
  double idle_mhz = 0;          // the clock after an idle gap of idle_after_ms or more
  double ramp_ms = 0;           // busy time to climb from idle_mhz to core.clock_mhz (linear)
  double idle_after_ms = 0;     // idle gaps this long or longer drop the clock to idle_mhz
  double throttle_after_s = 0;  // heat (busy time less idle time) at which the thermal limit starts; 0: never
  double throttled_fraction = 1;  // the limited clock, of core.clock_mhz
  double throttle_ramp_s = 1;   // heat over which the clock falls from full to the limited clock
};

// A matrix engine (tensor core, matrix core, XMX): the multiply-accumulates
// it runs, each with its rate and latency. Absent from a description: none,
// and the device lists no matrix shapes.
struct MatrixUnitShape {
  std::string a, b, c, result;  // element type tags (core/matrix_chain.hpp): "f16", "bf16", "i8", "f32" ...
  uint32_t m = 16, n = 16, k = 16;
  double macs_per_clock_per_core = 0;  // multiply-adds (m x n x k per D = A x B + C) per clock per shader core
  double latency_cycles = 0;           // one D = A x B + C whose C is the previous one's D
  // What each element's dot product computes (family_matrix.cpp's
  // `numerics`); the default: exact, rounded once to the result type.
  MatrixArithmetic arithmetic;
};

struct MatrixConfig {
  std::vector<MatrixUnitShape> shapes;
};

// The walk between tiles: tiles indexed (tx, ty) over the framebuffer's grid
// of tiles. Morton and Hilbert walk the smallest power-of-two square grid
// holding it, skipping the tiles outside.
enum class TileOrder { row_major, column_major, serpentine, morton, hilbert };
// The order of a tile's fragments: pixel rows; 2x2 quads in rows of quads
// (each quad (0,0) (1,0) (0,1) (1,1)); or Morton (Z) order over the tile.
enum class FragmentOrder { row_major, row_major_quads, morton };

std::string_view tile_order_name(TileOrder o);  // "row-major", "column-major", "serpentine", "morton", "hilbert"

// The graphics pipeline (raster_model.hpp says how each value is used).
// Absent from a description: the device has no graphics (graphics() is
// nullptr). Rates are per clock of core.clock_mhz; a rate of 0 means the
// format (or filter) is not supported.
struct RasterConfig {
  bool present = false;
  // The tile at small bytes per pixel, and the on-chip memory that holds
  // one tile's attachments. A pass whose bytes per pixel (PassDesc::
  // bytes_per_pixel(): colour and depth, times samples) times the tile's
  // pixels exceed tile_memory_bytes runs with a smaller tile: the longer
  // side halved (the height when square) until it fits, each side kept a
  // multiple of its alignment. 0: the tile never shrinks.
  uint32_t tile_width_px = 16, tile_height_px = 16;
  uint64_t tile_memory_bytes = 0;
  uint32_t tile_align_width_px = 1, tile_align_height_px = 1;
  TileOrder tile_order = TileOrder::row_major;
  FragmentOrder fragment_order = FragmentOrder::row_major_quads;
  // Binning: every rectangle of a tile is shaded before the next tile
  // starts. Immediate: each rectangle across the whole screen (tile by tile,
  // in the walk order) before the next rectangle.
  bool binning = true;
  uint32_t tiles_in_flight = 1;  // tiles shaded at once (by as many cores); their tickets interleave
  double pass_overhead_ns = 0;   // a render pass's fixed cost
  double tile_overhead_clocks = 0;  // one tile's setup and resolve on its core, beyond its pixels
  // Binning only: opaque fragments hidden by a later opaque rectangle are
  // never shaded (Mali's forward pixel kill) unless the pass blends or the
  // shader has side effects or may discard.
  bool hidden_surface_removal = false;
  uint32_t rops_per_core = 1;
  std::array<double, 4> rop_pixels_per_clock{};        // per ROP, by PixelFormat
  std::array<double, 4> rop_blend_pixels_per_clock{};  // per ROP, colour formats, additive blending
  uint32_t texture_units_per_core = 1;
  std::array<double, 4> texels_per_clock{};  // filtered samples per texture unit, by TextureFilter
  // Framebuffer compression of rendered images (AFBC, UBWC): a block of
  // block_px x block_px pixels of one colour is read (and written) at
  // (1 - read_saving) of its bytes. 0: no compression.
  uint32_t fb_compression_block_px = 0;
  double fb_compression_read_saving = 0;
  bool transaction_elimination = false;  // a tile whose content is unchanged is not written again
  bool pipeline_statistics = false;
  bool fragment_side_effects = true;
  std::vector<uint32_t> sample_counts{1};
  double max_anisotropy = 0;
  uint32_t max_width = 4096, max_height = 4096;
  uint32_t max_colour_attachments = 4;
};

struct NoiseConfig {
  double relative_sigma = 0.01;       // lognormal jitter of every launch
  double outlier_probability = 0.02;  // chance a launch is disturbed
  double outlier_max_relative = 0.3;  // a disturbed launch takes up to this much longer
  uint64_t seed = 1;
};

struct SimConfig {
  std::string id_name;  // "mali-g52" or the file path the description came from
  std::string name;
  std::string vendor = "gpuscope-sim";
  CoreConfig core;
  std::vector<CacheLevelConfig> caches;  // nearest first
  TlbConfig tlb;
  double dram_latency_ns = 0;
  double dram_bandwidth_gbps = 0;
  uint64_t global_mem_bytes = 1ull << 30;
  uint64_t max_alloc_bytes = 256ull << 20;
  uint32_t address_bits = 64;
  LocalMemoryConfig local;
  RatesConfig rates;
  uint32_t divergence_granularity = 32;
  AtomicsConfig atomics;
  IcacheConfig icache;
  ImagesConfig images;
  HostConfig host;
  double launch_overhead_us = 5;
  LaunchConfig launch;
  GovernorConfig governor;
  MatrixConfig matrix;
  RasterConfig raster;
  NoiseConfig noise;
  nlohmann::json source;  // the description as given, its GPU family chain resolved (no "family" key)
  std::vector<std::string> gpu_families;  // that chain, nearest first; empty when it names none

  // Caches a buffer load (path load_store) or an image read (texture) passes
  // through, nearest first.
  std::vector<const CacheLevelConfig*> path_levels(CachePath path) const;
  double clock_ghz() const { return core.clock_mhz / 1000.0; }
};

// Parses and validates a description. Throws UsageError naming the offending
// field by its JSON path (e.g. "memory.caches[1].capacity_bytes: ...").
SimConfig parse_sim_config(const nlohmann::json& j, const std::string& id_name);

// Reads a description file; UsageError when unreadable, past
// kSimDescriptionLimits (core/json_input.hpp), invalid or past the bounds above.
SimConfig load_sim_config_file(const std::string& path);

// The same for text already read; `path` names it in messages and the id.
SimConfig parse_sim_config_text(const std::string& text, const std::string& path);

// Embedded presets: name -> JSON text.
struct SimPreset {
  std::string name;
  std::string json_text;
};
const std::vector<SimPreset>& sim_presets();
SimConfig load_sim_preset(const std::string& name);

// What a dependent pointer chase with line-spaced slots over footprints up to
// max_footprint_bytes should show on this device: the plateaus (capacity and
// latency) in order, then the latency past the last one. Ground truth for
// the recovery tests and for a person reading a sim run. A TLB whose reach is
// inside the sweep shows up as one more step (a chase cannot tell it from a
// cache); it is listed with is_tlb set.
struct ExpectedStep {
  std::string label;
  double capacity_bytes = 0;
  double latency_ns = 0;
  bool is_tlb = false;
};
struct ExpectedChase {
  std::vector<ExpectedStep> levels;
  double beyond_latency_ns = 0;  // DRAM (plus the TLB penalty when its reach is inside the sweep)
  uint32_t line_bytes = 0;       // of the first level on the path
};
// `path`: the loads' levels, or the image reads' (the texture probe's chase).
ExpectedChase expected_chase(const SimConfig& c, double max_footprint_bytes,
                             CachePath path = CachePath::load_store);

// Latency of a chase past every cache at `footprint_bytes`: DRAM plus the
// TLB penalty on the fraction of hops whose page is not held. Pages visited
// in random order under LRU are held with probability reach / footprint, so
// past the reach the curve approaches DRAM + penalty only slowly (the seeds'
// Adreno 530: 266 ns within 16 MB, > 500 ns at 256 MB).
double chase_latency_beyond_caches(const SimConfig& c, double footprint_bytes);

}  // namespace gpuscope::sim
