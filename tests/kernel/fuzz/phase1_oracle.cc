#include "phase1_oracle.h"

#include <algorithm>
#include <vector>

namespace jas::fuzz {
namespace {

constexpr Wide kInt64Max = INT64_MAX;
// Outputs up to this many elements are checked for self-overlap exactly.
constexpr Wide kEnumerateLimit = 1 << 16;

bool KnownDtype(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

// Row-major element strides of `dims` (only for a non-empty view whose count fits int64).
void RowMajor(const int64_t* dims, int64_t rank, Wide* strides) {
  Wide s = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= std::max<int64_t>(dims[i], 1);
  }
}

struct Shape {
  bool readable = false;  // rank in range and dims present
  int64_t rank = 0;
  const int64_t* dims = nullptr;
  Wide numel = -1;
  Wide strides[kMaxRank] = {};
};

// Checks one descriptor on its own. Sets *null_dims or *invalid on a fault.
Shape JudgeView(const TensorDesc& t, bool* null_dims, bool* invalid) {
  Shape s;
  if (t.rank < 0 || t.rank > kMaxRank) {
    *invalid = true;
    return s;
  }
  if (t.offset < 0 || t.storage_numel < 0) *invalid = true;
  if (t.rank > 0 && t.dims == nullptr) {
    *null_dims = true;
    return s;
  }
  s.readable = true;
  s.rank = t.rank;
  s.dims = t.dims;
  s.numel = WideNumel(t.dims, t.rank);
  if (s.numel < 0 || s.numel > kInt64Max) *invalid = true;
  if (t.strides != nullptr) {
    for (int64_t i = 0; i < t.rank; ++i) {
      if (t.strides[i] < 0) *invalid = true;
      s.strides[i] = t.strides[i];
    }
  } else if (s.numel > 0 && s.numel <= kInt64Max) {  // an empty view never steps
    RowMajor(t.dims, t.rank, s.strides);
  }
  if (*invalid || s.numel == 0) return s;
  Wide last = t.offset;  // each term is below 2^126: stop once past int64
  for (int64_t i = 0; i < t.rank && last <= kInt64Max; ++i) last += (Wide{t.dims[i]} - 1) * s.strides[i];
  if (last >= t.storage_numel) *invalid = true;
  return s;
}

// Whether two elements of a valid, non-empty output share storage: true,
// false, or (returned as -1) not decided here.
int OutputOverlaps(const Shape& out) {
  int nontrivial = 0;
  Wide stride = 0;
  for (int64_t i = 0; i < out.rank; ++i) {
    if (out.dims[i] > 1) ++nontrivial, stride = out.strides[i];
  }
  if (nontrivial <= 1) return nontrivial == 1 && stride == 0;
  if (out.numel > kEnumerateLimit) return -1;
  std::vector<Wide> at;
  at.reserve(static_cast<size_t>(out.numel));
  std::vector<int64_t> idx(static_cast<size_t>(out.rank), 0);
  for (Wide n = 0; n < out.numel; ++n) {
    Wide a = 0;
    for (int64_t i = 0; i < out.rank; ++i) a += Wide{idx[i]} * out.strides[i];
    at.push_back(a);
    for (int64_t i = out.rank - 1; i >= 0 && ++idx[i] == out.dims[i]; --i) idx[i] = 0;
  }
  std::sort(at.begin(), at.end());
  return std::adjacent_find(at.begin(), at.end()) != at.end() ? 1 : -1;
}

}  // namespace

Wide WideNumel(const int64_t* dims, int64_t rank) {
  Wide n = 1;
  bool empty = false;
  for (int64_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) return -1;
    empty = empty || dims[i] == 0;
  }
  if (empty) return 0;
  for (int64_t i = 0; i < rank; ++i) {
    n *= dims[i];
    if (n > kInt64Max) return kInt64Max + 1;  // too many, whatever follows
  }
  return n;
}

int64_t StorageIndex(const TensorDesc& d, const int64_t* index, int64_t out_rank) {
  Wide strides[kMaxRank];
  if (d.strides == nullptr) {
    RowMajor(d.dims, d.rank, strides);
  } else {
    for (int64_t i = 0; i < d.rank; ++i) strides[i] = d.strides[i];
  }
  Wide at = d.offset;
  for (int64_t k = 0; k < d.rank; ++k) {
    if (d.dims[k] != 1) at += Wide{index[k + out_rank - d.rank]} * strides[k];
  }
  return static_cast<int64_t>(at);
}

Verdict JudgePhase1(const TensorDesc* grad_output, const TensorDesc* self, const TensorDesc* grad_input,
                    bool outputs_present) {
  Verdict v;
  if (grad_output == nullptr || self == nullptr || grad_input == nullptr || !outputs_present) {
    v.null_pointer = true;
    return v;
  }
  bool null_dims = false, invalid = false;
  const DataType t = grad_input->dtype;
  if (!KnownDtype(t) || grad_output->dtype != t || self->dtype != t) invalid = true;
  const Shape go = JudgeView(*grad_output, &null_dims, &invalid);
  const Shape x = JudgeView(*self, &null_dims, &invalid);
  const Shape out = JudgeView(*grad_input, &null_dims, &invalid);
  if (go.readable && x.readable && out.readable) {
    v.out_numel = out.numel;
    v.self_numel = x.numel;
    const int64_t r = out.rank;
    if (r != std::max(go.rank, x.rank)) {
      invalid = true;
    } else {
      for (int64_t j = 0; j < r; ++j) {
        const int64_t kg = j - (r - go.rank), kx = j - (r - x.rank);
        const int64_t g = kg < 0 ? 1 : go.dims[kg], s = kx < 0 ? 1 : x.dims[kx];
        if ((g != s && g != 1 && s != 1) || out.dims[j] != (g == 1 ? s : g)) invalid = true;
      }
    }
  }
  if (null_dims) {
    v.null_pointer = true;
    v.invalid = invalid;
    return v;
  }
  if (invalid) {
    v.invalid = true;
    return v;
  }
  const int overlap = out.numel > 0 ? OutputOverlaps(out) : 0;
  v.success = overlap != 1;
  v.invalid = overlap != 0;
  return v;
}

}  // namespace jas::fuzz
