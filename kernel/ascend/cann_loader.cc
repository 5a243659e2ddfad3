// Finding CANN at run time: see cann_loader.h.
#include "ascend/cann_loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace jas::ascend {
namespace {

// RTLD_LAZY as torch_npu opens CANN: CANN's libraries may refer to functions
// of others that only some install types ship, and bind them when called.
constexpr int kOpenFlags = RTLD_LAZY | RTLD_LOCAL;

std::string LastDlError() {
  const char* e = dlerror();
  return e != nullptr ? e : "unknown dlopen error";
}

std::string OpenedPath(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

// One file to try for a role: a path, or a bare name for the loader's own search.
struct Candidate {
  std::string name;    // "libopapi_nn.so"
  std::string target;  // what dlopen is given
  std::string origin;  // for CannLibrary::origin
};

struct Role {
  const char* role;
  std::vector<const char*> names;  // in order of preference (the operator's: see OperatorCandidates)
  const char* probe;               // a function the right library must have
};

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// torch_npu skips a custom operator library owned by someone else than this
// user (root's files excepted for other users), and a root process skips
// other users' files: a writable-by-others library would run their code.
bool OwnedAcceptably(const std::string& path, std::string* why) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return false;
  const uid_t me = getuid();
  if (st.st_uid == me || (me != 0 && st.st_uid == 0)) return true;
  *why = path + " is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " + std::to_string(me) +
         ")" + (me != 0 ? " or root" : "") + ": skipped, as torch_npu skips it";
  return false;
}

// libopapi_*.so in `dir`, in name order (torch_npu takes directory order,
// which no file system promises).
std::vector<std::string> PerRepositoryLibraries(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    struct stat st {};
    if (name.size() > 12 && name.compare(0, 9, "libopapi_") == 0 && name.compare(name.size() - 3, 3, ".so") == 0 &&
        stat((dir + "/" + name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      names.push_back(name);
    }
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<Candidate> Candidates(const Role& role, const CannSearch& search) {
  std::vector<Candidate> out;
  for (const char* name : role.names) {
    for (const CannSearch::Dir& dir : search.dirs) {
      const std::string path = dir.path + "/" + name;
      if (Exists(path)) out.push_back({name, path, dir.origin});  // absent: only the summary names the directory
    }
    if (search.loader_path) out.push_back({name, name, "the loader path"});
  }
  return out;
}

constexpr const char* kCustomOperatorLibrary = "libcust_opapi.so";

std::vector<Candidate> OperatorCandidates(const CannSearch& search, std::vector<std::string>* tried) {
  std::vector<Candidate> out;
  for (const CannSearch::Dir& dir : search.custom_operator_dirs) {
    const std::string path = dir.path + "/" + kCustomOperatorLibrary;
    std::string why;
    if (!Exists(path)) continue;
    if (OwnedAcceptably(path, &why)) {
      out.push_back({kCustomOperatorLibrary, path, dir.origin});
    } else {
      tried->push_back(why);
    }
  }
  for (const CannSearch::Dir& dir : search.dirs) {
    for (const std::string& name : PerRepositoryLibraries(dir.path)) {
      out.push_back({name, dir.path + "/" + name, dir.origin});
    }
    if (Exists(dir.path + "/libopapi.so")) out.push_back({"libopapi.so", dir.path + "/libopapi.so", dir.origin});
  }
  if (search.loader_path) {
    for (const char* name : {"libopapi_nn.so", "libopapi.so"}) out.push_back({name, name, "the loader path"});
  }
  return out;
}

// The first candidate that opens and has `role.probe`; *tried collects why
// the others failed.
void* Find(const Role& role, const std::vector<Candidate>& candidates, CannLibrary* found,
           std::vector<std::string>* tried) {
  for (const Candidate& c : candidates) {
    const bool bare = c.target.find('/') == std::string::npos;
    void* handle = dlopen(c.target.c_str(), kOpenFlags);
    if (handle == nullptr) {
      const std::string error = LastDlError();
      // Absent from the loader path is what the summary says already.
      if (!bare || error.find("No such file or directory") == std::string::npos) {
        tried->push_back((bare ? c.name + " on the loader path" : c.target) + ": " + error);
      }
      continue;
    }
    if (dlsym(handle, role.probe) == nullptr) {
      tried->push_back(OpenedPath(handle, c.target) + " has no " + role.probe);
      dlclose(handle);
      continue;
    }
    *found = CannLibrary{role.role, c.name, OpenedPath(handle, c.target), c.origin};
    return handle;
  }
  return nullptr;
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

std::string WhereSearched(const CannSearch& search, bool custom) {
  std::vector<std::string> where;
  if (custom) {
    for (const CannSearch::Dir& dir : search.custom_operator_dirs) where.push_back(dir.path + " (" + dir.origin + ")");
  }
  for (const CannSearch::Dir& dir : search.dirs) where.push_back(dir.path + " (" + dir.origin + ")");
  if (search.loader_path) where.emplace_back("the loader path (LD_LIBRARY_PATH, ld.so.cache)");
  std::string s = where.empty() ? "nowhere (no directory given)" : Join(where, ", ");
  if (!search.unset.empty()) s += "; " + Join(search.unset, ", ") + (search.unset.size() > 1 ? " are" : " is") + " unset";
  return s;
}

// "<role>: <what> not found in <where> [<why each candidate failed>]".
std::string NotFound(const Role& role, bool op, const CannSearch& search, const std::vector<std::string>& tried) {
  const std::vector<std::string> names(role.names.begin(), role.names.end());
  std::string line = std::string(role.role) + ": " +
                     (op ? std::string(role.probe) + " in " + Join(names, ", ") : Join(names, " or ")) +
                     " not found in " + WhereSearched(search, op);
  // Each failure once: a bare name on the loader path can resolve to a file already tried by its path.
  std::vector<std::string> distinct;
  for (const std::string& t : tried) {
    if (std::find(distinct.begin(), distinct.end(), t) == distinct.end()) distinct.push_back(t);
  }
  if (!distinct.empty()) line += " [" + Join(distinct, "; ") + "]";
  return line;
}

template <class Fn>
bool Lookup(void* handle, const char* name, Fn** out) {
  // dlsym returns an object pointer; POSIX guarantees it converts to a function pointer.
  *out = reinterpret_cast<Fn*>(dlsym(handle, name));
  return *out != nullptr;
}

// The non-empty pieces of `text` between `separator`s (a search path, a priority list).
std::vector<std::string> SplitNonEmpty(const std::string& text, char separator) {
  std::vector<std::string> pieces;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(separator, begin), text.size());
    if (end > begin) pieces.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return pieces;
}

}  // namespace

std::vector<CannSearch::Dir> VendorOperatorDirs(const std::string& opp_path) {
  std::vector<CannSearch::Dir> dirs;
  const std::string vendors = opp_path + "/vendors";
  std::ifstream config(vendors + "/config.ini");
  static constexpr char kKey[] = "load_priority=";
  std::string line;
  bool found = false;
  while (!found && std::getline(config, line)) found = line.compare(0, sizeof kKey - 1, kKey) == 0;
  if (!found) return dirs;
  for (const std::string& name : SplitNonEmpty(line.substr(sizeof kKey - 1), ',')) {
    dirs.push_back({vendors + "/" + name + "/op_api/lib",
                    "vendor " + name + " of $ASCEND_OPP_PATH/vendors/config.ini"});
  }
  return dirs;
}

CannSearch SearchFromEnvironment() {
  CannSearch search;
  auto get = [&](const char* var) -> const char* {
    const char* value = std::getenv(var);
    if (value != nullptr && *value != '\0') return value;
    search.unset.push_back(std::string("$") + var);
    return nullptr;
  };
  // An option, not part of an install: never reported as unset.
  if (const char* custom = std::getenv("ASCEND_CUSTOM_OPP_PATH")) {
    for (const std::string& entry : SplitNonEmpty(custom, ':')) {
      search.custom_operator_dirs.push_back({entry + "/op_api/lib", "$ASCEND_CUSTOM_OPP_PATH entry " + entry});
    }
  }
  for (const char* var : {"ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH", "ASCEND_OPP_PATH"}) {
    const char* value = get(var);
    if (value == nullptr) continue;
    if (std::strcmp(var, "ASCEND_OPP_PATH") == 0) {
      for (CannSearch::Dir& d : VendorOperatorDirs(value)) search.custom_operator_dirs.push_back(std::move(d));
    }
    const std::string dir = std::string(value) + "/lib64";
    bool seen = false;
    for (const CannSearch::Dir& d : search.dirs) seen = seen || d.path == dir;
    if (!seen) search.dirs.push_back({dir, std::string("$") + var + "/lib64"});
  }
  return search;
}

Cann::Cann(Cann&& other) noexcept
    : api_(other.api_),
      problem_(std::move(other.problem_)),
      libraries_(std::move(other.libraries_)),
      operators_(std::move(other.operators_)),
      notes_(std::move(other.notes_)),
      version_(std::move(other.version_)),
      version_note_(std::move(other.version_note_)),
      handles_(std::move(other.handles_)) {
  other.api_ = CannApi{};
  other.handles_.clear();
}

Cann::~Cann() {
  for (auto it = handles_.rbegin(); it != handles_.rend(); ++it) dlclose(*it);
}

Cann Cann::Load(const CannSearch& search) {
  Cann cann;
  std::vector<std::string> missing;
  // Dependencies first: the operator library needs the other two. It is the
  // one that has the first required operator's phase 1.
  const std::string probe = std::string(kAclnnOperators[0]->aclnn) + "GetWorkspaceSize";
  const Role roles[3] = {
      {"ACL runtime", {"libacl_rt.so", "libascendcl.so"}, "aclGetRecentErrMsg"},
      {"aclnn tensor API", {"libnnopbase.so"}, "aclCreateTensor"},
      {"operator library", {"libcust_opapi.so", "libopapi_*.so", "libopapi.so"}, probe.c_str()},
  };
  void* handles[3] = {nullptr, nullptr, nullptr};
  for (int i = 0; i < 3; ++i) {
    CannLibrary found;
    std::vector<std::string> tried;
    const bool op = i == 2;
    const std::vector<Candidate> candidates = op ? OperatorCandidates(search, &tried) : Candidates(roles[i], search);
    handles[i] = Find(roles[i], candidates, &found, &tried);
    if (handles[i] == nullptr) {
      missing.push_back(NotFound(roles[i], op, search, tried));
      continue;
    }
    cann.handles_.push_back(handles[i]);
    cann.libraries_.push_back(found);
  }

  // Each function by name, in the library that documents it.
  auto require = [&](int lib, const char* name, auto** out) {
    if (handles[lib] != nullptr && !Lookup(handles[lib], name, out)) {
      missing.push_back(std::string(roles[lib].role) + ": " + OpenedPath(handles[lib], "?") + " has no " + name);
    }
  };
  CannApi& api = cann.api_;
  require(0, "aclGetRecentErrMsg", &api.aclGetRecentErrMsg);
  require(0, "aclrtGetCurrentContext", &api.aclrtGetCurrentContext);
  require(0, "aclrtGetDevice", &api.aclrtGetDevice);
  require(1, "aclCreateTensor", &api.aclCreateTensor);
  require(1, "aclDestroyTensor", &api.aclDestroyTensor);
  cann.operators_.resize(std::size(kAclnnOperators));
  for (size_t i = 0; i < std::size(kAclnnOperators); ++i) {
    const AclnnOperator& row = *kAclnnOperators[i];
    if (row.advice != nullptr) continue;
    FoundOperator& found = cann.operators_[i];
    const std::string phase1 = std::string(row.aclnn) + "GetWorkspaceSize";
    require(2, phase1.c_str(), &found.phase1);
    require(2, row.aclnn, &found.phase2);
    if (found.phase1 == nullptr) found.phase2 = nullptr;  // both, or neither
  }
  // The optional operators, each its own search in torch_npu's order (not
  // made when CANN itself is missing: problem() says so already).
  for (size_t i = 0; i < std::size(kAclnnOperators) && missing.empty(); ++i) {
    const AclnnOperator& row = *kAclnnOperators[i];
    if (row.advice == nullptr) continue;
    FoundOperator& found = cann.operators_[i];
    const std::string phase1 = std::string(row.aclnn) + "GetWorkspaceSize";
    const std::string role = std::string(row.op) + "'s operator library";
    const Role optional = {role.c_str(), roles[2].names, phase1.c_str()};
    std::vector<std::string> tried;
    void* handle = Find(optional, OperatorCandidates(search, &tried), &found.library, &tried);
    if (handle == nullptr) {
      found.problem = NotFound(optional, true, search, tried);
    } else {
      cann.handles_.push_back(handle);  // the required operators' library again, most often: dlopen counts references
      if (!Lookup(handle, row.aclnn, &found.phase2)) {
        found.problem = role + ": " + found.library.path + " has no " + row.aclnn;
      } else {
        Lookup(handle, phase1.c_str(), &found.phase1);
      }
    }
    if (!found.problem.empty()) {
      found.phase1 = nullptr;
      found.phase2 = nullptr;
      found.problem += std::string("\n") + row.advice;
      cann.notes_.push_back(found.problem);
    }
  }
  if (handles[0] != nullptr) Lookup(handles[0], "aclrtMemcpyAsync", &api.aclrtMemcpyAsync);
  if (handles[1] != nullptr && !Lookup(handles[1], "aclDestroyAclOpExecutor", &api.aclDestroyAclOpExecutor)) {
    cann.notes_.push_back("aclDestroyAclOpExecutor not found (it is documented since CANN 8.0): an executor "
                          "whose phase 2 cannot run (no workspace) is leaked, one per such call");
  }
  if (handles[0] != nullptr) {
    const bool device_info = Lookup(handles[0], "aclrtGetDeviceInfo", &api.aclrtGetDeviceInfo);
    const bool soc_name = Lookup(handles[0], "aclrtGetSocName", &api.aclrtGetSocName);
    if (!device_info && !soc_name) {
      cann.notes_.push_back("neither aclrtGetDeviceInfo nor aclrtGetSocName found: the chip is unknown, so "
                            "broadcast operands are always passed as stride-0 views, which CANN makes "
                            "contiguous in its workspace");
    }
    Lookup(handles[0], "aclsysGetVersionStr", &api.aclsysGetVersionStr);
    Lookup(handles[0], "aclsysGetCANNVersion", &api.aclsysGetCANNVersion);
  }
  cann.problem_ = Join(missing, "\n");

  if (api.aclsysGetVersionStr != nullptr) {
    char package[] = "runtime";
    char version[cann::kPkgVersionMaxSize] = {};
    const cann::aclError e = api.aclsysGetVersionStr(package, version);
    if (e == 0) {
      cann.version_.assign(version, strnlen(version, sizeof version));
    } else {
      cann.version_note_ = "aclsysGetVersionStr(\"runtime\") returned " + std::to_string(e) +
                           " (it reads $ASCEND_HOME_PATH/share/info/runtime/version.info)";
    }
  } else if (api.aclsysGetCANNVersion != nullptr) {
    cann::aclCANNPackageVersion v = {};
    const cann::aclError e = api.aclsysGetCANNVersion(cann::ACL_PKG_NAME_CANN, &v);
    if (e == 0) {
      cann.version_.assign(v.version, strnlen(v.version, sizeof v.version));
    } else {
      cann.version_note_ = "aclsysGetCANNVersion returned " + std::to_string(e) + " (it reads $ASCEND_HOME_PATH)";
    }
  } else if (handles[0] != nullptr) {
    cann.version_note_ = "this ACL runtime has neither aclsysGetVersionStr nor aclsysGetCANNVersion";
  }
  return cann;
}

const CannLibrary* Cann::operator_library() const {
  for (const CannLibrary& lib : libraries_) {
    if (lib.role == "operator library") return &lib;
  }
  return nullptr;
}

const FoundOperator& Cann::op(const AclnnOperator& row) const {
  static const FoundOperator kNone;
  for (size_t i = 0; i < operators_.size(); ++i) {
    if (kAclnnOperators[i] == &row) return operators_[i];
  }
  return kNone;
}

const Cann& ProcessCann() {
  // Deliberately never destroyed: see the header.
  static const Cann* const cann = new Cann(Cann::Load(SearchFromEnvironment()));
  return *cann;
}

}  // namespace jas::ascend
