// Strict reading of sim descriptions: every key known, every value of the
// right type and range, levels consistent with each other. Errors name the
// field by its JSON path so a person can find it in their file.
#include "backends/sim/sim_config.hpp"

#include "backends/sim/gpu_family.hpp"

#include "core/error.hpp"
#include "core/json_input.hpp"
#include "core/printable.hpp"
#include "kernels/compute_twin.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cmath>
#include <limits>
#include <set>

namespace gpuscope::sim {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw UsageError(fmt::format("sim description: {}: {}", path, what));
}

// Reads one JSON object, remembering which keys were consumed so that
// finish() can reject the rest (a misspelt key must not be silently ignored).
class ObjectReader {
 public:
  ObjectReader(const nlohmann::json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) fail(path_.empty() ? "(top level)" : path_, "expected an object");
  }
  ~ObjectReader() = default;

  std::string child(const std::string& key) const { return json_key_path(path_, key); }
  bool has(const std::string& key) const { return j_.contains(key); }

  // A number, plain or annotated ({"value", "basis", "source"}), in [lo, hi].
  double number(const std::string& key, double lo, double hi, std::optional<double> fallback = {}) {
    const auto* v = value(key, fallback.has_value());
    if (!v) return *fallback;
    if (!v->is_number()) fail(child(key), fmt::format("expected a number, got {}", v->type_name()));
    const double x = v->get<double>();
    if (!std::isfinite(x) || x < lo || x > hi)
      fail(child(key), fmt::format("{} is outside [{}, {}]", x, lo, hi));
    return x;
  }
  uint64_t integer(const std::string& key, uint64_t lo, uint64_t hi, std::optional<uint64_t> fallback = {}) {
    const auto* v = value(key, fallback.has_value());
    if (!v) return *fallback;
    if (!v->is_number_integer()) fail(child(key), fmt::format("expected a whole number, got {}", v->dump()));
    if (v->is_number_integer() && !v->is_number_unsigned() && v->get<int64_t>() < 0)
      fail(child(key), fmt::format("{} is negative", v->get<int64_t>()));
    const uint64_t x = v->get<uint64_t>();
    if (x < lo || x > hi) fail(child(key), fmt::format("{} is outside [{}, {}]", x, lo, hi));
    return x;
  }
  bool boolean(const std::string& key, std::optional<bool> fallback = {}) {
    const auto* v = value(key, fallback.has_value());
    if (!v) return *fallback;
    if (!v->is_boolean()) fail(child(key), fmt::format("expected true or false, got {}", v->dump()));
    return v->get<bool>();
  }
  std::string string(const std::string& key, std::optional<std::string> fallback = {}) {
    const auto* v = value(key, fallback.has_value());
    if (!v) return *fallback;
    if (!v->is_string()) fail(child(key), fmt::format("expected a string, got {}", v->type_name()));
    return printable(v->get_ref<const std::string&>());
  }
  std::string choice(const std::string& key, const std::vector<std::string>& allowed,
                     std::optional<std::string> fallback = {}) {
    const std::string s = string(key, fallback);
    for (const auto& a : allowed)
      if (s == a) return s;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    fail(child(key), fmt::format("'{}' is not one of {}", printable(s), list));
  }
  // An array of whole numbers, each in [lo, hi] (the array may be annotated
  // like a number: {"value": [1, 4], "basis": ...}).
  std::vector<uint32_t> integers(const std::string& key, uint32_t lo, uint32_t hi,
                                 std::optional<std::vector<uint32_t>> fallback = {}) {
    const auto* v = value(key, fallback.has_value());
    if (!v) return *fallback;
    if (!v->is_array()) fail(child(key), fmt::format("expected an array of whole numbers, got {}", v->type_name()));
    std::vector<uint32_t> out;
    for (const auto& e : *v) {
      if (!e.is_number_integer() || (!e.is_number_unsigned() && e.get<int64_t>() < 0) || e.get<uint64_t>() < lo ||
          e.get<uint64_t>() > hi)
        fail(child(key), fmt::format("{} is not a whole number in [{}, {}]", e.dump(), lo, hi));
      out.push_back(static_cast<uint32_t>(e.get<uint64_t>()));
    }
    return out;
  }
  // A nested object or array, required unless optional.
  const nlohmann::json* raw(const std::string& key, bool optional) {
    seen_.insert(key);
    if (!j_.contains(key)) {
      if (optional) return nullptr;
      fail(child(key), "missing");
    }
    return &j_.at(key);
  }

  void finish() const {
    for (const auto& [k, v] : j_.items())
      if (!seen_.count(k)) fail(child(k), k.empty() ? "an empty key is not a field" : "unknown key");
  }

 private:
  // The plain value behind `key`, unwrapping an annotation; nullptr when
  // absent and optional.
  const nlohmann::json* value(const std::string& key, bool optional) {
    const nlohmann::json* v = raw(key, optional);
    if (!v || !v->is_object()) return v;
    ObjectReader ann(*v, child(key));
    const nlohmann::json* inner = ann.raw("value", false);
    ann.choice("basis", {"measured", "spec", "assumed", "fitted"});
    ann.string("source", "");
    ann.string("note", "");
    ann.finish();
    return inner;
  }

  const nlohmann::json& j_;
  std::string path_;
  std::set<std::string> seen_;
};

