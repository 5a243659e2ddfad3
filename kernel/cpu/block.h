// Contiguous-block loops over the element formula, templated on the ISA's
// vector ops and the element type. Each ISA's translation unit instantiates
// them into a BlockKernels table (isa.h). Tails are padded to a full
// vector so every element goes through exactly the same instructions.
#ifndef JAX_ASCEND_SILU_KERNEL_CPU_BLOCK_H_
#define JAX_ASCEND_SILU_KERNEL_CPU_BLOCK_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "common/silu_grad_math.h"
#include "common/swiglu_grad_half.h"
#include "cpu/isa.h"

namespace jas::block {

// Each dtype's vector loads and stores.
template <DataType T>
struct Elem;
template <>
struct Elem<DataType::kFloat32> {
  using Storage = DtypeStorage<DataType::kFloat32>::type;
  static constexpr DataType kType = DataType::kFloat32;
  template <class V> static typename V::F Load(const float* p) { return V::Load(p); }
  template <class V, bool kStream = false> static void Store(float* p, typename V::F v) {
    if constexpr (kStream) V::StoreStream(p, v); else V::Store(p, v);
  }
};
template <>
struct Elem<DataType::kFloat16> {
  using Storage = DtypeStorage<DataType::kFloat16>::type;
  static constexpr DataType kType = DataType::kFloat16;
  template <class V> static typename V::F Load(const uint16_t* p) { return V::LoadF16(p); }
  template <class V, bool kStream = false> static void Store(uint16_t* p, typename V::F v) {
    if constexpr (kStream) V::StoreF16Stream(p, v); else V::StoreF16(p, v);
  }
};
template <>
struct Elem<DataType::kBFloat16> {
  using Storage = DtypeStorage<DataType::kBFloat16>::type;
  static constexpr DataType kType = DataType::kBFloat16;
  template <class V> static typename V::F Load(const uint16_t* p) { return V::LoadBF16(p); }
  template <class V, bool kStream = false> static void Store(uint16_t* p, typename V::F v) {
    if constexpr (kStream) V::StoreBF16Stream(p, v); else V::StoreBF16(p, v);
  }
};

template <class V>
inline void StoreHalves(double* p, const typename V::D* d) {
  for (int h = 0; h < V::kHalves; ++h) V::StoreD(p + h * (V::kLanes / V::kHalves), d[h]);
}

// SiluGrad's arithmetic (common/silu_grad_math.h) for the gradient modes
// below: g * s'(x) in the element type's own way, and s'(x) in double.
// Another gradient g * f'(x) is another such struct.
struct Silu {
  template <class V, class T>
  static typename V::F Grad(typename V::F g, typename V::F x) {
    if constexpr (std::is_same_v<T, Elem<DataType::kFloat32>>) {
      return math::GradF32<V>(g, x);
    } else {
      return math::GradHalf<V, std::is_same_v<T, Elem<DataType::kFloat16>>>(g, x);
    }
  }
  template <class V, class T>
  static void Derivative(typename V::F x, double* out) {
    if constexpr (std::is_same_v<T, Elem<DataType::kFloat32>>) {
      math::DerivativeDoubleF32<V>(x, out);  // GradF32's s'(x)
    } else {
      typename V::D d[V::kHalves];
      math::GradDouble<V>(V::Set(1.0f), x, d);
      StoreHalves<V>(out, d);
    }
  }
};

// One full vector of each mode: `Vec` reads kLanes elements of each operand
// and writes kLanes results. A, B, O are the operands' storage types; Fn is
// the gradient's arithmetic (Silu).
template <class V, class T, class Fn>
struct Full {  // out = grad_output * f'(x)
  using A = typename T::Storage; using B = A; using O = A;
  static typename V::F Grad(typename V::F g, typename V::F x) { return Fn::template Grad<V, T>(g, x); }
  static void Vec(const A* a, const B* b, O* out) {
    T::template Store<V>(out, Grad(T::template Load<V>(a), T::template Load<V>(b)));
  }
  // Two vectors loaded before either is stored: their two dependency chains
  // (the exp table lookup, polynomial and reciprocal) are independent, so the
  // core overlaps their latencies instead of waiting on one chain at a time.
  template <bool kStream = false>
  static void Vec2(const A* a, const B* b, O* out) {
    constexpr int kL = V::kLanes;
    const auto g0 = T::template Load<V>(a), x0 = T::template Load<V>(b);
    const auto g1 = T::template Load<V>(a + kL), x1 = T::template Load<V>(b + kL);
    const auto r0 = Grad(g0, x0), r1 = Grad(g1, x1);
    T::template Store<V, kStream>(out, r0);
    T::template Store<V, kStream>(out + kL, r1);
  }
};
template <class V, class T, class Fn>
struct Derivative {  // out(double) = f'(x); `a` is unused
  using A = typename T::Storage; using B = A; using O = double;
  static void Vec(const A*, const B* b, O* out) { Fn::template Derivative<V, T>(T::template Load<V>(b), out); }
};
template <class V, class T>
struct FromDerivative {  // out = grad_output * d, d a precomputed double f'(x)
  using A = typename T::Storage; using B = double; using O = A;
  static void Vec(const A* a, const B* b, O* out) {
    const auto g = T::template Load<V>(a);
    typename V::D d[V::kHalves];
    for (int h = 0; h < V::kHalves; ++h) {
      d[h] = V::MulD(V::Widen(g, h), V::LoadD(b + h * (V::kLanes / V::kHalves)));
    }
    T::template Store<V>(out, math::CanonicalNan<V>(V::Narrow(d)));
  }
};

// Whether V has non-temporal stores (simd_avx512.h, simd_avx2.h).
template <class V>
inline constexpr bool kHasStreamStores = requires { V::kStreamAlign; };

// kStream: the vectors' results go to memory with non-temporal stores, for
// outputs larger than the cache (executor.h's kStreamStoreMinBytes). The
// elements before `out`'s first kStreamAlign boundary take ordinary stores.
template <class V, class Mode, bool kStream = false>
void Run(const void* a_v, const void* b_v, void* out_v, int64_t n) {
  using A = typename Mode::A;
  using B = typename Mode::B;
  using O = typename Mode::O;
  const A* a = static_cast<const A*>(a_v);
  const B* b = static_cast<const B*>(b_v);
  O* out = static_cast<O*>(out_v);
  constexpr int64_t kL = V::kLanes;
  A zeros[2 * kL] = {};  // stands in for an absent first operand
  int64_t i = 0;
  if constexpr (kStream) {
    const uintptr_t addr = reinterpret_cast<uintptr_t>(out);
    if (addr % sizeof(O) != 0) return Run<V, Mode>(a_v, b_v, out_v, n);  // can never be aligned
    i = std::min<int64_t>(n, (-addr & (V::kStreamAlign - 1)) / sizeof(O));
    if (i > 0) Run<V, Mode>(a, b, out, i);
  }
  // Each vector is read before it is written, so `out` may alias an input.
  if constexpr (requires { Mode::Vec2(a, b, out); }) {
    for (; i + 2 * kL <= n; i += 2 * kL) Mode::template Vec2<kStream>(a ? a + i : zeros, b + i, out + i);
  }
  if constexpr (kStream) {
    V::StreamFence();  // the caller counts the chunk done after this returns
  }
  for (; i + kL <= n; i += kL) Mode::Vec(a ? a + i : zeros, b + i, out + i);
  if (i < n) {
    const int64_t rest = n - i;
    A at[kL] = {};
    B bt[kL] = {};
    O ot[kL];
    if (a) std::memcpy(at, a + i, rest * sizeof(A));
    std::memcpy(bt, b + i, rest * sizeof(B));
    Mode::Vec(at, bt, ot);
    std::memcpy(out + i, ot, rest * sizeof(O));
  }
}

// SwiGluGrad over n contiguous elements of each operand, two vectors at a
// time for the same reason as Full::Vec2; the tail is padded to a full
// vector. Each vector is read before its results are written, so da and db
// may alias a and b.
template <class V, class T>
void RunSwiGlu(const void* g_v, const void* a_v, const void* b_v, void* da_v, void* db_v, int64_t n) {
  using S = typename T::Storage;
  const S* g = static_cast<const S*>(g_v);
  const S* a = static_cast<const S*>(a_v);
  const S* b = static_cast<const S*>(b_v);
  S* da = static_cast<S*>(da_v);
  S* db = static_cast<S*>(db_v);
  constexpr int64_t kL = V::kLanes;
  auto one = [](const S* g, const S* a, const S* b, S* da, S* db) {
    const math::SwiGluPair<V> r =
        math::SwiGluGradOf<V, T::kType>(T::template Load<V>(g), T::template Load<V>(a), T::template Load<V>(b));
    T::template Store<V>(da, r.da);
    T::template Store<V>(db, r.db);
  };
  int64_t i = 0;
  for (; i + 2 * kL <= n; i += 2 * kL) {
    const auto g0 = T::template Load<V>(g + i), a0 = T::template Load<V>(a + i), b0 = T::template Load<V>(b + i);
    const auto g1 = T::template Load<V>(g + i + kL), a1 = T::template Load<V>(a + i + kL),
               b1 = T::template Load<V>(b + i + kL);
    const math::SwiGluPair<V> r0 = math::SwiGluGradOf<V, T::kType>(g0, a0, b0),
                              r1 = math::SwiGluGradOf<V, T::kType>(g1, a1, b1);
    T::template Store<V>(da + i, r0.da);
    T::template Store<V>(db + i, r0.db);
    T::template Store<V>(da + i + kL, r1.da);
    T::template Store<V>(db + i + kL, r1.db);
  }
  for (; i + kL <= n; i += kL) one(g + i, a + i, b + i, da + i, db + i);
  if (i < n) {
    const int64_t rest = n - i;
    S gt[kL] = {}, at[kL] = {}, bt[kL] = {}, dat[kL], dbt[kL];
    std::memcpy(gt, g + i, rest * sizeof(S));
    std::memcpy(at, a + i, rest * sizeof(S));
    std::memcpy(bt, b + i, rest * sizeof(S));
    one(gt, at, bt, dat, dbt);
    std::memcpy(da + i, dat, rest * sizeof(S));
    std::memcpy(db + i, dbt, rest * sizeof(S));
  }
}

// The four block functions of the gradient whose arithmetic is Fn.
template <class V, class T, class Fn>
constexpr GradBlocks GradBlocksFor() {
  return {&Run<V, Full<V, T, Fn>>, &Run<V, Full<V, T, Fn>, kHasStreamStores<V>>, &Run<V, Derivative<V, T, Fn>>,
          &Run<V, FromDerivative<V, T>>};
}

// Every operation's slot (isa.h), in its order.
template <class V, class T>
constexpr BlockKernels::Entry EntryFor() {
  return {GradBlocksFor<V, T, Silu>(), &RunSwiGlu<V, T>};
}

template <class V, std::size_t... I>
constexpr BlockKernels MakeTableOf(std::index_sequence<I...>) {
  return BlockKernels{{EntryFor<V, Elem<kDtypes[I].type>>()...}};
}
template <class V>
constexpr BlockKernels MakeTable() {
  return MakeTableOf<V>(std::make_index_sequence<kNumDtypes>{});
}

}  // namespace jas::block

#endif  // JAX_ASCEND_SILU_KERNEL_CPU_BLOCK_H_
