// What identifies a physical device across APIs (DeviceInfo::uuid and
// ::pci_address), how backends spell it, and whether two DeviceInfos name
// the same device.
#pragma once

#include "core/device_info.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuscope {

// 16 bytes as 32 lowercase hex digits in 8-4-4-4-12 groups, the bytes in
// the order given (OpenCL's CL_DEVICE_UUID_KHR and Vulkan's deviceUUID give
// the same order). All zero bytes give "": drivers that do not know the
// UUID fill it with zeros.
std::string format_device_uuid(const std::array<uint8_t, 16>& bytes);

// "dddd:bb:dd.f" in lowercase hex, as Linux names PCI devices; "" where a
// field is out of range (domain > 0xffff, bus > 0xff, device > 0x1f,
// function > 7).
std::string format_pci_address(uint32_t domain, uint32_t bus, uint32_t device, uint32_t function);

// Whether two devices are one physical device: decided by the UUID where
// both record one, else by the PCI address where both record one, else
// unknown.
struct DeviceIdentityMatch {
  enum class Verdict { same, different, unknown };
  Verdict verdict = Verdict::unknown;
  std::string by;      // "uuid" or "PCI address"; empty when unknown
  std::string detail;  // for a person: the shared value, both values, or what is missing
};
DeviceIdentityMatch match_device_identity(const DeviceInfo& a, const DeviceInfo& b);

// Devices of `devices` that are one physical device (two or more each), in
// list order: what `gpuscope list` says under its table.
struct SameDeviceGroup {
  std::vector<const DeviceInfo*> devices;
  std::string by;     // "uuid" or "PCI address"
  std::string value;  // the shared uuid or address
};
std::vector<SameDeviceGroup> same_device_groups(const std::vector<DeviceInfo>& devices);

// The API part of a device id: "opencl" for "opencl:1:0", "vulkan" for "vulkan:0".
std::string api_of_id(const std::string& id);

}  // namespace gpuscope
