// Sim family `coalescing` (src/kernels/opencl/coalescing.cl): `fill` writes A[i] = hash(i), `copy` does
// B[i] = A[i * stride + offset], one 32-bit element per work-item.
//
// Semantics: exactly the OpenCL C's. A launch whose result is already in
// its buffer is not redone: fill skips when the source still holds what the
// same fill left (its write stamp), and copy keeps the values of its last
// configuration, rewriting them into B only when B was written since (the
// coalescing probe writes sentinels into B before each point).
//
// Time, copy: each wave (wave_width consecutive work-items of one
// work-group) issues one load and one store instruction; the memory system
// moves whole segments, a segment being the first load-path level's
// sector_bytes, so a wave costs the distinct segments its addresses touch,
// for the load and for the store. The bytes moved (segments x segment size)
// pass at the bandwidth of the level that holds the footprint (the distinct
// segments touched), or DRAM's. Memory-level parallelism bounds the rate
// too (Little's law): the work-items resident on the device, work-group
// size x work-groups per core (as many as the core's wave slots allow) x
// shader cores, each have one load in flight for the latency of that
// level, so at most resident x 4 B of the source arrive per latency. The
// launch takes the longer of the two. Small work-groups are latency-bound,
// large ones bandwidth-bound: the copy saturates at the work-group size
// where resident x 8 B / latency reaches the bandwidth.
//
// Time, fill: its writes stream to DRAM (count x 4 B at DRAM bandwidth).
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"
#include "kernels/coalescing_twin.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

