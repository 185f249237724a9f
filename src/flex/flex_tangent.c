/*
 * src/flex/flex_tangent.c — the flexible body's tangent operations (flex_body.h): the first-order
 * variations of its node operations, which the derivatives of flexible models need
 * (src/derivatives/flex_derivatives.c). Each is the linearisation of the corresponding formula of
 * flex_body.c, term by term (product rule), with that file's notation:
 *
 * Modal mass and bias (001 Eq 25, 39; flex_body.c "M_m(eta)" and "b_m"). Everything is polynomial in
 * (eta, eta-dot, V): with F_r linear in eta,
 *   dh = Hp deta,   dF_r = F_r(deta),   dE_r = dF_r,
 *   dS = sum_r deta_r (A_r + A_r^T + F_r(eta)) + eta_r F_r(deta),   dIo = tr(dS) 1 - dS,
 *   dN_r = axial(dF_r)   (Hp, M_ff and m are constant),
 * and for the bias, with (w, v) = V and (dw, dv) = dV,
 *   d(w x v) = dw x v + w x dv,   dOmega = dw w^T + w dw^T - 2 (w . dw) 1,
 *   dW = sum_r deta-dot_r E_r + eta-dot_r dE_r,  dHpd = Hp deta-dot,  dJQd = JQ deta-dot,
 *   dg_r = sum_s deta-dot_s G2_sr,
 * each term of the moment, force and modal rows differentiated as written in flex_body.c. The
 * linearised model's M_m is constant and its bias has the nodes at l0 (eta = 0): only its velocity
 * variations remain.
 *
 * Node frames (flex_body.c "node frames"): theta = Q_t eta, R_t = exp(theta^), J_r(theta) the right
 * Jacobian, s = |theta|^2, c_i(s) and d_i = dc_i/ds (sd_flex_so3_coeffs), e_i = d^2 c_i/ds^2 (below).
 * Along dtheta = Q_t deta: ds = 2 theta . dtheta, dR_t = R_t [omega x] with omega = J_r dtheta (the
 * right Jacobian's definition), so d(R_t^T) = -[omega x] R_t^T, and
 *   dJ_r = -d1 ds [theta x] - c1 [dtheta x] + d2 ds [theta x]^2 + c2 ([dtheta x][theta x] + [theta x][dtheta x]),
 *   dS_t = [dJ_r Pi_r^t; -omega x (R_t^T Pi_t^t)].
 * The bias c = [-d1 sdot x + d2 sdot (theta x x) + c2 (thetadot x x); -omega_n x (R_t^T ddot)] with
 * thetadot = Q_t eta-dot, x = theta x thetadot, sdot = 2 theta . thetadot, omega_n = J_r thetadot,
 * ddot = P_t eta-dot varies with dd1 = e1 ds, dd2 = e2 ds, dc2 = d2 ds and the variations of x, sdot,
 * omega_n, R_t^T ddot by the product rule.
 */
#include <math.h>
#include <string.h>

#include "flex/flex_body_internal.h"
#include "internal.h"

/* ---------------------------------------------------------------- modal mass and bias */

/* F_r(x) = sum_s x_s C_sr (flex_body.c), x NULL: zero. */
static void modal_F_of(const sd_flex_body *fb, const double *x, int r, double F[9])
{
    const int nm = fb->nm;
    for (int i = 0; i < 9; ++i) F[i] = 0.0;
    if (!x) return;
    const double *C = fb->C + (size_t)r * nm * 9;
    for (int s = 0; s < nm; ++s, C += 9)
        for (int i = 0; i < 9; ++i) F[i] += x[s] * C[i];
}

static void axial_of(const double F[9], double out[3])
{
    out[0] = F[5] - F[7];
    out[1] = F[6] - F[2];
    out[2] = F[1] - F[3];
}

static double at(const double *x, int i) { return x ? x[i] : 0.0; }

/* W^T w: component a is sum_b W[3b + a] w[b]. */
static void mul_transposed(const double W[9], const double w[3], double out[3])
{
    for (int a = 0; a < 3; ++a) out[a] = W[a] * w[0] + W[3 + a] * w[1] + W[6 + a] * w[2];
}

