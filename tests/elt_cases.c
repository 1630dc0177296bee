#include "tests/elt_cases.h"

#define F32(...) ((TuSpec){"float32", __VA_ARGS__})

const EltShapes elt_shapes[] = {
    {F32(3, {3, 5, 67}), F32(3, {3, 5, 67}), F32(3, {3, 5, 67})},
    {F32(5, {2, 1, 5, 1, 7}), F32(4, {3, 1, 6, 1}), F32(5, {2, 3, 5, 6, 7})},
    {F32(1, {67}), F32(4, {2, 3, 4, 67}), F32(4, {2, 3, 4, 67})},
    {F32(4, {2, 3, 4, 67}), F32(1, {67}), F32(4, {2, 3, 4, 67})},
    {F32(4, {2, 8, 5, 5}), F32(4, {1, 8, 1, 1}), F32(4, {2, 8, 5, 5})},
    {F32(4, {1, 8, 1, 1}), F32(4, {2, 8, 5, 5}), F32(4, {2, 8, 5, 5})},
    {F32(3, {4, 1, 9}), F32(3, {1, 3, 1}), F32(3, {4, 3, 9})},
    {F32(1, {1}), F32(2, {3, 7}), F32(2, {3, 7})},
    {F32(6, {2, 1, 3, 1, 2, 5}), F32(6, {1, 2, 1, 4, 1, 5}), F32(6, {2, 2, 3, 4, 2, 5})},
};
const int elt_nshapes = (int)(sizeof elt_shapes / sizeof elt_shapes[0]);

const EltOp elt_binary_ops[] = {
    {"aten.add.Tensor", "", false},
    {"aten.add.Tensor", "\"alpha\":0.5", false},
    {"aten.sub.Tensor", "\"alpha\":2", false},
    {"aten.rsub.Tensor", "\"alpha\":0.75", false},
    {"aten.mul.Tensor", "", false},
    {"aten.div.Tensor", "", true},
    {"aten.pow.Tensor_Tensor", "", true},
};
const int elt_nbinary_ops = (int)(sizeof elt_binary_ops / sizeof elt_binary_ops[0]);

const EltOp elt_scalar_ops[] = {
    {"aten.add.Tensor", "\"other\":0.5", false},
    {"aten.add.Scalar", "\"other\":3,\"alpha\":-2", false},
    {"aten.sub.Tensor", "\"other\":0.25,\"alpha\":3", false},
    {"aten.rsub.Scalar", "\"other\":1.5", false},
    {"aten.rsub.Scalar", "\"other\":1.5,\"alpha\":2", false},
    {"aten.mul.Tensor", "\"other\":-2", false},
    {"aten.mul.Scalar", "\"other\":0.125", false},
    {"aten.div.Tensor", "\"other\":0.3", false},
    {"aten.div.Tensor_mode", "\"other\":-0.7,\"rounding_mode\":\"trunc\"", false},
    {"aten.div.Scalar_mode", "\"other\":0.3,\"rounding_mode\":\"floor\"", false},
    {"aten.pow.Tensor_Scalar", "\"exponent\":2", false},
    {"aten.pow.Tensor_Scalar", "\"exponent\":3", false},
    {"aten.pow.Tensor_Scalar", "\"exponent\":4", false},
    {"aten.pow.Tensor_Scalar", "\"exponent\":5", false},
    {"aten.pow.Tensor_Scalar", "\"exponent\":1", false},
    {"aten.pow.Tensor_Scalar", "\"exponent\":0", false},
    {"aten.pow.Tensor_Scalar", "\"exponent\":2.5", false}, /* NaN on negatives, both sides */
    {"aten.pow.Tensor_Scalar", "\"exponent\":1.7", false},
    {"aten.pow.Tensor_Scalar", "\"exponent\":0.5", false},
    {"aten.pow.Tensor_Scalar", "\"exponent\":-1", true},
};
const int elt_nscalar_ops = (int)(sizeof elt_scalar_ops / sizeof elt_scalar_ops[0]);

const double elt_mode_tols[3] = {VC_TOL_F32, 0.03, 0.1};
