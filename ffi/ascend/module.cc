// The Ascend extension module: the handler capsules for platform "ASCEND",
// and what the run-time search for CANN found. Built everywhere: nothing of
// CANN is needed to build or import it; CANN is looked for on the first
// cann() call or the first SiluGrad call on an Ascend device.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>

#include "ascend/cann_loader.h"
#include "module.h"

namespace nb = nanobind;

NB_MODULE(_silu_grad_ascend, m) {
  m.doc() = "jax_ascend_silu Ascend backend: the XLA FFI handlers of SiluGrad and SwiGluGrad for platform 'ASCEND'; "
            "CANN loaded at run time.";

  jas::ffi::DefineRegistrations(m, jas::ffi::AscendRegistrations());

  m.def("build_info", [] { return std::string("CANN loaded at run time"); },
        "How this module reaches CANN.");

  m.def("cann", [] {
    const jas::ascend::Cann& cann = jas::ascend::ProcessCann();
    nb::list libraries;
    for (const jas::ascend::CannLibrary& lib : cann.libraries()) {
      nb::dict entry;
      entry["role"] = lib.role;
      entry["name"] = lib.name;
      entry["path"] = lib.path;
      entry["origin"] = lib.origin;
      libraries.append(entry);
    }
    nb::list notes;
    for (const std::string& note : cann.notes()) notes.append(note);
    nb::dict d;
    d["found"] = cann.ok();
    d["problem"] = cann.problem();
    d["libraries"] = libraries;
    d["version"] = cann.version();
    d["version_note"] = cann.version_note();
    d["notes"] = notes;
    const jas::ascend::CannLibrary* op = cann.operator_library();
    d["operator_library"] = op != nullptr ? op->path : std::string();
    const jas::ascend::FoundOperator& swiglu = cann.op(jas::ascend::kSwiGluGrad);
    d["swiglu_operator_library"] = swiglu.library.path;
    d["swiglu_problem"] = swiglu.problem;
    return d;
  }, "What the search for CANN found (once per process, on first use): found, problem, libraries (role, name, path, "
     "origin), operator_library (the file aclnnSiluBackward comes from, or ''), swiglu_operator_library (aclnnSwiGluGrad's, "
     "or ''), swiglu_problem (why SwiGluGrad cannot run, or ''), version, version_note, notes.");
}
