// What every platform's nanobind module shares: how it hands its handlers to
// Python, which registers them for the module's platform (jax_ascend_silu/_ffi.py
// holds the table of modules, platforms and the operations each has).
#ifndef JAX_ASCEND_SILU_FFI_MODULE_H_
#define JAX_ASCEND_SILU_FFI_MODULE_H_

#include <nanobind/nanobind.h>

#include <span>
#include <vector>

#include "handlers.h"

namespace jas::ffi {

// module.registrations() -> {target: PyCapsule of its handler} and
// module.targets() -> {operation name: target}, one entry per row of `table`
// (handlers.h: a backend lists the operations it has).
inline void DefineRegistrations(nanobind::module_& m, std::span<const Registration> table) {
  const std::vector<Registration> rows(table.begin(), table.end());
  m.def("registrations", [rows] {
    nanobind::dict d;
    for (const Registration& r : rows) d[r.operation.target] = nanobind::capsule(reinterpret_cast<void*>(r.handler));
    return d;
  }, "FFI targets of this module's handlers: {target: PyCapsule}.");
  m.def("targets", [rows] {
    nanobind::dict d;
    for (const Registration& r : rows) d[r.operation.name] = r.operation.target;
    return d;
  }, "The operations this module has handlers for: {operation name: FFI target}.");
}

}  // namespace jas::ffi

#endif  // JAX_ASCEND_SILU_FFI_MODULE_H_