constexpr uint64_t kBigInt = uint64_t{1} << 50;

Replacement replacement_of(const std::string& s) {
  if (s == "random") return Replacement::random;
  if (s == "plru") return Replacement::plru;
  return Replacement::lru;
}

CachePath path_of(const std::string& s) {
  if (s == "load_store") return CachePath::load_store;
  if (s == "texture") return CachePath::texture;
  return CachePath::both;
}

void read_core(ObjectReader& r, CoreConfig& c) {
  c.shader_cores = static_cast<uint32_t>(r.integer("shader_cores", 1, 4096));
  c.units_per_core = static_cast<uint32_t>(r.integer("units_per_core", 1, 64));
  c.lanes_per_unit = static_cast<uint32_t>(r.integer("lanes_per_unit", 1, 1024));
  c.wave_width = static_cast<uint32_t>(r.integer("wave_width", 1, 1024));
  c.waves_per_unit = static_cast<uint32_t>(r.integer("waves_per_unit", 1, 1024));
  c.register_file_bytes_per_unit = r.integer("register_file_bytes_per_unit", 64, kBigInt);
  c.register_alloc_granularity = static_cast<uint32_t>(r.integer("register_alloc_granularity", 1, 256));
  c.max_registers_per_item = static_cast<uint32_t>(r.integer("max_registers_per_item", 1, 1024));
  c.clock_mhz = r.number("clock_mhz", 1, 10000);
  c.workgroups_per_core = static_cast<uint32_t>(r.integer("workgroups_per_core", 1, 1024));
  c.max_work_group_size = static_cast<uint32_t>(r.integer("max_work_group_size", 1, 4096));
  r.finish();
}

CacheLevelConfig read_cache(ObjectReader& r) {
  CacheLevelConfig l;
  l.name = r.string("name");
  l.capacity_bytes = r.integer("capacity_bytes", 1, kSimMaxCacheBytes);
  l.line_bytes = static_cast<uint32_t>(r.integer("line_bytes", 4, 4096));
  if (!std::has_single_bit(l.line_bytes)) fail(r.child("line_bytes"), "must be a power of two");
  l.sector_bytes = static_cast<uint32_t>(r.integer("sector_bytes", 4, 4096, l.line_bytes));
  if (!std::has_single_bit(l.sector_bytes) || l.sector_bytes > l.line_bytes)
    fail(r.child("sector_bytes"), fmt::format("{} must be a power of two no larger than line_bytes ({})",
                                              l.sector_bytes, l.line_bytes));
  if (l.line_bytes / l.sector_bytes > 64)
    fail(r.child("sector_bytes"), fmt::format("at most 64 sectors per line ({} B lines)", l.line_bytes));
  l.associativity = static_cast<uint32_t>(r.integer("associativity", 1, 1u << 24));
  l.replacement = replacement_of(r.choice("replacement", {"lru", "random", "plru"}));
  l.hit_latency_ns = r.number("hit_latency_ns", 0.01, 1e6);
  l.bytes_per_clock = r.number("bytes_per_clock", 0.01, 1e6);
  l.path = path_of(r.choice("path", {"load_store", "texture", "both"}));
  l.per_core = r.boolean("per_core", false);
  l.exclusive = r.choice("inclusion", {"inclusive", "exclusive"}, "inclusive") == "exclusive";
  r.finish();
  const uint64_t set_bytes = uint64_t{l.line_bytes} * l.associativity;
  if (l.capacity_bytes % set_bytes != 0)
    fail(r.child("capacity_bytes"), fmt::format("{} is not a whole number of sets of {} ways x {} B lines",
                                                l.capacity_bytes, l.associativity, l.line_bytes));
  if (l.replacement == Replacement::plru && !std::has_single_bit(l.associativity))
    fail(r.child("replacement"), "plru needs a power-of-two associativity");
  return l;
}

