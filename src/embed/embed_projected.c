/*
 * src/embed/embed_projected.c — the embedded mass matrix, inverse dynamics and bias forces of a model
 * with flexible bodies: the tree's own algorithms (the engine's Newton-Euler and composite bodies,
 * every node kind) projected on the embedded speeds by N = block-diag(I, X_S) (002 Eq 12, 20):
 *   tau_e = N^T tau_tree(q, N u, N qdd + Xdot_S u)    (the power of the tree forces on N u; the
 *                                                      embedded constraints' forces do no work on it)
 *   M_e   = N^T M_tree N
 * with the joint-level terms the tree's (the armature in M_tree and in tau_tree, the passive forces
 * and a flexible body's modal stiffness and damping in tau_tree), so these are the operators the
 * embedded forward dynamics inverts (sd_nodes_articulated on the node model, embed_node_model.c).
 * Why here and not in embed_mass_matrix.c's sweeps over nodes: those stack members as rigid bodies
 * (6 rows each); the projection reuses what the engine already does for flexible nodes, at O(N) per
 * inverse dynamics and O(nv^2 ne) for M_e (dense: a flexible model's tree M is dense anyway).
 */
#include <stdlib.h>
#include <string.h>

#include "embed/embed_internal.h"

struct sd_embed_proj_ws {
    double *qt;  /* model nv: tree accelerations N qdd + Xdot_S u */
    double *tau; /* model nv: the tree's inverse dynamics */
    double *M;   /* model nv^2: the tree's mass matrix */
    double *MN;  /* model nv x embedded nv: M_tree N, by columns */
    double *col; /* embedded nv: a unit vector */
};

struct sd_embed_proj_ws *sd_embed_proj_ws_new(const sd_embedding *e)
{
    const size_t nv = (size_t)e->model->nv + 1, ne = (size_t)e->nv + 1;
    struct sd_embed_proj_ws *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->qt = calloc(nv, sizeof(double));
    w->tau = calloc(nv, sizeof(double));
    w->M = calloc(nv * nv, sizeof(double));
    w->MN = calloc(nv * ne, sizeof(double));
    w->col = calloc(ne, sizeof(double));
    if (!w->qt || !w->tau || !w->M || !w->MN || !w->col) {
        sd_embed_proj_ws_free(w);
        return NULL;
    }
    return w;
}

void sd_embed_proj_ws_free(struct sd_embed_proj_ws *w)
{
    if (!w) return;
    free(w->qt);
    free(w->tau);
    free(w->M);
    free(w->MN);
    free(w->col);
    free(w);
}

sd_status sd_embed_projected_inverse_dynamics(const sd_embedding *e, sd_embedded_data *ed, const double *q,
                                              const double *u, const double *qdd, const double *f_ext, double *tau)
{
    const sd_model *m = e->model;
    struct sd_embed_proj_ws *w = ed->proj;
    sd_status st;
    if ((st = sd_embed_prepare(e, ed, q)) != SD_OK || (st = sd_embed_velocities(e, ed, u)) != SD_OK) return st;
    if (qdd) sd_embed_apply_N(e, ed, qdd, w->qt);
    else memset(w->qt, 0, (size_t)m->nv * sizeof(double));
    for (int j = 0; j < m->nv; ++j) w->qt[j] += ed->qdd_c[j]; /* + Xdot_S u (000 Eq 58) */
    if ((st = sd_inverse_dynamics(m, ed->tree, ed->q, ed->u_tree, w->qt, f_ext, w->tau)) != SD_OK) return st;
    sd_embed_apply_NT(e, ed, w->tau, tau);
    return SD_OK;
}

sd_status sd_embed_projected_mass_matrix(const sd_embedding *e, sd_embedded_data *ed, const double *q, double *M)
{
    const sd_model *m = e->model;
    struct sd_embed_proj_ws *w = ed->proj;
    const int nv = m->nv, ne = e->nv;
    sd_status st;
    if ((st = sd_embed_prepare(e, ed, q)) != SD_OK) return st;
    if ((st = sd_mass_matrix(m, ed->tree, ed->q, w->M)) != SD_OK) return st;
    for (int j = 0; j < ne; ++j) { /* column j of M_tree N: M_tree (N e_j) */
        double *mn = w->MN + (size_t)j * nv;
        memset(w->col, 0, (size_t)ne * sizeof(double));
        w->col[j] = 1.0;
        sd_embed_apply_N(e, ed, w->col, w->qt);
        for (int r = 0; r < nv; ++r) {
            double s = 0.0;
            for (int c = 0; c < nv; ++c) s += w->M[(size_t)r * nv + c] * w->qt[c];
            mn[r] = s;
        }
    }
    for (int j = 0; j < ne; ++j) { /* M_e column j = N^T (M_tree N e_j) */
        sd_embed_apply_NT(e, ed, w->MN + (size_t)j * nv, w->col);
        for (int i = 0; i < ne; ++i) M[(size_t)i * ne + j] = w->col[i];
    }
    for (int i = 0; i < ne; ++i) /* exact symmetry (the two products round differently) */
        for (int j = 0; j < i; ++j) {
            const double mean = 0.5 * (M[(size_t)i * ne + j] + M[(size_t)j * ne + i]);
            M[(size_t)i * ne + j] = M[(size_t)j * ne + i] = mean;
        }
    return SD_OK;
}
