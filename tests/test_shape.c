/* Shape and dtype checker: every fixture checks clean; hand-made one-node graphs per op pass with
 * the right declared shape and fail, naming node, tensor and both shapes, with a wrong one; bad
 * attributes and dtypes are reported as ST_BAD_INPUT without a crash or a leak. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ir_json.h"
#include "compiler/shape/shape.h"
#include "tests/testutil.h"

/* clang-format off */
#define F(r, ...) {"float32", r, {__VA_ARGS__}}
#define H(r, ...) {"float16", r, {__VA_ARGS__}}
#define L(r, ...) {"int64", r, {__VA_ARGS__}}
#define B(r, ...) {"bool", r, {__VA_ARGS__}}
#define F0 {"float32", 0, {0}}
#define L0 {"int64", 0, {0}}
#define B0 {"bool", 0, {0}}
#define NONE {NULL, 0, {0}}
/* clang-format on */

/* One node: attrs are JSON with ' for " to keep the table readable; nout 0 or 1. */
typedef struct Case {
    const char *aten, *attrs;
    int nin;
    TuSpec in[4];
    int nout;
    TuSpec out;
} Case;

static void print_diags(const DiagList *d)
{
    diag_print(d, stderr);
}

static Graph *build(const char *aten, int nin, const TuSpec *in, int nout, const TuSpec *out,
                    const char *attrs)
{
    char js[1024];
    snprintf(js, sizeof js, "%s", attrs ? attrs : "{}");
    for (char *p = js; *p; p++)
        if (*p == '\'') *p = '"';
    Graph *g = tu_node_graph(aten, nin, in, nout, out, js);
    if (!g) fail_msg("the IR reader rejected the test node %s %s", aten, js);
    return g;
}

static Graph *build_case(const Case *c)
{
    return build(c->aten, c->nin, c->in, c->nout, &c->out, c->attrs);
}

#define BIG "9223372036854775807"