// Each path's levels must grow in capacity and latency outwards, and DRAM must
// be slower than the last of them: a description where a level is smaller or
// faster than the one before it is not a hierarchy.
void check_levels(const SimConfig& c) {
  for (CachePath p : {CachePath::load_store, CachePath::texture}) {
    const CacheLevelConfig* prev = nullptr;
    size_t prev_index = 0;
    for (size_t i = 0; i < c.caches.size(); ++i) {
      const auto& l = c.caches[i];
      if (p == CachePath::load_store ? !l.serves_loads() : !l.serves_texture()) continue;
      const std::string where = fmt::format("memory.caches[{}]", i);
      if (!prev && l.exclusive)
        fail(where + ".inclusion", "an exclusive level needs a level before it on each path it serves");
      if (prev && l.capacity_bytes <= prev->capacity_bytes)
        fail(where + ".capacity_bytes",
             fmt::format("{} B is not larger than memory.caches[{}] ({} B) before it on the same path",
                         l.capacity_bytes, prev_index, prev->capacity_bytes));
      if (prev && l.hit_latency_ns <= prev->hit_latency_ns)
        fail(where + ".hit_latency_ns",
             fmt::format("{} ns is not slower than memory.caches[{}] ({} ns) before it on the same path",
                         l.hit_latency_ns, prev_index, prev->hit_latency_ns));
      if (prev && l.line_bytes < prev->line_bytes)
        fail(where + ".line_bytes", "lines must not shrink outwards");
      prev = &l;
      prev_index = i;
    }
    if (prev && c.dram_latency_ns <= prev->hit_latency_ns)
      fail("memory.dram.latency_ns", fmt::format("{} ns is not slower than memory.caches[{}] ({} ns)",
                                                 c.dram_latency_ns, prev_index, prev->hit_latency_ns));
  }
}

// The cache model keeps every line of every cache instance it creates (a
// per-core level once per shader core), about 24 bytes each.
void check_model_size(const SimConfig& c) {
  uint64_t lines = 0;
  for (const auto& l : c.caches)
    lines += l.capacity_bytes / l.line_bytes * (l.per_core ? c.core.shader_cores : 1);
  if (lines > kSimMaxModelLines)
    fail("memory.caches",
         fmt::format(
             "{} cache lines in all (a per-core level counted once per shader core); the sim models at "
             "most {} (about {} MiB of host memory)",
             lines, kSimMaxModelLines, (kSimMaxModelLines * 24) >> 20));
}

// The raster section (RasterConfig). Rates by format or filter are objects
// keyed by the names findings use ("rgba8", "bilinear"); a key left out is
// a format or filter the device lacks.
// matrix.shapes[].arithmetic: core/matrix_arithmetic.hpp states each field.
MatrixArithmetic read_arithmetic(const nlohmann::json& j, const std::string& path) {
  ObjectReader r(j, path);
  const auto pick = [&](const char* key, auto from, const std::vector<std::string>& names) {
    return *from(r.choice(key, names, names.front()));
  };
  MatrixArithmetic a;
  a.products = pick("products", matrix_products_from, {"exact", "input", "accumulator"});
  a.sum_bits = static_cast<int>(r.integer("sum_bits", 0, kMatrixMaxSumBits, 0));
  a.sum_rounding = pick("sum_rounding", matrix_rounding_from, {"nearest-even", "toward-zero"});
  a.alignment = pick("alignment", matrix_alignment_from, {"exact", "truncate"});
  a.block = static_cast<uint32_t>(r.integer("block", 0, 256, 0));
  a.order = pick("order", matrix_order_from, {"fused", "pairwise"});
  a.result_rounding = pick("result_rounding", matrix_rounding_from, {"nearest-even", "toward-zero"});
  a.subnormal_inputs = r.boolean("subnormal_inputs", true);
  a.subnormal_outputs = r.boolean("subnormal_outputs", true);
  a.overflow = pick("overflow", matrix_overflow_from, {"infinity", "saturate"});
  a.integer_overflow = pick("integer_overflow", matrix_integer_overflow_from, {"wrap", "saturate"});
  r.finish();
  return a;
}

