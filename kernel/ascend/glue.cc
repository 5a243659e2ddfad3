// The Ascend glue: see glue.h.
#include "ascend/glue.h"

#include <algorithm>
#include <string>
#include <utility>

#include "common/broadcast.h"
#include "common/shape_string.h"
#include "common/validate.h"

namespace jas::ascend {
namespace {

static_assert(AclDataType(DataType::kFloat32) == cann::ACL_FLOAT &&
              AclDataType(DataType::kFloat16) == cann::ACL_FLOAT16 &&
              AclDataType(DataType::kBFloat16) == cann::ACL_BF16);

// An aclTensor's view of one checked operand: rank 0 becomes one element of
// rank 1, since aclnnSiluBackward documents ranks 1 to 8.
struct View {
  int64_t rank = 1;
  int64_t dims[kMaxRank] = {1};
  int64_t strides[kMaxRank] = {1};
  int64_t offset = 0;
  int64_t storage_rank = 1;
  int64_t storage_dims[kMaxRank] = {1};
};

// Operand `i` of `checked` over its own storage, seen with grad_input's
// shape (stride 0 where broadcast) or, when `own_shape`, with its own shape
// (the operator broadcasts). The storage is the operand's own dims when it is
// dense, as XLA's buffers are, else its flat extent.
View ViewOf(const TensorDesc& desc, const CheckedOperands& checked, int i, bool own_shape) {
  const StridedShape& own = checked.views[i];
  const StridedShape& shown = own_shape ? own : checked.views[2];
  View v;
  if (shown.rank > 0) {
    v.rank = shown.rank;
    std::copy(shown.dims, shown.dims + shown.rank, v.dims);
    if (own_shape) {
      std::copy(own.strides, own.strides + own.rank, v.strides);
    } else {  // cannot fail: CheckOperands found that it broadcasts
      BroadcastStrides(own.rank, own.dims, own.strides, shown.rank, shown.dims, v.strides);
    }
  }
  v.offset = checked.offsets[i];
  const bool dense = desc.strides == nullptr && desc.offset == 0 && desc.storage_numel == checked.numel[i];
  if (dense && own.rank > 0) {
    v.storage_rank = own.rank;
    std::copy(own.dims, own.dims + own.rank, v.storage_dims);
  } else if (!dense) {
    v.storage_dims[0] = desc.storage_numel;
  }
  return v;
}

// "grad_output float32[4] as [3,4] strides [0,1]"
std::string ViewString(int i, const TensorDesc& desc, const View& v) {
  return std::string(kOperandNames[i]) + " " + ShapeString(DtypeName(desc.dtype), desc.dims, desc.rank) +
         " as " + DimsString(v.dims, v.rank) + " strides " + DimsString(v.strides, v.rank) +
         (v.offset != 0 ? " offset " + std::to_string(v.offset) : "");
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
  bool Create(const TensorDesc& desc, const View& v) {
    tensor_ = api_.aclCreateTensor(v.dims, static_cast<uint64_t>(v.rank), AclDataType(desc.dtype), v.strides,
                                   v.offset, cann::ACL_FORMAT_ND, v.storage_dims,
                                   static_cast<uint64_t>(v.storage_rank), desc.data);
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
  // What becomes of the executor, for the message of a path that abandons it.
  std::string ReleaseNote() const {
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
                     const TensorDesc& grad_output, const TensorDesc& self, const TensorDesc& grad_input) {
  const TensorDesc* const ops[3] = {&grad_output, &self, &grad_input};
  CheckedOperands checked;
  if (Status s = CheckOperands(&grad_output, &self, &grad_input, &checked); s != kSuccess) {
    std::string operands;
    for (int i = 0; i < 3; ++i) operands += (i ? ", " : "") + OperandString(i, ops[i]);
    return Fail(Failure::kOperands, s,
                "SiluGrad on Ascend refused its operands with " + StatusLabel(s) + " (" + std::to_string(s) +
                    ") before any CANN call: " + RefusalText(checked, ops) + "; got " + operands);
  }
  if (checked.numel[2] == 0) return Outcome{};  // empty: nothing to launch
  if (!cann.ok()) {
    return Fail(Failure::kNoCann, 0, "SiluGrad on Ascend needs CANN, which was not found or is incomplete:\n" +
                                         cann.problem());
  }
  const CannApi& api = cann.api();
  CurrentChip chip;
  if (Outcome o = CheckContext(api, &chip); !o.ok()) return o;

  View views[3];
  for (int i = 0; i < 3; ++i) views[i] = ViewOf(*ops[i], checked, i, chip.chip->broadcasts);
  // The views as CANN got them, for error messages only: a call that succeeds builds no string.
  const auto operands = [&] {
    std::string text;
    for (int i = 0; i < 3; ++i) text += (i ? "; " : "") + ViewString(i, *ops[i], views[i]);
    return text;
  };

  TensorHandle tensors[3] = {TensorHandle(api), TensorHandle(api), TensorHandle(api)};
  for (int i = 0; i < 3; ++i) {
    if (!tensors[i].Create(*ops[i], views[i])) {
      return Fail(Failure::kCreateTensor, 0,
                  std::string("aclCreateTensor returned null for ") + kOperandNames[i] + ": " +
                      RecentMessage(api) + "; " + operands());
    }
  }

  uint64_t workspace_bytes = 0;
  ExecutorHandle executor(api);
  cann::aclnnStatus status = api.aclnnSiluBackwardGetWorkspaceSize(tensors[0].get(), tensors[1].get(),
                                                                   tensors[2].get(), &workspace_bytes, executor.out());
  if (status != 0) {  // phase 1 keeps no executor when it fails
    executor.Release();
    std::string why;
    if (status == kErrParamInvalid && checked.dtype == DataType::kBFloat16 && !chip.chip->bfloat16) {
      why = "; bfloat16 is not supported on " + std::string(chip.soc_name != nullptr ? chip.soc_name : "this chip") +
            ", " + chip.chip->family + " (from its " + chip.source + "): it takes " + DtypesTaken(*chip.chip) +
            "; compute in one of those there, or use a chip with bfloat16 (NpuArch 2201 or 3510)";
    }
    return Fail(Failure::kPhase1, status,
                "aclnnSiluBackwardGetWorkspaceSize failed with " + StatusLabel(status) + " (" +
                    std::to_string(status) + "): " + RecentMessage(api) + why + "; " + operands());
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
                      " bytes of device workspace aclnnSiluBackwardGetWorkspaceSize asked for" + executor.ReleaseNote() +
                      "; " + operands());
    }
  }
  status = api.aclnnSiluBackward(workspace_ptr, workspace_bytes, executor.Release(), stream);
  if (status != 0) {
    return Fail(Failure::kPhase2, status,
                "aclnnSiluBackward failed with " + StatusLabel(status) + " (" + std::to_string(status) +
                    "): " + RecentMessage(api) + "; " + operands());
  }
  return Outcome{};
}

}  // namespace jas::ascend
