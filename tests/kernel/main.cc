// Runs the registered kernel tests: `silu_grad_kernel_tests [--list] [PREFIX...]`.
// Exit status 0 only when every selected test passed and at least one ran.
#include <cstdio>
#include <cstring>
#include <string>

#include "check.h"

namespace jas::test {

namespace {
constexpr int kMaxReported = 20;  // per test; a broken loop must not flood the log
}  // namespace

std::vector<Case>& Registry() {
  static std::vector<Case> cases;
  return cases;
}

int& TestFailures() {
  static int failures = 0;
  return failures;
}

void Fail(const char* file, int line, const std::string& what) {
  const int failures = ++TestFailures();
  if (failures <= kMaxReported) std::printf("  %s:%d: %s\n", file, line, what.c_str());
  if (failures == kMaxReported + 1) std::printf("  (further failures in this test not shown)\n");
}

}  // namespace jas::test

int main(int argc, char** argv) {
  using jas::test::Registry;
  bool list = false;
  std::vector<std::string> prefixes;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--list") == 0) {
      list = true;
    } else {
      prefixes.emplace_back(argv[i]);
    }
  }
  int ran = 0, failed = 0;
  for (const jas::test::Case& c : Registry()) {
    const std::string full = std::string(c.group) + "." + c.name;
    bool selected = prefixes.empty();
    for (const std::string& p : prefixes) selected = selected || full.rfind(p, 0) == 0;
    if (!selected) continue;
    if (list) {
      std::printf("%s\n", full.c_str());
      continue;
    }
    std::printf("[ RUN  ] %s\n", full.c_str());
    std::fflush(stdout);
    jas::test::TestFailures() = 0;
    c.fn();
    const bool ok = jas::test::TestFailures() == 0;
    std::printf("[ %s ] %s\n", ok ? " OK " : "FAIL", full.c_str());
    ++ran;
    failed += ok ? 0 : 1;
  }
  if (list) return 0;
  std::printf("%d tests, %d failed\n", ran, failed);
  if (ran == 0) std::printf("no test matches the given prefixes\n");
  return (failed == 0 && ran > 0) ? 0 : 1;
}
