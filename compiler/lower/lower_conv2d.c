/* conv2d family: a CONV2D node or a fused conv(_add)(_ACT) instance (ACT one of compiler/act.c's
 * table), or a conv_scale instance, whose x * s the kernel computes as it loads x (KF_SCALE: the
 * bindings x, w, s, then the epilogue's). Picks
 * the kernel (the implicit GEMM of shaders/conv2d_body.glsl, its tensor-core version on the
 * nv-coopmat tier where measured faster, the direct kernel on a CPU device, the depthwise kernel,
 * or a matrix-vector product for a pointwise conv over a 1x1 map), its tiles and K
 * split (kc_gemm_tile; a split appends the reduce pass), the key by which of bias and residual
 * are bound (KF_BIAS, KF_RES: the runtime binds exactly the kernel's tensors), and fills the push
 * block (shaders/abi.h CONV2D_PUSH, ConvPush). Attribute semantics follow runtime/cpu/cpu_conv.c
 * (ATen). */
#include "compiler/act.h"
#include "compiler/fusion.h"
#include "compiler/lower/kernels.h"

#include "common/half.h"

#include <string.h>

enum { RED_WG = 256 };

/* The direct kernel (shaders/conv2d_direct.glsl), the portable choice on a CPU device: each
 * workgroup computes TM output channels x WG * TP output pixels. On lavapipe a larger register
 * tile wins (each per-lane input load feeds TM FMAs, each uniform weight load, about 60% of the
 * time, feeds TP): 8 x 1 and 8 x 2 ran 2-3x slower than 16 x 4 on resnet18; 8 x 8 and 16 x 8
 * were within the (large, shared-machine) noise of 16 x 4. */
enum { DIRECT_WG = 64, TM_MAX = 16, TP_MAX = 4 };

typedef struct ConvGeom {
    int64_t n, c, h, w, cout, oh, ow, groups;
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    bool same; /* padding='same': output = input size, the odd extra pad on the right */
} ConvGeom;

/* Stride, dilation, groups and padding (ints, "valid" or "same") as cpu_conv2d reads them. */
static Status conv_attrs(const KernelCtx *c, const Node *conv, ConvGeom *g)
{
    int64_t v[2];
    g->groups = attr_int(conv, "groups", 1);
    if (!attr_ints_n(conv, "stride", v, 2, 1) || v[0] < 1 || v[1] < 1)
        return kc_error(c, "conv2d: stride must be one or two positive ints");
    g->sh = v[0], g->sw = v[1];
    if (!attr_ints_n(conv, "dilation", v, 2, 1) || v[0] < 1 || v[1] < 1)
        return kc_error(c, "conv2d: dilation must be one or two positive ints");
    g->dh = v[0], g->dw = v[1];
    const Attr *a = node_attr(conv, "padding");
    if (a && a->kind == ATTR_STR) {
        if (strcmp(a->s, "valid") == 0) {
            g->ph = g->pw = 0;
        } else if (strcmp(a->s, "same") == 0) {
            g->ph = g->dh * (g->kh - 1) / 2; /* PyTorch puts the odd extra pad on the right */
            g->same = true;
            g->pw = g->dw * (g->kw - 1) / 2;
        } else {
            return kc_error(c, "conv2d: padding must be ints, 'same' or 'valid'");
        }
    } else {
        if (!attr_ints_n(conv, "padding", v, 2, 0) || v[0] < 0 || v[1] < 0)
            return kc_error(c, "conv2d: padding must be one or two non-negative ints");
        g->ph = v[0], g->pw = v[1];
    }
    if (g->groups < 1 || g->c % g->groups || g->cout % g->groups)
        return kc_error(c, "conv2d: groups=%lld must divide C=%lld and Cout=%lld",
                        (long long)g->groups, (long long)g->c, (long long)g->cout);
    return ST_OK;
}

/* The epilogue's activation (shaders/activation.glsl npu_activate): the code (abi.h ACT_*) of the
 * fused member the table of compiler/act.c names, ACT_CLAMP's lo and hi as the two halves of one
 * word (the fuse pattern admits only half-exact bounds). */
