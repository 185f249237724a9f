/*
 * src/embed/embed_projected.c — the embedded mass matrix, inverse dynamics and bias forces as the
 * tree's own algorithms (the engine's Newton-Euler and composite bodies, every node kind) projected
 * on the embedded speeds by N = block-diag(I, X_S) (000 Eq 58, 60; 002 Eq 12, 20):
 *   tau_e = N^T tau_tree(q, N u, N qdd + Xdot_S u)    (the power of the tree forces on N u; the
 *                                                      embedded constraints' forces do no work on it)
 *   M_e   = N^T M_tree N
 * The joint-level terms are the tree's: the armature J in M_tree and tau_tree gives Jbar = X_S^T J X_S
 * on M_e and X_S^T J Xdot_S u in C_e, the passive forces (springs, dampers, a flexible body's modal
 * stiffness and damping) are in tau_tree at (q, N u), so these are the operators the embedded forward
 * dynamics inverts (sd_nodes_articulated on the node model, embed_node_model.c).
 * Structure: N is the identity on the tree speeds outside aggregates and X_S (nt x ni) inside, so
 * column j of M_tree N is one row of M_tree (j outside) or X_S's column j mixing nt rows (inside):
 * O(nv^2 nt) beyond the tree's M, and N^T tau is O(nv nt) beyond the tree's inverse dynamics.
 */
#include <stdlib.h>
#include <string.h>

#include "embed/embed_internal.h"

struct sd_embed_proj_ws {
    double *qt;  /* model nv: tree accelerations N qdd + Xdot_S u; also a column of M_e (ne <= nv) */
    double *tau; /* model nv: the tree's inverse dynamics */
    double *M;   /* model nv^2: the tree's mass matrix */
    double *MN;  /* model nv x embedded nv: M_tree N, by columns */
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
    if (!w->qt || !w->tau || !w->M || !w->MN) {
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
    free(w);
}

/* The tree's inter-body forces after this are those of the tree without the embedded loops' cut
 * forces, not the embedded system's: SD_CURRENT_FORCES is cleared, so the readers refuse (the
 * embedded forward dynamics with interbody_forces gives them); the body accelerations stay current. */
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
    ed->tree->current &= ~(unsigned)SD_CURRENT_FORCES;
    sd_embed_apply_NT(e, ed, w->tau, tau);
    return SD_OK;
}

/* Column j of M_tree N into mn (model nv): M_tree is symmetric, so its rows are read (contiguous). */
static void tree_mass_times_N_column(const sd_embedding *e, const sd_embedded_data *ed, const double *Mt, int s,
                                     int c, double *mn)
{
    const int nv = e->model->nv;
    const sd_embed_node *nd = &e->nodes[s];
    const int *ts = e->tree_speeds + nd->t0;
    if (nd->kind == SD_EMBED_RIGID) { /* N e_j is the unit vector of tree speed ts[c] */
        memcpy(mn, Mt + (size_t)ts[c] * (size_t)nv, (size_t)nv * sizeof(double));
        return;
    }
    const double *X = ed->X + e->x_off[s];
    memset(mn, 0, (size_t)nv * sizeof(double));
    for (int t = 0; t < nd->nt; ++t) {
        const double x = X[t * nd->ni + c];
        if (x == 0.0) continue;
        const double *row = Mt + (size_t)ts[t] * (size_t)nv;
        for (int r = 0; r < nv; ++r) mn[r] += x * row[r];
    }
}

sd_status sd_embed_projected_mass_matrix(const sd_embedding *e, sd_embedded_data *ed, const double *q, double *M)
{
    const sd_model *m = e->model;
    struct sd_embed_proj_ws *w = ed->proj;
    const int nv = m->nv, ne = e->nv;
    sd_status st;
    if ((st = sd_embed_prepare(e, ed, q)) != SD_OK) return st;
    if ((st = sd_mass_matrix(m, ed->tree, ed->q, w->M)) != SD_OK) return st;
    for (int s = 0; s < e->nnodes; ++s)
        for (int c = 0; c < e->nodes[s].ni; ++c)
            tree_mass_times_N_column(e, ed, w->M, s, c, w->MN + (size_t)(e->nodes[s].v0 + c) * (size_t)nv);
    for (int j = 0; j < ne; ++j) { /* M_e column j = N^T (M_tree N e_j); row j by symmetry */
        sd_embed_apply_NT(e, ed, w->MN + (size_t)j * (size_t)nv, w->qt);
        for (int i = 0; i < ne; ++i) M[(size_t)i * (size_t)ne + (size_t)j] = w->qt[i];
    }
    for (int i = 0; i < ne; ++i) /* exact symmetry (the two products round differently) */
        for (int j = 0; j < i; ++j) {
            const double mean = 0.5 * (M[(size_t)i * ne + j] + M[(size_t)j * ne + i]);
            M[(size_t)i * ne + j] = M[(size_t)j * ne + i] = mean;
        }
    return SD_OK;
}
