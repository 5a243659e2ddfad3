# tests/ffi_harness: the platform handlers' symbols called the way XLA calls
# them, through a stand-in for XLA's side of the FFI C API (ffi_harness.cc).
# ctest label "backends"; one entry per TEST(group, name), named
# backends.<group>.<name>[.<chip>]:
#   cpu_handler                  once
#   ascend_handler               once per fake chip (910A, 910B, 950), on the
#                                complete fake install
#   ascend_handler_devices       once, two fake devices (910A, 950)
#   ascend_handler_without_cann  once, on an install without an operator library
#   ascend_swiglu_handler        once, every fake chip in turn (910B, 950, 310P, 910A)
#   ascend_swiglu_handler_old_cann  once, on an install without aclnnSwiGluGrad
# The Ascend binary takes its install as --ascend_home_path=DIR (it sets
# $ASCEND_HOME_PATH and clears the other CANN variables). Included from
# cmake/backend_tests.cmake (tests, with the XLA FFI headers).
add_library(jas_ffi_harness STATIC tests/ffi_harness/ffi_harness.cc)
target_include_directories(jas_ffi_harness PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/tests/ffi_harness)
target_include_directories(jas_ffi_harness SYSTEM PUBLIC ${XLA_FFI_INCLUDE_DIR})
target_link_libraries(jas_ffi_harness PUBLIC Threads::Threads)

set(_harness_test_util ${CMAKE_CURRENT_SOURCE_DIR}/tests/kernel/kernel_test_util.cc
                       ${CMAKE_CURRENT_SOURCE_DIR}/tests/kernel/reference_check.cc)

# jas_harness_tests(TARGET FILTER SUFFIX VARIABLE=VALUE [ARG...]): the TESTs of
# TARGET that FILTER selects, each an entry run with VARIABLE=VALUE and ARGs.
function(jas_harness_tests target filter suffix environment)
  gtest_discover_tests(${target} TEST_PREFIX backends. TEST_SUFFIX "${suffix}" TEST_FILTER "${filter}"
                       EXTRA_ARGS ${ARGN} DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS backends ENVIRONMENT "${environment}"
                                  FAIL_REGULAR_EXPRESSION "Running 0 tests")
endfunction()

add_executable(cpu_handler_tests tests/ffi_harness/test_cpu_handler.cc ${_harness_test_util})
target_include_directories(cpu_handler_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/kernel)
target_link_libraries(cpu_handler_tests PRIVATE jas_ffi_harness jas_ffi_cpu jas_kernel_testing GTest::gtest_main)
jas_harness_tests(cpu_handler_tests "cpu_handler.*" "" "JAX_ASCEND_SILU_THREADS=")  # the pool's size, uncapped

add_executable(ascend_handler_tests tests/ffi_harness/test_ascend_handler.cc ${_harness_test_util})
target_include_directories(ascend_handler_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/kernel)
target_link_libraries(ascend_handler_tests PRIVATE jas_ffi_harness jas_ffi_ascend jas_kernel_testing jas_fake_cann
                                                   ${CMAKE_DL_LIBS} GTest::gtest)
add_dependencies(ascend_handler_tests jas_fake_cann_all)
foreach(_chip 910A 910B 950)
  jas_harness_tests(ascend_handler_tests "ascend_handler.*" ".${_chip}" "JAX_ASCEND_SILU_FAKE_CHIP=${_chip}"
                    --ascend_home_path=${JAS_FAKE_CANN_ROOT}/cann9)
endforeach()
jas_harness_tests(ascend_handler_tests "ascend_handler_devices.*" "" "JAX_ASCEND_SILU_FAKE_CHIP=910A,950"
                  --ascend_home_path=${JAS_FAKE_CANN_ROOT}/cann9)
jas_harness_tests(ascend_handler_tests "ascend_handler_without_cann.*" "" "JAX_ASCEND_SILU_FAKE_CHIP=910B"
                  --ascend_home_path=${JAS_FAKE_CANN_ROOT}/no_operator)
# SwiGluGrad: each test sets the chip itself and runs on every one (910B, 950, 310P, 910A).
jas_harness_tests(ascend_handler_tests "ascend_swiglu_handler.*" "" "JAX_ASCEND_SILU_FAKE_CHIP=910B"
                  --ascend_home_path=${JAS_FAKE_CANN_ROOT}/cann9)
jas_harness_tests(ascend_handler_tests "ascend_swiglu_handler_old_cann.*" "" "JAX_ASCEND_SILU_FAKE_CHIP=910B"
                  --ascend_home_path=${JAS_FAKE_CANN_ROOT}/legacy)
