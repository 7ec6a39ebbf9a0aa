// Images through the OpenCL backend and the texture probe on PoCL's CPU
// device (which has images: software reads of ordinary memory), and the
// probe's skip path on a device without images.
#include "backends/backend.hpp"
#include "support/cli.hpp"
#include "core/error.hpp"
#include "probes/probe.hpp"
#include "report/results_json.hpp"

#include "support/devices.hpp"

#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <filesystem>

namespace gpuscope {
namespace {

// A cycle of n slots stride_px pixels apart, slot i -> i + 1, as RGBA uint32
// pixels whose .x holds the next slot's pixel index.
std::vector<uint32_t> chain_pixels(uint32_t n, uint32_t stride_px, size_t pixels) {
  std::vector<uint32_t> words(pixels * 4, 0);
  for (uint32_t i = 0; i < n; ++i) words[static_cast<size_t>(i) * stride_px * 4] = ((i + 1) % n) * stride_px;
  return words;
}

TEST(OpenClImages, ChaseThroughA1DBufferImage) {
  auto dev = open_device(cpu_device_id());
  ASSERT_NE(dev->images(), nullptr) << "PoCL's CPU device has images";
  ImageFacet& images = *dev->images();
  const ImageLimits limits = images.limits();
  EXPECT_GT(limits.max_buffer_pixels, 0u);
  EXPECT_GE(limits.max_2d_width, 4096u);

  constexpr size_t kPixels = 4096;
  auto buf = dev->create_buffer(kPixels * ImageDesc::kPixelBytes);
  ImageDesc desc;
  desc.width = kPixels;
  auto img = images.create_image(desc, buf.get());
  EXPECT_EQ(img->desc().size_bytes(), kPixels * 16);
  dev->write_values<uint32_t>(*buf, chain_pixels(100, 4, kPixels));
  auto& chase = dev->kernel({"texture", "chase", {{"image_2d", false}, {"width_log2", 12}}});
  auto end = dev->create_buffer(8);
  const KernelArg args[] = {img.get(), uint32_t{8}, uint32_t{3},
                            end.get()};  // 3 rounds of 16 hops from pixel 8
  dev->launch(chase, Range::d1(1), Range::d1(1), args);
  EXPECT_EQ(dev->read_values<uint32_t>(*end, 1)[0], ((2 + 48) % 100) * 4u);
}

TEST(OpenClImages, ChaseThroughA2DImage) {
  auto dev = open_device(cpu_device_id());
  ASSERT_NE(dev->images(), nullptr);
  ImageFacet& images = *dev->images();
  ImageDesc desc;
  desc.kind = ImageKind::k2D;
  desc.width = 4096;  // WIDTH_LOG2=12
  desc.height = 2;
  auto img = images.create_image(desc, nullptr);
  // Every pixel a slot; the chain crosses from row 0 into row 1.
  const uint32_t n = 5000;
  images.write_image(*img, std::as_bytes(std::span<const uint32_t>(chain_pixels(n, 1, 8192))));
  auto& chase = dev->kernel({"texture", "chase", {{"image_2d", true}, {"width_log2", 12}}});
  auto end = dev->create_buffer(8);
  const KernelArg args[] = {img.get(), uint32_t{4090}, uint32_t{2}, end.get()};
  dev->launch(chase, Range::d1(1), Range::d1(1), args);
  EXPECT_EQ(dev->read_values<uint32_t>(*end, 1)[0], 4090u + 32u);
}

TEST(OpenClImages, RefusalsAreTyped) {
  auto dev = open_device(cpu_device_id());
  ASSERT_NE(dev->images(), nullptr);
  ImageFacet& images = *dev->images();
  const ImageLimits limits = images.limits();
  ImageDesc too_wide;
  too_wide.kind = ImageKind::k2D;
  too_wide.width = limits.max_2d_width + 1;
  EXPECT_THROW(images.create_image(too_wide, nullptr), OutOfResources);
  ImageDesc unbacked;  // a 1D buffer image needs its buffer
  unbacked.width = 64;
  EXPECT_THROW(images.create_image(unbacked, nullptr), DeviceError);
}

// A device that has everything but images: it offers no image facet.
class NoImageDevice : public Device {
 public:
  const DeviceInfo& info() const override { return info_; }
  std::unique_ptr<Buffer> create_buffer(size_t) override { throw DeviceError("not used"); }
  void write(Buffer&, size_t, std::span<const std::byte>) override {}
  void read(const Buffer&, size_t, std::span<std::byte>) override {}
  Kernel& kernel(const KernelSpec&) override { throw DeviceError("not used"); }
  KernelResources kernel_resources(Kernel&) override { throw DeviceError("not used"); }
  double launch(Kernel&, const LaunchShape&, std::span<const KernelArg>) override { return 0; }
  LaunchBatch launch_batch(Kernel&, const LaunchShape&, std::span<const KernelArg>, int) override { return {}; }
  DeviceInfo info_{.name = "imageless", .type = "gpu"};
};

TEST(TextureProbe, SkipsABackendWithoutImages) {
  NoImageDevice dev;
  ProbeOptions options;
  ProbeContext ctx{dev, options, 1.0};
  try {
    run_texture_probe(ctx);
    FAIL() << "the probe ran without images";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("imageless offers no images"), std::string::npos) << e.what();
  }
}

// The whole probe, --quick, through the command line; both image kinds.
// Shapes and validation only: the CI VM's timings are noisy, and PoCL's
// software image reads (~5-10 ns each) flatten the L1 step.
void check_quick_run(const std::string& kind, const std::string& image) {
  const auto dir = test::fresh_temp_dir("pocl_texture_" + image);
  const auto r = test::run_gpuscope("run --quiet --no-replay --quick --probes texture --texture-image " + kind + " --device " +
                                        cpu_device_id() + " --out " + dir.string(),
                                    "POCL_DEVICES=basic");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Results res = read_results_file((dir / "results.json").string());
  EXPECT_TRUE(res.skipped.empty()) << res.skipped.front().reason;

  const Series* lat = res.find_series("texture.latency");
  ASSERT_NE(lat, nullptr);
  EXPECT_NE(lat->meta["image"].get<std::string>().find(image), std::string::npos);
  EXPECT_GE(lat->points.size(), 12u);
  for (const auto& p : lat->points) {
    EXPECT_GE(p.samples.size(), 3u);
    EXPECT_GT(p.y, 0.5);   // ns: no image read is faster on a CPU
    EXPECT_LT(p.y, 5000);  // nor slower than a few DRAM misses
  }
  // The quick sweep's three footprints, and at most one more: a power of
  // two below 8 KiB where the coarse staircase read a first level under
  // 16 KiB (a noisy CPU's 2D curve can end its first plateau early; the
  // probe then gives that level a footprint of its own, half its plateau).
  const Series* bw = res.find_series("texture.bandwidth");
  ASSERT_NE(bw, nullptr);
  std::vector<double> fixed, own;
  for (const auto& p : bw->points) (p.x < 8 * 1024 ? own : fixed).push_back(p.x);
  EXPECT_EQ(fixed, (std::vector<double>{8 * 1024, 128 * 1024, 4 * 1024 * 1024})) << r.output;
  ASSERT_LE(own.size(), 1u);
  if (!own.empty()) EXPECT_TRUE(std::has_single_bit(static_cast<uint64_t>(own.front()))) << own.front();

  const Finding* l1 = res.find_finding("texture.L1.latency_ns");
  ASSERT_NE(l1, nullptr) << r.output;
  EXPECT_GT(number(*l1), 0.5);
  EXPECT_LT(number(*l1), 1000);
  const Finding* gbps = res.find_finding("texture.bandwidth_gbps");
  ASSERT_NE(gbps, nullptr);
  EXPECT_GT(number(*gbps), 0.01);
  // Where the sharing sweep ran and could decide, its answer is a yes/no.
  if (const Finding* shares = res.find_finding("texture.shares_l1")) {
    EXPECT_TRUE(std::holds_alternative<bool>(shares->value));
    EXPECT_NE(res.find_series("texture.pair_large"), nullptr);
  }
}

TEST(TextureProbeOnPocl, QuickRunWith1DBufferImages) {
  check_quick_run("auto", "image1d_buffer");
}

TEST(TextureProbeOnPocl, QuickRunWith2DImages) {
  check_quick_run("2d", "image2d");
}

}  // namespace
}  // namespace gpuscope
