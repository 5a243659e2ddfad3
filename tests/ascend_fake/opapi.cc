// THIS IS A FAKE, NOT CANN (see fake_cann.h): the operator library, built as
// libopapi_nn.so (CANN 8.5 and later), as libopapi.so (older) and as a custom
// operator package's libcust_opapi.so; FAKE_CANN_OPERATOR_TAG names the build
// in the record, so tests see which one served a call. FAKE_CANN_NO_SWIGLU:
// a library without aclnnSwiGluGrad (a CANN before 8.0.RC1, or a custom
// package of SiluGrad alone); FAKE_CANN_NO_PHASE2: without either phase 2.
#include <type_traits>

#include "fake_cann.h"

namespace cann = jas::cann;

extern "C" {

cann::aclnnStatus aclnnSiluBackwardGetWorkspaceSize(const cann::aclTensor* gradOutput, const cann::aclTensor* self,
                                                    cann::aclTensor* gradInput, uint64_t* workspaceSize,
                                                    cann::aclOpExecutor** executor) {
  fake_cann::impl::NoteOperatorLibrary(FAKE_CANN_OPERATOR_TAG);
  return fake_cann::impl::GetWorkspaceSize(gradOutput, self, gradInput, workspaceSize, executor);
}

#ifndef FAKE_CANN_NO_PHASE2  // a half-installed CANN: the library without the function
cann::aclnnStatus aclnnSiluBackward(void* workspace, uint64_t workspaceSize, cann::aclOpExecutor* executor,
                                    cann::aclrtStream stream) {
  return fake_cann::impl::Run("SiluBackward", workspace, workspaceSize, executor, stream);
}
#endif

#ifndef FAKE_CANN_NO_SWIGLU
cann::aclnnStatus aclnnSwiGluGradGetWorkspaceSize(const cann::aclTensor* yGrad, const cann::aclTensor* x, int64_t dim,
                                                  const cann::aclTensor* out, uint64_t* workspaceSize,
                                                  cann::aclOpExecutor** executor) {
  fake_cann::impl::NoteOperatorLibrary(FAKE_CANN_OPERATOR_TAG);
  return fake_cann::impl::SwiGluGradGetWorkspaceSize(yGrad, x, dim, out, workspaceSize, executor);
}
#ifndef FAKE_CANN_NO_PHASE2
cann::aclnnStatus aclnnSwiGluGrad(void* workspace, uint64_t workspaceSize, cann::aclOpExecutor* executor,
                                  cann::aclrtStream stream) {
  return fake_cann::impl::Run("SwiGluGrad", workspace, workspaceSize, executor, stream);
}
#endif
#endif

}  // extern "C"

// The exports have the declared types (cann.h), which CI checks against CANN's headers.
static_assert(std::is_same_v<decltype(aclnnSiluBackwardGetWorkspaceSize),
                             cann::aclnnSiluBackwardGetWorkspaceSizeFn>);
#ifndef FAKE_CANN_NO_PHASE2
static_assert(std::is_same_v<decltype(aclnnSiluBackward), cann::aclnnSiluBackwardFn>);
#endif
#if !defined(FAKE_CANN_NO_SWIGLU)
static_assert(std::is_same_v<decltype(aclnnSwiGluGradGetWorkspaceSize), cann::aclnnSwiGluGradGetWorkspaceSizeFn>);
#if !defined(FAKE_CANN_NO_PHASE2)
static_assert(std::is_same_v<decltype(aclnnSwiGluGrad), cann::aclnnSwiGluGradFn>);
#endif
#endif
