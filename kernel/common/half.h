// Scalar float32 <-> float16/bfloat16 conversions, bit-exact with the x86
// conversion instructions (round to nearest even; NaN stays NaN, quieted).
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_HALF_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_HALF_H_

#include <cstdint>
#include <cstring>

namespace jas::half {

inline uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline float BF16ToFloat(uint16_t h) { return FromBits(uint32_t{h} << 16); }

inline uint16_t FloatToBF16(float f) {
  const uint32_t u = Bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

inline float F16ToFloat(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  uint32_t u = uint32_t{h & 0x7fffu} << 13;
  const uint32_t exp = u & (0x7c00u << 13);
  u += (127u - 15u) << 23;
  if (exp == (0x7c00u << 13)) {
    u += (128u - 16u) << 23;  // inf / NaN
    if (u & 0x007fffffu) u |= 0x00400000u;
  } else if (exp == 0) {  // zero / subnormal: renormalise through float arithmetic
    u += 1u << 23;
    u = Bits(FromBits(u) - FromBits(113u << 23));
  }
  return FromBits(u | sign);
}

inline uint16_t FloatToF16(float f) {
  uint32_t u = Bits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  uint32_t h;
  if (u > 0x7f800000u) {
    h = 0x7e00u | ((u >> 13) & 0x3ffu);
  } else if (u >= (143u << 23)) {  // >= 65536 (or inf): overflow
    h = 0x7c00u;
  } else if (u < (113u << 23)) {  // subnormal or zero: let the FPU round
    h = Bits(FromBits(u) + FromBits(126u << 23)) - (126u << 23);
  } else {
    const uint32_t odd = (u >> 13) & 1u;
    u += ((15u - 127u) << 23) + 0xfffu + odd;
    h = u >> 13;
  }
  return static_cast<uint16_t>(h | sign);
}

}  // namespace jas::half

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_HALF_H_
