#include "backends/sim/cache_model.hpp"

#include <algorithm>
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

void UnitIndex::reset(uint64_t capacity) {
  const uint64_t slots = std::bit_ceil(std::max<uint64_t>(2 * capacity, 16));
  keys_.assign(slots, kEmpty);
  entries_.assign(slots, kAbsent);
  mask_ = slots - 1;
  shift_ = 64 - std::countr_zero(slots);
}

void UnitIndex::clear() { std::fill(keys_.begin(), keys_.end(), kEmpty); }

uint32_t UnitIndex::find(uint64_t key) const {
  for (uint64_t i = home(key);; i = (i + 1) & mask_) {
    if (keys_[i] == key) return entries_[i];
    if (keys_[i] == kEmpty) return kAbsent;
  }
}

void UnitIndex::insert(uint64_t key, uint32_t entry) {
  uint64_t i = home(key);
  while (keys_[i] != kEmpty) i = (i + 1) & mask_;
  keys_[i] = key;
  entries_[i] = entry;
}

void UnitIndex::erase(uint64_t key) {
  uint64_t i = home(key);
  while (keys_[i] != key) {
    if (keys_[i] == kEmpty) return;
    i = (i + 1) & mask_;
  }
  // Backward shift: pull up each later key of the run whose home does not
  // lie in (i, j], so that no lookup meets the hole before its key.
  for (uint64_t j = (i + 1) & mask_; keys_[j] != kEmpty; j = (j + 1) & mask_) {
    const uint64_t h = home(keys_[j]);
    const bool between = i <= j ? (i < h && h <= j) : (i < h || h <= j);
    if (between) continue;
    keys_[i] = keys_[j];
    entries_[i] = entries_[j];
    i = j;
  }
  keys_[i] = kEmpty;
}

