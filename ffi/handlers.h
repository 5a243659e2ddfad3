// XLA FFI handler symbols exported to the nanobind module.
#ifndef JAX_ASCEND_SILU_FFI_HANDLERS_H_
#define JAX_ASCEND_SILU_FFI_HANDLERS_H_

#include "xla/ffi/api/c_api.h"

// Target "jax_ascend_silu_silu_grad", platform "cpu".
extern "C" XLA_FFI_Error* JaxAscendSiluGradCpu(XLA_FFI_CallFrame* call_frame);

#endif  // JAX_ASCEND_SILU_FFI_HANDLERS_H_
