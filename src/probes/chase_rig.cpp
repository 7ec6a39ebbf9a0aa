#include "probes/chase_rig.hpp"

#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <thread>

namespace gpuscope {
namespace {

constexpr uint32_t kHopsPerRound = 16;  // chase_groups' unrolling
constexpr size_t kLinkGroup = 64;
constexpr size_t kPadBytes = 4096;

Range rounded(size_t n, size_t local) { return Range::d1((n + local - 1) / local * local); }

}  // namespace

unsigned cycle_threads(const DeviceInfo& info) {
  return info.type == "gpu" ? std::max(1u, std::thread::hardware_concurrency()) : 1;
}

HarnessConfig after_warm_walk(const HarnessConfig& hc, const DeviceInfo& info) {
  HarnessConfig out = hc;
  if (info.type == "gpu") out.warmup_launches = 0;
  return out;
}

bool uses_index_chase(const DeviceInfo& info, ChaseMethod asked) {
  const nlohmann::json& v = info.vendor_info;
  // Only the Vulkan backend can lack device addresses; OpenCL always has pointers.
  const bool addresses =
      !(v.is_object() && v.contains("vk_buffer_device_address") && !v["vk_buffer_device_address"].get<bool>());
  if (asked == ChaseMethod::address && !addresses)
    throw Unsupported("--chase address: the device has no buffer device addresses (bufferDeviceAddress)");
  return asked == ChaseMethod::index || !addresses;
}

std::map<std::string, KernelParam> chase_params(const DeviceInfo& info, bool index_chase) {
  std::map<std::string, KernelParam> p = {{"addr_bits", info.address_bits == 32 ? 32 : 64}};
  if (index_chase) p.emplace("index_chase", true);
  // The chase is one work-item: built for the narrowest wave the device
  // offers, it carries the fewest idle lanes. Where a wave is a CPU's SIMD
  // vector (lavapipe) every lane of a load costs issue slots, idle or not:
  // 16 lanes take about 7 ns a hop there, which hides the L1 and L2.
  const auto& sizes = info.features.subgroup_sizes;
  if (info.features.subgroup_size_control && !sizes.empty())
    p.emplace("required_subgroup_size", static_cast<int64_t>(*std::min_element(sizes.begin(), sizes.end())));
  return p;
}

std::vector<uint32_t> random_visit_order(uint32_t n, uint64_t seed) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  SplitMix64 rng(seed);
  for (uint32_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
  return order;
}

std::vector<uint32_t> successors(const std::vector<uint32_t>& order) {
  std::vector<uint32_t> next(order.size());
  for (size_t k = 0; k < order.size(); ++k) next[order[k]] = order[(k + 1) % order.size()];
  return next;
}

ChaseRig::ChaseRig(ProbeContext& ctx, size_t want_bytes, size_t min_bytes, size_t max_groups)
    : ctx_(ctx), dev_(ctx.device), max_groups_(std::max<size_t>(1, max_groups)) {
  const DeviceInfo& info = dev_.info();
  word_bytes_ = info.address_bits == 32 ? 4 : 8;
  index_chase_ = uses_index_chase(info, ctx.options.chase);
  const auto addr = chase_params(info, index_chase_);
  // A backend whose chase kernels have no index form has no index
  // arithmetic kernel either (the sim): it says so here, before any launch.
  if (index_chase_) dev_.kernel({"latency", "chase_arith", addr});
  link_words_ = &dev_.kernel({"chase_layout", "link_words", addr});
  link_pairs_ = &dev_.kernel({"chase_layout", "link_pairs", addr});
  link_regions_ = &dev_.kernel({"chase_layout", "link_regions", addr});
  chase_ = &dev_.kernel({"chase_layout", "chase_groups", addr});
  // Word positions are 32-bit: at most 4 Gi words.
  want_bytes = std::min<size_t>(want_bytes, (size_t{1} << 32) * word_bytes_ / 2);
  for (size_t b = want_bytes; b >= min_bytes; b /= 2) {
    try {
      // 4 KiB over the power of two: slack that keeps the layouts of the
      // recorded curves (tests/data) reproducible. No layout reaches into
      // it, so where it alone would take the buffer past the device's
      // largest allocation (a power of two on many devices, the sim's
      // drawn GPUs among them: their 512 MiB sweeps ran to 256), the
      // buffer is the power of two alone.
      const bool pad = info.max_alloc_bytes == 0 || b + kPadBytes <= info.max_alloc_bytes;
      mem_ = dev_.create_buffer(b + (pad ? kPadBytes : 0));
      bytes_ = b;
      break;
    } catch (const OutOfResources&) {
      mem_.reset();
    }
  }
  if (!mem_) throw OutOfResources(fmt::format("could not allocate {} MiB for the chase", min_bytes >> 20));
  starts_ = dev_.create_buffer(max_groups_ * sizeof(uint32_t));
  ends_ = dev_.create_buffer(max_groups_ * sizeof(uint32_t));
}

std::vector<uint32_t> ChaseRig::link_slots(const std::vector<uint32_t>& order,
                                           const std::vector<uint32_t>& pos) {
  const size_t n = order.size();
  std::vector<uint32_t> from(n), to(n), visit(n);
  for (size_t k = 0; k < n; ++k) {
    from[k] = pos[order[k]];
    to[k] = pos[order[(k + 1) % n]];
    visit[k] = from[k];
  }
  auto from_buf = dev_.create_buffer(n * 4);
  auto to_buf = dev_.create_buffer(n * 4);
  dev_.write_values<uint32_t>(*from_buf, from);
  dev_.write_values<uint32_t>(*to_buf, to);
  const KernelArg args[] = {mem_.get(), from_buf.get(), to_buf.get(), static_cast<uint32_t>(n)};
  const size_t local = std::min(kLinkGroup, link_words_->max_work_group_size());
  dev_.launch(*link_words_, rounded(n, local), Range::d1(local), args);
  return visit;
}

std::vector<uint32_t> ChaseRig::link_pairs(const std::vector<uint32_t>& order, uint32_t anchor_words,
                                           uint32_t pair_words) {
  const size_t n = order.size();
  const auto next = successors(order);
  auto next_buf = dev_.create_buffer(n * 4);
  dev_.write_values<uint32_t>(*next_buf, next);
  const KernelArg args[] = {mem_.get(), next_buf.get(), anchor_words, pair_words, static_cast<uint32_t>(n)};
  const size_t local = std::min(kLinkGroup, link_pairs_->max_work_group_size());
  dev_.launch(*link_pairs_, rounded(n, local), Range::d1(local), args);
  std::vector<uint32_t> visit(2 * n);
  for (size_t k = 0; k < n; ++k) {
    visit[2 * k] = order[k] * anchor_words;
    visit[2 * k + 1] = order[k] * anchor_words + pair_words;
  }
  return visit;
}

std::vector<uint32_t> ChaseRig::link_regions(const std::vector<uint32_t>& order, uint32_t stride_words,
                                             uint64_t region_words, uint32_t regions) {
  const size_t n = order.size();
  const auto next = successors(order);
  auto next_buf = dev_.create_buffer(n * 4);
  dev_.write_values<uint32_t>(*next_buf, next);
  const KernelArg args[] = {mem_.get(),   next_buf.get(), stride_words, static_cast<uint32_t>(n),
                            region_words, regions};
  const size_t local = std::min(kLinkGroup, link_regions_->max_work_group_size());
  dev_.launch(*link_regions_, rounded(n * regions, local), Range::d1(local), args);
  std::vector<uint32_t> visit(n);
  for (size_t k = 0; k < n; ++k) visit[k] = order[k] * stride_words;
  return visit;
}

double ChaseRig::launch(const std::vector<uint32_t>& visit, uint32_t groups, uint64_t region_words,
                        uint32_t rounds) {
  // Every launch goes on from where the previous one stopped (cursor_), so
  // that a cycle longer than one launch's hops is walked whole over the
  // samples, not its first stretch again and again.
  std::vector<uint32_t> starts(groups);
  for (uint32_t g = 0; g < groups; ++g) starts[g] = static_cast<uint32_t>(g * region_words + visit[cursor_]);
  dev_.write_values<uint32_t>(*starts_, starts);
  const KernelArg args[] = {mem_.get(), starts_.get(), rounds, ends_.get()};
  const double ns = dev_.launch(*chase_, Range::d1(groups), Range::d1(1), args);
  const auto ends = dev_.read_values<uint32_t>(*ends_, groups);
  const uint64_t hops = static_cast<uint64_t>(rounds) * kHopsPerRound;
  const size_t next = static_cast<size_t>((cursor_ + hops) % visit.size());
  for (uint32_t g = 0; g < groups; ++g) {
    const uint64_t want = g * region_words + visit[next];
    if (ends[g] != want)
      throw ValidationError(
          fmt::format("chase of group {} ended on word {} but the host's walk ends on {} "
                      "(cycle of {} words)",
                      g, ends[g], want, visit.size()));
  }
  cursor_ = next;
  return ns;
}

ChaseTiming ChaseRig::time(const std::vector<uint32_t>& visit, uint32_t groups, uint64_t region_words,
                           const HarnessConfig& hc) {
  if (groups > max_groups_) throw Unsupported(fmt::format("chase rig made for {} groups", max_groups_));
  cursor_ = 0;

  // Warm: one walk of the cycle, in launches of about a target length, at
  // most ~10 of them (a cycle that misses everywhere gains nothing more).
  const uint64_t cycle_rounds = (visit.size() + kHopsPerRound - 1) / kHopsPerRound;
  uint64_t first = std::min<uint64_t>(cycle_rounds, 64);
  const double first_ns = launch(visit, groups, region_words, static_cast<uint32_t>(first));
  const double ns_per_round = std::max(1.0, first_ns / static_cast<double>(first));
  const auto chunk = std::max<uint64_t>(1, static_cast<uint64_t>(hc.target_launch_ms * 1e6 / ns_per_round));
  uint64_t warmed = first;
  for (int i = 0; i < 10 && warmed < cycle_rounds; ++i) {
    const uint64_t r = std::min(chunk, cycle_rounds - warmed);
    launch(visit, groups, region_words, static_cast<uint32_t>(r));
    warmed += r;
  }

  const auto initial = std::max<uint64_t>(1, chunk / 8);
  const Measurement m = measure(
      [&](uint64_t rounds) {
        return launch(visit, groups, region_words,
                      static_cast<uint32_t>(std::min<uint64_t>(rounds, UINT32_MAX)));
      },
      initial, UINT32_MAX, hc);
  ChaseTiming t;
  for (double v : m.ns_per_unit) t.samples.push_back(v / kHopsPerRound);
  // As in the latency probe: interference (a co-tenant, an interrupt) only
  // adds time to a chase, so the fast tail is the device's own latency; the
  // 10th percentile rather than the minimum keeps one mistimed sample from
  // deciding. All samples stay in the series.
  t.ns_per_hop = quantile(t.samples, 0.1);
  t.hops_per_launch = m.work_per_launch * kHopsPerRound;
  return t;
}

}  // namespace gpuscope
