// THIS IS A FAKE, NOT CANN: see fake_cann.h. Host memory only; the operator
// is this package's CPU kernel; nothing here has run on Ascend hardware.
#include "fake_cann.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <string>

#include "silu_grad.h"

struct aclTensor {
  fake_cann::TensorRecord record;
};

struct aclOpExecutor {
  jas::SiluGradExecutor* kernel = nullptr;
  uint64_t kernel_bytes = 0;  // the kernel's own workspace, at the start of the workspace
  uint64_t extra = 0;         // the fake's extra bytes, after it
};

namespace fake_cann {
namespace {

Mode g_mode;
Record g_record;
std::set<const aclTensor*> g_live_tensors;
std::set<const aclOpExecutor*> g_live_executors;
thread_local std::string g_message;

aclnnStatus Fail(aclnnStatus status, std::string message) {
  g_message = "fake CANN: " + std::move(message);
  return status;
}

jas::DataType KernelType(aclDataType t) {
  switch (t) {
    case ACL_FLOAT: return jas::DataType::kFloat32;
    case ACL_FLOAT16: return jas::DataType::kFloat16;
    case ACL_BF16: return jas::DataType::kBFloat16;
    default: return static_cast<jas::DataType>(-1);  // the kernel rejects it (161002)
  }
}

jas::TensorDesc Desc(const aclTensor* t) {
  const TensorRecord& r = t->record;
  jas::TensorDesc d;
  d.dtype = KernelType(r.dtype);
  d.rank = static_cast<int64_t>(r.dims.size());
  d.dims = r.dims.data();
  d.strides = r.strides.data();
  d.offset = r.offset;
  d.storage_numel = 1;
  for (int64_t s : r.storage_dims) d.storage_numel *= s;
  d.data = r.data;
  return d;
}

void ReleaseAbandonedExecutors() {
  for (const aclOpExecutor* e : g_live_executors) {
    jas::SiluGradDestroyExecutor(e->kernel);
    delete e;
  }
  g_live_executors.clear();
}

// Executors still alive at exit are released too, so leak checkers see only
// the glue's own leaks.
struct AtExit {
  ~AtExit() { ReleaseAbandonedExecutors(); }
} g_at_exit;

}  // namespace

void Reset(const Mode& mode) {
  ReleaseAbandonedExecutors();
  g_mode = mode;
  g_record = Record{};
  g_message.clear();
}

const Record& Calls() { return g_record; }

int64_t LiveExecutors() { return static_cast<int64_t>(g_live_executors.size()); }

}  // namespace fake_cann

using fake_cann::Fail;
using fake_cann::g_live_executors;
using fake_cann::g_live_tensors;
using fake_cann::g_mode;
using fake_cann::g_record;

