/*
 * src/embed/embed_nodes.c — each node's pieces for the sweeps over the embedded tree (000 Sec 5,
 * Eq 52-60; 004 Sec 8): the one place that knows whether a node is a rigid body or an aggregate.
 *
 * Glossary (embed_internal.h): Hbar*(s) (dim x ni) = phi*_S H*_S X_S (000 Eq 56); a_s (000 Eq
 * 59-60) and b_s the stacked Coriolis accelerations and gyroscopic forces minus f_ext; Jbar(s) =
 * X_S^T diag(armature) X_S and tau_j = N^T (tau_passive - J qdd_c), the joint-level terms moved onto
 * the node's own speeds.
 */
#include <stdlib.h>
#include <string.h>

#include "algorithms/node_engine.h"
#include "embed/embed_internal.h"

struct sd_embed_nodes_ws *sd_embed_nodes_ws_new(const sd_embedding *e)
{
    const sd_model *m = e->model;
    struct sd_embed_nodes_ws *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    int jb_total = 0;
    w->jb_off = malloc((size_t)(e->nnodes + 1) * sizeof(int));
    w->slot = malloc((size_t)(m->n + 1) * sizeof(int));
    w->toff = malloc((size_t)(m->n + 1) * sizeof(int));
    if (!w->jb_off || !w->slot || !w->toff) goto fail;
    for (int s = 0; s < e->nnodes; ++s) {
        const sd_embed_node *nd = &e->nodes[s];
        w->jb_off[s] = jb_total;
        jb_total += nd->ni * nd->ni;
        for (int i = 0, t = 0; i < nd->nb; ++i) {
            const int k = e->node_bodies[nd->body0 + i];
            w->slot[k] = e->vec_off[s] + 6 * i;
            w->toff[k] = t;
            t += m->nv_k[k] + (m->n_modes ? m->n_modes[k] : 0);
        }
    }
    w->Hbar = malloc((size_t)(e->hbar_total + 1) * sizeof(double));
    w->a = malloc((size_t)(e->vec_total + 1) * sizeof(double));
    w->b = malloc((size_t)(e->vec_total + 1) * sizeof(double));
    w->Jbar = calloc((size_t)jb_total + 1, sizeof(double));
    w->tau_j = calloc((size_t)e->nv + 1, sizeof(double));
    w->passive = calloc((size_t)m->nv + 1, sizeof(double));
    if (!w->Hbar || !w->a || !w->b || !w->Jbar || !w->tau_j || !w->passive) goto fail;
    return w;
fail:
    sd_embed_nodes_ws_free(w);
    return NULL;
}

void sd_embed_nodes_ws_free(struct sd_embed_nodes_ws *w)
{
    if (!w) return;
    free(w->Hbar);
    free(w->a);
    free(w->b);
    free(w->jb_off);
    free(w->Jbar);
    free(w->tau_j);
    free(w->slot);
    free(w->toff);
    free(w->passive);
    free(w);
}

/* A rigid node: Hbar* = H*(k), a_s = a(k), b_s = b(k) - f_ext(k),
 * Jbar = diag(armature), tau_j = tau_passive(k). */
static void rigid_pieces(const sd_embedding *e, sd_embedded_data *ed, int s, int with_velocity, const double *f_ext)
{
    const sd_model *m = e->model;
    const sd_data *d = ed->tree;
    struct sd_embed_nodes_ws *w = ed->nodes;
    const sd_embed_node *nd = &e->nodes[s];
    const int k = e->node_bodies[nd->body0], nk = nd->ni, vk = m->v_index[k], o = e->vec_off[s];
    double *H = w->Hbar + e->hbar_off[s], *J = w->Jbar + w->jb_off[s];
    for (int r = 0; r < 6; ++r)
        for (int i = 0; i < nk; ++i) H[r * nk + i] = d->S[6 * (vk + i) + r];
    for (int i = 0; i < nk; ++i)
        for (int j = 0; j < nk; ++j) J[i * nk + j] = i == j ? m->armature[vk + i] : 0.0;
    if (!with_velocity) return;
    for (int r = 0; r < 6; ++r) {
        w->a[o + r] = d->a[6 * k + r];
        w->b[o + r] = d->b[6 * k + r] - (f_ext ? f_ext[6 * k + r] : 0.0);
    }
    for (int i = 0; i < nk; ++i) w->tau_j[nd->v0 + i] = 0.0; /* a flexible body's modes: none */
    if (m->has_passive) sd_passive_hinge(m, k, ed->q, ed->u_tree, w->tau_j + nd->v0);
}

/* An aggregate node S (000 Eq 52-60): bodies in ascending order, each after its parent, so one
 * forward pass over them is phi*_S applied to the stacked hinge terms. X_S is nt x ni at x_off.
 * A flexible member p's stacked velocity is [V_p; eta_p] (001 Eq 12): its modal speeds are among
 * the aggregate's tree speeds, always independent (embed_model.c), so eta_p = E_p u_s with E_p
 * X_S's rows of those speeds (identity rows) and its Coriolis part is X_S-dot's rows (qdd_c: zero).
 * The node's vectors keep V_p's 6 rows; E_p is read from X_S where it is needed (the mass,
 * embed_node_model.c). A member k riding on a node of p moves with p's modes by Y(k) = X(k <- N) S_t
 * (node_engine.h): Hbar*_k = phi*(k, p) Hbar*_p + Y(k) E_p + H*(k) (X_S)_k. */
