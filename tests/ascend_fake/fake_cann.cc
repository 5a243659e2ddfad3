// THIS IS A FAKE, NOT CANN: see fake_cann.h. The state library behind the
// fake CANN libraries.
#include "fake_cann.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>

#include "common/half.h"

namespace jas::cann {

struct aclTensor {
  fake_cann::TensorRecord record;
};

struct aclOpExecutor {
  std::string op;                      // "SiluBackward" or "SwiGluGrad"
  int64_t dim = 0;                     // SwiGluGrad's split dim, in [0, rank)
  fake_cann::TensorRecord tensors[3];  // gradOutput, self, gradInput (yGrad, x, out) as phase 1 saw them
  bool empty = false;
  bool materialise[2] = {false, false};  // inputs copied into the workspace first (l0op::Contiguous)
  uint64_t input_region[2] = {0, 0};     // their offsets in the workspace
  bool intermediate = false;             // gradInput not contiguous: computed into the workspace, then copied
  uint64_t output_region = 0;            // the intermediate output's offset
  uint64_t tiling_region = 0;            // the tiling's own workspace (950)
  uint64_t tiling_bytes = 0;
  uint64_t total = 0;
};

}  // namespace jas::cann

namespace fake_cann {

Chip ChipOf(int device);  // the chip of `device`, which must exist

namespace {

// CANN aligns each workspace block; any generous alignment shows the sum is kept.
constexpr uint64_t kAlign = 512;
// What ops-nn's 950 tiling (arch35 silu_grad_tiling.cpp) asks for.
constexpr uint64_t k950TilingWorkspace = 32;
constexpr int kNoDevice = -1;

Faults g_faults;
Record g_record;
std::set<const aclTensor*> g_tensors;
std::set<aclOpExecutor*> g_executors;
thread_local std::string g_message;
thread_local int g_device = kNoDevice;
// One token per device, handed out as its context.
char g_contexts[16];

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

// How phase 2 reaches an operand's elements: through its own view, or through
// the contiguous copy of it phase 2 made in the workspace.
struct Place {
  char* data;
  std::vector<int64_t> dims, strides;
  int64_t offset;
};

Place ViewOf(const TensorRecord& t) { return {static_cast<char*>(t.data), t.dims, t.strides, t.offset}; }

Place CopyOf(const TensorRecord& t, char* copy) {
  std::vector<int64_t> strides(t.dims.size());
  int64_t step = 1;
  for (size_t i = t.dims.size(); i-- > 0;) {
    strides[i] = step;
    step *= t.dims[i];
  }
  return {copy, t.dims, strides, 0};
}

float Load(aclDataType t, const char* p) {
  if (t == jas::cann::ACL_FLOAT) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return t == jas::cann::ACL_FLOAT16 ? jas::half::F16ToFloat(h) : jas::half::BF16ToFloat(h);
}

// float16/bfloat16 results rounded to nearest even (the kernel's CAST_RINT).
void Store(aclDataType t, char* p, float v) {
  if (t == jas::cann::ACL_FLOAT) {
    std::memcpy(p, &v, 4);
    return;
  }
  const uint16_t h = t == jas::cann::ACL_FLOAT16 ? jas::half::FloatToF16(v) : jas::half::FloatToBF16(v);
  std::memcpy(p, &h, 2);
}

// What ops-nn's silu_grad kernel computes per element, every operation a
// float32 one rounded on its own (its Muls, Exp, Adds, Div, Sub, Mul, Adds,
// Mul, Mul): sigma = 1/(1 + e^-x), then dy*(sigma*(1 + (1 - sigma)*x)). At
// x = +inf (1 - sigma)*x is 0*inf, at x = -inf sigma*(...) is 0*-inf: NaN
// both. The host's expf stands in for the vector unit's Exp. The library is
// built with -ffp-contract=off, so no step is fused.
float CannSiluGrad(float dy, float x) {
  const float sigma = 1.0f / (1.0f + std::exp(-x));
  return dy * (sigma * (1.0f + (1.0f - sigma) * x));
}

// The storage offset of out-index `idx` in `p`, broadcast from the right as
// the 950 operator broadcasts (elsewhere every view has gradInput's dims).
int64_t OffsetAt(const Place& p, const std::vector<int64_t>& idx) {
  int64_t off = p.offset;
  const size_t r = idx.size(), k = p.dims.size();
  for (size_t j = 0; j < k; ++j) {
    if (p.dims[j] != 1) off += idx[j + r - k] * p.strides[j];
  }
  return off;
}

// The operator over gradInput's shape: inputs from `in`, results into `out`.
void Compute(const Place in[2], const Place& out, aclDataType dtype) {
  const int64_t esize = ElementBytes(dtype);
  const int64_t n = Numel(out.dims);
  std::vector<int64_t> idx(out.dims.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    const float dy = Load(dtype, in[0].data + OffsetAt(in[0], idx) * esize);
    const float x = Load(dtype, in[1].data + OffsetAt(in[1], idx) * esize);
    Store(dtype, out.data + OffsetAt(out, idx) * esize, CannSiluGrad(dy, x));
    for (size_t j = idx.size(); j-- > 0;) {
      if (++idx[j] < out.dims[j]) break;
      idx[j] = 0;
    }
  }
}

// What ops-nn's swi_glu_grad kernel computes per element pair, every
// operation a float32 one rounded on its own: sigma = 1/(1 + e^-A), then
// dA = (yGrad*B)*(sigma*(1 + A*(1 - sigma))) and dB = yGrad*(A*sigma).
void CannSwiGluGrad(float g, float a, float b, float* da, float* db) {
  const float sigma = 1.0f / (1.0f + std::exp(-a));
  *da = (g * b) * (sigma * (1.0f + a * (1.0f - sigma)));
  *db = g * (a * sigma);
}

// SwiGluGrad over contiguous places (yGrad's own, x's and out's own or
// their workspace copies): row o of x holds A then B, `inner` elements
// per step of dim, `half` steps each.
void ComputeSwiGlu(const Place in[2], const Place& out, const aclOpExecutor& e) {
  const aclDataType dtype = e.tensors[2].dtype;
  const int64_t esize = ElementBytes(dtype);
  const std::vector<int64_t>& dims = e.tensors[1].dims;
  int64_t outer = 1, inner = 1;
  for (int64_t j = 0; j < e.dim; ++j) outer *= dims[j];
  for (size_t j = e.dim + 1; j < dims.size(); ++j) inner *= dims[j];
  const int64_t half = dims[e.dim] / 2 * inner;  // elements of A (or B) per row
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < half; ++k) {
      const int64_t ia = o * 2 * half + k, ib = ia + half;
      float da, db;
      CannSwiGluGrad(Load(dtype, in[0].data + (in[0].offset + o * half + k) * esize),
                     Load(dtype, in[1].data + (in[1].offset + ia) * esize),
                     Load(dtype, in[1].data + (in[1].offset + ib) * esize), &da, &db);
      Store(dtype, out.data + (out.offset + ia) * esize, da);
      Store(dtype, out.data + (out.offset + ib) * esize, db);
    }
  }
}

