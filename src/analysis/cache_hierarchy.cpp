// infer_cache_hierarchy: the staircase's parts (staircase.hpp) put together
// in the order docs/inference.md section 3 gives them: the curve prepared,
// its plateaus, where the curve leaves each (and where translation cuts
// it), which plateau is DRAM, then each level with the rules that qualify
// it. Thresholds: staircase_tuning.hpp.
#include "analysis/cache_hierarchy.hpp"

#include "analysis/confidence_factors.hpp"
#include "analysis/staircase.hpp"
#include "analysis/staircase_translation.hpp"
#include "analysis/staircase_tuning.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace gpuscope::analysis {

using namespace staircase;

namespace {

// The curve as read: the tlb probe's page walks taken out (rule
// walk-is-taken-out), isolated spikes removed (spike-is-not-a-level).
struct PreparedCurve {
  WalksTakenOut taken;
  Curve c;
  double tlb_confidence = 1;  // the least of the tlb probe's levels' confidences
  bool walks_out() const { return !taken.walks.empty(); }
};

PreparedCurve prepare_curve(const Series& measured, const HierarchyOptions& options, Hierarchy& h) {
  PreparedCurve p{take_out_walks(options.translation_levels, measured, options.translation_out_everywhere), {}, 1};
  for (const TranslationLevel& t : options.translation_levels) p.tlb_confidence = std::min(p.tlb_confidence, t.confidence);
  // Taking walks out must not make the curve fall: where it does (a
  // set-associative TLB read as two levels), the curve is read as measured.
  if (p.taken.fell)
    h.notes.push_back("The tlb probe's page walks, taken out of the curve, would make it fall: read as measured.");
  if (p.taken.largest_ns > 0) {
    h.translation_confidence = std::min(h.translation_confidence, p.tlb_confidence);
    h.notes.push_back(fmt::format(
        "Page walks taken out of every point before reading the staircase: the tlb probe's reach and penalty "
        "say a random chase misses the TLB on 1 - R/F of its loads (up to {:.3g} ns at the largest footprint).",
        p.taken.largest_ns));
  }
  int spikes = 0;
  p.c = without_spikes(log_curve(p.taken.latency, options.min_relative_noise), spikes);
  if (spikes > 0) h.notes.push_back(fmt::format("{} isolated spike point(s) ignored.", spikes));
  return p;
}

// Where the curve leaves each plateau, and where translation cut it.
struct Departures {
  std::vector<Departure> at;      // one per plateau kept; a cut plateau's is unseen
  bool translation_cut = false;   // plateaus end at the cut: the last is DRAM
  std::string translation_note;   // DRAM's note: why the plateau before the cut (or a hint) is DRAM
};

// Rule climb-is-translation: a rise leaving its plateau past cut_from is
// address translation when page walks were taken out (what is left past
// the default threshold is translation still) or translation can explain
// the step's size.
bool climb_is_translation(const HierarchyOptions& options, const Departure& d, double step_ns, double far_x,
                          double cut_from, bool walks_out) {
  return d.seen && d.at_bytes > cut_from &&
         (walks_out || translation_explains(options, d.at_bytes, step_ns, far_x));
}

// Rule cache-beyond-the-reach, when it reads the curve again: every TLB
// level's misses taken out, the cheap ones too.
Hierarchy read_with_every_level_out(const Series& measured, const HierarchyOptions& options, double tlb_confidence,
                                    const std::string& note) {
  HierarchyOptions every = options;
  every.translation_out_everywhere = true;
  Hierarchy again = infer_cache_hierarchy(measured, every);
  again.translation_confidence = std::min(again.translation_confidence, tlb_confidence);
  again.notes.push_back(note);
  return again;
}

// The departure from each plateau in turn, until translation cuts the
// curve (plateaus after the cut are dropped). Returns the hierarchy read
// again where a cache runs out beyond the TLB's reach.
std::optional<Hierarchy> read_departures(const Series& measured, const PreparedCurve& prepared,
                                         std::vector<Plateau>& plateaus, const HierarchyOptions& options,
                                         Hierarchy& h, Departures& out) {
  const Curve& c = prepared.c;
  // With the page walks taken out, a step left past the tlb probe's reach
  // is a cache; only one past the default threshold (no GPU cache is that
  // large) is translation still.
  const bool walks_out = prepared.walks_out();
  const double cut_from =
      walks_out ? HierarchyOptions{}.translation_threshold_bytes : options.translation_threshold_bytes;
  for (size_t k = 0; k < plateaus.size(); ++k) {
    const Plateau& p = plateaus[k];
    const bool next = k + 1 < plateaus.size();
    const double step_log = next ? plateaus[k + 1].level - p.level : final_rise(c, p, options);
    // The rise runs from the latency where this plateau ends to where the
    // next begins: a level that drifts up across its plateau (a shared L3,
    // TLB misses in DRAM) must not stretch the rise before it.
    const double far_log = next ? edge_level(c, plateaus[k + 1], true) : p.level + step_log;
    const double far_x = next ? edge_footprint(c, plateaus[k + 1], true) : 0.0;
    // Rule slots-may-pair: slots shorter than the longest line may pair up
    // in a level's lines beyond the first (the stride is the first level's
    // line).
    const bool slots_may_pair = k > 0 && options.slot_bytes > 0 && options.slot_bytes < kLongestLineBytes;
    const Departure d =
        step_log > 0 ? find_departure(c, p, far_log, far_x, options, slots_may_pair) : Departure{};
    const double step_ns = std::exp(p.level + step_log) - std::exp(p.level);
    if (!climb_is_translation(options, d, step_ns, far_x, cut_from, walks_out)) {
      out.at.push_back(d);
      continue;
    }
    // Translation adds at most P (1 - R/F) a level at footprint F. Each
    // plateau is held to its own footprint, not to every level's whole
    // penalty, so a walk level measured far beyond the caches (a VM's
    // 109 ns walks past 100 MiB) does not excuse a cache that ran out at
    // 2 MiB. Where a later plateau climbs past that (rule
    // cache-beyond-the-reach), the curve is read again with every
    // translation level taken out; devices that overlap a second-level
    // lookup with the data's miss make that correction too large by up to
    // a lookup's cost, which the confidences (no surer than the tlb
    // reading) allow for.
    double climbs_ns = 0, can_add_ns = 0;
    const Plateau* beyond =
        plateau_past_translation(c, plateaus, k, options.translation_levels, climbs_ns, can_add_ns);
    if (!options.translation_out_everywhere && !options.translation_levels.empty() && beyond) {
      if (!take_out_walks(options.translation_levels, measured, true).walks.empty())
        return read_with_every_level_out(
            measured, options, prepared.tlb_confidence,
            fmt::format("From {}, past the TLB's reach, the curve climbs {:.0f} ns more by {}, over {:.1f}x the "
                        "{:.0f} ns translation can add there: a cache runs out beyond that reach. Read with "
                        "every TLB level's misses taken out.",
                        bytes_text(d.at_bytes), climbs_ns, bytes_text(c.x[beyond->last()]),
                        kBeyondTranslationFactor.value, can_add_ns));
      // No walks to take out (taking them out would make the curve
      // fall): the step is no translation's, and a cache ends here.
      out.at.push_back(d);
      continue;
    }
    out.translation_note = fmt::format(
        "Latency rises again from about {} (beyond {}{}): address translation (TLB reach), not a cache; "
        "DRAM latency is read from the plateau before it.",
        bytes_text(d.at_bytes), bytes_text(cut_from),
        walks_out || options.translation_basis.empty() ? "" : ", " + options.translation_basis);
    h.notes.push_back(out.translation_note);
    plateaus.resize(k + 1);
    out.at.emplace_back();
    out.translation_cut = true;
    for (const TranslationLevel& t : options.translation_levels)
      h.translation_confidence = std::min(h.translation_confidence, t.confidence);
    break;
  }
  return std::nullopt;
}

// Rule level-at-reach-is-doubtful: per plateau, whether its rise (from
// where the curve leaves it to where it reaches the next) overlaps where
// the tlb probe saw translation begin (kTranslationOnsetOfReach x the low
// end of its reach, to kReachEndOfOnset x the reach), or the plateau runs
// on across that reach: the plateau may then be DRAM, its end translation's.
std::vector<bool> levels_at_reach(const Curve& c, const std::vector<Plateau>& plateaus, const Departures& dep,
                                  const HierarchyOptions& options) {
  std::vector<bool> at_reach(dep.at.size(), false);
  for (size_t k = 0; k < dep.at.size() && k < plateaus.size(); ++k) {
    const Departure& d = dep.at[k];
    const double from = c.x[plateaus[k].first()];
    const double to = d.seen ? d.high_bytes : c.x[plateaus[k].last()];
    for (const TranslationLevel& t : options.translation_levels) {
      const double reach = t.reach_estimate_bytes > 0 ? t.reach_estimate_bytes : t.reach_bytes;
      if (to >= kTranslationOnsetOfReach * t.reach_bytes && from <= kReachEndOfOnset * reach) at_reach[k] = true;
    }
  }
  return at_reach;
}

// What the last plateau is.
struct LastPlateau {
  bool is_dram = false;          // DRAM: caches came before it and the sweep went far enough to tell
  bool unfinished_rise = false;  // the curve was still rising after it: the sweep ended on the way
  size_t cache_count = 0;        // plateaus read as caches
};

// Rules last-plateau-is-dram and dram-hint-ends-short-sweep.
LastPlateau read_last_plateau(const Curve& c, const std::vector<Plateau>& plateaus, Departures& dep,
                              const HierarchyOptions& options) {
  LastPlateau last;
  const Plateau& p = plateaus.back();
  last.unfinished_rise = dep.at.back().seen;
  const double last_ns = std::exp(p.level);
  const bool hinted_dram = options.dram_latency_hint_ns > 0 && c.x[p.last()] < options.dram_min_footprint_bytes &&
                           last_ns >= kDramHintLow * options.dram_latency_hint_ns &&
                           last_ns <= kDramHintHigh * options.dram_latency_hint_ns;
  last.is_dram = !last.unfinished_rise && plateaus.size() >= 2 &&
                 (dep.translation_cut || hinted_dram || c.x[p.last()] >= options.dram_min_footprint_bytes);
  if (last.is_dram && hinted_dram && !dep.translation_cut)
    dep.translation_note = fmt::format(
        "The sweep stopped at {}, below {}, but its last plateau ({:.0f} ns) is {:.2f}x the DRAM latency "
        "measured {}: read as DRAM.",
        bytes_text(c.x.back()), bytes_text(options.dram_min_footprint_bytes), last_ns,
        last_ns / options.dram_latency_hint_ns,
        options.dram_hint_basis.empty() ? "on another path" : options.dram_hint_basis);
  last.cache_count = last.is_dram ? plateaus.size() - 1 : plateaus.size();
  return last;
}

// Rule gradual-last-rise-may-be-translation: a rise into the last plateau
// spread over kGradualRiseOctaves or more is as gradual as translation
// misses past a TLB's reach (1 - R/F of the loads miss at footprint F),
// which no TLB reading took out: the last plateau may hold them, or be
// them.
void gradual_last_rise_may_be_translation(const LastPlateau& last, const Departures& dep, Hierarchy& h) {
  if (!last.is_dram || dep.translation_cut || last.cache_count == 0) return;
  const Departure& d = dep.at[last.cache_count - 1];
  if (!d.seen || octaves(d.low_bytes, d.high_bytes) < kGradualRiseOctaves) return;
  h.translation_confidence = std::min(h.translation_confidence, kRivalReadingCap.value);
  h.notes.push_back(
      fmt::format("The rise into the last plateau is spread over {:g} octaves or more, as translation misses past a "
                  "TLB's reach are: its latency may include them, and the level before it may be a TLB's reach "
                  "rather than a cache.",
                  kGradualRiseOctaves.value));
}

// Everything read so far that a level's rules look at.
struct StaircaseReading {
  const PreparedCurve& prepared;
  const std::vector<Plateau>& plateaus;
  const Departures& departures;
  const std::vector<bool>& at_reach;
  const LastPlateau& last;
  const HierarchyOptions& options;
};

// Confidence of the level at k from its plateau's points and its steps
// (docs/inference.md 3.5); rule open-end-is-a-lower-bound where the sweep
// ended on it.
void level_confidence(const StaircaseReading& r, size_t k, CacheLevel& level) {
  const Curve& c = r.prepared.c;
  const Plateau& p = r.plateaus[k];
  const Departure& d = r.departures.at[k];
  const double factor_points = points_factor(level.points);
  double z_below = 0, z_above = 0;
  if (k > 0) z_below = step_z(r.plateaus[k - 1], p);
  if (k + 1 < r.plateaus.size()) {
    z_above = step_z(p, r.plateaus[k + 1]);
  } else if (d.seen) {
    z_above = final_rise(c, p, r.options) / p.sigma;
  }
  if (d.seen) {
    level.capacity_bytes = d.at_bytes;
    level.capacity_low = d.low_bytes;
    level.capacity_high = d.high_bytes;
    level.capacity_confidence =
        factor_points * separation_factor(z_above) * bracket_factor(octaves(d.low_bytes, d.high_bytes));
    const double z_nearest = k > 0 ? std::min(z_below, z_above) : z_above;
    level.latency_confidence = factor_points * separation_factor(z_nearest);
    return;
  }
  // The sweep ended on this plateau: the capacity is only known to exceed
  // the last footprint, and the plateau might yet be something else.
  level.end_reached = false;
  level.capacity_bytes = level.capacity_low = level.last_x;
  level.capacity_confidence = kOpenEndCapacityFactor * factor_points;
  level.latency_confidence = kOpenEndLatencyFactor * factor_points * (k > 0 ? separation_factor(z_below) : 1.0);
  add_note(level.note, fmt::format("The sweep ended on this plateau at {}: its capacity is at least that, and "
                                   "no DRAM latency was measured.",
                                   bytes_text(level.last_x)));
}

// Rule contended-level: a level whose room changed during the run. Its
// capacity is the most it held, which may be less than the hardware's, and
// the least is far below.
void contended_level(const Series& latency, const Departure& d, CacheLevel& level) {
  const double contended = d.seen ? contended_from(latency, level.first_x, d) : 0;
  if (contended <= 0) return;
  level.capacity_low = std::min(level.capacity_low, contended);
  level.capacity_confidence = std::min(level.capacity_confidence, kContendedCapacityCap.value);
  add_note(level.note, fmt::format("Contended: from {} up, launches at one footprint split between this level's "
                                   "latency and the next's, so the room this level offered changed during the run "
                                   "(something outside it shares the cache: other VMs on a cloud host, the CPU "
                                   "or display on a phone's system cache, an SMT sibling). The capacity is the "
                                   "most it held free; the hardware's may be larger, and the interval reaches "
                                   "down to where it was seen taken.",
                                   bytes_text(contended)));
}

std::string_view miss_model_words(MissModel m) {
  switch (m) {
    case MissModel::kRandomReplacement: return "random replacement";
    case MissModel::kSetsFilling: return "sets filling together";
    case MissModel::kSetsFillingRandom: return "sets filling together under random replacement";
    case MissModel::kLineRevisits: return "lines revisited at random (several slots to a line: hits fall as C/F)";
    case MissModel::kLineRevisitsRandom: return "random replacement of lines holding two of the chase's slots each";
    default: return "sets overflowing unevenly";
  }
}

// Rule rise-shape-picks-miss-model, its note: a rise over
// kNamedModelOctaves or more says which miss model read the capacity.
void name_miss_model(const Departure& d, CacheLevel& level) {
  if (!d.seen || octaves(d.low_bytes, d.high_bytes) < kNamedModelOctaves) return;
  add_note(level.note, fmt::format("The rise to the next level is gradual ({:.1f} octaves); it fits {}, so the "
                                   "capacity is read {}; the interval spans the whole rise.",
                                   octaves(d.low_bytes, d.high_bytes), miss_model_words(d.model),
                                   d.model == MissModel::kSetOverflow ? "where half the loads still hit"
                                                                      : "where misses begin"));
}

// Rule falling-plateau-has-no-one-latency: a plateau whose first third
// stands more than kFallingHeadRatio above its median falls across its
// footprints, which no cache does of itself (a chase over more bytes is no
// faster). Something there costs more just past the level before and less
// later (an exclusive level behind a randomly replaced first level), so the
// median is no one latency. The count is not touched (the level is there).
// A plateau that rises across its footprints is common and left alone: its
// end is the next rise beginning.
void falling_plateau_has_no_one_latency(const Curve& c, const Plateau& p, CacheLevel& level) {
  const double head_ns = plateau_head_ns(c, p);
  if (!(head_ns > kFallingHeadRatio * level.latency_ns)) return;
  level.latency_value_cap = kRivalReadingCap;
  add_note(level.note, fmt::format("The plateau falls across its footprints: it stands at {:.0f} ns where it "
                                   "begins, {:.0f}% above its median, so the median is no one latency.",
                                   head_ns, 100 * (head_ns / level.latency_ns - 1)));
}

// Rule far-half-of-split, its note (the level is kept as read).
void far_half_of_split(size_t k, const CacheLevel& prev, const HierarchyOptions& options, CacheLevel& level) {
  if (!options.split_caches || !level.end_reached || !prev.end_reached) return;
  const double latency_ratio = level.latency_ns / prev.latency_ns;
  const double capacity_ratio = level.capacity_bytes / prev.capacity_bytes;
  if (!is_far_half_of_split(latency_ratio, capacity_ratio)) return;
  add_note(level.note, fmt::format("Latency only {:.2f}x {}'s with {:.1f}x its capacity: probably the far half "
                                   "of a split {} (as on NVIDIA H100/H200) rather than a separate cache; "
                                   "then {} is the near half and this capacity the whole cache.",
                                   latency_ratio, level_name(k - 1), capacity_ratio, level_name(k - 1),
                                   level_name(k - 1)));
}

// Rules level-at-reach-is-doubtful and unfinished-last-level-is-doubtful:
// a level that may be DRAM, the rise after it translation misses.
void level_may_be_dram(const StaircaseReading& r, size_t k, CacheLevel& level) {
  const bool last_unsure = k + 1 == r.last.cache_count && !r.last.is_dram && r.last.unfinished_rise &&
                           r.departures.at[k].seen;
  if (!r.at_reach[k] && !last_unsure) return;
  level.latency_confidence = std::min(level.latency_confidence, kRivalReadingCap.value);
  level.capacity_confidence = std::min(level.capacity_confidence, kRivalReadingCap.value);
  add_note(level.note, r.at_reach[k] ? "This level runs out where the tlb probe saw translation begin: it may "
                                       "be DRAM and the rise after it translation misses."
                                     : "The sweep ended still rising past this level: it may be DRAM and the "
                                       "rise after it translation misses.");
}

// Rule walks-out-caps-level: a level read where page walks were taken out
// (its plateau or its rise past the reach) is no surer than the tlb
// reading that took them out.
void walks_out_caps_level(const StaircaseReading& r, size_t k, CacheLevel& level) {
  if (!r.prepared.walks_out()) return;
  const Curve& c = r.prepared.c;
  const Departure& d = r.departures.at[k];
  const double to_x = d.seen ? d.high_bytes : level.last_x;
  double share = 0;
  for (size_t i = r.plateaus[k].first(); i < c.size() && c.x[i] <= to_x; ++i)
    share = std::max(share, translation_ns(r.prepared.taken.walks, c.x[i]) / std::exp(c.v[i]));
  if (!(share > kWalkShareOfLatency)) return;
  const double cap = kTlbReadingShare * r.prepared.tlb_confidence;
  level.latency_confidence = std::min(level.latency_confidence, cap);
  level.capacity_confidence = std::min(level.capacity_confidence, cap);
  add_note(level.note, fmt::format("Read after taking out page walks of up to {:.0f}% of the latency (the tlb "
                                   "probe's reach and penalty): no surer than that reading.",
                                   100 * share));
}

// The cache level at plateau k, its earlier levels in `levels`.
CacheLevel read_cache_level(const StaircaseReading& r, size_t k, const std::vector<CacheLevel>& levels) {
  const Curve& c = r.prepared.c;
  const Plateau& p = r.plateaus[k];
  const Departure& d = r.departures.at[k];
  CacheLevel level = describe(c, p);
  level_confidence(r, k, level);
  contended_level(r.prepared.taken.latency, d, level);
  name_miss_model(d, level);
  falling_plateau_has_no_one_latency(c, p, level);
  if (k > 0) far_half_of_split(k, levels[k - 1], r.options, level);
  level_may_be_dram(r, k, level);
  walks_out_caps_level(r, k, level);
  return level;
}

// Rule lookups-out-of-dram: a DRAM plateau past the TLB's reach holds
// translation misses too. Page walks were taken out with the rest of the
// curve; what the other levels say they add is taken out of this plateau
// alone. Either way the latency is trusted no more than the tlb reading
// where the share is over kWalkShareOfLatency of it.
void lookups_out_of_dram(const StaircaseReading& r, CacheLevel& dram) {
  const Curve& c = r.prepared.c;
  const Plateau& last = r.plateaus.back();
  const double walks_ns = translation_share_ns(r.prepared.taken.walks, c, last);
  const double lookups_ns = translation_share_ns(r.prepared.taken.lookups, c, last);
  if (lookups_ns > kWalkShareOfLatency * dram.latency_ns && lookups_ns < dram.latency_ns) {
    const double raw = dram.latency_ns;
    dram.latency_ns -= lookups_ns;
    dram.latency_low -= lookups_ns;
    dram.latency_high -= lookups_ns;
    add_note(dram.note, fmt::format("The plateau ({:.0f} ns) lies past the TLB's reach: {:.0f} ns of translation "
                                    "misses (the tlb probe's reach and penalty) taken out.",
                                    raw, lookups_ns));
  }
  if (walks_ns > kWalkShareOfLatency * dram.latency_ns)
    add_note(dram.note, fmt::format("The plateau lies past the TLB's reach: {:.0f} ns of page walks (the tlb "
                                    "probe's reach and penalty) taken out, leaving {:.0f} ns.",
                                    walks_ns, dram.latency_ns));
  if (walks_ns + lookups_ns > kWalkShareOfLatency * (dram.latency_ns + lookups_ns))
    dram.latency_confidence = std::min(dram.latency_confidence, r.prepared.tlb_confidence * kTlbReadingShare);
}

// Rule level-at-reach-is-dram: the last cache read runs out where the tlb
// probe saw translation begin, and DRAM (past the reach, its translation
// taken out) stands less than a step (min_step_ratio) above where that
// level's plateau ends: that "cache" is the curve reaching DRAM before the
// reach, and the step after it translation alone. A random or
// line-revisiting last level approaches DRAM slowly (hits falling as C/F),
// so the curve drifts up to just below DRAM by the time a TLB of reach 4-8x
// that capacity runs out (a 16 MiB L2 behind a 128 MiB TLB read as a 448 ns
// L3 ending at 455 ns, in front of 485 ns DRAM). Its end, not its median,
// is held against DRAM: such a plateau climbs across it. A real cache
// there, within min_step_ratio of DRAM's latency, would not be told apart:
// the note says so.
void level_at_reach_is_dram(const StaircaseReading& r, CacheLevel& dram, Hierarchy& h) {
  const size_t n = r.last.cache_count;
  if (n < 2 || h.levels.size() != n || !r.at_reach[n - 1]) return;
  const double end_ns = std::exp(edge_level(r.prepared.c, r.plateaus[n - 1], false));
  if (!(dram.latency_ns < r.options.min_step_ratio * end_ns)) return;
  const CacheLevel phantom = h.levels.back();
  h.levels.pop_back();
  h.translation_confidence = std::min(h.translation_confidence, r.prepared.tlb_confidence);
  add_note(dram.note,
           fmt::format("The plateau read as a level at {:.0f} ns up to {} ends ({:.0f} ns) where the tlb "
                       "probe saw translation begin, and DRAM past the reach, its translation taken out, is "
                       "{:.2f}x that end, less than a step: read as DRAM reached before the TLB's "
                       "reach, not a cache (one within {:.0f}% of DRAM's latency would not be told apart).",
                       phantom.latency_ns, bytes_text(phantom.capacity_bytes), end_ns, dram.latency_ns / end_ns,
                       100 * (r.options.min_step_ratio - 1)));
}

// DRAM from the last plateau.
CacheLevel read_dram(const StaircaseReading& r, Hierarchy& h) {
  const Curve& c = r.prepared.c;
  const Plateau& last = r.plateaus.back();
  CacheLevel dram = describe(c, last);
  dram.note = r.departures.translation_note;
  const Plateau& last_cache = r.plateaus[r.plateaus.size() - 2];
  dram.latency_confidence = points_factor(dram.points) * separation_factor(step_z(last_cache, last));
  if (h.translation_confidence < 1)
    dram.latency_confidence = std::min(dram.latency_confidence, kTlbReadingShare * h.translation_confidence);
  lookups_out_of_dram(r, dram);
  level_at_reach_is_dram(r, dram, h);
  return dram;
}

// Where the sweep ended without DRAM: why none is reported.
void no_dram_note(const Curve& c, const std::vector<Plateau>& plateaus, const LastPlateau& last,
                  const HierarchyOptions& options, Hierarchy& h) {
  if (last.unfinished_rise) {
    h.notes.push_back(
        fmt::format("Latency was still rising at the last footprint ({}): the sweep ended before the "
                    "next level or DRAM; no DRAM latency is reported.",
                    bytes_text(c.x.back())));
  } else if (plateaus.size() >= 2) {
    h.notes.push_back(
        fmt::format("The sweep stopped at {}, below {}: the last plateau is reported as a cache whose "
                    "end was not reached, though it may be DRAM.",
                    bytes_text(c.x.back()), bytes_text(options.dram_min_footprint_bytes)));
  }
}

}  // namespace

