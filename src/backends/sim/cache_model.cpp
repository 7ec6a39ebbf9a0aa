#include "backends/sim/cache_model.hpp"

#include <bit>
#include <limits>

namespace gpuscope::sim {
namespace {
constexpr uint64_t kEmpty = std::numeric_limits<uint64_t>::max();
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
// Above this many ways a lookup goes through a hash of resident units rather
// than a scan of the set (fully associative TLBs and caches).
constexpr uint32_t kScanWays = 16;
}  // namespace

SetAssociativeCache::SetAssociativeCache(uint64_t entries, uint32_t ways, uint32_t unit_shift,
                                         Replacement policy, uint64_t seed, uint32_t sector_shift)
    : sets_(entries / ways),
      ways_(ways),
      unit_shift_(unit_shift),
      sector_shift_(sector_shift),
      policy_(policy),
      use_index_(ways > kScanWays),
      rng_(seed) {
  clear();
}

void SetAssociativeCache::clear() {
  tags_.assign(sets_ * ways_, kEmpty);
  sectors_.assign(sets_ * ways_, 0);
  index_.clear();
  if (policy_ == Replacement::lru) {
    prev_.resize(sets_ * ways_);
    next_.resize(sets_ * ways_);
    head_.assign(sets_, 0);
    tail_.assign(sets_, ways_ - 1);
    for (uint64_t s = 0; s < sets_; ++s)
      for (uint32_t w = 0; w < ways_; ++w) {
        prev_[s * ways_ + w] = w == 0 ? kNone : w - 1;
        next_[s * ways_ + w] = w + 1 == ways_ ? kNone : w + 1;
      }
  }
  if (policy_ == Replacement::plru) plru_.assign(sets_, 0);
}

uint32_t SetAssociativeCache::find(uint64_t set, uint64_t tag) const {
  if (use_index_) {
    const auto it = index_.find(tag);
    return it == index_.end() ? ways_ : static_cast<uint32_t>(it->second - set * ways_);
  }
  const uint64_t* t = &tags_[set * ways_];
  for (uint32_t w = 0; w < ways_; ++w)
    if (t[w] == tag) return w;
  return ways_;
}

void SetAssociativeCache::touch(uint64_t set, uint32_t way) {
  if (policy_ == Replacement::lru) {
    const uint64_t base = set * ways_;
    if (head_[set] == way) return;
    // Unlink, then push at the head (most recently used).
    const uint32_t p = prev_[base + way], n = next_[base + way];
    if (p != kNone) next_[base + p] = n;
    if (n != kNone) prev_[base + n] = p;
    if (tail_[set] == way) tail_[set] = p;
    prev_[base + way] = kNone;
    next_[base + way] = head_[set];
    prev_[base + head_[set]] = way;
    head_[set] = way;
  } else if (policy_ == Replacement::plru) {
    // Tree PLRU: on the path from the root to `way`, point every node away
    // from the side just used.
    uint64_t& bits = plru_[set];
    uint32_t node = 1;
    for (uint32_t span = ways_; span > 1; span /= 2) {
      const bool right = (way % span) >= span / 2;
      if (right)
        bits &= ~(uint64_t{1} << node);  // 0: victim on the left
      else
        bits |= uint64_t{1} << node;  // 1: victim on the right
      node = 2 * node + (right ? 1 : 0);
    }
  }
}

uint32_t SetAssociativeCache::victim(uint64_t set) {
  const uint64_t base = set * ways_;
  for (uint32_t w = 0; w < ways_ && !use_index_; ++w)
    if (tags_[base + w] == kEmpty) return w;
  switch (policy_) {
    case Replacement::lru:
      return tail_[set];
    case Replacement::random:
      return rng_.below(ways_);
    case Replacement::plru: {
      const uint64_t bits = plru_[set];
      uint32_t node = 1, way = 0;
      for (uint32_t span = ways_; span > 1; span /= 2) {
        const bool right = (bits >> node) & 1;
        if (right) way += span / 2;
        node = 2 * node + (right ? 1 : 0);
      }
      return way;
    }
  }
  return 0;
}

bool SetAssociativeCache::access(uint64_t address) {
  const uint64_t tag = address >> unit_shift_;
  const uint64_t set = tag % sets_;
  const uint32_t way = find(set, tag);
  const uint64_t sector_bit =
      uint64_t{1} << ((address >> sector_shift_) & ((uint64_t{1} << (unit_shift_ - sector_shift_)) - 1));
  if (way < ways_) {
    touch(set, way);
    uint64_t& filled = sectors_[set * ways_ + way];
    const bool hit = (filled & sector_bit) != 0;
    filled |= sector_bit;
    return hit;
  }
  const uint32_t v = victim(set);
  uint64_t& slot = tags_[set * ways_ + v];
  if (use_index_) {
    if (slot != kEmpty) index_.erase(slot);
    index_[tag] = static_cast<uint32_t>(set * ways_ + v);
  }
  slot = tag;
  sectors_[set * ways_ + v] = sector_bit;
  touch(set, v);
  return false;
}

MemoryModel::MemoryModel(const SimConfig& c, uint64_t seed) : cfg_(c), seed_(seed) {
  for (size_t i = 0; i < c.caches.size(); ++i) {
    const auto& l = c.caches[i];
    if (l.serves_loads()) load_levels_.push_back({&l, static_cast<int>(i), {}});
    if (l.serves_texture()) texture_levels_.push_back({&l, static_cast<int>(i), {}});
  }
  // A level on both paths is one cache: the texture list shares the load
  // list's instances through instance(), keyed by the config index.
  if (c.tlb.entries) {
    const uint32_t ways = c.tlb.associativity ? c.tlb.associativity : c.tlb.entries;
    tlb_ = std::make_unique<SetAssociativeCache>(c.tlb.entries, ways, std::countr_zero(c.tlb.page_bytes),
                                                 c.tlb.replacement, seed ^ 0x71b);
  }
}

SetAssociativeCache& MemoryModel::instance(Level& l, uint32_t core) {
  // Levels on both paths live in the load list; texture-only levels in the
  // texture list.
  Level* owner = &l;
  if (l.cfg->serves_loads())
    for (auto& ll : load_levels_)
      if (ll.index == l.index) owner = &ll;
  const uint32_t slot = owner->cfg->per_core ? core % cfg_.core.shader_cores : 0;
  if (owner->instances.size() <= slot) owner->instances.resize(slot + 1);
  auto& p = owner->instances[slot];
  if (!p) {
    const auto& c = *owner->cfg;
    p = std::make_unique<SetAssociativeCache>(
        c.capacity_bytes / c.line_bytes, c.associativity, std::countr_zero(c.line_bytes), c.replacement,
        seed_ ^ (static_cast<uint64_t>(owner->index) << 32) ^ slot, std::countr_zero(c.sector_bytes));
  }
  return *p;
}

double MemoryModel::access(uint64_t address, CachePath path, uint32_t core) {
  double ns = 0;
  if (tlb_ && !tlb_->access(address)) ns += cfg_.tlb.miss_penalty_ns;
  auto& levels = path == CachePath::texture ? texture_levels_ : load_levels_;
  for (auto& l : levels) {
    if (instance(l, core).access(address)) {
      last_level_ = l.index;
      return ns + l.cfg->hit_latency_ns;
    }
  }
  last_level_ = -1;
  return ns + cfg_.dram_latency_ns;
}

void MemoryModel::clear() {
  for (auto* ls : {&load_levels_, &texture_levels_})
    for (auto& l : *ls)
      for (auto& p : l.instances)
        if (p) p->clear();
  if (tlb_) tlb_->clear();
}

}  // namespace gpuscope::sim
