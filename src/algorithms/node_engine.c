/*
 * src/algorithms/node_engine.c — the node engine's workspace (node_engine.h): node sizes and offsets,
 * and every array the sweeps write, carved from one block so that no algorithm allocates.
 */
#include <stdlib.h>
#include <string.h>

#include "node_engine.h"

/* The block being laid out: its start (NULL while measuring) and the bytes used so far. */
typedef struct block_cursor {
    char *base;
    size_t used;
} block_cursor;

/* Carve `count` elements of `size` bytes (at least one), 64-byte aligned. */
static void *carve(block_cursor *c, size_t count, size_t size)
{
    void *p = c->base ? c->base + c->used : NULL;
    c->used += ((count > 0 ? count : 1) * size + 63) & ~(size_t)63;
    return p;
}

static int modes_of(const sd_model *m, int k) { return m->n_modes ? m->n_modes[k] : 0; }

/* Lay the workspace out from `base` (NULL: only measure) into nd; the sizes (dim, offsets, totals)
 * must already be in `sizes`. Returns the bytes needed. */
static size_t layout(struct sd_node_data *nd, const struct sd_node_data *sizes, const sd_model *m, char *base)
{
    const size_t n = (size_t)m->n, nv = (size_t)m->nv, nq = (size_t)m->nq;
    const size_t vt = (size_t)sizes->vec_total, mt = (size_t)sizes->mat_total, at = (size_t)sizes->att_total;
    block_cursor cursor = {base, 0}, *c = &cursor;
    nd->dim = carve(c, n, sizeof(int));
    nd->vec_off = carve(c, n, sizeof(int));
    nd->mat_off = carve(c, n, sizeof(int));
    nd->att_off = carve(c, n, sizeof(int));
    nd->Y = carve(c, at, sizeof(double));
    nd->node_pose = carve(c, 12 * n, sizeof(double));
    nd->q = carve(c, nq, sizeof(double));
    nd->u = carve(c, nv, sizeof(double));
    nd->Vm = carve(c, vt, sizeof(double));
    nd->am = carve(c, vt, sizeof(double));
    nd->bm = carve(c, vt, sizeof(double));
    nd->Mm = carve(c, mt, sizeof(double));
    nd->alpha_m = carve(c, vt, sizeof(double));
    nd->fm = carve(c, vt, sizeof(double));
    nd->R = carve(c, mt, sizeof(double));
    nd->Yw = carve(c, at, sizeof(double));
    nd->ST = carve(c, 6 * nv, sizeof(double));
    nd->P = carve(c, mt, sizeof(double));
    nd->Dfchol = carve(c, mt, sizeof(double));
    nd->g = carve(c, mt, sizeof(double));
    nd->zm = carve(c, vt, sizeof(double));
    nd->eps_f = carve(c, nv, sizeof(double));
    nd->nu_f = carve(c, nv, sizeof(double));
    nd->scratch = carve(c, vt + mt, sizeof(double));
    return c->used;
}

struct sd_node_data *sd_node_data_new(const sd_model *m)
{
    if (!m) return NULL;
    struct sd_node_data sizes;
    memset(&sizes, 0, sizeof sizes);
    /* sizes first: the totals decide the block */
    size_t vt = 0, mt = 0, at = 0;
    for (int k = 0; k < m->n; ++k) {
        const size_t dim = 6 + (size_t)modes_of(m, k);
        vt += dim;
        mt += dim * dim;
        const int p = m->parent[k];
        if (p >= 0 && m->parent_node && m->parent_node[k] >= 0 && modes_of(m, p) > 0) at += 6 * (size_t)modes_of(m, p);
        if ((int)dim > sizes.max_dim) sizes.max_dim = (int)dim;
    }
    if (vt > (size_t)INT32_MAX || mt > (size_t)INT32_MAX || at > (size_t)INT32_MAX) return NULL;
    sizes.vec_total = (int)vt;
    sizes.mat_total = (int)mt;
    sizes.att_total = (int)at;
    struct sd_node_data *nd = calloc(1, sizeof *nd);
    if (!nd) return NULL;
    const size_t bytes = layout(nd, &sizes, m, NULL);
    char *block = aligned_alloc(64, bytes);
    if (!block) {
        free(nd);
        return NULL;
    }
    memset(block, 0, bytes);
    layout(nd, &sizes, m, block);
    nd->vec_total = sizes.vec_total;
    nd->mat_total = sizes.mat_total;
    nd->att_total = sizes.att_total;
    nd->max_dim = sizes.max_dim;
    nd->bytes = sizeof *nd + bytes;
    int vo = 0, mo = 0, ao = 0;
    for (int k = 0; k < m->n; ++k) {
        const int dim = 6 + modes_of(m, k), p = m->parent[k];
        nd->dim[k] = dim;
        nd->vec_off[k] = vo;
        nd->mat_off[k] = mo;
        vo += dim;
        mo += dim * dim;
        nd->att_off[k] = -1;
        if (p >= 0 && m->parent_node && m->parent_node[k] >= 0 && modes_of(m, p) > 0) {
            nd->att_off[k] = ao;
            ao += 6 * modes_of(m, p);
        }
        sd_transform_identity((sd_transform *)(nd->node_pose + 12 * k));
    }
    return nd;
}

void sd_node_data_free(struct sd_node_data *nd)
{
    if (!nd) return;
    free(nd->dim); /* the first carve is the block's start */
    free(nd);
}
