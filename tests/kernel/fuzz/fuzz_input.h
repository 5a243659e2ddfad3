// Turns fuzzer bytes into choices. Exhausted input reads as zeros, and zero
// always picks the ordinary option, so short inputs describe plain valid calls
// and every hostile choice costs bytes a fuzzer can find and mutate.
#ifndef JAX_ASCEND_SILU_TESTS_KERNEL_FUZZ_FUZZ_INPUT_H_
#define JAX_ASCEND_SILU_TESTS_KERNEL_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>

namespace jas::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint64_t U64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | Byte();
    return v;
  }
  // A value in [0, n), n <= 256.
  int Below(int n) { return Byte() % n; }
  // True about once in n reads (never once the input is exhausted).
  bool Rarely(int n) { return Byte() % n == n - 1; }
  template <class T, size_t N>
  T Pick(const T (&pool)[N]) {
    return pool[Byte() % N];
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace jas::fuzz

#endif  // JAX_ASCEND_SILU_TESTS_KERNEL_FUZZ_FUZZ_INPUT_H_
