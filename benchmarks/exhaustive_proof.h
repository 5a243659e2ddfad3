// What benchmarks/exhaustive_accuracy.cc and exhaustive_swiglu.cc share for
// their --proof mode: a long double reference of s'(x) and silu(x), and the
// tally of a value's relative error before its final rounding.
//
// The argument. Every float32 result of SiluGrad and SwiGluGrad is one
// rounding of y = f * S, where f is the operand factor (grad_output, or g*B
// exact, or g) and S the kernel's value for s'(x) or silu(x) as it stands
// before that rounding: hi + lo on the fast path, a double elsewhere (the
// tools take it from the functions of kernel/common the kernel itself
// calls). S does not depend on f, so its relative error e(x) = (S - exact) /
// exact, measured for every x, bounds y's for every f, up to the small
// terms the product adds (each tool names them). Rounding y to float32 then
// adds at most half a spacing of y's own binade. Counted in ulps of the
// exact result z = f * exact:
//   - y below z (e < 0): |e| * 2^24 + 0.5 at most (if y falls into the binade
//     below, its spacing is half as large);
//   - y above z (e > 0): e * 2^24 + 0.5 while y stays in z's binade, and up to
//     e * 2^24 + 1 where z lies just below a power of two and y just above,
//     whose spacing is twice z's: a value of f puts z there for every x
//     (the bound of 2^24 e + 0.5 alone does not hold);
//   - subnormal results (spacing 2^-149 below 2^-126): |e| * 2^23 + 0.5,
//     and |e| * |z| * 2^149 + 0.5 where even the largest factor (|f| below
//     2^F) keeps z below 2^-126: Add scales such an x's error by
//     2^(F + 125) * |exact| < 1 (where s'(x) is below 2^-278, the general
//     path's E loses its bits, and every result rounds to a zero);
//   - overflow: y rounds to inf from 2^128 - 2^103 on, so z then lies
//     within e * 2^24 - 0.5 ulp of the largest float; counted as 2^128 (the
//     value IEEE rounds to before it overflows), inf is within e * 2^24 + 0.5
//     ulp of z.
// So the bound over every f is max(2^24 e+ + 1, 2^24 |e-| + 0.5) plus the
// product's terms, e+ and e- the largest errors above and below.
#ifndef JAX_ASCEND_SILU_BENCHMARKS_EXHAUSTIVE_PROOF_H_
#define JAX_ASCEND_SILU_BENCHMARKS_EXHAUSTIVE_PROOF_H_

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

namespace jas::proof {

// work(w) for w in [0, threads), each on a thread of its own, merged into one
// T (T::Merge) in whatever order the threads finish: the tools' tallies are
// sums and maxima, which do not depend on it.
template <class T, class Work>
T OnThreads(int threads, Work work) {
  T total;
  std::mutex mutex;
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w) {
    pool.emplace_back([&, w] {
      const T t = work(w);
      std::lock_guard<std::mutex> lock(mutex);
      total.Merge(t);
    });
  }
  for (std::thread& t : pool) t.join();
  return total;
}

// x0 = -1 - W(1/e) as a long double pair, and c = e^x0 = -1 - x0 (mpmath,
// 200 bits).
inline constexpr long double kX0Hi = -0xa3a4b9e420905bf2p-63L;
inline constexpr long double kX0Lo = 0xa2d0d94faaebb5b0p-128L;
inline constexpr long double kC = 0x8e92e79082416fc7p-65L;

// s'(x) for finite x: (1 + E*(1 + x)) / (1 + E)^2 with E = e^-x above 0,
// E*A / (1 + E)^2 with E = e^x and A = 1 + x + E below, where A near the
// root is d + c*expm1(d), d = x - x0 (x - hi exact there, Sterbenz): both
// terms share d's sign, so the relative error stays near 2^-62 up to the root.
inline long double SiluDerivativeLong(float xf) {
  const long double x = xf;
  if (x > 0) {
    const long double e = expl(-x);
    return (1 + e * (1 + x)) / ((1 + e) * (1 + e));
  }
  const long double e = expl(x);
  const long double d = (x - kX0Hi) - kX0Lo;
  const long double a = fabsl(d) < 0.5L ? d + kC * expm1l(d) : 1 + x + e;
  return e * a / ((1 + e) * (1 + e));
}

// silu(x) = x * sigma(x) for finite x.
inline long double SiluLong(float xf) {
  const long double x = xf;
  if (x > 0) return x / (1 + expl(-x));
  const long double e = expl(x);
  return x * e / (1 + e);
}

// The largest relative errors above and below the exact value, in units of
// 2^-24 (so 2^24 e), with their x; and the largest |lo / (hi + lo)| of a pair.
struct RelTally {
  double over = 0.0, under = 0.0, lo_ratio = 0.0;
  float x_over = 0.0f, x_under = 0.0f;
  long long count = 0;
  // factor_log2: F, the operand factor's magnitude bound 2^F.
  void Add(float x, long double value, long double exact, int factor_log2 = 128) {
    ++count;
    if (exact == 0) return;  // no finite float x is a root of s' or of silu but 0, where value is 0 too
    const long double reach = ldexpl(fabsl(exact), factor_log2 + 125);
    const double e = static_cast<double>((value - exact) / exact * (reach < 1 ? reach : 1)) * 0x1p24;
    if (e > over) over = e, x_over = x;
    if (-e > under) under = -e, x_under = x;
  }
  void AddPair(float x, float hi, float lo, long double exact) {
    const long double v = static_cast<long double>(hi) + lo;  // exact but for 2^-64 of it
    if (v != 0) lo_ratio = std::max(lo_ratio, static_cast<double>(fabsl(lo / v)));
    Add(x, v, exact);
  }
  void Merge(const RelTally& o) {
    if (o.over > over) over = o.over, x_over = o.x_over;
    if (o.under > under) under = o.under, x_under = o.x_under;
    lo_ratio = std::max(lo_ratio, o.lo_ratio);
    count += o.count;
  }
  // The bound in ulps over every operand factor, `extra` (relative, in units
  // of 2^-24) added for the product's own terms.
  double Bound(double extra) const { return std::max(over + 1.0, under + 0.5) + extra; }
  void Print(const char* name, double extra) const {
    std::printf("  %-34s %11lld x: 2^24 e above %.4f at x=%.9g, below %.4f at x=%.9g; max |lo/(hi+lo)| %.3g; "
                "bound %.4f ulp\n",
                name, count, over, x_over, under, x_under, lo_ratio, Bound(extra));
  }
};

}  // namespace jas::proof

#endif  // JAX_ASCEND_SILU_BENCHMARKS_EXHAUSTIVE_PROOF_H_
