// The CPU handler symbol (JaxAscendSiluGradCpu) called the way XLA:CPU calls
// it, through the harness's XLA FFI API: results bit for bit equal to the
// kernel's own, on every dtype and shape, with and without an intra-op pool;
// its error paths; what it asks of the API. Since the kernel's output is
// known independently, this is also the harness's own test: a harness that
// laid out buffers, dims or dtypes wrongly could not pass it.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ffi_harness.h"
#include "handler_test_util.h"
#include "handlers.h"
#include "kernel_test_util.h"

namespace ffi_harness {
namespace {

using jas::test::Contiguous;
using jas::test::kTypes;

// XLA:CPU's intra-op pool, sized as on a small machine.
constexpr int64_t kPoolThreads = 4;

// XLA:CPU's execution context: an intra-op pool, no stream, no device memory.
Options Pooled() {
  return Options{.has_stream = false, .refuse_allocations = true, .pool_threads = kPoolThreads};
}

struct CpuRun {
  Operand grad_output, self, grad_input;
  Log log;
  Outcome outcome;
};

CpuRun RunHandler(DataType t, const Shapes& s, Options options = Pooled(), uint64_t seed = 1) {
  CpuRun r{Contiguous(t, s.grad_output), Contiguous(t, s.self), Contiguous(t, s.grad_input), {}, {}};
  jas::test::Rng rng(seed);
  jas::test::FillRandom(r.grad_output, rng, 2.0);
  jas::test::FillRandom(r.self, rng, 6.0);
  Context context(options);
  CallFrame frame(context);
  Operands(frame, r.grad_output, r.self, r.grad_input);
  r.outcome = Call(&JaxAscendSiluGradCpu, frame);
  context.WaitForPool();
  r.log = context.log();
  ExpectCleanCall(context, DtypeName(t) + std::string(" ") + ToString(s));
  return r;
}

// The kernel called directly, on the handler's inputs.
Operand KernelResult(CpuRun& r) {
  Operand out = Contiguous(r.grad_input.dtype, r.grad_input.dims);
  EXPECT_EQ(jas::test::Compute(r.grad_output, r.self, out), jas::kSuccess);
  return out;
}

// XLA:CPU's context without its pool (XLA_FFI_ThreadPool_* fail).
Options NoPool() {
  Options o = Pooled();
  o.pool_threads = 0;
  return o;
}

// A pass large enough for the kernel to share with helpers (the default
// keeps passes under 64K elements on the calling thread), self broadcast.
const Shapes kLarge = {{300, 1024}, {1024}, {300, 1024}};

TEST(cpu_handler, results_equal_the_kernel_bit_for_bit_on_every_dtype_and_shape) {
  std::vector<Shapes> shapes = EveryShape();
  shapes.push_back(kLarge);
  for (DataType t : kTypes) {
    for (const Shapes& s : shapes) {
      const std::string what = DtypeName(t) + std::string(" ") + ToString(s);
      CpuRun r = RunHandler(t, s);
      ASSERT_TRUE(r.outcome.ok) << what << ": " << CodeName(r.outcome.code) << " " << r.outcome.message;
      EXPECT_TRUE(jas::test::SameBits(r.grad_input, KernelResult(r))) << what;
      jas::test::CheckAgainstReference(r.grad_output, r.self, r.grad_input, what);  // canaries included
      // XLA:CPU offers no stream and no scratch memory worth asking for.
      EXPECT_EQ(r.log.stream_gets, 0) << what;
      EXPECT_TRUE(r.log.allocations.empty()) << what;
    }
  }
}

// The handler shares large passes with the CPU backend's own helpers
// (cpu/helpers.h), never with XLA's pool, whose size only caps the threads
// per call: a context whose pool reports no size gets the caller alone.
TEST(cpu_handler, large_results_equal_the_single_thread_result_and_leave_xla_pool_alone) {
  for (DataType t : kTypes) {
    CpuRun pooled = RunHandler(t, kLarge);
    ASSERT_TRUE(pooled.outcome.ok) << pooled.outcome.message;
    EXPECT_EQ(pooled.log.num_threads_queries, 1);
    EXPECT_EQ(pooled.log.schedules, 0);
    CpuRun alone = RunHandler(t, kLarge, NoPool());
    ASSERT_TRUE(alone.outcome.ok) << alone.outcome.message;
    EXPECT_EQ(alone.log.schedules, 0);
    EXPECT_TRUE(jas::test::SameBits(pooled.grad_input, alone.grad_input)) << DtypeName(t);
    EXPECT_TRUE(jas::test::SameBits(alone.grad_input, KernelResult(alone))) << DtypeName(t);
  }
}

TEST(cpu_handler, small_results_stay_on_the_calling_thread) {
  CpuRun r = RunHandler(DataType::kFloat32, {{3, 4}, {3, 4}, {3, 4}});
  ASSERT_TRUE(r.outcome.ok) << r.outcome.message;
  EXPECT_EQ(r.log.schedules, 0);
}

// --- errors: the kernel's phase 1, mapped to ffi::Error ----------------------------

struct Refusal {
  const char* what;
  XLA_FFI_DataType grad_output, self, grad_input;
  Shapes shapes;
  const char* because;   // the validator's reason (common/validate.h's CheckOperands, `why`)
  const char* expected;  // the operands, after it
};

constexpr XLA_FFI_DataType kF32 = XLA_FFI_DataType_F32, kF16 = XLA_FFI_DataType_F16,
                           kF64 = XLA_FFI_DataType_F64;

// clang-format off
const Refusal kRefusals[] = {
    {"float64", kF64, kF64, kF64, {{3}, {3}, {3}},
     "must share one dtype, one of float32, float16, bfloat16: cast them to it",
     "grad_output float64[3], self float64[3], grad_input float64[3]"},
    {"mixed dtypes", kF32, kF16, kF32, {{3}, {3}, {3}},
     "must share one dtype, one of float32, float16, bfloat16: cast them to it",
     "grad_output float32[3], self float16[3], grad_input float32[3]"},
    {"shapes that do not broadcast", kF32, kF32, kF32, {{3}, {4}, {4}},
     "grad_output float32[3] does not broadcast to grad_input [4]",
     "grad_output float32[3], self float32[4], grad_input float32[4]"},
    {"a result that is not the broadcast shape", kF32, kF32, kF32, {{3, 4}, {3, 4}, {4, 3}},
     "grad_output float32[3,4] does not broadcast to grad_input [4,3]",
     "grad_output float32[3,4], self float32[3,4], grad_input float32[4,3]"},
    {"rank 9", kF32, kF32, kF32, {{1, 1, 1, 1, 1, 1, 1, 1, 2}, {2}, {1, 1, 1, 1, 1, 1, 1, 1, 2}},
     "has 9 dimensions, more than the 8 SiluGrad takes: reshape it",
     "grad_input float32[1,1,1,1,1,1,1,1,2]"},
};
// clang-format on

// Room for every element at 8 bytes (float64 included), in a recognisable pattern.
constexpr unsigned char kUntouched = 0x5a;
std::vector<unsigned char> Storage(const Dims& dims) {
  return std::vector<unsigned char>(static_cast<size_t>(jas::test::Numel(dims)) * 8 + 8, kUntouched);
}

TEST(cpu_handler, invalid_operands_are_invalid_argument_errors_naming_them) {
  for (const Refusal& c : kRefusals) {
    std::vector<unsigned char> g = Storage(c.shapes.grad_output), x = Storage(c.shapes.self),
                               out = Storage(c.shapes.grad_input);
    Context context(Pooled());
    CallFrame frame(context);
    frame.Arg(c.grad_output, c.shapes.grad_output, g.data())
        .Arg(c.self, c.shapes.self, x.data())
        .Ret(c.grad_input, c.shapes.grad_input, out.data());
    const Outcome o = Call(&JaxAscendSiluGradCpu, frame);
    EXPECT_FALSE(o.ok) << c.what;
    EXPECT_EQ(o.code, XLA_FFI_Error_Code_INVALID_ARGUMENT) << c.what << ": " << o.message;
    EXPECT_TRUE(Contains(o.message,
                         "jax_ascend_silu: SiluGrad phase 1 (GetWorkspaceSize) failed with "
                         "ACLNN_ERR_PARAM_INVALID (161002): "))
        << c.what << ": " << o.message;
    EXPECT_TRUE(Contains(o.message, c.because)) << c.what << ": " << o.message;
    EXPECT_TRUE(Contains(o.message, "; got grad_output ")) << c.what << ": " << o.message;
    EXPECT_TRUE(Contains(o.message, c.expected)) << c.what << ": " << o.message;
    EXPECT_EQ(out, Storage(c.shapes.grad_input)) << c.what << ": the result was written";
    ExpectCleanCall(context, c.what);
  }
}

// --- what the Bind chain checks before the handler runs -----------------------------

TEST(cpu_handler, a_frame_of_the_wrong_size_arity_or_stage_is_refused_by_the_binding) {
  const DataType f32 = DataType::kFloat32;
  Operand g = Contiguous(f32, {3}), x = Contiguous(f32, {3}), out = Contiguous(f32, {3});
  Context context(Pooled());
  {
    CallFrame one_arg(context);
    one_arg.Arg(XLA_FFI_DataType_F32, {3}, g.bytes.data()).Ret(XLA_FFI_DataType_F32, {3}, out.bytes.data());
    const Outcome o = Call(&JaxAscendSiluGradCpu, one_arg);
    EXPECT_EQ(o.code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
    EXPECT_TRUE(Contains(o.message, "Wrong number of arguments: expected 2 but got 1")) << o.message;
  }
  {
    CallFrame two_rets(context);
    Operands(two_rets, g, x, out).Ret(XLA_FFI_DataType_F32, {3}, g.bytes.data());
    const Outcome o = Call(&JaxAscendSiluGradCpu, two_rets);
    EXPECT_EQ(o.code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
    EXPECT_TRUE(Contains(o.message, "Wrong number of results: expected 1 but got 2")) << o.message;
  }
  // XLA runs the bound stage only; the handler binds execution alone.
  for (XLA_FFI_ExecutionStage stage : {XLA_FFI_ExecutionStage_INSTANTIATE, XLA_FFI_ExecutionStage_PREPARE,
                                       XLA_FFI_ExecutionStage_INITIALIZE}) {
    CallFrame early(context, stage);
    Operands(early, g, x, out);
    const Outcome o = Call(&JaxAscendSiluGradCpu, early);
    EXPECT_EQ(o.code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
    EXPECT_TRUE(Contains(o.message, "Wrong execution stage")) << o.message;
  }
  {  // a runtime whose headers have a larger call frame
    CallFrame other_headers(context);
    Operands(other_headers, g, x, out).StructSize(XLA_FFI_CallFrame_STRUCT_SIZE + sizeof(void*));
    const Outcome o = Call(&JaxAscendSiluGradCpu, other_headers);
    EXPECT_EQ(o.code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
    EXPECT_TRUE(Contains(o.message, "Unexpected XLA_FFI_CallFrame size: expected " +
                                        std::to_string(XLA_FFI_CallFrame_STRUCT_SIZE) + " got " +
                                        std::to_string(XLA_FFI_CallFrame_STRUCT_SIZE + sizeof(void*))))
        << o.message;
  }
  for (int64_t i = 0; i < out.StorageSize(); ++i) ASSERT_EQ(out.Bits(i), jas::test::Sentinel(f32));
  ExpectCleanCall(context, "wrong frames");
}

TEST(cpu_handler, attributes_in_the_frame_are_ignored) {
  const DataType f32 = DataType::kFloat32;
  Operand g = Contiguous(f32, {5}), x = Contiguous(f32, {5}), out = Contiguous(f32, {5});
  jas::test::Rng rng(7);
  jas::test::FillRandom(g, rng, 2.0);
  jas::test::FillRandom(x, rng, 6.0);
  Context context(Pooled());
  CallFrame frame(context);
  Operands(frame, g, x, out).Attr("zeta", int64_t{3}).Attr("alpha", std::string("unused"));
  const Outcome o = Call(&JaxAscendSiluGradCpu, frame);
  ASSERT_TRUE(o.ok) << o.message;
  jas::test::CheckAgainstReference(g, x, out, "with attributes");
  ExpectCleanCall(context, "with attributes");
}

TEST(cpu_handler, metadata_reports_the_headers_api_version_and_no_traits) {
  const Metadata m = QueryMetadata(&JaxAscendSiluGradCpu);
  ASSERT_TRUE(m.outcome.ok) << m.outcome.message;
  EXPECT_EQ(m.major_version, XLA_FFI_API_MAJOR);
  EXPECT_EQ(m.minor_version, XLA_FFI_API_MINOR);
  EXPECT_EQ(m.traits, XLA_FFI_Handler_Traits{0});
  EXPECT_EQ(m.state_type_id.type_id, XLA_FFI_UNKNOWN_TYPE_ID.type_id);  // stateless
  EXPECT_EQ(Surprises(), std::vector<std::string>{});
  EXPECT_EQ(LiveErrors(), 0);
}

}  // namespace
}  // namespace ffi_harness
