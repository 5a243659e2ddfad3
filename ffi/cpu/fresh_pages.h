// Large XLA results arrive in newly mapped memory, and faulting it in 4 KiB
// pages on first write costs more than the kernel's arithmetic (a 64 MiB
// float32 result: 16384 faults). Asking for transparent huge pages on the
// buffer's 2 MiB-aligned interior makes that 32 faults; the kernel's
// threads then fault separate huge pages at the same time.
#ifndef JAX_ASCEND_SILU_FFI_CPU_FRESH_PAGES_H_
#define JAX_ASCEND_SILU_FFI_CPU_FRESH_PAGES_H_

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace jas::ffi {

// Below this, results usually come from the allocator's reused heap memory.
inline constexpr size_t kHugePageAdviceMinBytes = size_t{8} << 20;

// Advises huge pages for a result buffer that has not been touched yet
// (an in-place result, or one the allocator recycled, is left alone).
// Only advice: failures are ignored, and results do not depend on it.
inline void AdviseHugePagesIfFresh(void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (bytes < kHugePageAdviceMinBytes) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end <= begin) return;
  unsigned char resident = 0;
  if (mincore(reinterpret_cast<void*>(begin), 1, &resident) != 0 || (resident & 1)) return;
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace jas::ffi

#endif  // JAX_ASCEND_SILU_FFI_CPU_FRESH_PAGES_H_
