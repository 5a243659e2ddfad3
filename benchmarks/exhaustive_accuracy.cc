// Every float32 x through the CPU kernel, against the float64 reference of
// the kernel tests (tests/kernel/kernel_test_util.h: s'(x) accurate up to the
// root, errors in ulps of the exact result, subnormal spacing below 2^-126;
// unlike the tests, tiny errors below 2^-100 are not forgiven), with grad_output = 1 and with
// a pseudo-random grad_output per x. Not a ctest entry: 2^32 inputs take
// minutes. grad_output "tiny" is the random one times 2^-132 (subnormal,
// results down to gradual underflow) or, for odd bit patterns, times 2^-70
// (normal, but below the kernel's threshold for finishing in double);
// "huge" is the random one's significand and sign with exponent 127
// (|g| in [2^127, 2^128), where products cross float32's overflow
// threshold). Build the target `exhaustive_accuracy` (configure with
// -DJAX_ASCEND_SILU_TESTS=ON) and run
//   exhaustive_accuracy [--isa auto|scalar|avx2|avx512|neon] [--threads N]
//                       [--stride S] [--grad one|random|tiny|huge|all|proof]
//                       [--begin BITS] [--end BITS]
// --grad proof bounds the error for every grad_output at once (the argument
// is in exhaustive_proof.h): for every finite x it measures the relative
// error of s'(x) as the kernel holds it before the product with grad_output
// (kernel/common's DerivativeF32 on the fast path, WideDerivativeD's double
// for a huge grad_output or a broadcast x, GradDouble's double on the
// general path), against a long double reference, and checks that the
// kernel's output for grad_output = 1 is that value rounded (so the
// measured value is the one the kernel uses), and that the broadcast path's
// s'(x) (DerivativeDoubleF32) is the value measured. Exit status 1 when the
// bound passes 4 ulp or a value differs. Not part of "all".
// --stride S checks every S-th bit pattern (a quick look); --begin and --end
// (hexadecimal float32 bit patterns, end excluded) check one range only. Exit status 1 when
// any result is beyond the float32 bound (4 ulp) or wrongly NaN/inf.
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
#include "common/silu_grad_f32.h"
#include "cpu/backend.h"
#include "silu_grad.h"
#include "cpu/simd_scalar.h"
#include "exhaustive_proof.h"
#include "kernel_test_util.h"