// The workspace CANN plans for an executor's checked tensors (inputs 0 and
// 1, output 2) on NpuArch `arch`: see fake_cann.h.
void Plan(aclOpExecutor* e, int64_t arch) {
  const TensorRecord* t = e->tensors;
  e->empty = Numel(t[0].dims) == 0 || Numel(t[1].dims) == 0 || Numel(t[2].dims) == 0;
  if (e->empty) return;
  const int64_t esize = ElementBytes(t[2].dtype);
  uint64_t at = 0;
  for (int i = 0; i < 2; ++i) {
    e->materialise[i] = !Contiguous(t[i]);
    if (e->materialise[i]) {
      e->input_region[i] = at;
      at += Align(static_cast<uint64_t>(Numel(t[i].dims) * esize));
    }
  }
  // l0op::ViewCopy points the kernel's output at a contiguous gradInput
  // itself; only a non-contiguous one gets an intermediate output.
  e->intermediate = !Contiguous(t[2]);
  if (e->intermediate) {
    e->output_region = at;
    at += Align(static_cast<uint64_t>(Numel(t[2].dims) * esize));
  }
  e->tiling_bytes = arch == 3510 ? k950TilingWorkspace : 0;
  e->tiling_region = at;
  e->total = at + e->tiling_bytes;
}

