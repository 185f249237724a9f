/*
 * src/embed/embed_closure.c — closing the embedded loops and the split's matrices at one state
 * (002 Sec 3, Eq 19-20; 000 Sec 5, Eq 58): per aggregate S,
 *   - Newton on the position residuals of its constraints over the dependent speeds' directions,
 *     delta_1 = -Y1^+ r, applied hinge by hinge with the hinge's own retraction (sd_hinge_integrate:
 *     quaternions stay unit), the independent coordinates never written (so they stay bit for bit);
 *   - X_S = [-Y1^+ Y2; I] (002 Eq 20) from a Householder QR of Y1 (Y1 of full column rank, rows
 *     possibly redundant: least squares, exact on consistent right-hand sides), cond(Y1) from its
 *     diagonal;
 *   - Xdot_S u as the dependent accelerations qdd_c that keep Y qdd + Ydot u = 0 with u-dot = 0
 *     (the rows' rates at zero hinge accelerations, 000 Eq 58's Xdot term);
 *   - the minimum-norm multipliers with Y1^T lambda = r_dep (000 Eq 43's G* lambda read per loop).
 * Everything here is evaluated in the aggregate's parent-body frame with that body at rest: the
 * rows, residuals and rates of a loop are relative motion and relative placement, so they do not
 * depend on the bodies above it (embed_closure.h), and each aggregate costs its own size.
 *
 * Glossary: see embed_internal.h; Y (nrows x nt) the rows on the aggregate's tree speeds, Y1 / Y2
 * its dependent / independent columns (agg->dep, agg->ind), r the position residuals.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/node_kinds.h"
#include "embed_closure.h"
#include "flex/flex_body.h"

/* after soadyn's headers: lapacke.h brings <complex.h> (see closed_dynamics.c) */
#include <lapacke.h>

enum { NEWTON_MAX_STEPS = 30, NEWTON_MAX_HALVINGS = 8 };
#define NEWTON_TOL 1e-14   /* converged: max |r| <= NEWTON_TOL * scale (round-off) */
#define NEWTON_FAIL 1e-9   /* left above this * scale when Newton stops decreasing: the loop cannot close */
#define SPLIT_COND_MAX 1e10

static const sd_transform identity_transform = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 0, 0}};

/* "file:line: " of a constraint, or "" */
static void where(const sd_loop_constraint *c, char *buf, size_t size)
{
    buf[0] = '\0';
    if (c->source_file && c->source_line > 0) snprintf(buf, size, " (%s:%d)", c->source_file, c->source_line);
    else if (c->source_file) snprintf(buf, size, " (%s)", c->source_file);
}

/* ---------------------------------------------------------------- workspace */

struct sd_embed_closure_ws *sd_embed_closure_ws_new(const sd_embedding *e)
{
    const sd_model *m = e->model;
    struct sd_embed_closure_ws *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    const int max_nb = e->max_dim / 6 > 0 ? e->max_dim / 6 : 1;
    const int mt = e->max_nt > 0 ? e->max_nt : 1, mr = e->max_rows > 0 ? e->max_rows : 1;
    int qr_total = 0, tau_total = 0;
    w->qr_off = calloc((size_t)(e->naggs > 0 ? e->naggs : 1), sizeof(int));
    w->tau_off = calloc((size_t)(e->naggs > 0 ? e->naggs : 1), sizeof(int));
    if (!w->qr_off || !w->tau_off) goto fail;
    for (int a = 0; a < e->naggs; ++a) { /* sized for rank = nt, the split's upper bound */
        const int nt = e->nodes[e->aggs[a].node].nt;
        w->qr_off[a] = qr_total;
        w->tau_off[a] = tau_total;
        qr_total += e->aggs[a].nrows * nt;
        tau_total += nt;
    }
    w->lwork = 64 * (mt + 1) + 3 * mt + 1; /* above dgeqp3's 2n + (n+1) nb for nb <= 64 */
    w->local = calloc((size_t)(m->n > 0 ? m->n : 1), sizeof(int));
    w->T = calloc((size_t)max_nb, sizeof(sd_transform));
    w->Vl = calloc((size_t)(6 * max_nb), sizeof(double));
    w->Al = calloc((size_t)(6 * max_nb), sizeof(double));
    w->Y = calloc((size_t)mr * (size_t)mt, sizeof(double));
    w->r = calloc((size_t)mr, sizeof(double));
    w->rhs = calloc((size_t)(mr > mt ? mr : mt), sizeof(double));
    w->qr = calloc((size_t)(qr_total > 0 ? qr_total : 1), sizeof(double));
    w->qtau = calloc((size_t)(tau_total > 0 ? tau_total : 1), sizeof(double));
    w->dstep = calloc((size_t)mt, sizeof(double));
    w->x = calloc((size_t)mt, sizeof(double));
    w->qsave = calloc((size_t)(m->nq > 0 ? m->nq : 1), sizeof(double));
    w->work = calloc((size_t)w->lwork, sizeof(double));
    w->jpvt = calloc((size_t)mt, sizeof(int));
    int max_modes = 0; /* the node frames' S_t of flexible members (their children's rates) */
    for (int k = 0; k < m->n && m->n_modes; ++k)
        if (m->n_modes[k] > max_modes) max_modes = m->n_modes[k];
    w->St = calloc(6 * (size_t)max_modes + 1, sizeof(double));
    if (!w->St || !w->local || !w->T || !w->Vl || !w->Al || !w->Y || !w->r || !w->rhs || !w->qr || !w->qtau || !w->dstep || !w->x ||
        !w->qsave || !w->work || !w->jpvt || !sd_row_space_init(&w->rows, mr, mt))
        goto fail;
    for (int s = 0; s < e->nnodes; ++s)
        for (int l = 0; l < e->nodes[s].nb; ++l) w->local[e->node_bodies[e->nodes[s].body0 + l]] = l;
    return w;
fail:
    sd_embed_closure_ws_free(w);
    return NULL;
}

