// batchnorm: eval-mode batch_norm with inputs x, w, b, mean, var (compiler/lower_norm.c); the body and its push
// layout are in shaders/batchnorm.glsl. Bindings: the inputs in that order, then y.
#version 450
#define BN_AFFINE 1
#include "batchnorm.glsl"