// Phase 1's end, whichever operator: the plan recorded, the executor handed out.
aclnnStatus Issue(std::unique_ptr<aclOpExecutor> e, int64_t arch, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Plan(e.get(), arch);
  *workspaceSize = e->total;
  *executor = e.get();
  g_record.planned_workspace = e->total;
  g_record.executors_issued.push_back(e.get());
  g_executors.insert(e.release());
  return 0;
}

// The current device's NpuArch as GetCurrentPlatformInfo reads it (0:
// unknown, no current device), recorded, with a description for messages.
int64_t PlatformArch(std::string* where) {
  g_record.phase1_device = g_device;
  const int64_t arch = g_device == kNoDevice ? 0 : NpuArch(ChipOf(g_device));
  g_record.phase1_npu_arch = arch;
  *where = g_device == kNoDevice ? std::string("no current device (NpuArch unknown)")
                                 : "device " + std::to_string(g_device) + " (NpuArch " + std::to_string(arch) + ")";
  return arch;
}

void Free(aclOpExecutor* e) {
  g_executors.erase(e);
  delete e;
}

}  // namespace

std::vector<Chip> DeviceChips() {
  const char* v = std::getenv("JAX_ASCEND_SILU_FAKE_CHIP");
  std::vector<Chip> chips;
  const std::string list = (v == nullptr || *v == '\0') ? "910B" : v;
  size_t begin = 0;
  while (begin <= list.size()) {
    const size_t end = std::min(list.find(',', begin), list.size());
    const std::string name = list.substr(begin, end - begin);
    if (name == "910A") {
      chips.push_back(Chip::k910A);
    } else if (name == "910B") {
      chips.push_back(Chip::k910B);
    } else if (name == "950") {
      chips.push_back(Chip::k950);
    } else if (name == "310P") {
      chips.push_back(Chip::k310P);
    } else {
      std::fprintf(stderr, "fake CANN: JAX_ASCEND_SILU_FAKE_CHIP=%s; expected 910A, 910B, 950 or 310P, separated by ','\n",
                   list.c_str());
      std::abort();  // a test set-up mistake, not a CANN behaviour
    }
    begin = end + 1;
  }
  if (chips.size() > sizeof g_contexts) std::abort();
  return chips;
}

Chip ChipOf(int device) {
  const std::vector<Chip> chips = DeviceChips();
  if (device < 0 || device >= static_cast<int>(chips.size())) {
    std::fprintf(stderr, "fake CANN: device %d made current, but JAX_ASCEND_SILU_FAKE_CHIP names %zu\n", device,
                 chips.size());
    std::abort();  // a test set-up mistake
  }
  return chips[device];
}

Chip CurrentChip() { return ChipOf(g_device == kNoDevice ? 0 : g_device); }

// One row per chip: its name, NpuArch and SoC name.
struct ChipRow {
  Chip chip;
  const char* name;
  int64_t npu_arch;
  const char* soc_name;
};
constexpr ChipRow kChipRows[] = {
    {Chip::k910A, "910A", 1001, "Ascend910A"},
    {Chip::k910B, "910B", 2201, "Ascend910B3"},
    {Chip::k950, "950", 3510, "Ascend950PR_9589"},
    {Chip::k310P, "310P", 2002, "Ascend310P3"},
};
const ChipRow& RowOf(Chip chip) {
  for (const ChipRow& r : kChipRows) {
    if (r.chip == chip) return r;
  }
  std::abort();
}

const char* ChipName(Chip chip) { return RowOf(chip).name; }

int64_t NpuArch(Chip chip) { return RowOf(chip).npu_arch; }

