/* The ACL umbrella header, reduced to the declarations this package uses
 * (see acl_base.h): test fake. */
#ifndef JAX_ASCEND_SILU_FAKE_ACL_ACL_H_
#define JAX_ASCEND_SILU_FAKE_ACL_ACL_H_

#include "acl/acl_base.h"
#include "acl/acl_rt.h"

#endif /* JAX_ASCEND_SILU_FAKE_ACL_ACL_H_ */
