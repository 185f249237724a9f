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

sd_status sd_mass_matrix(const sd_model *m, sd_data *d, const double *q, double *M)
{
    if (m && m->nflex) return sd_nodes_mass_matrix(m, d, q, M);
    const sd_status st = sd_check_call(m, d, "sd_mass_matrix", q, NULL, NULL, NULL, NULL);
    if (st != SD_OK) return st;
    if (!M) return sd_data_fail(d, SD_E_ARGUMENT, "sd_mass_matrix: NULL M");
    const int nv = m->nv;
    sd_update_placements(m, d, q, 1);
    /* H*(l) in world axes about the world origin, where every phi(l, j) is the identity: the inner
     * loop over ancestors is then a dot product per entry instead of a transform per step */
    for (int c = 0; c < nv; ++c) sd_motion_to_parent(&d->Xworld[m->v_body[c]], d->S + 6 * c, d->S_world + 6 * c);
    /* Composite body inertias R(k) in world axes about the world origin (004 Eq 20). There
     * phi R phi* is R itself, and a sum of rigid inertias is the sum of their 13 numbers, so the
     * gather is additions; R(k) starts as M(k) moved to the world. */
    for (int k = 0; k < m->n; ++k)
        sd_rigid_inertia_to_parent(&d->Xworld[k], m->mass[k], m->com + 3 * k, m->inertia_com + 9 * k, d->Rc + 13 * k);
    /* Entries of unrelated bodies are zero (004 Sec 7): clear the lower triangle, row by row,
     * and let the gather write the related ones. */
    for (int r = 0; r < nv; ++r) memset(M + (size_t)r * nv, 0, (size_t)(r + 1) * sizeof(double));
    for (int k = m->n - 1; k >= 0; --k) {
        const int nk = m->nv_k[k], vk = m->v_index[k];
        const double *Rk = d->Rc + 13 * k;
        double X[36]; /* X = R(k) H*(k), 6 x nk column-major */
        for (int i = 0; i < nk; ++i) sd_rigid_inertia_mul(Rk, d->S_world + 6 * (vk + i), X + 6 * i);
        /* M(k, l) = H(l) phi(l, k) X for l = k and its ancestors: k's rows, the lower triangle
         * (ancestors have smaller indices), written along rows so that a large M stays in cache */
        for (int a = vk + nk - 1; a >= 0 && nk > 0; a = m->v_parent[a]) /* k's speeds, then its ancestors' */
            for (int i = 0; i < nk; ++i) M[(vk + i) * nv + a] = sd_s6_dot(d->S_world + 6 * a, X + 6 * i);
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
