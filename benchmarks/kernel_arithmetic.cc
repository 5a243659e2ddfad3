// The CPU kernel's contiguous-block loop on its own: nanoseconds per element
// on one core, for every ISA this processor runs, with operands held in cache
// (4096 elements, x ~ uniform(-6, 6), g ~ uniform(-1, 1); "subnormal g" is g
// times 2^-130). All cases are sampled round after round, so load from other
// processes falls on each alike; medians and 10th percentiles of the rounds.
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
#include "cpu/silu_grad_cpu.h"

namespace {

constexpr int64_t kN = 4096;
constexpr int kCallsPerSample = 100;

struct Case {
  std::string name;
  jas::BlockFn fn;
  const void* g;
  const void* x;
  void* out;
  std::vector<double> ns;
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
    cases.push_back({n + " | float32", f32.full, g.data(), x.data(), out.data(), {}});
    cases.push_back({n + " | float32, subnormal g", f32.full, gs.data(), x.data(), out.data(), {}});
    cases.push_back({n + " | bfloat16", bf16.full, gb.data(), xb.data(), out16.data(), {}});
    cases.push_back({n + " | bfloat16, subnormal g", bf16.full, gbs.data(), xb.data(), out16.data(), {}});
    cases.push_back({n + " | float16", f16.full, gh.data(), xh.data(), out16.data(), {}});
  }
  for (int r = 0; r < rounds; ++r) {
    for (Case& c : cases) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kCallsPerSample; ++i) c.fn(c.g, c.x, c.out, kN);
      const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
      c.ns.push_back(ns / (double{kCallsPerSample} * kN));
    }
  }
  std::printf("| ISA | case | ns per element, median | 10th percentile |\n|---|---|---|---|\n");
  for (Case& c : cases) {
    std::sort(c.ns.begin(), c.ns.end());
    std::printf("| %s | %.3f | %.3f |\n", c.name.c_str(), c.ns[c.ns.size() / 2], c.ns[c.ns.size() / 10]);
  }
  return 0;
}
