// Finding CANN at run time: see cann_loader.h.
#include "ascend/cann_loader.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
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

struct Role {
  const char* role;
  std::vector<const char*> names;  // in order of preference
  const char* probe;               // a function the right library must have
};

// The first of `role.names` that opens and has `role.probe`, searching each
// directory and then the loader path; *tried collects why the others failed.
void* Find(const Role& role, const CannSearch& search, CannLibrary* found, std::vector<std::string>* tried) {
  auto attempt = [&](const char* name, const std::string& target, const std::string& where) -> void* {
    void* handle = dlopen(target.c_str(), kOpenFlags);
    if (handle == nullptr) {
      const std::string error = LastDlError();
      // Absent from the loader path is what the summary says already.
      if (error.find("No such file or directory") == std::string::npos || target.find('/') != std::string::npos) {
        tried->push_back(where + ": " + error);
      }
      return nullptr;
    }
    if (dlsym(handle, role.probe) == nullptr) {
      tried->push_back(OpenedPath(handle, target) + " has no " + role.probe);
      dlclose(handle);
      return nullptr;
    }
    *found = CannLibrary{role.role, name, OpenedPath(handle, target)};
    return handle;
  };
  for (const char* name : role.names) {
    for (const CannSearch::Dir& dir : search.dirs) {
      const std::string path = dir.path + "/" + name;
      if (access(path.c_str(), F_OK) != 0) continue;  // absent here: only the summary names the directory
      if (void* h = attempt(name, path, path)) return h;
    }
    if (search.loader_path) {
      if (void* h = attempt(name, name, std::string(name) + " on the loader path")) return h;
    }
  }
  return nullptr;
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

std::string WhereSearched(const CannSearch& search) {
  std::vector<std::string> where;
  for (const CannSearch::Dir& dir : search.dirs) where.push_back(dir.path + " (" + dir.origin + ")");
  if (search.loader_path) where.emplace_back("the loader path (LD_LIBRARY_PATH, ld.so.cache)");
  std::string s = where.empty() ? "nowhere (no directory given)" : Join(where, ", ");
  if (!search.unset.empty()) s += "; " + Join(search.unset, ", ") + (search.unset.size() > 1 ? " are" : " is") + " unset";
  return s;
}

template <class Fn>
bool Lookup(void* handle, const char* name, Fn** out) {
  // dlsym returns an object pointer; POSIX guarantees it converts to a function pointer.
  *out = reinterpret_cast<Fn*>(dlsym(handle, name));
  return *out != nullptr;
}

}  // namespace

CannSearch SearchFromEnvironment() {
  CannSearch search;
  for (const char* var : {"ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH", "ASCEND_OPP_PATH"}) {
    const char* value = std::getenv(var);
    if (value == nullptr || *value == '\0') {
      search.unset.push_back(std::string("$") + var);
      continue;
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
  // Dependencies first: the operator library needs the other two.
  const Role roles[3] = {
      {"ACL runtime", {"libacl_rt.so", "libascendcl.so"}, "aclGetRecentErrMsg"},
      {"aclnn tensor API", {"libnnopbase.so"}, "aclCreateTensor"},
      {"operator library", {"libopapi_nn.so", "libopapi.so"}, "aclnnSiluBackwardGetWorkspaceSize"},
  };
  void* handles[3] = {nullptr, nullptr, nullptr};
  for (int i = 0; i < 3; ++i) {
    CannLibrary found;
    std::vector<std::string> tried;
    handles[i] = Find(roles[i], search, &found, &tried);
    if (handles[i] == nullptr) {
      std::vector<std::string> names(roles[i].names.begin(), roles[i].names.end());
      std::string line = std::string(roles[i].role) + ": " + Join(names, " or ") + " not found in " +
                         WhereSearched(search);
      if (!tried.empty()) line += " [" + Join(tried, "; ") + "]";
      missing.push_back(line);
      continue;
    }
    cann.handles_.push_back(handles[i]);
    cann.libraries_.push_back(found);
  }

  // Each function by name, in the library that documents it.
  auto require = [&](int lib, const char* name, auto** out) {
    if (handles[lib] != nullptr && !Lookup(handles[lib], name, out)) {
      missing.push_back(std::string(roles[lib].role) + ": " + OpenedPath(handles[lib], roles[lib].names[0]) +
                        " has no " + name);
    }
  };
  CannApi& api = cann.api_;
  require(0, "aclGetRecentErrMsg", &api.aclGetRecentErrMsg);
  require(1, "aclCreateTensor", &api.aclCreateTensor);
  require(1, "aclDestroyTensor", &api.aclDestroyTensor);
  require(2, "aclnnSiluBackwardGetWorkspaceSize", &api.aclnnSiluBackwardGetWorkspaceSize);
  require(2, "aclnnSiluBackward", &api.aclnnSiluBackward);
  if (handles[1] != nullptr && !Lookup(handles[1], "aclDestroyAclOpExecutor", &api.aclDestroyAclOpExecutor)) {
    cann.notes_.push_back("aclDestroyAclOpExecutor not found (CANN before 8.5): an executor whose phase 2 "
                          "cannot run (no workspace) is leaked, one per such call");
  }
  if (handles[0] != nullptr) {
    if (!Lookup(handles[0], "aclrtGetSocName", &api.aclrtGetSocName)) {
      cann.notes_.push_back("aclrtGetSocName not found: broadcast operands are always passed as stride-0 "
                            "views, which CANN copies into its workspace");
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

const Cann& ProcessCann() {
  // Deliberately never destroyed: see the header.
  static const Cann* const cann = new Cann(Cann::Load(SearchFromEnvironment()));
  return *cann;
}

}  // namespace jas::ascend
