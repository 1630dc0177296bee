// The push block of the tensor-core matmul and its K-split reduce (shaders/matmul_cm.glsl,
// shaders/matmul_red.glsl): the matmul family's words (shaders/matmul.glsl) then the tiling.
#ifndef NPU_MATMUL_CM_COMMON_GLSL
#define NPU_MATMUL_CM_COMMON_GLSL

#include "abi.h"
#include "activation.glsl"

// abi.h MATMUL_CM_PUSH (post, the matmul family's relu-after-residual word, is 0 here: no
// residual binding)
PUSH_BLOCK(MATMUL_CM_PUSH)

#include "matmul_batch.glsl"

#endif
