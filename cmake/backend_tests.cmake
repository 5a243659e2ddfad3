# Host-side C++ tests of the accelerator backends, on GoogleTest like the
# kernel tests; ctest label "backends", one entry per TEST(group, name).
function(jas_add_backend_test target source)
  add_executable(${target} ${source})
  target_link_libraries(${target} PRIVATE GTest::gtest_main)
  jas_discover_gtests(${target} backends. LABELS backends)
endfunction()

# The Ascend glue and its run-time loading against the fake CANN libraries
# (the XLA FFI headers are needed for the ffi::Error mapping: with the Python
# module, or XLA_FFI_INCLUDE_DIR given). TEST(ascend_glue, ...) runs once per fake chip
# (JAX_ASCEND_SILU_FAKE_CHIP), the other groups (ascend_loader, ...) once.
if(TARGET jas_ffi)
  add_executable(ascend_glue_tests tests/backends/test_ascend_glue.cc)
  target_link_libraries(ascend_glue_tests PRIVATE jas_ffi jas_ascend_glue jas_kernel jas_fake_cann GTest::gtest_main)
  target_compile_definitions(ascend_glue_tests PRIVATE JAS_FAKE_CANN_ROOT="${JAS_FAKE_CANN_ROOT}")
  add_dependencies(ascend_glue_tests jas_fake_cann_all)
  foreach(_chip 910A 910B 950)
    gtest_discover_tests(ascend_glue_tests TEST_PREFIX backends. TEST_SUFFIX .${_chip} TEST_FILTER "ascend_glue.*"
                         DISCOVERY_TIMEOUT 60
                         PROPERTIES LABELS backends ENVIRONMENT JAX_ASCEND_SILU_FAKE_CHIP=${_chip}
                                    FAIL_REGULAR_EXPRESSION "Running 0 tests")
  endforeach()
  # The loader path (LD_LIBRARY_PATH, as CANN's set_env.sh sets it) reaches the complete fake.
  gtest_discover_tests(ascend_glue_tests TEST_PREFIX backends. TEST_FILTER "-ascend_glue.*" DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS backends ENVIRONMENT LD_LIBRARY_PATH=${JAS_FAKE_CANN_ROOT}/cann9/lib64
                                  FAIL_REGULAR_EXPRESSION "Running 0 tests")
  # The handlers themselves, called through their symbols as XLA calls them.
  include(${CMAKE_CURRENT_LIST_DIR}/ffi_harness.cmake)
endif()

# The CUDA backend's host-side planning, and its kernels' grid loops run over
# simulated grids against the CPU kernel (no GPU needed).
if(JAX_ASCEND_SILU_CUDA)
  jas_add_backend_test(cuda_plan_tests tests/backends/test_cuda_plan.cc)
  target_sources(cuda_plan_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/kernel/kernel_test_util.cc)
  target_include_directories(cuda_plan_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/kernel)
  target_link_libraries(cuda_plan_tests PRIVATE jas_kernel_cuda jas_kernel_testing Threads::Threads)
  # SwiGluGrad's: phase 1 against the CPU's, its walk against the CPU kernel.
  jas_add_backend_test(cuda_swiglu_plan_tests tests/backends/test_cuda_swiglu_plan.cc)
  target_link_libraries(cuda_swiglu_plan_tests PRIVATE jas_kernel_cuda jas_kernel_testing)
endif()

# The CUDA handler's declared traits, queried through tests/ffi_harness (needs
# the XLA FFI headers, so only with the Python module; no GPU).
if(JAX_ASCEND_SILU_CUDA AND JAX_ASCEND_SILU_PYTHON)
  jas_add_backend_test(cuda_handler_tests tests/backends/test_cuda_handler.cc)
  target_sources(cuda_handler_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/ffi/cuda/handler.cc)
  target_link_libraries(cuda_handler_tests PRIVATE jas_ffi jas_ffi_harness jas_kernel_cuda)
endif()
