// The seam through which the sim backend gives kernels meaning.
//
// A kernel family (KernelSpec::family) is modelled here in C++: for each
// entry point, what it computes (it reads and writes the sim buffers exactly
// as the kernel would on a GPU, so the probes' host-side validation holds)
// and how long the modelled GPU takes (device ns, before measurement noise,
// which the device adds). Probes never know they run on a simulator.
//
// Adding a family is one new file, src/backends/sim/family_<name>.cpp,
// defining
//     void register_sim_family_<name>(gpuscope::sim::FamilyTable& table);
// which calls table.add(...) once per kernel. CMake finds the file by its
// name and calls the function (generated/sim_families.cpp). Contract:
// - run() must do the kernel's work on every element the real kernel would
//   (outputs are validated), and may compute its time from a sample of the
//   accesses when the full pattern is large: the whole default probe set on
//   a preset must finish in seconds.
// - run() throws Unsupported for a parameter value it has no model of,
//   DeviceError for arguments the real kernel could not have run with.
// - Time comes from the model's parameters (SimLaunch::config, ::memory);
//   never from the probe's expectations.
#pragma once

#include "backends/backend.hpp"
#include "backends/sim/cache_model.hpp"
#include "backends/sim/sim_config.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpuscope::sim {

class SimBuffer;
class SimDevice;
class SimImage;

// One launch as a family sees it.
class SimLaunch {
 public:
  SimLaunch(SimDevice& dev, const KernelSpec& spec, const LaunchShape& shape, std::span<const KernelArg> args);

  const SimConfig& config() const;
  MemoryModel& memory();
  const KernelSpec& spec() const { return spec_; }
  const Range& global() const { return shape_.global; }
  const Range& local() const { return shape_.local; }  // total() == 0: the driver's choice
  // The dynamic local buffer's bytes per work-group (LaunchShape::local_bytes).
  size_t local_bytes() const { return shape_.local_bytes; }

  // Typed arguments; DeviceError when argument i has another type.
  SimBuffer& buffer(size_t i) const;
  uint32_t u32(size_t i) const;
  int32_t i32(size_t i) const;
  uint64_t u64(size_t i) const;
  float f32(size_t i) const;
  SimImage& image(size_t i) const;  // defined in sim_image.cpp
  size_t arg_count() const { return args_.size(); }

  // The buffer holding device address `address` and the offset in it;
  // DeviceError when no buffer does (the GPU would fault).
  std::pair<SimBuffer*, uint64_t> resolve(uint64_t address) const;

  // State a family keeps on the device between launches (memos), by key.
  template <class T>
  T& state(const std::string& key) {
    auto& slot = state_slot(key);
    if (!slot) slot = std::make_shared<T>();
    return *static_cast<T*>(slot.get());
  }

 private:
  std::shared_ptr<void>& state_slot(const std::string& key);
  SimDevice& dev_;
  const KernelSpec& spec_;
  LaunchShape shape_;
  std::span<const KernelArg> args_;
};

// What the modelled compiler made of one build of a kernel: what the
// device reports through kernel_resources.
struct SimBuildFacts {
  uint32_t registers_per_item = 0;  // 0: not modelled (no count reported)
  uint64_t private_bytes = 0;       // per work-item: registers spilled to memory
  uint64_t code_bytes = 0;          // machine code of the program; 0: icache.base_code_bytes
};

struct KernelModel {
  std::string family;  // "latency"
  std::string entry;   // "chase"
  // Largest work-group the modelled device allows for this kernel; 0: the
  // device's maximum.
  size_t max_work_group_size = 0;
  // Does the work, returns modelled device ns (noise is added by the device).
  std::function<double(SimLaunch&)> run;
  // The build's facts from its parameters; unset: no registers named, nothing
  // spilled, icache.base_code_bytes of code.
  std::function<SimBuildFacts(const SimConfig&, const KernelSpec&)> build = nullptr;
};

class FamilyTable {
 public:
  void add(KernelModel m);
  const KernelModel* find(const std::string& family, const std::string& entry) const;
  // Every (family, entry) modelled, in order.
  std::vector<std::pair<std::string, std::string>> entries() const;

 private:
  std::map<std::pair<std::string, std::string>, KernelModel> models_;
};

// Values per clock per shader core of the compute.cl op `op_upper` ("FMA",
// "NATIVE_SIN") on OpenCL C scalar `scalar` ("float", "int") on the
// described device, by family_compute.cpp's rules (listed rates, then the
// documented fallbacks). Other families whose kernels are fma chains time
// them with it. Unsupported when no rule gives a rate.
double sim_op_rate(const SimConfig& c, const std::string& scalar, const std::string& op_upper);
// Dependent latency in ns of one such op (a chain of them in one work-item),
// by the same rules: the listed latency_ns, else derived from the rate.
double sim_op_latency_ns(const SimConfig& c, const std::string& scalar, const std::string& op_upper);

// Every family compiled in (generated from the family_*.cpp file names).
const FamilyTable& sim_families();

}  // namespace gpuscope::sim
