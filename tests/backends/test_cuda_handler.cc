// The CUDA handler's declared traits, read the way XLA reads them: a call
// frame carrying the metadata extension makes the handler report its API
// version and traits instead of running (no GPU needed).
#include <cstdint>

#include <gtest/gtest.h>

#include "handlers.h"
#include "xla/ffi/api/c_api.h"

namespace {

TEST(cuda_handler, declares_command_buffer_compatibility) {
  XLA_FFI_Metadata metadata{};
  metadata.struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
  XLA_FFI_Metadata_Extension extension{};
  extension.extension_base.struct_size = XLA_FFI_Metadata_Extension_STRUCT_SIZE;
  extension.extension_base.type = XLA_FFI_Extension_Metadata;
  extension.metadata = &metadata;
  XLA_FFI_CallFrame frame{};
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.extension_start = &extension.extension_base;
  ASSERT_TRUE(JaxAscendSiluGradCuda(&frame) == nullptr);
  EXPECT_EQ(metadata.api_version.major_version, XLA_FFI_API_MAJOR);
  EXPECT_EQ(metadata.api_version.minor_version, XLA_FFI_API_MINOR);
  // XLA captures the call into a CUDA graph (command buffer) only with this bit.
  EXPECT_TRUE((metadata.traits & XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE) != 0)
      << "traits = " << metadata.traits;
}

}  // namespace