/* clang-format off */
static const Case good[] = {
    {"aten._assert_tensor_metadata.default", "{'dtype':'torch.int64','size':[2,3]}", 1, {L(2, 2, 3)}, 0, NONE},
    {"aten.contiguous.default", NULL, 1, {F(3, 2, 3, 4)}, 1, F(3, 2, 3, 4)},
    {"aten.clone.default", NULL, 1, {L0}, 1, L0},
    {"npu.depad", NULL, 1, {F(3, 2, 3, 4)}, 1, F(3, 2, 3, 4)},
    {"npu.pack", NULL, 1, {F(4, 1, 3, 5, 7)}, 1, F(4, 1, 3, 5, 7)},
    {"aten.dropout.default", "{'p':0.1,'train':false}", 1, {F(2, 5, 6)}, 1, F(2, 5, 6)},
    {"<built-in function getitem>", "{'index':1}", 2, {F(2, 2, 3), L(1, 7)}, 1, L(1, 7)},
    {"aten.to.dtype", "{'dtype':'torch.float16'}", 1, {F(2, 2, 3)}, 1, H(2, 2, 3)},
    {"aten.type_as.default", NULL, 2, {L(2, 2, 3), F(1, 4)}, 1, F(2, 2, 3)},
    {"aten._to_copy.default", NULL, 1, {L(1, 3)}, 1, L(1, 3)},
    {"aten.conv2d.default", NULL, 2, {F(4, 1, 3, 8, 8), F(4, 16, 3, 3, 3)}, 1, F(4, 1, 16, 6, 6)},
    {"aten.conv2d.default", "{'stride':2,'padding':[1]}", 2, {F(4, 1, 3, 8, 8), F(4, 16, 3, 3, 3)}, 1, F(4, 1, 16, 4, 4)},
    {"aten.conv2d.default", "{'padding':[3,3],'stride':[2,2]}", 3, {F(4, 1, 3, 224, 224), F(4, 64, 3, 7, 7), F(1, 64)}, 1, F(4, 1, 64, 112, 112)},
    {"aten.conv2d.default", "{'padding':'same','dilation':2}", 2, {F(4, 2, 4, 7, 9), F(4, 8, 4, 3, 3)}, 1, F(4, 2, 8, 7, 9)},
    {"aten.conv2d.default", "{'groups':4,'stride':[2,2],'dilation':[2,2]}", 3, {F(4, 1, 8, 10, 10), F(4, 8, 2, 3, 3), F(1, 8)}, 1, F(4, 1, 8, 3, 3)},
    {"aten.conv2d.default", "{'padding':'valid'}", 2, {F(3, 3, 5, 5), F(4, 6, 3, 1, 1)}, 1, F(3, 6, 5, 5)},
    {"aten.batch_norm.default", "{'training':false,'momentum':0.1,'eps':1e-05,'cudnn_enabled':false}", 4,
     {F(4, 2, 4, 5, 5), F(1, 4), F(1, 4), F(1, 4)}, 1, F(4, 2, 4, 5, 5)},
    {"aten.layer_norm.default", "{'normalized_shape':[6],'eps':1e-05}", 3, {F(3, 2, 5, 6), F(1, 6), F(1, 6)}, 1, F(3, 2, 5, 6)},
    {"aten.layer_norm.default", "{'normalized_shape':[5,6]}", 1, {F(3, 2, 5, 6)}, 1, F(3, 2, 5, 6)},
    {"aten.linear.default", NULL, 3, {F(2, 4, 64), F(2, 32, 64), F(1, 32)}, 1, F(2, 4, 32)},
    {"aten.linear.default", NULL, 2, {F(3, 2, 3, 8), F(2, 5, 8)}, 1, F(3, 2, 3, 5)},
    {"aten.linear.default", NULL, 2, {F(1, 8), F(1, 8)}, 1, F0},
    {"aten.addmm.default", NULL, 3, {F(1, 32), F(2, 4, 64), F(2, 64, 32)}, 1, F(2, 4, 32)},
    {"aten.addmm.default", "{'beta':1,'alpha':1}", 3, {F(2, 1, 32), F(2, 4, 64), F(2, 64, 32)}, 1, F(2, 4, 32)},
    {"aten.matmul.default", NULL, 2, {F(2, 2, 3), F(1, 3)}, 1, F(1, 2)},
    {"aten.matmul.default", NULL, 2, {F(1, 3), F(2, 3, 4)}, 1, F(1, 4)},
    {"aten.matmul.default", NULL, 2, {F(1, 3), F(1, 3)}, 1, F0},
    {"aten.matmul.default", NULL, 2, {F(4, 5, 1, 2, 3), F(3, 4, 3, 6)}, 1, F(4, 5, 4, 2, 6)},
    {"aten.matmul.default", NULL, 2, {F(3, 2, 3, 4), F(1, 4)}, 1, F(2, 2, 3)},
    {"aten.matmul.default", NULL, 2, {F(1, 4), F(3, 2, 4, 5)}, 1, F(2, 2, 5)},
    {"aten.matmul.default", NULL, 2, {F(4, 1, 4, 8, 16), F(4, 1, 4, 16, 64)}, 1, F(4, 1, 4, 8, 64)},
    {"aten.bmm.default", NULL, 2, {F(3, 2, 3, 4), F(3, 2, 4, 5)}, 1, F(3, 2, 3, 5)},
    {"aten.mm.default", NULL, 2, {F(2, 3, 4), F(2, 4, 5)}, 1, F(2, 3, 5)},
    {"aten.t.default", NULL, 1, {F(2, 3, 4)}, 1, F(2, 4, 3)},
    {"aten.t.default", NULL, 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.relu.default", NULL, 1, {F(2, 2, 3)}, 1, F(2, 2, 3)},
    {"aten.relu_.default", NULL, 1, {F(2, 2, 3)}, 1, F(2, 2, 3)},
    {"aten.relu6.default", NULL, 1, {F(1, 3)}, 1, F(1, 3)},
    {"aten.hardtanh.default", "{'min_val':-1.0,'max_val':1.0}", 1, {F(1, 3)}, 1, F(1, 3)},
    {"aten.hardswish.default", NULL, 1, {F(1, 3)}, 1, F(1, 3)},
    {"aten.hardsigmoid.default", NULL, 1, {F(1, 3)}, 1, F(1, 3)},
    {"aten.sigmoid.default", NULL, 1, {F(1, 3)}, 1, F(1, 3)},
    {"aten.tanh.default", NULL, 1, {F(1, 3)}, 1, F(1, 3)},
    {"aten.gelu.default", "{'approximate':'tanh'}", 1, {F(1, 3)}, 1, F(1, 3)},
    {"aten.silu.default", NULL, 1, {F(3, 1, 8, 176)}, 1, F(3, 1, 8, 176)},
    {"aten.neg.default", NULL, 1, {L(1, 3)}, 1, L(1, 3)},
    {"aten.exp.default", NULL, 1, {F(1, 3)}, 1, F(1, 3)},
    {"aten.log.default", NULL, 1, {F(1, 3)}, 1, F(1, 3)},
    {"aten.abs.default", NULL, 1, {L(1, 3)}, 1, L(1, 3)},
    {"aten.sqrt.default", NULL, 1, {F(1, 3)}, 1, F(1, 3)},
    {"aten.rsqrt.default", NULL, 1, {F(3, 1, 8, 1)}, 1, F(3, 1, 8, 1)},
    {"aten.cos.default", NULL, 1, {F(1, 3)}, 1, F(1, 3)},
    {"aten.sin.default", NULL, 1, {F(1, 3)}, 1, F(1, 3)},
    {"aten.pow.Tensor_Scalar", "{'exponent':2}", 1, {F(3, 1, 8, 64)}, 1, F(3, 1, 8, 64)},
    {"aten.pow.Tensor_Tensor", NULL, 2, {F(2, 2, 3), F(1, 3)}, 1, F(2, 2, 3)},
    {"aten.clamp.default", "{'min':0}", 1, {F(1, 3)}, 1, F(1, 3)},
    {"aten.clamp_max.default", "{'max':6}", 1, {L(1, 3)}, 1, L(1, 3)},
    {"aten.add.Tensor", NULL, 2, {F(3, 2, 1, 4), F(2, 3, 1)}, 1, F(3, 2, 3, 4)},
    {"aten.add.Tensor", "{'other':1e-06}", 1, {F(3, 1, 8, 1)}, 1, F(3, 1, 8, 1)},
    {"aten.add_.Tensor", NULL, 2, {F(2, 2, 3), F(1, 3)}, 1, F(2, 2, 3)},
    {"aten.add.Tensor", NULL, 2, {F(1, 0), F(2, 3, 1)}, 1, F(2, 3, 0)},
    {"aten.sub.Tensor", NULL, 2, {F0, F(1, 5)}, 1, F(1, 5)},
    {"aten.rsub.Scalar", "{'other':1.0}", 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.mul.Tensor", "{'other':0.5}", 1, {L(1, 3)}, 1, F(1, 3)},
    {"aten.mul.Tensor", NULL, 2, {F(3, 1, 8, 1), F(3, 1, 1, 8)}, 1, F(3, 1, 8, 8)},
    {"aten.div.Tensor", NULL, 2, {L(1, 3), L(1, 3)}, 1, F(1, 3)},
    {"aten.div.Tensor_mode", "{'rounding_mode':'floor'}", 2, {L(1, 3), L0}, 1, L(1, 3)},
    {"aten.where.self", NULL, 3, {B(2, 2, 1), F(2, 1, 3), F0}, 1, F(2, 2, 3)},
    {"aten.where.ScalarOther", "{'other':0.0}", 2, {B(1, 4), F(1, 4)}, 1, F(1, 4)},
    {"aten.where.Scalar", "{'self':1.0,'other':0.0}", 1, {B(1, 4)}, 1, F(1, 4)},
    {"aten.masked_fill.Scalar", "{'value':-1e9}", 2, {F(3, 2, 3, 4), B(2, 3, 4)}, 1, F(3, 2, 3, 4)},
    {"aten.masked_fill.Scalar", "{'value':0}", 2, {F(1, 4), B(2, 2, 4)}, 1, F(2, 2, 4)},
    {"aten.eq.Scalar", "{'other':0}", 1, {L(2, 2, 3)}, 1, B(2, 2, 3)},
    {"aten.ne.Tensor", NULL, 2, {L(1, 3), L(2, 2, 1)}, 1, B(2, 2, 3)},
    {"aten.lt.Tensor", NULL, 2, {F(2, 2, 3), F(2, 2, 1)}, 1, B(2, 2, 3)},
    {"aten.le.Scalar", "{'other':1}", 1, {F(1, 3)}, 1, B(1, 3)},
    {"aten.gt.Scalar", "{'other':1}", 1, {F(1, 3)}, 1, B(1, 3)},
    {"aten.ge.Scalar", "{'other':1}", 1, {F(1, 3)}, 1, B(1, 3)},
    {"aten.logical_not.default", NULL, 1, {B(1, 3)}, 1, B(1, 3)},
    {"aten.bitwise_not.default", NULL, 1, {L(1, 3)}, 1, L(1, 3)},
    {"aten.logical_and.default", NULL, 2, {B(1, 3), B(2, 2, 1)}, 1, B(2, 2, 3)},
    {"aten.logical_or.default", NULL, 2, {B(1, 3), B(1, 3)}, 1, B(1, 3)},
    {"aten.bitwise_and.Tensor", NULL, 2, {L(1, 3), L(1, 3)}, 1, L(1, 3)},
    {"aten.softmax.int", "{'dim':-1,'dtype':'torch.float32'}", 1, {F(4, 1, 4, 8, 64)}, 1, F(4, 1, 4, 8, 64)},
    {"aten._log_softmax.default", "{'dim':1,'half_to_float':false}", 1, {F(2, 2, 3)}, 1, F(2, 2, 3)},
    {"aten.mean.dim", "{'dim':[-1],'keepdim':true}", 1, {F(3, 1, 8, 64)}, 1, F(3, 1, 8, 1)},
    {"aten.mean.dim", "{'dim':[2,3]}", 1, {F(4, 2, 3, 4, 5)}, 1, F(2, 2, 3)},
    {"aten.mean.default", NULL, 1, {F(2, 2, 3)}, 1, F0},
    {"aten.sum.dim_IntList", "{'dim':[0,-1]}", 1, {L(3, 2, 3, 4)}, 1, L(1, 3)},
    {"aten.sum.dim_IntList", "{'dim':[],'keepdim':true}", 1, {F(2, 2, 3)}, 1, F(2, 1, 1)},
    {"aten.sum.default", NULL, 1, {B(2, 2, 3)}, 1, L0},
    {"aten.amax.default", "{'dim':1,'keepdim':true}", 1, {F(2, 2, 3)}, 1, F(2, 2, 1)},
    {"aten.amax.default", NULL, 1, {F(2, 2, 3)}, 1, F0},
    {"aten.argmax.default", "{'dim':-1}", 1, {F(3, 1, 8, 151936)}, 1, L(2, 1, 8)},
    {"aten.argmax.default", "{'dim':1,'keepdim':true}", 1, {F(3, 2, 7, 5)}, 1, L(3, 2, 1, 5)},
    {"aten.argmax.default", "{'dim':[0],'skip_nan':true}", 1, {H(2, 4, 3)}, 1, L(1, 3)},
    {"aten.argmax.default", NULL, 1, {F(2, 2, 3)}, 1, L0},
    {"aten.argmax.default", "{'dim':null,'keepdim':true}", 1, {F(2, 2, 3)}, 1, L(2, 1, 1)},
    {"aten.argmax.default", "{'dim':0}", 1, {L(1, 5)}, 1, L0},
    {"aten.cumsum.default", "{'dim':1}", 1, {L(2, 2, 3)}, 1, L(2, 2, 3)},
    {"aten.max_pool2d.default", "{'kernel_size':[2,2]}", 1, {F(4, 2, 16, 16, 16)}, 1, F(4, 2, 16, 8, 8)},
    {"aten.max_pool2d.default", "{'kernel_size':[3,3],'padding':[1,1],'stride':[2,2]}", 1, {F(4, 1, 64, 112, 112)}, 1, F(4, 1, 64, 56, 56)},
    {"aten.max_pool2d.default", "{'kernel_size':3,'stride':[]}", 1, {F(4, 1, 1, 9, 10)}, 1, F(4, 1, 1, 3, 3)},
    {"aten.max_pool2d.default", "{'kernel_size':[3,3],'stride':[2,2],'ceil_mode':true}", 1, {F(4, 1, 1, 6, 6)}, 1, F(4, 1, 1, 3, 3)},
    {"aten.max_pool2d.default", "{'kernel_size':[2,2],'stride':[2,2],'padding':[1,1],'ceil_mode':true}", 1, {F(4, 1, 1, 5, 5)}, 1, F(4, 1, 1, 3, 3)},
    {"aten.max_pool2d.default", "{'kernel_size':[3,3],'stride':[1,1],'dilation':[2,2]}", 1, {F(3, 2, 10, 10)}, 1, F(3, 2, 6, 6)},
    {"aten.avg_pool2d.default", "{'kernel_size':[3,3],'stride':[2,2],'padding':[1,1],'ceil_mode':true,'count_include_pad':false}", 1,
     {F(3, 3, 7, 7)}, 1, F(3, 3, 4, 4)},
    {"aten.avg_pool2d.default", "{'kernel_size':[2,2],'divisor_override':3}", 1, {F(4, 1, 2, 5, 5)}, 1, F(4, 1, 2, 2, 2)},
    {"aten.adaptive_avg_pool2d.default", "{'output_size':[1,1]}", 1, {F(4, 2, 8, 7, 7)}, 1, F(4, 2, 8, 1, 1)},
    {"aten.adaptive_avg_pool2d.default", "{'output_size':[null,3]}", 1, {F(4, 1, 4, 5, 6)}, 1, F(4, 1, 4, 5, 3)},
    {"aten._adaptive_avg_pool2d.default", "{'output_size':7}", 1, {F(3, 4, 5, 6)}, 1, F(3, 4, 7, 7)},
    {"aten.embedding.default", NULL, 2, {F(2, 10, 4), L(2, 2, 3)}, 1, F(3, 2, 3, 4)},
    {"aten.embedding.default", NULL, 2, {F(2, 10, 4), L0}, 1, F(1, 4)},
    {"aten.cat.default", "{'_tensor_list_sizes':[2],'dim':-1}", 2, {F(2, 2, 3), F(2, 2, 5)}, 1, F(2, 2, 8)},
    {"aten.cat.default", NULL, 3, {F(1, 0), F(2, 2, 3), F(2, 4, 3)}, 1, F(2, 6, 3)},
    {"aten.concat.default", "{'dim':1}", 4, {L(2, 2, 1), L(2, 2, 2), L(1, 0), L(2, 2, 3)}, 1, L(2, 2, 6)},
    {"aten.slice.Tensor", "{'dim':3,'start':8,'end':" BIG "}", 1, {F(4, 1, 4, 8, 16)}, 1, F(4, 1, 4, 8, 8)},
    {"aten.slice.Tensor", "{'dim':1,'start':-3,'end':null}", 1, {F(2, 4, 10)}, 1, F(2, 4, 3)},
    {"aten.slice.Tensor", "{'dim':-1,'start':1,'end':8,'step':3}", 1, {F(2, 4, 10)}, 1, F(2, 4, 3)},
    {"aten.slice.Tensor", "{'dim':1,'end':-1}", 1, {F(2, 4, 10)}, 1, F(2, 4, 9)},
    {"aten.slice.Tensor", "{'dim':1,'start':20}", 1, {F(2, 4, 10)}, 1, F(2, 4, 0)},
    {"aten.slice.Tensor", NULL, 1, {F(2, 4, 10)}, 1, F(2, 4, 10)},
    {"aten.select.int", "{'dim':1,'index':-1}", 1, {F(3, 4, 5, 6)}, 1, F(2, 4, 6)},
    {"aten.split.Tensor", "{'split_size':4,'dim':-1}", 1, {F(2, 3, 4)}, 1, F(2, 3, 4)},
    {"aten.view.default", "{'size':[2,-1]}", 1, {F(3, 2, 3, 4)}, 1, F(2, 2, 12)},
    {"aten.reshape.default", "{'shape':[24]}", 1, {F(3, 2, 3, 4)}, 1, F(1, 24)},
    {"aten._unsafe_view.default", "{'size':[4,6]}", 1, {F(3, 2, 3, 4)}, 1, F(2, 4, 6)},
    {"aten.view.default", "{'size':[]}", 1, {F(1, 1)}, 1, F0},
    {"aten.flatten.using_ints", "{'start_dim':1}", 1, {F(3, 2, 3, 4)}, 1, F(2, 2, 12)},
    {"aten.flatten.using_ints", "{'start_dim':1,'end_dim':-2}", 1, {F(4, 2, 3, 4, 5)}, 1, F(3, 2, 12, 5)},
    {"aten.flatten.using_ints", NULL, 1, {F0}, 1, F(1, 1)},
    {"aten.unsqueeze.default", "{'dim':-1}", 1, {F(2, 2, 3)}, 1, F(3, 2, 3, 1)},
    {"aten.unsqueeze.default", "{'dim':-3}", 1, {F(2, 2, 3)}, 1, F(3, 1, 2, 3)},
    {"aten.unsqueeze.default", "{'dim':0}", 1, {F0}, 1, F(1, 1)},
    {"aten.squeeze.dim", "{'dim':1}", 1, {F(3, 2, 1, 3)}, 1, F(2, 2, 3)},
    {"aten.squeeze.dim", "{'dim':0}", 1, {F(3, 2, 1, 3)}, 1, F(3, 2, 1, 3)},
    {"aten.squeeze.dims", "{'dim':[0,-2]}", 1, {F(3, 1, 1, 3)}, 1, F(1, 3)},
    {"aten.squeeze.default", NULL, 1, {F(3, 1, 2, 1)}, 1, F(1, 2)},
    {"aten.permute.default", "{'dims':[2,0,-2]}", 1, {F(3, 2, 3, 4)}, 1, F(3, 4, 2, 3)},
    {"aten.transpose.int", "{'dim0':-1,'dim1':0}", 1, {F(3, 2, 3, 4)}, 1, F(3, 4, 3, 2)},
    {"aten.expand.default", "{'size':[3,-1,4]}", 1, {F(2, 2, 1)}, 1, F(3, 3, 2, 4)},
    {"aten.expand.default", "{'size':[1,2,2,64,16]}", 1, {F(5, 1, 2, 1, 64, 16)}, 1, F(5, 1, 2, 2, 64, 16)},
    {"aten.index_copy.default", "{'dim':2}", 3, {F(4, 1, 2, 64, 16), L(1, 8), F(4, 1, 2, 8, 16)}, 1, F(4, 1, 2, 64, 16)},
    {"aten.arange.default", "{'end':5}", 0, {NONE}, 1, L(1, 5)},
    {"aten.arange.start_step", "{'start':0,'end':1,'step':0.3}", 0, {NONE}, 1, F(1, 4)},
    {"aten.arange.start_step", "{'start':10,'end':0,'step':-3}", 0, {NONE}, 1, L(1, 4)},
    {"aten.arange.start", "{'start':2,'end':7,'dtype':'torch.float32'}", 0, {NONE}, 1, F(1, 5)},
    {"aten.full.default", "{'size':[2,3],'fill_value':1.5}", 0, {NONE}, 1, F(2, 2, 3)},
    {"aten.full.default", "{'size':[2],'fill_value':7}", 0, {NONE}, 1, L(1, 2)},
    {"aten.zeros.default", "{'size':[4]}", 0, {NONE}, 1, F(1, 4)},
    {"aten.ones.default", "{'size':[],'dtype':'torch.bool'}", 0, {NONE}, 1, B0},    {"aten.leaky_relu.default", "{'negative_slope':0.1}", 1, {F(2, 2, 3)}, 1, F(2, 2, 3)},
    {"aten.new_ones.default", "{'size':[],'dtype':'torch.bool'}", 1, {L(2, 1, 8)}, 1, B0},
    {"aten.zeros_like.default", NULL, 1, {F(2, 2, 3)}, 1, F(2, 2, 3)},
    {"aten.diff.default", "{'n':1,'dim':-1}", 2, {L(2, 1, 8), L(2, 1, 1)}, 1, L(2, 1, 8)},
    {"aten.index.Tensor", NULL, 3, {L(2, 1, 8), L(4, 1, 1, 1, 1), L(4, 1, 1, 8, 1)}, 1, L(4, 1, 1, 8, 1)},
    {"aten.index.Tensor", NULL, 2, {F(2, 9, 2), L(1, 16)}, 1, F(2, 16, 2)},
    {"aten.gather.default", "{'dim':1}", 2, {L(2, 1, 64), L(2, 1, 8)}, 1, L(2, 1, 8)},
    {"aten.conv1d.default", "{'padding':[4],'stride':[4]}", 3, {F(3, 1, 1, 256), F(3, 16, 1, 9), F(1, 16)}, 1, F(3, 1, 16, 64)},
    {"aten.conv_transpose2d.input", "{'stride':[2,2]}", 3, {F(4, 1, 32, 8, 8), F(4, 32, 16, 2, 2), F(1, 16)}, 1, F(4, 1, 16, 16, 16)},
    {"aten.group_norm.default", "{'num_groups':4,'eps':1e-5}", 3, {F(3, 1, 16, 64), F(1, 16), F(1, 16)}, 1, F(3, 1, 16, 64)},
    {"aten.upsample_bilinear2d.vec", "{'align_corners':false,'output_size':[48,48],'scale_factors':null}", 1, {F(4, 1, 3, 6, 6)}, 1, F(4, 1, 3, 48, 48)},
    {"aten.upsample_nearest2d.vec", "{'output_size':null,'scale_factors':[4.0,4.0]}", 1, {F(4, 1, 2, 8, 8)}, 1, F(4, 1, 2, 32, 32)},
    {"aten.pad.default", "{'pad':[1,2,0,1]}", 1, {F(3, 2, 3, 4)}, 1, F(3, 2, 4, 7)},
    {"aten.einsum.default", "{'equation':'B G H I D, B G H J D -> B G H I J'}", 2, {F(5, 1, 16, 2, 4, 8), F(5, 1, 16, 2, 4, 8)}, 1, F(5, 1, 16, 2, 4, 4)},
    {"aten.linalg_vector_norm.default", "{'dim':[-1],'keepdim':true,'ord':2.0}", 1, {F(2, 4, 8)}, 1, F(2, 4, 1)},
    {"aten.scaled_dot_product_attention.default", "{'scale':0.25}", 4, {F(4, 1, 4, 8, 16), F(4, 1, 4, 8, 16), F(4, 1, 4, 8, 16), B(4, 1, 1, 8, 8)}, 1, F(4, 1, 4, 8, 16)},
    {"aten.acos.default", NULL, 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.asin.default", NULL, 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.atan.default", NULL, 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.tan.default", NULL, 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.log1p.default", NULL, 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.expm1.default", NULL, 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.erf.default", NULL, 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.reciprocal.default", NULL, 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.softplus.default", "{'beta':2,'threshold':10}", 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.elu.default", "{'alpha':1.0}", 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.mish.default", NULL, 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.ceil.default", NULL, 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.floor.default", NULL, 1, {L(1, 5)}, 1, L(1, 5)},
    {"aten.round.decimals", "{'decimals':2}", 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.sign.default", NULL, 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.square.default", NULL, 1, {F(1, 5)}, 1, F(1, 5)},
    {"aten.isnan.default", NULL, 1, {F(1, 5)}, 1, B(1, 5)},
    {"aten.maximum.default", NULL, 2, {F(2, 2, 1), F(1, 3)}, 1, F(2, 2, 3)},
    {"aten.minimum.default", NULL, 2, {L(1, 3), L(1, 3)}, 1, L(1, 3)},
    {"aten.remainder.Scalar", "{'other':3}", 1, {L(1, 3)}, 1, L(1, 3)},
    {"aten.clamp.Tensor", NULL, 3, {F(2, 2, 3), F(1, 3), F(2, 2, 1)}, 1, F(2, 2, 3)},
    {"aten.amin.default", "{'dim':[1],'keepdim':true}", 1, {F(2, 2, 3)}, 1, F(2, 2, 1)},
    {"aten.prod.default", NULL, 1, {L(2, 2, 3)}, 1, L0},
    {"aten.any.dim", "{'dim':0}", 1, {F(2, 2, 3)}, 1, B(1, 3)},
    {"aten.all.default", NULL, 1, {F(2, 2, 3)}, 1, B0},
    {"aten.var.correction", "{'dim':[1],'correction':0}", 1, {F(2, 2, 3)}, 1, F(1, 2)},
    {"aten.std.dim", "{'dim':[0],'keepdim':true}", 1, {F(2, 2, 3)}, 1, F(2, 1, 3)},
    {"aten.logsumexp.default", "{'dim':[0]}", 1, {F(2, 2, 3)}, 1, F(1, 3)},
    {"aten.argmin.default", "{'dim':1}", 1, {F(2, 2, 3)}, 1, L(1, 2)},
    {"aten.stack.default", "{'dim':1}", 2, {F(2, 2, 3), F(2, 2, 3)}, 1, F(3, 2, 2, 3)},
    {"aten.flip.default", "{'dims':[0,-1]}", 1, {F(2, 2, 3)}, 1, F(2, 2, 3)},
    {"aten.roll.default", "{'shifts':[1],'dims':[1]}", 1, {F(2, 2, 3)}, 1, F(2, 2, 3)},
    {"aten.tril.default", "{'diagonal':-1}", 1, {F(2, 3, 3)}, 1, F(2, 3, 3)},
    {"aten.repeat.default", "{'repeats':[2,1,2]}", 1, {F(2, 2, 3)}, 1, F(3, 2, 2, 6)},
    {"aten.repeat_interleave.self_int", "{'repeats':2,'dim':0}", 1, {F(2, 2, 3)}, 1, F(2, 4, 3)},
    {"aten.pixel_shuffle.default", "{'upscale_factor':2}", 1, {F(4, 1, 8, 2, 3)}, 1, F(4, 1, 2, 4, 6)},
    {"aten.baddbmm.default", "{'beta':0.5}", 3, {F(1, 4), F(3, 2, 3, 5), F(3, 2, 5, 4)}, 1, F(3, 2, 3, 4)},
    {"aten.instance_norm.default", "{'use_input_stats':true,'eps':1e-5}", 1, {F(3, 2, 3, 4)}, 1, F(3, 2, 3, 4)},
    {"npu.slice_fill", "{'dim':0,'start':2,'end':4,'value':0}", 1, {F(1, 6)}, 1, F(1, 6)},
    {"npu.slice_fill", "{'dim':[0,1],'start':[0,-4],'end':[-4,-2]}", 2, {F(2, 16, 16), F0}, 1, F(2, 16, 16)},
    {"aten.fill_.Tensor", NULL, 2, {F(2, 3, 4), L0}, 1, F(2, 3, 4)},
    {"aten.copy_.default", NULL, 2, {F(2, 2, 3), L(1, 3)}, 1, F(2, 2, 3)},
};
/* clang-format on */
#define NGOOD (sizeof good / sizeof good[0])

/* Nodes with several outputs (split, and max.dim, topk, sort, unbind, max_pool2d_with_indices). */
/* clang-format off */
static const struct {
        const char *aten, *attrs;
        TuSpec in;
        int nout;
        TuSpec out[4];
} multi[] = {
    {"aten.split.Tensor", "{'split_size':2,'dim':1}", F(2, 2, 5), 3, {F(2, 2, 2), F(2, 2, 2), F(2, 2, 1)}},
    {"aten.split.Tensor", "{'split_size':48,'dim':2}", F(3, 1, 10, 144), 3, {F(3, 1, 10, 48), F(3, 1, 10, 48), F(3, 1, 10, 48)}},
    {"aten.split_with_sizes.default", "{'split_sizes':[1,0,3,1],'dim':-1}", L(2, 4, 5), 4, {L(2, 4, 1), L(2, 4, 0), L(2, 4, 3), L(2, 4, 1)}},
    {"aten.split.sizes", "{'split_size':[3,1]}", B(2, 4, 2), 2, {B(2, 3, 2), B(2, 1, 2)}},
    {"aten.max.dim", "{'dim':1}", F(3, 5, 5, 5), 2, {F(2, 5, 5), L(2, 5, 5)}},
    {"aten.min.dim", "{'dim':-1,'keepdim':true}", F(2, 4, 3), 2, {F(2, 4, 1), L(2, 4, 1)}},
    {"aten.topk.default", "{'k':3}", F(3, 5, 10, 5), 2, {F(3, 5, 10, 3), L(3, 5, 10, 3)}},
    {"aten.sort.default", "{'dim':0,'descending':true}", F(2, 4, 3), 2, {F(2, 4, 3), L(2, 4, 3)}},
    {"aten.unbind.int", "{'dim':1}", F(3, 2, 3, 4), 3, {F(2, 2, 4), F(2, 2, 4), F(2, 2, 4)}},
    {"aten.max_pool2d_with_indices.default", "{'kernel_size':[3,3],'stride':[2,2],'ceil_mode':true}", F(4, 1, 2, 3, 6), 2, {F(4, 1, 2, 1, 3), L(4, 1, 2, 1, 3)}},
};
/* clang-format on */

/* The tables name every op of ops.def, and none reaches the "no rule" fallthrough. */
static void test_every_op_covered(void **state)
{
    (void)state;
    bool seen[OP_COUNT] = {false};
    for (size_t i = 0; i < NGOOD; i++) {
        OpId op = op_lookup(good[i].aten);
        if (op == OP_INVALID) fail_msg("case %zu: unknown op %s", i, good[i].aten);
        seen[op] = true;
    }
    for (size_t i = 0; i < sizeof multi / sizeof multi[0]; i++)
        seen[op_lookup(multi[i].aten)] = true;
    for (int op = 0; op < OP_COUNT; op++)
        if (!seen[op]) fail_msg("op %s has no shape test case", op_info[op].id);
    /* An op id outside the table is reported as our bug, not silently accepted. */
    Graph *g = build_case(&good[1]);
    Node n = g->nodes[0];
    n.op = OP_COUNT;
    int rank[1];
    int64_t shape[1][NPU_MAX_RANK];
    DiagList d = {0};
    assert_int_equal(shape_infer(g, &n, rank, shape, &d), ST_INTERNAL);
    assert_int_equal(d.errors, 1);
    diag_free(&d);
    graph_free(g);
}

static void test_good_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < NGOOD; i++) {
        const Case *c = &good[i];
        Graph *g = build_case(c);
        DiagList d = {0};
        int rank[1] = {-1};
        int64_t shape[1][NPU_MAX_RANK];
        Status st = shape_infer(g, &g->nodes[0], rank, shape, &d);
        if (st != ST_OK) {
            print_diags(&d);
            fail_msg("case %zu (%s %s): shape_infer failed", i, c->aten, c->attrs);
        }
        if (c->nout == 1) {
            char a[128], b[128];
            bool same = rank[0] == c->out.rank;
            for (int k = 0; same && k < rank[0]; k++)
                same = shape[0][k] == c->out.shape[k];
            if (!same)
                fail_msg("case %zu (%s %s): inferred %s, want %s", i, c->aten, c->attrs,
                         shape_str(shape[0], rank[0], a, sizeof a),
                         shape_str(c->out.shape, c->out.rank, b, sizeof b));
        }
        st = shape_check_graph(g, &d);
        if (st != ST_OK || d.count) {
            print_diags(&d);
            fail_msg("case %zu (%s %s): shape_check_graph reported %d", i, c->aten, c->attrs,
                     d.count);
        }
        diag_free(&d);
        graph_free(g);
    }
}

