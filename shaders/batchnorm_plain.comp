// batchnorm_plain: eval-mode batch_norm with inputs x, mean, var.
// Body and push: shaders/batchnorm.glsl (compiler/lower_norm.c). Bindings: those inputs, then y.
#version 450
#define BN_AFFINE 0
#include "batchnorm.glsl"
