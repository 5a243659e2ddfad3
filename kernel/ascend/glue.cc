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

// The storage of a view of `desc`, whose own shape is `rank` dims of
// `numel` elements: those dims when it is dense, as XLA's buffers are, else
// its flat extent.
void SetStorage(const TensorDesc& desc, int64_t rank, const int64_t* dims, int64_t numel, View* v) {
  const bool dense = desc.strides == nullptr && desc.offset == 0 && desc.storage_numel == numel;
  if (dense && rank > 0) {
    v->storage_rank = rank;
    std::copy(dims, dims + rank, v->storage_dims);
  } else if (!dense) {
    v->storage_dims[0] = desc.storage_numel;
  }
}

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
  SetStorage(desc, own.rank, own.dims, checked.numel[i], &v);
  return v;
}

// A dense row-major operand (SwiGluGrad's, checked) over its own shape.
View DenseView(const TensorDesc& desc) {
  View v;
  int64_t numel = 1;
  if (desc.rank > 0) {
    v.rank = desc.rank;
    std::copy(desc.dims, desc.dims + desc.rank, v.dims);
    for (int64_t j = desc.rank - 1; j >= 0; --j) {
      v.strides[j] = numel;
      numel *= desc.dims[j];
    }
  }
  v.offset = desc.offset;
  SetStorage(desc, desc.rank, desc.dims, numel, &v);
  return v;
}

// "grad_output float32[4] as [3,4] strides [0,1]"
std::string ViewString(const char* name, const TensorDesc& desc, const View& v) {
  return std::string(name) + " " + ShapeString(DtypeName(desc.dtype), desc.dims, desc.rank) + " as " +
         DimsString(v.dims, v.rank) + " strides " + DimsString(v.strides, v.rank) +
         (v.offset != 0 ? " offset " + std::to_string(v.offset) : "");
}

std::string RecentMessage(const CannApi& api) {
  const char* m = api.aclGetRecentErrMsg();
  return (m != nullptr && *m != '\0') ? m : "(CANN recorded no message)";
}

// Destroys its tensor on every path out of the glue.
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

// Why CANN's phase 1 refused bfloat16 on this chip, when that is why: "; bfloat16
// is not supported on Ascend910A, an Atlas training series chip (from its
// NpuArch 1001 of device 0): it takes float32, float16; ...". `takes`: the
// operator's bfloat16 column for the chip; `dtypes`, `elsewhere`: what it
// takes there, and the classes with bfloat16.
std::string Bfloat16Note(cann::aclnnStatus status, DataType dtype, const CurrentChip& chip, bool takes,
                         const std::string& dtypes, const std::string& elsewhere) {
  if (status != kErrParamInvalid || dtype != DataType::kBFloat16 || takes) return "";
  return "; bfloat16 is not supported on " + std::string(chip.soc_name != nullptr ? chip.soc_name : "this chip") +
         ", " + chip.chip->family + " (from its " + chip.source + "): it takes " + dtypes +
         "; compute in one of those there, or use a chip with bfloat16 (" + elsewhere + ")";
}

// Phase 1 (`phase1(&bytes, &executor)`, CANN's `aclnn`GetWorkspaceSize on the
// created tensors), the workspace it asks for, phase 2 (`phase2`, of the one
// type every aclnn phase 2 has, cann::aclnnPhase2Fn) on `stream`:
// the two phases of every operator, as CANN's contract has them. `note(status)`
// explains a phase-1 refusal; `operands()` describes the tensors, for
// messages only (a call that succeeds builds no string).
template <class Phase1, class Note, class Operands>
Outcome RunPhases(const CannApi& api, const std::string& aclnn, Phase1 phase1, cann::aclnnPhase2Fn* phase2,
                  cann::aclrtStream stream, const WorkspaceSource& workspace, Note note, Operands operands) {
  uint64_t workspace_bytes = 0;
  ExecutorHandle executor(api);
  cann::aclnnStatus status = phase1(&workspace_bytes, executor.out());
  if (status != 0) {  // phase 1 keeps no executor when it fails
    executor.Release();
    return Fail(Failure::kPhase1, status,
                aclnn + "GetWorkspaceSize failed with " + StatusLabel(status) + " (" + std::to_string(status) +
                    "): " + RecentMessage(api) + note(status) + "; " + operands());
  }
  // Only a non-zero size is allocated, and a failed allocation stops here:
  // phase 2 never sees a null workspace with a non-zero size.
  void* workspace_ptr = nullptr;
  if (workspace_bytes > 0) {
    workspace_ptr =
        workspace.allocate != nullptr ? workspace.allocate(workspace.context, workspace_bytes) : nullptr;
    if (workspace_ptr == nullptr) {
      return Fail(Failure::kWorkspace, 0,
                  "could not allocate the " + std::to_string(workspace_bytes) + " bytes of device workspace " +
                      aclnn + "GetWorkspaceSize asked for" + executor.ReleaseNote() + "; " + operands());
    }
  }
  status = phase2(workspace_ptr, workspace_bytes, executor.Release(), stream);
  if (status != 0) {
    return Fail(Failure::kPhase2, status,
                aclnn + " failed with " + StatusLabel(status) + " (" + std::to_string(status) + "): " +
                    RecentMessage(api) + "; " + operands());
  }
  return Outcome{};
}

