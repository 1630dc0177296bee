// The tiled GEMM core of the implicit-GEMM conv2d kernels and of the tensor-core matmul: one
// workgroup computes a BM x BN tile of C = A (M x K) * B (K x N) over a range of K, staging a
// BM x BK slice of A and a BK x BN slice of B in shared memory per step, with fp32
// accumulation. The kernel supplies the operands and the output through three hooks:
//   void gemm_load(uint k0)   global memory -> this invocation's registers ra[AEL], rb[BEL]
//                             (GEMM_LOAD_WORD: converted and zeroed in gemm_stage)
//                             for the K step starting at k0 (zeros outside the operands)
//   void gemm_stage()         those registers -> SH_A / SH_B
//   void gemm_emit(uint mm, uint nn, float v)   element (mm, nn) of the tile is v (SIMT: gemm_emit4,
//                             elements (mm, nn .. nn + 3) from a vec4)
// gemm_run(kbeg, kend) loads the next step's registers while it computes the current one from
// shared memory (one barrier pair per step). The kernel's gemm_stage stores element (m, k) of A
// as GEMM_SH_A(m, k) and (k, n) of B as GEMM_SH_B(k, n).
//
// GEMM_CM 0 (portable, SIMT): NPU_WG = BM * BN / (TR * TC) invocations, each owning a TR x TC
// register tile of consecutive rows and columns (TR, TC multiples of 4). Shared fp32 in vec4s,
// A K-major [BK][BM + A_PAD] and B [BK][BN + B_PAD], rows padded by one vec4: per kk an
// invocation reads TR / 4 + TC / 4 vec4s for TR * TC FMAs (a warp's A reads are broadcasts of two
// addresses, its B reads 16 consecutive vec4s), where scalar reads of a strided register tile
// had taken TR + TC shared loads, more than the FMAs' issue time (bench/NOTES.md).
// GEMM_CM 1 shared layouts: A row-major [BM][BK + A_PAD]; B row-major [BK][BN + B_PAD], or with
// B_KMAJOR transposed [BN][BK + B_PAD] (operands contiguous along K).
// GEMM_CM 1 (nv-coopmat, shaders/gemm_cm.glsl; CM_EMULATE 1 for its portable emulation):
// shared float16_t, BK GEMM_CM_BK [32] (a multiple of 16), and a tile of compile-time constants the including kernel may set
// before the include (defaults in brackets): GEMM_CM_BM x GEMM_CM_BN [64 x 64], a grid of
// GEMM_CM_SGM x GEMM_CM_SGN subgroups of 32 lanes [2 x 2: 128 invocations], each owning
// BM / SGM x BN / SGN of the tile as (BM / SGM / 16) x (BN / SGN / 16) 16x16 fragments [2 x 2].
// Rows padded by 8 halves (16 bytes: the extension's alignment, and no bank conflicts for
// 16-byte row reads). The result goes through SH_C f32 so the epilogue sees plain elements:
// the whole tile at once, SH_C [BM][BN + 4] (GEMM_CM_STRIPE 0, the default), or in stripes of
// GEMM_CM_STRIPE rows, SH_C [STRIPE][BN + 4] (per stripe: the subgroups owning its rows store
// their fragments, barrier, every invocation emits the stripe's elements, barrier), which keeps
// a 128 x 128 tile under lavapipe's 32 KB of shared memory. The tensor-core matmul's large tile
// (matmul_cml*): 128 x 128, 2 x 4 subgroups (256 invocations) of 64 x 32 (4 x 2 fragments),
// stripes of 16 rows: shared SH_A 10240 + SH_B 10240 + SH_C 8448 bytes (the 64 tile: 27648).
//
// GEMM_SH_VEC 1 (coopmat only; the tensor-core matmul): SH_A and SH_B are arrays of uvec4 (8
// halves each) that the kernel's gemm_stage fills with one 16-byte store per 8 elements (KV =
// BK / 8 vectors per row of A or K-major B: rows of ROWA, ROWB vectors with one vector of
// padding), and the fragments load from them with offsets and strides in vectors; the kernel
// stages 8 consecutive elements of a row per vector slot (SV_A, SV_B slots per invocation).
//
// GEMM_GLU 1 (coopmat only; the tensor-core matmul of linear_glu, matmul_glu.glsl): the kernel
// supplies gemm_emit_glu(uint mm, uint nn, float g, float u) instead of gemm_emit, and each
// invocation emits half as many elements, one per column pair: gate column nn (nn % 32 < 16)
// and its up column nn + 16, read from SH_C, so consecutive invocations write consecutive
// output columns.
//
// GEMM_PART 1 (coopmat only; the tensor-core matmul's K-split first pass on the 64 tile): the
// tile leaves as fp32 partial sums stored straight from the accumulators (CM_STORE: no SH_C,
// no barriers, no per-element index math) into the kernel's float buffer `part` at part_base
// with row stride part_ld (the kernel declares the three before the include): the partials are
// padded to whole tiles, so no store needs a guard. On the H200 this took ~10 us off each of
// ConvNeXt-T's nine 64-tile split GEMMs and added 1-2 us to each 128-tile one, which keeps
// the stripes (bench/NOTES.md, "the K split's epilogue, two designs measured").
//
// Spec constants (0 is NPU_WG, GEMM_WG invocations for the coopmat tile): 1..3 = BM, BN, BK
// (SIMT; the coopmat tile is fixed at compile time), 4 =
// B_KMAJOR, 5, 6 = TR, TC (SIMT). The including kernel may use ids from 7 on.
#ifndef NPU_GEMM_TILE_GLSL
#define NPU_GEMM_TILE_GLSL

