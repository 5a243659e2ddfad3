// Ascend chip classes as aclnnSiluBackward tells them apart: by the device's
// NpuArch (the "NpuArch" of CANN's per-SoC platform config files). ops-nn's
// operator broadcasts only on the regbase architecture (NpuArch 3510) and
// takes bfloat16 only there and on NpuArch 2201; every other class gets
// float16 and float32, with every view shape equal to gradInput's.
//
// The one table of chip classes: the glue reads it to decide how to hand
// operands over and to explain a refusal; tests read it for expectations.
#ifndef JAX_ASCEND_SILU_KERNEL_ASCEND_CHIPS_H_
#define JAX_ASCEND_SILU_KERNEL_ASCEND_CHIPS_H_

#include <cstdint>
#include <string>

namespace jas::ascend {

struct ChipClass {
  int64_t npu_arch;     // 0: not known
  const char* family;   // "an Atlas A2/A3 chip", for messages
  bool broadcasts;      // the operator broadcasts gradOutput and self to gradInput by itself
  bool bfloat16;        // the operator takes bfloat16
};

// The class of NpuArch `npu_arch`; an unknown one (npu_arch 0, nothing
// assumed: no broadcasting, bfloat16 left to CANN) for any other value.
const ChipClass& ClassOfNpuArch(int64_t npu_arch);

// The NpuArch of a SoC name as aclrtGetSocName reports it ("Ascend910B3" ->
// 2201, "Ascend950PR_9589" and CANN 8.5's "Ascend910_9589" -> 3510), or 0.
int64_t NpuArchOfSocName(const char* soc_name);

// "float32, float16" for a class without bfloat16, from the dtype table.
std::string DtypesTaken(const ChipClass& chip);

// "float32, float16, bfloat16": every dtype of the table, as SiluGrad takes
// them before any chip is asked.
std::string DtypesTaken();

}  // namespace jas::ascend

#endif  // JAX_ASCEND_SILU_KERNEL_ASCEND_CHIPS_H_
