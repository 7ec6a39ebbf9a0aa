// The coalescing probe's copy curves (the Adreno 320/420 paper's Figures 3-5) read as
// findings: how much a misaligned start costs, what each stride keeps of the
// aligned throughput, and where the work-group sweep saturates.
#pragma once

#include "core/finding.hpp"
#include "core/series.hpp"

#include <string>
#include <vector>

namespace gpuscope::analysis {

// Throughput ratios from coalescing.offset (x = offset in elements, y = GB/s).
struct OffsetReading {
  double ratio = 0;                      // median over misaligned offsets of y(k) / y(0)
  double ratio_low = 0, ratio_high = 0;  // min and max of those ratios
  int worst_offset = -1;                 // k with the lowest ratio
  int aligned_period = 0;  // smallest p (1, 2, 4, ...) whose multiples all run within 5% of k = 0; 0 if none
  int misaligned_points = 0;
};
OffsetReading read_offset_curve(const Series& offset);

// Where the stride curve (coalescing.stride, y = useful GB/s) stops
// falling. A source read at stride m costs min(e*m, G) bytes per element
// for a memory segment of G bytes (e = element bytes), beside the e bytes
// each element writes. A copy bound by the memory's bandwidth roughly
// halves from m to 2m while 2*e*m <= G and levels off beyond: the last
// doubling m -> 2m over which y falls below 0.7x marks G = 2*e*m, the unit
// the memory side fetches (on NVIDIA the L2's DRAM fetch, 32 or 64 B).
// Small strides may fall less than the model says when the aligned copy is
// not yet DRAM-bound; that does not move the last steep fall. A copy bound
// by its loads in flight (few work-items resident, a long memory latency)
// runs at one rate whatever the bytes, so its curve is flat at small m and
// falls, gently, only once the bytes' time overtakes the latency's; it
// still stops falling at m = G / e. Where no doubling falls below 0.7x, the
// segment is read there: the smallest power of two m* from which every
// octave of measured strides runs, at its median, within the curve's noise
// of the flat tail (for a doubling or more), after a fall into it.
struct StrideReading {
  double segment_bytes = 0;  // 0 when none was read; `unread` says why
  // The bandwidth-bound reading: m of the last doubling below 0.7x.
  int last_steep_m = 0;
  double last_steep_ratio = 0;
  // The loads-in-flight reading (where no doubling fell below 0.7x).
  int flat_from_m = 0;     // m*: the tail runs flat from here
  double fall_ratio = 0;   // the tail's median rate / y(m* / 2)
  double flat_within = 0;  // relative band the tail's octaves lie in
  std::string unread;      // why no segment was read; empty when one was
};
StrideReading read_stride_curve(const Series& stride, double element_bytes = 4);

// memory.coalescing.misaligned_ratio, memory.coalescing.stride_<k>_ratio
// (k = 2, 4, 8, 16, 32, 64 where measured), memory.coalescing.segment_bytes and
// memory.coalescing.saturating_workgroup_size, from whichever of the three
// series are given (null = not measured).
std::vector<Finding> coalescing_findings(const Series* workgroup, const Series* offset, const Series* stride);

}  // namespace gpuscope::analysis
