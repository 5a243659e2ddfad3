/* The aclnn base header, reduced to what this package uses: test fake (see
 * acl/acl_base.h). */
#ifndef JAX_ASCEND_SILU_FAKE_ACLNN_ACLNN_BASE_H_
#define JAX_ASCEND_SILU_FAKE_ACLNN_ACLNN_BASE_H_

#include "acl/acl_rt.h"
#include "aclnn/acl_meta.h"

#endif /* JAX_ASCEND_SILU_FAKE_ACLNN_ACLNN_BASE_H_ */
