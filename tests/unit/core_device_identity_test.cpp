// The physical identity of a device across APIs (core/device_identity.hpp):
// how backends spell it, and how two devices are matched by it.
#include "core/device_identity.hpp"

#include <gtest/gtest.h>

namespace gpuscope {
namespace {

DeviceInfo device(std::string id, std::string uuid, std::string pci) {
  DeviceInfo d;
  d.id = std::move(id);
  d.uuid = std::move(uuid);
  d.pci_address = std::move(pci);
  return d;
}

TEST(DeviceIdentity, UuidIsLowercaseHexInFiveGroupsAndZerosAreUnknown) {
  std::array<uint8_t, 16> b{};
  EXPECT_EQ(format_device_uuid(b), "");
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(0xA0 + i);
  EXPECT_EQ(format_device_uuid(b), "a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
}

TEST(DeviceIdentity, PciAddressAsLinuxNamesItAndOutOfRangeIsUnknown) {
  EXPECT_EQ(format_pci_address(0, 0x1b, 0, 0), "0000:1b:00.0");
  EXPECT_EQ(format_pci_address(0x10, 0xff, 0x1f, 7), "0010:ff:1f.7");
  EXPECT_EQ(format_pci_address(0, 0x100, 0, 0), "");
  EXPECT_EQ(format_pci_address(0, 0, 0x20, 0), "");
  EXPECT_EQ(format_pci_address(0, 0, 0, 8), "");
  EXPECT_EQ(format_pci_address(0x10000, 0, 0, 0), "");
}

TEST(DeviceIdentity, UuidDecidesBeforePciAddress) {
  using V = DeviceIdentityMatch::Verdict;
  const auto a = device("opencl:1:0", "11111111-2222-3333-4444-555555555555", "0000:1b:00.0");
  const auto b = device("vulkan:0", "11111111-2222-3333-4444-555555555555", "");
  const auto c = device("vulkan:1", "99999999-2222-3333-4444-555555555555", "0000:1b:00.0");
  EXPECT_EQ(match_device_identity(a, b).verdict, V::same);
  EXPECT_EQ(match_device_identity(a, b).by, "uuid");
  // Same address, different uuid: the uuid wins.
  EXPECT_EQ(match_device_identity(a, c).verdict, V::different);
  const auto d = device("opencl:2:0", "", "0000:1b:00.0");
  EXPECT_EQ(match_device_identity(c, d).verdict, V::same);
  EXPECT_EQ(match_device_identity(c, d).by, "PCI address");
  EXPECT_EQ(match_device_identity(d, device("x:1", "", "0000:3b:00.0")).verdict, V::different);
}

TEST(DeviceIdentity, NothingInCommonIsUnknownAndSaysWhy) {
  using V = DeviceIdentityMatch::Verdict;
  const auto none = match_device_identity(device("opencl:0:0", "", ""), device("sim:mali-g52", "", ""));
  EXPECT_EQ(none.verdict, V::unknown);
  EXPECT_NE(none.detail.find("neither"), std::string::npos);
  const auto one = match_device_identity(device("opencl:0:0", "", ""), device("vulkan:0", "", "0000:1b:00.0"));
  EXPECT_EQ(one.verdict, V::unknown);
  EXPECT_NE(one.detail.find("opencl:0:0"), std::string::npos);
  const auto crossed =
      match_device_identity(device("a:0", "11111111-2222-3333-4444-555555555555", ""), device("b:0", "", "0000:1b:00.0"));
  EXPECT_EQ(crossed.verdict, V::unknown);
}

TEST(DeviceIdentity, GroupsListTheDevicesThatAreOne) {
  const std::vector<DeviceInfo> devices = {
      device("opencl:0:0", "", ""),
      device("opencl:1:0", "11111111-2222-3333-4444-555555555555", "0000:1b:00.0"),
      device("vulkan:0", "11111111-2222-3333-4444-555555555555", "0000:1b:00.0"),
      device("vulkan:1", "", ""),
  };
  const auto groups = same_device_groups(devices);
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].devices.size(), 2u);
  EXPECT_EQ(groups[0].devices[0]->id, "opencl:1:0");
  EXPECT_EQ(groups[0].devices[1]->id, "vulkan:0");
  EXPECT_EQ(groups[0].by, "uuid");
  EXPECT_TRUE(same_device_groups({devices[0], devices[3]}).empty());
}

}  // namespace
}  // namespace gpuscope
