/*
 * src/derivatives/mass_factor.c — M^-1 applied to the nv x 2nv block [d tau/dq, d tau/du] of the
 * forward dynamics derivatives (derivatives.c), through the tree-sparse factorisation M = L^T D L.
 *
 * M comes almost free from the inverse dynamics derivatives: their composite inertias IC(k) (world
 * axes) and P = IC(k) H*(k) give M(i, j) = H*(j)^T IC(body(i)) H*(i) = H*(j) . P(i) for every speed j
 * on speed i's path to the base (004 Eq 21, the composite-body form; the armature on the diagonal),
 * which are the only nonzero entries below the diagonal. Factored from the tips (Featherstone's
 * LTDL, Rigid Body Dynamics Algorithms Sec 6.5) L keeps that sparsity, so M^-1 X = L^-1 D^-1 L^-T X
 * takes one row operation (an axpy of a whole row of X) per nonzero of L twice: O(nv depth w) for a
 * width w, where a dense M^-1 times X takes nv^2 w.
 */
#include "derivatives_internal.h"

int sd_deriv_mass_matrix_factor(const sd_model *m, const sd_deriv_scratch *s, double *F)
{
    const size_t nv = (size_t)m->nv;
    for (int i = 0; i < m->nv; ++i) /* the lower part of M along each path */
        for (int j = i; j >= 0; j = m->v_parent[j]) F[i * nv + j] = sd_s6_dot(s->Sw + 6 * j, s->P + 6 * i);
    if (m->has_armature)
        for (int i = 0; i < m->nv; ++i) F[i * nv + i] += m->armature[i];
    for (int k = m->nv - 1; k >= 0; --k) {
        const double dk = F[k * nv + k];
        if (!(dk > 0.0)) return k;
        for (int i = m->v_parent[k]; i >= 0; i = m->v_parent[i]) {
            const double a = F[k * nv + i] / dk;
            for (int j = i; j >= 0; j = m->v_parent[j]) F[i * nv + j] -= a * F[k * nv + j];
            F[k * nv + i] = a;
        }
    }
    return -1;
}

/* row_i -= a row_k, w entries */
static void row_axpy(double *row_i, double a, const double *row_k, int w)
{
    for (int c = 0; c < w; ++c) row_i[c] -= a * row_k[c];
}

void sd_deriv_mass_matrix_solve(const sd_model *m, const double *F, double *X, int w, size_t ld)
{
    const size_t nv = (size_t)m->nv;
    for (int k = m->nv - 1; k >= 0; --k) /* L^T y = x, from the tips */
        for (int i = m->v_parent[k]; i >= 0; i = m->v_parent[i]) row_axpy(X + i * ld, F[k * nv + i], X + k * ld, w);
    for (int k = 0; k < m->nv; ++k) { /* D^-1 */
        const double r = 1.0 / F[k * nv + k];
        double *row = X + k * ld;
        for (int c = 0; c < w; ++c) row[c] *= r;
    }
    for (int k = 0; k < m->nv; ++k) /* L x = y, from the base */
        for (int i = m->v_parent[k]; i >= 0; i = m->v_parent[i]) row_axpy(X + k * ld, F[k * nv + i], X + i * ld, w);
}