static Status conv_act(const KernelCtx *c, uint32_t *code, uint32_t *lim)
{
    double lo = 0, hi = 0;
    *code = ACT_NONE;
    for (int i = 0; c->fusion && i < c->fusion->nnodes && *code == ACT_NONE; i++)
        *code = epi_act_code(&c->g->nodes[c->fusion->nodes[i]], &lo, &hi);
    uint16_t l = f32_to_f16((float)lo), h = f32_to_f16((float)hi);
    if (f16_to_f32(l) != lo || f16_to_f32(h) != hi)
        return kc_error(c, "conv2d kernel: hardtanh bounds %g, %g are not exact in half precision",
                        lo, hi);
    *lim = (uint32_t)h << 16 | l;
    return ST_OK;
}

/* The depthwise kernel (shaders/conv2d_dw.glsl): one input channel per group, any channel
 * multiplier, where a row of TX = 1 output's input fits DW_SEG_MAX registers (conv.dw=0: the
 * other kernels). Workgroups of DW_WG, spec {WG, TX, KW, SW, DW}. */
enum { DW_WG = 64, DW_TX_MIN = 4, DW_TX_MAX = 8, DW_SEG_MAX = 32 };

static int64_t dw_seg(const ConvGeom *g, int64_t tx)
{
    return (tx - 1) * g->sw + (g->kw - 1) * g->dw + 1;
}

static bool dw_applies(const KernelCtx *c, const ConvGeom *g)
{
    return g->groups == g->c && kc_tune(c, TUNE_CONV_DW) && dw_seg(g, 1) <= DW_SEG_MAX;
}

/* Outputs per invocation: conv.dw_tx, else the count in DW_TX_MIN..DW_TX_MAX (the row's width when
 * narrower) that leaves the fewest idle columns in a row's last tile, the larger on a tie (56 ->
 * 8, 28 and 14 -> 7, 10 -> 5); then fewer while their input passes DW_SEG_MAX registers. */
static int64_t dw_tx(const KernelCtx *c, const ConvGeom *g)
{
    int64_t tx = kc_tune(c, TUNE_CONV_DW_TX);
    if (tx == TUNE_AUTO) {
        tx = g->ow <= DW_TX_MAX ? g->ow : DW_TX_MAX;
        for (int64_t t = DW_TX_MAX - 1; t >= DW_TX_MIN && g->ow > DW_TX_MAX; t--)
            if ((g->ow + t - 1) / t * t < (g->ow + tx - 1) / tx * tx) tx = t;
    }
    tx = tx < g->ow ? tx : g->ow;
    while (tx > 1 && dw_seg(g, tx) > DW_SEG_MAX)
        tx--;
    return tx;
}

static Status lower_dw(const KernelCtx *c, PlanKernel *k, const ConvGeom *g, const ConvPush *cp,
                       unsigned epi)
{
    int64_t tx = dw_tx(c, g), wtiles = (g->ow + tx - 1) / tx;
    int64_t n = g->n * g->cout * g->oh * wtiles;
    if (n > UINT32_MAX) return kc_error(c, "conv2d kernel: more than 2^32 invocations");
    KcWords w = {0};
    DwPush pc = {
        .n = cp->n,
        .c = cp->c,
        .h = cp->h,
        .w = cp->w,
        .cout = cp->cout,
        .oh = cp->oh,
        .ow = cp->ow,
        .mult = kc_word(&w, g->cout / g->c),
        .kh = cp->kh,
        .sh = cp->sh,
        .dh = cp->dh,
        .ph = cp->ph,
        .pw = cp->pw,
        .xcp = cp->xcp,
        .ycp = cp->ycp,
        .rcp = cp->rcp,
        .rsrc = cp->rsrc,
        .act = cp->act,
        .act_lim = cp->act_lim,
        .wtiles = kc_word(&w, wtiles),
        .scn = cp->scn,
    };
    Status st = kc_words_ok(c, k, &w);
    if (st == ST_OK) st = kc_push_block(c, k, &pc, sizeof pc);
    uint32_t spec[] = {DW_WG, (uint32_t)tx, (uint32_t)g->kw, (uint32_t)g->sw, (uint32_t)g->dw};
    for (size_t i = 0; i < sizeof spec / sizeof spec[0] && st == ST_OK; i++)
        st = kc_spec(c, k, spec[i]);
    kc_grid(k, n, DW_WG);
    if (st != ST_OK) return st;
    return kc_pick(c, k, (KernelKey){.kind = KK_conv2d, .impl = KI_DW, .flags = epi});
}