// Creates `n` tensors, `views[i]` of `ops[i]`; on failure the Outcome names
// operand `names[i]` and `operands()`; the handles destroy what was made.
template <size_t n, class Operands>
Outcome CreateTensors(const CannApi& api, const TensorDesc* const ops[n], const View views[n],
                      const char* const names[n], TensorHandle (&tensors)[n], Operands operands) {
  for (size_t i = 0; i < n; ++i) {
    if (!tensors[i].Create(*ops[i], views[i])) {
      return Fail(Failure::kCreateTensor, 0,
                  std::string("aclCreateTensor returned null for ") + names[i] + ": " + RecentMessage(api) + "; " +
                      operands());
    }
  }
  return Outcome{};
}

// What every operator needs before its first call: CANN with the operator
// (else what is missing), then a current context, whose chip fills *chip,
// then a chip class CANN builds the operator's kernel for.
Outcome Prepare(const Cann& cann, const AclnnOperator& row, CurrentChip* chip) {
  if (!cann.ok(row)) {
    return Fail(Failure::kNoCann, 0,
                std::string(row.op) + " on Ascend needs CANN, which was not found or is incomplete:\n" +
                    (cann.ok() ? cann.op(row).problem : cann.problem()));
  }
  if (Outcome o = CheckContext(cann.api(), chip, row.op, row.aclnn); !o.ok()) return o;
  if (row.kernel != nullptr && !(chip->chip->*row.kernel)) {
    return Fail(Failure::kChip, 0,
                std::string(row.op) + " on Ascend: CANN has no " + row.aclnn + " kernel for " +
                    std::string(chip->soc_name != nullptr ? chip->soc_name : "this chip") + ", " +
                    chip->chip->family + " (from its " + chip->source + "); ops-nn builds it for " +
                    ClassesWith(row.kernel) + ": run " + row.op +
                    " on one of those, or on the CPU (jax.device_put its operands there)");
  }
  return Outcome{};
}

// Why phase 1 of `row` refused, when bfloat16 on this chip is why (Bfloat16Note).
std::string Bfloat16NoteOf(const AclnnOperator& row, cann::aclnnStatus status, DataType dtype,
                           const CurrentChip& chip) {
  return Bfloat16Note(status, dtype, chip, chip.chip->*row.bfloat16, DtypesTaken(*chip.chip, row.bfloat16),
                      ClassesWith(row.bfloat16));
}

constexpr const char* kSwiGluNames[3] = {"yGrad", "x", "out"};

// aclnnSwiGluGrad on three checked dense operands (packed, or the pair
// form's staging), on a chip that has it.
Outcome RunSwiGluGrad(const Cann& cann, const CurrentChip& chip, cann::aclrtStream stream,
                      const WorkspaceSource& workspace, const TensorDesc* const ops[3], int64_t dim,
                      const char* const names[3]) {
  const CannApi& api = cann.api();
  View views[3];
  for (int i = 0; i < 3; ++i) views[i] = DenseView(*ops[i]);
  const auto operands = [&] {
    std::string text;
    for (int i = 0; i < 3; ++i) text += (i ? "; " : "") + ViewString(names[i], *ops[i], views[i]);
    return text + "; dim " + std::to_string(dim);
  };
  TensorHandle tensors[3] = {TensorHandle(api), TensorHandle(api), TensorHandle(api)};
  if (Outcome o = CreateTensors<3>(api, ops, views, names, tensors, operands); !o.ok()) return o;
  const auto phase1 = [&](uint64_t* bytes, cann::aclOpExecutor** executor) {
    return cann.Phase1<cann::aclnnSwiGluGradGetWorkspaceSizeFn>(kSwiGluGrad)(
        tensors[0].get(), tensors[1].get(), dim, tensors[2].get(), bytes, executor);
  };
  const auto note = [&](cann::aclnnStatus status) { return Bfloat16NoteOf(kSwiGluGrad, status, ops[1]->dtype, chip); };
  return RunPhases(api, kSwiGluGrad.aclnn, phase1, cann.op(kSwiGluGrad).phase2, stream, workspace, note, operands);
}

