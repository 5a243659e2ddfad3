// The Ascend handler: XLA's device buffers and stream handed to the Ascend
// glue (glue.h), which runs CANN's aclnnSiluBackward; the workspace
// comes from XLA's scratch allocator. Registered for platform "ASCEND".
#include <string>

#include "acl/acl.h"
#include "error.h"
#include "glue.h"
#include "handlers.h"
#include "tensor_desc.h"
#include "workspace.h"
#include "xla/ffi/api/ffi.h"

namespace jas::ffi {
namespace {

bool AclType(xffi::DataType t, aclDataType* out) {
  switch (t) {
    case xffi::DataType::F32: *out = ACL_FLOAT; return true;
    case xffi::DataType::F16: *out = ACL_FLOAT16; return true;
    case xffi::DataType::BF16: *out = ACL_BF16; return true;
    default: return false;
  }
}

void* AllocateFromScratch(void* scratch, uint64_t bytes) {
  return ScratchAllocate(*static_cast<xffi::ScratchAllocator*>(scratch), bytes);
}

xffi::Error SiluGradAscendImpl(aclrtStream stream, xffi::ScratchAllocator scratch,
                               xffi::AnyBuffer grad_output, xffi::AnyBuffer self,
                               xffi::Result<xffi::AnyBuffer> grad_input) {
  const xffi::AnyBuffer* buffers[3] = {&grad_output, &self, &(*grad_input)};
  ascend::Operand ops[3];
  for (int i = 0; i < 3; ++i) {
    if (!AclType(buffers[i]->element_type(), &ops[i].dtype)) {
      return xffi::Error::InvalidArgument("jax_ascend_silu: SiluGrad on Ascend takes float32, float16 or "
                                          "bfloat16; got " + OperandsString(grad_output, self, *grad_input));
    }
    ops[i].rank = static_cast<int64_t>(buffers[i]->dimensions().size());
    ops[i].dims = buffers[i]->dimensions().begin();
    ops[i].data = buffers[i]->untyped_data();
  }
  const ascend::WorkspaceSource workspace{&scratch, &AllocateFromScratch};
  return ascend::ToFfiError(ascend::SiluBackward(stream, workspace, ops[0], ops[1], ops[2]));
}

}  // namespace
}  // namespace jas::ffi

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    JaxAscendSiluGradAscend, jas::ffi::SiluGradAscendImpl,
    ::xla::ffi::Ffi::Bind()
        .Ctx<::xla::ffi::PlatformStream<aclrtStream>>()  // the NPU stream XLA runs this call on
        .Ctx<::xla::ffi::ScratchAllocator>()              // device workspace, freed after the call
        .Arg<::xla::ffi::AnyBuffer>()                     // grad_output: F32/F16/BF16, broadcastable
        .Arg<::xla::ffi::AnyBuffer>()                     // self (x, the forward input), broadcastable
        .Ret<::xla::ffi::AnyBuffer>());                   // grad_input: the broadcast shape
