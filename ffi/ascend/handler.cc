// The Ascend handler: XLA's device buffers and stream handed to the Ascend
// glue (glue.h), which runs CANN's aclnnSiluBackward through the
// functions found at run time (cann_loader.h); the workspace comes from XLA's
// scratch allocator. Registered for platform "ASCEND". The glue checks first
// that the plugin made an ACL context current on this thread, which CANN's
// operator needs to know the chip.
#include <string>

#include "ascend/cann.h"
#include "ascend/cann_loader.h"
#include "error.h"
#include "ascend/glue.h"
#include "handlers.h"
#include "tensor_desc.h"
#include "workspace.h"
#include "xla/ffi/api/ffi.h"

namespace jas::ffi {
namespace {

void* AllocateFromScratch(void* scratch, uint64_t bytes) {
  return ScratchAllocate(*static_cast<xffi::ScratchAllocator*>(scratch), bytes);
}

xffi::Error SiluGradAscendImpl(cann::aclrtStream stream, xffi::ScratchAllocator scratch,
                               xffi::AnyBuffer grad_output, xffi::AnyBuffer self,
                               xffi::Result<xffi::AnyBuffer> grad_input) {
  const TensorDesc ops[3] = {TensorDescOf(grad_output), TensorDescOf(self), TensorDescOf(*grad_input)};
  // Caught here, where XLA's own type names are known ("float64"); the glue's
  // checks would refuse the same operands with the same 161002.
  for (const TensorDesc& d : ops) {
    if (!IsSupported(d.dtype)) {
      return xffi::Error::InvalidArgument("jax_ascend_silu: SiluGrad on Ascend takes " + ascend::DtypesTaken() +
                                          "; got " + OperandsString(grad_output, self, *grad_input));
    }
  }
  const ascend::WorkspaceSource workspace{&scratch, &AllocateFromScratch};
  return ascend::ToFfiError(
      ascend::SiluBackward(ascend::ProcessCann(), stream, workspace, ops[0], ops[1], ops[2]));
}

}  // namespace
}  // namespace jas::ffi

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    JaxAscendSiluGradAscend, jas::ffi::SiluGradAscendImpl,
    jas::ffi::BindOperands(::xla::ffi::Ffi::Bind()
                               .Ctx<::xla::ffi::PlatformStream<jas::cann::aclrtStream>>()  // the NPU stream of this call
                               .Ctx<::xla::ffi::ScratchAllocator>()));  // device workspace, freed after the call
