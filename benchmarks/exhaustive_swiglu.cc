// SwiGluGrad's accuracy over every float32 A, and every float16 and bfloat16
// A against a grid of (yGrad, B), through the CPU kernel (pair layout),
// against float64 references: dA = g*B*s'(A) with s' from the kernel tests'
// reference (accurate up to its root), dB = g*A/(1 + e^-A). Errors are in
// ulps of the exact result, tiny float32 errors included. Not a ctest entry
// (2^32 inputs per mode take minutes). Build the target `exhaustive_swiglu`
// (configure with -DJAX_ASCEND_SILU_TESTS=ON) and run
//   exhaustive_swiglu [--threads N] [--stride S] [--mode one|random|tiny|huge|halves|halfpath|all|proof]
//                     [--begin BITS] [--end BITS]
// --begin and --end (hexadecimal float32 bit patterns of A, end excluded), as
// exhaustive_accuracy's: the lanes an arithmetic change touched, when only
// those changed.
// The ISA is the kernel's automatic choice (JAX_ASCEND_SILU_ISA forces one).
// Float32 modes: "one" g = B = 1; "random" g and B hashed from A's bits;
// "tiny" g times 2^-70 or 2^-132 (results down to gradual underflow), B
// random; "huge" g with exponent 127 and B random (g*B past float32's
// range). "halfpath": the half types' own path for every operand it takes
// (CheckHalfPath below). Exit status 1 when a float32 result is beyond 4
// ulp, a half one beyond 1 ulp, or any is wrongly NaN/inf.
// --mode proof bounds dA and dB for every (g, B) at once (the argument is in
// exhaustive_proof.h): for every finite A it measures the relative error of
// s'(A) and silu(A) as the kernel holds them before the product with g*B or
// g (kernel/common's DerivativeF32 and SiluOfF32 pairs on the fast path,
// the double of the wide and general paths), against a long double
// reference, and checks that the kernel's outputs for g = B = 1 are those
// values rounded. Exit status 1 when a bound passes 4 ulp or an output
// differs. Not part of "all".
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/half.h"
#include "common/swiglu_grad_half.h"
#include "common/swiglu_grad_math.h"
#include "cpu/simd_scalar.h"
#include "cpu/backend.h"
#include "swiglu_grad.h"
#include "exhaustive_proof.h"
#include "kernel_test_util.h"