void read_raster(ObjectReader& r, const SimConfig& c, RasterConfig& g) {
  g.present = true;
  g.tile_width_px = static_cast<uint32_t>(r.integer("tile_width_px", 1, 4096));
  g.tile_height_px = static_cast<uint32_t>(r.integer("tile_height_px", 1, 4096));
  g.tile_memory_bytes = r.integer("tile_memory_bytes", 0, uint64_t{1} << 32, 0);
  g.tile_align_width_px = static_cast<uint32_t>(r.integer("tile_align_width_px", 1, 4096, 1));
  g.tile_align_height_px = static_cast<uint32_t>(r.integer("tile_align_height_px", 1, 4096, 1));
  const std::string order =
      r.choice("tile_order", {"row-major", "column-major", "serpentine", "morton", "hilbert"});
  g.tile_order = order == "column-major" ? TileOrder::column_major
                 : order == "serpentine" ? TileOrder::serpentine
                 : order == "morton"     ? TileOrder::morton
                 : order == "hilbert"    ? TileOrder::hilbert
                                         : TileOrder::row_major;
  const std::string frag = r.choice("fragment_order", {"row-major", "row-major-quads", "morton"}, "row-major-quads");
  g.fragment_order = frag == "row-major"   ? FragmentOrder::row_major
                     : frag == "morton"    ? FragmentOrder::morton
                                           : FragmentOrder::row_major_quads;
  g.binning = r.boolean("binning");
  g.tiles_in_flight = static_cast<uint32_t>(r.integer("tiles_in_flight", 1, 4096, c.core.shader_cores));
  g.pass_overhead_ns = r.number("pass_overhead_ns", 0, 1e9, c.launch.back_to_back_us * 1e3);
  g.tile_overhead_clocks = r.number("tile_overhead_clocks", 0, 1e6, 0);
  g.hidden_surface_removal = r.boolean("hidden_surface_removal", false);
  g.rops_per_core = static_cast<uint32_t>(r.integer("rops_per_core", 1, 1024));
  {
    ObjectReader o(*r.raw("rop_pixels_per_clock", false), r.child("rop_pixels_per_clock"));
    for (PixelFormat f : {PixelFormat::kRgba8, PixelFormat::kRgba16f, PixelFormat::kRgba32f, PixelFormat::kDepth32f})
      g.rop_pixels_per_clock[static_cast<size_t>(f)] = o.number(std::string(format_name(f)), 1e-3, 1e4, 0.0);
    o.finish();
    if (g.rop_pixels_per_clock[static_cast<size_t>(PixelFormat::kRgba8)] == 0)
      fail(r.child("rop_pixels_per_clock"), "needs rgba8 (frames and the default pass render RGBA8)");
  }
  // Absent: each colour format blends at its write rate.
  g.rop_blend_pixels_per_clock = g.rop_pixels_per_clock;
  g.rop_blend_pixels_per_clock[static_cast<size_t>(PixelFormat::kDepth32f)] = 0;
  if (const auto* b = r.raw("rop_blend_pixels_per_clock", true)) {
    const std::string where = r.child("rop_blend_pixels_per_clock");
    ObjectReader o(*b, where);
    for (PixelFormat f : {PixelFormat::kRgba8, PixelFormat::kRgba16f, PixelFormat::kRgba32f}) {
      const size_t i = static_cast<size_t>(f);
      const std::string key(format_name(f));
      if (!o.has(key)) continue;
      if (g.rop_pixels_per_clock[i] == 0)
        fail(json_key_path(where, key), "a blend rate for a format rop_pixels_per_clock does not list");
      g.rop_blend_pixels_per_clock[i] = o.number(key, 1e-3, 1e4);
    }
    o.finish();
  }
  g.texture_units_per_core = static_cast<uint32_t>(r.integer("texture_units_per_core", 1, 1024));
  g.max_anisotropy = r.number("max_anisotropy", 0, 16, 0);
  if (g.max_anisotropy > 0 && g.max_anisotropy < 1)
    fail(r.child("max_anisotropy"), "is 0 (none) or from 1 to 16");
  {
    const std::string where = r.child("texels_per_clock");
    ObjectReader o(*r.raw("texels_per_clock", false), where);
    for (TextureFilter f : {TextureFilter::kPoint, TextureFilter::kBilinear, TextureFilter::kTrilinear}) {
      g.texels_per_clock[static_cast<size_t>(f)] = o.number(std::string(filter_name(f)), 1e-4, 1e4);
    }
    const size_t aniso = static_cast<size_t>(TextureFilter::kAniso);
    if (g.max_anisotropy > 0) {
      g.texels_per_clock[aniso] = o.number("aniso", 1e-4, 1e4);
    } else if (o.has("aniso")) {
      fail(json_key_path(where, "aniso"), "a rate for anisotropic filtering, but max_anisotropy is 0 (none)");
    }
    o.finish();
  }
  if (const auto* fc = r.raw("fb_compression", true)) {
    const std::string where = r.child("fb_compression");
    ObjectReader o(*fc, where);
    g.fb_compression_block_px = static_cast<uint32_t>(o.integer("block_px", 1, 256));
    g.fb_compression_read_saving = o.number("read_saving", 0.01, 0.99);
    o.finish();
  }
  g.transaction_elimination = r.boolean("transaction_elimination", false);
  g.pipeline_statistics = r.boolean("pipeline_statistics", false);
  g.fragment_side_effects = r.boolean("fragment_side_effects", true);
  g.sample_counts = r.integers("sample_counts", 1, 64, std::vector<uint32_t>{1});
  for (size_t i = 0; i < g.sample_counts.size(); ++i) {
    const uint32_t n = g.sample_counts[i];
    if (!std::has_single_bit(n)) fail(r.child("sample_counts"), fmt::format("{} is not a power of two", n));
    if (i > 0 && n <= g.sample_counts[i - 1]) fail(r.child("sample_counts"), "must rise strictly");
  }
  if (g.sample_counts.empty() || g.sample_counts.front() != 1) fail(r.child("sample_counts"), "must start with 1");
  g.max_width = static_cast<uint32_t>(r.integer("max_width", 1, 65536, 4096));
  g.max_height = static_cast<uint32_t>(r.integer("max_height", 1, 65536, 4096));
  g.max_colour_attachments = static_cast<uint32_t>(r.integer("max_colour_attachments", 1, 8, 4));
  r.finish();
  if (g.tile_width_px % g.tile_align_width_px != 0)
    fail(r.child("tile_width_px"),
         fmt::format("{} px is not a multiple of tile_align_width_px ({})", g.tile_width_px, g.tile_align_width_px));
  if (g.tile_height_px % g.tile_align_height_px != 0)
    fail(r.child("tile_height_px"), fmt::format("{} px is not a multiple of tile_align_height_px ({})",
                                                g.tile_height_px, g.tile_align_height_px));
  // The tile must hold the default pass (one RGBA8 attachment) at its
  // smallest size, or no pass could run.
  const uint64_t smallest = uint64_t{g.tile_align_width_px} * g.tile_align_height_px;
  if (g.tile_memory_bytes > 0 && smallest * pixel_bytes(PixelFormat::kRgba8) > g.tile_memory_bytes)
    fail(r.child("tile_memory_bytes"),
         fmt::format("{} B does not hold one RGBA8 tile of the smallest aligned size ({} x {} px)",
                     g.tile_memory_bytes, g.tile_align_width_px, g.tile_align_height_px));
}

}  // namespace

