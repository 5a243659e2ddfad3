// A tensor descriptor over fake device memory, for the CUDA backends' phase 1
// tests (nothing reads the data: phase 1 never touches the device).
#ifndef JAX_ASCEND_SILU_TESTS_BACKENDS_FAKE_DESC_H_
#define JAX_ASCEND_SILU_TESTS_BACKENDS_FAKE_DESC_H_

#include <cstdint>
#include <vector>

#include "silu_grad.h"

namespace jas::test {

struct Desc {
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;  // empty: row-major
  jas::DataType dtype = jas::DataType::kFloat32;
  int64_t offset = 0;
  int64_t storage = -1;  // -1: what the view needs, and generously more
  uintptr_t data = 0x1000;  // a fake device address (0: none)

  jas::TensorDesc get() const {
    jas::TensorDesc d;
    d.dtype = dtype;
    d.rank = static_cast<int64_t>(dims.size());
    d.dims = dims.data();
    d.strides = strides.empty() ? nullptr : strides.data();
    d.offset = offset;
    int64_t n = 1;
    for (int64_t v : dims) n *= v;
    d.storage_numel = storage >= 0 ? storage : offset + n * 64;  // generous unless told
    d.data = reinterpret_cast<void*>(data);                   // never dereferenced here
    return d;
  }
};

}  // namespace jas::test

#endif  // JAX_ASCEND_SILU_TESTS_BACKENDS_FAKE_DESC_H_
