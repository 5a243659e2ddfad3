// The parse of the JAX_ASCEND_SILU_* variables (cpu/environment.h), on
// values given directly; the Python tests set them in fresh processes.
#include <string>

#include <gtest/gtest.h>

#include "cpu/environment.h"
#include "kernel_test_util.h"

namespace jas::test {
namespace {

TEST(environment, threads_takes_a_positive_decimal_integer_only) {
  const struct {
    const char* text;
    bool accepted;
    int64_t cap;
  } cases[] = {
      {"3", true, 3},
      {"0007", true, 7},
      {"9223372036854775807", true, INT64_MAX},
      {"9223372036854775808", false, INT64_MAX},      // past int64
      {"99999999999999999999999", false, INT64_MAX},  // past unsigned long long
      {"0", false, INT64_MAX},
      {"", false, INT64_MAX},
      {"-1", false, INT64_MAX},
      {"+4", false, INT64_MAX},
      {" 4", false, INT64_MAX},
      {"4x", false, INT64_MAX},
      {"abc", false, INT64_MAX},
  };
  for (const auto& c : cases) {
    const ThreadsSetting s = ParseThreads(c.text);
    EXPECT_TRUE(s.set) << c.text;
    EXPECT_EQ(s.value, std::string(c.text));
    EXPECT_EQ(s.accepted, c.accepted) << c.text;
    EXPECT_EQ(s.cap, c.cap) << c.text;
    EXPECT_EQ(std::string(s.name), "JAX_ASCEND_SILU_THREADS");
  }
  const ThreadsSetting unset = ParseThreads(nullptr);
  EXPECT_TRUE(!unset.set && !unset.accepted && unset.cap == INT64_MAX);
}

TEST(environment, isa_takes_the_name_of_one_this_processor_runs) {
  for (Isa isa : kIsas) {
    const IsaSetting s = ParseIsa(IsaName(isa));
    EXPECT_TRUE(s.set);
    EXPECT_EQ(s.accepted, IsaSupported(isa)) << IsaName(isa);
    EXPECT_TRUE(s.isa == (IsaSupported(isa) ? isa : Isa::kAuto)) << IsaName(isa);
  }
  for (const char* text : {"AVX2", "auto", "bogus", "", "scalar "}) {
    const IsaSetting s = ParseIsa(text);
    EXPECT_TRUE(s.set && !s.accepted && s.isa == Isa::kAuto) << text;
    EXPECT_EQ(s.value, std::string(text));
  }
  EXPECT_TRUE(!ParseIsa(nullptr).set);
  EXPECT_EQ(std::string(ParseIsa(nullptr).name), "JAX_ASCEND_SILU_ISA");
}

}  // namespace
}  // namespace jas::test
