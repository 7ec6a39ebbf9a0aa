// Recovery tests of the execution probes on the sim (issue 7): the
// instruction cache and the code bytes per add from the icache probe, dual
// issue from the compute probe, and the occupancy probe end to end. Expected
// values are read from the description.
#include "analysis/compute.hpp"
#include "analysis/execution.hpp"
#include "backends/sim/sim_device.hpp"
#include "probes/probe.hpp"

#include "support/sim_configs.hpp"

#include <gtest/gtest.h>

#include <variant>

using namespace gpuscope;
using namespace gpuscope::sim;

class SimExecRecovery : public testing::TestWithParam<std::string> {};

// exec.icache_bytes within 10% of icache.capacity_bytes (the loop body is
// what must stay cached), exec.code_bytes_per_op within 5% of
// icache.bytes_per_op.
TEST_P(SimExecRecovery, InstructionCacheAndCodeBytes) {
  const SimConfig c = test::sim_config_named(GetParam());
  SimDevice dev(c, "sim:" + c.id_name);
  const Results r = test::run_sim_probe(dev, run_icache_probe, true);
  const Series* body = r.find_series("icache.body");
  const Series* binary = r.find_series("icache.binary");
  ASSERT_NE(body, nullptr);
  ASSERT_NE(binary, nullptr);
  const auto cb = analysis::code_bytes_findings(*binary);
  ASSERT_FALSE(cb.empty());
  const double per_op = std::get<double>(cb.front().value);
  std::printf("icache %s: code bytes per op configured %.2f, recovered %.2f\n", c.id_name.c_str(),
              c.icache.bytes_per_op, per_op);
  EXPECT_NEAR(per_op / c.icache.bytes_per_op, 1.0, 0.05);
  const auto fs = analysis::icache_findings(*body, binary);
  const Finding* bytes = test::find_finding(fs, "exec.icache_bytes");
  ASSERT_NE(bytes, nullptr);
  const double got = std::get<double>(bytes->value);
  const auto want = static_cast<double>(c.icache.capacity_bytes);
  std::printf("icache %s: capacity configured %.0f B, recovered %.0f B\n", c.id_name.c_str(), want, got);
  EXPECT_NEAR(got / want, 1.0, 0.10);
}

// compute.dual_issue.fp32_fma_add exactly where rates.dual_issue_fma_add
// says; the fma + int32 add mix, where measured, is never dual-issued by
// the model.
TEST_P(SimExecRecovery, DualIssueWhereConfigured) {
  const SimConfig c = test::sim_config_named(GetParam());
  SimDevice dev(c, "sim:" + c.id_name);
  const Results r = test::run_sim_probe(dev, run_compute_probe, true);
  const auto fs = analysis::compute_findings(r);
  const Finding* fma_add = test::find_finding(fs, "compute.dual_issue.fp32_fma_add");
  const Finding* fma_iadd = test::find_finding(fs, "compute.dual_issue.fp32_fma_int32_add");
  ASSERT_NE(fma_add, nullptr);
  const bool got = std::get<bool>(fma_add->value);
  std::printf("compute %s: fma+add dual issue configured %s, recovered %s (%s)\n", c.id_name.c_str(),
              c.rates.dual_issue_fma_add ? "yes" : "no", got ? "yes" : "no", fma_add->note.c_str());
  EXPECT_EQ(got, c.rates.dual_issue_fma_add);
  if (fma_iadd) EXPECT_FALSE(std::get<bool>(fma_iadd->value));  // not in the quick matrix
}

// The occupancy probe end to end: every launch's outputs validated by the
// probe, its three series present, and the build facts the device reports
// (registers per work-item in the build log, spills as private memory past
// core.max_registers_per_item) recorded per build.
TEST_P(SimExecRecovery, OccupancyRunsEndToEnd) {
  const SimConfig c = test::sim_config_named(GetParam());
  SimDevice dev(c, "sim:" + c.id_name);
  const Results r = test::run_sim_probe(dev, run_occupancy_probe, true);
  for (const char* id : {"occupancy.registers", "occupancy.waves", "occupancy.local"}) {
    const Series* s = r.find_series(id);
    ASSERT_NE(s, nullptr) << id;
    EXPECT_GE(s->points.size(), 2u) << id;  // quick waves: two launch sizes
  }
  const Series* regs = r.find_series("occupancy.registers");
  bool spilled = false, counted = false;
  for (const auto& k : regs->meta["kernels"]) {
    counted = counted || k.contains("registers_used");
    const bool over = k["regs"].get<double>() + 6 > c.core.max_registers_per_item;
    EXPECT_EQ(k["private_mem_bytes"].get<double>() > 0, over) << k.dump();
    spilled = spilled || over;
  }
  EXPECT_TRUE(counted);
  EXPECT_TRUE(spilled);  // the quick sweep reaches 128 live values, past every preset's maximum
}

