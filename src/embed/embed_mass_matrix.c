/*
 * src/embed/embed_mass_matrix.c — the mass matrix of the embedded system by composite nodes, and
 * the inverse dynamics (and bias forces) by Newton-Euler over nodes (004 Sec 4-5 read with 000
 * Sec 5's aggregate nodes: each node s has the stacked per-body pieces W(s), Hbar*(s), a_s, b_s,
 * M_s of embed_nodes.c, so the recursions below never know a node's kind).
 */
#include <stdlib.h>
#include <string.h>

#include "embed/embed_internal.h"

/* The composite-node workspace (allocated once by sd_embedded_data_new, never on evaluation). */
struct sd_embed_crb_ws {
    double *R;     /* mat_total: composite inertia R(s), dim x dim row-major at mat_off[s] (004 Eq 20) */
    double *F;     /* max_ni x max_dim: R(s) Hbar*(s) by columns, the forces of a unit independent acceleration */
    double *Fc;    /* 2 x max_ni x 6: those forces reduced to the body a node hangs on, carried up (by columns) */
    double *tmp;   /* 6 * max_dim: R(s) W(s) (dim x 6), for the W^T R W handed to the parent */
    double *alpha; /* vec_total: stacked accelerations of every node's bodies (own frames) */
    double *f;     /* vec_total: stacked net forces f'(s) on every node's bodies */
};

