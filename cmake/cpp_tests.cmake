# C++ tests, one ctest entry per TEST(name) in each source (tests/cpp/harness.h).
enable_testing()

function(jas_add_cpp_test target source)
  add_executable(${target} ${source})
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/cpp)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${source})  # new TESTs register
  file(STRINGS ${source} _lines REGEX "^TEST\\(([A-Za-z0-9_]+)\\)")
  foreach(_line IN LISTS _lines)
    string(REGEX REPLACE "^TEST\\(([A-Za-z0-9_]+)\\).*" "\\1" _name "${_line}")
    add_test(NAME ${target}.${_name} COMMAND ${target} ${_name})
  endforeach()
endfunction()

# The Ascend glue against the fake CANN (needs the XLA FFI headers for the
# ffi::Error mapping).
if(JAX_ASCEND_SILU_FAKE_CANN AND JAX_ASCEND_SILU_PYTHON)
  jas_add_cpp_test(ascend_glue_test tests/cpp/ascend_glue_test.cc)
  target_include_directories(ascend_glue_test SYSTEM PRIVATE ${XLA_FFI_INCLUDE_DIR})
  target_link_libraries(ascend_glue_test PRIVATE jas_ascend_glue)
endif()

# The CUDA backend's host-side phase 1 (no GPU needed).
if(JAX_ASCEND_SILU_CUDA)
  jas_add_cpp_test(cuda_plan_test tests/cpp/cuda_plan_test.cc)
  target_link_libraries(cuda_plan_test PRIVATE jas_kernel_cuda)
endif()
