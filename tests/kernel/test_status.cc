// Every status code the two-phase API returns, and the case that returns it.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "alloc_counter.h"
#include "kernel_test_util.h"
#include "cpu/testing.h"
#include "thread_parallel.h"

namespace jas::test {
namespace {

struct Operands {
  Operand go, x, gi;
};

Operands Make(DataType t, const Dims& g, const Dims& x, const Dims& out) {
  return {Contiguous(t, g), Contiguous(t, x), Contiguous(t, out)};
}

// Phase 1 only. On failure *executor must stay null and nothing may leak.
Status Plan(Operands& c, uint64_t* bytes = nullptr) {
  const TensorDesc go = c.go.Desc(), x = c.x.Desc(), gi = c.gi.Desc();
  uint64_t ws = 0;
  CpuExecutor* e = nullptr;
  const int64_t live = LiveAllocations();
  const Status s = SiluGradGetWorkspaceSize(&go, &x, &gi, &ws, &e);
  if (s == kSuccess) {
    EXPECT_TRUE(e != nullptr);
    EXPECT_EQ(CpuDestroyExecutor(e), kSuccess);
  } else {
    EXPECT_TRUE(e == nullptr);
  }
  EXPECT_EQ(LiveAllocations(), live);
  if (bytes != nullptr) *bytes = ws;
  return s;
}

// What each kind of call returns, against aclnn's return-code table
// (ops-nn's aclnnSiluBackward.md: ACLNN_ERR_PARAM_NULLPTR 161001 for a null
// tensor, ACLNN_ERR_PARAM_INVALID 161002 for an unsupported dtype; 561101
// ACLNN_ERR_INNER_CREATE_EXECUTOR is opbase's): the numbers and names the
// FFI layer and the Ascend glue pass on, where the caller may compare them
// with CANN's.
TEST(status, each_outcome_has_aclnns_number_and_name) {
  Operands ok = Make(DataType::kFloat32, {3}, {3}, {3});
  const TensorDesc go = ok.go.Desc(), x = ok.x.Desc(), gi = ok.gi.Desc();
  TensorDesc wide = gi;
  wide.dtype = static_cast<DataType>(11);  // ACL_DOUBLE
  uint64_t ws = 0;
  CpuExecutor* e = nullptr;
  const Status success = Plan(ok);
  const Status null_tensor = SiluGradGetWorkspaceSize(nullptr, &x, &gi, &ws, &e);
  const Status bad_dtype = SiluGradGetWorkspaceSize(&go, &x, &wide, &ws, &e);
  FailAllocation(1);
  const Status no_executor = SiluGradGetWorkspaceSize(&go, &x, &gi, &ws, &e);
  FailAllocation(0);
  EXPECT_TRUE(e == nullptr);
  const struct {
    Status got;
    int32_t number;
    const char* name;
  } cases[] = {
      {success, 0, "ACLNN_SUCCESS"},
      {null_tensor, 161001, "ACLNN_ERR_PARAM_NULLPTR"},
      {bad_dtype, 161002, "ACLNN_ERR_PARAM_INVALID"},
      {no_executor, 561101, "ACLNN_ERR_INNER_CREATE_EXECUTOR"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(c.got, c.number) << c.name;
    EXPECT_EQ(std::string(StatusName(c.got)), c.name);
    EXPECT_EQ(IsCallerError(c.got), c.number / 1000 == 161) << c.name;  // 161xxx: the caller's mistake
  }
  EXPECT_EQ(std::string(StatusName(12345)), "ACLNN_ERR_UNKNOWN");  // a status no table names
}

TEST(status, valid_call_succeeds) {
  Operands c = Make(DataType::kFloat32, {3, 4}, {3, 4}, {3, 4});
  EXPECT_EQ(Plan(c), kSuccess);
  EXPECT_EQ(Compute(c.go, c.x, c.gi), kSuccess);
}

TEST(status, null_tensor_or_out_pointer_is_161001) {
  Operands c = Make(DataType::kFloat32, {3}, {3}, {3});
  const TensorDesc go = c.go.Desc(), x = c.x.Desc(), gi = c.gi.Desc();
  uint64_t ws = 7;
  CpuExecutor* e = nullptr;
  EXPECT_EQ(SiluGradGetWorkspaceSize(nullptr, &x, &gi, &ws, &e), kErrParamNullptr);
  EXPECT_EQ(SiluGradGetWorkspaceSize(&go, nullptr, &gi, &ws, &e), kErrParamNullptr);
  EXPECT_EQ(SiluGradGetWorkspaceSize(&go, &x, nullptr, &ws, &e), kErrParamNullptr);
  EXPECT_EQ(SiluGradGetWorkspaceSize(&go, &x, &gi, nullptr, &e), kErrParamNullptr);
  EXPECT_EQ(SiluGradGetWorkspaceSize(&go, &x, &gi, &ws, nullptr), kErrParamNullptr);
  EXPECT_TRUE(e == nullptr);
  // Null pointers outrank other faults: a null tensor with a bad dtype elsewhere.
  TensorDesc bad = gi;
  bad.dtype = static_cast<DataType>(11);
  EXPECT_EQ(SiluGradGetWorkspaceSize(nullptr, &x, &bad, &ws, &e), kErrParamNullptr);
}

TEST(status, null_dims_with_positive_rank_is_161001) {
  for (int which = 0; which < 3; ++which) {
    Operands c = Make(DataType::kFloat16, {2, 3}, {2, 3}, {2, 3});
    TensorDesc d[3] = {c.go.Desc(), c.x.Desc(), c.gi.Desc()};
    d[which].dims = nullptr;
    uint64_t ws = 0;
    CpuExecutor* e = nullptr;
    EXPECT_TRUE(SiluGradGetWorkspaceSize(&d[0], &d[1], &d[2], &ws, &e) == kErrParamNullptr)
        << "operand " << which;
    EXPECT_TRUE(e == nullptr);
  }
  // Rank 0 needs no dims.
  Operands c = Make(DataType::kFloat16, {}, {}, {});
  TensorDesc d[3] = {c.go.Desc(), c.x.Desc(), c.gi.Desc()};
  for (TensorDesc& t : d) t.dims = nullptr;
  uint64_t ws = 1;
  CpuExecutor* e = nullptr;
  EXPECT_EQ(SiluGradGetWorkspaceSize(&d[0], &d[1], &d[2], &ws, &e), kSuccess);
  EXPECT_EQ(ws, 0u);
  EXPECT_EQ(CpuDestroyExecutor(e), kSuccess);
}

TEST(status, null_data_at_phase_two_is_161001) {
  for (int which = 0; which < 3; ++which) {
    Operands c = Make(DataType::kBFloat16, {4}, {4}, {4});
    TensorDesc d[3] = {c.go.Desc(), c.x.Desc(), c.gi.Desc()};
    d[which].data = nullptr;  // allowed in phase 1
    uint64_t ws = 0;
    CpuExecutor* e = nullptr;
    const int64_t live = LiveAllocations();
    EXPECT_EQ(SiluGradGetWorkspaceSize(&d[0], &d[1], &d[2], &ws, &e), kSuccess);
    EXPECT_TRUE(CpuRun(nullptr, 0, e, nullptr) == kErrParamNullptr) << "operand " << which;
    EXPECT_EQ(LiveAllocations(), live);  // the run-once executor was released anyway
  }
  // Data set late through SetData is fine.
  Operands c = Make(DataType::kBFloat16, {4}, {4}, {4});
  TensorDesc d[3] = {c.go.Desc(), c.x.Desc(), c.gi.Desc()};
  for (TensorDesc& t : d) t.data = nullptr;
  uint64_t ws = 0;
  CpuExecutor* e = nullptr;
  EXPECT_EQ(SiluGradGetWorkspaceSize(&d[0], &d[1], &d[2], &ws, &e), kSuccess);
  EXPECT_EQ(SiluGradSetData(e, c.go.bytes.data(), c.x.bytes.data(), c.gi.bytes.data()), kSuccess);
  EXPECT_EQ(CpuRun(nullptr, 0, e, nullptr), kSuccess);
}

TEST(status, null_workspace_of_nonzero_size_is_161001) {
  Operands c = Make(DataType::kFloat32, {4, 8}, {8}, {4, 8});
  const TensorDesc go = c.go.Desc(), x = c.x.Desc(), gi = c.gi.Desc();
  uint64_t ws = 0;
  CpuExecutor* e = nullptr;
  const int64_t live = LiveAllocations();
  EXPECT_EQ(SiluGradGetWorkspaceSize(&go, &x, &gi, &ws, &e), kSuccess);
  EXPECT_EQ(ws, 64u);  // a double s'(x) per element of the broadcast x
  EXPECT_EQ(CpuRun(nullptr, ws, e, nullptr), kErrParamNullptr);
  EXPECT_EQ(LiveAllocations(), live);
}

TEST(status, null_executor_is_161001) {
  EXPECT_EQ(CpuRun(nullptr, 0, nullptr, nullptr), kErrParamNullptr);
  EXPECT_EQ(CpuSetRepeatable(nullptr), kErrParamNullptr);
  EXPECT_EQ(SiluGradSetData(nullptr, nullptr, nullptr, nullptr), kErrParamNullptr);
  EXPECT_EQ(CpuDestroyExecutor(nullptr), kErrParamNullptr);
  EXPECT_EQ(CpuSetIsa(nullptr, Isa::kScalar), kErrParamNullptr);
  EXPECT_EQ(CpuSetChunkElements(nullptr, 64), kErrParamNullptr);
}

TEST(status, unsupported_dtype_is_161002) {
  for (int32_t code : {11 /*ACL_DOUBLE*/, 3 /*ACL_INT32*/, -1, 28}) {
    for (int which = 0; which < 3; ++which) {
      Operands c = Make(DataType::kFloat32, {3}, {3}, {3});
      Operand* ops[] = {&c.go, &c.x, &c.gi};
      for (Operand* op : ops) op->dtype = static_cast<DataType>(code);  // all alike ...
      EXPECT_TRUE(Plan(c) == kErrParamInvalid) << "dtype " << code << " everywhere";
      for (Operand* op : ops) op->dtype = DataType::kFloat32;
      ops[which]->dtype = static_cast<DataType>(code);  // ... or in one operand
      EXPECT_TRUE(Plan(c) == kErrParamInvalid) << "dtype " << code << " in operand " << which;
    }
  }
}

TEST(status, mixed_dtypes_are_161002) {
  for (DataType a : kTypes) {
    for (DataType b : kTypes) {
      if (a == b) continue;
      for (int which = 0; which < 3; ++which) {
        Operands c = Make(a, {5}, {5}, {5});
        Operand* ops[] = {&c.go, &c.x, &c.gi};
        ops[which]->dtype = b;  // the descriptor says b; storage size is irrelevant to phase 1
        EXPECT_TRUE(Plan(c) == kErrParamInvalid)
            << DtypeName(a) << " with " << DtypeName(b) << " at " << which;
      }
    }
  }
}

TEST(status, shapes_that_do_not_broadcast_are_161002) {
  const struct {
    Dims g, x, out;
  } cases[] = {
      {{3, 4}, {5}, {3, 5}},           // 4 vs 5
      {{2, 3}, {3, 2}, {2, 2}},        // no common shape
      {{2, 1, 4}, {3, 5}, {2, 3, 4}},  // 4 vs 5 in the last dim
      {{0}, {2}, {0}},                 // 0 vs 2 is not a broadcast either
  };
  for (const auto& k : cases) {
    Operands c = Make(DataType::kFloat32, k.g, k.x, k.out);
    EXPECT_TRUE(Plan(c) == kErrParamInvalid) << ToString(k.g) << " with " << ToString(k.x);
  }
}

TEST(status, output_shape_other_than_the_broadcast_is_161002) {
  const struct {
    Dims g, x, out;
  } cases[] = {
      {{3, 1}, {1, 5}, {3, 4}},     // wrong size
      {{3, 1}, {1, 5}, {3, 1}},     // output would have to broadcast back
      {{3, 5}, {3, 5}, {1, 3, 5}},  // extra leading dim
      {{2, 3, 5}, {5}, {3, 5}},     // missing leading dim
      {{1}, {1}, {4}},              // both inputs size 1, output larger
      {{}, {}, {1}},                // scalars make a scalar
      {{0, 3}, {3}, {1, 3}},        // empty broadcast shape, non-empty output
  };
  for (const auto& k : cases) {
    Operands c = Make(DataType::kFloat16, k.g, k.x, k.out);
    EXPECT_TRUE(Plan(c) == kErrParamInvalid)
        << ToString(k.g) << " with " << ToString(k.x) << " into " << ToString(k.out);
  }
}

TEST(status, rank_above_eight_is_161002) {
  const Dims nine(9, 1), eight(8, 1);
  Operands ok = Make(DataType::kFloat32, eight, eight, eight);
  EXPECT_EQ(Plan(ok), kSuccess);
  Operands all = Make(DataType::kFloat32, nine, nine, nine);
  EXPECT_EQ(Plan(all), kErrParamInvalid);
  Operands g9 = Make(DataType::kFloat32, nine, eight, nine);
  EXPECT_EQ(Plan(g9), kErrParamInvalid);
  Operands x9 = Make(DataType::kFloat32, {1}, nine, nine);
  EXPECT_EQ(Plan(x9), kErrParamInvalid);
  // Rank 9 with null dims is still invalid, not a null-pointer error.
  Operands c = Make(DataType::kFloat32, {}, {}, {});
  TensorDesc go = c.go.Desc(), x = c.x.Desc(), gi = c.gi.Desc();
  gi.rank = 9;
  uint64_t ws = 0;
  CpuExecutor* e = nullptr;
  EXPECT_EQ(SiluGradGetWorkspaceSize(&go, &x, &gi, &ws, &e), kErrParamInvalid);
  gi.rank = -1;
  EXPECT_EQ(SiluGradGetWorkspaceSize(&go, &x, &gi, &ws, &e), kErrParamInvalid);
  EXPECT_TRUE(e == nullptr);
}

TEST(status, negative_dims_strides_offset_or_storage_are_161002) {
  for (int which = 0; which < 3; ++which) {
    for (int field = 0; field < 4; ++field) {
      Operands c = Make(DataType::kFloat32, {2, 3}, {2, 3}, {2, 3});
      Operand* ops[] = {&c.go, &c.x, &c.gi};
      Operand* op = ops[which];
      switch (field) {
        case 0: op->dims[0] = -2; break;
        case 1: op->strides[1] = -1; break;
        case 2: op->offset = -1; break;
        case 3: op->storage_numel = -1; break;
      }
      EXPECT_TRUE(Plan(c) == kErrParamInvalid) << "operand " << which << " field " << field;
    }
  }
}

TEST(status, views_past_their_storage_are_161002) {
  // A (2, 3) view with strides (4, 1) and offset 2 ends at element 2 + 4 + 2 = 8.
  for (int which = 0; which < 3; ++which) {
    for (int64_t storage : {int64_t{9}, int64_t{8}}) {
      Operands c = Make(DataType::kFloat32, {2, 3}, {2, 3}, {2, 3});
      Operand* ops[] = {&c.go, &c.x, &c.gi};
      Operand* op = ops[which];
      op->strides = {4, 1};
      op->offset = 2;
      op->storage_numel = storage;  // the buffer holds 6 + kCanary elements: phase 1 reads nothing
      const Status want = storage == 9 ? kSuccess : kErrParamInvalid;
      EXPECT_TRUE(Plan(c) == want) << "operand " << which << ", storage " << storage;
    }
  }
  // Implied row-major strides are bounded too.
  Operands c = Make(DataType::kFloat32, {2, 3}, {2, 3}, {2, 3});
  c.x.null_strides = true;
  EXPECT_EQ(Plan(c), kSuccess);
  c.x.storage_numel = 5;
  EXPECT_EQ(Plan(c), kErrParamInvalid);
  // Element counts or extents that overflow int64 are rejected, not wrapped.
  // (2^32 * 2^32 would wrap to 0, an empty tensor.)
  Operands big = Make(DataType::kFloat32, {}, {}, {});
  for (Operand* op : {&big.go, &big.x, &big.gi}) {
    op->dims = {int64_t{1} << 32, int64_t{1} << 32};
    op->null_strides = true;
    op->storage_numel = INT64_MAX;
  }
  EXPECT_EQ(Plan(big), kErrParamInvalid);
  Operands far = Make(DataType::kFloat32, {3}, {3}, {3});
  far.x.strides = {int64_t{1} << 62};  // 2 steps of 2^62 pass INT64_MAX
  far.x.storage_numel = INT64_MAX;
  EXPECT_EQ(Plan(far), kErrParamInvalid);
  far.x.strides = {1};
  far.x.offset = INT64_MAX;
  EXPECT_EQ(Plan(far), kErrParamInvalid);
  // Huge strides that stay inside a huge storage are planned without overflow.
  Operands huge = Make(DataType::kFloat32, {2, 2}, {2, 2}, {2, 2});
  huge.x.strides = {1, int64_t{1} << 62};
  huge.x.storage_numel = INT64_MAX;
  huge.gi.strides = {int64_t{1} << 61, int64_t{1} << 62};
  huge.gi.storage_numel = INT64_MAX;
  EXPECT_EQ(Plan(huge), kSuccess);
}

TEST(status, overlapping_output_is_161002) {
  const struct {
    Dims dims, strides;
    Status want;
  } cases[] = {
      {{4}, {0}, kErrParamInvalid},          // every element on one
      {{2, 2}, {1, 1}, kErrParamInvalid},    // (0,1) and (1,0) coincide
      {{3, 4}, {3, 1}, kErrParamInvalid},    // rows of 4 at a pitch of 3
      {{3, 4}, {4, 1}, kSuccess},            // row-major
      {{3, 4}, {1, 3}, kSuccess},            // column-major
      {{3, 4}, {9, 2}, kSuccess},            // gaps
      {{1, 4}, {0, 1}, kSuccess},            // a size-1 dim may have any stride
  };
  for (const auto& k : cases) {
    Operands c = Make(DataType::kFloat32, k.dims, k.dims, k.dims);
    c.gi.strides = k.strides;
    c.gi.storage_numel = 64;
    EXPECT_TRUE(Plan(c) == k.want) << "output strides " << ToString(k.strides);
  }
  // Inputs may overlap themselves (a stride-0 view broadcasts).
  Operands c = Make(DataType::kFloat32, {3, 4}, {3, 4}, {3, 4});
  c.x.strides = {0, 1};
  c.go.strides = {1, 1};
  EXPECT_EQ(Plan(c), kSuccess);
}

TEST(status, workspace_too_small_is_161002) {
  for (DataType t : kTypes) {
    Operands c = Make(t, {4, 8}, {8}, {4, 8});
    const TensorDesc go = c.go.Desc(), x = c.x.Desc(), gi = c.gi.Desc();
    uint64_t ws = 0;
    CpuExecutor* e = nullptr;
    std::vector<unsigned char> workspace(64);
    const int64_t live = LiveAllocations();
    EXPECT_EQ(SiluGradGetWorkspaceSize(&go, &x, &gi, &ws, &e), kSuccess);
    EXPECT_TRUE(ws > 0 && ws <= workspace.size());
    EXPECT_EQ(CpuRun(workspace.data(), ws - 1, e, nullptr), kErrParamInvalid);
    EXPECT_EQ(LiveAllocations(), live);
  }
}

TEST(status, bad_isa_or_chunk_size_is_161002) {
  Operands c = Make(DataType::kFloat32, {3}, {3}, {3});
  const TensorDesc go = c.go.Desc(), x = c.x.Desc(), gi = c.gi.Desc();
  uint64_t ws = 0;
  CpuExecutor* e = nullptr;
  EXPECT_EQ(SiluGradGetWorkspaceSize(&go, &x, &gi, &ws, &e), kSuccess);
  EXPECT_EQ(CpuSetIsa(e, static_cast<Isa>(9)), kErrParamInvalid);
  for (Isa isa : kIsas) {
    EXPECT_EQ(CpuSetIsa(e, isa), IsaSupported(isa) ? kSuccess : kErrParamInvalid);
  }
  EXPECT_EQ(CpuSetChunkElements(e, 0), kErrParamInvalid);
  EXPECT_EQ(CpuSetChunkElements(e, -3), kErrParamInvalid);
  EXPECT_EQ(CpuSetChunkElements(e, 1), kSuccess);
  EXPECT_EQ(CpuDestroyExecutor(e), kSuccess);
}

TEST(status, executor_allocation_failure_is_561101) {
  Operands c = Make(DataType::kFloat32, {3}, {3}, {3});
  const TensorDesc go = c.go.Desc(), x = c.x.Desc(), gi = c.gi.Desc();
  uint64_t ws = 5;
  CpuExecutor* e = nullptr;
  const int64_t live = LiveAllocations();
  FailAllocation(1);
  EXPECT_EQ(SiluGradGetWorkspaceSize(&go, &x, &gi, &ws, &e), kErrInnerCreateExecutor);
  FailAllocation(0);
  EXPECT_TRUE(e == nullptr);
  EXPECT_EQ(LiveAllocations(), live);
}

TEST(status, phase_two_allocation_failure_is_561101) {
  // With helpers, phase 2 allocates its shared work state first.
  Rng rng(7);
  Operands c = Make(DataType::kFloat32, {64, 1024}, {64, 1024}, {64, 1024});
  FillRandom(c.go, rng, 1.0);
  FillRandom(c.x, rng, 4.0);
  const TensorDesc go = c.go.Desc(), x = c.x.Desc(), gi = c.gi.Desc();
  uint64_t ws = 0;
  CpuExecutor* e = nullptr;
  EXPECT_EQ(SiluGradGetWorkspaceSize(&go, &x, &gi, &ws, &e), kSuccess);
  EXPECT_EQ(CpuSetChunkElements(e, 1024), kSuccess);
  const int64_t live = LiveAllocations();
  {
    ThreadParallel parallel(4);
    FailAllocation(1);
    EXPECT_EQ(CpuRun(nullptr, 0, e, parallel.get()), kErrInnerCreateExecutor);
    FailAllocation(0);
  }
  EXPECT_EQ(LiveAllocations(), live - 1);  // the run-once executor is gone too
}

TEST(status, helper_allocation_failure_still_succeeds) {
  // A helper that cannot be set up leaves its share to the calling thread.
  Rng rng(8);
  for (int64_t nth : {2, 3}) {
    Operands c = Make(DataType::kFloat16, {64, 1000}, {64, 1000}, {64, 1000});
    FillRandom(c.go, rng, 1.0);
    FillRandom(c.x, rng, 4.0);
    FillSentinel(c.gi);
    const TensorDesc go = c.go.Desc(), x = c.x.Desc(), gi = c.gi.Desc();
    uint64_t ws = 0;
    CpuExecutor* e = nullptr;
    EXPECT_EQ(SiluGradGetWorkspaceSize(&go, &x, &gi, &ws, &e), kSuccess);
    EXPECT_EQ(CpuSetChunkElements(e, 999), kSuccess);
    {
      ThreadParallel parallel(3);
      FailAllocation(nth);
      EXPECT_EQ(CpuRun(nullptr, 0, e, parallel.get()), kSuccess);
      FailAllocation(0);
    }
    CheckAgainstReference(c.go, c.x, c.gi, "allocation " + std::to_string(nth) + " failed");
  }
}

// 561103 (internal null pointer) is returned when an executor's kernel table
// is missing; CpuSetIsa refuses every ISA that could lead there, so the
// public API cannot reach it.

}  // namespace
}  // namespace jas::test
