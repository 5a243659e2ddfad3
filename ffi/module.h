// What every platform's nanobind module shares: how it hands its handler to
// Python, which registers it for the module's platform (jax_ascend_silu/_ffi.py
// holds the table of modules and platforms).
#ifndef JAX_ASCEND_SILU_FFI_MODULE_H_
#define JAX_ASCEND_SILU_FFI_MODULE_H_

#include <nanobind/nanobind.h>

#include "handlers.h"

namespace jas::ffi {

using Handler = XLA_FFI_Error* (*)(XLA_FFI_CallFrame*);

// module.registrations() -> {target name: PyCapsule of its handler}: SiluGrad's
// `handler` under kTargetName, and SwiGluGrad's `swiglu` (where the backend
// has one) under kSwiGluTargetName.
inline void DefineRegistrations(nanobind::module_& m, Handler handler, Handler swiglu = nullptr) {
  m.def("registrations", [handler, swiglu] {
    nanobind::dict d;
    d[kTargetName] = nanobind::capsule(reinterpret_cast<void*>(handler));
    if (swiglu != nullptr) d[kSwiGluTargetName] = nanobind::capsule(reinterpret_cast<void*>(swiglu));
    return d;
  }, "FFI targets of this module's handlers: {name: PyCapsule}.");
}

}  // namespace jas::ffi

#endif  // JAX_ASCEND_SILU_FFI_MODULE_H_
