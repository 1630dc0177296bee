/* Data movement through one generic strided gather (shaders/gather.glsl): the stems copy
 * (identity, dropout, getitem and reshape-likes the views pass did not alias), transpose
 * (t, permute, transpose), expand, slice (slice, select, and each chunk of a split), depad, cast
 * (TO_DTYPE; int to float runs shaders/cast.comp, float to float is a copy: every float has the
 * compute dtype's storage), and pack (a graph input uploaded in its host form, f32 dense, to its
 * device form: shaders/pack.comp, an f32 input binding).
 *
 * Output element i (row-major over the logical out shape) goes to its physical offset (out
 * strides); its input element is found by unravelling i over a "walk" shape with input strides,
 * plus an element offset. Reshape-likes and depad walk the input's own logical shape with its
 * physical strides (same element order, any layout); transpose/expand/slice walk the out shape
 * with per-out-dim input strides (permuted, 0 where broadcast, times the step; the slice start
 * is the offset). Push GatherPush (shaders/abi.h GATHER_PUSH). pad and roll walk the output with a
 * per-dim window into the input (lower_window; WindowPush, shaders/abi.h WINDOW_PUSH). */
#include "compiler/lower/kernels.h"
#include "compiler/shape/shape.h"

#include <string.h>

#define COPY_WG 256

typedef struct Walk {
    int64_t shape[KERNEL_DIMS], stride[KERNEL_DIMS];
} Walk;

/* A walk over rank r dims, right-aligned into 6 (leading dims of size 1, stride 0). */
static Status walk_set(const KernelCtx *c, Walk *w, int r, const int64_t *shape,
                       const int64_t *stride)
{
    if (r > KERNEL_DIMS) return kc_error(c, "data movement of rank %d (the kernels take 6)", r);
    for (int i = 0; i < KERNEL_DIMS; i++) {
        w->shape[i] = 1;
        w->stride[i] = 0;
    }
    for (int i = 0; i < r; i++) {
        w->shape[KERNEL_DIMS - r + i] = shape[i];
        w->stride[KERNEL_DIMS - r + i] = stride[i];
    }
    return ST_OK;
}

/* The push block (its words checked), the workgroup and the grid of n elements, one each. */
static Status push_elements(const KernelCtx *c, PlanKernel *k, const KcWords *w, const void *push,
                            size_t size, int64_t n)
{
    Status st = kc_words_ok(c, k, w);
    if (st == ST_OK) st = kc_push_block(c, k, push, size);
    if (st == ST_OK) st = kc_spec(c, k, COPY_WG);
    kc_grid(k, n, COPY_WG);
    return st;
}

static Status push_walk(const KernelCtx *c, PlanKernel *k, int64_t in_off, const Walk *in)
{
    const PlanTensor *out = kc_out(k, c->p);
    int64_t ost[NPU_MAX_RANK];
    kc_strides(out, ost);
    Walk ow;
    Status st = walk_set(c, &ow, out->rank, out->shape, ost);
    if (st != ST_OK) return st;
    int64_t n = kc_numel(out);
    KcWords w = {0};
    GatherPush pg = {.n = kc_word(&w, n), .in_off = kc_word(&w, in_off)};
    KC_WORDS(&w, pg.oshape, ow.shape);
    KC_WORDS(&w, pg.ostride, ow.stride);
    KC_WORDS(&w, pg.ishape, in->shape);
    KC_WORDS(&w, pg.istride, in->stride);
    return push_elements(c, k, &w, &pg, sizeof pg, n);
}

/* The input's own element order (reshape-likes, depad, cast). */
static Status walk_input(const KernelCtx *c, const PlanTensor *in, const PlanTensor *out, Walk *w)
{
    if (kc_numel(in) != kc_numel(out))
        return kc_error(c, "%s: input has %lld elements, output %lld", op_short_name(c->anchor->op),
                        (long long)kc_numel(in), (long long)kc_numel(out));
    int64_t st[NPU_MAX_RANK];
    kc_strides(in, st);
    return walk_set(c, w, in->rank, in->shape, st);
}

