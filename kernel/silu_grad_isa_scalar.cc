#include "silu_grad_block.h"
#include "simd_scalar.h"

namespace jas {
namespace {
constexpr BlockKernels kTable = block::MakeTable<simd::Scalar>();
}  // namespace
const BlockKernels* ScalarKernels() { return &kTable; }
}  // namespace jas
