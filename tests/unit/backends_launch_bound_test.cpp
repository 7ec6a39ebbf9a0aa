// backends/launch_bound.hpp: how long a backend waits for a launch is a
// multiple of the plan, never under the floor, never over the ceiling.
#include "backends/launch_bound.hpp"

#include <gtest/gtest.h>

namespace gpuscope {
namespace {

TEST(LaunchBound, WaitIsTheOverrunOfThePlanBetweenFloorAndCeiling) {
  EXPECT_EQ(LaunchBound{200}.wait_ms(), LaunchBound::kFloorMs);  // 2 s of overrun is under the floor
  EXPECT_EQ(LaunchBound{1000}.wait_ms(), LaunchBound::kOverrun * 1000);
  EXPECT_EQ(LaunchBound{10000}.wait_ms(), LaunchBound::kCeilingMs);  // --max-launch-ms' largest
  EXPECT_EQ(LaunchBound{1}.wait_ms(), LaunchBound::kFloorMs);
}

TEST(LaunchBound, BatchWaitsForEveryLaunchUpToTheCeiling) {
  EXPECT_EQ(LaunchBound{200}.wait_ms(5), LaunchBound::kOverrun * 200 * 5);
  EXPECT_EQ(LaunchBound{200}.wait_ms(1000000), LaunchBound::kCeilingMs);
  EXPECT_EQ(LaunchBound{200}.wait_ms(0), LaunchBound{200}.wait_ms(1));
  EXPECT_EQ(LaunchBound::command_wait_ms(), LaunchBound::kCeilingMs);
}

}  // namespace
}  // namespace gpuscope
