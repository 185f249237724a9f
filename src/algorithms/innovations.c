/*
 * src/algorithms/innovations.c — what the articulated-body (Riccati) quantities give almost for free
 * (004 Sec 6): the innovations factors of the mass matrix and their inverses applied to vectors
 * (Lemma 11, Eq 49-51), M^-1 x in O(N), the dense M^-1 in O(N^2) (Eq 51), and
 * det M = prod det D(k) (Cor 6.1, Eq 53).
 *
 * Glossary: see internal.h; K is G shifted to the parent (004 Eq 37), so that
 *   [I + H phi K] x = x + H phi~ G x,  [I - H psi K] x = eps of the residual gather with T = x.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#include "internal.h"
#include "node_kinds.h"

/* Placements and what the Riccati gather reads: a node's mass M(k) depends on its own coordinates, so
 * a model with a node workspace runs the motion scatter (at rest), which leaves it (node_kinds.h); its
 * zero velocities are not the state's, so only the placements are current, as on the rigid path. */
static void articulated_placements(const sd_model *m, sd_data *d, const double *q)
{
    if (d->nodes) {
        sd_update_motion(m, d, q, NULL, NULL, 1);
        d->current = SD_CURRENT_PLACEMENTS | SD_CURRENT_WORLD;
    } else
        sd_update_placements(m, d, q, 1);
}

sd_status sd_articulated_inertias(const sd_model *m, sd_data *d, const double *q)
{
    const sd_status st = sd_check_call(m, d, "sd_articulated_inertias", q, NULL, NULL, NULL, NULL);
    if (st != SD_OK) return st;
    articulated_placements(m, d, q);
    return sd_riccati_gather(m, d, NULL);
}

/* The sweeps below apply the factors of the last Riccati gather over nodes (node_kinds.h): each node's
 * hinge as a rigid body's, a node with coordinates of its own (a flexible body's modes) through its
 * kind's operations, in the split chain of 001 Sec 5 (Eq 51-56): the modal node below its hinge, its
 * gain G_f = [g; I] and tau_bar = I - G_f H_f. Not hot paths: one instance each, asking every node. */

/* y = G(k) x(k), a spatial force */
static void gain_times(const sd_model *m, const sd_data *d, int k, const double *x, double y[6])
{
    memset(y, 0, 6 * sizeof(double));
    for (int i = 0; i < m->nv_k[k]; ++i)
        for (int r = 0; r < 6; ++r) y[r] += d->G[6 * (m->v_index[k] + i) + r] * x[m->v_index[k] + i];
}

/* [I + H phi K] x: w(k) = sum_children phi(k, j) (w(j) + G(j) x(j)); y(k) = x(k) + H(k) w(k); at a
 * node's own coordinates first y_f = x_f + w_f, w_R = w_r + g x_f (the modal node's G_f = [g; I]). */
static void apply_ne(const sd_model *m, sd_data *d, const double *x, double *y)
{
    struct sd_node_data *nd = d->nodes;
    memset(d->z, 0, 6 * (size_t)m->n * sizeof(double));
    sd_node_residual_begin(nd, 0);
    for (int k = m->n - 1; k >= 0; --k) {
        const int vk = m->v_index[k];
        double *w = d->z + 6 * k, g[6];
        sd_node_modal_ne(m, nd, k, x, y, w);
        gain_times(m, d, k, x, g);
        for (int i = 0; i < m->nv_k[k]; ++i) y[vk + i] = x[vk + i] + sd_s6_dot(d->S + 6 * (vk + i), w);
        if (m->parent[k] >= 0) {
            double t[6], tp[6];
            for (int r = 0; r < 6; ++r) t[r] = w[r] + g[r];
            sd_force_to_parent(&d->Xup[k], t, tp);
            for (int r = 0; r < 6; ++r) d->z[6 * m->parent[k] + r] += tp[r];
            sd_node_residual_to_parent_modes(m, nd, k, t);
        }
    }
}

/* [I + H phi K]* x: s(k) = phi*(parent, k) (s(parent) + H*(parent) x(parent)); y(k) = x(k) + G*(k) s(k);
 * at a node's own coordinates y_f = x_f + g* t(k), t(k) = s(k) + H*(k) x(k), and its children see
 * its x_f through Y (read from a copy of x: y may alias x). */
