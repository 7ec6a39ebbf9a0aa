#include "core/device_identity.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuscope {

std::string format_device_uuid(const std::array<uint8_t, 16>& bytes) {
  if (std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0; })) return "";
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", bytes[i]);
  }
  return out;
}

std::string format_pci_address(uint32_t domain, uint32_t bus, uint32_t device, uint32_t function) {
  if (domain > 0xffff || bus > 0xff || device > 0x1f || function > 7) return "";
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
}

DeviceIdentityMatch match_device_identity(const DeviceInfo& a, const DeviceInfo& b) {
  using V = DeviceIdentityMatch::Verdict;
  if (!a.uuid.empty() && !b.uuid.empty()) {
    if (a.uuid == b.uuid) return {V::same, "uuid", a.uuid};
    return {V::different, "uuid", fmt::format("{} and {}", a.uuid, b.uuid)};
  }
  if (!a.pci_address.empty() && !b.pci_address.empty()) {
    if (a.pci_address == b.pci_address) return {V::same, "PCI address", a.pci_address};
    return {V::different, "PCI address", fmt::format("{} and {}", a.pci_address, b.pci_address)};
  }
  const auto says = [](const DeviceInfo& d) { return !d.uuid.empty() || !d.pci_address.empty(); };
  std::string missing;
  if (!says(a) && !says(b))
    missing = "neither records a uuid or PCI address";
  else if (says(a) && says(b))
    missing = "one records only a uuid, the other only a PCI address";
  else
    missing = fmt::format("{} records no uuid or PCI address", says(a) ? b.id : a.id);
  return {V::unknown, "", missing};
}

std::vector<SameDeviceGroup> same_device_groups(const std::vector<DeviceInfo>& devices) {
  std::vector<SameDeviceGroup> groups;
  std::vector<bool> grouped(devices.size(), false);
  for (size_t i = 0; i < devices.size(); ++i) {
    if (grouped[i]) continue;
    SameDeviceGroup g{{&devices[i]}, "", ""};
    for (size_t j = i + 1; j < devices.size(); ++j) {
      if (grouped[j]) continue;
      const DeviceIdentityMatch m = match_device_identity(devices[i], devices[j]);
      if (m.verdict != DeviceIdentityMatch::Verdict::same) continue;
      g.devices.push_back(&devices[j]);
      grouped[j] = true;
      if (g.by.empty()) {
        g.by = m.by;
        g.value = m.detail;
      }
    }
    if (g.devices.size() > 1) groups.push_back(std::move(g));
  }
  return groups;
}

std::string api_of_id(const std::string& id) { return id.substr(0, id.find(':')); }

}  // namespace gpuscope
