#include "backends/opencl/opencl_backend.hpp"

#include "backends/opencl/opencl_cpp.hpp"
#include "backends/opencl/opencl_device.hpp"
#include "backends/opencl/opencl_device_info.hpp"
#include "backends/opencl/opencl_library.hpp"
#include "core/error.hpp"

#include <cstdio>
#include <vector>

namespace gpuscope {
namespace {

using opencl_detail::ClDevice;
using opencl_detail::describe_device;
using opencl_detail::rethrow;

class ClBackend final : public Backend {
 public:
  std::string name() const override { return "opencl"; }
  std::string availability() const override {
    try {
      return load_opencl_library().describe();
    } catch (const UsageError& e) {
      return e.what();  // a library named by the user that cannot serve
    }
  }

  std::vector<DeviceInfo> enumerate() override {
    std::vector<DeviceInfo> out;
    for (size_t pi = 0; pi < platforms().size(); ++pi) {
      const auto devices = devices_of(platforms()[pi]);
      for (size_t di = 0; di < devices.size(); ++di) {
        try {
          out.push_back(describe_device(platforms()[pi], devices[di], pi, di));
        } catch (const cl::Error&) {
          // A device that cannot even describe itself is not usable; skip it.
        }
      }
    }
    return out;
  }

  std::unique_ptr<Device> open(const std::string& id) override {
    size_t pi = 0, di = 0;
    char tail = 0;
    if (std::sscanf(id.c_str(), "opencl:%zu:%zu%c", &pi, &di, &tail) != 2 || pi >= platforms().size())
      throw UsageError("unknown OpenCL device '" + id + "'");
    const auto devices = devices_of(platforms()[pi]);
    if (di >= devices.size()) throw UsageError("unknown OpenCL device '" + id + "'");
    try {
      return std::make_unique<ClDevice>(devices[di], describe_device(platforms()[pi], devices[di], pi, di));
    } catch (const cl::Error& e) {
      rethrow(e, "opening " + id);
    }
  }

 private:
  const std::vector<cl::Platform>& platforms() {
    if (!loaded_) {
      loaded_ = true;
      if (!load_opencl_library().loaded) return platforms_;
      try {
        cl::Platform::get(&platforms_);
      } catch (const cl::Error&) {
        // No ICD installed (CL_PLATFORM_NOT_FOUND_KHR): no devices.
        platforms_.clear();
      }
    }
    return platforms_;
  }

  static std::vector<cl::Device> devices_of(const cl::Platform& p) {
    std::vector<cl::Device> devices;
    try {
      p.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    } catch (const cl::Error&) {
      devices.clear();  // CL_DEVICE_NOT_FOUND: a platform with no devices
    }
    return devices;
  }

  bool loaded_ = false;
  std::vector<cl::Platform> platforms_;
};

}  // namespace

std::unique_ptr<Backend> make_opencl_backend() { return std::make_unique<ClBackend>(); }

}  // namespace gpuscope
