// The JAX_ASCEND_SILU_* environment variables the CPU backend reads, parsed
// here and nowhere else: the kernel (the instruction set), the FFI handler
// (threads per call) and the Python package (warnings, `info`, through the
// CPU module's environment()) all use these results. Each variable is read
// once, at first use, and never again.
#ifndef JAX_ASCEND_SILU_KERNEL_CPU_ENVIRONMENT_H_
#define JAX_ASCEND_SILU_KERNEL_CPU_ENVIRONMENT_H_

#include <cstdint>
#include <string>

#include "cpu/backend.h"

namespace jas {

// One variable as it was read.
struct EnvSetting {
  const char* name = "";
  bool set = false;       // present in the environment
  std::string value;      // its text
  bool accepted = false;  // whether the CPU backend applies it (set, and a value it takes)
};

// JAX_ASCEND_SILU_THREADS: a positive decimal integer (no sign, no spaces)
// caps the threads per CPU call, the calling thread included.
struct ThreadsSetting : EnvSetting {
  int64_t cap = INT64_MAX;  // INT64_MAX: no cap
};
ThreadsSetting ParseThreads(const char* text);  // text: the value, or null when unset
const ThreadsSetting& ThreadsFromEnvironment();

// JAX_ASCEND_SILU_ISA: the name of an instruction set (IsaName) this
// processor runs makes it the automatic choice (kAuto).
struct IsaSetting : EnvSetting {
  Isa isa = Isa::kAuto;  // the ISA named, when accepted
};
IsaSetting ParseIsa(const char* text);
const IsaSetting& IsaFromEnvironment();

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_CPU_ENVIRONMENT_H_
