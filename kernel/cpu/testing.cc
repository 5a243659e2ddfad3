// The executor controls of cpu/testing.h, in the test-only library
// jas_kernel_testing (CMakeLists.txt): the product modules do not carry them.
#include "cpu/testing.h"
#include "cpu/executor.h"

namespace jas {

Status CpuSetRepeatable(CpuExecutor* executor) {
  if (executor == nullptr) return kErrParamNullptr;
  executor->repeatable = true;
  return kSuccess;
}

Status SiluGradSetData(CpuExecutor* executor, const void* grad_output, const void* self, void* grad_input) {
  if (executor == nullptr) return kErrParamNullptr;
  auto* plan = dynamic_cast<GradPlan*>(executor);
  if (plan == nullptr) return kErrParamInvalid;
  plan->grad_output = grad_output;
  plan->self = self;
  plan->grad_input = grad_input;
  return kSuccess;
}

Status CpuSetIsa(CpuExecutor* executor, Isa isa) {
  if (executor == nullptr) return kErrParamNullptr;
  if (!IsaSupported(isa)) return kErrParamInvalid;
  executor->isa = isa;
  return kSuccess;
}

Status CpuSetChunkElements(CpuExecutor* executor, int64_t chunk_elements) {
  if (executor == nullptr) return kErrParamNullptr;
  if (chunk_elements < 1) return kErrParamInvalid;
  executor->chunk_elements = chunk_elements;
  executor->parallel_min_elements = 0;
  executor->cold_parallel_min_elements = 0;
  return kSuccess;
}

}  // namespace jas
