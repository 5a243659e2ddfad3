// The Ascend handlers: XLA's device buffers and stream handed to the Ascend
// glue (glue.h), which runs CANN's aclnnSiluBackward (SiluGrad) or
// aclnnSwiGluGrad (SwiGluGrad) through the functions found at run time
// (cann_loader.h); the workspace comes from XLA's scratch allocator.
// Registered for platform "ASCEND". The glue checks first that the plugin
// made an ACL context current on this thread, which CANN's operators need to
// know the chip.
#include <string>
#include <vector>

#include "ascend/cann.h"
#include "ascend/cann_loader.h"
#include "error.h"
#include "ascend/glue.h"
#include "handlers.h"
#include "silu_grad_operands.h"
#include "swiglu_operands.h"
#include "tensor_desc.h"
#include "workspace.h"
#include "xla/ffi/api/ffi.h"

namespace jas::ffi {
namespace {

void* AllocateFromScratch(void* scratch, uint64_t bytes) {
  return ScratchAllocate(*static_cast<xffi::ScratchAllocator*>(scratch), bytes);
}

// Caught here, where XLA's own type names are known ("float64"); the glue's
// checks would refuse the same operands with the same 161002. `got` names them.
template <class Got>
xffi::Error CheckDtypes(const std::vector<const TensorDesc*>& ops, const char* op, Got got) {
  for (const TensorDesc* d : ops) {
    if (!IsSupported(d->dtype)) {
      return xffi::Error::InvalidArgument(std::string("jax_ascend_silu: ") + op + " on Ascend takes " +
                                          ascend::DtypesTaken() + "; got " + got());
    }
  }
  return xffi::Error::Success();
}

xffi::Error SiluGradAscendImpl(cann::aclrtStream stream, xffi::ScratchAllocator scratch,
                               xffi::AnyBuffer grad_output, xffi::AnyBuffer self,
                               xffi::Result<xffi::AnyBuffer> grad_input) {
  const TensorDesc ops[3] = {TensorDescOf(grad_output), TensorDescOf(self), TensorDescOf(*grad_input)};
  if (xffi::Error err =
          CheckDtypes({&ops[0], &ops[1], &ops[2]}, "SiluGrad", [&] { return OperandsString(grad_output, self, *grad_input); });
      err.failure()) {
    return err;
  }
  const ascend::WorkspaceSource workspace{&scratch, &AllocateFromScratch};
  return ascend::ToFfiError(
      ascend::GradBackward(ascend::ProcessCann(), ascend::kSiluBackward, stream, workspace, ops[0], ops[1], ops[2]));
}

// Packed: aclnnSwiGluGrad as it is. Pair: CANN has no such form, so the glue
// stages [a | b] and [dA | dB] in scratch memory (glue.h, SwiGluGradPair).
xffi::Error SwiGluGradAscendImpl(cann::aclrtStream stream, xffi::ScratchAllocator scratch,
                                 xffi::AnyBuffer grad_output, xffi::RemainingArgs args, xffi::RemainingRets rets,
                                 int64_t axis) {
  SwiGluBuffers b;
  if (xffi::Error err = DecodeSwiGlu(grad_output, args, rets, axis, &b); err.failure()) return err;
  TensorDesc d[5];
  std::vector<const TensorDesc*> present;  // packed: grad_output, x, out
  for (int i = 0; i < 5; ++i) {
    if (b.buffers[i].has_value()) {
      d[i] = b.desc(i);
      present.push_back(&d[i]);
    }
  }
  if (xffi::Error err = CheckDtypes(present, "SwiGluGrad", [&] { return b.Shapes(); }); err.failure()) return err;
  const ascend::WorkspaceSource workspace{&scratch, &AllocateFromScratch};
  const ascend::Cann& cann = ascend::ProcessCann();
  return ascend::ToFfiError(b.packed ? ascend::SwiGluGradPacked(cann, stream, workspace, d[0], d[1], axis, d[3])
                                     : ascend::SwiGluGradPair(cann, stream, workspace, d[0], d[1], d[2], d[3], d[4]));
}

}  // namespace
}  // namespace jas::ffi

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    JaxAscendSiluGradAscend, jas::ffi::SiluGradAscendImpl,
    jas::ffi::BindSiluGrad(::xla::ffi::Ffi::Bind()
                               .Ctx<::xla::ffi::PlatformStream<jas::cann::aclrtStream>>()  // the NPU stream of this call
                               .Ctx<::xla::ffi::ScratchAllocator>()));  // device workspace, freed after the call

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    JaxAscendSwiGluGradAscend, jas::ffi::SwiGluGradAscendImpl,
    jas::ffi::BindSwiGluGrad(
        ::xla::ffi::Ffi::Bind()
            .Ctx<::xla::ffi::PlatformStream<jas::cann::aclrtStream>>()  // the NPU stream of this call
            .Ctx<::xla::ffi::ScratchAllocator>()));  // CANN's workspace and the pair form's staging, freed after the call

// The operations this backend has (handlers.h).
std::span<const jas::ffi::Registration> jas::ffi::AscendRegistrations() {
  static constexpr Registration kTable[] = {{kSiluGrad, &JaxAscendSiluGradAscend},
                                            {kSwiGluGrad, &JaxAscendSwiGluGradAscend}};
  return kTable;
}
