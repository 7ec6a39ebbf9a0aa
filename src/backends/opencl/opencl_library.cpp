#include "backends/opencl/opencl_library.hpp"

#include "backends/opencl/opencl_entry_points.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <dlfcn.h>

#include <cstdlib>
#include <optional>

#define GPUSCOPE_OPENCL_DEFINE_POINTER(name) decltype(&::name) gpuscope_opencl_##name = nullptr;
GPUSCOPE_OPENCL_REQUIRED(GPUSCOPE_OPENCL_DEFINE_POINTER)
GPUSCOPE_OPENCL_OPTIONAL(GPUSCOPE_OPENCL_DEFINE_POINTER)
#undef GPUSCOPE_OPENCL_DEFINE_POINTER

namespace gpuscope {
namespace {

std::optional<std::string>& configured_path() {
  static std::optional<std::string> path;
  return path;
}

// dlerror() is cleared by reading it; "" when it had nothing to say.
std::string last_dl_error() {
  const char* e = dlerror();
  return e ? e : "";
}

// Opens `name` and fills every entry point from it. On failure returns why
// and leaves the pointers as they were.
std::optional<std::string> try_open(const std::string& name, OpenClLibraryStatus& status) {
  dlerror();
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const std::string error = last_dl_error();
    if (error.find("cannot open shared object file") != std::string::npos) return "not found";
    return "not loadable: " + error;
  }
  auto lookup = [&](const char* symbol) { return dlsym(handle, symbol); };
  // Every required symbol first, so a partial library changes no pointer.
  std::vector<std::string> missing;
#define GPUSCOPE_OPENCL_CHECK(name) \
  if (lookup(#name) == nullptr) missing.push_back(#name);
  GPUSCOPE_OPENCL_REQUIRED(GPUSCOPE_OPENCL_CHECK)
#undef GPUSCOPE_OPENCL_CHECK
  if (!missing.empty()) {
    std::string why;
    if (lookup("clIcdGetPlatformIDsKHR") != nullptr && lookup("clGetPlatformIDs") == nullptr)
      why =
          "an OpenCL ICD driver, not a library applications call: register it in "
          "/etc/OpenCL/vendors/ and let the ICD loader (libOpenCL.so.1) open it";
    else if (missing.size() > 3)
      why = fmt::format("exports no OpenCL 1.2 API ({} of its entry points missing, e.g. {})", missing.size(),
                        missing.front());
    else
      why = "lacks " + fmt::format("{}", fmt::join(missing, ", ")) + " (OpenCL 1.2)";
    dlclose(handle);
    return why;
  }
#define GPUSCOPE_OPENCL_FILL(name) \
  gpuscope_opencl_##name = reinterpret_cast<decltype(gpuscope_opencl_##name)>(lookup(#name));
  GPUSCOPE_OPENCL_REQUIRED(GPUSCOPE_OPENCL_FILL)
  GPUSCOPE_OPENCL_OPTIONAL(GPUSCOPE_OPENCL_FILL)
#undef GPUSCOPE_OPENCL_FILL
  // The handle stays open for the life of the process: the pointers use it.
  status.loaded = true;
  status.path = name;
  // The file the dynamic linker picked for a bare name (dladdr: glibc and bionic).
  Dl_info where{};
  if (dladdr(reinterpret_cast<void*>(gpuscope_opencl_clGetPlatformIDs), &where) && where.dli_fname &&
      name != where.dli_fname)
    status.path += fmt::format(" ({})", where.dli_fname);
  status.svm = gpuscope_opencl_clSVMAlloc && gpuscope_opencl_clSVMFree && gpuscope_opencl_clEnqueueSVMMap &&
               gpuscope_opencl_clEnqueueSVMUnmap;
  return std::nullopt;
}

OpenClLibraryStatus load() {
  OpenClLibraryStatus status;
  std::optional<std::string> explicit_path = configured_path();
  if (!explicit_path) {
    if (const char* env = std::getenv("GPUSCOPE_OPENCL_LIBRARY")) explicit_path = env;
  }
  if (explicit_path) {
    if (explicit_path->empty()) throw UsageError("--opencl-library: the path is empty");
    // A bare name would send dlopen searching; the option promises this file.
    const std::string name =
        explicit_path->find('/') == std::string::npos ? "./" + *explicit_path : *explicit_path;
    if (auto why = try_open(name, status))
      throw UsageError(fmt::format("OpenCL library '{}' cannot be used: {}", *explicit_path, *why));
    status.tried.push_back(name + ": in use (named by --opencl-library or GPUSCOPE_OPENCL_LIBRARY)");
    return status;
  }
  for (const auto& name : opencl_library_candidates()) {
    if (auto why = try_open(name, status)) {
      status.tried.push_back(name + ": " + *why);
      continue;
    }
    status.tried.push_back(name + ": in use");
    return status;
  }
  return status;
}

}  // namespace

std::string OpenClLibraryStatus::describe() const {
  if (loaded) return fmt::format("{}{}", path, svm ? "" : " (no OpenCL 2.0 SVM entry points)");
  return fmt::format("no OpenCL library found (tried {}); name one with --opencl-library PATH",
                     fmt::join(tried, "; "));
}

void set_opencl_library_path(std::string path) { configured_path() = std::move(path); }

const OpenClLibraryStatus& load_opencl_library() {
  static const OpenClLibraryStatus status = load();
  return status;
}

std::vector<std::string> opencl_library_candidates() {
  const std::string lib = sizeof(void*) == 8 ? "lib64" : "lib";
  return {
      "libOpenCL.so.1",
      "libOpenCL.so",
      "/vendor/" + lib + "/libOpenCL.so",
      "/system/vendor/" + lib + "/libOpenCL.so",
      "/system/" + lib + "/libOpenCL.so",
      "/vendor/" + lib + "/egl/libGLES_mali.so",
      "/system/vendor/" + lib + "/egl/libGLES_mali.so",
      "libmali.so",
      "libmali.so.1",
  };
}

}  // namespace gpuscope
