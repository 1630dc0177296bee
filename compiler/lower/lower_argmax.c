/* argmax over the last dim (the partition sends only that, or a tensor of rank <= 1, to the NPU):
 * the int32 index of each row's first maximum (shaders/argmax.glsl). NaN is the maximum unless
 * the node has `skip_nan` (then NaN is ignored and a row of nothing else gives -1).
 *
 * A row is cut into nsplit chunks so a short grid still spreads over the GPU (a decode step has
 * one row of 151936 logits): pass 1 (`argmax_f32|f16|bf16`, by the input's storage: the module
 * variant follows the int output, so the input's storage is in the stem) gives each segment =
 * (row, chunk) TPR lanes that scan it with a stride and combine their (value, index) pairs in
 * shared memory; with one chunk it writes the index, else a pair per segment to the f32 scratch
 * `OUT.partials` [rows, nsplit, 2] (value bits, index), and pass 2 (`argmax_red`, kc_append)
 * combines a row's nsplit pairs the same way. "First maximum" is a total order on the pairs
 * (larger value, then smaller index; NaN above everything), so the result does not depend on the
 * order of combination: deterministic on any device.
 * Bindings: pass 1 {x, partials, y} (partials is y again when not split), pass 2 {partials, y}.
 * Push ArgmaxPush (shaders/abi.h ARGMAX_PUSH), the same for both passes; spec {256, TPR}. */
#include "compiler/lower/kernels.h"

#define AM_WG 256
/* Splits: on a GPU about 2 workgroups per SM of the reference GPU and at least 2048 elements (8
 * per lane) per chunk: 75 chunks for 151936 logits. On a CPU device (lavapipe) chunks of at
 * least 16384 elements: a workgroup is one thread's loop there. At most AM_WG chunks, so pass 2
 * gives each of a row's chunks one lane. */
#define AM_TARGET (2 * TIER_NV_COOPMAT_SMS)
#define AM_CHUNK_GPU 2048
#define AM_CHUNK_CPU 16384

Status lower_argmax(const KernelCtx *c, PlanKernel *k)
{
    const Node *n = c->anchor;
    if (n->op != OP_ARGMAX)
        return kc_error(c, "%s is not an argmax kernel op", op_short_name(n->op));
    if (k->nin != 1) return kc_error(c, "argmax kernel needs one input");
    const PlanTensor *x = kc_arg(k, c->p, 0), *y = kc_out(k, c->p);
    /* pass 1 by the input's storage (the module variant follows the int32 output) */
    const KernelRow *pass1 = kernel_pick((KernelKey){.kind = KK_argmax, .n = (int)x->storage});
    if (!pass1 || y->storage != DT_I32)
        return kc_error(c, "argmax kernel: float input and int32 output storage expected");
    int r = x->rank;
    int64_t dim = r - 1;
    if (r > 1 &&
        (!attr_present(n, "dim") || attr_ints(n, "dim", &dim, 1) != 1 || norm_dim(dim, r) != r - 1))
        return kc_error(c, "argmax kernel reduces the last dim only");
    if (r - 1 > ROW_OUTER) return kc_error(c, "argmax kernel: rank %d above 6", r);
    if (y->rank != r && y->rank != r - 1 && !(r == 0 && y->rank == 0))
        return kc_error(c, "argmax kernel: output rank %d for input rank %d", y->rank, r);
    KcRows w = kc_last_dim_rows(x, y);
    int64_t len = w.len, rows = w.rows;
    if (len < 1) return kc_error(c, "argmax kernel: empty rows");
    int64_t min_chunk = c->cpu_device ? AM_CHUNK_CPU : AM_CHUNK_GPU;
    int64_t nsplit = rows >= AM_TARGET ? 1 : (AM_TARGET + rows - 1) / rows;
    int64_t most = (len + min_chunk - 1) / min_chunk;
    if (nsplit > most) nsplit = most;
    if (nsplit > AM_WG) nsplit = AM_WG;
    if (nsplit < 1) nsplit = 1;
    int64_t chunk = (len + nsplit - 1) / nsplit;
    nsplit = (len + chunk - 1) / chunk;
    KcWords ws = {0};
    ArgmaxPush pa = {.rows = kc_word(&ws, rows),
                     .len = kc_word(&ws, len),
                     .lstride = kc_word(&ws, w.step),
                     .nsplit = kc_word(&ws, nsplit),
                     .chunk = kc_word(&ws, chunk),
                     .skip_nan = attr_bool(n, "skip_nan", false)};
    KC_WORDS(&ws, pa.oshape, w.shape);
    KC_WORDS(&ws, pa.xs, w.xs);
    KC_WORDS(&ws, pa.ys, w.ys);
    int out = k->args[k->nargs - 1], part = out;
    if (nsplit > 1) {
        int64_t pshape[3] = {rows, nsplit, 2};
        part = kc_scratch(c, k, ".partials", 3, pshape, DT_F32);
        if (part < 0) return ST_BAD_INPUT;
    }
    int args[3] = {k->args[0], part, out};
    Status st = kc_set_args(c, k, args, 1, 3);
    if (st != ST_OK) return st;
    k->shader = pass1->stem;
    uint32_t tpr = kc_lanes_for(chunk, AM_WG);
    st = kc_words_ok(c, k, &ws);
    if (st == ST_OK) st = kc_push_block(c, k, &pa, sizeof pa);
    if (st == ST_OK) st = kc_spec(c, k, AM_WG);
    if (st == ST_OK) st = kc_spec(c, k, tpr);
    kc_grid(k, rows * nsplit, AM_WG / tpr);
    if (st != ST_OK || nsplit == 1) return st;
    int rargs[2] = {part, out};
    PlanKernel *rk = kc_append(c, k, (KernelKey){.kind = KK_argmax, .flags = KF_RED}, rargs, 1, 2);
    if (!rk) return ST_BAD_INPUT;
    uint32_t tpr2 = kc_lanes_for(nsplit, AM_WG);
    st = kc_push_block(c, rk, &pa, sizeof pa);
    if (st == ST_OK) st = kc_spec(c, rk, AM_WG);
    if (st == ST_OK) st = kc_spec(c, rk, tpr2);
    kc_grid(rk, rows, AM_WG / tpr2);
    return st;
}