std::vector<const CacheLevelConfig*> SimConfig::path_levels(CachePath path) const {
  std::vector<const CacheLevelConfig*> out;
  for (const auto& l : caches)
    if (path == CachePath::texture ? l.serves_texture() : l.serves_loads()) out.push_back(&l);
  return out;
}

std::string_view tile_order_name(TileOrder o) {
  switch (o) {
    case TileOrder::row_major: return "row-major";
    case TileOrder::column_major: return "column-major";
    case TileOrder::serpentine: return "serpentine";
    case TileOrder::morton: return "morton";
    case TileOrder::hilbert: return "hilbert";
  }
  return "?";
}

namespace {

// The strict reading of a description whose family chain is resolved.
SimConfig read_resolved(ResolvedDescription resolved, const std::string& id_name) {
  SimConfig c;
  c.id_name = id_name;
  c.source = std::move(resolved.description);
  c.gpu_families = std::move(resolved.families);
  const nlohmann::json& j = c.source;
  ObjectReader top(j, "");
  top.raw("comment", true);  // free text for people; any JSON
  top.raw("sources", true);  // where the numbers come from; any JSON
  c.name = top.string("name");
  c.vendor = top.string("vendor", "gpuscope-sim");

  {
    ObjectReader r(*top.raw("core", false), "core");
    read_core(r, c.core);
  }
  {
    ObjectReader m(*top.raw("memory", false), "memory");
    const auto* caches = m.raw("caches", false);
    if (!caches->is_array()) fail("memory.caches", "expected an array");
    if (caches->size() > kSimMaxCacheLevels)
      fail("memory.caches",
           fmt::format("{} levels; the sim models at most {}", caches->size(), kSimMaxCacheLevels));
    for (size_t i = 0; i < caches->size(); ++i) {
      ObjectReader r((*caches)[i], fmt::format("memory.caches[{}]", i));
      c.caches.push_back(read_cache(r));
    }
    if (const auto* t = m.raw("tlb", true)) {
      ObjectReader r(*t, "memory.tlb");
      c.tlb.entries = static_cast<uint32_t>(r.integer("entries", 1, kSimMaxTlbEntries));
      c.tlb.page_bytes = r.integer("page_bytes", 256, uint64_t{1} << 32);
      if (!std::has_single_bit(c.tlb.page_bytes)) fail("memory.tlb.page_bytes", "must be a power of two");
      c.tlb.associativity = static_cast<uint32_t>(r.integer("associativity", 0, 1u << 24, 0));
      c.tlb.replacement = replacement_of(r.choice("replacement", {"lru", "random", "plru"}, "lru"));
      c.tlb.miss_penalty_ns = r.number("miss_penalty_ns", 0, 1e6);
      r.finish();
      const uint32_t ways = c.tlb.associativity ? c.tlb.associativity : c.tlb.entries;
      if (c.tlb.entries % ways != 0) fail("memory.tlb.associativity", "entries must be a multiple of it");
    }
    {
      ObjectReader r(*m.raw("dram", false), "memory.dram");
      c.dram_latency_ns = r.number("latency_ns", 0.01, 1e6);
      c.dram_bandwidth_gbps = r.number("bandwidth_gbps", 0.001, 1e6);
      r.finish();
    }
    c.global_mem_bytes = m.integer("global_mem_bytes", 1 << 20, kBigInt);
    c.max_alloc_bytes = m.integer("max_alloc_bytes", 1 << 16, kBigInt);
    c.address_bits = static_cast<uint32_t>(m.integer("address_bits", 32, 64, 64));
    if (c.address_bits != 32 && c.address_bits != 64) fail("memory.address_bits", "must be 32 or 64");
    m.finish();
    if (c.max_alloc_bytes > c.global_mem_bytes)
      fail("memory.max_alloc_bytes", "is larger than memory.global_mem_bytes");
    if (c.address_bits == 32 && c.global_mem_bytes > (uint64_t{1} << 32))
      fail("memory.global_mem_bytes", "does not fit 32-bit addresses");
  }
  if (const auto* l = top.raw("local_memory", true)) {
    ObjectReader r(*l, "local_memory");
    c.local.bytes_per_work_group = r.integer("bytes_per_work_group", 0, kBigInt);
    c.local.on_chip = r.choice("location", {"on_chip", "load_store_cache"}) == "on_chip";
    c.local.latency_ns = r.number("latency_ns", 0.01, 1e6);
    c.local.bytes_per_clock = r.number("bytes_per_clock", 0.01, 1e6);
    c.local.workgroups_per_core_with_local =
        static_cast<uint32_t>(r.integer("workgroups_per_core_with_local", 0, 1024, 0));
    r.finish();
  }
  if (const auto* rt = top.raw("rates", true)) {
    ObjectReader r(*rt, "rates");
    if (const auto* ops = r.raw("ops", true)) {
      if (!ops->is_array()) fail("rates.ops", "expected an array");
      for (size_t i = 0; i < ops->size(); ++i) {
        ObjectReader o((*ops)[i], fmt::format("rates.ops[{}]", i));
        OpRate op;
        op.type = o.choice("type", {"char", "short", "int", "long", "half", "float", "double"});
        // Only the ops the compute models look up (compute_twin's table): a
        // rate under any other name would never be read.
        static const std::vector<std::string> known_ops = [] {
          std::vector<std::string> names;
          for (const compute_twin::Op& k : compute_twin::ops()) names.emplace_back(k.name);
          return names;
        }();
        op.op = o.choice("op", known_ops);
        op.per_clock_per_core = o.number("per_clock_per_core", 1e-6, 1e6);
        op.latency_ns = o.number("latency_ns", 0, 1e6, 0);
        o.finish();
        c.rates.ops.push_back(op);
      }
    }
    c.rates.dual_issue_fma_add = r.boolean("dual_issue_fma_add", false);
    c.rates.fma_emulated = r.boolean("fma_emulated", false);
    c.rates.fma_emulated_cycles_per_wave = r.number("fma_emulated_cycles_per_wave", 0, 1e6, 0);
    c.rates.special_function_rate = r.number("special_function_rate", 1e-4, 1, 0.25);
    c.rates.fp64 = r.boolean("fp64", false);
    c.rates.fp16 = r.boolean("fp16", true);
    r.finish();
  }
  // Atomics. Absent: a global round trip costs the first shared level's hit
  // latency (where GPUs execute global atomics), a local one the local
  // memory's latency, uncontended adds run one per core per clock and a
  // contended add costs 4 clocks at the shared level.
  {
    const auto loads = c.path_levels(CachePath::load_store);
    const CacheLevelConfig* shared = nullptr;
    for (const auto* l : loads)
      if (!l->per_core) {
        shared = l;
        break;
      }
    const double global_default = shared ? shared->hit_latency_ns : c.dram_latency_ns;
    const double local_default = c.local.latency_ns > 0 ? c.local.latency_ns : loads.front()->hit_latency_ns;
    const double clock_ns = 1e3 / c.core.clock_mhz;
    if (const auto* a = top.raw("atomics", true)) {
      ObjectReader r(*a, "atomics");
      c.atomics.global_latency_ns = r.number("global_latency_ns", 0.01, 1e6, global_default);
      c.atomics.local_latency_ns = r.number("local_latency_ns", 0.01, 1e6, local_default);
      c.atomics.global_adds_per_clock = r.number("global_adds_per_clock", 1e-3, 1e6, c.core.shader_cores);
      c.atomics.contended_add_ns = r.number("contended_add_ns", 0.01, 1e6, 4 * clock_ns);
      r.finish();
    } else {
      c.atomics = {global_default, local_default, static_cast<double>(c.core.shader_cores), 4 * clock_ns};
    }
  }
  if (const auto* ic = top.raw("icache", true)) {
    ObjectReader r(*ic, "icache");
    c.icache.capacity_bytes = r.integer("capacity_bytes", 256, kBigInt);
    c.icache.bytes_per_op = r.number("bytes_per_op", 0.5, 64, 8);
    c.icache.base_code_bytes = r.integer("base_code_bytes", 0, kBigInt, 512);
    c.icache.miss_bytes_per_clock = r.number("miss_bytes_per_clock", 0.01, 1e6, 8);
    r.finish();
  }
  if (const auto* im = top.raw("images", true)) {
    ObjectReader r(*im, "images");
    c.images.max_buffer_pixels = r.integer("max_buffer_pixels", 0, uint64_t{1} << 32);
    c.images.max_2d_width = r.integer("max_2d_width", 1, 1u << 20);
    c.images.max_2d_height = r.integer("max_2d_height", 1, 1u << 20);
    r.finish();
  }
  // Absent: lanes diverge at the wave, the common case.
  c.divergence_granularity =
      static_cast<uint32_t>(top.integer("divergence_granularity", 1, 1024, c.core.wave_width));
  if (const auto* h = top.raw("host", true)) {
    ObjectReader r(*h, "host");
    c.host.link_bandwidth_gbps = r.number("link_bandwidth_gbps", 1e-3, 1e6);
    c.host.zero_copy = r.boolean("zero_copy");
    r.finish();
  }
  c.launch_overhead_us = top.number("launch_overhead_us", 0, 1e6, 5);
  // Launch timestamps. Absent: half the host's overhead passes before the
  // kernel starts, and a full queue starts one launch every fifth of it.
  if (const auto* la = top.raw("launch", true)) {
    ObjectReader r(*la, "launch");
    c.launch.dispatch_us = r.number("dispatch_us", 0, 1e6, c.launch_overhead_us / 2);
    c.launch.back_to_back_us = r.number("back_to_back_us", 0, 1e6, c.launch_overhead_us / 5);
    if (const auto* e = r.raw("endless", true)) {
      if (!e->is_array()) fail("launch.endless", fmt::format("expected an array of kernel names, got {}", e->type_name()));
      for (size_t i = 0; i < e->size(); ++i) {
        const auto& name = (*e)[i];
        if (!name.is_string() || name.get_ref<const std::string&>().find('/') == std::string::npos)
          fail(fmt::format("launch.endless[{}]", i),
               fmt::format("expected a kernel name \"family/entry\" (e.g. \"sustain/fma_load\"), got {}",
                           printable(name.dump())));
        c.launch.endless.push_back(name.get<std::string>());
      }
    }
    r.finish();
    if (c.launch.dispatch_us > c.launch_overhead_us)
      fail("launch.dispatch_us", fmt::format("{} us is more than launch_overhead_us ({} us), the whole round trip",
                                             c.launch.dispatch_us, c.launch_overhead_us));
  } else {
    c.launch.dispatch_us = c.launch_overhead_us / 2;
    c.launch.back_to_back_us = c.launch_overhead_us / 5;
  }
  if (const auto* g = top.raw("governor", true)) {
    ObjectReader r(*g, "governor");
    c.governor.present = true;
    c.governor.idle_mhz = r.number("idle_mhz", 1, 10000);
    c.governor.ramp_ms = r.number("ramp_ms", 0, 1e6);
    c.governor.idle_after_ms = r.number("idle_after_ms", 0, 1e6);
    c.governor.throttle_after_s = r.number("throttle_after_s", 0, 1e6, 0);
    c.governor.throttled_fraction = r.number("throttled_fraction", 0.05, 1, 1);
    c.governor.throttle_ramp_s = r.number("throttle_ramp_s", 0.001, 1e6, 1);
    r.finish();
    if (c.governor.idle_mhz > c.core.clock_mhz)
      fail("governor.idle_mhz", fmt::format("{} MHz is above core.clock_mhz ({} MHz)", c.governor.idle_mhz,
                                            c.core.clock_mhz));
  }
  if (const auto* mx = top.raw("matrix", true)) {
    ObjectReader r(*mx, "matrix");
    const auto* shapes = r.raw("shapes", false);
    if (!shapes->is_array()) fail("matrix.shapes", "expected an array");
    for (size_t i = 0; i < shapes->size(); ++i) {
      const std::string where = fmt::format("matrix.shapes[{}]", i);
      ObjectReader o((*shapes)[i], where);
      MatrixUnitShape u;
      const std::vector<std::string> types = {"f16", "bf16", "f32", "f64", "i8", "u8", "i32", "u32", "f8e4m3", "f8e5m2"};
      u.a = o.choice("a", types);
      u.b = o.choice("b", types);
      u.c = o.choice("c", types);
      u.result = o.choice("result", types, u.c);
      u.m = static_cast<uint32_t>(o.integer("m", 1, 256));
      u.n = static_cast<uint32_t>(o.integer("n", 1, 256));
      u.k = static_cast<uint32_t>(o.integer("k", 1, 256));
      u.macs_per_clock_per_core = o.number("macs_per_clock_per_core", 1e-3, 1e6);
      u.latency_cycles = o.number("latency_cycles", 1, 1e5);
      if (const auto* ar = o.raw("arithmetic", true)) u.arithmetic = read_arithmetic(*ar, where + ".arithmetic");
      o.finish();
      for (const auto& prev : c.matrix.shapes)
        if (prev.a == u.a && prev.b == u.b && prev.c == u.c && prev.result == u.result && prev.m == u.m &&
            prev.n == u.n && prev.k == u.k)
          fail(where, "lists the same types and shape as an earlier entry");
      c.matrix.shapes.push_back(u);
    }
    r.finish();
  }
  if (const auto* ra = top.raw("raster", true)) {
    ObjectReader r(*ra, "raster");
    read_raster(r, c, c.raster);
  }
  if (const auto* n = top.raw("noise", true)) {
    ObjectReader r(*n, "noise");
    c.noise.relative_sigma = r.number("relative_sigma", 0, 0.5, 0.01);
    c.noise.outlier_probability = r.number("outlier_probability", 0, 1, 0.02);
    c.noise.outlier_max_relative = r.number("outlier_max_relative", 0, 10, 0.3);
    c.noise.seed = r.integer("seed", 0, std::numeric_limits<uint64_t>::max(), 1);
    r.finish();
  }
  top.finish();

  if (c.caches.empty()) fail("memory.caches", "needs at least one level");
  if (c.path_levels(CachePath::load_store).empty())
    fail("memory.caches", "no level serves buffer loads (path load_store or both)");
  if (c.core.wave_width % c.core.lanes_per_unit != 0 && c.core.lanes_per_unit % c.core.wave_width != 0)
    fail("core.wave_width", "must be a multiple or a divisor of core.lanes_per_unit");
  if (c.divergence_granularity > c.core.wave_width)
    fail("divergence_granularity", "is larger than core.wave_width");
  if (c.core.max_work_group_size > c.core.waves_per_unit * c.core.units_per_core * c.core.wave_width)
    fail("core.max_work_group_size", "exceeds the work-items one core can hold (waves x units x width)");
  check_levels(c);
  check_model_size(c);
  return c;
}

}  // namespace

