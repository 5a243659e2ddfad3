/* Declarations of the CANN base types this package uses, written from CANN's
 * public documentation so the Ascend glue compiles without the toolkit. Only
 * what the glue needs is declared; values are CANN's. Part of the test fake:
 * a real build uses the toolkit's own headers. */
#ifndef JAX_ASCEND_SILU_FAKE_ACL_ACL_BASE_H_
#define JAX_ASCEND_SILU_FAKE_ACL_ACL_BASE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int aclError;
#define ACL_SUCCESS 0

typedef enum {
  ACL_FLOAT = 0,
  ACL_FLOAT16 = 1,
  ACL_DOUBLE = 11,
  ACL_BF16 = 27,
} aclDataType;

typedef enum {
  ACL_FORMAT_ND = 2,
} aclFormat;

/* The last error message recorded by CANN on this thread (libascendcl). */
const char *aclGetRecentErrMsg();

#ifdef __cplusplus
}
#endif

#endif /* JAX_ASCEND_SILU_FAKE_ACL_ACL_BASE_H_ */
