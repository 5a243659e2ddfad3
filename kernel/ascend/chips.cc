// Ascend chip classes: see chips.h.
#include "ascend/chips.h"

#include <cstring>
#include <string>

#include "common/dtype.h"

namespace jas::ascend {
namespace {

// NpuArch values and SoC names as CANN's platform configs (runtime
// src/platform/platform_config/*.ini) give them; what each class accepts as
// ops-nn's aclnn_silu_backward.cpp decides it (broadcasts, bfloat16) and as
// swi_glu_grad_def.cpp builds aclnnSwiGluGrad (its AddConfig per SoC and the
// dtype lists of each).
//                                                  SiluGrad:            SwiGluGrad:
//   NpuArch  family                                broadcasts bfloat16  runs  bfloat16
constexpr ChipClass kClasses[] = {
    {1001, "an Atlas training series chip", false, false, false, false},  // Ascend910, Ascend910A/ProA/ProB/PremiumA
    {2002, "an Ascend310P chip", false, false, true, false},              // ascend310p: float16, float32
    {2201, "an Atlas A2/A3 chip", false, true, true, true},  // Ascend910B1..B4, Ascend910_93xx
    {3002, "an Ascend310B chip", false, false, false, false},
    {3510, "an Ascend 950/350 chip", true, true, true, true},  // Ascend950*, Ascend350*; Ascend910_95xx in CANN 8.5
};
// Nothing assumed: CANN decides.
constexpr ChipClass kUnknown = {0, "a chip of unknown class", false, true, true, true};

// SoC-name prefixes, the first that matches wins (so the longer 910 names
// come before "Ascend910": "Ascend910B" alone is a training-series chip).
struct SocPrefix {
  const char* prefix;
  int64_t npu_arch;
};
constexpr SocPrefix kSocPrefixes[] = {
    {"Ascend950", 3510},    {"Ascend350", 3510},    {"Ascend910_95", 3510},  // CANN 8.5's name for the 950
    {"Ascend910_93", 2201}, {"Ascend910B1", 2201},  {"Ascend910B2", 2201},
    {"Ascend910B3", 2201},  {"Ascend910B4", 2201},  {"Ascend910", 1001},
    {"Ascend310P", 2002},   {"Ascend310B", 3002},
};

}  // namespace

const ChipClass& ClassOfNpuArch(int64_t npu_arch) {
  for (const ChipClass& c : kClasses) {
    if (c.npu_arch == npu_arch) return c;
  }
  return kUnknown;
}

int64_t NpuArchOfSocName(const char* soc_name) {
  if (soc_name == nullptr) return 0;
  for (const SocPrefix& p : kSocPrefixes) {
    if (std::strncmp(soc_name, p.prefix, std::strlen(p.prefix)) == 0) return p.npu_arch;
  }
  return 0;
}

std::string DtypesTaken(const ChipClass& chip, bool ChipClass::*bfloat16) { return DtypeNames(chip.*bfloat16); }

std::string DtypesTaken(const ChipClass& chip) { return DtypesTaken(chip, &ChipClass::bfloat16); }

std::string SwiGluDtypesTaken(const ChipClass& chip) { return DtypesTaken(chip, &ChipClass::swiglu_grad_bfloat16); }

std::string ClassesWith(bool ChipClass::*column) {
  std::string s;
  for (const ChipClass& c : kClasses) {
    if (c.*column) s += (s.empty() ? "" : ", ") + ("NpuArch " + std::to_string(c.npu_arch)) + " (" + c.family + ")";
  }
  return s;
}

std::string DtypesTaken() { return DtypeNames(); }

}  // namespace jas::ascend
