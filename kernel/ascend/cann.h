// The part of CANN's C API this package calls, declared here and nowhere
// else: types, enum values and function types, written from CANN's public
// documentation (no CANN header is needed to build). The functions are looked
// up by name at run time (cann_loader.h), so these are types, not prototypes.
//
// Names and values are CANN's own, inside namespace jas::cann so that a
// translation unit can hold the real headers beside them:
// tests/backends/cann_declarations_check.cc compares every item below with
// the ACL headers and op-plugin typedefs of the torch-npu wheel, and a
// mismatch fails CI.
#ifndef JAX_ASCEND_SILU_KERNEL_ASCEND_CANN_H_
#define JAX_ASCEND_SILU_KERNEL_ASCEND_CANN_H_

#include <cstddef>
#include <cstdint>

namespace jas::cann {

// acl/acl_base_rt.h
using aclError = int;            // 0 is success
using aclrtStream = void*;
using aclrtContext = void*;
// The aclError values this package names (acl/acl_base_rt.h, acl/error_codes/rt_error_codes.h).
inline constexpr aclError kAclErrorInvalidParam = 100000;     // ACL_ERROR_INVALID_PARAM
inline constexpr aclError kAclErrorRtInvalidDeviceId = 107001;  // ACL_ERROR_RT_INVALID_DEVICEID
inline constexpr aclError kAclErrorRtContextNull = 107002;    // ACL_ERROR_RT_CONTEXT_NULL: no current context
// Only the values used here; CANN's enums hold many more (and -1 for
// "undefined", which makes their underlying type int).
enum aclDataType : int {
  ACL_FLOAT = 0,
  ACL_FLOAT16 = 1,
  ACL_DOUBLE = 11,
  ACL_BF16 = 27,
};
enum aclFormat : int {
  ACL_FORMAT_ND = 2,
};

// aclnn/acl_meta.h (libnnopbase)
using aclnnStatus = int32_t;     // 0 is success; 161xxx parameter, 361xxx runtime, 561xxx internal errors
struct aclTensor;
struct aclOpExecutor;

// A view of device memory: viewDims with element strides and an element
// offset (all non-negative) over storage of shape storageDims at tensorData.
using aclCreateTensorFn = aclTensor*(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                                     const int64_t* stride, int64_t offset, aclFormat format,
                                     const int64_t* storageDims, uint64_t storageDimsNum, void* tensorData);
using aclDestroyTensorFn = aclnnStatus(const aclTensor* tensor);
// Releases an executor whose phase 2 will not run (documented since CANN 8.0).
using aclDestroyAclOpExecutorFn = aclnnStatus(aclOpExecutor* executor);

// aclnnop/aclnn_silu_backward.h (the operator library: libopapi_nn, or libopapi up to CANN 8.3)
// Phase 1: validates, plans, returns the workspace bytes and the executor.
using aclnnSiluBackwardGetWorkspaceSizeFn = aclnnStatus(const aclTensor* gradOutput, const aclTensor* self,
                                                        aclTensor* gradInput, uint64_t* workspaceSize,
                                                        aclOpExecutor** executor);
// Phase 2 of every aclnn operator: runs the executor on the stream and frees
// it (unless repeatable), whether or not it succeeds.
using aclnnPhase2Fn = aclnnStatus(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                  aclrtStream stream);
using aclnnSiluBackwardFn = aclnnPhase2Fn;

// aclnnop/aclnn_swi_glu_grad.h (ops-nn's activation/swi_glu_grad; the operator
// library, since CANN 8.0.RC1). x = [A | B] halves along `dim`; out = [dA | dB]
// in x's shape; yGrad is x with dims[dim] halved. CANN 8.0.RC3 to 8.0 name
// `dim` dimOptional (the same int64_t). Phase 2 as aclnnSiluBackward's.
using aclnnSwiGluGradGetWorkspaceSizeFn = aclnnStatus(const aclTensor* yGrad, const aclTensor* x, int64_t dim,
                                                      const aclTensor* out, uint64_t* workspaceSize,
                                                      aclOpExecutor** executor);
using aclnnSwiGluGradFn = aclnnPhase2Fn;

// acl/acl_rt.h, acl/acl_base_rt.h (libascendcl; libacl_rt from CANN 9)
// The copy directions of aclrtMemcpyAsync. CANN's enum has no negative value: unsigned int.
enum aclrtMemcpyKind : unsigned int {
  ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
};
// Enqueues a copy of `count` bytes on `stream` (destMax: the room at dst).
using aclrtMemcpyAsyncFn = aclError(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                                    aclrtStream stream);
using aclGetRecentErrMsgFn = const char*();  // this thread's last CANN error message, or null
using aclrtGetSocNameFn = const char*();      // "Ascend910B3", "Ascend950PR_9589", ...; null when unknown
// The context current on the calling thread; ACL_ERROR_RT_CONTEXT_NULL when there is none.
using aclrtGetCurrentContextFn = aclError(aclrtContext* context);
// The device of the calling thread's current context.
using aclrtGetDeviceFn = aclError(int32_t* deviceId);
// acl/acl_rt.h: a device attribute. CANN's enum has no negative value: unsigned int.
enum aclrtDevAttr : unsigned int {
  ACL_DEV_ATTR_NPU_ARCH = 601,  // the device's NpuArch (2201, 3510, ...); refused by runtimes that predate it
};
using aclrtGetDeviceInfoFn = aclError(uint32_t deviceId, aclrtDevAttr attr, int64_t* value);
// Version of an installed CANN package ("runtime", ...); reads ASCEND_HOME_PATH.
using aclsysGetVersionStrFn = aclError(char* pkgName, char* versionStr);
inline constexpr size_t kPkgVersionMaxSize = 128;  // ACL_PKG_VERSION_MAX_SIZE: versionStr's size
// The older query (deprecated in CANN 9), for installs without aclsysGetVersionStr.
enum aclCANNPackageName : unsigned int {  // CANN's has no negative value: unsigned int
  ACL_PKG_NAME_CANN = 0,
};
inline constexpr size_t kPkgVersionPartsMaxSize = 64;  // ACL_PKG_VERSION_PARTS_MAX_SIZE
struct aclCANNPackageVersion {
  char version[kPkgVersionMaxSize];
  char majorVersion[kPkgVersionPartsMaxSize];
  char minorVersion[kPkgVersionPartsMaxSize];
  char releaseVersion[kPkgVersionPartsMaxSize];
  char patchVersion[kPkgVersionPartsMaxSize];
  char reserved[kPkgVersionMaxSize];
};
using aclsysGetCANNVersionFn = aclError(aclCANNPackageName name, aclCANNPackageVersion* version);

}  // namespace jas::cann

#endif  // JAX_ASCEND_SILU_KERNEL_ASCEND_CANN_H_
