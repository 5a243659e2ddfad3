// The kernels of every elementwise gradient g * f'(x) over broadcast
// operands on the CUDA backend (GradCudaPlan, executor.h), templated on the
// gradient's arithmetic Fn (SiluGrad's: silu_grad_cuda.cu). An operation's
// .cu gives its Fn and launches these with it. Internal to kernel/.
//
// Kernels over the plan of plan.cc, each a walk of grid.h on a persistent
// grid (as many blocks as the device holds at once):
//  - contiguous operands: one flat grid-stride loop with 16-byte loads and
//    stores (4 float32 or 8 half values), four vectors of each input per
//    thread and pass, all loaded before any is computed; the elements before
//    the operands' shared 16-byte boundary and after the last whole vector
//    one by one (element by element throughout only where the operands'
//    boundaries fall at different elements);
//  - anything else (broadcast, strided): items of up to 32 bytes' worth of
//    consecutive elements of a row, each item's offsets from its index by
//    precomputed division; where every item is whole and aligned, 16-byte
//    accesses, two items per thread and pass loaded before either is
//    computed (BroadcastVectorKernel), else one item at a time.
// One warp decides the arithmetic's rare paths once per pack
// (simd::PackLane). Half types are computed in float32 and rounded once to
// nearest even, NaN results given the CPU kernel's bits. Operands that may
// overlap (an output written in place over an input) get plain loads and
// stores; others read through the non-coherent cache and write with
// streaming stores. Indexing is 64-bit.
#ifndef JAX_ASCEND_SILU_KERNEL_CUDA_GRAD_CUH_
#define JAX_ASCEND_SILU_KERNEL_CUDA_GRAD_CUH_

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda/backend.h"
#include "cuda/device.cuh"
#include "cuda/executor.h"
#include "cuda/grid.h"
#include "cuda/simd_cuda.cuh"

namespace jas::cuda {

// grad_output * f'(x) for N elements of one thread, as the CPU kernel's full
// mode computes each (kernel/cpu/block.h): Fn::Grad<T, V>, the gradient's
// arithmetic for dtype T over the lanes V.
template <class Fn, DataType T, int N>
__device__ JAS_ALWAYS_INLINE void Grad(const float* g, const float* x, float* r) {
  using V = simd::PackLane<N>;
  typename V::F gv, xv;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    gv.v[k] = g[k];
    xv.v[k] = x[k];
  }
  const typename V::F rv = Fn::template Grad<T, V>(gv, xv);
#pragma unroll
  for (int k = 0; k < N; ++k) r[k] = rv.v[k];
}

// kWords 32-bit words of each input in, as many out: `packs` packs of
// kWords / packs words each, every pack's rare paths decided by one vote.
template <class Fn, DataType T, int kWords, int kPacks = 1>
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
    Grad<Fn, T, kN>(gf, xf, rf);
#pragma unroll
    for (int w = 0; w < kN / kPer; ++w) out[p * kN / kPer + w] = E::Pack(rf + w * kPer);
  }
  if (E::AnyNan(out, kWords)) {
#pragma unroll
    for (int w = 0; w < kWords; ++w) out[w] = E::CanonicalNans(out[w]);
  }
}

template <class Fn, DataType T>
__device__ JAS_ALWAYS_INLINE typename Dev<T>::S Element(typename Dev<T>::S g, typename Dev<T>::S x) {
  const float gf = Dev<T>::Load1(g), xf = Dev<T>::Load1(x);
  float r;
  Grad<Fn, T, 1>(&gf, &xf, &r);
  return Dev<T>::Store1(r);
}


// Operands may alias when kAlias (an output written in place over an input):
// every element is read before its own slot is written, and by the same thread.
template <class Fn, DataType T, bool kAlias>
__global__ void __launch_bounds__(kThreads)
    FlatKernel(const typename Dev<T>::S* g_in, const typename Dev<T>::S* x_in, typename Dev<T>::S* out_in,
               FlatSplit s) {
  using S = typename Dev<T>::S;
  // Promised not to overlap only where they do not.
  using In = std::conditional_t<kAlias, const S*, const S* __restrict__>;
  using Out = std::conditional_t<kAlias, S*, S* __restrict__>;
  const In g = g_in;
  const In x = x_in;
  const Out out = out_in;
  constexpr int kVec = 16 / sizeof(S);
  constexpr int kU = kFlatVectorsPerPass;
  struct Loaded {
    Vec16 g, x;
  };
  FlatWalk(
      ThisThread(), s,
      [&](int64_t i) {
        const int64_t at = s.head + i * kVec;
        return Loaded{Load16<kAlias>(g + at), Load16<kAlias>(x + at)};
      },
      [&](int64_t i, int64_t step, const Loaded* d) {
        uint32_t gw[4 * kU], xw[4 * kU], ow[4 * kU];
        Gather<kU>(d, &Loaded::g, gw);
        Gather<kU>(d, &Loaded::x, xw);
        // Packs of 8 lanes: each rare-path vote covers 8 of a thread's elements.
        GradWords<Fn, T, 4 * kU, T == DataType::kFloat32 ? kU / 2 : kU>(gw, xw, ow);
#pragma unroll
        for (int k = 0; k < kU; ++k) Store16<kAlias>(out + s.head + (i + k * step) * kVec, Words16(ow + 4 * k));
      },
      [&](int64_t i, const Loaded& a) {
        Vec16 o;
        GradWords<Fn, T, 4>(a.g.w, a.x.w, o.w);
        Store16<kAlias>(out + s.head + i * kVec, o);
      },
      [&](int64_t i) { out[i] = Element<Fn, T>(g[i], x[i]); });
}

