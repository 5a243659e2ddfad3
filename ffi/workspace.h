// Device workspace from XLA's scratch allocator, for the accelerator handlers.
// Memory is taken only when phase 1 asks for bytes, never handed on as null
// for a non-zero size, and released by XLA when the handler returns (after the
// work it enqueued on the stream, which XLA orders after this call).
#ifndef JAX_ASCEND_SILU_FFI_WORKSPACE_H_
#define JAX_ASCEND_SILU_FFI_WORKSPACE_H_

#include <cstdint>
#include <string>

#include "xla/ffi/api/ffi.h"

namespace jas::ffi {

namespace xffi = ::xla::ffi;

// Generous enough for vector loads on any device this package targets.
inline constexpr size_t kWorkspaceAlignment = 512;

// `bytes` (> 0) from the scratch allocator, or null when it has none to give.
inline void* ScratchAllocate(xffi::ScratchAllocator& scratch, uint64_t bytes) {
  const auto p = scratch.Allocate(static_cast<size_t>(bytes), kWorkspaceAlignment);
  return p.has_value() ? *p : nullptr;
}

inline xffi::Error WorkspaceError(uint64_t bytes) {
  return xffi::Error(xffi::ErrorCode::kResourceExhausted,
                     "jax_ascend_silu: could not allocate " + std::to_string(bytes) +
                         " bytes of device workspace from XLA's scratch allocator");
}

// *out = a workspace of `bytes`, or null when `bytes` is 0.
inline xffi::Error AllocateWorkspace(xffi::ScratchAllocator& scratch, uint64_t bytes, void** out) {
  *out = nullptr;
  if (bytes == 0) return xffi::Error::Success();
  *out = ScratchAllocate(scratch, bytes);
  return *out != nullptr ? xffi::Error::Success() : WorkspaceError(bytes);
}

}  // namespace jas::ffi

#endif  // JAX_ASCEND_SILU_FFI_WORKSPACE_H_
