// The nanobind module: the FFI handler capsule and the kernel's ISA.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "module.h"
#include "cpu/silu_grad_cpu.h"

namespace nb = nanobind;

NB_MODULE(_silu_grad_cpu, m) {
  m.doc() = "jax_ascend_silu native extension: XLA FFI handlers for SiluGrad.";

  jas::ffi::DefineRegistrations(m, &JaxAscendSiluGradCpu);

  m.def("isa", [] { return std::string(jas::IsaName(jas::BestIsa())); },
        "The instruction set the kernel runs with on this processor.");
  m.def("isa_names", [] {
    std::vector<std::string> names;
    for (jas::Isa isa : jas::kIsas) names.emplace_back(jas::IsaName(isa));
    return names;
  }, "Every instruction set's name, as JAX_ASCEND_SILU_ISA takes it, whether or not this processor runs it.");
  m.def("supported_isas", [] {
    std::vector<std::string> names;
    for (jas::Isa isa : jas::kIsas) {
      if (jas::IsaSupported(isa)) names.emplace_back(jas::IsaName(isa));
    }
    return names;
  }, "Instruction sets this build and processor can run.");
}
