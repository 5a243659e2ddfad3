// The test binary replaces the global operator new/delete to count live
// allocations (a leak check that needs no sanitizer) and to make a chosen
// allocation fail (to reach the kernel's out-of-memory paths).
#ifndef JAX_ASCEND_SILU_TESTS_KERNEL_ALLOC_COUNTER_H_
#define JAX_ASCEND_SILU_TESTS_KERNEL_ALLOC_COUNTER_H_

#include <cstdint>

namespace jas::test {

// Blocks from operator new not yet deleted, all threads together.
int64_t LiveAllocations();

// The n-th operator new call from now (n >= 1) fails: nothrow forms return
// null, the others throw std::bad_alloc. 0 disarms.
void FailAllocation(int64_t n);

}  // namespace jas::test

#endif  // JAX_ASCEND_SILU_TESTS_KERNEL_ALLOC_COUNTER_H_