namespace {

using jas::DataType;
namespace half = jas::half;

constexpr int64_t kBlock = int64_t{1} << 20;

double Silu(double a) {
  if (a == -INFINITY) return -0.0;
  return a < 0 ? a * std::exp(a) / (1.0 + std::exp(a)) : a / (1.0 + std::exp(-a));
}

// Both results within the bound, tiny float32 errors not forgiven (as
// exhaustive_accuracy.cc).
double Error(double result, double exact, DataType t) {
  const double err = jas::test::UlpError(result, exact, t);
  if (t != DataType::kFloat32 || err != 0.0 || !std::isfinite(exact) || std::fabs(exact) >= 0x1p-100) return err;
  const double ulp = std::ldexp(1.0, std::max(exact == 0.0 ? -126 : std::ilogb(exact), -126) - 23);
  return std::fabs(result - exact) / ulp;
}

struct Worst {
  double ulp = 0.0;
  float g = 0, a = 0, b = 0;
  double result = 0, exact = 0;
};

struct Tally {
  Worst worst[2];  // dA, dB
  int64_t over = 0, wrong_specials = 0, checked = 0;
  void Add(int k, double result, double exact, float g, float a, float b, DataType t) {
    const double err = Error(result, exact, t);
    if (std::isinf(err)) {
      if (wrong_specials++ < 4) {
        std::printf("  wrong NaN/inf: %s = %.9g vs exact %.12g at g=%.9g A=%.9g B=%.9g\n", k == 0 ? "dA" : "dB",
                    result, exact, g, a, b);
      }
      return;
    }
    over += err > jas::test::MaxUlp(t);
    if (err > worst[k].ulp) worst[k] = {err, g, a, b, result, exact};
  }
  void Merge(const Tally& o) {
    for (int k = 0; k < 2; ++k) {
      if (o.worst[k].ulp > worst[k].ulp) worst[k] = o.worst[k];
    }
    over += o.over;
    wrong_specials += o.wrong_specials;
    checked += o.checked;
  }
};

// The kernel over n elements of storage type S (float or uint16_t).
template <class S>
bool Run(DataType t, const S* g, const S* a, const S* b, S* da, S* db, int64_t n) {
  const int64_t dims[1] = {n};
  auto desc = [&](const S* p) { return jas::TensorDesc{t, 1, dims, nullptr, 0, n, const_cast<S*>(p)}; };
  const jas::TensorDesc tg = desc(g), ta = desc(a), tb = desc(b), tda = desc(da), tdb = desc(db);
  uint64_t ws = 0;
  jas::CpuExecutor* e = nullptr;
  if (jas::SwiGluGradPairGetWorkspaceSize(&tg, &ta, &tb, &tda, &tdb, &ws, &e) != jas::kSuccess) return false;
  return jas::CpuRun(nullptr, 0, e, nullptr) == jas::kSuccess;
}

void Exact(float g, float a, float b, double* da, double* db) {
  *da = double{g} * double{b} * jas::test::SiluDerivative(a);
  *db = double{g} * Silu(a);
}

enum class Mode { kOne, kRandom, kTiny, kHuge };

float HugeGrad(uint32_t bits) {
  return half::FromBits((half::Bits(jas::test::HashedGrad(bits)) & 0x807fffffu) | (254u << 23));
}

// A's bit patterns begin, begin + stride, ... below end.
Tally CheckFloat32(Mode mode, uint64_t begin, uint64_t end, uint64_t stride, int worker, int workers,
                   std::atomic<bool>& failed) {
  Tally t;
  std::vector<float> g(kBlock), a(kBlock), b(kBlock), da(kBlock), db(kBlock);
  const uint64_t total = (end - begin + stride - 1) / stride;
  for (uint64_t first = worker * kBlock; first < total; first += workers * kBlock) {
    const int64_t n = static_cast<int64_t>(std::min<uint64_t>(kBlock, total - first));
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t bits = static_cast<uint32_t>(begin + (first + i) * stride);
      a[i] = half::FromBits(bits);
      const float r = jas::test::HashedGrad(bits), rb = jas::test::HashedGrad(uint64_t{bits} + (uint64_t{1} << 32));
      switch (mode) {
        case Mode::kOne: g[i] = 1.0f, b[i] = 1.0f; break;
        case Mode::kRandom: g[i] = r, b[i] = rb; break;
        case Mode::kTiny:
          g[i] = static_cast<float>(double{r} * ((bits & 1) != 0 ? 0x1p-70 : 0x1p-132)), b[i] = rb;
          break;
        case Mode::kHuge: g[i] = HugeGrad(bits), b[i] = rb; break;
      }
    }
    if (!Run(DataType::kFloat32, g.data(), a.data(), b.data(), da.data(), db.data(), n)) {
      failed = true;
      return t;
    }
    for (int64_t i = 0; i < n; ++i) {
      double ea, eb;
      Exact(g[i], a[i], b[i], &ea, &eb);
      t.Add(0, da[i], ea, g[i], a[i], b[i], DataType::kFloat32);
      t.Add(1, db[i], eb, g[i], a[i], b[i], DataType::kFloat32);
    }
    t.checked += n;
  }
  return t;
}

