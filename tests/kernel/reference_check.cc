// CheckAgainstReference (kernel_test_util.h), apart from the other helpers
// because it reports through the test framework, which the fuzz driver and the
// exhaustive accuracy run do not link.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace jas::test {

namespace {
// Failures reported per call: a wrong path fails on every element, and a line
// for each would bury the first under millions.
constexpr int kMaxReported = 20;
}  // namespace

double CheckAgainstReference(const Operand& grad_output, const Operand& self, const Operand& grad_input,
                             const std::string& context) {
  const DataType t = grad_input.dtype;
  std::vector<int> writes(static_cast<size_t>(grad_input.StorageSize()), 0);
  double worst = 0.0;
  int64_t failures = 0;
  const auto report = [&](bool ok) { return !ok && ++failures <= kMaxReported; };
  ForEachIndex(grad_input.dims, [&](const Dims& idx) {
    const int64_t o = grad_input.Locate(idx);
    ++writes[o];
    const double g = grad_output.Value(grad_output.Locate(idx)), x = self.Value(self.Locate(idx));
    const double exact = g * SiluDerivative(x);
    const double err = UlpError(grad_input.Value(o), exact, t);
    worst = std::max(worst, err);
    if (report(err <= MaxUlp(t))) {
      ADD_FAILURE() << context << ": " << DtypeName(t) << " element " << ToString(idx) << " (g " << g
                    << ", x " << x << ") is " << grad_input.Value(o) << ", exact " << exact << " (" << err
                    << " ulp, more than " << MaxUlp(t) << ")";
    }
  });
  for (int64_t i = 0; i < grad_input.StorageSize(); ++i) {
    if (report(writes[i] <= 1)) ADD_FAILURE() << context << ": the view maps two elements to storage " << i;
    if (writes[i] == 0 && report(grad_input.Bits(i) == Sentinel(t))) {
      ADD_FAILURE() << context << ": storage element " << i << " outside the view was written";
    }
  }
  EXPECT_LE(failures, kMaxReported) << context << ": " << failures << " failures in all, the first "
                                    << kMaxReported << " shown";
  return worst;
}

}  // namespace jas::test
