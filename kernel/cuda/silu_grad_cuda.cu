// SiluGrad on the CUDA backend: its arithmetic (common/silu_grad_math.h)
// for the kernels every gradient g * f'(x) shares (grad.cuh), and its phase 1
// (that plan, plan.cc, with those kernels).
#include <string>

#include "common/silu_grad_math.h"
#include "cuda/backend.h"
#include "cuda/executor.h"
#include "cuda/grad.cuh"
#include "silu_grad.h"

namespace jas {
namespace {

// grad_output * s'(x) for dtype T over the lanes V, as the CPU kernel's
// block.h Silu computes it.
struct Silu {
  template <DataType T, class V>
  static __device__ JAS_ALWAYS_INLINE typename V::F Grad(typename V::F g, typename V::F x) {
    if constexpr (T == DataType::kFloat32) {
      return math::GradF32<V>(g, x);
    } else {
      return math::GradHalf<V, T == DataType::kFloat16>(g, x);
    }
  }
};

}  // namespace

std::string SiluGradCudaLoadKernels() { return cuda::LoadGradKernels<Silu>(); }

Status SiluGradCudaGetWorkspaceSize(const TensorDesc* grad_output, const TensorDesc* self,
                                    const TensorDesc* grad_input, uint64_t* workspace_size,
                                    CudaExecutor** executor) {
  return PlanGradCuda(&cuda::LaunchGrad<Silu>, grad_output, self, grad_input, workspace_size, executor);
}

}  // namespace jas
