// SwiGluGrad: the gradient of SwiGLU, out = silu(A) * B, modelled on Ascend
// CANN's aclnnSwiGluGrad. For the cotangent yGrad of `out`:
//   dA = yGrad * B * s'(A),   dB = yGrad * silu(A),   silu(A) = A * sigmoid(A).
// Two layouts, one arithmetic (common/swiglu_grad_math.h):
//   packed (CANN's): x = [A | B], the halves of x along `dim`; the result is
//     [dA | dB] in x's shape; yGrad is x's shape with dims[dim] halved;
//   pair: A and B separate, of yGrad's shape, and so are dA and dB.
// One dtype for every tensor (common/dtype.h); the half types are computed in
// float32 and rounded once. Ranks 1..kMaxRank packed (0..kMaxRank pair);
// dims[dim] even; dim in [-rank, rank - 1]; no empty tensors (as CANN);
// dense row-major views (null strides, or the row-major ones), each within
// its storage. The results may be written over the inputs, element for
// element (out over x, dA over A, dB over B), and over nothing else.
// Each backend's two phases are SiluGrad's (silu_grad.h): phase 1 below, phase
// 2 the backend's one (cpu/backend.h, cuda/backend.h); Ascend runs CANN's
// own operator (ascend/glue.h).
#ifndef JAX_ASCEND_SILU_KERNEL_SWIGLU_GRAD_H_
#define JAX_ASCEND_SILU_KERNEL_SWIGLU_GRAD_H_

#include <cstdint>
#include <string>

#include "tensor.h"

namespace jas {

// The checked operands: `outer` rows of `inner` elements per half (packed:
// row r of A starts at element r * 2 * inner of x, of B at r * 2 * inner +
// inner; pair: one row of every element). Element offsets applied.
struct SwiGluLayout {
  DataType dtype = DataType::kFloat32;
  bool packed = true;
  int64_t outer = 0, inner = 0;
  // Elements between consecutive rows of A, B, dA and dB (2 * inner packed).
  int64_t row = 0;
  const void* y_grad = nullptr;
  const void* a = nullptr;
  const void* b = nullptr;
  void* grad_a = nullptr;
  void* grad_b = nullptr;
  int64_t numel() const { return outer * inner; }
};

// kErrParamNullptr for a null descriptor, null dims of a rank > 0 or a null
// data pointer; kErrParamInvalid for anything else outside the contract
// above. On failure *why says what and what to do (why may be null).
Status CheckSwiGluPacked(const TensorDesc* y_grad, const TensorDesc* x, int64_t dim, const TensorDesc* out,
                         SwiGluLayout* layout, std::string* why);
Status CheckSwiGluPair(const TensorDesc* y_grad, const TensorDesc* a, const TensorDesc* b, const TensorDesc* grad_a,
                       const TensorDesc* grad_b, SwiGluLayout* layout, std::string* why);

// Phase 1 on the CPU, packed (aclnnSwiGluGradGetWorkspaceSize's signature):
// x = [A | B] along `dim`, out = [dA | dB]. The workspace is always 0 bytes.
Status SwiGluGradGetWorkspaceSize(const TensorDesc* y_grad, const TensorDesc* x, int64_t dim, const TensorDesc* out,
                                  uint64_t* workspace_size, CpuExecutor** executor);
// Phase 1 on the CPU, pair: A and B separate, dA and dB likewise.
Status SwiGluGradPairGetWorkspaceSize(const TensorDesc* y_grad, const TensorDesc* a, const TensorDesc* b,
                                      const TensorDesc* grad_a, const TensorDesc* grad_b, uint64_t* workspace_size,
                                      CpuExecutor** executor);

// The same two on NVIDIA GPUs, for CudaRun (host only, nothing touches the
// device; `data` pointers are device pointers). The workspace is always 0
// bytes.
Status SwiGluGradCudaGetWorkspaceSize(const TensorDesc* y_grad, const TensorDesc* x, int64_t dim,
                                      const TensorDesc* out, uint64_t* workspace_size, CudaExecutor** executor);
Status SwiGluGradCudaPairGetWorkspaceSize(const TensorDesc* y_grad, const TensorDesc* a, const TensorDesc* b,
                                          const TensorDesc* grad_a, const TensorDesc* grad_b,
                                          uint64_t* workspace_size, CudaExecutor** executor);

// Loads every kernel CudaRun may launch for SwiGluGrad on each visible
// device, as SiluGradCudaLoadKernels does for SiluGrad's. "" on success,
// else why not.
std::string SwiGluGradCudaLoadKernels();

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_SWIGLU_GRAD_H_