static void apply_ne_transpose(const sd_model *m, sd_data *d, const double *x, double *y)
{
    struct sd_node_data *nd = d->nodes;
    const double *xm = x;
    if (nd) {
        memcpy(nd->eps_f, x, (size_t)m->nv * sizeof(double));
        xm = nd->eps_f;
    }
    for (int k = 0; k < m->n; ++k) {
        const int vk = m->v_index[k];
        double *s = d->alpha_plus + 6 * k, *t = d->alpha + 6 * k;
        if (m->parent[k] < 0) memset(s, 0, 6 * sizeof(double));
        else sd_motion_to_child(&d->Xup[k], d->alpha + 6 * m->parent[k], s);
        sd_node_child_motion_modes(m, nd, k, xm, s);
        sd_hinge_motion(m, d, k, xm, t); /* t(k) = s(k) + H*(k) x(k), read by the children */
        for (int r = 0; r < 6; ++r) t[r] += s[r];
        for (int i = 0; i < m->nv_k[k]; ++i) y[vk + i] = xm[vk + i] + sd_s6_dot(d->G + 6 * (vk + i), s);
        sd_node_modal_scatter(m, nd, k, xm, 1.0, t, y);
    }
}

/* [I - H psi K] x (004 Eq 50), the residual gather of Eq 58a-c with a = b = 0 and T = x:
 * z(k) = sum phi(k, j) z+(j); eps(k) = x(k) - H(k) z(k); z+(k) = z(k) + G(k) eps(k); y = eps; at a
 * node's own coordinates first eps_f = x_f - z_f, z_R = z_r + g eps_f (001 Eq 63). */
static void residual_gather(const sd_model *m, sd_data *d, const double *x, double *y)
{
    struct sd_node_data *nd = d->nodes;
    for (int k = m->n - 1; k >= 0; --k) {
        const int vk = m->v_index[k];
        double *z = d->z + 6 * k, g[6];
        sd_node_modal_residual(m, nd, k, x, y, z);
        for (int i = 0; i < m->nv_k[k]; ++i) y[vk + i] = x[vk + i] - sd_s6_dot(d->S + 6 * (vk + i), z);
        gain_times(m, d, k, y, g);
        if (m->parent[k] >= 0) {
            double t[6], tp[6];
            for (int r = 0; r < 6; ++r) t[r] = z[r] + g[r];
            sd_force_to_parent(&d->Xup[k], t, tp);
            for (int r = 0; r < 6; ++r) d->z[6 * m->parent[k] + r] += tp[r];
            sd_node_residual_to_parent_modes(m, nd, k, t);
        }
    }
}

static void apply_inv(const sd_model *m, sd_data *d, const double *x, double *y)
{
    memset(d->z, 0, 6 * (size_t)m->n * sizeof(double));
    sd_node_residual_begin(d->nodes, 0);
    residual_gather(m, d, x, y);
}

/* [I - H psi K]* x, the acceleration scatter of Eq 58e-g with a = 0:
 * alpha+(k) = phi* alpha(parent); y(k) = x(k) - G*(k) alpha+(k); alpha(k) = alpha+(k) + H*(k) y(k);
 * at a node's own coordinates then y_f = x_f - g* alpha(k) (001 Eq 63), which its children see
 * through Y. In place (y = x) too: each entry is read before it is written. */
static void apply_inv_transpose(const sd_model *m, sd_data *d, const double *x, double *y)
{
    const struct sd_node_data *nd = d->nodes;
    for (int k = 0; k < m->n; ++k) {
        const int vk = m->v_index[k];
        double *ap = d->alpha_plus + 6 * k, *alpha = d->alpha + 6 * k, hy[6];
        if (m->parent[k] < 0) memset(ap, 0, 6 * sizeof(double));
        else sd_motion_to_child(&d->Xup[k], d->alpha + 6 * m->parent[k], ap);
        sd_node_child_motion_modes(m, nd, k, y, ap);
        for (int i = 0; i < m->nv_k[k]; ++i) y[vk + i] = x[vk + i] - sd_s6_dot(d->G + 6 * (vk + i), ap);
        sd_hinge_motion(m, d, k, y, hy);
        for (int r = 0; r < 6; ++r) alpha[r] = ap[r] + hy[r];
        sd_node_modal_scatter(m, nd, k, x, -1.0, alpha, y);
    }
}

/* y = D^-1 y, hinge by hinge and each node's own coordinates (D_f^-1), in place. */
static void apply_dinv(const sd_model *m, const sd_data *d, double *y)
{
    for (int k = 0; k < m->n; ++k) {
        if (m->nv_k[k]) {
            double t[6];
            for (int i = 0; i < m->nv_k[k]; ++i) t[i] = y[m->v_index[k] + i];
            sd_dinv_mul(d->Dinv + 36 * k, m->nv_k[k], t, y + m->v_index[k]);
        }
        sd_node_modal_solve(m, d->nodes, k, y, y);
    }
}

/* M^-1 x = [I - H psi K]* D^-1 [I - H psi K] x  (004 Eq 51; 001 Eq 56 on the split chain). */
static void solve(const sd_model *m, sd_data *d, const double *x, double *y)
{
    apply_inv(m, d, x, y);
    apply_dinv(m, d, y);
    apply_inv_transpose(m, d, y, y);
}

void sd_nodes_force_response(const sd_model *m, sd_data *d, int body, const double f[6], double *y)
{
    /* the residual gather sees f as forward dynamics sees an external force (b = -f_ext): z(body) = -f,
     * with a = b = 0 elsewhere and T = 0 (y, zeroed, is T and eps in place) */
    memset(d->z, 0, 6 * (size_t)m->n * sizeof(double));
    sd_node_residual_begin(d->nodes, 0);
    for (int r = 0; r < 6; ++r) d->z[6 * body + r] = -f[r];
    memset(y, 0, (size_t)m->nv * sizeof(double));
    residual_gather(m, d, y, y);
    apply_dinv(m, d, y);
    apply_inv_transpose(m, d, y, y);
}

/* The checks of the two calls below, which apply the factors of the last state to x. */
static sd_status check_factor_call(const sd_model *m, sd_data *d, const char *fn, const double *x, const double *y)
{
    sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_ARTICULATED);
    if (st != SD_OK) return st;
    if (!x || !y) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL x or y", fn);
    if ((st = sd_check_input(d, fn, "x", x, m->nv)) != SD_OK) return st;
    d->current &= ~SD_CURRENT_ACCELERATIONS; /* the sweeps below use alpha as scratch */
    return SD_OK;
}

sd_status sd_innovations_apply(const sd_model *m, sd_data *d, sd_factor_op op, const double *x, double *y)
{
    const char *fn = "sd_innovations_apply";
    const sd_status st = check_factor_call(m, d, fn, x, y);
    if (st != SD_OK) return st;
    switch (op) {
    case SD_FACTOR_NE: apply_ne(m, d, x, y); break;
    case SD_FACTOR_NE_TRANSPOSE: apply_ne_transpose(m, d, x, y); break;
    case SD_FACTOR_INV: apply_inv(m, d, x, y); break;
    case SD_FACTOR_INV_TRANSPOSE: apply_inv_transpose(m, d, x, y); break;
    default: return sd_data_fail(d, SD_E_ARGUMENT, "%s: unknown factor %d", fn, (int)op);
    }
    return sd_check_output(d, fn, "y", y, (size_t)m->nv, SD_CAUSE_TINY_INERTIA);
}

sd_status sd_mass_matrix_solve(const sd_model *m, sd_data *d, const double *x, double *y)
{
    const char *fn = "sd_mass_matrix_solve";
    const sd_status st = check_factor_call(m, d, fn, x, y);
    if (st != SD_OK) return st;
    solve(m, d, x, y);
    return sd_check_output(d, fn, "y", y, (size_t)m->nv, SD_CAUSE_TINY_INERTIA);
}

sd_status sd_mass_matrix_determinant(const sd_model *m, sd_data *d, const double *q, double *det, double *log_det)
{
    const sd_status st = sd_articulated_inertias(m, d, q);
    if (st != SD_OK) return st;
    /* log det M = sum_k log det D(k)  (004 Eq 53): every hinge's D(k) and every node's own D_f(k), the
     * pivots of the split chain (001 Sec 5; a symmetric reordering of the coordinates leaves det M) */
    const struct sd_node_data *nd = d->nodes;
    double s = 0.0;
    for (int k = 0; k < m->n; ++k) s += sd_cholesky_logdet(d->Dchol + 36 * k, m->nv_k[k]);
    for (int k = 0; nd && k < m->n; ++k) s += sd_node_modal_log_det(m, nd, k); /* none without nodes */
    const char *fn = "sd_mass_matrix_determinant";
    sd_status st2 = sd_check_output(d, fn, "log_det", &s, 1, SD_CAUSE_OVERFLOW);
    if (st2 != SD_OK) return st2;
    if (log_det) *log_det = s;
    if (det) {
        *det = exp(s);
        if (!(*det <= DBL_MAX))
            return sd_data_fail(d, SD_E_NOT_FINITE, "%s: det M = exp(%.17g) overflows a double: use log_det", fn, s);
    }
    return SD_OK;
}

/* ---------------------------------------------------------------- dense M^-1 in O(N^2) */

/* H*(k) and G(k) in world axes about the world origin, where phi(k, j) is the identity, so the
 * per-column sweeps below need no transforms. */
static void world_gains(const sd_model *m, sd_data *d)
{
    for (int k = 0; k < m->n; ++k)
        for (int i = 0; i < m->nv_k[k]; ++i) {
            const int c = m->v_index[k] + i;
            sd_motion_to_parent(&d->Xworld[k], d->S + 6 * c, d->S_world + 6 * c);
            sd_force_to_parent(&d->Xworld[k], d->G + 6 * c, d->G_world + 6 * c);
        }
}

