// Turning XLA buffers into kernel descriptors, and kernel statuses into
// ffi::Error. Shared by the platform handlers.
#ifndef JAX_ASCEND_SILU_FFI_TENSOR_DESC_H_
#define JAX_ASCEND_SILU_FFI_TENSOR_DESC_H_

#include <string>

#include "silu_grad.h"
#include "xla/ffi/api/ffi.h"

namespace jas::ffi {

namespace xffi = ::xla::ffi;

// Unsupported XLA types map to a value the kernel rejects with 161002.
inline DataType KernelType(xffi::DataType t) {
  switch (t) {
    case xffi::DataType::F32: return DataType::kFloat32;
    case xffi::DataType::F16: return DataType::kFloat16;
    case xffi::DataType::BF16: return DataType::kBFloat16;
    default: return static_cast<DataType>(-1);
  }
}

inline const char* XlaTypeName(xffi::DataType t) {
  switch (t) {
    case xffi::DataType::F32: return "float32";
    case xffi::DataType::F16: return "float16";
    case xffi::DataType::BF16: return "bfloat16";
    case xffi::DataType::F64: return "float64";
    default: return "an unsupported type";
  }
}

// A dense row-major XLA buffer as a kernel descriptor (strides implied).
inline TensorDesc Describe(const xffi::AnyBuffer& b) {
  TensorDesc d;
  d.dtype = KernelType(b.element_type());
  d.rank = static_cast<int64_t>(b.dimensions().size());
  d.dims = b.dimensions().begin();
  d.storage_numel = static_cast<int64_t>(b.element_count());
  d.data = b.untyped_data();
  return d;
}

inline std::string ShapeString(const xffi::AnyBuffer& b) {
  std::string s = std::string(XlaTypeName(b.element_type())) + "[";
  const auto dims = b.dimensions();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

// "grad_output float32[3,4], self float32[4], grad_input float32[3,4]"
inline std::string OperandsString(const xffi::AnyBuffer& grad_output, const xffi::AnyBuffer& self,
                                  const xffi::AnyBuffer& grad_input) {
  return "grad_output " + ShapeString(grad_output) + ", self " + ShapeString(self) + ", grad_input " +
         ShapeString(grad_input);
}

// "SiluGrad <phase> failed with ACLNN_ERR_PARAM_INVALID (161002): <context>"
inline xffi::Error StatusError(Status status, const char* phase, const std::string& context) {
  const std::string msg = std::string("jax_ascend_silu: SiluGrad ") + phase + " failed with " +
                          StatusName(status) + " (" + std::to_string(status) + "): " + context;
  const bool caller_error = status == kErrParamNullptr || status == kErrParamInvalid;
  return caller_error ? xffi::Error::InvalidArgument(msg) : xffi::Error::Internal(msg);
}

}  // namespace jas::ffi

#endif  // JAX_ASCEND_SILU_FFI_TENSOR_DESC_H_
