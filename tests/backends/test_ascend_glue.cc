// The Ascend glue (ffi/ascend/glue.h) linked against the FAKE CANN of
// tests/ascend_fake: host memory stands in for device memory and the fake
// operator runs this package's CPU kernel. Checks the aclTensor views the glue
// builds, workspace sizing and allocation, executor and stream hand-over,
// tensor destruction on every path, and the mapping of every failure to a
// status, a message and an ffi::Error code. Not a test of CANN itself.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ascend/error.h"
#include "ascend/glue.h"
#include "check.h"
#include "common/half.h"
#include "fake_cann.h"
#include "silu_grad.h"

namespace {

using jas::ascend::Failure;
using jas::ascend::Operand;
using jas::ascend::Outcome;
using jas::ascend::SiluBackward;
using jas::ascend::WorkspaceSource;
using Dims = std::vector<int64_t>;

aclrtStream const kStream = reinterpret_cast<aclrtStream>(uintptr_t{0x5eed});

// Host "device" memory handed out as the workspace, with a log of requests.
struct Allocator {
  bool fail = false;
  std::vector<uint64_t> requests;
  std::vector<std::unique_ptr<char[]>> blocks;

  static void* Allocate(void* self, uint64_t bytes) {
    auto* a = static_cast<Allocator*>(self);
    a->requests.push_back(bytes);
    if (a->fail) return nullptr;
    a->blocks.emplace_back(new char[bytes]);
    return a->blocks.back().get();
  }
  WorkspaceSource Source() { return WorkspaceSource{this, &Allocate}; }
};

int64_t Numel(const Dims& d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

// A dense buffer of one dtype, stored as bytes.
struct Buffer {
  aclDataType dtype;
  Dims dims;
  std::vector<char> bytes;

  Buffer(aclDataType t, Dims d) : dtype(t), dims(std::move(d)), bytes(Numel(dims) * ElemBytes(t)) {}
  static int64_t ElemBytes(aclDataType t) { return t == ACL_FLOAT ? 4 : 2; }
  int64_t numel() const { return Numel(dims); }
  Operand op() { return Operand{dtype, static_cast<int64_t>(dims.size()), dims.data(), bytes.data()}; }

  float get(int64_t i) const {
    if (dtype == ACL_FLOAT) {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    return dtype == ACL_FLOAT16 ? jas::half::F16ToFloat(h) : jas::half::BF16ToFloat(h);
  }
  void set(int64_t i, float f) {
    if (dtype == ACL_FLOAT) {
      std::memcpy(bytes.data() + 4 * i, &f, 4);
      return;
    }
    const uint16_t h = dtype == ACL_FLOAT16 ? jas::half::FloatToF16(f) : jas::half::FloatToBF16(f);
    std::memcpy(bytes.data() + 2 * i, &h, 2);
  }
  void fill(uint64_t seed, float scale) {
    for (int64_t i = 0; i < numel(); ++i) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      set(i, scale * (static_cast<float>(seed >> 40) / static_cast<float>(1 << 24) * 2.0f - 1.0f));
    }
  }
};

// `in` materialised with `out_dims` (NumPy broadcasting), the slow obvious way.
Buffer Expand(const Buffer& in, const Dims& out_dims) {
  Buffer e(in.dtype, out_dims);
  const size_t r = out_dims.size(), k = in.dims.size();
  for (int64_t flat = 0; flat < e.numel(); ++flat) {
    int64_t rem = flat, src = 0, step = 1;
    for (size_t j = r; j-- > 0;) {
      const int64_t idx = rem % out_dims[j];
      rem /= out_dims[j];
      if (j + k >= r) {
        const int64_t d = in.dims[j + k - r];
        src += (d == 1 ? 0 : idx) * step;
        step *= d;
      }
    }
    std::memcpy(e.bytes.data() + flat * Buffer::ElemBytes(e.dtype),
                in.bytes.data() + src * Buffer::ElemBytes(in.dtype), Buffer::ElemBytes(e.dtype));
  }
  return e;
}

jas::DataType KernelType(aclDataType t) {
  return t == ACL_FLOAT ? jas::DataType::kFloat32
                        : t == ACL_FLOAT16 ? jas::DataType::kFloat16 : jas::DataType::kBFloat16;
}

// The kernel called directly on materialised, contiguous inputs.
Buffer KernelResult(Buffer g, Buffer x, const Dims& out_dims) {
  Buffer ge = Expand(g, out_dims), xe = Expand(x, out_dims), out(g.dtype, out_dims);
  auto desc = [](Buffer& b) {
    jas::TensorDesc d;
    d.dtype = KernelType(b.dtype);
    d.rank = static_cast<int64_t>(b.dims.size());
    d.dims = b.dims.data();
    d.storage_numel = b.numel();
    d.data = b.bytes.data();
    return d;
  };
  const jas::TensorDesc dg = desc(ge), dx = desc(xe), dout = desc(out);
  uint64_t ws = 0;
  jas::SiluGradExecutor* e = nullptr;
  if (jas::SiluGradGetWorkspaceSize(&dg, &dx, &dout, &ws, &e) != jas::kSuccess || ws != 0 ||
      jas::SiluGradRun(nullptr, 0, e, nullptr) != jas::kSuccess) {
    out.bytes.clear();  // makes every comparison fail
  }
  return out;
}

double Derivative(double x) {
  const double s = 1.0 / (1.0 + std::exp(-x));
  return s * (1.0 + x * (1.0 - s));
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Runs the glue on random inputs and checks the result against the kernel
// and, loosely, against the formula in double.
struct Run {
  Buffer g, x, out;
  Allocator alloc;
  Outcome outcome;

  Run(aclDataType t, Dims g_dims, Dims x_dims, Dims out_dims)
      : g(t, std::move(g_dims)), x(t, std::move(x_dims)), out(t, std::move(out_dims)) {
    g.fill(1, 2.0f);
    x.fill(2, 6.0f);
    outcome = SiluBackward(kStream, alloc.Source(), g.op(), x.op(), out.op());
  }
  bool matches_kernel() const { return KernelResult(g, x, out.dims).bytes == out.bytes; }
  bool near_formula() const {
    const Buffer ge = Expand(g, out.dims), xe = Expand(x, out.dims);
    const double tol = g.dtype == ACL_FLOAT ? 1e-5 : g.dtype == ACL_FLOAT16 ? 2e-3 : 2e-2;
    for (int64_t i = 0; i < out.numel(); ++i) {
      const double want = ge.get(i) * Derivative(xe.get(i));
      if (std::fabs(out.get(i) - want) > tol * (1.0 + std::fabs(want))) return false;
    }
    return true;
  }
};

}  // namespace

TEST(ascend_glue, contiguous_float32_builds_plain_views_and_matches_kernel) {
  fake_cann::Reset();
  Run r(ACL_FLOAT, {3, 4}, {3, 4}, {3, 4});
  REQUIRE(r.outcome.ok());
  const fake_cann::Record& c = fake_cann::Calls();
  REQUIRE(c.created.size() == 3);
  const void* data[3] = {r.g.bytes.data(), r.x.bytes.data(), r.out.bytes.data()};
  for (int i = 0; i < 3; ++i) {
    CHECK_EQ(c.created[i].dims, (Dims{3, 4}));
    CHECK_EQ(c.created[i].strides, (Dims{4, 1}));
    CHECK_EQ(c.created[i].storage_dims, (Dims{3, 4}));
    CHECK_EQ(c.created[i].offset, int64_t{0});
    CHECK_EQ(c.created[i].format, ACL_FORMAT_ND);
    CHECK_EQ(c.created[i].dtype, ACL_FLOAT);
    CHECK_EQ(c.created[i].data, data[i]);
  }
  CHECK(r.matches_kernel());
  CHECK(r.near_formula());
}

TEST(ascend_glue, phases_run_once_with_phase_one_executor_and_the_stream) {
  fake_cann::Reset();
  Run r(ACL_FLOAT, {5}, {5}, {5});
  REQUIRE(r.outcome.ok());
  const fake_cann::Record& c = fake_cann::Calls();
  REQUIRE(c.created.size() == 3);
  CHECK_EQ(c.phase1_calls, 1);
  CHECK_EQ(c.phase2_calls, 1);
  REQUIRE(c.executors_issued.size() == 1);
  REQUIRE(c.executors_run.size() == 1);
  CHECK_EQ(c.executors_run[0], c.executors_issued[0]);
  CHECK_EQ(c.stream, kStream);
  CHECK_EQ(c.live_tensors, int64_t{0});
  CHECK_EQ(c.destroyed, 3);
  CHECK_EQ(fake_cann::LiveExecutors(), int64_t{0});
}

TEST(ascend_glue, broadcast_grad_output_is_a_stride0_view_over_its_own_storage) {
  fake_cann::Reset();
  Run r(ACL_FLOAT, {4}, {3, 4}, {3, 4});
  REQUIRE(r.outcome.ok());
  const fake_cann::Record& c = fake_cann::Calls();
  REQUIRE(c.created.size() == 3);
  CHECK_EQ(c.created[0].dims, (Dims{3, 4}));
  CHECK_EQ(c.created[0].strides, (Dims{0, 1}));
  CHECK_EQ(c.created[0].storage_dims, (Dims{4}));
  CHECK_EQ(c.created[1].strides, (Dims{4, 1}));
  CHECK(r.matches_kernel());
  CHECK(r.near_formula());
}

TEST(ascend_glue, broadcast_self_and_both_operands_are_stride0_views) {
  fake_cann::Reset();
  Run r(ACL_FLOAT, {1, 4}, {3, 1}, {3, 4});
  REQUIRE(r.outcome.ok());
  const fake_cann::Record& c = fake_cann::Calls();
  REQUIRE(c.created.size() == 3);
  CHECK_EQ(c.created[0].strides, (Dims{0, 1}));
  CHECK_EQ(c.created[0].storage_dims, (Dims{1, 4}));
  CHECK_EQ(c.created[1].dims, (Dims{3, 4}));
  CHECK_EQ(c.created[1].strides, (Dims{1, 0}));
  CHECK_EQ(c.created[1].storage_dims, (Dims{3, 1}));
  CHECK_EQ(c.created[2].strides, (Dims{4, 1}));
  CHECK(r.matches_kernel());
  CHECK(r.near_formula());
}

TEST(ascend_glue, size_one_dims_shared_by_all_keep_their_strides) {
  fake_cann::Reset();
  Run r(ACL_FLOAT, {2, 1, 3}, {1, 1, 3}, {2, 1, 3});
  REQUIRE(r.outcome.ok());
  const fake_cann::Record& c = fake_cann::Calls();
  REQUIRE(c.created.size() == 3);
  CHECK_EQ(c.created[0].strides, (Dims{3, 3, 1}));
  CHECK_EQ(c.created[1].strides, (Dims{0, 3, 1}));
  CHECK(r.matches_kernel());
}

TEST(ascend_glue, scalar_output_becomes_a_one_element_vector) {
  fake_cann::Reset();
  Run r(ACL_FLOAT, {}, {}, {});
  REQUIRE(r.outcome.ok());
  const fake_cann::Record& c = fake_cann::Calls();
  REQUIRE(c.created.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK_EQ(c.created[i].dims, (Dims{1}));
    CHECK_EQ(c.created[i].strides, (Dims{1}));
    CHECK_EQ(c.created[i].storage_dims, (Dims{1}));
  }
  CHECK(r.matches_kernel());
  CHECK(r.near_formula());
}

TEST(ascend_glue, scalar_grad_output_broadcasts_with_all_zero_strides) {
  fake_cann::Reset();
  Run r(ACL_FLOAT, {}, {2, 3}, {2, 3});
  REQUIRE(r.outcome.ok());
  const fake_cann::Record& c = fake_cann::Calls();
  REQUIRE(c.created.size() == 3);
  CHECK_EQ(c.created[0].dims, (Dims{2, 3}));
  CHECK_EQ(c.created[0].strides, (Dims{0, 0}));
  CHECK_EQ(c.created[0].storage_dims, (Dims{1}));
  CHECK(r.matches_kernel());
}

TEST(ascend_glue, half_types_map_to_acl_enums_and_match_kernel) {
  for (aclDataType t : {ACL_FLOAT16, ACL_BF16}) {
    fake_cann::Reset();
    Run r(t, {2, 1, 5}, {3, 5}, {2, 3, 5});
    REQUIRE(r.outcome.ok());
    for (const auto& rec : fake_cann::Calls().created) CHECK_EQ(rec.dtype, t);
    CHECK_EQ(static_cast<int>(t), t == ACL_FLOAT16 ? 1 : 27);
    CHECK(r.matches_kernel());
    CHECK(r.near_formula());
  }
}

TEST(ascend_glue, rank_eight_passes_through) {
  fake_cann::Reset();
  Run r(ACL_FLOAT, {2, 1, 2, 1, 2, 1, 2, 3}, {1, 3, 1, 2, 1, 2, 1, 3}, {2, 3, 2, 2, 2, 2, 2, 3});
  REQUIRE(r.outcome.ok());
  REQUIRE(fake_cann::Calls().created.size() == 3);
  CHECK_EQ(fake_cann::Calls().created[2].dims.size(), size_t{8});
  CHECK(r.matches_kernel());
}

TEST(ascend_glue, zero_workspace_is_never_allocated_and_phase_two_gets_null_zero) {
  fake_cann::Reset();
  Run r(ACL_FLOAT, {3, 4}, {4}, {3, 4});
  REQUIRE(r.outcome.ok());
  CHECK(r.alloc.requests.empty());
  CHECK(fake_cann::Calls().workspace == nullptr);
  CHECK_EQ(fake_cann::Calls().workspace_size, uint64_t{0});
}

TEST(ascend_glue, nonzero_workspace_is_allocated_once_at_its_size_and_handed_to_phase_two) {
  fake_cann::Mode mode;
  mode.extra_workspace = 4096;
  fake_cann::Reset(mode);
  Run r(ACL_BF16, {7, 9}, {7, 9}, {7, 9});
  REQUIRE(r.outcome.ok());
  CHECK_EQ(r.alloc.requests, (std::vector<uint64_t>{4096}));
  REQUIRE(r.alloc.blocks.size() == 1);
  CHECK_EQ(fake_cann::Calls().workspace, static_cast<void*>(r.alloc.blocks[0].get()));
  CHECK_EQ(fake_cann::Calls().workspace_size, uint64_t{4096});
  CHECK(fake_cann::Calls().extra_workspace_written);
  CHECK(r.matches_kernel());
}

TEST(ascend_glue, failed_workspace_allocation_stops_before_phase_two) {
  fake_cann::Mode mode;
  mode.extra_workspace = 1000;
  fake_cann::Reset(mode);
  Buffer g(ACL_FLOAT, {8}), x(ACL_FLOAT, {8}), out(ACL_FLOAT, {8});
  Allocator alloc;
  alloc.fail = true;
  const Outcome o = SiluBackward(kStream, alloc.Source(), g.op(), x.op(), out.op());
  CHECK(o.failure == Failure::kWorkspace);
  CHECK(Contains(o.message, "1000 bytes"));
  CHECK_EQ(alloc.requests, (std::vector<uint64_t>{1000}));
  CHECK_EQ(fake_cann::Calls().phase2_calls, 0);
  CHECK_EQ(fake_cann::LiveExecutors(), int64_t{1});  // never run: CANN documents no way to release it
  CHECK_EQ(fake_cann::Calls().live_tensors, int64_t{0});
  CHECK(jas::ascend::ToFfiError(o).errc() == xla::ffi::ErrorCode::kResourceExhausted);
}

TEST(ascend_glue, a_missing_allocator_is_a_failed_allocation_not_a_null_workspace) {
  fake_cann::Mode mode;
  mode.extra_workspace = 64;
  fake_cann::Reset(mode);
  Buffer g(ACL_FLOAT, {8}), x(ACL_FLOAT, {8}), out(ACL_FLOAT, {8});
  const Outcome o = SiluBackward(kStream, WorkspaceSource{}, g.op(), x.op(), out.op());
  CHECK(o.failure == Failure::kWorkspace);
  CHECK_EQ(fake_cann::Calls().phase2_calls, 0);
}

const aclnnStatus kStatuses[] = {161001, 161002, 361001, 561000, 561101, 561103};

void CheckStatusMapping(bool phase1) {
  for (aclnnStatus status : kStatuses) {
    fake_cann::Mode mode;
    (phase1 ? mode.phase1_status : mode.phase2_status) = status;
    fake_cann::Reset(mode);
    Buffer g(ACL_FLOAT, {2, 3}), x(ACL_FLOAT, {3}), out(ACL_FLOAT, {2, 3});
    Allocator alloc;
    const Outcome o = SiluBackward(kStream, alloc.Source(), g.op(), x.op(), out.op());
    CHECK(o.failure == (phase1 ? Failure::kPhase1 : Failure::kPhase2));
    CHECK_EQ(o.status, status);
    const char* call = phase1 ? "aclnnSiluBackwardGetWorkspaceSize failed" : "aclnnSiluBackward failed";
    CHECK(Contains(o.message, call));
    CHECK(Contains(o.message, "(" + std::to_string(status) + ")"));
    CHECK(Contains(o.message, jas::ascend::StatusLabel(status)));
    CHECK(Contains(o.message, "fake CANN: "));  // aclGetRecentErrMsg() is carried over
    CHECK(Contains(o.message, "self float32[3] as [2,3] strides [0,1]"));
    CHECK_EQ(fake_cann::Calls().phase2_calls, phase1 ? 0 : 1);
    CHECK_EQ(fake_cann::LiveExecutors(), int64_t{0});  // a failed phase 2 still consumes it
    CHECK_EQ(fake_cann::Calls().live_tensors, int64_t{0});
    const xla::ffi::Error e = jas::ascend::ToFfiError(o);
    CHECK(e.failure());
    CHECK(e.errc() == (status / 1000 == 161 ? xla::ffi::ErrorCode::kInvalidArgument
                                            : xla::ffi::ErrorCode::kInternal));
    CHECK_EQ(e.message(), o.message);
  }
}

TEST(ascend_glue, each_phase_one_status_becomes_an_error_with_code_and_cann_message) { CheckStatusMapping(true); }

TEST(ascend_glue, each_phase_two_status_becomes_an_error_with_code_and_cann_message) { CheckStatusMapping(false); }

TEST(ascend_glue, failed_tensor_creation_destroys_the_tensors_already_made) {
  for (int fail_at = 0; fail_at < 3; ++fail_at) {
    fake_cann::Mode mode;
    mode.fail_create_tensor_call = fail_at;
    fake_cann::Reset(mode);
    Buffer g(ACL_FLOAT, {4}), x(ACL_FLOAT, {4}), out(ACL_FLOAT, {4});
    Allocator alloc;
    const Outcome o = SiluBackward(kStream, alloc.Source(), g.op(), x.op(), out.op());
    CHECK(o.failure == Failure::kCreateTensor);
    CHECK(Contains(o.message, "aclCreateTensor returned null for"));
    CHECK(Contains(o.message, "set to fail at call " + std::to_string(fail_at)));
    CHECK_EQ(fake_cann::Calls().destroyed, fail_at);
    CHECK_EQ(fake_cann::Calls().live_tensors, int64_t{0});
    CHECK_EQ(fake_cann::Calls().phase1_calls, 0);
    CHECK(jas::ascend::ToFfiError(o).errc() == xla::ffi::ErrorCode::kInternal);
  }
}

TEST(ascend_glue, empty_output_makes_no_cann_call) {
  fake_cann::Reset();
  Buffer g(ACL_FLOAT, {3, 0}), x(ACL_FLOAT, {1}), out(ACL_FLOAT, {3, 0});
  Allocator alloc;
  const Outcome o = SiluBackward(kStream, alloc.Source(), g.op(), x.op(), out.op());
  CHECK(o.ok());
  CHECK_EQ(fake_cann::Calls().create_calls, 0);
  CHECK_EQ(fake_cann::Calls().phase1_calls, 0);
}

TEST(ascend_glue, unbroadcastable_shapes_are_refused_before_any_cann_call) {
  fake_cann::Reset();
  Buffer g(ACL_FLOAT, {3, 4}), x(ACL_FLOAT, {5}), out(ACL_FLOAT, {3, 4});
  Allocator alloc;
  const Outcome o = SiluBackward(kStream, alloc.Source(), g.op(), x.op(), out.op());
  CHECK(o.failure == Failure::kShapes);
  CHECK(Contains(o.message, "self float32[5] does not broadcast to grad_input [3,4]"));
  CHECK_EQ(fake_cann::Calls().create_calls, 0);
  CHECK(jas::ascend::ToFfiError(o).errc() == xla::ffi::ErrorCode::kInvalidArgument);
}

TEST(ascend_glue, operator_rejections_pass_through_with_its_status) {
  fake_cann::Reset();  // the fake's operator is the kernel: it rejects mixed dtypes with 161002
  Buffer g(ACL_FLOAT16, {4}), x(ACL_FLOAT, {4}), out(ACL_FLOAT, {4});
  Allocator alloc;
  const Outcome o = SiluBackward(kStream, alloc.Source(), g.op(), x.op(), out.op());
  CHECK(o.failure == Failure::kPhase1);
  CHECK_EQ(o.status, 161002);
  CHECK(Contains(o.message, "ACLNN_ERR_PARAM_INVALID (161002)"));
  CHECK(Contains(o.message, "the kernel's phase 1 returned ACLNN_ERR_PARAM_INVALID"));
  CHECK(Contains(o.message, "grad_output float16[4]"));
  CHECK_EQ(fake_cann::Calls().live_tensors, int64_t{0});
}

TEST(ascend_glue, status_labels_name_known_codes_and_classify_the_rest) {
  CHECK_EQ(jas::ascend::StatusLabel(161001), std::string("ACLNN_ERR_PARAM_NULLPTR"));
  CHECK_EQ(jas::ascend::StatusLabel(161002), std::string("ACLNN_ERR_PARAM_INVALID"));
  CHECK_EQ(jas::ascend::StatusLabel(361001), std::string("ACLNN_ERR_RUNTIME_ERROR"));
  CHECK_EQ(jas::ascend::StatusLabel(561101), std::string("ACLNN_ERR_INNER_CREATE_EXECUTOR"));
  CHECK_EQ(jas::ascend::StatusLabel(561103), std::string("ACLNN_ERR_INNER_NULLPTR"));
  CHECK_EQ(jas::ascend::StatusLabel(561000), std::string("an unnamed internal error"));
  CHECK_EQ(jas::ascend::StatusLabel(161099), std::string("an unnamed parameter error"));
  CHECK_EQ(jas::ascend::StatusLabel(42), std::string("an unknown status"));
}

// The fake itself must catch the misuses the glue is tested against.
TEST(ascend_glue, fake_refuses_null_workspace_for_nonzero_size_and_second_runs) {
  fake_cann::Mode mode;
  mode.extra_workspace = 16;
  fake_cann::Reset(mode);
  Buffer g(ACL_FLOAT, {4}), x(ACL_FLOAT, {4}), out(ACL_FLOAT, {4});
  const int64_t dims[1] = {4}, strides[1] = {1};
  aclTensor* t[3];
  Buffer* b[3] = {&g, &x, &out};
  for (int i = 0; i < 3; ++i) {
    t[i] = aclCreateTensor(dims, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 1, b[i]->bytes.data());
    REQUIRE(t[i] != nullptr);
  }
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  REQUIRE(aclnnSiluBackwardGetWorkspaceSize(t[0], t[1], t[2], &ws, &e) == 0);
  CHECK_EQ(ws, uint64_t{16});
  CHECK_EQ(aclnnSiluBackward(nullptr, ws, e, kStream), 161001);
  CHECK(Contains(aclGetRecentErrMsg(), "nullptr"));
  CHECK_EQ(aclnnSiluBackward(nullptr, ws, e, kStream), 561103);  // already consumed
  for (aclTensor* tensor : t) CHECK_EQ(aclDestroyTensor(tensor), 0);
  CHECK_EQ(aclDestroyTensor(t[0]), 161002);  // not alive any more
  CHECK_EQ(fake_cann::Calls().live_tensors, int64_t{0});
}