/* The out shape with per-out-dim input strides: transpose, expand, slice/select. */
static Status walk_strided(const KernelCtx *c, const PlanTensor *in, const PlanTensor *out, Walk *w,
                           int64_t *in_off)
{
    const Node *n = c->anchor;
    int r = in->rank, ro = out->rank;
    int64_t ist[NPU_MAX_RANK], os[NPU_MAX_RANK] = {0};
    kc_strides(in, ist);
    *in_off = 0;
    switch (n->op) {
    case OP_T:
    case OP_TRANSPOSE:
    case OP_PERMUTE: {
        int perm[NPU_MAX_RANK];
        if (!node_perm(n, r, perm))
            return kc_error(c, "%s dims are not a permutation of rank %d", op_short_name(n->op), r);
        if (ro != r) return kc_error(c, "transpose changes the rank");
        for (int i = 0; i < r; i++) {
            if (out->shape[i] != in->shape[perm[i]])
                return kc_error(c, "transpose: output dim %d does not match the input", i);
            os[i] = in->shape[perm[i]] == 1 ? 0 : ist[perm[i]];
        }
        break;
    }
    case OP_EXPAND:
        if (r > ro) return kc_error(c, "expand to rank %d from rank %d", ro, r);
        for (int i = 0; i < ro; i++) {
            int d = i - (ro - r);
            if (d < 0 || in->shape[d] == 1) continue; /* broadcast: stride 0 */
            if (in->shape[d] != out->shape[i])
                return kc_error(c, "expand: dim of size %lld cannot become %lld",
                                (long long)in->shape[d], (long long)out->shape[i]);
            os[i] = ist[d];
        }
        break;
    case OP_SLICE:
    case OP_SELECT: {
        /* as runtime/cpu/cpu_data.c: the output shape gives the length, start and step the rest */
        int dim = norm_dim(attr_int(n, "dim", 0), r);
        if (dim < 0) return kc_error(c, "dim out of range for rank %d", r);
        int64_t size = in->shape[dim], start, step = 1;
        if (n->op == OP_SELECT) {
            start = attr_int(n, "index", 0);
            if (start < 0) start += size;
            if (start < 0 || start >= size)
                return kc_error(c, "select index %lld out of range for size %lld",
                                (long long)attr_int(n, "index", 0), (long long)size);
        } else {
            start = attr_present(n, "start") ? attr_int(n, "start", 0) : 0;
            step = attr_present(n, "step") ? attr_int(n, "step", 1) : 1;
            if (step <= 0) return kc_error(c, "slice step %lld must be positive", (long long)step);
            if (start < 0) start += size;
            if (start < 0) start = 0;
            if (start > size) start = size;
        }
        int want = n->op == OP_SELECT ? r - 1 : r;
        if (ro != want) return kc_error(c, "slice output has rank %d, expected %d", ro, want);
        for (int i = 0, o = 0; i < r; i++) {
            if (n->op == OP_SELECT && i == dim) continue;
            int64_t len = out->shape[o];
            if (i == dim ? start + (len - 1) * step >= size && len > 0 : len != in->shape[i])
                return kc_error(c, "slice output dim %d (%lld) does not fit the input", o,
                                (long long)len);
            os[o++] = i == dim ? ist[i] * step : ist[i];
        }
        if (kc_numel(out) > 0) *in_off = start * ist[dim];
        break;
    }
    case OP_SPLIT: {
        /* the chunk this kernel writes: its output's position among the node's outputs */
        int dim = norm_dim(attr_int(n, "dim", 0), r);
        if (dim < 0) return kc_error(c, "dim out of range for rank %d", r);
        int64_t sizes[64], start = 0;
        const char *why = NULL;
        int cnt = shape_split_sizes(n, in->shape[dim], sizes, 64, &why);
        if (cnt < 0) return kc_error(c, "%s", why);
        int which = -1;
        for (int o = 0; o < n->nout && o < cnt && which < 0; o++) {
            if (strcmp(c->g->tensors[n->out[o]].name, out->name) == 0)
                which = o;
            else
                start += sizes[o];
        }
        if (which < 0)
            return kc_error(c, "split kernel writes %s, no chunk of the node", out->name);
        if (ro != r) return kc_error(c, "split output has rank %d, expected %d", ro, r);
        for (int i = 0; i < r; i++) {
            if (out->shape[i] != (i == dim ? sizes[which] : in->shape[i]))
                return kc_error(c, "split output dim %d (%lld) does not fit the input", i,
                                (long long)out->shape[i]);
            os[i] = ist[i];
        }
        if (kc_numel(out) > 0) *in_off = start * ist[dim];
        break;
    }
    default:
        return kc_error(c, "%s is not a strided data-movement op", op_short_name(n->op));
    }
    return walk_set(c, w, ro, out->shape, os);
}

