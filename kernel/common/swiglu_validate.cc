// SwiGluGrad's phase-1 checks (swiglu_grad.h), shared by every backend.
#include <cstdint>
#include <string>
#include <utility>

#include "common/shape_string.h"
#include "swiglu_grad.h"

namespace jas {
namespace {

int64_t DtypeBytes(DataType t) { return FindDtype(t)->bytes; }

std::string Describe(const char* name, const TensorDesc& d) {
  return std::string(name) + " " + ShapeString(DtypeName(d.dtype), d.dims, d.rank);
}

Status Refuse(Status status, std::string* why, std::string text) {
  if (why != nullptr) *why = std::move(text);
  return status;
}

// One operand on its own: present, a supported dtype, rank within `max_rank`,
// non-negative dims, dense row-major, within its storage, not empty.
Status CheckOne(const char* name, const TensorDesc* d, int64_t min_rank, int64_t* numel, std::string* why) {
  if (d == nullptr) return Refuse(kErrParamNullptr, why, std::string(name) + " is null");
  if (d->rank < min_rank || d->rank > kMaxRank) {
    return Refuse(kErrParamInvalid, why,
                  std::string(name) + " has " + std::to_string(d->rank) + " dimensions; SwiGluGrad takes " +
                      std::to_string(min_rank) + " to " + std::to_string(kMaxRank) + ": reshape it");
  }
  if (d->rank > 0 && d->dims == nullptr) return Refuse(kErrParamNullptr, why, std::string(name) + " has null dims");
  if (!IsSupported(d->dtype)) {
    return Refuse(kErrParamInvalid, why,
                  Describe(name, *d) + ": SwiGluGrad takes " + DtypeNames() + "; cast it");
  }
  int64_t n = 1, stride = 1;
  for (int64_t i = d->rank - 1; i >= 0; --i) {
    if (d->dims[i] < 0) return Refuse(kErrParamInvalid, why, Describe(name, *d) + " has a negative dimension");
    if (d->strides != nullptr && d->dims[i] > 1 && d->strides[i] != stride) {
      return Refuse(kErrParamInvalid, why,
                    Describe(name, *d) + " is not a dense row-major view; SwiGluGrad takes only those: copy it");
    }
    if (d->dims[i] != 0 && n > INT64_MAX / 4 / d->dims[i]) {
      return Refuse(kErrParamInvalid, why, Describe(name, *d) + " has more elements than int64 addresses");
    }
    n *= d->dims[i];
    stride = n;
  }
  if (n == 0) return Refuse(kErrParamInvalid, why, Describe(name, *d) + " is empty; SwiGluGrad takes no empty tensors");
  if (d->offset < 0 || d->storage_numel < 0 || d->offset > d->storage_numel - n) {
    return Refuse(kErrParamInvalid, why, Describe(name, *d) + " reaches past its storage");
  }
  if (d->data == nullptr) return Refuse(kErrParamNullptr, why, std::string(name) + " has no data");
  *numel = n;
  return kSuccess;
}

bool SameDims(const TensorDesc& x, const TensorDesc& y) {
  if (x.rank != y.rank) return false;
  for (int64_t i = 0; i < x.rank; ++i) {
    if (x.dims[i] != y.dims[i]) return false;
  }
  return true;
}

const char* At(const TensorDesc* d) {
  return static_cast<const char*>(d->data) + d->offset * DtypeBytes(d->dtype);
}
char* At(void* data, const TensorDesc* d) { return static_cast<char*>(data) + d->offset * DtypeBytes(d->dtype); }

Status CheckDtypes(const TensorDesc* const* ds, const char* const* names, int count, std::string* why) {
  for (int i = 1; i < count; ++i) {
    if (ds[i]->dtype != ds[0]->dtype) {
      return Refuse(kErrParamInvalid, why,
                    Describe(names[0], *ds[0]) + " and " + Describe(names[i], *ds[i]) +
                        " differ in dtype; SwiGluGrad takes one dtype for every tensor: cast them alike");
    }
  }
  return kSuccess;
}

}  // namespace

Status CheckSwiGluPacked(const TensorDesc* y_grad, const TensorDesc* x, int64_t dim, const TensorDesc* out,
                         SwiGluLayout* layout, std::string* why) {
  if (layout == nullptr) return Refuse(kErrParamNullptr, why, "the layout to fill is null");
  int64_t n_g = 0, n_x = 0, n_o = 0;
  if (Status s = CheckOne("yGrad", y_grad, 1, &n_g, why); s != kSuccess) return s;
  if (Status s = CheckOne("x", x, 1, &n_x, why); s != kSuccess) return s;
  if (Status s = CheckOne("out", out, 1, &n_o, why); s != kSuccess) return s;
  const TensorDesc* const ds[3] = {y_grad, x, out};
  const char* const names[3] = {"yGrad", "x", "out"};
  if (Status s = CheckDtypes(ds, names, 3, why); s != kSuccess) return s;
  if (dim < -x->rank || dim >= x->rank) {
    return Refuse(kErrParamInvalid, why,
                  "dim " + std::to_string(dim) + " is out of range for " + Describe("x", *x) + ": pass one in [" +
                      std::to_string(-x->rank) + ", " + std::to_string(x->rank - 1) + "]");
  }
  const int64_t d = dim < 0 ? dim + x->rank : dim;
  if (x->dims[d] % 2 != 0) {
    return Refuse(kErrParamInvalid, why,
                  Describe("x", *x) + " has an odd size along dim " + std::to_string(d) +
                      "; SwiGLU splits it into two equal halves");
  }
  bool g_ok = y_grad->rank == x->rank;
  for (int64_t i = 0; g_ok && i < x->rank; ++i) g_ok = y_grad->dims[i] == (i == d ? x->dims[i] / 2 : x->dims[i]);
  if (!g_ok) {
    return Refuse(kErrParamInvalid, why,
                  Describe("yGrad", *y_grad) + " is not " + Describe("x", *x) + " with dim " + std::to_string(d) +
                      " halved");
  }
  if (!SameDims(*out, *x)) return Refuse(kErrParamInvalid, why, Describe("out", *out) + " is not x's shape");
  int64_t outer = 1, inner = x->dims[d] / 2;
  for (int64_t i = 0; i < d; ++i) outer *= x->dims[i];
  for (int64_t i = d + 1; i < x->rank; ++i) inner *= x->dims[i];
  *layout = SwiGluLayout{x->dtype, true, outer, inner, 2 * inner, At(y_grad), At(x), At(x) + inner * DtypeBytes(x->dtype),
                         At(out->data, out), At(out->data, out) + inner * DtypeBytes(x->dtype)};
  return kSuccess;
}

Status CheckSwiGluPair(const TensorDesc* y_grad, const TensorDesc* a, const TensorDesc* b, const TensorDesc* grad_a,
                       const TensorDesc* grad_b, SwiGluLayout* layout, std::string* why) {
  if (layout == nullptr) return Refuse(kErrParamNullptr, why, "the layout to fill is null");
  const TensorDesc* const ds[5] = {y_grad, a, b, grad_a, grad_b};
  const char* const names[5] = {"yGrad", "a", "b", "gradA", "gradB"};
  int64_t n = 0;
  for (int i = 0; i < 5; ++i) {
    if (Status s = CheckOne(names[i], ds[i], 0, &n, why); s != kSuccess) return s;
  }
  if (Status s = CheckDtypes(ds, names, 5, why); s != kSuccess) return s;
  for (int i = 1; i < 5; ++i) {
    if (!SameDims(*ds[i], *y_grad)) {
      return Refuse(kErrParamInvalid, why,
                    Describe(names[i], *ds[i]) + " and " + Describe("yGrad", *y_grad) +
                        " differ in shape; the pair form takes one shape for every tensor: broadcast them first");
    }
  }
  *layout = SwiGluLayout{y_grad->dtype, false, 1, n, n, At(y_grad), At(a), At(b), At(grad_a->data, grad_a),
                         At(grad_b->data, grad_b)};
  return kSuccess;
}

}  // namespace jas