// Every half A (NaN and inf included) against a grid of (g, B): signs, the
// extremes of the type and values between.
Tally CheckHalf(DataType type, int worker, int workers, std::atomic<bool>& failed) {
  const bool f16 = type == DataType::kFloat16;
  auto to_float = [f16](uint16_t h) { return f16 ? half::F16ToFloat(h) : half::BF16ToFloat(h); };
  auto from_float = [f16](float f) { return f16 ? half::FloatToF16(f) : half::FloatToBF16(f); };
  std::vector<float> grid_values = {0.0f, 1.0f, 0.5f, 3.0f, 1e-3f, 7.25f, 100.0f, 1e4f, 0.1f, 1.5f, 60000.0f};
  if (!f16) grid_values.insert(grid_values.end(), {1e-30f, 1e30f, 3e38f, 1e-38f});
  else grid_values.insert(grid_values.end(), {6e-8f, 3e-5f, 65504.0f});
  std::vector<uint16_t> grid;
  for (float v : grid_values) grid.push_back(from_float(v)), grid.push_back(from_float(-v));
  const int64_t m = static_cast<int64_t>(grid.size());
  Tally t;
  std::vector<uint16_t> g(65536), a(65536), b(65536), da(65536), db(65536);
  for (int64_t i = 0; i < 65536; ++i) a[i] = static_cast<uint16_t>(i);
  for (int64_t p = worker; p < m * m; p += workers) {
    std::fill(g.begin(), g.end(), grid[p / m]);
    std::fill(b.begin(), b.end(), grid[p % m]);
    if (!Run(type, g.data(), a.data(), b.data(), da.data(), db.data(), 65536)) {
      failed = true;
      return t;
    }
    for (int64_t i = 0; i < 65536; ++i) {
      const float gf = to_float(g[i]), af = to_float(a[i]), bf = to_float(b[i]);
      double ea, eb;
      Exact(gf, af, bf, &ea, &eb);
      t.Add(0, to_float(da[i]), ea, gf, af, bf, type);
      t.Add(1, to_float(db[i]), eb, gf, af, bf, type);
    }
    t.checked += 65536;
  }
  return t;
}

// Mode "halfpath": the half types' own path (common/swiglu_grad_half.h)
// for every operand it takes. Its float32 results are fl(P * s'(A)) and
// fl(g * silu(A)) with P = g*B exact and s'(A), silu(A) float32 functions
// of A alone; on that path every result is a normal float32 in the half
// type's normal range, so scaling P or g by 2^k scales the float32 result
// and the half rounding alike. The half result then depends only on A and
// on the significand of P (dA) or of g (dB): every half A in [kFastLow,
// kFastHigh) meets every significand a product of two half significands can
// have (dA) and every significand of a half (dB), subnormal factors
// included (their significands, shifted, are among these). A at or above
// kFastHigh gives g*B and g*A rounded once, SwiGluGradF32's arithmetic.
// Against a long double reference (64-bit significand): the error in ulps
// of the exact value, how many results are not the correctly rounded one,
// and how many lie too near a rounding midpoint for the reference to tell.
using Scalar = jas::simd::Scalar;

// x rounded to `bits` significant bits, to nearest even, exponent unbounded.
double RoundSig(double x, int bits) {
  if (x == 0.0 || !std::isfinite(x)) return x;
  const double scale = std::ldexp(1.0, bits - 1 - std::ilogb(x));
  return std::nearbyint(x * scale) / scale;
}

long double DerivativeLd(long double a) {
  const long double e = expl(a), s = 1.0L + e;
  return e * (1.0L + a + e) / (s * s);
}

long double SiluLd(long double a) { return a < 0 ? a * expl(a) / (1.0L + expl(a)) : a / (1.0L + expl(-a)); }

struct PathTally {
  double max_ulp[2] = {0, 0};  // dA, dB
  float max_at[2] = {0, 0};
  // not_nearest: past a midpoint; clearly: by more than 2^-20 ulp (the rest
  // are exact values a hair off a midpoint that the float32 value meets
  // exactly, as for A near 0, where s'(A) ~ 1/2 + A/4 and silu(A) ~ A/2).
  int64_t checked = 0, not_nearest[2] = {0, 0}, clearly[2] = {0, 0}, unresolved = 0, over = 0;
  void Merge(const PathTally& o) {
    for (int k = 0; k < 2; ++k) {
      if (o.max_ulp[k] > max_ulp[k]) max_ulp[k] = o.max_ulp[k], max_at[k] = o.max_at[k];
      not_nearest[k] += o.not_nearest[k];
      clearly[k] += o.clearly[k];
    }
    checked += o.checked, unresolved += o.unresolved, over += o.over;
  }
};

