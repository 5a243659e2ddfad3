// SiluGrad's operands as XLA hands them to every platform's handler, and
// the backend's phase 1 on them: (grad_output, self) -> grad_input, the
// inputs broadcasting to the result (silu_grad.h).
#ifndef JAX_ASCEND_SILU_FFI_SILU_GRAD_OPERANDS_H_
#define JAX_ASCEND_SILU_FFI_SILU_GRAD_OPERANDS_H_

#include <string>
#include <utility>

#include "common/validate.h"
#include "silu_grad.h"
#include "tensor_desc.h"
#include "xla/ffi/api/ffi.h"

namespace jas::ffi {

// "grad_output float32[3,4], self float32[4], grad_input float32[3,4]"
inline std::string OperandsString(const xffi::AnyBuffer& grad_output, const xffi::AnyBuffer& self,
                                  const xffi::AnyBuffer& grad_input) {
  const xffi::AnyBuffer* const buffers[3] = {&grad_output, &self, &grad_input};
  std::string s;
  for (int i = 0; i < 3; ++i)
    s += (i ? ", " : "") + std::string(kOperandNames[i]) + " " + ShapeString(*buffers[i]);
  return s;
}

inline xffi::Error SiluGradError(Status status, const char* phase, const std::string& context) {
  return StatusError(status, phase, context, "SiluGrad");
}

// A backend's phase 1 (SiluGradGetWorkspaceSize or its CUDA twin) on XLA's
// three buffers, its failure as an ffi::Error naming the operands.
template <class Executor>
xffi::Error SiluGradPhase1(Status (*get_workspace_size)(const TensorDesc*, const TensorDesc*, const TensorDesc*,
                                                        uint64_t*, Executor**),
                           const xffi::AnyBuffer& grad_output, const xffi::AnyBuffer& self,
                           const xffi::AnyBuffer& grad_input, uint64_t* workspace_bytes, Executor** executor) {
  const TensorDesc go = TensorDescOf(grad_output), x = TensorDescOf(self), gi = TensorDescOf(grad_input);
  if (Status s = get_workspace_size(&go, &x, &gi, workspace_bytes, executor); s != kSuccess) {
    // What the validator refused, in words (asked again only on this path).
    CheckedOperands checked;
    std::string why;
    if (CheckOperands(&go, &x, &gi, &checked, &why) != kSuccess) why += "; ";
    return SiluGradError(s, "phase 1 (GetWorkspaceSize)",
                         why + "got " + OperandsString(grad_output, self, grad_input));
  }
  return xffi::Error::Success();
}

// Every platform's handler binds its own context (stream, pool, allocator)
// and then these: grad_output and self (F32/F16/BF16, broadcastable; self is
// x, the forward input), and the result grad_input of the broadcast shape.
template <class Binding>
auto BindSiluGrad(Binding&& binding) {
  return std::forward<Binding>(binding)
      .template Arg<xffi::AnyBuffer>()
      .template Arg<xffi::AnyBuffer>()
      .template Ret<xffi::AnyBuffer>();
}

}  // namespace jas::ffi

#endif  // JAX_ASCEND_SILU_FFI_SILU_GRAD_OPERANDS_H_
