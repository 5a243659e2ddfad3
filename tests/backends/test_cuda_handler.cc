// The CUDA handler's declared traits, read the way XLA reads them (through
// tests/ffi_harness): a call frame carrying the metadata extension makes the
// handler report its API version and traits instead of running (no GPU needed).
#include <gtest/gtest.h>

#include "ffi_harness.h"
#include "handlers.h"

namespace {

TEST(cuda_handler, declares_command_buffer_compatibility) {
  const ffi_harness::Metadata m = ffi_harness::QueryMetadata(&JaxAscendSiluGradCuda);
  ASSERT_TRUE(m.outcome.ok) << m.outcome.message;
  EXPECT_EQ(m.major_version, XLA_FFI_API_MAJOR);
  EXPECT_EQ(m.minor_version, XLA_FFI_API_MINOR);
  // XLA captures the call into a CUDA graph (command buffer) only with this bit.
  EXPECT_TRUE((m.traits & XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE) != 0) << "traits = " << m.traits;
  EXPECT_EQ(ffi_harness::Surprises(), std::vector<std::string>{});
}

}  // namespace
