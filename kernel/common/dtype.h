// The element types SiluGrad computes: the one C++ table of them. The
// validator, the CPU and CUDA kernels (their per-dtype tables and dispatch are
// generated from it), the FFI handlers (XLA's types map onto it in
// ffi/tensor_desc.h), the Ascend glue and the tests read it; adding a dtype
// starts here (and in jax_ascend_silu/operands.py, the Python table).
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_DTYPE_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

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

inline constexpr int kNumDtypes = static_cast<int>(std::size(kDtypes));

// `t`'s position in kDtypes (tables with an entry per dtype follow its
// order), or -1.
constexpr int DtypeIndex(DataType t) {
  for (int i = 0; i < kNumDtypes; ++i) {
    if (kDtypes[i].type == t) return i;
  }
  return -1;
}

// How each dtype's elements are stored (the half types as their 16 bits).
template <DataType T>
struct DtypeStorage;
template <>
struct DtypeStorage<DataType::kFloat32> { using type = float; };
template <>
struct DtypeStorage<DataType::kFloat16> { using type = uint16_t; };
template <>
struct DtypeStorage<DataType::kBFloat16> { using type = uint16_t; };

template <std::size_t... I>
constexpr bool StorageMatchesTable(std::index_sequence<I...>) {
  return ((sizeof(typename DtypeStorage<kDtypes[I].type>::type) == kDtypes[I].bytes) && ...);
}
static_assert(StorageMatchesTable(std::make_index_sequence<kNumDtypes>{}), "a dtype's storage is not its size");

// Calls fn.template operator()<T>() for the DataType T equal to `t` (a
// switch over the table); false, calling nothing, when `t` is not in it.
template <class Fn, std::size_t... I>
constexpr bool VisitDtypeOf(DataType t, Fn& fn, std::index_sequence<I...>) {
  return ((kDtypes[I].type == t ? (fn.template operator()<kDtypes[I].type>(), true) : false) || ...);
}
template <class Fn>
constexpr bool VisitDtype(DataType t, Fn&& fn) {
  return VisitDtypeOf(t, fn, std::make_index_sequence<kNumDtypes>{});
}
// 0 for an unsupported type (phase 1 rejects those first).
constexpr int64_t ElementBytes(DataType t) { return IsSupported(t) ? FindDtype(t)->bytes : 0; }
constexpr const char* DtypeName(DataType t) { return IsSupported(t) ? FindDtype(t)->name : "an unsupported type"; }

// "float32, float16, bfloat16", for messages; without bfloat16 for hardware
// that lacks it.
inline std::string DtypeNames(bool with_bfloat16 = true) {
  std::string s;
  for (const DtypeInfo& d : kDtypes) {
    if (d.type == DataType::kBFloat16 && !with_bfloat16) continue;
    s += (s.empty() ? "" : ", ") + std::string(d.name);
  }
  return s;
}

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_DTYPE_H_
