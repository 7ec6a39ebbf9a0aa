// The sim's memory-hierarchy model: set-associative caches with LRU, random
// or tree pseudo-LRU replacement, a TLB (a cache of page translations) and
// DRAM. Families feed it the addresses their kernels touch (all of them, or
// a sample: see family_latency.cpp) and get each access's latency back.
#pragma once

#include "backends/sim/sim_config.hpp"
#include "core/random.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace gpuscope::sim {

// Unit number -> entry, for sets too wide to scan: open addressing with
// linear probing and backward-shift deletion, sized for `capacity` keys at
// half load: no allocation per install (a node-based map's were a fifth of
// a chase's modelling time).
class UnitIndex {
 public:
  static constexpr uint32_t kAbsent = 0xffffffffu;
  void reset(uint64_t capacity);
  uint32_t find(uint64_t key) const;
  void insert(uint64_t key, uint32_t entry);  // `key` absent
  void erase(uint64_t key);                   // no-op when absent
  void clear();

 private:
  uint64_t home(uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) >> shift_; }
  std::vector<uint64_t> keys_;  // kEmpty where free
  std::vector<uint32_t> entries_;
  uint64_t mask_ = 0;
  int shift_ = 64;
};

class SetAssociativeCache {
 public:
  // capacity_units / ways sets of `ways` entries, each entry covering
  // 2^unit_shift bytes (a line, or a page for a TLB) and holding its bytes
  // in sectors of 2^sector_shift bytes (the whole unit when equal, at most
  // 64 sectors per unit).
  SetAssociativeCache(uint64_t entries, uint32_t ways, uint32_t unit_shift, Replacement policy, uint64_t seed,
                      uint32_t sector_shift);
  SetAssociativeCache(uint64_t entries, uint32_t ways, uint32_t unit_shift, Replacement policy, uint64_t seed)
      : SetAssociativeCache(entries, ways, unit_shift, policy, seed, unit_shift) {}

  // True when the unit is present with the sector holding `address`. A
  // missing unit is installed (evicting per the policy) with that sector
  // only; a present unit missing the sector gets it, and counts as used.
  bool access(uint64_t address);
  // True when access(address) would hit; changes nothing.
  bool holds(uint64_t address) const;
  // Drops the unit holding `address`, if present (an exclusive level handing
  // a line to a nearer one).
  void erase(uint64_t address);
  // Puts the unit holding `address` in (most recently used) with the sectors
  // covering [address, address + bytes) filled: a victim arriving from a
  // nearer level.
  void install(uint64_t address, uint64_t bytes);
  // What the last access() or install() that allocated evicted: a valid
  // unit's first byte address and its byte count, or bytes 0 when nothing.
  struct Evicted {
    uint64_t address = 0, bytes = 0;
  };
  Evicted evicted() const { return evicted_; }
  void clear();

 private:
  uint32_t find(uint64_t set, uint64_t tag) const;  // way, or ways_ when absent
  void touch(uint64_t set, uint32_t way);
  uint32_t victim(uint64_t set);
  uint32_t allocate(uint64_t set, uint64_t tag);  // evicts per the policy; records evicted_
  uint64_t sector_bits(uint64_t address, uint64_t bytes) const;

  uint64_t sets_;
  uint32_t ways_;
  uint32_t unit_shift_, sector_shift_;
  Replacement policy_;
  std::vector<uint64_t> tags_;     // sets * ways; kEmpty when invalid
  std::vector<uint64_t> sectors_;  // sets * ways; bit s: sector s of the unit is filled
  // LRU: per-entry recency links within the set (index of the way), head = MRU.
  std::vector<uint32_t> prev_, next_;
  std::vector<uint32_t> head_, tail_;
  std::vector<uint64_t> plru_;  // tree bits per set (ways <= 64)
  // Wide sets look tags up by hash instead of scanning every way.
  UnitIndex index_;
  bool use_index_;
  SplitMix64 rng_;
  Evicted evicted_;
};

class MemoryModel {
 public:
  MemoryModel(const SimConfig& c, uint64_t seed);

  // Latency (ns) of one dependent access to `address` from shader core
  // `core` on `path`: the first level on the path that holds the line with
  // the sector of `address` filled, or DRAM, plus the TLB miss penalty when
  // the page misses. Inclusive levels nearer than the one that hit get the
  // sector (a sectored level allocates the line on a miss but fills only the
  // sector accessed). An exclusive level is filled only with what the level
  // before it on the path evicts, and gives up a line that hits there.
  double access(uint64_t address, CachePath path, uint32_t core = 0);

  // Which level served the last access: its index in the config's caches,
  // or -1 for DRAM.
  int last_level() const { return last_level_; }
  void clear();

 private:
  struct Level {
    const CacheLevelConfig* cfg;
    int index;
    std::vector<std::unique_ptr<SetAssociativeCache>> instances;  // per core (lazily) or one
    // The load list's position of the same cache for a texture level that
    // is also on the load path (its instances live there), else -1.
    int load_twin = -1;
  };
  SetAssociativeCache& instance(Level& l, uint32_t core);
  // Hands what levels[i] just evicted to the next level when that one is
  // exclusive, and on down the chain.
  void spill(std::vector<Level>& levels, size_t i, uint32_t core);

  const SimConfig& cfg_;
  uint64_t seed_;
  std::vector<Level> load_levels_, texture_levels_;
  std::unique_ptr<SetAssociativeCache> tlb_;
  int last_level_ = -1;
};

}  // namespace gpuscope::sim