/* The same nodes with the last declared dim off by one (or a scalar declared [1]) must fail,
 * naming the file, node, tensor, the declared and the inferred shapes. */
static void test_wrong_declared_shape(void **state)
{
    (void)state;
    int tested = 0;
    for (size_t i = 0; i < NGOOD; i++) {
        const Case *c = &good[i];
        if (c->nout != 1) continue;
        TuSpec bad = c->out;
        if (bad.rank == 0)
            bad.shape[bad.rank++] = 1;
        else
            bad.shape[bad.rank - 1] += 1;
        Graph *g = build(c->aten, c->nin, c->in, 1, &bad, c->attrs);
        DiagList d = {0};
        assert_int_equal(shape_check_graph(g, &d), ST_BAD_INPUT);
        char decl[128], inf[128], want[320], buf[2048];
        shape_str(bad.shape, bad.rank, decl, sizeof decl);
        shape_str(c->out.shape, c->out.rank, inf, sizeof inf);
        snprintf(want, sizeof want, "declared shape %s but ", decl);
        bool found = false;
        for (int k = 0; k < d.count && !found; k++) {
            diag_format(&d.items[k], buf, sizeof buf);
            const char *p = strstr(buf, want);
            found = strstr(buf, "<test>") && strstr(buf, "node 'n0'") &&
                    strstr(buf, "tensor 'out0'") && p && strstr(p, " gives ") &&
                    strstr(strstr(p, " gives "), inf);
        }
        if (!found) {
            print_diags(&d);
            fail_msg("case %zu (%s): no diagnostic '%s... gives %s'", i, c->aten, want, inf);
        }
        diag_free(&d);
        graph_free(g);
        tested++;
    }
    assert_true(tested > 100);
}

