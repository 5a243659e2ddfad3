// The Ascend glue's Outcome as an ffi::Error: the caller's mistakes (the aclnn
// parameter codes of the operand checks and of CANN's phases, which
// StatusToError maps as for every backend) are InvalidArgument, a workspace
// XLA could not provide is ResourceExhausted, a missing or incomplete CANN and a thread with no current ACL context are
// FailedPrecondition, a chip without the operator's kernel Unimplemented,
// everything else (a failed copy or tensor creation, CANN's internal codes) Internal.
// The message (call, status code and name, CANN's aclGetRecentErrMsg()) is kept
// whole.
#ifndef JAX_ASCEND_SILU_FFI_ASCEND_ERROR_H_
#define JAX_ASCEND_SILU_FFI_ASCEND_ERROR_H_

#include "ascend/glue.h"
#include "tensor_desc.h"
#include "xla/ffi/api/ffi.h"

namespace jas::ascend {

inline ::xla::ffi::Error ToFfiError(const Outcome& outcome) {
  using ::xla::ffi::Error;
  using ::xla::ffi::ErrorCode;
  switch (outcome.failure) {
    case Failure::kNone:
      return Error::Success();
    case Failure::kNoCann:
    case Failure::kNoContext:
      return Error(ErrorCode::kFailedPrecondition, outcome.message);
    case Failure::kWorkspace:
      return Error(ErrorCode::kResourceExhausted, outcome.message);
    case Failure::kChip:
      return Error(ErrorCode::kUnimplemented, outcome.message);
    case Failure::kOperands:
    case Failure::kPhase1:
    case Failure::kPhase2:
      return ::jas::ffi::StatusToError(outcome.status, outcome.message);
    case Failure::kCreateTensor:
    case Failure::kCopy:
      break;
  }
  return Error::Internal(outcome.message);
}

}  // namespace jas::ascend

#endif  // JAX_ASCEND_SILU_FFI_ASCEND_ERROR_H_
