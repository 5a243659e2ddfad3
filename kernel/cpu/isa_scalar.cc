#include "cpu/block.h"
#include "cpu/simd_scalar.h"

namespace jas {
namespace {
constexpr BlockKernels kTable = block::MakeTable<simd::Scalar>();
}  // namespace
const BlockKernels* ScalarKernels() { return &kTable; }
}  // namespace jas
