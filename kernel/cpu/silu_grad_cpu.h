// The CPU backend's header under its earlier name: cpu/backend.h, with the
// contracts whose CPU phase 1 it used to declare. Files that include it by
// this name (cpu/helpers.h, cpu/environment.h, the tests' thread pool) see
// the same declarations.
#ifndef JAX_ASCEND_SILU_KERNEL_CPU_SILU_GRAD_CPU_H_
#define JAX_ASCEND_SILU_KERNEL_CPU_SILU_GRAD_CPU_H_

#include "cpu/backend.h"
#include "silu_grad.h"
#include "swiglu_grad.h"

#endif  // JAX_ASCEND_SILU_KERNEL_CPU_SILU_GRAD_CPU_H_