typedef struct BadCase {
    const char *aten, *attrs;
    int nin;
    TuSpec in[4];
    int nout;
    TuSpec out[2];
    const char *want; /* substring of the first diagnostic */
} BadCase;

/* clang-format off */
static const BadCase bad_attrs[] = {
    {"aten.softmax.int", "{'dim':2}", 1, {F(2, 2, 3)}, 1, {F(2, 2, 3)}, "dim 2 is out of range"},
    {"aten.softmax.int", NULL, 1, {F(2, 2, 3)}, 1, {F(2, 2, 3)}, "'dim' is required"},
    {"aten.softmax.int", "{'dim':'x'}", 1, {F(2, 2, 3)}, 1, {F(2, 2, 3)}, "must be an integer"},
    {"aten.cumsum.default", "{'dim':-3}", 1, {F(2, 2, 3)}, 1, {F(2, 2, 3)}, "out of range"},
    {"aten.conv2d.default", NULL, 2, {F(4, 1, 4, 8, 8), F(4, 8, 3, 3, 3)}, 1, {F(4, 1, 8, 6, 6)}, "channels"},
    {"aten.conv2d.default", "{'groups':3}", 2, {F(4, 1, 6, 8, 8), F(4, 8, 2, 3, 3)}, 1, {F(4, 1, 8, 6, 6)}, "divisible by groups"},
    {"aten.conv2d.default", "{'padding':'same','stride':2}", 2, {F(4, 1, 3, 8, 8), F(4, 8, 3, 3, 3)}, 1, {F(4, 1, 8, 8, 8)}, "strided"},
    {"aten.conv2d.default", "{'padding':'full'}", 2, {F(4, 1, 3, 8, 8), F(4, 8, 3, 3, 3)}, 1, {F(4, 1, 8, 8, 8)}, "padding must be"},
    {"aten.conv2d.default", "{'stride':[1,2,3]}", 2, {F(4, 1, 3, 8, 8), F(4, 8, 3, 3, 3)}, 1, {F(4, 1, 8, 6, 6)}, "1 or 2 entries"},
    {"aten.conv2d.default", NULL, 2, {F(4, 1, 3, 2, 2), F(4, 8, 3, 3, 3)}, 1, {F(4, 1, 8, 1, 1)}, "smaller than the (dilated) kernel"},
    {"aten.conv2d.default", NULL, 3, {F(4, 1, 3, 8, 8), F(4, 8, 3, 3, 3), F(1, 4)}, 1, {F(4, 1, 8, 6, 6)}, "bias must be [8]"},
    {"aten.conv2d.default", NULL, 2, {F(2, 8, 8), F(4, 8, 3, 3, 3)}, 1, {F(4, 1, 8, 6, 6)}, "3-D (unbatched) or 4-D"},
    {"aten.add.Tensor", NULL, 2, {F(2, 2, 3), F(1, 4)}, 1, {F(2, 2, 3)}, "cannot be broadcast"},
    {"aten.add_.Tensor", NULL, 2, {F(1, 3), F(2, 2, 3)}, 1, {F(2, 2, 3)}, "doesn't match the broadcast shape"},
    {"aten.add.Tensor", NULL, 1, {F(1, 3)}, 1, {F(1, 3)}, "scalar attribute 'other'"},
    {"aten.pow.Tensor_Scalar", NULL, 1, {F(1, 3)}, 1, {F(1, 3)}, "'exponent'"},
    {"aten.clamp.default", NULL, 1, {F(1, 3)}, 1, {F(1, 3)}, "at least one of 'min' or 'max'"},
    {"aten.div.Tensor_mode", "{'rounding_mode':'up'}", 2, {F(1, 3), F(1, 3)}, 1, {F(1, 3)}, "rounding_mode"},
    {"aten.gelu.default", "{'approximate':'fast'}", 1, {F(1, 3)}, 1, {F(1, 3)}, "approximate"},
    {"aten.dropout.default", "{'p':2.0}", 1, {F(1, 3)}, 1, {F(1, 3)}, "between 0 and 1"},
    {"aten.masked_fill.Scalar", NULL, 2, {F(1, 3), B(1, 3)}, 1, {F(1, 3)}, "'value' is required"},
    {"aten.where.self", NULL, 3, {B(1, 3), F(1, 4), F(1, 3)}, 1, {F(1, 3)}, "cannot be broadcast"},
    {"aten.where.ScalarOther", NULL, 2, {B(1, 3), F(1, 3)}, 1, {F(1, 3)}, "needs self and other"},
    {"aten.view.default", "{'size':[4,2]}", 1, {F(2, 2, 3)}, 1, {F(2, 4, 2)}, "invalid for input of size 6"},
    {"aten.view.default", "{'size':[-1,-1]}", 1, {F(2, 2, 3)}, 1, {F(2, 2, 3)}, "only one dimension"},
    {"aten.view.default", "{'size':[-1,4]}", 1, {F(2, 2, 3)}, 1, {F(2, 2, 3)}, "invalid for input of size 6"},
    {"aten.reshape.default", "{'shape':[-1,0]}", 1, {F(2, 0, 3)}, 1, {F(2, 0, 3)}, "can be any value"},
    {"aten.reshape.default", "{'shape':[-2,3]}", 1, {F(2, 2, 3)}, 1, {F(2, 2, 3)}, "invalid shape dimension"},
    {"aten.view.default", "{'size':[1099511627776,1099511627776,1099511627776]}", 1, {F(2, 2, 3)}, 1, {F(2, 2, 3)}, "invalid for input"},
    {"aten.view.default", NULL, 1, {F(2, 2, 3)}, 1, {F(2, 2, 3)}, "is required"},
    {"aten.matmul.default", NULL, 2, {F(2, 2, 3), F(2, 4, 5)}, 1, {F(2, 2, 5)}, "cannot be multiplied"},
    {"aten.matmul.default", NULL, 2, {F(3, 2, 2, 3), F(3, 3, 3, 5)}, 1, {F(3, 3, 2, 5)}, "cannot be broadcast"},
    {"aten.matmul.default", NULL, 2, {F0, F(1, 3)}, 1, {F(1, 3)}, "at least 1D"},
    {"aten.mm.default", NULL, 2, {F(3, 1, 2, 3), F(2, 3, 4)}, 1, {F(2, 2, 4)}, "must be a 2-D"},
    {"aten.bmm.default", NULL, 2, {F(3, 2, 3, 4), F(3, 3, 4, 5)}, 1, {F(3, 2, 3, 5)}, "batch sizes differ"},
    {"aten.linear.default", NULL, 2, {F(2, 4, 64), F(2, 32, 63)}, 1, {F(2, 4, 32)}, "cannot be multiplied"},
    {"aten.linear.default", NULL, 3, {F(2, 4, 64), F(2, 32, 64), F(1, 16)}, 1, {F(2, 4, 32)}, "cannot be broadcast"},
    {"aten.addmm.default", NULL, 3, {F(2, 8, 32), F(2, 4, 64), F(2, 64, 32)}, 1, {F(2, 4, 32)}, "cannot be broadcast"},
    {"aten.addmm.default", NULL, 3, {F(3, 2, 4, 32), F(2, 4, 64), F(2, 64, 32)}, 1, {F(2, 4, 32)}, "cannot be expanded"},
    {"aten.layer_norm.default", "{'normalized_shape':[5]}", 1, {F(3, 2, 5, 6)}, 1, {F(3, 2, 5, 6)}, "trailing dims"},
    {"aten.layer_norm.default", "{'normalized_shape':[6]}", 2, {F(3, 2, 5, 6), F(1, 5)}, 1, {F(3, 2, 5, 6)}, "weight and bias"},
    {"aten.layer_norm.default", NULL, 1, {F(3, 2, 5, 6)}, 1, {F(3, 2, 5, 6)}, "normalized_shape"},
    {"aten.batch_norm.default", NULL, 3, {F(4, 2, 4, 5, 5), F(1, 3), F(1, 3)}, 1, {F(4, 2, 4, 5, 5)}, "input's channels"},
    {"aten.cat.default", "{'dim':0}", 2, {F(2, 2, 3), F(2, 2, 4)}, 1, {F(2, 4, 3)}, "must match except in dimension 0"},
    {"aten.cat.default", "{'dim':0}", 2, {F(2, 2, 3), F(3, 1, 2, 3)}, 1, {F(2, 4, 3)}, "same number of dimensions"},
    {"aten.cat.default", "{'dim':2}", 2, {F(2, 2, 3), F(2, 2, 3)}, 1, {F(2, 2, 6)}, "out of range"},
    {"aten.cat.default", NULL, 2, {F0, F0}, 1, {F(1, 2)}, "zero-dimensional"},
    {"aten.slice.Tensor", "{'dim':1,'step':0}", 1, {F(2, 2, 3)}, 1, {F(2, 2, 3)}, "step must be positive"},
    {"aten.slice.Tensor", "{'dim':2}", 1, {F(2, 2, 3)}, 1, {F(2, 2, 3)}, "out of range"},
    {"aten.select.int", "{'dim':0,'index':2}", 1, {F(2, 2, 3)}, 1, {F(1, 3)}, "index 2 out of range"},
    {"aten.select.int", "{'dim':0,'index':-3}", 1, {F(2, 2, 3)}, 1, {F(1, 3)}, "out of range"},
    {"aten.split.Tensor", "{'split_size':2,'dim':1}", 1, {F(2, 2, 5)}, 2, {F(2, 2, 2), F(2, 2, 2)}, "produces 3 outputs"},
    {"aten.split_with_sizes.default", "{'split_sizes':[2,2],'dim':1}", 1, {F(2, 2, 5)}, 2, {F(2, 2, 2), F(2, 2, 2)}, "do not add up"},
    {"aten.split.sizes", "{'split_size':[2,-1,4],'dim':1}", 1, {F(2, 2, 5)}, 2, {F(2, 2, 2), F(2, 2, 2)}, "negative"},
    {"aten.split.Tensor", "{'split_size':0}", 1, {F(2, 2, 5)}, 1, {F(2, 2, 5)}, "must be positive"},
    {"aten.split.Tensor", "{'dim':1}", 1, {F(2, 2, 5)}, 1, {F(2, 2, 5)}, "needs `split_size`"},
    {"aten.split.Tensor", "{'split_size':1,'dim':2}", 1, {F(2, 2, 5)}, 2, {F(2, 1, 5), F(2, 1, 5)}, "out of range"},
    {"aten.permute.default", "{'dims':[0,0]}", 1, {F(2, 2, 3)}, 1, {F(2, 2, 3)}, "repeated dim"},
    {"aten.permute.default", "{'dims':[1,0,2]}", 1, {F(2, 2, 3)}, 1, {F(2, 3, 2)}, "number of dims"},
    {"aten.permute.default", "{'dims':'x'}", 1, {F(2, 2, 3)}, 1, {F(2, 3, 2)}, "list of integers"},
    {"aten.expand.default", "{'size':[2,4]}", 1, {F(2, 2, 3)}, 1, {F(2, 2, 4)}, "non-singleton dimension 1"},
    {"aten.expand.default", "{'size':[-1,2,3]}", 1, {F(2, 2, 3)}, 1, {F(3, 1, 2, 3)}, "leading, non-existing"},
    {"aten.expand.default", "{'size':[3]}", 1, {F(2, 2, 3)}, 1, {F(2, 2, 3)}, "greater or equal"},
    {"aten.unsqueeze.default", "{'dim':3}", 1, {F(2, 2, 3)}, 1, {F(3, 2, 3, 1)}, "dim 3 is out of range"},
    {"aten.unsqueeze.default", "{'dim':0}", 1, {F(8, 1, 1, 1, 1, 1, 1, 1, 1)}, 1, {F(8, 1, 1, 1, 1, 1, 1, 1, 1)}, "rank 9"},
    {"aten.squeeze.dim", "{'dim':5}", 1, {F(2, 2, 1)}, 1, {F(1, 2)}, "out of range"},
    {"aten.transpose.int", "{'dim0':0}", 1, {F(2, 2, 3)}, 1, {F(2, 3, 2)}, "'dim1' is required"},
    {"aten.flatten.using_ints", "{'start_dim':2,'end_dim':1}", 1, {F(3, 2, 3, 4)}, 1, {F(1, 24)}, "start_dim cannot come after"},
    {"aten.mean.dim", "{'dim':[1,-2]}", 1, {F(3, 2, 3, 4)}, 1, {F(2, 2, 4)}, "appears multiple times"},
    {"aten.sum.dim_IntList", "{'dim':[3]}", 1, {F(3, 2, 3, 4)}, 1, {F(2, 2, 3)}, "out of range"},
    {"aten.argmax.default", "{'dim':3}", 1, {F(3, 2, 3, 4)}, 1, {L(2, 2, 3)}, "dim 3 is out of range"},
    {"aten.argmax.default", "{'dim':-4}", 1, {F(3, 2, 3, 4)}, 1, {L(2, 2, 3)}, "out of range"},
    {"aten.argmax.default", "{'dim':[0,1]}", 1, {F(3, 2, 3, 4)}, 1, {L(1, 4)}, "one integer or null"},
    {"aten.argmax.default", "{'dim':1}", 1, {F(2, 2, 0)}, 1, {L(1, 2)}, "dim 1 of size 0"},
    {"aten.argmax.default", NULL, 1, {F(2, 0, 3)}, 1, {L0}, "empty tensor"},
    {"aten.argmax.default", "{'dim':0,'skip_nan':'yes'}", 1, {F(1, 3)}, 1, {L0}, "'skip_nan' must be a bool"},
    {"aten.t.default", NULL, 1, {F(3, 2, 3, 4)}, 1, {F(3, 4, 3, 2)}, "<= 2 dimensions"},
    {"aten.max_pool2d.default", "{'kernel_size':[2,2],'padding':[2,2]}", 1, {F(4, 1, 1, 8, 8)}, 1, {F(4, 1, 1, 6, 6)}, "at most half"},
    {"aten.max_pool2d.default", "{'kernel_size':[5,5]}", 1, {F(4, 1, 1, 3, 3)}, 1, {F(4, 1, 1, 1, 1)}, "too small"},
    {"aten.max_pool2d.default", NULL, 1, {F(4, 1, 1, 3, 3)}, 1, {F(4, 1, 1, 1, 1)}, "kernel_size"},
    {"aten.max_pool2d.default", "{'kernel_size':2}", 1, {F(2, 3, 3)}, 1, {F(2, 1, 1)}, "3-D or 4-D"},
    {"aten.avg_pool2d.default", "{'kernel_size':[2,2],'divisor_override':0}", 1, {F(4, 1, 1, 4, 4)}, 1, {F(4, 1, 1, 2, 2)}, "divisor"},
    {"aten.adaptive_avg_pool2d.default", "{'output_size':[-1,2]}", 1, {F(4, 1, 1, 4, 4)}, 1, {F(4, 1, 1, 1, 1)}, "greater than or equal"},
    {"aten.adaptive_avg_pool2d.default", "{'output_size':[1,2,3]}", 1, {F(4, 1, 1, 4, 4)}, 1, {F(4, 1, 1, 1, 1)}, "one or two"},
    {"aten.adaptive_avg_pool2d.default", "{'output_size':[null,'x']}", 1, {F(4, 1, 1, 4, 4)}, 1, {F(4, 1, 1, 1, 1)}, "one or two"},
    {"aten.adaptive_avg_pool2d.default", NULL, 1, {F(4, 1, 1, 4, 4)}, 1, {F(4, 1, 1, 1, 1)}, "'output_size' is required"},
    {"aten.embedding.default", NULL, 2, {F(3, 2, 10, 4), L(1, 3)}, 1, {F(2, 3, 4)}, "must be 2-D"},
    {"aten.index_copy.default", "{'dim':2}", 3, {F(4, 1, 2, 64, 16), L(1, 7), F(4, 1, 2, 8, 16)}, 1, {F(4, 1, 2, 64, 16)}, "number of indices (7)"},
    {"aten.index_copy.default", "{'dim':2}", 3, {F(4, 1, 2, 64, 16), L(1, 8), F(4, 1, 3, 8, 16)}, 1, {F(4, 1, 2, 64, 16)}, "same slice shapes"},
    {"aten.copy.default", NULL, 2, {F(2, 2, 3), F(3, 2, 1, 3)}, 1, {F(2, 2, 3)}, "src [2,1,3] cannot be expanded to self's shape [2,3]"},
    {"aten.arange.start_step", "{'start':0,'end':5,'step':-1}", 0, {NONE}, 1, {L(1, 5)}, "inconsistent with step sign"},
    {"aten.arange.start_step", "{'start':0,'end':5,'step':0}", 0, {NONE}, 1, {L(1, 5)}, "nonzero"},
    {"aten.arange.default", NULL, 0, {NONE}, 1, {L(1, 5)}, "'end' is required"},
    {"aten.full.default", "{'size':[2,-3],'fill_value':0}", 0, {NONE}, 1, {L(1, 2)}, "invalid size -3"},
    {"aten.full.default", "{'size':[2]}", 0, {NONE}, 1, {F(1, 2)}, "'fill_value' is required"},
    {"<built-in function getitem>", "{'index':2}", 2, {F(1, 2), F(1, 3)}, 1, {F(1, 2)}, "out of range for 2 inputs"},
    {"aten.relu.default", NULL, 1, {F(1, 3)}, 2, {F(1, 3), F(1, 3)}, "produces 1 output, the node declares 2"},
    {"aten._assert_tensor_metadata.default", "{'size':[3,2]}", 1, {F(2, 2, 3)}, 0, {NONE}, "asserts size [3,2]"},
    {"aten.fill_.Tensor", NULL, 2, {F(2, 3, 4), F(1, 1)}, 1, {F(2, 3, 4)}, "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions"},
    {"npu.slice_fill", "{'dim':[0,1],'start':[0],'end':[1,2,3]}", 1, {F(2, 4, 4)}, 1, {F(2, 4, 4)}, "ints or lists of one length"},
    {"npu.slice_fill", "{'dim':[0,2]}", 1, {F(2, 4, 4)}, 1, {F(2, 4, 4)}, "a dim within the input's rank"},
    {"npu.slice_fill", "{'dim':0,'step':0}", 1, {F(2, 4, 4)}, 1, {F(2, 4, 4)}, "positive step"},
};
/* clang-format on */

