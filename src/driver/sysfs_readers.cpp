// sysfs readers for Mali kbase, kgsl, amdgpu, i915, xe and PCI display
// devices. Formats (from the drivers' sources and documentation):
//   kbase  gpuinfo     "Mali-G52 2 cores r1p0 0x7212"
//          core_mask   "Current core mask : 0xF\nAvailable core mask : 0xF"
//   devfreq cur_freq, min_freq, max_freq in Hz; available_frequencies "Hz Hz ..."
//   kgsl   gpu_model "Adreno530v2"; gpuclk, max_gpuclk in Hz; gpubusy "busy total" (us)
//   amdgpu pp_dpm_sclk / pp_dpm_mclk lines "N: 1800Mhz *" (* marks the current level);
//          gpu_busy_percent; mem_info_vram_total (B); hwmon temp1_input (m°C), power1_average (uW)
//   i915   gt_cur_freq_mhz, gt_act_freq_mhz, gt_min_freq_mhz, gt_max_freq_mhz, gt_RP0_freq_mhz
//   xe     device/tile0/gt0/freq0/{cur,act,min,max,rp0}_freq (MHz)
//   PCI    vendor, device, subsystem_* "0x10de"; class "0x030000"; uevent DRIVER=...
#include "driver/driver_readers.hpp"

#include "core/printable.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

namespace gpuscope {
namespace fs = std::filesystem;
namespace {

// sysfs attributes are at most a page; anything longer is not one.
constexpr size_t kMaxAttributeBytes = 64 * 1024;

std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

std::optional<uint64_t> parse_unsigned(const std::string& text, int base = 10) {
  std::string t = trim(text);
  if (base == 16 && (t.starts_with("0x") || t.starts_with("0X"))) t = t.substr(2);
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (ec != std::errc() || end != t.data() + t.size() || t.empty()) return std::nullopt;
  return v;
}

// One snapshot under construction: reads attributes below the sysfs root and
// records each value with the path it came from (as on a live system).
class Reader {
 public:
  Reader(fs::path root, std::string driver) : root_(std::move(root)) { snap_.driver = std::move(driver); }

  // The attribute's text, trimmed; nullopt when absent (silently) or
  // unreadable (with a note).
  std::optional<std::string> text(const std::string& path) {
    const fs::path file = root_ / fs::path(path).relative_path();
    std::error_code ec;
    if (!fs::exists(file, ec)) return std::nullopt;
    if (!fs::is_regular_file(file, ec)) {
      note(path, "not a regular file");
      return std::nullopt;
    }
    std::ifstream in(file, std::ios::binary);
    std::string buf(kMaxAttributeBytes + 1, '\0');
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.bad()) {
      note(path, "cannot be read");
      return std::nullopt;
    }
    buf.resize(static_cast<size_t>(in.gcount()));
    if (buf.size() > kMaxAttributeBytes) {
      note(path, fmt::format("longer than {} bytes", kMaxAttributeBytes));
      return std::nullopt;
    }
    if (buf.find('\0') != std::string::npos) {
      note(path, "holds a NUL byte");
      return std::nullopt;
    }
    return trim(buf);
  }

  // An unsigned number scaled by `scale` into `unit`.
  void number(const std::string& key, const std::string& path, const std::string& unit, double scale = 1,
              int base = 10) {
    const auto t = text(path);
    if (!t) return;
    const auto v = parse_unsigned(*t, base);
    if (!v) return note(path, fmt::format("'{}' is not an unsigned number", printable(*t)));
    add(key, static_cast<double>(*v) * scale, unit, path);
  }

  void string(const std::string& key, const std::string& path) {
    if (const auto t = text(path); t && !t->empty()) add(key, printable(*t), "", path);
  }

  void add(const std::string& key, nlohmann::json value, const std::string& unit, const std::string& source) {
    snap_.facts.push_back({key, std::move(value), unit, source});
  }

  void note(const std::string& path, const std::string& why) {
    snap_.notes.push_back(fmt::format("{}: {}; ignored", path, why));
  }

  // devfreq's directory: clocks in Hz, given in MHz.
  void devfreq(const std::string& dir) {
    number("clock.current_mhz", dir + "/cur_freq", "MHz", 1e-6);
    number("clock.min_mhz", dir + "/min_freq", "MHz", 1e-6);
    number("clock.max_mhz", dir + "/max_freq", "MHz", 1e-6);
    if (const auto t = text(dir + "/available_frequencies")) {
      std::istringstream in(*t);
      std::vector<std::string> mhz;
      for (std::string word; in >> word;) {
        const auto hz = parse_unsigned(word);
        if (!hz)
          return note(dir + "/available_frequencies",
                      fmt::format("'{}' is not a frequency", printable(word)));
        mhz.push_back(fmt::format("{:g}", static_cast<double>(*hz) * 1e-6));
      }
      if (!mhz.empty())
        add("clock.available_mhz", fmt::format("{}", fmt::join(mhz, " ")), "MHz",
            dir + "/available_frequencies");
    }
  }

