// The Ascend path without XLA: aclTensor views over device buffers, then
// CANN's two-phase aclnnSiluBackward on a stream. The XLA handler
// (handler.cc) only decodes its buffers into Operands and turns the
// Outcome into an ffi::Error; tests drive this function directly against a
// fake CANN (tests/ascend_fake), since XLA cannot call an "ASCEND" handler
// without an Ascend PJRT plugin.
#ifndef JAX_ASCEND_SILU_FFI_ASCEND_GLUE_H_
#define JAX_ASCEND_SILU_FFI_ASCEND_GLUE_H_

#include <cstdint>
#include <string>

#include "acl/acl.h"
#include "aclnnop/aclnn_silu_backward.h"

namespace jas::ascend {

// A dense, row-major device buffer as XLA hands it over.
struct Operand {
  aclDataType dtype = ACL_FLOAT;
  int64_t rank = 0;
  const int64_t* dims = nullptr;  // `rank` entries
  void* data = nullptr;
};

// Where the device workspace comes from (XLA's scratch allocator in the
// handler). `allocate` returns null when it cannot provide `bytes`.
struct WorkspaceSource {
  void* context = nullptr;
  void* (*allocate)(void* context, uint64_t bytes) = nullptr;
};

enum class Failure {
  kNone = 0,
  kShapes,        // the operands do not broadcast to grad_input (no CANN call made)
  kCreateTensor,  // aclCreateTensor returned null
  kPhase1,        // aclnnSiluBackwardGetWorkspaceSize returned `status`
  kWorkspace,     // the workspace source could not provide the bytes phase 1 asked for
  kPhase2,        // aclnnSiluBackward returned `status`
};

struct Outcome {
  Failure failure = Failure::kNone;
  aclnnStatus status = 0;  // the aclnn status, for kPhase1 / kPhase2
  std::string message;     // names the call, the status code and CANN's own message
  bool ok() const { return failure == Failure::kNone; }
};

// grad_input = grad_output * s'(self), the inputs broadcast to grad_input's
// shape through stride-0 views (never materialised). Tensors are destroyed
// on every path; the workspace is requested only when phase 1 asks for a
// non-zero size. An empty grad_input makes no CANN call at all.
Outcome SiluBackward(aclrtStream stream, const WorkspaceSource& workspace, const Operand& grad_output,
                     const Operand& self, const Operand& grad_input);

// "ACLNN_ERR_PARAM_INVALID", ..., or the class of an unnamed code
// ("ACLNN_ERR_INNER (internal error)").
std::string StatusLabel(aclnnStatus status);

}  // namespace jas::ascend

#endif  // JAX_ASCEND_SILU_FFI_ASCEND_GLUE_H_
