// The CI subset of the recovery benchmark (bench/recovery_benchmark.py):
// three GPUs drawn from its wide generator at fixed seeds, chosen for what
// they hold (a 6-way L1 of 128 B lines filled in 32 B sectors behind a
// 4-way TLB of 64 KiB pages, wave width 4 and 32 work-groups per core; a
// 4-way TLB of 16 KiB pages in front of a 6-way randomly replaced last
// level; an exclusive pseudo-LRU L2 behind a sectored L1), run through the
// memory and residency probes. No finding may be confidently wrong
// (confidence >= 0.8 outside the benchmark's tolerance) and every finding
// missing must carry its reason in results.json. Needs python3.
#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace {

TEST(RecoveryBenchmark, CiSubsetIsNeverConfidentlyWrong) {
  if (std::system("python3 -c '' >/dev/null 2>&1") != 0) GTEST_SKIP() << "python3 not installed";
  const auto out = gpuscope::test::fresh_temp_dir("recovery_ci");
  const std::string cmd = std::string("python3 ") + GPUSCOPE_SOURCE_DIR +
                          "/bench/recovery_benchmark.py --check --no-presets --seeds 5,12,39 "
                          "--probes latency,tlb,geometry,scheduling,occupancy,divergence --gpuscope " +
                          GPUSCOPE_BINARY + " --out " + out.string() + " 2>&1";
  std::string output;
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) output.append(buf.data(), n);
  const int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  EXPECT_NE(output.find(", 0 confidently wrong,"), std::string::npos) << output;
  std::filesystem::remove_all(out);
}

}  // namespace
