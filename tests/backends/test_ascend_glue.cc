// The Ascend path against the FAKE CANN of tests/ascend_fake, opened at run
// time by the package's own loader (kernel/ascend/cann_loader.h) exactly as a real
// install is. Host memory stands in for device memory and the fake operator
// computes CANN's formula, not this package's kernel (cann_reference.h: NaN at
// x = +-inf, the plain formula's accuracy), so results are held to what a
// real Ascend returns. Checks the run-time search (installs of
// every layout, half-installed ones, unloadable files), the aclTensor views
// the glue builds on each chip (own shapes where the operator broadcasts,
// stride-0 views elsewhere), workspace sizing and allocation, executor and
// stream hand-over, the release of executors and tensors on every path, and
// the mapping of every failure to a status, a message and an ffi::Error code.
// Not a test of CANN itself.
//
// TEST(ascend_glue, ...) runs once per fake chip ($JAX_ASCEND_SILU_FAKE_CHIP,
// set by ctest); the other groups once. fake_cann::Reset() makes device 0's
// context current on the calling thread, as a PJRT plugin must.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ascend/cann_loader.h"
#include "ascend/chips.h"
#include "ascend/error.h"
#include "ascend/glue.h"
#include "cann_reference.h"
#include "common/half.h"
#include "fake_cann.h"
#include "cpu/backend.h"
#include "silu_grad.h"
#include "swiglu_grad.h"

namespace {

using fake_cann::Chip;
using jas::DataType;
using jas::ascend::Cann;
using jas::ascend::CannSearch;
using jas::ascend::Failure;
using jas::ascend::Outcome;
using jas::ascend::WorkspaceSource;
using Dims = std::vector<int64_t>;
namespace cann = jas::cann;

const cann::aclrtStream kStream = reinterpret_cast<cann::aclrtStream>(uintptr_t{0x5eed});

std::string FakeDir(const std::string& variant) { return std::string(JAS_FAKE_CANN_ROOT) + "/" + variant; }

CannSearch In(std::vector<std::string> dirs, bool loader_path = false) {
  CannSearch search;
  for (std::string& d : dirs) search.dirs.push_back({std::move(d), "test"});
  search.loader_path = loader_path;
  return search;
}

// The complete fake install, loaded once for the glue tests.
const Cann& CompleteFakeCann() {
  static const Cann cann = Cann::Load(In({FakeDir("cann9/lib64")}));
  return cann;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// CANN's functions as the loader found them, the operators' under their own
// names, for tests that call the fake CANN directly.
struct DirectApi : jas::ascend::CannApi {
  cann::aclnnSiluBackwardGetWorkspaceSizeFn* aclnnSiluBackwardGetWorkspaceSize = nullptr;
  cann::aclnnSiluBackwardFn* aclnnSiluBackward = nullptr;
  cann::aclnnSwiGluGradGetWorkspaceSizeFn* aclnnSwiGluGradGetWorkspaceSize = nullptr;
  cann::aclnnSwiGluGradFn* aclnnSwiGluGrad = nullptr;
};
DirectApi Direct(const Cann& cann) {
  DirectApi api;
  static_cast<jas::ascend::CannApi&>(api) = cann.api();
  api.aclnnSiluBackwardGetWorkspaceSize =
      cann.Phase1<cann::aclnnSiluBackwardGetWorkspaceSizeFn>(jas::ascend::kSiluBackward);
  api.aclnnSiluBackward = cann.op(jas::ascend::kSiluBackward).phase2;
  api.aclnnSwiGluGradGetWorkspaceSize = cann.Phase1<cann::aclnnSwiGluGradGetWorkspaceSizeFn>(jas::ascend::kSwiGluGrad);
  api.aclnnSwiGluGrad = cann.op(jas::ascend::kSwiGluGrad).phase2;
  return api;
}

bool NoLeaks() { return fake_cann::LiveTensors() == 0 && fake_cann::LiveExecutors() == 0; }

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
  DataType dtype;
  Dims dims;
  std::vector<char> bytes;

  Buffer(DataType t, Dims d) : dtype(t), dims(std::move(d)), bytes(Numel(dims) * ElemBytes(t)) {}
  static int64_t ElemBytes(DataType t) { return t == DataType::kFloat32 ? 4 : 2; }
  int64_t numel() const { return Numel(dims); }
  // Dense and row-major, as XLA hands buffers over.
  jas::TensorDesc op() {
    jas::TensorDesc d;
    d.dtype = dtype;
    d.rank = static_cast<int64_t>(dims.size());
    d.dims = dims.data();
    d.storage_numel = numel();
    d.data = bytes.data();
    return d;
  }

  float get(int64_t i) const {
    if (dtype == DataType::kFloat32) {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    return dtype == DataType::kFloat16 ? jas::half::F16ToFloat(h) : jas::half::BF16ToFloat(h);
  }
  void set(int64_t i, float f) {
    if (dtype == DataType::kFloat32) {
      std::memcpy(bytes.data() + 4 * i, &f, 4);
      return;
    }
    const uint16_t h = dtype == DataType::kFloat16 ? jas::half::FloatToF16(f) : jas::half::FloatToBF16(f);
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

bool Broadcasts() { return fake_cann::CurrentChip() == Chip::k950; }

// Whether `out` is CANN's formula of `g` and `x` (broadcast to out's dims)
// element by element; the first element that is not is reported.
bool MatchesCann(const Buffer& g, const Buffer& x, const Buffer& out) {
  const Buffer ge = Expand(g, out.dims), xe = Expand(x, out.dims);
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::string why;
    if (!cann_reference::Matches(out.dtype, ge.get(i), xe.get(i), out.get(i), &why)) {
      ADD_FAILURE() << "element " << i << " of " << out.numel() << ": " << why;
      return false;
    }
  }
  return true;
}

// Runs the glue on random inputs, on the chip ctest chose.
struct GlueRun {
  Buffer g, x, out;
  Allocator alloc;
  Outcome outcome;

  GlueRun(DataType t, Dims g_dims, Dims x_dims, Dims out_dims, const Cann& cann = CompleteFakeCann())
      : g(t, std::move(g_dims)), x(t, std::move(x_dims)), out(t, std::move(out_dims)) {
    g.fill(1, 2.0f);
    x.fill(2, 6.0f);
    outcome = jas::ascend::GradBackward(cann, jas::ascend::kSiluBackward, kStream, alloc.Source(), g.op(), x.op(), out.op());
  }
  bool matches_cann() const { return MatchesCann(g, x, out); }
};

// What CANN's plan asks for when `materialised` input views are made
// contiguous (each an aligned block of grad_input's size) and grad_input is
// contiguous (the kernel writes into it: no intermediate output): nothing
// more on 910A/910B, the tiling's 32 bytes on 950.
uint64_t ExpectedWorkspace(const GlueRun& r, int materialised) {
  const uint64_t copy = static_cast<uint64_t>(r.out.numel() * Buffer::ElemBytes(r.out.dtype));
  return materialised * ((copy + 511) / 512 * 512) + (Broadcasts() ? 32 : 0);
}

// Phase 1's workspace, exactly as CANN plans it, was requested once when
// non-zero (never when zero), and phase 2 got it.
void CheckWorkspaceHandedOver(const GlueRun& r, int materialised) {
  const fake_cann::Record& c = fake_cann::Calls();
  EXPECT_EQ(c.materialised, materialised);
  EXPECT_EQ(c.planned_workspace, ExpectedWorkspace(r, materialised));
  EXPECT_TRUE(!c.intermediate_output);  // grad_input is contiguous: CANN's ViewCopy has nothing to copy
  EXPECT_EQ(c.workspace_size, c.planned_workspace);
  if (c.planned_workspace == 0) {
    EXPECT_TRUE(r.alloc.requests.empty());
    EXPECT_EQ(c.workspace, nullptr);
    return;
  }
  EXPECT_EQ(r.alloc.requests, (std::vector<uint64_t>{c.planned_workspace}));
  ASSERT_TRUE(r.alloc.blocks.size() == 1);
  EXPECT_EQ(c.workspace, static_cast<void*>(r.alloc.blocks[0].get()));
}

}  // namespace

// --- the glue on each chip --------------------------------------------------------

TEST(ascend_glue, contiguous_float32_builds_plain_views_and_returns_canns_formula) {
  fake_cann::Reset();
  GlueRun r(DataType::kFloat32, {3, 4}, {3, 4}, {3, 4});
  ASSERT_TRUE(r.outcome.ok());
  const fake_cann::Record& c = fake_cann::Calls();
  ASSERT_TRUE(c.created.size() == 3);
  const void* data[3] = {r.g.bytes.data(), r.x.bytes.data(), r.out.bytes.data()};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.created[i].dims, (Dims{3, 4}));
    EXPECT_EQ(c.created[i].strides, (Dims{4, 1}));
    EXPECT_EQ(c.created[i].storage_dims, (Dims{3, 4}));
    EXPECT_EQ(c.created[i].offset, int64_t{0});
    EXPECT_EQ(c.created[i].format, cann::ACL_FORMAT_ND);
    EXPECT_EQ(c.created[i].dtype, cann::ACL_FLOAT);
    EXPECT_EQ(c.created[i].data, data[i]);
  }
  CheckWorkspaceHandedOver(r, 0);  // none on 910A/910B, the tiling's 32 bytes on 950
  EXPECT_EQ(c.phase1_device, 0);
  EXPECT_EQ(c.phase1_npu_arch, fake_cann::NpuArch(fake_cann::CurrentChip()));
  EXPECT_EQ(c.operator_library, std::string("libopapi_nn"));
  EXPECT_TRUE(r.matches_cann());
  EXPECT_TRUE(NoLeaks());
}

TEST(ascend_glue, phases_run_once_with_phase_one_executor_and_the_stream) {
  fake_cann::Reset();
  GlueRun r(DataType::kFloat32, {5}, {5}, {5});
  ASSERT_TRUE(r.outcome.ok());
  const fake_cann::Record& c = fake_cann::Calls();
  EXPECT_EQ(c.phase1_calls, 1);
  EXPECT_EQ(c.phase2_calls, 1);
  ASSERT_TRUE(c.executors_issued.size() == 1);
  ASSERT_TRUE(c.executors_run.size() == 1);
  EXPECT_EQ(c.executors_run[0], c.executors_issued[0]);
  EXPECT_TRUE(c.executors_destroyed.empty());  // phase 2 freed it
  EXPECT_EQ(c.stream, kStream);
  EXPECT_EQ(c.destroyed, 3);
  EXPECT_TRUE(NoLeaks());
}

TEST(ascend_glue, broadcast_grad_output_is_its_own_shape_on_950_else_a_stride0_view) {
  fake_cann::Reset();
  GlueRun r(DataType::kFloat32, {4}, {3, 4}, {3, 4});
  ASSERT_TRUE(r.outcome.ok());
  const fake_cann::Record& c = fake_cann::Calls();
  ASSERT_TRUE(c.created.size() == 3);
  if (Broadcasts()) {  // the operator broadcasts: nothing is copied
    EXPECT_EQ(c.created[0].dims, (Dims{4}));
    EXPECT_EQ(c.created[0].strides, (Dims{1}));
  } else {  // a stride-0 view, which CANN makes contiguous in its workspace
    EXPECT_EQ(c.created[0].dims, (Dims{3, 4}));
    EXPECT_EQ(c.created[0].strides, (Dims{0, 1}));
  }
  EXPECT_EQ(c.created[0].storage_dims, (Dims{4}));
  EXPECT_EQ(c.created[1].strides, (Dims{4, 1}));
  CheckWorkspaceHandedOver(r, Broadcasts() ? 0 : 1);
  EXPECT_TRUE(r.matches_cann());
  EXPECT_TRUE(NoLeaks());
}

TEST(ascend_glue, broadcast_self_and_both_operands) {
  fake_cann::Reset();
  GlueRun r(DataType::kFloat32, {1, 4}, {3, 1}, {3, 4});
  ASSERT_TRUE(r.outcome.ok());
  const fake_cann::Record& c = fake_cann::Calls();
  ASSERT_TRUE(c.created.size() == 3);
  if (Broadcasts()) {
    EXPECT_EQ(c.created[0].dims, (Dims{1, 4}));
    EXPECT_EQ(c.created[1].dims, (Dims{3, 1}));
    EXPECT_EQ(c.created[1].strides, (Dims{1, 1}));
  } else {
    EXPECT_EQ(c.created[0].strides, (Dims{0, 1}));
    EXPECT_EQ(c.created[1].dims, (Dims{3, 4}));
    EXPECT_EQ(c.created[1].strides, (Dims{1, 0}));
  }
  EXPECT_EQ(c.created[0].storage_dims, (Dims{1, 4}));
  EXPECT_EQ(c.created[1].storage_dims, (Dims{3, 1}));
  EXPECT_EQ(c.created[2].strides, (Dims{4, 1}));
  CheckWorkspaceHandedOver(r, Broadcasts() ? 0 : 2);
  EXPECT_TRUE(r.matches_cann());
  EXPECT_TRUE(NoLeaks());
}

