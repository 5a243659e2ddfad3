// Shared helpers for the kernel tests: strided operands in their own storage,
// a float64 reference for s'(x), ulp errors, and a naive loop that checks a
// kernel result element by element.
#ifndef JAX_ASCEND_SILU_TESTS_KERNEL_KERNEL_TEST_UTIL_H_
#define JAX_ASCEND_SILU_TESTS_KERNEL_KERNEL_TEST_UTIL_H_

#include <array>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cpu/testing.h"
#include "silu_grad.h"
#include "swiglu_grad.h"

namespace jas::test {

using Dims = std::vector<int64_t>;
using Rng = std::mt19937_64;

// Every dtype of the kernel's table (kernel/common/dtype.h).
inline constexpr auto kTypes = [] {
  std::array<DataType, std::size(kDtypes)> types{};
  for (size_t i = 0; i < types.size(); ++i) types[i] = kDtypes[i].type;
  return types;
}();
// The instruction sets this processor runs, kScalar first.
std::vector<Isa> SupportedIsas();

float ToFloat(DataType t, uint32_t bits);
uint32_t FromFloat(DataType t, float v);  // round to nearest even

int64_t Numel(const Dims& dims);
Dims BroadcastShape(const Dims& a, const Dims& b);
std::string ToString(const Dims& dims);
// Random input dims broadcasting to a random shape of rank `rank` (dims up
// to max_dim): each takes a suffix of the shape with some dims set to 1.
void RandomBroadcastPair(Rng& rng, int64_t rank, int64_t max_dim, Dims* g, Dims* x);

// Spare elements past storage_numel in every operand: nothing may write there.
inline constexpr int64_t kCanary = 16;

// A strided view (dims, element strides, storage offset) into storage owned by
// the operand itself. `Desc()` describes it to the kernel.
struct Operand {
  DataType dtype = DataType::kFloat32;
  Dims dims;
  Dims strides;
  int64_t offset = 0;
  int64_t storage_numel = 0;
  bool null_strides = false;  // describe with strides == nullptr (row-major implied)
  std::vector<unsigned char> bytes;  // (storage_numel + kCanary) elements

  TensorDesc Desc();
  uint32_t Bits(int64_t i) const;
  void SetBits(int64_t i, uint32_t bits);
  double Value(int64_t i) const { return ToFloat(dtype, Bits(i)); }
  int64_t StorageSize() const { return storage_numel + kCanary; }
  // Storage index of the view element that out-index `idx` (of a possibly
  // higher rank) reads under right-aligned broadcasting.
  int64_t Locate(const Dims& idx) const;
};

// Operands are created with every storage element set to Sentinel(dtype).
// Row-major, offset 0, storage exactly the elements.
Operand Contiguous(DataType t, const Dims& dims);
// Random permuted strides with gaps, a random offset, storage just large
// enough. Inputs may also get stride-0 or overlapping dimensions; outputs
// never overlap themselves.
Operand RandomView(DataType t, const Dims& dims, Rng& rng, bool output);
// Same dims and logical values as `v`, in a fresh row-major operand.
Operand CompactCopy(const Operand& v);

void FillRandom(Operand& op, Rng& rng, double scale);  // the whole storage
inline constexpr uint32_t kSentinelF32 = 0x7fc0beefu;   // quiet NaNs the kernel never makes
inline constexpr uint32_t kSentinelHalf = 0x7e5au;      // (its NaNs come only from NaN inputs)
void FillSentinel(Operand& op);
uint32_t Sentinel(DataType t);

// Calls fn(idx) for every index of `dims`, in row-major order.
void ForEachIndex(const Dims& dims, const std::function<void(const Dims&)>& fn);

// The float64 reference (as tests/reference.py): s'(x), and the error of a
// result in ulps of `t` at the exact value (NaN/inf aware; float32 errors
// below 2^-100 forgiven).
double SiluDerivative(double x);
double UlpError(double result, double exact, DataType t);
double MaxUlp(DataType t);  // 4 for float32, 1 for float16/bfloat16

struct RunOptions {
  Isa isa = Isa::kAuto;
  int64_t chunk_elements = 0;           // 0: the kernel's default
  int64_t threads = 1;                  // counting the caller
  const Parallel* parallel = nullptr;   // used instead of `threads` std::threads when set
};

// Both phases with a workspace of exactly the planned size.
Status Compute(Operand& grad_output, Operand& self, Operand& grad_input, const RunOptions& options = {},
               uint64_t* workspace_bytes = nullptr);

// The naive check: every element of grad_input's view within MaxUlp of the
// reference, and every other storage element (canary included) untouched.
// Returns the largest ulp error seen. Defined in reference_check.cc.
double CheckAgainstReference(const Operand& grad_output, const Operand& self, const Operand& grad_input,
                             const std::string& context);

// Whether two operands of equal dims hold bitwise identical view elements.
bool SameBits(const Operand& a, const Operand& b);

// A gradient from a hash of i: sign, significand and an exponent in [-4, 3];
// the same i gives the same value on every run and machine.
float HashedGrad(uint64_t i);

}  // namespace jas::test

#endif  // JAX_ASCEND_SILU_TESTS_KERNEL_KERNEL_TEST_UTIL_H_