namespace {

using jas::DataType;

constexpr int64_t kBlock = int64_t{1} << 20;
constexpr double kRoot = -1.2784645427610738;

// Where an input falls, for the per-region maxima.
enum Region { kNearRoot, kNegative, kMiddle, kPositive, kBelowFast, kSpecial, kRegions };
const char* const kRegionNames[kRegions] = {"|x-x0|<2^-9", "-33<=x<-4", "-4<=x<4", "4<=x", "x<-33", "inf/nan"};

Region RegionOf(float x) {
  if (!std::isfinite(x)) return kSpecial;
  if (std::fabs(x - kRoot) < 0x1p-9) return kNearRoot;
  if (x < -33.0f) return kBelowFast;  // the kernel's general path
  if (x < -4.0f) return kNegative;
  if (x < 4.0f) return kMiddle;
  return kPositive;
}

// grad_output for x: drawn from a hash of x's bits, so every run checks the same pairs.
float RandomGrad(uint32_t bits) { return jas::test::HashedGrad(bits); }

struct Worst {
  double ulp = 0.0;
  float x = 0.0f, g = 0.0f, result = 0.0f;
  double exact = 0.0;
};

struct Tally {
  Worst region[kRegions];
  int64_t wrong_specials = 0;  // NaN/inf where the exact value differs
  int64_t over_bound = 0;      // finite errors above 4 ulp
  int64_t over_3 = 0;          // above 3 ulp
  void Merge(const Tally& o) {
    for (int r = 0; r < kRegions; ++r) {
      if (o.region[r].ulp > region[r].ulp) region[r] = o.region[r];
    }
    wrong_specials += o.wrong_specials;
    over_bound += o.over_bound;
    over_3 += o.over_3;
  }
};

// UlpError without its forgiveness of float32 errors below 2^-100.
double StrictUlpError(float result, double exact) {
  const double err = jas::test::UlpError(result, exact, DataType::kFloat32);
  if (err != 0.0 || std::isnan(exact) || std::isinf(exact) || std::fabs(exact) >= 0x1p-100) return err;
  const double ulp = std::ldexp(1.0, std::max(exact == 0.0 ? -126 : std::ilogb(exact), -126) - 23);
  return std::fabs(result - exact) / ulp;
}

bool Run(jas::Isa isa, const float* g, const float* x, float* out, int64_t n) {
  const int64_t dims[1] = {n};
  jas::TensorDesc tg{DataType::kFloat32, 1, dims, nullptr, 0, n, const_cast<float*>(g)};
  jas::TensorDesc tx{DataType::kFloat32, 1, dims, nullptr, 0, n, const_cast<float*>(x)};
  jas::TensorDesc to{DataType::kFloat32, 1, dims, nullptr, 0, n, out};
  uint64_t ws = 0;
  jas::CpuExecutor* e = nullptr;
  if (jas::SiluGradGetWorkspaceSize(&tg, &tx, &to, &ws, &e) != jas::kSuccess || ws != 0) return false;
  if (jas::CpuSetIsa(e, isa) != jas::kSuccess) {
    jas::CpuDestroyExecutor(e);
    return false;
  }
  return jas::CpuRun(nullptr, 0, e, nullptr) == jas::kSuccess;
}

// Checks bit patterns [begin, end) with the given stride, block by block.
enum class Grad { kOne, kRandom, kTiny, kHuge };

float HugeGrad(uint32_t bits) {
  return jas::half::FromBits((jas::half::Bits(RandomGrad(bits)) & 0x807fffffu) | (254u << 23));
}

Tally CheckRange(jas::Isa isa, Grad grad, uint64_t first_block, uint64_t block_step, uint64_t begin, uint64_t end,
                 uint64_t stride, uint64_t num_blocks, std::atomic<bool>& failed) {
  Tally t;
  std::vector<float> g(kBlock), x(kBlock), out(kBlock);
  for (uint64_t b = first_block; b < num_blocks; b += block_step) {
    int64_t n = 0;
    for (uint64_t i = b * kBlock; i < (b + 1) * kBlock && begin + i * stride < end; ++i, ++n) {
      const uint32_t bits = static_cast<uint32_t>(begin + i * stride);
      x[n] = jas::half::FromBits(bits);
      g[n] = grad == Grad::kOne ? 1.0f
             : grad == Grad::kRandom ? RandomGrad(bits)
             : grad == Grad::kHuge   ? HugeGrad(bits)
                                     : static_cast<float>(static_cast<double>(RandomGrad(bits)) *
                                                          ((bits & 1) != 0 ? 0x1p-70 : 0x1p-132));
    }
    if (n == 0) break;
    if (!Run(isa, g.data(), x.data(), out.data(), n)) {
      failed = true;
      return t;
    }
    for (int64_t i = 0; i < n; ++i) {
      const double exact = double{g[i]} * jas::test::SiluDerivative(x[i]);
      const double err = StrictUlpError(out[i], exact);
      if (std::isinf(err)) {
        ++t.wrong_specials;
        continue;
      }
      t.over_bound += err > 4.0;
      t.over_3 += err > 3.0;
      Worst& w = t.region[RegionOf(x[i])];
      if (err > w.ulp) w = {err, x[i], g[i], out[i], exact};
    }
  }
  return t;
}

// --grad proof: the relative error of s'(x) before the product with
// grad_output, by path, over x's bit patterns [begin, end).
struct Proof {
  // x in [-33, 24): the pair, and the double formula where the pair is not
  // taken in its place (|A| >= kNearRootA); x in [-250, -33); x in [24, inf).
  jas::proof::RelTally fast, wide, general, high;
  double below_clamp = 0.0;                  // largest |s'| the kernel holds for x < -250
  long long mismatches = 0;                  // kernel outputs for grad_output = 1 that are not the value rounded
  long long broadcast_mismatches = 0;        // DerivativeDoubleF32 values that are not the value measured
  void Merge(const Proof& o) {
    fast.Merge(o.fast), wide.Merge(o.wide), general.Merge(o.general), high.Merge(o.high);
    below_clamp = std::max(below_clamp, o.below_clamp);
    mismatches += o.mismatches;
    broadcast_mismatches += o.broadcast_mismatches;
  }
};

Proof CheckProof(jas::Isa isa, uint64_t begin, uint64_t end, int worker, int workers, std::atomic<bool>& failed) {
  using V = jas::simd::Scalar;
  namespace math = jas::math;
  Proof p;
  std::vector<float> g(kBlock, 1.0f), x(kBlock), out(kBlock);
  for (uint64_t first = begin + worker * kBlock; first < end; first += workers * kBlock) {
    const int64_t n = static_cast<int64_t>(std::min<uint64_t>(kBlock, end - first));
    for (int64_t i = 0; i < n; ++i) x[i] = jas::half::FromBits(static_cast<uint32_t>(first + i));
    if (!Run(isa, g.data(), x.data(), out.data(), n)) {
      failed = true;
      return p;
    }
    for (int64_t i = 0; i < n; ++i) {
      const float xi = x[i];
      if (!std::isfinite(xi)) continue;  // the other modes check inf and NaN
      float rounded;
      double broadcast;  // the broadcast path's s'(x), which must be the value measured
      math::DerivativeDoubleF32<V>(xi, &broadcast);
      double measured;
      if (xi >= math::kFastHigh) {
        // grad_output passes unrounded: the value is 1.
        p.high.Add(xi, 1.0L, jas::proof::SiluDerivativeLong(xi));
        rounded = 1.0f;
        measured = 1.0;
      } else if (xi >= math::kFastLow) {
        const math::ExpTerms<V> terms = math::ExpTermsOf<V>(xi);
        const math::ExpAndA<V> ea = math::ExpAndAFrom<V>(xi, terms);
        const math::Split<V> ds = math::DerivativeF32<V>(xi, ea);
        const long double exact = jas::proof::SiluDerivativeLong(xi);
        p.fast.AddPair(xi, ds.hi, ds.lo, exact);
        measured = static_cast<double>(ds.hi) + ds.lo;
        if (!(std::fabs(ea.a) < math::kNearRootA)) {
          measured = math::WideDerivativeD<V>(xi, math::WideSeed<V>(terms), terms, 0);
          p.wide.Add(xi, measured, exact);
        }
        rounded = math::TimesGrad<V>(1.0f, ds);
      } else {
        double d;
        math::GradDouble<V>(1.0f, xi, &d);
        if (xi >= -math::kClamp) {
          p.general.Add(xi, d, jas::proof::SiluDerivativeLong(xi));
        } else {
          p.below_clamp = std::max(p.below_clamp, std::fabs(d));
        }
        rounded = static_cast<float>(d);
        measured = d;
      }
      if (broadcast != measured && p.broadcast_mismatches++ < 4) {
        std::printf("  broadcast s'(x) %.17g at x=%.9g is not the value measured (%.17g)\n", broadcast, xi, measured);
      }
      if (jas::half::Bits(rounded) != jas::half::Bits(out[i])) {
        if (p.mismatches++ < 4) {
          std::printf("  kernel output %.9g at x=%.9g is not its value rounded (%.9g)\n", out[i], xi, rounded);
        }
      }
    }
  }
  return p;
}

bool RunProof(jas::Isa isa, int threads, uint64_t begin, uint64_t end) {
  const auto start = std::chrono::steady_clock::now();
  std::atomic<bool> failed{false};
  const Proof total =
      jas::proof::OnThreads<Proof>(threads, [&](int w) { return CheckProof(isa, begin, end, w, threads, failed); });
  if (failed) {
    std::fprintf(stderr, "exhaustive_accuracy: the kernel refused a block\n");
    std::exit(2);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The product's own terms, in units of 2^-24 of relative error: on the
  // fast path fma(g, hi, g*lo) rounds g*lo (2^-24 |lo/(hi + lo)|); the wide
  // lanes' double arithmetic and the general path's product with g add a
  // few 2^-53.
  const double fast_extra = std::max(total.fast.lo_ratio, 0x1p-27), double_extra = 0x1p-27;
  std::printf("proof: s'(x) before the product with grad_output, every finite x in [0x%llx, 0x%llx); %.1f s\n",
              static_cast<unsigned long long>(begin), static_cast<unsigned long long>(end), seconds);
  total.fast.Print("fast path, -33 <= x < 24", fast_extra);
  total.wide.Print("huge g, broadcast, |1+x+e^x| >= 2^-8", double_extra);
  total.general.Print("general path, -250 <= x < -33", double_extra);
  total.high.Print("x >= 24 (grad_output itself)", 0.0);
  // Below -250 the exact |g*s'(x)| < 2^128 * 250 e^-250 < 2^-224 rounds to
  // a zero (of the exact value's sign), and so does the kernel's value if
  // 2^128 times it stays below 2^-150.
  const bool clamp_ok = total.below_clamp * 0x1p128 < 0x1p-150;
  std::printf("  x < -250: largest |value| %.3g, times 2^128 %s 2^-150\n", total.below_clamp,
              clamp_ok ? "below" : "NOT below");
  const double bound = std::max({total.fast.Bound(fast_extra), total.wide.Bound(double_extra),
                                 total.general.Bound(double_extra), total.high.Bound(0.0)});
  std::printf("  bound over every grad_output: %.4f ulp; outputs for grad_output = 1 not the value rounded: %lld; "
              "broadcast s'(x) not the value measured: %lld\n",
              bound, static_cast<long long>(total.mismatches), static_cast<long long>(total.broadcast_mismatches));
  std::fflush(stdout);
  return bound <= 4.0 && clamp_ok && total.mismatches == 0 && total.broadcast_mismatches == 0;
}

}  // namespace

int main(int argc, char** argv) {
  jas::Isa isa = jas::Isa::kAuto;
  int threads = 2;
  uint64_t stride = 1;
  std::string grads = "all";
  uint64_t begin = 0, end = uint64_t{1} << 32;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--isa") {
      isa = jas::Isa::kAuto;
      for (jas::Isa named : jas::kIsas) {
        if (value == jas::IsaName(named)) isa = named;
      }
    } else if (flag == "--threads") {
      threads = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--stride") {
      stride = std::max<uint64_t>(1, std::strtoull(value.c_str(), nullptr, 10));
    } else if (flag == "--begin") {
      begin = std::strtoull(value.c_str(), nullptr, 16);
    } else if (flag == "--end") {
      end = std::min(std::strtoull(value.c_str(), nullptr, 16), static_cast<unsigned long long>(end));
    } else if (flag == "--grad") {
      grads = value;
    } else {
      std::fprintf(stderr, "exhaustive_accuracy: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (!jas::IsaSupported(isa)) {
    std::fprintf(stderr, "exhaustive_accuracy: this processor or build cannot run ISA %s\n", jas::IsaName(isa));
    return 2;
  }
  const jas::Isa resolved = isa == jas::Isa::kAuto ? jas::BestIsa() : isa;
  if (begin >= end) {
    std::fprintf(stderr, "exhaustive_accuracy: --begin must be below --end\n");
    return 2;
  }
  const uint64_t total = (end - begin + stride - 1) / stride;
  const uint64_t num_blocks = (total + kBlock - 1) / kBlock;
  std::printf("float32 silu_grad, ISA %s, %llu inputs (every %llu-th bit pattern), %d threads\n",
              jas::IsaName(resolved), static_cast<unsigned long long>(total), static_cast<unsigned long long>(stride),
              threads);
  if (grads == "proof") return RunProof(resolved, threads, begin, end) ? 0 : 1;
  bool ok = true;
  for (const Grad grad : {Grad::kOne, Grad::kRandom, Grad::kTiny, Grad::kHuge}) {
    const char* name = grad == Grad::kOne ? "one" : grad == Grad::kRandom ? "random" : grad == Grad::kTiny ? "tiny" : "huge";
    if (grads != "all" && grads != name) continue;
    const auto start = std::chrono::steady_clock::now();
    std::atomic<bool> failed{false};
    const Tally total_tally = jas::proof::OnThreads<Tally>(
        threads, [&](int w) { return CheckRange(resolved, grad, w, threads, begin, end, stride, num_blocks, failed); });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (failed) {
      std::fprintf(stderr, "exhaustive_accuracy: the kernel refused a block\n");
      return 2;
    }
    double max_ulp = 0.0;
    int worst_region = 0;
    for (int r = 0; r < kRegions; ++r) {
      if (total_tally.region[r].ulp > max_ulp) max_ulp = total_tally.region[r].ulp, worst_region = r;
    }
    const Worst& w = total_tally.region[worst_region];
    std::printf("grad_output %-7s max %.4f ulp at x=%.9g (bits 0x%08x) g=%.9g: %.9g vs exact %.12g; "
                ">3 ulp: %lld, >4 ulp: %lld, wrong NaN/inf: %lld; %.1f s\n",
                name, max_ulp, w.x, jas::half::Bits(w.x), w.g, w.result, w.exact,
                static_cast<long long>(total_tally.over_3), static_cast<long long>(total_tally.over_bound),
                static_cast<long long>(total_tally.wrong_specials), seconds);
    std::fflush(stdout);
    std::printf("  max by region:");
    for (int r = 0; r < kRegions; ++r) std::printf("  %s %.3f", kRegionNames[r], total_tally.region[r].ulp);
    std::printf("\n");
    std::fflush(stdout);
    ok = ok && total_tally.over_bound == 0 && total_tally.wrong_specials == 0;
  }
  return ok ? 0 : 1;
}
