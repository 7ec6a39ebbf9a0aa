# The Vulkan backend: its sources with volk's and glslang's headers, which no
# other file sees, so that GPUSCOPE_WITH_VULKAN switches these files and
# nothing else. volk.c is C, compiled here as its own small library so the
# loader is opened with dlopen and nothing links libvulkan; glslang is linked
# statically.
enable_language(C)
add_library(gpuscope_volk STATIC ${GPUSCOPE_VOLK_DIR}/volk.c)
target_include_directories(gpuscope_volk SYSTEM PUBLIC ${GPUSCOPE_VOLK_DIR})
target_compile_definitions(gpuscope_volk PUBLIC VK_NO_PROTOTYPES)
set_target_properties(gpuscope_volk PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_link_libraries(gpuscope_volk PUBLIC ${CMAKE_DL_LIBS})
find_package(SPIRV-Tools-opt CONFIG QUIET)

file(GLOB GPUSCOPE_VULKAN_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
add_library(gpuscope_vulkan OBJECT ${GPUSCOPE_VULKAN_SOURCES})
target_link_libraries(gpuscope_vulkan PRIVATE gpuscope_results gpuscope_volk glslang::glslang glslang::SPIRV
                                              glslang::glslang-default-resource-limits)
target_compile_options(gpuscope_vulkan PRIVATE ${GPUSCOPE_WARNINGS})
gpuscope_precompile_as(gpuscope_vulkan gpuscope_results)
