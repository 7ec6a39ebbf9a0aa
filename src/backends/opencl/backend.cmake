# The OpenCL backend: its sources with the Khronos C++ headers' settings,
# which no other file sees, so that GPUSCOPE_WITH_OPENCL switches these files
# and nothing else. No OpenCL library is linked: opencl_library.cpp opens one
# at run time.
file(GLOB GPUSCOPE_OPENCL_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
add_library(gpuscope_opencl OBJECT ${GPUSCOPE_OPENCL_SOURCES})
target_link_libraries(gpuscope_opencl PRIVATE gpuscope_results)
target_include_directories(gpuscope_opencl SYSTEM PRIVATE ${GPUSCOPE_OPENCL_INCLUDE_DIR})
target_compile_definitions(gpuscope_opencl PRIVATE
  CL_HPP_TARGET_OPENCL_VERSION=120 CL_HPP_MINIMUM_OPENCL_VERSION=120 CL_HPP_ENABLE_EXCEPTIONS)
target_compile_options(gpuscope_opencl PRIVATE ${GPUSCOPE_WARNINGS})
gpuscope_precompile_as(gpuscope_opencl gpuscope_results)
