/*
 * src/embed/embed_mixed.c — tree-augmented constraints on top of the embedded system (000 Sec 4,
 * Eq 45-46, on the embedded speeds u of 000 Sec 5 / 002 Eq 20). With the tree speeds N u, the rows
 * G_ta of the constraints left tree-augmented become G_e = G_ta N on the embedded speeds, and
 *   1. qdd_f        the embedded forward dynamics' free accelerations (the caller's sweep), whose
 *                   tree accelerations are N qdd_f + qdd_c (qdd_c = Xdot_S u)
 *   2. gamma        = G_ta (N qdd_f + qdd_c) + (Gdot u)_ta: the rows' rates at the free solution
 *                     (000 Eq 46b), Gdot u from sd_loops_row_rates at the body accelerations of zero
 *                     tree accelerations (velocity terms only)
 *      Lambda_e     = G_e M_e^-1 G_e*: one sd_embed_solve per row (x_i = M_e^-1 G_e(i)^T, the
 *                     Riccati factors of step 1, 004 Eq 51), O(N) each: O(N n_ta) in all
 *      lambda       = -Lambda_e^+ gamma, minimum norm (pivoted Cholesky, sd_loops_psd_solve)
 *   3. qdd          = qdd_f + sum_i x_i lambda_i                                        (000 Eq 45)
 * Why n_ta solves and not a compliance gather over nodes: the tree-augmented rows are few in the
 * models this serves (a loop or two left out of the embedding), and the solve reuses the embedded
 * factors as they are; the gather over aggregate nodes would be a second sweep to maintain.
 *
 * Forces (want_forces): the constraint forces of the correction enter as external forces, so by
 * linearity the correction's hinge forces are a Newton-Euler gather of the correction's body
 * accelerations (alpha_delta from N qdd_delta, no velocity terms, no gravity) minus the
 * constraint forces F_f = Ew_f lambda on the frames' bodies. Inside an aggregate the embedded
 * constraints carry part of it: their multipliers' increment solves Y1^T lambda = r_dep, r the
 * generalized forces the aggregate's tree hinges leave unbalanced (H f + J qdd on its tree speeds,
 * sd_embed_multipliers: 000 Eq 68-69 read as Eq 43's G* lambda), and a second gather with them
 * gives the physical hinge forces, added to d->f; the increments are added to the embedded rows of
 * the loops workspace's lambda (so the caller's embedded multipliers must already be there), the
 * tree-augmented rows are written.
 *
 * Glossary: see embed_internal.h and loops_internal.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed_internal.h"

struct sd_embed_mixed_ws {
    int nrows;       /* m = the tree-augmented rows */
    int *row_of;     /* model n_c: each row's index among the tree-augmented rows, -1 embedded */
    int *ta_row;     /* m: the model row of each */
    double *Gt;      /* m x model nv: G_ta, row-major */
    double *Ge;      /* m x embedded nv: G_ta N */
    double *K;       /* m x embedded nv: x_i = M_e^-1 G_e(i)^T, by rows */
    double *A;       /* m x m: Lambda_e */
    double *gamma, *lambda, *res; /* m each */
    double *ydot;    /* model n_c: every row's rate (sd_loops_row_rates fills all) */
    double *qt;      /* model nv: tree accelerations (free, then the correction's) */
    double *qe;      /* embedded nv: the correction */
    double *alpha;   /* 6 per body: body accelerations */
    double *f;       /* 6 per body: the correction's hinge forces */
    double *lam;     /* model n_c: the constraint multipliers of the correction's forces */
    double *r;       /* max_nt: an aggregate's unbalanced tree generalized forces */
    double *rdep;    /* max_nt */
    double *lrows;   /* max_rows: an aggregate's multiplier increments */
};

