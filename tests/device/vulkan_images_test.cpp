// Images through the Vulkan backend on whatever Vulkan device the machine
// has (lavapipe in CI), with the Khronos validation layer on and silent: 1D
// buffer images (uniform texel buffers over a buffer) and 2D images (sampled
// images written by copies) read by the texture family's chase, the
// refusals typed as the ImageFacet promises, and the texture probe run
// --quick through the command line in both forms. Tests skip, with the
// reason, where no Vulkan device exists.
#include "backends/backend.hpp"
#include "core/error.hpp"
#include "report/results_json.hpp"

#include "support/cli.hpp"
#include "support/temp_dir.hpp"
#include "support/vulkan_device.hpp"

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

namespace gpuscope {
namespace {

class VulkanImages : public test::VulkanDeviceTest {
 protected:
  ImageFacet& images() {
    ImageFacet* f = dev().images();
    if (!f) throw Unsupported("no ImageFacet");
    return *f;
  }
};

// A cycle of n slots stride_px pixels apart, slot i -> i + 1, as RGBA uint32
// pixels whose .x holds the next slot's pixel index; the other channels
// hold values the chase must not read.
std::vector<uint32_t> chain_pixels(uint32_t n, uint32_t stride_px, size_t pixels) {
  std::vector<uint32_t> words(pixels * 4, 0xdeadbeef);
  for (uint32_t i = 0; i < n; ++i) words[static_cast<size_t>(i) * stride_px * 4] = ((i + 1) % n) * stride_px;
  return words;
}

TEST_F(VulkanImages, LavapipeOffersBothForms) {
  ASSERT_NE(dev().images(), nullptr) << dev().info().vendor_info.dump();
  EXPECT_TRUE(features().images);
  const ImageLimits l = images().limits();
  EXPECT_GE(l.max_buffer_pixels, 65536u);  // Vulkan's minimum maxTexelBufferElements
  EXPECT_GE(l.max_2d_width, 4096u);        // Vulkan's minimum maxImageDimension2D
  EXPECT_GE(l.max_2d_height, 4096u);
}

TEST_F(VulkanImages, ChaseThroughA1DBufferImage) {
  constexpr size_t kPixels = 4096;
  auto buf = dev().create_buffer(kPixels * ImageDesc::kPixelBytes);
  ImageDesc desc;
  desc.width = kPixels;
  auto img = images().create_image(desc, buf.get());
  EXPECT_EQ(img->desc().size_bytes(), kPixels * 16);
  // Written after the view exists: the image sees its buffer's contents.
  dev().write_values<uint32_t>(*buf, chain_pixels(100, 4, kPixels));
  auto& chase = dev().kernel({"texture", "chase", {{"image_2d", false}, {"width_log2", 12}}});
  auto end = dev().create_buffer(8);
  // 3 rounds of 16 hops from pixel 8.
  const KernelArg args[] = {img.get(), uint32_t{8}, uint32_t{3}, end.get()};
  dev().launch(chase, Range::d1(1), Range::d1(1), args);
  EXPECT_EQ(dev().read_values<uint32_t>(*end, 1)[0], ((2 + 48) % 100) * 4u);
}

TEST_F(VulkanImages, ChaseThroughA2DImageAcrossRowsAndRewrites) {
  ImageDesc desc;
  desc.kind = ImageKind::k2D;
  desc.width = 4096;  // WIDTH_LOG2=12
  desc.height = 2;
  auto img = images().create_image(desc, nullptr);
  auto& chase = dev().kernel({"texture", "chase", {{"image_2d", true}, {"width_log2", 12}}});
  auto end = dev().create_buffer(8);
  // Every pixel a slot; the chain crosses from row 0 into row 1.
  images().write_image(*img, std::as_bytes(std::span<const uint32_t>(chain_pixels(5000, 1, 8192))));
  const KernelArg args[] = {img.get(), uint32_t{4090}, uint32_t{2}, end.get()};
  dev().launch(chase, Range::d1(1), Range::d1(1), args);
  EXPECT_EQ(dev().read_values<uint32_t>(*end, 1)[0], 4090u + 32u);
  // Written again, the image holds the new cycle (here 3 slots apart).
  images().write_image(*img, std::as_bytes(std::span<const uint32_t>(chain_pixels(2000, 3, 8192))));
  const KernelArg again[] = {img.get(), uint32_t{0}, uint32_t{1}, end.get()};
  dev().launch(chase, Range::d1(1), Range::d1(1), again);
  EXPECT_EQ(dev().read_values<uint32_t>(*end, 1)[0], 16u * 3u);
}

TEST_F(VulkanImages, BandwidthSumsEveryChannel) {
  ImageDesc desc;
  desc.kind = ImageKind::k2D;
  desc.width = 4096;
  desc.height = 1;
  auto img = images().create_image(desc, nullptr);
  std::vector<uint32_t> px(4096 * 4);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint32_t>(i * 2654435761u);
  images().write_image(*img, std::as_bytes(std::span<const uint32_t>(px)));
  auto& bw = dev().kernel({"texture", "bandwidth", {{"image_2d", true}, {"width_log2", 12}}});
  constexpr uint32_t kGroup = 64, kGroups = 4, kReads = 5, kMask = 4095, kStride = 1024;
  auto sums = dev().create_buffer(kGroup * kGroups * 4);
  const KernelArg args[] = {img.get(), kMask, kStride, kReads, sums.get()};
  dev().launch(bw, Range::d1(kGroup * kGroups), Range::d1(kGroup), args);
  const auto got = dev().read_values<uint32_t>(*sums, kGroup * kGroups);
  for (uint32_t gid = 0; gid < kGroup * kGroups; ++gid) {
    uint32_t i = gid / kGroup * kStride + gid % kGroup, want = 0;
    for (uint32_t r = 0; r < kReads; ++r, i += kGroup) {
      const size_t p = (i & kMask) * 4;
      want += px[p] + px[p + 1] + px[p + 2] + px[p + 3];
    }
    ASSERT_EQ(got[gid], want) << "work-item " << gid;
  }
}

TEST_F(VulkanImages, RefusalsAreTyped) {
  const ImageLimits limits = images().limits();
  ImageDesc too_wide;
  too_wide.kind = ImageKind::k2D;
  too_wide.width = limits.max_2d_width + 1;
  EXPECT_THROW(images().create_image(too_wide, nullptr), OutOfResources);
  ImageDesc unbacked;  // a 1D buffer image needs its buffer
  unbacked.width = 64;
  EXPECT_THROW(images().create_image(unbacked, nullptr), DeviceError);
  auto small = dev().create_buffer(64 * ImageDesc::kPixelBytes);
  ImageDesc larger = unbacked;
  larger.width = 65;
  EXPECT_THROW(images().create_image(larger, small.get()), DeviceError);
}

TEST_F(VulkanImages, AnImageOfTheWrongKindIsAnError) {
  ImageDesc desc;
  desc.kind = ImageKind::k2D;
  desc.width = 4096;
  desc.height = 1;
  auto img = images().create_image(desc, nullptr);
  auto& chase_1d = dev().kernel({"texture", "chase", {{"image_2d", false}, {"width_log2", 12}}});
  auto end = dev().create_buffer(8);
  const KernelArg args[] = {img.get(), uint32_t{0}, uint32_t{1}, end.get()};
  EXPECT_THROW(dev().launch(chase_1d, Range::d1(1), Range::d1(1), args), DeviceError);
  const KernelArg not_an_image[] = {end.get(), uint32_t{0}, uint32_t{1}, end.get()};
  EXPECT_THROW(dev().launch(chase_1d, Range::d1(1), Range::d1(1), not_an_image), DeviceError);
}

// The texture probe, --quick, through the command line with validation on:
// not skipped, validated (the probe checks every chase's end and every
// bandwidth sum on the host, and fails the run otherwise), the layer silent,
// and its findings out. Timings are lavapipe's on a shared CI machine, so
// only their presence and sanity are asked.
void check_quick_run(const std::string& kind, const std::string& image) {
  const std::string id = test::vulkan_device_id();
  if (id.empty()) GTEST_SKIP() << "no Vulkan device (install mesa-vulkan-drivers for lavapipe)";
  const auto dir = test::fresh_temp_dir("vulkan_texture_" + kind);
  const auto r = test::run_gpuscope("run --quiet --no-replay --quick --probes texture --texture-image " + kind +
                                        " --device " + id + " --out " + dir.string(),
                                    "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("Vulkan validation"), std::string::npos) << r.output;
  const Results res = read_results_file((dir / "results.json").string());
  ASSERT_TRUE(res.skipped.empty()) << res.skipped.front().reason;
  const Series* lat = res.find_series("texture.latency");
  ASSERT_NE(lat, nullptr);
  EXPECT_NE(lat->meta["image"].get<std::string>().find(image), std::string::npos) << lat->meta.dump();
  EXPECT_GE(lat->points.size(), 8u);
  for (const auto& p : lat->points) {
    EXPECT_GT(p.y, 0.1) << p.x;   // ns: no texel fetch is faster on a CPU
    EXPECT_LT(p.y, 5000) << p.x;  // nor slower than a few DRAM misses
  }
  // The bandwidth finding always comes out; the staircase's levels need a
  // quiet machine (a loaded CI host can blur lavapipe's first step, as it
  // does PoCL's), so they are checked where found.
  const Finding* gbps = res.find_finding("texture.bandwidth_gbps");
  ASSERT_NE(gbps, nullptr) << r.output;
  EXPECT_GT(number(*gbps), 0.01);
  if (const Finding* l1 = res.find_finding("texture.L1.latency_ns")) {
    EXPECT_GT(number(*l1), 0.1);
    EXPECT_LT(number(*l1), 5000);
  }
}

TEST(VulkanTextureProbe, QuickRunWith1DBufferImages) { check_quick_run("buffer", "image1d_buffer"); }

TEST(VulkanTextureProbe, QuickRunWith2DImages) { check_quick_run("2d", "image2d"); }

}  // namespace
}  // namespace gpuscope
