// The Ascend glue: see glue.h.
#include "glue.h"

#include <algorithm>
#include <string>

#include "common/broadcast.h"
#include "silu_grad.h"

namespace jas::ascend {
namespace {

// A normalised view: rank 0 becomes one element of rank 1, since
// aclnnSiluBackward documents ranks 1 to 8.
struct View {
  int64_t rank = 1;
  int64_t dims[kMaxRank] = {1};
  int64_t strides[kMaxRank] = {1};
  int64_t storage_rank = 1;
  int64_t storage_dims[kMaxRank] = {1};
};

void Normalise(const Operand& op, int64_t* rank, int64_t* dims) {
  *rank = std::max<int64_t>(op.rank, 1);
  if (op.rank == 0) {
    dims[0] = 1;
  } else {
    std::copy(op.dims, op.dims + op.rank, dims);
  }
}

// `op` over its own storage, seen with `out`'s shape (stride 0 where broadcast).
bool MakeView(const Operand& op, const Operand& out, View* v) {
  if (op.rank > kMaxRank || out.rank > kMaxRank) return false;
  Normalise(op, &v->storage_rank, v->storage_dims);
  Normalise(out, &v->rank, v->dims);
  return BroadcastStrides(v->storage_rank, v->storage_dims, nullptr, v->rank, v->dims, v->strides);
}

std::string List(const int64_t* values, int64_t n) {
  std::string s = "[";
  for (int64_t i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string(values[i]);
  return s + "]";
}

const char* TypeName(aclDataType t) {
  switch (t) {
    case ACL_FLOAT: return "float32";
    case ACL_FLOAT16: return "float16";
    case ACL_BF16: return "bfloat16";
    case ACL_DOUBLE: return "float64";
    default: break;
  }
  return "an unsupported type";
}

// "grad_output float32[4] as [3,4] strides [0,1]"
std::string Describe(const char* name, const Operand& op, const View& v) {
  return std::string(name) + " " + TypeName(op.dtype) + List(op.dims, op.rank) + " as " +
         List(v.dims, v.rank) + " strides " + List(v.strides, v.rank);
}

std::string RecentMessage() {
  const char* m = aclGetRecentErrMsg();
  return (m != nullptr && *m != '\0') ? m : "(CANN recorded no message)";
}

// Destroys its tensor on every path out of SiluBackward.
class TensorHandle {
 public:
  TensorHandle() = default;
  TensorHandle(const TensorHandle&) = delete;
  TensorHandle& operator=(const TensorHandle&) = delete;
  ~TensorHandle() {
    if (tensor_ != nullptr) aclDestroyTensor(tensor_);
  }
  bool Create(const Operand& op, const View& v) {
    tensor_ = aclCreateTensor(v.dims, static_cast<uint64_t>(v.rank), op.dtype, v.strides, 0,
                              ACL_FORMAT_ND, v.storage_dims, static_cast<uint64_t>(v.storage_rank),
                              op.data);
    return tensor_ != nullptr;
  }
  aclTensor* get() const { return tensor_; }

 private:
  aclTensor* tensor_ = nullptr;
};

Outcome Fail(Failure failure, aclnnStatus status, std::string message) {
  return Outcome{failure, status, "jax_ascend_silu: " + std::move(message)};
}

}  // namespace

std::string StatusLabel(aclnnStatus status) {
  const std::string name = StatusName(status);
  if (name != "ACLNN_ERR_UNKNOWN") return name;
  switch (status / 100000) {
    case 1: return "an unnamed parameter error";
    case 3: return "an unnamed runtime error";
    case 5: return "an unnamed internal error";
  }
  return "an unknown status";
}

Outcome SiluBackward(aclrtStream stream, const WorkspaceSource& workspace, const Operand& grad_output,
                     const Operand& self, const Operand& grad_input) {
  int64_t numel = 1;
  for (int64_t i = 0; i < grad_input.rank; ++i) numel *= grad_input.dims[i];
  if (numel == 0) return Outcome{};  // empty: nothing to launch

  static constexpr const char* kNames[3] = {"grad_output", "self", "grad_input"};
  const Operand* ops[3] = {&grad_output, &self, &grad_input};
  View views[3];
  std::string operands;
  for (int i = 0; i < 3; ++i) {
    if (!MakeView(*ops[i], grad_input, &views[i])) {
      return Fail(Failure::kShapes, 0,
                  std::string(kNames[i]) + " " + TypeName(ops[i]->dtype) +
                      List(ops[i]->dims, ops[i]->rank) + " does not broadcast to grad_input " +
                      List(grad_input.dims, grad_input.rank));
    }
    operands += (i ? "; " : "") + Describe(kNames[i], *ops[i], views[i]);
  }

  TensorHandle tensors[3];
  for (int i = 0; i < 3; ++i) {
    if (!tensors[i].Create(*ops[i], views[i])) {
      return Fail(Failure::kCreateTensor, 0,
                  std::string("aclCreateTensor returned null for ") + kNames[i] + ": " +
                      RecentMessage() + "; " + operands);
    }
  }

  uint64_t workspace_bytes = 0;
  aclOpExecutor* executor = nullptr;
  aclnnStatus status = aclnnSiluBackwardGetWorkspaceSize(tensors[0].get(), tensors[1].get(),
                                                         tensors[2].get(), &workspace_bytes, &executor);
  if (status != 0) {
    return Fail(Failure::kPhase1, status,
                "aclnnSiluBackwardGetWorkspaceSize failed with " + StatusLabel(status) + " (" +
                    std::to_string(status) + "): " + RecentMessage() + "; " + operands);
  }
  // Only a non-zero size is allocated, and a failed allocation stops here:
  // aclnnSiluBackward never sees a null workspace with a non-zero size. (The
  // documented API has no way to release an executor that is not run.)
  void* workspace_ptr = nullptr;
  if (workspace_bytes > 0) {
    workspace_ptr = workspace.allocate != nullptr ? workspace.allocate(workspace.context, workspace_bytes)
                                                  : nullptr;
    if (workspace_ptr == nullptr) {
      return Fail(Failure::kWorkspace, 0,
                  "could not allocate the " + std::to_string(workspace_bytes) +
                      " bytes of device workspace aclnnSiluBackwardGetWorkspaceSize asked for; " +
                      operands);
    }
  }
  status = aclnnSiluBackward(workspace_ptr, workspace_bytes, executor, stream);
  if (status != 0) {
    return Fail(Failure::kPhase2, status,
                "aclnnSiluBackward failed with " + StatusLabel(status) + " (" + std::to_string(status) +
                    "): " + RecentMessage() + "; " + operands);
  }
  return Outcome{};
}

}  // namespace jas::ascend
