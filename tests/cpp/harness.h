// A minimal test harness for the C++ tests (no third-party framework needed):
//   TEST(name) { CHECK(cond); CHECK_EQ(a, b); }
// The binary runs the test named by its first argument, or all of them;
// CMake registers each TEST with ctest by scanning the source.
#ifndef JAX_ASCEND_SILU_TESTS_CPP_HARNESS_H_
#define JAX_ASCEND_SILU_TESTS_CPP_HARNESS_H_

#include <cstdio>
#include <cstring>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace harness {

struct Case {
  const char* name;
  void (*fn)();
};

inline std::vector<Case>& Cases() {
  static std::vector<Case> cases;
  return cases;
}
inline int& Failures() {
  static int failures = 0;
  return failures;
}
inline bool Register(const char* name, void (*fn)()) {
  Cases().push_back({name, fn});
  return true;
}
inline void Fail(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what.c_str());
  ++Failures();
}
template <class T>
void Show(std::ostream& s, const T& v) {
  s << v;
}
template <class T>
void Show(std::ostream& s, const std::vector<T>& v) {
  s << "[";
  for (size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
  s << "]";
}
template <class A, class B>
std::string Mismatch(const char* a_text, const char* b_text, const A& a, const B& b) {
  std::ostringstream s;
  s << a_text << " == " << b_text << " (";
  Show(s, a);
  s << " vs ";
  Show(s, b);
  s << ")";
  return s.str();
}

inline int Main(int argc, char** argv) {
  int ran = 0;
  for (const Case& c : Cases()) {
    if (argc > 1 && std::strcmp(argv[1], c.name) != 0) continue;
    const int before = Failures();
    c.fn();
    std::printf("%s %s\n", Failures() == before ? "PASS" : "FAIL", c.name);
    ++ran;
  }
  if (ran == 0) {
    std::fprintf(stderr, "no test named %s\n", argc > 1 ? argv[1] : "(any)");
    return 2;
  }
  return Failures() == 0 ? 0 : 1;
}

}  // namespace harness

#define TEST(name)                                                          \
  static void name();                                                       \
  static const bool name##_registered = ::harness::Register(#name, &name); \
  static void name()

// Checks return from the test on failure, so later lines may rely on them.
#define CHECK(cond)                                      \
  do {                                                   \
    if (!(cond)) {                                       \
      ::harness::Fail(__FILE__, __LINE__, #cond);        \
      return;                                            \
    }                                                    \
  } while (0)

#define CHECK_EQ(a, b)                                                                  \
  do {                                                                                  \
    const auto& check_a_ = (a);                                                         \
    const auto& check_b_ = (b);                                                         \
    if (!(check_a_ == check_b_)) {                                                      \
      ::harness::Fail(__FILE__, __LINE__, ::harness::Mismatch(#a, #b, check_a_, check_b_)); \
      return;                                                                           \
    }                                                                                   \
  } while (0)

#define HARNESS_MAIN \
  int main(int argc, char** argv) { return ::harness::Main(argc, argv); }

#endif  // JAX_ASCEND_SILU_TESTS_CPP_HARNESS_H_