TEST(ascend_glue, size_one_dims_shared_by_all_keep_their_strides) {
  fake_cann::Reset();
  GlueRun r(DataType::kFloat32, {2, 1, 3}, {1, 1, 3}, {2, 1, 3});
  ASSERT_TRUE(r.outcome.ok());
  const fake_cann::Record& c = fake_cann::Calls();
  ASSERT_TRUE(c.created.size() == 3);
  EXPECT_EQ(c.created[0].strides, (Dims{3, 3, 1}));
  EXPECT_EQ(c.created[1].strides, Broadcasts() ? (Dims{3, 3, 1}) : (Dims{0, 3, 1}));
  EXPECT_TRUE(r.matches_cann());
  EXPECT_TRUE(NoLeaks());
}

TEST(ascend_glue, scalar_output_becomes_a_one_element_vector) {
  fake_cann::Reset();
  GlueRun r(DataType::kFloat32, {}, {}, {});
  ASSERT_TRUE(r.outcome.ok());
  const fake_cann::Record& c = fake_cann::Calls();
  ASSERT_TRUE(c.created.size() == 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.created[i].dims, (Dims{1}));
    EXPECT_EQ(c.created[i].strides, (Dims{1}));
    EXPECT_EQ(c.created[i].storage_dims, (Dims{1}));
  }
  EXPECT_TRUE(r.matches_cann());
  EXPECT_TRUE(NoLeaks());
}

TEST(ascend_glue, scalar_grad_output_broadcasts_from_one_element) {
  fake_cann::Reset();
  GlueRun r(DataType::kFloat32, {}, {2, 3}, {2, 3});
  ASSERT_TRUE(r.outcome.ok());
  const fake_cann::Record& c = fake_cann::Calls();
  ASSERT_TRUE(c.created.size() == 3);
  EXPECT_EQ(c.created[0].dims, Broadcasts() ? (Dims{1}) : (Dims{2, 3}));
  EXPECT_EQ(c.created[0].strides, Broadcasts() ? (Dims{1}) : (Dims{0, 0}));
  EXPECT_EQ(c.created[0].storage_dims, (Dims{1}));
  EXPECT_TRUE(r.matches_cann());
  EXPECT_TRUE(NoLeaks());
}

TEST(ascend_glue, float16_maps_to_acl_float16_and_returns_canns_formula) {
  fake_cann::Reset();
  GlueRun r(DataType::kFloat16, {2, 1, 5}, {3, 5}, {2, 3, 5});
  ASSERT_TRUE(r.outcome.ok());
  for (const auto& rec : fake_cann::Calls().created) EXPECT_EQ(rec.dtype, cann::ACL_FLOAT16);
  EXPECT_TRUE(r.matches_cann());
  EXPECT_TRUE(NoLeaks());
}

TEST(ascend_glue, bfloat16_runs_except_on_910A_which_refuses_it_naming_the_chip_and_its_dtypes) {
  fake_cann::Reset();
  GlueRun r(DataType::kBFloat16, {2, 1, 5}, {3, 5}, {2, 3, 5});
  if (fake_cann::CurrentChip() == Chip::k910A) {
    EXPECT_TRUE(r.outcome.failure == Failure::kPhase1);
    EXPECT_EQ(r.outcome.status, 161002);
    EXPECT_TRUE(Contains(r.outcome.message, "fake CANN: bfloat16 operands refused"));  // CANN's own message kept
    EXPECT_TRUE(Contains(r.outcome.message, "bfloat16 is not supported on Ascend910A, an Atlas training series chip "
                                            "(from its NpuArch 1001 of device 0): it takes float32, float16;"))
        << r.outcome.message;
    std::printf("the bfloat16 refusal on 910A: %s\n", r.outcome.message.c_str());
    EXPECT_TRUE(jas::ascend::ToFfiError(r.outcome).errc() == xla::ffi::ErrorCode::kInvalidArgument);
    EXPECT_EQ(fake_cann::Calls().phase2_calls, 0);
  } else {
    ASSERT_TRUE(r.outcome.ok());
    for (const auto& rec : fake_cann::Calls().created) EXPECT_EQ(rec.dtype, cann::ACL_BF16);
    EXPECT_TRUE(r.matches_cann());
  }
  EXPECT_TRUE(NoLeaks());
}

// What a real Ascend returns where this package's kernel and CANN's formula
// part: at x = +-inf the formula takes 0*inf (NaN), where the CPU kernel
// returns the limits dy and 0. Elsewhere both are the derivative.
TEST(ascend_glue, infinite_self_gives_nan_as_canns_formula_does_where_the_cpu_kernel_gives_the_limits) {
  // 1e30 (infinite in float16) is where the documented form sigma*(1 + x - x*sigma) would give 0.
  const float xs[] = {INFINITY, -INFINITY, NAN, 0.0f, -0.0f, -1.2784646f, 4.0f, -4.0f, 20.0f, -20.0f, 60000.0f,
                      -60000.0f, 1e30f, -1e30f};
  const int64_t n = static_cast<int64_t>(std::size(xs));
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    if (t == DataType::kBFloat16 && fake_cann::CurrentChip() == Chip::k910A) continue;  // refused (above)
    fake_cann::Reset();
    Buffer g(t, {n}), x(t, {n}), out(t, {n}), cpu(t, {n});
    for (int64_t i = 0; i < n; ++i) {
      g.set(i, 1.5f);
      x.set(i, xs[i]);
    }
    Allocator alloc;
    const Outcome o = jas::ascend::GradBackward(CompleteFakeCann(), jas::ascend::kSiluBackward, kStream, alloc.Source(), g.op(), x.op(), out.op());
    ASSERT_TRUE(o.ok()) << jas::DtypeName(t) << ": " << o.message;
    EXPECT_TRUE(MatchesCann(g, x, out)) << jas::DtypeName(t);
    EXPECT_TRUE(std::isnan(out.get(0)) && std::isnan(out.get(1)) && std::isnan(out.get(2)))
        << jas::DtypeName(t) << ": " << out.get(0) << " " << out.get(1) << " " << out.get(2);
    EXPECT_EQ(out.get(3), 0.75f) << jas::DtypeName(t);  // dy * s'(0) = 1.5 * 1/2, exact in every dtype
    // The CPU kernel on the same operands: the limits at +-inf.
    const jas::TensorDesc dg = g.op(), dx = x.op(), dout = cpu.op();
    uint64_t ws = 0;
    jas::CpuExecutor* e = nullptr;
    ASSERT_EQ(jas::SiluGradGetWorkspaceSize(&dg, &dx, &dout, &ws, &e), jas::kSuccess);
    std::vector<char> workspace(ws);
    ASSERT_EQ(jas::CpuRun(ws ? workspace.data() : nullptr, ws, e, nullptr), jas::kSuccess);
    EXPECT_EQ(cpu.get(0), 1.5f) << jas::DtypeName(t);
    EXPECT_EQ(cpu.get(1), 0.0f) << jas::DtypeName(t);
    EXPECT_TRUE(std::isnan(cpu.get(2))) << jas::DtypeName(t);
    EXPECT_TRUE(NoLeaks());
  }
}

TEST(ascend_glue, rank_eight_passes_through) {
  fake_cann::Reset();
  GlueRun r(DataType::kFloat32, {2, 1, 2, 1, 2, 1, 2, 3}, {1, 3, 1, 2, 1, 2, 1, 3}, {2, 3, 2, 2, 2, 2, 2, 3});
  ASSERT_TRUE(r.outcome.ok());
  ASSERT_TRUE(fake_cann::Calls().created.size() == 3);
  EXPECT_EQ(fake_cann::Calls().created[2].dims.size(), size_t{8});
  EXPECT_TRUE(r.matches_cann());
  EXPECT_TRUE(NoLeaks());
}

TEST(ascend_glue, failed_workspace_allocation_releases_the_executor) {
  fake_cann::Reset();  // a broadcast: a copy on 910A/910B, the tiling's bytes on 950
  Buffer g(DataType::kFloat32, {8}), x(DataType::kFloat32, {2, 8}), out(DataType::kFloat32, {2, 8});
  Allocator alloc;
  alloc.fail = true;
  const Outcome o = jas::ascend::GradBackward(CompleteFakeCann(), jas::ascend::kSiluBackward, kStream, alloc.Source(), g.op(), x.op(), out.op());
  const fake_cann::Record& c = fake_cann::Calls();
  EXPECT_TRUE(o.failure == Failure::kWorkspace);
  EXPECT_TRUE(Contains(o.message, std::to_string(c.planned_workspace) + " bytes"));
  EXPECT_TRUE(Contains(o.message, "released with aclDestroyAclOpExecutor"));
  EXPECT_TRUE(c.planned_workspace > 0);
  EXPECT_EQ(alloc.requests, (std::vector<uint64_t>{c.planned_workspace}));
  EXPECT_EQ(c.phase2_calls, 0);
  EXPECT_EQ(c.executors_destroyed, c.executors_issued);
  EXPECT_TRUE(NoLeaks());
  EXPECT_TRUE(jas::ascend::ToFfiError(o).errc() == xla::ffi::ErrorCode::kResourceExhausted);
}

TEST(ascend_glue, a_missing_allocator_is_a_failed_allocation_not_a_null_workspace) {
  fake_cann::Reset();
  Buffer g(DataType::kFloat32, {8}), x(DataType::kFloat32, {2, 8}), out(DataType::kFloat32, {2, 8});
  const Outcome o = jas::ascend::GradBackward(CompleteFakeCann(), jas::ascend::kSiluBackward, kStream, WorkspaceSource{}, g.op(), x.op(), out.op());
  EXPECT_TRUE(o.failure == Failure::kWorkspace);
  EXPECT_EQ(fake_cann::Calls().phase2_calls, 0);
  EXPECT_EQ(fake_cann::Calls().executors_destroyed.size(), size_t{1});
  EXPECT_TRUE(NoLeaks());
}

namespace {

const cann::aclnnStatus kStatuses[] = {161001, 161002, 361001, 561000, 561101, 561103};

void CheckStatusMapping(bool phase1) {
  for (cann::aclnnStatus status : kStatuses) {
    fake_cann::Faults faults;
    (phase1 ? faults.phase1_status : faults.phase2_status) = status;
    fake_cann::Reset(faults);
    Buffer g(DataType::kFloat32, {2, 3}), x(DataType::kFloat32, {2, 3}), out(DataType::kFloat32, {2, 3});
    Allocator alloc;
    const Outcome o = jas::ascend::GradBackward(CompleteFakeCann(), jas::ascend::kSiluBackward, kStream, alloc.Source(), g.op(), x.op(), out.op());
    EXPECT_TRUE(o.failure == (phase1 ? Failure::kPhase1 : Failure::kPhase2));
    EXPECT_EQ(o.status, status);
    const char* call = phase1 ? "aclnnSiluBackwardGetWorkspaceSize failed" : "aclnnSiluBackward failed";
    EXPECT_TRUE(Contains(o.message, call));
    EXPECT_TRUE(Contains(o.message, "(" + std::to_string(status) + ")"));
    EXPECT_TRUE(Contains(o.message, jas::ascend::StatusLabel(status)));
    EXPECT_TRUE(Contains(o.message, "fake CANN: "));  // aclGetRecentErrMsg() is carried over
    EXPECT_TRUE(Contains(o.message, "self float32[2,3] as [2,3] strides [3,1]"));
    EXPECT_EQ(fake_cann::Calls().phase2_calls, phase1 ? 0 : 1);
    EXPECT_TRUE(fake_cann::Calls().executors_destroyed.empty());  // phase 2 frees its executor, failed or not
    EXPECT_TRUE(NoLeaks());
    const xla::ffi::Error e = jas::ascend::ToFfiError(o);
    EXPECT_TRUE(e.failure());
    EXPECT_TRUE(e.errc() == (status / 1000 == 161 ? xla::ffi::ErrorCode::kInvalidArgument
                                                  : xla::ffi::ErrorCode::kInternal));
    EXPECT_EQ(e.message(), o.message);
  }
}

}  // namespace

