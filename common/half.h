/* fp16 and bf16 conversion (round to nearest even, NaN and Inf preserved). Inline: the host
 * unpacks whole tensors with them every step (a decode step's 152K logits), and inlined the loop
 * runs faster (the 152K bf16 unpack on the 2-core CI VM: 75-86 us out of line, 44 us inline). */
#ifndef NPU_HALF_H
#define NPU_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t half_bits_(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float half_from_bits_(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint16_t f32_to_f16(float f)
{
    uint32_t x = half_bits_(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t exp = (x >> 23) & 0xffu;
    uint32_t man = x & 0x7fffffu;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000u;
        int shift = 14 - e;
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t h = sign | ((uint32_t)e << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++; /* may carry into exponent: correct */
    return (uint16_t)h;
}

static inline float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0) {
        if (man == 0) return half_from_bits_(sign);
        float v = (float)man / 16777216.0f; /* 2^-24 */
        return sign ? -v : v;
    }
    if (exp == 31) return half_from_bits_(sign | 0x7f800000u | (man << 13));
    return half_from_bits_(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

static inline uint16_t f32_to_bf16(float f)
{
    uint32_t x = half_bits_(f);
    if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) return (uint16_t)((x >> 16) | 0x40);
    uint32_t lsb = (x >> 16) & 1u;
    x += 0x7fffu + lsb;
    return (uint16_t)(x >> 16);
}

static inline float bf16_to_f32(uint16_t b)
{
    return half_from_bits_((uint32_t)b << 16);
}

#endif