#extension GL_EXT_control_flow_attributes : require
#include "index.glsl"

#if GEMM_CM
// A compile-time tile: constant array sizes and indices keep the fragments in registers (with
// spec-constant shapes the NVIDIA driver kept them in memory: ~10 us per K step, measured).
#ifndef GEMM_CM_BM
#define GEMM_CM_BM 64
#endif
#ifndef GEMM_CM_BN
#define GEMM_CM_BN 64
#endif
#ifndef GEMM_CM_SGM
#define GEMM_CM_SGM 2
#endif
#ifndef GEMM_CM_SGN
#define GEMM_CM_SGN 2
#endif
#ifndef GEMM_CM_STRIPE
#define GEMM_CM_STRIPE 0
#endif
#ifndef GEMM_CM_BK
#define GEMM_CM_BK 32
#endif
#if GEMM_CM_BK % 16 != 0
#error "gemm_tile.glsl: the coopmat K step must be whole 16-deep fragments"
#endif
#if GEMM_CM_BM % (GEMM_CM_SGM * 16) != 0 || GEMM_CM_BN % (GEMM_CM_SGN * 16) != 0
#error "gemm_tile.glsl: each subgroup's part of the tile must be whole 16x16 fragments"
#endif
#if GEMM_CM_STRIPE != 0
#if GEMM_CM_STRIPE % 16 != 0 || (GEMM_CM_BM / GEMM_CM_SGM) % GEMM_CM_STRIPE != 0 || \
    (GEMM_CM_STRIPE * GEMM_CM_BN) % (GEMM_CM_SGM * GEMM_CM_SGN * 32) != 0
#error "gemm_tile.glsl: a stripe must be whole fragment rows of one subgroup row, whole elements per invocation"
#endif
#endif
const uint BM = GEMM_CM_BM, BN = GEMM_CM_BN, BK = GEMM_CM_BK, GEMM_WG = GEMM_CM_SGM * GEMM_CM_SGN * 32;
#else
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 64;
layout(constant_id = 3) const uint BK = 16;
const uint GEMM_WG = NPU_WG;
#endif
layout(constant_id = 4) const uint B_KMAJOR = 0;
layout(constant_id = 5) const uint TR = 4; // SIMT: rows and columns of one invocation's tile
layout(constant_id = 6) const uint TC = 4;

// CM_ABLATE (spec GEMM_ABLATE_ID where the kernel defines it: the tensor-core matmul's 8, bench's
// NPU_CM_ABLATE; conv2d's 9, NPU_CONV_ABLATE): parts of the K loop left out to measure what a
// step costs; the result is wrong by design. Bits: 1 = no global loads, 2 = no fragment loads or
// MMAs (SIMT: no shared reads or FMAs), 4 = no shared-memory staging, 8 = no barriers, 16 = no
// epilogue (the tile never leaves the registers: what launch, prologue and K loop cost alone);
// the tensor-core matmul's gemm_load also has 32 = no loads of A, 64 = no loads of a K-major
// B (zeros).
#ifdef GEMM_ABLATE_ID
layout(constant_id = GEMM_ABLATE_ID) const uint CM_ABLATE = 0;
#else
const uint CM_ABLATE = 0;
#endif