void sd_flex_mass_bias_tangent(const sd_flex_body *fb, const double *eta, const double *eta_dot, const double V[6],
                               const double *deta, const double *deta_dot, const double dV[6], double *dMm,
                               double *dbm)
{
    const int nm = fb->nm, n6 = 6 + nm;
    const int full = fb->desc.mass_model != SD_FLEX_LINEARISED;
    const double *e = full ? eta : NULL, *de = full ? deta : NULL; /* the linearised model: eta = 0 */
    const double *w = V, *v = V + 3, *dw = dV, *dv = dV + 3;
    double h[3], dh[3], S[9], dS[9];
    for (int a = 0; a < 3; ++a) h[a] = fb->h0[a], dh[a] = 0.0;
    for (int i = 0; i < 9; ++i) S[i] = dS[i] = 0.0;
    double wxv[3], dwxv[3], t1[3], t2[3], Om[9], dOm[9];
    sd_v3_cross(w, v, wxv);
    sd_v3_cross(dw, v, t1);
    sd_v3_cross(w, dv, t2);
    const double w2 = sd_v3_dot(w, w), wdw = sd_v3_dot(w, dw);
    for (int a = 0; a < 3; ++a) {
        dwxv[a] = t1[a] + t2[a];
        for (int b = 0; b < 3; ++b) {
            Om[3 * a + b] = w[a] * w[b] - (a == b) * w2;
            dOm[3 * a + b] = dw[a] * w[b] + w[a] * dw[b] - 2.0 * (a == b) * wdw;
        }
    }
    double W[9] = {0}, dW[9] = {0}, Hpd[3] = {0}, dHpd[3] = {0}, JQd[3] = {0}, dJQd[3] = {0};
    memset(dMm, 0, (size_t)n6 * (size_t)n6 * sizeof(double));
    for (int r = 0; r < nm; ++r) {
        const double *A = fb->A + 9 * r, *Hp = fb->Hp + 3 * r, *JQ = fb->JQ + 3 * r;
        const double er = at(e, r), der = at(de, r), pr = eta_dot[r], dpr = at(deta_dot, r);
        double F[9], dF[9];
        modal_F_of(fb, e, r, F);
        modal_F_of(fb, de, r, dF);
        for (int a = 0; a < 3; ++a) {
            h[a] += er * Hp[a];
            dh[a] += der * Hp[a];
            for (int b = 0; b < 3; ++b) {
                const int i = 3 * a + b;
                const double sym = A[i] + A[3 * b + a];
                S[i] += er * (sym + F[i]);
                dS[i] += der * (sym + F[i]) + er * dF[i];
            }
        }
        /* M_m's mode column: dN_r = axial(dF_r) */
        double dN[3];
        axial_of(dF, dN);
        for (int a = 0; a < 3; ++a) dMm[a * n6 + 6 + r] = dMm[(6 + r) * n6 + a] = dN[a];
        /* b_m's mode row: Hp_r . (w x v) + Omega : E_r + w . g_r */
        double g[3] = {0, 0, 0}, dg[3] = {0, 0, 0}, dOmE = 0.0;
        for (int s = 0; s < nm; ++s) {
            const double *G = fb->G2 + ((size_t)r * nm + s) * 3;
            for (int a = 0; a < 3; ++a) {
                g[a] += eta_dot[s] * G[a];
                dg[a] += at(deta_dot, s) * G[a];
            }
        }
        for (int i = 0; i < 9; ++i) {
            const double E = F[i] + A[i];
            dOmE += dOm[i] * E + Om[i] * dF[i];
            W[i] += pr * E;
            dW[i] += dpr * E + pr * dF[i];
        }
        for (int a = 0; a < 3; ++a) {
            Hpd[a] += pr * Hp[a];
            dHpd[a] += dpr * Hp[a];
            JQd[a] += pr * JQ[a];
            dJQd[a] += dpr * JQ[a];
        }
        dbm[6 + r] = sd_v3_dot(Hp, dwxv) + dOmE + sd_v3_dot(dw, g) + sd_v3_dot(w, dg);
    }
    /* M_m's rigid block: dIo = tr(dS) 1 - dS (symmetrised as mass_rigid does), [dh x] and its transpose */
    const double trS = S[0] + S[4] + S[8], trdS = dS[0] + dS[4] + dS[8];
    double dH[9];
    sd_m3_skew(dh, dH);
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            dMm[a * n6 + b] = (a == b) * trdS - 0.5 * (dS[3 * a + b] + dS[3 * b + a]);
            dMm[a * n6 + 3 + b] = dH[3 * a + b];
            dMm[(3 + b) * n6 + a] = dH[3 * a + b];
        }
    /* b_m's rigid rows (flex_body.c, bias_rigid): L = Io w + JQd */
    double L[3], dL[3];
    for (int a = 0; a < 3; ++a) {
        double s = JQd[a], ds = dJQd[a];
        for (int b = 0; b < 3; ++b) {
            const double Io = fb->I0[3 * a + b] + (a == b) * trS - S[3 * a + b];
            const double dIo = (a == b) * trdS - dS[3 * a + b];
            s += Io * w[b];
            ds += dIo * w[b] + Io * dw[b];
        }
        L[a] = s;
        dL[a] = ds;
    }
    const double trW = W[0] + W[4] + W[8], trdW = dW[0] + dW[4] + dW[8];
    double m1[3], m2[3], m3[3], m4[3], WTdw[3], dWTw[3];
    sd_v3_cross(dh, wxv, m1);
    sd_v3_cross(h, dwxv, m2);
    sd_v3_cross(dw, L, m3);
    sd_v3_cross(w, dL, m4);
    mul_transposed(W, dw, WTdw);
    mul_transposed(dW, w, dWTw);
    for (int a = 0; a < 3; ++a)
        dbm[a] = m1[a] + m2[a] + m3[a] + m4[a] + 2.0 * (dw[a] * trW + w[a] * trdW - WTdw[a] - dWTw[a]);
    /* force: m w x v + w x (w x h) + 2 w x Hpd */
    double wxh[3], dwxh[3], wxdh[3], f1[3], f2[3], f3[3], f4[3];
    sd_v3_cross(w, h, wxh);
    sd_v3_cross(dw, h, dwxh);
    sd_v3_cross(w, dh, wxdh);
    sd_v3_cross(dw, wxh, f1);
    for (int a = 0; a < 3; ++a) dwxh[a] += wxdh[a];
    sd_v3_cross(w, dwxh, f2);
    sd_v3_cross(dw, Hpd, f3);
    sd_v3_cross(w, dHpd, f4);
    for (int a = 0; a < 3; ++a) dbm[3 + a] = fb->m * dwxv[a] + f1[a] + f2[a] + 2.0 * (f3[a] + f4[a]);
}

