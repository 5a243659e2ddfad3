// JAS_HOST_DEVICE marks functions that also compile as CUDA device code, so
// the GPU runs the very same source as the CPU (and the host tests).
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_HOST_DEVICE_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_HOST_DEVICE_H_

#if defined(__CUDACC__)
#define JAS_HOST_DEVICE __host__ __device__
#else
#define JAS_HOST_DEVICE
#endif

// The per-vector formula is inlined into the loops (so two vectors' work
// interleaves and constants stay in registers); its rare paths are not, so
// they do not crowd the common one.
#if defined(__CUDACC__)
#define JAS_ALWAYS_INLINE __forceinline__
#define JAS_NOINLINE __noinline__
#elif defined(__GNUC__)
#define JAS_ALWAYS_INLINE inline __attribute__((always_inline))
#define JAS_NOINLINE __attribute__((noinline))
#else
#define JAS_ALWAYS_INLINE inline
#define JAS_NOINLINE
#endif

// Constant tables the formulas index at run time: device memory in CUDA
// code (internal linkage there, as nvcc's whole-program mode requires).
#if defined(__CUDACC__)
#define JAS_TABLE static __device__ constexpr
#else
#define JAS_TABLE inline constexpr
#endif

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_HOST_DEVICE_H_
