/*
 * src/embed/embed_forward_dynamics.c — the articulated-body forward dynamics of an embedding (000 Sec 5,
 * Eq 62-69), run by the engine's sweeps on the embedding's node model (embed_node_model.c: one node
 * per rigid body, one of the aggregate kind per aggregate); M_e^-1 and log det M_e from the same
 * factors (004 Eq 51, Cor 6.1); the inter-body forces of every body and the multipliers of the
 * embedded constraints (000 Eq 68-69). What is embedding here: N^T on the tree forces, the tree
 * accelerations N qdd + Xdot_S u, the multipliers from the dependent hinges' balance.
 *
 * Glossary: embed_internal.h (W, Hbar*, a_s, b_s, Jbar, tau_j, X_S, N).
 */
#include <stdlib.h>
#include <string.h>

#include "algorithms/node_kinds.h"
#include "embed/embed_internal.h"

struct sd_embed_fd_ws {
    double *col;                /* embedded nv: a unit column (M^-1) */
    double *r, *lam;            /* max_nt, max_rows: the multipliers' right side and rows */
    double *qt;                 /* model nv: the tree accelerations when the caller wants none */
    double *tau_id;             /* model nv: the tree's inverse dynamics at the closed accelerations */
    double *tau_e;              /* embedded nv: N^T tau_tree when the caller gives tree forces */
    double *cf;                 /* 6 n: the embedded constraints' forces on bodies, carried up */
    int *agg_of_con;            /* per constraint: its aggregate, -1 when tree-augmented */
};

struct sd_embed_fd_ws *sd_embed_fd_ws_new(const sd_embedding *e)
{
    const sd_model *m = e->model;
    struct sd_embed_fd_ws *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    const size_t nv = (size_t)e->nv + 1;
#define SD_EMBED_ALLOC(p, count)                                   \
    do {                                                           \
        if (!((p) = calloc((count), sizeof *(p)))) goto fail;      \
    } while (0)
    SD_EMBED_ALLOC(w->tau_e, nv);
    SD_EMBED_ALLOC(w->col, nv);
    SD_EMBED_ALLOC(w->r, (size_t)e->max_nt + 1);
    SD_EMBED_ALLOC(w->lam, (size_t)e->max_rows + 1);
    SD_EMBED_ALLOC(w->qt, (size_t)m->nv + 1);
    SD_EMBED_ALLOC(w->tau_id, (size_t)m->nv + 1);
    SD_EMBED_ALLOC(w->cf, 6 * (size_t)m->n + 1);
    const int ncons = m->loops ? m->loops->ncons : 0;
    SD_EMBED_ALLOC(w->agg_of_con, (size_t)ncons + 1);
    for (int c = 0; c < ncons; ++c) w->agg_of_con[c] = -1;
    for (int a = 0; a < e->naggs; ++a)
        for (int i = 0; i < e->aggs[a].ncons; ++i) w->agg_of_con[e->agg_cons[e->aggs[a].cons0 + i]] = a;
#undef SD_EMBED_ALLOC
    return w;
fail:
    sd_embed_fd_ws_free(w);
    return NULL;
}

void sd_embed_fd_ws_free(struct sd_embed_fd_ws *w)
{
    if (!w) return;
    free(w->col);
    free(w->r);
    free(w->lam);
    free(w->qt);
    free(w->tau_id);
    free(w->tau_e);
    free(w->cf);
    free(w->agg_of_con);
    free(w);
}

/* The factors of M_e at the last node pieces (sd_embed_node_pieces_without_w, no bias terms): the node
 * model's motion stored, the engine's sweeps on zero forces (004 Eq 33 and the gathers: qdd the
 * free response to gravity is scratch). */
static sd_status factor_nodes(const sd_embedding *e, sd_embedded_data *ed)
{
    sd_embed_node_motion(e, ed, 0, NULL);
    memset(ed->nm->tau, 0, (size_t)e->nv * sizeof(double));
    return sd_nodes_articulated(e->node_model, ed->node_data, ed->nm->tau, ed->fd->col);
}

/* x may alias rhs (sd_mass_matrix_solve reads x before writing y). */
void sd_embed_solve(const sd_embedding *e, sd_embedded_data *ed, const double *rhs, double *x)
{
    sd_mass_matrix_solve(e->node_model, ed->node_data, rhs, x);
}

