# The Ascend backend: ffi/ascend/glue.cc (aclTensor views + CANN's two-phase
# aclnnSiluBackward) and the _silu_grad_ascend extension module with the
# "ASCEND" FFI handler. Built against the CANN toolkit (ASCEND_TOOLKIT_HOME or
# ASCEND_HOME_PATH: headers in include/, libraries in lib64/), or, for tests
# only, against the FAKE CANN in tests/ascend_fake.
if(JAX_ASCEND_SILU_FAKE_CANN)
  add_library(jas_fake_cann STATIC tests/ascend_fake/fake_cann.cc)
  target_include_directories(jas_fake_cann PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/tests/ascend_fake/include
                                                  ${CMAKE_CURRENT_SOURCE_DIR}/tests/ascend_fake)
  target_link_libraries(jas_fake_cann PUBLIC jas_kernel)
  set_target_properties(jas_fake_cann PROPERTIES POSITION_INDEPENDENT_CODE ON)
  set(_cann_include ${CMAKE_CURRENT_SOURCE_DIR}/tests/ascend_fake/include)
  set(_cann_libraries jas_fake_cann)
  set(_cann_description "FAKE CANN for tests (tests/ascend_fake): host memory, never Ascend hardware")
else()
  set(ASCEND_TOOLKIT_HOME "$ENV{ASCEND_TOOLKIT_HOME}" CACHE PATH "CANN toolkit root")
  if(NOT ASCEND_TOOLKIT_HOME)
    set(ASCEND_TOOLKIT_HOME "$ENV{ASCEND_HOME_PATH}" CACHE PATH "CANN toolkit root" FORCE)
  endif()
  if(NOT ASCEND_TOOLKIT_HOME OR NOT EXISTS "${ASCEND_TOOLKIT_HOME}/include/aclnnop/aclnn_silu_backward.h")
    message(FATAL_ERROR "JAX_ASCEND_SILU_ASCEND=ON but no CANN toolkit was found: set ASCEND_TOOLKIT_HOME "
                        "or ASCEND_HOME_PATH (e.g. source CANN's set_env.sh) to a toolkit with "
                        "include/aclnnop/aclnn_silu_backward.h; searched '${ASCEND_TOOLKIT_HOME}'.")
  endif()
  set(_cann_libraries)
  foreach(_lib ascendcl nnopbase opapi)
    find_library(JAS_CANN_${_lib} NAMES ${_lib} PATHS "${ASCEND_TOOLKIT_HOME}/lib64" NO_DEFAULT_PATH)
    if(NOT JAS_CANN_${_lib})
      message(FATAL_ERROR "CANN library lib${_lib}.so not found in ${ASCEND_TOOLKIT_HOME}/lib64")
    endif()
    list(APPEND _cann_libraries ${JAS_CANN_${_lib}})
  endforeach()
  set(_cann_include "${ASCEND_TOOLKIT_HOME}/include")
  set(_cann_description "CANN toolkit at ${ASCEND_TOOLKIT_HOME}")
endif()
message(STATUS "Ascend backend: ${_cann_description}")

add_library(jas_ascend_glue STATIC ffi/ascend/glue.cc)
target_include_directories(jas_ascend_glue PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/ffi ${_cann_include})
target_link_libraries(jas_ascend_glue PUBLIC jas_kernel ${_cann_libraries})
set_target_properties(jas_ascend_glue PROPERTIES POSITION_INDEPENDENT_CODE ON)

if(JAX_ASCEND_SILU_PYTHON)
  nanobind_add_module(_silu_grad_ascend NB_STATIC ffi/ascend/module.cc ffi/ascend/handler.cc)
  target_link_libraries(_silu_grad_ascend PRIVATE jas_ffi jas_ascend_glue)
  target_compile_definitions(_silu_grad_ascend PRIVATE JAS_CANN_DESCRIPTION="${_cann_description}")
  if(NOT JAX_ASCEND_SILU_FAKE_CANN)
    set_target_properties(_silu_grad_ascend PROPERTIES INSTALL_RPATH "${ASCEND_TOOLKIT_HOME}/lib64")
  endif()
  install(TARGETS _silu_grad_ascend LIBRARY DESTINATION jax_ascend_silu)
endif()
