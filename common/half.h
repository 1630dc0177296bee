/* fp16 and bf16 conversion (round to nearest even, NaN and Inf preserved). */
#ifndef NPU_HALF_H
#define NPU_HALF_H

#include <stdint.h>

uint16_t f32_to_f16(float f);
float f16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);
float bf16_to_f32(uint16_t b);

#endif
