/*
 * src/codegen/cg_dense.c — the inverse of a symmetric positive definite matrix on the generator's
 * scalars (cg_gen.h): D(k)^-1 of a hinge (004 Eq 33) and M^-1.
 */
#include <stdlib.h>

#include "cg_gen.h"

void cg_spd_inverse(cg_gen *g, const cg_val *A, int n, cg_val *Ainv, int may_split)
{
    cg_emit *e = &g->e;
    const size_t nn = (size_t)n * (size_t)n;
    cg_val *W = malloc(nn * sizeof *W), *L = malloc(nn * sizeof *L), *Li = malloc(nn * sizeof *Li);
    if (!W || !L || !Li) {
        free(W), free(L), free(Li);
        g->out_of_memory = 1;
        for (size_t i = 0; i < nn; ++i) Ainv[i] = cg_const(0.0);
        return;
    }
    for (size_t i = 0; i < nn; ++i) {
        W[i] = A[i];
        L[i] = Li[i] = Ainv[i] = cg_const(0.0);
    }
    if (may_split) {
        cg_live_push(g, W, nn);
        cg_live_push(g, L, nn);
        cg_live_push(g, Li, nn);
        cg_live_push(g, Ainv, nn);
    }
    /* A = L^T L, L lower triangular, eliminating the last row first (RBDA Sec 6.5) */
    for (int k = n - 1; k >= 0; --k) {
        const cg_val d = W[(size_t)k * n + k];
        if (!cg_is_const(d) || !(d.c > 0)) cg_check_pivot(e, d, g->singular_return);
        const cg_val a = cg_call1(e, "sqrt", d);
        L[(size_t)k * n + k] = a;
        for (int i = 0; i < k; ++i) L[(size_t)k * n + i] = cg_div(e, W[(size_t)k * n + i], a);
        for (int i = 0; i < k; ++i)
            for (int j = 0; j <= i; ++j) {
                const cg_val x = cg_sub(e, W[(size_t)i * n + j], cg_mul(e, L[(size_t)k * n + i], L[(size_t)k * n + j]));
                W[(size_t)i * n + j] = W[(size_t)j * n + i] = x;
            }
        if (may_split) cg_checkpoint(g);
    }
    /* L^-1, lower triangular, by forward substitution */
    for (int i = 0; i < n; ++i) {
        const cg_val inv = cg_div(e, cg_const(1.0), L[(size_t)i * n + i]);
        Li[(size_t)i * n + i] = inv;
        for (int j = 0; j < i; ++j) {
            cg_val s = cg_const(0.0);
            for (int k = j; k < i; ++k) s = cg_add(e, s, cg_mul(e, L[(size_t)i * n + k], Li[(size_t)k * n + j]));
            Li[(size_t)i * n + j] = cg_neg(e, cg_mul(e, s, inv));
        }
        if (may_split) cg_checkpoint(g);
    }
    /* A^-1 = L^-1 L^-T */
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j <= i; ++j) {
            cg_val s = cg_const(0.0);
            for (int k = 0; k <= j; ++k) s = cg_add(e, s, cg_mul(e, Li[(size_t)i * n + k], Li[(size_t)j * n + k]));
            Ainv[(size_t)i * n + j] = Ainv[(size_t)j * n + i] = s;
        }
        if (may_split) cg_checkpoint(g);
    }
    if (may_split) cg_live_pop(g, 4);
    free(W);
    free(L);
    free(Li);
}