SetAssociativeCache::SetAssociativeCache(uint64_t entries, uint32_t ways, uint32_t unit_shift,
                                         Replacement policy, uint64_t seed, uint32_t sector_shift)
    : sets_(entries / ways),
      ways_(ways),
      unit_shift_(unit_shift),
      sector_shift_(sector_shift),
      policy_(policy),
      use_index_(ways > kScanWays),
      rng_(seed) {
  if (use_index_) index_.reset(sets_ * ways_);
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
    const uint32_t e = index_.find(tag);
    return e == UnitIndex::kAbsent ? ways_ : static_cast<uint32_t>(e - set * ways_);
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

uint64_t SetAssociativeCache::sector_bits(uint64_t address, uint64_t bytes) const {
  const uint64_t per_unit = uint64_t{1} << (unit_shift_ - sector_shift_);
  const uint64_t first = (address >> sector_shift_) & (per_unit - 1);
  const uint64_t count = std::max<uint64_t>(1, (bytes + (uint64_t{1} << sector_shift_) - 1) >> sector_shift_);
  uint64_t bits = 0;
  for (uint64_t s = first; s < std::min(per_unit, first + count); ++s) bits |= uint64_t{1} << s;
  return bits;
}

uint32_t SetAssociativeCache::allocate(uint64_t set, uint64_t tag) {
  const uint32_t v = victim(set);
  uint64_t& slot = tags_[set * ways_ + v];
  evicted_ = {};
  if (slot != kEmpty) evicted_ = {slot << unit_shift_, uint64_t{1} << unit_shift_};
  if (use_index_) {
    if (slot != kEmpty) index_.erase(slot);
    index_.insert(tag, static_cast<uint32_t>(set * ways_ + v));
  }
  slot = tag;
  return v;
}

bool SetAssociativeCache::access(uint64_t address) {
  const uint64_t tag = address >> unit_shift_;
  const uint64_t set = tag % sets_;
  const uint32_t way = find(set, tag);
  const uint64_t sector_bit = sector_bits(address, 1);
  evicted_ = {};
  if (way < ways_) {
    touch(set, way);
    uint64_t& filled = sectors_[set * ways_ + way];
    const bool hit = (filled & sector_bit) != 0;
    filled |= sector_bit;
    return hit;
  }
  const uint32_t v = allocate(set, tag);
  sectors_[set * ways_ + v] = sector_bit;
  touch(set, v);
  return false;
}

bool SetAssociativeCache::holds(uint64_t address) const {
  const uint64_t tag = address >> unit_shift_;
  const uint64_t set = tag % sets_;
  const uint32_t way = find(set, tag);
  return way < ways_ && (sectors_[set * ways_ + way] & sector_bits(address, 1)) != 0;
}

void SetAssociativeCache::erase(uint64_t address) {
  const uint64_t tag = address >> unit_shift_;
  const uint64_t set = tag % sets_;
  const uint32_t way = find(set, tag);
  if (way == ways_) return;
  if (use_index_) index_.erase(tag);
  tags_[set * ways_ + way] = kEmpty;
  sectors_[set * ways_ + way] = 0;
  if (policy_ == Replacement::lru && tail_[set] != way) {
    // The freed way becomes the next victim: move it to the tail.
    const uint64_t base = set * ways_;
    const uint32_t p = prev_[base + way], n = next_[base + way];
    if (p != kNone) next_[base + p] = n;
    if (n != kNone) prev_[base + n] = p;
    if (head_[set] == way) head_[set] = n;
    prev_[base + way] = tail_[set];
    next_[base + way] = kNone;
    next_[base + tail_[set]] = way;
    tail_[set] = way;
  }
}

void SetAssociativeCache::install(uint64_t address, uint64_t bytes) {
  const uint64_t tag = address >> unit_shift_;
  const uint64_t set = tag % sets_;
  uint32_t way = find(set, tag);
  evicted_ = {};
  if (way == ways_) {
    way = allocate(set, tag);
    sectors_[set * ways_ + way] = 0;
  }
  sectors_[set * ways_ + way] |= sector_bits(address, bytes);
  touch(set, way);
}

MemoryModel::MemoryModel(const SimConfig& c, uint64_t seed) : cfg_(c), seed_(seed) {
  for (size_t i = 0; i < c.caches.size(); ++i) {
    const auto& l = c.caches[i];
    if (l.serves_loads()) load_levels_.push_back({&l, static_cast<int>(i), {}});
    if (l.serves_texture()) texture_levels_.push_back({&l, static_cast<int>(i), {}});
  }
  // A level on both paths is one cache: the texture list shares the load
  // list's instances through instance().
  for (auto& t : texture_levels_)
    for (size_t j = 0; j < load_levels_.size(); ++j)
      if (load_levels_[j].index == t.index) t.load_twin = static_cast<int>(j);
  if (c.tlb.entries) {
    const uint32_t ways = c.tlb.associativity ? c.tlb.associativity : c.tlb.entries;
    tlb_ = std::make_unique<SetAssociativeCache>(c.tlb.entries, ways, std::countr_zero(c.tlb.page_bytes),
                                                 c.tlb.replacement, seed ^ 0x71b);
  }
}

SetAssociativeCache& MemoryModel::instance(Level& l, uint32_t core) {
  // Levels on both paths live in the load list; texture-only levels in the
  // texture list.
  Level* owner = l.load_twin >= 0 ? &load_levels_[static_cast<size_t>(l.load_twin)] : &l;
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

void MemoryModel::spill(std::vector<Level>& levels, size_t i, uint32_t core) {
  for (; i + 1 < levels.size() && levels[i + 1].cfg->exclusive; ++i) {
    const SetAssociativeCache::Evicted v = instance(levels[i], core).evicted();
    if (v.bytes == 0) return;
    instance(levels[i + 1], core).install(v.address, v.bytes);
  }
}

double MemoryModel::access(uint64_t address, CachePath path, uint32_t core) {
  double ns = 0;
  if (tlb_ && !tlb_->access(address)) ns += cfg_.tlb.miss_penalty_ns;
  auto& levels = path == CachePath::texture ? texture_levels_ : load_levels_;
  // The first level holding the sector, before any level changes.
  size_t hit = levels.size();
  for (size_t i = 0; i < levels.size() && hit == levels.size(); ++i)
    if (instance(levels[i], core).holds(address)) hit = i;
  // Fill the inclusive levels up to the one that hit; each one's victim
  // goes on to the exclusive levels behind it.
  for (size_t i = 0; i <= hit && i < levels.size(); ++i) {
    SetAssociativeCache& c = instance(levels[i], core);
    if (levels[i].cfg->exclusive) {
      if (i == hit) c.erase(address);
      continue;
    }
    c.access(address);
    if (i < hit) spill(levels, i, core);
  }
  if (hit == levels.size()) {
    last_level_ = -1;
    return ns + cfg_.dram_latency_ns;
  }
  last_level_ = levels[hit].index;
  return ns + levels[hit].cfg->hit_latency_ns;
}

void MemoryModel::clear() {
  for (auto* ls : {&load_levels_, &texture_levels_})
    for (auto& l : *ls)
      for (auto& p : l.instances)
        if (p) p->clear();
  if (tlb_) tlb_->clear();
}

}  // namespace gpuscope::sim
