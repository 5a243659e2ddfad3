// SwiGluGrad's accuracy over every float32 A, and every float16 and bfloat16
// A against a grid of (yGrad, B), through the CPU kernel (pair layout),
// against float64 references: dA = g*B*s'(A) with s' from the kernel tests'
// reference (accurate up to its root), dB = g*A/(1 + e^-A). Errors are in
// ulps of the exact result, tiny float32 errors included. Not a ctest entry
// (2^32 inputs per mode take minutes). Build the target `exhaustive_swiglu`
// (configure with -DJAX_ASCEND_SILU_TESTS=ON) and run
//   exhaustive_swiglu [--threads N] [--stride S] [--mode one|random|tiny|huge|halves|all]
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
#include "cpu/swiglu_grad_cpu.h"
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