  bool has(const std::string& key) const {
    return std::any_of(snap_.facts.begin(), snap_.facts.end(),
                       [&](const DriverFact& f) { return f.key == key; });
  }
  fs::path host_path(const std::string& path) const { return root_ / fs::path(path).relative_path(); }
  bool exists(const std::string& path) const {
    std::error_code ec;
    return fs::exists(host_path(path), ec);
  }
  DriverSnapshot take() { return std::move(snap_); }
  bool empty() const { return snap_.facts.empty() && snap_.notes.empty(); }

  // Values quoted in notes and string facts are escaped (they reach
  // terminals and reports) and cut to a line.
  static std::string printable(const std::string& s) {
    const std::string out = gpuscope::printable(s);
    return out.size() > 200 ? out.substr(0, 200) + "..." : out;
  }

 private:
  fs::path root_;
  DriverSnapshot snap_;
};

// Subdirectories of `dir` (relative to the root) whose names match `pattern`, sorted.
std::vector<std::string> entries(const fs::path& root, const std::string& dir, const std::regex& pattern) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(root / fs::path(dir).relative_path(), ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (std::regex_match(name, pattern)) out.push_back(dir + "/" + name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Name of the driver bound to a sysfs device: DRIVER= in its uevent.
std::optional<std::string> bound_driver(Reader& r, const std::string& device_dir) {
  const auto uevent = r.text(device_dir + "/uevent");
  if (!uevent) return std::nullopt;
  std::istringstream in(*uevent);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("DRIVER=")) return trim(line.substr(7));
  return std::nullopt;
}

// amdgpu's DPM table: every level's clock, and the current one (marked *).
void amdgpu_dpm(Reader& r, const std::string& path, const std::string& prefix) {
  const auto t = r.text(path);
  if (!t) return;
  static const std::regex line_re(R"(^\s*(\d+):\s*(\d+)\s*[Mm][Hh]z\s*(\*)?\s*$)");
  std::istringstream in(*t);
  std::vector<double> levels;
  std::optional<double> current;
  for (std::string line; std::getline(in, line);) {
    if (trim(line).empty()) continue;
    std::smatch m;
    if (!std::regex_match(line, m, line_re))
      return r.note(path, fmt::format("line '{}' is not 'N: <MHz>Mhz [*]'", Reader::printable(line)));
    const auto mhz = parse_unsigned(m[2]);
    if (!mhz) return r.note(path, fmt::format("clock '{}' is out of range", m[2].str()));
    levels.push_back(static_cast<double>(*mhz));
    if (m[3].matched) current = levels.back();
  }
  if (levels.empty()) return r.note(path, "no clock levels");
  if (current) r.add(prefix + "current_mhz", *current, "MHz", path);
  r.add(prefix + "min_mhz", *std::min_element(levels.begin(), levels.end()), "MHz", path);
  r.add(prefix + "max_mhz", *std::max_element(levels.begin(), levels.end()), "MHz", path);
}

}  // namespace

std::vector<DriverSnapshot> read_mali_kbase(const fs::path& root) {
  const std::string dev = "/sys/class/misc/mali0/device";
  Reader r(root, "mali_kbase");
  if (!r.exists(dev)) return {};
  if (const auto info = r.text(dev + "/gpuinfo")) {
    static const std::regex re(R"(^(.+?) (\d+) cores? r(\d+)p(\d+) (0x[0-9A-Fa-f]+)$)");
    std::smatch m;
    const auto cores = std::regex_match(*info, m, re) ? parse_unsigned(m[2]) : std::nullopt;
    if (cores) {
      r.add("model", Reader::printable(m[1]), "", dev + "/gpuinfo");
      r.add("cores", *cores, "", dev + "/gpuinfo");
      r.add("revision", fmt::format("r{}p{}", m[3].str(), m[4].str()), "", dev + "/gpuinfo");
      r.add("product_id", m[5].str(), "", dev + "/gpuinfo");
    } else {
      r.note(dev + "/gpuinfo",
             fmt::format("'{}' is not '<name> <N> cores r<M>p<m> 0x<id>'", Reader::printable(*info)));
    }
  }
  if (const auto mask = r.text(dev + "/core_mask")) {
    static const std::regex re(R"(^(Current|Available) core mask\s*:\s*(0x[0-9A-Fa-f]+)\s*$)");
    std::istringstream in(*mask);
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_match(line, m, re)) continue;  // newer drivers add per-group lines
      const auto bits = parse_unsigned(m[2], 16);
      const std::string key = m[1] == "Current" ? "core_mask.current" : "core_mask.available";
      r.add(key, m[2].str(), "", dev + "/core_mask");
      if (bits && m[1] == "Available")
        r.add("core_mask.available_cores", std::popcount(*bits), "", dev + "/core_mask");
    }
  }
  for (const auto& dir : entries(root, dev + "/devfreq", std::regex(".+"))) r.devfreq(dir);
  return {r.take()};
}

