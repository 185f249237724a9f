/*
 * src/mass_matrix.c — the mass matrix by composite body inertias (004 Alg 4.1-4.2, Eq 20):
 * a tips-to-base gather of R(k); for each body, X = R(k) H*(k) is carried up the path to the base
 * and gives the entries M(l, k) = H(l) phi(l, k) X of every ancestor l (carried in world axes,
 * where phi(l, k) is the identity). Entries of unrelated bodies are zero
 * (004 Sec 7) and never computed.
 */
#include <string.h>

#include "internal.h"

sd_status sd_mass_matrix(const sd_model *m, sd_data *d, const double *q, double *M)
{
    if (!m || !d || !q || !M) return sd_data_fail(d, SD_E_ARGUMENT, "sd_mass_matrix: NULL argument");
    const int nv = m->nv;
    sd_update_placements(m, d, q);
    /* H*(l) in world axes about the world origin, where every phi(l, j) is the identity: the inner
     * loop over ancestors is then a dot product per entry instead of a transform per step */
    for (int c = 0; c < nv; ++c) sd_motion_to_parent(&d->Xworld[m->v_body[c]], d->S + 6 * c, d->S_world + 6 * c);
    memcpy(d->Rc, m->M6, 36 * (size_t)m->n * sizeof(double)); /* R(k) starts as M(k) */
    for (int k = m->n - 1; k >= 0; --k) {
        const int nk = m->nv_k[k], vk = m->v_index[k];
        const double *Sk = d->S + 6 * vk;
        double X[36], Xw[36]; /* X = R(k) H*(k), 6 x nk column-major; Xw the same in world axes */
        for (int i = 0; i < nk; ++i) {
            sd_sym6_mul(d->Rc + 36 * k, Sk + 6 * i, X + 6 * i);
            sd_force_to_parent(&d->Xworld[k], X + 6 * i, Xw + 6 * i);
        }
        for (int i = 0; i < nk; ++i) /* M(k, k) = H(k) X */
            for (int j = 0; j < nk; ++j) M[(vk + i) * nv + vk + j] = sd_s6_dot(Sk + 6 * i, X + 6 * j);
        for (int l = m->parent[k]; l >= 0; l = m->parent[l]) /* M(l, k) = M*(k, l) = H(l) phi(l, k) X */
            for (int a = m->v_index[l]; a < m->v_index[l] + m->nv_k[l]; ++a)
                for (int i = 0; i < nk; ++i) {
                    const double v = sd_s6_dot(d->S_world + 6 * a, Xw + 6 * i);
                    M[a * nv + vk + i] = v;
                    M[(vk + i) * nv + a] = v;
                }
        if (m->parent[k] >= 0) /* R(parent) += phi R(k) phi* */
            sd_sym6_add_to_parent(&d->Xup[k], d->Rc + 36 * k, d->Rc + 36 * m->parent[k]);
    }
    /* Zero the entries of unrelated bodies. In preorder, the bodies after k's subtree are neither
     * its descendants nor its ancestors (those come before k), so their columns in k's rows, and
     * the mirrored rows, are exactly the unrelated pairs. */
    for (int k = 0; k < m->n; ++k) {
        const int end = m->v_index[m->subtree_end[k]];
        for (int row = m->v_index[k]; row < m->v_index[k] + m->nv_k[k]; ++row)
            for (int c = end; c < nv; ++c) M[row * nv + c] = M[c * nv + row] = 0.0;
    }
    return SD_OK;
}
