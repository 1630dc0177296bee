/* The nv-coopmat tier's matmul for M > 1 (shaders/matmul_cm.glsl): tensor cores for f16 and
 * bf16 storage, chosen by lower_matmul.c's M > 1 branch through matmul_cm_applies. It pushes
 * lower_matmul's block (MatmulPush) and its tiles (MatmulCmPush: shaders/abi.h MATMUL_CM_PUSH)
 * and sets the spec constants {WG, BM, BN, BK, B_KMAJOR, -, -, VEC, ABLATE}, the kernel and the
 * grid (kc_gemm_tile picks the tiles and the K split). A split writes fp32 partials [nsplit,
 * batch * mtiles * BM * ntiles * BN] (kc_scratch; whole tiles, on the 64 tile stored straight
 * from the accumulators) with the KF_PART kernel and a reduce pass (kc_append: KF_RED with the
 * epilogue's flags, spec {256, BM, BN}) adds them up with the epilogue. (Reducing in the first
 * pass instead, by the last workgroup of each tile, was slower wherever the split is deep:
 * bench/NOTES.md, "the K split's epilogue, two designs measured".)
 *
 * Two tiles (cm_tile): 64 x 64 on 128 invocations, and where M and N are both at least 128
 * and its grid fills the GPU (prefill's GEMMs) 128 x 128 on 256 (KF_LARGE): each staged byte
 * feeds twice the MMAs and the operand traffic halves; its K split aims at 1 workgroup per SM
 * (KC_MATMUL_TARGET_LARGE) rather than 4. The large tile has a second layout for `tune` to
 * choose per kernel (cm.shape 1, key N 1: 128 x 64 on 4 subgroups, stems matmul_cmh*): a third
 * of the registers per workgroup, so several share an SM; which layout is faster depends on
 * the GEMM, so the default stays the 128 x 128 one and the choice is the tuner's.
 *
 * linear_glu (q->glu): the KF_GLU kernels, whose epilogue pairs the interleaved gate and up
 * columns into Y [.., M, N / 2]; a K split's first pass is the plain KF_PART kernel (partials
 * over all N columns) and its KF_RED | KF_GLU reduce pairs them.
 *
 * bf16 operands are converted to f16 as they are staged: exact in fp16's normal range, +-inf
 * past 65504 (docs/kernels.md "Tiers"). f32 keeps the SIMT kernel (f16 operands would lose its
 * precision). */
#include "compiler/lower/kernels.h"

enum { MM_RED_WG = 256 };
#define KC_MATMUL_GLU_SPLITS 3

bool matmul_cm_applies(const KernelCtx *c, const PlanKernel *k, const CmProduct *q)
{
    /* tiles of 16 rows and columns at least; only the A, B, [bias], [res], Y bindings (an
     * operand or epilogue input this kernel does not know keeps the SIMT path) */
    DType s = kc_out(k, c->p)->storage;
    return c->tier == TIER_NV_COOPMAT && (s == DT_F16 || s == DT_BF16) && q->m >= 16 &&
           q->n >= 16 && q->k >= 16 && k->nargs == 3 + q->bias + q->res;
}

/* The K split's grid target on the large tile or the small one (cm.target); the GLU kernels on
 * the large tile aim at 3 workgroups per SM (cm.glu_target): Qwen2.5-1.5B prefill-128's 140
 * tiles of 128 columns, one workgroup per SM, make a second wave of 8 unsplit. */
static int64_t cm_target(const KernelCtx *c, const CmProduct *q, bool large)
{
    int64_t target = kc_tune(c, TUNE_CM_TARGET);
    if (target == TUNE_AUTO) target = large ? KC_MATMUL_TARGET_LARGE : KC_MATMUL_TARGET;
    if (!q->glu) return target;
    int64_t glu = kc_tune(c, TUNE_CM_GLU_TARGET);
    return glu != TUNE_AUTO ? glu : large ? KC_MATMUL_GLU_SPLITS * TIER_NV_COOPMAT_SMS : target;
}

/* The tiles and K split of the product on tile edge `edge` (cm.shape 1 on the large one: its
 * narrow layout, 128 x 64 on 4 subgroups) */
static KcTile cm_plan(const KernelCtx *c, const CmProduct *q, int64_t edge, int shape)
{
    bool large = edge == KC_CM_TILE_LARGE;
    int64_t target = cm_target(c, q, large);
    KcTile t = kc_gemm_tile(q->m, q->n, q->k, q->nbatch, edge, target);
    /* the large tile holds one workgroup per SM: a grid runs in waves of the target (cm.waves) */
    if (large && !q->glu && kc_tune(c, TUNE_CM_WAVES))
        kc_gemm_split_waves(&t, q->m, q->n, q->k, q->nbatch, target);
    if (large && shape != 0) {
        t.bn = KC_CM_TILE_LARGE / 2;
        t.wg = 128;
        kc_gemm_split(&t, q->m, q->n, q->k, q->nbatch, target);
    }
    return t;
}

/* The tile edge for this product (cm.tile forces one): 128 where M and N both fill it, unless
 * its grid leaves SMs idle: unsplit (K too short to split) on fewer tiles than SMs, each SM
 * holds at most one large workgroup while the small tile's 4x grid fills them. On the H200 the
 * small tile took such GEMMs (M 784..3136, N 192..768, K 96..192: ConvNeXt-T's and Swin-T's)
 * in 0.5-0.8x the large tile's time, and lost to it on most split or full-grid ones (the
 * exceptions follow no rule the sweep showed: bench/NOTES.md, "cm.tile from the grid"). */
