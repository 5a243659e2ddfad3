// What every platform's nanobind module shares: how it hands its handler to
// Python, which registers it for the module's platform (jax_ascend_silu/_ffi.py
// holds the table of modules and platforms).
#ifndef JAX_ASCEND_SILU_FFI_MODULE_H_
#define JAX_ASCEND_SILU_FFI_MODULE_H_

#include <nanobind/nanobind.h>

#include "handlers.h"

namespace jas::ffi {

// module.registrations() -> {target name: PyCapsule of `handler`}.
inline void DefineRegistrations(nanobind::module_& m, XLA_FFI_Error* (*handler)(XLA_FFI_CallFrame*)) {
  m.def("registrations", [handler] {
    nanobind::dict d;
    d[kTargetName] = nanobind::capsule(reinterpret_cast<void*>(handler));
    return d;
  }, "FFI targets of this module's handler: {name: PyCapsule}.");
}

}  // namespace jas::ffi

#endif  // JAX_ASCEND_SILU_FFI_MODULE_H_