static void test_bad_attrs(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_attrs / sizeof bad_attrs[0]; i++) {
        const BadCase *c = &bad_attrs[i];
        Graph *g = build(c->aten, c->nin, c->in, c->nout, c->out, c->attrs);
        DiagList d = {0};
        int rank[2];
        int64_t shape[2][NPU_MAX_RANK];
        assert_int_equal(shape_infer(g, &g->nodes[0], rank, shape, &d), ST_BAD_INPUT);
        assert_int_equal(d.errors, 1);
        char buf[2048];
        diag_format(&d.items[0], buf, sizeof buf);
        if (!strstr(buf, c->want) || !strstr(buf, "<test>") || !strstr(buf, "node 'n0'"))
            fail_msg("case %zu (%s): got '%s', want '%s'", i, c->aten, buf, c->want);
        diag_clear(&d);
        assert_int_equal(shape_check_graph(g, &d), ST_BAD_INPUT);
        assert_true(d.errors >= 1);
        diag_free(&d);
        graph_free(g);
    }
}

/* clang-format off */
static const BadCase bad_dtypes[] = {
    {"aten.embedding.default", NULL, 2, {F(2, 10, 4), F(1, 3)}, 1, {F(2, 3, 4)}, "indices must be an integer"},
    {"aten.embedding.default", NULL, 2, {F(2, 10, 4), B(1, 3)}, 1, {F(2, 3, 4)}, "indices must be an integer"},
    {"aten.index_copy.default", "{'dim':0}", 3, {F(1, 4), F(1, 2), F(1, 2)}, 1, {F(1, 4)}, "indices must be an integer"},
    {"aten.index_copy.default", "{'dim':0}", 3, {F(1, 4), L(1, 2), H(1, 2)}, 1, {F(1, 4)}, "same dtype"},
    {"aten.where.self", NULL, 3, {F(1, 3), F(1, 3), F(1, 3)}, 1, {F(1, 3)}, "condition must be a bool"},
    {"aten.masked_fill.Scalar", "{'value':0}", 2, {F(1, 3), L(1, 3)}, 1, {F(1, 3)}, "mask must be a bool"},
    {"aten.eq.Scalar", "{'other':0}", 1, {F(1, 3)}, 1, {F(1, 3)}, "declared dtype float32 but eq gives bool"},
    {"aten.logical_and.default", NULL, 2, {B(1, 3), B(1, 3)}, 1, {L(1, 3)}, "declared dtype int64 but logical_and gives bool"},
    {"aten.relu.default", NULL, 1, {L(1, 3)}, 1, {L(1, 3)}, "takes floating-point tensors, input 0 is int64"},
    {"aten.conv2d.default", NULL, 2, {L(4, 1, 3, 8, 8), F(4, 16, 3, 3, 3)}, 1, {F(4, 1, 16, 6, 6)}, "floating-point"},
    {"aten.to.dtype", "{'dtype':'torch.float16'}", 1, {F(1, 3)}, 1, {F(1, 3)}, "declared dtype float32 but to gives float16"},
    {"aten.type_as.default", NULL, 2, {F(1, 3), L(1, 2)}, 1, {F(1, 3)}, "declared dtype float32 but type_as gives int64"},
    {"aten.mul.Tensor", "{'other':0.5}", 1, {L(1, 3)}, 1, {L(1, 3)}, "floating-point tensor"},
    {"aten.div.Tensor", NULL, 2, {L(1, 3), L(1, 3)}, 1, {L(1, 3)}, "floating-point tensor"},
    {"aten.sum.default", NULL, 1, {B(1, 3)}, 1, {B0}, "declared dtype bool but sum gives int64"},
    {"aten.arange.default", "{'end':4}", 0, {NONE}, 1, {F(1, 4)}, "but arange gives int64"},
    {"aten.bitwise_and.Tensor", NULL, 2, {F(1, 3), F(1, 3)}, 1, {F(1, 3)}, "integer or bool"},
    {"aten._assert_tensor_metadata.default", "{'dtype':'torch.int64'}", 1, {F(1, 3)}, 0, {NONE}, "asserts dtype int64"},
};
/* clang-format on */

