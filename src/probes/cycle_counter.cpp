#include "probes/cycle_counter.hpp"

#include "core/error.hpp"

namespace gpuscope {

CounterKernel build_counter_kernel(Device& dev, const std::string& family, const std::string& entry) {
  CounterKernel c;
  const DeviceFeatures& f = dev.info().features;
  if (f.cycle_counter && f.inline_asm == "nvidia-ptx") {
    try {
      c.kernel = &dev.kernel({family, entry, {{"nv_ptx", true}}});
      c.reads_counter = true;
      return c;
    } catch (const BuildError& e) {
      c.note = std::string("PTX counters unavailable: ") + e.what();
    }
  }
  c.kernel = &dev.kernel({family, entry, {{"nv_ptx", false}}});
  return c;
}

}  // namespace gpuscope