void sd_embed_closure_ws_free(struct sd_embed_closure_ws *w)
{
    if (!w) return;
    free(w->qr_off);
    free(w->tau_off);
    free(w->local);
    free(w->T);
    free(w->Vl);
    free(w->Al);
    free(w->Y);
    free(w->r);
    free(w->rhs);
    free(w->qr);
    free(w->qtau);
    free(w->dstep);
    free(w->x);
    free(w->qsave);
    free(w->work);
    free(w->jpvt);
    free(w->St);
    sd_row_space_free(&w->rows);
    free(w);
}

/* ---------------------------------------------------------------- the rows and residuals */

static int ancestor_or_self(const sd_model *m, int j, int b)
{
    return b >= 0 && j <= b && b < m->subtree_end[j]; /* subtrees are contiguous (internal.h) */
}

/* Placement of body k in aggregate a's parent-body frame (the parent body and the inertial frame:
 * identity; every other body a constraint of a names is in the aggregate, embed_design.md). */
static const sd_transform *body_frame(const sd_embedding *e, const struct sd_embed_closure_ws *w, int a, int k)
{
    const sd_embed_node *nd = &e->nodes[e->aggs[a].node];
    if (k < 0 || k == nd->parent_body) return &identity_transform;
    return &w->T[w->local[k]];
}

void sd_embed_aggregate_frames(const sd_embedding *e, struct sd_embed_closure_ws *w, const sd_data *tree, int a)
{
    const sd_model *m = e->model;
    const int s = e->aggs[a].node;
    const sd_embed_node *nd = &e->nodes[s];
    for (int l = 0; l < nd->nb; ++l) {
        const int k = e->node_bodies[nd->body0 + l], p = m->parent[k];
        if (p >= 0 && e->node_of_body[p] == s) sd_transform_compose(&w->T[w->local[p]], &tree->Xup[k], &w->T[l]);
        else w->T[l] = tree->Xup[k]; /* hangs on the parent body */
    }
}

/* F_A (side 0) or F_B (side 1) of constraint c in the parent-body frame. */
static void cons_frame(const sd_embedding *e, const struct sd_embed_closure_ws *w, int a, const sd_loop_constraint *c,
                       int side, sd_transform *out)
{
    sd_transform_compose(body_frame(e, w, a, side ? c->body_b : c->body_a), side ? &c->frame_b : &c->frame_a, out);
}

/* The motion of one unit tree speed (body j's hinge column h) in the parent-body frame: angular
 * velocity om and the velocity of the frame's origin point vo (so v(p) = vo + om x p). */
static void unit_motion(const sd_transform *Tj, const double *h, double om[3], double vo[3])
{
    double v[3], pxo[3];
    sd_m3_mul_v(Tj->R, h, om);
    sd_m3_mul_v(Tj->R, h + 3, v);
    sd_v3_cross(Tj->p, om, pxo); /* v(0) = v(p_j) + om x (0 - p_j) */
    for (int i = 0; i < 3; ++i) vo[i] = v[i] + pxo[i];
}

static double point_speed(const double om[3], const double vo[3], const double e3[3], const double p[3])
{
    double t[3];
    sd_v3_cross(om, p, t);
    return e3[0] * (vo[0] + t[0]) + e3[1] * (vo[1] + t[1]) + e3[2] * (vo[2] + t[2]);
}

/* A modal speed: one of flexible body j's modal coordinates' rates (they follow its hinge's, model.h). */
static int is_modal_speed(const sd_model *m, int v)
{
    const int j = m->v_body[v];
    return v >= m->v_index[j] + m->nv_k[j];
}

/* The unit motion of modal speed r of flexible member j at the side body b (om, vo as unit_motion):
 * the modes of j move F_j not at all (node_engine.h), and a body below j through the child c of j on
 * the path to b, by c's column r of Y(c) = X(c <- N) S_t when c rides on a node N of j (001 Eq
 * 12-14), not at all when c hangs on j's frame. Zero for b = j, or b outside j's subtree. */
static void modal_side_motion(const sd_embedding *e, const struct sd_embed_closure_ws *w, const sd_data *tree, int j,
                              int r, int b, double om[3], double vo[3])
{
    const sd_model *m = e->model;
    for (int i = 0; i < 3; ++i) om[i] = vo[i] = 0.0;
    if (b < 0 || b == j || !ancestor_or_self(m, j, b)) return;
    int c = b;
    while (m->parent[c] != j) c = m->parent[c];
    const struct sd_node_data *nd = tree->nodes;
    if (nd && nd->att_off[c] >= 0) unit_motion(&w->T[w->local[c]], nd->Y + nd->att_off[c] + 6 * r, om, vo);
}

/* Column of modal speed v in constraint c's rows (the deflection moves the joint frame a body riding
 * on a node carries): B's side minus A's, each with its own unit motion (a mode moves two nodes
 * differently), in the rows' definitions of sd_embed_aggregate_rows. */
static void modal_column(const sd_embedding *e, const struct sd_embed_closure_ws *w, const sd_data *tree,
                         const sd_loop_constraint *c, int v, const sd_transform *XA, const sd_transform *XB,
                         const double dir[3], double *col)
{
    const sd_model *m = e->model;
    const int j = m->v_body[v], r = v - m->mode_v_index[j];
    double omA[3], voA[3], omB[3], voB[3];
    modal_side_motion(e, w, tree, j, r, c->body_a, omA, voA);
    modal_side_motion(e, w, tree, j, r, c->body_b, omB, voB);
    if (c->type == SD_CONSTRAINT_DISTANCE) {
        col[0] = point_speed(omB, voB, dir, XB->p) - point_speed(omA, voA, dir, XA->p);
        return;
    }
    for (int k = 0; k < c->nsel; ++k) {
        const int sel = c->sel[k];
        const double ax[3] = {XA->R[sel % 3], XA->R[3 + sel % 3], XA->R[6 + sel % 3]};
        double dw[3];
        for (int i = 0; i < 3; ++i) dw[i] = omB[i] - omA[i];
        col[k] = sel < 3 ? sd_v3_dot(ax, dw) : point_speed(omB, voB, ax, XB->p) - point_speed(omA, voA, ax, XB->p);
    }
}