/* The dense M^-1 = [I - H psi K]* D^-1 [I - H psi K] (004 Eq 51) for every column at once, body by
 * body, in world axes about the world origin (phi = identity): the residual gather of a column c is
 * nonzero only on the path from c's body to the base, and the columns of body k's subtree are the
 * contiguous speeds [v(k), vend(k)) (parent-first preorder), each reaching k through exactly one
 * child. So one 6 x nv matrix holds every column's z (then alpha), each body's step is one pass
 * over its subtree's columns (6-wide products across columns, which vectorise), and the residual
 * gather is not redone per column. Counted per entry of the upper triangle (1-dof hinges): the
 * gather 13 multiply-adds on related entries, the scatter 13 on related ones and 6 on unrelated
 * ones; the per-column sweeps cost the same products plus the walk over each column's path.
 *
 * Row b of the result (its upper part, columns c >= v(b)) is written in three kinds of range:
 *   - c in b's subtree (related): the scatter of Eq 58e-g with a = 0, y = nu - G* alpha+,
 *     alpha = alpha+ + H* y, alpha+ = alpha(parent) (phi* = identity);
 *   - c in a later subtree of an ancestor a (unrelated, a the deepest common ancestor): nu is zero
 *     below a off c's path, so alpha(x) = T(x) alpha(parent x) with T(x) = I - H*(x) G*(x), and
 *     y(b, c) = -G*(b) T(p(b)) .. T(x) alpha(a, c) = l . alpha(a, c), with l carried up b's path once
 *     per row; alpha(a, c) is saved when a's step is done (`saved`, 6 x nv: each column is saved by
 *     one branch at a time, and read only by rows before the next save of it);
 *   - c in another tree of a forest: zero. */

/* The six rows of a 6 x nv matrix stored row by row, as the arguments of a kernel: each its own
 * restrict parameter, so that the compiler knows the rows apart and vectorises along them. */
#define ROWS6(X, nv) (X), (X) + (nv), (X) + 2 * (size_t)(nv), (X) + 3 * (size_t)(nv), (X) + 4 * (size_t)(nv), \
    (X) + 5 * (size_t)(nv)
#define ROW6_PARAMS(X) double *restrict X##0, double *restrict X##1, double *restrict X##2, double *restrict X##3, \
    double *restrict X##4, double *restrict X##5

/* Gather step of a 1-dof hinge (004 Eq 50-51) on its descendants' columns [c0, c1):
 * eps = -H z, nu = D^-1 eps (into row), z += G eps. One multiply-add chain per column, no
 * dependence between columns: the loop vectorises. */
static SD_NOINLINE void minv_gather_one(const double *s, const double *g, double dinv, ROW6_PARAMS(Z), double *restrict row,
                                        int c0, int c1)
{
    const double s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3], s4 = s[4], s5 = s[5]; /* held in registers */
    const double g0 = g[0], g1 = g[1], g2 = g[2], g3 = g[3], g4 = g[4], g5 = g[5];
    for (int c = c0; c < c1; ++c) {
        const double e = -(s0 * Z0[c] + s1 * Z1[c] + s2 * Z2[c] + s3 * Z3[c] + s4 * Z4[c] + s5 * Z5[c]);
        row[c] = dinv * e;
        Z0[c] += g0 * e; Z1[c] += g1 * e; Z2[c] += g2 * e;
        Z3[c] += g3 * e; Z4[c] += g4 * e; Z5[c] += g5 * e;
    }
}

/* Scatter step of a 1-dof hinge on its own and its descendants' columns [c0, c1) (Eq 58e-g):
 * y = nu - G* alpha+ (nu in row), alpha = alpha+ + H* y, in place. */
static SD_NOINLINE void minv_scatter_one(const double *s, const double *g, ROW6_PARAMS(A), double *restrict row, int c0,
                                         int c1)
{
    const double s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3], s4 = s[4], s5 = s[5];
    const double g0 = g[0], g1 = g[1], g2 = g[2], g3 = g[3], g4 = g[4], g5 = g[5];
    for (int c = c0; c < c1; ++c) {
        const double y = row[c] - (g0 * A0[c] + g1 * A1[c] + g2 * A2[c] + g3 * A3[c] + g4 * A4[c] + g5 * A5[c]);
        row[c] = y;
        A0[c] += s0 * y; A1[c] += s1 * y; A2[c] += s2 * y;
        A3[c] += s3 * y; A4[c] += s4 * y; A5[c] += s5 * y;
    }
}

