// Run-time choice of instruction set. The choice, and what the processor
// supports, are worked out once and never change; the kernel keeps no other
// global state.
#include <initializer_list>
#include <iterator>

#include "cpu/environment.h"
#include "cpu/isa.h"
#include "cpu/backend.h"
#include "silu_grad.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace jas {

#ifndef JAS_HAVE_AVX2
const BlockKernels* Avx2Kernels() { return nullptr; }
#endif
#ifndef JAS_HAVE_AVX512
const BlockKernels* Avx512Kernels() { return nullptr; }
#endif
#ifndef JAS_HAVE_NEON
const BlockKernels* NeonKernels() { return nullptr; }
#endif

namespace {

#if defined(__x86_64__) || defined(__i386__)
// From CPUID directly: clang before 16 has no __builtin_cpu_supports("f16c").
bool HasF16c() {
  unsigned eax, ebx, ecx, edx;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}
#endif

bool CpuHas(Isa isa) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  switch (isa) {
    case Isa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && HasF16c();
    case Isa::kAvx512:
      return __builtin_cpu_supports("avx512f");
    default:
      return isa == Isa::kScalar;
  }
#elif defined(__aarch64__)
  // Advanced SIMD (FMA and half conversions included) is part of AArch64;
  // Linux still says whether the kernel lets user code use it.
  if (isa == Isa::kNeon) {
#if defined(__linux__)
    return (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0;
#else
    return true;
#endif
  }
  return isa == Isa::kScalar;
#else
  return isa == Isa::kScalar;
#endif
}

// JAX_ASCEND_SILU_ISA=scalar|avx2|avx512|neon makes the automatic choice
// that ISA when this processor runs it (for testing and benchmarking the
// fallbacks; cpu/environment.h); otherwise, and for unknown values, the best
// one is used.
Isa DetectBest() {
  if (const IsaSetting& env = IsaFromEnvironment(); env.accepted) return env.isa;
  for (Isa isa : {Isa::kAvx512, Isa::kAvx2, Isa::kNeon}) {
    if (IsaSupported(isa)) return isa;
  }
  return Isa::kScalar;
}

}  // namespace

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kAuto: return "auto";
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
    case Isa::kNeon: return "neon";
  }
  return "unknown";
}

namespace {

bool ComputeSupported(Isa isa) {
  const BlockKernels* k = nullptr;
  switch (isa) {
    case Isa::kScalar: k = ScalarKernels(); break;
    case Isa::kAvx2: k = Avx2Kernels(); break;
    case Isa::kAvx512: k = Avx512Kernels(); break;
    case Isa::kNeon: k = NeonKernels(); break;
    default: return false;
  }
  return k != nullptr && CpuHas(isa);
}

}  // namespace

bool IsaSupported(Isa isa) {
  if (isa == Isa::kAuto) return true;
  // Asked on every call, and CPUID traps to the hypervisor on a virtual
  // machine, so the answers are taken once.
  static const bool supported[] = {false, ComputeSupported(Isa::kScalar), ComputeSupported(Isa::kAvx2),
                                   ComputeSupported(Isa::kAvx512), ComputeSupported(Isa::kNeon)};
  const int i = static_cast<int>(isa);
  return i > 0 && i < static_cast<int>(std::size(supported)) && supported[i];
}

Isa BestIsa() {
  static const Isa best = DetectBest();
  return best;
}

const BlockKernels* KernelsFor(Isa isa) {
  if (isa == Isa::kAuto) isa = BestIsa();
  if (!IsaSupported(isa)) return nullptr;
  switch (isa) {
    case Isa::kScalar: return ScalarKernels();
    case Isa::kAvx2: return Avx2Kernels();
    case Isa::kAvx512: return Avx512Kernels();
    case Isa::kNeon: return NeonKernels();
    default: return nullptr;
  }
}

}  // namespace jas