/* Every body's inter-body force and the embedded constraints' multipliers (000 Eq 68-69), after the
 * tree accelerations qt are known: the tree's Newton-Euler at (q, N u, qt) gives every hinge the
 * force it would carry with no embedded constraint force, f_NE (inside an aggregate, phi_S f'_S of
 * Eq 69; outside, the force the node hands its parent: the constraint forces on an aggregate's
 * parent body are inside it, 000 Eq 61), and tau_ID = H f_NE + J qt - tau_passive. The generalized
 * forces the aggregate's dependent hinges leave unbalanced, r = tau_ID - tau_tree (tau_tree: the
 * caller's tree forces, or none on a dependent speed), are G*_S lambda: Y1^T lambda = r_dep
 * (sd_embed_multipliers). Then f(k) = f_NE(k) minus the embedded constraints' forces Ew lambda on
 * the bodies of k's subtree inside its aggregate, carried up to k. */
static sd_status interbody_forces(const sd_embedding *e, sd_embedded_data *ed, const double *qt, const double *tau_tree,
                                  const double *f_ext)
{
    const sd_model *m = e->model;
    sd_data *d = ed->tree;
    struct sd_embed_fd_ws *w = ed->fd;
    const sd_status st = sd_inverse_dynamics(m, d, ed->q, ed->u_tree, qt, f_ext, w->tau_id);
    if (st != SD_OK) return st;
    double *lambda = d->loops ? d->loops->lambda : NULL;
    for (int a = 0; a < e->naggs; ++a) { /* the multipliers from the dependent hinges' balance */
        const sd_embed_aggregate *ag = &e->aggs[a];
        const int *ts = e->tree_speeds + e->nodes[ag->node].t0;
        for (int i = 0; i < ag->rank; ++i) {
            const int v = ts[ag->dep[i]];
            w->r[i] = w->tau_id[v] - (tau_tree ? tau_tree[v] : 0.0);
        }
        sd_embed_multipliers(e, ed, a, w->r, w->lam);
        for (int ci = 0, row = 0; ci < ag->ncons; ++ci) {
            const sd_loop_constraint *c = &m->loops->cons[e->agg_cons[ag->cons0 + ci]];
            for (int i = 0; i < c->nrows; ++i) lambda[c->row + i] = w->lam[row + i];
            row += c->nrows;
        }
    }
    memset(w->cf, 0, 6 * (size_t)m->n * sizeof(double));
    const sd_loops_model *L = m->loops;
    for (int fi = 0; L && fi < L->nframes; ++fi) { /* the embedded constraints' forces Ew lambda */
        const sd_loop_frame *fr = &L->frames[fi];
        const int a = w->agg_of_con[fr->constraint];
        if (a < 0 || fr->body < 0 || e->node_of_body[fr->body] != e->aggs[a].node) continue;
        const sd_loop_constraint *c = &L->cons[fr->constraint];
        const double *Ew = d->loops->Ew + fr->ew;
        for (int i = 0; i < c->nrows; ++i)
            for (int r = 0; r < 6; ++r) w->cf[6 * fr->body + r] += Ew[6 * i + r] * lambda[c->row + i];
    }
    for (int k = m->n - 1; k >= 0; --k) { /* carried up inside the aggregates, taken from f_NE */
        const int p = m->parent[k];
        for (int r = 0; r < 6; ++r) d->f[6 * k + r] -= w->cf[6 * k + r];
        if (p < 0 || e->node_of_body[p] != e->node_of_body[k]) continue;
        double fp[6];
        sd_force_to_parent(&d->Xup[k], w->cf + 6 * k, fp);
        for (int r = 0; r < 6; ++r) w->cf[6 * p + r] += fp[r];
    }
    if (d->loops) d->loops->lambda_valid = 1;
    return SD_OK;
}

static inline const sd_model *m_nodes(const sd_embedding *e) { return e->node_model; }

/* A failure of the node model's sweeps (a singular D(s)) reported in the tree workspace, where the
 * embedding's callers read errors. */
static sd_status embed_fail(sd_embedded_data *ed, sd_status st)
{
    if (st != SD_OK) memcpy(ed->tree->error, ed->node_data->error, sizeof ed->tree->error);
    return st;
}

/* The checks every public entry runs: arguments present, the workspace the embedding's. */
static sd_status check_args(const sd_embedding *e, sd_embedded_data *ed, const char *fn, const double *q)
{
    if (!e || !ed || !ed->tree) return SD_E_ARGUMENT;
    if (ed->e != e) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: the workspace belongs to another embedding", fn);
    if (!q) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: NULL q", fn);
    return sd_check_input(ed->tree, fn, "q", q, e->model->nq);
}

