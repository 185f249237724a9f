/*
 * src/innovations.c — what the articulated-body (Riccati) quantities give almost for free
 * (004 Sec 6): the innovations factors of the mass matrix and their inverses applied to vectors
 * (Lemma 11, Eq 49-51), M^-1 x in O(N), the dense M^-1 in O(N^2) (Eq 51), and
 * det M = prod det D(k) (Cor 6.1, Eq 53).
 *
 * Glossary: see internal.h; K is G shifted to the parent (004 Eq 37), so that
 *   [I + H phi K] x = x + H phi~ G x,  [I - H psi K] x = eps of the residual gather with T = x.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

sd_status sd_articulated_inertias(const sd_model *m, sd_data *d, const double *q)
{
    const sd_status st = sd_check_call(m, d, "sd_articulated_inertias", q, NULL, NULL, NULL, NULL);
    if (st != SD_OK) return st;
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

sd_status sd_innovations_apply(const sd_model *m, sd_data *d, sd_factor_op op, const double *x, double *y)
{
    if (!m || !d || !x || !y) return sd_data_fail(d, SD_E_ARGUMENT, "sd_innovations_apply: NULL argument");
    switch (op) {
    case SD_FACTOR_NE: apply_ne(m, d, x, y); break;
    case SD_FACTOR_NE_TRANSPOSE: apply_ne_transpose(m, d, x, y); break;
    case SD_FACTOR_INV: apply_inv(m, d, x, y); break;
    case SD_FACTOR_INV_TRANSPOSE: apply_inv_transpose(m, d, x, y); break;
    default: return sd_data_fail(d, SD_E_ARGUMENT, "sd_innovations_apply: unknown factor %d", (int)op);
    }
    d->alpha_has_gravity = 0;
    d->forces_valid = 0;
    return SD_OK;
}

sd_status sd_mass_matrix_solve(const sd_model *m, sd_data *d, const double *x, double *y)
{
    if (!m || !d || !x || !y) return sd_data_fail(d, SD_E_ARGUMENT, "sd_mass_matrix_solve: NULL argument");
    /* M^-1 = [I - H psi K]* D^-1 [I - H psi K]  (004 Eq 51) */
    apply_inv(m, d, x, y);
    for (int k = 0; k < m->n; ++k)
        if (m->nv_k[k]) {
            double t[6];
            for (int i = 0; i < m->nv_k[k]; ++i) t[i] = y[m->v_index[k] + i];
            sd_dinv_mul(d->Dinv + 36 * k, m->nv_k[k], t, y + m->v_index[k]);
        }
    apply_inv_transpose(m, d, y, y);
    d->alpha_has_gravity = 0;
    d->forces_valid = 0;
    return SD_OK;
}

sd_status sd_mass_matrix_determinant(const sd_model *m, sd_data *d, const double *q, double *det, double *log_det)
{
    const sd_status st = sd_articulated_inertias(m, d, q);
    if (st != SD_OK) return st;
    double s = 0.0; /* log det M = sum_k log det D(k)  (004 Eq 53) */
    for (int k = 0; k < m->n; ++k) s += sd_cholesky_logdet(d->Dchol + 36 * k, m->nv_k[k]);
    if (log_det) *log_det = s;
    if (det) *det = exp(s);
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

/* The residual gather [I - H psi K] e_c followed by D^-1, for every column c at once. Column c
 * only has residuals z on the path from its body to the base, one at a time, so one 6 x nv buffer
 * holds them all (subtrees are contiguous column ranges). Writes nu(k, c) into Minv for c in k's
 * subtree. */
static void minv_gather(const sd_model *m, sd_data *d, double *Minv)
{
    const int nv = m->nv;
    double *Z = d->minv_z;
    for (int k = m->n - 1; k >= 0; --k) {
        const int nk = m->nv_k[k], vk = m->v_index[k], vend = m->v_index[m->subtree_end[k]];
        if (nk == 0) continue; /* a fixed hinge passes its subtree's residuals on unchanged */
        memset(Z + 6 * vk, 0, 6 * (size_t)nk * sizeof(double));
        for (int c = vk; c < vend; ++c) {
            double eps[6], *zc = Z + 6 * c;
            for (int i = 0; i < nk; ++i) eps[i] = (c == vk + i) - sd_s6_dot(d->S_world + 6 * (vk + i), zc);
            double nu[6];
            sd_dinv_mul(d->Dinv + 36 * k, nk, eps, nu);
            for (int i = 0; i < nk; ++i) {
                Minv[(vk + i) * nv + c] = nu[i];
                for (int r = 0; r < 6; ++r) zc[r] += d->G_world[6 * (vk + i) + r] * eps[i];
            }
        }
    }
}

/* The acceleration scatter [I - H psi K]* for every column c >= v(k) of each row block k (the
 * upper triangle). Column accelerations run down the tree in one buffer; a body with several
 * children keeps a copy for the children after the first. */
static void minv_scatter(const sd_model *m, sd_data *d, double *Minv)
{
    const int nv = m->nv;
    double *A = d->minv_alpha; /* the running buffer, slot 0; branch copies follow */
    for (int k = 0; k < m->n; ++k) {
        const int nk = m->nv_k[k], vk = m->v_index[k], vend = m->v_index[m->subtree_end[k]], p = m->parent[k];
        const size_t cols = (size_t)(nv - vk);
        if (p < 0) memset(A + 6 * vk, 0, 6 * cols * sizeof(double));
        else if (p != k - 1) /* not the first child: restore the parent's accelerations */
            memcpy(A + 6 * vk, A + 6 * (size_t)nv * (size_t)(1 + d->branch_slot[p]) + 6 * vk,
                   6 * cols * sizeof(double));
        for (int c = vk; c < nv; ++c) {
            double *ac = A + 6 * c;
            for (int i = 0; i < nk; ++i) {
                double *entry = &Minv[(vk + i) * nv + c];
                const double nu = c < vend ? *entry : 0.0;
                *entry = nu - sd_s6_dot(d->G_world + 6 * (vk + i), ac);
            }
            for (int i = 0; i < nk; ++i) {
                const double y = Minv[(vk + i) * nv + c];
                for (int r = 0; r < 6; ++r) ac[r] += d->S_world[6 * (vk + i) + r] * y;
            }
        }
        if (d->branch_slot[k] >= 0)
            memcpy(A + 6 * (size_t)nv * (size_t)(1 + d->branch_slot[k]) + 6 * vk, A + 6 * vk,
                   6 * cols * sizeof(double));
    }
}

sd_status sd_mass_matrix_inverse(const sd_model *m, sd_data *d, const double *q, double *Minv)
{
    if (!Minv) return sd_data_fail(d, SD_E_ARGUMENT, "sd_mass_matrix_inverse: NULL Minv");
    const sd_status st = sd_articulated_inertias(m, d, q);
    if (st != SD_OK) return st;
    world_gains(m, d);
    minv_gather(m, d, Minv);
    minv_scatter(m, d, Minv);
    const int nv = m->nv;
    for (int r = 0; r < nv; ++r) /* the lower triangle by symmetry */
        for (int c = r + 1; c < nv; ++c) Minv[c * nv + r] = Minv[r * nv + c];
    return SD_OK;
}