void sd_embed_aggregate_rows(const sd_embedding *e, const struct sd_embed_closure_ws *w, const sd_data *tree,
                             const double *q, int a, double *Y, double *r)
{
    const sd_model *m = e->model;
    const sd_embed_aggregate *A = &e->aggs[a];
    const sd_embed_node *nd = &e->nodes[A->node];
    const int ld = A->nrows;
    int ro = 0;
    for (int ci = 0; ci < A->ncons; ++ci) {
        const sd_loop_constraint *c = &m->loops->cons[e->agg_cons[A->cons0 + ci]];
        if (c->type == SD_CONSTRAINT_COUPLING) { /* u_a - ratio u_b; q_a - ratio q_b - offset */
            for (int i = 0; i < nd->nt; ++i) {
                const int v = e->tree_speeds[nd->t0 + i];
                Y[ro + (size_t)i * ld] =
                    (v == m->v_index[c->body_a] ? 1.0 : 0.0) - (v == m->v_index[c->body_b] ? c->ratio : 0.0);
            }
            if (r) r[ro] = q[m->q_index[c->body_a]] - c->ratio * q[m->q_index[c->body_b]] - c->offset;
            ro += 1;
            continue;
        }
        sd_transform XA, XB;
        cons_frame(e, w, a, c, 0, &XA);
        cons_frame(e, w, a, c, 1, &XB);
        double dp[3], dir[3] = {0, 0, 0};
        for (int i = 0; i < 3; ++i) dp[i] = XB.p[i] - XA.p[i];
        const double len = sd_v3_norm(dp);
        if (c->type == SD_CONSTRAINT_DISTANCE)
            for (int i = 0; i < 3; ++i) dir[i] = len > 0.0 ? dp[i] / len : 0.0;
        for (int i = 0; i < nd->nt; ++i) { /* column i: +motion of B's side, -motion of A's (relative) */
            const int v = e->tree_speeds[nd->t0 + i], j = m->v_body[v];
            const double sb = ancestor_or_self(m, j, c->body_b), sa = ancestor_or_self(m, j, c->body_a);
            double *col = Y + ro + (size_t)i * ld;
            if (m->nflex > 0 && is_modal_speed(m, v)) {
                modal_column(e, w, tree, c, v, &XA, &XB, dir, col);
                continue;
            }
            if (sb == sa) { /* neither side, or both: no relative motion */
                for (int k = 0; k < c->nrows; ++k) col[k] = 0.0;
                continue;
            }
            double om[3], vo[3];
            unit_motion(&w->T[w->local[j]], tree->S + 6 * v, om, vo);
            if (c->type == SD_CONSTRAINT_DISTANCE) { /* e.(v_B(p_B) - v_A(p_A)) */
                col[0] = sb * point_speed(om, vo, dir, XB.p) - sa * point_speed(om, vo, dir, XA.p);
                continue;
            }
            const double sg = sb - sa;
            for (int k = 0; k < c->nsel; ++k) { /* F_A's axis sel%3: a moment, or a force at F_B's origin */
                const int sel = c->sel[k];
                const double ax[3] = {XA.R[sel % 3], XA.R[3 + sel % 3], XA.R[6 + sel % 3]};
                col[k] = sg * (sel < 3 ? sd_v3_dot(ax, om) : point_speed(om, vo, ax, XB.p));
            }
        }
        if (r) sd_loops_frame_residual(c, &XA, &XB, r + ro); /* the loops layer's definitions */
        ro += c->nrows;
    }
}

/* ---------------------------------------------------------------- Y1's QR and its solves */

/* Householder QR of the nr x n column-major Q in place, in LAPACK dgeqr2's form (R on and above the
 * diagonal; below it each reflector's v with v_j = 1 implied, H_j = I - tau_j v v^T), which
 * solve_y1 and sd_embed_multipliers apply. Written here because Y1 is a few rows by a few columns
 * and is factored at every evaluation: LAPACK's calls, workspace queries and safe-scaling loops cost
 * several times the arithmetic at this size. The entries are a mechanism's lengths and direction
 * cosines, far from overflow, so the norms are plain sums of squares; a zero column below the
 * diagonal gives H_j = I (tau_j = 0), as dlarfg does. */
static void householder_qr(double *Q, int nr, int n, double *tau)
{
    for (int j = 0; j < n; ++j) {
        double *v = Q + (size_t)j * nr, below = 0.0;
        for (int i = j + 1; i < nr; ++i) below += v[i] * v[i];
        if (below == 0.0) {
            tau[j] = 0.0;
            continue;
        }
        const double alpha = v[j], beta = -copysign(sqrt(alpha * alpha + below), alpha);
        const double scale = 1.0 / (alpha - beta);
        tau[j] = (beta - alpha) / beta;
        for (int i = j + 1; i < nr; ++i) v[i] *= scale;
        v[j] = beta;
        for (int c = j + 1; c < n; ++c) { /* H_j applied to the columns to its right */
            double *x = Q + (size_t)c * nr, t = x[j];
            for (int i = j + 1; i < nr; ++i) t += v[i] * x[i];
            t *= tau[j];
            x[j] -= t;
            for (int i = j + 1; i < nr; ++i) x[i] -= t * v[i];
        }
    }
}

/* Householder QR of Y1 (Y's dependent columns) into aggregate a's slot; returns cond(Y1) from
 * R's diagonal (1 when rank is 0, inf when a diagonal entry is 0). */
static double factor_y1(const sd_embedding *e, struct sd_embed_closure_ws *w, int a, const double *Y)
{
    const sd_embed_aggregate *A = &e->aggs[a];
    const int nr = A->nrows, rk = A->rank;
    double *Q = w->qr + w->qr_off[a], *tau = w->qtau + w->tau_off[a];
    if (rk == 0) return 1.0;
    for (int j = 0; j < rk; ++j) memcpy(Q + (size_t)j * nr, Y + (size_t)A->dep[j] * nr, (size_t)nr * sizeof(double));
    householder_qr(Q, nr, rk, tau);
    double dmax = 0.0, dmin = INFINITY;
    for (int j = 0; j < rk; ++j) {
        const double d = fabs(Q[j + (size_t)j * nr]);
        if (d > dmax) dmax = d;
        if (d < dmin) dmin = d;
    }
    return dmin > 0.0 ? dmax / dmin : INFINITY;
}