// The operand checks' refusal as an Outcome: "<op> on Ascend refused its
// operands with ... before any CANN call: <why>; got yGrad ..., x ...".
Outcome Refused(const char* op, Status s, const std::string& why, const TensorDesc* const ops[],
                const char* const names[], int n) {
  std::string operands;
  for (int i = 0; i < n; ++i) operands += (i ? ", " : "") + OperandString(names[i], ops[i]);
  return Fail(Failure::kOperands, s,
              std::string(op) + " on Ascend refused its operands with " + StatusLabel(s) + " (" +
                  std::to_string(s) + ") before any CANN call: " + why + "; got " + operands);
}

// One stream-ordered device-to-device copy of the pair form.
Outcome Copy(const CannApi& api, void* dst, const void* src, uint64_t bytes, cann::aclrtStream stream,
             const char* what) {
  const cann::aclError e = api.aclrtMemcpyAsync(dst, bytes, src, bytes, cann::ACL_MEMCPY_DEVICE_TO_DEVICE, stream);
  if (e == 0) return Outcome{};
  return Fail(Failure::kCopy, e,
              "SwiGluGrad on Ascend (pair form): aclrtMemcpyAsync of " + std::string(what) + " (" +
                  std::to_string(bytes) + " bytes, device to device) failed with aclError " + std::to_string(e) +
                  ": " + RecentMessage(api));
}

}  // namespace

