// The Ascend glue: see glue.h.
#include "ascend/glue.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "common/broadcast.h"

namespace jas::ascend {
namespace {

static_assert(AclDataType(DataType::kFloat32) == cann::ACL_FLOAT &&
              AclDataType(DataType::kFloat16) == cann::ACL_FLOAT16 &&
              AclDataType(DataType::kBFloat16) == cann::ACL_BF16);

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

// `op` over its own storage, seen with `out`'s shape (stride 0 where
// broadcast), or, when `own_shape`, with its own shape (the operator
// broadcasts). Either way false when `op` does not broadcast to `out`.
bool MakeView(const Operand& op, const Operand& out, bool own_shape, View* v) {
  if (op.rank > kMaxRank || out.rank > kMaxRank) return false;
  Normalise(op, &v->storage_rank, v->storage_dims);
  Normalise(out, &v->rank, v->dims);
  if (!BroadcastStrides(v->storage_rank, v->storage_dims, nullptr, v->rank, v->dims, v->strides)) return false;
  if (own_shape) {
    v->rank = v->storage_rank;
    std::copy(v->storage_dims, v->storage_dims + v->rank, v->dims);
    RowMajorStrides(v->rank, v->dims, v->strides);
  }
  return true;
}

std::string List(const int64_t* values, int64_t n) {
  std::string s = "[";
  for (int64_t i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string(values[i]);
  return s + "]";
}

// "grad_output float32[4] as [3,4] strides [0,1]"
std::string Describe(const char* name, const Operand& op, const View& v) {
  return std::string(name) + " " + DtypeName(op.dtype) + List(op.dims, op.rank) + " as " +
         List(v.dims, v.rank) + " strides " + List(v.strides, v.rank);
}

std::string RecentMessage(const CannApi& api) {
  const char* m = api.aclGetRecentErrMsg();
  return (m != nullptr && *m != '\0') ? m : "(CANN recorded no message)";
}

// Destroys its tensor on every path out of SiluBackward.
class TensorHandle {
 public:
  explicit TensorHandle(const CannApi& api) : api_(api) {}
  TensorHandle(const TensorHandle&) = delete;
  TensorHandle& operator=(const TensorHandle&) = delete;
  ~TensorHandle() {
    if (tensor_ != nullptr) api_.aclDestroyTensor(tensor_);
  }
  bool Create(const Operand& op, const View& v) {
    tensor_ = api_.aclCreateTensor(v.dims, static_cast<uint64_t>(v.rank), AclDataType(op.dtype), v.strides, 0,
                                   cann::ACL_FORMAT_ND, v.storage_dims, static_cast<uint64_t>(v.storage_rank),
                                   op.data);
    return tensor_ != nullptr;
  }
  cann::aclTensor* get() const { return tensor_; }

 private:
  const CannApi& api_;
  cann::aclTensor* tensor_ = nullptr;
};

// Owns phase 1's executor until phase 2 takes it (phase 2 frees it, run or
// not); released with aclDestroyAclOpExecutor on any other path.
class ExecutorHandle {
 public:
  explicit ExecutorHandle(const CannApi& api) : api_(api) {}
  ExecutorHandle(const ExecutorHandle&) = delete;
  ExecutorHandle& operator=(const ExecutorHandle&) = delete;
  ~ExecutorHandle() {
    if (executor_ != nullptr && api_.aclDestroyAclOpExecutor != nullptr) api_.aclDestroyAclOpExecutor(executor_);
  }
  cann::aclOpExecutor** out() { return &executor_; }
  cann::aclOpExecutor* Release() { return std::exchange(executor_, nullptr); }
  // For messages on the paths that abandon it.
  std::string Fate() const {
    if (executor_ == nullptr) return "";
    return api_.aclDestroyAclOpExecutor != nullptr
               ? " (phase 1's executor is released with aclDestroyAclOpExecutor)"
               : " (this CANN has no aclDestroyAclOpExecutor: phase 1's executor is leaked)";
  }

 private:
  const CannApi& api_;
  cann::aclOpExecutor* executor_ = nullptr;
};

Outcome Fail(Failure failure, cann::aclnnStatus status, std::string message) {
  return Outcome{failure, status, "jax_ascend_silu: " + std::move(message)};
}

}  // namespace

Outcome CheckContext(const CannApi& api, CurrentChip* chip) {
  static constexpr const char* kRequirement =
      "SiluGrad on Ascend needs a current ACL context on the thread that runs the XLA handler: an Ascend PJRT "
      "plugin must make the device's context current (aclrtSetCurrentContext, or aclrtSetDevice) on that thread "
      "before calling FFI handlers, since CANN's aclnnSiluBackward reads the current device's chip from it";
  cann::aclrtContext context = nullptr;
  cann::aclError e = api.aclrtGetCurrentContext(&context);
  if (e != 0 || context == nullptr) {
    // CANN records no message for this state; any other code may have one.
    const std::string detail = e == cann::kAclErrorRtContextNull ? "ACL_ERROR_RT_CONTEXT_NULL: none is current"
                               : e == 0                          ? "success, but a null context"
                                                                 : RecentMessage(api);
    return Fail(Failure::kNoContext, e,
                std::string(kRequirement) + "; aclrtGetCurrentContext returned " + std::to_string(e) + " (" +
                    detail + ")");
  }
  int32_t device = -1;
  e = api.aclrtGetDevice(&device);
  if (e != 0) {
    return Fail(Failure::kNoContext, e,
                std::string(kRequirement) + "; aclrtGetDevice returned " + std::to_string(e) +
                    " although a context is current: " + RecentMessage(api));
  }
  chip->device = device;
  chip->soc_name = api.aclrtGetSocName != nullptr ? api.aclrtGetSocName() : nullptr;
  int64_t arch = 0;
  if (api.aclrtGetDeviceInfo != nullptr &&
      api.aclrtGetDeviceInfo(static_cast<uint32_t>(device), cann::ACL_DEV_ATTR_NPU_ARCH, &arch) == 0 && arch > 0) {
    chip->source = "NpuArch " + std::to_string(arch) + " of device " + std::to_string(device);
  } else {
    arch = NpuArchOfSocName(chip->soc_name);
    chip->source = std::string("SoC name ") + (chip->soc_name != nullptr ? chip->soc_name : "(none)") +
                   (arch != 0 ? " (NpuArch " + std::to_string(arch) + ")" : "");
  }
  chip->chip = &ClassOfNpuArch(arch);
  return Outcome{};
}

std::string StatusLabel(cann::aclnnStatus status) {
  const std::string name = StatusName(status);
  if (name != "ACLNN_ERR_UNKNOWN") return name;
  switch (status / 100000) {
    case 1: return "an unnamed parameter error";
    case 3: return "an unnamed runtime error";
    case 5: return "an unnamed internal error";
  }
  return "an unknown status";
}

Outcome SiluBackward(const Cann& cann, cann::aclrtStream stream, const WorkspaceSource& workspace,
                     const Operand& grad_output, const Operand& self, const Operand& grad_input) {
  int64_t numel = 1;
  for (int64_t i = 0; i < grad_input.rank; ++i) numel *= grad_input.dims[i];
  if (numel == 0) return Outcome{};  // empty: nothing to launch
  if (!cann.ok()) {
    return Fail(Failure::kNoCann, 0, "SiluGrad on Ascend needs CANN, which was not found or is incomplete:\n" +
                                         cann.problem());
  }
  const CannApi& api = cann.api();
  CurrentChip chip;
  if (Outcome o = CheckContext(api, &chip); !o.ok()) return o;
  const bool own_shapes = chip.chip->broadcasts;

  static constexpr const char* kNames[3] = {"grad_output", "self", "grad_input"};
  const Operand* ops[3] = {&grad_output, &self, &grad_input};
  View views[3];
  std::string operands;
  for (int i = 0; i < 3; ++i) {
    if (!MakeView(*ops[i], grad_input, own_shapes, &views[i])) {
      return Fail(Failure::kShapes, 0,
                  std::string(kNames[i]) + " " + DtypeName(ops[i]->dtype) + List(ops[i]->dims, ops[i]->rank) +
                      " does not broadcast to grad_input " + List(grad_input.dims, grad_input.rank));
    }
    operands += (i ? "; " : "") + Describe(kNames[i], *ops[i], views[i]);
  }

  TensorHandle tensors[3] = {TensorHandle(api), TensorHandle(api), TensorHandle(api)};
  for (int i = 0; i < 3; ++i) {
    if (!tensors[i].Create(*ops[i], views[i])) {
      return Fail(Failure::kCreateTensor, 0,
                  std::string("aclCreateTensor returned null for ") + kNames[i] + ": " + RecentMessage(api) + "; " +
                      operands);
    }
  }

  uint64_t workspace_bytes = 0;
  ExecutorHandle executor(api);
  cann::aclnnStatus status = api.aclnnSiluBackwardGetWorkspaceSize(tensors[0].get(), tensors[1].get(),
                                                                   tensors[2].get(), &workspace_bytes, executor.out());
  if (status != 0) {  // phase 1 keeps no executor when it fails
    executor.Release();
    std::string why;
    const bool bfloat16 = grad_output.dtype == DataType::kBFloat16 || self.dtype == DataType::kBFloat16 ||
                          grad_input.dtype == DataType::kBFloat16;
    if (status == kErrParamInvalid && bfloat16 && !chip.chip->bfloat16) {
      why = "; bfloat16 is not supported on " + std::string(chip.soc_name != nullptr ? chip.soc_name : "this chip") +
            ", " + chip.chip->family + " (from its " + chip.source + "): it takes " + DtypesTaken(*chip.chip) +
            "; compute in one of those there, or use a chip with bfloat16 (NpuArch 2201 or 3510)";
    }
    return Fail(Failure::kPhase1, status,
                "aclnnSiluBackwardGetWorkspaceSize failed with " + StatusLabel(status) + " (" +
                    std::to_string(status) + "): " + RecentMessage(api) + why + "; " + operands);
  }
  // Only a non-zero size is allocated, and a failed allocation stops here:
  // aclnnSiluBackward never sees a null workspace with a non-zero size.
  void* workspace_ptr = nullptr;
  if (workspace_bytes > 0) {
    workspace_ptr =
        workspace.allocate != nullptr ? workspace.allocate(workspace.context, workspace_bytes) : nullptr;
    if (workspace_ptr == nullptr) {
      return Fail(Failure::kWorkspace, 0,
                  "could not allocate the " + std::to_string(workspace_bytes) +
                      " bytes of device workspace aclnnSiluBackwardGetWorkspaceSize asked for" + executor.Fate() +
                      "; " + operands);
    }
  }
  status = api.aclnnSiluBackward(workspace_ptr, workspace_bytes, executor.Release(), stream);
  if (status != 0) {
    return Fail(Failure::kPhase2, status,
                "aclnnSiluBackward failed with " + StatusLabel(status) + " (" + std::to_string(status) +
                    "): " + RecentMessage(api) + "; " + operands);
  }
  return Outcome{};
}

}  // namespace jas::ascend
