// The push block of the tensor-core matmul and its K-split reduce (shaders/matmul_cm.glsl,
// shaders/matmul_red.glsl): the matmul family's words (shaders/matmul.glsl) then the tiling.
#ifndef NPU_MATMUL_CM_COMMON_GLSL
#define NPU_MATMUL_CM_COMMON_GLSL

#include "activation.glsl"

layout(push_constant) uniform Push {
    uint M; uint N; uint K; uint b_ks; uint b_ns; uint nbatch;
    uint bdim[4]; uint sa[4]; uint sb[4];
    uint bias_ms; uint bias_ns; uint act; float alpha; float beta;
    uint post; // the matmul family's relu-after-residual word (0 here: no residual binding)
    uint mtiles; uint ntiles; uint nsplit; uint kchunk;
} pc;

#include "matmul_batch.glsl"

#endif
