// SwiGluGrad's accuracy over every float32 A, and every float16 and bfloat16
// A against a grid of (yGrad, B), through the CPU kernel (pair layout),
// against float64 references: dA = g*B*s'(A) with s' from the kernel tests'
// reference (accurate up to its root), dB = g*A/(1 + e^-A). Errors are in
// ulps of the exact result, tiny float32 errors included. Not a ctest entry
// (2^32 inputs per mode take minutes). Build the target `exhaustive_swiglu`
// (configure with -DJAX_ASCEND_SILU_TESTS=ON) and run
//   exhaustive_swiglu [--threads N] [--stride S] [--mode one|random|tiny|huge|halves|all|proof]
//                     [--begin BITS] [--end BITS]
// --begin and --end (hexadecimal float32 bit patterns of A, end excluded), as
// exhaustive_accuracy's: the lanes an arithmetic change touched, when only
// those changed.
// The ISA is the kernel's automatic choice (JAX_ASCEND_SILU_ISA forces one).
// Float32 modes: "one" g = B = 1; "random" g and B hashed from A's bits;
// "tiny" g times 2^-70 or 2^-132 (results down to gradual underflow), B
// random; "huge" g with exponent 127 and B random (g*B past float32's
// range). Exit status 1 when a float32 result is beyond 4 ulp, a half one
// beyond 1 ulp, or any is wrongly NaN/inf.
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
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/half.h"
#include "common/swiglu_grad_math.h"
#include "cpu/simd_scalar.h"
#include "cpu/swiglu_grad_cpu.h"
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
  jas::SwiGluGradExecutor* e = nullptr;
  if (jas::SwiGluGradPairGetWorkspaceSize(&tg, &ta, &tb, &tda, &tdb, &ws, &e) != jas::kSuccess) return false;
  return jas::SwiGluGradRun(nullptr, 0, e, nullptr) == jas::kSuccess;
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
  Proof t;
  std::mutex mutex;
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w) {
    pool.emplace_back([&, w] {
      const Proof p = CheckProof(begin, end, w, threads, failed);
      std::lock_guard<std::mutex> lock(mutex);
      t.Merge(p);
    });
  }
  for (std::thread& th : pool) th.join();
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
  Tally total;
  std::mutex mutex;
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w) {
    pool.emplace_back([&, w] {
      const Tally t = check(w, threads, failed);
      std::lock_guard<std::mutex> lock(mutex);
      total.Merge(t);
    });
  }
  for (std::thread& th : pool) th.join();
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
  return ok ? 0 : 1;
}
