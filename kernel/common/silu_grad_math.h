// The SiluGrad arithmetic, written once over a vector-ops type V
// (kernel/cpu/simd_*.h, kernel/cuda/simd_cuda.cuh):
//   silu_grad_general.h  any input, s'(x) finished in double or float
//   silu_grad_fast.h     e^x and 1 + x + e^x by table, the lane tests
//   silu_grad_f32.h      float32 results (compensated quotient)
//   silu_grad_half.h     bfloat16 and float16 results
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_MATH_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_MATH_H_

#include "common/silu_grad_f32.h"
#include "common/silu_grad_half.h"

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_MATH_H_
