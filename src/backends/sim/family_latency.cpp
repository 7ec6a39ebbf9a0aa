// Sim family `latency` (src/kernels/opencl/latency.cl): `link` lays a cycle of slot indices out as
// absolute addresses; `chase` follows them, `p = *p`, one work-item; `walk`
// follows them from many starts at once, one work-group.
//
// Semantics: exactly the OpenCL C's. link writes an ADDR_BITS-wide address
// into the first word of each slot; chase reads the words it lands on and
// writes the slot it ended on.
//
// Speed: a launch may ask for millions of hops over a buffer of hundreds of
// MiB. link keeps, beside the addresses it writes, the slot-to-slot map it
// was given (a shadow of the buffer, valid while nothing else writes the
// buffer: checked by the buffer's write stamp), so the chase walks a dense
// 4-byte array instead of decoding addresses. Very long launches (more than
// 2^24 hops) index the cycle instead of walking it. When the shadow is stale
// (the host or another kernel wrote the buffer) the chase decodes every
// pointer from the buffer like the GPU would.
//
// Time: the model is fed a window of the linked chase, at least 4096 hops
// and 3x the lines of the largest level on the load path (or of the cycle,
// where it has fewer slots), and the launch's
// time is its hop count times the window's mean latency (for `walk`, one
// chain's hop count: its chains overlap; its window is fed along the cycle
// like a chase's, so the caches hold what a walk of that many hops leaves). A random cycle has
// the same statistics everywhere, so the window stands for the whole launch.
// Consecutive windows continue each other along the cycle (not from each
// launch's true start): the caches' state then stays the state a real walk
// would leave. Restarting each window at the launch's start, hundreds of
// thousands of hops further on, put lines from elsewhere on the cycle in the
// caches and gave a chase past an LRU cache's capacity spurious hits (the
// Adreno 530 preset read 233 ns instead of 266 at 1 MiB).
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace gpuscope::sim {
namespace {

constexpr uint32_t kHopsPerRound = 16;  // latency.cl's HOP16
constexpr uint32_t kOffCycle = std::numeric_limits<uint32_t>::max();

uint32_t word_bytes(SimLaunch& l) {
  const long long bits = l.spec().integer("addr_bits", 64);
  if (bits != 32 && bits != 64) throw Unsupported(fmt::format("sim: latency with addr_bits = {}", bits));
  return static_cast<uint32_t>(bits / 8);
}

uint64_t load_word(const SimBuffer& b, uint64_t offset, uint32_t bytes) {
  return bytes == 8 ? b.load<uint64_t>(offset) : b.load<uint32_t>(offset);
}

// What link last wrote into a buffer, as slot indices.
struct LinkShadow {
  uint64_t buffer_id = 0, written = 0, stride_bytes = 0;
  uint32_t word = 0;
  std::vector<uint32_t> next;         // next[slot] = the slot its pointer names
  std::vector<uint32_t> order;        // lazily: the cycle through order[0], for long launches
  std::vector<uint32_t> position;     // slot -> index in order, kOffCycle when not on it
  uint32_t model_cursor = kOffCycle;  // where the next timing window starts
};

double link(SimLaunch& l) {
  SimBuffer& slots = l.buffer(0);
  const SimBuffer& next = l.buffer(1);
  const uint32_t stride_words = l.u32(2);
  const uint32_t count = l.u32(3);
  const uint32_t wb = word_bytes(l);
  const uint64_t stride_bytes = uint64_t{stride_words} * wb;
  const size_t items = std::min<size_t>(count, l.global().total());  // if (i < count)
  const auto nexts = next.load_all<uint32_t>(items);
  auto& shadow = l.state<LinkShadow>("latency.link");
  shadow.next.assign(slots.size_bytes() / stride_bytes, kOffCycle);
  std::copy(nexts.begin(), nexts.end(), shadow.next.begin());
  shadow.order.clear();
  shadow.position.clear();
  shadow.model_cursor = kOffCycle;
  for (size_t i = 0; i < items; ++i) {
    const uint64_t addr = slots.base_address() + uint64_t{nexts[i]} * stride_bytes;
    if (wb == 8)
      slots.store<uint64_t>(i * stride_bytes, addr);
    else
      slots.store<uint32_t>(i * stride_bytes, static_cast<uint32_t>(addr));
  }
  shadow.buffer_id = slots.id();
  shadow.written = slots.last_write();
  shadow.stride_bytes = stride_bytes;
  shadow.word = wb;
  // A streaming pass: one line written and 4 B read per item, at DRAM
  // bandwidth (bytes / (GB/s) = ns).
  const double line = l.config().path_levels(CachePath::load_store).front()->line_bytes;
  return static_cast<double>(items) * (std::max<double>(line, static_cast<double>(stride_bytes)) + 4) /
         l.config().dram_bandwidth_gbps;
}

// Indexes the cycle through `start`; false when the pointers do not return to it.
bool index_cycle(LinkShadow& m, uint32_t start) {
  m.order.clear();
  m.position.assign(m.next.size(), kOffCycle);
  uint64_t s = start;
  while (m.position[s] == kOffCycle) {
    m.position[s] = static_cast<uint32_t>(m.order.size());
    m.order.push_back(static_cast<uint32_t>(s));
    s = m.next[s];
    if (s >= m.next.size()) return false;
  }
  return s == start;
}

// Whether link's shadow describes `slots` as this launch reads it.
bool shadow_holds(const LinkShadow& m, const SimBuffer& slots, uint64_t stride_bytes, uint32_t wb) {
  return m.buffer_id == slots.id() && m.written == slots.last_write() && m.stride_bytes == stride_bytes &&
         m.word == wb;
}

// Feeds the model up to `hops` hops of the linked cycle, at least 4096 and
// 3x the largest level's lines, continuing the previous window along the
// cycle (from `start` when there is none, or the shadow is stale: then
// every pointer is decoded from the buffer). Returns the window's mean ns.
double model_window(SimLaunch& l, LinkShadow& m, bool shadowed, const SimBuffer& slots, uint64_t stride_bytes,
                    uint32_t wb, uint32_t start, uint64_t hops) {
  uint64_t max_lines = 0;
  for (const auto* lv : l.config().path_levels(CachePath::load_store))
    max_lines = std::max<uint64_t>(max_lines, lv->capacity_bytes / lv->line_bytes);
  // A cycle of fewer slots than the largest level has lines repeats within
  // the window: three turns of it reach the periodic state the whole launch
  // is in (the window continues the last one's walk), so the window needs
  // no more.
  if (shadowed) max_lines = std::min<uint64_t>(max_lines, m.next.size());
  const uint64_t window = std::min<uint64_t>(hops, std::max<uint64_t>(4096, 3 * max_lines));
  if (window == 0) return 0;
  double ns = 0;
  MemoryModel& mem = l.memory();
  const uint64_t base = slots.base_address();
  if (shadowed) {
    uint64_t s = m.model_cursor < m.next.size() ? m.model_cursor : start;
    for (uint64_t k = 0; k < window; ++k) {
      ns += mem.access(base + s * stride_bytes, CachePath::load_store);
      s = m.next[s];
      if (s >= m.next.size()) throw DeviceError("sim: chase followed a pointer outside its buffer");
    }
    m.model_cursor = static_cast<uint32_t>(s);
  } else {
    uint64_t addr = base + uint64_t{start} * stride_bytes;
    for (uint64_t k = 0; k < window; ++k) {
      ns += mem.access(addr, CachePath::load_store);
      const auto [buf, off] = l.resolve(addr);
      addr = load_word(*buf, off, wb);
    }
  }
  return ns / static_cast<double>(window);
}

// The slot `hops` hops after `start`: through the shadow (indexed for very
// long walks, more than 2^24 hops), else decoding every pointer from the
// buffer like the GPU would.
uint32_t walk_end(SimLaunch& l, LinkShadow& m, bool shadowed, const SimBuffer& slots, uint64_t stride_bytes,
                  uint32_t wb, uint32_t start, uint64_t hops) {
  constexpr uint64_t kWalkLimit = uint64_t{1} << 24;
  if (shadowed && hops > kWalkLimit &&
      (m.position.size() == m.next.size() && m.position[start] != kOffCycle ? true : index_cycle(m, start)))
    return m.order[(m.position[start] + hops) % m.order.size()];
  if (shadowed) {
    uint64_t s = start;
    for (uint64_t k = 0; k < hops; ++k) {
      s = m.next[s];
      if (s >= m.next.size()) throw DeviceError("sim: chase followed a pointer outside its buffer");
    }
    return static_cast<uint32_t>(s);
  }
  const uint64_t base = slots.base_address();
  uint64_t addr = base + uint64_t{start} * stride_bytes;
  for (uint64_t k = 0; k < hops; ++k) {
    const auto [buf, off] = l.resolve(addr);
    addr = load_word(*buf, off, wb);
  }
  if (addr < base || (addr - base) % stride_bytes != 0 || (addr - base) / stride_bytes > UINT32_MAX)
    throw DeviceError("sim: chase ended outside its buffer's slots");
  return static_cast<uint32_t>((addr - base) / stride_bytes);
}

double chase(SimLaunch& l) {
  const SimBuffer& slots = l.buffer(0);
  const uint32_t start = l.u32(1);
  const uint32_t stride_words = l.u32(2);
  const uint32_t rounds = l.u32(3);
  SimBuffer& end_slot = l.buffer(4);
  const uint32_t wb = word_bytes(l);
  const uint64_t stride_bytes = uint64_t{stride_words} * wb;
  if (stride_bytes == 0 || uint64_t{start} * stride_bytes >= slots.size_bytes())
    throw DeviceError(fmt::format("sim: chase starts at slot {} outside its buffer", start));
  if (l.global().total() != 1) throw Unsupported("sim: latency chase is modelled for one work-item only");
  const uint64_t hops = uint64_t{rounds} * kHopsPerRound;
  auto& m = l.state<LinkShadow>("latency.link");
  const bool shadowed = shadow_holds(m, slots, stride_bytes, wb) && start < m.next.size();
  const double mean_ns = model_window(l, m, shadowed, slots, stride_bytes, wb, start, hops);
  end_slot.store<uint32_t>(0, walk_end(l, m, shadowed, slots, stride_bytes, wb, start, hops));
  return mean_ns * static_cast<double>(hops);
}

double walk(SimLaunch& l) {
  const SimBuffer& slots = l.buffer(0);
  const SimBuffer& starts = l.buffer(1);
  const uint32_t stride_words = l.u32(2);
  const uint32_t rounds = l.u32(3);
  SimBuffer& ends = l.buffer(4);
  const uint32_t wb = word_bytes(l);
  const uint64_t stride_bytes = uint64_t{stride_words} * wb;
  const uint64_t items = l.global().total();
  if (l.local().total() != 0 && l.local().total() != items)
    throw Unsupported("sim: latency walk is modelled for one work-group only");
  if (stride_bytes == 0 || starts.size_bytes() < items * 4 || ends.size_bytes() < items * 4)
    throw DeviceError("sim: latency walk's starts or ends buffer is smaller than its work-items");
  const uint64_t hops = uint64_t{rounds} * kHopsPerRound;
  const auto first = starts.load_all<uint32_t>(items);
  auto& m = l.state<LinkShadow>("latency.link");
  bool shadowed = shadow_holds(m, slots, stride_bytes, wb);
  for (uint32_t s : first) {
    if (uint64_t{s} * stride_bytes >= slots.size_bytes())
      throw DeviceError(fmt::format("sim: walk starts at slot {} outside its buffer", s));
    shadowed = shadowed && s < m.next.size();
  }
  if (items == 0) return 0;
  const double mean_ns = model_window(l, m, shadowed, slots, stride_bytes, wb, first[0], items * hops);
  for (uint64_t i = 0; i < items; ++i)
    ends.store<uint32_t>(i * 4, walk_end(l, m, shadowed, slots, stride_bytes, wb, first[i], hops));
  return mean_ns * static_cast<double>(hops);
}

}  // namespace

void register_sim_family_latency(FamilyTable& table) {
  table.add({"latency", "link", 0, link});
  table.add({"latency", "chase", 1, chase});
  table.add({"latency", "walk", 0, walk});
}

}  // namespace gpuscope::sim
