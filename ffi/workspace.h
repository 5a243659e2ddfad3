// The workspace phase 1 asks for, taken by the handler at run time from its
// platform's allocator, the same way on every platform: the handler runs
// phase 1 once per call, and nothing about the workspace is decided at trace
// time (where the Ascend size, known only to CANN at run time, could not be).
//  - accelerators: XLA's scratch allocator, released by XLA when the handler
//    returns (after the work it enqueued on the stream, which XLA orders after
//    this call);
//  - CPU: XLA's CPU FFI scratch allocator gives nothing, so the handler
//    allocates host memory for the duration of the (synchronous) call. Only a
//    broadcast x has a workspace on CPU (its s'(x), computed once).
// Memory is taken only when phase 1 asks for bytes and never handed on as
// null for a non-zero size.
#ifndef JAX_ASCEND_SILU_FFI_WORKSPACE_H_
#define JAX_ASCEND_SILU_FFI_WORKSPACE_H_

#include <cstdint>
#include <memory>
#include <new>
#include <string>

#include "xla/ffi/api/ffi.h"

namespace jas::ffi {

namespace xffi = ::xla::ffi;

// Host workspaces: generous enough for vector loads on any processor.
inline constexpr size_t kWorkspaceAlignment = 512;

// What the scratch allocator is asked for: XLA's XLA_FFI_DeviceMemory_Allocate
// refuses any alignment above 16 (xla/ffi/ffi_api.cc), and then the handler
// would have no workspace at all. Device allocators behind it (cudaMalloc,
// XLA's BFC allocator) align blocks to 256 bytes or more anyway.
inline constexpr size_t kScratchAlignment = 16;

// `bytes` (> 0) from the scratch allocator, or null when it has none to give.
inline void* ScratchAllocate(xffi::ScratchAllocator& scratch, uint64_t bytes) {
  const auto p = scratch.Allocate(static_cast<size_t>(bytes), kScratchAlignment);
  return p.has_value() ? *p : nullptr;
}

inline xffi::Error WorkspaceError(uint64_t bytes, const char* from = "device workspace from XLA's scratch allocator") {
  return xffi::Error(xffi::ErrorCode::kResourceExhausted,
                     "jax_ascend_silu: could not allocate " + std::to_string(bytes) + " bytes of " + from);
}

// *out = a workspace of `bytes`, or null when `bytes` is 0.
inline xffi::Error AllocateWorkspace(xffi::ScratchAllocator& scratch, uint64_t bytes, void** out) {
  *out = nullptr;
  if (bytes == 0) return xffi::Error::Success();
  *out = ScratchAllocate(scratch, bytes);
  return *out != nullptr ? xffi::Error::Success() : WorkspaceError(bytes);
}

struct AlignedFree {
  void operator()(void* p) const { ::operator delete(p, std::align_val_t{kWorkspaceAlignment}); }
};
using HostWorkspace = std::unique_ptr<void, AlignedFree>;

// CPU: *out owns `bytes` of host memory, or nothing when `bytes` is 0.
inline xffi::Error AllocateHostWorkspace(uint64_t bytes, HostWorkspace* out) {
  out->reset();
  if (bytes == 0) return xffi::Error::Success();
  out->reset(::operator new(static_cast<size_t>(bytes), std::align_val_t{kWorkspaceAlignment}, std::nothrow));
  return *out != nullptr ? xffi::Error::Success() : WorkspaceError(bytes, "host workspace");
}

}  // namespace jas::ffi

#endif  // JAX_ASCEND_SILU_FFI_WORKSPACE_H_
