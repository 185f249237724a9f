/*
 * src/derivatives/id_derivatives.c — d tau/dq and d tau/du of the Newton-Euler inverse dynamics
 * (004 Alg 3.1) on a rigid tree, by differentiating its two sweeps along one speed direction at a
 * time (forward mode), each column touching only the bodies the direction moves.
 *
 * The sweeps (body frames, inverse_dynamics.c; phi*(k) = phi*(parent, k), H*(k) = S):
 *     V(k)     = phi*(k) V(p) + H*(k) u(k)
 *     alpha(k) = phi*(k) alpha(p) + H*(k) qdd(k) + a(k),   a(k) = V(k) x H*(k) u(k) + d(H*)/dt u(k)
 *     f(k)     = M(k) alpha(k) + V(k) x* M(k) V(k) - f_ext(k) + sum_children phi(c) f(c)
 *     tau(k)   = H(k) f(k)
 * with alpha(base) = -g. A tangent direction j of body kj's hinge moves body kj's frame relative to
 * its parent by the body-frame twist s = H*(kj) e_j (the directions of the speeds are those of the
 * tangent space, derivatives.h), so phi*(kj)(eps) = exp(-eps s x) phi*(kj) and
 *     d phi*(kj) x = (phi*(kj) x) x s,      d phi(kj) f = phi(kj) (s x* f)
 * (the second is the transpose of the first: (s x)^T = -s x*). Nothing else in the sweeps depends on
 * q_j, but H*(kj) of a universal or planar hinge (hinge_partials.c). So along q_j:
 *     dV(kj)     = (V(kj) - H* u) x s + dH* u
 *     dalpha(kj) = (alpha(kj) - H* qdd - a(kj)) x s + dH* qdd + da(kj)
 *     da(k)      = dV(k) x H* u + V(k) x dH* u + d(d(H*)/dt u)
 *     dV(k)      = phi*(k) dV(p),  dalpha(k) = phi*(k) dalpha(p) + da(k)   (k below kj)
 *     df(k)      = M dalpha + dV x* M V + V x* M dV + sum phi(c) df(c) [+ phi(kj) (s x* f(kj)) at kj's parent]
 *     dtau(k)    = H(k) df(k) [+ dH(kj) f(kj)]
 * and along u_j: dV(kj) = s, da(kj) = s x H* u + V x s + d(d(H*)/dt u)/du_j, the rest as above.
 * dV, dalpha are nonzero only on kj's subtree and df only there and on kj's ancestors, whose
 * rows take the transported force alone: a column costs O(size of the subtree + depth), the whole
 * matrix O(N depth) on a tree, the structure of the published methods (Carpentier and Mansard,
 * RSS 2018; Singh, Russell and Wensing, RA-L 2022), and the derivative is exact, not a difference.
 */
#include <string.h>

#include "derivatives_internal.h"

/* df = M dalpha + dV x* (M V) + V x* (M dV): the derivative of the body's own force. */
static void own_force_derivative(const double *rigid, const double V[6], const double MV[6], const double dV[6],
                                 const double dal[6], double df[6])
{
    double Mdal[6], MdV[6], t1[6], t2[6];
    sd_rigid_inertia_mul(rigid, dal, Mdal);
    sd_rigid_inertia_mul(rigid, dV, MdV);
    sd_force_cross(dV, MV, t1);
    sd_force_cross(V, MdV, t2);
    for (int r = 0; r < 6; ++r) df[r] = Mdal[r] + t1[r] + t2[r];
}

/* One tangent direction j (body kj): the column j of d tau/dq (when want_q) and of d tau/du (when
 * want_u), written at the rows of kj's subtree and ancestors. */
