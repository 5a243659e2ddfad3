// Turning XLA buffers into kernel descriptors, and kernel statuses into
// ffi::Error: the one mapping of each, shared by the platform handlers.
#ifndef JAX_ASCEND_SILU_FFI_TENSOR_DESC_H_
#define JAX_ASCEND_SILU_FFI_TENSOR_DESC_H_

#include <iterator>
#include <string>
#include <utility>

#include "common/shape_string.h"
#include "common/validate.h"
#include "silu_grad.h"
#include "xla/ffi/api/ffi.h"

namespace jas::ffi {

namespace xffi = ::xla::ffi;

// XLA's type for each entry of the kernel's table (kernel/common/dtype.h).
inline constexpr struct {
  xffi::DataType xla;
  DataType kernel;
} kXlaTypes[] = {
    {xffi::DataType::F32, DataType::kFloat32},
    {xffi::DataType::F16, DataType::kFloat16},
    {xffi::DataType::BF16, DataType::kBFloat16},
};
static_assert(std::size(kXlaTypes) == std::size(kDtypes), "every kernel dtype needs its XLA type");

// Unsupported XLA types map to a value the kernel rejects with 161002.
inline DataType KernelType(xffi::DataType t) {
  for (const auto& entry : kXlaTypes) {
    if (entry.xla == t) return entry.kernel;
  }
  return static_cast<DataType>(-1);
}

inline const char* XlaTypeName(xffi::DataType t) {
  if (t == xffi::DataType::F64) return "float64";  // the unsupported type users most often pass
  return DtypeName(KernelType(t));
}

// A dense row-major XLA buffer as a kernel descriptor (strides implied).
inline TensorDesc TensorDescOf(const xffi::AnyBuffer& b) {
  TensorDesc d;
  d.dtype = KernelType(b.element_type());
  d.rank = static_cast<int64_t>(b.dimensions().size());
  d.dims = b.dimensions().begin();
  d.storage_numel = static_cast<int64_t>(b.element_count());
  d.data = b.untyped_data();
  return d;
}

// Every platform's handler binds its own context (stream, pool, allocator)
// and then these: grad_output and self (F32/F16/BF16, broadcastable; self is
// x, the forward input), and the result grad_input of the broadcast shape.
template <class Binding>
auto BindOperands(Binding&& binding) {
  return std::forward<Binding>(binding)
      .template Arg<xffi::AnyBuffer>()
      .template Arg<xffi::AnyBuffer>()
      .template Ret<xffi::AnyBuffer>();
}

// "float32[3,4]"
inline std::string ShapeString(const xffi::AnyBuffer& b) {
  const auto dims = b.dimensions();
  return jas::ShapeString(XlaTypeName(b.element_type()), dims.begin(), static_cast<int64_t>(dims.size()));
}

// "grad_output float32[3,4], self float32[4], grad_input float32[3,4]"
inline std::string OperandsString(const xffi::AnyBuffer& grad_output, const xffi::AnyBuffer& self,
                                  const xffi::AnyBuffer& grad_input) {
  const xffi::AnyBuffer* const buffers[3] = {&grad_output, &self, &grad_input};
  std::string s;
  for (int i = 0; i < 3; ++i)
    s += (i ? ", " : "") + std::string(kOperandNames[i]) + " " + ShapeString(*buffers[i]);
  return s;
}

// The ffi::Error for a failed aclnn-style status (this package's kernels' or
// CANN's): the caller's mistakes are InvalidArgument, the rest Internal.
inline xffi::Error StatusToError(Status status, const std::string& message) {
  return IsCallerError(status) ? xffi::Error::InvalidArgument(message) : xffi::Error::Internal(message);
}

// "<op> <phase> failed with ACLNN_ERR_PARAM_INVALID (161002): <context>", op
// SiluGrad unless named.
inline xffi::Error StatusError(Status status, const char* phase, const std::string& context,
                               const char* op = "SiluGrad") {
  return StatusToError(status, std::string("jax_ascend_silu: ") + op + " " + phase + " failed with " +
                                   StatusName(status) + " (" + std::to_string(status) + "): " + context);
}

// A backend's phase 1 (SiluGradGetWorkspaceSize or its CUDA twin) on XLA's
// three buffers, its failure as an ffi::Error naming the operands.
template <class Executor>
xffi::Error Phase1(Status (*get_workspace_size)(const TensorDesc*, const TensorDesc*, const TensorDesc*, uint64_t*,
                                                Executor**),
                   const xffi::AnyBuffer& grad_output, const xffi::AnyBuffer& self, const xffi::AnyBuffer& grad_input,
                   uint64_t* workspace_bytes, Executor** executor) {
  const TensorDesc go = TensorDescOf(grad_output), x = TensorDescOf(self), gi = TensorDescOf(grad_input);
  if (Status s = get_workspace_size(&go, &x, &gi, workspace_bytes, executor); s != kSuccess) {
    // What the validator refused, in words (asked again only on this path).
    CheckedOperands checked;
    const TensorDesc* const ops[3] = {&go, &x, &gi};
    const std::string why =
        CheckOperands(&go, &x, &gi, &checked) != kSuccess ? RefusalText(checked, ops) + "; " : "";
    return StatusError(s, "phase 1 (GetWorkspaceSize)",
                       why + "got " + OperandsString(grad_output, self, grad_input));
  }
  return xffi::Error::Success();
}

}  // namespace jas::ffi

#endif  // JAX_ASCEND_SILU_FFI_TENSOR_DESC_H_
