// Kernel identity by meaning (backends/kernel_spec.hpp), the OpenCL
// backend's spelling of it, and what it reads back from a build.
#include "backends/kernel_spec.hpp"
#include "backends/opencl/opencl_build_report.hpp"
#include "backends/opencl/opencl_kernel_source.hpp"
#include "core/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpuscope {
namespace {

const KernelSpec kCompute{"compute",
                          "tp_FMA",
                          {{"scalar", Scalar::f64}, {"vec", 4}, {"has_ptx", false}, {"ops", "FAST"}}};

TEST(KernelSpec, TypedReadsAndFallbacks) {
  EXPECT_EQ(kCompute.integer("vec", 1), 4);
  EXPECT_EQ(kCompute.integer("unroll", 32), 32);
  EXPECT_FALSE(kCompute.flag("has_ptx"));
  EXPECT_FALSE(kCompute.flag("absent"));
  EXPECT_EQ(kCompute.scalar("scalar"), Scalar::f64);
  EXPECT_EQ(kCompute.word("ops"), "FAST");
  EXPECT_EQ(kCompute.word("kind"), std::nullopt);
}

TEST(KernelSpec, AParameterReadAsAnotherTypeIsADeviceErrorNamingIt) {
  try {
    (void)kCompute.integer("scalar", 0);
    FAIL() << "no exception";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("'scalar' = f64 is not an integer"), std::string::npos) << e.what();
  }
}

TEST(KernelSpec, KeyIsStableAndNamesEveryParameter) {
  EXPECT_EQ(kCompute.key(), "compute/tp_FMA{has_ptx=false,ops=FAST,scalar=f64,vec=4}");
  const KernelSpec sized{"icache", "body", {{"body", size_t{1024}}}};
  EXPECT_EQ(sized.key(), "icache/body{body=1024}");
}

TEST(OpenClKernelSource, OneDefinePerParameterSpelledByType) {
  EXPECT_EQ(opencl_source_path(kCompute), "opencl/compute.cl");
  EXPECT_EQ(opencl_build_options(kCompute),
            "-DHAS_PTX=0 -DOPS_FAST=1 -DSCALAR=double -DSCALAR_IS_F64=1 -DVEC=4");
  EXPECT_EQ(opencl_build_options({"latency", "chase", {}}), "");
  EXPECT_EQ(opencl_type_name(Scalar::i8), "char");
  EXPECT_EQ(opencl_type_name(Scalar::u32), "uint");
}

TEST(OpenClBuildReport, PtxasRegistersAreTakenFromTheNamedEntrysSection) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'tp_ADD' for 'sm_90'\n"
      "ptxas info    : Used 40 registers, 380 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'tp_FMA' for 'sm_90'\n"
      "ptxas info    : Function properties for tp_FMA\n"
      "ptxas info    : Used 72 registers, 380 bytes cmem[0]\n";
  EXPECT_EQ(ptxas_registers(log, "tp_ADD"), 40u);
  EXPECT_EQ(ptxas_registers(log, "tp_FMA"), 72u);
  EXPECT_EQ(ptxas_registers(log, "tp_MUL"), std::nullopt);  // another program's kernel
  EXPECT_EQ(ptxas_registers("ptxas info    : Used 16 registers\n", "occupancy"), 16u);  // one function, no header
  EXPECT_EQ(ptxas_registers("Build succeeded.\n", "occupancy"), std::nullopt);  // served from the cache
}

TEST(OpenClBuildReport, BinaryFormatsAreRecognised) {
  auto bytes = [](const std::string& s) { return std::as_bytes(std::span<const char>(s.data(), s.size())); };
  EXPECT_EQ(program_binary_format(bytes(std::string("\x7f" "ELF\x02\x01", 6))), "elf");
  EXPECT_EQ(program_binary_format(bytes("//\n.version 8.5\n.target sm_90\n")), "ptx");
  EXPECT_EQ(program_binary_format(bytes("POCLBIN")), "pocl");
  EXPECT_EQ(program_binary_format(bytes("nothing known")), "unknown");
}

}  // namespace
}  // namespace gpuscope
