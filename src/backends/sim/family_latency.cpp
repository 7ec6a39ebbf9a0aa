// Sim family of latency.cl: `link` lays a cycle of slot indices out as
// absolute addresses; `chase` follows them, `p = *p`, one work-item.
//
// Semantics: exactly the OpenCL C's. link writes an ADDR_BITS-wide address
// into the first word of each slot; chase reads the words it lands on and
// writes the slot it ended on.
//
// Speed: a launch may ask for billions of hops. The walk is memoised: the
// first chase over a freshly linked buffer follows the pointers once around
// the cycle it starts on (O(slots), as the probe's own set-up is), after
// which any launch's end is an index computation. When the pointers do not
// form a cycle through the start (a rho, or a pointer leaving the buffer) the
// chase walks every hop for real.
//
// Time: the model is fed a window of the actual chase (the addresses the
// launch visits, from its start, continuing the caches' state from earlier
// launches), at least 4096 hops and 3x the lines of the largest level on the
// load path so that the caches reach their steady state within it; the
// launch's time is its hop count times the window's mean latency. A random
// cycle has the same statistics everywhere, so the window stands for the
// whole launch.
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
  const long long bits = l.define_int("ADDR_BITS", 64);
  if (bits != 32 && bits != 64) throw Unsupported(fmt::format("sim: latency.cl with ADDR_BITS={}", bits));
  return static_cast<uint32_t>(bits / 8);
}

uint64_t load_word(const SimBuffer& b, uint64_t offset, uint32_t bytes) {
  return bytes == 8 ? b.load<uint64_t>(offset) : b.load<uint32_t>(offset);
}

double link(SimLaunch& l) {
  SimBuffer& slots = l.buffer(0);
  const SimBuffer& next = l.buffer(1);
  const uint32_t stride_words = l.u32(2);
  const uint32_t count = l.u32(3);
  const uint32_t wb = word_bytes(l);
  const uint64_t stride_bytes = uint64_t{stride_words} * wb;
  const size_t items = std::min<size_t>(count, l.global().total());  // if (i < count)
  const auto nexts = next.load_all<uint32_t>(items);
  for (size_t i = 0; i < items; ++i) {
    const uint64_t addr = slots.base_address() + uint64_t{nexts[i]} * stride_bytes;
    if (wb == 8)
      slots.store<uint64_t>(i * stride_bytes, addr);
    else
      slots.store<uint32_t>(i * stride_bytes, static_cast<uint32_t>(addr));
  }
  // A streaming pass: one line written and 4 B read per item, at DRAM
  // bandwidth (bytes / (GB/s) = ns).
  const double line = l.config().path_levels(CachePath::load_store).front()->line_bytes;
  return static_cast<double>(items) * (std::max<double>(line, static_cast<double>(stride_bytes)) + 4) /
         l.config().dram_bandwidth_gbps;
}

// The cycle through one start slot of one buffer, as last linked.
struct ChaseMemo {
  uint64_t buffer_id = 0, written = 0, stride_bytes = 0;
  uint32_t word = 0;
  std::vector<uint32_t> order;     // slots in visiting order, from the slot the memo was built at
  std::vector<uint32_t> position;  // slot -> index in order, kOffCycle when not on the cycle
};

// Follows the pointers from `start` until they return to it. False when they
// do not (leave the buffer, land between slots, or loop without returning).
bool build_memo(ChaseMemo& m, const SimBuffer& b, uint32_t start, uint64_t stride_bytes, uint32_t wb) {
  const uint64_t slots = b.size_bytes() / stride_bytes;
  m.order.clear();
  m.position.assign(slots, kOffCycle);
  uint64_t s = start;
  while (true) {
    if (m.position[s] != kOffCycle) return s == start;
    m.position[s] = static_cast<uint32_t>(m.order.size());
    m.order.push_back(static_cast<uint32_t>(s));
    const uint64_t addr = load_word(b, s * stride_bytes, wb);
    if (addr < b.base_address()) return false;
    const uint64_t off = addr - b.base_address();
    if (off % stride_bytes != 0 || off / stride_bytes >= slots) return false;
    s = off / stride_bytes;
  }
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
  if (l.global().total() != 1) throw Unsupported("sim: latency.cl chase is modelled for one work-item only");
  const uint64_t hops = uint64_t{rounds} * kHopsPerRound;

  auto& m = l.state<ChaseMemo>("latency.chase");
  const bool valid = m.buffer_id == slots.id() && m.written == slots.last_write() &&
                     m.stride_bytes == stride_bytes && m.word == wb && start < m.position.size() &&
                     m.position[start] != kOffCycle;
  bool cyclic = valid;
  if (!valid) {
    cyclic = build_memo(m, slots, start, stride_bytes, wb);
    m.buffer_id = cyclic ? slots.id() : 0;
    m.written = slots.last_write();
    m.stride_bytes = stride_bytes;
    m.word = wb;
  }

  // The window the model sees, at least 4096 hops and 3x the largest level.
  uint64_t max_lines = 0;
  for (const auto* lv : l.config().path_levels(CachePath::load_store))
    max_lines = std::max<uint64_t>(max_lines, lv->capacity_bytes / lv->line_bytes);
  const uint64_t window = std::min<uint64_t>(hops, std::max<uint64_t>(4096, 3 * max_lines));

  double window_ns = 0;
  uint64_t end = start;
  MemoryModel& mem = l.memory();
  if (cyclic) {
    const uint64_t len = m.order.size();
    const uint64_t pos = m.position[start];
    for (uint64_t k = 1; k <= window; ++k) {
      const uint64_t slot = m.order[(pos + k - 1) % len];  // the hop loads from the slot it stands on
      window_ns += mem.access(slots.base_address() + slot * stride_bytes, CachePath::load_store);
    }
    end = m.order[(pos + hops) % len];
  } else {
    // Every hop for real, resolving each pointer like the GPU would.
    uint64_t addr = slots.base_address() + uint64_t{start} * stride_bytes;
    for (uint64_t k = 0; k < hops; ++k) {
      const auto [buf, off] = l.resolve(addr);
      if (k < window) window_ns += mem.access(addr, CachePath::load_store);
      addr = load_word(*buf, off, wb);
    }
    if (addr < slots.base_address() || (addr - slots.base_address()) / stride_bytes > UINT32_MAX)
      throw DeviceError("sim: chase ended outside its buffer");
    end = (addr - slots.base_address()) / stride_bytes;
  }
  end_slot.store<uint32_t>(0, static_cast<uint32_t>(end));
  return window == 0 ? 0 : window_ns / static_cast<double>(window) * static_cast<double>(hops);
}

}  // namespace

void register_sim_family_latency(FamilyTable& table) {
  table.add({"latency.cl", "link", 0, link});
  table.add({"latency.cl", "chase", 1, chase});
}

}  // namespace gpuscope::sim
