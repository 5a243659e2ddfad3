// The CPU kernel's contiguous-block loop on its own: nanoseconds per element
// on one core, for every ISA this processor runs, with operands held in cache
// (4096 elements, x ~ uniform(-6, 6), g ~ uniform(-1, 1); "subnormal g" is g
// times 2^-130). All cases are sampled round after round, so load from other
// processes falls on each alike; medians and 10th percentiles of the rounds.
// Beside each vector ISA's float32 kernel runs the plain formula on the same
// vector ops (Cephes-style expf and a division, g*s*(1 + x*(1 - s)) in the
// order PyTorch and CANN evaluate it): no compensation, no rare-path tests.
// It is the floor the accurate kernel is measured against; the last table
// gives the kernel's time over it, median over rounds of the per-round ratio.
// Not a ctest entry. Build the target `kernel_arithmetic` (configure with
// -DJAX_ASCEND_SILU_TESTS=ON) and run
//   kernel_arithmetic [--rounds R]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/half.h"
#include "cpu/isa.h"
#include "cpu/backend.h"
#include "silu_grad.h"

// The plain formula once per vector ISA: plain_formula.inc written against
// the kernel's vector ops V, compiled here for that ISA only (the rest of this
// file stays baseline code).
#if defined(__x86_64__) || defined(_M_X64)
#define JAS_PLAIN_X86 1
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#endif
#include "cpu/simd_avx2.h"
namespace plain_avx2 {
using V = jas::simd::Avx2;
#include "plain_formula.inc"
}  // namespace plain_avx2
#if defined(__clang__)
#pragma clang attribute pop
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma,f16c")
#endif
#include "cpu/simd_avx512.h"
namespace plain_avx512 {
using V = jas::simd::Avx512;
#include "plain_formula.inc"
}  // namespace plain_avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#elif defined(__aarch64__)
#define JAS_PLAIN_NEON 1
#include "cpu/simd_neon.h"
namespace plain_neon {
using V = jas::simd::Neon;
#include "plain_formula.inc"
}  // namespace plain_neon
#endif

namespace {

// The plain formula's loop for a vector ISA, or null.
jas::BlockFn PlainFor(jas::Isa isa) {
#if defined(JAS_PLAIN_X86)
  if (isa == jas::Isa::kAvx2) return &plain_avx2::PlainRun;
  if (isa == jas::Isa::kAvx512) return &plain_avx512::PlainRun;
#elif defined(JAS_PLAIN_NEON)
  if (isa == jas::Isa::kNeon) return &plain_neon::PlainRun;
#endif
  (void)isa;
  return nullptr;
}

constexpr int64_t kN = 4096;
constexpr int kCallsPerSample = 100;

struct Case {
  std::string name;
  jas::BlockFn fn;
  const void* g;
  const void* x;
  void* out;
  std::vector<double> ns;        // sorted for the table
  std::vector<double> round_ns;  // in round order, for ratios within a round
};

}  // namespace

int main(int argc, char** argv) {
  int rounds = 41;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--rounds") {
      rounds = std::max(1, std::atoi(argv[i + 1]));
    } else {
      std::fprintf(stderr, "kernel_arithmetic: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> ux(-6.0f, 6.0f), ug(-1.0f, 1.0f);
  std::vector<float> x(kN), g(kN), gs(kN), out(kN);
  std::vector<uint16_t> xb(kN), gb(kN), gbs(kN), xh(kN), gh(kN), out16(kN);
  for (int64_t i = 0; i < kN; ++i) {
    x[i] = ux(rng);
    g[i] = ug(rng);
    gs[i] = g[i] * 0x1p-130f;
    xb[i] = jas::half::FloatToBF16(x[i]);
    gb[i] = jas::half::FloatToBF16(g[i]);
    gbs[i] = jas::half::FloatToBF16(gs[i]);
    xh[i] = jas::half::FloatToF16(x[i]);
    gh[i] = jas::half::FloatToF16(g[i]);
  }
  std::vector<Case> cases;
  for (const jas::Isa isa : jas::kIsas) {
    if (!jas::IsaSupported(isa)) continue;
    const jas::BlockKernels* k = jas::KernelsFor(isa);
    const auto& f32 = k->by_type[jas::DtypeIndex(jas::DataType::kFloat32)];
    const auto& bf16 = k->by_type[jas::DtypeIndex(jas::DataType::kBFloat16)];
    const auto& f16 = k->by_type[jas::DtypeIndex(jas::DataType::kFloat16)];
    const std::string n = jas::IsaName(isa);
    cases.push_back({n + " | float32", f32.silu.full, g.data(), x.data(), out.data(), {}, {}});
    if (const jas::BlockFn plain = PlainFor(isa)) {
      cases.push_back({n + " | float32, plain formula", plain, g.data(), x.data(), out.data(), {}, {}});
    }
    cases.push_back({n + " | float32, subnormal g", f32.silu.full, gs.data(), x.data(), out.data(), {}, {}});
    cases.push_back({n + " | bfloat16", bf16.silu.full, gb.data(), xb.data(), out16.data(), {}, {}});
    cases.push_back({n + " | bfloat16, subnormal g", bf16.silu.full, gbs.data(), xb.data(), out16.data(), {}, {}});
    cases.push_back({n + " | float16", f16.silu.full, gh.data(), xh.data(), out16.data(), {}, {}});
  }
  for (int r = 0; r < rounds; ++r) {
    for (Case& c : cases) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kCallsPerSample; ++i) c.fn(c.g, c.x, c.out, kN);
      const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
      c.ns.push_back(ns / (double{kCallsPerSample} * kN));
      c.round_ns.push_back(c.ns.back());
    }
  }
  std::printf("| ISA | case | ns per element, median | 10th percentile |\n|---|---|---|---|\n");
  for (Case& c : cases) {
    std::sort(c.ns.begin(), c.ns.end());
    std::printf("| %s | %.3f | %.3f |\n", c.name.c_str(), c.ns[c.ns.size() / 2], c.ns[c.ns.size() / 10]);
  }
  std::printf("\n| ISA | float32 kernel / plain formula, median of rounds |\n|---|---|\n");
  for (size_t i = 0; i + 1 < cases.size(); ++i) {
    const Case& k = cases[i];
    const Case& p = cases[i + 1];
    if (p.name != k.name + ", plain formula") continue;
    std::vector<double> ratio;
    for (size_t r = 0; r < k.round_ns.size(); ++r) ratio.push_back(k.round_ns[r] / p.round_ns[r]);
    std::sort(ratio.begin(), ratio.end());
    std::printf("| %s | %.2f |\n", k.name.substr(0, k.name.find(" |")).c_str(), ratio[ratio.size() / 2]);
  }
  return 0;
}
