// What phase 1 must answer for three descriptors, worked out apart from the
// kernel and in 128-bit arithmetic, so no element count or extent can wrap.
#ifndef JAX_ASCEND_SILU_TESTS_KERNEL_FUZZ_PHASE1_ORACLE_H_
#define JAX_ASCEND_SILU_TESTS_KERNEL_FUZZ_PHASE1_ORACLE_H_

#include <cstdint>

#include "cpu/backend.h"
#include "silu_grad.h"

namespace jas::fuzz {

using Wide = __int128;

struct Verdict {
  // The status codes phase 1 may return. Usually exactly one is allowed; both
  // error codes when a null dims array comes with other faults (which fault is
  // reported first is the kernel's choice), success or 161002 when the output
  // may overlap itself and is too large to enumerate, or is safe but laid out
  // in a way a conservative overlap test may refuse.
  bool success = false;
  bool null_pointer = false;
  bool invalid = false;
  // Element counts, when the shapes could be read (else -1).
  Wide out_numel = -1;
  Wide self_numel = -1;

  bool Allows(Status s) const {
    return (s == kSuccess && success) || (s == kErrParamNullptr && null_pointer) ||
           (s == kErrParamInvalid && invalid);
  }
};

// `outputs_present`: whether the workspace-size and executor out-pointers are non-null.
Verdict JudgePhase1(const TensorDesc* grad_output, const TensorDesc* self, const TensorDesc* grad_input,
                    bool outputs_present);

// The view's element count in 128 bits (0 if a dim is 0), or -1 if a dim is negative.
Wide WideNumel(const int64_t* dims, int64_t rank);

// Storage index of the view element at `index` (right-aligned in an output of
// rank `out_rank`; size-1 dims broadcast). Strides null means row-major.
int64_t StorageIndex(const TensorDesc& d, const int64_t* index, int64_t out_rank);

}  // namespace jas::fuzz

#endif  // JAX_ASCEND_SILU_TESTS_KERNEL_FUZZ_PHASE1_ORACLE_H_
