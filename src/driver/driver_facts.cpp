#include "driver/driver_readers.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace gpuscope {
namespace {

bool contains_nocase(const std::string& haystack, const std::string& needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
         }) != haystack.end();
}

enum class Vendor { kUnknown, kNvidia, kArm, kQualcomm, kAmd, kIntel };

Vendor vendor_of(const DeviceInfo& d) {
  const std::string both = d.vendor + " " + d.name;
  if (contains_nocase(both, "nvidia")) return Vendor::kNvidia;
  if (contains_nocase(d.vendor, "arm") || contains_nocase(d.name, "mali")) return Vendor::kArm;
  if (contains_nocase(both, "qualcomm") || contains_nocase(d.name, "adreno")) return Vendor::kQualcomm;
  if (contains_nocase(both, "advanced micro devices") || contains_nocase(d.vendor, "amd"))
    return Vendor::kAmd;
  if (contains_nocase(both, "intel")) return Vendor::kIntel;
  return Vendor::kUnknown;
}

const char* pci_vendor_id(Vendor v) {
  switch (v) {
    case Vendor::kNvidia:
      return "0x10de";
    case Vendor::kAmd:
      return "0x1002";
    case Vendor::kIntel:
      return "0x8086";
    default:
      return nullptr;
  }
}

void append(std::vector<DriverSnapshot>& out, std::vector<DriverSnapshot> more) {
  for (auto& s : more) out.push_back(std::move(s));
}

}  // namespace

std::vector<DriverSnapshot> read_driver_facts(const DeviceInfo& device, const DriverQuery& q) {
  std::vector<DriverSnapshot> out;
  const Vendor v = vendor_of(device);
  const bool any = q.explicit_root;  // a tree the user named: every driver in it
  if (!any && device.type != "gpu" && device.type != "accelerator") return out;

  if (any || v == Vendor::kArm) append(out, read_mali_kbase(q.sysfs_root));
  if (any || v == Vendor::kQualcomm) append(out, read_kgsl(q.sysfs_root));
  for (auto& card : read_drm_cards(q.sysfs_root)) {
    const bool fits = (card.driver == "amdgpu" && v == Vendor::kAmd) ||
                      ((card.driver == "i915" || card.driver == "xe") && v == Vendor::kIntel) ||
                      (v == Vendor::kArm && card.driver == "panfrost") ||
                      (v == Vendor::kQualcomm && card.driver == "msm");
    if (any || fits) out.push_back(std::move(card));
  }
  const int nv_bus =
      device.vendor_info.contains("nv_pci_bus_id") && device.vendor_info["nv_pci_bus_id"].is_number()
          ? device.vendor_info["nv_pci_bus_id"].get<int>()
          : -1;
  for (auto& pci : read_pci_display_devices(q.sysfs_root)) {
    const DriverFact* vendor = pci.find("pci.vendor_id");
    const char* want = pci_vendor_id(v);
    bool fits = want && vendor && vendor->value.is_string() && vendor->value.get<std::string>() == want;
    if (fits && nv_bus >= 0) {
      // slot "0000:3b:00.0": the bus is the second field, in hex.
      const DriverFact* slot = pci.find("pci.slot");
      const std::string s = slot && slot->value.is_string() ? slot->value.get<std::string>() : "";
      const auto colon = s.find(':');
      int bus = -1;
      if (colon != std::string::npos && s.size() >= colon + 3)
        std::from_chars(s.data() + colon + 1, s.data() + colon + 3, bus, 16);
      fits = bus == nv_bus;
    }
    if (any || fits) out.push_back(std::move(pci));
  }
  if (q.use_nvml && v == Vendor::kNvidia) append(out, read_nvml(nv_bus, device.name));
  for (auto& s : out) s.when = q.when;
  return out;
}

}  // namespace gpuscope
