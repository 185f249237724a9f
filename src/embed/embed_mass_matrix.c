/*
 * src/embed/embed_mass_matrix.c — the mass matrix of the embedded system by composite nodes, and
 * the inverse dynamics (and bias forces) by Newton-Euler over nodes (004 Sec 4-5 read with 000
 * Sec 5's aggregate nodes: each node s has the stacked per-body pieces W(s), Hbar*(s), a_s, b_s,
 * M_s of embed_nodes.c, so the recursions below never know a node's kind).
 */
#include <stdlib.h>

#include "embed/embed_internal.h"

/* The composite-node workspace (allocated once by sd_embedded_data_new, never on evaluation). */
struct sd_embed_crb_ws {
    double *R;     /* mat_total: composite inertia R(s), dim x dim row-major at mat_off[s] (004 Eq 20) */
    double *F;     /* max_dim * max_ni: R(s) Hbar*(s), the forces of a unit independent acceleration */
    double *Fc;    /* 2 * 6 * max_ni: that force reduced to the body a node hangs on, carried up */
    double *tmp;   /* 6 * max_dim: W(c)^T R(c) rows, and one node's scratch vector */
    double *alpha; /* vec_total: stacked accelerations of every node's bodies (own frames) */
    double *f;     /* vec_total: stacked net forces f'(s) on every node's bodies */
    int *pos;      /* per body: its block (0 .. nb-1) in its node's stacked vectors */
};

struct sd_embed_crb_ws *sd_embed_crb_ws_new(const sd_embedding *e)
{
    struct sd_embed_crb_ws *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    const int n = e->model->n;
    const size_t md = (size_t)(e->max_dim > 6 ? e->max_dim : 6), mi = (size_t)(e->max_ni > 1 ? e->max_ni : 1);
    w->R = malloc(sizeof(double) * (size_t)(e->mat_total > 0 ? e->mat_total : 1));
    w->F = malloc(sizeof(double) * md * mi);
    w->Fc = malloc(sizeof(double) * 12 * mi);
    w->tmp = malloc(sizeof(double) * 6 * md);
    w->alpha = malloc(sizeof(double) * (size_t)(e->vec_total > 0 ? e->vec_total : 1));
    w->f = malloc(sizeof(double) * (size_t)(e->vec_total > 0 ? e->vec_total : 1));
    w->pos = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!w->R || !w->F || !w->Fc || !w->tmp || !w->alpha || !w->f || !w->pos) {
        sd_embed_crb_ws_free(w);
        return NULL;
    }
    for (int s = 0; s < e->nnodes; ++s) {
        const sd_embed_node *nd = &e->nodes[s];
        for (int i = 0; i < nd->nb; ++i) w->pos[e->node_bodies[nd->body0 + i]] = i;
    }
    return w;
}

void sd_embed_crb_ws_free(struct sd_embed_crb_ws *w)
{
    if (!w) return;
    free(w->R);
    free(w->F);
    free(w->Fc);
    free(w->tmp);
    free(w->alpha);
    free(w->f);
    free(w->pos);
    free(w);
}
