// SwiGluGrad on the CPU (kernel/swiglu_grad.h): results within the ulp bounds
// of a float64 reference, the same bits on every ISA, thread count and chunk
// size, the packed layout equal to the pair layout along every dim, in-place
// results, and phase 1's refusals with aclnn's status codes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/swiglu_grad_half.h"
#include "cpu/simd_scalar.h"
#include "cpu/backend.h"
#include "swiglu_grad.h"
#include "cpu/testing.h"
#include "kernel_test_util.h"
#include "thread_parallel.h"

namespace jas::test {
namespace {

// Values of one dtype as raw bits, with their descriptor.
struct Array {
  DataType dtype;
  Dims dims;
  std::vector<uint32_t> bits;  // one entry per element, whatever the width
  std::vector<unsigned char> storage;

  Array(DataType t, Dims d) : dtype(t), dims(std::move(d)), bits(Numel(dims)) {}
  int64_t bytes() const { return FindDtype(dtype)->bytes; }
  TensorDesc Desc() {
    storage.assign(bits.size() * bytes(), 0);
    for (size_t i = 0; i < bits.size(); ++i) std::memcpy(&storage[i * bytes()], &bits[i], bytes());
    return TensorDesc{dtype, static_cast<int64_t>(dims.size()), dims.data(), nullptr, 0,
                      static_cast<int64_t>(bits.size()), storage.data()};
  }
  void Read() {
    for (size_t i = 0; i < bits.size(); ++i) {
      bits[i] = 0;
      std::memcpy(&bits[i], &storage[i * bytes()], bytes());
    }
  }
  double Value(size_t i) const { return ToFloat(dtype, bits[i]); }
};

// Random values, specials and the regions each path takes.
void Fill(Array& a, Rng& rng, double scale) {
  static const float kSpecial[] = {0.0f, -0.0f, 1.0f, -1.2784646f, -33.5f, -80.0f, -300.0f, 30.0f,
                                   std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                                   std::numeric_limits<float>::quiet_NaN(), 1e-40f, 3e38f, -1e-30f};
  std::normal_distribution<double> normal(0.0, scale);
  for (size_t i = 0; i < a.bits.size(); ++i) {
    const float v = rng() % 8 == 0 ? kSpecial[rng() % std::size(kSpecial)] : static_cast<float>(normal(rng));
    a.bits[i] = FromFloat(a.dtype, v);
  }
}

struct PairRun {
  Array g, a, b, da, db;
  PairRun(DataType t, const Dims& dims) : g(t, dims), a(t, dims), b(t, dims), da(t, dims), db(t, dims) {}
  Status Run(Isa isa = Isa::kAuto, int64_t threads = 1, int64_t chunk = 0) {
    TensorDesc tg = g.Desc(), ta = a.Desc(), tb = b.Desc(), tda = da.Desc(), tdb = db.Desc();
    uint64_t ws = 1;
    CpuExecutor* e = nullptr;
    if (Status s = SwiGluGradPairGetWorkspaceSize(&tg, &ta, &tb, &tda, &tdb, &ws, &e); s != kSuccess) return s;
    EXPECT_EQ(ws, 0u);
    EXPECT_EQ(CpuSetIsa(e, isa), kSuccess);
    if (chunk > 0) EXPECT_EQ(CpuSetChunkElements(e, chunk), kSuccess);
    ThreadParallel parallel(threads);
    const Status s = CpuRun(nullptr, 0, e, parallel.get());
    parallel.Join();
    da.Read();
    db.Read();
    return s;
  }
};

PairRun RandomPair(DataType t, const Dims& dims, uint64_t seed) {
  PairRun r(t, dims);
  Rng rng(seed);
  Fill(r.g, rng, 2.0);
  Fill(r.a, rng, 8.0);
  Fill(r.b, rng, 2.0);
  return r;
}

double Silu(double a) {
  if (a == -INFINITY) return -0.0;
  return a < 0 ? a * std::exp(a) / (1.0 + std::exp(a)) : a / (1.0 + std::exp(-a));
}

TEST(swiglu, within_the_ulp_bounds_of_float64) {
  for (DataType t : kTypes) {
    PairRun r = RandomPair(t, {4099}, 1);
    ASSERT_EQ(r.Run(), kSuccess);
    for (size_t i = 0; i < r.g.bits.size(); ++i) {
      const double g = r.g.Value(i), a = r.a.Value(i), b = r.b.Value(i);
      const double da = g * b * SiluDerivative(a), db = g * Silu(a);
      ASSERT_LE(UlpError(r.da.Value(i), da, t), MaxUlp(t)) << DtypeName(t) << " dA at g=" << g << " A=" << a << " B=" << b;
      ASSERT_LE(UlpError(r.db.Value(i), db, t), MaxUlp(t)) << DtypeName(t) << " dB at g=" << g << " A=" << a;
    }
  }
}

TEST(swiglu, every_isa_thread_count_and_chunk_size_gives_the_same_bits) {
  for (DataType t : kTypes) {
    PairRun base = RandomPair(t, {70001}, 2);
    ASSERT_EQ(base.Run(Isa::kScalar), kSuccess);
    for (Isa isa : SupportedIsas()) {
      for (int64_t threads : {1, 3}) {
        for (int64_t chunk : {int64_t{0}, int64_t{1000}, int64_t{7}}) {
          PairRun r = RandomPair(t, {70001}, 2);
          ASSERT_EQ(r.Run(isa, threads, chunk), kSuccess);
          EXPECT_EQ(r.da.bits, base.da.bits) << DtypeName(t) << " " << IsaName(isa) << " threads " << threads;
          EXPECT_EQ(r.db.bits, base.db.bits) << DtypeName(t) << " " << IsaName(isa) << " chunk " << chunk;
        }
      }
    }
  }
}

// The half types' own path (common/swiglu_grad_half.h) over every half A,
// with (g, B) that keep results on it (both signs, near the ends of its
// range) and that send them off it (zeros, infinities, NaN, subnormal and
// near-overflow results): on the path within 0.5 ulp plus what its float32
// arithmetic may add (benchmarks/exhaustive_swiglu.cc's "halfpath" mode
// finds at most 0.50072 ulp), off it the bits SwiGluGradF32 gives rounded
// once, and the same bits on every ISA.
TEST(swiglu, half_types_every_a_on_and_off_their_own_path) {
  using Scalar = simd::Scalar;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (DataType t : {DataType::kFloat16, DataType::kBFloat16}) {
    const bool f16 = t == DataType::kFloat16;
    std::vector<std::pair<float, float>> gb = {{1.0f, 1.0f},  {-3.0f, 0.1f},   {0.375f, -7.0f}, {0.0f, 2.0f},
                                               {2.0f, -0.0f}, {kInf, 1.0f},    {1.0f, -kInf},   {NAN, 1.0f},
                                               {1.0f, NAN},   {-1e-3f, 1e-3f}, {1e-4f, 3e-4f}};
    if (f16) {
      gb.insert(gb.end(), {{60000.0f, 0.5f}, {65504.0f, -1.0f}, {6e-8f, 1.0f}, {1e-3f, 2e-3f}});
    } else {
      gb.insert(gb.end(), {{1e38f, 1.5f}, {3e38f, -1.0f}, {1e-38f, 1.0f}, {1e-20f, -1e-18f}, {1e-30f, 1e30f}});
    }
    const int64_t n = 65536 * static_cast<int64_t>(gb.size());
    PairRun base(t, {n});
    for (int64_t i = 0; i < n; ++i) {
      base.g.bits[i] = FromFloat(t, gb[i / 65536].first);
      base.b.bits[i] = FromFloat(t, gb[i / 65536].second);
      base.a.bits[i] = static_cast<uint32_t>(i % 65536);
    }
    ASSERT_EQ(base.Run(Isa::kScalar), kSuccess);
    int64_t on_path = 0, off_path = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float g = static_cast<float>(base.g.Value(i)), a = static_cast<float>(base.a.Value(i)),
                  b = static_cast<float>(base.b.Value(i));
      const math::SwiGluPair<Scalar> fast = math::SwiGluHalfFast<Scalar>(g, a, b);
      const bool rare = f16 ? math::HalfSwiGluRare<Scalar, true>(a, fast) : math::HalfSwiGluRare<Scalar, false>(a, fast);
      if (rare) {
        ++off_path;
        const math::SwiGluPair<Scalar> old = math::SwiGluGradF32<Scalar>(g, a, b);
        ASSERT_EQ(base.da.bits[i], FromFloat(t, old.da)) << DtypeName(t) << " dA at g=" << g << " A=" << a << " B=" << b;
        ASSERT_EQ(base.db.bits[i], FromFloat(t, old.db)) << DtypeName(t) << " dB at g=" << g << " A=" << a << " B=" << b;
      } else {
        ++on_path;
        const double da = double{g} * b * SiluDerivative(a), db = g * Silu(a);
        ASSERT_LE(UlpError(base.da.Value(i), da, t), 0.5 + 0x1p-10) << DtypeName(t) << " dA at g=" << g << " A=" << a << " B=" << b;
        ASSERT_LE(UlpError(base.db.Value(i), db, t), 0.5 + 0x1p-10) << DtypeName(t) << " dB at g=" << g << " A=" << a;
      }
    }
    // Both kinds of lane are exercised, each in bulk.
    EXPECT_GT(on_path, n / 8) << DtypeName(t);
    EXPECT_GT(off_path, n / 8) << DtypeName(t);
    for (Isa isa : SupportedIsas()) {
      PairRun r(t, {n});
      r.g.bits = base.g.bits, r.a.bits = base.a.bits, r.b.bits = base.b.bits;
      ASSERT_EQ(r.Run(isa, 2), kSuccess);
      EXPECT_EQ(r.da.bits, base.da.bits) << DtypeName(t) << " " << IsaName(isa);
      EXPECT_EQ(r.db.bits, base.db.bits) << DtypeName(t) << " " << IsaName(isa);
    }
  }
}

// x of shape dims, packed along `dim`, against the pair run on its halves.
TEST(swiglu, packed_along_every_dim_equals_the_pair_layout) {
  const Dims dims = {2, 4, 6};  // even along every dim
  for (DataType t : kTypes) {
    for (int64_t dim = -3; dim < 3; ++dim) {
      const int64_t d = dim < 0 ? dim + 3 : dim;
      Dims half = dims;
      half[d] /= 2;
      Array x(t, dims), g(t, half), out(t, dims);
      Rng rng(3 + d);
      Fill(x, rng, 6.0);
      Fill(g, rng, 2.0);
      PairRun pair(t, half);
      pair.g.bits = g.bits;
      // Element (i, j, k) of A is x's at index j along d in the first half.
      ForEachIndex(half, [&](const Dims& idx) {
        Dims ia = idx, ib = idx;
        ib[d] += half[d];
        const int64_t at = (idx[0] * half[1] + idx[1]) * half[2] + idx[2];
        pair.a.bits[at] = x.bits[(ia[0] * dims[1] + ia[1]) * dims[2] + ia[2]];
        pair.b.bits[at] = x.bits[(ib[0] * dims[1] + ib[1]) * dims[2] + ib[2]];
      });
      ASSERT_EQ(pair.Run(), kSuccess);
      TensorDesc tg = g.Desc(), tx = x.Desc(), to = out.Desc();
      uint64_t ws = 0;
      CpuExecutor* e = nullptr;
      ASSERT_EQ(SwiGluGradGetWorkspaceSize(&tg, &tx, dim, &to, &ws, &e), kSuccess);
      ASSERT_EQ(CpuRun(nullptr, 0, e, nullptr), kSuccess);
      out.Read();
      ForEachIndex(half, [&](const Dims& idx) {
        Dims ib = idx;
        ib[d] += half[d];
        const int64_t at = (idx[0] * half[1] + idx[1]) * half[2] + idx[2];
        EXPECT_EQ(out.bits[(idx[0] * dims[1] + idx[1]) * dims[2] + idx[2]], pair.da.bits[at]) << "dim " << dim;
        EXPECT_EQ(out.bits[(ib[0] * dims[1] + ib[1]) * dims[2] + ib[2]], pair.db.bits[at]) << "dim " << dim;
      });
    }
  }
}

TEST(swiglu, results_may_overwrite_the_inputs) {
  PairRun fresh = RandomPair(DataType::kFloat32, {5000}, 4);
  ASSERT_EQ(fresh.Run(), kSuccess);
  PairRun r = RandomPair(DataType::kFloat32, {5000}, 4);
  TensorDesc tg = r.g.Desc(), ta = r.a.Desc(), tb = r.b.Desc();
  uint64_t ws = 0;
  CpuExecutor* e = nullptr;
  ASSERT_EQ(SwiGluGradPairGetWorkspaceSize(&tg, &ta, &tb, &ta, &tb, &ws, &e), kSuccess);
  ASSERT_EQ(CpuRun(nullptr, 0, e, nullptr), kSuccess);
  r.a.Read();
  r.b.Read();
  EXPECT_EQ(r.a.bits, fresh.da.bits);
  EXPECT_EQ(r.b.bits, fresh.db.bits);
}

Status Packed(Array& g, Array& x, int64_t dim, Array& out) {
  TensorDesc tg = g.Desc(), tx = x.Desc(), to = out.Desc();
  uint64_t ws = 0;
  CpuExecutor* e = nullptr;
  const Status s = SwiGluGradGetWorkspaceSize(&tg, &tx, dim, &to, &ws, &e);
  CpuDestroyExecutor(e);
  return s;
}

TEST(swiglu, phase_one_refuses_what_the_contract_leaves_out) {
  const DataType f = DataType::kFloat32;
  Array x(f, {2, 6}), g(f, {2, 3}), out(f, {2, 6});
  EXPECT_EQ(Packed(g, x, -1, out), kSuccess);
  EXPECT_EQ(Packed(g, x, 2, out), kErrParamInvalid);   // dim out of range
  EXPECT_EQ(Packed(g, x, -3, out), kErrParamInvalid);
  EXPECT_EQ(Packed(g, x, 0, out), kErrParamInvalid);   // yGrad is not x halved along 0
  Array odd(f, {2, 5}), g_odd(f, {2, 2}), out_odd(f, {2, 5});
  EXPECT_EQ(Packed(g_odd, odd, 1, out_odd), kErrParamInvalid);  // odd size
  Array g_half(DataType::kFloat16, {2, 3});
  EXPECT_EQ(Packed(g_half, x, 1, out), kErrParamInvalid);  // mixed dtypes
  Array x_empty(f, {0, 6}), g_empty(f, {0, 3}), out_empty(f, {0, 6});
  EXPECT_EQ(Packed(g_empty, x_empty, 1, out_empty), kErrParamInvalid);  // empty, as CANN
  Array x_rank9(f, {1, 1, 1, 1, 1, 1, 1, 1, 2}), g_rank9(f, {1, 1, 1, 1, 1, 1, 1, 1, 1});
  Array out_rank9(f, {1, 1, 1, 1, 1, 1, 1, 1, 2});
  EXPECT_EQ(Packed(g_rank9, x_rank9, -1, out_rank9), kErrParamInvalid);
  Array scalar(f, {}), g_scalar(f, {}), out_scalar(f, {});
  EXPECT_EQ(Packed(g_scalar, scalar, 0, out_scalar), kErrParamInvalid);  // packed needs rank >= 1

  TensorDesc tg = g.Desc(), tx = x.Desc(), to = out.Desc();
  uint64_t ws = 7;
  CpuExecutor* e = reinterpret_cast<CpuExecutor*>(&ws);
  EXPECT_EQ(SwiGluGradGetWorkspaceSize(nullptr, &tx, 1, &to, &ws, &e), kErrParamNullptr);
  EXPECT_EQ(e, nullptr);  // cleared before any check
  EXPECT_EQ(ws, 0u);
  EXPECT_EQ(SwiGluGradGetWorkspaceSize(&tg, &tx, 1, &to, nullptr, &e), kErrParamNullptr);
  const int64_t strides[2] = {12, 2};  // every other column
  TensorDesc strided = tx;
  strided.strides = strides;
  strided.storage_numel = 24;
  EXPECT_EQ(SwiGluGradGetWorkspaceSize(&tg, &strided, 1, &to, &ws, &e), kErrParamInvalid);
  TensorDesc no_data = to;
  no_data.data = nullptr;
  EXPECT_EQ(SwiGluGradGetWorkspaceSize(&tg, &tx, 1, &no_data, &ws, &e), kErrParamNullptr);
  TensorDesc past = tx;
  past.offset = 1;  // storage_numel is 12: one element past it
  EXPECT_EQ(SwiGluGradGetWorkspaceSize(&tg, &past, 1, &to, &ws, &e), kErrParamInvalid);
  EXPECT_EQ(CpuRun(nullptr, 0, nullptr, nullptr), kErrParamNullptr);

  PairRun shapes(f, {4});
  Array wrong(f, {5});
  TensorDesc pg = shapes.g.Desc(), pa = shapes.a.Desc(), pw = wrong.Desc(), pda = shapes.da.Desc(),
             pdb = shapes.db.Desc();
  EXPECT_EQ(SwiGluGradPairGetWorkspaceSize(&pg, &pa, &pw, &pda, &pdb, &ws, &e), kErrParamInvalid);
  EXPECT_EQ(shapes.Run(), kSuccess);

  SwiGluLayout layout;
  std::string why;
  EXPECT_EQ(CheckSwiGluPacked(&tg, &tx, 5, &to, &layout, &why), kErrParamInvalid);
  EXPECT_NE(why.find("dim 5 is out of range"), std::string::npos) << why;
}

}  // namespace
}  // namespace jas::test