// The significands m (as doubles in [1, 2)) to try against one part: every
// p-bit one (dB), or every distinct product of two (dA).
std::vector<double> Significands(int p, bool products) {
  const int64_t lo = int64_t{1} << (p - 1), hi = int64_t{1} << p;
  std::vector<double> out;
  if (!products) {
    for (int64_t m = lo; m < hi; ++m) out.push_back(std::ldexp(static_cast<double>(m), 1 - p));
    return out;
  }
  const int64_t top = int64_t{1} << (2 * p);
  std::vector<bool> seen(top, false);
  for (int64_t m1 = lo; m1 < hi; ++m1) {
    for (int64_t m2 = m1; m2 < hi; ++m2) {
      const int64_t m = m1 * m2;
      seen[m < top / 2 ? 2 * m : m] = true;
    }
  }
  for (int64_t m = top / 2; m < top; ++m) {
    if (seen[m]) out.push_back(std::ldexp(static_cast<double>(m), 1 - 2 * p));
  }
  return out;
}

// One part of one A against every significand: the float32 product rounded
// with an unbounded exponent, then to p bits, against m * exact.
// A normal float rounded to p bits, to nearest even (the half stores' bit
// arithmetic, without their exponent range).
double RoundFloatTo(float r, int p) {
  const uint32_t shift = 24 - p, bits = half::Bits(r);
  const uint32_t rounded = (bits + ((1u << (shift - 1)) - 1) + ((bits >> shift) & 1)) & ~((1u << shift) - 1);
  return half::FromBits(rounded);
}

void CheckPart(int k, float a, float part, long double exact, const std::vector<double>& ms, int p, PathTally& t) {
  const double hi = static_cast<double>(exact), lo = static_cast<double>(exact - hi);
  const bool normal = std::fabs(part) >= 0x1p-120f;  // then m * part converts to float at full precision
  for (double m : ms) {
    const double product = m * double{part};  // exact in double
    const double h = normal ? RoundFloatTo(static_cast<float>(product), p) : RoundSig(RoundSig(product, 24), p);
    const double t_res = std::fma(m, hi, -h) + m * lo;  // exact - h
    uint64_t eb;
    const double mh = m * hi;
    std::memcpy(&eb, &mh, sizeof eb);
    const uint64_t exponent = (eb >> 52) & 0x7ff;  // m * hi is normal
    const uint64_t ulp_bits = (exponent - static_cast<uint64_t>(p - 1)) << 52;
    double ulp;
    std::memcpy(&ulp, &ulp_bits, sizeof ulp);
    const double err = std::fabs(t_res) / ulp;
    if (std::fabs(err - 0.5) < 0x1p-36) ++t.unresolved;
    t.not_nearest[k] += err > 0.5;
    t.clearly[k] += err > 0.5 + 0x1p-20;
    t.over += err >= 1.0;
    if (err > t.max_ulp[k]) t.max_ulp[k] = err, t.max_at[k] = a;
  }
  t.checked += static_cast<int64_t>(ms.size());
}

PathTally CheckHalfPath(DataType type, int worker, int workers) {
  const bool f16 = type == DataType::kFloat16;
  const int p = f16 ? 11 : 8;
  const std::vector<double> products = Significands(p, true), singles = Significands(p, false);
  PathTally t;
  for (int bits = worker; bits < 65536; bits += workers) {
    const uint16_t h = static_cast<uint16_t>(bits);
    const float a = f16 ? half::F16ToFloat(h) : half::BF16ToFloat(h);
    if (!(a >= jas::math::kFastLow && a < jas::math::kFastHigh)) continue;
    const jas::math::HalfSwiGluParts<Scalar> parts = jas::math::SwiGluHalfParts<Scalar>(a);
    CheckPart(0, a, parts.ds, DerivativeLd(a), products, p, t);
    if (a != 0.0f) CheckPart(1, a, parts.silu, SiluLd(a), singles, p, t);  // silu(0) = 0 leaves the path
  }
  return t;
}

// Mode "halfpath", second part: the half path's bits against
// SwiGluGradF32's over every half A and a grid of (g, B) (as CheckHalf),
// with how many of the differing results are the correctly rounded one.
struct BitsTally {
  int64_t checked = 0, differ[2] = {0, 0}, new_nearest[2] = {0, 0}, old_nearest[2] = {0, 0};
  void Merge(const BitsTally& o) {
    checked += o.checked;
    for (int k = 0; k < 2; ++k) {
      differ[k] += o.differ[k], new_nearest[k] += o.new_nearest[k], old_nearest[k] += o.old_nearest[k];
    }
  }
};

