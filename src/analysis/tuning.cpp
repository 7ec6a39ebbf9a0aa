#include "analysis/tuning.hpp"

#include "analysis/bandwidth_tuning.hpp"
#include "analysis/coalescing_tuning.hpp"
#include "analysis/execution_tuning.hpp"
#include "analysis/geometry_tuning.hpp"
#include "analysis/staircase_tuning.hpp"
#include "analysis/tlb_tuning.hpp"

#include <array>

namespace gpuscope::analysis {

std::span<const TuningTable> tuning_tables() {
  static const std::array tables{
      TuningTable{"staircase", staircase::kTable},
      TuningTable{"tlb", tlb::kTable},
      TuningTable{"cache geometry", geometry::kTable},
      TuningTable{"bandwidth", bandwidth::kTable},
      TuningTable{"coalescing", coalescing::kTable},
      TuningTable{"execution", execution::kTable},
  };
  return tables;
}

}  // namespace gpuscope::analysis