/* pad's mode by name (the kernel row's N, shaders/abi.h WINDOW_PUSH); -1 for an unknown name. */
static int pad_mode(const Node *n)
{
    static const char *const names[] = {"constant", "reflect", "replicate", "circular"};
    const char *m = attr_str(n, "mode", "constant");
    for (int i = 0; i < 4; i++)
        if (strcmp(m, names[i]) == 0) return i;
    return -1;
}

/* The fill word of a constant pad: float bits, or an int32 for integer storage. */
static Status window_fill(const KernelCtx *c, const PlanTensor *out, uint32_t *fill)
{
    const Attr *va = node_attr(c->anchor, "value");
    double fv = attr_float(c->anchor, "value", 0.0);
    if (out->storage == DT_I32) {
        int64_t iv = va && va->kind == ATTR_INT ? va->i : (int64_t)fv;
        if (iv < INT32_MIN || iv > INT32_MAX)
            return kc_error(c, "pad value %lld does not fit int32 storage", (long long)iv);
        *fill = (uint32_t)(int32_t)iv;
        return ST_OK;
    }
    float f = (float)fv;
    memcpy(fill, &f, sizeof f);
    return ST_OK;
}

/* pad and roll (the pad rows, shaders/gather.glsl WINDOW_MODE): the output's walk, per dim the
 * input coordinate the output's minus lo (pad: the leading amount; roll: the shift, wrapped),
 * out of range resolved by the mode. A roll without dims rotates the flattened tensor: one dim of
 * every element (both tensors dense: support.c keeps a padded one off this kernel). */
static Status lower_window(const KernelCtx *c, PlanKernel *k)
{
    const Node *n = c->anchor;
    if (k->nin != 1 || k->nargs != 2) return kc_error(c, "%s kernel needs one input", k->shader);
    const PlanTensor *in = kc_arg(k, c->p, 0), *out = kc_out(k, c->p);
    if (in->storage != out->storage || in->rank != out->rank)
        return kc_error(c, "%s: input and output differ in storage or rank", op_short_name(n->op));
    int r = in->rank, mode = 3;
    int64_t lo[NPU_MAX_RANK] = {0}, ishape[NPU_MAX_RANK], ist[NPU_MAX_RANK], ost[NPU_MAX_RANK],
            oshape[NPU_MAX_RANK];
    memcpy(ishape, in->shape, sizeof ishape);
    memcpy(oshape, out->shape, sizeof oshape);
    kc_strides(in, ist);
    kc_strides(out, ost);
    uint32_t fill = 0;
    Status st = ST_OK;
    if (n->op == OP_ROLL) {
        int64_t sh[NPU_MAX_RANK], d[NPU_MAX_RANK];
        int ns = attr_ints(n, "shifts", sh, NPU_MAX_RANK);
        int nd = attr_present(n, "dims") ? attr_ints(n, "dims", d, NPU_MAX_RANK) : 0;
        if (ns < 1 || nd < 0 || (nd > 0 && nd != ns))
            return kc_error(c, "roll: shifts and dims do not align");
        if (nd == 0) { /* the flattened tensor */
            r = 1;
            ishape[0] = oshape[0] = kc_numel(in);
            ist[0] = ost[0] = 1;
            lo[0] = sh[0];
        }
        for (int i = 0; i < nd; i++) {
            int a = norm_dim(d[i], r);
            if (a < 0) return kc_error(c, "roll: dim %lld out of range", (long long)d[i]);
            lo[a] += sh[i];
        }
        for (int a = 0; a < r; a++) /* into [0, size): the shader wraps one period */
            lo[a] = ishape[a] > 0 ? ((lo[a] % ishape[a]) + ishape[a]) % ishape[a] : 0;
    } else {
        int64_t p[2 * NPU_MAX_RANK];
        int np = attr_ints(n, "pad", p, 2 * NPU_MAX_RANK);
        mode = pad_mode(n);
        if (np < 0 || np % 2 || np / 2 > r || mode < 0)
            return kc_error(c, "pad: bad `pad` or `mode`");
        for (int j = 0; j < np / 2; j++)
            lo[r - 1 - j] = p[2 * j];
        if (mode == 0) st = window_fill(c, out, &fill);
    }
    if (st == ST_OK) st = kc_pick(c, k, (KernelKey){.kind = KK_pad, .n = mode});
    if (st != ST_OK) return st;
    Walk ow, iw;
    st = walk_set(c, &ow, r, oshape, ost);
    if (st == ST_OK) st = walk_set(c, &iw, r, ishape, ist);
    if (st != ST_OK) return st;
    int64_t lw[KERNEL_DIMS] = {0}; /* right-aligned as the walks */
    for (int i = 0; i < r; i++)
        lw[KERNEL_DIMS - r + i] = lo[i];
    int64_t total = kc_numel(out);
    KcWords w = {0};
    WindowPush pw = {.n = kc_word(&w, total), .fill = fill};
    KC_WORDS(&w, pw.oshape, ow.shape);
    KC_WORDS(&w, pw.ostride, ow.stride);
    KC_WORDS(&w, pw.ishape, iw.shape);
    KC_WORDS(&w, pw.istride, iw.stride);
    KC_WORDS(&w, pw.lo, lw);
    return push_elements(c, k, &w, &pw, sizeof pw, total);
}