// One item's operand `op` as 8 words: two 16-byte vectors (inner stride 1),
// or its one element repeated (inner stride 0).
template <DataType T, bool kAlias>
__device__ JAS_ALWAYS_INLINE void LoadItem(const typename Dev<T>::S* p, int64_t stride, uint32_t* w) {
  using E = Dev<T>;
  using S = typename E::S;
  constexpr int kVec = 16 / sizeof(S);
  if (stride == 1) {  // the same for every item: no divergence
    const Vec16 a = Load16<kAlias>(p), b = Load16<kAlias>(p + kVec);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      w[k] = a.w[k];
      w[4 + k] = b.w[k];
    }
    return;
  }
  const S s = kAlias ? *p : __ldg(p);
  uint32_t v;
  if constexpr (E::kPerWord == 1) {
    v = __float_as_uint(s);
  } else {
    v = uint32_t{s} | uint32_t{s} << 16;
  }
#pragma unroll
  for (int k = 0; k < 8; ++k) w[k] = v;
}

// Broadcast and strided operands whose items are whole vectors (BroadcastLayout::vector),
// below 2^31 items: kBroadcastItemsPerPass items per thread and pass, loaded
// before any is computed.
template <class Fn, DataType T, bool kAlias>
__global__ void __launch_bounds__(kThreads)
    BroadcastVectorKernel(const typename Dev<T>::S* g, const typename Dev<T>::S* x, typename Dev<T>::S* out,
                          BroadcastLayout l) {
  using S = typename Dev<T>::S;
  constexpr int kVec = 16 / sizeof(S);
  constexpr int kU = kBroadcastItemsPerPass;
  struct Loaded {
    int64_t out;
    uint32_t g[8], x[8];
  };
  auto compute = [&](const Loaded& d) {
    uint32_t r[8];
    GradWords<Fn, T, 8, T == DataType::kFloat32 ? 1 : 2>(d.g, d.x, r);
    Store16<kAlias>(out + d.out, Vec16{.w = {r[0], r[1], r[2], r[3]}});
    Store16<kAlias>(out + d.out + kVec, Vec16{.w = {r[4], r[5], r[6], r[7]}});
  };
  BroadcastVectorWalk<false>(
      ThisThread(), l,
      [&](const int64_t* o) {
        Loaded d;
        d.out = o[2];
        LoadItem<T, kAlias>(g + o[0], l.inner_strides[0], d.g);
        LoadItem<T, kAlias>(x + o[1], l.inner_strides[1], d.x);
        return d;
      },
      [&](int64_t, int64_t, const Loaded* d) {
#pragma unroll
        for (int k = 0; k < kU; ++k) compute(d[k]);
      },
      [&](int64_t, const Loaded& d) { compute(d); });
}

