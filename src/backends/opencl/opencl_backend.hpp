// OpenCL implementation of the Backend seam. Device IDs are "opencl:P:D":
// platform P and device D in the order the ICD loader reports them.
#pragma once

#include "backends/backend.hpp"

#include <memory>

namespace gpuscope {

std::unique_ptr<Backend> make_opencl_backend();

}  // namespace gpuscope
