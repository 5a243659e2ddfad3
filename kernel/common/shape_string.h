// Shapes as the error messages of every backend print them: "[3,4]", and with
// a dtype, "float32[3,4]".
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_SHAPE_STRING_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_SHAPE_STRING_H_

#include <cstdint>
#include <string>

namespace jas {

inline std::string DimsString(const int64_t* dims, int64_t rank) {
  std::string s = "[";
  for (int64_t i = 0; i < rank; ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

inline std::string ShapeString(const char* dtype_name, const int64_t* dims, int64_t rank) {
  return dtype_name + DimsString(dims, rank);
}

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_SHAPE_STRING_H_
