/* The two-phase aclnnSiluBackward API (libopapi), declared from its public
 * documentation: test fake (see acl/acl_base.h). */
#ifndef JAX_ASCEND_SILU_FAKE_ACLNNOP_ACLNN_SILU_BACKWARD_H_
#define JAX_ASCEND_SILU_FAKE_ACLNNOP_ACLNN_SILU_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the tensors, returns the device workspace bytes phase 2
 * needs and the executor that carries the planned computation. */
aclnnStatus aclnnSiluBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                              aclTensor *gradInput, uint64_t *workspaceSize,
                                              aclOpExecutor **executor);

/* Phase 2: runs the executor on the stream with the workspace. */
aclnnStatus aclnnSiluBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                              aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* JAX_ASCEND_SILU_FAKE_ACLNNOP_ACLNN_SILU_BACKWARD_H_ */