#ifndef GEMM_SH_VEC
#define GEMM_SH_VEC 0
#endif
#ifndef GEMM_PART
#define GEMM_PART 0
#endif
#if GEMM_PART && !GEMM_CM
#error "gemm_tile.glsl: GEMM_PART is the coopmat tile's"
#endif
#ifndef GEMM_GLU
#define GEMM_GLU 0
#endif
#if GEMM_GLU
#if !GEMM_CM || GEMM_CM_BN % 32 != 0 || \
    (GEMM_CM_STRIPE != 0 && (GEMM_CM_STRIPE * GEMM_CM_BN / 2) % (GEMM_CM_SGM * GEMM_CM_SGN * 32) != 0) || \
    (GEMM_CM_STRIPE == 0 && (GEMM_CM_BM * GEMM_CM_BN / 2) % (GEMM_CM_SGM * GEMM_CM_SGN * 32) != 0)
#error "gemm_tile.glsl: GEMM_GLU needs the coopmat tile, whole 32-column pairs, whole pairs per invocation"
#endif
#include "matmul_glu.glsl"
#endif
#if GEMM_CM
#include "gemm_cm.glsl"
#define SH_T float16_t
const uint A_PAD = 8, B_PAD = 8, C_PAD = 4;
#else
#define SH_T float
const uint A_PAD = 4, B_PAD = 4; // one vec4: rows stay 16-byte aligned
#endif

// Per invocation and step: AEL elements of A (rows am0 + j * AROWS, column ak) and BEL of B
// (rows bk0 + j * BROWS, column bn; with B_KMAJOR column bk, rows bn0 + j * BCOLS).
const uint AROWS = GEMM_WG / BK, AEL = BM / AROWS;
const uint BROWS = GEMM_WG / BN, BEL = BK * BN / GEMM_WG;

#if GEMM_SH_VEC
// rows of vectors: A [BM][ROWA], K-major B [BN][ROWB], B along N [BK][ROWN]
const uint KV = BK / 8u, ROWA = KV + 1u, ROWB = KV + 1u, ROWN = BN / 8u + 1u;
const uint SV_A = BM * KV / GEMM_WG, SV_B = BN * KV / GEMM_WG;
shared uvec4 SH_A[BM * ROWA];
shared uvec4 SH_B[BN * ROWB > BK * ROWN ? BN * ROWB : BK * ROWN];
#elif GEMM_CM
shared SH_T SH_A[BM * (BK + A_PAD)];
shared SH_T SH_B[(BK + B_PAD) * (BN + B_PAD)];
#else
// SIMT: A K-major [BK][BM + A_PAD] and B [BK][BN + B_PAD] in vec4s, so an invocation reads its
// TR rows and TC columns of a K step with TR / 4 + TC / 4 16-byte loads
shared vec4 SH_A4[BK * (BM + A_PAD) / 4u];
shared vec4 SH_B4[BK * (BN + B_PAD) / 4u];
#endif
// The staging hooks' stores: element (m, k) of A and (k, n) of B of the step.
#if GEMM_CM
#define GEMM_SH_A(m, k) SH_A[(m) * (BK + A_PAD) + (k)]
#define GEMM_SH_B(k, n) SH_B[(k) * (BN + B_PAD) + (n)]
#else
#define GEMM_SH_A(m, k) SH_A4[(k) * ((BM + A_PAD) / 4u) + (m) / 4u][(m) % 4u]
#define GEMM_SH_B(k, n) SH_B4[(k) * ((BN + B_PAD) / 4u) + (n) / 4u][(n) % 4u]
#endif
#if GEMM_CM
shared float SH_C[(GEMM_CM_STRIPE != 0 ? GEMM_CM_STRIPE : BM) * (BN + C_PAD)];
#endif

