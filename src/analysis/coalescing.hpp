// The coalescing probe's copy curves (the Adreno 320/420 paper's Figures 3-5) read as
// findings: how much a misaligned start costs, what each stride keeps of the
// aligned throughput, and where the work-group sweep saturates.
#pragma once

#include "core/finding.hpp"
#include "core/series.hpp"

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
// falling. Once the copy streams from DRAM, a source read at stride m costs
// min(e*m, G) bytes per element for a memory segment of G bytes (e = element
// bytes), so y roughly halves from m to 2m while 2*e*m <= G and levels off
// beyond. The last doubling m -> 2m over which y falls below 0.7x marks
// G = 2*e*m: the unit the memory side fetches (on NVIDIA the L2's DRAM fetch,
// 32 or 64 B). Small strides may fall less than the model says when the
// aligned copy is not yet DRAM-bound; that does not move the last steep fall.
struct StrideReading {
  double segment_bytes = 0;  // 0 when no steep fall was seen
  int last_steep_m = 0;      // m of the last doubling that fell below 0.7x
  double last_steep_ratio = 0;
};
StrideReading read_stride_curve(const Series& stride, double element_bytes = 4);

// memory.coalescing.misaligned_ratio, memory.coalescing.stride_<k>_ratio
// (k = 2, 4, 8, 16, 32, 64 where measured), memory.coalescing.segment_bytes and
// memory.coalescing.saturating_workgroup_size, from whichever of the three
// series are given (null = not measured).
std::vector<Finding> coalescing_findings(const Series* workgroup, const Series* offset, const Series* stride);

}  // namespace gpuscope::analysis