const char* SocName(Chip chip, bool cann85_names) {
  if (chip == Chip::k950 && cann85_names) return "Ascend910_9589";
  return RowOf(chip).soc_name;
}

int CurrentDevice() { return g_device; }
void SetCurrentDevice(int device) { g_device = device; }

void Reset(const Faults& faults) {
  g_faults = faults;
  g_record = Record{};
  g_message.clear();
  g_device = faults.device;
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

jas::cann::aclError GetCurrentContext(jas::cann::aclrtContext* context) {
  if (context == nullptr) return Fail(jas::cann::kAclErrorInvalidParam, "aclrtGetCurrentContext(nullptr)");
  if (g_device == kNoDevice) return jas::cann::kAclErrorRtContextNull;  // CANN records no message for this state
  *context = &g_contexts[g_device];
  return 0;
}

jas::cann::aclError GetDevice(int32_t* deviceId) {
  if (deviceId == nullptr) return Fail(jas::cann::kAclErrorInvalidParam, "aclrtGetDevice(nullptr)");
  if (g_device == kNoDevice) return jas::cann::kAclErrorRtContextNull;
  *deviceId = g_device;
  return 0;
}

jas::cann::aclError SetDevice(int32_t deviceId) {
  if (deviceId < 0 || deviceId >= static_cast<int32_t>(DeviceChips().size())) {
    return Fail(jas::cann::kAclErrorRtInvalidDeviceId, "aclrtSetDevice(" + std::to_string(deviceId) + "): this "
                "fake has " + std::to_string(DeviceChips().size()) + " device(s)");
  }
  g_device = deviceId;
  return 0;
}

jas::cann::aclError GetDeviceInfo(uint32_t deviceId, jas::cann::aclrtDevAttr attr, int64_t* value, bool has_npu_arch) {
  if (value == nullptr) return Fail(jas::cann::kAclErrorInvalidParam, "aclrtGetDeviceInfo: value is nullptr");
  const std::vector<Chip> chips = DeviceChips();
  if (deviceId >= chips.size()) {
    return Fail(jas::cann::kAclErrorRtInvalidDeviceId, "aclrtGetDeviceInfo: no device " + std::to_string(deviceId));
  }
  if (attr != jas::cann::ACL_DEV_ATTR_NPU_ARCH || !has_npu_arch) {
    return Fail(jas::cann::kAclErrorInvalidParam, "aclrtGetDeviceInfo: attribute " + std::to_string(attr) +
                " is not one this runtime knows");
  }
  *value = NpuArch(chips[deviceId]);
  return 0;
}

const char* CurrentSocName(bool cann85_names) {
  return g_device == kNoDevice ? nullptr : SocName(ChipOf(g_device), cann85_names);
}

void NoteOperatorLibrary(const char* tag) { g_record.operator_library = tag; }

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
  if (tensor == nullptr) return 0;  // as opbase's: nothing to do
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
  g_record.phase1_operator = "SiluBackward";
  // GetCurrentPlatformInfo: the current device's NpuArch; unknown (0) when
  // aclrtGetDevice fails.
  std::string where;
  const int64_t arch = PlatformArch(&where);
  const bool broadcasts = arch == 3510, bfloat16 = arch == 2201 || arch == 3510;
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
  if (!bfloat16 && (t[0]->dtype == jas::cann::ACL_BF16 || t[1]->dtype == jas::cann::ACL_BF16)) {
    return Fail(161002, "bfloat16 operands refused on " + where);
  }
  if (broadcasts) {
    std::vector<int64_t> shape;
    if (!BroadcastShape(t[0]->dims, t[1]->dims, &shape) || shape != t[2]->dims) {
      return Fail(161002, "gradOutput " + List(t[0]->dims) + " and self " + List(t[1]->dims) +
                              " do not broadcast to gradInput " + List(t[2]->dims));
    }
  } else if (t[0]->dims != t[2]->dims || t[1]->dims != t[2]->dims) {
    return Fail(161002, "on " + where + " gradOutput " + List(t[0]->dims) + " and self " + List(t[1]->dims) +
                            " must have gradInput's shape " + List(t[2]->dims));
  }

  auto e = std::make_unique<aclOpExecutor>();
  e->op = "SiluBackward";
  for (int i = 0; i < 3; ++i) e->tensors[i] = *t[i];
  return Issue(std::move(e), arch, workspaceSize, executor);
}

