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

#include "internal.h"
#include "node_engine.h"

sd_status sd_articulated_inertias(const sd_model *m, sd_data *d, const double *q)
{
    const sd_status st = sd_check_call(m, d, "sd_articulated_inertias", q, NULL, NULL, NULL, NULL);
    if (st != SD_OK) return st;
    if (m->nflex) return sd_nodes_articulated_inertias(m, d, q); /* the node engine */
    sd_update_placements(m, d, q, 1);
    return sd_riccati_gather(m, d, NULL);
}

/* y = G(k) x(k), a spatial force */
static void gain_times(const sd_model *m, const sd_data *d, int k, const double *x, double y[6])
{
    memset(y, 0, 6 * sizeof(double));
    for (int i = 0; i < m->nv_k[k]; ++i)
        for (int r = 0; r < 6; ++r) y[r] += d->G[6 * (m->v_index[k] + i) + r] * x[m->v_index[k] + i];
}

/* [I + H phi K] x: w(k) = sum_children phi(k, j) (w(j) + G(j) x(j)); y(k) = x(k) + H(k) w(k). */
static void apply_ne(const sd_model *m, sd_data *d, const double *x, double *y)
{
    memset(d->z, 0, 6 * (size_t)m->n * sizeof(double));
    for (int k = m->n - 1; k >= 0; --k) {
        const int vk = m->v_index[k];
        double *w = d->z + 6 * k, g[6];
        gain_times(m, d, k, x, g);
        for (int i = 0; i < m->nv_k[k]; ++i) y[vk + i] = x[vk + i] + sd_s6_dot(d->S + 6 * (vk + i), w);
        if (m->parent[k] >= 0) {
            double t[6], tp[6];
            for (int r = 0; r < 6; ++r) t[r] = w[r] + g[r];
            sd_force_to_parent(&d->Xup[k], t, tp);
            for (int r = 0; r < 6; ++r) d->z[6 * m->parent[k] + r] += tp[r];
        }
    }
}

/* [I + H phi K]* x: s(k) = phi*(parent, k) (s(parent) + H*(parent) x(parent)); y(k) = x(k) + G*(k) s(k). */
static void apply_ne_transpose(const sd_model *m, sd_data *d, const double *x, double *y)
{
    for (int k = 0; k < m->n; ++k) {
        const int vk = m->v_index[k];
        double *s = d->alpha_plus + 6 * k, *t = d->alpha + 6 * k;
        if (m->parent[k] < 0) memset(s, 0, 6 * sizeof(double));
        else sd_motion_to_child(&d->Xup[k], d->alpha + 6 * m->parent[k], s);
        sd_hinge_motion(m, d, k, x, t); /* t(k) = s(k) + H*(k) x(k), read by the children */
        for (int r = 0; r < 6; ++r) t[r] += s[r];
        for (int i = 0; i < m->nv_k[k]; ++i) y[vk + i] = x[vk + i] + sd_s6_dot(d->G + 6 * (vk + i), s);
    }
}

/* [I - H psi K] x (004 Eq 50), the residual gather of Eq 58a-c with a = b = 0 and T = x:
 * z(k) = sum phi(k, j) z+(j); eps(k) = x(k) - H(k) z(k); z+(k) = z(k) + G(k) eps(k); y = eps. */
static void apply_inv(const sd_model *m, sd_data *d, const double *x, double *y)
{
    memset(d->z, 0, 6 * (size_t)m->n * sizeof(double));
    for (int k = m->n - 1; k >= 0; --k) {
        const int vk = m->v_index[k];
        double *z = d->z + 6 * k, g[6];
        for (int i = 0; i < m->nv_k[k]; ++i) y[vk + i] = x[vk + i] - sd_s6_dot(d->S + 6 * (vk + i), z);
        gain_times(m, d, k, y, g);
        if (m->parent[k] >= 0) {
            double t[6], tp[6];
            for (int r = 0; r < 6; ++r) t[r] = z[r] + g[r];
            sd_force_to_parent(&d->Xup[k], t, tp);
            for (int r = 0; r < 6; ++r) d->z[6 * m->parent[k] + r] += tp[r];
        }
    }
}