static void test_bad_dtypes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_dtypes / sizeof bad_dtypes[0]; i++) {
        const BadCase *c = &bad_dtypes[i];
        Graph *g = build(c->aten, c->nin, c->in, c->nout, c->out, c->attrs);
        DiagList d = {0};
        assert_int_equal(shape_check_graph(g, &d), ST_BAD_INPUT);
        char buf[2048];
        bool found = false;
        for (int k = 0; k < d.count && !found; k++) {
            diag_format(&d.items[k], buf, sizeof buf);
            found = strstr(buf, c->want) && strstr(buf, "node 'n0'") && strstr(buf, "tensor '");
        }
        if (!found) {
            print_diags(&d);
            fail_msg("case %zu (%s): no diagnostic with '%s'", i, c->aten, c->want);
        }
        diag_free(&d);
        graph_free(g);
    }
}

static void test_fixtures_clean(void **state)
{
    (void)state;
    static const char *paths[] = {
        "tests/models/mlp/model.json",
        "tests/models/convnet/model.json",
        "tests/models/resnet18/model.json",
        "tests/models/resnet50/model.json",
        "tests/models/qwen2_tiny/prefill.json",
        "tests/models/qwen2_tiny/decode.json",
        "tests/models/qwen2_5_1_5b/prefill.json",
        "tests/models/qwen2_5_1_5b/decode.json",
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        Graph *g = NULL;
        DiagList d = {0};
        assert_int_equal(ir_read_file(paths[i], &g, &d), ST_OK);
        Status st = shape_check_graph(g, &d);
        if (st != ST_OK || d.count) {
            print_diags(&d);
            fail_msg("%s: %d diagnostics", paths[i], d.count);
        }
        graph_free(g);
        diag_free(&d);
    }
}

