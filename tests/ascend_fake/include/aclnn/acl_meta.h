/* Declarations of the aclnn tensor API (libnnopbase) this package uses,
 * written from CANN's public documentation: test fake (see acl/acl_base.h). */
#ifndef JAX_ASCEND_SILU_FAKE_ACLNN_ACL_META_H_
#define JAX_ASCEND_SILU_FAKE_ACLNN_ACL_META_H_

#include <stdint.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0 is success; see the aclnn return codes. */
typedef int32_t aclnnStatus;

typedef struct aclTensor aclTensor;
typedef struct aclOpExecutor aclOpExecutor;

/* A view of device memory: viewDims with element strides and an element
 * offset (all non-negative), over storage of shape storageDims at tensorData. */
aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t *stride, int64_t offset, aclFormat format,
                           const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData);

aclnnStatus aclDestroyTensor(const aclTensor *tensor);

#ifdef __cplusplus
}
#endif

#endif /* JAX_ASCEND_SILU_FAKE_ACLNN_ACL_META_H_ */
