/*
 * src/embed/embed_data.c — the workspace of an embedding (sd_embedded_data, embed_internal.h): the
 * common fields here, each part's scratch from the file that owns it (closure: embed_closure.c;
 * nodes: embed_nodes.c; Riccati sweeps: embed_forward_dynamics.c; composite nodes:
 * embed_mass_matrix.c; tree-augmented rows: embed_mixed.c, NULL without them). Every evaluation
 * then runs without allocating.
 */
#include <stdlib.h>
#include <string.h>

#include "embed_internal.h"
#include "algorithms/node_engine.h"

sd_embedded_data *sd_embedded_data_new(const sd_embedding *e)
{
    if (!e) return NULL;
    const sd_model *m = e->model;
    sd_embedded_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->e = e;
    d->tree = sd_data_new(m);
    d->q = malloc((size_t)(m->nq + 1) * sizeof(double));
    d->u_tree = calloc((size_t)m->nv + 1, sizeof(double));
    d->qdd_c = calloc((size_t)m->nv + 1, sizeof(double));
    d->X = calloc((size_t)e->x_total + 1, sizeof(double));
    d->cond = calloc((size_t)e->naggs + 1, sizeof(double));
    d->closure = sd_embed_closure_ws_new(e);
    d->nodes = sd_embed_nodes_ws_new(e);
    d->fd = sd_embed_fd_ws_new(e);
    d->mixed = e->n_ta > 0 ? sd_embed_mixed_ws_new(e) : NULL;
    d->pres = sd_embed_pres_ws_new(e);
    d->proj = sd_embed_proj_ws_new(e);
    d->node_data = sd_data_new(e->node_model);
    /* The node model has a node workspace even when it holds no aggregate and no flexible body (every
     * constraint of the embedding tree-augmented): the embedding's motion copy writes the node masses
     * into it, and the sweeps then run their node instance on it. */
    if (d->node_data && !d->node_data->nodes) d->node_data->nodes = sd_node_data_new(e->node_model);
    d->nm = sd_embed_nm_ws_new(e);
    if (!d->tree || !d->q || !d->u_tree || !d->qdd_c || !d->X || !d->cond || !d->closure || !d->nodes || !d->fd ||
        (e->n_ta > 0 && !d->mixed) || !d->pres || !d->proj || !d->node_data ||
        !d->node_data->nodes || !d->nm || !sd_embed_aggregate_members_attach(e, d)) {
        sd_embedded_data_free(d);
        return NULL;
    }
    memcpy(d->q, e->q_start, (size_t)m->nq * sizeof(double));
    return d;
}

void sd_embedded_data_free(sd_embedded_data *d)
{
    if (!d) return;
    sd_embed_nm_ws_free(d->nm);
    sd_data_free(d->node_data);
    sd_embed_pres_ws_free(d->pres);
    sd_embed_proj_ws_free(d->proj);
    sd_embed_mixed_ws_free(d->mixed);
    sd_embed_fd_ws_free(d->fd);
    sd_embed_nodes_ws_free(d->nodes);
    sd_embed_closure_ws_free(d->closure);
    free(d->cond);
    free(d->X);
    free(d->qdd_c);
    free(d->u_tree);
    free(d->q);
    sd_data_free(d->tree);
    free(d);
}

sd_data *sd_embedded_tree_data(sd_embedded_data *d) { return d ? d->tree : NULL; }

const char *sd_embedded_error(const sd_embedded_data *d) { return d ? sd_data_error(d->tree) : ""; }
