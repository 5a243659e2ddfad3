// Contiguous-block loops over the element formula, templated on the ISA's
// vector ops and the element type. Each ISA's translation unit instantiates
// them into a BlockKernels table (silu_grad_isa.h). Tails are padded to a full
// vector so every element goes through exactly the same instructions.
#ifndef JAX_ASCEND_SILU_KERNEL_SILU_GRAD_BLOCK_H_
#define JAX_ASCEND_SILU_KERNEL_SILU_GRAD_BLOCK_H_

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "silu_grad_isa.h"
#include "silu_grad_math.h"

namespace jas::block {

struct F32 {
  using Storage = float;
  template <class V> static typename V::F Load(const float* p) { return V::Load(p); }
  template <class V> static void Store(float* p, typename V::F v) { V::Store(p, v); }
};
struct F16 {
  using Storage = uint16_t;
  template <class V> static typename V::F Load(const uint16_t* p) { return V::LoadF16(p); }
  template <class V> static void Store(uint16_t* p, typename V::F v) { V::StoreF16(p, v); }
};
struct BF16 {
  using Storage = uint16_t;
  template <class V> static typename V::F Load(const uint16_t* p) { return V::LoadBF16(p); }
  template <class V> static void Store(uint16_t* p, typename V::F v) { V::StoreBF16(p, v); }
};

// One full vector of each mode. `A` is the element type of the first operand,
// `B` of the second, `O` of the output.
template <class V, class T>
struct Full {  // out = grad_output * s'(x)
  using A = T; using B = T; using O = T;
  static typename V::F Apply(typename V::F g, typename V::F x) {
    if constexpr (std::is_same_v<T, F32>) {
      return math::GradF32<V>(g, x);  // float32 output: finish in double
    } else {
      return V::Mul(g, math::SiluDerivative<V>(x));  // one rounding to the half type follows
    }
  }
};
template <class V, class T>
struct DerivativeOnly {  // out(float32) = s'(x); the first operand is unused
  using A = T; using B = T; using O = F32;
  static typename V::F Apply(typename V::F, typename V::F x) { return math::SiluDerivative<V>(x); }
};
template <class V, class T>
struct FromDerivative {  // out = grad_output * d, d a precomputed float32 s'(x)
  using A = T; using B = F32; using O = T;
  static typename V::F Apply(typename V::F g, typename V::F d) { return V::Mul(g, d); }
};

template <class V, class Mode>
void Run(const void* a_v, const void* b_v, void* out_v, int64_t n) {
  using A = typename Mode::A::Storage;
  using B = typename Mode::B::Storage;
  using O = typename Mode::O::Storage;
  const A* a = static_cast<const A*>(a_v);
  const B* b = static_cast<const B*>(b_v);
  O* out = static_cast<O*>(out_v);
  constexpr int64_t kL = V::kLanes;
  int64_t i = 0;
  for (; i + kL <= n; i += kL) {
    // Both loads happen before the store, so `out` may alias either input.
    const auto av = a ? Mode::A::template Load<V>(a + i) : V::Set(0.0f);
    const auto bv = Mode::B::template Load<V>(b + i);
    Mode::O::template Store<V>(out + i, Mode::Apply(av, bv));
  }
  if (i < n) {
    const int64_t rest = n - i;
    A at[kL] = {};
    B bt[kL] = {};
    O ot[kL];
    if (a) std::memcpy(at, a + i, rest * sizeof(A));
    std::memcpy(bt, b + i, rest * sizeof(B));
    Mode::O::template Store<V>(ot, Mode::Apply(Mode::A::template Load<V>(at), Mode::B::template Load<V>(bt)));
    std::memcpy(out + i, ot, rest * sizeof(O));
  }
}

template <class V, class T>
constexpr BlockKernels::Entry EntryFor() {
  return {&Run<V, Full<V, T>>, &Run<V, DerivativeOnly<V, T>>, &Run<V, FromDerivative<V, T>>};
}

template <class V>
constexpr BlockKernels MakeTable() {
  return BlockKernels{{EntryFor<V, F32>(), EntryFor<V, F16>(), EntryFor<V, BF16>()}};
}

}  // namespace jas::block

#endif  // JAX_ASCEND_SILU_KERNEL_SILU_GRAD_BLOCK_H_