TEST(ascend_glue, each_phase_one_status_becomes_an_error_with_code_and_cann_message) { CheckStatusMapping(true); }

TEST(ascend_glue, each_phase_two_status_becomes_an_error_with_code_and_cann_message) { CheckStatusMapping(false); }

TEST(ascend_glue, failed_tensor_creation_destroys_the_tensors_already_made) {
  for (int fail_at = 0; fail_at < 3; ++fail_at) {
    fake_cann::Faults faults;
    faults.fail_create_tensor_call = fail_at;
    fake_cann::Reset(faults);
    Buffer g(DataType::kFloat32, {4}), x(DataType::kFloat32, {4}), out(DataType::kFloat32, {4});
    Allocator alloc;
    const Outcome o = jas::ascend::GradBackward(CompleteFakeCann(), jas::ascend::kSiluBackward, kStream, alloc.Source(), g.op(), x.op(), out.op());
    EXPECT_TRUE(o.failure == Failure::kCreateTensor);
    EXPECT_TRUE(Contains(o.message, "aclCreateTensor returned null for"));
    EXPECT_TRUE(Contains(o.message, "set to fail at call " + std::to_string(fail_at)));
    EXPECT_EQ(fake_cann::Calls().destroyed, fail_at);
    EXPECT_EQ(fake_cann::Calls().phase1_calls, 0);
    EXPECT_TRUE(NoLeaks());
    EXPECT_TRUE(jas::ascend::ToFfiError(o).errc() == xla::ffi::ErrorCode::kInternal);
  }
}

TEST(ascend_glue, empty_output_makes_no_cann_call) {
  fake_cann::Reset();
  Buffer g(DataType::kFloat32, {3, 0}), x(DataType::kFloat32, {1}), out(DataType::kFloat32, {3, 0});
  Allocator alloc;
  const Outcome o = jas::ascend::GradBackward(CompleteFakeCann(), jas::ascend::kSiluBackward, kStream, alloc.Source(), g.op(), x.op(), out.op());
  EXPECT_TRUE(o.ok());
  EXPECT_EQ(fake_cann::Calls().create_calls, 0);
  EXPECT_EQ(fake_cann::Calls().phase1_calls, 0);
  EXPECT_TRUE(alloc.requests.empty());
}

// The glue checks operands as every backend does (common/validate.h): the CPU
// kernel's phase 1 refuses the same operands with the same status, and the
// message names each operand's dtype and shape and what to do.
TEST(ascend_glue, refused_operands_get_the_cpu_kernels_status_before_any_cann_call) {
  const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 2}, negative[1] = {-1};
  struct Case {
    const char* what;
    DataType g_type, x_type;
    Dims g, x, out;
    jas::Status status;
    const char* says;
  } cases[] = {
      {"unbroadcastable self", DataType::kFloat32, DataType::kFloat32, {3, 4}, {5}, {3, 4}, 161002,
       "self float32[5] does not broadcast to grad_input [3,4]: grad_input must have the broadcast shape"},
      {"grad_input larger than the broadcast", DataType::kFloat32, DataType::kFloat32, {4}, {4}, {3, 4}, 161002,
       "grad_input [3,4] is not [4], the broadcast shape of grad_output and self: give it that shape"},
      {"mixed dtypes", DataType::kFloat16, DataType::kFloat32, {4}, {4}, {4}, 161002,
       "must share one dtype, one of float32, float16, bfloat16: cast them to it; got grad_output float16[4]"},
      {"a negative dim", DataType::kFloat32, DataType::kFloat32, {1}, {1}, {1}, 161002,
       "grad_output float32[-1] has a negative dim"},
      {"rank nine", DataType::kFloat32, DataType::kFloat32, {2}, {2}, {2}, 161002,
       "grad_output float32[1,1,1,1,1,1,1,1,2] has 9 dimensions, more than the 8 SiluGrad takes: reshape it"},
      {"storage too small", DataType::kFloat32, DataType::kFloat32, {2}, {2}, {2}, 161002,
       "grad_input float32[2] is a view past its storage (storage_numel 1): pass a view inside its buffer"},
      {"overlapping grad_input", DataType::kFloat32, DataType::kFloat32, {2, 2}, {2, 2}, {2, 2}, 161002,
       "grad_input float32[2,2] has elements that overlap"},
      {"a negative stride", DataType::kFloat32, DataType::kFloat32, {2}, {2}, {2}, 161002,
       "self float32[2] has a negative stride, offset or storage size"},
      {"null dims", DataType::kFloat32, DataType::kFloat32, {2}, {2}, {2}, 161001,
       "self float32 of rank 1 without dims has no valid dims"},
  };
  for (const Case& c : cases) {
    fake_cann::Reset();
    Buffer g(c.g_type, c.g), x(c.x_type, c.x), out(DataType::kFloat32, c.out);
    jas::TensorDesc dg = g.op(), dx = x.op(), dout = out.op();
    if (std::string(c.what) == "a negative dim") dg.dims = negative;
    if (std::string(c.what) == "rank nine") dg.rank = 9, dg.dims = nine;
    if (std::string(c.what) == "null dims") dx.dims = nullptr;
    if (std::string(c.what) == "storage too small") dout.storage_numel = 1;
    const int64_t overlapping[2] = {1, 1}, backwards[1] = {-1};
    if (std::string(c.what) == "overlapping grad_input") dout.strides = overlapping;
    if (std::string(c.what) == "a negative stride") dx.strides = backwards;
    uint64_t ws = 0;
    jas::CpuExecutor* e = nullptr;
    EXPECT_EQ(jas::SiluGradGetWorkspaceSize(&dg, &dx, &dout, &ws, &e), c.status) << c.what;
    Allocator alloc;
    const Outcome o = jas::ascend::GradBackward(CompleteFakeCann(), jas::ascend::kSiluBackward, kStream, alloc.Source(), dg, dx, dout);
    EXPECT_TRUE(o.failure == Failure::kOperands) << c.what;
    EXPECT_EQ(o.status, c.status) << c.what;
    EXPECT_TRUE(Contains(o.message, "refused its operands with " + jas::ascend::StatusLabel(c.status) + " (" +
                                        std::to_string(c.status) + ") before any CANN call"))
        << o.message;
    EXPECT_TRUE(Contains(o.message, c.says)) << o.message;
    EXPECT_TRUE(Contains(o.message, "grad_input float32[")) << o.message;
    EXPECT_EQ(fake_cann::Calls().create_calls, 0) << c.what;
    EXPECT_EQ(fake_cann::Calls().phase1_calls, 0) << c.what;
    EXPECT_TRUE(jas::ascend::ToFfiError(o).errc() == xla::ffi::ErrorCode::kInvalidArgument) << c.what;
  }
}

// A descriptor with strides and an offset (XLA's buffers are dense, the
// contract's descriptors need not be) reaches CANN with the checked layout:
// its strides and offset, over its flat storage.
TEST(ascend_glue, a_strided_self_keeps_its_strides_and_offset_over_its_flat_storage) {
  fake_cann::Reset();
  Buffer g(DataType::kFloat32, {2, 3}), storage(DataType::kFloat32, {7}), out(DataType::kFloat32, {2, 3});
  g.fill(1, 2.0f);
  storage.fill(2, 6.0f);
  Buffer x(DataType::kFloat32, {3});  // self = storage[1], storage[3], storage[5]
  for (int64_t i = 0; i < 3; ++i) x.set(i, storage.get(1 + 2 * i));
  const int64_t stride[1] = {2};
  jas::TensorDesc dx = storage.op();
  dx.rank = 1;
  dx.dims = x.dims.data();
  dx.strides = stride;
  dx.offset = 1;
  Allocator alloc;
  const Outcome o = jas::ascend::GradBackward(CompleteFakeCann(), jas::ascend::kSiluBackward, kStream, alloc.Source(), g.op(), dx, out.op());
  ASSERT_TRUE(o.ok()) << o.message;
  const fake_cann::Record& c = fake_cann::Calls();
  ASSERT_TRUE(c.created.size() == 3);
  EXPECT_EQ(c.created[1].dims, Broadcasts() ? (Dims{3}) : (Dims{2, 3}));
  EXPECT_EQ(c.created[1].strides, Broadcasts() ? (Dims{2}) : (Dims{0, 2}));
  EXPECT_EQ(c.created[1].offset, int64_t{1});
  EXPECT_EQ(c.created[1].storage_dims, (Dims{7}));
  EXPECT_EQ(c.created[0].storage_dims, (Dims{2, 3}));
  EXPECT_TRUE(MatchesCann(g, x, out));
  EXPECT_TRUE(NoLeaks());
}

// The fake itself must behave as the operator is written, or the glue tests prove nothing.
TEST(ascend_glue, fake_broadcasts_only_on_950_and_refuses_unequal_shapes_elsewhere) {
  fake_cann::Reset();
  const DirectApi api = Direct(CompleteFakeCann());
  Buffer g(DataType::kFloat32, {4}), x(DataType::kFloat32, {3, 4}), out(DataType::kFloat32, {3, 4});
  const int64_t d1[1] = {4}, s1[1] = {1}, d2[2] = {3, 4}, s2[2] = {4, 1};
  cann::aclTensor* t[3] = {
      api.aclCreateTensor(d1, 1, cann::ACL_FLOAT, s1, 0, cann::ACL_FORMAT_ND, d1, 1, g.bytes.data()),
      api.aclCreateTensor(d2, 2, cann::ACL_FLOAT, s2, 0, cann::ACL_FORMAT_ND, d2, 2, x.bytes.data()),
      api.aclCreateTensor(d2, 2, cann::ACL_FLOAT, s2, 0, cann::ACL_FORMAT_ND, d2, 2, out.bytes.data())};
  uint64_t ws = 0;
  cann::aclOpExecutor* e = nullptr;
  const cann::aclnnStatus s = api.aclnnSiluBackwardGetWorkspaceSize(t[0], t[1], t[2], &ws, &e);
  if (Broadcasts()) {
    EXPECT_EQ(s, 0);
    EXPECT_TRUE(e != nullptr);
    EXPECT_EQ(api.aclDestroyAclOpExecutor(e), 0);
  } else {
    EXPECT_EQ(s, 161002);
    EXPECT_TRUE(Contains(api.aclGetRecentErrMsg(), "must have gradInput's shape"));
  }
  for (cann::aclTensor* tensor : t) EXPECT_EQ(api.aclDestroyTensor(tensor), 0);
  EXPECT_TRUE(NoLeaks());
}

TEST(ascend_glue, fake_refuses_null_workspace_for_nonzero_size_and_second_runs) {
  fake_cann::Reset();
  const DirectApi api = Direct(CompleteFakeCann());
  Buffer g(DataType::kFloat32, {1}), x(DataType::kFloat32, {4}), out(DataType::kFloat32, {4});
  const int64_t dims[1] = {4}, strides[1] = {1}, stride0[1] = {0}, one[1] = {1};
  cann::aclTensor* t[3];
  Buffer* b[3] = {&g, &x, &out};
  for (int i = 0; i < 3; ++i) {  // grad_output a stride-0 view, which CANN makes contiguous in its workspace
    t[i] = api.aclCreateTensor(dims, 1, cann::ACL_FLOAT, i == 0 ? stride0 : strides, 0, cann::ACL_FORMAT_ND,
                               i == 0 ? one : dims, 1, b[i]->bytes.data());
    ASSERT_TRUE(t[i] != nullptr);
  }
  uint64_t ws = 0;
  cann::aclOpExecutor* e = nullptr;
  const cann::aclnnStatus planned = api.aclnnSiluBackwardGetWorkspaceSize(t[0], t[1], t[2], &ws, &e);
  ASSERT_TRUE(planned == 0);
  EXPECT_TRUE(ws > 0);
  EXPECT_EQ(api.aclnnSiluBackward(nullptr, ws, e, kStream), 161001);
  EXPECT_TRUE(Contains(api.aclGetRecentErrMsg(), "nullptr"));
  EXPECT_EQ(fake_cann::LiveExecutors(), int64_t{0});                  // freed by the failed phase 2
  EXPECT_EQ(api.aclnnSiluBackward(nullptr, ws, e, kStream), 561103);  // already consumed
  EXPECT_TRUE(api.aclDestroyAclOpExecutor(e) != 0);                   // and not destroyable twice
  for (cann::aclTensor* tensor : t) EXPECT_EQ(api.aclDestroyTensor(tensor), 0);
  EXPECT_EQ(api.aclDestroyTensor(t[0]), 161002);  // not alive any more
  EXPECT_EQ(api.aclDestroyTensor(nullptr), 0);     // as opbase's: nothing to destroy
  EXPECT_TRUE(NoLeaks());
}