template <DataType T>
BitsTally CompareWithF32(const std::vector<float>& grid, int worker, int workers) {
  constexpr bool kF16 = T == DataType::kFloat16;
  auto round = [](float v) { return kF16 ? half::FloatToF16(v) : half::FloatToBF16(v); };
  auto widen = [](uint16_t v) { return kF16 ? half::F16ToFloat(v) : half::BF16ToFloat(v); };
  BitsTally t;
  for (int bits = worker; bits < 65536; bits += workers) {
    const float a = widen(static_cast<uint16_t>(bits));
    for (float g : grid) {
      for (float b : grid) {
        const jas::math::SwiGluPair<Scalar> now = jas::math::SwiGluGradOf<Scalar, T>(g, a, b);
        const jas::math::SwiGluPair<Scalar> old = jas::math::SwiGluGradF32<Scalar>(g, a, b);
        const uint16_t n[2] = {round(now.da), round(now.db)}, o[2] = {round(old.da), round(old.db)};
        for (int k = 0; k < 2; ++k) {
          if (n[k] == o[k]) continue;
          ++t.differ[k];
          const long double exact = k == 0 ? (long double){g} * b * DerivativeLd(a) : (long double){g} * SiluLd(a);
          const long double en = std::fabs(widen(n[k]) - exact), eo = std::fabs(widen(o[k]) - exact);
          t.new_nearest[k] += en < eo;
          t.old_nearest[k] += eo < en;
        }
        ++t.checked;
      }
    }
  }
  return t;
}

bool ReportHalfPath(int threads) {
  bool ok = true;
  for (DataType type : {DataType::kBFloat16, DataType::kFloat16}) {
    const char* name = type == DataType::kFloat16 ? "float16" : "bfloat16";
    const auto start = std::chrono::steady_clock::now();
    PathTally total;
    BitsTally bits;
    std::mutex mutex;
    std::vector<float> grid;
    for (int i = 0; i < 12; ++i) {
      const float v = jas::test::HashedGrad(static_cast<uint64_t>(i) + 77 * (type == DataType::kFloat16));
      const float r = type == DataType::kFloat16 ? half::F16ToFloat(half::FloatToF16(v)) :
                                                   half::BF16ToFloat(half::FloatToBF16(v));
      grid.push_back(r), grid.push_back(-r * 0.75f);
    }
    std::vector<std::thread> pool;
    for (int w = 0; w < threads; ++w) {
      pool.emplace_back([&, w] {
        const PathTally t = CheckHalfPath(type, w, threads);
        const BitsTally c = type == DataType::kFloat16 ? CompareWithF32<DataType::kFloat16>(grid, w, threads) :
                                                         CompareWithF32<DataType::kBFloat16>(grid, w, threads);
        std::lock_guard<std::mutex> lock(mutex);
        total.Merge(t);
        bits.Merge(c);
      });
    }
    for (std::thread& th : pool) th.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s half path: %lld (A, significand) pairs; not correctly rounded: dA %lld (%lld by over "
                "2^-20 ulp), dB %lld (%lld); 1 ulp or more: %lld; too near a midpoint to tell: %lld; %.1f s\n",
                name, static_cast<long long>(total.checked), static_cast<long long>(total.not_nearest[0]),
                static_cast<long long>(total.clearly[0]), static_cast<long long>(total.not_nearest[1]),
                static_cast<long long>(total.clearly[1]), static_cast<long long>(total.over),
                static_cast<long long>(total.unresolved), seconds);
    std::printf("  dA max %.5f ulp at A=%.9g; dB max %.5f ulp at A=%.9g\n", total.max_ulp[0], total.max_at[0],
                total.max_ulp[1], total.max_at[1]);
    std::printf("  against SwiGluGradF32 rounded, every A x %zu^2 (g, B): %lld inputs; differing dA %lld "
                "(nearest: new %lld, old %lld), dB %lld (nearest: new %lld, old %lld)\n",
                grid.size(), static_cast<long long>(bits.checked), static_cast<long long>(bits.differ[0]),
                static_cast<long long>(bits.new_nearest[0]), static_cast<long long>(bits.old_nearest[0]),
                static_cast<long long>(bits.differ[1]), static_cast<long long>(bits.new_nearest[1]),
                static_cast<long long>(bits.old_nearest[1]));
    std::fflush(stdout);
    ok &= total.over == 0;
  }
  return ok;
}