/* Gather step of a 1-dof hinge at a root: no parent reads z+, so only nu = -D^-1 H z is formed. */
static SD_NOINLINE void minv_gather_one_root(const double *s, double dinv, ROW6_PARAMS(Z), double *restrict row, int c0,
                                             int c1)
{
    const double s0 = -dinv * s[0], s1 = -dinv * s[1], s2 = -dinv * s[2], s3 = -dinv * s[3], s4 = -dinv * s[4],
                 s5 = -dinv * s[5];
    for (int c = c0; c < c1; ++c) row[c] = s0 * Z0[c] + s1 * Z1[c] + s2 * Z2[c] + s3 * Z3[c] + s4 * Z4[c] + s5 * Z5[c];
}

/* row[c] = l . X(c) for c in [c0, c1), 6 multiply-adds: the unrelated entries l . alpha(a, c), and a
 * multi-speed hinge's eps_i = -H_i z. */
static SD_NOINLINE void minv_dot6(const double *l, ROW6_PARAMS(S), double *restrict row, int c0, int c1)
{
    const double l0 = l[0], l1 = l[1], l2 = l[2], l3 = l[3], l4 = l[4], l5 = l[5];
    for (int c = c0; c < c1; ++c) row[c] = l0 * S0[c] + l1 * S1[c] + l2 * S2[c] + l3 * S3[c] + l4 * S4[c] + l5 * S5[c];
}

/* row[c] -= l . X(c) on [c0, c1): a multi-speed hinge's y_i = nu_i - G_i* alpha+ (Eq 58f). */
static SD_NOINLINE void minv_sub_dot6(const double *l, ROW6_PARAMS(X), double *restrict row, int c0, int c1)
{
    const double l0 = l[0], l1 = l[1], l2 = l[2], l3 = l[3], l4 = l[4], l5 = l[5];
    for (int c = c0; c < c1; ++c) row[c] -= l0 * X0[c] + l1 * X1[c] + l2 * X2[c] + l3 * X3[c] + l4 * X4[c] + l5 * X5[c];
}

/* X(c) += w x[c] on [c0, c1) (X(c) = w x[c] when `assign`): a rank-one update of the six rows, the
 * z += G eps of Eq 58c and the alpha += H* y of Eq 58g, one speed at a time. */
static SD_NOINLINE void minv_rank1(const double *w, int assign, const double *restrict x, ROW6_PARAMS(X), int c0, int c1)
{
    const double w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5];
    if (assign)
        for (int c = c0; c < c1; ++c) {
            X0[c] = w0 * x[c]; X1[c] = w1 * x[c]; X2[c] = w2 * x[c];
            X3[c] = w3 * x[c]; X4[c] = w4 * x[c]; X5[c] = w5 * x[c];
        }
    else
        for (int c = c0; c < c1; ++c) {
            X0[c] += w0 * x[c]; X1[c] += w1 * x[c]; X2[c] += w2 * x[c];
            X3[c] += w3 * x[c]; X4[c] += w4 * x[c]; X5[c] += w5 * x[c];
        }
}

/* y[c] = sum_j a_j x_j[c] on [c0, c1), x_j the rows of x (stride nv): nu = D^-1 eps across columns. */
static SD_NOINLINE void minv_combine(const double *a, int nk, const double *x, int nv, double *restrict y, int c0, int c1)
{
    for (int c = c0; c < c1; ++c) y[c] = a[0] * x[c];
    for (int j = 1; j < nk; ++j) {
        const double aj = a[j], *restrict xj = x + (size_t)j * nv;
        for (int c = c0; c < c1; ++c) y[c] += aj * xj[c];
    }
}

/* Gather step of a hinge of nk > 1 speeds (spherical, free, universal, planar) on its descendants'
 * columns [c0, c1), each step one vectorised pass across the columns: eps = -H z into the rows of
 * E (nk x nv scratch), nu = D^-1 eps, and z += G eps unless k is a root. */
static void minv_gather_multi(const double *s, const double *g, const double *Dinv, int nk, int root, double *Z, double *E,
                              int nv, double *row, int c0, int c1)
{
    double a[6], w[6];
    for (int i = 0; i < nk; ++i) {
        for (int r = 0; r < 6; ++r) w[r] = -s[6 * i + r];
        minv_dot6(w, ROWS6(Z, nv), E + (size_t)i * nv, c0, c1); /* eps_i = -H_i z */
    }
    for (int i = 0; i < nk; ++i) {
        for (int j = 0; j < nk; ++j) a[j] = Dinv[i * nk + j];
        minv_combine(a, nk, E, nv, row + (size_t)i * nv, c0, c1);
    }
    if (!root)
        for (int i = 0; i < nk; ++i) {
            for (int r = 0; r < 6; ++r) w[r] = g[6 * i + r];
            minv_rank1(w, 0, E + (size_t)i * nv, ROWS6(Z, nv), c0, c1);
        }
}