/* The tree accelerations N qdd + qdd_c (002 Eq 20 differentiated: X_S qdd + Xdot_S u). */
static void tree_accelerations(const sd_embedding *e, const sd_embedded_data *ed, const double *qdd, double *qt)
{
    for (int s = 0; s < e->nnodes; ++s) {
        const sd_embed_node *nd = &e->nodes[s];
        const int *ts = e->tree_speeds + nd->t0;
        if (nd->kind == SD_EMBED_RIGID) {
            for (int i = 0; i < nd->ni; ++i) qt[ts[i]] = qdd[nd->v0 + i];
            continue;
        }
        const double *X = ed->X + e->x_off[s];
        for (int r = 0; r < nd->nt; ++r) {
            double v = ed->qdd_c[ts[r]];
            for (int i = 0; i < nd->ni; ++i) v += X[r * nd->ni + i] * qdd[nd->v0 + i];
            qt[ts[r]] = v;
        }
    }
}

sd_status sd_embedded_forward_dynamics(const sd_embedding *e, sd_embedded_data *ed, const double *q, const double *u,
                                       const double *tau, const double *f_ext, double *qdd, double *qdd_tree,
                                       const sd_embedded_fd_options *options)
{
    const char *fn = "sd_embedded_forward_dynamics";
    sd_status st = check_args(e, ed, fn, q);
    if (st != SD_OK) return st;
    const sd_model *m = e->model;
    sd_data *d = ed->tree;
    const double *tau_tree = options ? options->tau_tree : NULL;
    if ((!tau && !tau_tree) || !qdd) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL tau (and no tau_tree) or qdd", fn);
    if ((st = sd_check_input(d, fn, "u", u, e->nv)) != SD_OK ||
        (st = sd_check_input(d, fn, "tau", tau_tree ? NULL : tau, e->nv)) != SD_OK ||
        (st = sd_check_input(d, fn, "tau_tree", tau_tree, m->nv)) != SD_OK ||
        (st = sd_check_input(d, fn, "f_ext", f_ext, 6 * m->n)) != SD_OK)
        return st;
    if (options && options->prescribed) /* mixed dynamics (embed_prescribed.c) */
        return sd_embed_prescribed_forward_dynamics(e, ed, q, u, tau, f_ext, qdd, qdd_tree, options);
    const int want_forces = options && options->interbody_forces;
    struct sd_embed_fd_ws *w = ed->fd;
    if (d->loops) d->loops->lambda_valid = 0;
    if ((st = sd_embed_prepare(e, ed, q)) != SD_OK || (st = sd_embed_velocities(e, ed, u)) != SD_OK) return st;
    if (tau_tree) { /* tau_e = N^T tau_tree (002 Eq 12: the power of the tree forces on N u) */
        for (int s = 0; s < e->nnodes; ++s) {
            const sd_embed_node *nd = &e->nodes[s];
            const double *X = nd->kind == SD_EMBED_AGGREGATE ? ed->X + e->x_off[s] : NULL;
            for (int j = 0; j < nd->ni; ++j) {
                double v = 0.0;
                if (!X) v = tau_tree[e->tree_speeds[nd->t0 + j]];
                else
                    for (int t = 0; t < nd->nt; ++t) v += X[(size_t)t * nd->ni + j] * tau_tree[e->tree_speeds[nd->t0 + t]];
                w->tau_e[nd->v0 + j] = v;
            }
        }
        tau = w->tau_e;
    }
    sd_embed_node_pieces_without_w(e, ed, 1, f_ext);
    sd_embed_node_motion(e, ed, 1, f_ext);
    double *tn = ed->nm->tau; /* the node's generalized forces: tau + N^T (tau_passive - J qdd_c) */
    for (int v = 0; v < e->nv; ++v) tn[v] = tau[v] + ed->nodes->tau_j[v];
    if ((st = sd_nodes_articulated(m_nodes(e), ed->node_data, tn, qdd)) != SD_OK) return embed_fail(ed, st);
    double *qt = qdd_tree ? qdd_tree : w->qt;
    tree_accelerations(e, ed, qdd, qt);
    if (want_forces) {
        if (e->n_ta == 0 && (st = sd_embed_loop_frames(e, ed)) != SD_OK) return st; /* Ew, sd_constraint_force */
        if ((st = interbody_forces(e, ed, qt, tau_tree, f_ext)) != SD_OK) return st;
    }
    if (e->n_ta > 0) { /* tree-augmented constraints on top (000 Eq 45-46, embed_mixed.c) */
        if ((st = sd_embed_mixed_correct(e, ed, qdd, want_forces)) != SD_OK) return st;
        tree_accelerations(e, ed, qdd, qt);
    }
    double a0[6];
    sd_base_acceleration(m, a0); /* the base accelerates at -g: f includes the weights (004 Sec 8) */
    for (int k = 0; k < m->n; ++k) { /* alpha(k) = Xup alpha(parent) + H* qdd_tree + a(k) (000 Eq 2) */
        double *al = d->alpha + 6 * k, aJ[6];
        sd_motion_to_child(&d->Xup[k], m->parent[k] < 0 ? a0 : d->alpha + 6 * m->parent[k], al);
        sd_hinge_motion(m, d, k, qt, aJ);
        for (int r = 0; r < 6; ++r) al[r] += aJ[r] + d->a[6 * k + r];
        sd_node_child_motion_modes(m, d->nodes, k, qt, al); /* + Y eta-ddot on a flexible parent's node */
    }
    d->alpha_has_gravity = 1;
    d->current = (d->current & ~(unsigned)SD_CURRENT_ARTICULATED) | SD_CURRENT_ACCELERATIONS |
                 (want_forces ? SD_CURRENT_FORCES : 0u);
    if (!want_forces) d->current &= ~(unsigned)SD_CURRENT_FORCES;
    if ((st = sd_check_output(d, fn, "qdd", qdd, (size_t)e->nv, SD_CAUSE_TINY_INERTIA)) != SD_OK) return st;
    return sd_check_output(d, fn, "qdd_tree", qt, (size_t)m->nv, SD_CAUSE_TINY_INERTIA);
}

