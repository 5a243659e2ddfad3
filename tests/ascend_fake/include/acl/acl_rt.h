/* Declaration of the ACL runtime stream type (see acl_base.h): test fake. */
#ifndef JAX_ASCEND_SILU_FAKE_ACL_ACL_RT_H_
#define JAX_ASCEND_SILU_FAKE_ACL_ACL_RT_H_

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void *aclrtStream;

#ifdef __cplusplus
}
#endif

#endif /* JAX_ASCEND_SILU_FAKE_ACL_ACL_RT_H_ */
