// NVIDIA's management library (NVML), opened at run time: no NVIDIA header
// or library is needed to build. The few types and constants below are
// NVML's stable C ABI (nvml.h): opaque device handles, int return codes with
// 0 for success, and the structs as laid out there.
#include "driver/driver_readers.hpp"

#include "core/printable.hpp"

#include <fmt/format.h>

#include <dlfcn.h>

#include <array>
#include <cstring>

namespace gpuscope {
namespace {

using NvmlReturn = int;
constexpr NvmlReturn kNvmlSuccess = 0;
using NvmlDevice = struct NvmlDeviceOpaque*;

struct NvmlPciInfoV3 {  // nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it
  char bus_id_legacy[16];
  unsigned domain, bus, device;
  unsigned pci_device_id;  // device id << 16 | vendor id
  unsigned pci_subsystem_id;
  char bus_id[32];
};

struct NvmlDeviceAttributes {  // nvmlDeviceAttributes_t
  unsigned multiprocessor_count;
  unsigned shared_copy_engines, shared_decoders, shared_encoders, shared_jpegs, shared_ofas;
  unsigned gpu_instance_slices, compute_instance_slices;
  unsigned long long memory_size_mb;
};

struct NvmlMemory {  // nvmlMemory_t
  unsigned long long total, free, used;
};

enum NvmlClock : int { kGraphics = 0, kSm = 1, kMem = 2 };
constexpr int kNvmlTemperatureGpu = 0;

// nvmlClocksEventReasons bits (nvmlClocksThrottleReasons* in older headers).
constexpr std::array<std::pair<unsigned long long, const char*>, 9> kThrottleReasons = {{
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
}};

// FP32 lanes per SM by compute capability (CUDA C++ Programming Guide,
// arithmetic instruction throughput); 0 where unknown.
unsigned fp32_lanes_per_sm(int major, int minor) {
  switch (major) {
    case 3:
      return 192;
    case 5:
      return 128;
    case 6:
      return minor == 0 ? 64 : 128;
    case 7:
      return 64;
    case 8:
      return minor == 0 ? 64 : 128;
    case 9:
    case 10:
    case 12:
      return 128;
    default:
      return 0;
  }
}

// The library and its entry points; every pointer may be null (older drivers
// lack some), and each fact is read only through one that is set.
struct Nvml {
  void* handle = nullptr;
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*device_count)(unsigned*) = nullptr;
  NvmlReturn (*by_index)(unsigned, NvmlDevice*) = nullptr;
  NvmlReturn (*name)(NvmlDevice, char*, unsigned) = nullptr;
  NvmlReturn (*pci_info)(NvmlDevice, NvmlPciInfoV3*) = nullptr;
  NvmlReturn (*clock)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*max_clock)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*power)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*power_limit)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*throttle)(NvmlDevice, unsigned long long*) = nullptr;
  NvmlReturn (*bus_width)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*attributes)(NvmlDevice, NvmlDeviceAttributes*) = nullptr;
  NvmlReturn (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*cuda_cores)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*compute_capability)(NvmlDevice, int*, int*) = nullptr;
  NvmlReturn (*driver_version)(char*, unsigned) = nullptr;

  template <class F>
  void bind(F& f, const char* symbol) {
    f = reinterpret_cast<F>(dlsym(handle, symbol));
  }
  template <class F>
  void bind_first(F& f, std::initializer_list<const char*> symbols) {
    for (const char* s : symbols)
      if (!f) bind(f, s);
  }
};

}  // namespace