/* The factors of M_e at q: closed loops, node pieces without velocities, the Riccati gather. */
static sd_status factor_at(const sd_embedding *e, sd_embedded_data *ed, const double *q)
{
    sd_status st = sd_embed_prepare(e, ed, q);
    if (st != SD_OK) return st;
    sd_embed_node_pieces_without_w(e, ed, 0, NULL);
    return embed_fail(ed, factor_nodes(e, ed));
}

sd_status sd_embedded_mass_matrix_inverse(const sd_embedding *e, sd_embedded_data *ed, const double *q, double *Minv)
{
    const char *fn = "sd_embedded_mass_matrix_inverse";
    sd_status st = check_args(e, ed, fn, q);
    if (st != SD_OK) return st;
    if (!Minv) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: NULL output", fn);
    if ((st = factor_at(e, ed, q)) != SD_OK) return st;
    const int nv = e->nv;
    double *col = ed->fd->col;
    for (int j = 0; j < nv; ++j) { /* column j = M_e^-1 e_j: one residual gather and scatter (004 Eq 51) */
        memset(col, 0, (size_t)nv * sizeof(double));
        col[j] = 1.0;
        sd_embed_solve(e, ed, col, col); /* in place: the gather reads col before the scatter writes it */
        for (int i = 0; i < nv; ++i) Minv[(size_t)i * nv + j] = col[i];
    }
    return sd_check_output(ed->tree, fn, "Minv", Minv, (size_t)nv * (size_t)nv, SD_CAUSE_TINY_INERTIA);
}

sd_status sd_embedded_log_det(const sd_embedding *e, sd_embedded_data *ed, const double *q, double *log_det)
{
    const char *fn = "sd_embedded_log_det";
    sd_status st = check_args(e, ed, fn, q);
    if (st != SD_OK) return st;
    if (!log_det) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: NULL output", fn);
    if ((st = factor_at(e, ed, q)) != SD_OK) return st;
    /* 004 Cor 6.1: det M = prod det D(s), every rigid node's D and every aggregate's D_f */
    const sd_model *nm = e->node_model;
    const sd_data *dn = ed->node_data;
    double s = 0.0;
    for (int k = 0; k < nm->n; ++k) s += sd_cholesky_logdet(dn->Dchol + 36 * k, nm->nv_k[k]);
    for (int k = 0; k < nm->n; ++k) s += sd_node_modal_log_det(nm, dn->nodes, k);
    *log_det = s;
    return sd_check_output(ed->tree, fn, "log_det", log_det, 1, SD_CAUSE_TINY_INERTIA);
}

sd_status sd_embedded_constraint_forces(const sd_embedding *e, sd_embedded_data *ed, double *lambda)
{
    const char *fn = "sd_embedded_constraint_forces";
    if (!e || !ed || !ed->tree) return SD_E_ARGUMENT;
    if (ed->e != e) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: the workspace belongs to another embedding", fn);
    if (!lambda) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: NULL output", fn);
    const sd_data *d = ed->tree;
    if (!d->loops || !d->loops->lambda_valid)
        return sd_data_fail(ed->tree, SD_E_ARGUMENT,
                            "%s: no multipliers: call sd_embedded_forward_dynamics with interbody_forces first", fn);
    const int nc = e->model->loops->nrows;
    memcpy(lambda, d->loops->lambda, (size_t)nc * sizeof(double));
    return sd_check_output(ed->tree, fn, "lambda", lambda, (size_t)nc, SD_CAUSE_TINY_INERTIA);
}
