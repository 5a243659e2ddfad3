// Ascend chip classes as aclnnSiluBackward tells them apart: by the device's
// NpuArch (the "NpuArch" of CANN's per-SoC platform config files). ops-nn's
// operator broadcasts only on the regbase architecture (NpuArch 3510) and
// takes bfloat16 only there and on NpuArch 2201; every other class gets
// float16 and float32, with every view shape equal to gradInput's.
// aclnnSwiGluGrad is built (ops-nn's swi_glu_grad_def.cpp) for ascend910b and
// ascend910_93 (NpuArch 2201), ascend950 and ascend350 (3510) with bfloat16,
// and ascend310p (2002) without it; for no other class.
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
  bool swiglu_grad;           // CANN has aclnnSwiGluGrad's kernel for the class
  bool swiglu_grad_bfloat16;  // ... and takes bfloat16 there
};

// The class of NpuArch `npu_arch`; an unknown one (npu_arch 0, nothing
// assumed: no broadcasting, bfloat16 left to CANN) for any other value.
const ChipClass& ClassOfNpuArch(int64_t npu_arch);

// The NpuArch of a SoC name as aclrtGetSocName reports it ("Ascend910B3" ->
// 2201, "Ascend950PR_9589" and CANN 8.5's "Ascend910_9589" -> 3510), or 0.
int64_t NpuArchOfSocName(const char* soc_name);

// "float32, float16" for a class without bfloat16 in the operator's
// `bfloat16` column, from the dtype table.
std::string DtypesTaken(const ChipClass& chip, bool ChipClass::*bfloat16);

// The same for aclnnSiluBackward and for aclnnSwiGluGrad.
std::string DtypesTaken(const ChipClass& chip);
std::string SwiGluDtypesTaken(const ChipClass& chip);

// "NpuArch 2002 (an Ascend310P chip), ...": the classes where `column` holds,
// from the table, for messages.
std::string ClassesWith(bool ChipClass::*column);

// "float32, float16, bfloat16": every dtype of the table, as SiluGrad takes
// them before any chip is asked.
std::string DtypesTaken();

}  // namespace jas::ascend

#endif  // JAX_ASCEND_SILU_KERNEL_ASCEND_CHIPS_H_