/* [I - H psi K]* x, the acceleration scatter of Eq 58e-g with a = 0:
 * alpha+(k) = phi* alpha(parent); y(k) = x(k) - G*(k) alpha+(k); alpha(k) = alpha+(k) + H*(k) y(k). */
static void apply_inv_transpose(const sd_model *m, sd_data *d, const double *x, double *y)
{
    for (int k = 0; k < m->n; ++k) {
        const int vk = m->v_index[k];
        double *ap = d->alpha_plus + 6 * k, *alpha = d->alpha + 6 * k, hy[6];
        if (m->parent[k] < 0) memset(ap, 0, 6 * sizeof(double));
        else sd_motion_to_child(&d->Xup[k], d->alpha + 6 * m->parent[k], ap);
        for (int i = 0; i < m->nv_k[k]; ++i) y[vk + i] = x[vk + i] - sd_s6_dot(d->G + 6 * (vk + i), ap);
        sd_hinge_motion(m, d, k, y, hy);
        for (int r = 0; r < 6; ++r) alpha[r] = ap[r] + hy[r];
    }
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
    if (m && m->nflex) return sd_nodes_not_offered(m, d, "sd_innovations_apply");
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
    if (m && m->nflex) return sd_nodes_not_offered(m, d, "sd_mass_matrix_solve");
    const char *fn = "sd_mass_matrix_solve";
    const sd_status st = check_factor_call(m, d, fn, x, y);
    if (st != SD_OK) return st;
    /* M^-1 = [I - H psi K]* D^-1 [I - H psi K]  (004 Eq 51) */
    apply_inv(m, d, x, y);
    for (int k = 0; k < m->n; ++k)
        if (m->nv_k[k]) {
            double t[6];
            for (int i = 0; i < m->nv_k[k]; ++i) t[i] = y[m->v_index[k] + i];
            sd_dinv_mul(d->Dinv + 36 * k, m->nv_k[k], t, y + m->v_index[k]);
        }
    apply_inv_transpose(m, d, y, y);
    return sd_check_output(d, fn, "y", y, (size_t)m->nv, SD_CAUSE_TINY_INERTIA);
}

