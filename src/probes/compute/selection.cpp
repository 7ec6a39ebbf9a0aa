// Which (type, op) the compute probes time, most telling first.
#include "probes/compute/compute_probe.hpp"

#include <algorithm>

namespace gpuscope {
namespace compute_probe {

std::vector<Entry> throughput_selection(bool quick) {
  if (quick)
    return {{"fp32", "fma", {1}},  {"fp32", "add", {1}}, {"int32", "add", {1}}, {"fp32", "mix_fma_add", {1}},
            {"fp32", "fma", {4}},  {"fp64", "fma", {1}}, {"fp16", "fma", {2}},  {"fp32", "native_exp", {1}},
            {"fp32", "sqrt", {1}}, {"int32", "mul", {1}}};
  // Most telling first: a first run on a fresh driver pays its compile times
  // (about 0.2 s per program on the H200) and its budget may end the list;
  // the driver caches the builds, so later runs time all of it.
  return {
      {"fp32", "fma", {1, 4}},       {"fp32", "mad", {1}},        {"fp32", "add", {1, 4}},
      {"fp32", "mul", {1}},          {"fp64", "fma", {1}},        {"fp64", "add", {1}},
      {"fp64", "mul", {1}},          {"fp16", "fma", {2}},        {"fp16", "add", {2}},
      {"fp16", "mul", {2}},          {"int32", "mad", {1}},       {"int32", "add", {1, 4}},
      {"int32", "mul", {1}},         {"int32", "dp4a", {1}},      {"fp32", "mix_fma_add", {1}},
      {"fp32", "mix_fma_iadd", {1}}, {"fp32", "native_sin", {1}}, {"fp32", "native_exp", {1}},
      {"fp32", "native_sqrt", {1}},  {"fp32", "rsqrt", {1}},      {"int64", "add", {1}},
      {"int64", "mul", {1}},         {"int16", "add", {1}},       {"int8", "add", {1, 4}},
      {"fp32", "div", {1}},          {"fp32", "sqrt", {1}},       {"fp32", "exp", {1}},
      {"fp32", "log", {1}},          {"fp32", "sin", {1}},        {"fp32", "native_divide", {1}},
      {"fp32", "native_rsqrt", {1}}, {"fp32", "native_log", {1}}, {"int32", "cvt", {1}},
      {"int32", "div", {1}},         {"int64", "mad", {1}},       {"int16", "mul", {1}},
      {"int8", "mul", {1}},          {"fp64", "div", {1}},        {"fp64", "sqrt", {1}},
  };
}

std::vector<Entry> latency_selection(bool quick) {
  if (quick) return {{"fp32", "fma", {1}}, {"fp32", "add", {1}}, {"fp32", "div", {1}}, {"int32", "add", {1}}, {"int32", "mul", {1}}};
  // Basic ops of every type first, then the long sequences: a budget cut
  // (a first run pays the driver's compile times) loses the least.
  return {
      {"fp32", "fma", {1}},        {"fp32", "add", {1}},           {"fp32", "mul", {1}},         {"fp32", "mad", {1}},
      {"fp64", "fma", {1}},        {"fp64", "add", {1}},           {"fp16", "fma", {1}},         {"fp16", "add", {1}},
      {"int32", "add", {1}},       {"int32", "mul", {1}},          {"int32", "mad", {1}},        {"int64", "add", {1}},
      {"int64", "mul", {1}},       {"int16", "add", {1}},          {"int16", "mul", {1}},        {"int8", "add", {1}},
      {"int8", "mul", {1}},        {"int32", "dp4a", {1}},         {"int32", "cvt", {1}},        {"fp32", "div", {1}},
      {"fp32", "sqrt", {1}},       {"fp32", "rsqrt", {1}},         {"fp32", "exp", {1}},         {"fp32", "log", {1}},
      {"fp32", "sin", {1}},        {"fp32", "native_divide", {1}}, {"fp32", "native_sqrt", {1}}, {"fp32", "native_rsqrt", {1}},
      {"fp32", "native_exp", {1}}, {"fp32", "native_log", {1}},    {"fp32", "native_sin", {1}},  {"int32", "div", {1}},
      {"fp64", "mul", {1}},        {"fp64", "div", {1}},           {"fp64", "sqrt", {1}}};
}

}  // namespace compute_probe

std::vector<std::string> compute_op_names() {
  std::vector<std::string> names;
  auto add = [&](const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const auto& e : compute_probe::throughput_selection(false)) add(std::string(e.type) + "." + e.op);
  for (const auto& e : compute_probe::latency_selection(false)) add(std::string(e.type) + "." + e.op);
  return names;
}

}  // namespace gpuscope