extern "C" {

const char* aclGetRecentErrMsg() { return fake_cann::g_message.c_str(); }

aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t* stride, int64_t offset, aclFormat format,
                           const int64_t* storageDims, uint64_t storageDimsNum, void* tensorData) {
  const int call = g_record.create_calls++;
  if (call == g_mode.fail_create_tensor_call) {
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
  auto* t = new aclTensor{fake_cann::TensorRecord{
      dataType, format, std::vector<int64_t>(viewDims, viewDims + viewDimsNum),
      std::vector<int64_t>(stride, stride + viewDimsNum),
      std::vector<int64_t>(storageDims, storageDims + storageDimsNum), offset, tensorData}};
  g_record.created.push_back(t->record);
  g_live_tensors.insert(t);
  g_record.live_tensors = static_cast<int64_t>(g_live_tensors.size());
  return t;
}

aclnnStatus aclDestroyTensor(const aclTensor* tensor) {
  if (tensor == nullptr) return Fail(161001, "aclDestroyTensor(nullptr)");
  if (g_live_tensors.erase(tensor) == 0) return Fail(161002, "aclDestroyTensor on a tensor not alive");
  delete tensor;
  ++g_record.destroyed;
  g_record.live_tensors = static_cast<int64_t>(g_live_tensors.size());
  return 0;
}

aclnnStatus aclnnSiluBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                              aclTensor* gradInput, uint64_t* workspaceSize,
                                              aclOpExecutor** executor) {
  ++g_record.phase1_calls;
  if (gradOutput == nullptr || self == nullptr || gradInput == nullptr || workspaceSize == nullptr ||
      executor == nullptr) {
    return Fail(161001, "aclnnSiluBackwardGetWorkspaceSize: a null argument");
  }
  if (g_mode.phase1_status != 0) {
    return Fail(g_mode.phase1_status,
                "aclnnSiluBackwardGetWorkspaceSize set to fail with " + std::to_string(g_mode.phase1_status));
  }
  // What the operator's documentation asks of its tensors.
  for (const aclTensor* t : {gradOutput, self, static_cast<const aclTensor*>(gradInput)}) {
    const size_t rank = t->record.dims.size();
    if (t->record.format != ACL_FORMAT_ND || rank < 1 || rank > 8) {
      return Fail(161002, "aclnnSiluBackward takes ND tensors of rank 1 to 8; got rank " +
                              std::to_string(rank) + ", format " + std::to_string(t->record.format));
    }
  }
  const jas::TensorDesc go = fake_cann::Desc(gradOutput), x = fake_cann::Desc(self),
                        gi = fake_cann::Desc(gradInput);
  uint64_t kernel_bytes = 0;
  jas::SiluGradExecutor* kernel = nullptr;
  if (jas::Status s = jas::SiluGradGetWorkspaceSize(&go, &x, &gi, &kernel_bytes, &kernel);
      s != jas::kSuccess) {
    return Fail(s, std::string("the kernel's phase 1 returned ") + jas::StatusName(s));
  }
  auto* e = new aclOpExecutor{kernel, kernel_bytes, g_mode.extra_workspace};
  g_live_executors.insert(e);
  g_record.executors_issued.push_back(e);
  *workspaceSize = kernel_bytes + e->extra;
  *executor = e;
  return 0;
}

aclnnStatus aclnnSiluBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                              aclrtStream stream) {
  ++g_record.phase2_calls;
  g_record.workspace = workspace;
  g_record.workspace_size = workspaceSize;
  g_record.stream = stream;
  g_record.executors_run.push_back(executor);
  if (executor == nullptr) return Fail(161001, "aclnnSiluBackward: null executor");
  if (g_live_executors.erase(executor) == 0) {
    return Fail(561103, "aclnnSiluBackward: executor not issued by phase 1, or already run");
  }
  std::unique_ptr<aclOpExecutor> owned(executor);  // run once, as CANN's executors
  const uint64_t required = executor->kernel_bytes + executor->extra;
  if (g_mode.phase2_status != 0) {
    jas::SiluGradDestroyExecutor(executor->kernel);
    return Fail(g_mode.phase2_status,
                "aclnnSiluBackward set to fail with " + std::to_string(g_mode.phase2_status));
  }
  if (workspaceSize < required || (required > 0 && workspace == nullptr)) {
    jas::SiluGradDestroyExecutor(executor->kernel);
    return Fail(workspace == nullptr ? 161001 : 161002,
                "aclnnSiluBackward given workspace " + std::to_string(workspaceSize) + " bytes at " +
                    (workspace ? "a valid address" : "nullptr") + ", phase 1 asked for " +
                    std::to_string(required));
  }
  if (executor->extra > 0) {  // touch every extra byte: host memory the tests allocated
    std::memset(static_cast<char*>(workspace) + executor->kernel_bytes, 0xa5, executor->extra);
    g_record.extra_workspace_written = true;
  }
  if (jas::Status s = jas::SiluGradRun(workspace, workspaceSize, executor->kernel, nullptr);
      s != jas::kSuccess) {
    return Fail(s, std::string("the kernel's phase 2 returned ") + jas::StatusName(s));
  }
  return 0;
}

}  // extern "C"