static void direction(const sd_model *m, const sd_data *d, const double *u, const double *qdd,
                      const sd_deriv_scratch *s, int j, double *dtau_dq, double *dtau_du)
{
    const int nv = m->nv, kj = m->v_body[j], vk = m->v_index[kj], i = j - vk, end = m->subtree_end[kj];
    const double *sj = d->S + 6 * j, *V = d->V + 6 * kj, *vJ = s->vJ + 6 * kj, *MV = s->MV + 6 * kj;
    const int varying = d->hinge_sel[kj] == SD_HINGE_SEL_VARYING;
    double dS[18], dSdot_q[6] = {0, 0, 0, 0, 0, 0}, dSdot_u[6] = {0, 0, 0, 0, 0, 0};
    double dSu[6] = {0, 0, 0, 0, 0, 0}, dSqdd[6] = {0, 0, 0, 0, 0, 0};
    if (varying) {
        sd_deriv_hinge_partials(m, d, kj, i, u + vk, dS, dSdot_q, dSdot_u);
        for (int c = 0; c < m->nv_k[kj]; ++c)
            for (int r = 0; r < 6; ++r) {
                dSu[r] += dS[6 * c + r] * u[vk + c];
                dSqdd[r] += dS[6 * c + r] * qdd[vk + c];
            }
    }
    /* body kj */
    if (dtau_dq) {
        double XVp[6], Xap[6], t[6];
        for (int r = 0; r < 6; ++r) {
            XVp[r] = V[r] - vJ[r];
            Xap[r] = d->alpha[6 * kj + r] - s->qJ[6 * kj + r] - d->a[6 * kj + r];
        }
        double *dV = s->dVq + 6 * kj, *dal = s->dalq + 6 * kj;
        sd_motion_cross(XVp, sj, dV);
        sd_motion_cross(Xap, sj, dal);
        for (int r = 0; r < 6; ++r) {
            dV[r] += dSu[r];
            dal[r] += dSqdd[r] + dSdot_q[r];
        }
        sd_motion_cross(dV, vJ, t);
        for (int r = 0; r < 6; ++r) dal[r] += t[r];
        sd_motion_cross(V, dSu, t);
        for (int r = 0; r < 6; ++r) dal[r] += t[r];
        own_force_derivative(m->rigid + 13 * kj, V, MV, dV, dal, s->dfq + 6 * kj);
    }
    if (dtau_du) {
        double *dV = s->dVu + 6 * kj, *dal = s->dalu + 6 * kj, t1[6], t2[6];
        memcpy(dV, sj, 6 * sizeof(double));
        sd_motion_cross(sj, vJ, t1);
        sd_motion_cross(V, sj, t2);
        for (int r = 0; r < 6; ++r) dal[r] = t1[r] + t2[r] + dSdot_u[r];
        own_force_derivative(m->rigid + 13 * kj, V, MV, dV, dal, s->dfu + 6 * kj);
    }
    /* kj's subtree, base to tips: the parent's change carried down */
    for (int k = kj + 1; k < end; ++k) {
        const int p = m->parent[k];
        const double *Vk = d->V + 6 * k, *vJk = s->vJ + 6 * k, *MVk = s->MV + 6 * k;
        for (int pass = 0; pass < 2; ++pass) {
            if (!(pass ? dtau_du : dtau_dq)) continue;
            double *dVb = pass ? s->dVu : s->dVq, *dalb = pass ? s->dalu : s->dalq, *dfb = pass ? s->dfu : s->dfq;
            double *dV = dVb + 6 * k, *dal = dalb + 6 * k, t[6];
            sd_motion_to_child(&d->Xup[k], dVb + 6 * p, dV);
            sd_motion_to_child(&d->Xup[k], dalb + 6 * p, dal);
            sd_motion_cross(dV, vJk, t);
            for (int r = 0; r < 6; ++r) dal[r] += t[r];
            own_force_derivative(m->rigid + 13 * k, Vk, MVk, dV, dal, dfb + 6 * k);
        }
    }
    /* the gather, tips to kj, then kj's ancestors with the transported force alone */
    for (int pass = 0; pass < 2; ++pass) {
        double *out = pass ? dtau_du : dtau_dq;
        if (!out) continue;
        double *dfb = pass ? s->dfu : s->dfq;
        for (int k = end - 1; k > kj; --k) {
            const double *df = dfb + 6 * k, *S = d->S + 6 * m->v_index[k];
            for (int c = 0; c < m->nv_k[k]; ++c) out[(size_t)(m->v_index[k] + c) * nv + j] = sd_s6_dot(S + 6 * c, df);
            double fp[6];
            sd_force_to_parent(&d->Xup[k], df, fp);
            for (int r = 0; r < 6; ++r) dfb[6 * m->parent[k] + r] += fp[r];
        }
        const double *df = dfb + 6 * kj, *f = d->f + 6 * kj, *S = d->S + 6 * vk;
        double up[6];
        for (int c = 0; c < m->nv_k[kj]; ++c) {
            double x = sd_s6_dot(S + 6 * c, df);
            if (!pass && varying) x += sd_s6_dot(dS + 6 * c, f);
            out[(size_t)(vk + c) * nv + j] = x;
        }
        if (!pass) { /* phi(kj) (df + s x* f(kj)) */
            double sxf[6], g[6];
            sd_force_cross(sj, f, sxf);
            for (int r = 0; r < 6; ++r) g[r] = df[r] + sxf[r];
            sd_force_to_parent(&d->Xup[kj], g, up);
        } else {
            sd_force_to_parent(&d->Xup[kj], df, up);
        }
        for (int p = m->parent[kj]; p >= 0; p = m->parent[p]) {
            const double *Sp = d->S + 6 * m->v_index[p];
            for (int c = 0; c < m->nv_k[p]; ++c) out[(size_t)(m->v_index[p] + c) * nv + j] = sd_s6_dot(Sp + 6 * c, up);
            double t[6];
            sd_force_to_parent(&d->Xup[p], up, t);
            memcpy(up, t, sizeof t);
        }
    }
}

void sd_deriv_inverse_dynamics(const sd_model *m, const sd_data *d, const double *q, const double *u,
                               const double *qdd, const sd_deriv_scratch *s, double *dtau_dq, double *dtau_du)
{
    const size_t nv = (size_t)m->nv;
    if (dtau_dq) memset(dtau_dq, 0, nv * nv * sizeof(double));
    if (dtau_du) memset(dtau_du, 0, nv * nv * sizeof(double));
    for (int k = 0; k < m->n; ++k) {
        sd_hinge_motion(m, d, k, u, s->vJ + 6 * k);
        sd_hinge_motion(m, d, k, qdd, s->qJ + 6 * k);
        sd_rigid_inertia_mul(m->rigid + 13 * k, d->V + 6 * k, s->MV + 6 * k);
    }
    for (int j = 0; j < m->nv; ++j) direction(m, d, u, qdd, s, j, dtau_dq, dtau_du);
    sd_deriv_joint_terms(m, q, u, dtau_dq, dtau_du);
}
