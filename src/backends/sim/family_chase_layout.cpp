// Sim family `chase_layout` (src/kernels/opencl/chase_layout.cl): the link kernels write device addresses
// into a buffer word by word (link_words, link_pairs, link_regions), and
// chase_groups follows them, `p = *p`, one work-item per work-group.
//
// Semantics: exactly the OpenCL C's. Links store the real sim device address
// of the word named (ADDR_BITS wide); the chase decodes every pointer from
// the buffer like the GPU would (a pointer outside every buffer faults) and
// writes the word it ended on, relative to `mem`. A launch longer than the
// cycle it walks is cut short exactly: once the walk is back at its start,
// only the remainder of the hops modulo the cycle's length is walked.
//
// Time: the groups run at the same time, one per shader core (group g on
// core g % shader_cores): their loads go through the memory model
// interleaved, one hop of each group in turn, so that per-core levels are
// private to each group and shared levels are shared between them. (More
// groups than cores would take turns on the cores; they are timed as if all
// ran at once, since the probes launch at most one group per compute unit.)
// The model is fed a window of each group's chase, at least 4096 hops and
// as many as the largest level on the load path has lines or the TLB
// entries (three turns of the groups' cycles where those are shorter), and a group's time is its hop count times its window's mean
// latency; the launch lasts as long as its slowest group. As in
// family_latency.cpp, the windows of consecutive launches continue each
// other along each group's walk (the model's own cursor, while the buffer
// is unchanged), so the caches hold what a real walk would leave in them.
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace gpuscope::sim {
namespace {

constexpr uint32_t kHopsPerRound = 16;  // chase_layout.cl's HOP16

uint32_t word_bytes(SimLaunch& l) {
  const long long bits = l.spec().integer("addr_bits", 64);
  if (bits != 32 && bits != 64)
    throw Unsupported(fmt::format("sim: chase_layout with addr_bits = {}", bits));
  return static_cast<uint32_t>(bits / 8);
}

void store_word(SimBuffer& b, uint64_t word, uint32_t wb, uint64_t value) {
  if (wb == 8)
    b.store<uint64_t>(word * 8, value);
  else
    b.store<uint32_t>(word * 4, static_cast<uint32_t>(value));
}

uint64_t address_of(const SimBuffer& b, uint64_t word, uint32_t wb) {
  const uint64_t a = b.base_address() + word * wb;
  return wb == 8 ? a : static_cast<uint32_t>(a);
}

// A link kernel streams its index arrays in and writes one line per stored
// word: bytes over DRAM bandwidth (bytes / (GB/s) = ns).
double link_ns(SimLaunch& l, size_t items, double index_bytes_per_item, double stores_per_item) {
  const double line = l.config().path_levels(CachePath::load_store).front()->line_bytes;
  return static_cast<double>(items) * (index_bytes_per_item + stores_per_item * line) /
         l.config().dram_bandwidth_gbps;
}

double link_words(SimLaunch& l) {
  SimBuffer& mem = l.buffer(0);
  const SimBuffer& from = l.buffer(1);
  const SimBuffer& to = l.buffer(2);
  const uint32_t count = l.u32(3);
  const uint32_t wb = word_bytes(l);
  const size_t items = std::min<size_t>(count, l.global().total());  // if (i < count)
  const auto f = from.load_all<uint32_t>(items);
  const auto t = to.load_all<uint32_t>(items);
  for (size_t i = 0; i < items; ++i) store_word(mem, f[i], wb, address_of(mem, t[i], wb));
  return link_ns(l, items, 8, 1);
}

double link_pairs(SimLaunch& l) {
  SimBuffer& mem = l.buffer(0);
  const SimBuffer& next = l.buffer(1);
  const uint64_t anchor_words = l.u32(2);
  const uint64_t pair_words = l.u32(3);
  const uint32_t count = l.u32(4);
  const uint32_t wb = word_bytes(l);
  const size_t items = std::min<size_t>(count, l.global().total());
  const auto nx = next.load_all<uint32_t>(items);
  for (size_t i = 0; i < items; ++i) {
    const uint64_t a = i * anchor_words;
    store_word(mem, a, wb, address_of(mem, a + pair_words, wb));
    store_word(mem, a + pair_words, wb, address_of(mem, uint64_t{nx[i]} * anchor_words, wb));
  }
  return link_ns(l, items, 4, 2);
}

double link_regions(SimLaunch& l) {
  SimBuffer& mem = l.buffer(0);
  const SimBuffer& next = l.buffer(1);
  const uint64_t stride_words = l.u32(2);
  const uint32_t count = l.u32(3);
  const uint64_t region_words = l.u64(4);
  const uint32_t regions = l.u32(5);
  const uint32_t wb = word_bytes(l);
  const size_t items = std::min<size_t>(size_t{count} * regions, l.global().total());
  const auto nx = next.load_all<uint32_t>(std::min<size_t>(count, items));
  for (size_t id = 0; id < items; ++id) {
    const uint64_t base = id / count * region_words;
    const size_t i = id % count;
    store_word(mem, base + i * stride_words, wb, address_of(mem, base + nx[i] * stride_words, wb));
  }
  return link_ns(l, items, 4, 1);
}

// Where the model's walk of a group stopped, valid while the buffer is
// unchanged.
struct ModelCursors {
  uint64_t buffer_id = 0, written = 0;
  std::map<uint32_t, uint64_t> at;  // group -> address of its next load
};

// Follows pointers from `mem`'s buffer like the GPU: the next address is the
// word at the current one.
class Walker {
 public:
  Walker(SimLaunch& l, const SimBuffer& mem, uint32_t wb) : l_(l), mem_(mem), wb_(wb) {}
  uint64_t next(uint64_t addr) const {
    if (addr >= mem_.base_address() && addr - mem_.base_address() + wb_ <= mem_.size_bytes())
      return load(mem_, addr - mem_.base_address());
    const auto [buf, off] = l_.resolve(addr);
    if (off + wb_ > buf->size_bytes()) throw DeviceError("sim: chase read past the end of a buffer");
    return load(*buf, off);
  }

 private:
  uint64_t load(const SimBuffer& b, uint64_t off) const {
    return wb_ == 8 ? b.load<uint64_t>(off) : b.load<uint32_t>(off);
  }
  SimLaunch& l_;
  const SimBuffer& mem_;
  uint32_t wb_;
};

double chase_groups(SimLaunch& l) {
  const SimBuffer& mem = l.buffer(0);
  const SimBuffer& starts = l.buffer(1);
  const uint32_t rounds = l.u32(2);
  SimBuffer& ends = l.buffer(3);
  const uint32_t wb = word_bytes(l);
  const size_t lsz = l.local().total() ? l.local().total() : 1;
  const auto groups = static_cast<uint32_t>(l.global().total() / lsz);
  if (groups == 0) return 0;
  if (starts.size_bytes() < groups * 4ull || ends.size_bytes() < groups * 4ull)
    throw DeviceError("sim: chase_groups' starts or ends buffer is smaller than the grid");
  const uint64_t hops = uint64_t{rounds} * kHopsPerRound;
  const auto start_words = starts.load_all<uint32_t>(groups);
  const Walker walker(l, mem, wb);
  const uint64_t base = mem.base_address();

  // The work: each group's walk, exactly. `longest_cycle`: the longest
  // group cycle seen closing, or no bound where one did not close.
  uint64_t longest_cycle = 0;
  bool all_closed = true;
  for (uint32_t g = 0; g < groups; ++g) {
    const uint64_t first = address_of(mem, start_words[g], wb);
    uint64_t addr = first;
    bool closed = false;
    for (uint64_t k = 0; k < hops; ++k) {
      addr = walker.next(addr);
      if (addr == first) {
        closed = true;
        longest_cycle = std::max(longest_cycle, k + 1);
        if (k + 1 == hops) break;
        // Back at the start after k + 1 hops: only the remainder is left.
        const uint64_t left = (hops - k - 1) % (k + 1);
        for (uint64_t j = 0; j < left; ++j) addr = walker.next(addr);
        break;
      }
    }
    all_closed = all_closed && closed;
    if (addr < base || (addr - base) % wb != 0 || (addr - base) / wb > UINT32_MAX)
      throw DeviceError("sim: chase_groups ended outside mem's words");
    ends.store<uint32_t>(uint64_t{g} * 4, static_cast<uint32_t>((addr - base) / wb));
  }

  // The time: a window of each group's walk, interleaved through the model.
  const SimConfig& c = l.config();
  uint64_t max_lines = c.tlb.entries;
  for (const auto* lv : c.path_levels(CachePath::load_store))
    max_lines = std::max<uint64_t>(max_lines, lv->capacity_bytes / lv->line_bytes);
  // Cycles shorter than that repeat within the window: three turns of the
  // longest reach the periodic state the launch is in.
  if (all_closed) max_lines = std::min(max_lines, 3 * longest_cycle);
  const uint64_t window = std::min<uint64_t>(hops, std::max<uint64_t>(4096, max_lines));
  if (window == 0) return 0;
  auto& cur = l.state<ModelCursors>("chase_layout.cursors");
  if (cur.buffer_id != mem.id() || cur.written != mem.last_write()) {
    cur.buffer_id = mem.id();
    cur.written = mem.last_write();
    cur.at.clear();
  }
  std::vector<uint64_t> at(groups);
  for (uint32_t g = 0; g < groups; ++g) {
    const auto it = cur.at.find(g);
    at[g] = it != cur.at.end() ? it->second : address_of(mem, start_words[g], wb);
  }
  std::vector<double> ns(groups, 0);
  MemoryModel& model = l.memory();
  const uint32_t cores = std::max<uint32_t>(1, c.core.shader_cores);
  for (uint64_t k = 0; k < window; ++k)
    for (uint32_t g = 0; g < groups; ++g) {
      ns[g] += model.access(at[g], CachePath::load_store, g % cores);
      at[g] = walker.next(at[g]);
    }
  for (uint32_t g = 0; g < groups; ++g) cur.at[g] = at[g];
  return *std::max_element(ns.begin(), ns.end()) / static_cast<double>(window) * static_cast<double>(hops);
}

}  // namespace

void register_sim_family_chase_layout(FamilyTable& table) {
  table.add({"chase_layout", "link_words", 0, link_words});
  table.add({"chase_layout", "link_pairs", 0, link_pairs});
  table.add({"chase_layout", "link_regions", 0, link_regions});
  table.add({"chase_layout", "chase_groups", 0, chase_groups});
}

}  // namespace gpuscope::sim
