// XLA FFI handler symbols exported to the nanobind modules, and the
// operations they implement.
#ifndef JAX_ASCEND_SILU_FFI_HANDLERS_H_
#define JAX_ASCEND_SILU_FFI_HANDLERS_H_

#include <span>
#include <string>

#include "xla/ffi/api/c_api.h"

namespace jas::ffi {

// An operation as Python looks it up (module.targets()[name]) and the
// custom-call target each backend registers its handler under, for its own
// platform. Named here only.
struct Operation {
  const char* name;
  const char* target;
};
inline constexpr Operation kSiluGrad{"SiluGrad", "jax_ascend_silu_silu_grad"};
inline constexpr Operation kSwiGluGrad{"SwiGluGrad", "jax_ascend_silu_swiglu_grad"};

using Handler = XLA_FFI_Error* (*)(XLA_FFI_CallFrame*);

// One row of a backend's table: an operation and its handler.
struct Registration {
  Operation operation;
  Handler handler;
};

// Each backend's table, defined beside its handlers (<platform>/handler.cc):
// the operations it has. Its module hands the table to Python (module.h).
std::span<const Registration> CpuRegistrations();
std::span<const Registration> CudaRegistrations();
std::span<const Registration> AscendRegistrations();

// Loads the kernels of every operation CudaRegistrations() lists (each
// operation's <Op>CudaLoadKernels, beside that table): "" on success, else
// the first failure's reason.
std::string CudaLoadKernels();

}  // namespace jas::ffi

// Platform "cpu" (module _silu_grad_cpu).
extern "C" XLA_FFI_Error* JaxAscendSiluGradCpu(XLA_FFI_CallFrame* call_frame);
extern "C" XLA_FFI_Error* JaxAscendSwiGluGradCpu(XLA_FFI_CallFrame* call_frame);
// Platform "CUDA" (module _silu_grad_cuda, built with JAX_ASCEND_SILU_CUDA).
extern "C" XLA_FFI_Error* JaxAscendSiluGradCuda(XLA_FFI_CallFrame* call_frame);
extern "C" XLA_FFI_Error* JaxAscendSwiGluGradCuda(XLA_FFI_CallFrame* call_frame);
// Platform "ASCEND" (module _silu_grad_ascend, always built; CANN is opened at run time).
extern "C" XLA_FFI_Error* JaxAscendSiluGradAscend(XLA_FFI_CallFrame* call_frame);
extern "C" XLA_FFI_Error* JaxAscendSwiGluGradAscend(XLA_FFI_CallFrame* call_frame);

#endif  // JAX_ASCEND_SILU_FFI_HANDLERS_H_
