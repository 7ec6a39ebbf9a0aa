// judge_counter (src/probes/cycle_counter.hpp): which readings of a kernel's
// cycle counter become a clock, and why the others do not.
#include "probes/cycle_counter.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gpuscope {
namespace {

TEST(CycleCounter, SteadyTicksGiveTheirRate) {
  // 1.98 GHz over 10 ms launches; the timer counts ns and runs slower.
  const std::vector<CounterReading> r = {{19'800'000, 9'990'000, 10e6}, {19'780'000, 9'980'000, 10e6},
                                         {19'820'000, 10'000'000, 10e6}};
  const CounterVerdict v = judge_counter(r);
  EXPECT_TRUE(v.usable) << v.why;
  EXPECT_NEAR(v.mhz, 1980, 1e-6);
  // The timer's own rate, from the same launches: what turns a many-wave
  // launch's counter-over-timer ratio into MHz (sustain).
  EXPECT_NEAR(v.timer_mhz, 999, 1e-6);
}

TEST(CycleCounter, ACounterThatCountsWhatTheTimerCountsIsATimer) {
  // lavapipe: clockARB() and clockRealtimeEXT() both read the host's ns clock.
  const std::vector<CounterReading> r = {{1'285'127, 1'285'177, 1'304'856}, {1'242'012, 1'242'062, 1'275'092}};
  const CounterVerdict v = judge_counter(r);
  EXPECT_FALSE(v.usable);
  EXPECT_NE(v.why.find("timer counting ns"), std::string::npos) << v.why;
  // ... also where a loaded host stretched its launches around the chain.
  const std::vector<CounterReading> loaded = {{1'200'000, 1'200'050, 120e6}, {1'200'000, 1'200'040, 6e6}};
  EXPECT_NE(judge_counter(loaded).why.find("timer counting ns"), std::string::npos) << judge_counter(loaded).why;
  // ... and where one reading of three was preempted between the clocks'
  // reads (a timer still, by the others).
  const std::vector<CounterReading> preempted = {
      {1'285'127, 1'285'177, 1'304'856}, {1'242'012, 1'242'062, 1'275'092}, {1'900'000, 1'250'000, 1'950'000}};
  EXPECT_NE(judge_counter(preempted).why.find("timer counting ns"), std::string::npos) << judge_counter(preempted).why;
  // A cycle counter that matched the timer once, by chance, is a counter.
  const std::vector<CounterReading> chance = {
      {1'000'000, 1'000'100, 1e6}, {1'980'000, 1'000'000, 1e6}, {1'979'000, 999'000, 1e6}};
  EXPECT_TRUE(judge_counter(chance).usable) << judge_counter(chance).why;
}

TEST(CycleCounter, WithoutATimerARateAloneDecides) {
  const std::vector<CounterReading> r = {{1'000'000, 0, 1e6}, {1'010'000, 0, 1e6}};
  EXPECT_TRUE(judge_counter(r).usable);
}

TEST(CycleCounter, StuckWrappedOrUnsteadyCountersAreRejected) {
  const auto why = [](std::vector<CounterReading> r) { return judge_counter(r).why; };
  EXPECT_NE(why({{1'000'000, 0, 1e6}, {0, 0, 1e6}}).find("did not advance"), std::string::npos);
  // A wrapped 64-bit difference: far above any clock.
  EXPECT_NE(why({{~uint64_t{0} - 5, 0, 1e6}}).find("wrapped"), std::string::npos);
  // Under 1 MHz: a counter of something else (lavapipe's first, cold launch read 2 kHz).
  EXPECT_NE(why({{1973, 0, 174e6}}).find("outside"), std::string::npos);
  EXPECT_NE(why({{100'000, 0, 1e6}, {1'500'000, 0, 1e6}}).find("varied"), std::string::npos);
  EXPECT_FALSE(judge_counter({}).usable);
  EXPECT_NE(why({{1000, 0, 0}}).find("no device time"), std::string::npos);
}

TEST(CycleCounter, AFewTornReadsAreLeftOut) {
  // lavapipe under load: one launch's clockARB() low half wrapped between its
  // two 32-bit reads, so that reading went back by about 2^32.
  const uint64_t torn = uint64_t{1'257'000} - (uint64_t{1} << 32);
  const std::vector<CounterReading> r = {
      {1'285'127, 1'285'177, 1'304'856}, {torn, 1'257'050, 1'260'000}, {1'242'012, 1'242'062, 1'275'092}};
  EXPECT_NE(judge_counter(r).why.find("timer counting ns"), std::string::npos) << judge_counter(r).why;
  const std::vector<CounterReading> mostly_torn = {{torn, 0, 1e6}, {torn, 0, 1e6}, {1'000'000, 0, 1e6}};
  EXPECT_NE(judge_counter(mostly_torn).why.find("went backwards in 2 of 3"), std::string::npos)
      << judge_counter(mostly_torn).why;
}

TEST(CycleCounter, DescriptionNamesTheCounterAndWhatItCounts) {
  DeviceFeatures f;
  EXPECT_EQ(describe_cycle_counter(f, "NVIDIA Corporation"), "");
  f.cycle_counter = true;
  EXPECT_NE(describe_cycle_counter(f, "NVIDIA").find("SM clock"), std::string::npos);
  EXPECT_NE(describe_cycle_counter(f, "NVIDIA").find("clockARB"), std::string::npos);
  EXPECT_EQ(describe_cycle_counter(f, "Mesa").find("SM"), std::string::npos);
  f.inline_asm = "nvidia-ptx";
  EXPECT_NE(describe_cycle_counter(f, "NVIDIA Corporation").find("%clock64"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope
