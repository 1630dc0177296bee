/* Shape rules of data movement and tensor sources: views, cat, slice/select/split, expand,
 * index_copy, embedding, getitem, arange/full/zeros/ones. */
#include "compiler/shape/shape_int.h"

#include <math.h>
#include <string.h>

/* Largest size a computed dim may take (the reader's limit on declared dims). */
#define MAX_DIM ((int64_t)1 << 40)

Status shape_getitem(ShapeCtx *c)
{
    int64_t i;
    Status st = sh_int(c, "index", c->n->nin > 1, 0, &i);
    if (st != ST_OK) return st;
    if (i < -c->n->nin || i >= c->n->nin)
        return sh_err(c, NULL, "index %lld is out of range for %d inputs", (long long)i, c->n->nin);
    const GTensor *x = sh_in(c, (int)(i < 0 ? i + c->n->nin : i));
    return sh_set(c, x->rank, x->shape);
}

Status shape_embedding(ShapeCtx *c)
{
    const GTensor *w = sh_in(c, 0), *ids = sh_in(c, 1);
    char a[128];
    if (w->rank != 2)
        return sh_err(c, w->name, "weight must be 2-D [num_embeddings, dim], got %s",
                      shape_str(w->shape, w->rank, a, sizeof a));
    int64_t s[NPU_MAX_RANK + 1];
    memcpy(s, ids->shape, sizeof(int64_t) * (size_t)ids->rank);
    s[ids->rank] = w->shape[1];
    return sh_set(c, ids->rank + 1, s);
}

/* torch.cat skips legacy empty tensors of shape [0]; all others agree except along dim. */
Status shape_cat(ShapeCtx *c)
{
    int64_t dim;
    Status st = sh_int(c, "dim", false, 0, &dim);
    if (st != ST_OK) return st;
    const GTensor *ref = NULL;
    int d = 0;
    int64_t s[NPU_MAX_RANK];
    char a[128], b[128];
    for (int i = 0; i < c->n->nin; i++) {
        const GTensor *t = sh_in(c, i);
        if (t->rank == 1 && t->shape[0] == 0) continue;
        if (!ref) {
            ref = t;
            if (t->rank == 0)
                return sh_err(c, t->name,
                              "zero-dimensional tensor (at position %d) cannot be "
                              "concatenated",
                              i);
            d = norm_dim(dim, t->rank);
            if (d < 0)
                return sh_err(c, NULL, "dim %lld is out of range for tensors of rank %d",
                              (long long)dim, t->rank);
            memcpy(s, t->shape, sizeof(int64_t) * (size_t)t->rank);
            continue;
        }
        if (t->rank != ref->rank)
            return sh_err(c, t->name,
                          "tensors must have the same number of dimensions: got %d and %d",
                          ref->rank, t->rank);
        for (int j = 0; j < t->rank; j++) {
            if (j != d && t->shape[j] != ref->shape[j])
                return sh_err(c, t->name,
                              "sizes of tensors must match except in dimension %d: %s and %s "
                              "(tensor number %d in the list)",
                              d, shape_str(ref->shape, ref->rank, a, sizeof a),
                              shape_str(t->shape, t->rank, b, sizeof b), i);
        }
        s[d] += t->shape[d];
    }
    if (!ref) {
        int64_t z = 0;
        return sh_set(c, 1, &z);
    }
    return sh_set(c, ref->rank, s);
}

/* Clamps a python-style bound to [0, size] after counting negatives from the end. */
static int64_t clamp_bound(int64_t v, int64_t size)
{
    if (v < 0) v += size;
    return v < 0 ? 0 : v > size ? size : v;
}

Status shape_slice(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    if (x->rank == 0) return sh_err(c, x->name, "slice() cannot be applied to a 0-dim tensor");
    int d;
    int64_t start, end, step;
    Status st = sh_dim(c, "dim", false, 0, x->rank, &d);
    if (st == ST_OK) st = sh_int(c, "start", false, 0, &start);
    if (st == ST_OK) st = sh_int(c, "end", false, INT64_MAX, &end);
    if (st == ST_OK) st = sh_int(c, "step", false, 1, &step);
    if (st != ST_OK) return st;
    if (step < 1) return sh_err(c, NULL, "slice step must be positive, got %lld", (long long)step);
    int64_t size = x->shape[d];
    start = clamp_bound(start, size);
    end = clamp_bound(end, size);
    int64_t s[NPU_MAX_RANK];
    memcpy(s, x->shape, sizeof(int64_t) * (size_t)x->rank);
    s[d] = end > start ? (end - start - 1) / step + 1 : 0;
    return sh_set(c, x->rank, s);
}

bool shape_slice_box(const Node *n, int rank, const int64_t *shape, SliceBox *b, const char **why)
{
    static const char *const keys[] = {"dim", "start", "end", "step"};
    static const int64_t dflt[] = {0, 0, INT64_MAX, 1};
    int64_t v[4][NPU_MAX_RANK], size[NPU_MAX_RANK];
    int cnt = attr_present(n, "dim") ? attr_ints(n, "dim", v[0], NPU_MAX_RANK) : 1;
    if (cnt < 1 || cnt > NPU_MAX_RANK) {
        *why = "`dim` must be an int or a list of 1 to 8 ints";
        return false;
    }
    for (int a = 0; a < 4; a++)
        if (!attr_ints_n(n, keys[a], v[a], cnt, dflt[a])) {
            *why = "`dim`, `start`, `end` and `step` must be ints or lists of one length";
            return false;
        }
    memcpy(size, shape, sizeof(int64_t) * (size_t)rank);
    b->n = cnt;
    for (int i = 0; i < cnt; i++) {
        int d = norm_dim(v[0][i], rank);
        if (rank == 0 || d < 0 || v[3][i] < 1) {
            *why = "each slice needs a dim within the input's rank and a positive step";
            return false;
        }
        int64_t start = clamp_bound(v[1][i], size[d]), end = clamp_bound(v[2][i], size[d]);
        b->dim[i] = d;
        b->start[i] = start;
        b->step[i] = v[3][i];
        b->count[i] = size[d] = end > start ? (end - start - 1) / v[3][i] + 1 : 0;
    }
    return true;
}

int shape_split_sizes(const Node *n, int64_t size, int64_t *sizes, int max, const char **why)
{
    const Attr *a = node_attr(n, "split_sizes");
    if (!a || a->kind == ATTR_NONE) a = node_attr(n, "split_size");
    const Attr *ch = node_attr(n, "chunks");
    if ((!a || a->kind == ATTR_NONE) && ch && ch->kind == ATTR_INT) {
        /* torch.chunk: split_size = ceil(size / chunks), so fewer chunks may come out */
        if (ch->i < 1) {
            *why = "chunk expects `chunks` to be greater than 0";
            return -1;
        }
        a = ch;
    } else
        ch = NULL;
    if (!a || a->kind == ATTR_NONE) {
        *why = "needs `split_size` (an int or a list), `split_sizes` or `chunks`";
        return -1;
    }
    if (a->kind == ATTR_INT) {
        int64_t each = ch ? (size + ch->i - 1) / ch->i : a->i;
        if (ch && size == 0) each = 0;
        if (each < 0 || (each == 0 && size > 0)) {
            *why = "split_size must be positive (0 only for an empty dim)";
            return -1;
        }
        int64_t cnt = size == 0 ? 1 : (size + each - 1) / each;
        if (cnt > 64) {
            *why = "more than 64 chunks";
            return -1;
        }
        for (int64_t i = 0; i < cnt && i < max; i++)
            sizes[i] = i < cnt - 1 ? each : size - each * (cnt - 1);
        return (int)cnt;
    }
    if (a->kind != ATTR_INTS || a->n < 1 || a->n > 64) {
        *why = "the split sizes are not a list of 1 to 64 ints";
        return -1;
    }
    int64_t sum = 0;
    for (int i = 0; i < a->n; i++) {
        if (a->ints[i] < 0) {
            *why = "a split size is negative";
            return -1;
        }
        sum += a->ints[i];
        if (i < max) sizes[i] = a->ints[i];
    }
    if (sum != size) {
        *why = "the split sizes do not add up to the dim's size";
        return -1;
    }
    return a->n;
}