#if !GEMM_SH_VEC
// The kernel's gemm_load fills them (GEMM_SH_VEC kernels keep vectors) with GEMM_LOAD_WORD: the
// 32-bit words that hold the elements, and two bits per element (inside the operand; which half),
// so AEL and BEL are at most 16 (the tiles of kc_gemm_tile: at most 16).
uint ra[AEL], rb[BEL];
uint ra_bits, rb_bits;
#endif

// A load for the staging hooks: always issued, at index 0 (the operand's first element, always
// there) when `ok` is false, and the value zeroed after. The loads of a step are then straight-
// line code the driver issues back to back; a load under a branch waited for its data before
// the next one (about 0.3 us per load: 10 us per K step of the first coopmat kernel on the H100).
// mix() with a bool selector is a select, not a branch (glslang turns ?: and && into branches);
// callers build `ok` with all(bvecN(...)) for the same reason.
#define GEMM_LOAD(dst, buf, ok, idx)                                                           \
    {                                                                                          \
        bool ok_ = (ok);                                                                       \
        float t_ = S_LOAD(buf[mix(0u, (idx), ok_)]);                                           \
        dst = mix(0.0, t_, ok_);                                                               \
    }

// GEMM_LOAD's raw form for the prefetch of the next K step (conv2d): element idx of an operand
// bound a second time as 32-bit words (wbuf) is loaded as the word that holds it (the storage
// binds whole words: runtime/vulkan/vk_record.c), its two bits (ok; the half) go to bits 2j, 2j + 1 of
// `bits`, and GEMM_RAW(word, bits, j) converts and zeroes it where the step is staged. A value
// converted at the load is needed as soon as it is loaded (and the prefetch sits under a branch,
// which the conversion cannot leave), so the load no longer overlaps the step's FMAs.
#if defined(STORAGE_F32)
const uint GEMM_WSH = 0u; // log2 of the elements per word
#define GEMM_WORD_VALUE(w, h) uintBitsToFloat(w)
#elif defined(STORAGE_F16)
const uint GEMM_WSH = 1u;
#define GEMM_WORD_VALUE(w, h) unpackHalf2x16((w) >> ((h) << 4)).x
#elif defined(STORAGE_BF16)
const uint GEMM_WSH = 1u;
#define GEMM_WORD_VALUE(w, h) uintBitsToFloat(((w) >> ((h) << 4)) << 16)
#endif
#define GEMM_LOAD_WORD(dst, bits, j, wbuf, ok, idx)                                            \
    {                                                                                          \
        bool ok_ = (ok);                                                                       \
        uint i_ = mix(0u, (idx), ok_);                                                         \
        dst = wbuf[i_ >> GEMM_WSH];                                                            \
        bits |= (uint(ok_) | ((i_ & GEMM_WSH) << 1)) << (2u * (j));                            \
    }
#define GEMM_RAW(w, bits, j)                                                                   \
    mix(0.0, GEMM_WORD_VALUE(w, ((bits) >> (2u * (j) + 1u)) & 1u), (((bits) >> (2u * (j))) & 1u) != 0u)

void gemm_load(uint k0);
void gemm_stage();
// The kernel may set gemm_rot before gemm_run to start its K steps at step gemm_rot % steps
// (then on around): workgroups that share an operand then read different parts of it at a
// time. 0: in order.
uint gemm_rot = 0u;
#if GEMM_GLU
void gemm_emit_glu(uint mm, uint nn, float g, float u);
#else
void gemm_emit(uint mm, uint nn, float v);
#endif
#if !GEMM_CM
void gemm_emit4(uint mm, uint nn, vec4 v); // SIMT: elements (mm, nn .. nn + 3), nn a multiple of 4
#endif

