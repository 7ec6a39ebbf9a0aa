// A buffer, the kernels of chase_layout.cl, and the host's knowledge of the
// cycle laid out in it: the shared machinery of the probes that chase
// pointers over layouts other than the latency probe's (tlb, geometry).
//
// A layout is a cycle of word positions (a word is one device pointer):
// `order[k]` is the word visited k-th. A measurement starts at order[0] of
// each group's region, each launch goes on where the last one ended, and the
// host checks every end against its own walk of the cycle.
#pragma once

#include "core/random.hpp"
#include "harness/harness.hpp"
#include "probes/probe.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gpuscope {

// Whether the latency-family probes chase by index (`p = slots[p]`) rather
// than by device address on this device under --chase: index where asked,
// or where asked for auto and the device has no device addresses (a Vulkan
// device without bufferDeviceAddress). Throws Unsupported for --chase address
// on such a device.
bool uses_index_chase(const DeviceInfo& info, ChaseMethod asked);

// The kernel parameters of the chase kernels: addr_bits, and index_chase
// where the chase is by index.
std::map<std::string, KernelParam> chase_params(const DeviceInfo& info, bool index_chase);

// A uniformly random single cycle over n slots, as the visiting order
// (order[k] = the k-th slot); Fisher-Yates from a seeded generator.
std::vector<uint32_t> random_visit_order(uint32_t n, uint64_t seed);

// next[slot] = the slot visited after it, for a visiting order.
std::vector<uint32_t> successors(const std::vector<uint32_t>& order);

// Host threads a chase probe lays its random cycles out on
// (random_cycle_into): every core of a GPU's host; one for a CPU device,
// whose kernels need those cores, and for the sim, whose cycles (and so its
// seeded readings) stay the one-thread build's.
unsigned cycle_threads(const DeviceInfo& info);

// The harness for launches that go on chasing a cycle just walked warm: on
// a GPU without the harness's warm-up launch, which would walk on where the
// warm walk ended to no purpose (85 latency points on an H200: 0.7 s); as
// given on CPUs and the sim, whose readings stay as they were.
HarnessConfig after_warm_walk(const HarnessConfig& hc, const DeviceInfo& info);

struct ChaseTiming {
  double ns_per_hop = 0;        // 10th percentile of the samples (see chase_rig.cpp)
  std::vector<double> samples;  // ns per hop, one per timed launch
  uint64_t hops_per_launch = 0;
};

class ChaseRig {
 public:
  // Allocates want_bytes, halving on refusal down to min_bytes (throws
  // OutOfResources below that).
  ChaseRig(ProbeContext& ctx, size_t want_bytes, size_t min_bytes, size_t max_groups = 1);

  size_t bytes() const { return bytes_; }
  uint32_t word_bytes() const { return word_bytes_; }
  bool index_chase() const { return index_chase_; }

  // mem[pos[order[k]]] -> mem[pos[order[k+1]]] for the cycle `order` over
  // slots whose word positions are `pos`; returns the visit order in words.
  std::vector<uint32_t> link_slots(const std::vector<uint32_t>& order, const std::vector<uint32_t>& pos);

  // Anchors anchor_words apart on the cycle `order`, each with a partner
  // pair_words after it (link_pairs in chase_layout.cl); returns the visit
  // order in words (anchor, partner, next anchor, ...).
  std::vector<uint32_t> link_pairs(const std::vector<uint32_t>& order, uint32_t anchor_words,
                                   uint32_t pair_words);

  // The cycle `order` over slots stride_words apart, in `regions` regions
  // region_words apart; returns region 0's visit order in words.
  std::vector<uint32_t> link_regions(const std::vector<uint32_t>& order, uint32_t stride_words,
                                     uint64_t region_words, uint32_t regions);

  // `groups` work-groups of one item chase at once, group g in its region
  // g * region_words on; walks the cycle once (capped at ~10 target
  // launches) to warm, then times through the harness. Throws
  // ValidationError when a chase ends anywhere but where the host's walk does.
  ChaseTiming time(const std::vector<uint32_t>& visit, uint32_t groups, uint64_t region_words,
                   const HarnessConfig& hc);

 private:
  double launch(const std::vector<uint32_t>& visit, uint32_t groups, uint64_t region_words, uint32_t rounds);

  ProbeContext& ctx_;
  Device& dev_;
  uint32_t word_bytes_ = 8;
  bool index_chase_ = false;
  size_t bytes_ = 0;
  size_t max_groups_ = 1;
  Kernel *link_words_ = nullptr, *link_pairs_ = nullptr, *link_regions_ = nullptr, *chase_ = nullptr;
  std::unique_ptr<Buffer> mem_, starts_, ends_;
  size_t cursor_ = 0;  // index into the visit order where the next launch starts
};

}  // namespace gpuscope