/* A pointwise conv over a 1x1 map (squeeze-excite's two convs after the global pool): its im2col
 * is the input itself, so each image is one matrix-vector product over the weight read as
 * [cout, cin] (lower_conv_matvec), where the implicit GEMM would fill one row of its 16-64-row
 * tile and loop over K alone (conv.gemv=0 keeps the other kernels). Stride and dilation do not
 * matter on a 1x1 map; no residual (the product's epilogue has none for a padded output), no input
 * scale (the conv_scale pattern leaves such a conv alone). */
static bool matvec_applies(const KernelCtx *c, const ConvGeom *g, int rsrc, const PlanTensor *wt,
                           bool scaled)
{
    bool dense = true;
    for (int i = 0; i < wt->rank; i++)
        dense &= wt->pshape[i] == wt->shape[i];
    return kc_tune(c, TUNE_CONV_GEMV) && dense && rsrc == 0 && !scaled && g->groups == 1 &&
           g->kh == 1 && g->kw == 1 && g->ph == 0 && g->pw == 0 && g->h == 1 && g->w == 1;
}

/* conv.bm / conv.bn (the tuning table): the SIMT tile's rows (output channels) and columns
 * (pixels) in place of kc_gemm_tile's, the K split recomputed for the new tile count.
 * gemm_tile.glsl stages a step with BM * BN / 16 invocations (4 x 4 outputs each), AEL = 256 / BN
 * and BEL = 256 / BM elements per invocation: any power of two 16..128 fits, up to SIMT_TILE_MAX_WG
 * invocations; a larger pair keeps the automatic tile. */
enum { SIMT_TILE_MAX_WG = 512 };
static void simt_tile_knobs(const KernelCtx *c, KcTile *t, int64_t m, int64_t n, int64_t k,
                            int64_t batch, int64_t target)
{
    int64_t bm = kc_tune(c, TUNE_CONV_BM), bn = kc_tune(c, TUNE_CONV_BN);
    if (bm == TUNE_AUTO && bn == TUNE_AUTO) return;
    bm = bm == TUNE_AUTO ? t->bm : bm;
    bn = bn == TUNE_AUTO ? t->bn : bn;
    if (bm * bn / (t->tr * t->tc) > SIMT_TILE_MAX_WG) return;
    t->bm = bm;
    t->bn = bn;
    t->wg = bm * bn / (t->tr * t->tc);
    kc_gemm_split(t, m, n, k, batch, target);
}