/* ---------------------------------------------------------------- node frames */

/* e1 = d^2 c1/ds^2 and e2 = d^2 c2/ds^2, with c1 = sum_k (-1)^k s^k / (2k+2)!, c2 = sum_k (-1)^k s^k /
 * (2k+3)!. Below s = 1 their series (terms to k = 12: the first omitted one is below 1e-22 of the
 * sum); above, the closed forms (a = sqrt(s); their cancellation costs at most about 1e-12 relative there):
 *   e1 = (a^2 cos a - 5 a sin a + 8 (1 - cos a)) / (4 a^6),
 *   e2 = (8 a + 7 a cos a + a^2 sin a - 15 sin a) / (4 a^7). */
static void so3_second_coeffs(double s, double *e1, double *e2)
{
    if (s < 1.0) {
        double f1 = 1.0, f2 = 1.0; /* (2k+2)! and (2k+3)! for k = 2 */
        for (int i = 2; i <= 6; ++i) f1 *= i;
        for (int i = 2; i <= 7; ++i) f2 *= i;
        double sum1 = 0.0, sum2 = 0.0, sp = 1.0; /* sp = (-1)^k s^(k-2) */
        for (int k = 2; k <= 12; ++k) {
            sum1 += k * (k - 1) * sp / f1;
            sum2 += k * (k - 1) * sp / f2;
            sp *= -s;
            f1 *= (2.0 * k + 3) * (2.0 * k + 4);
            f2 *= (2.0 * k + 4) * (2.0 * k + 5);
        }
        *e1 = sum1;
        *e2 = sum2;
        return;
    }
    const double a = sqrt(s), sa = sin(a), ca = cos(a), a2 = s, a6 = s * s * s;
    *e1 = (a2 * ca - 5.0 * a * sa + 8.0 * (1.0 - ca)) / (4.0 * a6);
    *e2 = (8.0 * a + 7.0 * a * ca + a2 * sa - 15.0 * sa) / (4.0 * a6 * a);
}

/* out = M x for M = alpha 1 + beta [t x] + gamma [t x]^2 (the form of R and J_r). */
static void so3_apply(double alpha, double beta, double gamma, const double t[3], const double x[3], double out[3])
{
    double tx[3], ttx[3];
    sd_v3_cross(t, x, tx);
    sd_v3_cross(t, tx, ttx);
    for (int a = 0; a < 3; ++a) out[a] = alpha * x[a] + beta * tx[a] + gamma * ttx[a];
}

