// One digest of the CPU kernel's output bits per (dtype, path, ISA) over a
// fixed sweep, so that builds for different processors can be compared bit
// for bit: .ci/aarch64 runs this natively (x86: scalar, AVX2, AVX-512) and
// cross-compiled under qemu-aarch64 (scalar, NEON) and requires a single
// digest per dtype and path. Exit status 1 when the ISAs of one run disagree.
//
// The sweep: float32 x every `--stride`-th bit pattern (default 4099, odd so
// the low significand bits vary too) plus every pattern near the kernel's
// thresholds; float16/bfloat16 every bit pattern. Each x meets five rows of
// grad_output: 1, random normal values, subnormal ones, huge ones (above
// 2^127 for float32 and bfloat16, near the overflow for float16) and random
// bit patterns (infinities and NaN payloads included). Path "full" gives x
// the output's shape; "broadcast" gives x one row, so s'(x) is computed once
// into the workspace and multiplied per row; path "swiglu" runs SwiGluGrad
// with A the full x, yGrad the grad_output rows and B the rows shifted by
// one element (so B meets every kind of value too), digesting dA then dB.
//
//   silu_grad_digest [--stride S]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/half.h"
#include "kernel_test_util.h"
#include "cpu/backend.h"
#include "swiglu_grad.h"
#include "cpu/testing.h"
#include "silu_grad.h"

namespace {

using jas::DataType;
using jas::Isa;
using jas::test::FromFloat;
using jas::test::Operand;

uint64_t Mix(uint64_t h) {
  h ^= h >> 31;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 29);
}

// Sign, significand and an exponent in [-4, 3] from a hash of (row, i).
float RandomValue(uint64_t seed) {
  const uint64_t h = Mix(seed * 0xbf58476d1ce4e5b9ull + 0x9e3779b97f4a7c15ull);
  const uint32_t sign = static_cast<uint32_t>(h >> 63) << 31;
  const uint32_t exponent = 127 - 4 + static_cast<uint32_t>((h >> 40) & 7);
  return jas::half::FromBits(sign | (exponent << 23) | static_cast<uint32_t>(h & 0x7fffff));
}

constexpr int kRows = 5;

// grad_output's bits for row `row`, element i.
uint32_t GradBits(DataType t, int row, uint64_t i) {
  const float v = RandomValue(i * kRows + static_cast<uint64_t>(row));
  const bool f16 = t == DataType::kFloat16;
  switch (row) {
    case 0: return FromFloat(t, 1.0f);
    case 1: return FromFloat(t, v);
    case 2: return FromFloat(t, static_cast<float>(v * (f16 ? 0x1p-20 : 0x1p-132)));  // subnormal
    case 3: return FromFloat(t, v * (f16 ? 0x1p12f : 0x1p124f));                     // huge
    default: {
      const uint32_t bits = static_cast<uint32_t>(Mix(i * kRows + static_cast<uint64_t>(row)));
      return t == DataType::kFloat32 ? bits : bits & 0xffffu;
    }
  }
}

std::vector<uint32_t> XBits(DataType t, uint64_t stride) {
  std::vector<uint32_t> bits;
  if (t != DataType::kFloat32) {
    for (uint32_t b = 0; b < 65536; ++b) bits.push_back(b);
    return bits;
  }
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += stride) bits.push_back(static_cast<uint32_t>(b));
  // 512 consecutive patterns around the root of s'(x) and each threshold
  // where the kernel changes formula or range.
  for (float anchor : {-1.2784645f, -33.0f, 24.0f, -64.0f, -87.0f, -120.0f, -250.0f, 0.0f, -0.0f, 0x1p-126f}) {
    const uint32_t a = jas::half::Bits(anchor);
    for (uint32_t k = 0; k < 512; ++k) bits.push_back(a - 256 + k);
  }
  return bits;
}

uint64_t Digest(const Operand& out, int64_t n, uint64_t h = 0xcbf29ce484222325ull) {
  for (int64_t i = 0; i < n; ++i) h = (h ^ out.Bits(i)) * 0x100000001b3ull;
  return h;
}

