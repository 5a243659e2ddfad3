// The Ascend handler symbol (JaxAscendSiluGradAscend) called the way XLA
// calls it on an Ascend PJRT plugin, through the harness's XLA FFI API, end
// to end into the FAKE CANN of tests/ascend_fake (found through
// $ASCEND_HOME_PATH by the package's own loader, as a real install is): the
// stream from XLA_FFI_Stream_Get handed to phase 2, the workspace phase 1 asks
// for taken from XLA's scratch allocator (XLA_FFI_DeviceMemory_Allocate) and
// given back after the call (XLA_FFI_DeviceMemory_Free), results against a
// float64 model of CANN's formula (the fake computes what a real Ascend does,
// not this package's kernel: tests/ascend_fake/cann_reference.h), and every way the call can fail as the
// ffi::Error XLA would raise. The thread that calls the handler first makes device 0 current with
// aclrtSetDevice, as a PJRT plugin does before it runs a program.
//
// ctest points the process at a fake install (--ascend_home_path, see main).
// TEST(ascend_handler, ...) runs once per fake chip ($JAX_ASCEND_SILU_FAKE_CHIP,
// set by ctest); TEST(ascend_handler_devices, ...) once with two devices of
// different chips; TEST(ascend_handler_without_cann, ...) against an install
// without an operator library. Host memory stands in for device memory.
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ascend/cann.h"
#include "ascend/cann_loader.h"
#include "ascend/glue.h"
#include "cann_reference.h"
#include "fake_cann.h"
#include "ffi_harness.h"
#include "handler_test_util.h"
#include "handlers.h"
#include "kernel_test_util.h"
#include "workspace.h"