/* Every mismatch in a graph is reported (not only the first); dead nodes are skipped. */
static void test_reports_all(void **state)
{
    (void)state;
    Graph *g = NULL;
    DiagList d = {0};
    assert_int_equal(ir_read_file("tests/models/mlp/model.json", &g, &d), ST_OK);
    int first = graph_find_node(g, "linear"), last = graph_find_node(g, "linear_2");
    assert_true(first >= 0 && last >= 0);
    g->tensors[g->nodes[last].out[0]].shape[1] = 11; /* [4,10] declared [4,11] */
    g->tensors[g->nodes[first].out[0]].shape[0] = 5; /* [4,128] declared [5,128] */
    assert_int_equal(shape_check_graph(g, &d), ST_BAD_INPUT);
    char buf[2048];
    bool saw_first = false, saw_last = false;
    for (int k = 0; k < d.count; k++) {
        diag_format(&d.items[k], buf, sizeof buf);
        assert_non_null(strstr(buf, "tests/models/mlp/model.json"));
        saw_first |= strstr(buf, "node 'linear'") &&
                     strstr(buf, "declared shape [5,128] but linear gives [4,128]");
        saw_last |= strstr(buf, "node 'linear_2'") &&
                    strstr(buf, "declared shape [4,11] but linear gives [4,10]");
    }
    if (!saw_first || !saw_last) print_diags(&d);
    assert_true(saw_first && saw_last);
    assert_true(d.errors >= 3); /* relu consumes the [5,128] tensor and disagrees too */
    diag_clear(&d);
    for (int i = 0; i < g->nnodes; i++)
        g->nodes[i].dead = true;
    assert_int_equal(shape_check_graph(g, &d), ST_OK);
    assert_int_equal(d.count, 0);
    graph_free(g);
    diag_free(&d);
}

/* split: one output per chunk, equal chunks with a shorter last one, or the listed sizes. */
static void test_split_chunks(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof multi / sizeof multi[0]; i++) {
        Graph *g =
            build(multi[i].aten, 1, &multi[i].in, multi[i].nout, multi[i].out, multi[i].attrs);
        DiagList d = {0};
        int rank[4];
        int64_t shape[4][NPU_MAX_RANK];
        if (shape_infer(g, &g->nodes[0], rank, shape, &d) != ST_OK) {
            print_diags(&d);
            fail_msg("case %zu: shape_infer failed", i);
        }
        for (int k = 0; k < multi[i].nout; k++) {
            assert_int_equal(rank[k], multi[i].out[k].rank);
            for (int j = 0; j < rank[k]; j++)
                assert_int_equal(shape[k][j], multi[i].out[k].shape[j]);
        }
        assert_int_equal(shape_check_graph(g, &d), ST_OK);
        diag_free(&d);
        graph_free(g);
    }
}

TU_MAIN(test_every_op_covered, test_good_cases, test_wrong_declared_shape, test_bad_attrs,
        test_bad_dtypes, test_fixtures_clean, test_reports_all, test_split_chunks)
