/*
 * src/derivatives/hinge_partials.c — what a hinge adds to the derivatives of the inverse dynamics
 * beyond the body's motion: the q-dependence of H*(k) for universal and planar hinges (H* in the
 * body frame turns with the hinge's own angle; hinge.c, sd_hinge_transform), and the joint-level
 * terms of dynamics.h (damping, springs, a free hinge's armature velocity term).
 *
 * Universal hinge (R = R(a1, q0) R(a2, q1), hinge.c): H* = [b, a2; 0, 0] with b = R2^T a1, so
 *     d(H*)/dq1 = [-(a2 x b), 0; 0, 0],  d(H*)/dt u = [-u0 u1 (a2 x b); 0],
 * and the derivatives of the latter: d/dq1 = [u0 u1 a2 x (a2 x b); 0], d/du0 = [-u1 (a2 x b); 0],
 * d/du1 = [-u0 (a2 x b); 0] (nothing depends on q0).
 * Planar hinge (p = s1 t1 + s2 t2, R = R(n, theta)): H* = [0, 0, n; t1b, t2b, 0] with ti_b = R^T ti,
 *     d(H*)/dtheta = [0, 0, 0; -n x t1b, -n x t2b, 0],  d(H*)/dt u = [0; -u2 n x tb], tb = t1b u0 + t2b u1,
 * and d/dtheta = [0; u2 n x (n x tb)], d/du0 = [0; -u2 n x t1b], d/du1 = [0; -u2 n x t2b],
 * d/du2 = [0; -n x tb]. (d R^T t / d theta = -n x R^T t since R = exp([n] theta).)
 * Every vector is read off the current H* (d->S), so these hold for any axes.
 */
#include <math.h>
#include <string.h>

#include "derivatives_internal.h"

/* Column c of H*(k) (6 numbers). */
static const double *hinge_column(const sd_model *m, const sd_data *d, int k, int c)
{
    return d->S + 6 * (m->v_index[k] + c);
}

void sd_deriv_hinge_partials(const sd_model *m, const sd_data *d, int k, int i, const double *uk,
                             double dS[18], double dSdot_q[6], double dSdot_u[6])
{
    memset(dS, 0, 18 * sizeof(double));
    memset(dSdot_q, 0, 6 * sizeof(double));
    memset(dSdot_u, 0, 6 * sizeof(double));
    if (m->hinge[k] == SD_HINGE_UNIVERSAL) {
        const double *b = hinge_column(m, d, k, 0), *a2 = hinge_column(m, d, k, 1);
        double a2xb[3], a2xa2xb[3];
        sd_v3_cross(a2, b, a2xb);
        sd_v3_cross(a2, a2xb, a2xa2xb);
        for (int r = 0; r < 3; ++r) {
            if (i == 1) {
                dS[r] = -a2xb[r];
                dSdot_q[r] = uk[0] * uk[1] * a2xa2xb[r];
                dSdot_u[r] = -uk[0] * a2xb[r];
            } else {
                dSdot_u[r] = -uk[1] * a2xb[r];
            }
        }
    } else if (m->hinge[k] == SD_HINGE_PLANAR) {
        const double *t1b = hinge_column(m, d, k, 0) + 3, *t2b = hinge_column(m, d, k, 1) + 3;
        const double *n = hinge_column(m, d, k, 2);
        double tb[3], nxt[3], nxnxt[3];
        for (int r = 0; r < 3; ++r) tb[r] = t1b[r] * uk[0] + t2b[r] * uk[1];
        sd_v3_cross(n, tb, nxt);
        sd_v3_cross(n, nxt, nxnxt);
        if (i == 2) {
            double nxt1[3], nxt2[3];
            sd_v3_cross(n, t1b, nxt1);
            sd_v3_cross(n, t2b, nxt2);
            for (int r = 0; r < 3; ++r) {
                dS[3 + r] = -nxt1[r];
                dS[9 + r] = -nxt2[r];
                dSdot_q[3 + r] = uk[2] * nxnxt[r];
                dSdot_u[3 + r] = -nxt[r];
            }
        } else {
            double nxti[3];
            sd_v3_cross(n, i == 0 ? t1b : t2b, nxti);
            for (int r = 0; r < 3; ++r) dSdot_u[3 + r] = -uk[2] * nxti[r];
        }
    }
}