namespace {

// Phase 1 and 2 straight on the fake, with tensors `t` (destroyed here).
struct DirectRun {
  cann::aclnnStatus phase1 = -1, phase2 = -1;
  uint64_t workspace = 0;
};
DirectRun RunDirect(const DirectApi& api, cann::aclTensor* const t[3]) {
  DirectRun r;
  cann::aclOpExecutor* e = nullptr;
  r.phase1 = api.aclnnSiluBackwardGetWorkspaceSize(t[0], t[1], t[2], &r.workspace, &e);
  if (r.phase1 == 0) {
    std::vector<char> ws(r.workspace);
    r.phase2 = api.aclnnSiluBackward(r.workspace ? ws.data() : nullptr, r.workspace, e, kStream);
  }
  for (int i = 0; i < 3; ++i) api.aclDestroyTensor(t[i]);
  return r;
}

}  // namespace

TEST(ascend_glue, fake_without_a_current_context_fails_as_cann_does) {
  fake_cann::Faults none;
  none.device = -1;
  fake_cann::Reset(none);
  const DirectApi api = Direct(CompleteFakeCann());
  cann::aclrtContext context = nullptr;
  int32_t device = 7;
  EXPECT_EQ(api.aclrtGetCurrentContext(&context), cann::kAclErrorRtContextNull);
  EXPECT_EQ(context, nullptr);
  EXPECT_EQ(api.aclrtGetDevice(&device), cann::kAclErrorRtContextNull);
  EXPECT_EQ(device, 7);
  EXPECT_EQ(api.aclrtGetSocName(), nullptr);  // no current device to name
  // Phase 1 sees an unknown chip: bfloat16 refused and no broadcasting, whatever the chip.
  Buffer g(DataType::kBFloat16, {4}), x(DataType::kBFloat16, {4}), out(DataType::kBFloat16, {4});
  const int64_t d1[1] = {4}, s1[1] = {1};
  cann::aclTensor* bf[3];
  Buffer* b[3] = {&g, &x, &out};
  for (int i = 0; i < 3; ++i) {
    bf[i] = api.aclCreateTensor(d1, 1, cann::ACL_BF16, s1, 0, cann::ACL_FORMAT_ND, d1, 1, b[i]->bytes.data());
  }
  EXPECT_EQ(RunDirect(api, bf).phase1, 161002);
  EXPECT_TRUE(Contains(api.aclGetRecentErrMsg(), "no current device (NpuArch unknown)"));
  EXPECT_EQ(fake_cann::Calls().phase1_npu_arch, int64_t{0});
  Buffer g4(DataType::kFloat32, {4}), x34(DataType::kFloat32, {3, 4}), o34(DataType::kFloat32, {3, 4});
  const int64_t d2[2] = {3, 4}, s2[2] = {4, 1};
  cann::aclTensor* shapes[3] = {
      api.aclCreateTensor(d1, 1, cann::ACL_FLOAT, s1, 0, cann::ACL_FORMAT_ND, d1, 1, g4.bytes.data()),
      api.aclCreateTensor(d2, 2, cann::ACL_FLOAT, s2, 0, cann::ACL_FORMAT_ND, d2, 2, x34.bytes.data()),
      api.aclCreateTensor(d2, 2, cann::ACL_FLOAT, s2, 0, cann::ACL_FORMAT_ND, d2, 2, o34.bytes.data())};
  EXPECT_EQ(RunDirect(api, shapes).phase1, 161002);  // even on 950
  EXPECT_TRUE(Contains(api.aclGetRecentErrMsg(), "must have gradInput's shape"));
  // Once a device is current, the runtime names its chip.
  EXPECT_EQ(api.aclrtGetCurrentContext(nullptr), cann::kAclErrorInvalidParam);
  fake_cann::SetCurrentDevice(0);
  ASSERT_TRUE(api.aclrtGetSocName() != nullptr);
  EXPECT_EQ(std::string(api.aclrtGetSocName()), std::string(fake_cann::SocName(fake_cann::CurrentChip())));
  EXPECT_EQ(api.aclrtGetCurrentContext(&context), 0);
  EXPECT_TRUE(context != nullptr);
  EXPECT_TRUE(NoLeaks());
}

TEST(ascend_glue, fake_computes_into_a_contiguous_result_and_copies_only_into_a_strided_one) {
  const DirectApi api = Direct(CompleteFakeCann());
  for (bool strided : {false, true}) {
    fake_cann::Reset();
    Buffer g(DataType::kFloat32, {3}), x(DataType::kFloat32, {3}), out(DataType::kFloat32, {6});
    g.fill(3, 2.0f);
    x.fill(4, 4.0f);
    for (int64_t i = 0; i < 6; ++i) out.set(i, -7.0f);
    const int64_t d[1] = {3}, s1[1] = {1}, s2[1] = {2}, storage[1] = {6};
    cann::aclTensor* t[3] = {
        api.aclCreateTensor(d, 1, cann::ACL_FLOAT, s1, 0, cann::ACL_FORMAT_ND, d, 1, g.bytes.data()),
        api.aclCreateTensor(d, 1, cann::ACL_FLOAT, s1, 0, cann::ACL_FORMAT_ND, d, 1, x.bytes.data()),
        api.aclCreateTensor(d, 1, cann::ACL_FLOAT, strided ? s2 : s1, 0, cann::ACL_FORMAT_ND,
                            strided ? storage : d, 1, out.bytes.data())};
    const DirectRun r = RunDirect(api, t);
    ASSERT_EQ(r.phase1, 0);
    EXPECT_EQ(r.phase2, 0);
    EXPECT_EQ(fake_cann::Calls().intermediate_output, strided);
    // contiguous: nothing but the 950 tiling's bytes; strided: an intermediate output of 3 floats, aligned
    EXPECT_EQ(r.workspace, uint64_t{strided ? 512u : 0u} + (Broadcasts() ? 32 : 0));
    for (int64_t i = 0; i < 3; ++i) {
      std::string why;
      EXPECT_TRUE(cann_reference::Matches(DataType::kFloat32, g.get(i), x.get(i), out.get(strided ? 2 * i : i), &why))
          << why;
      if (strided) EXPECT_EQ(out.get(2 * i + 1), -7.0f);  // the gaps untouched
    }
    EXPECT_TRUE(NoLeaks());
  }
}

TEST(ascend_glue, no_current_context_fails_before_any_operator_call_naming_the_requirement) {
  fake_cann::Faults none;
  none.device = -1;
  fake_cann::Reset(none);
  GlueRun r(DataType::kFloat32, {4}, {3, 4}, {3, 4});
  EXPECT_TRUE(r.outcome.failure == Failure::kNoContext);
  EXPECT_EQ(r.outcome.status, cann::kAclErrorRtContextNull);
  for (const char* part : {"SiluGrad on Ascend needs a current ACL context on the thread that runs the XLA handler",
                           "an Ascend PJRT plugin must make the device's context current",
                           "aclrtGetCurrentContext returned 107002 (ACL_ERROR_RT_CONTEXT_NULL: none is current)"}) {
    EXPECT_TRUE(Contains(r.outcome.message, part)) << r.outcome.message;
  }
  EXPECT_EQ(fake_cann::Calls().create_calls, 0);
  EXPECT_EQ(fake_cann::Calls().phase1_calls, 0);
  EXPECT_TRUE(r.alloc.requests.empty());
  const xla::ffi::Error e = jas::ascend::ToFfiError(r.outcome);
  EXPECT_TRUE(e.errc() == xla::ffi::ErrorCode::kFailedPrecondition);
  EXPECT_EQ(e.message(), r.outcome.message);
  std::printf("the error for a missing context: %s\n", r.outcome.message.c_str());
}

TEST(ascend_glue, a_context_current_on_another_thread_does_not_count) {
  fake_cann::Reset();  // current here, on the test's thread
  Outcome there;
  std::thread worker([&] {
    Buffer g(DataType::kFloat32, {4}), x(DataType::kFloat32, {4}), out(DataType::kFloat32, {4});
    Allocator alloc;
    there = jas::ascend::GradBackward(CompleteFakeCann(), jas::ascend::kSiluBackward, kStream, alloc.Source(), g.op(), x.op(), out.op());
  });
  worker.join();
  EXPECT_TRUE(there.failure == Failure::kNoContext);
  EXPECT_EQ(fake_cann::Calls().phase1_calls, 0);
  GlueRun here(DataType::kFloat32, {4}, {4}, {4});
  EXPECT_TRUE(here.outcome.ok()) << here.outcome.message;
}

// --- errors, independent of the chip ----------------------------------------------

TEST(ascend_errors, status_labels_name_known_codes_and_classify_the_rest) {
  EXPECT_EQ(jas::ascend::StatusLabel(161001), std::string("ACLNN_ERR_PARAM_NULLPTR"));
  EXPECT_EQ(jas::ascend::StatusLabel(161002), std::string("ACLNN_ERR_PARAM_INVALID"));
  EXPECT_EQ(jas::ascend::StatusLabel(361001), std::string("ACLNN_ERR_RUNTIME_ERROR"));
  EXPECT_EQ(jas::ascend::StatusLabel(561101), std::string("ACLNN_ERR_INNER_CREATE_EXECUTOR"));
  EXPECT_EQ(jas::ascend::StatusLabel(561103), std::string("ACLNN_ERR_INNER_NULLPTR"));
  EXPECT_EQ(jas::ascend::StatusLabel(561000), std::string("an unnamed internal error"));
  EXPECT_EQ(jas::ascend::StatusLabel(161099), std::string("an unnamed parameter error"));
  EXPECT_EQ(jas::ascend::StatusLabel(42), std::string("an unknown status"));
}

TEST(ascend_errors, soc_names_map_to_the_npu_arch_of_cann_platform_configs) {
  // SoC_version -> NpuArch as CANN's runtime src/platform/platform_config/*.ini list them.
  const std::pair<const char*, int64_t> names[] = {
      {"Ascend950PR_9589", 3510}, {"Ascend950DT_9582", 3510}, {"Ascend950DT_95A2", 3510},
      {"Ascend350_354f", 3510},   {"Ascend910_9589", 3510},   {"Ascend910_950x", 3510},  // CANN 8.5's 950 names
      {"Ascend910B1", 2201},      {"Ascend910B2C", 2201},     {"Ascend910B3", 2201},
      {"Ascend910B4-1", 2201},    {"Ascend910_9391", 2201},   {"Ascend910_9362", 2201},
      {"Ascend910A", 1001},       {"Ascend910B", 1001},       {"Ascend910ProB", 1001},
      {"Ascend910PremiumA", 1001}, {"Ascend310P3", 2002},     {"Ascend310B1", 3002},
      {"Ascend031", 0},           {"KirinX90", 0},            {nullptr, 0},
  };
  for (const auto& [name, arch] : names) {
    EXPECT_EQ(jas::ascend::NpuArchOfSocName(name), arch) << (name ? name : "null");
  }
}

TEST(ascend_errors, chip_classes_broadcast_only_on_3510_and_take_bfloat16_on_2201_and_3510) {
  for (int64_t arch : {0, 1001, 2002, 2201, 3002, 3510, 9999}) {
    const jas::ascend::ChipClass& c = jas::ascend::ClassOfNpuArch(arch);
    EXPECT_EQ(c.broadcasts, arch == 3510) << arch;
    // An unknown class is not refused bfloat16 here: CANN decides.
    EXPECT_EQ(c.bfloat16, arch == 2201 || arch == 3510 || arch == 0 || arch == 9999) << arch;
    EXPECT_EQ(c.npu_arch, arch == 9999 ? 0 : arch);
  }
  EXPECT_EQ(jas::ascend::DtypesTaken(jas::ascend::ClassOfNpuArch(1001)), std::string("float32, float16"));
  EXPECT_EQ(jas::ascend::DtypesTaken(jas::ascend::ClassOfNpuArch(2201)), std::string("float32, float16, bfloat16"));
}

// --- the chip of the current device (two fake devices of different chips) ---------

namespace {

// Sets $JAX_ASCEND_SILU_FAKE_CHIP for one test.
struct Devices {
  std::string saved;
  bool had;
  explicit Devices(const char* chips) {
    const char* v = std::getenv("JAX_ASCEND_SILU_FAKE_CHIP");
    had = v != nullptr;
    if (had) saved = v;
    setenv("JAX_ASCEND_SILU_FAKE_CHIP", chips, 1);
  }
  ~Devices() {
    if (had) {
      setenv("JAX_ASCEND_SILU_FAKE_CHIP", saved.c_str(), 1);
    } else {
      unsetenv("JAX_ASCEND_SILU_FAKE_CHIP");
    }
  }
};

}  // namespace

