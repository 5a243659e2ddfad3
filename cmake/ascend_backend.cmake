# The Ascend backend, built everywhere: no CANN toolkit is needed to build it.
# kernel/ascend/cann.h declares the part of CANN it uses; kernel/ascend/cann_loader.cc
# opens CANN's libraries at run time and looks each function up by name
# (the operator in torch_npu's order); kernel/ascend/chips.cc tells chip classes apart;
# kernel/ascend/glue.cc builds the aclTensor views and runs the two phases (of
# aclnnSiluBackward and aclnnSwiGluGrad); the _silu_grad_ascend module carries
# the "ASCEND" FFI handlers.
add_library(jas_ascend_glue STATIC kernel/ascend/glue.cc kernel/ascend/cann_loader.cc kernel/ascend/chips.cc)
target_include_directories(jas_ascend_glue PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/kernel)
target_link_libraries(jas_ascend_glue PUBLIC jas_kernel_common ${CMAKE_DL_LIBS})
set_target_properties(jas_ascend_glue PROPERTIES POSITION_INDEPENDENT_CODE ON)

if(TARGET jas_ffi)  # the XLA FFI headers: the handler, for the module and tests/ffi_harness
  add_library(jas_ffi_ascend STATIC ffi/ascend/handler.cc)
  target_link_libraries(jas_ffi_ascend PUBLIC jas_ffi jas_ascend_glue)
  set_target_properties(jas_ffi_ascend PROPERTIES POSITION_INDEPENDENT_CODE ON
                        CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
endif()
if(JAX_ASCEND_SILU_PYTHON)
  nanobind_add_module(_silu_grad_ascend STABLE_ABI NB_STATIC ffi/ascend/module.cc)
  target_link_libraries(_silu_grad_ascend PRIVATE jas_ffi_ascend)
  install(TARGETS _silu_grad_ascend LIBRARY DESTINATION jax_ascend_silu)
  jas_add_stub(_silu_grad_ascend)
endif()

# Tests only: the FAKE CANN of tests/ascend_fake, as shared libraries with
# CANN's names laid out as installs are, under <build>/ascend_fake/:
#   cann9/lib64        libacl_rt, libnnopbase, libopapi_nn, the deprecated libopapi and libopapi_math
#                      (other operators only): a complete CANN 9-style install
#   cann85/lib64       libascendcl naming the 950 as CANN 8.5 did and without ACL_DEV_ATTR_NPU_ARCH,
#                      libnnopbase, libopapi_nn
#   legacy/lib64       libascendcl, libnnopbase without aclDestroyAclOpExecutor, libopapi without
#                      aclnnSwiGluGrad, the version from aclsysGetCANNVersion: an install older than CANN 8.0
#   split/{home,opp}/lib64   the operator library under ASCEND_OPP_PATH, the rest under ASCEND_HOME_PATH
#   no_operator/lib64  no operator library: a half-installed CANN
#   no_phase2/lib64    an operator library without aclnnSiluBackward and aclnnSwiGluGrad (phase 1s only)
#   custom/op_api/lib  a custom operator package's libcust_opapi.so with SiluGrad alone
#                      (ASCEND_CUSTOM_OPP_PATH=<root>/custom): SwiGluGrad still comes from CANN's own
#   vendors/opp/vendors  config.ini (load_priority=absent,other,vendor_b), vendor "other" without
#                      SiluGrad, vendor "vendor_b" with it (ASCEND_OPP_PATH=<root>/vendors/opp)
# Each forwards to one state library, libjas_fake_cann, which tests link to
# read its counters; each operator library records its tag when it serves a
# call. Point ASCEND_HOME_PATH at <build>/ascend_fake/cann9 to see the
# package find it (`python -m jax_ascend_silu info`).
if(JAX_ASCEND_SILU_TESTS)
  add_library(jas_fake_cann SHARED tests/ascend_fake/fake_cann.cc)
  target_include_directories(jas_fake_cann PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/tests/ascend_fake
                                                  ${CMAKE_CURRENT_SOURCE_DIR}/kernel)
  # CANN's formula as its kernel evaluates it: each float32 operation rounded on its own, none fused.
  target_compile_options(jas_fake_cann PRIVATE -ffp-contract=off)
  set(JAS_FAKE_CANN_ROOT ${CMAKE_BINARY_DIR}/ascend_fake)
  set(JAS_FAKE_CANN_LIBRARIES)
  # jas_fake_cann_library(DIR NAME SOURCE [DEFINITION...]): lib<NAME>.so in <root>/<DIR>.
  function(jas_fake_cann_library dir name source)
    string(MAKE_C_IDENTIFIER "jas_fake_${dir}_${name}" target)
    add_library(${target} SHARED tests/ascend_fake/${source})
    target_link_libraries(${target} PRIVATE jas_fake_cann)
    target_compile_definitions(${target} PRIVATE ${ARGN})
    set_target_properties(${target} PROPERTIES
      OUTPUT_NAME ${name}
      LIBRARY_OUTPUT_DIRECTORY ${JAS_FAKE_CANN_ROOT}/${dir}
      BUILD_RPATH $<TARGET_FILE_DIR:jas_fake_cann>)
    set(JAS_FAKE_CANN_LIBRARIES ${JAS_FAKE_CANN_LIBRARIES} ${target} PARENT_SCOPE)
  endfunction()
  set(_version FAKE_CANN_VERSION_STR="9.0.0-fake")
  jas_fake_cann_library(cann9/lib64 acl_rt acl_runtime.cc ${_version})
  jas_fake_cann_library(cann9/lib64 nnopbase nnopbase.cc)
  jas_fake_cann_library(cann9/lib64 opapi_nn opapi.cc FAKE_CANN_OPERATOR_TAG="libopapi_nn")
  jas_fake_cann_library(cann9/lib64 opapi opapi.cc FAKE_CANN_OPERATOR_TAG="libopapi")
  jas_fake_cann_library(cann9/lib64 opapi_math other_ops.cc)
  jas_fake_cann_library(cann85/lib64 ascendcl acl_runtime.cc FAKE_CANN_VERSION_STR="8.5.0-fake"
                        FAKE_CANN_SOC_NAMES_85 FAKE_CANN_NO_NPU_ARCH_ATTR)
  jas_fake_cann_library(cann85/lib64 nnopbase nnopbase.cc)
  jas_fake_cann_library(cann85/lib64 opapi_nn opapi.cc FAKE_CANN_OPERATOR_TAG="libopapi_nn")
  jas_fake_cann_library(legacy/lib64 ascendcl acl_runtime.cc FAKE_CANN_LEGACY_VERSION="7.0.0-fake"
                        FAKE_CANN_NO_NPU_ARCH_ATTR)
  jas_fake_cann_library(legacy/lib64 nnopbase nnopbase.cc FAKE_CANN_NO_DESTROY_EXECUTOR)
  jas_fake_cann_library(legacy/lib64 opapi opapi.cc FAKE_CANN_OPERATOR_TAG="libopapi" FAKE_CANN_NO_SWIGLU)
  jas_fake_cann_library(split/home/lib64 acl_rt acl_runtime.cc ${_version})
  jas_fake_cann_library(split/home/lib64 nnopbase nnopbase.cc)
  jas_fake_cann_library(split/opp/lib64 opapi_nn opapi.cc FAKE_CANN_OPERATOR_TAG="libopapi_nn")
  jas_fake_cann_library(no_operator/lib64 acl_rt acl_runtime.cc ${_version})
  jas_fake_cann_library(no_operator/lib64 nnopbase nnopbase.cc)
  jas_fake_cann_library(no_phase2/lib64 acl_rt acl_runtime.cc ${_version})
  jas_fake_cann_library(no_phase2/lib64 nnopbase nnopbase.cc)
  jas_fake_cann_library(no_phase2/lib64 opapi_nn opapi.cc FAKE_CANN_OPERATOR_TAG="libopapi_nn" FAKE_CANN_NO_PHASE2)
  jas_fake_cann_library(custom/op_api/lib cust_opapi opapi.cc FAKE_CANN_OPERATOR_TAG="custom" FAKE_CANN_NO_SWIGLU)
  jas_fake_cann_library(vendors/opp/vendors/other/op_api/lib cust_opapi other_ops.cc)
  jas_fake_cann_library(vendors/opp/vendors/vendor_b/op_api/lib cust_opapi opapi.cc
                        FAKE_CANN_OPERATOR_TAG="vendor_b")
  file(WRITE ${JAS_FAKE_CANN_ROOT}/vendors/opp/vendors/config.ini
       "# the FAKE CANN's vendor list\nload_priority=absent,other,vendor_b\n")
  add_custom_target(jas_fake_cann_all ALL DEPENDS ${JAS_FAKE_CANN_LIBRARIES})
endif()
