// The checks of validate.h.
#include "common/validate.h"

#include <algorithm>

#include "common/shape_string.h"

namespace jas {
namespace {

// Which check CheckOperands refused the operands on, for its message (the
// status is the contract).
enum class Refusal : int32_t {
  kNone,
  kNullDescriptor,
  kDtype,     // unsupported, or not shared by all three
  kRank,      // above kMaxRank, or negative
  kNullDims,  // rank > 0 without dims
  kNegativeDim,
  kNegativeLayout,   // a negative stride, offset or storage_numel
  kPastStorage,      // the view reaches past storage_numel
  kTooManyElements,  // an element count or address past int64
  kShape,            // gradInput is not the broadcast shape of the inputs
  kOverlap,          // gradInput's elements overlap
};

std::string RefusalText(Refusal refusal, int i, const TensorDesc* const operands[3]);

// One descriptor on its own: its view with strides made explicit, and its
// element count.
Status CheckView(const TensorDesc& t, StridedShape* v, int64_t* numel_out, Refusal* why) {
  if (t.rank < 0 || t.rank > kMaxRank) return *why = Refusal::kRank, kErrParamInvalid;
  if (t.rank > 0 && t.dims == nullptr) return *why = Refusal::kNullDims, kErrParamNullptr;
  if (t.offset < 0 || t.storage_numel < 0) return *why = Refusal::kNegativeLayout, kErrParamInvalid;
  v->rank = t.rank;
  bool empty = false;
  for (int64_t i = 0; i < t.rank; ++i) {
    if (t.dims[i] < 0) return *why = Refusal::kNegativeDim, kErrParamInvalid;
    v->dims[i] = t.dims[i];
    empty = empty || t.dims[i] == 0;
  }
  // A zero anywhere makes the tensor empty, whatever the other dims multiply to.
  int64_t numel = empty ? 0 : 1;
  for (int64_t i = 0; i < t.rank && !empty; ++i) {
    if (__builtin_mul_overflow(numel, t.dims[i], &numel))
      return *why = Refusal::kTooManyElements, kErrParamInvalid;
  }
  *numel_out = numel;
  if (t.strides != nullptr) {
    for (int64_t i = 0; i < t.rank; ++i) {
      if (t.strides[i] < 0) return *why = Refusal::kNegativeLayout, kErrParamInvalid;
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
      return *why = Refusal::kTooManyElements, kErrParamInvalid;
    }
  }
  return last < t.storage_numel ? kSuccess : (*why = Refusal::kPastStorage, kErrParamInvalid);
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
                     CheckedOperands* checked, std::string* why) {
  const TensorDesc* const descs[3] = {grad_output, self, grad_input};
  // The message is built only on this path, and only where it is asked for.
  const auto refuse = [why, &descs](Status s, Refusal refusal, int op) {
    if (why != nullptr) *why = RefusalText(refusal, op, descs);
    return s;
  };
  if (checked == nullptr) {
    if (why != nullptr) *why = "the CheckedOperands to fill is null";
    return kErrParamNullptr;
  }
  for (int op = 0; op < 3; ++op) {
    if (descs[op] == nullptr) return refuse(kErrParamNullptr, Refusal::kNullDescriptor, op);
  }
  if (!IsSupported(grad_input->dtype) || grad_output->dtype != grad_input->dtype ||
      self->dtype != grad_input->dtype) {
    return refuse(kErrParamInvalid, Refusal::kDtype, -1);
  }
  checked->dtype = grad_input->dtype;
  for (int op = 0; op < 3; ++op) {
    Refusal refusal = Refusal::kNone;
    if (Status s = CheckView(*descs[op], &checked->views[op], &checked->numel[op], &refusal); s != kSuccess) {
      return refuse(s, refusal, op);
    }
    checked->offsets[op] = descs[op]->offset;
  }
  // gradInput's shape must be exactly the broadcast of the two inputs' shapes.
  const StridedShape &go = checked->views[0], &x = checked->views[1], &out = checked->views[2];
  int64_t want_rank = 0, want[kMaxRank];
  if (!BroadcastShape(go.rank, go.dims, x.rank, x.dims, &want_rank, want) || want_rank != out.rank ||
      !std::equal(want, want + out.rank, out.dims)) {
    return refuse(kErrParamInvalid, Refusal::kShape, 2);
  }
  // An empty output is never written, whatever its strides, and never walked.
  if (checked->numel[2] == 0) return kSuccess;
  if (!NonOverlapping(out)) return refuse(kErrParamInvalid, Refusal::kOverlap, 2);
  BroadcastLoop(&go, &x, out, &checked->loop);  // cannot fail: the shapes broadcast
  return kSuccess;
}

std::string OperandString(int i, const TensorDesc* desc) { return OperandString(kOperandNames[i], desc); }

std::string OperandString(const char* operand, const TensorDesc* desc) {
  const std::string name = operand;
  if (desc == nullptr) return name + " (no descriptor)";
  const bool readable = desc->rank >= 0 && (desc->rank == 0 || desc->dims != nullptr);
  if (readable) return name + " " + ShapeString(DtypeName(desc->dtype), desc->dims, desc->rank);
  return name + " " + DtypeName(desc->dtype) + " of rank " + std::to_string(desc->rank) +
         (desc->dims == nullptr ? " without dims" : "");
}

namespace {

// What a refusal of operand `i` (-1: all of them) means for these operands
// and what to do about it.
std::string RefusalText(Refusal refusal, int i, const TensorDesc* const operands[3]) {
  const std::string who = i >= 0 ? OperandString(i, operands[i]) : "";
  switch (refusal) {
    case Refusal::kNone: return "the operands were not refused";
    case Refusal::kNullDescriptor:
      return std::string(kOperandNames[i]) + " has no descriptor: pass all three operands";
    case Refusal::kDtype:
      return "grad_output, self and grad_input must share one dtype, one of " + DtypeNames() +
             ": cast them to it";
    case Refusal::kRank:
      return who + " has " + std::to_string(operands[i]->rank) + " dimensions" +
             (operands[i]->rank < 0 ? ""
                                    : ", more than the " + std::to_string(kMaxRank) + " SiluGrad takes") +
             ": reshape it";
    case Refusal::kNullDims: return who + " has no valid dims: give every operand its shape";
    case Refusal::kNegativeDim: return who + " has a negative dim: give every operand its shape";
    case Refusal::kNegativeLayout:
      return who + " has a negative stride, offset or storage size: pass a dense buffer or a view inside one";
    case Refusal::kPastStorage:
      return who + " is a view past its storage (storage_numel " +
             std::to_string(operands[i]->storage_numel) + "): pass a view inside its buffer";
    case Refusal::kTooManyElements: return who + " addresses more elements than int64 counts: split the call";
    case Refusal::kShape: {
      const TensorDesc& out = *operands[2];
      int64_t strides[kMaxRank];
      for (int op = 0; op < 2; ++op) {
        if (!BroadcastStrides(operands[op]->rank, operands[op]->dims, nullptr, out.rank, out.dims, strides)) {
          return OperandString(op, operands[op]) + " does not broadcast to grad_input " +
                 DimsString(out.dims, out.rank) +
                 ": grad_input must have the broadcast shape of grad_output and self";
        }
      }
      int64_t rank = 0, dims[kMaxRank];
      BroadcastShape(operands[0]->rank, operands[0]->dims, operands[1]->rank, operands[1]->dims, &rank, dims);
      return "grad_input " + DimsString(out.dims, out.rank) + " is not " + DimsString(dims, rank) +
             ", the broadcast shape of grad_output and self: give it that shape";
    }
    case Refusal::kOverlap:
      return who +
             " has elements that overlap (a stride too small for the dims below it): give grad_input a "
             "dense buffer";
  }
  return "an unknown refusal";
}

}  // namespace
}  // namespace jas
