/*
 * src/model/data.c — the workspace: every per-body quantity the algorithms produce, allocated once per
 * model in one block of O(N) size, so that no algorithm allocates. The one dense matrix an
 * algorithm needs besides its output (the O(N^3) reference forward dynamics' M) is allocated by that
 * algorithm's first call, sized by the model (cholesky_dynamics.c).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "algorithms/node_engine.h"

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
static size_t layout(sd_data *d, const sd_model *m, char *base)
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
    d->psi = carve(c, 36 * n, sizeof(double));
    d->Y = carve(c, 36 * n, sizeof(double));
    d->prescribed_none = carve(c, n, 1);
    d->hinge_sel = carve(c, n, 1);
    d->hinge_sgn = carve(c, n, sizeof(double));
    d->hinge_plane = carve(c, n, 1);
    return c->used;
}

sd_data *sd_data_new(const sd_model *m)
{
    if (!m) return NULL;
    sd_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    const size_t bytes = layout(NULL, m, NULL);
    char *block = aligned_alloc(64, bytes);
    if (!block) {
        free(d);
        return NULL;
    }
    memset(block, 0, bytes);
    layout(d, m, block);
    d->block_bytes = bytes;
    d->model = m;
    d->params_generation = m->params_generation;
    for (int k = 0; k < m->n; ++k) { /* what the rigid fast path exploits in each hinge (hinge.c) */
        d->hinge_sel[k] = (signed char)sd_hinge_select(m, k, &d->hinge_sgn[k]);
        d->hinge_plane[k] = (signed char)sd_plane_axis(m, k, d->hinge_sel[k]);
    }
    if (m->loops && !(d->loops = sd_loops_data_new(m))) { /* closed-loop workspace (src/loops) */
        sd_data_free(d);
        return NULL;
    }
    if (m->nflex && !(d->nodes = sd_node_data_new(m))) { /* the node engine's workspace */
        sd_data_free(d);
        return NULL;
    }
    return d;
}

void sd_data_free(sd_data *d)
{
    if (!d) return;
    sd_loops_data_free(d->loops);
    sd_node_data_free(d->nodes);
    free(d->dense);
    free(d->deriv);
    free(d->Xup); /* the first carve is the block's start */
    free(d);
}

size_t sd_data_size(const sd_data *d)
{
    if (!d) return 0;
    const size_t nv = (size_t)d->model->nv;
    return sizeof *d + d->block_bytes + (d->dense ? nv * nv * sizeof(double) : 0) + d->deriv_bytes +
           (d->nodes ? d->nodes->bytes : 0);
}

const char *sd_data_error(const sd_data *d) { return d ? d->error : "no workspace"; }