/* getitem binds every output of its producer: keep only the picked one, so the kernel is a
 * plain one-input copy (binding 0 = x, 1 = y). */
static Status pick_getitem(const KernelCtx *c, PlanKernel *k)
{
    int64_t i = attr_int(c->anchor, "index", 0);
    if (i < 0) i += k->nin;
    if (i < 0 || i >= k->nin)
        return kc_error(c, "getitem index %lld of %d inputs",
                        (long long)attr_int(c->anchor, "index", 0), k->nin);
    int out = k->args[k->nargs - 1];
    k->args[0] = k->args[i];
    k->args[1] = out;
    k->nin = 1;
    k->nargs = 2;
    return ST_OK;
}

Status lower_copy(const KernelCtx *c, PlanKernel *k)
{
    Status st = ST_OK;
    if (c->anchor->op == OP_PAD || c->anchor->op == OP_ROLL) return lower_window(c, k);
    if (c->anchor->op == OP_GETITEM && k->nin > 1) st = pick_getitem(c, k);
    if (st != ST_OK) return st;
    if (k->nin != 1 || k->nargs != 2) return kc_error(c, "%s kernel needs one input", k->shader);
    const PlanTensor *in = kc_arg(k, c->p, 0), *out = kc_out(k, c->p);
    bool raw = in->storage == out->storage;
    Walk w;
    int64_t off = 0;
    switch (c->anchor->op) {
    case OP_TO_DTYPE:
        /* float to float: one storage dtype on the device, so a raw copy */
        if (raw)
            st = kc_pick(c, k, (KernelKey){.kind = KK_copy});
        else if (in->storage == DT_I32 && dtype_is_float(out->storage))
            st = kc_pick(c, k, (KernelKey){.kind = KK_cast});
        else
            return kc_error(c, "cast from %s to %s storage has no NPU kernel",
                            dtype_name(in->storage), dtype_name(out->storage));
        raw = true;
        if (st == ST_OK) st = walk_input(c, in, out, &w);
        break;
    case OP_PACK:
        /* a graph input in its host form (pass_pack.c): f32, dense, to the output's storage
         * and layout (shaders/pack.comp) */
        if (in->storage != DT_F32 || !dtype_is_float(out->storage))
            return kc_error(c, "pack: %s storage to %s storage has no NPU kernel",
                            dtype_name(in->storage), dtype_name(out->storage));
        raw = true;
        st = walk_input(c, in, out, &w);
        break;
    default:
        /* the input's element order: a cat with one input left (lower_cat.c), a getitem, depad */
        if (op_keeps_order(c->anchor->op) || c->anchor->op == OP_CAT ||
            c->anchor->op == OP_GETITEM || c->anchor->op == OP_DEPAD)
            st = walk_input(c, in, out, &w);
        else
            st = walk_strided(c, in, out, &w, &off);
        break;
    }
    if (st == ST_OK && !raw)
        st = kc_error(c, "%s moves %s storage into %s storage", k->shader, dtype_name(in->storage),
                      dtype_name(out->storage));
    if (st == ST_OK) st = push_walk(c, k, off, &w);
    return st;
}
