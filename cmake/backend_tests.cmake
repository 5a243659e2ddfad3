# Host-side C++ tests of the accelerator backends, on the kernel tests'
# harness (tests/kernel/check.h, main.cc); ctest label "backends", one entry
# per TEST(group, name).
function(jas_add_backend_test target source)
  add_executable(${target} ${source} ${CMAKE_CURRENT_SOURCE_DIR}/tests/kernel/main.cc)
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/kernel)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${source})  # new TESTs register
  file(STRINGS ${source} _lines REGEX "^TEST\\([A-Za-z0-9_]+, [A-Za-z0-9_]+\\)")
  foreach(_line IN LISTS _lines)
    string(REGEX REPLACE "^TEST\\(([A-Za-z0-9_]+), ([A-Za-z0-9_]+)\\).*" "\\1.\\2" _name "${_line}")
    add_test(NAME backends.${_name} COMMAND ${target} ${_name})
    set_tests_properties(backends.${_name} PROPERTIES LABELS backends)
  endforeach()
endfunction()

# The Ascend glue against the fake CANN (the XLA FFI headers are needed for
# the ffi::Error mapping, so only with the Python module).
if(JAX_ASCEND_SILU_FAKE_CANN AND JAX_ASCEND_SILU_PYTHON)
  jas_add_backend_test(ascend_glue_tests tests/backends/test_ascend_glue.cc)
  target_include_directories(ascend_glue_tests SYSTEM PRIVATE ${XLA_FFI_INCLUDE_DIR})
  target_link_libraries(ascend_glue_tests PRIVATE jas_ascend_glue)
endif()

# The CUDA backend's host-side planning and indexing (no GPU needed).
if(JAX_ASCEND_SILU_CUDA)
  jas_add_backend_test(cuda_plan_tests tests/backends/test_cuda_plan.cc)
  target_link_libraries(cuda_plan_tests PRIVATE jas_kernel_cuda)
endif()

# The CUDA handler's declared traits (needs the XLA FFI headers, so only with
# the Python module; no GPU).
if(JAX_ASCEND_SILU_CUDA AND JAX_ASCEND_SILU_PYTHON)
  jas_add_backend_test(cuda_handler_tests tests/backends/test_cuda_handler.cc)
  target_sources(cuda_handler_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/ffi/cuda/handler.cc)
  target_include_directories(cuda_handler_tests SYSTEM PRIVATE ${XLA_FFI_INCLUDE_DIR})
  target_link_libraries(cuda_handler_tests PRIVATE jas_ffi jas_kernel_cuda)
endif()
