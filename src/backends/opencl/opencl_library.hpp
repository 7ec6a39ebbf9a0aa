// Finding and opening an OpenCL library at run time.
//
// gpuscope links no OpenCL library: it opens one with dlopen, so that the
// binary starts (and lists sims, analyses and reports) where no OpenCL
// exists, and so that a vendor's library is found where vendors put it on
// ARM systems. Search order, first that opens and exports OpenCL wins:
//   1. the path given by --opencl-library or GPUSCOPE_OPENCL_LIBRARY (no
//      search: if it is not an OpenCL library, that is an error);
//   2. libOpenCL.so.1, libOpenCL.so through the dynamic linker's own search
//      (LD_LIBRARY_PATH, ld.so.cache): the Khronos ICD loader on desktops;
//   3. where Android vendors put theirs: /vendor/lib64/libOpenCL.so and the
//      /system equivalents, then Mali's libGLES_mali.so (which exports the
//      OpenCL entry points itself);
//   4. Linux Mali blobs: libmali.so, libmali.so.1.
#pragma once

#include <string>
#include <vector>

namespace gpuscope {

struct OpenClLibraryStatus {
  bool loaded = false;
  std::string path;  // the library in use, as it was opened (a name or a path)
  bool svm = false;  // exports the OpenCL 2.0 SVM entry points
  // Every candidate tried, in order, with what it said ("not found",
  // "lacks clCreateImage", ...); the last is the one in use when loaded.
  std::vector<std::string> tried;
  // One line for `gpuscope list --verbose`: where OpenCL came from, or why none.
  std::string describe() const;
};

// The library --opencl-library or GPUSCOPE_OPENCL_LIBRARY names; empty: search.
// Takes effect at the next load_opencl_library(); call it before any OpenCL use.
void set_opencl_library_path(std::string path);

// Opens the library once per process and fills the entry points of
// opencl_entry_points.hpp; later calls return the first outcome. Never
// throws when searching; throws UsageError (naming the path and why) when the
// library set by set_opencl_library_path cannot serve.
const OpenClLibraryStatus& load_opencl_library();

// The candidates tried when no path is set, in order.
std::vector<std::string> opencl_library_candidates();

}  // namespace gpuscope
