// THIS IS A FAKE, NOT CANN. Host-memory stand-ins for the CANN functions the
// Ascend path calls, built as shared libraries with CANN's own names
// (libacl_rt.so / libascendcl.so, libnnopbase.so, libopapi_nn.so / libopapi.so,
// see cmake/ascend_backend.cmake) so that the package finds and opens them
// exactly as it opens a real install. All of them forward to the one state
// library this header belongs to, libjas_fake_cann.so, which tests link to
// read its counters and inject faults.
//
// It behaves as ops-nn's aclnnSiluBackward is written (CANN 8.5/9.x), on
// devices whose chips $JAX_ASCEND_SILU_FAKE_CHIP names (one per device,
// separated by ','; device 0 is "910B" when unset):
//   "910A"  Atlas training series (NpuArch 1001): float16/float32 only
//           (bfloat16 -> 161002); every view shape must equal gradInput's.
//   "910B"  Atlas A2/A3 (NpuArch 2201): bfloat16 too; shapes as 910A.
//   "950"   Ascend 950 (NpuArch 3510): operands broadcast to gradInput by the
//           operator itself.
//   "310P"  Ascend310P (NpuArch 2002): as 910A for aclnnSiluBackward.
// aclnnSwiGluGrad as ops-nn's aclnn_swi_glu_grad.cpp and swi_glu_grad_def.cpp
// have it: built for NpuArch 2201 and 3510 (float32, float16, bfloat16) and
// 2002 (no bfloat16); anything else, or no current device, is refused
// (161002). yGrad, x and out one dtype, ND, x of rank 1..8, dim in
// [-rank, rank - 1], x's size along dim even, yGrad x with it halved, out
// x's shape, no empty tensor, a contiguous yGrad (each refusal 161002; null
// tensors 161001). A non-contiguous x or out is planned as aclnnSiluBackward's
// operands are (a copy in the workspace). It computes, in float32 operations
// each rounded, sigma = 1/(1+e^-A), dA = (yGrad*B)*(sigma*(1 + A*(1 - sigma)))
// and dB = yGrad*(A*sigma), halves upcast and rounded once to nearest even.
// aclrtMemcpyAsync copies at once (host memory; the stream is only recorded).
// The ACL runtime keeps a current device per thread, as CANN does: with none
// (no context current) aclrtGetCurrentContext and aclrtGetDevice return
// ACL_ERROR_RT_CONTEXT_NULL (107002), aclrtGetSocName returns null, and phase
// 1 sees an unknown chip (bfloat16 refused, no broadcasting), as CANN's
// GetCurrentPlatformInfo does when aclrtGetDevice fails. The workspace is
// what CANN's plan needs: nothing for contiguous operands on 910A/910B (the
// kernel writes into gradInput itself, as CANN's ViewCopy arranges), 32
// bytes on 950 (its tiling's own), plus a contiguous copy of each
// non-contiguous input view (stride-0 broadcasts included), and an
// intermediate output only when gradInput is not contiguous. Phase 2 frees the
// executor, whatever it returns; aclDestroyAclOpExecutor frees one that never
// ran; aclDestroyTensor(nullptr) succeeds. The arithmetic is CANN's, not
// this package's kernel: ops-nn's silu_grad computes, in float32 operations
// each rounded, sigma = 1/(1+e^-x) and then dy*sigma*(1 + x*(1-sigma))
// (float16/bfloat16 upcast, the result rounded to nearest even), so x = +-inf
// gives NaN and accuracy is the plain formula's, as on a real Ascend. Tensors
// describe host memory; streams are only recorded. Nothing here has run on
// Ascend hardware.
#ifndef JAX_ASCEND_SILU_TESTS_ASCEND_FAKE_FAKE_CANN_H_
#define JAX_ASCEND_SILU_TESTS_ASCEND_FAKE_FAKE_CANN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ascend/cann.h"