sd_status sd_mass_matrix_determinant(const sd_model *m, sd_data *d, const double *q, double *det, double *log_det)
{
    const sd_status st = sd_articulated_inertias(m, d, q);
    if (st != SD_OK) return st;
    double s = 0.0; /* log det M = sum_k log det D(k)  (004 Eq 53) */
    if (m->nflex) { /* prod det D_f(k) det D_R(k): node_articulated.c */
        const sd_status st1 = sd_nodes_log_det(m, d, &s);
        if (st1 != SD_OK) return st1;
    } else
        for (int k = 0; k < m->n; ++k) s += sd_cholesky_logdet(d->Dchol + 36 * k, m->nv_k[k]);
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

/* Columns c0 .. c0 + cnt - 1 of M^-1 (004 Eq 51), their entries in rows r <= c written along row c
 * of Minv (the lower triangle; M^-1 is symmetric). For each column, two sweeps that touch only what
 * the column reaches:
 *   - the residual gather [I - H psi K] e_c then D^-1 (Eq 50-51) runs only on the path from c's body
 *     to the base, the only bodies with a nonzero residual z; in world axes about the world origin
 *     phi is the identity, so z is one 6-vector carried up: eps = e_c - H z, nu = D^-1 eps,
 *     z += G eps; nu(r) goes to row c;
 *   - the acceleration scatter [I - H psi K]* over bodies 0 .. c's body (those with a speed <= c):
 *     alpha+(k) = alpha(parent), y(r) = nu(r) - G* alpha+ (nu zero off the path),
 *     alpha(k) = alpha+ + H* y; alpha(k - 1) is carried along, and stored (in `stored`, 6 per
 *     column of the block per body) only for a body with several children.
 * A few columns go through the sweeps together: each body's step is then independent work for
 * each column, where one column alone would wait on the previous body's result at every step. The
 * scratch is O(N) and M^-1 costs O(N^2) in all. */
enum { MINV_BLOCK = 6 }; /* 6 numbers per column of a block: the 36 per body of psi, the scratch */
static void minv_columns(const sd_model *m, const sd_data *d, int c0, int cnt, double *stored, double *Minv)
{
    const int nv = m->nv;
    int kc[MINV_BLOCK], kmax = 0;
    double z[MINV_BLOCK][6] = {{0}}, a[MINV_BLOCK][6] = {{0}};
    for (int j = 0; j < cnt; ++j) {
        kc[j] = m->v_body[c0 + j];
        kmax = kc[j] > kmax ? kc[j] : kmax;
    }
    /* gather, on the columns' paths: at[j] is where column j has got to; the paths are walked
     * together, the deepest body first, so that the columns share the steps where they join */
    int at[MINV_BLOCK];
    memcpy(at, kc, (size_t)cnt * sizeof at[0]);
    for (int k = kmax; k >= 0;) {
        const int nk = m->nv_k[k], vk = m->v_index[k];
        int next = -1;
        for (int j = 0; j < cnt; ++j) {
            if (at[j] != k) {
                next = at[j] > next ? at[j] : next;
                continue;
            }
            at[j] = m->parent[k];
            next = at[j] > next ? at[j] : next;
            if (nk == 0) continue; /* a fixed hinge passes z on unchanged */
            const int c = c0 + j;
            double eps[6], nu[6], *row = Minv + (size_t)c * nv;
            for (int i = 0; i < nk; ++i) eps[i] = (vk + i == c) - sd_s6_dot(d->S_world + 6 * (vk + i), z[j]);
            sd_dinv_mul(d->Dinv + 36 * k, nk, eps, nu);
            for (int i = 0; i < nk; ++i) {
                if (vk + i <= c) row[vk + i] = nu[i];
                for (int r = 0; r < 6; ++r) z[j][r] += d->G_world[6 * (vk + i) + r] * eps[i];
            }
        }
        k = next;
    }
    for (int k = 0; k <= kmax; ++k) { /* scatter */
        const int nk = m->nv_k[k], vk = m->v_index[k], p = m->parent[k];
        for (int j = 0; j < cnt; ++j) {
            if (k > kc[j]) continue; /* past the column's body */
            const int c = c0 + j, on_path = kc[j] < m->subtree_end[k];
            double ap[6], *row = Minv + (size_t)c * nv;
            if (p < 0) memset(a[j], 0, sizeof a[j]);
            else if (p != k - 1) memcpy(a[j], stored + 6 * (MINV_BLOCK * p + j), sizeof a[j]);
            memcpy(ap, a[j], sizeof ap); /* alpha+(k) = alpha(parent) */
            for (int i = 0; i < nk && vk + i <= c; ++i) {
                const double y = (on_path ? row[vk + i] : 0.0) - sd_s6_dot(d->G_world + 6 * (vk + i), ap);
                row[vk + i] = y;
                for (int r = 0; r < 6; ++r) a[j][r] += d->S_world[6 * (vk + i) + r] * y;
            }
            if (m->last_child[k] > k + 1) memcpy(stored + 6 * (MINV_BLOCK * k + j), a[j], sizeof a[j]);
        }
    }
}

sd_status sd_mass_matrix_inverse(const sd_model *m, sd_data *d, const double *q, double *Minv)
{
    if (m && m->nflex) return sd_nodes_not_offered(m, d, "sd_mass_matrix_inverse");
    const char *fn = "sd_mass_matrix_inverse";
    if (!Minv) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL Minv", fn);
    const sd_status st = sd_articulated_inertias(m, d, q);
    if (st != SD_OK) return st;
    world_gains(m, d);
    const int nv = m->nv;
    for (int c = 0; c < nv; c += MINV_BLOCK) /* psi (36 per body) is the scatter's scratch */
        minv_columns(m, d, c, nv - c < MINV_BLOCK ? nv - c : MINV_BLOCK, d->psi, Minv);
    const int finite = sd_mirror_lower(Minv, nv); /* the upper triangle mirrors the lower */
    if (finite) return SD_OK;
    return sd_check_output(d, fn, "Minv", Minv, (size_t)nv * (size_t)nv, SD_CAUSE_TINY_INERTIA);
}
