// The CUDA handlers (SiluGrad's and SwiGluGrad's), called the way XLA calls
// them (through tests/ffi_harness), on a machine without a GPU: their
// declared traits, and what they report when the launch itself fails (the
// CUDA runtime refuses every call without a driver or device, which is how
// this test makes a launch fail). The launch
// tests skip where a GPU is present: there the fake device pointers would be
// launched on (the GPU tests of tests/test_backends.py cover that machine).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda/backend.h"
#include "silu_grad.h"
#include "swiglu_grad.h"
#include "ffi_harness.h"
#include "handlers.h"

namespace {

using ffi_harness::CallFrame;
using ffi_harness::Context;
using ffi_harness::Outcome;

bool HasDevice() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(cuda_handler, declares_command_buffer_compatibility) {
  for (XLA_FFI_Handler* handler : {&JaxAscendSiluGradCuda, &JaxAscendSwiGluGradCuda}) {
    const ffi_harness::Metadata m = ffi_harness::QueryMetadata(handler);
    ASSERT_TRUE(m.outcome.ok) << m.outcome.message;
    EXPECT_EQ(m.major_version, XLA_FFI_API_MAJOR);
    EXPECT_EQ(m.minor_version, XLA_FFI_API_MINOR);
    // XLA captures the call into a CUDA graph (command buffer) only with this bit.
    EXPECT_TRUE((m.traits & XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE) != 0) << "traits = " << m.traits;
  }
  EXPECT_EQ(ffi_harness::Surprises(), std::vector<std::string>{});
}

// The launch's own return code is the error (no check of an error state
// before it, which would read and clear the runtime's, not XLA's), named as
// cudaLaunchKernelEx's, with the operands; nothing is allocated.
TEST(cuda_handler, a_failed_launch_reports_the_launch_calls_return_code) {
  if (HasDevice()) GTEST_SKIP() << "a GPU is present: the fake pointers would be launched on";
  for (XLA_FFI_DataType t : {XLA_FFI_DataType_F32, XLA_FFI_DataType_F16, XLA_FFI_DataType_BF16}) {
    std::vector<unsigned char> g(64 * 4), x(64 * 4), out(64 * 4);
    Context context;
    CallFrame frame(context);
    frame.Arg(t, {64}, g.data()).Arg(t, {64}, x.data()).Ret(t, {64}, out.data());
    const Outcome o = ffi_harness::Call(&JaxAscendSiluGradCuda, frame);
    EXPECT_FALSE(o.ok);
    EXPECT_EQ(o.code, XLA_FFI_Error_Code_INTERNAL) << o.message;
    EXPECT_TRUE(Contains(o.message, "jax_ascend_silu: silu_grad's kernel launch (cudaLaunchKernelEx) returned cuda"))
        << o.message;
    EXPECT_TRUE(Contains(o.message, "grad_output")) << o.message;
    EXPECT_FALSE(Contains(o.message, "earlier")) << o.message;
    EXPECT_TRUE(context.log().allocations.empty());
    EXPECT_EQ(ffi_harness::Surprises(), std::vector<std::string>{});
  }
}

// SwiGluGrad's launch failures, packed and pair, as SiluGrad's: the launch
// call's code, the operands named; nothing allocated.
TEST(cuda_handler, a_failed_swiglu_launch_reports_the_launch_calls_return_code) {
  if (HasDevice()) GTEST_SKIP() << "a GPU is present: the fake pointers would be launched on";
  std::vector<unsigned char> g(64 * 4), x(128 * 4), a(64 * 4), out(128 * 4), da(64 * 4), db(64 * 4);
  for (bool packed : {true, false}) {
    Context context;
    CallFrame frame(context);
    frame.Arg(XLA_FFI_DataType_F32, {8, 8}, g.data());
    if (packed) {
      frame.Arg(XLA_FFI_DataType_F32, {8, 16}, x.data()).Ret(XLA_FFI_DataType_F32, {8, 16}, out.data());
    } else {
      frame.Arg(XLA_FFI_DataType_F32, {8, 8}, a.data())
          .Arg(XLA_FFI_DataType_F32, {8, 8}, x.data())
          .Ret(XLA_FFI_DataType_F32, {8, 8}, da.data())
          .Ret(XLA_FFI_DataType_F32, {8, 8}, db.data());
    }
    frame.Attr("axis", int64_t{-1});
    const Outcome o = ffi_harness::Call(&JaxAscendSwiGluGradCuda, frame);
    EXPECT_FALSE(o.ok);
    EXPECT_EQ(o.code, XLA_FFI_Error_Code_INTERNAL) << o.message;
    EXPECT_TRUE(Contains(o.message, "jax_ascend_silu: SwiGluGrad's kernel launch (cudaLaunchKernelEx) returned cuda"))
        << o.message;
    EXPECT_TRUE(Contains(o.message, packed ? "x float32[8,16]" : "grad_b float32[8,8]")) << o.message;
    EXPECT_TRUE(Contains(o.message, "CUDA_LAUNCH_BLOCKING=1")) << o.message;
    EXPECT_TRUE(context.log().allocations.empty());
    EXPECT_EQ(ffi_harness::Surprises(), std::vector<std::string>{});
  }
}

// Phase 1's refusals come back before anything is launched, with or without
// a GPU: InvalidArgument naming SwiGluGrad, what is wrong and the operands.
TEST(cuda_handler, swiglu_refusals_say_what_to_do) {
  std::vector<unsigned char> buf(256 * 4);
  {  // an odd split
    Context context;
    CallFrame frame(context);
    frame.Arg(XLA_FFI_DataType_F32, {4, 3}, buf.data())
        .Arg(XLA_FFI_DataType_F32, {4, 7}, buf.data())
        .Ret(XLA_FFI_DataType_F32, {4, 7}, buf.data())
        .Attr("axis", int64_t{-1});
    const Outcome o = ffi_harness::Call(&JaxAscendSwiGluGradCuda, frame);
    EXPECT_EQ(o.code, XLA_FFI_Error_Code_INVALID_ARGUMENT) << o.message;
    EXPECT_TRUE(Contains(o.message, "SwiGluGrad phase 1 (GetWorkspaceSize) failed with ACLNN_ERR_PARAM_INVALID"))
        << o.message;
    EXPECT_TRUE(Contains(o.message, "odd size along dim 1")) << o.message;
  }
  {  // two operands, one result
    Context context;
    CallFrame frame(context);
    frame.Arg(XLA_FFI_DataType_F32, {4}, buf.data())
        .Arg(XLA_FFI_DataType_F32, {4}, buf.data())
        .Arg(XLA_FFI_DataType_F32, {4}, buf.data())
        .Ret(XLA_FFI_DataType_F32, {4}, buf.data())
        .Attr("axis", int64_t{0});
    const Outcome o = ffi_harness::Call(&JaxAscendSwiGluGradCuda, frame);
    EXPECT_EQ(o.code, XLA_FFI_Error_Code_INVALID_ARGUMENT) << o.message;
    EXPECT_TRUE(Contains(o.message, "SwiGluGrad takes (grad_output, x) -> out or (grad_output, a, b)")) << o.message;
  }
  EXPECT_EQ(ffi_harness::Surprises(), std::vector<std::string>{});
}

// Nothing is launched for an empty output, so it succeeds even here.
TEST(cuda_handler, an_empty_output_launches_nothing) {
  std::vector<unsigned char> none(16);
  Context context;
  CallFrame frame(context);
  frame.Arg(XLA_FFI_DataType_F32, {3, 0}, none.data())
      .Arg(XLA_FFI_DataType_F32, {1}, none.data())
      .Ret(XLA_FFI_DataType_F32, {3, 0}, none.data());
  const Outcome o = ffi_harness::Call(&JaxAscendSiluGradCuda, frame);
  EXPECT_TRUE(o.ok) << o.message;
}

// What the module's import records when the kernels cannot be loaded: a
// reason naming the call that failed, never a crash.
TEST(cuda_handler, loading_the_kernels_without_a_gpu_says_why) {
  for (std::string (*load)() : {&jas::SiluGradCudaLoadKernels, &jas::SwiGluGradCudaLoadKernels}) {
    if (HasDevice()) {
      EXPECT_EQ(load(), "");
      continue;
    }
    const std::string why = load();
    EXPECT_TRUE(Contains(why, "cudaGetDeviceCount returned cuda")) << why;
  }
}

}  // namespace
