// Readers of what GPU drivers publish without root: Linux sysfs files of Arm's
// Mali driver (kbase), Qualcomm's kgsl, amdgpu, i915 and xe, the PCI
// identity of any display device, and NVIDIA's management library (NVML,
// opened at run time). File formats are the drivers' documented or source
// formats; docs/driver-facts.md lists every file and fact key.
//
// Contract: never throws for what a driver wrote. A file that is missing is
// simply absent; one that exists but cannot be read or parsed is skipped with
// a note in its snapshot.
#pragma once

#include "core/device_info.hpp"
#include "core/driver_facts.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace gpuscope {

struct DriverQuery {
  // Where /sys is found: "/" on a live system, a captured or written tree in
  // tests (--sysfs-root).
  std::filesystem::path sysfs_root = "/";
  // The tree was named by the user: read every driver found in it, for any
  // device (a sim run can then show how the report treats a driver's claims).
  // Otherwise only drivers that can belong to `device` are read, and none for
  // CPUs and sims.
  bool explicit_root = false;
  std::string when = "start";  // copied into each snapshot
  bool use_nvml = true;        // tests turn the real library off
};

std::vector<DriverSnapshot> read_driver_facts(const DeviceInfo& device, const DriverQuery& query);

// The readers one by one, each over the sysfs root; empty when the driver's
// files are absent.
std::vector<DriverSnapshot> read_mali_kbase(const std::filesystem::path& root);
std::vector<DriverSnapshot> read_kgsl(const std::filesystem::path& root);
// DRM cards: amdgpu, i915 and xe clock tables and frequencies.
std::vector<DriverSnapshot> read_drm_cards(const std::filesystem::path& root);
// Every PCI display-class device (class 0x03xxxx): IDs, driver, link.
std::vector<DriverSnapshot> read_pci_display_devices(const std::filesystem::path& root);
// NVML for the NVIDIA GPU on PCI bus `pci_bus` (-1: the one whose name is
// `name`, else the first).
std::vector<DriverSnapshot> read_nvml(int pci_bus, const std::string& name);

}  // namespace gpuscope
