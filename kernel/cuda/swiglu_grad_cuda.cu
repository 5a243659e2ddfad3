// SwiGluGrad on the CUDA backend: the device kernel and its launch (phase 1
// is plan.cc's).
//
// One kernel per dtype and index mode, a walk of grid.h (SwiGluWalk) on a
// persistent grid. Where every operand allows it, 16-byte loads and stores
// (4 float32 or 8 half values), two vectors of yGrad, A and B per thread and
// pass, all loaded before any is computed: the pair form and a split along
// the first axis as one dense run (its head and tail up to and from the
// operands' shared 16-byte boundary one element at a time), the packed form
// by rows (each vector's row found once per vector, FastDivmod). Otherwise
// one element per thread and pass (a warp's 32 consecutive elements). The
// arithmetic is swiglu_grad_half.h's SwiGluGradOf (float32's SwiGluGradF32,
// or the half types' own path) over simd::PackLane: packs of 4 lanes,
// the "does any lane need the general path" tests decided once per warp and
// pack (which lanes share a decision never changes a result). Half types
// load widened to float32 and are rounded once, NaN results given the CPU
// kernel's bits. dA and dB may be written over A and B (element for element,
// swiglu_grad.h): every thread reads its vectors' inputs before it writes
// their results, so the loads are plain (not through the non-coherent cache)
// and no pointer is __restrict__. Indexing is 64-bit.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "common/swiglu_grad_half.h"
#include "cuda/backend.h"
#include "cuda/device.cuh"
#include "cuda/executor.h"
#include "cuda/grid.h"
#include "cuda/simd_cuda.cuh"
#include "swiglu_grad.h"