TEST(ascend_devices, the_chip_class_is_the_current_devices) {
  Devices devices("910A,950");
  for (const char* variant : {"cann9/lib64", "cann85/lib64"}) {  // NpuArch from aclrtGetDeviceInfo; SoC name
    const Cann cann = Cann::Load(In({FakeDir(variant)}));
    ASSERT_TRUE(cann.ok()) << cann.problem();
    const bool by_arch = std::string(variant) == "cann9/lib64";
    for (int device : {0, 1}) {
      fake_cann::Faults f;
      f.device = device;
      fake_cann::Reset(f);
      jas::ascend::CurrentChip chip;
      ASSERT_TRUE(jas::ascend::CheckContext(cann.api(), &chip).ok());
      EXPECT_EQ(chip.device, device);
      EXPECT_EQ(chip.chip->npu_arch, device == 0 ? 1001 : 3510);
      EXPECT_EQ(chip.source, by_arch ? (device == 0 ? "NpuArch 1001 of device 0" : "NpuArch 3510 of device 1")
                                     : (device == 0 ? "SoC name Ascend910A (NpuArch 1001)"
                                                    : "SoC name Ascend910_9589 (NpuArch 3510)"));
      GlueRun r(DataType::kFloat32, {4}, {3, 4}, {3, 4}, cann);
      ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
      EXPECT_EQ(fake_cann::Calls().phase1_device, device);
      EXPECT_EQ(fake_cann::Calls().created[0].dims, device == 1 ? (Dims{4}) : (Dims{3, 4}));  // own shape on the 950
      GlueRun bf(DataType::kBFloat16, {4}, {4}, {4}, cann);
      EXPECT_EQ(bf.outcome.ok(), device == 1) << bf.outcome.message;
      EXPECT_TRUE(NoLeaks());
    }
  }
}

// --- the run-time search ------------------------------------------------------------

TEST(ascend_loader, finds_a_complete_install_and_names_its_libraries_and_version) {
  const Cann cann = Cann::Load(In({FakeDir("cann9/lib64")}));
  ASSERT_TRUE(cann.ok());
  EXPECT_TRUE(cann.problem().empty());
  ASSERT_TRUE(cann.libraries().size() == 3);
  const char* names[3] = {"libacl_rt.so", "libnnopbase.so", "libopapi_nn.so"};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(cann.libraries()[i].name, std::string(names[i]));
    EXPECT_EQ(cann.libraries()[i].path, FakeDir("cann9/lib64/") + names[i]);
  }
  EXPECT_EQ(cann.version(), std::string("9.0.0-fake"));
  EXPECT_TRUE(cann.notes().empty());
  EXPECT_TRUE(cann.api().aclDestroyAclOpExecutor != nullptr && cann.api().aclrtGetSocName != nullptr);
  EXPECT_TRUE(cann.api().aclrtGetCurrentContext != nullptr && cann.api().aclrtGetDevice != nullptr &&
              cann.api().aclrtGetDeviceInfo != nullptr);
  // libopapi_math.so (no SiluGrad) is passed over, and libopapi_nn.so comes before the deprecated libopapi.so.
  ASSERT_TRUE(cann.operator_library() != nullptr);
  EXPECT_EQ(cann.operator_library()->path, FakeDir("cann9/lib64/libopapi_nn.so"));
  EXPECT_EQ(cann.operator_library()->origin, std::string("test"));
}

TEST(ascend_loader, an_older_install_uses_libascendcl_and_libopapi_and_leaks_what_it_cannot_release) {
  const Cann cann = Cann::Load(In({FakeDir("legacy/lib64")}));
  ASSERT_TRUE(cann.ok());
  ASSERT_TRUE(cann.libraries().size() == 3);
  EXPECT_EQ(cann.libraries()[0].name, std::string("libascendcl.so"));
  EXPECT_EQ(cann.libraries()[2].name, std::string("libopapi.so"));
  EXPECT_EQ(cann.version(), std::string("7.0.0-fake"));  // from aclsysGetCANNVersion
  EXPECT_TRUE(cann.api().aclDestroyAclOpExecutor == nullptr);
  ASSERT_TRUE(cann.notes().size() == 2);  // SwiGluGrad's absence first (ascend_swiglu_loader), then this
  EXPECT_TRUE(Contains(cann.notes()[1], "aclDestroyAclOpExecutor not found (it is documented since CANN 8.0)"));

  fake_cann::Reset();
  fake_cann::ReleaseAll();
  GlueRun ok(DataType::kFloat32, {3, 4}, {4}, {3, 4}, cann);  // it still runs
  EXPECT_TRUE(ok.outcome.ok());
  EXPECT_TRUE(ok.matches_cann());
  EXPECT_EQ(fake_cann::Calls().operator_library, std::string("libopapi"));
  Buffer g(DataType::kFloat32, {8}), x(DataType::kFloat32, {2, 8}), out(DataType::kFloat32, {2, 8});
  Allocator alloc;
  alloc.fail = true;
  const Outcome o = jas::ascend::GradBackward(cann, jas::ascend::kSiluBackward, kStream, alloc.Source(), g.op(), x.op(), out.op());
  EXPECT_TRUE(o.failure == Failure::kWorkspace);
  EXPECT_TRUE(Contains(o.message, "no aclDestroyAclOpExecutor: phase 1's executor is leaked"));
  EXPECT_EQ(fake_cann::LiveExecutors(), int64_t{1});  // exactly the one README warns of
  EXPECT_EQ(fake_cann::LiveTensors(), int64_t{0});
  EXPECT_EQ(fake_cann::ReleaseAll(), int64_t{1});
}

TEST(ascend_loader, the_operator_library_may_sit_under_ascend_opp_path) {
  const char* vars[4] = {"ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH", "ASCEND_OPP_PATH", "ASCEND_CUSTOM_OPP_PATH"};
  for (const char* v : vars) unsetenv(v);
  setenv("ASCEND_HOME_PATH", FakeDir("split/home").c_str(), 1);
  setenv("ASCEND_OPP_PATH", FakeDir("split/opp").c_str(), 1);
  CannSearch search = jas::ascend::SearchFromEnvironment();
  ASSERT_TRUE(search.dirs.size() == 2);
  EXPECT_EQ(search.dirs[0].path, FakeDir("split/home/lib64"));
  EXPECT_EQ(search.dirs[0].origin, std::string("$ASCEND_HOME_PATH/lib64"));
  EXPECT_EQ(search.dirs[1].origin, std::string("$ASCEND_OPP_PATH/lib64"));
  EXPECT_TRUE(search.loader_path);
  search.loader_path = false;  // this binary's loader path holds the complete fake
  const Cann cann = Cann::Load(search);
  ASSERT_TRUE(cann.ok());
  ASSERT_TRUE(cann.libraries().size() == 3);
  EXPECT_EQ(cann.libraries()[2].path, FakeDir("split/opp/lib64/libopapi_nn.so"));
  setenv("ASCEND_TOOLKIT_HOME", FakeDir("split/home").c_str(), 1);  // the same directory is searched once
  EXPECT_EQ(jas::ascend::SearchFromEnvironment().dirs.size(), size_t{2});
  for (const char* v : vars) unsetenv(v);
  CannSearch none = jas::ascend::SearchFromEnvironment();
  none.loader_path = false;  // this group's LD_LIBRARY_PATH holds the complete fake
  EXPECT_TRUE(none.dirs.empty());
  EXPECT_EQ(none.unset,
            (std::vector<std::string>{"$ASCEND_TOOLKIT_HOME", "$ASCEND_HOME_PATH", "$ASCEND_OPP_PATH"}));
  EXPECT_TRUE(Contains(Cann::Load(none).problem(),
                       "$ASCEND_TOOLKIT_HOME, $ASCEND_HOME_PATH, $ASCEND_OPP_PATH are unset"));
}

TEST(ascend_loader, the_loader_path_is_searched_by_bare_name) {
  // ctest puts the complete fake on LD_LIBRARY_PATH for this group.
  const char* ld = std::getenv("LD_LIBRARY_PATH");
  ASSERT_TRUE(ld != nullptr && Contains(ld, FakeDir("cann9/lib64")));
  const Cann cann = Cann::Load(In({}, /*loader_path=*/true));
  EXPECT_TRUE(cann.ok()) << cann.problem();
  ASSERT_TRUE(cann.libraries().size() == 3);
  EXPECT_EQ(cann.libraries()[1].path, FakeDir("cann9/lib64/libnnopbase.so"));
}

TEST(ascend_loader, a_missing_operator_library_is_named_with_where_it_was_looked_for) {
  fake_cann::Reset();
  const Cann cann = Cann::Load(In({FakeDir("no_operator/lib64")}));
  EXPECT_TRUE(!cann.ok());
  EXPECT_TRUE(Contains(cann.problem(), "operator library: aclnnSiluBackwardGetWorkspaceSize in libcust_opapi.so, "
                                       "libopapi_*.so, libopapi.so not found in " + FakeDir("no_operator/lib64")));
  EXPECT_TRUE(!Contains(cann.problem(), "ACL runtime"));  // the parts that are there are not blamed
  EXPECT_EQ(cann.libraries().size(), size_t{2});
  GlueRun r(DataType::kFloat32, {4}, {4}, {4}, cann);  // no crash: an error naming what is missing
  EXPECT_TRUE(r.outcome.failure == Failure::kNoCann);
  EXPECT_TRUE(Contains(r.outcome.message, "needs CANN"));
  EXPECT_TRUE(Contains(r.outcome.message, "libcust_opapi.so, libopapi_*.so, libopapi.so"));
  EXPECT_TRUE(jas::ascend::ToFfiError(r.outcome).errc() == xla::ffi::ErrorCode::kFailedPrecondition);
  EXPECT_EQ(fake_cann::Calls().create_calls, 0);
}

TEST(ascend_loader, a_missing_function_is_named_with_its_library) {
  const Cann cann = Cann::Load(In({FakeDir("no_phase2/lib64")}));
  EXPECT_TRUE(!cann.ok());
  EXPECT_TRUE(
      Contains(cann.problem(), FakeDir("no_phase2/lib64/libopapi_nn.so") + " has no aclnnSiluBackward"));
  EXPECT_TRUE(!Contains(cann.problem(), "GetWorkspaceSize"));
}

TEST(ascend_loader, nothing_found_names_every_library_and_every_place) {
  const Cann cann = Cann::Load(In({FakeDir("nowhere/lib64"), FakeDir("legacy")}));
  EXPECT_TRUE(!cann.ok());
  EXPECT_TRUE(cann.libraries().empty());
  for (const char* part : {"ACL runtime: libacl_rt.so or libascendcl.so", "aclnn tensor API: libnnopbase.so",
                           "operator library: aclnnSiluBackwardGetWorkspaceSize in libcust_opapi.so"}) {
    EXPECT_TRUE(Contains(cann.problem(), part)) << cann.problem();
  }
  EXPECT_TRUE(
      Contains(cann.problem(), FakeDir("nowhere/lib64") + " (test), " + FakeDir("legacy") + " (test)"));
  EXPECT_TRUE(cann.version().empty());
  const Cann none = Cann::Load(In({}));
  EXPECT_TRUE(Contains(none.problem(), "nowhere (no directory given)"));
}