/* Scatter step of a hinge of nk > 1 speeds on its own and its descendants' columns [c0, c1):
 * y = nu - G* alpha+ (skipped at a root, where alpha+ = 0), then alpha = alpha+ + H* y unless no
 * child reads alpha (a leaf). */
static void minv_scatter_multi(const double *s, const double *g, int nk, int root, int leaf, double *A, int nv, double *row,
                               int c0, int c1)
{
    if (!root)
        for (int i = 0; i < nk; ++i) minv_sub_dot6(g + 6 * i, ROWS6(A, nv), row + (size_t)i * nv, c0, c1);
    if (!leaf)
        for (int i = 0; i < nk; ++i) minv_rank1(s + 6 * i, root && i == 0, row + (size_t)i * nv, ROWS6(A, nv), c0, c1);
}

/* The speeds of k's subtree end here (v_index[n] is nv). */
static inline int vend(const sd_model *m, int k) { return m->v_index[m->subtree_end[k]]; }

/* Tips to base: nu(k, c) for every column c of k's subtree, into rows v(k) .. of Minv (004 Eq 50-51).
 * Z (6 x nv) holds z(k, c); a column starts at its own body with eps = e_c, i.e. z = G e_c. At a
 * root z+ is read by no one and is not formed. E (6 x nv) is the multi-speed hinges' scratch. */
static void minv_gather(const sd_model *m, const sd_data *d, double *Z, double *E, double *Minv)
{
    const int nv = m->nv;
    for (int k = m->n - 1; k >= 0; --k) {
        const int nk = m->nv_k[k], vk = m->v_index[k], c1 = vend(m, k), root = m->parent[k] < 0;
        if (nk == 0) continue; /* a fixed hinge passes z on unchanged */
        const double *s = d->S_world + 6 * vk, *g = d->G_world + 6 * vk, *Dinv = d->Dinv + 36 * k;
        double *row = Minv + (size_t)vk * nv;
        if (nk > 1) minv_gather_multi(s, g, Dinv, nk, root, Z, E, nv, row, vk + nk, c1);
        else if (root) minv_gather_one_root(s, Dinv[0], ROWS6(Z, nv), row, vk + 1, c1);
        else minv_gather_one(s, g, Dinv[0], ROWS6(Z, nv), row, vk + 1, c1);
        for (int j = 0; j < nk; ++j) { /* own columns: eps = e_j, nu = D^-1 e_j, z = G e_j */
            for (int i = 0; i < nk; ++i) row[(size_t)i * nv + vk + j] = Dinv[i * nk + j];
            if (!root)
                for (int r = 0; r < 6; ++r) Z[(size_t)r * nv + vk + j] = g[6 * j + r];
        }
    }
}

/* The unrelated entries row[c] = l . alpha(a, c) on [c0, c1), one 6-vector product each (004 Sec 7).
 * A fast path with AVX2 and FMA: l broadcast once per run, then groups of 4 columns in 6 fused
 * multiply-adds; the last group may run past c1 (never past nv), which is harmless because every
 * column of [c1, nv) is written afterwards by the rest of the walk (the next run starts at c1, the
 * forest case clears to nv). The auto-vectorised minv_dot6 cost ~60 instructions a call on the short
 * runs of a humanoid (a call, the broadcasts, the trip count, the scalar remainder): ~8000 of Talos's
 * ~86k. Other builds take minv_dot6. */