static void aggregate_pieces(const sd_embedding *e, sd_embedded_data *ed, int s, int with_velocity,
                             const double *f_ext)
{
    const sd_model *m = e->model;
    const sd_data *d = ed->tree;
    struct sd_embed_nodes_ws *w = ed->nodes;
    const sd_embed_node *nd = &e->nodes[s];
    const int ni = nd->ni, nt = nd->nt, o = e->vec_off[s];
    const double *X = ed->X + e->x_off[s];
    double *H = w->Hbar + e->hbar_off[s];
    for (int bi = 0; bi < nd->nb; ++bi) {
        const int k = e->node_bodies[nd->body0 + bi], p = m->parent[k], nk = m->nv_k[k];
        const int inside = p >= 0 && e->node_of_body[p] == s;
        const int t = w->toff[k]; /* the body's first tree speed among the node's */
        /* riding on a node of a flexible member p: p's modal speeds move it by Y(k) (001 Eq 12-14) */
        const int on_node = inside && d->nodes && d->nodes->att_off[k] >= 0;
        const double *Yk = on_node ? d->nodes->Y + d->nodes->att_off[k] : NULL;
        const int nmp = on_node ? m->n_modes[p] : 0, tp = on_node ? w->toff[p] + m->nv_k[p] : 0;
        const double *S = d->S + 6 * m->v_index[k];
        const size_t row = (size_t)(w->slot[k] - o); /* the body's first row in the node */
        /* Hbar*_k column i = phi*(k, parent) Hbar*_parent + H*(k) (X_S)_k (000 Eq 56) */
        for (int i = 0; i < ni; ++i) {
            double in[6], out[6] = {0, 0, 0, 0, 0, 0};
            if (inside) {
                for (int r = 0; r < 6; ++r) in[r] = H[((size_t)(w->slot[p] - o) + r) * ni + i];
                sd_motion_to_child_plane(&d->Xup[k], d->hinge_plane[k], in, out);
            }
            for (int j = 0; j < nk; ++j)
                for (int r = 0; r < 6; ++r) out[r] += S[6 * j + r] * X[(t + j) * ni + i];
            for (int j = 0; j < nmp; ++j) /* + Y(k) E_p: E_p = X_S's rows of p's modal speeds */
                for (int r = 0; r < 6; ++r) out[r] += Yk[6 * j + r] * X[(tp + j) * ni + i];
            for (int r = 0; r < 6; ++r) H[(row + r) * ni + i] = out[r];
        }
        if (with_velocity) { /* a_s = phi*_S (a_S + H*_S Xdot_S u) (000 Eq 59-60), b_s = b - f_ext */
            double out[6] = {0, 0, 0, 0, 0, 0};
            if (inside) sd_motion_to_child_plane(&d->Xup[k], d->hinge_plane[k], w->a + w->slot[p], out);
            const double *qc = ed->qdd_c + m->v_index[k], *qcp = on_node ? ed->qdd_c + m->mode_v_index[p] : NULL;
            for (int r = 0; r < 6; ++r) {
                double v = out[r] + d->a[6 * k + r]; /* the tree's a(k): with the node frame's terms */
                for (int j = 0; j < nk; ++j) v += S[6 * j + r] * qc[j];
                for (int j = 0; j < nmp; ++j) v += Yk[6 * j + r] * qcp[j];
                w->a[w->slot[k] + r] = v;
                w->b[w->slot[k] + r] = d->b[6 * k + r] - (f_ext ? f_ext[6 * k + r] : 0.0);
            }
        }
    }
    /* joint-level terms on the node's tree speeds, moved onto its own: Jbar = X^T diag(J) X, and
     * tau_j = X^T (tau_passive - J qdd_c) (the armature's force at the dependent accelerations) */
    double *J = w->Jbar + w->jb_off[s], *tp = w->passive;
    const int *ts = e->tree_speeds + nd->t0;
    for (int i = 0; i < ni; ++i)
        for (int j = 0; j < ni; ++j) {
            double v = 0.0;
            for (int r = 0; r < nt; ++r) v += X[r * ni + i] * m->armature[ts[r]] * X[r * ni + j];
            J[i * ni + j] = v;
        }
    if (!with_velocity) return;
    for (int bi = 0, r = 0; bi < nd->nb; ++bi) { /* tau_passive per hinge, then - J qdd_c */
        const int k = e->node_bodies[nd->body0 + bi];
        if (m->has_passive) sd_passive_hinge(m, k, ed->q, ed->u_tree, tp + r);
        else
            for (int j = 0; j < m->nv_k[k]; ++j) tp[r + j] = 0.0;
        r += m->nv_k[k];
        /* a flexible member's modal speeds: their stiffness and damping are in its b_m (001 Eq 38-40) */
        for (int j = 0; j < (m->n_modes ? m->n_modes[k] : 0); ++j) tp[r++] = 0.0;
    }
    for (int r = 0; r < nt; ++r) tp[r] -= m->armature[ts[r]] * ed->qdd_c[ts[r]];
    for (int i = 0; i < ni; ++i) {
        double v = 0.0;
        for (int r = 0; r < nt; ++r) v += X[r * ni + i] * tp[r];
        w->tau_j[nd->v0 + i] = v;
    }
}

void sd_embed_node_pieces_without_w(const sd_embedding *e, sd_embedded_data *ed, int with_velocity,
                                    const double *f_ext)
{
    for (int s = 0; s < e->nnodes; ++s) {
        if (e->nodes[s].kind == SD_EMBED_RIGID) rigid_pieces(e, ed, s, with_velocity, f_ext);
        else aggregate_pieces(e, ed, s, with_velocity, f_ext);
    }
}