/* x (rank) = Y1^+ b (b: nrows, overwritten): R x = (Q^T b)[0 .. rank-1]. */
static void solve_y1(const sd_embed_aggregate *A, const double *Q, const double *tau, double *b, double *x)
{
    const int nr = A->nrows, rk = A->rank;
    for (int j = 0; j < rk; ++j) { /* H_j = I - tau_j v v^T, v = (0.., 1, Q(j+1.., j)) */
        const double *v = Q + (size_t)j * nr;
        double s = b[j];
        for (int i = j + 1; i < nr; ++i) s += v[i] * b[i];
        s *= tau[j];
        b[j] -= s;
        for (int i = j + 1; i < nr; ++i) b[i] -= s * v[i];
    }
    for (int i = rk - 1; i >= 0; --i) {
        double s = b[i];
        for (int j = i + 1; j < rk; ++j) s -= Q[i + (size_t)j * nr] * x[j];
        x[i] = s / Q[i + (size_t)i * nr];
    }
}

/* ---------------------------------------------------------------- the kept row combinations */

int sd_embed_keep_row_combinations(const sd_embedding *e, struct sd_embed_closure_ws *w, int a, double *Y)
{
    const sd_embed_aggregate *A = &e->aggs[a];
    const int nr = A->nrows, nt = e->nodes[A->node].nt, rk = A->rank;
    sd_row_space *s = &w->rows;
    memcpy(s->A, Y, (size_t)nr * (size_t)nt * sizeof(double));
    const int r = sd_row_space_factor(s, nr, nt);
    if (r < 0) return -1;
    double *coef = w->x; /* max_nt >= rank */
    for (int j = 0; j < nt; ++j) { /* column j of Y: U_rk (U_rk^T y), the split's rank of combinations */
        double *y = Y + (size_t)j * nr;
        for (int k = 0; k < rk; ++k) {
            double t = 0.0;
            for (int i = 0; i < nr; ++i) t += s->U[i + (size_t)k * nr] * y[i];
            coef[k] = t;
        }
        for (int i = 0; i < nr; ++i) {
            double t = 0.0;
            for (int k = 0; k < rk; ++k) t += s->U[i + (size_t)k * nr] * coef[k];
            y[i] = t;
        }
    }
    return r;
}

/* ---------------------------------------------------------------- Newton */

/* Xup and H* of the aggregate's bodies at q, written into the tree workspace as sd_update_placements
 * would (same kernels, so the same bits). */
static void place_bodies(const sd_embedding *e, sd_data *tree, const double *q, const sd_embed_node *nd)
{
    const sd_model *m = e->model;
    for (int l = 0; l < nd->nb; ++l) {
        const int k = e->node_bodies[nd->body0 + l];
        if (tree->nodes && tree->nodes->att_off[k] >= 0) { /* on a flexible member's node: Xup, Y as the
                                                              motion scatter places it (node_engine.h) */
            sd_attached_motion(m, tree, tree->nodes, k, q, NULL, NULL, 0);
            continue;
        }
        double s[4], c[4]; /* the kernel's values for k in lane 0: a lane's bits are its own */
        sd_hinge_sincos4(m, tree->hinge_sel, tree->hinge_sgn, q, k, s, c);
        sd_hinge_placement(m, k, tree->hinge_sel[k], tree->hinge_sgn[k], q + m->q_index[k], s[0], c[0],
                           &tree->Xup[k], tree->S + 6 * m->v_index[k]);
    }
}

static double max_abs(const double *x, int n)
{
    double r = 0.0;
    for (int i = 0; i < n; ++i)
        if (!(fabs(x[i]) <= r)) r = fabs(x[i]); /* NaN propagates */
    return r;
}

/* Evaluate aggregate a at q: placements (unless `placed`: the tree's are current at q), frames, Y
 * and r; returns max |r|. */
static double evaluate(const sd_embedding *e, struct sd_embed_closure_ws *w, sd_data *tree, const double *q, int a,
                       int placed)
{
    const sd_embed_aggregate *A = &e->aggs[a];
    if (!placed) place_bodies(e, tree, q, &e->nodes[A->node]);
    sd_embed_aggregate_frames(e, w, tree, a);
    sd_embed_aggregate_rows(e, w, tree, q, a, w->Y, w->r);
    return max_abs(w->r, A->nrows);
}

static void save_coords(const sd_embedding *e, const sd_embed_node *nd, const double *q, double *save, int restore)
{
    const sd_model *m = e->model;
    for (int l = 0; l < nd->nb; ++l) {
        const int k = e->node_bodies[nd->body0 + l], i0 = m->q_index[k];
        if (restore) memcpy((double *)q + i0, save + i0, (size_t)m->nq_k[k] * sizeof(double));
        else memcpy(save + i0, q + i0, (size_t)m->nq_k[k] * sizeof(double));
    }
}

/* q (+) delta on the aggregate's hinges that move (sd_hinge_integrate: quaternions stay unit). */
static void apply_step(const sd_embedding *e, const sd_embed_node *nd, double *q, const double *delta)
{
    const sd_model *m = e->model;
    for (int l = 0, t = 0; l < nd->nb; ++l) {
        const int k = e->node_bodies[nd->body0 + l], nk = m->nv_k[k];
        const int tk = t; /* the body's first tree speed in the node: its hinge's, then its modes' */
        t += nk + (m->n_modes ? m->n_modes[k] : 0);
        int moves = 0;
        for (int i = 0; i < nk; ++i) moves |= delta[tk + i] != 0.0;
        if (!moves) continue; /* independent (or not moved): its coordinates are never written */
        double out[7];
        sd_hinge_integrate(m, k, q + m->q_index[k], delta + tk, 1.0, out);
        memcpy(q + m->q_index[k], out, (size_t)m->nq_k[k] * sizeof(double));
    }
}

