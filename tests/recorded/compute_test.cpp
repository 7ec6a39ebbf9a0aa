// The compute/oplatency analysis on series measured on real devices
// (tests/data/README.md): the H200 of the GPU test machine and PoCL.
#include "analysis/analyze.hpp"
#include "report/results_json.hpp"

#include "support/recorded.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace gpuscope {
namespace {

const Finding& get(const Results& r, const std::string& id) {
  const Finding* f = r.find_finding(id);
  if (!f) throw std::runtime_error("no finding " + id);
  return *f;
}

double value(const Results& r, const std::string& id) { return number(get(r, id)); }

// H200: 132 SMs at 1980 MHz. Non-tensor peaks per SM per clock: 128 fp32
// FMA, 64 fp64 FMA, 64 int32 multiply-add, 256 fp16 (half2) FMA, 16 special
// functions.
constexpr double kGopsPerOpPerClkPerSm = 132 * 1.980;

TEST(ComputeRecordedH200, RatesAgainstThePublishedPeaks) {
  const Results r = load_recorded("h200/compute_paired_chains_warm_cache.json");
  const double fp32_fma = value(r, "compute.fp32.fma.throughput_gops");
  // >= 98% of 66.9 TFLOP/s (FMA = 2 FLOP).
  EXPECT_GE(2 * fp32_fma, 0.98 * 2 * 128 * kGopsPerOpPerClkPerSm);
  EXPECT_NEAR(value(r, "compute.fp32.fma.ops_per_clock_per_cu"), 128, 2.5);
  // int32 multiply-add counted as 2 ops: >= 33.0 TOPS.
  EXPECT_GE(2 * value(r, "compute.int32.mad.throughput_gops"), 33000);
  // fp16 through packed PTX: >= 125 TFLOP/s.
  EXPECT_GE(2 * value(r, "compute.fp16.fma.throughput_gops"), 125000);
  // fp64 FMA falls short of 33.0 on this chain shape (README: the paired
  // chain costs DFMA 8%, in CUDA too); held at what it is.
  EXPECT_NEAR(2 * value(r, "compute.fp64.fma.throughput_gops"), 30600, 500);
  // Special functions at the spec rate, 16/clk/SM.
  for (const char* op : {"native_sin", "native_exp", "native_sqrt", "native_rsqrt", "sqrt", "rsqrt"})
    EXPECT_NEAR(value(r, std::string("compute.fp32.") + op + ".ops_per_clock_per_cu"), 16, 1) << op;
}

// The kernels as they are now: fma/mad take a and b as kernel arguments, so
// ptxas puts them in uniform registers and no DFMA reads three vector
// register pairs (README, fp64). Every peak target holds, fp64 included.
TEST(ComputeRecordedH200, ByValueOperandsReachEveryPeak) {
  const Results r = load_recorded("h200/compute_byval.json");
  EXPECT_GE(2 * value(r, "compute.fp32.fma.throughput_gops"), 65500);
  EXPECT_GE(2 * value(r, "compute.fp64.fma.throughput_gops"), 33000);
  EXPECT_NEAR(value(r, "compute.fp64.fma.ops_per_clock_per_cu"), 64, 1.5);
  EXPECT_GE(2 * value(r, "compute.int32.mad.throughput_gops"), 33000);
  EXPECT_GE(2 * value(r, "compute.fp16.fma.throughput_gops"), 125000);
  EXPECT_EQ(value(r, "compute.fp64.fma.rate_vs_fp32_fma"), 0.5);
}

TEST(ComputeRecordedH200, RatiosRoundToTheHardwareFractions) {
  const Results r = load_recorded("h200/compute_paired_chains_warm_cache.json");
  const std::pair<const char*, double> want[] = {{"fp32.add", 1},
                                                 {"fp32.mul", 1},
                                                 {"fp32.mad", 1},
                                                 {"fp64.fma", 0.5},
                                                 {"fp64.add", 0.5},
                                                 {"fp16.fma", 2},
                                                 {"int32.add", 1},
                                                 {"int32.mad", 0.5},
                                                 {"int32.mul", 0.5},
                                                 {"fp32.native_sin", 0.125},
                                                 {"fp32.native_exp", 0.125},
                                                 {"fp32.sqrt", 0.125},
                                                 {"int32.cvt", 0.125},
                                                 {"int64.mul", 0.125},
                                                 {"fp32.sin", 1.0 / 32},
                                                 {"int32.div", 1.0 / 32}};
  for (const auto& [id, ratio] : want) {
    const Finding& f = get(r, std::string("compute.") + id + ".rate_vs_fp32_fma");
    EXPECT_DOUBLE_EQ(number(f), ratio) << id << ": " << f.note;
    EXPECT_NE(f.note.find("raw ratio"), std::string::npos);
    ASSERT_TRUE(f.low.has_value());
    EXPECT_GT(*f.low, 0);  // the raw value is kept
  }
  // Hopper issues one instruction per clock per scheduler: no mix beats an op alone.
  EXPECT_FALSE(std::get<bool>(get(r, "compute.dual_issue.fp32_fma_add").value));
  EXPECT_FALSE(std::get<bool>(get(r, "compute.dual_issue.fp32_fma_int32_add").value));
}

TEST(ComputeRecordedH200, LatencyInCyclesFromTheSmCounter) {
  const Results r = load_recorded("h200/compute_paired_chains_warm_cache.json");
  const Finding& fma = get(r, "compute.fp32.fma.latency_cycles");
  EXPECT_NEAR(number(fma), 4, 0.1);  // Hopper FFMA: 4 cycles
  EXPECT_NE(fma.method.find("cycle counter"), std::string::npos);
  EXPECT_NEAR(value(r, "compute.fp32.fma.latency_ns"), 4 / 1.98, 0.05);
  EXPECT_NEAR(value(r, "compute.fp64.fma.latency_cycles"), 8, 0.2);
  // ns and cycles agree on a clock near the reported one.
  for (const char* op : {"fp32.fma", "fp64.div", "fp32.sin", "int32.mul"}) {
    const double ns = value(r, std::string("compute.") + op + ".latency_ns");
    const double cyc = value(r, std::string("compute.") + op + ".latency_cycles");
    EXPECT_NEAR(cyc / ns, 1.98, 0.03) << op;
  }
}

TEST(ComputeRecordedH200, ColdRunSaysWhatItDidNotMeasure) {
  const Results r = load_recorded("h200/compute_cold_cache.json");
  EXPECT_GE(2 * value(r, "compute.fp32.fma.throughput_gops"), 0.98 * 2 * 128 * kGopsPerOpPerClkPerSm);
  const Series* summary = r.find_series("compute.summary");
  ASSERT_NE(summary, nullptr);
  EXPECT_FALSE(summary->meta["not_measured_time_budget"].empty());
  for (const auto& id : summary->meta["not_measured_time_budget"]) {
    const std::string s = id.get<std::string>();
    const std::string series = s.substr(0, s.find(' '));
    EXPECT_EQ(r.find_finding(series + ".throughput_gops"), nullptr) << s;  // never a rate of zero
  }
}

// bench/cuda_fma.cu on the same GPU: gpuscope's OpenCL fp32 FMA agrees with CUDA's.
TEST(ComputeRecordedH200, AgreesWithTheCudaReference) {
  std::ifstream in(recorded_path("h200/cuda_fma.txt"));
  double cuda_fp32 = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("fp32 pair", 0) != 0) continue;
    const size_t at = line.find("TFLOP/s");
    std::istringstream(line.substr(at - 10, 10)) >> cuda_fp32;
  }
  ASSERT_GT(cuda_fp32, 60);
  const Results r = load_recorded("h200/compute_paired_chains_warm_cache.json");
  EXPECT_NEAR(2 * value(r, "compute.fp32.fma.throughput_gops") / 1000, cuda_fp32, 0.02 * cuda_fp32);
}

