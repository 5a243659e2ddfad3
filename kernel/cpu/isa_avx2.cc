// Compiled with -mavx2 -mfma -mf16c (see CMakeLists.txt); only called after a
// run-time check that the processor has them.
#include "cpu/block.h"
#include "cpu/simd_avx2.h"

namespace jas {
namespace {
constexpr BlockKernels kTable = block::MakeTable<simd::Avx2>();
}  // namespace
const BlockKernels* Avx2Kernels() { return &kTable; }
}  // namespace jas