// The result's rows R0 .. R0 + ROWS - 1 (ROWS a constant), staged in SH_C from its row 0, to the
// kernel: every element (gemm_emit), or with GEMM_GLU every column pair (gemm_emit_glu). A macro,
// so the loop keeps its constant trip count where it is expanded. Not unrolled: it indexes no
// register array, and unrolled it repeated gemm_emit (the activation's switch over every
// function) 32 to 64 times: a 91 KB kernel whose epilogue took 25 us on the H200, as long as its
// K loop (10 KB rolled; bench/NOTES.md "The GEMM epilogue").
#if GEMM_GLU
#define GEMM_EMIT_ROWS(R0, ROWS)                                                               \
    [[dont_unroll]] for (uint i = 0; i < (ROWS) * (BN / 2u) / GEMM_WG; i++) {                  \
        uint e = tid + i * GEMM_WG, r = e / (BN / 2u), c = mm_glu_pair(e % (BN / 2u));         \
        gemm_emit_glu((R0) + r, c, SH_C[r * (BN + C_PAD) + c], SH_C[r * (BN + C_PAD) + c + GLU_BLOCK]); \
    }
#else
#define GEMM_EMIT_ROWS(R0, ROWS)                                                               \
    [[dont_unroll]] for (uint i = 0; i < (ROWS) * BN / GEMM_WG; i++) {                         \
        uint e = tid + i * GEMM_WG;                                                            \
        gemm_emit((R0) + e / BN, e % BN, SH_C[(e / BN) * (BN + C_PAD) + e % BN]);              \
    }
#endif