std::vector<DriverSnapshot> read_nvml(int pci_bus, const std::string& name) {
  Nvml n;
  n.handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (n.handle == nullptr) return {};
  n.bind(n.init, "nvmlInit_v2");
  n.bind(n.shutdown, "nvmlShutdown");
  n.bind(n.device_count, "nvmlDeviceGetCount_v2");
  n.bind(n.by_index, "nvmlDeviceGetHandleByIndex_v2");
  n.bind(n.name, "nvmlDeviceGetName");
  n.bind(n.pci_info, "nvmlDeviceGetPciInfo_v3");
  n.bind(n.clock, "nvmlDeviceGetClockInfo");
  n.bind(n.max_clock, "nvmlDeviceGetMaxClockInfo");
  n.bind(n.temperature, "nvmlDeviceGetTemperature");
  n.bind(n.power, "nvmlDeviceGetPowerUsage");
  n.bind(n.power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  n.bind_first(n.throttle,
               {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  n.bind(n.bus_width, "nvmlDeviceGetMemoryBusWidth");
  n.bind(n.attributes, "nvmlDeviceGetAttributes_v2");
  n.bind(n.memory, "nvmlDeviceGetMemoryInfo");
  n.bind(n.cuda_cores, "nvmlDeviceGetNumGpuCores");
  n.bind(n.compute_capability, "nvmlDeviceGetCudaComputeCapability");
  n.bind(n.driver_version, "nvmlSystemGetDriverVersion");

  DriverSnapshot snap;
  snap.driver = "nvml";
  const auto finish = [&]() {
    if (n.shutdown) n.shutdown();
    dlclose(n.handle);
    return std::vector<DriverSnapshot>{std::move(snap)};
  };
  if (!n.init || !n.device_count || !n.by_index) {
    snap.notes.push_back(
        "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlDeviceGetCount_v2 or "
        "nvmlDeviceGetHandleByIndex_v2; ignored");
    dlclose(n.handle);
    return {std::move(snap)};
  }
  if (const NvmlReturn e = n.init(); e != kNvmlSuccess) {
    snap.notes.push_back(fmt::format("nvmlInit_v2 failed (NVML error {}); ignored", e));
    dlclose(n.handle);
    return {std::move(snap)};
  }
  unsigned count = 0;
  if (n.device_count(&count) != kNvmlSuccess || count == 0) {
    snap.notes.push_back("NVML lists no GPU");
    return finish();
  }

  // The GPU on the OpenCL device's PCI bus, else the one of the same name,
  // else the first.
  NvmlDevice chosen = nullptr;
  std::string chosen_name;
  NvmlPciInfoV3 chosen_pci{};
  bool have_pci = false;
  for (unsigned i = 0; i < count; ++i) {
    NvmlDevice d = nullptr;
    if (n.by_index(i, &d) != kNvmlSuccess) continue;
    char buf[96] = {};
    const std::string dname = n.name && n.name(d, buf, sizeof buf - 1) == kNvmlSuccess ? buf : "";
    NvmlPciInfoV3 pci{};
    const bool pci_ok = n.pci_info && n.pci_info(d, &pci) == kNvmlSuccess;
    const bool matches = pci_bus >= 0 ? pci_ok && static_cast<int>(pci.bus) == pci_bus : dname == name;
    if (chosen == nullptr || matches) {
      chosen = d;
      chosen_name = dname;
      chosen_pci = pci;
      have_pci = pci_ok;
      if (matches) break;
    }
  }
  if (chosen == nullptr) {
    snap.notes.push_back("NVML gave no handle for any GPU");
    return finish();
  }

  const auto fact = [&](const std::string& key, nlohmann::json value, const std::string& unit,
                        const std::string& call) {
    snap.facts.push_back({key, printable_json(value), unit, "NVML " + call});
  };
  if (!chosen_name.empty()) fact("model", chosen_name, "", "nvmlDeviceGetName");
  if (have_pci) {
    chosen_pci.bus_id[sizeof chosen_pci.bus_id - 1] = '\0';
    fact("pci.slot", std::string(chosen_pci.bus_id), "", "nvmlDeviceGetPciInfo_v3");
    fact("pci.vendor_id", fmt::format("0x{:04x}", chosen_pci.pci_device_id & 0xffff), "",
         "nvmlDeviceGetPciInfo_v3");
    fact("pci.device_id", fmt::format("0x{:04x}", chosen_pci.pci_device_id >> 16), "",
         "nvmlDeviceGetPciInfo_v3");
  }
  if (n.driver_version) {
    char buf[96] = {};
    if (n.driver_version(buf, sizeof buf - 1) == kNvmlSuccess)
      fact("driver_version", std::string(buf), "", "nvmlSystemGetDriverVersion");
  }
  unsigned v = 0;
  if (n.clock && n.clock(chosen, kSm, &v) == kNvmlSuccess)
    fact("clock.current_mhz", v, "MHz", "nvmlDeviceGetClockInfo(SM)");
  if (n.max_clock && n.max_clock(chosen, kSm, &v) == kNvmlSuccess)
    fact("clock.max_mhz", v, "MHz", "nvmlDeviceGetMaxClockInfo(SM)");
  if (n.clock && n.clock(chosen, kMem, &v) == kNvmlSuccess)
    fact("memory.clock.current_mhz", v, "MHz", "nvmlDeviceGetClockInfo(MEM)");
  if (n.max_clock && n.max_clock(chosen, kMem, &v) == kNvmlSuccess)
    fact("memory.clock.max_mhz", v, "MHz", "nvmlDeviceGetMaxClockInfo(MEM)");
  if (n.temperature && n.temperature(chosen, kNvmlTemperatureGpu, &v) == kNvmlSuccess)
    fact("temperature_c", v, "C", "nvmlDeviceGetTemperature(GPU)");
  if (n.power && n.power(chosen, &v) == kNvmlSuccess)
    fact("power_w", v * 1e-3, "W", "nvmlDeviceGetPowerUsage");
  if (n.power_limit && n.power_limit(chosen, &v) == kNvmlSuccess)
    fact("power_limit_w", v * 1e-3, "W", "nvmlDeviceGetEnforcedPowerLimit");
  if (unsigned long long reasons = 0; n.throttle && n.throttle(chosen, &reasons) == kNvmlSuccess) {
    std::vector<std::string> names;
    for (const auto& [bit, label] : kThrottleReasons)
      if (reasons & bit) names.emplace_back(label);
    if (reasons & ~0x1ffULL) names.push_back(fmt::format("other(0x{:x})", reasons & ~0x1ffULL));
    fact("throttle_reasons", names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ",")),
         "", "nvmlDeviceGetCurrentClocksEventReasons");
  }
  if (n.bus_width && n.bus_width(chosen, &v) == kNvmlSuccess)
    fact("memory.bus_width_bits", v, "bit", "nvmlDeviceGetMemoryBusWidth");
  if (NvmlMemory m{}; n.memory && n.memory(chosen, &m) == kNvmlSuccess)
    fact("memory.total_bytes", m.total, "B", "nvmlDeviceGetMemoryInfo");
  if (NvmlDeviceAttributes a{};
      n.attributes && n.attributes(chosen, &a) == kNvmlSuccess && a.multiprocessor_count)
    fact("cores", a.multiprocessor_count, "", "nvmlDeviceGetAttributes_v2 (multiprocessorCount)");
  if (n.cuda_cores && n.cuda_cores(chosen, &v) == kNvmlSuccess) {
    fact("lanes", v, "", "nvmlDeviceGetNumGpuCores");
    // Without MIG, nvmlDeviceGetAttributes is unsupported: the SM count is
    // then the FP32 lanes over the lanes per SM of the compute capability.
    int major = 0, minor = 0;
    if (!snap.find("cores") && n.compute_capability &&
        n.compute_capability(chosen, &major, &minor) == kNvmlSuccess) {
      if (const unsigned per_sm = fp32_lanes_per_sm(major, minor); per_sm && v % per_sm == 0)
        fact("cores", v / per_sm, "",
             fmt::format("nvmlDeviceGetNumGpuCores / {} FP32 lanes per SM (compute capability {}.{})", per_sm,
                         major, minor));
    }
  }
  return finish();
}

}  // namespace gpuscope