/* B(x, y) = [x_w x (Jw y_w) + x_v x (Jv y_v); x_w x (Jv y_v)]: the free hinge's armature velocity
 * term of the inverse dynamics is B(u, u) (joint_dynamics.c: tau -= tau_passive, which holds
 * -u x* (I_J u)), so its derivative along e is B(e, u) + B(u, e). */
static void free_armature_form(const double *J, const double *x, const double *y, double out[6])
{
    double Jw[3], Jv[3], a[3], b[3];
    for (int r = 0; r < 3; ++r) {
        Jw[r] = J[r] * y[r];
        Jv[r] = J[3 + r] * y[3 + r];
    }
    sd_v3_cross(x, Jw, a);
    sd_v3_cross(x + 3, Jv, b);
    sd_v3_cross(x, Jv, out + 3);
    for (int r = 0; r < 3; ++r) out[r] = a[r] + b[r];
}

/* J_r^-1(r), the inverse right Jacobian of SO(3): log(exp(r) exp(eps e)) = r + eps J_r^-1(r) e + ...,
 * J_r^-1 = 1 + 1/2 [r] + (1/theta^2 - (1 + cos theta) / (2 theta sin theta)) [r]^2. */
static void so3_right_jacobian_inverse(const double r[3], double Jinv[9])
{
    const double t2 = sd_v3_dot(r, r), t = sqrt(t2);
    /* the coefficient's series below 1e-4 rad (its terms past theta^2 are below 1e-19) */
    const double c = t < 1e-4 ? 1.0 / 12.0 + t2 / 720.0 : 1.0 / t2 - (1.0 + cos(t)) / (2.0 * t * sin(t));
    double K[9], K2[9];
    sd_m3_skew(r, K);
    sd_m3_mul(K, K, K2);
    for (int e = 0; e < 9; ++e) Jinv[e] = 0.5 * K[e] + c * K2[e];
    Jinv[0] += 1.0;
    Jinv[4] += 1.0;
    Jinv[8] += 1.0;
}

void sd_deriv_joint_terms(const sd_model *m, const double *q, const double *u, double *dtau_dq, double *dtau_du,
                          size_t ld)
{
    const int nv = m->nv;
    if (dtau_du)
        for (int v = 0; v < nv; ++v) dtau_du[(size_t)v * ld + v] += m->damping[v]; /* tau += damping u */
    for (int k = 0; k < m->n; ++k) {
        const int vk = m->v_index[k], nk = m->nv_k[k];
        if (nk == 0) continue;
        if (dtau_du && u && m->hinge[k] == SD_HINGE_FREE && m->has_free_armature) {
            const double *J = m->armature + vk, *uk = u + vk;
            for (int c = 0; c < 6; ++c) {
                double e[6] = {0, 0, 0, 0, 0, 0}, t1[6], t2[6];
                e[c] = 1.0;
                free_armature_form(J, e, uk, t1);
                free_armature_form(J, uk, e, t2);
                for (int r = 0; r < 6; ++r) dtau_du[(size_t)(vk + r) * ld + vk + c] += t1[r] + t2[r];
            }
        }
        if (!dtau_dq || m->stiffness[vk] == 0.0) continue;
        if (m->hinge[k] == SD_HINGE_SPHERICAL) { /* tau += K r(q): d r / d delta = J_r^-1(r) */
            double r[3], Jinv[9];
            sd_quat_rotation_vector(q + m->q_index[k], r);
            so3_right_jacobian_inverse(r, Jinv);
            for (int a = 0; a < 3; ++a)
                for (int c = 0; c < 3; ++c) dtau_dq[(size_t)(vk + a) * ld + vk + c] += m->stiffness[vk + a] * Jinv[3 * a + c];
        } else { /* revolute, prismatic: tau += K (q - q_ref) */
            dtau_dq[(size_t)vk * ld + vk] += m->stiffness[vk];
        }
    }
}