/* The joint names of the dependent speeds a column-pivoted QR of Y picks (the split to change to):
 * a report for the failure message only. */
static SD_COLD void pivot_split(const sd_embedding *e, struct sd_embed_closure_ws *w, int a, char *buf, size_t size)
{
    const sd_model *m = e->model;
    const sd_embed_aggregate *A = &e->aggs[a];
    const sd_embed_node *nd = &e->nodes[A->node];
    const int nr = A->nrows, nt = nd->nt;
    double *Yc = w->qr + w->qr_off[a]; /* the failed factor is not used again */
    memcpy(Yc, w->Y, (size_t)nr * (size_t)nt * sizeof(double));
    memset(w->jpvt, 0, (size_t)nt * sizeof(int));
    LAPACKE_dgeqp3_work(LAPACK_COL_MAJOR, nr, nt, Yc, nr, (lapack_int *)w->jpvt, w->qtau + w->tau_off[a], w->work,
                        w->lwork);
    size_t len = 0;
    buf[0] = '\0';
    for (int j = 0; j < A->rank && len + 1 < size; ++j) { /* the first `rank` pivots (the rule's rank) */
        const int v = e->tree_speeds[nd->t0 + w->jpvt[j] - 1], k = m->v_body[v];
        int n = snprintf(buf + len, size - len, "%s'%s'", j ? ", " : "", sd_model_joint_name(m, k));
        if (n < 0) break;
        len += (size_t)n < size - len ? (size_t)n : size - len - 1;
    }
}

/* max |U_rk U_rk^T r|: the residual r's part in the kept row combinations (w->rows.U from
 * sd_embed_keep_row_combinations). */
static double kept_residual(struct sd_embed_closure_ws *w, int nr, int rk)
{
    const double *U = w->rows.U;
    double *coef = w->rhs, worst = 0.0; /* U_rk^T r */
    for (int k = 0; k < rk; ++k) {
        double t = 0.0;
        for (int j = 0; j < nr; ++j) t += U[j + (size_t)k * nr] * w->r[j];
        coef[k] = t;
    }
    for (int i = 0; i < nr; ++i) {
        double t = 0.0;
        for (int k = 0; k < rk; ++k) t += U[i + (size_t)k * nr] * coef[k];
        if (!(fabs(t) <= worst)) worst = fabs(t); /* NaN propagates */
    }
    return worst;
}

/* Newton for aggregate a (see the top of this file); then X_S and cond(Y1). */
static sd_status close_one(const sd_embedding *e, struct sd_embed_closure_ws *w, sd_data *tree, double *q, int a,
                           double *X, double *cond, double *rleft)
{
    const sd_model *m = e->model;
    const sd_embed_aggregate *A = &e->aggs[a];
    const sd_embed_node *nd = &e->nodes[A->node];
    const int nr = A->nrows, rk = A->rank;
    double *Q = w->qr + w->qr_off[a], *tau = w->qtau + w->tau_off[a];
    double rmax = evaluate(e, w, tree, q, a, 1), rprev = INFINITY; /* placed on entry */
    double scale = 1.0; /* lengths of the loop: residuals mix metres and radians */
    for (int l = 0; l < nd->nb; ++l) {
        const double d = sd_v3_norm(w->T[l].p);
        if (d > scale) scale = d;
    }
    int steps = 0, halvings = 0;
    for (;;) {
        if (rmax <= NEWTON_TOL * scale || rk == 0) break;
        if (!(rmax < rprev)) { /* the last step did not help */
            save_coords(e, nd, q, w->qsave, 1);
            if (rprev > NEWTON_FAIL * scale && halvings < NEWTON_MAX_HALVINGS) {
                /* far from closure the full step overshoots: retry half of it from the same point */
                ++halvings;
                for (int i = 0; i < nd->nt; ++i) w->dstep[i] *= 0.5;
                apply_step(e, nd, q, w->dstep);
                rmax = evaluate(e, w, tree, q, a, 0);
                continue;
            }
            rmax = evaluate(e, w, tree, q, a, 0); /* round-off reached (or no step helps): the best point */
            break;
        }
        if (steps == NEWTON_MAX_STEPS) break;
        const double c = factor_y1(e, w, a, w->Y);
        if (!(c <= 1e14)) break; /* no step along a singular split; reported below */
        memcpy(w->rhs, w->r, (size_t)nr * sizeof(double));
        double *delta = w->dstep;
        memset(delta, 0, (size_t)nd->nt * sizeof(double));
        solve_y1(A, Q, tau, w->rhs, w->x);
        for (int j = 0; j < rk; ++j) delta[A->dep[j]] = -w->x[j]; /* delta_1 = -Y1^+ r */
        save_coords(e, nd, q, w->qsave, 0);
        apply_step(e, nd, q, delta);
        rprev = rmax;
        halvings = 0;
        rmax = evaluate(e, w, tree, q, a, 0);
        ++steps;
    }
    /* nearly redundant rows: X_S, the dependent accelerations and the multipliers from the kept
     * combinations (rank_rule.h), those the tree-augmented layer keeps; and the closure judged on
     * them: a row combination the rule drops (a loop planar only to the rounding of its axes) keeps
     * the gap the geometry gives it, which no dependent speed moves. Exactly redundant rows (a
     * planar loop closed by a spatial joint) give the same least squares without it. */
    if (A->project_rows) {
        if (sd_embed_keep_row_combinations(e, w, a, w->Y) < 0)
            return sd_data_fail(tree, SD_E_SINGULAR, "embedded loop '%s': the SVD of its rows failed", A->name);
        rmax = kept_residual(w, nr, rk);
    }
    *rleft = rmax;
    char at[300] = ""; /* formatted on the failures only: a success must not pay for snprintf */
    if (!(rmax <= NEWTON_FAIL * scale)) {
        where(&m->loops->cons[e->agg_cons[A->cons0]], at, sizeof at);
        return sd_data_fail(tree, SD_E_SINGULAR,
                            "embedded loop '%s'%s cannot close from this configuration: residual %.3g left after %d "
                            "Newton steps over its dependent speeds",
                            A->name, at, rmax, steps);
    }
    const double c = factor_y1(e, w, a, w->Y);
    cond[a] = c;
    if (!(c <= SPLIT_COND_MAX)) {
        where(&m->loops->cons[e->agg_cons[A->cons0]], at, sizeof at);
        char split[400];
        pivot_split(e, w, a, split, sizeof split);
        return sd_data_fail(tree, SD_E_SINGULAR,
                            "embedded loop '%s'%s: its split is ill-conditioned here (cond(Y1) = %.3g > 1e10), the "
                            "split must change: the pivoting would take the speeds of joints %s as dependent",
                            A->name, at, c, split[0] ? split : "(none)");
    }
    /* X_S (002 Eq 20): identity on the independent rows, -Y1^+ Y2 on the dependent ones */
    const int ni = nd->ni;
    double *Xs = X + e->x_off[A->node];
    memset(Xs, 0, (size_t)nd->nt * (size_t)ni * sizeof(double));
    for (int jj = 0; jj < ni; ++jj) {
        Xs[(size_t)A->ind[jj] * ni + jj] = 1.0;
        memcpy(w->rhs, w->Y + (size_t)A->ind[jj] * nr, (size_t)nr * sizeof(double));
        solve_y1(A, Q, tau, w->rhs, w->x);
        for (int i = 0; i < rk; ++i) Xs[(size_t)A->dep[i] * ni + jj] = -w->x[i];
    }
    return SD_OK;
}