TEST(ascend_loader, a_file_that_will_not_load_is_reported_with_the_loader_message) {
  char dir[] = "/tmp/jas_cann_XXXXXX";
  ASSERT_TRUE(mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/libnnopbase.so";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_TRUE(f != nullptr);
  std::fputs("not a shared library\n", f);
  std::fclose(f);
  const Cann cann = Cann::Load(In({dir, FakeDir("cann9/lib64")}));
  EXPECT_TRUE(cann.ok());  // the next directory has a good one
  EXPECT_EQ(cann.libraries()[1].path, FakeDir("cann9/lib64/libnnopbase.so"));
  const Cann broken = Cann::Load(In({dir}));
  EXPECT_TRUE(!broken.ok());
  // dlerror names the file
  EXPECT_TRUE(Contains(broken.problem(), "[" + path + ": " + path)) << broken.problem();
  std::remove(path.c_str());
  rmdir(dir);
}

// --- the operator in torch_npu's order ------------------------------------------------

namespace {

// Sets CANN's variables for one test (the others unset) and restores none:
// every test of this group sets what it needs.
void Environment(const char* home, const char* opp, const char* custom) {
  for (const char* v : {"ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH", "ASCEND_OPP_PATH", "ASCEND_CUSTOM_OPP_PATH"}) {
    unsetenv(v);
  }
  if (home) setenv("ASCEND_HOME_PATH", home, 1);
  if (opp) setenv("ASCEND_OPP_PATH", opp, 1);
  if (custom) setenv("ASCEND_CUSTOM_OPP_PATH", custom, 1);
}

// The operator library the environment leads to, and the fake library that served a call.
struct Served {
  std::string path, origin, tag;
};
Served ServedBy() {
  CannSearch search = jas::ascend::SearchFromEnvironment();
  search.loader_path = false;  // this group's LD_LIBRARY_PATH holds the complete fake
  const Cann cann = Cann::Load(search);
  EXPECT_TRUE(cann.ok()) << cann.problem();
  if (!cann.ok() || cann.operator_library() == nullptr) return {};
  fake_cann::Reset();
  GlueRun r(DataType::kFloat32, {2, 3}, {2, 3}, {2, 3}, cann);
  EXPECT_TRUE(r.outcome.ok()) << r.outcome.message;
  EXPECT_TRUE(r.matches_cann());
  return {cann.operator_library()->path, cann.operator_library()->origin, fake_cann::Calls().operator_library};
}

}  // namespace

TEST(ascend_operator_lookup, a_custom_opp_path_entry_comes_first) {
  const std::string custom = FakeDir("custom");
  const std::string entries = FakeDir("nowhere") + "::" + custom;  // a missing entry and an empty one are passed over
  Environment(FakeDir("cann9").c_str(), FakeDir("vendors/opp").c_str(), entries.c_str());
  const Served s = ServedBy();
  EXPECT_EQ(s.path, custom + "/op_api/lib/libcust_opapi.so");
  EXPECT_EQ(s.origin, "$ASCEND_CUSTOM_OPP_PATH entry " + custom);
  EXPECT_EQ(s.tag, std::string("custom"));
  Environment(nullptr, nullptr, nullptr);
}

TEST(ascend_operator_lookup, then_the_vendors_of_config_ini_in_load_priority_order) {
  Environment(FakeDir("cann9").c_str(), FakeDir("vendors/opp").c_str(), nullptr);
  const CannSearch search = jas::ascend::SearchFromEnvironment();
  ASSERT_TRUE(search.custom_operator_dirs.size() == 3);  // absent, other, vendor_b
  EXPECT_EQ(search.custom_operator_dirs[0].path, FakeDir("vendors/opp/vendors/absent/op_api/lib"));
  // "absent" has no directory and "other" has no SiluGrad: vendor_b serves the call.
  const Served s = ServedBy();
  EXPECT_EQ(s.path, FakeDir("vendors/opp/vendors/vendor_b/op_api/lib/libcust_opapi.so"));
  EXPECT_EQ(s.origin, std::string("vendor vendor_b of $ASCEND_OPP_PATH/vendors/config.ini"));
  EXPECT_EQ(s.tag, std::string("vendor_b"));
  Environment(nullptr, nullptr, nullptr);
}

TEST(ascend_operator_lookup, without_custom_operators_the_per_repository_library_serves) {
  Environment(FakeDir("cann9").c_str(), nullptr, nullptr);
  const Served s = ServedBy();
  EXPECT_EQ(s.path, FakeDir("cann9/lib64/libopapi_nn.so"));
  EXPECT_EQ(s.origin, std::string("$ASCEND_HOME_PATH/lib64"));
  EXPECT_EQ(s.tag, std::string("libopapi_nn"));
  Environment(nullptr, nullptr, nullptr);
}

TEST(ascend_operator_lookup, config_ini_is_read_as_torch_npu_reads_it) {
  char dir[] = "/tmp/jas_opp_XXXXXX";
  ASSERT_TRUE(mkdtemp(dir) != nullptr);
  const std::string vendors = std::string(dir) + "/vendors";
  EXPECT_TRUE(jas::ascend::VendorOperatorDirs(dir).empty());  // no config.ini
  ASSERT_EQ(mkdir(vendors.c_str(), 0755), 0);
  auto write = [&](const char* text) { std::ofstream(vendors + "/config.ini") << text; };
  write("[vendors]\npriority=x\n");
  EXPECT_TRUE(jas::ascend::VendorOperatorDirs(dir).empty());  // no load_priority line
  write("# vendors\nload_priority=a,,b\nload_priority=c\n");  // the first such line; empty names passed over
  const std::vector<CannSearch::Dir> dirs = jas::ascend::VendorOperatorDirs(dir);
  ASSERT_TRUE(dirs.size() == 2);
  EXPECT_EQ(dirs[0].path, vendors + "/a/op_api/lib");
  EXPECT_EQ(dirs[1].path, vendors + "/b/op_api/lib");
  EXPECT_EQ(dirs[1].origin, std::string("vendor b of $ASCEND_OPP_PATH/vendors/config.ini"));
  std::remove((vendors + "/config.ini").c_str());
  rmdir(vendors.c_str());
  rmdir(dir);
}

TEST(ascend_operator_lookup, a_custom_library_of_another_owner_is_skipped_as_torch_npu_skips_it) {
  if (getuid() != 0) GTEST_SKIP() << "needs root to give a file another owner";
  char dir[] = "/tmp/jas_cust_XXXXXX";
  ASSERT_TRUE(mkdtemp(dir) != nullptr);
  const std::string lib = std::string(dir) + "/op_api/lib";
  ASSERT_EQ(std::system(("mkdir -p " + lib + " && cp " + FakeDir("custom/op_api/lib/libcust_opapi.so") + " " + lib +
                         " && chown 12345 " + lib + "/libcust_opapi.so").c_str()),
            0);
  Environment(FakeDir("cann9").c_str(), nullptr, dir);
  CannSearch search = jas::ascend::SearchFromEnvironment();
  search.loader_path = false;
  const Cann cann = Cann::Load(search);
  ASSERT_TRUE(cann.ok()) << cann.problem();
  EXPECT_EQ(cann.operator_library()->path, FakeDir("cann9/lib64/libopapi_nn.so"));
  Environment(nullptr, nullptr, nullptr);
  // with nothing else to fall back on, the skip is what the problem reports
  CannSearch just_custom;
  just_custom.custom_operator_dirs.push_back({lib, "test"});
  just_custom.loader_path = false;
  EXPECT_TRUE(Contains(Cann::Load(just_custom).problem(), "is owned by uid 12345, not by this user"));
  ASSERT_EQ(std::system(("rm -r " + std::string(dir)).c_str()), 0);
}

// --- SwiGluGrad ------------------------------------------------------------------------
//
// Each test runs on every fake chip in turn (Devices sets the chip of device
// 0), since aclnnSwiGluGrad differs by chip class more than aclnnSiluBackward:
// 910B and 950 take every dtype, 310P no bfloat16, 910A has no kernel.

namespace {

const char* const kEveryChip[] = {"910B", "950", "310P", "910A"};

bool HasSwiGlu(Chip chip) { return chip != Chip::k910A; }
bool SwiGluRefuses(Chip chip, DataType t) { return chip == Chip::k310P && t == DataType::kBFloat16; }

const DataType kDtypes[] = {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16};

// Whether out = [dA | dB] (packed, split along `dim` of x's dims) is CANN's formula of g and x.
bool SwiGluPackedMatchesCann(const Buffer& g, const Buffer& x, int64_t dim, const Buffer& out) {
  const int64_t rank = static_cast<int64_t>(x.dims.size()), d = dim < 0 ? dim + rank : dim;
  int64_t outer = 1, inner = 1;
  for (int64_t j = 0; j < d; ++j) outer *= x.dims[j];
  for (int64_t j = d + 1; j < rank; ++j) inner *= x.dims[j];
  const int64_t half = x.dims[d] / 2 * inner;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < half; ++k) {
      const int64_t ia = o * 2 * half + k, ib = ia + half;
      std::string why;
      if (!cann_reference::SwiGluMatches(x.dtype, g.get(o * half + k), x.get(ia), x.get(ib), out.get(ia),
                                         out.get(ib), &why)) {
        ADD_FAILURE() << "row " << o << ", element " << k << ": " << why;
        return false;
      }
    }
  }
  return true;
}

bool SwiGluPairMatchesCann(const Buffer& g, const Buffer& a, const Buffer& b, const Buffer& da, const Buffer& db) {
  for (int64_t i = 0; i < g.numel(); ++i) {
    std::string why;
    if (!cann_reference::SwiGluMatches(g.dtype, g.get(i), a.get(i), b.get(i), da.get(i), db.get(i), &why)) {
      ADD_FAILURE() << "element " << i << ": " << why;
      return false;
    }
  }
  return true;
}

Dims Halved(Dims dims, int64_t dim) {
  const int64_t d = dim < 0 ? dim + static_cast<int64_t>(dims.size()) : dim;
  dims[d] /= 2;
  return dims;
}

struct PackedRun {
  Buffer g, x, out;
  int64_t dim;
  Allocator alloc;
  Outcome outcome;
  PackedRun(DataType t, Dims x_dims, int64_t dim_, const Cann& cann = CompleteFakeCann())
      : g(t, Halved(x_dims, dim_)), x(t, x_dims), out(t, x_dims), dim(dim_) {
    g.fill(5, 2.0f);
    x.fill(6, 6.0f);
    outcome = jas::ascend::SwiGluGradPacked(cann, kStream, alloc.Source(), g.op(), x.op(), dim, out.op());
  }
  bool matches_cann() const { return SwiGluPackedMatchesCann(g, x, dim, out); }
};

struct PairRun {
  Buffer g, a, b, da, db;
  Allocator alloc;
  Outcome outcome;
  PairRun(DataType t, const Dims& dims, const Cann& cann = CompleteFakeCann())
      : g(t, dims), a(t, dims), b(t, dims), da(t, dims), db(t, dims) {
    g.fill(7, 2.0f);
    a.fill(8, 6.0f);
    b.fill(9, 3.0f);
    outcome = jas::ascend::SwiGluGradPair(cann, kStream, alloc.Source(), g.op(), a.op(), b.op(), da.op(), db.op());
  }
  bool matches_cann() const { return SwiGluPairMatchesCann(g, a, b, da, db); }
};

// The outcome of a call CANN refuses for bfloat16 on 310P: its status, and the chip named.
void ExpectBfloat16RefusedOn310P(const Outcome& o) {
  EXPECT_TRUE(o.failure == Failure::kPhase1) << o.message;
  EXPECT_EQ(o.status, 161002);
  EXPECT_TRUE(Contains(o.message, "aclnnSwiGluGradGetWorkspaceSize failed with ACLNN_ERR_PARAM_INVALID (161002)"))
      << o.message;
  EXPECT_TRUE(Contains(o.message, "bfloat16 is not supported on Ascend310P3, an Ascend310P chip (from its NpuArch "
                                  "2002 of device 0): it takes float32, float16"))
      << o.message;
  EXPECT_EQ(fake_cann::Calls().phase2_calls, 0);
}

void ExpectNoKernelOn910A(const Outcome& o) {
  EXPECT_TRUE(o.failure == Failure::kChip) << o.message;
  EXPECT_TRUE(Contains(o.message, "CANN has no aclnnSwiGluGrad kernel for Ascend910A, an Atlas training series chip"))
      << o.message;
  EXPECT_TRUE(Contains(o.message, "ops-nn builds it for NpuArch 2002 (an Ascend310P chip), NpuArch 2201 (an Atlas "
                                  "A2/A3 chip), NpuArch 3510 (an Ascend 950/350 chip)"))
      << o.message;
  EXPECT_TRUE(jas::ascend::ToFfiError(o).errc() == xla::ffi::ErrorCode::kUnimplemented);
  EXPECT_EQ(fake_cann::Calls().create_calls, 0);
  EXPECT_EQ(fake_cann::Calls().phase1_calls, 0);
}

// The chip's verdict on a call (910A: no kernel; 310P: no bfloat16), its
// cleanup checked; true when the call should have run. Nothing is ever
// allocated on a chip without the kernel (the pair form's staging included).
bool ExpectChipVerdict(const Outcome& o, Chip chip, DataType t, const Allocator& alloc, const std::string& what) {
  if (!HasSwiGlu(chip)) {
    ExpectNoKernelOn910A(o);
    EXPECT_TRUE(alloc.requests.empty()) << what;
    return false;
  }
  if (SwiGluRefuses(chip, t)) {
    ExpectBfloat16RefusedOn310P(o);
    EXPECT_TRUE(NoLeaks()) << what;
    return false;
  }
  EXPECT_TRUE(o.ok()) << what << ": " << o.message;
  return o.ok();
}

}  // namespace