void sd_embed_mixed_ws_free(struct sd_embed_mixed_ws *w)
{
    if (!w) return;
    free(w->row_of);
    free(w->ta_row);
    free(w->Gt);
    free(w->Ge);
    free(w->K);
    free(w->A);
    free(w->gamma);
    free(w->lambda);
    free(w->res);
    free(w->ydot);
    free(w->qt);
    free(w->qe);
    free(w->alpha);
    free(w->f);
    free(w->lam);
    free(w->r);
    free(w->rdep);
    free(w->lrows);
    free(w);
}

static double *dalloc(size_t n) { return calloc(n ? n : 1, sizeof(double)); }

struct sd_embed_mixed_ws *sd_embed_mixed_ws_new(const sd_embedding *e)
{
    if (!e || e->n_ta == 0) return NULL;
    const sd_model *m = e->model;
    const sd_loops_model *L = m->loops;
    struct sd_embed_mixed_ws *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    const size_t nc = (size_t)L->nrows, nv = (size_t)m->nv, ne = (size_t)e->nv, nb = (size_t)m->n;
    int mr = 0;
    for (int c = 0; c < L->ncons; ++c)
        if (!e->embedded[c]) mr += L->cons[c].nrows;
    w->nrows = mr;
    const size_t mm = (size_t)mr, nt = (size_t)(e->max_nt > 0 ? e->max_nt : 1);
    w->row_of = malloc(nc * sizeof(int));
    w->ta_row = malloc(mm * sizeof(int));
    w->Gt = dalloc(mm * nv);
    w->Ge = dalloc(mm * ne);
    w->K = dalloc(mm * ne);
    w->A = dalloc(mm * mm);
    w->gamma = dalloc(mm);
    w->lambda = dalloc(mm);
    w->res = dalloc(mm);
    w->ydot = dalloc(nc);
    w->qt = dalloc(nv);
    w->qe = dalloc(ne);
    w->alpha = dalloc(6 * nb);
    w->f = dalloc(6 * nb);
    w->lam = dalloc(nc);
    w->r = dalloc(nt);
    w->rdep = dalloc(nt);
    w->lrows = dalloc((size_t)(e->max_rows > 0 ? e->max_rows : 1));
    if (!w->row_of || !w->ta_row || !w->Gt || !w->Ge || !w->K || !w->A || !w->gamma || !w->lambda || !w->res ||
        !w->ydot || !w->qt || !w->qe || !w->alpha || !w->f || !w->lam || !w->r || !w->rdep || !w->lrows) {
        sd_embed_mixed_ws_free(w);
        return NULL;
    }
    int j = 0;
    for (int c = 0; c < L->ncons; ++c)
        for (int i = 0; i < L->cons[c].nrows; ++i) {
            const int row = L->cons[c].row + i;
            if (e->embedded[c]) w->row_of[row] = -1;
            else w->ta_row[j] = row, w->row_of[row] = j++;
        }
    return w;
}

/* out (tree nv) = N x (x embedded nv): node by node, X_S on an aggregate's tree speeds, the
 * identity on a rigid node's (002 Eq 20). */
void sd_embed_apply_N(const sd_embedding *e, const sd_embedded_data *ed, const double *x, double *out)
{
    for (int s = 0; s < e->nnodes; ++s) {
        const sd_embed_node *n = &e->nodes[s];
        const int *ts = e->tree_speeds + n->t0;
        if (n->kind == SD_EMBED_RIGID) {
            for (int t = 0; t < n->nt; ++t) out[ts[t]] = x[n->v0 + t];
            continue;
        }
        const double *X = ed->X + e->x_off[s];
        for (int t = 0; t < n->nt; ++t) {
            double v = 0.0;
            for (int c = 0; c < n->ni; ++c) v += X[t * n->ni + c] * x[n->v0 + c];
            out[ts[t]] = v;
        }
    }
}

