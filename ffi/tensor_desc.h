// Turning XLA buffers into kernel descriptors, and kernel statuses into
// ffi::Error: the one mapping of each, shared by every operation's handlers
// on every platform. Each operation's own decoding sits beside it
// (silu_grad_operands.h, swiglu_operands.h).
#ifndef JAX_ASCEND_SILU_FFI_TENSOR_DESC_H_
#define JAX_ASCEND_SILU_FFI_TENSOR_DESC_H_

#include <iterator>
#include <string>

#include "common/shape_string.h"
#include "common/status.h"
#include "tensor.h"
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

// "float32[3,4]"
inline std::string ShapeString(const xffi::AnyBuffer& b) {
  const auto dims = b.dimensions();
  return jas::ShapeString(XlaTypeName(b.element_type()), dims.begin(), static_cast<int64_t>(dims.size()));
}

// The ffi::Error for a failed aclnn-style status (this package's kernels' or
// CANN's): the caller's mistakes are InvalidArgument, the rest Internal.
inline xffi::Error StatusToError(Status status, const std::string& message) {
  return IsCallerError(status) ? xffi::Error::InvalidArgument(message) : xffi::Error::Internal(message);
}

// "<op> <phase> failed with ACLNN_ERR_PARAM_INVALID (161002): <context>".
inline xffi::Error StatusError(Status status, const char* phase, const std::string& context, const char* op) {
  return StatusToError(status, std::string("jax_ascend_silu: ") + op + " " + phase + " failed with " +
                                   StatusName(status) + " (" + std::to_string(status) + "): " + context);
}

}  // namespace jas::ffi

#endif  // JAX_ASCEND_SILU_FFI_TENSOR_DESC_H_
