// Compiled with -mavx512f (see CMakeLists.txt); only called after a run-time
// check that the processor has it.
#include "cpu/block.h"
#include "cpu/simd_avx512.h"

namespace jas {
namespace {
constexpr BlockKernels kTable = block::MakeTable<simd::Avx512>();
}  // namespace
const BlockKernels* Avx512Kernels() { return &kTable; }
}  // namespace jas
