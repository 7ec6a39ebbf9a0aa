// The fit's knobs (fit.cpp): the description's values it may move, by
// fitted probe, each with the x (a footprint, in bytes) over which it shapes
// the probe's series; and the edits of an annotated description a move
// needs. Internal to src/model.
#pragma once

#include <nlohmann/json.hpp>

#include <limits>
#include <string>
#include <vector>

namespace gpuscope::model::fit_detail {

using json = nlohmann::json;
using Pointer = nlohmann::json::json_pointer;

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// The value of an annotated (or plain) field; null where absent.
json value_at(const json& d, const Pointer& at);
// Sets it, keeping its annotation.
void set_value(json& d, const Pointer& at, const json& v);
double number_at(const json& d, const Pointer& at, double otherwise = 0);
// Keeps a candidate a description the sim accepts where a move breaks an
// invariant it can restore without choosing anything: a cache of whole
// sets, a TLB of whole sets.
void whole_sets(json& d);
// After a cache's capacity (at `capacity`, a pointer ending in
// capacity_bytes) moved from `was`: a level that was fully associative
// keeps all its lines in one set.
void keep_fully_associative(json& d, const Pointer& capacity, double was);

// One parameter the fit may move, and the x over which it shapes the
// fitted probe's series.
struct Knob {
  std::string field;  // for people: "memory.caches[1].capacity_bytes"
  Pointer at;
  enum Kind { scale, choice, plateau } kind = scale;
  // scale: multiplicative steps, the first tried and the finest.
  double first_step = 1, last_step = 1;
  bool integer = false;
  std::vector<json> alternatives;  // choice
  double x_lo = 0, x_hi = kInf;    // the points it moves (where to replay)
  double plateau_lo = 0, plateau_hi = kInf;  // plateau: the points only it sets
  // The TLB's page: its entries move with it so that the reach stays.
  bool keep_reach = false;
  // A cache's capacity: a fully associative level stays so (its ways are
  // its lines), or whole sets would hold the capacity where it was.
  bool full_ways_follow = false;
};

// The probes whose series the fit searches, in order, each from the model
// the one before left: the TLB strides first (they see the TLB and the
// ways at a fraction of the chase's cost; the chase, past the reach, would
// bend DRAM's latency to a wrong TLB penalty).
inline constexpr const char* kFittedProbes[] = {"tlb", "latency"};

// What the fit may move for `probe`'s series on description `d`, in the
// order it tries them; empty for a probe it does not fit.
std::vector<Knob> knobs_of(const std::string& probe, const json& d);

}  // namespace gpuscope::model::fit_detail