Status shape_split(ShapeCtx *c)
{
    int *rank = c->ranks;
    int64_t(*shape)[NPU_MAX_RANK] = c->shapes;
    const GTensor *x = sh_in(c, 0);
    if (x->rank == 0) return sh_err(c, x->name, "split() cannot be applied to a 0-dim tensor");
    int d;
    Status st = sh_dim(c, "dim", false, 0, x->rank, &d);
    if (st != ST_OK) return st;
    int64_t sizes[64];
    const char *why = NULL;
    int cnt = shape_split_sizes(c->n, x->shape[d], sizes, 64, &why);
    if (cnt < 0)
        return sh_err(c, NULL, "%s (dim %d has size %lld)", why, d, (long long)x->shape[d]);
    if (cnt != c->n->nout)
        return sh_err(c, NULL,
                      "produces %d outputs (chunks of dim %d, size %lld), the node declares %d",
                      cnt, d, (long long)x->shape[d], c->n->nout);
    for (int k = 0; k < cnt; k++) {
        rank[k] = x->rank;
        memcpy(shape[k], x->shape, sizeof(int64_t) * (size_t)x->rank);
        shape[k][d] = sizes[k];
    }
    return ST_OK;
}

Status shape_select(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    if (x->rank == 0) return sh_err(c, x->name, "select() cannot be applied to a 0-dim tensor");
    int d;
    int64_t idx;
    Status st = sh_dim(c, "dim", true, 0, x->rank, &d);
    if (st == ST_OK) st = sh_int(c, "index", true, 0, &idx);
    if (st != ST_OK) return st;
    if (idx < -x->shape[d] || idx >= x->shape[d])
        return sh_err(c, NULL, "index %lld out of range for tensor of size %lld at dimension %d",
                      (long long)idx, (long long)x->shape[d], d);
    int64_t s[NPU_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++)
        if (i != d) s[r++] = x->shape[i];
    return sh_set(c, r, s);
}

/* view/reshape/_unsafe_view: the target is `size` (view) or `shape` (reshape); one -1 is
 * inferred; element counts must agree. */
Status shape_view(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    const char *key = attr_present(c->n, "size") ? "size" : "shape";
    int64_t s[NPU_MAX_RANK];
    int k;
    char a[128];
    Status st = sh_ints(c, key, s, NPU_MAX_RANK, &k);
    if (st != ST_OK) return st;
    if (k < 0) return sh_err(c, NULL, "attribute 'size' (or 'shape') is required");
    int infer = -1;
    int64_t known = 1, numel = tensor_numel(x);
    for (int i = 0; i < k; i++) {
        if (s[i] == -1) {
            if (infer >= 0) return sh_err(c, NULL, "only one dimension can be inferred");
            infer = i;
        } else if (s[i] < 0 || s[i] > MAX_DIM) {
            return sh_err(c, NULL, "invalid shape dimension %lld", (long long)s[i]);
        } else if (s[i] && known > INT64_MAX / s[i]) {
            known = INT64_MAX; /* saturate: certainly not numel */
        } else {
            known *= s[i];
        }
    }
    if (infer >= 0) {
        if (known == 0)
            return sh_err(c, NULL,
                          "cannot reshape tensor of 0 elements into shape %s because "
                          "the unspecified dimension size -1 can be any value",
                          shape_str(s, k, a, sizeof a));
        if (numel % known == 0) {
            s[infer] = numel / known;
            known = numel;
        }
    }
    if (known != numel)
        return sh_err(c, x->name, "shape '%s' is invalid for input of size %lld",
                      shape_str(s, k, a, sizeof a), (long long)numel);
    return sh_set(c, k, s);
}

Status shape_flatten(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    int sd, ed;
    Status st = sh_dim(c, "start_dim", false, 0, x->rank, &sd);
    if (st == ST_OK) st = sh_dim(c, "end_dim", false, -1, x->rank, &ed);
    if (st != ST_OK) return st;
    if (x->rank == 0) {
        int64_t one = 1;
        return sh_set(c, 1, &one);
    }
    if (sd > ed)
        return sh_err(c, NULL,
                      "flatten() has invalid args: start_dim cannot come after "
                      "end_dim");
    int64_t s[NPU_MAX_RANK];
    int r = 0;
    for (int i = 0; i < sd; i++)
        s[r++] = x->shape[i];
    int64_t m = 1;
    for (int i = sd; i <= ed; i++)
        m *= x->shape[i];
    s[r++] = m;
    for (int i = ed + 1; i < x->rank; i++)
        s[r++] = x->shape[i];
    return sh_set(c, r, s);
}

