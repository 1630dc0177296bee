// batchnorm_plain: eval-mode batch_norm with inputs x, mean, var (compiler/lower_norm.c); the body and its push
// layout are in shaders/batchnorm.glsl. Bindings: the inputs in that order, then y.
#version 450
#define BN_AFFINE 0
#include "batchnorm.glsl"
