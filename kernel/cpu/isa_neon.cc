// Compiled for AArch64 only (see CMakeLists.txt), where Advanced SIMD is part
// of the base architecture; dispatch.cc still asks the kernel (HWCAP) first.
#include "cpu/block.h"
#include "cpu/simd_neon.h"

namespace jas {
namespace {
constexpr BlockKernels kTable = block::MakeTable<simd::Neon>();
}  // namespace
const BlockKernels* NeonKernels() { return &kTable; }
}  // namespace jas