static inline void minv_unrelated_run(const double l[6], double *saved, int nv, double *row, int c0, int c1)
{
#if defined(__AVX2__) && defined(__FMA__)
    const size_t n = (size_t)nv;
    const __m256d l0 = _mm256_set1_pd(l[0]), l1 = _mm256_set1_pd(l[1]), l2 = _mm256_set1_pd(l[2]),
                  l3 = _mm256_set1_pd(l[3]), l4 = _mm256_set1_pd(l[4]), l5 = _mm256_set1_pd(l[5]);
    for (int c = c0; c < c1; c += 4) {
        const double *S = saved + c;
        if (c + 4 <= nv) {
            __m256d e = _mm256_mul_pd(l0, _mm256_loadu_pd(S));
            e = _mm256_fmadd_pd(l1, _mm256_loadu_pd(S + n), e);
            e = _mm256_fmadd_pd(l2, _mm256_loadu_pd(S + 2 * n), e);
            e = _mm256_fmadd_pd(l3, _mm256_loadu_pd(S + 3 * n), e);
            e = _mm256_fmadd_pd(l4, _mm256_loadu_pd(S + 4 * n), e);
            e = _mm256_fmadd_pd(l5, _mm256_loadu_pd(S + 5 * n), e);
            _mm256_storeu_pd(row + c, e);
        } else { /* the last 1-3 columns before nv: masked loads and store, nothing read or written
                  * past nv (a masked-off lane does not fault) */
            static const long long lanes[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
            const __m256i k = _mm256_loadu_si256((const __m256i *)(lanes + 4 - (c1 - c)));
            __m256d e = _mm256_mul_pd(l0, _mm256_maskload_pd(S, k));
            e = _mm256_fmadd_pd(l1, _mm256_maskload_pd(S + n, k), e);
            e = _mm256_fmadd_pd(l2, _mm256_maskload_pd(S + 2 * n, k), e);
            e = _mm256_fmadd_pd(l3, _mm256_maskload_pd(S + 3 * n, k), e);
            e = _mm256_fmadd_pd(l4, _mm256_maskload_pd(S + 4 * n, k), e);
            e = _mm256_fmadd_pd(l5, _mm256_maskload_pd(S + 5 * n, k), e);
            _mm256_maskstore_pd(row + c, k, e);
        }
    }
#else
    minv_dot6(l, ROWS6(saved, nv), row, c0, c1);
#endif
}

/* Row v(b) + i beyond b's subtree: walk b's path up, l = -G*(b) then l = T*(x) l at each body x
 * passed; each ancestor a gives the columns of its later children's subtrees. */
static void minv_unrelated_row(const sd_model *m, const sd_data *d, int b, int i, double *saved, double *row)
{
    const int nv = m->nv;
    if (vend(m, b) == nv) return; /* b's subtree ends the speeds (a chain's every row): nothing unrelated */
    double l[6];
    for (int r = 0; r < 6; ++r) l[r] = -d->G_world[6 * (m->v_index[b] + i) + r];
    for (int x = b;;) {
        const int a = m->parent[x], c0 = vend(m, x);
        if (c0 == nv) return;
        if (a < 0) { /* another tree of the forest: no coupling */
            memset(row + c0, 0, (size_t)(nv - c0) * sizeof(double));
            return;
        }
        const int c1 = vend(m, a);
        if (c0 < c1) minv_unrelated_run(l, saved, nv, row, c0, c1); /* unrelated entries */
        if (c1 == nv) return;
        /* l = T*(a) l = l - G(a) (H(a) l), every H(a) l taken from the l before the update: with
         * armature J, H G = I - J D^-1 is not I, so applying a multi-speed hinge's speeds one
         * after another, (I - g_1 h_1)(I - g_0 h_0) l, leaves the cross term g_1 (h_1 . g_0)(h_0 . l)
         * (the M^-1 M - I up to 0.5 that made 639b480 revert this code) */
        const int na = m->nv_k[a], va = m->v_index[a];
        double t[6];
        for (int j = 0; j < na; ++j) t[j] = sd_s6_dot(d->S_world + 6 * (va + j), l);
        for (int j = 0; j < na; ++j)
            for (int r = 0; r < 6; ++r) l[r] -= d->G_world[6 * (va + j) + r] * t[j];
        x = a;
    }
}

/* Base to tips: the upper triangle of M^-1, row by row (004 Eq 51, 58e-g with a = 0). A (6 x nv) holds
 * alpha(parent, c) for the columns of each body's subtree. */
static void minv_scatter(const sd_model *m, const sd_data *d, double *A, double *saved, double *Minv)
{
    const int nv = m->nv;
    for (int b = 0; b < m->n; ++b) {
        const int nk = m->nv_k[b], vb = m->v_index[b], c1 = vend(m, b), root = m->parent[b] < 0;
        const int leaf = m->subtree_end[b] == b + 1; /* no child reads alpha(b) */
        if (root && nk == 0) /* alpha = alpha+ = 0 for the children of a fixed root */
            for (int r = 0; r < 6; ++r) memset(A + (size_t)r * nv + vb, 0, (size_t)(c1 - vb) * sizeof(double));
        if (nk) {
            const double *s = d->S_world + 6 * vb, *g = d->G_world + 6 * vb;
            double *row = Minv + (size_t)vb * nv;
            if (nk > 1) minv_scatter_multi(s, g, nk, root, leaf, A, nv, row, vb, c1);
            else if (leaf && !root) minv_sub_dot6(g, ROWS6(A, nv), row, vb, c1);
            else if (root) minv_rank1(s, 1, row, ROWS6(A, nv), vb, c1); /* alpha+ = 0: y = nu, alpha = H* y */
            else minv_scatter_one(s, g, ROWS6(A, nv), row, vb, c1);
            for (int i = 0; i < nk; ++i) minv_unrelated_row(m, d, b, i, saved, row + (size_t)i * nv);
        }
        const int c0 = b + 1 < m->subtree_end[b] ? vend(m, b + 1) : c1;
        if (c0 < c1) /* alpha(b, c) for the columns of b's later children (b has several) */
            for (int r = 0; r < 6; ++r)
                memcpy(saved + (size_t)r * nv + c0, A + (size_t)r * nv + c0, (size_t)(c1 - c0) * sizeof(double));
    }
}

/* Up to this many speeds, M^-1 is M's Cholesky inverse (minv_dense). */
#define MINV_DENSE_MAX_NV 8

/* M^-1 from M(q) and its dense Cholesky factors, for a model of few speeds (a robot arm): there the
 * composite-body M and the O(nv^3) factor and inverse cost less than the recursion below, whose
 * gather and scatter bookkeeping per body does not pay off for so few columns. Measured against it
 * (-march=native): 0.71-0.79 of its time on serial chains of 3 to 8 revolutes, 0.76-0.89 on fixed
 * trees of 2 to 4 branches and 6 to 8 speeds; from 12 speeds on the recursion is the faster. Returns
 * 0, leaving the call to the recursion (which then names a singular hinge, or answers by its own
 * per-hinge scale), when an entry comes out non-finite or a pivot is not above 1e-8 of its own
 * diagonal entry of M and 1e-13 of the largest: far short of singular for a robot arm, but M is
 * formed in world axes, where its rounding grows with m |p|^2, so a nearly singular M (or one of a
 * nearly massless subtree, whose diagonal is round-off too) is left to the recursion's body-frame
 * test. */
static int minv_dense(const sd_model *m, sd_data *d, const double *q, double *Minv)
{
    const int nv = m->nv;
    if (!sd_mass_matrix_fill(m, d, q, Minv)) return 0;
    double diag[MINV_DENSE_MAX_NV], scale = 0.0;
    for (int i = 0; i < nv; ++i) {
        diag[i] = Minv[i * nv + i];
        scale = diag[i] > scale ? diag[i] : scale;
    }
    if (sd_cholesky_factor(Minv, nv, 1e-13 * scale) >= 0) return 0;
    for (int i = 0; i < nv; ++i) /* L_ii^2 is the pivot */
        if (!(Minv[i * nv + i] * Minv[i * nv + i] > 1e-8 * diag[i])) return 0;
    sd_cholesky_inverse(Minv, nv);
    return sd_all_finite(Minv, (size_t)nv * (size_t)nv);
}

/* The upper triangle of M^-1 on a model with a node workspace (a flexible body's modes): Eq 51 applied
 * to the columns of I, row i = M^-1 e_i (M^-1 is symmetric), O(N nv). Out of line: inlined, its sweeps
 * made the rigid kernel's function spill (+1.7% instructions, M^-1 of the 30-body tree). */
SD_NOINLINE static sd_status minv_by_columns(const sd_model *m, sd_data *d, const double *q, double *Minv)
{
    const int nv = m->nv;
    articulated_placements(m, d, q);
    const sd_status st = sd_riccati_gather(m, d, NULL);
    if (st != SD_OK) return st;
    for (int i = 0; i < nv; ++i) {
        double *row = Minv + (size_t)i * nv;
        memset(row, 0, (size_t)nv * sizeof(double));
        row[i] = 1.0;
        solve(m, d, row, row);
    }
    d->current &= ~SD_CURRENT_ACCELERATIONS; /* the sweeps used alpha as scratch */
    return SD_OK;
}

sd_status sd_mass_matrix_inverse(const sd_model *m, sd_data *d, const double *q, double *Minv)
{
    SD_RUN_COMPILED(m, d, mass_matrix_inverse, (q, Minv));
    const char *fn = "sd_mass_matrix_inverse";
    if (!Minv) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL Minv", fn);
    sd_status st = sd_check_call(m, d, fn, q, NULL, NULL, NULL, NULL);
    if (st != SD_OK) return st;
    const int nv = m->nv;
    if (d->nodes) {
        if ((st = minv_by_columns(m, d, q, Minv)) != SD_OK) return st;
    } else { /* the rigid kind's kernel: every column at once in world axes */
        if (nv <= MINV_DENSE_MAX_NV && minv_dense(m, d, q, Minv)) return SD_OK;
        sd_update_placements(m, d, q, 1);
        if ((st = sd_riccati_gather(m, d, NULL)) != SD_OK) return st;
        world_gains(m, d);
        /* psi and Y (36 per body each, nv <= 6 n on a rigid model) are the 6 x nv scratch: z then alpha,
         * and the multi-speed hinges' eps in the gather, then the saved alpha of branch bodies */
        minv_gather(m, d, d->psi, d->Y, Minv);
        minv_scatter(m, d, d->psi, d->Y, Minv);
    }
    /* the upper triangle mirrored: symmetric to the last bit (one call: inlined, as its loop wants) */
    const int finite = sd_mirror_upper(Minv, nv);
    if (finite) return SD_OK;
    return sd_check_output(d, fn, "Minv", Minv, (size_t)nv * (size_t)nv, SD_CAUSE_TINY_INERTIA);
}
