#include "common/hazard.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

static int max_overlap(const HzSpan *v, int n, const HzSpan *x, int best)
{
    for (int i = 0; i < n; i++)
        if (v[i].buf == x->buf && v[i].lo < x->hi && x->lo < v[i].hi && v[i].tag > best)
            best = v[i].tag;
    return best;
}

int hz_conflict(const HzSet *s, const HzSpan *x, bool write)
{
    int best = max_overlap(s->wr, s->nwr, x, -1);
    return write ? max_overlap(s->rd, s->nrd, x, best) : best;
}

static Status push(HzSpan **v, int *n, int *cap, const HzSpan *x)
{
    HzSpan *nv = grow_array(*v, *n, cap, sizeof *nv, 64);
    if (!nv) return ST_NOMEM;
    *v = nv;
    (*v)[(*n)++] = *x;
    return ST_OK;
}

Status hz_add(HzSet *s, const HzSpan *x, bool write)
{
    return write ? push(&s->wr, &s->nwr, &s->capwr, x) : push(&s->rd, &s->nrd, &s->caprd, x);
}

void hz_clear(HzSet *s)
{
    s->nrd = s->nwr = 0;
}

void hz_free(HzSet *s)
{
    free(s->rd);
    free(s->wr);
    memset(s, 0, sizeof *s);
}
