// What a real Ascend returns for SiluGrad and SwiGluGrad, as the Ascend tests check it: a
// float64 model of CANN's formula, and how far CANN's float32 evaluation of it
// may stray. ops-nn's silu_grad kernel computes sigma = 1/(1+e^-x), then
// dy*sigma*(1 + x*(1-sigma)), in float32 operations rounded one by one
// (float16/bfloat16 inputs upcast, the result rounded to nearest even). That
// is the plain formula: x = +-inf gives NaN (0*inf), and near the root of
// s'(x) (x ~ -1.2785) and for large |x| its error is absolute, about
// |dy|*|x|*2^-24, not a few ulps of the result as this package's kernel
// promises. The fake CANN (fake_cann.cc) evaluates the formula as the kernel
// does; this file is the independent yardstick its results are held to.
#ifndef JAX_ASCEND_SILU_TESTS_ASCEND_FAKE_CANN_REFERENCE_H_
#define JAX_ASCEND_SILU_TESTS_ASCEND_FAKE_CANN_REFERENCE_H_

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "common/dtype.h"

namespace cann_reference {

// CANN's formula in float64 on the (already rounded) inputs. NaN where CANN's
// is: a NaN input, or x = +-inf. For finite x and dy it is the exact value to
// float64 precision; where float32's exp overflows (x < -88.7) CANN's sigma
// is 0 and this one tiny, which the tolerance below covers for finite dy.
inline double Formula(double dy, double x) {
  const double sigma = 1.0 / (1.0 + std::exp(-x));
  return dy * (sigma * (1.0 + x * (1.0 - sigma)));
}

// The spacing of dtype `t` at magnitude `v` (subnormal spacing below the normal range).
inline double Ulp(jas::DataType t, double v) {
  const int bits = t == jas::DataType::kFloat32 ? 24 : t == jas::DataType::kFloat16 ? 11 : 8;
  const int emin = t == jas::DataType::kFloat16 ? -14 : -126;
  const int e = v > 0 && std::isfinite(v) ? std::max(std::ilogb(v), emin) : emin;
  return std::ldexp(1.0, e - bits + 1);
}

// How far a float32 evaluation of the formula may be from Formula(dy, x) for
// finite dy, from the roundings of each step (u = 2^-24): sigma carries about
// four (exp, add, divide), es = 4u*sigma, and all of itself where float32's
// sigma is subnormal or 0 (x below -87); 1 - sigma is off by that (never by
// more than twice 1 - sigma: for large x both are tiny) plus its own rounding;
// t = x*(1 - sigma) and 1 + t add theirs; the result is dy*sigma*(1 + t), so
// err <= |dy|*(sigma*err(1 + t) + |1 + t|*es) + 2u*|result|. The tolerance is
// twice that, then half an ulp of float16/bfloat16 for their rounding. It
// fails a wrong formula, a wrong element or a rounding not to nearest, not the
// last bit.
inline double Tolerance(jas::DataType t, double dy, double x, double want) {
  const double u = 0x1p-24;
  const double sigma = 1.0 / (1.0 + std::exp(-x)), one_minus = 1.0 - sigma;
  const double es = 4.0 * u * sigma + (sigma < 0x1p-125 ? sigma : 0.0);
  const double e1 = std::min(es, 2.0 * one_minus) + u * one_minus;
  const double tx = x * one_minus, ady = std::fabs(dy);
  const double e_sum = std::fabs(x) * e1 + u * std::fabs(tx) + u * std::fabs(1.0 + tx);
  double tol =
      2.0 * (ady * (sigma * e_sum + std::fabs(1.0 + tx) * es) + 2.0 * u * std::fabs(want)) + 0x1p-149;
  if (t != jas::DataType::kFloat32) tol += 0.5 * Ulp(t, std::fabs(want) + tol);
  return tol;
}

// Whether `got` is `want` within `tol`: NaN exactly where `want` is NaN,
// infinities equal. `why` gets a line naming the element (`what`) when not.
inline bool Within(jas::DataType t, double want, double got, double tol, const std::string& what,
                   std::string* why) {
  bool ok;
  if (std::isnan(want) || std::isnan(got)) {
    ok = std::isnan(want) && std::isnan(got);
  } else if (std::isinf(want) || std::isinf(got)) {
    ok = want == got;
  } else {
    ok = std::fabs(got - want) <= tol;
  }
  if (!ok && why != nullptr) {
    std::ostringstream line;
    line.precision(9);
    line << jas::DtypeName(t) << " " << what << ": got " << got << ", CANN's formula gives " << want
         << " (tolerance " << tol << ")";
    *why = line.str();
  }
  return ok;
}

inline std::string Values(const char* n1, double v1, const char* n2, double v2, const char* n3 = nullptr,
                          double v3 = 0) {
  std::ostringstream s;
  s.precision(9);
  s << n1 << " " << v1 << ", " << n2 << " " << v2;
  if (n3 != nullptr) s << ", " << n3 << " " << v3;
  return s.str();
}

// Whether `got`, CANN's result for (dy, x) in dtype `t`, is CANN's formula:
// NaN exactly where the model is NaN, otherwise within Tolerance. `why` gets
// a line naming the element when it is not.
inline bool Matches(jas::DataType t, double dy, double x, double got, std::string* why = nullptr) {
  const double want = Formula(dy, x);
  return Within(t, want, got, Tolerance(t, dy, x, want), Values("dy", dy, "x", x), why);
}

// SwiGluGrad (ops-nn's swi_glu_grad): dA = (g*B)*s'(A), computed as SiluGrad's
// formula with dy = g*B (one more rounding: g*B), and dB = g*(A*sigma(A)).
inline double SwiGluA(double g, double a, double b) { return Formula(g * b, a); }
inline double SwiGluB(double g, double a) { return g * (a * (1.0 / (1.0 + std::exp(-a)))); }

// Whether (got_a, got_b), CANN's dA and dB for (g, A, B) in dtype `t`, are
// CANN's formula. dA: SiluGrad's tolerance for dy = g*B plus g*B's own
// rounding (u*|dA|, doubled); dB: sigma's error (as in Tolerance), then two
// roundings (A*sigma and g*(...)), doubled; then half an ulp of the half
// types for their rounding.
inline bool SwiGluMatches(jas::DataType t, double g, double a, double b, double got_a, double got_b,
                          std::string* why = nullptr) {
  const double u = 0x1p-24;
  const double want_a = SwiGluA(g, a, b), want_b = SwiGluB(g, a);
  const double tol_a = Tolerance(t, g * b, a, want_a) + 2.0 * u * std::fabs(want_a);
  const double sigma = 1.0 / (1.0 + std::exp(-a));
  const double es = 4.0 * u * sigma + (sigma < 0x1p-125 ? sigma : 0.0);
  double tol_b = 2.0 * (std::fabs(g * a) * es + 2.0 * u * std::fabs(want_b)) + 0x1p-149;
  if (t != jas::DataType::kFloat32) tol_b += 0.5 * Ulp(t, std::fabs(want_b) + tol_b);
  const std::string what = Values("g", g, "A", a, "B", b);
  return Within(t, want_a, got_a, tol_a, "dA at " + what, why) &&
         Within(t, want_b, got_b, tol_b, "dB at " + what, why);
}

}  // namespace cann_reference

#endif  // JAX_ASCEND_SILU_TESTS_ASCEND_FAKE_CANN_REFERENCE_H_