static int64_t cm_tile(const KernelCtx *c, const CmProduct *q)
{
    int64_t forced = kc_tune(c, TUNE_CM_TILE);
    if (forced != TUNE_AUTO) return forced;
    if (q->m < KC_CM_TILE_LARGE || q->n < KC_CM_TILE_LARGE) return KC_CM_TILE;
    /* the grid rule is the full layout's (one workgroup per SM); the narrow one (cm.shape 1)
     * shares an SM, so it keeps the 128 tile wherever M and N fill it */
    if (kc_tune(c, TUNE_CM_SHAPE) != 0) return KC_CM_TILE_LARGE;
    KcTile t = cm_plan(c, q, KC_CM_TILE_LARGE, 0);
    return t.nsplit == 1 && t.tiles < TIER_NV_COOPMAT_SMS ? KC_CM_TILE : KC_CM_TILE_LARGE;
}

Status lower_matmul_cm(const KernelCtx *c, PlanKernel *k, const CmProduct *q, const MatmulPush *mp)
{
    int64_t edge = cm_tile(c, q);
    bool large = edge == KC_CM_TILE_LARGE;
    int shape = large ? (int)kc_tune(c, TUNE_CM_SHAPE) : 0; /* the kernel key's N */
    KcTile t = cm_plan(c, q, edge, shape);
    if (large && shape == 0) { /* K steps of 64 (matmul_cm.glsl): a split's chunk whole steps */
        t.bk = KC_CM_BK_LARGE;
        t.kchunk = (t.kchunk + t.bk - 1) / t.bk * t.bk;
        t.nsplit = (q->k + t.kchunk - 1) / t.kchunk;
    }
    int64_t mn = q->nbatch * q->m * q->n;
    int64_t pn = q->nbatch * t.mtiles * t.bm * t.ntiles * t.bn; /* a split's partials */
    if (t.nsplit * pn > UINT32_MAX)
        return kc_error(c, "matmul kernel: the K-split partials pass 2^32 elements");
    KcWords w = {0};
    MatmulCmPush cp = {.mm = *mp,
                       .mtiles = kc_word(&w, t.mtiles),
                       .ntiles = kc_word(&w, t.ntiles),
                       .nsplit = kc_word(&w, t.nsplit),
                       .kchunk = kc_word(&w, t.kchunk)};
    Status st = kc_words_ok(c, k, &w);
    if (st == ST_OK) st = kc_push_block(c, k, &cp, sizeof cp);
    /* cm.ablate: parts of the K loop left out (shaders/gemm_tile.glsl CM_ABLATE; bench only,
     * wrong results by design) */
    uint32_t ablate = (uint32_t)kc_tune(c, TUNE_CM_ABLATE);
    uint32_t spec[] = {
        (uint32_t)t.wg,   (uint32_t)t.bm, (uint32_t)t.bn, (uint32_t)t.bk, q->kmajor ? 1u : 0u, 4, 4,
        q->vec ? 1u : 0u, ablate};
    for (int i = 0; i < 9 && st == ST_OK; i++)
        st = kc_spec(c, k, spec[i]);
    if (st != ST_OK) return st;
    kc_grid(k, t.tiles * t.nsplit, 1);
    /* the key: tile, emulation, the epilogue's bindings and GLU; a split's first pass is the
     * plain product over all N columns, its reduce pass the epilogue */
    KernelImpl impl = c->cm_emulate ? KI_CMX : KI_CM;
    unsigned tile = large ? KF_LARGE : 0;
    unsigned epi = (q->bias ? KF_BIAS : 0) | (q->res ? KF_RES : 0) | (q->glu ? KF_GLU : 0);
    if (q->glu && q->res) return kc_error(c, "linear_glu kernel with a residual");
    if (t.nsplit == 1)
        return kc_pick(
            c, k, (KernelKey){.kind = KK_matmul, .impl = impl, .flags = tile | epi, .n = shape});
    int64_t pshape[2] = {t.nsplit, pn};
    int part = kc_scratch(c, k, ".partials", 2, pshape, DT_F32);
    if (part < 0) return ST_BAD_INPUT;
    /* k binds A, B, [bias], [res], Y: the first pass A, B, partials, Y; the reduce partials,
     * [bias], [res], Y */
    int out = k->args[k->nargs - 1], rargs[4], nr = 0;
    rargs[nr++] = part;
    for (int i = 2; i < k->nargs - 1; i++)
        rargs[nr++] = k->args[i];
    rargs[nr++] = out;
    int pargs[4] = {k->args[0], k->args[1], part, out};
    st = kc_set_args(c, k, pargs, 2, 4);
    if (st != ST_OK) return st;
    st = kc_pick(c, k,
                 (KernelKey){.kind = KK_matmul, .impl = impl, .flags = tile | KF_PART, .n = shape});
    if (st != ST_OK) return st;
    KernelKey red = {.kind = KK_matmul, .impl = KI_BASE, .flags = KF_RED | epi};
    PlanKernel *rk = kc_append(c, k, red, rargs, nr - 1, nr);
    if (!rk) return ST_BAD_INPUT;
    st = kc_push_block(c, rk, &cp, sizeof cp);
    if (st == ST_OK) st = kc_spec(c, rk, MM_RED_WG);
    if (st == ST_OK) st = kc_spec(c, rk, (uint32_t)t.bm);
    if (st == ST_OK) st = kc_spec(c, rk, (uint32_t)t.bn);
    kc_grid(rk, q->glu ? mn / 2 : mn, MM_RED_WG); /* one invocation per element of Y */
    return st;
}
