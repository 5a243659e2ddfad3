// The optional CUDA extension module: the handler capsule for platform "CUDA".
#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>

#include "handlers.h"

namespace nb = nanobind;

NB_MODULE(_silu_grad_cuda, m) {
  m.doc() = "jax_ascend_silu CUDA backend: the XLA FFI handler for platform 'CUDA'.";

  m.def("registrations", [] {
    nb::dict d;
    d[kTargetName] = nb::capsule(reinterpret_cast<void*>(&JaxAscendSiluGradCuda));
    return d;
  }, "FFI targets for platform 'CUDA': {name: PyCapsule}.");

  m.attr("PLATFORM") = "CUDA";

  m.def("build_info", [] {
    return "CUDA runtime " + std::to_string(CUDART_VERSION / 1000) + "." +
           std::to_string(CUDART_VERSION % 1000 / 10) + " (static), architectures " +
           JAS_CUDA_ARCHITECTURES;
  }, "The CUDA runtime and GPU architectures this module was compiled for.");
}
