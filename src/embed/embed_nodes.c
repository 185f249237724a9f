/*
 * src/embed/embed_nodes.c — each node's pieces for the sweeps over the embedded tree (000 Sec 5,
 * Eq 52-60; 004 Sec 8): the one place that knows whether a node is a rigid body or an aggregate.
 *
 * Glossary (embed_internal.h): W(s) (dim x 6) = phi*_S E*_S, the node's bodies' motion caused by a
 * unit motion of its parent body; Hbar*(s) (dim x ni) = phi*_S H*_S X_S (000 Eq 56); a_s (000 Eq
 * 59-60) and b_s the stacked Coriolis accelerations and gyroscopic forces minus f_ext; Jbar(s) =
 * X_S^T diag(armature) X_S and tau_j = N^T (tau_passive - J qdd_c), the joint-level terms moved onto
 * the node's own speeds.
 */
#include <stdlib.h>
#include <string.h>

#include "embed/embed_internal.h"

struct sd_embed_nodes_ws *sd_embed_nodes_ws_new(const sd_embedding *e)
{
    const sd_model *m = e->model;
    struct sd_embed_nodes_ws *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    int jb_total = 0;
    w->jb_off = malloc((size_t)(e->nnodes + 1) * sizeof(int));
    w->slot = malloc((size_t)(m->n + 1) * sizeof(int));
    if (!w->jb_off || !w->slot) goto fail;
    for (int s = 0; s < e->nnodes; ++s) {
        const sd_embed_node *nd = &e->nodes[s];
        w->jb_off[s] = jb_total;
        jb_total += nd->ni * nd->ni;
        for (int i = 0; i < nd->nb; ++i) w->slot[e->node_bodies[nd->body0 + i]] = e->vec_off[s] + 6 * i;
    }
    w->W = malloc((size_t)(6 * e->vec_total + 1) * sizeof(double));
    w->Hbar = malloc((size_t)(e->hbar_total + 1) * sizeof(double));
    w->a = malloc((size_t)(e->vec_total + 1) * sizeof(double));
    w->b = malloc((size_t)(e->vec_total + 1) * sizeof(double));
    w->Jbar = calloc((size_t)jb_total + 1, sizeof(double));
    w->tau_j = calloc((size_t)e->nv + 1, sizeof(double));
    w->passive = calloc((size_t)m->nv + 1, sizeof(double));
    if (!w->W || !w->Hbar || !w->a || !w->b || !w->Jbar || !w->tau_j || !w->passive) goto fail;
    return w;
fail:
    sd_embed_nodes_ws_free(w);
    return NULL;
}

void sd_embed_nodes_ws_free(struct sd_embed_nodes_ws *w)
{
    if (!w) return;
    free(w->W);
    free(w->Hbar);
    free(w->a);
    free(w->b);
    free(w->jb_off);
    free(w->Jbar);
    free(w->tau_j);
    free(w->slot);
    free(w->passive);
    free(w);
}
