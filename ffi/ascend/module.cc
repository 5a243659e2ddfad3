// The optional Ascend extension module: the handler capsule for platform
// "ASCEND". Built against the CANN toolkit, or (tests only) against the fake
// CANN in tests/ascend_fake, which `cann()` then says.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>

#include "handlers.h"

namespace nb = nanobind;

NB_MODULE(_silu_grad_ascend, m) {
  m.doc() = "jax_ascend_silu Ascend backend: the XLA FFI handler for platform 'ASCEND'.";

  m.def("registrations", [] {
    nb::dict d;
    d[kTargetName] = nb::capsule(reinterpret_cast<void*>(&JaxAscendSiluGradAscend));
    return d;
  }, "FFI targets for platform 'ASCEND': {name: PyCapsule}.");

  m.attr("PLATFORM") = "ASCEND";

  m.def("build_info", [] { return std::string(JAS_CANN_DESCRIPTION); },
        "What this module was linked against: the CANN toolkit's path, or the test fake.");
}
