// The command line around driver facts: --sysfs-root, --opencl-library and
// `list --verbose`.
#include "report/results_json.hpp"

#include "support/cli.hpp"
#include "support/driver_facts.hpp"

#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace gpuscope::test {
namespace {

TEST(DriverFactsCli, RunRecordsTheTreeNamedBySysfsRoot) {
  const auto out = test::fresh_temp_dir("driver_cli");
  const auto r = run_gpuscope("run --device sim:mali-g52 --probes clock --quick -q --out " + out.string() +
                              " --sysfs-root " + (kSysfsTrees / "mali_kbase_g52_2core").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("What the driver says"), std::string::npos) << r.output;
  const Results res = read_results_file((out / "results.json").string());
  ASSERT_EQ(res.device.driver.size(), 2u);  // start and end
  EXPECT_EQ(res.device.driver[0].when, "start");
  EXPECT_EQ(res.device.driver[1].when, "end");
  EXPECT_EQ(num(res.device.driver[0], "cores"), 2);
  std::ifstream html(out / "report.html");
  const std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("id=\"driver\""), std::string::npos);

  const auto bad =
      run_gpuscope("run --device sim:mali-g52 --sysfs-root /nonexistent/tree --out " + out.string());
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("/nonexistent/tree"), std::string::npos) << bad.output;
}

TEST(OpenClLibraryCli, APathThatIsNoOpenClLibraryIsBadInput) {
  const auto r = run_gpuscope("list --opencl-library /etc/hostname");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("'/etc/hostname'"), std::string::npos) << r.output;
  const auto missing = run_gpuscope("list --opencl-library /no/such/libOpenCL.so");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("/no/such/libOpenCL.so"), std::string::npos) << missing.output;
}

TEST(OpenClLibraryCli, VerboseListSaysWhereEachApiCameFrom) {
  const auto r = run_gpuscope("list --verbose");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("opencl  "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("libOpenCL"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("sim     built in"), std::string::npos) << r.output;
}

// A Vulkan device lists what its driver says of its subgroups (and, where
// the driver offers the extensions, of its shader cores) as driver facts.
TEST(DriverFactsCli, VerboseListShowsWhatAVulkanDriverSays) {
  const auto r = run_gpuscope("list --verbose");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  if (r.output.find("\nvulkan:") == std::string::npos) GTEST_SKIP() << "no Vulkan device here";
  EXPECT_NE(r.output.find("    vulkan     subgroup.size "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(VkPhysicalDeviceVulkan11Properties subgroupSize)"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace gpuscope::test
