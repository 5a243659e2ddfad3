// THIS IS A FAKE, NOT CANN. A host-memory stand-in for the handful of CANN
// functions the Ascend glue calls (aclCreateTensor, aclDestroyTensor,
// aclnnSiluBackwardGetWorkspaceSize, aclnnSiluBackward, aclGetRecentErrMsg),
// so the glue can be linked and tested on machines without Ascend hardware or
// the toolkit. Tensors describe host memory; the "operator" runs this
// package's own CPU kernel (kernel/silu_grad.h) synchronously; the stream is
// only recorded. It checks what the documentation promises callers must
// respect (ranks 1..8, ND format, a non-null workspace when its size is
// non-zero, executors used once) and records every call for the tests.
//
// This header is the fake's control panel, used by tests only.
#ifndef JAX_ASCEND_SILU_TESTS_ASCEND_FAKE_FAKE_CANN_H_
#define JAX_ASCEND_SILU_TESTS_ASCEND_FAKE_FAKE_CANN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_silu_backward.h"

namespace fake_cann {

struct Mode {
  uint64_t extra_workspace = 0;  // bytes phase 1 reports on top of what the kernel needs
  aclnnStatus phase1_status = 0;  // non-zero: aclnnSiluBackwardGetWorkspaceSize fails with it
  aclnnStatus phase2_status = 0;  // non-zero: aclnnSiluBackward fails with it
  int fail_create_tensor_call = -1;  // index (from 0) of the aclCreateTensor call that returns null
};

struct TensorRecord {
  aclDataType dtype;
  aclFormat format;
  std::vector<int64_t> dims, strides, storage_dims;
  int64_t offset;
  void* data;
};

struct Record {
  std::vector<TensorRecord> created;  // every aclCreateTensor call that succeeded, in order
  int create_calls = 0;
  int destroyed = 0;
  int64_t live_tensors = 0;           // created and not yet destroyed
  int phase1_calls = 0;
  int phase2_calls = 0;
  std::vector<const void*> executors_issued;  // by phase 1
  std::vector<const void*> executors_run;     // handed to phase 2
  void* workspace = nullptr;                  // last phase 2 arguments
  uint64_t workspace_size = 0;
  aclrtStream stream = nullptr;
  bool extra_workspace_written = false;       // the fake wrote its extra bytes (proves they were usable)
};

// Clears the record and sets the mode for the next calls. Executors issued
// and never run are released here (the documented API has no call for it).
void Reset(const Mode& mode = {});
const Record& Calls();
// Executors issued by phase 1 and not yet run.
int64_t LiveExecutors();

}  // namespace fake_cann

#endif  // JAX_ASCEND_SILU_TESTS_ASCEND_FAKE_FAKE_CANN_H_