/* out (embedded nv) = N^T g (g tree nv). */
void sd_embed_apply_NT(const sd_embedding *e, const sd_embedded_data *ed, const double *g, double *out)
{
    for (int s = 0; s < e->nnodes; ++s) {
        const sd_embed_node *n = &e->nodes[s];
        const int *ts = e->tree_speeds + n->t0;
        if (n->kind == SD_EMBED_RIGID) {
            for (int t = 0; t < n->nt; ++t) out[n->v0 + t] = g[ts[t]];
            continue;
        }
        const double *X = ed->X + e->x_off[s];
        for (int c = 0; c < n->ni; ++c) {
            double v = 0.0;
            for (int t = 0; t < n->nt; ++t) v += X[t * n->ni + c] * g[ts[t]];
            out[n->v0 + c] = v;
        }
    }
}

/* G_ta (the tree-augmented rows of G) from the frame weights: row i = J* of a unit multiplier,
 * each frame's force carried to the base (as sd_loops_dense_jacobian, on these rows only). */
static void ta_jacobian(const sd_model *m, const sd_data *d, struct sd_embed_mixed_ws *w)
{
    const sd_loops_model *L = m->loops;
    memset(w->Gt, 0, (size_t)w->nrows * (size_t)m->nv * sizeof(double));
    for (int fi = 0; fi < L->nframes; ++fi) {
        const sd_loop_frame *f = &L->frames[fi];
        const sd_loop_constraint *c = &L->cons[f->constraint];
        if (w->row_of[c->row] < 0) continue;
        for (int i = 0; i < c->nrows; ++i) {
            double F[6], Fp[6];
            memcpy(F, d->loops->Ew + f->ew + 6 * i, sizeof F);
            double *row = w->Gt + (size_t)w->row_of[c->row + i] * (size_t)m->nv;
            for (int j = f->body; j >= 0; j = m->parent[j]) {
                for (int s = 0; s < m->nv_k[j]; ++s)
                    row[m->v_index[j] + s] += sd_s6_dot(d->S + 6 * (m->v_index[j] + s), F);
                sd_force_to_parent(&d->Xup[j], F, Fp);
                memcpy(F, Fp, sizeof F);
            }
        }
    }
}

/* Body accelerations of tree accelerations qt over the tree (base at rest), with the velocity
 * terms a(k) when `coriolis`: alpha(k) = Xup(k) alpha(parent) + H*(k) qt_k [+ a(k)]. */
static void body_accelerations(const sd_model *m, const sd_data *d, const double *qt, int coriolis, double *alpha)
{
    for (int k = 0; k < m->n; ++k) {
        double *al = alpha + 6 * k;
        if (m->parent[k] < 0) memset(al, 0, 6 * sizeof(double));
        else sd_motion_to_child(&d->Xup[k], alpha + 6 * m->parent[k], al);
        const int vk = m->v_index[k];
        for (int i = 0; i < m->nv_k[k]; ++i)
            for (int r = 0; r < 6; ++r) al[r] += d->S[6 * (vk + i) + r] * qt[vk + i];
        if (coriolis)
            for (int r = 0; r < 6; ++r) al[r] += d->a[6 * k + r];
    }
}

/* f(k) = M(k) alpha(k) + sum of the children's f carried up - sum of the frames' Ew_f lam on k:
 * the hinge forces of a motion without velocity terms under the constraint forces lam. */
static void gather_forces(const sd_model *m, const sd_data *d, const double *alpha, const double *lam, double *f)
{
    const sd_loops_model *L = m->loops;
    for (int k = 0; k < m->n; ++k) sd_rigid_inertia_mul(m->rigid + 13 * k, alpha + 6 * k, f + 6 * k);
    for (int fi = 0; fi < L->nframes; ++fi) {
        const sd_loop_frame *fr = &L->frames[fi];
        const sd_loop_constraint *c = &L->cons[fr->constraint];
        for (int i = 0; i < c->nrows; ++i)
            for (int r = 0; r < 6; ++r) f[6 * fr->body + r] -= d->loops->Ew[fr->ew + 6 * i + r] * lam[c->row + i];
    }
    for (int k = m->n - 1; k > 0; --k) {
        const int p = m->parent[k];
        if (p < 0) continue;
        double fp[6];
        sd_force_to_parent(&d->Xup[k], f + 6 * k, fp);
        for (int r = 0; r < 6; ++r) f[6 * p + r] += fp[r];
    }
}

