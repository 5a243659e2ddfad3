// The exp table of the fast path (kernel/common/silu_grad_fast.h): its
// entries are exact products of the two factor tables, its corrections are
// what the argument reduction needs, and the factored lookup (AVX2) and the
// 32-entry one (the other ISAs and CUDA) produce the same 2^m * T_j.
#include <bit>
#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "common/silu_grad_fast.h"

namespace jas::math {
namespace {

constexpr long double kLn2 = 0.693147180559945309417232121458176568L;

// Significant bits of a positive float: 24 minus the trailing zeros of its significand.
int SignificantBits(float v) {
  const uint32_t significand = (std::bit_cast<uint32_t>(v) & 0x7fffffu) | 0x800000u;
  return 24 - std::countr_zero(significand);
}

uint32_t Bits(float v) { return std::bit_cast<uint32_t>(v); }

TEST(exp_table, factors_are_short_enough_for_exact_products) {
  for (int i = 0; i < 4; ++i) {
    EXPECT_LE(SignificantBits(kExpP[i]), 11) << "P_" << i;
    EXPECT_LT(std::fabs(std::log2(static_cast<double>(kExpP[i])) - i / 4.0), 1e-3) << "P_" << i;
  }
  for (int l = 0; l < 8; ++l) {
    EXPECT_LE(SignificantBits(kExpQ[l]), 13) << "Q_" << l;
    EXPECT_LT(std::fabs(std::log2(static_cast<double>(kExpQ[l])) - l / 32.0), 1e-3) << "Q_" << l;
  }
}

TEST(exp_table, entries_are_the_products_and_corrections_the_sums) {
  for (int j = 0; j < 32; ++j) {
    const int i = j >> 3, l = j & 7;
    const double product = static_cast<double>(kExpP[i]) * kExpQ[l];
    ASSERT_EQ(static_cast<double>(static_cast<float>(product)), product) << "P_i * Q_l is not exact, j = " << j;
    // V::AddExponent adds k*2^18 = m*2^23 + j*2^18 back.
    EXPECT_EQ(Bits(kExpTables.t[j]) + (static_cast<uint32_t>(j) << 18), Bits(static_cast<float>(product))) << j;
    // The sum the factored lookup computes at run time, rounded once.
    volatile float dp = kExpDeltaP[i], dq = kExpDeltaQ[l];
    EXPECT_EQ(Bits(kExpTables.delta[j]), Bits(dp + dq)) << j;
    // delta_j = ln(T_j) - j*ln2/32 to well below the polynomial's 2^-33.
    const long double exact = std::log(static_cast<long double>(product)) - j * kLn2 / 32;
    EXPECT_LT(std::fabs(static_cast<long double>(kExpTables.delta[j]) - exact), 0x1p-35L) << j;
    // |r| <= ln2/64 + |delta_j| stays inside the polynomial's interval.
    EXPECT_LT(kLn2 / 64 + std::fabs(exact), 0.01111L) << j;
  }
}

TEST(exp_table, factor_corrections_are_rounded_logarithms) {
  for (int i = 0; i < 4; ++i) {
    const long double exact = std::log(static_cast<long double>(kExpP[i])) - i * kLn2 / 4;
    EXPECT_EQ(kExpDeltaP[i], static_cast<float>(exact)) << "dP_" << i;
  }
  for (int l = 0; l < 8; ++l) {
    const long double exact = std::log(static_cast<long double>(kExpQ[l])) - l * kLn2 / 32;
    EXPECT_EQ(kExpDeltaQ[l], static_cast<float>(exact)) << "dQ_" << l;
  }
}

// Both lookups' exponent steps, on the bits of kf = k + 1.5*2^23 for every k
// the fast path reaches (x in [-33, 24]: |32x/ln2| < 1524).
TEST(exp_table, factored_and_direct_lookups_give_the_same_scaled_entry) {
  for (int k = -1600; k <= 1200; ++k) {
    const uint32_t kf = Bits(0x1.8p23f + static_cast<float>(k));
    const int j = k & 31, m = (k - j) / 32;
    const float direct = std::bit_cast<float>(Bits(kExpTables.t[j]) + (kf << 18));
    const uint32_t k8 = kf >> 3;
    const float p = std::bit_cast<float>(Bits(kExpTables.p[k8 & 7]) + (k8 << 21));
    ASSERT_EQ(kExpTables.delta_p[k8 & 7] + kExpDeltaQ[kf & 7], kExpTables.delta[j]) << "k = " << k;
    const float factored = p * kExpQ[kf & 7];
    ASSERT_EQ(Bits(direct), Bits(factored)) << "k = " << k;
    ASSERT_EQ(static_cast<double>(direct), std::ldexp(static_cast<double>(kExpP[j >> 3]) * kExpQ[j & 7], m)) << k;
  }
}

}  // namespace
}  // namespace jas::math