// exec.max_waves_per_cu exactly: the waves a compute kernel can hold at
// once, the least of the core's wave slots (units x waves_per_unit; the
// presets' register files hold that many at the probe's 14 registers) and
// its work-group limit times the waves of one group of the largest size
// (Adreno 320: one group of 128 = 4 waves, below its 8 slots). Only the
// quick sweep (no bisection): every preset's jump is at a whole group.
TEST_P(SimExecRecovery, WavesPerCore) {
  const SimConfig c = test::sim_config_named(GetParam());
  SimDevice dev(c, "sim:" + c.id_name);
  const Results r = test::run_sim_probe(dev, run_occupancy_probe, true);
  const Series* waves = r.find_series("occupancy.waves");
  ASSERT_NE(waves, nullptr);
  const auto& k = c.core;
  const uint64_t group = std::min<uint64_t>(k.max_work_group_size, 1024) / 64 * 64;
  ASSERT_EQ(group % k.wave_width, 0u);
  const uint64_t want = std::min<uint64_t>(uint64_t{k.units_per_core} * k.waves_per_unit,
                                           uint64_t{k.workgroups_per_core} * group / k.wave_width);
  const auto fs = analysis::max_waves_findings(*waves, k.wave_width, false);
  ASSERT_EQ(fs.size(), 1u);
  std::printf("waves %s: configured %u x %u slots, %u groups of %llu; expected %llu, recovered %g (%s)\n",
              c.id_name.c_str(), k.units_per_core, k.waves_per_unit, k.workgroups_per_core,
              static_cast<unsigned long long>(group), static_cast<unsigned long long>(want),
              std::get<double>(fs[0].value), fs[0].note.c_str());
  EXPECT_EQ(std::get<double>(fs[0].value), static_cast<double>(want));
  EXPECT_GE(fs[0].confidence, 0.5);
}

// The full search (refine_waves) where a core's work-group limit binds
// before its wave slots, on the Mali-G52 preset with its core redrawn: the
// waves a kernel can hold are min(slots, limit x waves of the largest
// group), read exactly where launches of at most `limit` groups can make
// that total and the one above it. 72 slots and 8 groups of up to 32
// waves: 9 groups of 64 items are over for the limit, 3 groups of 192 fit.
// 96 slots and 2 groups of up to 64: 3 groups of 256 are over for the
// limit, 2 groups of 384 fit. And 8 slots behind 1 group of 4 waves: 4,
// where nothing measured bounds it closer than the 2 groups over (7).
TEST(SimExecWaves, AWorkGroupLimitBelowTheSlotsIsSearchedPast) {
  struct Core {
    uint32_t units, waves_per_unit, workgroups, max_group;
    double want, high;
  };
  for (const Core& k : {Core{3, 24, 8, 256, 72, 74}, Core{3, 32, 2, 512, 96, 97}, Core{1, 8, 1, 32, 4, 7}}) {
    SimConfig c = load_sim_preset("mali-g52");
    c.core.wave_width = 8;
    c.core.units_per_core = k.units;
    c.core.waves_per_unit = k.waves_per_unit;
    c.core.workgroups_per_core = k.workgroups;
    c.core.max_work_group_size = k.max_group;
    c.core.register_file_bytes_per_unit = 1 << 20;  // the slots, not the registers, bind
    SCOPED_TRACE(::testing::Message() << k.units << " x " << k.waves_per_unit << " slots, " << k.workgroups
                                      << " groups of up to " << k.max_group);
    SimDevice dev(c, "sim:mali-g52-redrawn");
    const Results r = test::run_sim_probe(dev, run_occupancy_probe, false);
    const Series* waves = r.find_series("occupancy.waves");
    ASSERT_NE(waves, nullptr);
    const auto fs = analysis::max_waves_findings(*waves, c.core.wave_width, false);
    ASSERT_EQ(fs.size(), 1u);
    EXPECT_EQ(std::get<double>(fs[0].value), k.want) << fs[0].note;
    EXPECT_EQ(*fs[0].high, k.high) << fs[0].note;
  }
}

// A core that holds 16384 work-items (4 units of 32 waves of 128 lanes,
// recovery benchmark seed 165) steps only past 16384 items: the search
// reaches it and reads 128 waves.
TEST(SimExecWaves, SixteenThousandResidentItemsAreBracketed) {
  SimConfig c = load_sim_preset("mali-g52");
  c.core.wave_width = 128;
  c.core.units_per_core = 4;
  c.core.waves_per_unit = 32;
  c.core.workgroups_per_core = 32;
  c.core.max_work_group_size = 512;
  c.core.register_file_bytes_per_unit = 1 << 20;  // the slots, not the registers, bind
  SimDevice dev(c, "sim:mali-g52-redrawn");
  const Results r = test::run_sim_probe(dev, run_occupancy_probe, false);
  const Series* waves = r.find_series("occupancy.waves");
  ASSERT_NE(waves, nullptr);
  const auto fs = analysis::max_waves_findings(*waves, c.core.wave_width, false);
  ASSERT_EQ(fs.size(), 1u) << "no reading: the search stopped before the step";
  EXPECT_EQ(std::get<double>(fs[0].value), 128) << fs[0].note;
}

INSTANTIATE_TEST_SUITE_P(Presets, SimExecRecovery, testing::ValuesIn(test::kSimPresets), test::sim_test_name);
INSTANTIATE_TEST_SUITE_P(Drawn, SimExecRecovery, testing::ValuesIn(test::kDrawnGpus), test::sim_test_name);
