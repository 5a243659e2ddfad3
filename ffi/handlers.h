// XLA FFI handler symbols exported to the nanobind module.
#ifndef JAX_ASCEND_SILU_FFI_HANDLERS_H_
#define JAX_ASCEND_SILU_FFI_HANDLERS_H_

#include "xla/ffi/api/c_api.h"

// The custom-call target names; each backend registers its handlers under
// them for its own platform.
inline constexpr char kTargetName[] = "jax_ascend_silu_silu_grad";
inline constexpr char kSwiGluTargetName[] = "jax_ascend_silu_swiglu_grad";

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
