// What an OpenCL build tells about the code it made: NVIDIA's ptxas report
// in the build log, and the kind of program binary the driver returns.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace gpuscope {

// Registers per work-item that ptxas reports for kernel `entry` in a build
// log of a -cl-nv-verbose build: the "Used N registers" line that follows
// "Compiling entry function '<entry>'" (a log of one function may omit that
// header). nullopt when the log holds no count for it, as when the driver
// served the build from its cache of compiled PTX.
std::optional<uint32_t> ptxas_registers(const std::string& log, const std::string& entry);

// "elf", "ptx", "pocl", "llvm-bitcode" or "unknown" (KernelResources::code_format).
std::string program_binary_format(std::span<const std::byte> binary);

}  // namespace gpuscope
