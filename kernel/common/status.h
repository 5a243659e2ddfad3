// Status codes, with aclnn's numbers: the one table of them, for every backend.
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_STATUS_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_STATUS_H_

#include <cstdint>

namespace jas {

using Status = int32_t;
inline constexpr Status kSuccess = 0;
inline constexpr Status kErrParamNullptr = 161001;   // ACLNN_ERR_PARAM_NULLPTR
inline constexpr Status kErrParamInvalid = 161002;   // ACLNN_ERR_PARAM_INVALID
inline constexpr Status kErrRuntime = 361001;        // ACLNN_ERR_RUNTIME_ERROR (a device runtime call failed)
inline constexpr Status kErrInnerCreateExecutor = 561101;
inline constexpr Status kErrInnerNullptr = 561103;

// Human-readable name of a status code ("ACLNN_ERR_PARAM_INVALID", ...).
constexpr const char* StatusName(Status status) {
  switch (status) {
    case kSuccess: return "ACLNN_SUCCESS";
    case kErrParamNullptr: return "ACLNN_ERR_PARAM_NULLPTR";
    case kErrParamInvalid: return "ACLNN_ERR_PARAM_INVALID";
    case kErrRuntime: return "ACLNN_ERR_RUNTIME_ERROR";
    case kErrInnerCreateExecutor: return "ACLNN_ERR_INNER_CREATE_EXECUTOR";
    case kErrInnerNullptr: return "ACLNN_ERR_INNER_NULLPTR";
  }
  return "ACLNN_ERR_UNKNOWN";
}

// aclnn's 161xxx codes are the caller's mistakes (bad parameters); the rest
// are failures inside the operator or the device runtime.
constexpr bool IsCallerError(Status status) { return status / 1000 == 161; }

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_STATUS_H_
