/* Conv-family graphs in the exporter's JSON format for the Vulkan conformance tests
 * (tests/test_vk_conv.c, tests/test_vk_dwconv.c): graph inputs and outputs, nodes, conv2d nodes
 * with their weights declared and mapped as the exporter does, one conv's case (shape and
 * attributes), and the check of a result against the CPU reference (vc_check_json). Every
 * tensor is 4-D. Failures fail the calling cmocka test. */
#ifndef NPU_TESTS_CONV_GRAPH_H
#define NPU_TESTS_CONV_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Gb {
    char in[2048], out[1024], w[2048], map[2048], nodes[12288];
} Gb;

void gb_input(Gb *g, const char *name, const int64_t *s);
void gb_output(Gb *g, const char *name, const int64_t *s);
/* A node with up to three inputs (NULL names end the list) and one output. */
void gb_node(Gb *g, const char *name, const char *op, const char *const *ins,
             const int64_t *const *ishapes, const char *out, const int64_t *oshape,
             const char *attrs);
/* conv2d node `name`: weights "NAME_w" [cout, cin/groups, kh, kw] (and "NAME_b" [cout] when
 * bias) declared and mapped as the exporter does (parameter p_NAME_w -> state_dict NAME_w). */
void gb_conv(Gb *g, const char *name, const char *x, const int64_t *xs, int64_t cout,
             int64_t groups, int64_t kh, int64_t kw, bool bias, const char *out, const int64_t *os,
             const char *attrs);
/* The graph's JSON with tensor `res` of shape rs as its output (static storage, valid until the
 * next call). */
const char *gb_json(const Gb *g, const char *res, const int64_t *rs);
/* Checks that graph in dtype ("fp32", "fp16", "bf16"), expecting a kernel of family `expect`
 * (vc_check_json); a channel-padded result is read through the depad kernel. */
double gb_check(const Gb *g, const char *res, const int64_t *rs, const char *dtype, double tol,
                const char *expect);

/* The dtypes of the checks and their tolerances: fp32, fp16, bf16. */
extern const char *const gb_dtypes[3];
extern const double gb_tols[3];

/* The activations the conv epilogue fuses (compiler/act.c), as the exporter writes them: relu,
 * relu6 (the op, and hardtanh(0, 6) as torchvision exports ReLU6), hardtanh with other
 * half-exact bounds, hardswish, hardsigmoid, silu, sigmoid, gelu (erf and tanh), tanh. */
typedef struct GbAct {
    const char *op, *attrs;
} GbAct;
extern const GbAct gb_acts[];
extern const int gb_nacts;

/* One conv: x [n, c, h, w] -> y [n, cout, oh, ow]. */
typedef struct ConvCase {
    int64_t n, c, h, w, cout, groups, kh, kw, sh, sw, ph, pw, dh, dw;
    bool bias;
    const char *pad_str; /* "same" / "valid" instead of ints */
    const char *expect;
    int lng; /* 1: only under `make test-long` (tu_long); 0: the quick suite's */
} ConvCase;
/* Its attributes (stride, padding, dilation; groups are gb_conv's) and output shape ys. */
void gb_conv_geom(const ConvCase *cc, char *attrs, size_t cap, int64_t ys[4]);
/* x -> conv -> y checked in dtypes t0 .. t1 - 1, when its set (quick or long) runs in this
 * suite (tu_here). */
void gb_conv_case(const ConvCase *cc, int t0, int t1);

/* The first conv2d-family kernel of plan p; fails the test when it has none. */
struct Plan;
struct PlanKernel;
const struct PlanKernel *gb_first_conv(const struct Plan *p);

#endif