void gemm_run(uint kbeg, uint kend)
{
    uint tid = gl_LocalInvocationID.x;
#if GEMM_CM
    // fragments per subgroup along M and N; the subgroup's part of the tile starts at (wm, wn)
    const uint FM = BM / (GEMM_CM_SGM * 16), FN = BN / (GEMM_CM_SGN * 16);
    uint sg = CM_SUBGROUP, wm = (sg / GEMM_CM_SGN) * (BM / GEMM_CM_SGM), wn = (sg % GEMM_CM_SGN) * (BN / GEMM_CM_SGN);
    CM_ACC(acc, FM * FN);
    [[unroll]] for (uint i = 0; i < FM * FN; i++) CM_ZERO(acc[i]);
#else
    // this invocation's rows tm * TR .. + TR - 1 and columns tn * TC .. + TC - 1 (TR, TC
    // multiples of 4: whole vec4s of the staged rows)
    const uint CN4 = BN / TC, RA = (BM + A_PAD) / 4u, RB = (BN + B_PAD) / 4u;
    uint tm = tid / CN4, tn = tid % CN4;
    float acc[TR * TC];
    [[unroll]] for (uint i = 0; i < TR * TC; i++) acc[i] = 0.0;
#endif
    // the steps in the order gemm_rot rotates them: step i starts at GEMM_KSTEP(i)
    uint nst = kbeg < kend ? (kend - kbeg + BK - 1u) / BK : 0u, r0 = nst > 0u ? gemm_rot % nst : 0u;
#define GEMM_KSTEP(i) (kbeg + ((i) + r0 < nst ? (i) + r0 : (i) + r0 - nst) * BK)
    if (nst > 0u && (CM_ABLATE & 1u) == 0) gemm_load(GEMM_KSTEP(0u));
    for (uint i = 0u; i < nst; i++) {
        if ((CM_ABLATE & 8u) == 0) barrier(); // the previous step's reads of SH_A / SH_B are done
        if ((CM_ABLATE & 4u) == 0) gemm_stage();
        if ((CM_ABLATE & 8u) == 0) barrier();
        if (i + 1u < nst && (CM_ABLATE & 1u) == 0) gemm_load(GEMM_KSTEP(i + 1u)); // in flight while this step computes
#if GEMM_CM
        if ((CM_ABLATE & 2u) == 0)
        [[unroll]] for (uint kk = 0; kk < BK; kk += 16) {
            CM_FRAG(fa, FM);
            CM_FRAG(fb, FN);
#if GEMM_SH_VEC
            [[unroll]] for (uint i = 0; i < FM; i++)
                CM_LOAD_A(fa[i], (wm + i * 16) * ROWA + kk / 8u, ROWA, false);
            [[unroll]] for (uint j = 0; j < FN; j++) {
                if (B_KMAJOR != 0)
                    CM_LOAD_B(fb[j], (wn + j * 16) * ROWB + kk / 8u, ROWB, true);
                else
                    CM_LOAD_B(fb[j], kk * ROWN + (wn + j * 16) / 8u, ROWN, false);
            }
#else
            [[unroll]] for (uint i = 0; i < FM; i++)
                CM_LOAD_A(fa[i], (wm + i * 16) * (BK + A_PAD) + kk, BK + A_PAD, false);
            [[unroll]] for (uint j = 0; j < FN; j++) {
                if (B_KMAJOR != 0)
                    CM_LOAD_B(fb[j], (wn + j * 16) * (BK + B_PAD) + kk, BK + B_PAD, true);
                else
                    CM_LOAD_B(fb[j], kk * (BN + B_PAD) + wn + j * 16, BN + B_PAD, false);
            }
#endif
            [[unroll]] for (uint i = 0; i < FM; i++)
                [[unroll]] for (uint j = 0; j < FN; j++) CM_MMA(acc[i * FN + j], fa[i], fb[j]);
        }
#else
        if ((CM_ABLATE & 2u) == 0)
        for (uint kk = 0; kk < BK; kk++) {
            float av[TR], bv[TC];
            [[unroll]] for (uint r = 0; r < TR; r += 4) {
                vec4 a = SH_A4[kk * RA + (tm * TR + r) / 4u];
                av[r] = a.x, av[r + 1] = a.y, av[r + 2] = a.z, av[r + 3] = a.w;
            }
            [[unroll]] for (uint c = 0; c < TC; c += 4) {
                vec4 b = SH_B4[kk * RB + (tn * TC + c) / 4u];
                bv[c] = b.x, bv[c + 1] = b.y, bv[c + 2] = b.z, bv[c + 3] = b.w;
            }
            [[unroll]] for (uint r = 0; r < TR; r++)
                [[unroll]] for (uint c = 0; c < TC; c++) acc[r * TC + c] += av[r] * bv[c];
        }
#endif
    }
#if GEMM_CM
    if ((CM_ABLATE & 16u) != 0) return; // uniform (a spec constant)
#if GEMM_PART
    [[unroll]] for (uint i = 0; i < FM; i++)
        [[unroll]] for (uint j = 0; j < FN; j++)
            CM_STORE(acc[i * FN + j], part, part_base + (wm + i * 16) * part_ld + wn + j * 16, part_ld);
    return;
#endif
#if GEMM_CM_STRIPE == 0
    [[unroll]] for (uint i = 0; i < FM; i++)
        [[unroll]] for (uint j = 0; j < FN; j++)
            CM_STORE(acc[i * FN + j], SH_C, (wm + i * 16) * (BN + C_PAD) + wn + j * 16, BN + C_PAD);
    barrier();
    GEMM_EMIT_ROWS(0u, BM)
#else
    // Stripe p: tile rows p * ST .. p * ST + ST - 1, in the part of subgroup row p / PS (PS
    // stripes per part of SR rows). Fragment (i, j) of a subgroup is in it when i * 16 / ST ==
    // p % PS, a compile-time condition once the loops unroll, and the subgroup is in that row, a
    // condition uniform in the subgroup (coopMatStoreNV needs that); the barriers stay outside
    // both (uniform in the workgroup, the emulation's too). The guard sits on each store: an
    // `if` around a loop kept spirv-opt from unrolling, and the fragments then lost their
    // constant indices.
    const uint ST = GEMM_CM_STRIPE, SR = BM / GEMM_CM_SGM, PS = SR / ST;
    [[unroll]] for (uint p = 0; p < BM / ST; p++) {
        if (p > 0) barrier(); // the previous stripe's reads of SH_C are done
        [[unroll]] for (uint i = 0; i < FM; i++)
            [[unroll]] for (uint j = 0; j < FN; j++)
                if (i * 16 / ST == p % PS && sg / GEMM_CM_SGN == p / PS)
                    CM_STORE(acc[i * FN + j], SH_C, (i * 16 - (p % PS) * ST) * (BN + C_PAD) + wn + j * 16, BN + C_PAD);
        barrier();
        GEMM_EMIT_ROWS(p * ST, ST)
    }
#endif
#else
    [[unroll]] for (uint r = 0; r < TR; r++)
        [[unroll]] for (uint c = 0; c < TC; c += 4)
            gemm_emit4(tm * TR + r, tn * TC + c, vec4(acc[r * TC + c], acc[r * TC + c + 1], acc[r * TC + c + 2], acc[r * TC + c + 3]));
#endif
}

#endif
