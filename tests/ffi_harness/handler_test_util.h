// What the handler tests share: kernel operands (tests/kernel) laid out as
// XLA buffers in a harness call frame, the shapes every platform is run on,
// and the checks every call ends with.
#ifndef JAX_ASCEND_SILU_TESTS_FFI_HARNESS_HANDLER_TEST_UTIL_H_
#define JAX_ASCEND_SILU_TESTS_FFI_HARNESS_HANDLER_TEST_UTIL_H_

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ffi_harness.h"
#include "kernel_test_util.h"
#include "tensor_desc.h"

namespace ffi_harness {

using jas::DataType;
using jas::test::Dims;
using jas::test::Operand;

// The XLA type of a kernel dtype (ffi/tensor_desc.h's table, read backwards).
inline XLA_FFI_DataType XlaType(DataType t) {
  for (const auto& entry : jas::ffi::kXlaTypes) {
    if (entry.kernel == t) return static_cast<XLA_FFI_DataType>(entry.xla);
  }
  ADD_FAILURE() << "no XLA type for kernel dtype " << static_cast<int>(t);
  return XLA_FFI_DataType_INVALID;
}

// grad_output and self as the two arguments, grad_input as the result.
inline CallFrame& Operands(CallFrame& frame, Operand& grad_output, Operand& self, Operand& grad_input) {
  return frame.Arg(XlaType(grad_output.dtype), grad_output.dims, grad_output.bytes.data())
      .Arg(XlaType(self.dtype), self.dims, self.bytes.data())
      .Ret(XlaType(grad_input.dtype), grad_input.dims, grad_input.bytes.data());
}

// One call's operand shapes: grad_output and self broadcast to grad_input.
struct Shapes {
  Dims grad_output, self, grad_input;
};

inline std::string ToString(const Shapes& s) {
  return "grad_output " + jas::test::ToString(s.grad_output) + ", self " + jas::test::ToString(s.self) +
         ", grad_input " + jas::test::ToString(s.grad_input);
}

// Equal shapes, each operand broadcast, both, scalars, size-1 dims, empty
// results (with and without broadcasting), rank 8.
inline const std::vector<Shapes>& EveryShape() {
  static const std::vector<Shapes> shapes = {
      {{3, 4}, {3, 4}, {3, 4}},
      {{4}, {3, 4}, {3, 4}},
      {{3, 4}, {4}, {3, 4}},
      {{3, 1}, {1, 4}, {3, 4}},
      {{2, 1, 3}, {1, 1, 3}, {2, 1, 3}},
      {{}, {}, {}},
      {{}, {2, 3}, {2, 3}},
      {{2, 3}, {}, {2, 3}},
      {{0, 4}, {0, 4}, {0, 4}},
      {{1, 0}, {3, 1}, {3, 0}},
      {{2, 1, 2, 1, 2, 1, 2, 3}, {1, 3, 1, 2, 1, 2, 1, 3}, {2, 3, 2, 2, 2, 2, 2, 3}},
  };
  return shapes;
}

// What every call through the harness must leave behind, whatever it
// returned: no API misuse, every error destroyed, every allocation freed.
inline void ExpectCleanCall(const Context& context, const std::string& what) {
  EXPECT_EQ(Surprises(), std::vector<std::string>{}) << what;
  EXPECT_EQ(LiveErrors(), 0) << what;
  EXPECT_EQ(context.live_allocations(), 0) << what;
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace ffi_harness

#endif  // JAX_ASCEND_SILU_TESTS_FFI_HARNESS_HANDLER_TEST_UTIL_H_
