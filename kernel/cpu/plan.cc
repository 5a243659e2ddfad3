// Phase 1: validate the descriptors, plan the loop nest, size the workspace.
// Also the executor's lifetime calls.
#include <algorithm>
#include <new>
#include <utility>

#include "common/broadcast.h"
#include "cpu/executor.h"
#include "silu_grad.h"

namespace jas {

namespace {

bool TypeIndexOf(DataType t, TypeIndex* out) {
  switch (t) {
    case DataType::kFloat32: *out = TypeIndex::kF32; return true;
    case DataType::kFloat16: *out = TypeIndex::kF16; return true;
    case DataType::kBFloat16: *out = TypeIndex::kBF16; return true;
  }
  return false;
}

// A descriptor checked on its own, with strides made explicit.
struct View {
  int64_t rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  int64_t numel = 1;
};

Status CheckView(const TensorDesc& t, View* v) {
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
  v->numel = numel;
  if (t.strides != nullptr) {
    for (int64_t i = 0; i < t.rank; ++i) {
      if (t.strides[i] < 0) return kErrParamInvalid;
      v->strides[i] = t.strides[i];
    }
  } else {
    int64_t s = 1;
    for (int64_t i = t.rank - 1; i >= 0; --i) {
      v->strides[i] = s;
      // No overflow when numel > 0 (numel did not); an empty tensor never steps.
      if (__builtin_mul_overflow(s, std::max<int64_t>(t.dims[i], 1), &s)) s = 0;
    }
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
bool NonOverlapping(const View& v) {
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

// Drops size-1 dims and merges neighbours that are contiguous for all three
// operands, so the innermost loop is as long as possible.
void Coalesce(Loop* loop) {
  int64_t n = 0;
  for (int64_t i = 0; i < loop->rank; ++i) {
    if (loop->dims[i] == 1) continue;
    if (n > 0) {
      bool merge = true;
      for (int op = 0; op < 3; ++op) {
        int64_t span;
        merge = merge && !__builtin_mul_overflow(loop->strides[op][i], loop->dims[i], &span) &&
                loop->strides[op][n - 1] == span;
      }
      if (merge) {
        loop->dims[n - 1] *= loop->dims[i];
        for (int op = 0; op < 3; ++op) loop->strides[op][n - 1] = loop->strides[op][i];
        continue;
      }
    }
    loop->dims[n] = loop->dims[i];
    for (int op = 0; op < 3; ++op) loop->strides[op][n] = loop->strides[op][i];
    ++n;
  }
  if (n == 0) {  // a single element, or all dims 1
    loop->dims[0] = 1;
    for (int op = 0; op < 3; ++op) loop->strides[op][0] = 0;
    n = 1;
  }
  loop->rank = n;
  loop->numel = 1;
  for (int64_t i = 0; i < n; ++i) loop->numel *= loop->dims[i];
}

}  // namespace

Status SiluGradGetWorkspaceSize(const TensorDesc* grad_output, const TensorDesc* self,
                                const TensorDesc* grad_input, uint64_t* workspace_size,
                                SiluGradExecutor** executor) {
  // Outputs are cleared first, so no failure leaves a caller's variable unset.
  if (executor != nullptr) *executor = nullptr;
  if (workspace_size != nullptr) *workspace_size = 0;
  if (grad_output == nullptr || self == nullptr || grad_input == nullptr ||
      workspace_size == nullptr || executor == nullptr) {
    return kErrParamNullptr;
  }
  TypeIndex type;
  if (!TypeIndexOf(grad_input->dtype, &type)) return kErrParamInvalid;
  if (grad_output->dtype != grad_input->dtype || self->dtype != grad_input->dtype) {
    return kErrParamInvalid;
  }
  View go, x, out;
  for (auto [desc, view] : {std::pair{grad_output, &go}, {self, &x}, {grad_input, &out}}) {
    if (Status s = CheckView(*desc, view); s != kSuccess) return s;
  }
  // gradInput's shape must be exactly the broadcast of the two inputs' shapes.
  const int64_t r = out.rank;
  int64_t want_rank = 0, want[kMaxRank];
  if (!BroadcastShape(go.rank, go.dims, x.rank, x.dims, &want_rank, want) || want_rank != r ||
      !std::equal(want, want + r, out.dims)) {
    return kErrParamInvalid;
  }
  // An empty output is never written, whatever its strides.
  if (out.numel > 0 && !NonOverlapping(out)) return kErrParamInvalid;

  auto* e = new (std::nothrow) SiluGradExecutor;
  if (e == nullptr) return kErrInnerCreateExecutor;
  e->dtype = grad_input->dtype;
  e->type = type;
  e->offsets[0] = grad_output->offset;
  e->offsets[1] = self->offset;
  e->offsets[2] = grad_input->offset;
  e->grad_output = grad_output->data;
  e->self = self->data;
  e->grad_input = grad_input->data;

  if (out.numel == 0) {  // nothing to plan: phase 2 returns at once
    e->main.numel = 0;
    *executor = e;
    return kSuccess;
  }

  const int64_t elem = ElementBytes(e->dtype);
  uint64_t precompute_bytes = 0;
  e->precompute = x.numel > 0 && x.numel <= out.numel / 2 &&
                  !__builtin_mul_overflow(static_cast<uint64_t>(x.numel), uint64_t{8}, &precompute_bytes);
  Loop& m = e->main;
  m.rank = r;
  for (int64_t j = 0; j < r; ++j) {
    m.dims[j] = out.dims[j];
    m.strides[2][j] = out.strides[j];
  }
  BroadcastStrides(go.rank, go.dims, go.strides, r, out.dims, m.strides[0]);
  m.elem_bytes[0] = elem;
  m.elem_bytes[2] = elem;
  if (e->precompute) {
    // The workspace holds s'(self) in double, contiguously in self's own shape.
    Loop& p = e->pre;
    p.rank = x.rank;
    int64_t contiguous = 1;
    for (int64_t k = x.rank - 1; k >= 0; --k) {
      p.dims[k] = x.dims[k];
      p.strides[1][k] = x.strides[k];
      p.strides[2][k] = contiguous;
      contiguous *= x.dims[k];
    }
    p.elem_bytes[0] = elem;
    p.elem_bytes[1] = elem;
    p.elem_bytes[2] = 8;
    BroadcastStrides(x.rank, x.dims, p.strides[2], r, out.dims, m.strides[1]);
    m.elem_bytes[1] = 8;
    Coalesce(&p);
    e->workspace_bytes = precompute_bytes;
  } else {
    BroadcastStrides(x.rank, x.dims, x.strides, r, out.dims, m.strides[1]);
    m.elem_bytes[1] = elem;
  }
  Coalesce(&m);
  *workspace_size = e->workspace_bytes;
  *executor = e;
  return kSuccess;
}

Status SiluGradSetRepeatable(SiluGradExecutor* executor) {
  if (executor == nullptr) return kErrParamNullptr;
  executor->repeatable = true;
  return kSuccess;
}

Status SiluGradSetData(SiluGradExecutor* executor, const void* grad_output, const void* self,
                       void* grad_input) {
  if (executor == nullptr) return kErrParamNullptr;
  executor->grad_output = grad_output;
  executor->self = self;
  executor->grad_input = grad_input;
  return kSuccess;
}

Status SiluGradDestroyExecutor(SiluGradExecutor* executor) {
  if (executor == nullptr) return kErrParamNullptr;
  delete executor;
  return kSuccess;
}

Status SiluGradSetIsa(SiluGradExecutor* executor, Isa isa) {
  if (executor == nullptr) return kErrParamNullptr;
  if (!IsaSupported(isa)) return kErrParamInvalid;
  executor->isa = isa;
  return kSuccess;
}

Status SiluGradSetChunkElements(SiluGradExecutor* executor, int64_t chunk_elements) {
  if (executor == nullptr) return kErrParamNullptr;
  if (chunk_elements < 1) return kErrParamInvalid;
  executor->chunk_elements = chunk_elements;
  executor->parallel_min_elements = 0;
  return kSuccess;
}

}  // namespace jas
