// The executor controls of cpu/testing.h, in the test-only library
// jas_kernel_testing (CMakeLists.txt): the product modules do not carry them.
#include "cpu/testing.h"
#include "cpu/executor.h"

namespace jas {

Status SiluGradSetRepeatable(SiluGradExecutor* executor) {
  if (executor == nullptr) return kErrParamNullptr;
  executor->repeatable = true;
  return kSuccess;
}

Status SiluGradSetData(SiluGradExecutor* executor, const void* grad_output, const void* self,
                       void* grad_input) {
  if (executor == nullptr) return kErrParamNullptr;
  executor->grad_output = grad_output;
  executor->self = self;
  executor->grad_input = grad_input;
  return kSuccess;
}

namespace {

template <class Executor>
Status SetIsa(Executor* executor, Isa isa) {
  if (executor == nullptr) return kErrParamNullptr;
  if (!IsaSupported(isa)) return kErrParamInvalid;
  executor->isa = isa;
  return kSuccess;
}

template <class Executor>
Status SetChunkElements(Executor* executor, int64_t chunk_elements) {
  if (executor == nullptr) return kErrParamNullptr;
  if (chunk_elements < 1) return kErrParamInvalid;
  executor->chunk_elements = chunk_elements;
  executor->parallel_min_elements = 0;
  executor->cold_parallel_min_elements = 0;
  return kSuccess;
}

}  // namespace

Status SiluGradSetIsa(SiluGradExecutor* executor, Isa isa) { return SetIsa(executor, isa); }
Status SiluGradSetChunkElements(SiluGradExecutor* executor, int64_t chunk_elements) {
  return SetChunkElements(executor, chunk_elements);
}
Status SwiGluGradSetIsa(SwiGluGradExecutor* executor, Isa isa) { return SetIsa(executor, isa); }
Status SwiGluGradSetChunkElements(SwiGluGradExecutor* executor, int64_t chunk_elements) {
  return SetChunkElements(executor, chunk_elements);
}

}  // namespace jas