Hierarchy infer_cache_hierarchy(const Series& measured, const HierarchyOptions& options) {
  Hierarchy h;
  const PreparedCurve prepared = prepare_curve(measured, options, h);
  const Curve& c = prepared.c;

  std::vector<Plateau> plateaus = find_plateaus(c, options);
  merge_plateaus(plateaus, c, std::log(options.min_step_ratio), h.notes);
  if (plateaus.empty()) {
    h.notes.push_back(
        fmt::format("No latency plateau of {} or more points spanning {} octave(s) in {} point(s); "
                    "no level can be read.",
                    options.min_plateau_points, options.min_plateau_octaves, c.size()));
    return h;
  }

  Departures departures;
  if (std::optional<Hierarchy> again = read_departures(measured, prepared, plateaus, options, h, departures))
    return std::move(*again);
  const std::vector<bool> at_reach = levels_at_reach(c, plateaus, departures, options);
  const LastPlateau last = read_last_plateau(c, plateaus, departures, options);
  gradual_last_rise_may_be_translation(last, departures, h);

  const StaircaseReading reading{prepared, plateaus, departures, at_reach, last, options};
  for (size_t k = 0; k < last.cache_count; ++k) h.levels.push_back(read_cache_level(reading, k, h.levels));
  if (last.is_dram)
    h.dram = read_dram(reading, h);
  else
    no_dram_note(c, plateaus, last, options, h);
  if (options.slots_share_lines) refine_line_revisits(c, h);
  return h;
}

std::string level_name(size_t index) { return fmt::format("L{}", index + 1); }

bool is_far_half_of_split(double latency_ratio, double capacity_ratio) {
  return latency_ratio < kSplitMaxLatencyRatio && capacity_ratio >= kSplitMinCapacityRatio &&
         capacity_ratio <= kSplitMaxCapacityRatio;
}

}  // namespace gpuscope::analysis