Status lower_conv2d(const KernelCtx *c, PlanKernel *k)
{
    const Node *conv = kc_member(c, OP_CONV2D);
    if (!conv) return kc_error(c, "conv2d kernel without a conv2d node");
    const Node *add = kc_member(c, OP_ADD);
    uint32_t act = 0, act_lim = 0;
    Status ast = conv_act(c, &act, &act_lim);
    if (ast != ST_OK) return ast;
    /* conv_scale: the conv reads x * s, the product of the member multiply */
    const Node *mul = kc_member(c, OP_MUL);
    int xt = conv->in[0], sct = -1;
    if (mul && !fuse_scale_operands(c->g, mul, &xt, &sct, NULL))
        return kc_error(c, "conv2d kernel: the fused multiply is no scale per (image, channel)");
    /* the residual: the add's input that is not the conv output */
    int rt = -1, rsrc = 0;
    if (add) {
        int co = conv->out[0];
        rt = add->in[0] == co ? add->in[1] : add->in[0];
        if (add->nin != 2 || (add->in[0] != co && add->in[1] != co))
            return kc_error(c, "conv2d kernel: the fused add does not read the conv output");
        rsrc = rt == co   ? 3 /* conv(x) + conv(x) */
               : rt == xt ? 2 /* conv(x) + x: bound once */
                          : 1;
        if (rsrc != 1) rt = -1;
    }
    if (mul) { /* bind x, w, s, [bias], [res] in that order */
        int want[5] = {xt, conv->in[1], sct, conv->nin > 2 ? conv->in[2] : -1, rt}, args[6], n = 0;
        for (int i = 0; i < 5; i++) {
            int a = want[i] >= 0 ? kc_arg_of(c, k, want[i]) : -2;
            if (a == -1)
                return kc_error(c, "conv2d kernel: an input of the scaled conv is unbound");
            if (a >= 0) args[n++] = k->args[a];
        }
        args[n] = k->args[k->nargs - 1];
        if (n != k->nin) return kc_error(c, "conv2d kernel: unexpected inputs (%d bound)", k->nin);
        Status ost = kc_set_args(c, k, args, n, n + 1);
        if (ost != ST_OK) return ost;
    }
    int xi = kc_arg_of(c, k, xt), wi = kc_arg_of(c, k, conv->in[1]);
    int si = mul ? kc_arg_of(c, k, sct) : -1, b0 = 2 + (mul != NULL);
    int bi = conv->nin > 2 ? kc_arg_of(c, k, conv->in[2]) : -1;
    if (xi != 0 || wi != 1 || (mul && si != 2) || (conv->nin > 2 && bi != b0))
        return kc_error(c, "conv2d kernel: inputs are not x, weight(, scale)(, bias)");
    int ri = -1;
    if (rsrc == 1) {
        ri = kc_arg_of(c, k, rt);
        if (ri < 0) return kc_error(c, "conv2d kernel: residual tensor is not bound");
    }
    bool has_b = bi >= 0, has_r = ri >= 0;
    /* the key's bindings */
    unsigned epi = (has_b ? KF_BIAS : 0) | (has_r ? KF_RES : 0) | (mul ? KF_SCALE : 0);
    if (k->nin != b0 + has_b + has_r || (has_r && ri != b0 + has_b))
        return kc_error(c, "conv2d kernel: unexpected inputs (%d bound)", k->nin);

    const PlanTensor *x = kc_arg(k, c->p, 0), *wt = kc_arg(k, c->p, 1), *y = kc_out(k, c->p);
    const PlanTensor *r = has_r ? kc_arg(k, c->p, ri) : NULL;
    if ((x->rank != 3 && x->rank != 4) || y->rank != x->rank || wt->rank != 4)
        return kc_error(c, "conv2d kernel: x and y must be 3-D or 4-D, weight 4-D");
    int o = x->rank - 3;
    ConvGeom g = {
        .n = o ? x->shape[0] : 1,
        .c = x->shape[o],
        .h = x->shape[o + 1],
        .w = x->shape[o + 2],
        .cout = wt->shape[0],
        .kh = wt->shape[2],
        .kw = wt->shape[3],
        .oh = y->shape[o + 1],
        .ow = y->shape[o + 2],
    };
    Status st = conv_attrs(c, conv, &g);
    if (st != ST_OK) return st;
    if (wt->shape[1] != g.c / g.groups || y->shape[o] != g.cout || (o && y->shape[0] != g.n))
        return kc_error(c, "conv2d kernel: weight or output shape does not fit the input");
    int64_t eh = g.h + 2 * g.ph - g.dh * (g.kh - 1) - 1,
            ew = g.w + 2 * g.pw - g.dw * (g.kw - 1) - 1;
    if (g.same ? g.oh != g.h || g.ow != g.w
               : eh < 0 || ew < 0 || g.oh != eh / g.sh + 1 || g.ow != ew / g.sw + 1)
        return kc_error(c, "conv2d kernel: the attributes do not give the declared output size");
    if (has_r)
        for (int i = 0; i < y->rank; i++)
            if (r->shape[i] != y->shape[i])
                return kc_error(c, "conv2d kernel: residual shape differs from the output");
    if (rsrc == 2 && (x->shape[o] != g.cout || g.h != g.oh || g.w != g.ow))
        return kc_error(c, "conv2d kernel: residual x differs from the output shape");
    /* the scale s[n * scn + c]: s is [N or 1, C, 1, 1] or [C, 1, 1] (fuse_scale_operands) */
    int64_t scn = 0;
    if (mul) {
        const PlanTensor *sc = kc_arg(k, c->p, si);
        if (sc->shape[sc->rank - 3] != g.c)
            return kc_error(c, "conv2d kernel: the scale is not one value per input channel");
        if (sc->rank == 4 && sc->shape[0] > 1) scn = sc->pshape[1] * sc->pshape[2] * sc->pshape[3];
    }

    int64_t coutg = g.cout / g.groups, npix = g.n * g.oh * g.ow,
            kdim = g.c / g.groups * g.kh * g.kw;
    if (g.n * x->pshape[o] * g.h * g.w > UINT32_MAX ||
        g.n * y->pshape[o] * g.oh * g.ow > UINT32_MAX)
        return kc_error(c, "conv2d kernel: a tensor past 2^32 elements");
    KcWords w = {0};
    ConvPush pc = {
        .n = kc_word(&w, g.n),
        .c = kc_word(&w, g.c),
        .h = kc_word(&w, g.h),
        .w = kc_word(&w, g.w),
        .cout = kc_word(&w, g.cout),
        .oh = kc_word(&w, g.oh),
        .ow = kc_word(&w, g.ow),
        .groups = kc_word(&w, g.groups),
        .kh = kc_word(&w, g.kh),
        .kw = kc_word(&w, g.kw),
        .sh = kc_word(&w, g.sh),
        .sw = kc_word(&w, g.sw),
        .ph = kc_word(&w, g.ph),
        .pw = kc_word(&w, g.pw),
        .dh = kc_word(&w, g.dh),
        .dw = kc_word(&w, g.dw),
        .xcp = kc_word(&w, x->pshape[o]),
        .ycp = kc_word(&w, y->pshape[o]),
        .rcp = kc_word(&w, has_r ? r->pshape[o] : 0),
        .rsrc = (uint32_t)rsrc,
        .act = act,
        .act_lim = act_lim, /* the tiles and split: below */
        .scn = kc_word(&w, scn),
    };
    st = kc_words_ok(c, k, &w);
    if (st != ST_OK) return st;
    if (dw_applies(c, &g)) return lower_dw(c, k, &g, &pc, epi);
    if (matvec_applies(c, &g, rsrc, wt, mul != NULL)) {
        ConvMatvec cv = {.n = g.n,
                         .cin = g.c,
                         .cout = g.cout,
                         .xcp = x->pshape[o],
                         .ycp = y->pshape[o],
                         .bias = has_b,
                         .act = act,
                         .act_lim = act_lim};
        return lower_conv_matvec(c, k, &cv);
    }
    /* The K split's grid targets (conv.target, conv.cm_target) and the tensor-core tile's plan at
     * its own. Tensor cores (f16 storage, 16+ channels per group) where they were measured faster
     * than the SIMT kernel on the H100 at batch 1: convs whose K the tensor-core plan splits,
     * with whole 32-channel blocks per group (KORD), and the 1x1 stride-1 convs with K >= 1024;
     * the stem (3 channels) and the unsplit convs ran slower there. cm_force (tests) and conv.cm
     * take every conv the kernel can. */
    int64_t target = kc_tune(c, TUNE_CONV_TARGET);
    int64_t cm_target = kc_tune(c, TUNE_CONV_CM_TARGET);
    int64_t cing = g.c / g.groups;
    KcTile tcm = kc_gemm_tile(coutg, npix, kdim, g.groups, KC_CM_TILE, cm_target);
    bool cm = c->tier == TIER_NV_COOPMAT && y->storage == DT_F16 && coutg >= 16 &&
              (c->cm_force || kc_tune(c, TUNE_CONV_CM) || (cing % tcm.bk == 0 && tcm.nsplit > 1) ||
               (g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 &&
                kdim >= 1024));
    if (c->cpu_device && !cm) {
        /* direct: channel tiles of at most TM_MAX, balanced (33 -> 3 x 11; depthwise TM 1);
         * TP_MAX pixels per invocation, a small image shrinking the workgroup to a multiple of 8
         * (lavapipe's SIMD width) rather than the pixels per invocation */
        int64_t mtiles = (coutg + TM_MAX - 1) / TM_MAX, tm = (coutg + mtiles - 1) / mtiles;
        int64_t tp = TP_MAX, wg = DIRECT_WG;
        if (npix < DIRECT_WG * TP_MAX) {
            wg = ((npix + TP_MAX - 1) / TP_MAX + 7) / 8 * 8;
            tp = (npix + wg - 1) / wg;
        }
        int64_t ptiles = (npix + wg * tp - 1) / (wg * tp);
        pc.mtiles = kc_word(&w, mtiles); /* channel tiles of TM, pixel tiles of WG * TP */
        pc.ptiles = kc_word(&w, ptiles);
        pc.nsplit = 1;
        pc.kchunk = 0;
        st = kc_words_ok(c, k, &w);
        if (st == ST_OK) st = kc_push_block(c, k, &pc, sizeof pc);
        if (st == ST_OK) st = kc_spec(c, k, (uint32_t)wg);
        if (st == ST_OK) st = kc_spec(c, k, (uint32_t)tm);
        if (st == ST_OK) st = kc_spec(c, k, (uint32_t)tp);
        kc_grid(k, ptiles * mtiles * g.groups, 1);
        if (st != ST_OK) return st;
        return kc_pick(c, k, (KernelKey){.kind = KK_conv2d, .impl = KI_DIRECT, .flags = epi});
    }
    KcTile t = cm ? tcm : kc_gemm_tile(coutg, npix, kdim, g.groups, 0, target);
    if (!cm) simt_tile_knobs(c, &t, coutg, npix, kdim, g.groups, target);
    if (cm) t.wg = 256;                    /* conv2d_body.glsl's tile: 2 x 4 subgroups */
    int64_t part_row = (npix + 3) / 4 * 4; /* conv2d_common.glsl conv_part_stride */
    if (t.nsplit * g.cout * part_row > UINT32_MAX)
        return kc_error(c, "conv2d kernel: the K-split partials pass 2^32 elements");
    KernelImpl impl = !cm ? KI_BASE : c->cm_emulate ? KI_CMX : KI_CM;
    pc.mtiles = kc_word(&w, t.mtiles);
    pc.ptiles = kc_word(&w, t.ntiles);
    pc.nsplit = kc_word(&w, t.nsplit);
    pc.kchunk = kc_word(&w, t.kchunk);
    st = kc_words_ok(c, k, &w);
    if (st == ST_OK) st = kc_push_block(c, k, &pc, sizeof pc);
    /* KORD 1 when the channels of a group fill whole K steps: the steps go through blocks of BK
     * channels at one kernel position (conv2d_body.glsl); conv.kord=0 forces the plain order.
     * Spec 9, conv.ablate: parts of the K loop left out (bench only, wrong results by design). */
    bool kord = cing % t.bk == 0 && kc_tune(c, TUNE_CONV_KORD);
    uint32_t spec[] = {(uint32_t)t.wg,
                       (uint32_t)t.bm,
                       (uint32_t)t.bn,
                       (uint32_t)t.bk,
                       0,
                       (uint32_t)t.tr,
                       (uint32_t)t.tc,
                       (uint32_t)g.kh,
                       (uint32_t)g.kw,
                       (uint32_t)kc_tune(c, TUNE_CONV_ABLATE),
                       kord};
    for (size_t i = 0; i < sizeof spec / sizeof spec[0] && st == ST_OK; i++)
        st = kc_spec(c, k, spec[i]);
    kc_grid(k, t.tiles * t.nsplit, 1);
    if (st != ST_OK) return st;
    if (t.nsplit == 1)
        return kc_pick(c, k, (KernelKey){.kind = KK_conv2d, .impl = impl, .flags = epi});
    /* K split: this kernel writes the partials {x, w, [s]} -> {partials, y}; a reduce pass
     * {partials, [bias], [res]} -> y adds them up with the epilogue. A residual that is x itself
     * is bound as the reduce's res. */
    int64_t pshape[3] = {t.nsplit, g.cout, part_row};
    int part = kc_scratch(c, k, ".partials", 3, pshape, DT_F32);
    if (part < 0) return ST_BAD_INPUT;
    int out = k->args[k->nargs - 1], xarg = k->args[0];
    int rarg = has_r ? k->args[ri] : rsrc == 2 ? xarg : -1, barg = has_b ? k->args[bi] : -1;
    int pargs[5], np = 0;
    for (; np < 2 + (mul != NULL); np++)
        pargs[np] = k->args[np];
    pargs[np] = part;
    pargs[np + 1] = out;
    st = kc_set_args(c, k, pargs, np, np + 2);
    if (st != ST_OK) return st;
    st = kc_pick(c, k,
                 (KernelKey){.kind = KK_conv2d, .impl = impl, .flags = KF_PART | (epi & KF_SCALE)});
    if (st != ST_OK) return st;
    int rargs[4], nr = 0;
    rargs[nr++] = part;
    if (barg >= 0) rargs[nr++] = barg;
    if (rarg >= 0) rargs[nr++] = rarg;
    rargs[nr] = out;
    unsigned repi = (barg >= 0 ? KF_BIAS : 0) | (rarg >= 0 ? KF_RES : 0);
    KernelKey red = {.kind = KK_conv2d, .impl = KI_BASE, .flags = KF_RED | repi};
    PlanKernel *rk = kc_append(c, k, red, rargs, nr, nr + 1);
    if (!rk) return ST_BAD_INPUT;
    if (rsrc == 2) { /* x is the reduce's res binding */
        pc.rcp = pc.xcp;
        pc.rsrc = 1;
    }
    st = kc_push_block(c, rk, &pc, sizeof pc);
    if (st == ST_OK) st = kc_spec(c, rk, RED_WG);
    kc_grid(rk, g.cout * npix, RED_WG);
    return st;
}
