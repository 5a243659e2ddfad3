// Phase 2 of the CUDA backend: the device kernels and their launch.
//
// Two kernels over the plan of plan.cc, each a walk of grid.h on a persistent
// grid (as many blocks as the device holds at once):
//  - contiguous operands: one flat grid-stride loop with 16-byte loads and
//    stores (4 float32 or 8 half values), two vectors per thread and pass, the
//    next pass's loaded before this one's are computed, then the tail;
//  - anything else (broadcast, strided): items of up to 32 bytes' worth of
//    consecutive elements of a row, each item's offsets from its index by
//    precomputed division; 16-byte accesses where the row is contiguous.
// The arithmetic is silu_grad_math.h over simd::PackLane: one warp decides
// its rare paths once per pack. Half types are computed in float32 and
// rounded once to nearest even, NaN results given the CPU kernel's bits.
// Operands that may overlap (an output written in place over an input) get
// plain loads and stores; others read through the non-coherent cache and
// write with streaming stores. Indexing is 64-bit.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "common/silu_grad_math.h"
#include "cuda/device.cuh"
#include "cuda/executor.h"
#include "cuda/grid.h"
#include "cuda/silu_grad_cuda.h"
#include "cuda/simd_cuda.cuh"

namespace jas {
namespace {

using namespace cuda;  // the walks and launch shapes

// grad_output * s'(x) for N elements of one thread, as the CPU kernel's full
// mode computes each (kernel/cpu/block.h).
template <DataType T, int N>
__device__ JAS_ALWAYS_INLINE void Grad(const float* g, const float* x, float* r) {
  using V = simd::PackLane<N>;
  typename V::F gv, xv;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    gv.v[k] = g[k];
    xv.v[k] = x[k];
  }
  typename V::F rv;
  if constexpr (T == DataType::kFloat32) {
    rv = math::GradF32<V>(gv, xv);
  } else {
    rv = math::GradHalf<V, T == DataType::kFloat16>(gv, xv);
  }
#pragma unroll
  for (int k = 0; k < N; ++k) r[k] = rv.v[k];
}

// kWords 32-bit words of each input in, as many out: `packs` packs of
// kWords / packs words each, every pack's rare paths decided by one vote.
template <DataType T, int kWords, int kPacks = 1>
__device__ JAS_ALWAYS_INLINE void GradWords(const uint32_t* g, const uint32_t* x, uint32_t* out) {
  using E = Dev<T>;
  constexpr int kPer = E::kPerWord;
  constexpr int kN = kWords * kPer / kPacks;
#pragma unroll
  for (int p = 0; p < kPacks; ++p) {
    float gf[kN], xf[kN], rf[kN];
#pragma unroll
    for (int w = 0; w < kN / kPer; ++w) {
      E::Unpack(g[p * kN / kPer + w], gf + w * kPer);
      E::Unpack(x[p * kN / kPer + w], xf + w * kPer);
    }
    Grad<T, kN>(gf, xf, rf);
#pragma unroll
    for (int w = 0; w < kN / kPer; ++w) out[p * kN / kPer + w] = E::Pack(rf + w * kPer);
  }
  if (E::AnyNan(out, kWords)) {
#pragma unroll
    for (int w = 0; w < kWords; ++w) out[w] = E::CanonicalNans(out[w]);
  }
}

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
template <bool kAlias>
__device__ JAS_ALWAYS_INLINE void Store16(void* p, const Vec16& v) {
  if constexpr (kAlias) {
    *static_cast<uint4*>(p) = v.raw;
  } else {
    __stcs(static_cast<uint4*>(p), v.raw);
  }
}

template <DataType T>
__device__ JAS_ALWAYS_INLINE typename Dev<T>::S Element(typename Dev<T>::S g, typename Dev<T>::S x) {
  const float gf = Dev<T>::Load1(g), xf = Dev<T>::Load1(x);
  float r;
  Grad<T, 1>(&gf, &xf, &r);
  return Dev<T>::Store1(r);
}


// Operands may alias when kAlias (an output written in place over an input):
// every element is read before its own slot is written, and by the same thread.
template <DataType T, bool kVector, bool kAlias>
__global__ void __launch_bounds__(kThreads)
    FlatKernel(const typename Dev<T>::S* g_in, const typename Dev<T>::S* x_in, typename Dev<T>::S* out_in,
               int64_t n) {
  using S = typename Dev<T>::S;
  // Promised not to overlap only where they do not.
  using In = std::conditional_t<kAlias, const S*, const S* __restrict__>;
  using Out = std::conditional_t<kAlias, S*, S* __restrict__>;
  const In g = g_in;
  const In x = x_in;
  const Out out = out_in;
  constexpr int kVec = 16 / sizeof(S);
  struct Loaded {
    Vec16 g, x;
  };
  FlatWalk(
      ThisThread(), n, kVector ? kVec : 1,
      [&](int64_t i) { return Loaded{Load16<kAlias>(g + i * kVec), Load16<kAlias>(x + i * kVec)}; },
      [&](int64_t i0, const Loaded& a, int64_t i1, const Loaded& b) {
        const uint32_t gw[8] = {a.g.w[0], a.g.w[1], a.g.w[2], a.g.w[3], b.g.w[0], b.g.w[1], b.g.w[2], b.g.w[3]};
        const uint32_t xw[8] = {a.x.w[0], a.x.w[1], a.x.w[2], a.x.w[3], b.x.w[0], b.x.w[1], b.x.w[2], b.x.w[3]};
        uint32_t ow[8];
        GradWords<T, 8, T == DataType::kFloat32 ? 1 : 2>(gw, xw, ow);
        Store16<kAlias>(out + i0 * kVec, Vec16{.w = {ow[0], ow[1], ow[2], ow[3]}});
        Store16<kAlias>(out + i1 * kVec, Vec16{.w = {ow[4], ow[5], ow[6], ow[7]}});
      },
      [&](int64_t i, const Loaded& a) {
        Vec16 o;
        GradWords<T, 4>(a.g.w, a.x.w, o.w);
        Store16<kAlias>(out + i * kVec, o);
      },
      [&](int64_t i) { out[i] = Element<T>(g[i], x[i]); });
}

template <DataType T, bool kWide>
__global__ void __launch_bounds__(kThreads)
    BroadcastKernel(const typename Dev<T>::S* g, const typename Dev<T>::S* x, typename Dev<T>::S* out,
                    BroadcastLayout l) {
  using E = Dev<T>;
  using S = typename E::S;
  constexpr int kVec = 16 / sizeof(S);
  constexpr int kWidth = 2 * kVec;  // BroadcastWidth
  const S* in[2] = {g, x};
  BroadcastWalk<kWide>(ThisThread(), l, [&](const int64_t* o, int64_t count) {
    if (l.vector) {  // the same for every item: no divergence
      uint32_t w[2][8];
#pragma unroll
      for (int op = 0; op < 2; ++op) {
        if (l.inner_strides[op] == 1) {
          const Vec16 a = Load16<true>(in[op] + o[op]), b = Load16<true>(in[op] + o[op] + kVec);
#pragma unroll
          for (int k = 0; k < 4; ++k) {
            w[op][k] = a.w[k];
            w[op][4 + k] = b.w[k];
          }
        } else {  // one element for the whole item
          const S s = in[op][o[op]];
          uint32_t v;
          if constexpr (E::kPerWord == 1) {
            v = __float_as_uint(s);
          } else {
            v = uint32_t{s} | uint32_t{s} << 16;
          }
#pragma unroll
          for (int k = 0; k < 8; ++k) w[op][k] = v;
        }
      }
      uint32_t r[8];
      GradWords<T, 8, T == DataType::kFloat32 ? 1 : 2>(w[0], w[1], r);
      Store16<true>(out + o[2], Vec16{.w = {r[0], r[1], r[2], r[3]}});
      Store16<true>(out + o[2] + kVec, Vec16{.w = {r[4], r[5], r[6], r[7]}});
      return;
    }
    S a[kWidth] = {}, b[kWidth] = {};  // lanes past `count` compute zeros, never stored
    for (int k = 0; k < count; ++k) {
      a[k] = g[o[0] + k * l.inner_strides[0]];
      b[k] = x[o[1] + k * l.inner_strides[1]];
    }
    float gf[kWidth], xf[kWidth], rf[kWidth];
#pragma unroll
    for (int k = 0; k < kWidth; ++k) {
      gf[k] = E::Load1(a[k]);
      xf[k] = E::Load1(b[k]);
    }
    Grad<T, kWidth>(gf, xf, rf);
    for (int k = 0; k < count; ++k) out[o[2] + k * l.inner_strides[2]] = E::Store1(rf[k]);
  });
}


// Every kernel Launch may launch for dtype T.
template <DataType T>
cudaError_t LoadKernelsOf() {
  return LoadAll<&FlatKernel<T, true, false>, &FlatKernel<T, true, true>, &FlatKernel<T, false, false>,
                 &FlatKernel<T, false, true>, &BroadcastKernel<T, false>, &BroadcastKernel<T, true>>();
}


// [first, last) byte range operand `op` of the plan touches.
struct Range {
  uintptr_t first, last;
};
Range Touched(const SiluGradCudaExecutor& e, int op, const void* data) {
  int64_t last = e.offsets[op];
  for (int64_t d = 0; d < e.loop.rank; ++d) last += (e.loop.dims[d] - 1) * e.loop.strides[op][d];
  const auto elem = static_cast<uintptr_t>(ElementBytes(e.dtype));
  const auto base = reinterpret_cast<uintptr_t>(data);
  return {base + static_cast<uintptr_t>(e.offsets[op]) * elem, base + static_cast<uintptr_t>(last + 1) * elem};
}
bool Overlap(Range a, Range b) { return a.first < b.last && b.first < a.last; }

bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <DataType T, bool kVector, bool kAlias>
cudaError_t LaunchFlat(cudaStream_t stream, const typename Dev<T>::S* g, const typename Dev<T>::S* x,
                       typename Dev<T>::S* out, int64_t n) {
  constexpr auto kKernel = &FlatKernel<T, kVector, kAlias>;
  constexpr int64_t kVec = kVector ? 16 / sizeof(typename Dev<T>::S) : 1;
  return LaunchOn<kKernel>(stream, FlatLaunch(n, kVec, ShapeFor<kKernel>()), g, x, out, n);
}

template <DataType T>
cudaError_t Launch(const SiluGradCudaExecutor& e, cudaStream_t stream) {
  using S = typename Dev<T>::S;
  const S* g = static_cast<const S*>(e.grad_output) + e.offsets[0];
  const S* x = static_cast<const S*>(e.self) + e.offsets[1];
  S* out = static_cast<S*>(e.grad_input) + e.offsets[2];
  const Range wrote = Touched(e, 2, e.grad_input);
  const bool alias = Overlap(wrote, Touched(e, 0, e.grad_output)) || Overlap(wrote, Touched(e, 1, e.self));
  if (e.contiguous) {
    const bool vector = Aligned16(g) && Aligned16(x) && Aligned16(out);
    if (vector) {
      return alias ? LaunchFlat<T, true, true>(stream, g, x, out, e.numel)
                   : LaunchFlat<T, true, false>(stream, g, x, out, e.numel);
    }
    return alias ? LaunchFlat<T, false, true>(stream, g, x, out, e.numel)
                 : LaunchFlat<T, false, false>(stream, g, x, out, e.numel);
  }
  const BroadcastLayout l = MakeBroadcastLayout(e, BroadcastWidth(T));
  if (l.items < kFastIndexLimit) {
    constexpr auto kKernel = &BroadcastKernel<T, false>;
    return LaunchOn<kKernel>(stream, BroadcastLaunch(l, ShapeFor<kKernel>()), g, x, out, l);
  }
  constexpr auto kKernel = &BroadcastKernel<T, true>;
  return LaunchOn<kKernel>(stream, BroadcastLaunch(l, ShapeFor<kKernel>()), g, x, out, l);
}

}  // namespace

std::string SiluGradCudaLoadKernels() {
  return LoadOnEveryDevice([&]<DataType T>() { return LoadKernelsOf<T>(); });
}

Status SiluGradCudaRun(void* workspace, uint64_t workspace_size, SiluGradCudaExecutor* executor,
                       cudaStream_t stream, cudaError_t* launch_error) {
  (void)workspace;  // the plan needs none (see SiluGradCudaGetWorkspaceSize)
  (void)workspace_size;
  if (executor == nullptr) return kErrParamNullptr;
  std::unique_ptr<SiluGradCudaExecutor> owned(executor);  // run once
  const SiluGradCudaExecutor& e = *executor;
  if (e.numel == 0) return kSuccess;  // nothing is launched
  if (e.grad_output == nullptr || e.self == nullptr || e.grad_input == nullptr) {
    return kErrParamNullptr;
  }
  return LaunchFor(e.dtype, launch_error, [&]<DataType T>() { return Launch<T>(e, stream); });
}

}  // namespace jas
