#include "app/build_ahead.hpp"

namespace gpuscope {

BuildAhead::BuildAhead(Device& device, std::vector<const ProbeDef*> probes, const ProbeOptions& options,
                       bool enabled) {
  if (!enabled) return;
  thread_ = std::thread([&device, probes = std::move(probes), options] {
    for (const ProbeDef* p : probes) {
      if (!p->build_ahead) continue;
      try {
        p->build_ahead(device, options);
      } catch (const std::exception&) {
        // The probe builds what failed here again, and reports the failure.
      }
    }
  });
}

BuildAhead::~BuildAhead() { join(); }

void BuildAhead::join() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace gpuscope
