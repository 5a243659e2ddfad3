// Gradients at the bottom of float32's range: subnormal grad_output, and
// products that underflow into the subnormal range, keep IEEE gradual
// underflow on every ISA (no flush to zero; the 4 ulp bound holds in the
// subnormal spacing), checked without the reference's forgiveness of errors below
// 2^-100 that the other tests use.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "kernel_test_util.h"
#include "cpu/backend.h"
#include "silu_grad.h"

namespace jas::test {
namespace {

// |result - exact| in units of the float32 spacing at `exact` (2^-149 below 2^-126).
double StrictUlps(double result, double exact) {
  const int exponent = exact == 0.0 ? -126 : std::max(std::ilogb(exact), -126);
  return std::fabs(result - exact) / std::ldexp(1.0, exponent - 23);
}

TEST(underflow, subnormal_and_tiny_gradients_round_once_into_the_result) {
  Rng rng(11);
  std::uniform_real_distribution<float> xs(-40.0f, 30.0f), window(-1.5f, -1.0f);
  std::uniform_int_distribution<uint32_t> subnormal_bits(1, 0x7fffff), tiny_exponent(1, 84);
  const int64_t n = 1 << 16;
  Operand g = Contiguous(DataType::kFloat32, {n}), x = Contiguous(DataType::kFloat32, {n});
  for (int64_t i = 0; i < n; ++i) {
    // Lanes alternate: subnormal g, normal g below 2^-43, and g = 1 among them
    // (a vector mixing tiny and ordinary lanes).
    const uint32_t sign = (rng() & 1) << 31;
    const uint32_t bits = i % 3 == 0 ? subnormal_bits(rng)
                          : i % 3 == 1 ? (tiny_exponent(rng) << 23) | (rng() & 0x7fffff)
                                       : 0x3f800000u;
    g.SetBits(i, sign | bits);
    x.SetBits(i, FromFloat(DataType::kFloat32, i % 5 == 0 ? window(rng) : xs(rng)));
  }
  int64_t subnormal_results = 0;
  for (Isa isa : SupportedIsas()) {
    Operand out = Contiguous(DataType::kFloat32, {n});
    ASSERT_TRUE(Compute(g, x, out, {isa}) == kSuccess);
    double worst_subnormal = 0.0, worst_normal = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const double exact = g.Value(i) * SiluDerivative(x.Value(i));
      const double err = StrictUlps(out.Value(i), exact);
      const bool subnormal = std::fabs(exact) < 0x1p-126;
      subnormal_results += subnormal && isa == Isa::kScalar;
      (subnormal ? worst_subnormal : worst_normal) = std::max(subnormal ? worst_subnormal : worst_normal, err);
      // Subnormal results have the same relative error budget as normal ones
      // (a flushed or twice-rounded result would miss it by far).
      EXPECT_TRUE(err <= MaxUlp(DataType::kFloat32))
          << IsaName(isa) << ": g " << g.Value(i) << ", x " << x.Value(i) << " gives " << out.Value(i)
          << ", exact " << exact << " (" << err << " ulp)";
    }
    std::printf("  %s: worst %.3f ulp (subnormal results), %.3f ulp (normal results)\n", IsaName(isa),
                worst_subnormal, worst_normal);
  }
  EXPECT_TRUE(subnormal_results > n / 10) << "only " << subnormal_results << " subnormal results";
}

}  // namespace
}  // namespace jas::test