/* The correction's hinge forces and the embedded multipliers' increments (see the top). */
static void correction_forces(const sd_embedding *e, sd_embedded_data *ed, struct sd_embed_mixed_ws *w)
{
    const sd_model *m = e->model;
    const sd_loops_model *L = m->loops;
    sd_data *d = ed->tree;
    sd_embed_apply_N(e, ed, w->qe, w->qt);
    body_accelerations(m, d, w->qt, 0, w->alpha);
    memset(w->lam, 0, (size_t)L->nrows * sizeof(double));
    for (int i = 0; i < w->nrows; ++i) w->lam[w->ta_row[i]] = w->lambda[i];
    gather_forces(m, d, w->alpha, w->lam, w->f);
    for (int a = 0; a < e->naggs; ++a) {
        const sd_embed_aggregate *ag = &e->aggs[a];
        const sd_embed_node *n = &e->nodes[ag->node];
        for (int t = 0; t < n->nt; ++t) { /* r = H f + J qdd on the aggregate's tree speeds */
            const int ts = e->tree_speeds[n->t0 + t], k = m->v_body[ts];
            w->r[t] = sd_s6_dot(d->S + 6 * ts, w->f + 6 * k) + (m->has_armature ? m->armature[ts] * w->qt[ts] : 0.0);
        }
        for (int i = 0; i < ag->rank; ++i) w->rdep[i] = w->r[ag->dep[i]];
        sd_embed_multipliers(e, ed, a, w->rdep, w->lrows);
        int off = 0;
        for (int ci = 0; ci < ag->ncons; ++ci) {
            const sd_loop_constraint *c = &L->cons[e->agg_cons[ag->cons0 + ci]];
            for (int i = 0; i < c->nrows; ++i) w->lam[c->row + i] = w->lrows[off + i];
            off += c->nrows;
        }
    }
    gather_forces(m, d, w->alpha, w->lam, w->f);
    double *lambda = d->loops->lambda;
    for (int c = 0; c < L->ncons; ++c)
        for (int i = 0; i < L->cons[c].nrows; ++i) {
            const int row = L->cons[c].row + i;
            lambda[row] = e->embedded[c] ? lambda[row] + w->lam[row] : w->lam[row];
        }
    for (size_t i = 0; i < 6 * (size_t)m->n; ++i) d->f[i] += w->f[i];
}

static inline double max2(double a, double b) { return a > b ? a : b; }

/* The size of the terms gamma is made of (a frame's weight x its body's acceleration, gravity's
 * size included, as the loops layer's floor): a row that the free accelerations already satisfy
 * (a tree-augmented constraint on bodies the embedded loops hold rigidly together) leaves round-off
 * of that size, not a contradiction. Only computed when the plain test fails (w->qt: the free tree
 * accelerations; w->alpha is overwritten). */
static double gamma_floor(const sd_model *m, const sd_data *d, struct sd_embed_mixed_ws *w)
{
    const sd_loops_model *L = m->loops;
    body_accelerations(m, d, w->qt, 1, w->alpha);
    const double g = sqrt(m->gravity[0] * m->gravity[0] + m->gravity[1] * m->gravity[1] + m->gravity[2] * m->gravity[2]);
    double floor = 1e-300;
    for (int fi = 0; fi < L->nframes; ++fi) {
        const sd_loop_frame *f = &L->frames[fi];
        if (w->row_of[L->cons[f->constraint].row] < 0) continue;
        const int len = 6 * L->cons[f->constraint].nrows;
        double ew = 0.0, acc = max2(1.0, g);
        for (int i = 0; i < len; ++i) ew = max2(ew, fabs(d->loops->Ew[f->ew + i]));
        for (int r = 0; r < 6; ++r) acc = max2(acc, fabs(w->alpha[6 * f->body + r]));
        floor = max2(floor, 1e-10 * ew * acc);
    }
    return floor;
}