namespace ffi_harness {
namespace {

using fake_cann::Chip;
using jas::test::Contiguous;
using jas::test::kTypes;

// The stream the plugin's execution context hands out; the fake records it.
const jas::cann::aclrtStream kStream = reinterpret_cast<jas::cann::aclrtStream>(uintptr_t{0xa5ce});

Options Plugin() { return Options{.stream = kStream}; }

// What a PJRT plugin does on the thread that runs XLA's program: make the
// device current (aclrtSetDevice), through the ACL runtime the package opened.
void SetDevice(int32_t device) {
  const jas::ascend::Cann& cann = jas::ascend::ProcessCann();
  ASSERT_TRUE(!cann.libraries().empty()) << cann.problem();
  const std::string& runtime = cann.libraries()[0].path;  // the ACL runtime, opened first
  void* handle = dlopen(runtime.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  ASSERT_TRUE(handle != nullptr) << runtime << " is not loaded: " << dlerror();
  using SetDeviceFn = jas::cann::aclError(int32_t);
  auto* set_device = reinterpret_cast<SetDeviceFn*>(dlsym(handle, "aclrtSetDevice"));
  dlclose(handle);  // drops only the reference taken here
  ASSERT_TRUE(set_device != nullptr) << runtime << " has no aclrtSetDevice";
  ASSERT_EQ(set_device(device), 0);
}

struct AscendRun {
  Operand grad_output, self, grad_input;
  Log log;
  Outcome outcome;
};

// Resets the fake (with `faults`) leaving this thread no current context.
void ResetFake(fake_cann::Faults faults = {}) {
  faults.device = -1;
  fake_cann::Reset(faults);
}

// Resets the fake (with `faults`), makes device 0 current as a plugin does,
// calls the handler on r's operands.
void RunHandlerOn(AscendRun& r, const fake_cann::Faults& faults = {}, Options options = Plugin()) {
  ResetFake(faults);
  SetDevice(0);
  Context context(options);
  CallFrame frame(context);
  Operands(frame, r.grad_output, r.self, r.grad_input);
  r.outcome = Call(&JaxAscendSiluGradAscend, frame);
  r.log = context.log();
  ExpectCleanCall(context, DtypeName(r.grad_input.dtype) + std::string(" ") +
                               ToString(Shapes{r.grad_output.dims, r.self.dims, r.grad_input.dims}));
}

// RunHandlerOn, on random operands of the shapes `s`.
AscendRun RunHandler(DataType t, const Shapes& s, const fake_cann::Faults& faults = {},
                     Options options = Plugin()) {
  AscendRun r{Contiguous(t, s.grad_output), Contiguous(t, s.self), Contiguous(t, s.grad_input), {}, {}};
  jas::test::Rng rng(3);
  jas::test::FillRandom(r.grad_output, rng, 2.0);
  jas::test::FillRandom(r.self, rng, 6.0);
  RunHandlerOn(r, faults, options);
  return r;
}

bool NoCannLeaks() { return fake_cann::LiveTensors() == 0 && fake_cann::LiveExecutors() == 0; }

bool Untouched(const Operand& out) {
  for (int64_t i = 0; i < out.StorageSize(); ++i) {
    if (out.Bits(i) != jas::test::Sentinel(out.dtype)) return false;
  }
  return true;
}

// The workspace went from phase 1 to XLA's allocator to phase 2 and back: one
// Allocate of exactly the size phase 1 asked for (none when it asked for 0),
// the same block and size handed to aclnnSiluBackward, one Free of it.
void ExpectWorkspaceRoundTrip(const AscendRun& r, const std::string& what) {
  const fake_cann::Record& c = fake_cann::Calls();
  ASSERT_EQ(c.phase1_calls, 1) << what;
  if (c.planned_workspace == 0) {
    EXPECT_TRUE(r.log.allocations.empty()) << what;
    EXPECT_TRUE(c.workspace == nullptr) << what;
    EXPECT_EQ(c.workspace_size, uint64_t{0}) << what;
  } else {
    ASSERT_EQ(r.log.allocations.size(), size_t{1}) << what;
    const MemoryCall& a = r.log.allocations[0];
    EXPECT_EQ(a.size, c.planned_workspace) << what;
    EXPECT_EQ(a.alignment, jas::ffi::kScratchAlignment) << what;
    EXPECT_EQ(c.workspace, a.data) << what;
    EXPECT_EQ(c.workspace_size, c.planned_workspace) << what;
  }
  ASSERT_EQ(r.log.frees.size(), r.log.allocations.size()) << what;
  for (size_t i = 0; i < r.log.frees.size(); ++i) {
    EXPECT_EQ(r.log.frees[i].data, r.log.allocations[i].data) << what;
    EXPECT_EQ(r.log.frees[i].size, r.log.allocations[i].size) << what;
  }
}

// The results are CANN's formula of the operands (broadcast to grad_input's
// dims), element by element, and nothing outside grad_input's view (its
// canaries included) was written.
void CheckAgainstCann(const Operand& grad_output, const Operand& self, const Operand& grad_input,
                      const std::string& what) {
  int failures = 0;
  jas::test::ForEachIndex(grad_input.dims, [&](const Dims& idx) {
    const double g = grad_output.Value(grad_output.Locate(idx)), x = self.Value(self.Locate(idx));
    std::string why;
    if (!cann_reference::Matches(grad_input.dtype, g, x, grad_input.Value(grad_input.Locate(idx)), &why) &&
        ++failures <= 5) {
      ADD_FAILURE() << what << ": element " << jas::test::ToString(idx) << ": " << why;
    }
  });
  EXPECT_EQ(failures, 0) << what;
  for (int64_t i = jas::test::Numel(grad_input.dims); i < grad_input.StorageSize(); ++i) {
    EXPECT_EQ(grad_input.Bits(i), jas::test::Sentinel(grad_input.dtype))
        << what << ": canary " << i << " written";
  }
}

bool Refuses(Chip chip, DataType t) { return chip == Chip::k910A && t == DataType::kBFloat16; }

// A broadcast self: a workspace on every chip the fake models (the view made
// contiguous on 910A/910B; the 950 tiling's own bytes).
const Shapes kBroadcastSelf = {{3, 4}, {4}, {3, 4}};

TEST(ascend_handler, results_are_canns_formula_on_every_dtype_and_shape) {
  const Chip chip = fake_cann::CurrentChip();
  for (DataType t : kTypes) {
    for (const Shapes& s : EveryShape()) {
      const std::string what =
          std::string(fake_cann::ChipName(chip)) + " " + DtypeName(t) + " " + ToString(s);
      AscendRun r = RunHandler(t, s);
      if (jas::test::Numel(s.grad_input) == 0) {  // nothing to compute: CANN is not called
        EXPECT_TRUE(r.outcome.ok) << what << ": " << r.outcome.message;
        EXPECT_EQ(fake_cann::Calls().create_calls, 0) << what;
        EXPECT_TRUE(r.log.allocations.empty()) << what;
        EXPECT_TRUE(Untouched(r.grad_input)) << what;
        continue;
      }
      if (Refuses(chip, t)) {
        EXPECT_EQ(r.outcome.code, XLA_FFI_Error_Code_INVALID_ARGUMENT) << what << ": " << r.outcome.message;
        // The refusal names the chip and what it takes.
        EXPECT_TRUE(Contains(r.outcome.message, "bfloat16 is not supported on Ascend910A"))
            << r.outcome.message;
        EXPECT_TRUE(Contains(r.outcome.message, "it takes float32, float16")) << r.outcome.message;
        EXPECT_EQ(fake_cann::Calls().phase2_calls, 0) << what;
        EXPECT_TRUE(r.log.allocations.empty()) << what;
        EXPECT_TRUE(Untouched(r.grad_input)) << what;
      } else {
        ASSERT_TRUE(r.outcome.ok) << what << ": " << CodeName(r.outcome.code) << " " << r.outcome.message;
        CheckAgainstCann(r.grad_output, r.self, r.grad_input, what);  // canaries included
        const fake_cann::Record& c = fake_cann::Calls();
        EXPECT_EQ(c.phase2_calls, 1) << what;
        EXPECT_EQ(c.stream, kStream) << what;
        ExpectWorkspaceRoundTrip(r, what);
      }
      EXPECT_EQ(r.log.stream_gets, 1) << what;
      EXPECT_TRUE(NoCannLeaks()) << what;
    }
  }
}

// CANN's formula at x = +-inf is 0*inf: what a real Ascend returns there,
// and what reaches JAX (the CPU and CUDA backends return the limits).
TEST(ascend_handler, an_infinite_self_gives_nan_as_on_a_real_ascend) {
  for (DataType t : kTypes) {
    if (Refuses(fake_cann::CurrentChip(), t)) continue;
    AscendRun r{Contiguous(t, {4}), Contiguous(t, {4}), Contiguous(t, {4}), {}, {}};
    const float xs[4] = {INFINITY, -INFINITY, 1.0f, -1.0f};
    for (int64_t i = 0; i < 4; ++i) {
      r.grad_output.SetBits(i, jas::test::FromFloat(t, 2.0f));
      r.self.SetBits(i, jas::test::FromFloat(t, xs[i]));
    }
    RunHandlerOn(r);
    ASSERT_TRUE(r.outcome.ok) << DtypeName(t) << ": " << r.outcome.message;
    EXPECT_TRUE(std::isnan(r.grad_input.Value(0)) && std::isnan(r.grad_input.Value(1))) << DtypeName(t);
    CheckAgainstCann(r.grad_output, r.self, r.grad_input, DtypeName(t));
    EXPECT_TRUE(NoCannLeaks());
  }
}

TEST(ascend_handler, broadcast_operands_reach_cann_as_the_chip_takes_them) {
  const Chip chip = fake_cann::CurrentChip();
  AscendRun r = RunHandler(DataType::kFloat32, {{4}, {3, 1}, {3, 4}});
  ASSERT_TRUE(r.outcome.ok) << r.outcome.message;
  const fake_cann::Record& c = fake_cann::Calls();
  ASSERT_EQ(c.created.size(), size_t{3});
  if (chip == Chip::k950) {  // the operator broadcasts by itself
    EXPECT_EQ(c.created[0].dims, (Dims{4}));
    EXPECT_EQ(c.created[1].dims, (Dims{3, 1}));
  } else {  // stride-0 views of grad_input's shape over the operands' own storage
    EXPECT_EQ(c.created[0].dims, (Dims{3, 4}));
    EXPECT_EQ(c.created[0].strides, (Dims{0, 1}));
    EXPECT_EQ(c.created[1].strides, (Dims{1, 0}));
  }
  EXPECT_EQ(c.created[0].storage_dims, (Dims{4}));
  EXPECT_EQ(c.created[1].storage_dims, (Dims{3, 1}));
  EXPECT_EQ(c.created[0].data, static_cast<void*>(r.grad_output.bytes.data()));
  EXPECT_EQ(c.created[2].data, static_cast<void*>(r.grad_input.bytes.data()));
  CheckAgainstCann(r.grad_output, r.self, r.grad_input, "broadcast");
  ExpectWorkspaceRoundTrip(r, "broadcast");
  EXPECT_TRUE(NoCannLeaks());
}

TEST(ascend_handler, the_workspace_phase_one_asks_for_comes_from_xla_and_goes_back) {
  for (DataType t : kTypes) {
    if (Refuses(fake_cann::CurrentChip(), t)) continue;  // covered by the refusal above
    AscendRun r = RunHandler(t, kBroadcastSelf);
    ASSERT_TRUE(r.outcome.ok) << DtypeName(t) << ": " << r.outcome.message;
    ASSERT_GT(fake_cann::Calls().planned_workspace, uint64_t{0})
        << "the fake's phase 1 asked for no workspace for a broadcast self; this test needs one";
    ExpectWorkspaceRoundTrip(r, DtypeName(t));
    CheckAgainstCann(r.grad_output, r.self, r.grad_input, DtypeName(t));
    EXPECT_TRUE(NoCannLeaks());
  }
}

// Contiguous operands on 910A/910B: CANN needs no workspace, and XLA is
// asked for none (phase 2 gets null and 0); the 950 tiling asks for its own.
TEST(ascend_handler, a_zero_workspace_is_not_asked_of_xla) {
  const Chip chip = fake_cann::CurrentChip();
  AscendRun r = RunHandler(DataType::kFloat32, {{3, 4}, {3, 4}, {3, 4}});
  ASSERT_TRUE(r.outcome.ok) << r.outcome.message;
  const fake_cann::Record& c = fake_cann::Calls();
  if (chip == Chip::k950) {
    EXPECT_GT(c.planned_workspace, uint64_t{0});
  } else {
    ASSERT_EQ(c.planned_workspace, uint64_t{0})
        << "the fake plans a workspace for contiguous operands on " << fake_cann::ChipName(chip);
    EXPECT_TRUE(r.log.allocations.empty());
    EXPECT_TRUE(c.workspace == nullptr);
    EXPECT_EQ(c.workspace_size, uint64_t{0});
  }
  ExpectWorkspaceRoundTrip(r, "contiguous");
  CheckAgainstCann(r.grad_output, r.self, r.grad_input, "contiguous");
  EXPECT_TRUE(NoCannLeaks());
}

TEST(ascend_handler, a_refused_allocation_is_resource_exhausted_and_releases_the_executor) {
  Options options = Plugin();
  options.refuse_allocations = true;
  AscendRun r = RunHandler(DataType::kFloat32, kBroadcastSelf, {}, options);
  const fake_cann::Record& c = fake_cann::Calls();
  ASSERT_GT(c.planned_workspace, uint64_t{0});
  EXPECT_EQ(r.outcome.code, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED) << r.outcome.message;
  EXPECT_TRUE(Contains(r.outcome.message,
                       "jax_ascend_silu: could not allocate the " + std::to_string(c.planned_workspace) +
                           " bytes of device workspace aclnnSiluBackwardGetWorkspaceSize asked for"))
      << r.outcome.message;
  EXPECT_TRUE(Contains(r.outcome.message, "released with aclDestroyAclOpExecutor")) << r.outcome.message;
  ASSERT_EQ(r.log.allocations.size(), size_t{1});
  EXPECT_EQ(r.log.allocations[0].size, c.planned_workspace);
  EXPECT_TRUE(r.log.frees.empty());  // nothing was given, nothing to give back
  EXPECT_EQ(c.phase2_calls, 0);      // never with a null workspace
  EXPECT_EQ(c.executors_destroyed.size(), size_t{1});
  EXPECT_TRUE(Untouched(r.grad_input));
  EXPECT_TRUE(NoCannLeaks());
}

// --- errors before CANN ---------------------------------------------------------------

TEST(ascend_handler, an_unsupported_dtype_is_refused_before_any_cann_call) {
  std::vector<unsigned char> g(3 * 8), x(3 * 8), out(3 * 8, 0x5a);
  ResetFake();
  SetDevice(0);
  Context context(Plugin());
  CallFrame frame(context);
  frame.Arg(XLA_FFI_DataType_F64, {3}, g.data())
      .Arg(XLA_FFI_DataType_F64, {3}, x.data())
      .Ret(XLA_FFI_DataType_F64, {3}, out.data());
  const Outcome o = Call(&JaxAscendSiluGradAscend, frame);
  EXPECT_EQ(o.code, XLA_FFI_Error_Code_INVALID_ARGUMENT) << o.message;
  EXPECT_TRUE(Contains(o.message,
                       "jax_ascend_silu: SiluGrad on Ascend takes float32, float16, bfloat16; got "
                       "grad_output float64[3], self float64[3], grad_input float64[3]"))
      << o.message;
  EXPECT_EQ(fake_cann::Calls().create_calls, 0);
  EXPECT_EQ(out, std::vector<unsigned char>(3 * 8, 0x5a));
  ExpectCleanCall(context, "float64");
}

TEST(ascend_handler, operands_cann_would_refuse_are_refused_before_any_cann_call) {
  struct Case {
    DataType grad_output, self;
    Shapes shapes;
    const char* reason;
  };
  const DataType f32 = DataType::kFloat32, f16 = DataType::kFloat16;
  const Case refused[] = {
      {f32, f32, {{3}, {4}, {4}}, "grad_output float32[3] does not broadcast to grad_input [4]"},
      {f32, f32, {{2, 3}, {3}, {3}}, "grad_output float32[2,3] does not broadcast to grad_input [3]"},
      {f32, f32, {{2}, {2}, {1, 1, 1, 1, 1, 1, 1, 1, 2}}, "has 9 dimensions, more than the 8 SiluGrad takes"},
      {f32, f16, {{3}, {3}, {3}}, "grad_output, self and grad_input must share one dtype"},
  };
  for (const Case& c : refused) {
    Operand g = Contiguous(c.grad_output, c.shapes.grad_output), x = Contiguous(c.self, c.shapes.self),
            out = Contiguous(c.grad_output, c.shapes.grad_input);
    ResetFake();
    SetDevice(0);
    Context context(Plugin());
    CallFrame frame(context);
    Operands(frame, g, x, out);
    const Outcome o = Call(&JaxAscendSiluGradAscend, frame);
    EXPECT_EQ(o.code, XLA_FFI_Error_Code_INVALID_ARGUMENT) << ToString(c.shapes) << ": " << o.message;
    EXPECT_TRUE(Contains(o.message,
                         "refused its operands with ACLNN_ERR_PARAM_INVALID (161002) before any CANN call"))
        << o.message;
    EXPECT_TRUE(Contains(o.message, c.reason)) << o.message;
    const std::string operands = std::string("got grad_output ") + DtypeName(c.grad_output) +
                                 jas::test::ToString(c.shapes.grad_output) + ", self " + DtypeName(c.self) +
                                 jas::test::ToString(c.shapes.self) + ", grad_input " +
                                 DtypeName(c.grad_output) + jas::test::ToString(c.shapes.grad_input);
    EXPECT_TRUE(Contains(o.message, operands)) << o.message;
    EXPECT_EQ(fake_cann::Calls().create_calls, 0) << ToString(c.shapes);
    EXPECT_TRUE(Untouched(out)) << ToString(c.shapes);
    ExpectCleanCall(context, ToString(c.shapes));
  }
}

TEST(ascend_handler, no_stream_from_xla_fails_decoding_before_any_cann_call) {
  Options options = Plugin();
  options.has_stream = false;
  AscendRun r = RunHandler(DataType::kFloat32, {{3}, {3}, {3}}, {}, options);
  EXPECT_EQ(r.outcome.code, XLA_FFI_Error_Code_INVALID_ARGUMENT) << r.outcome.message;
  EXPECT_TRUE(Contains(r.outcome.message, "Failed to decode all FFI handler operands")) << r.outcome.message;
  EXPECT_TRUE(Contains(r.outcome.message,
                       "Failed to get platform stream: ffi harness: this execution context has "
                       "no stream"))
      << r.outcome.message;
  EXPECT_EQ(fake_cann::Calls().create_calls, 0);
  EXPECT_TRUE(Untouched(r.grad_input));
}

// --- errors from CANN -------------------------------------------------------------------

TEST(ascend_handler, a_phase_one_failure_status_is_named_and_classified) {
  struct Case {
    jas::cann::aclnnStatus status;
    const char* label;
    XLA_FFI_Error_Code code;
  };
  for (const Case& c : {Case{161002, "ACLNN_ERR_PARAM_INVALID", XLA_FFI_Error_Code_INVALID_ARGUMENT},
                        Case{561101, "ACLNN_ERR_INNER_CREATE_EXECUTOR", XLA_FFI_Error_Code_INTERNAL},
                        Case{561000, "an unnamed internal error", XLA_FFI_Error_Code_INTERNAL}}) {
    fake_cann::Faults faults;
    faults.phase1_status = c.status;
    AscendRun r = RunHandler(DataType::kFloat32, kBroadcastSelf, faults);
    const std::string status = std::string(c.label) + " (" + std::to_string(c.status) + ")";
    EXPECT_EQ(r.outcome.code, c.code) << status << ": " << r.outcome.message;
    EXPECT_TRUE(Contains(r.outcome.message, "aclnnSiluBackwardGetWorkspaceSize failed with " + status))
        << r.outcome.message;
    EXPECT_TRUE(Contains(r.outcome.message, "set to fail with " + std::to_string(c.status)))
        << r.outcome.message;
    EXPECT_TRUE(Contains(r.outcome.message, "grad_input float32[3,4]")) << r.outcome.message;
    EXPECT_TRUE(r.log.allocations.empty()) << status;
    EXPECT_EQ(fake_cann::Calls().phase2_calls, 0) << status;
    EXPECT_TRUE(Untouched(r.grad_input)) << status;
    EXPECT_TRUE(NoCannLeaks()) << status;
  }
}

TEST(ascend_handler, a_phase_two_failure_is_internal_and_the_workspace_still_goes_back) {
  fake_cann::Faults faults;
  faults.phase2_status = 361001;
  AscendRun r = RunHandler(DataType::kFloat32, kBroadcastSelf, faults);
  EXPECT_EQ(r.outcome.code, XLA_FFI_Error_Code_INTERNAL) << r.outcome.message;
  EXPECT_TRUE(Contains(r.outcome.message,
                       "aclnnSiluBackward failed with ACLNN_ERR_RUNTIME_ERROR (361001): fake CANN: "
                       "aclnnSiluBackward set to fail with 361001"))
      << r.outcome.message;
  EXPECT_EQ(fake_cann::Calls().phase2_calls, 1);
  ExpectWorkspaceRoundTrip(r, "phase 2 failure");
  EXPECT_TRUE(NoCannLeaks());  // phase 2 frees its executor whatever it returns
}

TEST(ascend_handler, a_tensor_cann_cannot_create_is_internal_and_the_others_are_destroyed) {
  fake_cann::Faults faults;
  faults.fail_create_tensor_call = 1;  // self
  AscendRun r = RunHandler(DataType::kFloat32, {{3}, {3}, {3}}, faults);
  EXPECT_EQ(r.outcome.code, XLA_FFI_Error_Code_INTERNAL) << r.outcome.message;
  EXPECT_TRUE(Contains(r.outcome.message, "aclCreateTensor returned null for self")) << r.outcome.message;
  EXPECT_EQ(fake_cann::Calls().phase1_calls, 0);
  EXPECT_EQ(fake_cann::Calls().destroyed, 1);  // grad_output's
  EXPECT_TRUE(NoCannLeaks());
}

// --- the thread's current context ---------------------------------------------------

// XLA may run a program on any thread: one the plugin has not prepared has no
// current context, and the handler says what the plugin must do.
TEST(ascend_handler, a_thread_without_a_current_context_is_failed_precondition_naming_the_requirement) {
  Operand g = Contiguous(DataType::kFloat32, {3, 4}), x = Contiguous(DataType::kFloat32, {4}),
          out = Contiguous(DataType::kFloat32, {3, 4});
  ResetFake();
  Context context(Plugin());
  Outcome o;
  std::thread xla_thread([&] {  // a fresh thread: no device made current on it
    CallFrame frame(context);
    Operands(frame, g, x, out);
    o = Call(&JaxAscendSiluGradAscend, frame);
  });
  xla_thread.join();
  EXPECT_EQ(o.code, XLA_FFI_Error_Code_FAILED_PRECONDITION) << o.message;
  EXPECT_TRUE(Contains(o.message,
                       "jax_ascend_silu: SiluGrad on Ascend needs a current ACL context on the thread "
                       "that runs the XLA handler"))
      << o.message;
  EXPECT_TRUE(Contains(o.message, "aclrtSetDevice")) << o.message;  // what the plugin should call
  EXPECT_TRUE(Contains(o.message, "aclrtGetCurrentContext returned 107002")) << o.message;
  EXPECT_EQ(fake_cann::Calls().create_calls, 0);
  EXPECT_EQ(fake_cann::Calls().phase1_calls, 0);
  EXPECT_TRUE(context.log().allocations.empty());
  EXPECT_TRUE(Untouched(out));
  ExpectCleanCall(context, "no current context");
}

// With several devices, the chip is the one of the device current on the
// calling thread: one process, one handler, two chip classes.
TEST(ascend_handler_devices, each_thread_gets_the_chip_of_its_current_device) {
  ASSERT_EQ(fake_cann::DeviceChips(), (std::vector<Chip>{Chip::k910A, Chip::k950}));  // set by ctest
  for (int32_t device : {0, 1}) {
    const bool broadcasts = fake_cann::DeviceChips()[device] == Chip::k950;
    Operand g = Contiguous(DataType::kFloat32, {4}), x = Contiguous(DataType::kFloat32, {3, 4}),
            out = Contiguous(DataType::kFloat32, {3, 4});
    jas::test::Rng rng(5);
    jas::test::FillRandom(g, rng, 2.0);
    jas::test::FillRandom(x, rng, 6.0);
    ResetFake();
    Context context(Plugin());
    Outcome o;
    std::thread xla_thread([&] {  // the plugin's thread for `device`
      SetDevice(device);
      CallFrame frame(context);
      Operands(frame, g, x, out);
      o = Call(&JaxAscendSiluGradAscend, frame);
    });
    xla_thread.join();
    ASSERT_TRUE(o.ok) << "device " << device << ": " << o.message;
    const fake_cann::Record& c = fake_cann::Calls();
    EXPECT_EQ(c.phase1_device, device);
    ASSERT_EQ(c.created.size(), size_t{3});
    EXPECT_EQ(c.created[0].dims, broadcasts ? (Dims{4}) : (Dims{3, 4})) << "device " << device;
    CheckAgainstCann(g, x, out, "device " + std::to_string(device));
    ExpectCleanCall(context, "device " + std::to_string(device));
    EXPECT_TRUE(NoCannLeaks());
  }
}

// --- what the binding declares and checks ----------------------------------------------

TEST(ascend_handler, a_frame_of_the_wrong_size_arity_or_stage_is_refused_before_any_cann_call) {
  Operand g = Contiguous(DataType::kFloat32, {3}), x = Contiguous(DataType::kFloat32, {3}),
          out = Contiguous(DataType::kFloat32, {3});
  ResetFake();
  SetDevice(0);
  Context context(Plugin());
  {
    CallFrame no_result(context);
    no_result.Arg(XLA_FFI_DataType_F32, {3}, g.bytes.data()).Arg(XLA_FFI_DataType_F32, {3}, x.bytes.data());
    const Outcome o = Call(&JaxAscendSiluGradAscend, no_result);
    EXPECT_EQ(o.code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
    EXPECT_TRUE(Contains(o.message, "Wrong number of results: expected 1 but got 0")) << o.message;
  }
  {
    CallFrame prepare(context, XLA_FFI_ExecutionStage_PREPARE);
    Operands(prepare, g, x, out);
    const Outcome o = Call(&JaxAscendSiluGradAscend, prepare);
    EXPECT_EQ(o.code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
    EXPECT_TRUE(Contains(o.message, "Wrong execution stage")) << o.message;
  }
  {
    CallFrame other_headers(context);
    Operands(other_headers, g, x, out).StructSize(XLA_FFI_CallFrame_STRUCT_SIZE - sizeof(void*));
    const Outcome o = Call(&JaxAscendSiluGradAscend, other_headers);
    EXPECT_EQ(o.code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
    EXPECT_TRUE(Contains(o.message, "Unexpected XLA_FFI_CallFrame size")) << o.message;
  }
  EXPECT_EQ(fake_cann::Calls().create_calls, 0);
  EXPECT_EQ(context.log().stream_gets, 0);  // the frame is checked before anything is decoded
  EXPECT_TRUE(Untouched(out));
  ExpectCleanCall(context, "wrong frames");
}

TEST(ascend_handler, attributes_in_the_frame_are_ignored) {
  Operand g = Contiguous(DataType::kFloat16, {2, 3}), x = Contiguous(DataType::kFloat16, {3}),
          out = Contiguous(DataType::kFloat16, {2, 3});
  jas::test::Rng rng(11);
  jas::test::FillRandom(g, rng, 2.0);
  jas::test::FillRandom(x, rng, 6.0);
  ResetFake();
  SetDevice(0);
  Context context(Plugin());
  CallFrame frame(context);
  Operands(frame, g, x, out).Attr("mode", std::string("unused")).Attr("axis", int64_t{-1});
  const Outcome o = Call(&JaxAscendSiluGradAscend, frame);
  ASSERT_TRUE(o.ok) << o.message;
  CheckAgainstCann(g, x, out, "with attributes");
  ExpectCleanCall(context, "with attributes");
  EXPECT_TRUE(NoCannLeaks());
}

TEST(ascend_handler, metadata_reports_the_headers_api_version_and_no_traits) {
  const Metadata m = QueryMetadata(&JaxAscendSiluGradAscend);
  ASSERT_TRUE(m.outcome.ok) << m.outcome.message;
  EXPECT_EQ(m.major_version, XLA_FFI_API_MAJOR);
  EXPECT_EQ(m.minor_version, XLA_FFI_API_MINOR);
  // CANN's two phases are not declared safe to capture into a command buffer.
  EXPECT_EQ(m.traits, XLA_FFI_Handler_Traits{0});
  EXPECT_EQ(m.state_type_id.type_id, XLA_FFI_UNKNOWN_TYPE_ID.type_id);
  EXPECT_EQ(Surprises(), std::vector<std::string>{});
}

// --- CANN missing ---------------------------------------------------------------------

TEST(ascend_handler_without_cann, a_call_is_failed_precondition_naming_what_is_missing) {
  Operand g = Contiguous(DataType::kFloat32, {3}), x = Contiguous(DataType::kFloat32, {3}),
          out = Contiguous(DataType::kFloat32, {3});
  fake_cann::Reset();  // device 0 current: only CANN is missing
  Context context(Plugin());
  CallFrame frame(context);
  Operands(frame, g, x, out);
  const Outcome o = Call(&JaxAscendSiluGradAscend, frame);
  EXPECT_EQ(o.code, XLA_FFI_Error_Code_FAILED_PRECONDITION) << o.message;
  EXPECT_TRUE(Contains(o.message,
                       "jax_ascend_silu: SiluGrad on Ascend needs CANN, which was not found or is "
                       "incomplete"))
      << o.message;
  EXPECT_TRUE(Contains(o.message, "operator library: ")) << o.message;
  EXPECT_TRUE(Contains(o.message, "ascend_fake/no_operator/lib64 ($ASCEND_HOME_PATH/lib64)")) << o.message;
  EXPECT_EQ(fake_cann::Calls().create_calls, 0);
  EXPECT_TRUE(context.log().allocations.empty());
  EXPECT_TRUE(Untouched(out));
  ExpectCleanCall(context, "without CANN");
}

TEST(ascend_handler_without_cann, an_empty_result_needs_no_cann) {
  Operand g = Contiguous(DataType::kFloat32, {0, 3}), x = Contiguous(DataType::kFloat32, {3}),
          out = Contiguous(DataType::kFloat32, {0, 3});
  Context context(Plugin());
  CallFrame frame(context);
  Operands(frame, g, x, out);
  const Outcome o = Call(&JaxAscendSiluGradAscend, frame);
  EXPECT_TRUE(o.ok) << o.message;
  EXPECT_TRUE(Untouched(out));
  ExpectCleanCall(context, "empty without CANN");
}

// --- SwiGluGrad (JaxAscendSwiGluGradAscend) ---------------------------------------------
//
// TEST(ascend_swiglu_handler, ...) runs once, on the complete fake install;
// each test sets the chip of device 0 itself and runs on every one.

// Sets $JAX_ASCEND_SILU_FAKE_CHIP for one scope.
struct ChipScope {
  std::string saved;
  explicit ChipScope(const char* chip) {
    const char* v = std::getenv("JAX_ASCEND_SILU_FAKE_CHIP");
    saved = v != nullptr ? v : "910B";  // the fake's default
    setenv("JAX_ASCEND_SILU_FAKE_CHIP", chip, 1);
  }
  ~ChipScope() { setenv("JAX_ASCEND_SILU_FAKE_CHIP", saved.c_str(), 1); }
};

const char* const kChips[] = {"910B", "950", "310P", "910A"};

// One SwiGluGrad call: packed, (grad_output, x) -> out with `axis`; pair,
// (grad_output, a, b) -> (grad_a, grad_b).
struct SwiGluRun {
  std::vector<Operand> args, rets;
  int64_t axis = -1;
  Log log;
  Outcome outcome;
};

SwiGluRun Packed(DataType t, const Dims& x, int64_t axis) {
  Dims g = x;
  g[axis < 0 ? axis + static_cast<int64_t>(x.size()) : axis] /= 2;
  SwiGluRun r{{Contiguous(t, g), Contiguous(t, x)}, {Contiguous(t, x)}, axis, {}, {}};
  jas::test::Rng rng(13);
  jas::test::FillRandom(r.args[0], rng, 2.0);
  jas::test::FillRandom(r.args[1], rng, 6.0);
  return r;
}

SwiGluRun Pair(DataType t, const Dims& dims) {
  SwiGluRun r{{Contiguous(t, dims), Contiguous(t, dims), Contiguous(t, dims)},
              {Contiguous(t, dims), Contiguous(t, dims)}, 0, {}, {}};
  jas::test::Rng rng(17);
  for (int i = 0; i < 3; ++i) jas::test::FillRandom(r.args[i], rng, i == 0 ? 2.0 : 6.0);
  return r;
}

// Calls the handler on r's operands, device 0 current, as XLA does.
void CallSwiGlu(SwiGluRun& r, const fake_cann::Faults& faults = {}, Options options = Plugin()) {
  ResetFake(faults);
  SetDevice(0);
  Context context(options);
  CallFrame frame(context);
  for (Operand& a : r.args) frame.Arg(XlaType(a.dtype), a.dims, a.bytes.data());
  for (Operand& o : r.rets) frame.Ret(XlaType(o.dtype), o.dims, o.bytes.data());
  frame.Attr("axis", r.axis);
  r.outcome = Call(&JaxAscendSwiGluGradAscend, frame);
  r.log = context.log();
  ExpectCleanCall(context, "SwiGluGrad");
}

// dA and dB of each element pair against CANN's formula (packed: the halves of x along axis).
void CheckSwiGluAgainstCann(const SwiGluRun& r, const std::string& what) {
  const bool packed = r.args.size() == 2;
  const Operand& g = r.args[0];
  const Dims& dims = packed ? r.args[1].dims : g.dims;
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t d = packed ? (r.axis < 0 ? r.axis + rank : r.axis) : 0;
  int64_t outer = 1, inner = 1;
  for (int64_t j = 0; j < d && packed; ++j) outer *= dims[j];
  for (int64_t j = packed ? d + 1 : 0; j < rank; ++j) inner *= dims[j];
  const int64_t half = packed ? dims[d] / 2 * inner : inner;
  int failures = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < half; ++k) {
      const int64_t ia = packed ? o * 2 * half + k : k, ib = packed ? ia + half : k;
      const Operand& a = r.args[1];
      const Operand& b = packed ? r.args[1] : r.args[2];
      const Operand& da = r.rets[0];
      const Operand& db = packed ? r.rets[0] : r.rets[1];
      std::string why;
      if (!cann_reference::SwiGluMatches(g.dtype, g.Value(o * half + k), a.Value(ia), b.Value(ib), da.Value(ia),
                                         db.Value(ib), &why) &&
          ++failures <= 5) {
        ADD_FAILURE() << what << ": " << why;
      }
    }
  }
  EXPECT_EQ(failures, 0) << what;
}

// The chip's verdict on a call that reached the glue: true when it should have run.
bool ExpectChipVerdict(const SwiGluRun& r, Chip chip, DataType t, const std::string& what) {
  if (chip == Chip::k910A) {
    EXPECT_EQ(r.outcome.code, XLA_FFI_Error_Code_UNIMPLEMENTED) << what << ": " << r.outcome.message;
    EXPECT_TRUE(Contains(r.outcome.message, "CANN has no aclnnSwiGluGrad kernel for Ascend910A")) << r.outcome.message;
    EXPECT_TRUE(r.log.allocations.empty()) << what;
    return false;
  }
  if (chip == Chip::k310P && t == DataType::kBFloat16) {
    EXPECT_EQ(r.outcome.code, XLA_FFI_Error_Code_INVALID_ARGUMENT) << what << ": " << r.outcome.message;
    EXPECT_TRUE(Contains(r.outcome.message, "bfloat16 is not supported on Ascend310P3")) << r.outcome.message;
    EXPECT_EQ(fake_cann::Calls().phase2_calls, 0) << what;
    return false;
  }
  EXPECT_TRUE(r.outcome.ok) << what << ": " << CodeName(r.outcome.code) << " " << r.outcome.message;
  return r.outcome.ok;
}

TEST(ascend_swiglu_handler, packed_results_are_canns_formula_along_every_axis_dtype_and_chip) {
  struct Case {
    Dims x;
    int64_t axis;
  };
  for (const char* name : kChips) {
    ChipScope scope(name);
    for (DataType t : kTypes) {
      for (const Case& c : {Case{{3, 8}, -1}, Case{{4, 3}, 0}, Case{{2, 6, 5}, 1}, Case{{10}, 0}}) {
        const std::string what = std::string(name) + " " + DtypeName(t) + " x " + jas::test::ToString(c.x) +
                                 " axis " + std::to_string(c.axis);
        SwiGluRun r = Packed(t, c.x, c.axis);
        CallSwiGlu(r);
        const Chip chip = fake_cann::CurrentChip();
        if (ExpectChipVerdict(r, chip, t, what)) {
          CheckSwiGluAgainstCann(r, what);
          const fake_cann::Record& rec = fake_cann::Calls();
          EXPECT_EQ(rec.swiglu_dim, c.axis) << what;
          EXPECT_EQ(rec.stream, kStream) << what;
          EXPECT_TRUE(rec.copies.empty()) << what;
          // CANN's workspace only (the 950 tiling's), from XLA and back.
          EXPECT_EQ(r.log.allocations.size(), size_t{chip == Chip::k950 ? 1u : 0u}) << what;
          EXPECT_EQ(r.log.frees.size(), r.log.allocations.size()) << what;
        }
        EXPECT_TRUE(NoCannLeaks()) << what;
      }
    }
  }
}

TEST(ascend_swiglu_handler, pair_results_are_canns_formula_staged_in_xla_scratch_memory) {
  for (const char* name : kChips) {
    ChipScope scope(name);
    for (DataType t : kTypes) {
      for (const Dims& dims : {Dims{3, 5}, Dims{}, Dims{2, 1, 4}}) {
        const std::string what = std::string(name) + " " + DtypeName(t) + " " + jas::test::ToString(dims);
        SwiGluRun r = Pair(t, dims);
        CallSwiGlu(r);
        const Chip chip = fake_cann::CurrentChip();
        if (ExpectChipVerdict(r, chip, t, what)) {
          CheckSwiGluAgainstCann(r, what);
          const uint64_t half = static_cast<uint64_t>(jas::test::Numel(dims)) * (t == DataType::kFloat32 ? 4 : 2);
          ASSERT_EQ(r.log.allocations.size(), size_t{chip == Chip::k950 ? 2u : 1u}) << what;
          EXPECT_EQ(r.log.allocations[0].size, jas::ascend::PairStagingBytes(half)) << what;
          EXPECT_EQ(r.log.frees.size(), r.log.allocations.size()) << what;  // all given back after the call
          const fake_cann::Record& rec = fake_cann::Calls();
          ASSERT_EQ(rec.copies.size(), size_t{4}) << what;
          for (const fake_cann::CopyRecord& c : rec.copies) EXPECT_EQ(c.stream, kStream) << what;
          EXPECT_EQ(rec.copies[0].dst, r.log.allocations[0].data) << what;
          EXPECT_EQ(rec.copies[2].dst, static_cast<void*>(r.rets[0].bytes.data())) << what;
          EXPECT_EQ(rec.copies[3].dst, static_cast<void*>(r.rets[1].bytes.data())) << what;
        }
        EXPECT_TRUE(NoCannLeaks()) << what;
      }
    }
  }
}

TEST(ascend_swiglu_handler, bad_operands_are_invalid_argument_naming_swiglu_grad_before_any_cann_call) {
  struct Case {
    SwiGluRun run;
    const char* reason;
  };
  Case cases[] = {
      {Packed(DataType::kFloat32, {2, 6}, -1), ""},
      {Packed(DataType::kFloat32, {2, 6}, -1), "dim 2 is out of range for x float32[2,6]"},
      {Packed(DataType::kFloat32, {2, 6}, -1), "differ in dtype"},
      {Pair(DataType::kFloat32, {3}), "b float32[4] and yGrad float32[3] differ in shape"},
  };
  cases[0].run.args[1] = Contiguous(DataType::kFloat32, {2, 5});  // odd along the axis
  cases[0].run.rets[0] = Contiguous(DataType::kFloat32, {2, 5});
  cases[0].reason = "x float32[2,5] has an odd size along dim 1";
  cases[1].run.axis = 2;
  cases[2].run.args[0] = Contiguous(DataType::kFloat16, {2, 3});
  cases[3].run.args[2] = Contiguous(DataType::kFloat32, {4});
  for (Case& c : cases) {
    CallSwiGlu(c.run);
    const Outcome& o = c.run.outcome;
    EXPECT_EQ(o.code, XLA_FFI_Error_Code_INVALID_ARGUMENT) << c.reason << ": " << o.message;
    EXPECT_TRUE(Contains(o.message, "jax_ascend_silu: SwiGluGrad on Ascend refused its operands with "
                                    "ACLNN_ERR_PARAM_INVALID (161002) before any CANN call"))
        << o.message;
    EXPECT_TRUE(Contains(o.message, c.reason)) << o.message;
    EXPECT_EQ(fake_cann::Calls().create_calls, 0) << c.reason;
    EXPECT_TRUE(c.run.log.allocations.empty()) << c.reason;
    for (const Operand& out : c.run.rets) EXPECT_TRUE(Untouched(out)) << c.reason;
  }
  // float64: named with XLA's type, by the handler.
  std::vector<unsigned char> g(2 * 2 * 8), x(2 * 4 * 8), out(2 * 4 * 8, 0x5a);
  ResetFake();
  SetDevice(0);
  Context context(Plugin());
  CallFrame frame(context);
  frame.Arg(XLA_FFI_DataType_F64, {2, 2}, g.data())
      .Arg(XLA_FFI_DataType_F64, {2, 4}, x.data())
      .Ret(XLA_FFI_DataType_F64, {2, 4}, out.data())
      .Attr("axis", int64_t{-1});
  Outcome o = Call(&JaxAscendSwiGluGradAscend, frame);
  EXPECT_EQ(o.code, XLA_FFI_Error_Code_INVALID_ARGUMENT) << o.message;
  EXPECT_TRUE(Contains(o.message, "jax_ascend_silu: SwiGluGrad on Ascend takes float32, float16, bfloat16; got "
                                  "grad_output float64[2,2], x float64[2,4], out float64[2,4]"))
      << o.message;
  // Three inputs and one result: neither form.
  CallFrame odd(context);
  odd.Arg(XLA_FFI_DataType_F32, {2}, g.data())
      .Arg(XLA_FFI_DataType_F32, {2}, x.data())
      .Arg(XLA_FFI_DataType_F32, {2}, x.data())
      .Ret(XLA_FFI_DataType_F32, {2}, out.data())
      .Attr("axis", int64_t{-1});
  o = Call(&JaxAscendSwiGluGradAscend, odd);
  EXPECT_EQ(o.code, XLA_FFI_Error_Code_INVALID_ARGUMENT) << o.message;
  EXPECT_TRUE(Contains(o.message, "SwiGluGrad takes (grad_output, x) -> out or (grad_output, a, b) -> "
                                  "(grad_a, grad_b); got 3 operands and 1 results"))
      << o.message;
  EXPECT_EQ(fake_cann::Calls().create_calls, 0);
  ExpectCleanCall(context, "float64 and arity");
}

TEST(ascend_swiglu_handler, failures_in_the_pair_form_give_back_every_allocation) {
  ChipScope scope("950");
  fake_cann::Faults copy;
  copy.fail_memcpy_call = 2;  // dA out
  SwiGluRun r = Pair(DataType::kFloat32, {4});
  CallSwiGlu(r, copy);
  EXPECT_EQ(r.outcome.code, XLA_FFI_Error_Code_INTERNAL) << r.outcome.message;
  EXPECT_TRUE(Contains(r.outcome.message, "aclrtMemcpyAsync of dA into grad_a")) << r.outcome.message;
  EXPECT_EQ(r.log.frees.size(), r.log.allocations.size());
  EXPECT_TRUE(NoCannLeaks());
  Options refuse = Plugin();
  refuse.refuse_allocations = true;
  SwiGluRun s = Pair(DataType::kFloat32, {4});
  CallSwiGlu(s, {}, refuse);
  EXPECT_EQ(s.outcome.code, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED) << s.outcome.message;
  EXPECT_TRUE(Contains(s.outcome.message, "SwiGluGrad's pair form stages x = [a | b]")) << s.outcome.message;
  EXPECT_EQ(fake_cann::Calls().create_calls, 0);
}

TEST(ascend_swiglu_handler, is_registered_beside_silu_grad_and_declares_no_traits) {
  const Metadata m = QueryMetadata(&JaxAscendSwiGluGradAscend);
  ASSERT_TRUE(m.outcome.ok) << m.outcome.message;
  EXPECT_EQ(m.traits, XLA_FFI_Handler_Traits{0});
  EXPECT_EQ(Surprises(), std::vector<std::string>{});
}

// An install older than CANN 8.0.RC1 (legacy/): SwiGluGrad says what to
// install; SiluGrad runs.
TEST(ascend_swiglu_handler_old_cann, swiglu_grad_is_failed_precondition_naming_the_symbol_and_silu_grad_runs) {
  SwiGluRun r = Packed(DataType::kFloat32, {2, 4}, -1);
  CallSwiGlu(r);
  EXPECT_EQ(r.outcome.code, XLA_FFI_Error_Code_FAILED_PRECONDITION) << r.outcome.message;
  EXPECT_TRUE(Contains(r.outcome.message, "jax_ascend_silu: SwiGluGrad on Ascend needs CANN")) << r.outcome.message;
  EXPECT_TRUE(Contains(r.outcome.message, "aclnnSwiGluGradGetWorkspaceSize in libcust_opapi.so, libopapi_*.so, "
                                          "libopapi.so not found"))
      << r.outcome.message;
  EXPECT_TRUE(Contains(r.outcome.message, "install CANN 8.0.RC1 or later")) << r.outcome.message;
  EXPECT_TRUE(Untouched(r.rets[0]));
  fake_cann::ReleaseAll();
  AscendRun silu = RunHandler(DataType::kFloat32, {{3, 4}, {3, 4}, {3, 4}});
  ASSERT_TRUE(silu.outcome.ok) << silu.outcome.message;
  CheckAgainstCann(silu.grad_output, silu.self, silu.grad_input, "SiluGrad on an older CANN");
}

}  // namespace
}  // namespace ffi_harness

// ctest names the fake install with --ascend_home_path=DIR: this process's
// CANN, found as a user's is, through $ASCEND_HOME_PATH alone.
int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  constexpr std::string_view kHome = "--ascend_home_path=";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.substr(0, kHome.size()) != kHome) {
      std::fprintf(stderr, "%s: unknown argument %s (expected %sDIR)\n", argv[0], argv[i], kHome.data());
      return 2;
    }
    setenv("ASCEND_HOME_PATH", argv[i] + kHome.size(), 1);
    for (const char* other : {"ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_CUSTOM_OPP_PATH"})
      unsetenv(other);
  }
  return RUN_ALL_TESTS();
}
