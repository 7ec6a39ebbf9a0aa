#include "probes/bandwidth/bandwidth_probe.hpp"

#include <algorithm>
#include <set>

namespace gpuscope::bandwidth_probe {

// Bandwidth against the number of work-groups, 1 to 4x the compute units,
// at a footprint inside the first cache with the largest work-groups, so
// that one group can keep a core's cache port busy: a count just past a
// multiple of the cores then leaves one core with an extra group while
// the others idle, and the curve saw-tooths with the number of cores
// that take groups in parallel (002 saw this on Adreno 530's SPs).
Series BandwidthProbe::workgroup_sweep(const Shape& base, size_t cus, const TimeBudget& budget) {
  Series s = bandwidth_series("bandwidth.workgroups", "workgroups", "");
  s.meta["compute_units"] = cus;
  Shape shape = base;
  shape.local = std::min<size_t>(cpu_ ? 256 : 1024, max_local());
  shape.vec = 4;
  const size_t fp = shape.step_bytes();
  s.meta["footprint_bytes"] = fp;
  s.meta["group_size"] = shape.local;
  std::set<size_t> counts;
  if (4 * cus + 1 <= 24) {
    for (size_t w = 1; w <= 4 * cus + 1; ++w) counts.insert(w);
  } else {
    for (size_t w = 1; w < cus; w *= 2) counts.insert(w);
    for (size_t k = 1; k <= 4; ++k) {
      for (long d : {-1L, 0L, 1L}) counts.insert(static_cast<size_t>(static_cast<long>(k * cus) + d));
      if (k < 4 && !quick_) counts.insert(k * cus + cus / 2);
    }
  }
  for (size_t w : counts) {
    if (budget.exhausted()) {
      s.meta["cut_short"] = "the probe's time budget ran out";
      break;
    }
    shape.groups = w;
    measure_into(s, kRead, shape, fp, static_cast<double>(w));
  }
  return s;
}

}  // namespace gpuscope::bandwidth_probe
