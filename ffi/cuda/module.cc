// The optional CUDA extension module: the handler capsules (SiluGrad's and
// SwiGluGrad's) for platform "CUDA".
// Importing it loads the kernels on every visible GPU (so that no launch,
// possibly inside a CUDA graph capture, is a kernel's first use); without a
// GPU or driver the import still succeeds and kernel_load_error() says why.
#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>

#include "handlers.h"
#include "module.h"

namespace nb = nanobind;

NB_MODULE(_silu_grad_cuda, m) {
  m.doc() = "jax_ascend_silu CUDA backend: the XLA FFI handlers of SiluGrad and SwiGluGrad for platform 'CUDA'.";

  jas::ffi::DefineRegistrations(m, jas::ffi::CudaRegistrations());

  // Every operation's kernels; the first failure is the reason.
  static const std::string load_error = jas::ffi::CudaLoadKernels();
  m.def("kernel_load_error", [] { return load_error; },
        "Why the kernels could not be loaded when this module was imported (no driver, no GPU, ...), or '' "
        "when they were loaded on every visible GPU.");

  m.def("build_info", [] {
    return "CUDA runtime " + std::to_string(CUDART_VERSION / 1000) + "." +
           std::to_string(CUDART_VERSION % 1000 / 10) + " (static), architectures " +
           JAS_CUDA_ARCHITECTURES;
  }, "The CUDA runtime and GPU architectures this module was compiled for.");
}