Status shape_unsqueeze(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    int d;
    Status st = sh_dim(c, "dim", true, 0, x->rank + 1, &d);
    if (st != ST_OK) return st;
    int64_t s[NPU_MAX_RANK + 1];
    for (int i = 0, j = 0; i <= x->rank; i++)
        s[i] = i == d ? 1 : x->shape[j++];
    return sh_set(c, x->rank + 1, s);
}

/* squeeze.dim / squeeze.dims drop the named dims that have size 1 (others stay); squeeze.default
 * drops every size-1 dim. */
Status shape_squeeze(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    const char *key = attr_present(c->n, "dims") ? "dims" : "dim";
    int64_t dims[NPU_MAX_RANK];
    int k;
    Status st = sh_ints(c, key, dims, NPU_MAX_RANK, &k);
    if (st != ST_OK) return st;
    bool drop[NPU_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        drop[i] = k < 0 && x->shape[i] == 1;
    for (int i = 0; i < k; i++) {
        int d = norm_dim(dims[i], x->rank);
        int r = x->rank > 0 ? x->rank : 1;
        if (d < 0)
            return sh_err(c, NULL, "dim %lld is out of range (expected to be in range of [%d, %d])",
                          (long long)dims[i], -r, r - 1);
        if (x->rank > 0 && x->shape[d] == 1) drop[d] = true;
    }
    int64_t s[NPU_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++)
        if (!drop[i]) s[r++] = x->shape[i];
    return sh_set(c, r, s);
}

Status shape_permute(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    int64_t dims[NPU_MAX_RANK];
    int k;
    Status st = sh_ints(c, "dims", dims, NPU_MAX_RANK, &k);
    if (st != ST_OK) return st;
    if (k < 0) return sh_err(c, NULL, "attribute 'dims' is required");
    if (k != x->rank)
        return sh_err(c, NULL,
                      "number of dims don't match in permute: the input has %d, dims has "
                      "%d",
                      x->rank, k);
    bool seen[NPU_MAX_RANK] = {false};
    int64_t s[NPU_MAX_RANK];
    for (int i = 0; i < k; i++) {
        int d = norm_dim(dims[i], x->rank);
        if (d < 0)
            return sh_err(c, NULL, "dim %lld is out of range for a tensor of rank %d",
                          (long long)dims[i], x->rank);
        if (seen[d]) return sh_err(c, NULL, "repeated dim %d in permute", d);
        seen[d] = true;
        s[i] = x->shape[d];
    }
    return sh_set(c, k, s);
}

Status shape_transpose(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    int d0, d1;
    Status st = sh_dim(c, "dim0", true, 0, x->rank, &d0);
    if (st == ST_OK) st = sh_dim(c, "dim1", true, 0, x->rank, &d1);
    if (st != ST_OK) return st;
    int64_t s[NPU_MAX_RANK];
    memcpy(s, x->shape, sizeof(int64_t) * (size_t)x->rank);
    if (x->rank > 0) {
        s[d0] = x->shape[d1];
        s[d1] = x->shape[d0];
    }
    return sh_set(c, x->rank, s);
}

Status shape_expand(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    int64_t s[NPU_MAX_RANK];
    int k;
    Status st = sh_ints(c, "size", s, NPU_MAX_RANK, &k);
    if (st != ST_OK) return st;
    if (k < 0) return sh_err(c, NULL, "attribute 'size' is required");
    if (k < x->rank)
        return sh_err(c, NULL,
                      "the number of sizes provided (%d) must be greater or equal to the "
                      "number of dimensions in the tensor (%d)",
                      k, x->rank);
    int lead = k - x->rank;
    for (int i = 0; i < k; i++) {
        if (s[i] < -1 || s[i] > MAX_DIM)
            return sh_err(c, NULL, "invalid size %lld at dim %d", (long long)s[i], i);
        if (i < lead) {
            if (s[i] == -1)
                return sh_err(c, NULL,
                              "the expanded size -1 isn't allowed in a leading, "
                              "non-existing dimension %d",
                              i);
            continue;
        }
        int64_t have = x->shape[i - lead];
        if (s[i] == -1)
            s[i] = have;
        else if (have != 1 && have != s[i])
            return sh_err(c, x->name,
                          "the expanded size of the tensor (%lld) must match the existing size "
                          "(%lld) at non-singleton dimension %d",
                          (long long)s[i], (long long)have, i);
    }
    return sh_set(c, k, s);
}

/* copy(self, src): self's shape; src must broadcast to it without changing it. */
Status shape_copy(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    Status st = sh_expands_to(c, sh_in(c, 1), x->rank, x->shape, "src", "self's shape");
    return st != ST_OK ? st : sh_set(c, x->rank, x->shape);
}

Status shape_index_copy(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0), *idx = sh_in(c, 1), *src = sh_in(c, 2);
    int d;
    char a[128], b[128];
    Status st = sh_dim(c, "dim", true, 0, x->rank, &d);
    if (st != ST_OK) return st;
    if (idx->rank > 1)
        return sh_err(c, idx->name, "index should have dimension 1 or 0, got %d", idx->rank);
    if (src->rank != x->rank && !(x->rank <= 1 && src->rank <= 1))
        return sh_err(c, src->name,
                      "source dimensionality (%d) must match destination "
                      "dimensionality (%d)",
                      src->rank, x->rank);
    int64_t nsrc = src->rank > 0 ? src->shape[src->rank == x->rank ? d : 0] : 1;
    if (tensor_numel(idx) != nsrc)
        return sh_err(c, idx->name,
                      "number of indices (%lld) should be equal to source.size(dim) (%lld)",
                      (long long)tensor_numel(idx), (long long)nsrc);
    for (int i = 0; src->rank == x->rank && i < x->rank; i++) {
        if (i != d && src->shape[i] != x->shape[i])
            return sh_err(c, src->name,
                          "source %s and destination %s must have the same slice "
                          "shapes (they differ at dim %d)",
                          shape_str(src->shape, src->rank, a, sizeof a),
                          shape_str(x->shape, x->rank, b, sizeof b), i);
    }
    return sh_set(c, x->rank, x->shape);
}