std::vector<DriverSnapshot> read_kgsl(const fs::path& root) {
  const std::string dev = "/sys/class/kgsl/kgsl-3d0";
  Reader r(root, "kgsl");
  if (!r.exists(dev)) return {};
  r.string("model", dev + "/gpu_model");
  r.number("clock.current_mhz", dev + "/gpuclk", "MHz", 1e-6);
  r.number("clock.max_mhz", dev + "/max_gpuclk", "MHz", 1e-6);
  if (const auto busy = r.text(dev + "/gpubusy")) {
    std::istringstream in(*busy);
    std::string b, t, rest;
    in >> b >> t;
    const auto busy_us = parse_unsigned(b), total_us = parse_unsigned(t);
    if (!busy_us || !total_us || (in >> rest))
      r.note(dev + "/gpubusy", fmt::format("'{}' is not '<busy> <total>'", Reader::printable(*busy)));
    else if (*total_us > 0)
      r.add("busy_percent", 100.0 * static_cast<double>(*busy_us) / static_cast<double>(*total_us), "%",
            dev + "/gpubusy");
  }
  // kgsl's own gpuclk and max_gpuclk come first; its devfreq adds the floor.
  const std::string devfreq = dev + "/devfreq";
  if (!r.has("clock.current_mhz")) r.number("clock.current_mhz", devfreq + "/cur_freq", "MHz", 1e-6);
  if (!r.has("clock.max_mhz")) r.number("clock.max_mhz", devfreq + "/max_freq", "MHz", 1e-6);
  r.number("clock.min_mhz", devfreq + "/min_freq", "MHz", 1e-6);
  return {r.take()};
}

std::vector<DriverSnapshot> read_drm_cards(const fs::path& root) {
  std::vector<DriverSnapshot> out;
  for (const auto& card : entries(root, "/sys/class/drm", std::regex(R"(card\d+)"))) {
    Reader probe(root, "");
    const auto driver = bound_driver(probe, card + "/device");
    if (!driver) continue;
    Reader r(root, *driver);
    r.add("card", card.substr(card.rfind('/') + 1), "", card);
    if (*driver == "amdgpu") {
      amdgpu_dpm(r, card + "/device/pp_dpm_sclk", "clock.");
      amdgpu_dpm(r, card + "/device/pp_dpm_mclk", "memory.clock.");
      r.number("busy_percent", card + "/device/gpu_busy_percent", "%");
      r.number("memory.total_bytes", card + "/device/mem_info_vram_total", "B");
      for (const auto& hwmon : entries(root, card + "/device/hwmon", std::regex(R"(hwmon\d+)"))) {
        r.number("temperature_c", hwmon + "/temp1_input", "C", 1e-3);
        r.number("power_w", hwmon + "/power1_average", "W", 1e-6);
      }
    } else if (*driver == "i915") {
      r.number("clock.current_mhz", card + "/gt_cur_freq_mhz", "MHz");
      r.number("clock.actual_mhz", card + "/gt_act_freq_mhz", "MHz");
      r.number("clock.min_mhz", card + "/gt_min_freq_mhz", "MHz");
      r.number("clock.max_mhz", card + "/gt_max_freq_mhz", "MHz");
      r.number("clock.rp0_mhz", card + "/gt_RP0_freq_mhz", "MHz");
    } else if (*driver == "xe") {
      const std::string f = card + "/device/tile0/gt0/freq0";
      r.number("clock.current_mhz", f + "/cur_freq", "MHz");
      r.number("clock.actual_mhz", f + "/act_freq", "MHz");
      r.number("clock.min_mhz", f + "/min_freq", "MHz");
      r.number("clock.max_mhz", f + "/max_freq", "MHz");
      r.number("clock.rp0_mhz", f + "/rp0_freq", "MHz");
    } else {
      // Other DRM drivers (panfrost, msm, nouveau ...) may still have devfreq.
      for (const auto& dir : entries(root, card + "/device/devfreq", std::regex(".+"))) r.devfreq(dir);
    }
    out.push_back(r.take());
  }
  return out;
}

std::vector<DriverSnapshot> read_pci_display_devices(const fs::path& root) {
  std::vector<DriverSnapshot> out;
  for (const auto& dev : entries(root, "/sys/bus/pci/devices", std::regex(R"([0-9a-fA-F:.]+)"))) {
    Reader r(root, "pci");
    const auto cls = r.text(dev + "/class");
    const auto cls_value = cls ? parse_unsigned(*cls, 16) : std::nullopt;
    if (!cls_value || (*cls_value >> 16) != 0x03) continue;  // not a display controller
    r.add("pci.slot", dev.substr(dev.rfind('/') + 1), "", dev);
    r.string("pci.vendor_id", dev + "/vendor");
    r.string("pci.device_id", dev + "/device");
    r.string("pci.subsystem_vendor_id", dev + "/subsystem_vendor");
    r.string("pci.subsystem_device_id", dev + "/subsystem_device");
    if (const auto driver = bound_driver(r, dev)) r.add("driver", *driver, "", dev + "/uevent");
    r.string("pci.link.current_speed", dev + "/current_link_speed");
    r.number("pci.link.current_width", dev + "/current_link_width", "lanes");
    r.string("pci.link.max_speed", dev + "/max_link_speed");
    r.number("pci.link.max_width", dev + "/max_link_width", "lanes");
    out.push_back(r.take());
  }
  return out;
}

}  // namespace gpuscope
