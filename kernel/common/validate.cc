// The checks of validate.h.
#include "common/validate.h"

#include <algorithm>

namespace jas {
namespace {

// One descriptor on its own: its view with strides made explicit, and its
// element count.
Status CheckView(const TensorDesc& t, StridedShape* v, int64_t* numel_out) {
  if (t.rank < 0 || t.rank > kMaxRank) return kErrParamInvalid;
  if (t.rank > 0 && t.dims == nullptr) return kErrParamNullptr;
  if (t.offset < 0 || t.storage_numel < 0) return kErrParamInvalid;
  v->rank = t.rank;
  bool empty = false;
  for (int64_t i = 0; i < t.rank; ++i) {
    if (t.dims[i] < 0) return kErrParamInvalid;
    v->dims[i] = t.dims[i];
    empty = empty || t.dims[i] == 0;
  }
  // A zero anywhere makes the tensor empty, whatever the other dims multiply to.
  int64_t numel = empty ? 0 : 1;
  for (int64_t i = 0; i < t.rank && !empty; ++i) {
    if (__builtin_mul_overflow(numel, t.dims[i], &numel)) return kErrParamInvalid;
  }
  *numel_out = numel;
  if (t.strides != nullptr) {
    for (int64_t i = 0; i < t.rank; ++i) {
      if (t.strides[i] < 0) return kErrParamInvalid;
      v->strides[i] = t.strides[i];
    }
  } else {
    RowMajorStrides(t.rank, t.dims, v->strides);
  }
  if (numel == 0) return kSuccess;
  // The last element addressed must lie inside the storage.
  int64_t last = t.offset;
  for (int64_t i = 0; i < t.rank; ++i) {
    int64_t step;
    if (__builtin_mul_overflow(t.dims[i] - 1, v->strides[i], &step) ||
        __builtin_add_overflow(last, step, &last)) {
      return kErrParamInvalid;
    }
  }
  return last < t.storage_numel ? kSuccess : kErrParamInvalid;
}

// Writes must not land twice on one element: sorted by stride, each
// dimension of size > 1 must step past everything the smaller ones span.
bool NonOverlapping(const StridedShape& v) {
  int64_t order[kMaxRank];
  int64_t n = 0;
  for (int64_t i = 0; i < v.rank; ++i) {
    if (v.dims[i] > 1) order[n++] = i;
  }
  std::sort(order, order + n, [&](int64_t a, int64_t b) { return v.strides[a] < v.strides[b]; });
  int64_t span = 1;  // elements covered by the dims so far
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = order[k];
    if (v.strides[i] < span) return false;
    if (__builtin_mul_overflow(v.strides[i], v.dims[i], &span)) return true;  // no larger stride can fit
  }
  return true;
}

}  // namespace

Status CheckOperands(const TensorDesc* grad_output, const TensorDesc* self, const TensorDesc* grad_input,
                     CheckedOperands* checked) {
  if (grad_output == nullptr || self == nullptr || grad_input == nullptr || checked == nullptr) {
    return kErrParamNullptr;
  }
  if (!IsSupported(grad_input->dtype)) return kErrParamInvalid;
  if (grad_output->dtype != grad_input->dtype || self->dtype != grad_input->dtype) return kErrParamInvalid;
  checked->dtype = grad_input->dtype;
  const TensorDesc* descs[3] = {grad_output, self, grad_input};
  for (int op = 0; op < 3; ++op) {
    if (Status s = CheckView(*descs[op], &checked->views[op], &checked->numel[op]); s != kSuccess) return s;
    checked->offsets[op] = descs[op]->offset;
  }
  // gradInput's shape must be exactly the broadcast of the two inputs' shapes.
  const StridedShape &go = checked->views[0], &x = checked->views[1], &out = checked->views[2];
  int64_t want_rank = 0, want[kMaxRank];
  if (!BroadcastShape(go.rank, go.dims, x.rank, x.dims, &want_rank, want) || want_rank != out.rank ||
      !std::equal(want, want + out.rank, out.dims)) {
    return kErrParamInvalid;
  }
  // An empty output is never written, whatever its strides, and never walked.
  if (checked->numel[2] == 0) return kSuccess;
  if (!NonOverlapping(out)) return kErrParamInvalid;
  BroadcastLoop(&go, &x, out, &checked->loop);  // cannot fail: the shapes broadcast
  return kSuccess;
}

}  // namespace jas
