// Regressions for what the fuzz target (tests/kernel/fuzz/) found, one test
// per bug, named after it.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_test_util.h"
#include "cpu/backend.h"
#include "silu_grad.h"
#include "thread_parallel.h"

namespace jas::test {
namespace {

// A float32 descriptor with no data (phase 1 must not need any); it points
// into `dims` and `strides`, which must outlive it.
TensorDesc Desc(const Dims& dims, const Dims& strides, int64_t storage_numel) {
  TensorDesc d;
  d.rank = static_cast<int64_t>(dims.size());
  d.dims = dims.data();
  d.strides = strides.data();
  d.storage_numel = storage_numel;
  return d;
}

TEST(fuzz_findings, null_tensor_left_the_executor_unset) {
  // Phase 1 returned 161001 for a null tensor before clearing its outputs, so
  // a caller that did not initialise them read garbage.
  Operand a = Contiguous(DataType::kFloat32, {3});
  const TensorDesc d = a.Desc();
  uint64_t ws = 77;
  auto* const garbage = reinterpret_cast<CpuExecutor*>(uintptr_t{0x10});
  CpuExecutor* e = garbage;
  EXPECT_EQ(SiluGradGetWorkspaceSize(&d, &d, nullptr, &ws, &e), kErrParamNullptr);
  EXPECT_TRUE(e == nullptr);
  EXPECT_EQ(ws, 0u);
  e = garbage;
  EXPECT_EQ(SiluGradGetWorkspaceSize(nullptr, &d, &d, nullptr, &e), kErrParamNullptr);
  EXPECT_TRUE(e == nullptr);
  ws = 77;
  EXPECT_EQ(SiluGradGetWorkspaceSize(&d, &d, &d, &ws, nullptr), kErrParamNullptr);
  EXPECT_EQ(ws, 0u);
}

TEST(fuzz_findings, empty_tensor_whose_other_dims_overflow_was_refused) {
  // (0, 2^40, 2^40) has no elements, but the running product of its dims
  // overflowed int64 before reaching the 0, and phase 1 returned 161002.
  const int64_t big = int64_t{1} << 40;
  for (const Dims& dims : {Dims{big, big, 0}, Dims{0, big, big}, Dims{big, 0, big}}) {
    const Dims strides(3, 1), one{1};
    const TensorDesc go = Desc(dims, strides, 0), x = Desc(one, one, 1), gi = Desc(dims, strides, 0);
    uint64_t ws = 1;
    CpuExecutor* e = nullptr;
    EXPECT_TRUE(SiluGradGetWorkspaceSize(&go, &x, &gi, &ws, &e) == kSuccess) << ToString(dims);
    EXPECT_EQ(ws, 0u);
    EXPECT_EQ(CpuRun(nullptr, 0, e, nullptr), kSuccess);  // nothing to do, no data needed
  }
  // Without a zero, the same dims are still refused.
  const Dims dims{big, big, 2}, strides(3, 1);
  const TensorDesc t = Desc(dims, strides, INT64_MAX);
  uint64_t ws = 0;
  CpuExecutor* e = nullptr;
  EXPECT_EQ(SiluGradGetWorkspaceSize(&t, &t, &t, &ws, &e), kErrParamInvalid);
}

TEST(fuzz_findings, workspace_size_wrapped_past_two_to_the_64) {
  // A broadcast self of 2^61 + 1 elements needs 2^64 + 8 bytes of s'(x): the
  // size wrapped to 8, and phase 2 would have written 2^61 doubles into it.
  const int64_t rows = (int64_t{1} << 61) + 1;
  const Dims out_dims{rows, 2}, out_strides{2, 1}, x_dims{rows, 1}, x_strides{0, 1};
  const TensorDesc go = Desc(out_dims, out_strides, INT64_MAX), gi = go;
  const TensorDesc x = Desc(x_dims, x_strides, 1);  // one element, read 2^61 + 1 times
  uint64_t ws = 1;
  CpuExecutor* e = nullptr;
  EXPECT_EQ(SiluGradGetWorkspaceSize(&go, &x, &gi, &ws, &e), kSuccess);
  EXPECT_EQ(ws, 0u);  // too large to precompute: the direct path needs none
  EXPECT_EQ(CpuDestroyExecutor(e), kSuccess);
  // Just below the limit the size is exact.
  const int64_t fits = (int64_t{1} << 61) - 1;
  const Dims out2{fits, 2}, x2{fits, 1};
  const TensorDesc go2 = Desc(out2, out_strides, INT64_MAX), x_2 = Desc(x2, x_strides, 1);
  EXPECT_EQ(SiluGradGetWorkspaceSize(&go2, &x_2, &go2, &ws, &e), kSuccess);
  EXPECT_EQ(ws, static_cast<uint64_t>(fits) * 8u);
  EXPECT_EQ(CpuDestroyExecutor(e), kSuccess);
}

TEST(fuzz_findings, chunk_size_near_int64_max_overflowed_the_chunk_count) {
  // SetChunkElements accepts any positive size; (numel + chunk - 1) / chunk
  // overflowed int64 (undefined behaviour) for chunks near INT64_MAX.
  Rng rng(11);
  for (int64_t chunk : {INT64_MAX, INT64_MAX - 1, INT64_MAX / 2 + 1}) {
    for (int64_t threads : {1, 3}) {
      for (const Dims& x_dims : {Dims{40, 70}, Dims{70}}) {  // direct, and s'(x) precomputed
        Operand go = Contiguous(DataType::kFloat32, {40, 70}), x = Contiguous(DataType::kFloat32, x_dims),
                gi = Contiguous(DataType::kFloat32, {40, 70});
        FillRandom(go, rng, 1.0);
        FillRandom(x, rng, 4.0);
        EXPECT_EQ(Compute(go, x, gi, {Isa::kAuto, chunk, threads}), kSuccess);
        CheckAgainstReference(go, x, gi, "chunk " + std::to_string(chunk) + " x" + ToString(x_dims));
      }
    }
  }
}

TEST(fuzz_findings, huge_gradient_near_float32_overflow_became_inf) {
  // g = 3.4e38 and x = 9.197 give g*s'(x) = 3.4028236e38, which rounds to
  // the largest float32; the fast path's s'(x), a few float32 ulp off, put
  // the product past the overflow threshold. Huge gradients now take the
  // general path (s'(x) in double).
  const int64_t n = 4096;
  Operand g = Contiguous(DataType::kFloat32, {n}), x = Contiguous(DataType::kFloat32, {n});
  for (int64_t i = 0; i < n; ++i) {
    g.SetBits(i, FromFloat(DataType::kFloat32, 339999995214436424907732413799364296704.0f));
    x.SetBits(i, FromFloat(DataType::kFloat32, 9.19f + 0.01f * static_cast<float>(i) / n));
  }
  for (Isa isa : SupportedIsas()) {
    Operand out = Contiguous(DataType::kFloat32, {n});
    ASSERT_TRUE(Compute(g, x, out, {isa}) == kSuccess);
    int64_t finite = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double exact = g.Value(i) * SiluDerivative(x.Value(i));
      finite += std::isfinite(out.Value(i));
      EXPECT_TRUE(UlpError(out.Value(i), exact, DataType::kFloat32) <= MaxUlp(DataType::kFloat32))
          << IsaName(isa) << ": x " << x.Value(i) << " gives " << out.Value(i) << ", exact " << exact;
    }
    // The sweep crosses the overflow threshold: both sides must be present.
    EXPECT_TRUE(finite > 0 && finite < n) << IsaName(isa) << ": " << finite << " finite results";
  }
}

}  // namespace
}  // namespace jas::test