// SwiGluGrad (pair layout) on one ISA; the digest of dA then dB, or 0 when it fails.
uint64_t SwiGluDigest(Operand& g, Operand& a, Operand& b, Isa isa) {
  const int64_t n = jas::test::Numel(g.dims);
  Operand da = jas::test::Contiguous(g.dtype, g.dims), db = jas::test::Contiguous(g.dtype, g.dims);
  const jas::TensorDesc tg = g.Desc(), ta = a.Desc(), tb = b.Desc(), tda = da.Desc(), tdb = db.Desc();
  uint64_t ws = 0;
  jas::CpuExecutor* e = nullptr;
  if (jas::SwiGluGradPairGetWorkspaceSize(&tg, &ta, &tb, &tda, &tdb, &ws, &e) != jas::kSuccess) return 0;
  if (jas::CpuSetIsa(e, isa) != jas::kSuccess || jas::CpuRun(nullptr, 0, e, nullptr) != jas::kSuccess) {
    return 0;
  }
  return Digest(db, n, Digest(da, n));
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t stride = 4099;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--stride") == 0 && i + 1 < argc) {
      stride = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "silu_grad_digest: unknown argument %s (usage: silu_grad_digest [--stride S])\n", argv[i]);
      return 2;
    }
  }
  if (stride == 0) {
    std::fprintf(stderr, "silu_grad_digest: --stride must be a positive integer\n");
    return 2;
  }
  std::vector<Isa> isas = jas::test::SupportedIsas();
  std::printf("# stride %llu; ISAs:", static_cast<unsigned long long>(stride));
  for (Isa isa : isas) std::printf(" %s", jas::IsaName(isa));
  std::printf(" (auto: %s)\n", jas::IsaName(jas::BestIsa()));

  bool agree = true;
  for (DataType t : jas::test::kTypes) {
    const std::vector<uint32_t> xb = XBits(t, stride);
    const int64_t n = static_cast<int64_t>(xb.size());
    Operand go = jas::test::Contiguous(t, {kRows, n});
    Operand x_row = jas::test::Contiguous(t, {n});
    Operand x_full = jas::test::Contiguous(t, {kRows, n});
    for (int row = 0; row < kRows; ++row) {
      for (int64_t i = 0; i < n; ++i) {
        go.SetBits(row * n + i, GradBits(t, row, static_cast<uint64_t>(i)));
        x_full.SetBits(row * n + i, xb[i]);
      }
    }
    for (int64_t i = 0; i < n; ++i) x_row.SetBits(i, xb[i]);
    Operand b_shifted = jas::test::Contiguous(t, {kRows, n});
    for (int64_t i = 0; i < kRows * n; ++i) b_shifted.SetBits(i, go.Bits((i + 1) % (kRows * n)));
    for (const char* path : {"full", "broadcast", "swiglu"}) {
      const bool swiglu = std::strcmp(path, "swiglu") == 0;
      Operand& x = std::strcmp(path, "broadcast") == 0 ? x_row : x_full;
      std::string first;
      for (Isa isa : isas) {
        Operand out = jas::test::Contiguous(t, {kRows, n});
        const uint64_t h = swiglu ? SwiGluDigest(go, x, b_shifted, isa)
                           : jas::test::Compute(go, x, out, {isa}) == jas::kSuccess ? Digest(out, kRows * n)
                                                                                     : 0;
        if (h == 0) {
          std::fprintf(stderr, "silu_grad_digest: the kernel failed on %s %s %s\n", jas::DtypeName(t), path,
                       jas::IsaName(isa));
          return 1;
        }
        char digest[17];
        std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(h));
        std::printf("%s %s %s %s (%lld elements)\n", jas::DtypeName(t), path, digest, jas::IsaName(isa),
                    static_cast<long long>(kRows * n));
        if (first.empty()) first = digest;
        agree = agree && first == digest;
      }
    }
  }
  if (!agree) std::printf("MISMATCH: the ISAs of this run give different bits\n");
  return agree ? 0 : 1;
}
