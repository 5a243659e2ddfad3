// The element types SiluGrad computes: the one C++ table of them. The CPU
// kernel, the CUDA planner, the FFI handlers (XLA's types map onto it in
// ffi/tensor_desc.h), the Ascend glue and the tests read it; adding a dtype
// starts here (and in jax_ascend_silu/operands.py, the Python table).
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_DTYPE_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_DTYPE_H_

#include <cstdint>
#include <string_view>

namespace jas {

// Numbered as aclDataType, so the Ascend glue hands them to CANN unchanged.
enum class DataType : int32_t { kFloat32 = 0, kFloat16 = 1, kBFloat16 = 27 };

struct DtypeInfo {
  DataType type;
  int64_t bytes;     // element size
  const char* name;  // as NumPy and JAX spell it
};

inline constexpr DtypeInfo kDtypes[] = {
    {DataType::kFloat32, 4, "float32"},
    {DataType::kFloat16, 2, "float16"},
    {DataType::kBFloat16, 2, "bfloat16"},
};

// The table's entry for `t`, or null when the kernel does not compute `t`.
constexpr const DtypeInfo* FindDtype(DataType t) {
  for (const DtypeInfo& d : kDtypes) {
    if (d.type == t) return &d;
  }
  return nullptr;
}

// The entry named `name` ("float32", ...), or null.
constexpr const DtypeInfo* FindDtype(std::string_view name) {
  for (const DtypeInfo& d : kDtypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

constexpr bool IsSupported(DataType t) { return FindDtype(t) != nullptr; }
// 0 for an unsupported type (phase 1 rejects those first).
constexpr int64_t ElementBytes(DataType t) { return IsSupported(t) ? FindDtype(t)->bytes : 0; }
constexpr const char* DtypeName(DataType t) { return IsSupported(t) ? FindDtype(t)->name : "an unsupported type"; }

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_DTYPE_H_