/* G_ta, G_e = G_ta N and gamma = G_ta (N qdd + qdd_c) + (Gdot u)_ta (000 Eq 46b) at the embedded
 * accelerations qdd, from the placements, frame weights and velocities that sd_embed_prepare and
 * sd_embed_velocities left; w->qt keeps the tree accelerations N qdd + qdd_c. Returns max |gamma|. */
static double ta_rows_and_rates(const sd_embedding *e, sd_embedded_data *ed, struct sd_embed_mixed_ws *w,
                                const double *qdd)
{
    const sd_model *m = e->model;
    sd_data *d = ed->tree;
    const int mr = w->nrows, ne = e->nv, nv = m->nv;
    ta_jacobian(m, d, w);
    for (int i = 0; i < mr; ++i) sd_embed_apply_NT(e, ed, w->Gt + (size_t)i * nv, w->Ge + (size_t)i * ne);
    /* gamma = G_ta (N qdd_f + qdd_c) + (Gdot u)_ta (000 Eq 46b) */
    const double a0[6] = {0, 0, 0, 0, 0, 0};
    memset(w->qt, 0, (size_t)nv * sizeof(double));
    body_accelerations(m, d, w->qt, 1, w->alpha);
    sd_loops_row_rates(m, d, w->alpha, a0, w->qt, w->ydot);
    sd_embed_apply_N(e, ed, qdd, w->qt);
    for (int j = 0; j < nv; ++j) w->qt[j] += ed->qdd_c[j];
    double gnorm = 0.0;
    for (int i = 0; i < mr; ++i) {
        const double *g = w->Gt + (size_t)i * nv;
        double s = w->ydot[w->ta_row[i]];
        for (int j = 0; j < nv; ++j) s += g[j] * w->qt[j];
        w->gamma[i] = s;
        gnorm = max2(gnorm, fabs(s));
    }
    return gnorm;
}

int sd_embed_mixed_rates(const sd_embedding *e, sd_embedded_data *ed, const double *qdd, const double **Ge,
                         const double **gamma)
{
    struct sd_embed_mixed_ws *w = ed->mixed;
    if (!w) return 0;
    ta_rows_and_rates(e, ed, w, qdd);
    *Ge = w->Ge;
    *gamma = w->gamma;
    return w->nrows;
}