Outcome CheckContext(const CannApi& api, CurrentChip* chip, const char* op, const char* aclnn) {
  const std::string requirement =
      std::string(op) +
      " on Ascend needs a current ACL context on the thread that runs the XLA handler: an Ascend PJRT "
      "plugin must make the device's context current (aclrtSetCurrentContext, or aclrtSetDevice) on that thread "
      "before calling FFI handlers, since CANN's " +
      aclnn + " reads the current device's chip from it";
  cann::aclrtContext context = nullptr;
  cann::aclError e = api.aclrtGetCurrentContext(&context);
  if (e != 0 || context == nullptr) {
    // CANN records no message for this state; any other code may have one.
    const std::string detail = e == cann::kAclErrorRtContextNull ? "ACL_ERROR_RT_CONTEXT_NULL: none is current"
                               : e == 0                          ? "success, but a null context"
                                                                 : RecentMessage(api);
    return Fail(Failure::kNoContext, e,
                requirement + "; aclrtGetCurrentContext returned " + std::to_string(e) + " (" + detail + ")");
  }
  int32_t device = -1;
  e = api.aclrtGetDevice(&device);
  if (e != 0) {
    return Fail(Failure::kNoContext, e,
                requirement + "; aclrtGetDevice returned " + std::to_string(e) +
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

Outcome GradBackward(const Cann& cann, const AclnnOperator& op, cann::aclrtStream stream,
                     const WorkspaceSource& workspace, const TensorDesc& grad_output, const TensorDesc& self,
                     const TensorDesc& grad_input) {
  const TensorDesc* const ops[3] = {&grad_output, &self, &grad_input};
  CheckedOperands checked;
  std::string why;
  if (Status s = CheckOperands(&grad_output, &self, &grad_input, &checked, &why); s != kSuccess) {
    return Refused(op.op, s, why, ops, kOperandNames, 3);
  }
  if (checked.numel[2] == 0) return Outcome{};  // empty: nothing to launch
  CurrentChip chip;
  if (Outcome o = Prepare(cann, op, &chip); !o.ok()) return o;
  const CannApi& api = cann.api();

  const bool broadcasts = op.broadcasts != nullptr && chip.chip->*op.broadcasts;
  View views[3];
  for (int i = 0; i < 3; ++i) views[i] = ViewOf(*ops[i], checked, i, broadcasts);
  const auto operands = [&] {
    std::string text;
    for (int i = 0; i < 3; ++i) text += (i ? "; " : "") + ViewString(kOperandNames[i], *ops[i], views[i]);
    return text;
  };
  TensorHandle tensors[3] = {TensorHandle(api), TensorHandle(api), TensorHandle(api)};
  if (Outcome o = CreateTensors<3>(api, ops, views, kOperandNames, tensors, operands); !o.ok()) return o;
  const auto phase1 = [&](uint64_t* bytes, cann::aclOpExecutor** executor) {
    return cann.Phase1<cann::aclnnSiluBackwardGetWorkspaceSizeFn>(op)(tensors[0].get(), tensors[1].get(),
                                                                      tensors[2].get(), bytes, executor);
  };
  const auto note = [&](cann::aclnnStatus status) { return Bfloat16NoteOf(op, status, checked.dtype, chip); };
  return RunPhases(api, op.aclnn, phase1, cann.op(op).phase2, stream, workspace, note, operands);
}

Outcome SwiGluGradPacked(const Cann& cann, cann::aclrtStream stream, const WorkspaceSource& workspace,
                         const TensorDesc& y_grad, const TensorDesc& x, int64_t dim, const TensorDesc& out) {
  const TensorDesc* const ops[3] = {&y_grad, &x, &out};
  SwiGluLayout layout;
  std::string why;
  if (Status s = CheckSwiGluPacked(&y_grad, &x, dim, &out, &layout, &why); s != kSuccess) {
    return Refused("SwiGluGrad", s, why, ops, kSwiGluNames, 3);
  }
  CurrentChip chip;
  if (Outcome o = Prepare(cann, kSwiGluGrad, &chip); !o.ok()) return o;
  return RunSwiGluGrad(cann, chip, stream, workspace, ops, dim, kSwiGluNames);
}

Outcome SwiGluGradPair(const Cann& cann, cann::aclrtStream stream, const WorkspaceSource& workspace,
                       const TensorDesc& y_grad, const TensorDesc& a, const TensorDesc& b, const TensorDesc& grad_a,
                       const TensorDesc& grad_b) {
  static constexpr const char* kPairNames[5] = {"yGrad", "a", "b", "gradA", "gradB"};
  const TensorDesc* const ops[5] = {&y_grad, &a, &b, &grad_a, &grad_b};
  SwiGluLayout layout;
  std::string why;
  if (Status s = CheckSwiGluPair(&y_grad, &a, &b, &grad_a, &grad_b, &layout, &why); s != kSuccess) {
    return Refused("SwiGluGrad", s, why, ops, kPairNames, 5);
  }
  CurrentChip chip;
  if (Outcome o = Prepare(cann, kSwiGluGrad, &chip); !o.ok()) return o;
  const CannApi& api = cann.api();
  if (api.aclrtMemcpyAsync == nullptr) {
    return Fail(Failure::kNoCann, 0,
                "SwiGluGrad on Ascend (pair form) needs aclrtMemcpyAsync, which this ACL runtime lacks: pass "
                "x = [a | b] (the packed form, which CANN takes as it is) instead");
  }
  // The staging block: x = [a | b], then out = [dA | dB].
  const int64_t n = layout.numel();
  const uint64_t half = static_cast<uint64_t>(n) * static_cast<uint64_t>(FindDtype(layout.dtype)->bytes);
  const uint64_t staging_bytes = PairStagingBytes(half);
  char* staging = static_cast<char*>(
      workspace.allocate != nullptr ? workspace.allocate(workspace.context, staging_bytes) : nullptr);
  if (staging == nullptr) {
    return Fail(Failure::kWorkspace, 0,
                "could not allocate the " + std::to_string(staging_bytes) +
                    " bytes of device memory SwiGluGrad's pair form stages x = [a | b] and out = [dA | dB] in "
                    "(CANN has no two-operand form); the packed form needs none");
  }
  char* out_data = staging + PairOutOffset(half);
  if (Outcome o = Copy(api, staging, layout.a, half, stream, "a into x = [a | b]"); !o.ok()) return o;
  if (Outcome o = Copy(api, staging + half, layout.b, half, stream, "b into x = [a | b]"); !o.ok()) return o;

  // yGrad flat, x and out of rank 1 with twice its elements: the halves along dim 0.
  const int64_t flat[1] = {n}, doubled[1] = {2 * n};
  TensorDesc g1 = y_grad, x1, out1;
  g1.rank = 1;
  g1.dims = flat;
  g1.strides = nullptr;
  for (TensorDesc* d : {&x1, &out1}) {
    d->dtype = layout.dtype;
    d->rank = 1;
    d->dims = doubled;
    d->storage_numel = 2 * n;
  }
  x1.data = staging;
  out1.data = out_data;
  static constexpr const char* kStagedNames[3] = {"yGrad", "x (a and b staged)", "out (staged)"};
  const TensorDesc* const staged[3] = {&g1, &x1, &out1};
  if (Outcome o = RunSwiGluGrad(cann, chip, stream, workspace, staged, 0, kStagedNames); !o.ok()) return o;
  if (Outcome o = Copy(api, layout.grad_a, out_data, half, stream, "dA into grad_a"); !o.ok()) return o;
  return Copy(api, layout.grad_b, out_data + half, half, stream, "dB into grad_b");
}

}  // namespace jas::ascend
