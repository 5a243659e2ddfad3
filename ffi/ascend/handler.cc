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
  const xffi::AnyBuffer* buffers[3] = {&grad_output, &self, &(*grad_input)};
  ascend::Operand ops[3];
  for (int i = 0; i < 3; ++i) {
    const TensorDesc d = TensorDescOf(*buffers[i]);
    if (!IsSupported(d.dtype)) {
      std::string names;
      for (const DtypeInfo& t : kDtypes) names += std::string(names.empty() ? "" : ", ") + t.name;
      return xffi::Error::InvalidArgument("jax_ascend_silu: SiluGrad on Ascend takes " + names + "; got " +
                                          OperandsString(grad_output, self, *grad_input));
    }
    ops[i] = {d.dtype, d.rank, d.dims, d.data};
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