// --mode proof, by output and path.
struct Proof {
  // dA: the fast (and wide) path's pair for A in [-33, 24), the general
  // path for A in [-300, -33), g*B itself from 24 on; dB likewise, with the
  // wide path's double for A in [-33, 24) and g*A from 24 on; dA's wide path
  // takes the double formula where |A| >= kNearRootA, the pair elsewhere.
  jas::proof::RelTally da_fast, da_wide, da_general, da_high, db_fast, db_wide, db_general, db_high;
  double below_lowest_da = 0.0, below_lowest_db = 0.0;  // largest |value| for A < -300
  long long mismatches = 0;
  void Merge(const Proof& o) {
    da_fast.Merge(o.da_fast), da_wide.Merge(o.da_wide), da_general.Merge(o.da_general), da_high.Merge(o.da_high);
    db_fast.Merge(o.db_fast), db_wide.Merge(o.db_wide), db_general.Merge(o.db_general), db_high.Merge(o.db_high);
    below_lowest_da = std::max(below_lowest_da, o.below_lowest_da);
    below_lowest_db = std::max(below_lowest_db, o.below_lowest_db);
    mismatches += o.mismatches;
  }
};

Proof CheckProof(uint64_t begin, uint64_t end, int worker, int workers, std::atomic<bool>& failed) {
  using V = jas::simd::Scalar;
  namespace math = jas::math;
  using jas::proof::SiluDerivativeLong;
  using jas::proof::SiluLong;
  Proof p;
  std::vector<float> g(kBlock, 1.0f), b(kBlock, 1.0f), a(kBlock), da(kBlock), db(kBlock);
  for (uint64_t first = begin + worker * kBlock; first < end; first += workers * kBlock) {
    const int64_t n = static_cast<int64_t>(std::min<uint64_t>(kBlock, end - first));
    for (int64_t i = 0; i < n; ++i) a[i] = half::FromBits(static_cast<uint32_t>(first + i));
    if (!Run(DataType::kFloat32, g.data(), a.data(), b.data(), da.data(), db.data(), n)) {
      failed = true;
      return p;
    }
    for (int64_t i = 0; i < n; ++i) {
      const float x = a[i];
      if (!std::isfinite(x)) continue;  // the other modes check inf and NaN
      float ra, rb;
      if (x >= math::kFastHigh) {
        p.da_high.Add(x, 1.0L, SiluDerivativeLong(x));
        p.db_high.Add(x, x, SiluLong(x));
        ra = 1.0f, rb = x;
      } else if (x >= math::kFastLow) {
        const math::ExpTerms<V> terms = math::ExpTermsOf<V>(x);
        const math::ExpAndA<V> ea = math::ExpAndAFrom<V>(x, terms);
        const math::Split<V> ds = math::DerivativeF32<V>(x, ea);
        const math::Split<V> silu = math::SiluOfF32<V>(x, terms, ea);
        const double wide_db = math::WideSiluTimesD<V>(1.0, x, math::WideSeed<V>(terms), terms, 0);
        const long double exact_da = SiluDerivativeLong(x), exact_db = SiluLong(x);
        p.da_fast.AddPair(x, ds.hi, ds.lo, exact_da);
        if (!(std::fabs(ea.a) < math::kNearRootA)) {
          p.da_wide.Add(x, math::WideDerivativeD<V>(x, math::WideSeed<V>(terms), terms, 0), exact_da);
        }
        // A tiny but not zero takes the wide path for every (g, B).
        const bool tiny_a = std::fabs(x) < math::kSwiGluTinyA && x != 0.0f;
        if (!tiny_a) p.db_fast.AddPair(x, silu.hi, silu.lo, exact_db);
        p.db_wide.Add(x, wide_db, exact_db);
        ra = math::TimesPair<V>(1.0f, 0.0f, ds);
        rb = tiny_a ? static_cast<float>(wide_db) : math::TimesGrad<V>(1.0f, silu);
      } else {
        const math::SwiGluGeneralD<V> d = math::SwiGluGeneralDouble<V>(1.0f, x, 1.0f);
        const double vda = d.low ? d.da_low[0] : d.da[0], vdb = d.low ? d.db_low[0] : d.db[0];
        if (x >= math::kSwiGluLowest) {
          p.da_general.Add(x, vda, SiluDerivativeLong(x), 256);  // |g*B| < 2^256
          p.db_general.Add(x, vdb, SiluLong(x));
        } else {
          p.below_lowest_da = std::max(p.below_lowest_da, std::fabs(vda));
          p.below_lowest_db = std::max(p.below_lowest_db, std::fabs(vdb));
        }
        ra = static_cast<float>(vda), rb = static_cast<float>(vdb);
      }
      if (half::Bits(ra) != half::Bits(da[i]) || half::Bits(rb) != half::Bits(db[i])) {
        if (p.mismatches++ < 4) {
          std::printf("  kernel outputs (%.9g, %.9g) at A=%.9g are not the values rounded (%.9g, %.9g)\n", da[i],
                      db[i], x, ra, rb);
        }
      }
    }
  }
  return p;
}