namespace jas {
namespace {

using namespace cuda;  // the walk, launch shapes and dtype conversions

// (dA, dB) for one pack of a thread's lanes: the arithmetic for dtype T.
template <DataType T, class V>
__device__ JAS_ALWAYS_INLINE math::SwiGluPair<V> SwiGluArithmetic(typename V::F g, typename V::F a, typename V::F b) {
  return math::SwiGluGradOf<V, T>(g, a, b);
}

// kWords 32-bit words of yGrad, A and B in, as many of dA and dB out, as
// one pack of lanes (one vote per rare-path test for all of them).
template <DataType T, int kWords>
__device__ JAS_ALWAYS_INLINE void SwiGluWords(const uint32_t* g, const uint32_t* a, const uint32_t* b, uint32_t* da,
                                              uint32_t* db) {
  using E = Dev<T>;
  constexpr int kPer = E::kPerWord;
  using V = simd::PackLane<kWords * kPer>;
  typename V::F gv, av, bv;
#pragma unroll
  for (int w = 0; w < kWords; ++w) {
    E::Unpack(g[w], gv.v + w * kPer);
    E::Unpack(a[w], av.v + w * kPer);
    E::Unpack(b[w], bv.v + w * kPer);
  }
  const math::SwiGluPair<V> r = SwiGluArithmetic<T, V>(gv, av, bv);
#pragma unroll
  for (int w = 0; w < kWords; ++w) {
    da[w] = E::Pack(r.da.v + w * kPer);
    db[w] = E::Pack(r.db.v + w * kPer);
  }
  if (E::AnyNan(da, kWords) || E::AnyNan(db, kWords)) {
#pragma unroll
    for (int w = 0; w < kWords; ++w) {
      da[w] = E::CanonicalNans(da[w]);
      db[w] = E::CanonicalNans(db[w]);
    }
  }
}

// Two blocks per multiprocessor at least (128 registers a thread): 512
// threads with 96 bytes of loads each in flight. The arithmetic alone would
// take ~160 registers with packs of 8 lanes, one block, a quarter of that.
constexpr int kSwiGluMinBlocks = 2;
// Lanes per pack: packs of 8 need more than 128 registers and spill.
constexpr int kSwiGluPackLanes = 4;

template <DataType T, SwiGluIndex kIndex>
__global__ void __launch_bounds__(kThreads, kSwiGluMinBlocks)
    SwiGluKernel(const typename Dev<T>::S* g, const typename Dev<T>::S* a, const typename Dev<T>::S* b,
                 typename Dev<T>::S* da, typename Dev<T>::S* db, SwiGluRows rows) {
  using E = Dev<T>;
  constexpr int kU = kSwiGluVectorsPerPass;
  struct Loaded {
    int64_t at;
    Vec16 g, a, b;
  };
  constexpr int kWordsPerPack = kSwiGluPackLanes / Dev<T>::kPerWord;
  static_assert((4 * kU) % kWordsPerPack == 0);
  SwiGluWalk<kIndex>(
      ThisThread(), rows,
      [&](SwiGluSpot s) { return Loaded{s.at, Load16<true>(g + s.i), Load16<true>(a + s.at), Load16<true>(b + s.at)}; },
      [&](int64_t, int64_t, const Loaded* d) {
        uint32_t gw[4 * kU], aw[4 * kU], bw[4 * kU], daw[4 * kU], dbw[4 * kU];
        Gather<kU>(d, &Loaded::g, gw);
        Gather<kU>(d, &Loaded::a, aw);
        Gather<kU>(d, &Loaded::b, bw);
#pragma unroll
        for (int p = 0; p < 4 * kU; p += kWordsPerPack) {
          SwiGluWords<T, kWordsPerPack>(gw + p, aw + p, bw + p, daw + p, dbw + p);
        }
#pragma unroll
        for (int k = 0; k < kU; ++k) {
          Store16<true>(da + d[k].at, Words16(daw + 4 * k));
          Store16<true>(db + d[k].at, Words16(dbw + 4 * k));
        }
      },
      [&](int64_t, const Loaded& d) {
        uint32_t daw[4], dbw[4];
#pragma unroll
        for (int p = 0; p < 4; p += kWordsPerPack) {
          SwiGluWords<T, kWordsPerPack>(d.g.w + p, d.a.w + p, d.b.w + p, daw + p, dbw + p);
        }
        Store16<true>(da + d.at, Words16(daw));
        Store16<true>(db + d.at, Words16(dbw));
      },
      [&](SwiGluSpot s) {
        using V = simd::PackLane<1>;
        const typename V::F gv{{E::Load1(g[s.i])}}, av{{E::Load1(a[s.at])}}, bv{{E::Load1(b[s.at])}};
        const math::SwiGluPair<V> r = SwiGluArithmetic<T, V>(gv, av, bv);
        da[s.at] = E::Store1(r.da.v[0]);
        db[s.at] = E::Store1(r.db.v[0]);
      });
}

// Every kernel LaunchPlan may launch for dtype T.
template <DataType T>
cudaError_t LoadKernelsOf() {
  return LoadAll<&SwiGluKernel<T, SwiGluIndex::kDense>, &SwiGluKernel<T, SwiGluIndex::kFast>,
                 &SwiGluKernel<T, SwiGluIndex::kWide>>();
}

template <DataType T, SwiGluIndex kIndex>
cudaError_t LaunchRows(const SwiGluLayout& l, const SwiGluRows& rows, cudaStream_t stream) {
  using S = typename Dev<T>::S;
  constexpr auto kKernel = &SwiGluKernel<T, kIndex>;
  return LaunchOn<kKernel>(stream, SwiGluLaunch(rows, ShapeFor<kKernel>()), static_cast<const S*>(l.y_grad),
                           static_cast<const S*>(l.a), static_cast<const S*>(l.b), static_cast<S*>(l.grad_a),
                           static_cast<S*>(l.grad_b), rows);
}

template <DataType T>
cudaError_t LaunchPlan(const SwiGluLayout& l, cudaStream_t stream) {
  const SwiGluRows rows = MakeSwiGluRows(l);
  switch (SwiGluIndexOf(rows)) {
    case SwiGluIndex::kDense:
      return LaunchRows<T, SwiGluIndex::kDense>(l, rows, stream);
    case SwiGluIndex::kFast:
      return LaunchRows<T, SwiGluIndex::kFast>(l, rows, stream);
    case SwiGluIndex::kWide:
      break;
  }
  return LaunchRows<T, SwiGluIndex::kWide>(l, rows, stream);
}

}  // namespace

std::string SwiGluGradCudaLoadKernels() {
  return LoadOnEveryDevice([&]<DataType T>() { return LoadKernelsOf<T>(); });
}

Status SwiGluGradCudaPlan::Launch(void* workspace, uint64_t workspace_size, cudaStream_t stream,
                                  cudaError_t* launch_error) const {
  (void)workspace;  // the plan needs none (common/swiglu_plan.h)
  (void)workspace_size;
  return LaunchFor(layout.dtype, launch_error, [&]<DataType T>() { return LaunchPlan<T>(layout, stream); });
}

}  // namespace jas