// The full matrix on PoCL's CPU device: every op validated; the noisy
// 2-vCPU VM put the fma+add mix's median 1.3x above fp32 fma's, which the
// quartile test does not take for dual issue.
TEST(ComputeRecordedPocl, FullMatrixNoDualIssueFromNoise) {
  const Results r = load_recorded("pocl_epyc/basic_compute_full.json");
  EXPECT_TRUE(r.skipped.empty());
  EXPECT_FALSE(std::get<bool>(get(r, "compute.dual_issue.fp32_fma_add").value));
  for (const char* id : {"int64.mul", "int16.add", "int8.mul", "fp64.sqrt", "fp32.native_log", "int32.cvt"})
    EXPECT_GT(value(r, std::string("compute.") + id + ".throughput_gops"), 0) << id;
  EXPECT_EQ(r.find_finding("compute.int8.dp4a.throughput_gops"), nullptr);  // no path on a CPU
}

TEST(ComputeRecordedPocl, FindingsWithUncertainCycles) {
  const Results r = load_recorded("pocl_epyc/basic_compute_quick.json");
  EXPECT_GT(value(r, "compute.fp32.fma.throughput_gops"), 0);
  EXPECT_DOUBLE_EQ(value(r, "compute.fp32.fma.rate_vs_fp32_fma"), 1);
  const Finding& cyc = get(r, "compute.fp32.fma.latency_cycles");
  EXPECT_NE(cyc.note.find("uncertain"), std::string::npos);
  EXPECT_EQ(r.find_finding("compute.fp16.fma.throughput_gops"), nullptr);  // PoCL: no cl_khr_fp16
}

}  // namespace
}  // namespace gpuscope
