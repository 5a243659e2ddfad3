// Bitwise determinism: the same inputs give the same bits whatever the thread
// count, the chunk size and the instruction set.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_test_util.h"
#include "cpu/executor.h"
#include "cpu/backend.h"
#include "silu_grad.h"

namespace jas::test {
namespace {

struct Case {
  const char* name;
  Operand go, x;
  Dims out;
};

std::vector<Case> Cases(DataType t, Rng& rng) {
  std::vector<Case> cases;
  cases.push_back({"same shape", Contiguous(t, {37, 1031}), Contiguous(t, {37, 1031}), {37, 1031}});
  cases.push_back({"x broadcast", Contiguous(t, {37, 1031}), Contiguous(t, {1031}), {37, 1031}});
  cases.push_back({"grad_output broadcast", Contiguous(t, {37, 1}), Contiguous(t, {37, 1031}), {37, 1031}});
  cases.push_back({"strided", RandomView(t, {6, 7, 1, 211}, rng, false), RandomView(t, {7, 5, 211}, rng, false),
                   {6, 7, 5, 211}});
  for (Case& c : cases) {
    FillRandom(c.go, rng, 1.0);
    FillRandom(c.x, rng, 4.0);
  }
  return cases;
}

TEST(determinism, any_thread_count_and_chunk_size) {
  Rng rng(1);
  for (DataType t : kTypes) {
    for (Case& c : Cases(t, rng)) {
      Operand base = Contiguous(t, c.out);
      EXPECT_EQ(Compute(c.go, c.x, base), kSuccess);
      CheckAgainstReference(c.go, c.x, base, c.name);
      for (int64_t threads : {1, 2, 3, 8}) {
        for (int64_t chunk : {1, 7, 64, 1000, 4096, 0}) {
          Operand out = RandomView(t, c.out, rng, true);  // the output layout varies too
          EXPECT_EQ(Compute(c.go, c.x, out, {Isa::kAuto, chunk, threads}), kSuccess);
          EXPECT_TRUE(SameBits(base, out)) << DtypeName(t) << " " << c.name << ": " << threads
                                           << " threads, chunk " << chunk << " differs from 1 thread";
        }
      }
    }
  }
}

// Inputs for the ISA comparison: for the 16-bit types every bit pattern of x
// (NaN payloads and subnormals included); for float32 random bit patterns,
// a dense run of floats at the root of s'(x), a uniform sweep and the window
// around the root where the kernel switches formulas.
Operand IsaInputs(DataType t, Rng& rng, int64_t* n_out) {
  std::vector<uint32_t> bits;
  if (t == DataType::kFloat32) {
    for (int i = 0; i < (1 << 18); ++i) bits.push_back(static_cast<uint32_t>(rng()));
    const uint32_t root = FromFloat(t, -1.2784645f);
    for (uint32_t k = 0; k < (1u << 14); ++k) bits.push_back(root - (1u << 13) + k);
    std::uniform_real_distribution<float> wide(-100.0f, 100.0f), window(-1.9f, -0.6f);
    for (int i = 0; i < (1 << 18); ++i) bits.push_back(FromFloat(t, wide(rng)));
    for (int i = 0; i < (1 << 18); ++i) bits.push_back(FromFloat(t, window(rng)));  // the root's expansion
  } else {
    for (uint32_t b = 0; b < 65536; ++b) bits.push_back(b);
  }
  const int64_t n = static_cast<int64_t>(bits.size()) + 13;  // not a multiple of any vector length
  *n_out = n;
  Operand x = Contiguous(t, {n});
  for (int64_t i = 0; i < n; ++i) x.SetBits(i, i < static_cast<int64_t>(bits.size()) ? bits[i] : FromFloat(t, 0.5f * i));
  return x;
}

TEST(determinism, every_isa_matches_scalar_bitwise) {
  const std::vector<Isa> isas = SupportedIsas();
  std::printf("  ISAs on this processor:");
  for (Isa isa : isas) std::printf(" %s", IsaName(isa));
  std::printf(" (auto: %s)\n", IsaName(BestIsa()));
  EXPECT_TRUE(!isas.empty() && isas[0] == Isa::kScalar);
  Rng rng(2);
  for (DataType t : kTypes) {
    int64_t n = 0;
    Operand x = IsaInputs(t, rng, &n);
    // Row 0: normal gradients; row 1: random bit patterns (every magnitude,
    // infinities, subnormals, NaN payloads).
    Operand go = Contiguous(t, {2, n});
    std::normal_distribution<float> normal;
    for (int64_t i = 0; i < n; ++i) {
      go.SetBits(i, FromFloat(t, normal(rng)));
      go.SetBits(n + i, static_cast<uint32_t>(rng()) & (t == DataType::kFloat32 ? 0xffffffffu : 0xffffu));
    }
    Operand go_row = Contiguous(t, {n});
    go_row.bytes.assign(go.bytes.begin(), go.bytes.begin() + static_cast<long>(go_row.bytes.size()));
    for (int path = 0; path < 2; ++path) {
      // path 0: one s'(x) per output element; path 1: x broadcast over 2 rows,
      // s'(x) computed once into the workspace.
      Operand& g = path == 0 ? go_row : go;
      const Dims out_dims = path == 0 ? Dims{n} : Dims{2, n};
      Operand scalar = Contiguous(t, out_dims);
      EXPECT_EQ(Compute(g, x, scalar, {Isa::kScalar}), kSuccess);
      CheckAgainstReference(g, x, scalar, std::string("scalar ISA ") + DtypeName(t) + " path " + std::to_string(path));
      for (Isa isa : isas) {
        Operand out = Contiguous(t, out_dims);
        EXPECT_EQ(Compute(g, x, out, {isa, 0, 2}), kSuccess);
        int64_t differ = 0, first = -1;
        for (int64_t i = 0; i < Numel(out_dims); ++i) {
          // A NaN's sign and payload are not specified (IEEE 754 leaves them
          // open; compilers may swap the operands of a commutative operation
          // that meets two NaNs): NaN must give NaN, everything else the same bits.
          const bool both_nan = std::isnan(out.Value(i)) && std::isnan(scalar.Value(i));
          if (!both_nan && out.Bits(i) != scalar.Bits(i)) {
            if (first < 0) first = i;
            ++differ;
          }
        }
        EXPECT_TRUE(differ == 0) << DtypeName(t) << " " << IsaName(isa) << " path " << path << ": " << differ
                                 << " elements differ from scalar, first at x bits 0x" << std::hex
                                 << x.Bits(first % n) << " g bits 0x" << g.Bits(first) << ": 0x"
                                 << out.Bits(first) << " vs 0x" << scalar.Bits(first);
      }
    }
  }
}

TEST(determinism, short_lengths_pad_tails_identically) {
  // Every length up to a few vectors, at every start within a vector.
  Rng rng(3);
  for (DataType t : kTypes) {
    Operand go = Contiguous(t, {80}), x = Contiguous(t, {80});
    FillRandom(go, rng, 1.0);
    FillRandom(x, rng, 3.0);
    for (int64_t start = 0; start < 16; ++start) {
      for (int64_t len = 1; len <= 64; ++len) {
        Operand g = go, xv = x;
        for (Operand* op : {&g, &xv}) {
          op->dims = {len};
          op->offset = start;
        }
        Operand ref = Contiguous(t, {len});
        EXPECT_EQ(Compute(g, xv, ref, {Isa::kScalar}), kSuccess);
        for (Isa isa : SupportedIsas()) {
          Operand out = Contiguous(t, {len});
          EXPECT_EQ(Compute(g, xv, out, {isa}), kSuccess);
          EXPECT_TRUE(SameBits(ref, out))
              << DtypeName(t) << " " << IsaName(isa) << " start " << start << " len " << len;
        }
      }
    }
  }
}

TEST(determinism, outputs_past_the_cache_match_scalar_bitwise) {
  // From kStreamStoreMinBytes on the results go out through non-temporal
  // stores, with the elements before the first aligned vector on the ordinary
  // path: output offsets move that boundary, thread counts the chunks' edges.
  Rng rng(4);
  for (DataType t : kTypes) {
    const int64_t n = kStreamStoreMinBytes / ElementBytes(t) + 29;
    Operand go = Contiguous(t, {n}), x = Contiguous(t, {n});
    FillRandom(go, rng, 1.0);
    FillRandom(x, rng, 6.0);
    Operand ref = Contiguous(t, {n});
    EXPECT_EQ(Compute(go, x, ref, {Isa::kScalar}), kSuccess);
    CheckAgainstReference(go, x, ref, std::string("scalar ISA ") + DtypeName(t));
    for (Isa isa : SupportedIsas()) {
      for (const auto [offset, threads] : {std::pair<int64_t, int64_t>{0, 1}, {1, 3}, {19, 2}}) {
        {
          Operand out = Contiguous(t, {n + offset});
          out.dims = {n};
          out.offset = offset;
          EXPECT_EQ(Compute(go, x, out, {isa, 0, threads}), kSuccess);
          bool same = true, untouched = true;
          for (int64_t i = 0; i < n && same; ++i) same = out.Bits(offset + i) == ref.Bits(i);
          for (int64_t i = 0; i < out.StorageSize(); ++i) {
            if (i < offset || i >= offset + n) untouched = untouched && out.Bits(i) == Sentinel(t);
          }
          EXPECT_TRUE(same) << DtypeName(t) << " " << IsaName(isa) << " output offset " << offset << ", "
                            << threads << " threads differs from scalar";
          EXPECT_TRUE(untouched) << DtypeName(t) << " " << IsaName(isa) << " output offset " << offset
                                 << ": wrote outside the view";
        }
      }
    }
  }
}

}  // namespace
}  // namespace jas::test
