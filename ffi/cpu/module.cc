// The nanobind module: FFI handler capsules and phase-1 queries for Python.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <vector>

#include "handlers.h"
#include "kernel_bindings.h"
#include "silu_grad.h"

namespace nb = nanobind;

namespace {

jas::DataType ParseDtype(const std::string& name) {
  if (name == "float32") return jas::DataType::kFloat32;
  if (name == "float16") return jas::DataType::kFloat16;
  if (name == "bfloat16") return jas::DataType::kBFloat16;
  throw nb::type_error(("unsupported dtype " + name + "; expected float32, float16 or bfloat16").c_str());
}

// Phase 1 on shapes alone (no data): the workspace bytes a call will need.
uint64_t WorkspaceSize(const std::vector<int64_t>& grad_output, const std::vector<int64_t>& self,
                       const std::vector<int64_t>& grad_input, const std::string& dtype) {
  const jas::DataType t = ParseDtype(dtype);
  auto desc = [t](const std::vector<int64_t>& shape) {
    jas::TensorDesc d;
    d.dtype = t;
    d.rank = static_cast<int64_t>(shape.size());
    d.dims = shape.data();
    d.storage_numel = INT64_MAX;
    return d;
  };
  const jas::TensorDesc go = desc(grad_output), x = desc(self), gi = desc(grad_input);
  uint64_t bytes = 0;
  jas::SiluGradExecutor* executor = nullptr;
  const jas::Status s = jas::SiluGradGetWorkspaceSize(&go, &x, &gi, &bytes, &executor);
  if (s != jas::kSuccess) {
    throw nb::value_error((std::string("SiluGrad phase 1 failed with ") + jas::StatusName(s) + " (" +
                           std::to_string(s) + ")").c_str());
  }
  jas::SiluGradDestroyExecutor(executor);
  return bytes;
}

}  // namespace

NB_MODULE(_silu_grad_cpu, m) {
  m.doc() = "jax_ascend_silu native extension: XLA FFI handlers for SiluGrad.";

  m.def("registrations", [] {
    nb::dict d;
    d[kTargetName] = nb::capsule(reinterpret_cast<void*>(&JaxAscendSiluGradCpu));
    return d;
  }, "FFI targets for platform 'cpu': {name: PyCapsule}.");

  m.def("workspace_size", &WorkspaceSize, nb::arg("grad_output"), nb::arg("self"),
        nb::arg("grad_input"), nb::arg("dtype"),
        "Workspace bytes phase 1 plans for these shapes (raises ValueError if it rejects them).");

  m.def("isa", [] { return std::string(jas::IsaName(jas::BestIsa())); },
        "The instruction set the kernel runs with on this processor.");
  m.def("supported_isas", [] {
    std::vector<std::string> names;
    for (jas::Isa isa : {jas::Isa::kScalar, jas::Isa::kAvx2, jas::Isa::kAvx512}) {
      if (jas::IsaSupported(isa)) names.emplace_back(jas::IsaName(isa));
    }
    return names;
  }, "Instruction sets this build and processor can run.");

  nb::module_ kernel = m.def_submodule("kernel");
  jas::ffi::DefineKernelModule(kernel);
}