namespace gpuscope::sim {
namespace {

constexpr uint64_t kElementBytes = 4;
constexpr size_t kFillBlock = 1 << 16;  // elements written per host write

struct FillMemo {
  uint64_t buffer_id = 0, written = 0, count = 0;
  uint32_t seed = 0;
};

double fill(SimLaunch& l) {
  SimBuffer& a = l.buffer(0);
  const uint64_t count = l.u64(1);
  const uint32_t seed = l.u32(2);
  if (l.global().total() == 0) return 0;
  if (count * kElementBytes > a.size_bytes())
    throw DeviceError(fmt::format("sim: fill of {} elements past its buffer of {} B", count, a.size_bytes()));
  auto& memo = l.state<FillMemo>("coalescing.fill");
  if (!(memo.buffer_id == a.id() && memo.written == a.last_write() && memo.count == count &&
        memo.seed == seed)) {
    std::vector<uint32_t> block;
    for (uint64_t i0 = 0; i0 < count; i0 += kFillBlock) {
      block.resize(std::min<uint64_t>(kFillBlock, count - i0));
      for (size_t j = 0; j < block.size(); ++j)
        block[j] = coalescing_twin::value(static_cast<uint32_t>(i0 + j), seed);
      a.write(i0 * kElementBytes, std::as_bytes(std::span<const uint32_t>(block)));
    }
    memo = {a.id(), a.last_write(), count, seed};
  }
  return static_cast<double>(count * kElementBytes) / l.config().dram_bandwidth_gbps;
}

// What the last copy computed, and the segment counts of its access pattern.
struct CopyMemo {
  uint64_t a_id = 0, a_written = 0, b_id = 0, b_written = 0;
  uint32_t offset = 0, stride = 0;
  size_t items = 0;
  std::vector<uint32_t> values;  // B[0 .. items)
  // Segment counts, keyed by everything they depend on.
  uint64_t seg_a_base = 0, seg_b_base = 0, seg_bytes = 0;
  size_t seg_items = 0, seg_wg = 0, seg_wave = 0;
  uint32_t seg_offset = 0, seg_stride = 0;
  uint64_t read_segments = 0, write_segments = 0;
};

// Distinct segments touched by each wave's addresses, summed over waves.
// Within a wave the addresses increase with the work-item, so a wave's
// distinct segments are its changes of segment number plus one.
void count_segments(CopyMemo& m, uint64_t a_base, uint64_t b_base, uint64_t seg, size_t items, size_t wg,
                    size_t wave, uint32_t offset, uint32_t stride) {
  if (m.seg_a_base == a_base && m.seg_b_base == b_base && m.seg_bytes == seg && m.seg_items == items &&
      m.seg_wg == wg && m.seg_wave == wave && m.seg_offset == offset && m.seg_stride == stride)
    return;
  const int shift = std::countr_zero(seg);
  uint64_t reads = 0, writes = 0;
  for (size_t g0 = 0; g0 < items; g0 += wg)
    for (size_t w0 = g0; w0 < std::min(items, g0 + wg); w0 += wave) {
      // A wave never spans two work-groups.
      const size_t end = std::min({items, g0 + wg, w0 + wave});
      uint64_t last_r = UINT64_MAX, last_w = UINT64_MAX;
      for (size_t i = w0; i < end; ++i) {
        const uint64_t r = (a_base + (i * stride + offset) * kElementBytes) >> shift;
        const uint64_t w = (b_base + i * kElementBytes) >> shift;
        reads += r != last_r;
        writes += w != last_w;
        last_r = r;
        last_w = w;
      }
    }
  m.seg_a_base = a_base;
  m.seg_b_base = b_base;
  m.seg_bytes = seg;
  m.seg_items = items;
  m.seg_wg = wg;
  m.seg_wave = wave;
  m.seg_offset = offset;
  m.seg_stride = stride;
  m.read_segments = reads;
  m.write_segments = writes;
}

double copy(SimLaunch& l) {
  const SimBuffer& a = l.buffer(0);
  SimBuffer& b = l.buffer(1);
  const uint32_t offset = l.u32(2);
  const uint32_t stride = l.u32(3);
  const uint32_t count = l.u32(4);
  const size_t items = std::min<size_t>(count, l.global().total());  // if (i < count)
  if (items == 0) return 0;
  if (items * kElementBytes > b.size_bytes()) throw DeviceError("sim: copy writes past the end of B");
  const uint64_t last_src = (uint64_t{items} - 1) * stride + offset;
  if ((last_src + 1) * kElementBytes > a.size_bytes()) throw DeviceError("sim: copy reads past the end of A");

  auto& m = l.state<CopyMemo>("coalescing.copy");
  const bool same = m.a_id == a.id() && m.a_written == a.last_write() && m.offset == offset &&
                    m.stride == stride && m.items == items;
  if (!same) {
    m.values.resize(items);
    if (stride == 1) {
      a.read(uint64_t{offset} * kElementBytes, std::as_writable_bytes(std::span<uint32_t>(m.values)));
    } else {
      for (size_t i = 0; i < items; ++i)
        m.values[i] = a.load<uint32_t>((uint64_t{i} * stride + offset) * kElementBytes);
    }
    m.a_id = a.id();
    m.a_written = a.last_write();
    m.offset = offset;
    m.stride = stride;
    m.items = items;
  }
  if (!same || m.b_id != b.id() || m.b_written != b.last_write()) {
    b.write(0, std::as_bytes(std::span<const uint32_t>(m.values)));
    m.b_id = b.id();
    m.b_written = b.last_write();
  }

  const SimConfig& c = l.config();
  const auto levels = c.path_levels(CachePath::load_store);
  const uint64_t seg = levels.front()->sector_bytes;
  const size_t wg = l.local().total() ? l.local().total() : std::min<size_t>(64, c.core.max_work_group_size);
  const size_t wave = std::max<uint32_t>(1, c.core.wave_width);
  count_segments(m, a.base_address(), b.base_address(), seg, items, wg, wave, offset, stride);
  const double moved = static_cast<double>((m.read_segments + m.write_segments) * seg);

  // The level that holds the footprint (the bytes moved, or the spans of
  // A and B when those are smaller) sets bandwidth and latency.
  const double footprint =
      std::min(moved, static_cast<double>((last_src - offset + 1 + items) * kElementBytes));
  double bw_gbps = c.dram_bandwidth_gbps, latency_ns = c.dram_latency_ns;
  for (const auto* lv : levels)
    if (static_cast<double>(lv->capacity_bytes) >= footprint) {
      bw_gbps = lv->bytes_per_clock * c.clock_ghz() * (lv->per_core ? c.core.shader_cores : 1);
      latency_ns = lv->hit_latency_ns;
      break;
    }

  // Work-items resident: whole work-groups, as many per core as both the
  // work-group limit and the core's wave slots allow (at least one).
  const uint64_t waves_per_group = (wg + wave - 1) / wave;
  const uint64_t slots = uint64_t{c.core.units_per_core} * c.core.waves_per_unit;
  const uint64_t groups_per_core =
      std::max<uint64_t>(1, std::min<uint64_t>(c.core.workgroups_per_core, slots / waves_per_group));
  const double resident = std::min<double>(static_cast<double>(items),
                                           static_cast<double>(groups_per_core * wg * c.core.shader_cores));

  const double bandwidth_ns = moved / bw_gbps;
  const double latency_bound_ns = static_cast<double>(items) / resident * latency_ns;
  return std::max(bandwidth_ns, latency_bound_ns);
}

}  // namespace

void register_sim_family_coalescing(FamilyTable& table) {
  table.add({"coalescing", "fill", 0, fill});
  table.add({"coalescing", "copy", 0, copy});
}

}  // namespace gpuscope::sim
