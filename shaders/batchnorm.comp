// batchnorm: eval-mode batch_norm with inputs x, w, b, mean, var.
// Body and push: shaders/batchnorm.glsl (compiler/lower_norm.c). Bindings: those inputs, then y.
#version 450
#define BN_AFFINE 1
#include "batchnorm.glsl"
