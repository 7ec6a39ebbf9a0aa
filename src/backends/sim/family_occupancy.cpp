// Sim family `occupancy` (src/kernels/opencl/occupancy.cl): `occupancy` (every work-group chases one
// random cycle with all its lanes; REGS accumulators live across the loop).
//
// Semantics: the OpenCL C's outputs, every work-item's. A work-group's walk
// (steps x REGS hops from its start) is done once and its REGS sums shared
// by the group's lanes, which differ only in their local id.
//
// Registers: the build holds REGS accumulators plus kOverheadRegisters of
// its own (the chased index, the local id, the loop counter and bound, the
// 64-bit address of `next`), rounded up to core.register_alloc_granularity.
// Past core.max_registers_per_item the compiler keeps the maximum and spills
// the rest to private memory (4 B each, reported as the build's private
// memory), and each step then also waits for its spilled accumulator: the
// fraction REGS_spilled / REGS of the steps pays the first load/store
// level's hit latency on top.
//
// Residency per shader core, in whole work-groups: the least of
// core.workgroups_per_core; the waves the core holds (units x
// waves_per_unit, and units x the waves the register file holds at this
// allocation: register_file_bytes_per_unit / 4 / (registers x wave_width))
// over the waves of one group; and, for groups that reserve local memory
// (more than the 4 B placeholder a probe passes when it wants none), the
// same local-memory limits as scheduling.cl's model
// (local_memory.workgroups_per_core_with_local, and bytes_per_work_group
// over the reservation when local memory is on chip). At least one group.
// Builds without -DSCRATCH=1 have no local argument and reserve none.
//
// Time: latency-bound. A wave has one load in flight, so a round of
// resident groups takes steps x REGS x the chase's per-step latency: the
// hit latency of the first load/store level that holds the cycle (DRAM and
// the TLB past them all); rounds = ceil(groups / (resident x cores)).
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"
#include "kernels/occupancy_twin.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscope::sim {
namespace {

constexpr uint32_t kOverheadRegisters = 6;
constexpr uint64_t kNoLocalBytes = 4;

struct Allocation {
  uint32_t registers = 0;  // allocated per work-item
  uint32_t spilled = 0;    // accumulators kept in private memory
};

Allocation allocate(const SimConfig& c, long long regs) {
  const uint64_t need = static_cast<uint64_t>(regs) + kOverheadRegisters;
  const uint64_t g = c.core.register_alloc_granularity;
  Allocation a;
  a.registers = static_cast<uint32_t>(std::min<uint64_t>((need + g - 1) / g * g, c.core.max_registers_per_item));
  a.spilled = static_cast<uint32_t>(need > c.core.max_registers_per_item ? need - c.core.max_registers_per_item : 0);
  return a;
}

long long regs_of(const KernelSpec& spec) {
  const int64_t regs = spec.integer("regs", 0);
  if (regs < 1) throw Unsupported("sim: occupancy without a positive regs parameter");
  return regs;
}

SimBuildFacts build_facts(const SimConfig& c, const KernelSpec& spec) {
  const Allocation a = allocate(c, regs_of(spec));
  SimBuildFacts f;
  f.registers_per_item = a.registers;
  f.private_bytes = uint64_t{a.spilled} * 4;
  return f;
}

uint64_t resident_groups_per_core(const SimConfig& c, uint64_t wg, uint32_t registers, uint64_t local_bytes) {
  const auto& k = c.core;
  const uint64_t waves_per_group = (wg + k.wave_width - 1) / k.wave_width;
  const uint64_t file_waves = k.register_file_bytes_per_unit / 4 / (uint64_t{registers} * k.wave_width);
  const uint64_t core_waves = uint64_t{k.units_per_core} * std::min<uint64_t>(k.waves_per_unit, file_waves);
  uint64_t n = std::min<uint64_t>(k.workgroups_per_core, core_waves / waves_per_group);
  if (local_bytes > kNoLocalBytes) {
    if (c.local.workgroups_per_core_with_local > 0) n = std::min<uint64_t>(n, c.local.workgroups_per_core_with_local);
    if (c.local.on_chip) n = std::min<uint64_t>(n, c.local.bytes_per_work_group / local_bytes);
  }
  return std::max<uint64_t>(n, 1);
}

// Dependent-load latency of a chase over `footprint` bytes of the load path.
double chase_step_ns(const SimConfig& c, double footprint) {
  for (const CacheLevelConfig* lv : c.path_levels(CachePath::load_store))
    if (footprint <= static_cast<double>(lv->capacity_bytes)) return lv->hit_latency_ns;
  return chase_latency_beyond_caches(c, footprint);
}

// The cycle as the kernel reads it, kept while the buffer is unchanged, and
// indexed when it is one cycle through all its indices.
struct CycleCopy {
  uint64_t buffer_id = 0, written = 0;
  std::vector<uint32_t> next;
  occupancy_twin::CycleIndex index;
};

// occupancy(next, out, start_spacing, cycle_length, steps[, __local scratch])
double occupancy(SimLaunch& l) {
  const SimBuffer& next_buf = l.buffer(0);
  SimBuffer& out = l.buffer(1);
  const bool scratch = l.spec().flag("scratch");
  const size_t local_bytes = scratch ? l.local_bytes() : 0;  // the dynamic local buffer, scratch builds only
  const uint32_t spacing = l.u32(2), length = l.u32(3), steps = l.u32(4);
  const auto& c = l.config();
  const long long regs = regs_of(l.spec());
  if (local_bytes > c.local.bytes_per_work_group)
    throw DeviceError(fmt::format("sim: {} B of local memory exceeds the device's {} B per work-group",
                                  local_bytes, c.local.bytes_per_work_group));
  if (l.local().total() == 0) throw Unsupported("sim: occupancy is modelled with an explicit work-group");
  const uint64_t wg = l.local().total();
  if (scratch && wg * 4 > local_bytes) throw DeviceError("sim: occupancy scratch[lid] past its allocation");
  if (length == 0 || uint64_t{length} * 4 > next_buf.size_bytes())
    throw DeviceError("sim: occupancy cycle_length past the buffer");
  const uint64_t groups = l.global().total() / wg;
  if (out.size_bytes() < l.global().total() * 4) throw DeviceError("sim: occupancy out past its buffer");

  auto& cycle = l.state<CycleCopy>("occupancy.next");
  if (cycle.buffer_id != next_buf.id() || cycle.written != next_buf.last_write() ||
      cycle.next.size() != length) {
    cycle.next = next_buf.load_all<uint32_t>(length);
    cycle.buffer_id = next_buf.id();
    cycle.written = next_buf.last_write();
    cycle.index = occupancy_twin::CycleIndex(cycle.next);
  }
  const auto& next = cycle.next;

  const auto follow = [&](uint32_t p) {
    if (p >= length) throw DeviceError("sim: occupancy followed an index outside `next`");
    return next[p];
  };
  for (uint64_t g = 0; g < groups; ++g) {
    const auto start = static_cast<uint32_t>((g * spacing) % length);
    const auto group_out =
        cycle.index.valid()
            ? cycle.index.group_outputs(start, static_cast<int>(regs), steps, static_cast<uint32_t>(wg))
            : occupancy_twin::group_outputs(follow, start, static_cast<int>(regs), steps, static_cast<uint32_t>(wg));
    out.write(g * wg * 4, std::as_bytes(std::span<const uint32_t>(group_out)));
  }

  const Allocation a = allocate(c, regs);
  const uint64_t resident = resident_groups_per_core(c, wg, a.registers, local_bytes) * c.core.shader_cores;
  const double rounds = std::ceil(static_cast<double>(groups) / static_cast<double>(resident));
  double step_ns = chase_step_ns(c, static_cast<double>(length) * 4);
  if (a.spilled > 0)
    step_ns += std::min(1.0, static_cast<double>(a.spilled) / static_cast<double>(regs)) *
               c.path_levels(CachePath::load_store).front()->hit_latency_ns;
  return rounds * static_cast<double>(steps) * static_cast<double>(regs) * step_ns;
}

}  // namespace

void register_sim_family_occupancy(FamilyTable& table) {
  table.add({"occupancy", "occupancy", 0, occupancy, build_facts});
}

}  // namespace gpuscope::sim
