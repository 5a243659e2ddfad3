// JAS_HOST_DEVICE marks functions that also compile as CUDA device code, so
// the GPU runs the very same source as the CPU (and the host tests).
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_HOST_DEVICE_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_HOST_DEVICE_H_

#if defined(__CUDACC__)
#define JAS_HOST_DEVICE __host__ __device__
#else
#define JAS_HOST_DEVICE
#endif

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_HOST_DEVICE_H_