sd_status sd_embed_mixed_correct(const sd_embedding *e, sd_embedded_data *ed, double *qdd, int want_forces)
{
    struct sd_embed_mixed_ws *w = ed->mixed;
    if (!w) return SD_OK;
    const sd_model *m = e->model;
    const sd_loops_model *L = m->loops;
    sd_data *d = ed->tree;
    const int mr = w->nrows, ne = e->nv;
    /* the frame weights Ew_f and world placements are those sd_embed_prepare left at ed->q */
    const double gnorm = ta_rows_and_rates(e, ed, w, qdd);
    /* Lambda_e = G_e M_e^-1 G_e*, one solve per row */
    for (int i = 0; i < mr; ++i) sd_embed_solve(e, ed, w->Ge + (size_t)i * ne, w->K + (size_t)i * ne);
    double ref = 0.0;
    for (int i = 0; i < mr; ++i)
        for (int j = 0; j <= i; ++j) {
            double s = 0.0;
            for (int v = 0; v < ne; ++v) s += w->Ge[(size_t)i * ne + v] * w->K[(size_t)j * ne + v];
            w->A[i * mr + j] = w->A[j * mr + i] = s;
            if (i == j) ref = max2(ref, s);
        }
    /* floor as the loops layer's: a row on bodies nothing moves has round-off compliance */
    ref = max2(ref, 1e-14 / m->total_mass);
    const int rank = sd_loops_psd_solve(d, w->A, mr, w->gamma, w->lambda, ref, 1e-10);
    if (rank < 0)
        return sd_data_fail(d, SD_E_SINGULAR, "tree-augmented constraints on the embedding: pivoted Cholesky failed");
    for (int i = 0; i < mr; ++i) w->lambda[i] = -w->lambda[i];
    /* consistency: Lambda_e lambda + gamma = 0 (gamma in the range), else the rows contradict */
    double lnorm = 0.0, worst = 0.0, scale = 0.0;
    for (int i = 0; i < mr; ++i) lnorm = max2(lnorm, fabs(w->lambda[i])), scale = max2(scale, w->A[i * mr + i]);
    for (int i = 0; i < mr; ++i) {
        double r = w->gamma[i];
        for (int j = 0; j < mr; ++j) r += w->A[i * mr + j] * w->lambda[j];
        w->res[i] = r;
        worst = max2(worst, fabs(r));
    }
    double rtol = 1e-6 * (gnorm + scale * lnorm);
    if (!(worst <= rtol)) rtol += gamma_floor(m, d, w);
    if (!(worst <= rtol)) {
        char names[200] = "";
        size_t used = 0;
        for (int c = 0; c < L->ncons; ++c) {
            const sd_loop_constraint *con = &L->cons[c];
            if (e->embedded[c]) continue;
            int bad = 0;
            for (int i = 0; i < con->nrows; ++i) bad |= !(fabs(w->res[w->row_of[con->row + i]]) <= rtol);
            if (bad && used + strlen(con->name) + 4 < sizeof names)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s'%s'", used ? ", " : "", con->name);
        }
        return sd_data_fail(d, SD_E_SINGULAR,
                            "tree-augmented constraints %s contradict the embedded system: no accelerations "
                            "satisfy them (rank %d of %d rows)",
                            names, rank, mr);
    }
    /* qdd += M_e^-1 G_e* lambda (000 Eq 45) */
    memset(w->qe, 0, (size_t)ne * sizeof(double));
    for (int i = 0; i < mr; ++i)
        for (int v = 0; v < ne; ++v) w->qe[v] += w->K[(size_t)i * ne + v] * w->lambda[i];
    for (int v = 0; v < ne; ++v) qdd[v] += w->qe[v];
    double *lambda = d->loops->lambda;
    for (int i = 0; i < mr; ++i) lambda[w->ta_row[i]] = w->lambda[i];
    if (want_forces) correction_forces(e, ed, w);
    return SD_OK;
}

/* "'a', 'b'": the tree-augmented constraints with a row of |r| above tol (r over the m rows). */
static void ta_names(const sd_embedding *e, const struct sd_embed_mixed_ws *w, const double *r, double tol,
                     char *names, size_t size)
{
    const sd_loops_model *L = e->model->loops;
    size_t used = 0;
    names[0] = '\0';
    for (int c = 0; c < L->ncons; ++c) {
        const sd_loop_constraint *con = &L->cons[c];
        if (e->embedded[c]) continue;
        int bad = 0;
        for (int i = 0; i < con->nrows; ++i) bad |= !(fabs(r[w->row_of[con->row + i]]) <= tol);
        if (bad && used + strlen(con->name) + 4 < size)
            used += (size_t)snprintf(names + used, size - used, "%s'%s'", used ? ", " : "", con->name);
    }
}

