// The kernel's fuzz target (LLVMFuzzerTestOneInput) and its running tallies,
// shared by libFuzzer and the standalone driver.
#ifndef JAX_ASCEND_SILU_TESTS_KERNEL_FUZZ_FUZZ_TARGET_H_
#define JAX_ASCEND_SILU_TESTS_KERNEL_FUZZ_FUZZ_TARGET_H_

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace jas::fuzz {

struct Tallies {
  int64_t cases = 0;
  int64_t phase1_success = 0;
  int64_t phase1_null = 0;     // 161001
  int64_t phase1_invalid = 0;  // 161002
  int64_t phase2_calls = 0;    // on real buffers or with null data, any status
  int64_t phase2_checked = 0;  // successful runs whose every element was checked
  int64_t repeat_runs = 0;     // extra runs of repeatable executors
  int64_t elements_checked = 0;
};

const Tallies& GetTallies();

}  // namespace jas::fuzz

#endif  // JAX_ASCEND_SILU_TESTS_KERNEL_FUZZ_FUZZ_TARGET_H_
