// The nanobind module: the FFI handler capsule, the kernel's ISA, and the
// environment variables as the CPU backend read them.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "module.h"
#include "cpu/environment.h"
#include "cpu/backend.h"
#include "silu_grad.h"

namespace nb = nanobind;

namespace {

// One variable as cpu/environment.h read it: its value as bytes (environment
// text need not be UTF-8; os.fsdecode reads it as os.environ does), None when unset.
nb::dict Describe(const jas::EnvSetting& s) {
  nb::dict d;
  d["set"] = s.set;
  d["value"] = s.set ? nb::object(nb::bytes(s.value.data(), s.value.size())) : nb::none();
  d["accepted"] = s.accepted;
  return d;
}

}  // namespace

NB_MODULE(_silu_grad_cpu, m) {
  m.doc() = "jax_ascend_silu CPU backend: the XLA FFI handlers of SiluGrad and SwiGluGrad for platform 'cpu'.";

  jas::ffi::DefineRegistrations(m, jas::ffi::CpuRegistrations());

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
  m.def("environment", [] {
    const jas::ThreadsSetting& threads = jas::ThreadsFromEnvironment();
    const jas::IsaSetting& isa = jas::IsaFromEnvironment();
    nb::dict t = Describe(threads), i = Describe(isa);
    t["cap"] = threads.accepted ? nb::object(nb::int_(threads.cap)) : nb::none();
    i["isa"] = isa.accepted ? nb::object(nb::str(jas::IsaName(isa.isa))) : nb::none();
    nb::dict all;
    all[threads.name] = t;
    all[isa.name] = i;
    return all;
  }, "JAX_ASCEND_SILU_THREADS and JAX_ASCEND_SILU_ISA as the CPU backend read them (once, at first use): "
     "for each, whether it is set, its value, whether the backend applies it, and the cap or ISA it gives.");
}
