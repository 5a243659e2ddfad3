// A tiny test harness for the kernel tests (no framework dependency).
// TEST(group, name) registers a test; CHECK* record a failure with file:line
// and let the test go on. main.cc runs the tests whose "group.name" starts with
// one of the prefixes given on the command line (all when none is given).
#ifndef JAX_ASCEND_SILU_TESTS_KERNEL_CHECK_H_
#define JAX_ASCEND_SILU_TESTS_KERNEL_CHECK_H_

#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace jas::test {

struct Case {
  const char* group;
  const char* name;
  void (*fn)();
};

std::vector<Case>& Registry();
void Fail(const char* file, int line, const std::string& what);
int& TestFailures();  // failures in the running test; main resets it

struct Registrar {
  Registrar(const char* group, const char* name, void (*fn)()) { Registry().push_back({group, name, fn}); }
};

}  // namespace jas::test

#define TEST(group, name)                                                                  \
  static void group##_##name##_Test();                                                    \
  static const ::jas::test::Registrar group##_##name##_registrar(#group, #name,            \
                                                                 &group##_##name##_Test); \
  static void group##_##name##_Test()

// CHECK_MSG(cond, a << b): the streamed message says which case failed.
#define CHECK_MSG(cond, msg)                                                  \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::ostringstream jas_check_os_;                                       \
      jas_check_os_ << "CHECK(" #cond ") failed: " << msg;                    \
      ::jas::test::Fail(__FILE__, __LINE__, jas_check_os_.str());             \
    }                                                                         \
  } while (0)
#define CHECK(cond) CHECK_MSG(cond, "")
#define CHECK_EQ(a, b) CHECK_MSG((a) == (b), #a " = " << (a) << ", " #b " = " << (b))
// CHECK, and stop the test when later lines depend on it.
#define REQUIRE(cond)      \
  do {                     \
    CHECK(cond);           \
    if (!(cond)) return;   \
  } while (0)

// Vectors print as [a,b,c] in CHECK_EQ messages.
template <class T>
std::ostream& operator<<(std::ostream& os, const std::vector<T>& v) {
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  return os << "]";
}

#endif  // JAX_ASCEND_SILU_TESTS_KERNEL_CHECK_H_