/* A numeric scalar attribute (int, float or bool). */
static Status num_attr(ShapeCtx *c, const char *key, bool required, double dflt, double *out)
{
    const Attr *a = node_attr(c->n, key);
    *out = dflt;
    if (!a || a->kind == ATTR_NONE) {
        if (required) return sh_err(c, NULL, "attribute '%s' is required", key);
        return ST_OK;
    }
    if (a->kind != ATTR_INT && a->kind != ATTR_FLOAT && a->kind != ATTR_BOOL)
        return sh_err(c, NULL, "attribute '%s' must be a number", key);
    *out = a->kind == ATTR_FLOAT ? a->f : (double)a->i;
    return ST_OK;
}

/* Length ceil((end - start) / step), as ATen computes it in double. */
Status shape_arange(ShapeCtx *c)
{
    double start, end, step;
    Status st = num_attr(c, "start", false, 0, &start);
    if (st == ST_OK) st = num_attr(c, "end", true, 0, &end);
    if (st == ST_OK) st = num_attr(c, "step", false, 1, &step);
    if (st != ST_OK) return st;
    if (!isfinite(start) || !isfinite(end))
        return sh_err(c, NULL, "unsupported range: %g -> %g", start, end);
    if (step == 0 || !isfinite(step)) return sh_err(c, NULL, "step must be nonzero and finite");
    if ((step > 0 && end < start) || (step < 0 && end > start))
        return sh_err(c, NULL, "upper bound and larger bound inconsistent with step sign");
    double len = ceil((end - start) / step);
    if (len > (double)MAX_DIM) return sh_err(c, NULL, "the range has too many elements");
    int64_t n = (int64_t)len;
    return sh_set(c, 1, &n);
}

Status shape_filled(ShapeCtx *c)
{
    int64_t s[NPU_MAX_RANK];
    int k;
    Status st = sh_ints(c, "size", s, NPU_MAX_RANK, &k);
    if (st != ST_OK) return st;
    if (k < 0) return sh_err(c, NULL, "attribute 'size' is required");
    for (int i = 0; i < k; i++)
        if (s[i] < 0 || s[i] > MAX_DIM)
            return sh_err(c, NULL, "invalid size %lld at dim %d", (long long)s[i], i);
    if (c->n->op == OP_FULL) {
        double v;
        if ((st = num_attr(c, "fill_value", true, 0, &v)) != ST_OK) return st;
    }
    return sh_set(c, k, s);
}