sd_status sd_embed_close_aggregates(const sd_embedding *e, struct sd_embed_closure_ws *w, sd_data *tree, double *q,
                                    double *X, double *cond)
{
    w->residual = 0.0;
    for (int a = 0; a < e->naggs; ++a) {
        double r = 0.0;
        const sd_status st = close_one(e, w, tree, q, a, X, cond, &r);
        if (!(r <= w->residual)) w->residual = r;
        if (st != SD_OK) return st;
    }
    return SD_OK;
}

/* ---------------------------------------------------------------- the evaluations' entry points */

sd_status sd_embed_prepare(const sd_embedding *e, sd_embedded_data *ed, const double *q)
{
    const sd_model *m = e->model;
    sd_data *tree = ed->tree;
    if (q) {
        const sd_status st = sd_check_input(tree, "sd_embedded", "q", q, m->nq);
        if (st != SD_OK) return st;
    }
    const double *q0 = q ? q : (ed->have_q ? ed->q : e->q_start); /* the warm start */
    if (q0 != ed->q) memcpy(ed->q, q0, (size_t)m->nq * sizeof(double));
    ed->have_q = 0;
    /* with flexible bodies the motion scatter places the children riding on their nodes too (the
     * aggregates hold none of them, so the closure's own placements stay the rigid ones) */
    if (tree->nodes) sd_update_motion(m, tree, ed->q, NULL, NULL, 0);
    else sd_update_placements(m, tree, ed->q, 0);
    if (tree->loops) tree->loops->lambda_valid = 0; /* lambda belongs to the placements it came with */
    sd_status st = sd_embed_close_aggregates(e, ed->closure, tree, ed->q, ed->X, ed->cond);
    if (st != SD_OK) return st;
    if (e->n_ta > 0 && (st = sd_embed_loop_frames(e, ed)) != SD_OK) return st; /* the rows on top need them */
    ed->have_q = 1;
    return SD_OK;
}

sd_status sd_embed_loop_frames(const sd_embedding *e, sd_embedded_data *ed)
{
    const sd_model *m = e->model;
    if (!m->loops) return SD_OK;
    sd_loops_world_placements(m, ed->tree);
    return sd_loops_frame_weights(m, ed->tree);
}

/* u_tree = N u (block-diag(I, X_S), node by node). */
static void tree_speeds(const sd_embedding *e, const double *X, const double *u, double *u_tree)
{
    for (int s = 0; s < e->nnodes; ++s) {
        const sd_embed_node *nd = &e->nodes[s];
        const int *ts = e->tree_speeds + nd->t0;
        if (nd->kind == SD_EMBED_RIGID) {
            for (int i = 0; i < nd->nt; ++i) u_tree[ts[i]] = u[nd->v0 + i];
            continue;
        }
        const double *Xs = X + e->x_off[s];
        for (int i = 0; i < nd->nt; ++i) {
            double acc = 0.0;
            for (int j = 0; j < nd->ni; ++j) acc += Xs[(size_t)i * nd->ni + j] * u[nd->v0 + j];
            u_tree[ts[i]] = acc;
        }
    }
}

/* World-like (parent-body frame) motion of body k's material point p with the parent body at rest:
 * as point_motion in constraint_kinematics.c, from the local V and A. */
static void local_point_motion(const sd_embedding *e, const struct sd_embed_closure_ws *w, int a, int k,
                               const double p[3], double om[3], double v[3], double wd[3], double acl[3])
{
    const sd_embed_node *nd = &e->nodes[e->aggs[a].node];
    if (k < 0 || k == nd->parent_body) {
        for (int i = 0; i < 3; ++i) om[i] = v[i] = wd[i] = acl[i] = 0.0;
        return;
    }
    const int l = w->local[k];
    const sd_transform *X = &w->T[l];
    const double *V = w->Vl + 6 * l, *A = w->Al + 6 * l;
    double rel[3], r[3], t[3], vp[3], ap[3];
    for (int i = 0; i < 3; ++i) rel[i] = p[i] - X->p[i];
    sd_m3t_mul_v(X->R, rel, r);
    sd_v3_cross(V, r, t);
    for (int i = 0; i < 3; ++i) vp[i] = V[3 + i] + t[i];
    sd_v3_cross(A, r, t);
    for (int i = 0; i < 3; ++i) ap[i] = A[3 + i] + t[i];
    sd_v3_cross(V, vp, t);
    for (int i = 0; i < 3; ++i) ap[i] += t[i];
    sd_m3_mul_v(X->R, V, om);
    sd_m3_mul_v(X->R, vp, v);
    sd_m3_mul_v(X->R, A, wd);
    sd_m3_mul_v(X->R, ap, acl);
}

