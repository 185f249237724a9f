/*
 * src/algorithms/mass_matrix.c — the mass matrix by composite body inertias (004 Alg 4.1-4.2, Eq 20):
 * a tips-to-base gather of R(k); for each body, X = R(k) H*(k) gives the entries
 * M(l, k) = H(l) phi(l, k) X of k and every ancestor l. Everything is held in world axes about the
 * world origin, where phi is the identity and a composite inertia is 13 numbers that add up.
 * Entries of unrelated bodies are zero (004 Sec 7) and never computed.
 */
#include <string.h>

#include "internal.h"
#include "node_engine.h"

/* Row r's entries M(r, a) = X . H*(a) over a contiguous run [lo, hi) of ancestor speeds, with the
 * H* of every speed stored by rows (6 x nv): 6 multiply-adds per entry along contiguous memory,
 * which vectorise, instead of a 6-vector dot per entry at the end of a walk over v_parent. */
static SD_NOINLINE void mm_row_run(const double *X, const double *restrict S0, const double *restrict S1,
                                   const double *restrict S2, const double *restrict S3, const double *restrict S4,
                                   const double *restrict S5, double *restrict row, int lo, int hi)
{
    const double x0 = X[0], x1 = X[1], x2 = X[2], x3 = X[3], x4 = X[4], x5 = X[5];
    for (int a = lo; a < hi; ++a) row[a] = x0 * S0[a] + x1 * S1[a] + x2 * S2[a] + x3 * S3[a] + x4 * S4[a] + x5 * S5[a];
}

/* The ancestor table, base to tips: top(k) is one past the last speed on the path from the base to
 * k, lo(k) the first speed of the contiguous run of the path's speeds that ends there, up(k) the body
 * whose path's speeds come next below lo(k) (-1: none). A chain is one run, a tree one run per
 * serial segment (004 Sec 7). Held as doubles in Y (3 per body; small integers are exact). */
static void mm_ancestor_runs(const sd_model *m, double *T)
{
    for (int k = 0; k < m->n; ++k) {
        const int p = m->parent[k], nk = m->nv_k[k], vk = m->v_index[k];
        const double ptop = p < 0 ? 0.0 : T[3 * p], plo = p < 0 ? 0.0 : T[3 * p + 1], pup = p < 0 ? -1.0 : T[3 * p + 2];
        double *t = T + 3 * k;
        if (nk == 0) { t[0] = ptop; t[1] = plo; t[2] = pup; }          /* a fixed hinge adds no speed */
        else if (p >= 0 && ptop == vk) { t[0] = vk + nk; t[1] = plo; t[2] = pup; } /* the run goes on */
        else { t[0] = vk + nk; t[1] = vk; t[2] = p < 0 ? -1.0 : (ptop > 0 ? p : -1.0); } /* a new run */
    }
}

sd_status sd_mass_matrix(const sd_model *m, sd_data *d, const double *q, double *M)
{
    if (m && m->nflex) return sd_nodes_mass_matrix(m, d, q, M);
    const sd_status st = sd_check_call(m, d, "sd_mass_matrix", q, NULL, NULL, NULL, NULL);
    if (st != SD_OK) return st;
    if (!M) return sd_data_fail(d, SD_E_ARGUMENT, "sd_mass_matrix: NULL M");
    const int nv = m->nv;
    sd_update_placements(m, d, q, 1);
    /* H*(l) in world axes about the world origin, where every phi(l, j) is the identity: an entry is
     * then a dot product instead of a transform per step. Stored by rows (6 x nv, in psi: 36 per body
     * and nv <= 6 n) so that a run of ancestors is one vectorised pass (mm_row_run). */
    double *ST = d->psi, *runs = d->Y;
    for (int c = 0; c < nv; ++c) {
        double s[6];
        sd_motion_to_parent(&d->Xworld[m->v_body[c]], d->S + 6 * c, s);
        for (int r = 0; r < 6; ++r) ST[(size_t)r * nv + c] = s[r];
    }
    mm_ancestor_runs(m, runs);
    /* Composite body inertias R(k) in world axes about the world origin (004 Eq 20). There
     * phi R phi* is R itself, and a sum of rigid inertias is the sum of their 13 numbers, so the
     * gather is additions; R(k) starts as M(k) moved to the world. */
    for (int k = 0; k < m->n; ++k)
        sd_rigid_inertia_to_parent(&d->Xworld[k], m->mass[k], m->com + 3 * k, m->inertia_com + 9 * k, d->Rc + 13 * k);
    for (int k = m->n - 1; k >= 0; --k) {
        const int nk = m->nv_k[k], vk = m->v_index[k];
        const double *Rk = d->Rc + 13 * k;
        for (int i = 0; i < nk; ++i) {
            /* X = R(k) H*(k), once per speed (F = I^c S of the composite-body algorithm) */
            double X[6], s[6];
            for (int r = 0; r < 6; ++r) s[r] = ST[(size_t)r * nv + vk + i];
            sd_rigid_inertia_mul(Rk, s, X);
            /* M(vk + i, a) = H(a) phi(a, k) X for a = k's speeds up to vk + i and its ancestors': row
             * vk + i of the lower triangle, run by run (the ancestor table); the speeds between runs
             * belong to unrelated bodies, whose entries are zero (004 Sec 7) */
            double *row = M + (size_t)(vk + i) * nv;
            int hi = vk + i + 1, lo = (int)runs[3 * k + 1], up = (int)runs[3 * k + 2];
            for (;;) {
                mm_row_run(X, ST, ST + nv, ST + 2 * (size_t)nv, ST + 3 * (size_t)nv, ST + 4 * (size_t)nv,
                           ST + 5 * (size_t)nv, row, lo, hi);
                const int next_hi = up < 0 ? 0 : (int)runs[3 * up];
                if (lo > next_hi) memset(row + next_hi, 0, (size_t)(lo - next_hi) * sizeof(double));
                if (up < 0) break;
                hi = next_hi;
                lo = (int)runs[3 * up + 1];
                up = (int)runs[3 * up + 2];
            }
        }
        if (m->parent[k] >= 0) { /* R(parent) += R(k) */
            double *Rp = d->Rc + 13 * m->parent[k];
            for (int i = 0; i < 13; ++i) Rp[i] += Rk[i];
        }
    }
    if (m->has_armature) /* the rotors' reflected inertia, a diagonal (dynamics.h) */
        for (int v = 0; v < nv; ++v) M[(size_t)v * nv + v] += m->armature[v];
    const int finite = sd_mirror_lower(M, nv); /* the upper triangle mirrors the lower */
    if (finite) return SD_OK;
    return sd_check_output(d, "sd_mass_matrix", "M", M, (size_t)nv * (size_t)nv, SD_CAUSE_OVERFLOW);
}
