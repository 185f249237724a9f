/*
 * src/derivatives/mass_factor.c — M^-1 applied to d tau/dq, d tau/du and 1 for the forward dynamics
 * derivatives (derivatives.c), through the tree-sparse factorisation M = L^T D L.
 *
 * M comes almost free from the inverse dynamics derivatives: their composite inertias IC(k) (the
 * recursion's reference axes) and P = IC(k) H*(k) give M(i, j) = H*(j)^T IC(body(i)) H*(i) =
 * H*(j) . P(i) for every speed j on speed i's path to the base (004 Eq 21, the composite-body form;
 * the armature on the diagonal), which are the only nonzero entries below the diagonal. Factored from the tips (Featherstone's
 * LTDL, Rigid Body Dynamics Algorithms Sec 6.5) L keeps that sparsity, so M^-1 X = L^-1 D^-1 L^-T X
 * takes one row operation per nonzero of L twice: O(nv depth w) for a width w, where a dense M^-1
 * times X takes nv^2 w. The columns go in blocks of 16 (then 8, 4, 2, 1): a row's block is summed in
 * registers over all the rows it gathers and stored once, where row-by-row axpys of the full width
 * load and store it once per nonzero of L (about 40% fewer instructions on the humanoid with AVX2).
 * The forward dynamics derivatives hand the three right-hand sides over as one X, side by side in
 * rows of whole 64-byte lines (derivatives.c): one pass over the factors for all of them, and no
 * vector load split across two cache lines (Talos, -march=native: 28.8k -> 17.6k cycles for the
 * three, where wider blocks of 32 columns, or the gathers split over two sets of accumulators,
 * measured slower: 18.7k and 21.6k).
 */
#include "derivatives_internal.h"

int sd_deriv_mass_matrix_factor(const sd_model *m, const sd_deriv_scratch *s, double *F)
{
    const size_t nv = (size_t)m->nv;
    /* a free root's H* is 1 in the recursion's reference axes (id_derivatives.c): M(i, c) = P(i)_c */
    const int root_axes = m->n > 0 && m->hinge[0] == SD_HINGE_FREE ? 6 : 0;
    for (int i = 0; i < m->nv; ++i) { /* the lower part of M along each path, zero elsewhere */
        double *row = F + (size_t)i * nv;
        const double *P = s->P + 6 * i;
        for (int j = 0; j <= i; ++j) row[j] = 0.0;
        for (int j = i; j >= 0; j = m->v_parent[j]) row[j] = j < root_axes ? P[j] : sd_s6_dot(s->Sw + 6 * j, P);
    }
    if (m->has_armature)
        for (int i = 0; i < m->nv; ++i) F[i * nv + i] += m->armature[i];
    /* Row k's entries are zero off k's path, and i's path is the part of k's below i: so row i -=
     * a row k over all of [0, i] changes only i's path and runs along contiguous memory (vectorised)
     * where a walk of i's path does one dependent load per entry. */
    for (int k = m->nv - 1; k >= 0; --k) {
        const double dk = F[k * nv + k];
        if (!(dk > 0.0)) return k;
        const double inv_dk = 1.0 / dk;
        double *restrict rk = F + (size_t)k * nv;
        for (int i = m->v_parent[k]; i >= 0; i = m->v_parent[i]) {
            const double a = rk[i] * inv_dk;
            double *restrict ri = F + (size_t)i * nv;
            for (int j = 0; j <= i; ++j) ri[j] -= a * rk[j];
            rk[i] = a;
        }
    }
    return -1;
}

/* One block of cw columns (cw <= 16, a constant where inlined) of X = sign M^-1 X: both passes with
 * each row's block accumulated in registers. L^T y = x from the tips gathers, for row i, the rows of
 * the speeds below i (i is on their path to the base exactly when they lie in i's speed subtree,
 * the contiguous range (i, v_end) of the preorder); L x = D^-1 y from the base gathers the rows
 * of i's path. The whole block, nv rows of cw numbers, stays in the L1 cache between the passes. */
static inline __attribute__((always_inline)) void solve_block(const sd_model *m, const double *F, double *X,
                                                              size_t ld, int cw, double sign)
{
    const size_t nv = (size_t)m->nv;
    double acc[16];
    for (int i = m->nv - 1; i >= 0; --i) {
        double *row = X + (size_t)i * ld;
        const int b = m->v_body[i], v_end = m->subtree_end[b] < m->n ? m->v_index[m->subtree_end[b]] : m->nv;
        for (int c = 0; c < cw; ++c) acc[c] = row[c];
        for (int k = i + 1; k < v_end; ++k) {
            const double a = F[(size_t)k * nv + (size_t)i];
            const double *rk = X + (size_t)k * ld;
            for (int c = 0; c < cw; ++c) acc[c] -= a * rk[c];
        }
        for (int c = 0; c < cw; ++c) row[c] = acc[c];
    }
    for (int k = 0; k < m->nv; ++k) {
        double *row = X + (size_t)k * ld;
        const double r = sign / F[(size_t)k * nv + (size_t)k];
        for (int c = 0; c < cw; ++c) acc[c] = r * row[c];
        for (int i = m->v_parent[k]; i >= 0; i = m->v_parent[i]) {
            const double a = F[(size_t)k * nv + (size_t)i];
            const double *ri = X + (size_t)i * ld;
            for (int c = 0; c < cw; ++c) acc[c] -= a * ri[c];
        }
        for (int c = 0; c < cw; ++c) row[c] = acc[c];
    }
}

void sd_deriv_mass_matrix_solve(const sd_model *m, const double *F, double *X, int w, size_t ld,
                                double sign)
{
    int c = 0;
    for (; c + 16 <= w; c += 16) solve_block(m, F, X + c, ld, 16, sign);
    if (c + 8 <= w) {
        solve_block(m, F, X + c, ld, 8, sign);
        c += 8;
    }
    if (c + 4 <= w) {
        solve_block(m, F, X + c, ld, 4, sign);
        c += 4;
    }
    if (c + 2 <= w) {
        solve_block(m, F, X + c, ld, 2, sign);
        c += 2;
    }
    if (c < w) solve_block(m, F, X + c, ld, 1, sign);
}
