// Execution-side findings from the divergence, occupancy and icache probes'
// series: wave width, scheduler partitions, occupancy cliffs, waves per
// compute unit, instruction cache size and code bytes per operation. Pure
// functions of the series (and of what their meta says about how they were
// measured); each returns no finding when its curve does not support one.
#pragma once

#include "core/finding.hpp"
#include "core/series.hpp"

#include <optional>
#include <vector>

namespace gpuscope::analysis {

// "divergence.blocks": x = size of the blocks of consecutive work-items that
// take the same branch side, y = throughput (higher is better). The wave
// width is the smallest block size from which the throughput no longer pays
// for both sides (twice the time below it) -> exec.wave_width.
std::vector<Finding> wave_width_findings(const Series& blocks);

// "divergence.blocks.subgroup_<n>": the same sweep with a kernel built to
// require wave width n (meta "required_subgroup_size") ->
// exec.wave_width.subgroup_<n>, the width measured under that request, and
// exec.wave_width.subgroup_<n>.as_required (bool): whether it is n.
std::vector<Finding> required_wave_width_findings(const Series& blocks);

// "divergence.partition" series (meta "active_waves_per_group" = a): x =
// stride between the a working waves of one work-group per compute unit,
// y = throughput of the working lanes. P round-robin scheduler partitions
// give min(a, P/gcd(stride, P)) / min(a, P) of stride 1's rate; the P that
// fits all series best -> exec.scheduler_partitions.
std::vector<Finding> partition_findings(const std::vector<const Series*>& partition);

// "occupancy.waves": x = work-items launched per compute unit (all at once
// when they fit), y = ns per chase step of the launch. Flat while every
// work-group is resident, about twice as long once a second round is needed
// -> exec.max_waves_per_cu (work-items resident / wave width). On a GPU a
// jump at the second point still reads (one work-group of the first
// point's size fits, two do not: Mali-G52's 384); on a CPU (`cpu`) it says
// that work-groups run one after another, not a count of waves.
std::vector<Finding> max_waves_findings(const Series& waves, double wave_width, bool cpu);

// "occupancy.registers": x = live values per work-item (REGS), y =
// throughput; meta "kernels" gives the registers the driver says each build
// used, where it says. Drops of throughput are occupancy cliffs ->
// exec.registers.occupancy_cliffs; with the waves per compute unit and the
// wave width known, also exec.registers.per_cu (the register file those
// drops imply).
std::vector<Finding> occupancy_findings(const Series& registers, std::optional<double> max_waves_per_cu,
                                        std::optional<double> wave_width);

// "occupancy.local": x = local memory bytes per work-group, y = throughput ->
// exec.local.occupancy_cliffs_bytes (local memory sizes where fewer
// work-groups fit).
std::vector<Finding> local_occupancy_findings(const Series& local);

// "icache.binary": x = adds in the loop body, y = program binary bytes; meta
// "binary_format" -> exec.code_bytes_per_op (slope of size against adds).
std::vector<Finding> code_bytes_findings(const Series& binary);

// "icache.body": x = adds in the loop body, y = throughput; meta
// "machine_bytes_per_op" (known encoding) or a machine-code binary's slope
// converts the body where throughput falls into bytes -> exec.icache_ops,
// exec.icache_bytes.
std::vector<Finding> icache_findings(const Series& body, const Series* binary);

}  // namespace gpuscope::analysis
