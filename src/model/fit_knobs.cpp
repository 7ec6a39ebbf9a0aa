// The fit's knobs (fit_knobs.hpp).
#include "model/fit_knobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

namespace gpuscope::model::fit_detail {
namespace {

// The x a knob of a cache level moves, around its capacity: from half of
// it (a random or pseudo-LRU level loses hits before it is full) to four
// times it (an exclusive level keeps hitting up to the sum of the levels,
// a random one goes on hitting in part).
constexpr double kKneeBelow = 2.0;
constexpr double kKneeAbove = 4.0;
// A level's plateau: its points at least this factor from both of its
// ends, where only its hit latency sets the chase.
constexpr double kPlateauMargin = 1.5;

}  // namespace

json value_at(const json& d, const Pointer& at) {
  if (!d.contains(at)) return nullptr;
  const json& v = d.at(at);
  return v.is_object() && v.contains("value") ? v["value"] : v;
}

void set_value(json& d, const Pointer& at, const json& v) {
  if (d.contains(at) && d.at(at).is_object() && d.at(at).contains("value"))
    d.at(at)["value"] = v;
  else
    d[at] = v;
}

double number_at(const json& d, const Pointer& at, double otherwise) {
  const json v = value_at(d, at);
  return v.is_number() ? v.get<double>() : otherwise;
}

void whole_sets(json& d) {
  if (d.contains("/memory/caches"_json_pointer))
    for (size_t i = 0; i < d["memory"]["caches"].size(); ++i) {
      const Pointer c = Pointer("/memory/caches") / i;
      const double line = number_at(d, c / "line_bytes", 64), ways = number_at(d, c / "associativity", 1);
      const double set = std::max(1.0, line * ways);
      const double cap = number_at(d, c / "capacity_bytes");
      const double sets = std::max(1.0, std::round(cap / set));
      if (sets * set != cap) set_value(d, c / "capacity_bytes", static_cast<uint64_t>(sets * set));
    }
  if (d.contains("/memory/tlb"_json_pointer)) {
    const Pointer t("/memory/tlb");
    const double entries = number_at(d, t / "entries", 1), ways = number_at(d, t / "associativity", 0);
    if (ways > 0) {
      const double sets = std::max(1.0, std::round(entries / ways));
      if (sets * ways != entries) set_value(d, t / "entries", static_cast<uint64_t>(sets * ways));
    }
  }
}


void keep_fully_associative(json& d, const Pointer& capacity, double was) {
  const Pointer level = capacity.parent_pointer();
  const double line = number_at(d, level / "line_bytes", 64), ways = number_at(d, level / "associativity", 1);
  if (!(line > 0) || ways * line != was) return;
  const double lines = std::max(1.0, std::round(number_at(d, capacity) / line));
  set_value(d, level / "associativity", static_cast<uint64_t>(lines));
  set_value(d, capacity, static_cast<uint64_t>(lines * line));
}

namespace {

// A knob of `kind` on `field` at `at`, moving the points in [x_lo, x_hi].
Knob knob(Knob::Kind kind, std::string field, Pointer at, double x_lo, double x_hi) {
  Knob k;
  k.field = std::move(field);
  k.at = std::move(at);
  k.kind = kind;
  k.x_lo = x_lo;
  k.x_hi = x_hi;
  return k;
}

Knob scale_knob(std::string field, Pointer at, double first_step, double last_step, bool integer, double x_lo,
                double x_hi = kInf) {
  Knob k = knob(Knob::scale, std::move(field), std::move(at), x_lo, x_hi);
  k.first_step = first_step;
  k.last_step = last_step;
  k.integer = integer;
  return k;
}

Knob choice_knob(std::string field, Pointer at, std::vector<json> alternatives, double x_lo = 0, double x_hi = kInf) {
  Knob k = knob(Knob::choice, std::move(field), std::move(at), x_lo, x_hi);
  k.alternatives = std::move(alternatives);
  return k;
}

// `plateau_*`: the points only the value sets; `x_*`: the points it moves.
Knob plateau_knob(std::string field, Pointer at, double plateau_lo, double plateau_hi, double x_lo, double x_hi) {
  Knob k = knob(Knob::plateau, std::move(field), std::move(at), x_lo, x_hi);
  k.plateau_lo = plateau_lo;
  k.plateau_hi = plateau_hi;
  return k;
}

std::string cache_field(size_t i, const char* name) { return fmt::format("memory.caches[{}].{}", i, name); }

bool is_spec(const json& d, const Pointer& at) {
  return d.contains(at) && d.at(at).is_object() && d.at(at).value("basis", "") == "spec";
}

// Ways a level of `lines` lines could have: the common counts, and fully
// associative.
std::vector<json> way_alternatives(double lines, double current, bool tlb) {
  std::vector<json> out;
  for (double w : {4.0, 8.0, 16.0, 32.0, 64.0})
    if (w < lines && w != current && std::fmod(lines, w) == 0) out.push_back(static_cast<uint64_t>(w));
  const double full = tlb ? 0 : lines;
  if (full != current && lines >= 1) out.push_back(static_cast<uint64_t>(full));
  return out;
}

std::vector<json> replacement_alternatives(const std::string& current, double ways) {
  std::vector<json> out;
  for (const char* r : {"lru", "plru", "random"}) {
    if (r == current) continue;
    if (std::string(r) == "plru" && !std::has_single_bit(static_cast<uint64_t>(std::max(1.0, ways)))) continue;
    out.push_back(r);
  }
  return out;
}

// The load path's levels, nearest first, as indices into memory.caches.
std::vector<size_t> load_levels(const json& d) {
  std::vector<size_t> out;
  if (!d.contains("/memory/caches"_json_pointer)) return out;
  const json& caches = d["memory"]["caches"];
  for (size_t i = 0; i < caches.size(); ++i) {
    const std::string path = caches[i].value("path", "load_store");
    if (path == "load_store" || path == "both") out.push_back(i);
  }
  return out;
}

// The TLB's shape (replacement, ways) where `shape`, then its reach and
// penalty: a shape that explains a curve's form is tried before a number
// bends to it.
void tlb_knobs(const json& d, std::vector<Knob>& out, double x_lo, bool shape) {
  const Pointer t("/memory/tlb");
  if (!d.contains(t)) return;
  const double entries = number_at(d, t / "entries", 1), ways = number_at(d, t / "associativity", 0);
  if (shape) {
    // The page, at the reach measured: entries follow it (keep_reach).
    std::vector<json> pages;
    const double page = number_at(d, t / "page_bytes", 65536);
    for (double p : {4096.0, 16384.0, 65536.0, 2097152.0})
      if (p != page && entries * page / p >= 1) pages.push_back(static_cast<uint64_t>(p));
    if (!is_spec(d, t / "page_bytes")) {
      Knob k = choice_knob("memory.tlb.page_bytes", t / "page_bytes", pages, x_lo);
      k.keep_reach = true;
      out.push_back(k);
    }
    const std::string repl = value_at(d, t / "replacement").is_string()
                                 ? value_at(d, t / "replacement").get<std::string>()
                                 : "lru";
    out.push_back(choice_knob("memory.tlb.replacement", t / "replacement",
                              replacement_alternatives(repl, ways > 0 ? ways : entries), x_lo));
    out.push_back(
        choice_knob("memory.tlb.associativity", t / "associativity", way_alternatives(entries, ways, true), x_lo));
  }
  if (!is_spec(d, t / "entries")) out.push_back(scale_knob("memory.tlb.entries", t / "entries", 2.0, 1.1, true, x_lo));
  if (!is_spec(d, t / "miss_penalty_ns"))
    out.push_back(scale_knob("memory.tlb.miss_penalty_ns", t / "miss_penalty_ns", 1.3, 1.02, false, x_lo));
}

// The latency chase: each load level's hit latency (from its plateau),
// its shape (replacement, ways, inclusion), then its capacity (a shape
// that explains a knee's form is tried before the reader's capacity bends
// to it); DRAM's latency. The
// TLB, which the chase meets past its reach, is the strides' to fit: they
// see it first, at a fraction of the chase's footprints and cost.
std::vector<Knob> latency_knobs(const json& d) {
  std::vector<Knob> out;
  const auto levels = load_levels(d);
  double before = 0;
  for (size_t n = 0; n < levels.size(); ++n) {
    const size_t i = levels[n];
    const Pointer c = Pointer("/memory/caches") / i;
    const double cap = number_at(d, c / "capacity_bytes"), line = number_at(d, c / "line_bytes", 64);
    const double ways = number_at(d, c / "associativity", 1);
    const double lo = before / kKneeBelow, hi = cap * kKneeAbove;
    out.push_back(plateau_knob(cache_field(i, "hit_latency_ns"), c / "hit_latency_ns", before * kPlateauMargin,
                               cap / kPlateauMargin, lo, hi));
    const std::string repl = value_at(d, c / "replacement").is_string()
                                 ? value_at(d, c / "replacement").get<std::string>()
                                 : "lru";
    out.push_back(choice_knob(cache_field(i, "replacement"), c / "replacement", replacement_alternatives(repl, ways),
                              cap / kKneeBelow, hi));
    out.push_back(choice_knob(cache_field(i, "associativity"), c / "associativity",
                              way_alternatives(cap / line, ways, false), cap / kKneeBelow, hi));
    if (n > 0) {
      const std::string inc = value_at(d, c / "inclusion").is_string() ? value_at(d, c / "inclusion").get<std::string>()
                                                                        : "inclusive";
      out.push_back(choice_knob(cache_field(i, "inclusion"), c / "inclusion",
                                {json(inc == "inclusive" ? "exclusive" : "inclusive")}, cap / kKneeBelow, hi));
    }
    if (!is_spec(d, c / "capacity_bytes")) {
      Knob k = scale_knob(cache_field(i, "capacity_bytes"), c / "capacity_bytes", 1.5, 1.03, true, cap / kKneeBelow, hi);
      k.full_ways_follow = true;
      out.push_back(k);
    }
    before = cap;
  }
  out.push_back(plateau_knob("memory.dram.latency_ns", Pointer("/memory/dram/latency_ns"), before * kPlateauMargin,
                             kInf, before / kKneeBelow, kInf));
  return out;
}

// The TLB strides: the ways of each load level first (a large stride maps
// every access into a few sets: their ways decide whether the chase hits
// before the TLB is reached), then the TLB's shape, reach and penalty.
std::vector<Knob> tlb_probe_knobs(const json& d) {
  std::vector<Knob> out;
  for (size_t i : load_levels(d)) {
    const Pointer c = Pointer("/memory/caches") / i;
    const double cap = number_at(d, c / "capacity_bytes"), line = number_at(d, c / "line_bytes", 64);
    const double ways = number_at(d, c / "associativity", 1);
    out.push_back(choice_knob(cache_field(i, "associativity"), c / "associativity",
                              way_alternatives(cap / line, ways, false)));
  }
  tlb_knobs(d, out, 0, true);
  return out;
}


}  // namespace

// What the fit knows how to move, by probe.
std::vector<Knob> knobs_of(const std::string& probe, const json& d) {
  if (probe == "latency") return latency_knobs(d);
  if (probe == "tlb") return tlb_probe_knobs(d);
  return {};
}


}  // namespace gpuscope::model::fit_detail
