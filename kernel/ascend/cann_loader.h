// Finding CANN at run time. Nothing of CANN is linked: the ACL runtime
// (libacl_rt, or libascendcl before CANN 9), the aclnn tensor API
// (libnnopbase) and the libraries providing the operators of the table
// (operators.h: aclnnSiluBackward, aclnnSwiGluGrad) are opened with dlopen
// when first needed, and each function is looked up by name, so one build
// serves every CANN version and a machine without CANN imports and runs
// everything else. Whatever is missing -- a library, a function -- becomes a
// message, never a crash.
//
// An operator is looked for in torch_npu's order (op-plugin's
// GetOpApiFuncAddr), so a custom aclnnSiluBackward a user installed for
// torch_npu is the one used here too: custom operator packages first (each
// entry of $ASCEND_CUSTOM_OPP_PATH, then each vendor of load_priority in
// $ASCEND_OPP_PATH/vendors/config.ini: <dir>/op_api/lib/libcust_opapi.so),
// then the per-repository libraries libopapi_*.so of CANN's lib64 (libopapi_nn
// from CANN 8.5), then libopapi.so. Each optional operator is looked for on
// its own, as torch_npu looks up each symbol: a custom package with
// aclnnSiluBackward alone leaves aclnnSwiGluGrad to CANN's own library. A
// CANN without an optional operator (aclnnSwiGluGrad before 8.0.RC1) still
// serves the others, and a call that needs it says what is missing and what
// to install (its row's advice).
#ifndef JAX_ASCEND_SILU_KERNEL_ASCEND_CANN_LOADER_H_
#define JAX_ASCEND_SILU_KERNEL_ASCEND_CANN_LOADER_H_

#include <string>
#include <vector>

#include "ascend/cann.h"
#include "ascend/operators.h"

namespace jas::ascend {

// The CANN functions the Ascend path calls besides the operators (Cann::op).
// In a Cann that ok(), the required ones are all set; the optional ones may
// be null.
struct CannApi {
  cann::aclCreateTensorFn* aclCreateTensor = nullptr;
  cann::aclDestroyTensorFn* aclDestroyTensor = nullptr;
  // Optional: stream-ordered device copies, for SwiGluGrad's pair form
  // (every ACL runtime has it; a SwiGluGrad pair call without it says so).
  cann::aclrtMemcpyAsyncFn* aclrtMemcpyAsync = nullptr;
  cann::aclGetRecentErrMsgFn* aclGetRecentErrMsg = nullptr;
  // The runtime's preconditions: a current context, and its device.
  cann::aclrtGetCurrentContextFn* aclrtGetCurrentContext = nullptr;
  cann::aclrtGetDeviceFn* aclrtGetDevice = nullptr;
  // Optional. Without it (a CANN before 8.0) an executor whose phase 2 does
  // not run cannot be released: one executor leaks per such call.
  cann::aclDestroyAclOpExecutorFn* aclDestroyAclOpExecutor = nullptr;
  // Optional: the chip class of the current device, from its NpuArch
  // (aclrtGetDeviceInfo) or else its SoC name. Without either the operator is
  // assumed not to broadcast (stride-0 views are handed over, which every
  // chip accepts).
  cann::aclrtGetDeviceInfoFn* aclrtGetDeviceInfo = nullptr;
  cann::aclrtGetSocNameFn* aclrtGetSocName = nullptr;
  // Optional, for reporting the version only.
  cann::aclsysGetVersionStrFn* aclsysGetVersionStr = nullptr;
  cann::aclsysGetCANNVersionFn* aclsysGetCANNVersion = nullptr;
};

// Where the libraries are looked for. The operator first in
// `custom_operator_dirs` (each <dir>/libcust_opapi.so), then everything in
// each of `dirs` in order (for the operator: libopapi_*.so in name order, then
// libopapi.so), then (when `loader_path`) by bare name through the dynamic
// loader's own search (LD_LIBRARY_PATH, the caller's RUNPATH, ld.so.cache,
// the system directories).
struct CannSearch {
  struct Dir {
    std::string path;
    std::string origin;  // "$ASCEND_HOME_PATH/lib64", for messages
  };
  std::vector<Dir> custom_operator_dirs;
  std::vector<Dir> dirs;
  bool loader_path = true;
  std::vector<std::string> unset;  // environment variables that would have named a directory, for messages
};

// The custom operator directories of $ASCEND_CUSTOM_OPP_PATH (entries
// separated by ':', each <entry>/op_api/lib) and of the vendors that
// $ASCEND_OPP_PATH/vendors/config.ini lists (its first line starting
// "load_priority=", names separated by ','), as torch_npu reads them; then
// lib64/ of $ASCEND_TOOLKIT_HOME, $ASCEND_HOME_PATH and $ASCEND_OPP_PATH
// (those that are set), then the loader path.
CannSearch SearchFromEnvironment();

// The vendor directories <opp_path>/vendors/<name>/op_api/lib, in the order
// of config.ini's load_priority; none when the file or the line is absent.
std::vector<CannSearch::Dir> VendorOperatorDirs(const std::string& opp_path);

struct CannLibrary {
  std::string role;    // "ACL runtime", "aclnn tensor API", "operator library"
  std::string name;    // "libacl_rt.so"
  std::string path;    // the file the loader opened
  std::string origin;  // where it was found: "$ASCEND_HOME_PATH/lib64", "the loader path", ...
};

// One operator of the table as found: both phases, or neither.
struct FoundOperator {
  // <aclnn>GetWorkspaceSize, as dlsym returned it: the glue calls it as the
  // phase-1 type of cann.h its operands have (Cann::Phase1).
  void* phase1 = nullptr;
  cann::aclnnPhase2Fn* phase2 = nullptr;
  // An optional operator's: what is missing and what to install (also one of
  // Cann::notes()), or "" when found; and the library it comes from (path ""
  // when none has it). A required operator's problems are Cann::problem()'s.
  std::string problem;
  CannLibrary library;
};

class Cann {
 public:
  // Opens the libraries and looks the functions up. Never throws or aborts:
  // what fails is in problem().
  static Cann Load(const CannSearch& search);