sd_status sd_embed_mixed_inverse(const sd_embedding *e, sd_embedded_data *ed, const double *qdd,
                                 const unsigned char *actuated, int all_actuated, double *tau, double *lambda_ta)
{
    const char *fn = "sd_embedded_inverse_dynamics";
    struct sd_embed_mixed_ws *w = ed->mixed;
    const sd_model *m = e->model;
    sd_data *d = ed->tree;
    const int ne = e->nv, mr = w ? w->nrows : 0;
    double tscale = 1e-300;
    for (int v = 0; v < ne; ++v) tscale = max2(tscale, fabs(tau[v]));
    if (mr > 0) {
        /* qdd must keep the tree-augmented loops closed: G_e qdd + (Gdot u)_ta = 0 */
        const double gmax = ta_rows_and_rates(e, ed, w, qdd);
        const sd_loops_model *L = m->loops;
        double scale = 1.0; /* the size of the terms the rates are made of (as the tree layer's) */
        body_accelerations(m, d, w->qt, 1, w->alpha);
        for (int fi = 0; fi < L->nframes; ++fi)
            if (w->row_of[L->cons[L->frames[fi].constraint].row] >= 0)
                for (int r = 0; r < 6; ++r) scale = max2(scale, fabs(w->alpha[6 * L->frames[fi].body + r]));
        if (!(gmax <= 1e-8 * scale)) {
            char names[200];
            ta_names(e, w, w->gamma, 1e-8 * scale, names, sizeof names);
            return sd_data_fail(d, SD_E_ARGUMENT,
                                "%s: qdd does not keep the tree-augmented constraints %s closed (G qdd + Gdot u up "
                                "to %.3g)",
                                fn, names, gmax);
        }
        if (all_actuated) { /* the least loop force: the tree-augmented rows carry none */
            if (lambda_ta) memset(lambda_ta, 0, (size_t)mr * sizeof(double));
            return SD_OK;
        }
        /* G_e,U* lambda = tau_ID,U over the unactuated speeds U, minimum norm: A = G_e,U G_e,U*,
         * b = G_e,U tau_ID,U */
        double ref = 0.0;
        for (int a = 0; a < mr; ++a) {
            const double *ga = w->Ge + (size_t)a * ne;
            double s = 0.0, rowsq = 0.0;
            for (int v = 0; v < ne; ++v) {
                rowsq += ga[v] * ga[v];
                if (!(actuated && actuated[v])) s += ga[v] * tau[v];
            }
            w->res[a] = s;
            ref = max2(ref, rowsq);
            for (int c = 0; c <= a; ++c) {
                const double *gc = w->Ge + (size_t)c * ne;
                double t = 0.0;
                for (int v = 0; v < ne; ++v)
                    if (!(actuated && actuated[v])) t += ga[v] * gc[v];
                w->A[a * mr + c] = w->A[c * mr + a] = t;
            }
        }
        if (sd_loops_psd_solve(d, w->A, mr, w->res, w->lambda, max2(ref, 1e-12), 1e-10) < 0)
            return sd_data_fail(d, SD_E_SINGULAR, "%s: pivoted Cholesky failed", fn);
        for (int v = 0; v < ne; ++v) { /* tau = tau_ID - G_e* lambda */
            double s = 0.0;
            for (int a = 0; a < mr; ++a) s += w->Ge[(size_t)a * ne + v] * w->lambda[a];
            tau[v] -= s;
        }
        if (lambda_ta) memcpy(lambda_ta, w->lambda, (size_t)mr * sizeof(double));
    }
    if (all_actuated) return SD_OK;
    double worst = 0.0; /* zero on the unactuated speeds when the motion is producible */
    int worst_v = -1;
    for (int v = 0; v < ne; ++v)
        if (!(actuated && actuated[v]) && fabs(tau[v]) > worst) worst = fabs(tau[v]), worst_v = v;
    if (worst > 1e-8 * tscale)
        return sd_data_fail(d, SD_E_SINGULAR,
                            "%s: the actuated speeds and the tree-augmented constraints cannot produce this motion: "
                            "unactuated joint '%s' would need a force of %.3g",
                            fn, m->desc[m->v_body[e->speed_tree[worst_v]]].joint_name, worst);
    for (int v = 0; v < ne; ++v)
        if (!(actuated && actuated[v])) tau[v] = 0.0;
    return SD_OK;
}
