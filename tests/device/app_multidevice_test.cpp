// `gpuscope run --device A,B` and `--device all`: the list's checks, the
// folder per device, the comparison page, and a failing device that leaves
// the others running and the exit code 1.
#include "app/run_options.hpp"
#include "support/cli.hpp"
#include "core/error.hpp"
#include "report/results_json.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("gpuscope_multidev_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

RunPlan plan_for(const std::string& device) {
  RunArgs a;
  a.device = device;
  return plan_run(a);
}

std::string rejection(const std::string& device) {
  try {
    plan_for(device);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

DeviceInfo listed(std::string id, std::string type) {
  DeviceInfo d;
  d.id = std::move(id);
  d.type = std::move(type);
  d.name = "x";
  return d;
}

TEST(MultiDevice, OneIdIsASingleRunAListOrAllIsMany) {
  const RunPlan one = plan_for("opencl:0:0");
  EXPECT_FALSE(one.multi);
  EXPECT_EQ(one.device, "opencl:0:0");
  const RunPlan list = plan_for("opencl:1:0,vulkan:0");
  EXPECT_TRUE(list.multi);
  EXPECT_FALSE(list.all_devices);
  EXPECT_EQ(list.devices, (std::vector<std::string>{"opencl:1:0", "vulkan:0"}));
  const RunPlan all = plan_for("all");
  EXPECT_TRUE(all.multi);
  EXPECT_TRUE(all.all_devices);
}

TEST(MultiDevice, BadListsAreRefusedNamingTheProblem) {
  EXPECT_EQ(rejection("opencl:0:0,,vulkan:0"),
            "--device 'opencl:0:0,,vulkan:0' has an empty ID; give device IDs separated by commas");
  EXPECT_EQ(rejection("opencl:0:0,"), "--device 'opencl:0:0,' has an empty ID; give device IDs separated by commas");
  EXPECT_EQ(rejection("vulkan:0,vulkan:0"), "--device names 'vulkan:0' twice");
  EXPECT_EQ(rejection("all,vulkan:0"), "--device: 'all' stands alone, not in a list of IDs");
}

TEST(MultiDevice, ResolvingChecksEveryIdAndAllSkipsTheSims) {
  const std::vector<DeviceInfo> devices = {listed("opencl:0:0", "cpu"), listed("opencl:1:0", "gpu"),
                                           listed("vulkan:0", "gpu"), listed("sim:mali-g52", "sim")};
  const auto none_unlisted = [](const std::string&) { return false; };
  EXPECT_EQ(resolve_device_list(plan_for("all"), devices, none_unlisted),
            (std::vector<std::string>{"opencl:0:0", "opencl:1:0", "vulkan:0"}));
  EXPECT_EQ(resolve_device_list(plan_for("vulkan:0,sim:mali-g52"), devices, none_unlisted),
            (std::vector<std::string>{"vulkan:0", "sim:mali-g52"}));
  try {
    resolve_device_list(plan_for("vulkan:0,vulkan:7"), devices, none_unlisted);
    ADD_FAILURE() << "an unknown ID was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown device 'vulkan:7'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("opencl:1:0"), std::string::npos) << e.what();
  }
  const auto files = [](const std::string& id) { return id == "sim:my.json"; };
  EXPECT_EQ(resolve_device_list(plan_for("vulkan:0,sim:my.json"), devices, files),
            (std::vector<std::string>{"vulkan:0", "sim:my.json"}));
  // Nothing but simulated devices: `all` has nothing to run.
  try {
    resolve_device_list(plan_for("all"), {devices[3]}, none_unlisted);
    ADD_FAILURE() << "all with no devices was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--device all: no devices found"), std::string::npos) << e.what();
  }
}

TEST(MultiDevice, FolderNamesAreFilesystemSafeAndDistinct) {
  EXPECT_EQ(device_folder_name("opencl:1:0"), "opencl-1-0");
  EXPECT_EQ(device_folder_name("vulkan:0"), "vulkan-0");
  EXPECT_EQ(device_folder_name("sim:/tmp/my gpu.json"), "sim--tmp-my-gpu.json");
  EXPECT_EQ(device_folder_name("a:b", {"a-b"}), "a-b-2");
  EXPECT_EQ(device_folder_name("a:b", {"a-b", "a-b-2"}), "a-b-3");
}

TEST(MultiDevice, EachDeviceIntoItsOwnFolderThenAComparison) {
  const fs::path out = temp_dir("two");
  const auto r = test::run_gpuscope("run --device opencl:0:0,sim:mali-g52 --probes launch --quick -q --out " +
                                    out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* folder : {"opencl-0-0", "sim-mali-g52"}) {
    ASSERT_TRUE(fs::exists(out / folder / "results.json")) << folder;
    EXPECT_TRUE(fs::exists(out / folder / "report.html")) << folder;
  }
  EXPECT_EQ(read_results_file((out / "sim-mali-g52" / "results.json").string()).device.id, "sim:mali-g52");
  EXPECT_TRUE(fs::exists(out / "compare.html"));
  EXPECT_NE(r.output.find("[1] and [2]: not known to be one GPU"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("launch dispatch"), std::string::npos) << r.output;
}

TEST(MultiDevice, AFailingDeviceLeavesTheOthersRunningAndExits1) {
  const fs::path out = temp_dir("fail");
  std::ofstream(out / "sim-mali-g52") << "a file where the device's folder would go\n";
  const auto r = test::run_gpuscope("run --device sim:mali-g52,sim:adreno-530 --probes launch --quick -q --out " +
                                    out.string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("sim:mali-g52 failed"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(out / "sim-adreno-530" / "results.json"));
}

TEST(MultiDevice, AnUnknownIdInTheListRunsNothingAndExits2) {
  const fs::path out = temp_dir("unknown");
  const auto r = test::run_gpuscope("run --device sim:mali-g52,opencl:9:9 --probes launch --quick -q --out " +
                                    out.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown device 'opencl:9:9'"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out / "sim-mali-g52"));
}

}  // namespace
}  // namespace gpuscope