// Any other layout (and 2^31 items or more): one item per thread and pass,
// plain loads and stores.
template <class Fn, DataType T, bool kWide>
__global__ void __launch_bounds__(kThreads)
    BroadcastKernel(const typename Dev<T>::S* g, const typename Dev<T>::S* x, typename Dev<T>::S* out,
                    BroadcastLayout l) {
  using E = Dev<T>;
  using S = typename E::S;
  constexpr int kVec = 16 / sizeof(S);
  constexpr int kWidth = 2 * kVec;  // BroadcastWidth
  BroadcastWalk<kWide>(ThisThread(), l, [&](const int64_t* o, int64_t count) {
    if (l.vector) {  // the same for every item: no divergence
      uint32_t w[2][8];
      LoadItem<T, true>(g + o[0], l.inner_strides[0], w[0]);
      LoadItem<T, true>(x + o[1], l.inner_strides[1], w[1]);
      uint32_t r[8];
      GradWords<Fn, T, 8, T == DataType::kFloat32 ? 1 : 2>(w[0], w[1], r);
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
    Grad<Fn, T, kWidth>(gf, xf, rf);
    for (int k = 0; k < count; ++k) out[o[2] + k * l.inner_strides[2]] = E::Store1(rf[k]);
  });
}


// Every kernel LaunchGrad may launch for dtype T.
template <class Fn, DataType T>
cudaError_t LoadGradKernelsOf() {
  return LoadAll<&FlatKernel<Fn, T, false>, &FlatKernel<Fn, T, true>, &BroadcastVectorKernel<Fn, T, false>,
                 &BroadcastVectorKernel<Fn, T, true>, &BroadcastKernel<Fn, T, false>, &BroadcastKernel<Fn, T, true>>();
}


// [first, last) byte range operand `op` of the plan touches.
struct Range {
  uintptr_t first, last;
};
inline Range Touched(const GradCudaPlan& e, int op, const void* data) {
  int64_t last = e.offsets[op];
  for (int64_t d = 0; d < e.loop.rank; ++d) last += (e.loop.dims[d] - 1) * e.loop.strides[op][d];
  const auto elem = static_cast<uintptr_t>(ElementBytes(e.dtype));
  const auto base = reinterpret_cast<uintptr_t>(data);
  return {base + static_cast<uintptr_t>(e.offsets[op]) * elem, base + static_cast<uintptr_t>(last + 1) * elem};
}
inline bool Overlap(Range a, Range b) { return a.first < b.last && b.first < a.last; }

template <class Fn, DataType T>
cudaError_t LaunchGradOf(const GradCudaPlan& e, cudaStream_t stream) {
  using S = typename Dev<T>::S;
  const S* g = static_cast<const S*>(e.grad_output) + e.offsets[0];
  const S* x = static_cast<const S*>(e.self) + e.offsets[1];
  S* out = static_cast<S*>(e.grad_input) + e.offsets[2];
  const Range wrote = Touched(e, 2, e.grad_input);
  const bool alias = Overlap(wrote, Touched(e, 0, e.grad_output)) || Overlap(wrote, Touched(e, 1, e.self));
  if (e.contiguous) {
    const uintptr_t addr[3] = {reinterpret_cast<uintptr_t>(g), reinterpret_cast<uintptr_t>(x),
                               reinterpret_cast<uintptr_t>(out)};
    const FlatSplit s = MakeFlatSplit(e.numel, sizeof(S), addr, 3);
    if (alias) {
      constexpr auto kKernel = &FlatKernel<Fn, T, true>;
      return LaunchOn<kKernel>(stream, FlatLaunch(s, ShapeFor<kKernel>()), g, x, out, s);
    }
    constexpr auto kKernel = &FlatKernel<Fn, T, false>;
    return LaunchOn<kKernel>(stream, FlatLaunch(s, ShapeFor<kKernel>()), g, x, out, s);
  }
  const BroadcastLayout l = MakeBroadcastLayout(e, BroadcastWidth(T));
  if (l.items >= kFastIndexLimit) {
    constexpr auto kKernel = &BroadcastKernel<Fn, T, true>;
    return LaunchOn<kKernel>(stream, BroadcastLaunch(l, ShapeFor<kKernel>()), g, x, out, l);
  }
  if (!l.vector) {
    constexpr auto kKernel = &BroadcastKernel<Fn, T, false>;
    return LaunchOn<kKernel>(stream, BroadcastLaunch(l, ShapeFor<kKernel>()), g, x, out, l);
  }
  if (alias) {
    constexpr auto kKernel = &BroadcastVectorKernel<Fn, T, true>;
    return LaunchOn<kKernel>(stream, BroadcastLaunch(l, ShapeFor<kKernel>()), g, x, out, l);
  }
  constexpr auto kKernel = &BroadcastVectorKernel<Fn, T, false>;
  return LaunchOn<kKernel>(stream, BroadcastLaunch(l, ShapeFor<kKernel>()), g, x, out, l);
}

// GradCudaPlan::launch for the gradient whose arithmetic is Fn.
template <class Fn>
Status LaunchGrad(const GradCudaPlan& e, cudaStream_t stream, cudaError_t* launch_error) {
  return LaunchFor(e.dtype, launch_error, [&]<DataType T>() { return LaunchGradOf<Fn, T>(e, stream); });
}

// Loads every kernel LaunchGrad<Fn> may launch on each visible device.
template <class Fn>
std::string LoadGradKernels() {
  return LoadOnEveryDevice([&]<DataType T>() { return LoadGradKernelsOf<Fn, T>(); });
}

}  // namespace jas::cuda

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_GRAD_CUH_
