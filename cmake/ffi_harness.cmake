# tests/ffi_harness: the platform handlers' symbols called the way XLA calls
# them, through a stand-in for XLA's side of the FFI C API (ffi_harness.cc).
# ctest labels "backends" and "ffi_harness"; one entry per TEST(group, name):
#   cpu_handler                  once
#   ascend_handler               once per fake chip (910A, 910B, 950), the
#                                fake CANN install found through $ASCEND_HOME_PATH
#   ascend_handler_devices       once, two fake devices (910A, 950)
#   ascend_handler_without_cann  once, $ASCEND_HOME_PATH at an install without
#                                an operator library
# Included from cmake/backend_tests.cmake (tests, with the XLA FFI headers).
add_library(jas_ffi_harness STATIC tests/ffi_harness/ffi_harness.cc)
target_include_directories(jas_ffi_harness PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/tests/ffi_harness)
target_include_directories(jas_ffi_harness SYSTEM PUBLIC ${XLA_FFI_INCLUDE_DIR})
target_link_libraries(jas_ffi_harness PUBLIC Threads::Threads)

set(_harness_test_util ${CMAKE_CURRENT_SOURCE_DIR}/tests/kernel/kernel_test_util.cc
                       ${CMAKE_CURRENT_SOURCE_DIR}/tests/kernel/reference_check.cc)

# Variables that would change what the handlers find or do, cleared for every entry.
set(_harness_clean_env JAX_ASCEND_SILU_THREADS= JAX_ASCEND_SILU_FAKE_CHIP= ASCEND_TOOLKIT_HOME= ASCEND_HOME_PATH=
                       ASCEND_OPP_PATH= ASCEND_CUSTOM_OPP_PATH=)

# jas_harness_tests(TARGET SOURCE): registers each TEST(group, name) of SOURCE;
# the environment of group G comes from _harness_env_<G>_<variant>, one entry
# per variant listed in _harness_variants_<G> (the variant "once": a single
# entry, no suffix).
function(jas_harness_tests target source)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${source})  # new TESTs register
  file(STRINGS ${source} _lines REGEX "^TEST\\([A-Za-z0-9_]+, [A-Za-z0-9_]+\\)")
  foreach(_line IN LISTS _lines)
    string(REGEX REPLACE "^TEST\\(([A-Za-z0-9_]+), ([A-Za-z0-9_]+)\\).*" "\\1" _group "${_line}")
    string(REGEX REPLACE "^TEST\\(([A-Za-z0-9_]+), ([A-Za-z0-9_]+)\\).*" "\\1.\\2" _name "${_line}")
    if(NOT DEFINED _harness_variants_${_group})
      message(FATAL_ERROR "${source}: TEST group ${_group} has no ctest environment in cmake/ffi_harness.cmake")
    endif()
    foreach(_variant IN LISTS _harness_variants_${_group})
      set(_entry backends.${_name})
      if(NOT _variant STREQUAL "once")
        set(_entry ${_entry}.${_variant})
      endif()
      jas_add_gtest(${_entry} ${target} ${_name})
      set_tests_properties(${_entry} PROPERTIES LABELS "backends;ffi_harness"
                           ENVIRONMENT "${_harness_clean_env};${_harness_env_${_group}_${_variant}}")
    endforeach()
  endforeach()
endfunction()

add_executable(cpu_handler_tests tests/ffi_harness/test_cpu_handler.cc ${_harness_test_util})
target_include_directories(cpu_handler_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/kernel)
target_link_libraries(cpu_handler_tests PRIVATE jas_ffi_harness jas_ffi_cpu GTest::gtest_main)
set(_harness_variants_cpu_handler once)
set(_harness_env_cpu_handler_once "")
jas_harness_tests(cpu_handler_tests ${CMAKE_CURRENT_SOURCE_DIR}/tests/ffi_harness/test_cpu_handler.cc)

add_executable(ascend_handler_tests tests/ffi_harness/test_ascend_handler.cc ${_harness_test_util})
target_include_directories(ascend_handler_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/kernel)
target_link_libraries(ascend_handler_tests PRIVATE jas_ffi_harness jas_ffi_ascend jas_fake_cann ${CMAKE_DL_LIBS}
                                                   GTest::gtest_main)
add_dependencies(ascend_handler_tests jas_fake_cann_all)
set(_harness_variants_ascend_handler 910A 910B 950)
foreach(_chip IN LISTS _harness_variants_ascend_handler)
  set(_harness_env_ascend_handler_${_chip} "ASCEND_HOME_PATH=${JAS_FAKE_CANN_ROOT}/cann9;JAX_ASCEND_SILU_FAKE_CHIP=${_chip}")
endforeach()
set(_harness_variants_ascend_handler_devices once)
set(_harness_env_ascend_handler_devices_once "ASCEND_HOME_PATH=${JAS_FAKE_CANN_ROOT}/cann9;JAX_ASCEND_SILU_FAKE_CHIP=910A,950")
set(_harness_variants_ascend_handler_without_cann once)
set(_harness_env_ascend_handler_without_cann_once "ASCEND_HOME_PATH=${JAS_FAKE_CANN_ROOT}/no_operator")
jas_harness_tests(ascend_handler_tests ${CMAKE_CURRENT_SOURCE_DIR}/tests/ffi_harness/test_ascend_handler.cc)
