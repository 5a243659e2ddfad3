// What the CUDA kernels' translation units share (SiluGrad's
// silu_grad_cuda.cu with grad.cuh, SwiGluGrad's swiglu_grad_cuda.cu): each dtype's device
// loads and stores, a thread's place in the grid, and the launch machinery
// (the kernels loaded before any launch, persistent grids sized by their
// occupancy). Device code and host launch code; internal to kernel/.
#ifndef JAX_ASCEND_SILU_KERNEL_CUDA_DEVICE_CUH_
#define JAX_ASCEND_SILU_KERNEL_CUDA_DEVICE_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/dtype.h"
#include "common/status.h"
#include "cuda/grid.h"

namespace jas::cuda {

// Each dtype's conversions between 32-bit words of storage and float32.
template <DataType T>
struct Dev;
template <>
struct Dev<DataType::kFloat32> {
  using S = float;
  static constexpr int kPerWord = 1;
  __device__ static void Unpack(uint32_t w, float* f) { f[0] = __uint_as_float(w); }
  __device__ static uint32_t Pack(const float* f) { return __float_as_uint(f[0]); }
  __device__ static float Load1(S v) { return v; }
  __device__ static S Store1(float f) { return f; }  // NaN results are canonical already
  __device__ static bool AnyNan(const uint32_t*, int) { return false; }
  __device__ static uint32_t CanonicalNans(uint32_t w) { return w; }
};
// float16 and bfloat16: two values a word. The device's conversions round to
// nearest even as the CPU's do, but give every NaN the bits 0x7FFF, where
// the CPU kernel's canonical NaN (common/silu_grad_fast.h's CanonicalNan,
// 0x7FC00000, rounded as common/half.h rounds it) has kNan.
template <class H2, uint16_t kNanBits, uint16_t kInfBits>
struct DevHalf {
  using S = uint16_t;
  static constexpr int kPerWord = 2;
  static constexpr uint16_t kNan = kNanBits;
  static constexpr uint16_t kInf = kInfBits;
  // Whether any of `words` words has a NaN half (a sum propagates NaNs; its
  // overflows give a NaN only where two infinities meet: a false alarm, which
  // CanonicalNans then leaves alone).
  __device__ static bool AnyNan(const uint32_t* w, int words) {
    H2 s = Bits2(w[0]);
#pragma unroll
    for (int k = 1; k < words; ++k) s = __hadd2(s, Bits2(w[k]));
    const uint32_t b = Word(s);
    return (b & 0x7fffu) > kInf || ((b >> 16) & 0x7fffu) > kInf;
  }
  __device__ static uint32_t CanonicalNans(uint32_t w) {
    const uint32_t lo = (w & 0x7fffu) > kInf ? kNan : w & 0xffffu;
    const uint32_t hi = ((w >> 16) & 0x7fffu) > kInf ? kNan : w >> 16;
    return lo | hi << 16;
  }
  __device__ static H2 Bits2(uint32_t w) {
    H2 h;
    static_assert(sizeof h == sizeof w);
    memcpy(&h, &w, sizeof w);
    return h;
  }
  __device__ static uint32_t Word(H2 h) {
    uint32_t w;
    memcpy(&w, &h, sizeof w);
    return w;
  }
};
template <>
struct Dev<DataType::kFloat16> : DevHalf<__half2, 0x7e00, 0x7c00> {
  __device__ static void Unpack(uint32_t w, float* f) {
    const float2 v = __half22float2(Bits2(w));
    f[0] = v.x;
    f[1] = v.y;
  }
  __device__ static uint32_t Pack(const float* f) { return Word(__floats2half2_rn(f[0], f[1])); }
  __device__ static float Load1(S v) { return __half2float(__ushort_as_half(v)); }
  __device__ static S Store1(float f) { return f != f ? kNan : __half_as_ushort(__float2half_rn(f)); }
};
template <>
struct Dev<DataType::kBFloat16> : DevHalf<__nv_bfloat162, 0x7fc0, 0x7f80> {
  __device__ static void Unpack(uint32_t w, float* f) {
    f[0] = __uint_as_float(w << 16);
    f[1] = __uint_as_float(w & 0xffff0000u);
  }
  __device__ static uint32_t Pack(const float* f) { return Word(__floats2bfloat162_rn(f[0], f[1])); }
  __device__ static float Load1(S v) { return __uint_as_float(uint32_t{v} << 16); }
  __device__ static S Store1(float f) { return f != f ? kNan : __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
};

// 16 bytes of an operand as 32-bit words. kAlias: an output may overlap an
// input, so plain loads and stores; else loads through the non-coherent
// cache and streaming stores.
union Vec16 {
  uint4 raw;
  uint32_t w[4];
};

template <bool kAlias>
__device__ JAS_ALWAYS_INLINE Vec16 Load16(const void* p) {
  Vec16 v;
  v.raw = kAlias ? *static_cast<const uint4*>(p) : __ldg(static_cast<const uint4*>(p));
  return v;
}
__device__ JAS_ALWAYS_INLINE Vec16 Words16(const uint32_t* w) { return Vec16{.w = {w[0], w[1], w[2], w[3]}}; }
template <bool kAlias>
__device__ JAS_ALWAYS_INLINE void Store16(void* p, const Vec16& v) {
  if constexpr (kAlias) {
    *static_cast<uint4*>(p) = v.raw;
  } else {
    __stcs(static_cast<uint4*>(p), v.raw);
  }
}

// The words of kU loaded vectors (d[k].*member) back to back, for one pack.
template <int kU, class Loaded>
__device__ JAS_ALWAYS_INLINE void Gather(const Loaded* d, Vec16 Loaded::*member, uint32_t* w) {
#pragma unroll
  for (int k = 0; k < kU; ++k) {
#pragma unroll
    for (int j = 0; j < 4; ++j) w[4 * k + j] = (d[k].*member).w[j];
  }
}

inline __device__ Thread ThisThread() { return {blockIdx.x, gridDim.x, threadIdx.x, blockDim.x}; }

// Per kernel: the blocks of kThreads one multiprocessor holds at once, asked
// once (the kernels' code is the same on every device of a process).
template <auto Kernel>
struct KernelInfo {
  static inline std::atomic<int> blocks_per_sm{0};
  static int BlocksPerSm() {  // 0 if it cannot be had
    int b = blocks_per_sm.load(std::memory_order_relaxed);
    if (b > 0) return b;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, Kernel, kThreads, 0) != cudaSuccess) return 0;
    blocks_per_sm.store(b, std::memory_order_relaxed);
    return b;
  }
  // Makes the runtime load the kernel into the current device's context.
  static cudaError_t Load() {
    cudaFuncAttributes attributes;
    if (const cudaError_t e = cudaFuncGetAttributes(&attributes, Kernel); e != cudaSuccess) return e;
    return BlocksPerSm() > 0 ? cudaSuccess : cudaErrorInvalidDeviceFunction;
  }
};