/* Ydot u of aggregate a's rows (into y) from the local V, A of its bodies at zero hinge
 * accelerations: sd_loops_row_rates' formulas (constraint_kinematics.c) in the parent-body frame. */
static void local_row_rates(const sd_embedding *e, const struct sd_embed_closure_ws *w, int a, double *y)
{
    const sd_model *m = e->model;
    const sd_embed_aggregate *A = &e->aggs[a];
    int ro = 0;
    for (int ci = 0; ci < A->ncons; ++ci) {
        const sd_loop_constraint *c = &m->loops->cons[e->agg_cons[A->cons0 + ci]];
        double *yy = y + ro;
        ro += c->nrows;
        if (c->type == SD_CONSTRAINT_COUPLING) { /* G constant: Gdot = 0 */
            yy[0] = 0.0;
            continue;
        }
        sd_transform XA, XB;
        cons_frame(e, w, a, c, 0, &XA);
        cons_frame(e, w, a, c, 1, &XB);
        double wA[3], vA[3], wdA[3], aA[3], wB[3], vB[3], wdB[3], aB[3], Dv[3], t[3];
        if (c->type == SD_CONSTRAINT_DISTANCE) {
            local_point_motion(e, w, a, c->body_a, XA.p, wA, vA, wdA, aA);
            local_point_motion(e, w, a, c->body_b, XB.p, wB, vB, wdB, aB);
            double dv[3], dir[3];
            for (int i = 0; i < 3; ++i) dv[i] = XB.p[i] - XA.p[i], Dv[i] = vB[i] - vA[i];
            const double len = sd_v3_norm(dv);
            for (int i = 0; i < 3; ++i) dir[i] = dv[i] / len;
            const double ev = sd_v3_dot(dir, Dv);
            double s = 0.0;
            for (int i = 0; i < 3; ++i) s += dir[i] * (aB[i] - aA[i]) + (Dv[i] - dir[i] * ev) / len * Dv[i];
            yy[0] = s;
            continue;
        }
        local_point_motion(e, w, a, c->body_a, XB.p, wA, vA, wdA, aA);
        local_point_motion(e, w, a, c->body_b, XB.p, wB, vB, wdB, aB);
        double Dw[3], ang[3], lin[3], full[6];
        for (int i = 0; i < 3; ++i) Dw[i] = wB[i] - wA[i], Dv[i] = vB[i] - vA[i];
        sd_v3_cross(wA, Dw, t);
        for (int i = 0; i < 3; ++i) ang[i] = wdB[i] - wdA[i] - t[i];
        sd_v3_cross(wA, Dv, t);
        for (int i = 0; i < 3; ++i) lin[i] = aB[i] - aA[i] - 2.0 * t[i];
        sd_m3t_mul_v(XA.R, ang, full);
        sd_m3t_mul_v(XA.R, lin, full + 3);
        for (int i = 0; i < c->nsel; ++i) yy[i] = full[c->sel[i]];
    }
}

/* Body k riding on a node N of its flexible parent p inside an aggregate, the parent body at rest
 * (Vp: p's local velocity): V += Y(k) eta-dot_p, and Acc gains the node frame's own terms X(k <- N)
 * (S_t-dot eta-dot_p + V_N x S_t eta-dot_p), V_N = X(N <- p) Vp + S_t eta-dot_p (001 Eq 12, 27; the
 * motion scatter's sd_attached_motion, node_flexible.c, with the local velocities). */
static void local_node_motion(const sd_embedding *e, sd_embedded_data *ed, int k, const double Vp[6], double V[6],
                              double Acc[6])
{
    const sd_model *m = e->model;
    const struct sd_node_data *nd = ed->tree->nodes;
    const int p = m->parent[k], nm = m->n_modes[p];
    const double *eta_dot = ed->u_tree + m->mode_v_index[p], *Yk = nd->Y + nd->att_off[k];
    double *St = ed->closure->St, cN[6], w[6] = {0, 0, 0, 0, 0, 0}, VN[6], cc[6], cp[6];
    sd_transform N;
    sd_flex_node_motion(m->flex[p], m->parent_node[k], ed->q + m->mode_q_index[p], eta_dot, &N, St, cN);
    for (int r = 0; r < nm; ++r)
        for (int i = 0; i < 6; ++i) {
            V[i] += Yk[6 * r + i] * eta_dot[r];
            w[i] += St[6 * r + i] * eta_dot[r];
        }
    sd_motion_to_child(&N, Vp, VN);
    for (int i = 0; i < 6; ++i) VN[i] += w[i];
    sd_motion_cross(VN, w, cc);
    for (int i = 0; i < 6; ++i) cN[i] += cc[i];
    sd_motion_to_parent(&N, cN, cp); /* X(k <- N) = X(k <- p) X(p <- N) */
    sd_motion_to_child(&ed->tree->Xup[k], cp, cc);
    for (int i = 0; i < 6; ++i) Acc[i] += cc[i];
}

