/*
 * src/data.c — the workspace: every per-body quantity the algorithms produce, allocated once per
 * model in one block, so that no algorithm allocates.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The block being laid out: its start (NULL while measuring) and the bytes used so far. */
typedef struct block_cursor {
    char *base;
    size_t used;
} block_cursor;

/* Carve `count` elements of `size` bytes from the block, 64-byte aligned. */
static void *carve(block_cursor *c, size_t count, size_t size)
{
    void *p = c->base ? c->base + c->used : NULL;
    c->used += (count * size + 63) & ~(size_t)63;
    return p;
}

/* Lay the workspace out from `base` (NULL: only measure); returns the bytes needed. */
static size_t layout(sd_data *d, const sd_model *m, char *base, int nbranch)
{
    const size_t n = (size_t)(m->n > 0 ? m->n : 1), nv = (size_t)(m->nv > 0 ? m->nv : 1);
    block_cursor cursor = {base, 0}, *c = &cursor;
    sd_data tmp;
    if (!d) d = &tmp;
    d->Xup = carve(c, n, sizeof(sd_transform));
    d->Xworld = carve(c, n, sizeof(sd_transform));
    d->S = carve(c, 6 * nv, sizeof(double));
    d->V = carve(c, 6 * n, sizeof(double));
    d->alpha = carve(c, 6 * n, sizeof(double));
    d->a = carve(c, 6 * n, sizeof(double));
    d->b = carve(c, 6 * n, sizeof(double));
    d->f = carve(c, 6 * n, sizeof(double));
    d->Rc = carve(c, 13 * n, sizeof(double));
    d->P = carve(c, 36 * n, sizeof(double));
    d->Pplus = carve(c, 36 * n, sizeof(double));
    d->U = carve(c, 6 * nv, sizeof(double));
    d->G = carve(c, 6 * nv, sizeof(double));
    d->Dchol = carve(c, 36 * n, sizeof(double));
    d->Dinv = carve(c, 36 * n, sizeof(double));
    d->z = carve(c, 6 * n, sizeof(double));
    d->zplus = carve(c, 6 * n, sizeof(double));
    d->alpha_plus = carve(c, 6 * n, sizeof(double));
    d->eps = carve(c, nv, sizeof(double));
    d->nu = carve(c, nv, sizeof(double));
    d->S_world = carve(c, 6 * nv, sizeof(double));
    d->G_world = carve(c, 6 * nv, sizeof(double));
    d->minv_z = carve(c, 6 * nv, sizeof(double));
    d->minv_alpha = carve(c, 6 * nv * (size_t)(nbranch + 1), sizeof(double));
    d->branch_slot = carve(c, n, sizeof(int));
    d->psi = carve(c, 36 * n, sizeof(double));
    d->Y = carve(c, 36 * n, sizeof(double));
    /* the dense reference path (Cholesky forward dynamics) only for models it can serve */
    d->dense = carve(c, nv <= SD_DENSE_MAX_NV ? nv * nv : 1, sizeof(double));
    d->prescribed_none = carve(c, n, 1);
    return c->used;
}

sd_data *sd_data_new(const sd_model *m)
{
    if (!m) return NULL;
    sd_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    /* bodies with two or more children keep their own copy of the per-column accelerations in
     * the M^-1 scatter (innovations.c); count them */
    int *children = calloc((size_t)(m->n > 0 ? m->n : 1), sizeof(int));
    if (!children) {
        free(d);
        return NULL;
    }
    for (int k = 0; k < m->n; ++k)
        if (m->parent[k] >= 0) children[m->parent[k]]++;
    int nbranch = 0;
    for (int k = 0; k < m->n; ++k) nbranch += children[k] >= 2;
    const size_t bytes = layout(NULL, m, NULL, nbranch);
    char *block = aligned_alloc(64, bytes);
    if (!block) {
        free(children);
        free(d);
        return NULL;
    }
    memset(block, 0, bytes);
    layout(d, m, block, nbranch);
    int slot = 0;
    for (int k = 0; k < m->n; ++k) d->branch_slot[k] = children[k] >= 2 ? slot++ : -1;
    free(children);
    d->model = m;
    if (m->loops && !(d->loops = sd_loops_data_new(m))) { /* closed-loop workspace (src/loops) */
        sd_data_free(d);
        return NULL;
    }
    return d;
}

void sd_data_free(sd_data *d)
{
    if (!d) return;
    sd_loops_data_free(d->loops);
    free(d->Xup); /* the first carve is the block's start */
    free(d);
}

const char *sd_data_error(const sd_data *d) { return d ? d->error : "no workspace"; }