template <auto... Kernels>
cudaError_t LoadAll() {
  cudaError_t first = cudaSuccess;
  for (cudaError_t e : {KernelInfo<Kernels>::Load()...}) {
    if (first == cudaSuccess) first = e;
  }
  return first;
}

// Multiprocessors of each device, asked once per device (0: not yet).
inline constexpr int kKnownDevices = 64;
inline std::atomic<int> sm_counts[kKnownDevices];

// The multiprocessors of the calling thread's current device (0 if unknown):
// cudaGetDevice reads the thread's current device, the attribute is asked
// the first time only.
inline int SmCount() {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  const bool kept = dev >= 0 && dev < kKnownDevices;
  int sms = kept ? sm_counts[dev].load(std::memory_order_relaxed) : 0;
  if (sms > 0) return sms;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) return 0;
  if (kept) sm_counts[dev].store(sms, std::memory_order_relaxed);
  return sms;
}

// The device the calling thread's launches go to, as grid.h sizes grids.
template <auto Kernel>
DeviceShape ShapeFor() {
  return DeviceShape{SmCount(), KernelInfo<Kernel>::BlocksPerSm()};
}

template <auto Kernel, class... Args>
cudaError_t LaunchOn(cudaStream_t stream, int64_t blocks, Args... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(blocks));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  return cudaLaunchKernelEx(&config, Kernel, args...);
}

// Runs `load_of.template operator()<T>()` (which loads one backend's kernels
// for dtype T into the current device's context, returning the first error)
// for every dtype on every visible device, leaving the calling thread's
// current device as it was. "" on success, else why not.
template <class LoadOf>
std::string LoadOnEveryDevice(LoadOf&& load_of) {
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    return std::string("no CUDA device: cudaGetDeviceCount returned ") + cudaGetErrorName(e) + " (" +
           cudaGetErrorString(e) + ")";
  }
  int current = 0;
  if (const cudaError_t e = cudaGetDevice(&current); e != cudaSuccess) {
    return std::string("cudaGetDevice returned ") + cudaGetErrorName(e);
  }
  std::string failure;
  for (int dev = 0; dev < count && failure.empty(); ++dev) {
    cudaError_t e = cudaSetDevice(dev);
    if (e == cudaSuccess) SmCount();  // asked here, before any launch
    for (const DtypeInfo& d : kDtypes) {
      if (e == cudaSuccess) VisitDtype(d.type, [&]<DataType T>() { e = load_of.template operator()<T>(); });
    }
    if (e != cudaSuccess) {
      failure = "loading the kernels on device " + std::to_string(dev) + " failed: " + cudaGetErrorName(e) +
                " (" + cudaGetErrorString(e) + ")";
    }
  }
  cudaSetDevice(current);
  return failure;
}

// Phase 2's launch for `dtype`: `launch_of.template operator()<T>()` returns
// the launch call's code. kErrParamInvalid for a dtype outside the table;
// kErrRuntime for a failed launch call, its code put in *launch_error (when
// not null).
template <class LaunchOf>
Status LaunchFor(DataType dtype, cudaError_t* launch_error, LaunchOf&& launch_of) {
  cudaError_t err = cudaSuccess;
  if (!VisitDtype(dtype, [&]<DataType T>() { err = launch_of.template operator()<T>(); })) {
    return kErrParamInvalid;
  }
  if (err != cudaSuccess) {
    if (launch_error != nullptr) *launch_error = err;
    return kErrRuntime;
  }
  return kSuccess;
}

}  // namespace jas::cuda

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_DEVICE_CUH_