sd_status sd_embed_velocities(const sd_embedding *e, sd_embedded_data *ed, const double *u)
{
    const sd_model *m = e->model;
    struct sd_embed_closure_ws *w = ed->closure;
    memset(ed->qdd_c, 0, (size_t)m->nv * sizeof(double));
    /* the placements are current at ed->q (sd_embed_prepare): the velocities alone */
    if (!u) {
        memset(ed->u_tree, 0, (size_t)m->nv * sizeof(double));
        sd_update_velocities(m, ed->tree, ed->q, NULL, NULL);
        return SD_OK;
    }
    tree_speeds(e, ed->X, u, ed->u_tree);
    sd_update_velocities(m, ed->tree, ed->q, ed->u_tree, NULL);
    const sd_data *tree = ed->tree;
    for (int a = 0; a < e->naggs; ++a) {
        const sd_embed_aggregate *A = &e->aggs[a];
        const sd_embed_node *nd = &e->nodes[A->node];
        if (A->rank == 0) continue;
        sd_embed_aggregate_frames(e, w, tree, a);
        for (int l = 0; l < nd->nb; ++l) { /* V and A relative to the parent body, zero hinge accelerations */
            const int k = e->node_bodies[nd->body0 + l], p = m->parent[k], nk = m->nv_k[k];
            const double *uk = ed->u_tree + m->v_index[k], *S = tree->S + 6 * m->v_index[k];
            double *V = w->Vl + 6 * l, *Acc = w->Al + 6 * l, hu[6] = {0, 0, 0, 0, 0, 0}, c[6], vxh[6];
            if (p >= 0 && e->node_of_body[p] == A->node) {
                sd_motion_to_child(&tree->Xup[k], w->Vl + 6 * w->local[p], V);
                sd_motion_to_child(&tree->Xup[k], w->Al + 6 * w->local[p], Acc);
            } else
                for (int i = 0; i < 6; ++i) V[i] = Acc[i] = 0.0;
            for (int j = 0; j < nk; ++j)
                for (int i = 0; i < 6; ++i) hu[i] += S[6 * j + i] * uk[j];
            for (int i = 0; i < 6; ++i) V[i] += hu[i];
            if (tree->nodes && tree->nodes->att_off[k] >= 0) /* on a node of a flexible member p */
                local_node_motion(e, ed, k, w->Vl + 6 * w->local[p], V, Acc);
            sd_motion_cross(V, hu, vxh); /* a(k) = V x H* u + d(H*)/dt u (000 Eq 2) */
            sd_hinge_velocity_term(m, k, ed->q + m->q_index[k], uk, c);
            for (int i = 0; i < 6; ++i) Acc[i] += vxh[i] + c[i];
        }
        local_row_rates(e, w, a, w->rhs);
        /* Y1 qdd_1 = -Ydot u: the dependent accelerations at zero independent ones (000 Eq 58) */
        solve_y1(A, w->qr + w->qr_off[a], w->qtau + w->tau_off[a], w->rhs, w->x);
        for (int i = 0; i < A->rank; ++i) ed->qdd_c[e->tree_speeds[nd->t0 + A->dep[i]]] = -w->x[i];
    }
    return SD_OK;
}

void sd_embed_multipliers(const sd_embedding *e, sd_embedded_data *ed, int a, const double *r_dep,
                          double *lambda_rows)
{
    const sd_embed_aggregate *A = &e->aggs[a];
    const struct sd_embed_closure_ws *w = ed->closure;
    const double *Q = w->qr + w->qr_off[a], *tau = w->qtau + w->tau_off[a];
    const int nr = A->nrows, rk = A->rank;
    /* Y1 = Q [R; 0]: Y1^T lambda = R^T (Q^T lambda)_1 = r_dep; minimum norm: (Q^T lambda)_2 = 0 */
    for (int i = 0; i < nr; ++i) lambda_rows[i] = 0.0;
    for (int i = 0; i < rk; ++i) {
        double s = r_dep[i];
        for (int j = 0; j < i; ++j) s -= Q[j + (size_t)i * nr] * lambda_rows[j];
        lambda_rows[i] = s / Q[i + (size_t)i * nr];
    }
    for (int j = rk - 1; j >= 0; --j) { /* lambda = H_0 .. H_{rk-1} y */
        const double *v = Q + (size_t)j * nr;
        double s = lambda_rows[j];
        for (int i = j + 1; i < nr; ++i) s += v[i] * lambda_rows[i];
        s *= tau[j];
        lambda_rows[j] -= s;
        for (int i = j + 1; i < nr; ++i) lambda_rows[i] -= s * v[i];
    }
}

/* ---------------------------------------------------------------- public */

static sd_status check_pair(const sd_embedding *e, sd_embedded_data *data, const char *fn)
{
    if (!e || !data) return SD_E_ARGUMENT;
    if (data->e != e)
        return sd_data_fail(data->tree, SD_E_ARGUMENT, "%s: the workspace was made for another embedding", fn);
    return SD_OK;
}

sd_status sd_embedded_close(const sd_embedding *e, sd_embedded_data *data, const double *q, double *q_out,
                            double *residual)
{
    sd_status st = check_pair(e, data, "sd_embedded_close");
    if (st != SD_OK) return st;
    if (!q || !q_out) return sd_data_fail(data->tree, SD_E_ARGUMENT, "sd_embedded_close: NULL q or q_out");
    st = sd_embed_prepare(e, data, q);
    if (residual) *residual = data->closure->residual;
    if (st != SD_OK) return st;
    if (q_out != data->q) memmove(q_out, data->q, (size_t)e->model->nq * sizeof(double));
    return SD_OK;
}

const double *sd_embedded_configuration(const sd_embedded_data *data) { return data ? data->q : NULL; }

sd_status sd_embedded_tree_speeds(const sd_embedding *e, sd_embedded_data *data, const double *q, const double *u,
                                  double *u_tree)
{
    sd_status st = check_pair(e, data, "sd_embedded_tree_speeds");
    if (st != SD_OK) return st;
    if (!u || !u_tree) return sd_data_fail(data->tree, SD_E_ARGUMENT, "sd_embedded_tree_speeds: NULL u or u_tree");
    if ((st = sd_check_input(data->tree, "sd_embedded_tree_speeds", "u", u, e->nv)) != SD_OK) return st;
    if ((st = sd_embed_prepare(e, data, q)) != SD_OK) return st;
    tree_speeds(e, data->X, u, u_tree);
    return SD_OK;
}

void sd_embedded_speeds_of_tree(const sd_embedding *e, const double *u_tree, double *u)
{
    if (!e || !u_tree || !u) return;
    for (int i = 0; i < e->nv; ++i) u[i] = u_tree[e->speed_tree[i]];
}

double sd_embedded_split_condition(const sd_embedded_data *data, int a)
{
    if (!data || a < 0 || a >= data->e->naggs) return NAN;
    return data->cond[a];
}
