// THIS IS A FAKE, NOT CANN: see fake_cann.h. The state library behind the
// fake CANN libraries.
#include "fake_cann.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>

#include "silu_grad.h"

namespace jas::cann {

struct aclTensor {
  fake_cann::TensorRecord record;
};

struct aclOpExecutor {
  fake_cann::TensorRecord tensors[3];  // gradOutput, self, gradInput as phase 1 saw them
  bool empty = false;
  bool materialise[2] = {false, false};  // inputs copied into the workspace first
  uint64_t input_region[2] = {0, 0};     // their offsets in the workspace
  uint64_t output_region = 0;            // the intermediate output's offset
  uint64_t kernel_region = 0;            // the kernel's own workspace
  uint64_t kernel_bytes = 0;
  uint64_t total = 0;
};

}  // namespace jas::cann

namespace fake_cann {
namespace {

// CANN aligns each workspace block; any generous alignment shows the sum is kept.
constexpr uint64_t kAlign = 512;

Faults g_faults;
Record g_record;
std::set<const aclTensor*> g_tensors;
std::set<aclOpExecutor*> g_executors;
thread_local std::string g_message;

aclnnStatus Fail(aclnnStatus status, std::string message) {
  g_message = "fake CANN: " + std::move(message);
  return status;
}

uint64_t Align(uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

int64_t ElementBytes(aclDataType t) {
  switch (t) {
    case jas::cann::ACL_FLOAT: return 4;
    case jas::cann::ACL_FLOAT16:
    case jas::cann::ACL_BF16: return 2;
    default: return 0;  // not an element type this operator takes
  }
}

int64_t Numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string List(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// Row-major with no gaps (size-1 dims may carry any stride) and no offset.
bool Contiguous(const TensorRecord& t) {
  int64_t expected = 1;
  for (size_t i = t.dims.size(); i-- > 0;) {
    if (t.dims[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.dims[i];
  }
  return t.offset == 0;
}

// NumPy broadcasting of two shapes; false when they do not broadcast.
bool BroadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b, std::vector<int64_t>* out) {
  const size_t r = std::max(a.size(), b.size());
  out->assign(r, 1);
  for (size_t j = 0; j < r; ++j) {
    const int64_t da = j + a.size() >= r ? a[j + a.size() - r] : 1;
    const int64_t db = j + b.size() >= r ? b[j + b.size() - r] : 1;
    if (da != db && da != 1 && db != 1) return false;
    (*out)[j] = da == 1 ? db : da;
  }
  return true;
}

// Calls f(element offset in storage, flat index) for each element of `t`, row-major.
template <class F>
void ForEachElement(const TensorRecord& t, F f) {
  const int64_t n = Numel(t.dims);
  const size_t r = t.dims.size();
  std::vector<int64_t> idx(r, 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t off = t.offset;
    for (size_t j = 0; j < r; ++j) off += idx[j] * t.strides[j];
    f(off, flat);
    for (size_t j = r; j-- > 0;) {
      if (++idx[j] < t.dims[j]) break;
      idx[j] = 0;
    }
  }
}

jas::TensorDesc KernelDesc(const TensorRecord& t, void* data, bool contiguous) {
  jas::TensorDesc d;
  d.dtype = static_cast<jas::DataType>(t.dtype);  // numbered as aclDataType
  d.rank = static_cast<int64_t>(t.dims.size());
  d.dims = t.dims.data();
  d.strides = contiguous ? nullptr : t.strides.data();
  d.offset = contiguous ? 0 : t.offset;
  d.storage_numel = contiguous ? Numel(t.dims) : Numel(t.storage_dims);
  d.data = data;
  return d;
}

// Phase 2's view of the kernel's inputs and output: materialised inputs and
// the intermediate output are contiguous blocks of `workspace`.
void KernelDescs(const aclOpExecutor& e, char* workspace, jas::TensorDesc descs[3]) {
  for (int i = 0; i < 2; ++i) {
    descs[i] = e.materialise[i] ? KernelDesc(e.tensors[i], workspace ? workspace + e.input_region[i] : nullptr, true)
                                : KernelDesc(e.tensors[i], e.tensors[i].data, false);
  }
  descs[2] = KernelDesc(e.tensors[2], workspace ? workspace + e.output_region : nullptr, true);
}

void Free(aclOpExecutor* e) {
  g_executors.erase(e);
  delete e;
}

}  // namespace

Chip CurrentChip() {
  const char* v = std::getenv("JAX_ASCEND_SILU_FAKE_CHIP");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "910B") == 0) return Chip::k910B;
  if (std::strcmp(v, "910A") == 0) return Chip::k910A;
  if (std::strcmp(v, "950") == 0) return Chip::k950;
  std::fprintf(stderr, "fake CANN: JAX_ASCEND_SILU_FAKE_CHIP=%s; expected 910A, 910B or 950\n", v);
  std::abort();  // a test set-up mistake, not a CANN behaviour
}

const char* ChipName(Chip chip) {
  return chip == Chip::k910A ? "910A" : chip == Chip::k910B ? "910B" : "950";
}

const char* SocName(Chip chip) {
  return chip == Chip::k910A ? "Ascend910A" : chip == Chip::k910B ? "Ascend910B3" : "Ascend950PR_9589";
}

void Reset(const Faults& faults) {
  g_faults = faults;
  g_record = Record{};
  g_message.clear();
}

const Record& Calls() { return g_record; }
int64_t LiveTensors() { return static_cast<int64_t>(g_tensors.size()); }
int64_t LiveExecutors() { return static_cast<int64_t>(g_executors.size()); }

int64_t ReleaseAll() {
  const int64_t n = LiveTensors() + LiveExecutors();
  for (const aclTensor* t : g_tensors) delete t;
  for (aclOpExecutor* e : g_executors) delete e;
  g_tensors.clear();
  g_executors.clear();
  return n;
}

namespace impl {

const char* RecentErrMsg() { return g_message.c_str(); }

aclTensor* CreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType, const int64_t* stride,
                        int64_t offset, aclFormat format, const int64_t* storageDims, uint64_t storageDimsNum,
                        void* tensorData) {
  const int call = g_record.create_calls++;
  if (call == g_faults.fail_create_tensor_call) {
    Fail(561103, "aclCreateTensor set to fail at call " + std::to_string(call));
    return nullptr;
  }
  if ((viewDimsNum > 0 && (viewDims == nullptr || stride == nullptr)) ||
      (storageDimsNum > 0 && storageDims == nullptr) || offset < 0) {
    Fail(161001, "aclCreateTensor given null dims/strides or a negative offset");
    return nullptr;
  }
  for (uint64_t i = 0; i < viewDimsNum; ++i) {
    if (stride[i] < 0 || viewDims[i] < 0) {
      Fail(161002, "aclCreateTensor given a negative dim or stride");
      return nullptr;
    }
  }
  auto* t = new aclTensor{TensorRecord{dataType, format, std::vector<int64_t>(viewDims, viewDims + viewDimsNum),
                                       std::vector<int64_t>(stride, stride + viewDimsNum),
                                       std::vector<int64_t>(storageDims, storageDims + storageDimsNum), offset,
                                       tensorData}};
  g_record.created.push_back(t->record);
  g_tensors.insert(t);
  return t;
}

aclnnStatus DestroyTensor(const aclTensor* tensor) {
  if (tensor == nullptr) return Fail(161001, "aclDestroyTensor(nullptr)");
  if (g_tensors.erase(tensor) == 0) return Fail(161002, "aclDestroyTensor on a tensor not alive");
  delete tensor;
  ++g_record.destroyed;
  return 0;
}

aclnnStatus DestroyExecutor(aclOpExecutor* executor) {
  if (executor == nullptr) return Fail(561103, "aclDestroyAclOpExecutor(nullptr)");
  if (g_executors.count(executor) == 0) {
    return Fail(561000, "aclDestroyAclOpExecutor on an executor not alive (already run or destroyed)");
  }
  g_record.executors_destroyed.push_back(executor);
  Free(executor);
  return 0;
}

aclnnStatus GetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self, aclTensor* gradInput,
                             uint64_t* workspaceSize, aclOpExecutor** executor) {
  ++g_record.phase1_calls;
  if (workspaceSize == nullptr || executor == nullptr) {
    return Fail(161001, "aclnnSiluBackwardGetWorkspaceSize: null workspaceSize or executor");
  }
  if (gradOutput == nullptr || self == nullptr || gradInput == nullptr) {
    return Fail(161001, "aclnnSiluBackwardGetWorkspaceSize: a null tensor");
  }
  if (g_faults.phase1_status != 0) {
    return Fail(g_faults.phase1_status,
                "aclnnSiluBackwardGetWorkspaceSize set to fail with " + std::to_string(g_faults.phase1_status));
  }
  const Chip chip = CurrentChip();
  const TensorRecord* t[3] = {&gradOutput->record, &self->record, &gradInput->record};
  static constexpr const char* kNames[3] = {"gradOutput", "self", "gradInput"};
  for (int i = 0; i < 3; ++i) {
    if (ElementBytes(t[i]->dtype) == 0) {
      return Fail(161002, std::string(kNames[i]) + " dtype " + std::to_string(t[i]->dtype) +
                              " is not float16, float32 or bfloat16");
    }
    if (t[i]->format != jas::cann::ACL_FORMAT_ND || t[i]->dims.size() > 8) {
      return Fail(161002, std::string(kNames[i]) + ": ND tensors of rank up to 8 only; got rank " +
                              std::to_string(t[i]->dims.size()));
    }
  }
  if (t[0]->dtype != t[2]->dtype || t[1]->dtype != t[2]->dtype) {
    return Fail(161002, "gradOutput, self and gradInput must share one dtype");
  }
  if (chip == Chip::k910A && t[2]->dtype == jas::cann::ACL_BF16) {
    return Fail(161002, std::string("bfloat16 is not supported on ") + SocName(chip));
  }
  if (chip == Chip::k950) {
    std::vector<int64_t> shape;
    if (!BroadcastShape(t[0]->dims, t[1]->dims, &shape) || shape != t[2]->dims) {
      return Fail(161002, "gradOutput " + List(t[0]->dims) + " and self " + List(t[1]->dims) +
                              " do not broadcast to gradInput " + List(t[2]->dims));
    }
  } else if (t[0]->dims != t[2]->dims || t[1]->dims != t[2]->dims) {
    return Fail(161002, std::string("on ") + SocName(chip) + " gradOutput " + List(t[0]->dims) + " and self " +
                            List(t[1]->dims) + " must have gradInput's shape " + List(t[2]->dims));
  }

  auto e = std::make_unique<aclOpExecutor>();
  for (int i = 0; i < 3; ++i) e->tensors[i] = *t[i];
  e->empty = Numel(t[0]->dims) == 0 || Numel(t[1]->dims) == 0 || Numel(t[2]->dims) == 0;
  if (!e->empty) {
    const int64_t esize = ElementBytes(t[2]->dtype);
    uint64_t at = 0;
    for (int i = 0; i < 2; ++i) {
      e->materialise[i] = !Contiguous(*t[i]);
      if (e->materialise[i]) {
        e->input_region[i] = at;
        at += Align(static_cast<uint64_t>(Numel(t[i]->dims) * esize));
      }
    }
    e->output_region = at;
    at += Align(static_cast<uint64_t>(Numel(t[2]->dims) * esize));
    // The kernel's own plan for what phase 2 will hand it (addresses unknown yet).
    jas::TensorDesc descs[3];
    KernelDescs(*e, nullptr, descs);
    jas::SiluGradExecutor* kernel = nullptr;
    if (jas::Status s = jas::SiluGradGetWorkspaceSize(&descs[0], &descs[1], &descs[2], &e->kernel_bytes, &kernel);
        s != jas::kSuccess) {
      return Fail(s, std::string("the kernel's phase 1 returned ") + jas::StatusName(s));
    }
    jas::SiluGradDestroyExecutor(kernel);
    e->kernel_region = at;
    e->total = at + Align(e->kernel_bytes);
  }
  *workspaceSize = e->total;
  *executor = e.get();
  g_record.planned_workspace = e->total;
  g_record.executors_issued.push_back(e.get());
  g_executors.insert(e.release());
  return 0;
}

aclnnStatus Run(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
  ++g_record.phase2_calls;
  g_record.workspace = workspace;
  g_record.workspace_size = workspaceSize;
  g_record.stream = stream;
  g_record.executors_run.push_back(executor);
  g_record.materialised = 0;
  if (executor == nullptr) return Fail(161001, "aclnnSiluBackward: null executor");
  if (g_executors.count(executor) == 0) {
    return Fail(561103, "aclnnSiluBackward: executor not issued by phase 1, or already run or destroyed");
  }
  // Run once: freed on every path from here, as CANN's non-repeatable executors.
  std::unique_ptr<aclOpExecutor, void (*)(aclOpExecutor*)> owned(executor, &Free);
  const aclOpExecutor& e = *executor;
  if (workspaceSize > 0 && workspace == nullptr) return Fail(161001, "aclnnSiluBackward: workspace is nullptr");
  if (g_faults.phase2_status != 0) {
    return Fail(g_faults.phase2_status, "aclnnSiluBackward set to fail with " + std::to_string(g_faults.phase2_status));
  }
  if (workspaceSize < e.total) {
    return Fail(161002, "aclnnSiluBackward given " + std::to_string(workspaceSize) +
                            " bytes of workspace; phase 1 asked for " + std::to_string(e.total));
  }
  if (e.empty) return 0;
  char* ws = static_cast<char*>(workspace);
  const int64_t esize = ElementBytes(e.tensors[2].dtype);
  for (int i = 0; i < 2; ++i) {  // l0op::Contiguous: the view's elements, in order, into the workspace
    if (!e.materialise[i]) continue;
    const TensorRecord& t = e.tensors[i];
    const char* src = static_cast<const char*>(t.data);
    char* dst = ws + e.input_region[i];
    ForEachElement(t, [&](int64_t off, int64_t flat) { std::memcpy(dst + flat * esize, src + off * esize, esize); });
    ++g_record.materialised;
  }
  jas::TensorDesc descs[3];
  KernelDescs(e, ws, descs);
  uint64_t kernel_bytes = 0;
  jas::SiluGradExecutor* kernel = nullptr;
  if (jas::Status s = jas::SiluGradGetWorkspaceSize(&descs[0], &descs[1], &descs[2], &kernel_bytes, &kernel);
      s != jas::kSuccess || kernel_bytes > e.kernel_bytes) {
    if (kernel != nullptr) jas::SiluGradDestroyExecutor(kernel);
    return Fail(561000, "the kernel's plan changed between the phases");
  }
  if (jas::Status s = jas::SiluGradRun(kernel_bytes ? ws + e.kernel_region : nullptr, kernel_bytes, kernel, nullptr);
      s != jas::kSuccess) {
    return Fail(s, std::string("the kernel's phase 2 returned ") + jas::StatusName(s));
  }
  // l0op::ViewCopy: the intermediate output into gradInput's view.
  const TensorRecord& out = e.tensors[2];
  char* dst = static_cast<char*>(out.data);
  const char* src = ws + e.output_region;
  ForEachElement(out, [&](int64_t off, int64_t flat) { std::memcpy(dst + off * esize, src + flat * esize, esize); });
  return 0;
}

}  // namespace impl
}  // namespace fake_cann
