// A Device that passes every call to another and records, per kernel built,
// its spec and the device time of each launch: what the conformance suite
// asserts on after running a probe through it.
#pragma once

#include "backends/backend.hpp"

#include <map>
#include <string>
#include <vector>

namespace gpuscope::test {

class RecordingDevice : public Device {
 public:
  struct KernelRecord {
    KernelSpec spec;
    std::vector<double> device_ns;  // one per launch, in launch order
  };

  explicit RecordingDevice(Device& inner) : inner_(inner) {}

  // Every kernel built through this device, by its key (KernelSpec::key()).
  const std::map<std::string, KernelRecord>& kernels() const { return kernels_; }

  const DeviceInfo& info() const override { return inner_.info(); }
  std::unique_ptr<Buffer> create_buffer(size_t bytes) override { return inner_.create_buffer(bytes); }
  void write(Buffer& dst, size_t offset_bytes, std::span<const std::byte> src) override {
    inner_.write(dst, offset_bytes, src);
  }
  void read(const Buffer& src, size_t offset_bytes, std::span<std::byte> dst) override {
    inner_.read(src, offset_bytes, dst);
  }
  Kernel& kernel(const KernelSpec& spec) override {
    Kernel& k = inner_.kernel(spec);
    const std::string key = spec.key();
    kernels_.try_emplace(key, KernelRecord{spec, {}});
    key_of_[&k] = key;
    return k;
  }
  KernelResources kernel_resources(Kernel& k) override { return inner_.kernel_resources(k); }

  using Device::launch;
  double launch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args) override {
    const double ns = inner_.launch(k, shape, args);
    record(k, ns);
    return ns;
  }
  LaunchBatch launch_batch(Kernel& k, const LaunchShape& shape, std::span<const KernelArg> args,
                           int count) override {
    LaunchBatch b = inner_.launch_batch(k, shape, args, count);
    for (const auto& e : b.events) record(k, e.end_ns - e.start_ns);
    return b;
  }

  ImageFacet* images() override { return inner_.images(); }
  HostTransferFacet* host_transfers() override { return inner_.host_transfers(); }
  SvmFacet* svm() override { return inner_.svm(); }
  double budget_clock_s() const override { return inner_.budget_clock_s(); }

 private:
  void record(Kernel& k, double ns) {
    const auto it = key_of_.find(&k);
    // A kernel not built through this device: the probe kept one from elsewhere.
    if (it == key_of_.end()) {
      kernels_["(unknown) " + k.name()].device_ns.push_back(ns);
      return;
    }
    kernels_.at(it->second).device_ns.push_back(ns);
  }

  Device& inner_;
  std::map<std::string, KernelRecord> kernels_;
  std::map<const Kernel*, std::string> key_of_;
};

}  // namespace gpuscope::test