  Cann(Cann&& other) noexcept;
  Cann& operator=(Cann&&) = delete;
  Cann(const Cann&) = delete;
  ~Cann();  // closes the libraries it opened

  bool ok() const { return problem_.empty(); }
  const CannApi& api() const { return api_; }
  // What was looked for and not found, one line per missing piece; empty when ok().
  const std::string& problem() const { return problem_; }
  const std::vector<CannLibrary>& libraries() const { return libraries_; }
  // The library the required operators come from, or null when none was found.
  const CannLibrary* operator_library() const;
  // An operator of the table (operators.h) as found, and whether this CANN
  // can run it (ok() too).
  const FoundOperator& op(const AclnnOperator& row) const;
  bool ok(const AclnnOperator& row) const { return ok() && op(row).phase2 != nullptr; }
  // Its phase 1 as `Fn`, the cann.h type of its operands (null when not found).
  template <class Fn>
  Fn* Phase1(const AclnnOperator& row) const {
    // dlsym returns an object pointer; POSIX guarantees it converts to a function pointer.
    return reinterpret_cast<Fn*>(op(row).phase1);
  }
  // Optional functions this CANN lacks, and what that changes.
  const std::vector<std::string>& notes() const { return notes_; }
  // "8.5.0" as CANN reports it, or "" when it does not (version_note() says why).
  const std::string& version() const { return version_; }
  const std::string& version_note() const { return version_note_; }

 private:
  Cann() = default;
  CannApi api_;
  std::string problem_;
  std::vector<CannLibrary> libraries_;
  std::vector<FoundOperator> operators_;  // kAclnnOperators' rows, in order
  std::vector<std::string> notes_;
  std::string version_, version_note_;
  std::vector<void*> handles_;
};

// This process's CANN: loaded from the environment on first use and kept
// until exit (CANN's libraries are never unloaded while they may hold state).
const Cann& ProcessCann();

}  // namespace jas::ascend

#endif  // JAX_ASCEND_SILU_KERNEL_ASCEND_CANN_LOADER_H_