void sd_flex_node_tangent(const sd_flex_body *fb, int t, const double *eta, const double *eta_dot, const double *deta,
                          const double *deta_dot, double *dS, double dc[6])
{
    static const double zero3[3] = {0, 0, 0};
    double theta[3], d[3], dth[3] = {0, 0, 0}, dd[3] = {0, 0, 0}, thd[3], ddot[3], dthd[3] = {0, 0, 0},
                                 dddot[3] = {0, 0, 0};
    sd_flex_node_deflection(fb, t, eta, theta, d);
    sd_flex_node_deflection(fb, t, eta_dot, thd, ddot);
    if (deta) sd_flex_node_deflection(fb, t, deta, dth, dd);
    if (deta_dot) sd_flex_node_deflection(fb, t, deta_dot, dthd, dddot);
    const double s = sd_v3_dot(theta, theta), ds = 2.0 * sd_v3_dot(theta, dth);
    double c0, c1, c2, d1, d2, e1, e2;
    sd_flex_so3_coeffs(s, &c0, &c1, &c2, &d1, &d2);
    so3_second_coeffs(s, &e1, &e2);
    /* omega = J_r dtheta; R^T x = x - c0 theta x x + c1 theta x (theta x x) */
    double omega[3];
    so3_apply(1.0, -c1, c2, theta, dth, omega);
    const size_t col = 6 * (size_t)fb->n;
    if (dS)
        for (int r = 0; r < fb->nm; ++r) {
            const double *Q = fb->modes + r * col + 6 * (size_t)t, *P = Q + 3;
            /* dJ_r Q = -d1 ds theta x Q - c1 dtheta x Q + d2 ds theta x (theta x Q)
             *          + c2 (dtheta x (theta x Q) + theta x (dtheta x Q)) */
            double a1[3], a2[3], tQ[3], dtQ[3], x1[3], x2[3];
            so3_apply(0.0, -d1 * ds, d2 * ds, theta, Q, a1);
            sd_v3_cross(dth, Q, dtQ);
            sd_v3_cross(theta, Q, tQ);
            sd_v3_cross(dth, tQ, x1);
            sd_v3_cross(theta, dtQ, x2);
            for (int a = 0; a < 3; ++a) a2[a] = -c1 * dtQ[a] + c2 * (x1[a] + x2[a]);
            double RtP[3], wRtP[3];
            so3_apply(1.0, -c0, c1, theta, P, RtP);
            sd_v3_cross(omega, RtP, wRtP);
            for (int a = 0; a < 3; ++a) {
                dS[6 * r + a] = a1[a] + a2[a];
                dS[6 * r + 3 + a] = -wRtP[a];
            }
        }
    /* the bias's angular part */
    const double sdot = 2.0 * sd_v3_dot(theta, thd), dsdot = 2.0 * (sd_v3_dot(dth, thd) + sd_v3_dot(theta, dthd));
    double x[3], dx[3], txx[3], dtxx[3], dxx[3], ddxx[3], q1[3], q2[3];
    sd_v3_cross(theta, thd, x);
    sd_v3_cross(dth, thd, q1);
    sd_v3_cross(theta, dthd, q2);
    for (int a = 0; a < 3; ++a) dx[a] = q1[a] + q2[a];
    sd_v3_cross(theta, x, txx);
    sd_v3_cross(dth, x, q1);
    sd_v3_cross(theta, dx, q2);
    for (int a = 0; a < 3; ++a) dtxx[a] = q1[a] + q2[a];
    sd_v3_cross(thd, x, dxx);
    sd_v3_cross(dthd, x, q1);
    sd_v3_cross(thd, dx, q2);
    for (int a = 0; a < 3; ++a) ddxx[a] = q1[a] + q2[a];
    const double dd1 = e1 * ds, dd2 = e2 * ds, dc1 = d1 * ds, dc2 = d2 * ds;
    for (int a = 0; a < 3; ++a)
        dc[a] = -(dd1 * sdot + d1 * dsdot) * x[a] - d1 * sdot * dx[a] + (dd2 * sdot + d2 * dsdot) * txx[a] +
                d2 * sdot * dtxx[a] + dc2 * dxx[a] + c2 * ddxx[a];
    /* the linear part: -omega_n x (R^T ddot) */
    double wn[3], dwn[3], Rtd[3], dRtd[3], RtDd[3], wxR[3];
    for (int a = 0; a < 3; ++a) {
        wn[a] = thd[a] - c1 * x[a] + c2 * txx[a];
        dwn[a] = dthd[a] - dc1 * x[a] - c1 * dx[a] + dc2 * txx[a] + c2 * dtxx[a];
    }
    so3_apply(1.0, -c0, c1, theta, ddot, Rtd);
    so3_apply(1.0, -c0, c1, theta, deta_dot ? dddot : zero3, RtDd);
    sd_v3_cross(omega, Rtd, wxR);
    for (int a = 0; a < 3; ++a) dRtd[a] = -wxR[a] + RtDd[a];
    double l1[3], l2[3];
    sd_v3_cross(dwn, Rtd, l1);
    sd_v3_cross(wn, dRtd, l2);
    for (int a = 0; a < 3; ++a) dc[3 + a] = -(l1[a] + l2[a]);
}