bool RunProof(int threads, uint64_t begin, uint64_t end) {
  const auto start = std::chrono::steady_clock::now();
  std::atomic<bool> failed{false};
  const Proof t =
      jas::proof::OnThreads<Proof>(threads, [&](int w) { return CheckProof(begin, end, w, threads, failed); });
  if (failed) {
    std::fprintf(stderr, "exhaustive_swiglu: the kernel refused a block\n");
    std::exit(2);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The products' own terms, in units of 2^-24 of relative error. dA's fast
  // path: g*B = gbh + gbl (|gbl| <= 2^-24 |gbh|), and fma(gbh, hi,
  // fma(gbh, lo, gbl*hi)) drops gbl*lo and rounds gbl*hi and the inner FMA:
  // under 2 |lo/(hi + lo)| + 2^-22 of it. dB's: fma(g, hi, g*lo) rounds g*lo.
  // The double paths: a few 2^-53.
  const double da_extra = 2.0 * t.da_fast.lo_ratio + 0x1p-22, db_extra = std::max(t.db_fast.lo_ratio, 0x1p-27);
  const double double_extra = 0x1p-27;
  std::printf("proof: s'(A) and silu(A) before the products, every finite A in [0x%llx, 0x%llx); %.1f s\n",
              static_cast<unsigned long long>(begin), static_cast<unsigned long long>(end), seconds);
  t.da_fast.Print("dA fast, -33 <= A < 24", da_extra);
  t.da_wide.Print("dA wide, |1 + A + e^A| >= 2^-8", double_extra);
  t.da_general.Print("dA general, -300 <= A < -33", double_extra);
  t.da_high.Print("dA = g*B, A >= 24", 0.0);
  t.db_fast.Print("dB fast, -33 <= A < 24", db_extra);
  t.db_wide.Print("dB wide, -33 <= A < 24", double_extra);
  t.db_general.Print("dB general, -300 <= A < -33", double_extra);
  t.db_high.Print("dB = g*A, A >= 24", 0.0);
  // Below -300 the exact |g*B*s'(A)| < 2^256 * 300 e^-300 and |g*silu(A)| <
  // 2^128 * 300 e^-300, both below 2^-160: they round to zeros (of the exact
  // sign), and so do the kernel's values if these products of them do.
  const bool lowest_ok = t.below_lowest_da * 0x1p256 < 0x1p-150 && t.below_lowest_db * 0x1p128 < 0x1p-150;
  std::printf("  A < -300: largest |dA value| %.3g, |dB value| %.3g: scaled by 2^256 and 2^128 %s 2^-150\n",
              t.below_lowest_da, t.below_lowest_db, lowest_ok ? "below" : "NOT below");
  const double bound_da =
      std::max({t.da_fast.Bound(da_extra), t.da_wide.Bound(double_extra), t.da_general.Bound(double_extra),
                t.da_high.Bound(0.0)});
  const double bound_db = std::max({t.db_fast.Bound(db_extra), t.db_wide.Bound(double_extra),
                                    t.db_general.Bound(double_extra), t.db_high.Bound(0.0)});
  std::printf("  bound over every (g, B): dA %.4f ulp, dB %.4f ulp; outputs for g = B = 1 not the values rounded: "
              "%lld\n",
              bound_da, bound_db, static_cast<long long>(t.mismatches));
  std::fflush(stdout);
  return bound_da <= 4.0 && bound_db <= 4.0 && lowest_ok && t.mismatches == 0;
}

template <class Check>
bool Report(const char* name, int threads, Check check) {
  const auto start = std::chrono::steady_clock::now();
  std::atomic<bool> failed{false};
  const Tally total = jas::proof::OnThreads<Tally>(threads, [&](int w) { return check(w, threads, failed); });
  if (failed) {
    std::fprintf(stderr, "exhaustive_swiglu: the kernel refused a block\n");
    std::exit(2);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%-16s %lld inputs; over the bound: %lld, wrong NaN/inf: %lld; %.1f s\n", name,
              static_cast<long long>(total.checked), static_cast<long long>(total.over),
              static_cast<long long>(total.wrong_specials), seconds);
  for (int k = 0; k < 2; ++k) {
    const Worst& w = total.worst[k];
    std::printf("  %s max %.4f ulp at g=%.9g A=%.9g B=%.9g: %.9g vs exact %.12g\n", k == 0 ? "dA" : "dB", w.ulp, w.g,
                w.a, w.b, w.result, w.exact);
  }
  std::fflush(stdout);
  return total.over == 0 && total.wrong_specials == 0;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  uint64_t stride = 1;
  std::string modes = "all";
  uint64_t begin = 0, end = uint64_t{1} << 32;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--threads") {
      threads = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--stride") {
      stride = std::max<uint64_t>(1, std::strtoull(value.c_str(), nullptr, 10));
    } else if (flag == "--mode") {
      modes = value;
    } else if (flag == "--begin") {
      begin = std::strtoull(value.c_str(), nullptr, 16);
    } else if (flag == "--end") {
      end = std::min<uint64_t>(std::strtoull(value.c_str(), nullptr, 16), end);
    } else {
      std::fprintf(stderr, "exhaustive_swiglu: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (begin >= end) {
    std::fprintf(stderr, "exhaustive_swiglu: --begin must be below --end\n");
    return 2;
  }
  if (modes == "proof") return RunProof(threads, begin, end) ? 0 : 1;
  std::printf("swiglu_grad, ISA %s, every %llu-th float32 bit pattern in [0x%llx, 0x%llx), %d threads\n",
              jas::IsaName(jas::BestIsa()), static_cast<unsigned long long>(stride),
              static_cast<unsigned long long>(begin), static_cast<unsigned long long>(end), threads);
  bool ok = true;
  const struct {
    const char* name;
    Mode mode;
  } float32_modes[] = {{"one", Mode::kOne}, {"random", Mode::kRandom}, {"tiny", Mode::kTiny}, {"huge", Mode::kHuge}};
  for (const auto& m : float32_modes) {
    if (modes != "all" && modes != m.name) continue;
    const std::string label = std::string("float32 ") + m.name;
    ok &= Report(label.c_str(), threads, [&](int w, int n, std::atomic<bool>& failed) {
      return CheckFloat32(m.mode, begin, end, stride, w, n, failed);
    });
  }
  if (modes == "all" || modes == "halves") {
    for (DataType t : {DataType::kFloat16, DataType::kBFloat16}) {
      ok &= Report(t == DataType::kFloat16 ? "float16 grid" : "bfloat16 grid", threads,
                   [&](int w, int n, std::atomic<bool>& failed) { return CheckHalf(t, w, n, failed); });
    }
  }
  if (modes == "all" || modes == "halfpath") ok &= ReportHalfPath(threads);
  return ok ? 0 : 1;
}
