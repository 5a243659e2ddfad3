// CheckAgainstReference (kernel_test_util.h), apart from the other helpers
// because it reports through the test framework, which the fuzz driver and the
// exhaustive accuracy run do not link.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace jas::test {

double CheckAgainstReference(const Operand& grad_output, const Operand& self, const Operand& grad_input,
                             const std::string& context) {
  const DataType t = grad_input.dtype;
  std::vector<int> writes(static_cast<size_t>(grad_input.StorageSize()), 0);
  double worst = 0.0;
  ForEachIndex(grad_input.dims, [&](const Dims& idx) {
    const int64_t o = grad_input.Locate(idx);
    ++writes[o];
    const double g = grad_output.Value(grad_output.Locate(idx)), x = self.Value(self.Locate(idx));
    const double exact = g * SiluDerivative(x);
    const double err = UlpError(grad_input.Value(o), exact, t);
    worst = std::max(worst, err);
    EXPECT_TRUE(err <= MaxUlp(t)) << context << ": " << DtypeName(t) << " element " << ToString(idx) << " (g "
                                  << g << ", x " << x << ") is " << grad_input.Value(o) << ", exact " << exact
                                  << " (" << err << " ulp)";
  });
  for (int64_t i = 0; i < grad_input.StorageSize(); ++i) {
    EXPECT_TRUE(writes[i] <= 1) << context << ": the view maps two elements to storage " << i;
    if (writes[i] == 0) {
      EXPECT_TRUE(grad_input.Bits(i) == Sentinel(t))
          << context << ": storage element " << i << " outside the view was written";
    }
  }
  return worst;
}

}  // namespace jas::test
