// Sim family `latency` (src/kernels/opencl/latency.cl): `link` lays a cycle of slot indices out as
// absolute addresses; `chase` follows them, `p = *p`, one work-item.
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
// and 3x the lines of the largest level on the load path, and the launch's
// time is its hop count times the window's mean latency. A random cycle has
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
  const bool shadowed = m.buffer_id == slots.id() && m.written == slots.last_write() &&
                        m.stride_bytes == stride_bytes && m.word == wb && start < m.next.size();

  // The window the model sees, at least 4096 hops and 3x the largest level.
  uint64_t max_lines = 0;
  for (const auto* lv : l.config().path_levels(CachePath::load_store))
    max_lines = std::max<uint64_t>(max_lines, lv->capacity_bytes / lv->line_bytes);
  const uint64_t window = std::min<uint64_t>(hops, std::max<uint64_t>(4096, 3 * max_lines));

  double window_ns = 0;
  uint64_t end = start;
  MemoryModel& mem = l.memory();
  const uint64_t base = slots.base_address();
  constexpr uint64_t kWalkLimit = uint64_t{1} << 24;
  if (shadowed) {
    // The timing window, continuing the previous one along the cycle.
    uint64_t s = m.model_cursor < m.next.size() ? m.model_cursor : start;
    for (uint64_t k = 0; k < window; ++k) {
      window_ns += mem.access(base + s * stride_bytes, CachePath::load_store);
      s = m.next[s];
      if (s >= m.next.size()) throw DeviceError("sim: chase followed a pointer outside its buffer");
    }
    m.model_cursor = static_cast<uint32_t>(s);
  }
  if (shadowed && hops > kWalkLimit &&
      (m.position.size() == m.next.size() && m.position[start] != kOffCycle ? true : index_cycle(m, start))) {
    const uint64_t len = m.order.size(), pos = m.position[start];
    end = m.order[(pos + hops) % len];
  } else if (shadowed) {
    uint64_t s = start;
    for (uint64_t k = 0; k < hops; ++k) {
      s = m.next[s];
      if (s >= m.next.size()) throw DeviceError("sim: chase followed a pointer outside its buffer");
    }
    end = s;
  } else {
    // Every hop decoded from the buffer, resolving each pointer like the GPU would.
    uint64_t addr = base + uint64_t{start} * stride_bytes;
    for (uint64_t k = 0; k < hops; ++k) {
      const auto [buf, off] = l.resolve(addr);
      if (k < window) window_ns += mem.access(addr, CachePath::load_store);
      addr = load_word(*buf, off, wb);
    }
    if (addr < base || (addr - base) % stride_bytes != 0 || (addr - base) / stride_bytes > UINT32_MAX)
      throw DeviceError("sim: chase ended outside its buffer's slots");
    end = (addr - base) / stride_bytes;
  }
  end_slot.store<uint32_t>(0, static_cast<uint32_t>(end));
  return window == 0 ? 0 : window_ns / static_cast<double>(window) * static_cast<double>(hops);
}

}  // namespace

void register_sim_family_latency(FamilyTable& table) {
  table.add({"latency", "link", 0, link});
  table.add({"latency", "chase", 1, chase});
}

}  // namespace gpuscope::sim