SimConfig parse_sim_config(const nlohmann::json& j, const std::string& id_name) {
  ResolvedDescription resolved = resolve_gpu_family(j);
  if (resolved.families.empty()) return read_resolved(std::move(resolved), id_name);
  // A field the message names may come from a family file: say which chain.
  const std::string chain = fmt::format("{}", fmt::join(resolved.families, " -> "));
  try {
    return read_resolved(std::move(resolved), id_name);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{} (the description over GPU family {})", e.what(), chain));
  }
}

SimConfig load_sim_config_file(const std::string& path) {
  return parse_sim_config_text(read_input_file(path, "sim description", kSimDescriptionLimits.max_bytes),
                               path);
}

SimConfig parse_sim_config_text(const std::string& text, const std::string& path) {
  nlohmann::json j;
  try {
    j = parse_json_input(text, kSimDescriptionLimits.max_depth);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("sim description '{}' is not valid JSON: {}", path, e.what()));
  }
  try {
    return parse_sim_config(j, path);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{} (in {})", e.what(), path));
  }
}

SimConfig load_sim_preset(const std::string& name) {
  for (const auto& p : sim_presets())
    if (p.name == name) return parse_sim_config(nlohmann::json::parse(p.json_text), name);
  std::string list;
  for (const auto& p : sim_presets()) list += " " + p.name;
  throw UsageError(fmt::format("unknown sim preset '{}'; presets:{}", name, list));
}

