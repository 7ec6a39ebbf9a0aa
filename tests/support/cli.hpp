// Runs the gpuscope binary the build produced, as a user would.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace gpuscope::test {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// `env`: variable assignments to put before the command, e.g. "A=1 B=2".
// `stdout_to`: a file standard output goes to instead (e.g. /dev/full);
// `output` then holds stderr alone.
inline CommandResult run_gpuscope(const std::string& args, const std::string& env = "",
                                  const std::string& stdout_to = "") {
  const std::string cmd = env + (env.empty() ? "" : " ") + std::string(GPUSCOPE_BINARY) + " " + args +
                          (stdout_to.empty() ? " 2>&1" : " 2>&1 >" + stdout_to);
  CommandResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace gpuscope::test