namespace fake_cann {

using jas::cann::aclDataType;
using jas::cann::aclFormat;
using jas::cann::aclnnStatus;
using jas::cann::aclOpExecutor;
using jas::cann::aclrtStream;
using jas::cann::aclTensor;

enum class Chip { k910A, k910B, k950, k310P };
// The chips of the devices, from $JAX_ASCEND_SILU_FAKE_CHIP, read at every
// call (tests switch chips).
std::vector<Chip> DeviceChips();
// The chip of the calling thread's current device, or of device 0 when none is current.
Chip CurrentChip();
const char* ChipName(Chip chip);  // "910A", "910B", "950", "310P"
int64_t NpuArch(Chip chip);       // 1001, 2201, 3510, 2002
// What aclrtGetSocName returns: "Ascend910A", "Ascend910B3", "Ascend950PR_9589", "Ascend310P3";
// with `cann85_names`, the 950 as CANN 8.5 named it ("Ascend910_9589").
const char* SocName(Chip chip, bool cann85_names = false);

// The calling thread's current device (as aclrtSetDevice makes it), -1 for none.
int CurrentDevice();
void SetCurrentDevice(int device);  // -1: no current context

struct Faults {
  aclnnStatus phase1_status = 0;     // non-zero: either operator's phase 1 fails with it
  aclnnStatus phase2_status = 0;     // non-zero: either operator's phase 2 fails with it (and frees the executor)
  int fail_memcpy_call = -1;         // index (from 0) of the aclrtMemcpyAsync call that fails (107000)
  int fail_create_tensor_call = -1;  // index (from 0) of the aclCreateTensor call that returns null
  int device = 0;                    // the calling thread's current device after Reset; -1: no current context
};

struct TensorRecord {
  aclDataType dtype;
  aclFormat format;
  std::vector<int64_t> dims, strides, storage_dims;
  int64_t offset;
  void* data;
};

struct CopyRecord {
  void* dst;
  const void* src;
  size_t dest_max, count;
  unsigned kind;
  aclrtStream stream;
};

struct Record {
  std::vector<TensorRecord> created;  // every aclCreateTensor call that succeeded, in order
  int create_calls = 0;
  int destroyed = 0;
  int phase1_calls = 0;                          // of either operator
  int phase2_calls = 0;
  std::string phase1_operator;                   // "SiluBackward" or "SwiGluGrad": the last phase 1's
  int64_t swiglu_dim = 0;                        // the dim aclnnSwiGluGradGetWorkspaceSize got (last call)
  std::vector<CopyRecord> copies;                // every aclrtMemcpyAsync call, in order (failed ones too)
  std::vector<const void*> executors_issued;     // by phase 1
  std::vector<const void*> executors_run;        // handed to phase 2
  std::vector<const void*> executors_destroyed;  // released by aclDestroyAclOpExecutor
  uint64_t planned_workspace = 0;                // phase 1's last answer
  int materialised = 0;                          // input views phase 2 copied into the workspace (last call)
  bool intermediate_output = false;              // whether phase 2 computed into the workspace and copied (last call)
  int phase1_device = -2;                        // the current device phase 1 saw (-1: none)
  int64_t phase1_npu_arch = -1;                  // the NpuArch it planned for (0: unknown)
  std::string operator_library;                  // the fake operator library that served phase 1 (its tag)
  void* workspace = nullptr;                     // last phase 2 arguments
  uint64_t workspace_size = 0;
  aclrtStream stream = nullptr;
};

// Clears the record, sets the faults for the next calls and the calling
// thread's current device. Live tensors and
// executors are kept (and counted): a leak stays visible.
void Reset(const Faults& faults = {});
const Record& Calls();
int64_t LiveTensors();
int64_t LiveExecutors();
// Frees every live tensor and executor, returning how many there were: for
// tests of a CANN that cannot release an executor, after counting the leak.
int64_t ReleaseAll();

// What the exported CANN functions forward to (see the libraries' sources).
namespace impl {
const char* RecentErrMsg();
jas::cann::aclError GetCurrentContext(jas::cann::aclrtContext* context);
jas::cann::aclError GetDevice(int32_t* deviceId);
jas::cann::aclError SetDevice(int32_t deviceId);
jas::cann::aclError GetDeviceInfo(uint32_t deviceId, jas::cann::aclrtDevAttr attr, int64_t* value, bool has_npu_arch);
const char* CurrentSocName(bool cann85_names);
void NoteOperatorLibrary(const char* tag);
aclTensor* CreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType, const int64_t* stride,
                        int64_t offset, aclFormat format, const int64_t* storageDims, uint64_t storageDimsNum,
                        void* tensorData);
aclnnStatus DestroyTensor(const aclTensor* tensor);
aclnnStatus DestroyExecutor(aclOpExecutor* executor);
aclnnStatus GetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self, aclTensor* gradInput,
                             uint64_t* workspaceSize, aclOpExecutor** executor);
aclnnStatus SwiGluGradGetWorkspaceSize(const aclTensor* yGrad, const aclTensor* x, int64_t dim, const aclTensor* out,
                                       uint64_t* workspaceSize, aclOpExecutor** executor);
// Phase 2 of `op` ("SiluBackward" or "SwiGluGrad"): an executor of the other refused.
aclnnStatus Run(const char* op, void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                aclrtStream stream);
jas::cann::aclError MemcpyAsync(void* dst, size_t destMax, const void* src, size_t count,
                                jas::cann::aclrtMemcpyKind kind, aclrtStream stream);
}  // namespace impl

}  // namespace fake_cann

#endif  // JAX_ASCEND_SILU_TESTS_ASCEND_FAKE_FAKE_CANN_H_