aclnnStatus SwiGluGradGetWorkspaceSize(const aclTensor* yGrad, const aclTensor* x, int64_t dim, const aclTensor* out,
                                       uint64_t* workspaceSize, aclOpExecutor** executor) {
  ++g_record.phase1_calls;
  g_record.phase1_operator = "SwiGluGrad";
  g_record.swiglu_dim = dim;
  constexpr const char* kOp = "aclnnSwiGluGradGetWorkspaceSize: ";
  if (workspaceSize == nullptr || executor == nullptr) {
    return Fail(161001, std::string(kOp) + "null workspaceSize or executor");
  }
  if (yGrad == nullptr || x == nullptr || out == nullptr) return Fail(161001, std::string(kOp) + "a null tensor");
  if (g_faults.phase1_status != 0) {
    return Fail(g_faults.phase1_status, std::string(kOp) + "set to fail with " + std::to_string(g_faults.phase1_status));
  }
  std::string where;
  const int64_t arch = PlatformArch(&where);
  // swi_glu_grad_def.cpp: ascend910b/910_93 and 950/350 with bfloat16, 310p without.
  const bool built = arch == 2201 || arch == 3510 || arch == 2002, bfloat16 = arch == 2201 || arch == 3510;
  if (!built) return Fail(161002, std::string(kOp) + "not supported on " + where);
  const TensorRecord* t[3] = {&yGrad->record, &x->record, &out->record};
  static constexpr const char* kNames[3] = {"yGrad", "x", "out"};
  for (int i = 0; i < 3; ++i) {
    if (ElementBytes(t[i]->dtype) == 0) {
      return Fail(161002, std::string(kOp) + kNames[i] + " dtype " + std::to_string(t[i]->dtype) +
                              " is not float16, float32 or bfloat16");
    }
    if (t[i]->format != jas::cann::ACL_FORMAT_ND || t[i]->dims.empty() || t[i]->dims.size() > 8) {
      return Fail(161002, std::string(kOp) + kNames[i] + ": ND tensors of rank 1 to 8 only; got rank " +
                              std::to_string(t[i]->dims.size()));
    }
    if (Numel(t[i]->dims) == 0) return Fail(161002, std::string(kOp) + kNames[i] + " is empty");
  }
  if (t[0]->dtype != t[1]->dtype || t[2]->dtype != t[1]->dtype) {
    return Fail(161002, std::string(kOp) + "yGrad, x and out must share one dtype");
  }
  if (!bfloat16 && t[1]->dtype == jas::cann::ACL_BF16) {
    return Fail(161002, std::string(kOp) + "bfloat16 refused on " + where);
  }
  const int64_t rank = static_cast<int64_t>(t[1]->dims.size());
  if (dim < -rank || dim >= rank) {
    return Fail(161002, std::string(kOp) + "dim " + std::to_string(dim) + " is out of range for x " +
                            List(t[1]->dims));
  }
  const int64_t d = dim < 0 ? dim + rank : dim;
  if (t[1]->dims[d] % 2 != 0) {
    return Fail(161002, std::string(kOp) + "x " + List(t[1]->dims) + " has an odd size along dim " +
                            std::to_string(d));
  }
  std::vector<int64_t> halved = t[1]->dims;
  halved[d] /= 2;
  if (t[0]->dims != halved || t[2]->dims != t[1]->dims) {
    return Fail(161002, std::string(kOp) + "yGrad " + List(t[0]->dims) + " must be x " + List(t[1]->dims) +
                            " halved along dim " + std::to_string(d) + ", out " + List(t[2]->dims) + " x's shape");
  }
  if (!Contiguous(*t[0])) return Fail(161002, std::string(kOp) + "yGrad must be contiguous");
  auto e = std::make_unique<aclOpExecutor>();
  e->op = "SwiGluGrad";
  e->dim = d;
  for (int i = 0; i < 3; ++i) e->tensors[i] = *t[i];
  return Issue(std::move(e), arch, workspaceSize, executor);
}

