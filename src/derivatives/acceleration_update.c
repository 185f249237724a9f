/*
 * src/derivatives/acceleration_update.c — the forward dynamics derivatives' state at qdd = FD(tau)
 * from the inverse dynamics at qdd = 0, without a run of the articulated-body recursion.
 *
 * The forward dynamics derivatives need M's factors and the inverse dynamics' V, A, F at qdd
 * (derivatives.c). The inverse dynamics at qdd = 0 gives the bias forces c, the composite pass
 * gives M, and qdd = M^-1 (tau - c) is one more column of the solve M's factors are made for. The
 * accelerations and forces are linear in qdd, so the state at qdd is the one at 0 plus, in the
 * reference axes of the composite pass (id_derivatives.c),
 *     dA_k = dA_p + H*(k) qdd(k)                                  (004 Eq 10's alpha, its qdd part)
 *     dF_k = sum over k's subtree m of I_m dA_m
 *          = IC_k dA_k + sum over the speeds v below k's hinge of P_v qdd_v,
 * the second because dA_m - dA_k sums H*(v) qdd_v over the speeds v between k and m, and summing
 * I_m over the bodies at or below v's body gives IC(body v) H*(v) = P_v. One scatter, one gather:
 * O(N), where the articulated-body recursion it replaces costs about twice the inverse dynamics.
 * The workspace's body-frame alpha and f are moved too, so its readers see the inverse dynamics at
 * (q, u, qdd), as soadyn/derivatives.h says.
 */
#include "derivatives_internal.h"

void sd_deriv_add_accelerations(const sd_model *m, sd_data *d, const sd_deriv_scratch *s, const double *qdd)
{
    /* dA(k), then below(k): the sum of P_v qdd_v under k (local 6-vectors, stored once: the
     * compiler cannot tell the scratch's arrays apart) */
    double *restrict dA = s->work, *restrict below = s->work + 6 * (size_t)m->n;
    const double *restrict S = s->Sw, *restrict P = s->P;
    for (int k = 0; k < m->n; ++k) {
        const int p = m->parent[k];
        double a[6] = {0, 0, 0, 0, 0, 0};
        if (p >= 0)
            for (int r = 0; r < 6; ++r) a[r] = dA[6 * p + r];
        for (int c = 0; c < m->nv_k[k]; ++c) {
            const int v = m->v_index[k] + c;
            for (int r = 0; r < 6; ++r) a[r] += S[6 * v + r] * qdd[v];
        }
        for (int r = 0; r < 6; ++r) {
            dA[6 * k + r] = a[r];
            below[6 * k + r] = 0.0;
        }
    }
    for (int k = m->n - 1; k >= 0; --k) {
        double dF[6], A[6], F[6], up[6];
        sd_rigid_inertia_mul(s->ICr + 13 * k, dA + 6 * k, dF);
        for (int r = 0; r < 6; ++r) {
            A[r] = s->Aw[6 * k + r] + dA[6 * k + r];
            F[r] = s->Fw[6 * k + r] + dF[r] + below[6 * k + r];
            up[r] = below[6 * k + r];
        }
        for (int c = 0; c < m->nv_k[k]; ++c) {
            const int v = m->v_index[k] + c;
            for (int r = 0; r < 6; ++r) up[r] += P[6 * v + r] * qdd[v];
        }
        const int p = m->parent[k];
        if (p >= 0)
            for (int r = 0; r < 6; ++r) below[6 * p + r] += up[r];
        for (int r = 0; r < 6; ++r) {
            s->Aw[6 * k + r] = A[r];
            s->Fw[6 * k + r] = F[r];
        }
        sd_motion_to_child(&s->Xref[k], A, d->alpha + 6 * k);
        sd_force_to_child(&s->Xref[k], F, d->f + 6 * k);
    }
}
