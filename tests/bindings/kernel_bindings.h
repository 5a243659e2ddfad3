// The `kernel` submodule of the nanobind module: the raw two-phase kernel API
// on NumPy buffers, for tests and fuzzing (no JAX involved).
#ifndef JAX_ASCEND_SILU_TESTS_BINDINGS_KERNEL_BINDINGS_H_
#define JAX_ASCEND_SILU_TESTS_BINDINGS_KERNEL_BINDINGS_H_

#include <nanobind/nanobind.h>

namespace jas::ffi {

void DefineKernelModule(nanobind::module_& kernel);

}  // namespace jas::ffi

#endif  // JAX_ASCEND_SILU_TESTS_BINDINGS_KERNEL_BINDINGS_H_