jas::cann::aclError MemcpyAsync(void* dst, size_t destMax, const void* src, size_t count,
                                jas::cann::aclrtMemcpyKind kind, aclrtStream stream) {
  const int call = static_cast<int>(g_record.copies.size());
  g_record.copies.push_back({dst, src, destMax, count, static_cast<unsigned>(kind), stream});
  if (call == g_faults.fail_memcpy_call) {
    return Fail(107000, "aclrtMemcpyAsync set to fail at call " + std::to_string(call));  // ACL_ERROR_RT_PARAM_INVALID
  }
  if (dst == nullptr || src == nullptr || count > destMax || static_cast<unsigned>(kind) > 7) {
    return Fail(jas::cann::kAclErrorInvalidParam, "aclrtMemcpyAsync: null pointer, count past destMax, or bad kind");
  }
  if (g_device == kNoDevice) return jas::cann::kAclErrorRtContextNull;
  std::memmove(dst, src, count);  // host memory: done at once, in stream order
  return 0;
}

aclnnStatus Run(const char* op, void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                aclrtStream stream) {
  ++g_record.phase2_calls;
  g_record.workspace = workspace;
  g_record.workspace_size = workspaceSize;
  g_record.stream = stream;
  g_record.executors_run.push_back(executor);
  g_record.materialised = 0;
  const std::string name = std::string("aclnn") + op;
  if (executor == nullptr) return Fail(161001, name + ": null executor");
  if (g_executors.count(executor) == 0) {
    return Fail(561103, name + ": executor not issued by phase 1, or already run or destroyed");
  }
  // Run once: freed on every path from here, as CANN's non-repeatable executors.
  std::unique_ptr<aclOpExecutor, void (*)(aclOpExecutor*)> owned(executor, &Free);
  const aclOpExecutor& e = *executor;
  if (e.op != op) return Fail(561103, name + ": the executor is " + e.op + "'s");
  if (workspaceSize > 0 && workspace == nullptr) return Fail(161001, name + ": workspace is nullptr");
  if (g_device == kNoDevice) return Fail(361001, name + ": no current context to launch on");
  if (g_faults.phase2_status != 0) {
    return Fail(g_faults.phase2_status, name + " set to fail with " + std::to_string(g_faults.phase2_status));
  }
  if (workspaceSize < e.total) {
    return Fail(161002, name + " given " + std::to_string(workspaceSize) +
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
  if (e.tiling_bytes > 0) std::memset(ws + e.tiling_region, 0xa5, e.tiling_bytes);  // the tiling's scratch is used
  Place in[2];
  for (int i = 0; i < 2; ++i) {
    in[i] = e.materialise[i] ? CopyOf(e.tensors[i], ws + e.input_region[i]) : ViewOf(e.tensors[i]);
  }
  // A contiguous gradInput is written directly (ViewCopy points the kernel at it).
  const Place out = e.intermediate ? CopyOf(e.tensors[2], ws + e.output_region) : ViewOf(e.tensors[2]);
  if (e.op == "SwiGluGrad") {
    ComputeSwiGlu(in, out, e);
  } else {
    Compute(in, out, e.tensors[2].dtype);
  }
  g_record.intermediate_output = e.intermediate;
  if (e.intermediate) {  // l0op::ViewCopy: the intermediate output into gradInput's view
    const TensorRecord& out = e.tensors[2];
    char* dst = static_cast<char*>(out.data);
    const char* src = ws + e.output_region;
    ForEachElement(out, [&](int64_t off, int64_t flat) { std::memcpy(dst + off * esize, src + flat * esize, esize); });
  }
  return 0;
}

}  // namespace impl
}  // namespace fake_cann