struct sd_embed_crb_ws *sd_embed_crb_ws_new(const sd_embedding *e)
{
    struct sd_embed_crb_ws *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    const size_t md = (size_t)(e->max_dim > 6 ? e->max_dim : 6), mi = (size_t)(e->max_ni > 1 ? e->max_ni : 1);
    w->R = malloc(sizeof(double) * (size_t)(e->mat_total > 0 ? e->mat_total : 1));
    w->F = malloc(sizeof(double) * md * mi);
    w->Fc = malloc(sizeof(double) * 12 * mi);
    w->tmp = malloc(sizeof(double) * 6 * md);
    w->alpha = malloc(sizeof(double) * (size_t)(e->vec_total > 0 ? e->vec_total : 1));
    w->f = malloc(sizeof(double) * (size_t)(e->vec_total > 0 ? e->vec_total : 1));
    if (!w->R || !w->F || !w->Fc || !w->tmp || !w->alpha || !w->f) {
        sd_embed_crb_ws_free(w);
        return NULL;
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
    free(w);
}

/* ---------------------------------------------------------------- shared pieces */

/* The checks every call here starts with: the embedding and its workspace made for each other,
 * q given, and the inputs finite (ed->tree's error names the argument and its index). */
static sd_status check_call(const sd_embedding *e, sd_embedded_data *ed, const char *fn, const double *q,
                            const double *u, const double *qdd, const double *f_ext, const double *out)
{
    if (!e || !ed) return SD_E_ARGUMENT;
    if (ed->e != e) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: the workspace belongs to another embedding", fn);
    if (!q) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: NULL q", fn);
    if (!out) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: NULL output", fn);
    const sd_model *m = e->model;
    sd_status st;
    if ((st = sd_check_input(ed->tree, fn, "q", q, m->nq)) != SD_OK) return st;
    if ((st = sd_check_input(ed->tree, fn, "u", u, e->nv)) != SD_OK) return st;
    if ((st = sd_check_input(ed->tree, fn, "qdd", qdd, e->nv)) != SD_OK) return st;
    return sd_check_input(ed->tree, fn, "f_ext", f_ext, 6 * m->n);
}

/* M_s: the node's bodies' spatial inertias (each about its own origin, in its own frame) on the
 * diagonal blocks of a dim x dim matrix, zero elsewhere (000 Sec 5.5: the sub-block of M). */
static void node_inertia(const sd_embedding *e, int s, double *Rs)
{
    const sd_embed_node *nd = &e->nodes[s];
    const int dim = nd->dim;
    memset(Rs, 0, sizeof(double) * (size_t)dim * (size_t)dim);
    for (int i = 0; i < nd->nb; ++i) {
        double M6[36];
        sd_rigid_inertia_to_sym6(e->model->rigid + 13 * e->node_bodies[nd->body0 + i], M6);
        for (int r = 0; r < 6; ++r)
            for (int c = 0; c < 6; ++c) Rs[(size_t)(6 * i + r) * (size_t)dim + (size_t)(6 * i + c)] = M6[6 * r + c];
    }
}

/* ---------------------------------------------------------------- mass matrix */

/* 004 Alg 4.2 over nodes. R(s) = M_s + sum over child nodes c (hanging on body j of s) of
 * W(c)^T R(c) W(c) into block (j, j) (004 Eq 20 with A(k, i) = W(c)^T, the aggregate's
 * E_S phi_S of 000 Eq 62's last line); M_e(s, s) = Hbar R(s) Hbar* + Jbar(s) (Jbar: the armature of
 * the node's tree speeds, X_S^T J X_S, which acts on hinge speeds only and so couples no nodes);
 * X = R(s) Hbar*(s) is the force a unit independent acceleration of s needs on its bodies, with
 * every other node at rest; reduced to the body j it hangs on (W(s)^T X) it is the only force on
 * the ancestor node p, so M_e(p, s) = Hbar(p)^T [W(s)^T X at block j] and the force carried on
 * is W(p)^T of the same (004 Alg 4.2's inner loop, X(l) = phi(l, j) X(j)). */
sd_status sd_embedded_mass_matrix(const sd_embedding *e, sd_embedded_data *ed, const double *q, double *M)
{
    const char *fn = "sd_embedded_mass_matrix";
    sd_status st = check_call(e, ed, fn, q, NULL, NULL, NULL, M);
    if (st != SD_OK) return st;
    if (e->model->nflex > 0) { /* the tree's M, projected (embed_projected.c) */
        if ((st = sd_embed_projected_mass_matrix(e, ed, q, M)) != SD_OK) return st;
        return sd_check_output(ed->tree, fn, "M", M, (size_t)e->nv * (size_t)e->nv, SD_CAUSE_OVERFLOW);
    }
    if ((st = sd_embed_prepare(e, ed, q)) != SD_OK) return st;
    sd_embed_node_pieces(e, ed, 0, NULL);
    const struct sd_embed_nodes_ws *np = ed->nodes;
    struct sd_embed_crb_ws *w = ed->crb;
    const int nv = e->nv;
    memset(M, 0, sizeof(double) * (size_t)nv * (size_t)nv);
    for (int s = 0; s < e->nnodes; ++s) node_inertia(e, s, w->R + e->mat_off[s]);
    for (int s = e->nnodes - 1; s >= 0; --s) { /* tips-to-base gather */
        const sd_embed_node *nd = &e->nodes[s];
        const int dim = nd->dim, ni = nd->ni;
        const double *Rs = w->R + e->mat_off[s], *Hs = np->Hbar + e->hbar_off[s];
        const double *Ws = np->W + 6 * (size_t)e->vec_off[s];
        /* X = R(s) Hbar*(s), held by columns (ni x dim: column c = R Hbar* e_c, R symmetric, so a
         * sum of R's rows: the inner loops run over contiguous rows) */
        double *X = w->F;
        for (int c = 0; c < ni; ++c) {
            double *x = X + (size_t)c * (size_t)dim;
            memset(x, 0, sizeof(double) * (size_t)dim);
            for (int k = 0; k < dim; ++k) {
                const double h = Hs[(size_t)k * (size_t)ni + (size_t)c];
                const double *Rk = Rs + (size_t)k * (size_t)dim;
                for (int r = 0; r < dim; ++r) x[r] += h * Rk[r];
            }
        }
        /* M_e(s, s) = Hbar X + Jbar */
        const double *Jb = np->Jbar + np->jb_off[s];
        for (int r = 0; r < ni; ++r)
            for (int c = 0; c < ni; ++c) {
                const double *x = X + (size_t)c * (size_t)dim;
                double acc = Jb[r * ni + c];
                for (int k = 0; k < dim; ++k) acc += Hs[(size_t)k * (size_t)ni + (size_t)r] * x[k];
                M[(size_t)(nd->v0 + r) * (size_t)nv + (size_t)(nd->v0 + c)] = acc;
            }
        if (nd->parent_node < 0) continue;
        /* each column reduced to the parent body: fc = W(s)^T x (6 per column) */
        double *Fc = w->Fc, *Fn = w->Fc + 6 * (size_t)(ni > 0 ? ni : 1);
        for (int c = 0; c < ni; ++c) {
            const double *x = X + (size_t)c * (size_t)dim;
            double acc[6] = {0, 0, 0, 0, 0, 0};
            for (int k = 0; k < dim; ++k)
                for (int r = 0; r < 6; ++r) acc[r] += x[k] * Ws[6 * (size_t)k + (size_t)r];
            memcpy(Fc + 6 * c, acc, sizeof acc);
        }
        for (int p = nd->parent_node, j = nd->parent_body; p >= 0;) { /* the ancestors' rows */
            const sd_embed_node *pn = &e->nodes[p];
            const int b = (np->slot[j] - e->vec_off[p]) / 6, np_i = pn->ni; /* j's block in p */
            const double *Hp = np->Hbar + e->hbar_off[p] + (size_t)(6 * b) * (size_t)np_i;
            const double *Wp = np->W + 6 * (size_t)e->vec_off[p] + 36 * (size_t)b;
            for (int c = 0; c < ni; ++c) {
                const double *fc = Fc + 6 * c;
                for (int r = 0; r < np_i; ++r) {
                    double acc = 0.0;
                    for (int k = 0; k < 6; ++k) acc += Hp[k * np_i + r] * fc[k];
                    M[(size_t)(pn->v0 + r) * (size_t)nv + (size_t)(nd->v0 + c)] = acc;
                    M[(size_t)(nd->v0 + c) * (size_t)nv + (size_t)(pn->v0 + r)] = acc;
                }
            }
            if (pn->parent_node < 0) break;
            for (int c = 0; c < ni; ++c) { /* fc <- W(p)^T fc at block j */
                const double *fc = Fc + 6 * c;
                double acc[6] = {0, 0, 0, 0, 0, 0};
                for (int k = 0; k < 6; ++k)
                    for (int r = 0; r < 6; ++r) acc[r] += fc[k] * Wp[6 * k + r];
                memcpy(Fn + 6 * c, acc, sizeof acc);
            }
            double *t = Fc;
            Fc = Fn;
            Fn = t;
            j = pn->parent_body;
            p = pn->parent_node;
        }
        /* R(parent) block (j, j) += W(s)^T R(s) W(s) (004 Eq 20), RW = R(s) W(s) first (dim x 6) */
        double *RW = w->tmp;
        for (int r = 0; r < dim; ++r) {
            double acc[6] = {0, 0, 0, 0, 0, 0};
            const double *Rr = Rs + (size_t)r * (size_t)dim;
            for (int k = 0; k < dim; ++k)
                for (int c = 0; c < 6; ++c) acc[c] += Rr[k] * Ws[6 * (size_t)k + (size_t)c];
            memcpy(RW + 6 * (size_t)r, acc, sizeof acc);
        }
        double acc[36] = {0};
        for (int k = 0; k < dim; ++k)
            for (int r = 0; r < 6; ++r) {
                const double wkr = Ws[6 * (size_t)k + (size_t)r];
                for (int c = 0; c < 6; ++c) acc[6 * r + c] += wkr * RW[6 * (size_t)k + (size_t)c];
            }
        const sd_embed_node *pn = &e->nodes[nd->parent_node];
        const int b = (np->slot[nd->parent_body] - e->vec_off[nd->parent_node]) / 6;
        double *Rp = w->R + e->mat_off[nd->parent_node] + (size_t)(6 * b) * (size_t)pn->dim + (size_t)(6 * b);
        for (int r = 0; r < 6; ++r)
            for (int c = 0; c < 6; ++c) Rp[(size_t)r * (size_t)pn->dim + (size_t)c] += acc[6 * r + c];
    }
    if (sd_all_finite(M, (size_t)nv * (size_t)nv)) return SD_OK;
    return sd_check_output(ed->tree, fn, "M", M, (size_t)nv * (size_t)nv, SD_CAUSE_OVERFLOW);
}

/* ---------------------------------------------------------------- Newton-Euler over nodes */

/* 004 Alg 3.1 over nodes, with 000 Eq 59-61 at aggregates. Scatter: alpha_s = W(s) alpha(parent
 * body) + Hbar*(s) qdd_s + a_s (000 Eq 59: a_s holds phi*_S (a_S + H*_S Xdot_S u)), the base's
 * parent moving at -g so that f includes weight; f'_s = M_s alpha_s + b_s. Gather: f'_s += the
 * children's W(c)^T f'_c at the body c hangs on (000 Eq 61's first line), T_s = Hbar f'_s (Eq 61's
 * third), plus the joint-level terms Jbar qdd_s - tau_j (armature on X qdd; the armature's part on
 * Xdot u and the passive forces are in tau_j). qdd NULL: zero (the bias forces). The stacked alpha
 * is also left per body in the tree workspace. */
static void newton_euler_nodes(const sd_embedding *e, sd_embedded_data *ed, const double *qdd, double *tau)
{
    const sd_model *m = e->model;
    const struct sd_embed_nodes_ws *np = ed->nodes;
    struct sd_embed_crb_ws *w = ed->crb;
    double a0[6];
    sd_base_acceleration(m, a0);
    for (int s = 0; s < e->nnodes; ++s) { /* base-to-tips scatter */
        const sd_embed_node *nd = &e->nodes[s];
        const int dim = nd->dim, ni = nd->ni;
        const double *Ws = np->W + 6 * (size_t)e->vec_off[s], *Hs = np->Hbar + e->hbar_off[s];
        const double *as = np->a + e->vec_off[s], *bs = np->b + e->vec_off[s];
        const double *ap = nd->parent_body < 0 ? a0 : w->alpha + np->slot[nd->parent_body];
        double *al = w->alpha + e->vec_off[s], *f = w->f + e->vec_off[s];
        for (int r = 0; r < dim; ++r) {
            double acc = as[r];
            for (int k = 0; k < 6; ++k) acc += Ws[6 * r + k] * ap[k];
            if (qdd)
                for (int c = 0; c < ni; ++c) acc += Hs[(size_t)r * (size_t)ni + (size_t)c] * qdd[nd->v0 + c];
            al[r] = acc;
        }
        for (int i = 0; i < nd->nb; ++i) {
            const int k = e->node_bodies[nd->body0 + i];
            sd_rigid_inertia_mul(m->rigid + 13 * k, al + 6 * i, f + 6 * i);
            for (int r = 0; r < 6; ++r) f[6 * i + r] += bs[6 * i + r];
            memcpy(ed->tree->alpha + 6 * k, al + 6 * i, 6 * sizeof(double));
        }
    }
    for (int s = e->nnodes - 1; s >= 0; --s) { /* tips-to-base gather */
        const sd_embed_node *nd = &e->nodes[s];
        const int dim = nd->dim, ni = nd->ni;
        const double *Ws = np->W + 6 * (size_t)e->vec_off[s], *Hs = np->Hbar + e->hbar_off[s];
        const double *Jb = np->Jbar + np->jb_off[s], *f = w->f + e->vec_off[s];
        for (int c = 0; c < ni; ++c) {
            double acc = -np->tau_j[nd->v0 + c];
            for (int k = 0; k < dim; ++k) acc += Hs[(size_t)k * (size_t)ni + (size_t)c] * f[k];
            if (qdd)
                for (int k = 0; k < ni; ++k) acc += Jb[c * ni + k] * qdd[nd->v0 + k];
            tau[nd->v0 + c] = acc;
        }
        if (nd->parent_node < 0) continue;
        double *fp = w->f + np->slot[nd->parent_body], acc[6] = {0, 0, 0, 0, 0, 0};
        for (int k = 0; k < dim; ++k)
            for (int r = 0; r < 6; ++r) acc[r] += f[k] * Ws[6 * (size_t)k + (size_t)r];
        for (int r = 0; r < 6; ++r) fp[r] += acc[r];
    }
    ed->tree->alpha_has_gravity = 1;
    ed->tree->current = (ed->tree->current | SD_CURRENT_ACCELERATIONS) & ~(unsigned)SD_CURRENT_FORCES;
}

static sd_status inverse_dynamics(const char *fn, const char *out, const sd_embedding *e, sd_embedded_data *ed,
                                  const double *q, const double *u, const double *qdd, const double *f_ext,
                                  double *tau)
{
    sd_status st = check_call(e, ed, fn, q, u, qdd, f_ext, tau);
    if (st != SD_OK) return st;
    if (e->model->nflex > 0) { /* the sweeps here stack rigid members: the tree's, projected (embed_projected.c) */
        if ((st = sd_embed_projected_inverse_dynamics(e, ed, q, u, qdd, f_ext, tau)) != SD_OK) return st;
        return sd_check_output(ed->tree, fn, out, tau, (size_t)e->nv, SD_CAUSE_OVERFLOW);
    }
    if ((st = sd_embed_prepare(e, ed, q)) != SD_OK) return st;
    if ((st = sd_embed_velocities(e, ed, u)) != SD_OK) return st;
    sd_embed_node_pieces(e, ed, 1, f_ext);
    newton_euler_nodes(e, ed, qdd, tau);
    if (sd_all_finite(tau, (size_t)e->nv)) return SD_OK;
    return sd_check_output(ed->tree, fn, out, tau, (size_t)e->nv, SD_CAUSE_OVERFLOW);
}

/* Newton-Euler over nodes, then the tree-augmented rows (embed_mixed.c). */
static sd_status constrained_inverse(const sd_embedding *e, sd_embedded_data *ed, const double *q, const double *u,
                                     const double *qdd, const double *f_ext, const unsigned char *actuated,
                                     int all_actuated, double *tau, double *lambda_ta)
{
    const char *fn = "sd_embedded_inverse_dynamics";
    if (!qdd && e && ed) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: NULL qdd", fn);
    sd_status st = inverse_dynamics(fn, "tau", e, ed, q, u, qdd, f_ext, tau);
    if (st != SD_OK || (all_actuated && !ed->mixed)) return st;
    if ((st = sd_embed_mixed_inverse(e, ed, qdd, actuated, all_actuated, tau, lambda_ta)) != SD_OK) return st;
    return sd_check_output(ed->tree, fn, "tau", tau, (size_t)e->nv, SD_CAUSE_OVERFLOW);
}

sd_status sd_embedded_inverse_dynamics(const sd_embedding *e, sd_embedded_data *ed, const double *q,
                                       const double *u, const double *qdd, const double *f_ext, double *tau)
{
    return constrained_inverse(e, ed, q, u, qdd, f_ext, NULL, 1, tau, NULL);
}

sd_status sd_embedded_constrained_inverse_dynamics(const sd_embedding *e, sd_embedded_data *ed, const double *q,
                                                   const double *u, const double *qdd, const double *f_ext,
                                                   const unsigned char *actuated, double *tau, double *lambda_ta)
{
    return constrained_inverse(e, ed, q, u, qdd, f_ext, actuated, 0, tau, lambda_ta);
}

/* The bias forces C (tau at qdd = 0). Tree-augmented constraints, when some are left, add no force
 * here: C is the embedded system's own, as sd_bias_forces is the tree's without its loops. */
sd_status sd_embedded_bias_forces(const sd_embedding *e, sd_embedded_data *ed, const double *q, const double *u,
                                  const double *f_ext, double *c)
{
    return inverse_dynamics("sd_embedded_bias_forces", "c", e, ed, q, u, NULL, f_ext, c);
}
