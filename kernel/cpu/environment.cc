// The parse of the JAX_ASCEND_SILU_* variables (cpu/environment.h).
#include "cpu/environment.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace jas {

namespace {
constexpr const char* kThreads = "JAX_ASCEND_SILU_THREADS";
constexpr const char* kIsa = "JAX_ASCEND_SILU_ISA";
}  // namespace

ThreadsSetting ParseThreads(const char* text) {
  ThreadsSetting s;
  s.name = kThreads;
  if (text == nullptr) return s;
  s.set = true;
  s.value = text;
  if (*text == '\0' || std::strspn(text, "0123456789") != std::strlen(text)) return s;
  errno = 0;
  const unsigned long long v = std::strtoull(text, nullptr, 10);
  if (v > 0 && errno == 0 && v <= INT64_MAX) {
    s.accepted = true;
    s.cap = static_cast<int64_t>(v);
  }
  return s;
}

const ThreadsSetting& ThreadsFromEnvironment() {
  static const ThreadsSetting setting = ParseThreads(std::getenv(kThreads));
  return setting;
}

IsaSetting ParseIsa(const char* text) {
  IsaSetting s;
  s.name = kIsa;
  if (text == nullptr) return s;
  s.set = true;
  s.value = text;
  for (Isa isa : kIsas) {
    if (s.value == IsaName(isa) && IsaSupported(isa)) {
      s.accepted = true;
      s.isa = isa;
    }
  }
  return s;
}

const IsaSetting& IsaFromEnvironment() {
  static const IsaSetting setting = ParseIsa(std::getenv(kIsa));
  return setting;
}

}  // namespace jas