TEST(ascend_swiglu, packed_goes_to_cann_as_it_is_along_any_dim_in_every_dtype_on_every_chip) {
  struct Case {
    Dims x;
    int64_t dim;
  };
  const Case cases[] = {{{4, 6}, -1}, {{4, 6}, 0}, {{2, 4, 3}, 1}, {{8}, 0}, {{3, 2, 4}, -2},
                        {{1, 2, 1, 2, 1, 2, 1, 4}, 7}};
  for (const char* name : kEveryChip) {
    Devices devices(name);
    for (DataType t : kDtypes) {
      for (const Case& c : cases) {
        fake_cann::Reset();
        const Chip chip = fake_cann::CurrentChip();
        const std::string what = std::string(name) + " " + jas::DtypeName(t) + " x " +
                                 std::to_string(c.x.size()) + "-d, dim " + std::to_string(c.dim);
        PackedRun r(t, c.x, c.dim);
        if (!ExpectChipVerdict(r.outcome, chip, t, r.alloc, what)) continue;
        const fake_cann::Record& rec = fake_cann::Calls();
        EXPECT_EQ(rec.phase1_operator, std::string("SwiGluGrad")) << what;
        EXPECT_EQ(rec.swiglu_dim, c.dim) << what;  // as given, negative too: CANN normalises it
        ASSERT_TRUE(rec.created.size() == 3) << what;
        const Dims own[3] = {r.g.dims, c.x, c.x};
        const void* data[3] = {r.g.bytes.data(), r.x.bytes.data(), r.out.bytes.data()};
        for (int i = 0; i < 3; ++i) {
          EXPECT_EQ(rec.created[i].dims, own[i]) << what;
          EXPECT_EQ(rec.created[i].storage_dims, own[i]) << what;
          EXPECT_EQ(rec.created[i].data, data[i]) << what;
          EXPECT_EQ(rec.created[i].dtype, jas::ascend::AclDataType(t)) << what;
        }
        EXPECT_EQ(rec.created[1].strides.back(), int64_t{1}) << what;
        // CANN's workspace, requested only when non-zero (the 950 tiling's bytes).
        EXPECT_EQ(r.alloc.requests, chip == Chip::k950 ? std::vector<uint64_t>{32} : std::vector<uint64_t>{}) << what;
        EXPECT_EQ(rec.phase2_calls, 1) << what;
        EXPECT_EQ(rec.stream, kStream) << what;
        EXPECT_TRUE(rec.copies.empty()) << what;  // nothing staged
        EXPECT_TRUE(r.matches_cann()) << what;
        EXPECT_TRUE(NoLeaks()) << what;
      }
    }
  }
}

TEST(ascend_swiglu, pair_form_stages_a_and_b_runs_the_packed_operator_and_copies_the_halves_out) {
  for (const char* name : kEveryChip) {
    Devices devices(name);
    for (DataType t : kDtypes) {
      for (const Dims& dims : {Dims{3, 5}, Dims{}, Dims{7}, Dims{2, 1, 3}}) {
        fake_cann::Reset();
        const Chip chip = fake_cann::CurrentChip();
        const std::string what = std::string(name) + " " + jas::DtypeName(t) + " rank " + std::to_string(dims.size());
        PairRun r(t, dims);
        if (!ExpectChipVerdict(r.outcome, chip, t, r.alloc, what)) continue;
        const int64_t n = r.g.numel();
        const uint64_t half = static_cast<uint64_t>(n * Buffer::ElemBytes(t));
        const fake_cann::Record& rec = fake_cann::Calls();
        // The staging first (x and out), then CANN's own workspace where it asks for one.
        std::vector<uint64_t> want = {jas::ascend::PairStagingBytes(half)};
        if (chip == Chip::k950) want.push_back(32);
        EXPECT_EQ(r.alloc.requests, want) << what;
        ASSERT_TRUE(!r.alloc.blocks.empty());
        char* staging = r.alloc.blocks[0].get();
        char* out = staging + jas::ascend::PairOutOffset(half);
        // x = [a | b] and out = [dA | dB] of rank 1, yGrad flat, split along dim 0.
        ASSERT_TRUE(rec.created.size() == 3) << what;
        EXPECT_EQ(rec.created[0].dims, (Dims{n})) << what;
        EXPECT_EQ(rec.created[0].data, static_cast<void*>(r.g.bytes.data())) << what;
        EXPECT_EQ(rec.created[1].dims, (Dims{2 * n})) << what;
        EXPECT_EQ(rec.created[1].data, static_cast<void*>(staging)) << what;
        EXPECT_EQ(rec.created[2].dims, (Dims{2 * n})) << what;
        EXPECT_EQ(rec.created[2].data, static_cast<void*>(out)) << what;
        EXPECT_EQ(rec.swiglu_dim, int64_t{0}) << what;
        // Four device-to-device copies on the call's stream: a and b in, dA and dB out, around phase 2.
        ASSERT_TRUE(rec.copies.size() == 4) << what;
        const void* dst[4] = {staging, staging + half, r.da.bytes.data(), r.db.bytes.data()};
        const void* src[4] = {r.a.bytes.data(), r.b.bytes.data(), out, out + half};
        for (int i = 0; i < 4; ++i) {
          EXPECT_EQ(rec.copies[i].dst, dst[i]) << what << " copy " << i;
          EXPECT_EQ(rec.copies[i].src, src[i]) << what << " copy " << i;
          EXPECT_EQ(rec.copies[i].count, half) << what << " copy " << i;
          EXPECT_EQ(rec.copies[i].kind, unsigned{cann::ACL_MEMCPY_DEVICE_TO_DEVICE}) << what;
          EXPECT_EQ(rec.copies[i].stream, kStream) << what;
        }
        EXPECT_TRUE(r.matches_cann()) << what;
        EXPECT_TRUE(NoLeaks()) << what;
      }
    }
  }
}

TEST(ascend_swiglu, operands_outside_the_contract_are_refused_before_any_cann_call) {
  fake_cann::Reset();
  const DataType f32 = DataType::kFloat32;
  struct Case {
    Dims g, x;
    int64_t dim;
    DataType x_dtype;
    const char* reason;
  };
  const Case cases[] = {
      {{2, 3}, {2, 5}, -1, f32, "x float32[2,5] has an odd size along dim 1; SwiGLU splits it into two equal halves"},
      {{2, 3}, {2, 6}, 2, f32, "dim 2 is out of range for x float32[2,6]: pass one in [-2, 1]"},
      {{2, 3}, {2, 6}, -3, f32, "dim -3 is out of range"},
      {{2, 3}, {2, 6}, -1, DataType::kFloat16, "differ in dtype; SwiGluGrad takes one dtype for every tensor"},
      {{2, 2}, {2, 6}, -1, f32, "yGrad float32[2,2] is not x float32[2,6] with dim 1 halved"},
      {{0, 3}, {0, 6}, -1, f32, "is empty; SwiGluGrad takes no empty tensors"},
  };
  for (const Case& c : cases) {
    Buffer g(f32, c.g), x(c.x_dtype, c.x), out(c.x_dtype, c.x);
    const Outcome o = jas::ascend::SwiGluGradPacked(CompleteFakeCann(), kStream, {}, g.op(), x.op(), c.dim, out.op());
    EXPECT_TRUE(o.failure == Failure::kOperands) << c.reason << ": " << o.message;
    EXPECT_EQ(o.status, 161002) << c.reason;
    EXPECT_TRUE(Contains(o.message, "jax_ascend_silu: SwiGluGrad on Ascend refused its operands with "
                                    "ACLNN_ERR_PARAM_INVALID (161002) before any CANN call: "))
        << o.message;
    EXPECT_TRUE(Contains(o.message, c.reason)) << o.message;
    EXPECT_TRUE(Contains(o.message, "; got yGrad ")) << o.message;
    EXPECT_TRUE(jas::ascend::ToFfiError(o).errc() == xla::ffi::ErrorCode::kInvalidArgument);
  }
  Buffer g(f32, {3}), a(f32, {3}), b(f32, {4}), da(f32, {3}), db(f32, {3});
  const Outcome o = jas::ascend::SwiGluGradPair(CompleteFakeCann(), kStream, {}, g.op(), a.op(), b.op(), da.op(), db.op());
  EXPECT_TRUE(o.failure == Failure::kOperands) << o.message;
  EXPECT_TRUE(Contains(o.message, "b float32[4] and yGrad float32[3] differ in shape")) << o.message;
  Buffer e(f32, {0});
  const Outcome empty = jas::ascend::SwiGluGradPair(CompleteFakeCann(), kStream, {}, e.op(), e.op(), e.op(), e.op(), e.op());
  EXPECT_TRUE(Contains(empty.message, "is empty; SwiGluGrad takes no empty tensors")) << empty.message;
  EXPECT_EQ(fake_cann::Calls().create_calls, 0);
  EXPECT_TRUE(fake_cann::Calls().copies.empty());
}

TEST(ascend_swiglu, every_failure_releases_tensors_and_executors_and_names_the_call) {
  Devices devices("950");  // CANN asks for a workspace there: its allocation can fail too
  // CANN's phases.
  fake_cann::Faults p1;
  p1.phase1_status = 561101;
  fake_cann::Reset(p1);
  PackedRun r1(DataType::kFloat32, {2, 4}, -1);
  EXPECT_TRUE(r1.outcome.failure == Failure::kPhase1);
  EXPECT_TRUE(Contains(r1.outcome.message, "aclnnSwiGluGradGetWorkspaceSize failed with "
                                           "ACLNN_ERR_INNER_CREATE_EXECUTOR (561101)"))
      << r1.outcome.message;
  EXPECT_TRUE(Contains(r1.outcome.message, "; dim -1")) << r1.outcome.message;
  EXPECT_TRUE(NoLeaks());
  fake_cann::Faults p2;
  p2.phase2_status = 361001;
  fake_cann::Reset(p2);
  PairRun r2(DataType::kFloat32, {5});
  EXPECT_TRUE(r2.outcome.failure == Failure::kPhase2);
  EXPECT_TRUE(Contains(r2.outcome.message, "aclnnSwiGluGrad failed with ACLNN_ERR_RUNTIME_ERROR (361001)"))
      << r2.outcome.message;
  EXPECT_EQ(fake_cann::Calls().copies.size(), size_t{2});  // nothing copied out of a failed run
  EXPECT_TRUE(NoLeaks());
  // Each of the pair form's four copies.
  for (int call = 0; call < 4; ++call) {
    fake_cann::Faults f;
    f.fail_memcpy_call = call;
    fake_cann::Reset(f);
    PairRun r(DataType::kFloat16, {2, 3});
    EXPECT_TRUE(r.outcome.failure == Failure::kCopy) << call;
    EXPECT_EQ(r.outcome.status, 107000);
    EXPECT_TRUE(Contains(r.outcome.message, "SwiGluGrad on Ascend (pair form): aclrtMemcpyAsync of " +
                                                std::string(call < 2 ? (call == 0 ? "a" : "b") : (call == 2 ? "dA" : "dB"))))
        << r.outcome.message;
    EXPECT_TRUE(Contains(r.outcome.message, "set to fail at call " + std::to_string(call))) << r.outcome.message;
    EXPECT_EQ(fake_cann::Calls().copies.size(), size_t(call + 1));
    EXPECT_EQ(fake_cann::Calls().phase2_calls, call < 2 ? 0 : 1);
    EXPECT_TRUE(jas::ascend::ToFfiError(r.outcome).errc() == xla::ffi::ErrorCode::kInternal);
    EXPECT_TRUE(NoLeaks()) << call;
  }
  // The staging, then CANN's workspace.
  fake_cann::Reset();
  Buffer g(DataType::kFloat32, {4}), a(DataType::kFloat32, {4}), b(DataType::kFloat32, {4}),
      da(DataType::kFloat32, {4}), db(DataType::kFloat32, {4});
  Allocator none;
  none.fail = true;
  Outcome o = jas::ascend::SwiGluGradPair(CompleteFakeCann(), kStream, none.Source(), g.op(), a.op(), b.op(), da.op(),
                                          db.op());
  EXPECT_TRUE(o.failure == Failure::kWorkspace);
  EXPECT_TRUE(Contains(o.message, "could not allocate the " + std::to_string(jas::ascend::PairStagingBytes(16)) +
                                      " bytes of device memory SwiGluGrad's pair form stages"))
      << o.message;
  EXPECT_EQ(fake_cann::Calls().create_calls, 0);
  EXPECT_TRUE(fake_cann::Calls().copies.empty());
  fake_cann::Reset();
  PackedRun packed(DataType::kFloat32, {2, 4}, 1, CompleteFakeCann());
  ASSERT_TRUE(packed.outcome.ok()) << packed.outcome.message;
  Allocator refuse;
  refuse.fail = true;
  o = jas::ascend::SwiGluGradPacked(CompleteFakeCann(), kStream, refuse.Source(), packed.g.op(), packed.x.op(), 1,
                                    packed.out.op());
  EXPECT_TRUE(o.failure == Failure::kWorkspace);
  EXPECT_TRUE(Contains(o.message, "could not allocate the 32 bytes of device workspace "
                                  "aclnnSwiGluGradGetWorkspaceSize asked for (phase 1's executor is released"))
      << o.message;
  EXPECT_TRUE(NoLeaks());
  // A thread without a current context.
  fake_cann::Faults no_device;
  no_device.device = -1;
  fake_cann::Reset(no_device);
  PackedRun nc(DataType::kFloat32, {2, 4}, 1);
  EXPECT_TRUE(nc.outcome.failure == Failure::kNoContext);
  EXPECT_TRUE(Contains(nc.outcome.message, "SwiGluGrad on Ascend needs a current ACL context")) << nc.outcome.message;
  EXPECT_TRUE(Contains(nc.outcome.message, "since CANN's aclnnSwiGluGrad reads")) << nc.outcome.message;
}

