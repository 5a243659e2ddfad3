// THIS IS A FAKE, NOT CANN (see fake_cann.h): the ACL runtime's functions the
// package calls, built as libacl_rt.so (CANN 9) and as libascendcl.so (older).
// FAKE_CANN_SOC_NAMES_85: the 950 named as CANN 8.5 named it;
// FAKE_CANN_NO_NPU_ARCH_ATTR: a runtime that predates ACL_DEV_ATTR_NPU_ARCH.
#include <cstring>
#include <type_traits>

#include "fake_cann.h"

namespace cann = jas::cann;

extern "C" {

const char* aclGetRecentErrMsg() { return fake_cann::impl::RecentErrMsg(); }

#ifdef FAKE_CANN_SOC_NAMES_85
constexpr bool kCann85Names = true;
#else
constexpr bool kCann85Names = false;
#endif
#ifdef FAKE_CANN_NO_NPU_ARCH_ATTR
constexpr bool kHasNpuArch = false;
#else
constexpr bool kHasNpuArch = true;
#endif

const char* aclrtGetSocName() { return fake_cann::impl::CurrentSocName(kCann85Names); }

cann::aclError aclrtGetCurrentContext(cann::aclrtContext* context) {
  return fake_cann::impl::GetCurrentContext(context);
}

cann::aclError aclrtGetDevice(int32_t* deviceId) { return fake_cann::impl::GetDevice(deviceId); }

// What a PJRT plugin calls to make a device's context current on its thread.
cann::aclError aclrtSetDevice(int32_t deviceId) { return fake_cann::impl::SetDevice(deviceId); }

cann::aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, cann::aclrtMemcpyKind kind,
                                cann::aclrtStream stream) {
  return fake_cann::impl::MemcpyAsync(dst, destMax, src, count, kind, stream);
}

cann::aclError aclrtGetDeviceInfo(uint32_t deviceId, cann::aclrtDevAttr attr, int64_t* value) {
  return fake_cann::impl::GetDeviceInfo(deviceId, attr, value, kHasNpuArch);
}

#ifdef FAKE_CANN_VERSION_STR
cann::aclError aclsysGetVersionStr(char* pkgName, char* versionStr) {
  if (pkgName == nullptr || versionStr == nullptr) return 100000;  // ACL_ERROR_INVALID_PARAM
  if (std::strcmp(pkgName, "runtime") != 0) return 100003;         // no such package here
  std::strncpy(versionStr, FAKE_CANN_VERSION_STR, cann::kPkgVersionMaxSize - 1);
  return 0;
}
#endif

#ifdef FAKE_CANN_LEGACY_VERSION
cann::aclError aclsysGetCANNVersion(cann::aclCANNPackageName name, cann::aclCANNPackageVersion* version) {
  if (version == nullptr || name != cann::ACL_PKG_NAME_CANN) return 100000;
  *version = {};
  std::strncpy(version->version, FAKE_CANN_LEGACY_VERSION, sizeof version->version - 1);
  return 0;
}
#endif

}  // extern "C"

// The exports have the declared types (cann.h), which CI checks against CANN's headers.
static_assert(std::is_same_v<decltype(aclGetRecentErrMsg), cann::aclGetRecentErrMsgFn>);
static_assert(std::is_same_v<decltype(aclrtGetSocName), cann::aclrtGetSocNameFn>);
static_assert(std::is_same_v<decltype(aclrtGetCurrentContext), cann::aclrtGetCurrentContextFn>);
static_assert(std::is_same_v<decltype(aclrtGetDevice), cann::aclrtGetDeviceFn>);
static_assert(std::is_same_v<decltype(aclrtGetDeviceInfo), cann::aclrtGetDeviceInfoFn>);
static_assert(std::is_same_v<decltype(aclrtMemcpyAsync), cann::aclrtMemcpyAsyncFn>);
#ifdef FAKE_CANN_VERSION_STR
static_assert(std::is_same_v<decltype(aclsysGetVersionStr), cann::aclsysGetVersionStrFn>);
#endif
#ifdef FAKE_CANN_LEGACY_VERSION
static_assert(std::is_same_v<decltype(aclsysGetCANNVersion), cann::aclsysGetCANNVersionFn>);
#endif