ExpectedChase expected_chase(const SimConfig& c, double max_footprint_bytes, CachePath path) {
  ExpectedChase e;
  const auto levels = c.path_levels(path);
  e.line_bytes = levels.empty() ? 0 : levels.front()->line_bytes;
  const double reach = static_cast<double>(c.tlb.reach_bytes());
  const bool tlb_step = c.tlb.entries > 0 && c.tlb.miss_penalty_ns > 0 && reach < max_footprint_bytes;
  for (const auto* l : levels) {
    // A level is visible only where the chase fits in it and in the TLB.
    if (tlb_step && static_cast<double>(l->capacity_bytes) > reach) break;
    e.levels.push_back({l->name, static_cast<double>(l->capacity_bytes), l->hit_latency_ns, false});
  }
  if (tlb_step) {
    const bool beyond_caches = e.levels.size() == levels.size();
    // Past the last visible level but inside the TLB's reach, loads go to
    // DRAM (or the next cache) without translation misses.
    double lat = c.dram_latency_ns;
    if (!beyond_caches) lat = levels[e.levels.size()]->hit_latency_ns;
    e.levels.push_back({"tlb", reach, lat, true});
    e.beyond_latency_ns = c.dram_latency_ns + c.tlb.miss_penalty_ns;
  } else {
    e.beyond_latency_ns = c.dram_latency_ns;
  }
  return e;
}

double chase_latency_beyond_caches(const SimConfig& c, double footprint_bytes) {
  if (c.tlb.entries == 0) return c.dram_latency_ns;
  const double held = std::min(1.0, static_cast<double>(c.tlb.reach_bytes()) / footprint_bytes);
  return c.dram_latency_ns + (1 - held) * c.tlb.miss_penalty_ns;
}

}  // namespace gpuscope::sim