TEST(ascend_swiglu, fake_refuses_what_canns_aclnn_swi_glu_grad_refuses) {
  const DirectApi api = Direct(CompleteFakeCann());
  Buffer g(DataType::kFloat32, {2, 3}), x(DataType::kFloat32, {2, 6}), out(DataType::kFloat32, {2, 6});
  Buffer xo(DataType::kFloat32, {2, 5}), g0(DataType::kFloat32, {2, 3});
  struct Tensor {
    Dims dims, strides;
    cann::aclDataType dtype;
    void* data;
  };
  auto run = [&](const Tensor& tg, const Tensor& tx, const Tensor& to, int64_t dim) {
    const Tensor* ts[3] = {&tg, &tx, &to};
    cann::aclTensor* t[3];
    for (int i = 0; i < 3; ++i) {
      t[i] = api.aclCreateTensor(ts[i]->dims.data(), ts[i]->dims.size(), ts[i]->dtype, ts[i]->strides.data(), 0,
                                 cann::ACL_FORMAT_ND, ts[i]->dims.data(), ts[i]->dims.size(), ts[i]->data);
    }
    uint64_t ws = 0;
    cann::aclOpExecutor* e = nullptr;
    const cann::aclnnStatus s = api.aclnnSwiGluGradGetWorkspaceSize(t[0], t[1], dim, t[2], &ws, &e);
    if (s == 0) api.aclDestroyAclOpExecutor(e);
    for (cann::aclTensor* one : t) api.aclDestroyTensor(one);
    return std::make_pair(s, std::string(api.aclGetRecentErrMsg()));
  };
  const Tensor tg{{2, 3}, {3, 1}, cann::ACL_FLOAT, g.bytes.data()}, tx{{2, 6}, {6, 1}, cann::ACL_FLOAT, x.bytes.data()},
      to{{2, 6}, {6, 1}, cann::ACL_FLOAT, out.bytes.data()};
  fake_cann::Reset();
  EXPECT_EQ(run(tg, tx, to, -1).first, 0);
  EXPECT_EQ(run(tg, tx, to, 1).first, 0);
  struct Case {
    Tensor g, x, out;
    int64_t dim;
    const char* message;
  };
  const Case refused[] = {
      {tg, tx, to, 2, "dim 2 is out of range for x [2,6]"},
      {tg, tx, to, 0, "yGrad [2,3] must be x [2,6] halved along dim 0"},
      {tg, {{2, 5}, {5, 1}, cann::ACL_FLOAT, xo.bytes.data()}, {{2, 5}, {5, 1}, cann::ACL_FLOAT, xo.bytes.data()}, -1,
       "has an odd size along dim 1"},
      {{{2, 3}, {1, 2}, cann::ACL_FLOAT, g.bytes.data()}, tx, to, -1, "yGrad must be contiguous"},
      {{{2, 3}, {3, 1}, cann::ACL_FLOAT16, g.bytes.data()}, tx, to, -1, "must share one dtype"},
      {{{0, 3}, {3, 1}, cann::ACL_FLOAT, g.bytes.data()}, {{0, 6}, {6, 1}, cann::ACL_FLOAT, x.bytes.data()},
       {{0, 6}, {6, 1}, cann::ACL_FLOAT, out.bytes.data()}, -1, "yGrad is empty"},
  };
  for (const Case& c : refused) {
    const auto [status, message] = run(c.g, c.x, c.out, c.dim);
    EXPECT_EQ(status, 161002) << c.message;
    EXPECT_TRUE(Contains(message, c.message)) << message;
  }
  const Tensor bg{{2, 3}, {3, 1}, cann::ACL_BF16, g.bytes.data()}, bx{{2, 6}, {6, 1}, cann::ACL_BF16, x.bytes.data()},
      bo{{2, 6}, {6, 1}, cann::ACL_BF16, out.bytes.data()};
  {
    Devices d("310P");
    fake_cann::Reset();
    EXPECT_EQ(run(tg, tx, to, -1).first, 0);
    const auto [status, message] = run(bg, bx, bo, -1);
    EXPECT_EQ(status, 161002);
    EXPECT_TRUE(Contains(message, "bfloat16 refused on device 0 (NpuArch 2002)")) << message;
  }
  {
    Devices d("910A");
    fake_cann::Reset();
    const auto [status, message] = run(tg, tx, to, -1);
    EXPECT_EQ(status, 161002);
    EXPECT_TRUE(Contains(message, "not supported on device 0 (NpuArch 1001)")) << message;
  }
  fake_cann::Faults none;
  none.device = -1;
  fake_cann::Reset(none);
  EXPECT_TRUE(Contains(run(tg, tx, to, -1).second, "not supported on no current device"));
  // A SwiGluGrad executor is not SiluBackward's to run.
  fake_cann::Reset();
  cann::aclTensor* t[3];
  const Tensor* ts[3] = {&tg, &tx, &to};
  for (int i = 0; i < 3; ++i) {
    t[i] = api.aclCreateTensor(ts[i]->dims.data(), 2, cann::ACL_FLOAT, ts[i]->strides.data(), 0, cann::ACL_FORMAT_ND,
                               ts[i]->dims.data(), 2, ts[i]->data);
  }
  uint64_t ws = 0;
  cann::aclOpExecutor* e = nullptr;
  ASSERT_EQ(api.aclnnSwiGluGradGetWorkspaceSize(t[0], t[1], -1, t[2], &ws, &e), 0);
  EXPECT_EQ(api.aclnnSiluBackward(nullptr, 0, e, kStream), 561103);
  for (cann::aclTensor* one : t) api.aclDestroyTensor(one);
  EXPECT_TRUE(NoLeaks());
}

TEST(ascend_swiglu, the_chip_table_has_swiglu_grad_where_canns_op_definitions_build_it) {
  struct Row {
    int64_t arch;
    bool runs, bfloat16;
  };
  for (const Row& r : {Row{2201, true, true}, Row{3510, true, true}, Row{2002, true, false}, Row{1001, false, false},
                       Row{3002, false, false}, Row{0, true, true}}) {
    const jas::ascend::ChipClass& c = jas::ascend::ClassOfNpuArch(r.arch);
    EXPECT_EQ(c.swiglu_grad, r.runs) << r.arch;
    EXPECT_EQ(c.swiglu_grad_bfloat16, r.bfloat16) << r.arch;
  }
  EXPECT_EQ(jas::ascend::SwiGluDtypesTaken(jas::ascend::ClassOfNpuArch(2002)), std::string("float32, float16"));
  EXPECT_EQ(jas::ascend::NpuArchOfSocName("Ascend310P3"), int64_t{2002});
}

TEST(ascend_swiglu_loader, a_cann_without_swiglu_grad_still_serves_silu_grad_and_says_what_to_install) {
  const Cann cann = Cann::Load(In({FakeDir("legacy/lib64")}));
  ASSERT_TRUE(cann.ok()) << cann.problem();
  EXPECT_TRUE(!cann.ok(jas::ascend::kSwiGluGrad));
  EXPECT_TRUE(cann.op(jas::ascend::kSwiGluGrad).library.path.empty());
  EXPECT_TRUE(cann.op(jas::ascend::kSwiGluGrad).phase2 == nullptr && cann.op(jas::ascend::kSwiGluGrad).phase1 == nullptr);
  EXPECT_TRUE(Contains(cann.op(jas::ascend::kSwiGluGrad).problem,
                       "SwiGluGrad's operator library: aclnnSwiGluGradGetWorkspaceSize in libcust_opapi.so, "
                       "libopapi_*.so, libopapi.so not found in " + FakeDir("legacy/lib64")))
      << cann.op(jas::ascend::kSwiGluGrad).problem;
  EXPECT_TRUE(Contains(cann.op(jas::ascend::kSwiGluGrad).problem, "libopapi.so has no aclnnSwiGluGradGetWorkspaceSize"))
      << cann.op(jas::ascend::kSwiGluGrad).problem;
  EXPECT_TRUE(Contains(cann.op(jas::ascend::kSwiGluGrad).problem, "install CANN 8.0.RC1 or later")) << cann.op(jas::ascend::kSwiGluGrad).problem;
  EXPECT_TRUE(Contains(cann.notes()[0], "install CANN 8.0.RC1 or later"));
  fake_cann::Reset();
  fake_cann::ReleaseAll();
  PackedRun r(DataType::kFloat32, {2, 4}, -1, cann);
  EXPECT_TRUE(r.outcome.failure == Failure::kNoCann);
  EXPECT_TRUE(Contains(r.outcome.message, "SwiGluGrad on Ascend needs CANN, which was not found or is incomplete:\n"
                                          "SwiGluGrad's operator library: aclnnSwiGluGradGetWorkspaceSize"))
      << r.outcome.message;
  EXPECT_TRUE(jas::ascend::ToFfiError(r.outcome).errc() == xla::ffi::ErrorCode::kFailedPrecondition);
  EXPECT_EQ(fake_cann::Calls().create_calls, 0);
  GlueRun silu(DataType::kFloat32, {3, 4}, {3, 4}, {3, 4}, cann);  // SiluGrad unaffected
  EXPECT_TRUE(silu.outcome.ok()) << silu.outcome.message;
  EXPECT_TRUE(silu.matches_cann());
}

TEST(ascend_swiglu_loader, a_complete_cann_serves_both_from_one_library) {
  const Cann& cann = CompleteFakeCann();
  ASSERT_TRUE(cann.ok(jas::ascend::kSwiGluGrad)) << cann.op(jas::ascend::kSwiGluGrad).problem;
  ASSERT_TRUE(!cann.op(jas::ascend::kSwiGluGrad).library.path.empty());
  EXPECT_EQ(cann.op(jas::ascend::kSwiGluGrad).library.path, cann.operator_library()->path);
  EXPECT_TRUE(cann.api().aclrtMemcpyAsync != nullptr);
  EXPECT_TRUE(cann.notes().empty());
}

TEST(ascend_operator_lookup, each_operator_is_looked_up_on_its_own_as_torch_npu_looks_up_each_symbol) {
  // The custom package has aclnnSiluBackward alone: SwiGluGrad comes from CANN's own library.
  Environment(FakeDir("cann9").c_str(), nullptr, FakeDir("custom").c_str());
  CannSearch search = jas::ascend::SearchFromEnvironment();
  search.loader_path = false;
  const Cann cann = Cann::Load(search);
  ASSERT_TRUE(cann.ok(jas::ascend::kSwiGluGrad)) << cann.problem() << cann.op(jas::ascend::kSwiGluGrad).problem;
  EXPECT_EQ(cann.operator_library()->path, FakeDir("custom") + "/op_api/lib/libcust_opapi.so");
  EXPECT_EQ(cann.op(jas::ascend::kSwiGluGrad).library.path, FakeDir("cann9/lib64/libopapi_nn.so"));
  fake_cann::Reset();
  PackedRun r(DataType::kFloat32, {2, 4}, -1, cann);
  ASSERT_TRUE(r.outcome.ok()) << r.outcome.message;
  EXPECT_EQ(fake_cann::Calls().operator_library, std::string("libopapi_nn"));
  EXPECT_TRUE(r.matches_cann());
  Environment(nullptr, nullptr, nullptr);
}
