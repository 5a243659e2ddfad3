// Every bfloat16 and float16 x through the kernel (full path, the ISA the
// dispatcher picks; test_determinism checks that every ISA gives the same
// bits) against the float64 reference, for several classes of grad_output,
// within MaxUlp (1 ulp). For float16 that includes every grad_output whose
// products can reach the overflow threshold 65520 (the midpoint between the
// largest float16, 65504, and inf): there a float32 value off by a float32
// ulp would round to the wrong side.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/half.h"
#include "kernel_test_util.h"

namespace jas::test {
namespace {

constexpr int64_t kAllX = 65536;

struct GradClass {
  std::string name;
  // grad_output's bits for row r, element i (x's bit pattern i).
  uint32_t (*bits)(DataType t, int64_t row, int64_t i);
  int64_t rows;
};

// The largest ulp error of grad_output rows x every x bit pattern; with
// `broadcast` x is one row for all of them (s'(x) computed once, in double).
double MaxError(DataType t, const GradClass& c, bool broadcast, double* worst_g, double* worst_x) {
  std::vector<double> ds(kAllX);
  for (int64_t i = 0; i < kAllX; ++i) ds[i] = SiluDerivative(ToFloat(t, static_cast<uint32_t>(i)));
  double worst = 0.0;
  constexpr int64_t kRowsPerCall = 16;
  for (int64_t r0 = 0; r0 < c.rows; r0 += kRowsPerCall) {
    const int64_t rows = std::min(kRowsPerCall, c.rows - r0);
    Operand go = Contiguous(t, {rows, kAllX}), out = Contiguous(t, {rows, kAllX});
    Operand x = broadcast ? Contiguous(t, {kAllX}) : Contiguous(t, {rows, kAllX});
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < kAllX; ++i) {
        go.SetBits(r * kAllX + i, c.bits(t, r0 + r, i));
        if (!broadcast || r == 0) x.SetBits(r * kAllX + i, static_cast<uint32_t>(i));
      }
    }
    EXPECT_EQ(Compute(go, x, out), kSuccess);
    for (int64_t k = 0; k < rows * kAllX; ++k) {
      const double g = go.Value(k);
      const int64_t i = k % kAllX;
      const double err = UlpError(out.Value(k), g * ds[i], t);
      if (err > worst) {
        worst = err;
        *worst_g = g;
        *worst_x = x.Value(broadcast ? i : k);
      }
    }
  }
  return worst;
}

std::vector<GradClass> Classes() {
  return {
      {"one", [](DataType t, int64_t, int64_t) { return FromFloat(t, 1.0f); }, 1},
      {"zero and -0", [](DataType t, int64_t r, int64_t) { return FromFloat(t, r ? -0.0f : 0.0f); }, 2},
      {"random", [](DataType t, int64_t r, int64_t i) { return FromFloat(t, HashedGrad(r * kAllX + i)); }, 4},
      // float16: results in its subnormal range; bfloat16: subnormal gradients.
      {"subnormal results",
       [](DataType t, int64_t r, int64_t i) {
         const float v = HashedGrad(r * kAllX + i + 7);
         return FromFloat(t, t == DataType::kFloat16 ? v * 0x1p-20f : static_cast<float>(v * 0x1p-132));
       },
       2},
      // Normal, but below the kernel's threshold for finishing in double
      // (float16 has no such values; these round to its subnormals).
      {"tiny", [](DataType t, int64_t r, int64_t i) { return FromFloat(t, HashedGrad(r * kAllX + i + 11) * 0x1p-70f); },
       1},
      // bfloat16: |g| in [2^127, 2^128), across the fast path's limit;
      // float16: |g| in [256, 32768).
      {"huge",
       [](DataType t, int64_t r, int64_t i) {
         const float v = HashedGrad(r * kAllX + i + 13);
         if (t == DataType::kFloat16) return FromFloat(t, v * 0x1p12f);
         return FromFloat(t, half::FromBits((half::Bits(v) & 0x807fffffu) | (254u << 23)));
       },
       2},
      // Every float16 g with |g| * max s' (1.0998) >= 65520, both signs;
      // for bfloat16 the same values, far from its overflow.
      {"float16 overflow edge",
       [](DataType t, int64_t r, int64_t) {
         const uint32_t g16 = 0x7b00u + static_cast<uint32_t>(r / 2);  // 57344 .. 65504
         const float g = half::F16ToFloat(static_cast<uint16_t>(g16 | (r % 2 ? 0x8000u : 0u)));
         return FromFloat(t, g);
       },
       2 * 256},
  };
}

TEST(half_accuracy, every_x_within_one_ulp) {
  for (DataType t : kTypes) {
    if (t == DataType::kFloat32) continue;
    for (const GradClass& c : Classes()) {
      for (bool broadcast : {false, true}) {
        double g = 0.0, x = 0.0;
        const double worst = MaxError(t, c, broadcast, &g, &x);
        const char* path = broadcast ? "x broadcast" : "full";
        std::printf("  %s, %s, grad_output %s: max %.4f ulp (g %.9g, x %.9g)\n", DtypeName(t), path, c.name.c_str(),
                    worst, g, x);
        EXPECT_LE(worst, MaxUlp(t)) << DtypeName(t) << " " << path << " grad_output " << c.name << ": g " << g
                                    << " x " << x;
      }
    }
  }
}

}  // namespace
}  // namespace jas::test
