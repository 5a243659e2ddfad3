// Shapes and memory layouts: empty tensors, ranks 0 to 8, strided views with
// storage offsets on every operand, stride-0 broadcasting, in-place calls,
// exact limits, and independence from the caller's floating-point settings.
#include <cmath>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "kernel_test_util.h"
#include "cpu/backend.h"
#include "silu_grad.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
#define JAS_TEST_FLOAT_ENV 1
#endif

namespace jas::test {
namespace {

std::string Describe(const Operand& go, const Operand& x, const char* what) {
  return std::string(what) + " " + DtypeName(go.dtype) + " g" + ToString(go.dims) + " x" + ToString(x.dims);
}

TEST(layout, empty_tensors_need_no_workspace_and_write_nothing) {
  const struct {
    Dims g, x;
  } cases[] = {
      {{0}, {0}},
      {{3, 0}, {1}},
      {{0, 5}, {5}},  // x broadcast: would be precomputed if the output were not empty
      {{5}, {0, 5}},
      {{2, 0, 3}, {2, 1, 3}},
      {{}, {0}},
      {{1, 1, 1, 1, 1, 1, 1, 0}, {2, 1, 1, 1, 1, 1, 1, 1}},
  };
  for (DataType t : kTypes) {
    for (const auto& k : cases) {
      Operand go = Contiguous(t, k.g), x = Contiguous(t, k.x), gi = Contiguous(t, BroadcastShape(k.g, k.x));
      FillSentinel(gi);
      uint64_t ws = 99;
      EXPECT_TRUE(Compute(go, x, gi, {}, &ws) == kSuccess) << Describe(go, x, "empty");
      EXPECT_EQ(ws, 0u);
      CheckAgainstReference(go, x, gi, Describe(go, x, "empty"));
      // No data at all, and strides that step nowhere, are fine too.
      TensorDesc d[3] = {go.Desc(), x.Desc(), gi.Desc()};
      Dims wild(gi.dims.size(), int64_t{1} << 61);
      d[2].strides = wild.data();
      for (TensorDesc& desc : d) desc.data = nullptr;
      CpuExecutor* e = nullptr;
      EXPECT_TRUE(SiluGradGetWorkspaceSize(&d[0], &d[1], &d[2], &ws, &e) == kSuccess)
          << Describe(go, x, "no data");
      EXPECT_EQ(ws, 0u);
      EXPECT_EQ(CpuRun(nullptr, 0, e, nullptr), kSuccess);
    }
  }
  // Dims whose product overflows but contain a 0 are simply empty.
  Operand go = Contiguous(DataType::kFloat32, {}), x = Contiguous(DataType::kFloat32, {});
  Operand gi = Contiguous(DataType::kFloat32, {});
  for (Operand* op : {&go, &x, &gi}) {
    op->dims = {0, int64_t{1} << 40, int64_t{1} << 40};
    op->null_strides = true;
  }
  EXPECT_EQ(Compute(go, x, gi), kSuccess);
}

TEST(layout, every_rank_from_0_to_8) {
  Rng rng(1);
  for (DataType t : kTypes) {
    for (int64_t rank = 0; rank <= kMaxRank; ++rank) {
      Dims dims(static_cast<size_t>(rank));
      for (int64_t& d : dims) d = 1 + static_cast<int64_t>(rng() % 4);
      Operand go = Contiguous(t, dims), x = Contiguous(t, dims), gi = Contiguous(t, dims);
      FillRandom(go, rng, 1.0);
      FillRandom(x, rng, 4.0);
      FillSentinel(gi);
      EXPECT_EQ(Compute(go, x, gi), kSuccess);
      CheckAgainstReference(go, x, gi, "rank " + std::to_string(rank) + " " + Describe(go, x, "contiguous"));
    }
  }
}

TEST(layout, strided_views_with_offsets_on_every_operand) {
  // Random permuted strides with gaps (and, for inputs, stride 0 and
  // overlapping dims) and random storage offsets; NumPy broadcasting on top.
  // Each result is checked element by element and must equal, bit for bit,
  // the same call on compact row-major copies.
  Rng rng(2);
  // What the cases covered, so a change to the generator that stops producing
  // one of the layouts named above fails here instead of passing untested.
  bool rank_seen[kMaxRank + 1] = {};
  int stride0_inputs = 0, overlapping_inputs = 0, gapped_outputs = 0, offsets = 0, broadcasts = 0;
  for (int round = 0; round < 120; ++round) {
    for (DataType t : kTypes) {
      const int64_t rank = static_cast<int64_t>(rng() % (kMaxRank + 1));
      Dims gd, xd;
      RandomBroadcastPair(rng, rank, rank > 5 ? 3 : 6, &gd, &xd);
      const Dims od = BroadcastShape(gd, xd);
      Operand go = RandomView(t, gd, rng, false), x = RandomView(t, xd, rng, false);
      Operand gi = RandomView(t, od, rng, true);
      FillRandom(go, rng, 1.0);
      FillRandom(x, rng, 4.0);
      FillSentinel(gi);
      const std::string what = Describe(go, x, "strided") + " out strides " + ToString(gi.strides) + " offset " +
                               std::to_string(gi.offset);
      EXPECT_TRUE(Compute(go, x, gi) == kSuccess) << what;
      CheckAgainstReference(go, x, gi, what);
      Operand cgo = CompactCopy(go), cx = CompactCopy(x), cgi = Contiguous(t, od);
      EXPECT_EQ(Compute(cgo, cx, cgi), kSuccess);
      EXPECT_TRUE(SameBits(gi, cgi)) << what << ": differs from the compact layout";
      rank_seen[rank] = true;
      for (const Operand* op : {&go, &x}) {
        bool zero = false, overlap = false;
        for (size_t i = 0; i < op->dims.size(); ++i) {
          if (op->dims[i] <= 1) continue;
          zero = zero || op->strides[i] == 0;
          for (size_t j = 0; j < op->dims.size(); ++j) {
            overlap = overlap || (j != i && op->dims[j] > 1 && op->strides[i] > 0 &&
                                  op->strides[j] < op->strides[i] && op->strides[j] * op->dims[j] > op->strides[i]);
          }
        }
        stride0_inputs += zero;
        overlapping_inputs += overlap;
      }
      gapped_outputs += Numel(od) > 1 && gi.storage_numel - gi.offset > Numel(od);
      offsets += go.offset > 0 && x.offset > 0 && gi.offset > 0;
      broadcasts += gd != od || xd != od;
    }
  }
  for (int64_t r = 0; r <= kMaxRank; ++r) EXPECT_TRUE(rank_seen[r]) << "no case of rank " << r;
  EXPECT_GT(stride0_inputs, 10);
  EXPECT_GT(overlapping_inputs, 10);
  EXPECT_GT(gapped_outputs, 100);
  EXPECT_GT(offsets, 100);
  EXPECT_GT(broadcasts, 100);
}

TEST(layout, broadcasting_through_stride_zero) {
  const struct {
    Dims g, x;
  } cases[] = {
      {{5, 7}, {7}},      // x broadcast: s'(x) precomputed once per element of x
      {{7}, {5, 7}},      // grad_output broadcast
      {{5, 1}, {1, 7}},   // both
      {{}, {3, 4}},       // scalar grad_output
      {{3, 4}, {}},       // scalar x
      {{2, 1, 4, 1, 3, 1, 2, 1}, {1, 3, 1, 5, 1, 2, 1, 3}},
      {{600, 300}, {600, 1}},
      {{3, 1, 1029}, {1, 4, 1029}},  // long innermost runs, odd length
      {{1029, 1}, {1, 1}},
  };
  Rng rng(3);
  for (DataType t : kTypes) {
    for (const auto& k : cases) {
      Operand go = Contiguous(t, k.g), x = Contiguous(t, k.x), gi = Contiguous(t, BroadcastShape(k.g, k.x));
      FillRandom(go, rng, 1.0);
      FillRandom(x, rng, 4.0);
      FillSentinel(gi);
      uint64_t ws = 0;
      EXPECT_EQ(Compute(go, x, gi, {}, &ws), kSuccess);
      CheckAgainstReference(go, x, gi, Describe(go, x, "broadcast"));
      // The workspace holds s'(x) (a double per element) only when x is reused.
      const bool reused = Numel(k.x) * 2 <= Numel(gi.dims);
      EXPECT_TRUE(ws == (reused ? static_cast<uint64_t>(Numel(k.x)) * 8 : 0u))
          << Describe(go, x, "workspace") << " " << ws;
      // An input given as a full-shape view with stride-0 dims is the same call.
      Operand vx = Contiguous(t, gi.dims);
      vx.bytes = x.bytes;
      vx.storage_numel = x.storage_numel;
      const size_t lead = gi.dims.size() - k.x.size();
      for (size_t j = 0; j < gi.dims.size(); ++j) {
        vx.strides[j] = (j < lead || k.x[j - lead] == 1) ? 0 : x.strides[j - lead];
      }
      Operand gi2 = Contiguous(t, gi.dims);
      EXPECT_EQ(Compute(go, vx, gi2), kSuccess);
      CheckAgainstReference(go, vx, gi2, Describe(go, vx, "stride-0 view"));
    }
  }
}

TEST(layout, null_strides_mean_row_major) {
  Rng rng(4);
  for (DataType t : kTypes) {
    Operand go = Contiguous(t, {4, 1, 6}), x = Contiguous(t, {3, 1}), gi = Contiguous(t, {4, 3, 6});
    FillRandom(go, rng, 1.0);
    FillRandom(x, rng, 4.0);
    FillSentinel(gi);
    for (Operand* op : {&go, &x, &gi}) op->null_strides = true;
    EXPECT_EQ(Compute(go, x, gi), kSuccess);
    CheckAgainstReference(go, x, gi, Describe(go, x, "null strides"));
  }
}

TEST(layout, in_place_on_either_input) {
  Rng rng(5);
  for (DataType t : kTypes) {
    for (Isa isa : SupportedIsas()) {
      for (int alias = 0; alias < 2; ++alias) {
        // Strided views (the tiled path) and a contiguous run of 1003 elements
        // (the vector loops: two vectors per step, one, then the padded tail).
        for (bool contiguous : {false, true}) {
          Operand go = contiguous ? Contiguous(t, {1003}) : RandomView(t, {9, 37}, rng, true);
          Operand x = go;  // same layout, own storage
          FillRandom(go, rng, 1.0);
          FillRandom(x, rng, 4.0);
          Operand expected = go;
          FillSentinel(expected);
          EXPECT_EQ(Compute(go, x, expected, {isa}), kSuccess);
          Operand& target = alias == 0 ? go : x;
          EXPECT_EQ(Compute(go, x, target, {isa}), kSuccess);
          EXPECT_TRUE(SameBits(target, expected))
              << DtypeName(t) << " " << IsaName(isa) << (contiguous ? " contiguous" : "")
              << " written over input " << alias;
        }
      }
    }
  }
}

// Inputs whose results are exact, on every ISA and both kernel paths.
TEST(layout, exact_limits_and_nan) {
  for (DataType t : kTypes) {
    const float big = t == DataType::kFloat16 ? 65504.0f : 3e38f;
    const float xs[] = {-INFINITY, INFINITY, 2e7f, 1e30f, 3e38f, big, -0.0f, 0.0f, NAN, 1.5f, NAN};
    const float gs[] = {3.0f, -2.5f, 1.0f, -1.0f, 0.75f, 2.0f, -3.0f, 3.0f, 1.0f, NAN, NAN};
    const int64_t n = 11;
    for (Isa isa : SupportedIsas()) {
      for (int rows : {1, 2}) {  // 2 rows: x broadcast, s'(x) taken from the workspace
        Operand go = Contiguous(t, {rows, n}), x = Contiguous(t, {n}), gi = Contiguous(t, {rows, n});
        for (int64_t i = 0; i < n; ++i) {
          x.SetBits(i, FromFloat(t, xs[i]));
          for (int r = 0; r < rows; ++r) go.SetBits(r * n + i, FromFloat(t, gs[i]));
        }
        EXPECT_EQ(Compute(go, x, gi, {isa}), kSuccess);
        for (int64_t i = 0; i < n; ++i) {
          const double gv = go.Value(i), xv = x.Value(i);
          const double out = gi.Value((rows - 1) * n + i);
          const std::string what = std::string(DtypeName(t)) + " " + IsaName(isa) + " rows " +
                                   std::to_string(rows) + " x=" + std::to_string(xv) + " g=" + std::to_string(gv);
          if (std::isnan(xv) || std::isnan(gv)) {
            EXPECT_TRUE(std::isnan(out)) << what << " gave " << out;
          } else if (xv == -INFINITY) {
            EXPECT_TRUE(out == 0.0) << what << " gave " << out;
          } else if (xv == 0.0) {
            EXPECT_TRUE(out == gv * 0.5) << what << " gave " << out;
          } else if (xv >= 2e7 || xv == big) {
            EXPECT_TRUE(out == gv) << what << " gave " << out;  // s'(x) rounds to 1 exactly
          } else {
            EXPECT_TRUE(UlpError(out, gv * SiluDerivative(xv), t) <= MaxUlp(t)) << what << " gave " << out;
          }
        }
      }
    }
  }
}

// Regression: a reused (broadcast) float32 x once had s'(x) stored in float32
// after float32-only evaluation, then rounded again in the product with
// grad_output: 4.4 ulp at these inputs.
TEST(layout, float32_reused_x_stays_within_4_ulp) {
  const uint32_t pairs[][2] = {  // (x bits, grad_output bits)
      {0xbfd7a1c7u, 0x3f6c5f90u}, {0xbfd7fe3au, 0x3feb1ea5u}, {0xbf4e83a4u, 0xbee99679u},
      {0xbf9c6733u, 0x3f990a7eu}, {0xbf554ae1u, 0xbe723174u}, {0xbf4c20f3u, 0x3f575f84u},
      {0xbf52d609u, 0xbe7180acu},
  };
  const int64_t n = 7;
  for (Isa isa : SupportedIsas()) {
    Operand go = Contiguous(DataType::kFloat32, {2, n}), x = Contiguous(DataType::kFloat32, {n});
    Operand gi = Contiguous(DataType::kFloat32, {2, n});
    for (int64_t i = 0; i < n; ++i) {
      x.SetBits(i, pairs[i][0]);
      go.SetBits(i, pairs[i][1]);
      go.SetBits(n + i, pairs[i][1]);
    }
    uint64_t ws = 0;
    EXPECT_EQ(Compute(go, x, gi, {isa}, &ws), kSuccess);
    EXPECT_EQ(ws, static_cast<uint64_t>(8 * n));  // the workspace path
    CheckAgainstReference(go, x, gi, std::string("reused x on ") + IsaName(isa));
  }
}

#if JAS_TEST_FLOAT_ENV
// The calling thread's float control register, and the settings the kernel
// must undo: flush-to-zero, denormals-are-zero (x86) or default NaN (AArch64),
// and round toward zero.
#if defined(__aarch64__)
uint64_t ReadFloatEnv() {
  uint64_t v;
  asm volatile("mrs %0, fpcr" : "=r"(v));
  return v;
}
void WriteFloatEnv(uint64_t v) { asm volatile("msr fpcr, %0" : : "r"(v)); }
constexpr uint64_t kOddFloatEnv = (1u << 24) /*FZ*/ | (1u << 25) /*DN*/ | (3u << 22) /*toward zero*/;
#else
uint64_t ReadFloatEnv() { return _mm_getcsr(); }
void WriteFloatEnv(uint64_t v) { _mm_setcsr(static_cast<unsigned>(v)); }
constexpr uint64_t kOddFloatEnv = 0x8000u /*FTZ*/ | 0x0040u /*DAZ*/ | 0x6000u /*toward zero*/;
#endif

TEST(layout, caller_float_environment_does_not_matter) {
  // The settings above on the calling thread must change nothing; results
  // in this range are subnormal.
  Rng rng(6);
  for (DataType t : kTypes) {
    Operand go = Contiguous(t, {4, 1000}), x = Contiguous(t, {4, 1000});
    FillRandom(go, rng, 1.0);
    for (int64_t i = 0; i < x.StorageSize(); ++i) {
      x.SetBits(i, FromFloat(t, -80.0f - 30.0f * static_cast<float>(i % 1000) / 1000.0f));
    }
    for (int rows : {4, 1}) {
      Operand gx = rows == 4 ? x : Contiguous(t, {1000});
      if (rows == 1) gx.bytes.assign(x.bytes.begin(), x.bytes.begin() + static_cast<long>(gx.bytes.size()));
      Operand normal = Contiguous(t, {4, 1000}), odd = Contiguous(t, {4, 1000});
      EXPECT_EQ(Compute(go, gx, normal), kSuccess);
      const uint64_t saved = ReadFloatEnv();
      const uint64_t odd_env = saved | kOddFloatEnv;
      WriteFloatEnv(odd_env);
      const Status s = Compute(go, gx, odd);
      const uint64_t after = ReadFloatEnv();
      WriteFloatEnv(saved);
      EXPECT_EQ(s, kSuccess);
      EXPECT_EQ(after, odd_env);  // the caller's settings are restored
      EXPECT_TRUE(SameBits(normal, odd)) << DtypeName(t) << " rows " << rows;
      CheckAgainstReference(go, gx, normal, std::string("subnormal results ") + DtypeName(t));
    }
  }
}
#endif

}  // namespace
}  // namespace jas::test
