/*
 * src/derivatives/id_derivatives.c — d tau/dq and d tau/du of the Newton-Euler inverse dynamics
 * (004 Alg 3.1) on a rigid tree, all columns in one pass over the tree: per body the reference-axes
 * quantities and the composite inertias IC(k) and "composite velocity terms" BC(k) of the subtrees
 * (one scatter, one gather), then per column a seed and one 6-vector product per related row. The
 * O(N depth) structure of Carpentier and Mansard (RSS 2018), derived here with the spatial operators.
 *
 * Notation: every vector and matrix in this file is in one set of reference axes: body 0's frame
 * at this instant, taken as fixed (Xref the body's placement in it: motion m_r = phi*(0, k)^-1 m_k,
 * forces likewise), so the operators phi of the sweeps are identities and a force sum over a
 * subtree is a plain sum. Any fixed frame would do (the spatial algebra is the same in each); body
 * 0's makes a free root's H* the identity, so its six columns take a closed form
 * (free_root_columns) and its six rows of every other column are G's entries (column_rows), and
 * no body needs its world placement. For body k: H*(k) = S_k,
 * V_k, A_k (spatial acceleration with the base at -g, so forces include weight), I_k (rigid
 * inertia), h_k = I_k V_k, F_k = sum over k's subtree of f(m) the force through k's hinge
 * (inverse_dynamics.c's f(k), body frame there), and tau_k = S_k^T F_k. The sweeps read
 *     V_k = V_p + S_k u_k,   A_k = A_p + S_k qdd_k + V_k x S_k u_k (+ d(H*)/dt u_k, body-frame rate),
 *     f(m) = I_m A_m + V_m x* I_m V_m - f_ext(m).
 *
 * A seed (dV, dA) given to body kj's motion (every body m of its subtree then moves by
 * dV_m = dV and, summing the velocity terms along the path, dA_m = dA + dV x (V_m - V_kj)) changes
 * f(m) by I_m dA_m + dV x* h_m + V_m x* I_m dV, which is
 *     df(m) = I_m dA + (B_m + I_m (V_kj x)) dV,    B_m = (V_m x*) I_m - I_m (V_m x) + (x* h_m)
 * with (x* h) dV = dV x* h. Since I_m (V x) = -((V x*) I_m)^T, B_m = C_m + C_m^T + (x* h_m) with
 * C_m = (V_m x*) I_m. Summed over the subtree of any k below kj:
 *     dF_k = IC_k (dA + V_kj x dV) + BC_k dV,   IC_k = sum I_m,  BC_k = sum B_m.      (*)
 * Along u_j (s = S column j of body kj): dV = s, dA = s x (V_kj - V_p) + V_kj x s (+ the hinge's
 * d(d(H*)/dt u)/du_j), and dtau_k = S_k^T dF_k.
 * Along q_j: the subtree of kj turns by the twist s (the tangent direction, derivatives.h), which
 * carries with it every quantity fixed in its bodies (I_m, S_m, f_ext(m), the relative motions) but
 * not V_p, A_p of kj's parent p. Turning everything would change every force by s x*; what stays
 * is the change the turn of V_p and A_p would have made, with the opposite sign, so
 *     dF_k = s x* F_k - IC_k (s x A_p) - (BC_k + IC_k (V_p x)) (s x V_p),
 * the form (*) with dV = -(s x V_p), dA = -(s x A_p) + (V_kj - V_p) x (s x V_p), plus s x* F_k.
 * On k in kj's subtree, S_k turns too: d(S_k^T F_k) = S_k^T (dF_k - s x* F_k) (as (s x S)^T F =
 * -S^T (s x* F)), so the turn's s x* F_k drops out of those rows; on kj's ancestors it stays
 * (their S does not turn) and their F changes by the dF_kj of kj, the only subtree that moves. A
 * universal or planar hinge's H* also depends on its own angles in the body frame
 * (hinge_partials.c): a body-frame change dH* of S_kj adds dH*^T f(kj) to kj's rows and a seed.
 * So each column costs one seed, then per row of kj's subtree P.dA' + Q.dV with P = IC_k S_k and
 * Q = BC_k^T S_k formed once per speed (B_m's right half is zero, velocity_terms, so Q's lower half
 * is and only dV's angular part enters), and per ancestor row S^T G with G = dF_kj formed once.
 * IC and BC are summed in their compact forms (13 and 12 numbers, not 36 each): a sum of rigid
 * inertias is one, and every B_m has the same zero blocks.
 */
#include <string.h>

#include "derivatives_internal.h"

/* A body-frame motion vector in the reference axes, through the body's placement Xw = Xref(k). */
static void to_reference_motion(const sd_transform *Xw, const double m[6], double out[6])
{
    sd_motion_to_parent(Xw, m, out);
}

/* B = C + C^T + (x* h), C = (V x*) I, for a rigid inertia in the 13-number form ri = [m, p (first
 * moment), Io (about the origin)], I = [Io, [p]; [p]^T, m 1], and h = I V. In 3x3 blocks, with
 * V = (w, v), h = (hw, hv), hv = m v + w x p and [a][b] = b a^T - (a.b) 1:
 *     C = [[w] Io - [v][p], [w][p] + m [v]; -[w][p], m [w]],
 * so B's right half is zero (B12 = [w x p] + m [v] - [hv] = 0, B22 = m [w] + m [w]^T = 0), its
 * bottom left is -[w][p] - [p][w] - m [v] - [hv] = -2 [hv], and its top left is
 *     B11 = T + T^T - p v^T - v p^T + 2 (v.p) 1 - [hw],   T = [w] Io (Io [w] = -T^T).
 * B is kept as those 12 numbers, b = [B11 (row-major), hv]: sums over a subtree stay in that form. */
static void velocity_terms(const double ri[13], const double V[6], const double h[6], double b[12])
{
    const double *p = ri + 1, *Io = ri + 4, *w = V, *v = V + 3;
    double T[9], col[3];
    for (int j = 0; j < 3; ++j) { /* column j of [w] Io = w x (column j of Io = row j, Io symmetric) */
        sd_v3_cross(w, Io + 3 * j, col);
        for (int i = 0; i < 3; ++i) T[3 * i + j] = col[i];
    }
    const double vp2 = 2.0 * sd_v3_dot(v, p);
    double Kw[9];
    sd_m3_skew(h, Kw);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            b[3 * i + j] =
                T[3 * i + j] + T[3 * j + i] - p[i] * v[j] - v[i] * p[j] - Kw[3 * i + j] + (i == j ? vp2 : 0.0);
    b[9] = h[3];
    b[10] = h[4];
    b[11] = h[5];
}

/* out = B dV for B in velocity_terms' 12 numbers and a dV whose angular part alone enters (B's right
 * half is zero): [B11 dV_w; -2 hv x dV_w]. */
static void velocity_terms_mul(const double b[12], const double dV[6], double out[6])
{
    double hxw[3];
    sd_m3_mul_v(b, dV, out);
    sd_v3_cross(b + 9, dV, hxw);
    for (int i = 0; i < 3; ++i) out[3 + i] = -2.0 * hxw[i];
}

/* The angular part of B^T S (its linear part is zero): B11^T s_w + 2 hv x s_v ((-2 [hv])^T = 2 [hv]). */
static void velocity_terms_tmul(const double b[12], const double S[6], double out[3])
{
    double hxs[3];
    sd_v3_cross(b + 9, S + 3, hxs);
    for (int i = 0; i < 3; ++i) out[i] = b[i] * S[0] + b[3 + i] * S[1] + b[6 + i] * S[2] + 2.0 * hxs[i];
}

/* The reference placements Xref: body 0's frame at this instant, Xref(0) = 1, Xref(k) = Xref(p)
 * Xup(k), another root placed through body 0's inverse. */
static void reference_placements(const sd_model *m, const sd_data *d, const sd_deriv_scratch *s)
{
    if (m->n == 0) return;
    sd_transform root_inverse;
    sd_transform_inverse(&d->Xup[0], &root_inverse);
    sd_transform_identity(&s->Xref[0]);
    for (int k = 1; k < m->n; ++k) {
        const int p = m->parent[k];
        sd_transform_compose(p >= 0 ? &s->Xref[p] : &root_inverse, &d->Xup[k], &s->Xref[k]);
    }
}

void sd_deriv_base_acceleration(const sd_model *m, const sd_data *d, double a0[6])
{
    double g0[6];
    sd_base_acceleration(m, g0);
    if (m->n == 0) memcpy(a0, g0, sizeof g0);
    else sd_motion_to_child(&d->Xup[0], g0, a0);
}

/* The scatter and gather: reference-axes V, A, F, S, IC, BC, and per speed P = IC S, Q = BC^T S. */
static void composite_pass(const sd_model *m, const sd_data *d, const sd_deriv_scratch *s)
{
    for (int k = 0; k < m->n; ++k) {
        const sd_transform *Xw = &s->Xref[k];
        double *V = s->Vw + 6 * k, *A = s->Aw + 6 * k;
        to_reference_motion(Xw, d->V + 6 * k, V);
        to_reference_motion(Xw, d->alpha + 6 * k, A);
        sd_force_to_parent(Xw, d->f + 6 * k, s->Fw + 6 * k);
        for (int c = 0; c < m->nv_k[k]; ++c) {
            const int v = m->v_index[k] + c;
            to_reference_motion(Xw, d->S + 6 * v, s->Sw + 6 * v);
        }
        double *ri = s->ICr + 13 * k, h[6];
        sd_rigid_inertia_to_parent(Xw, m->mass[k], m->com + 3 * k, m->inertia_com + 9 * k, ri);
        sd_rigid_inertia_mul(ri, V, h);
        velocity_terms(ri, V, h, s->BCr + 12 * k);
    }
    for (int k = m->n - 1; k > 0; --k) { /* the composites: sums in the 13- and 12-number forms */
        const int p = m->parent[k];
        if (p < 0) continue;
        double *ICp = s->ICr + 13 * p, *BCp = s->BCr + 12 * p;
        const double *IC = s->ICr + 13 * k, *BC = s->BCr + 12 * k;
        for (int e = 0; e < 13; ++e) ICp[e] += IC[e];
        for (int e = 0; e < 12; ++e) BCp[e] += BC[e];
    }
    for (int v = 0; v < m->nv; ++v) {
        const int k = m->v_body[v];
        sd_rigid_inertia_mul(s->ICr + 13 * k, s->Sw + 6 * v, s->P + 6 * v);
        velocity_terms_tmul(s->BCr + 12 * k, s->Sw + 6 * v, s->Q + 6 * v);
    }
}

/* The rows of column j of d tau/dq (into dq) and of d tau/du (into du), either NULL: kj's subtree
 * from each seed (dV, dA' = dA + V_kj x dV), kj's ancestors from G = IC_kj dA' + BC_kj dV + extra
 * (extra: s x* F_kj along q, 0 along u). The two columns share one pass over the rows and over
 * IC_kj, BC_kj. */
typedef struct column_seed {
    double dV[6], dAp[6], extra[6];
} column_seed;

static void column_rows(const sd_model *m, const sd_deriv_scratch *s, int free_root, int j, const column_seed *sq,
                        double *dq, const column_seed *su, double *du, size_t nv)
{
    const int kj = m->v_body[j];
    const int v_end = m->subtree_end[kj] < m->n ? m->v_index[m->subtree_end[kj]] : m->nv;
    int seeded = 0; /* a zero q seed leaves the subtree's rows zero: a free root's position columns */
    for (int r = 0; dq && r < 6; ++r) seeded |= sq->dV[r] != 0.0 || sq->dAp[r] != 0.0;
    if (!seeded) dq = NULL;
    for (int v = m->v_index[kj]; v < v_end; ++v) { /* the subtree's speeds are contiguous (preorder) */
        const double *P = s->P + 6 * v, *Q = s->Q + 6 * v;
        if (dq) dq[(size_t)v * nv + j] = sd_s6_dot(P, sq->dAp) + sd_v3_dot(Q, sq->dV);
        if (du) du[(size_t)v * nv + j] = sd_s6_dot(P, su->dAp) + sd_v3_dot(Q, su->dV);
    }
    if (m->parent[kj] < 0) return;
    const double *IC = s->ICr + 13 * kj, *BC = s->BCr + 12 * kj;
    double Gq[6], Gu[6], t[6];
    sd_rigid_inertia_mul(IC, sq->dAp, Gq);
    velocity_terms_mul(BC, sq->dV, t);
    for (int r = 0; r < 6; ++r) Gq[r] += t[r] + sq->extra[r];
    sd_rigid_inertia_mul(IC, su->dAp, Gu);
    velocity_terms_mul(BC, su->dV, t);
    for (int r = 0; r < 6; ++r) Gu[r] += t[r] + su->extra[r];
    for (int p = m->parent[kj]; p >= 0; p = m->parent[p]) {
        if (p == 0 && free_root) { /* H*(0) = 1 in the reference axes: the rows are G itself */
            for (int c = 0; c < 6; ++c) {
                if (dq) dq[(size_t)c * nv + j] = Gq[c];
                if (du) du[(size_t)c * nv + j] = Gu[c];
            }
            break;
        }
        for (int c = 0; c < m->nv_k[p]; ++c) {
            const int v = m->v_index[p] + c;
            if (dq) dq[(size_t)v * nv + j] = sd_s6_dot(s->Sw + 6 * v, Gq);
            if (du) du[(size_t)v * nv + j] = sd_s6_dot(s->Sw + 6 * v, Gu);
        }
    }
}

/* A free root (body 0, H* = 1 in its own axes, which are the reference axes): its six columns, for
 * every row of its subtree, in closed form. With s = e_c, V_p = 0 and A_p = a0:
 *   along u_c: dV = e_c and dA' = s x V_0 + 2 V_0 x s = V_0 x e_c, so row i gets
 *     P_i . (V_0 x e_c) + Q_i . e_c = (-(V_0 x* P_i) + [Q_i; 0])_c     (f . (v x m) = -(v x* f) . m);
 *   along q_c, c < 3 (a turn): dV = 0 and dA' = -(e_c x a0) = [0; -(e_c x a0_lin)], so row i gets
 *     -P_i,lin . (e_c x a0_lin) = (P_i,lin x a0_lin)_c;
 *   along q_c, c >= 3 (a shift): the seed is zero (a0 has no angular part).
 * One 3- and one 6-vector cross product per row for its twelve entries, where the seeds' form
 * takes 9 multiply-adds an entry. */
static void free_root_columns(const sd_model *m, const sd_deriv_scratch *s, const double a0[6], double *dq,
                              double *du, size_t ld)
{
    const int v_end = m->subtree_end[0] < m->n ? m->v_index[m->subtree_end[0]] : m->nv;
    const double *V0 = s->Vw;
    for (int v = 0; v < v_end; ++v) {
        const double *P = s->P + 6 * v, *Q = s->Q + 6 * v;
        if (dq) {
            double *row = dq + (size_t)v * ld, t[3];
            sd_v3_cross(P + 3, a0 + 3, t);
            row[0] = t[0];
            row[1] = t[1];
            row[2] = t[2];
            row[3] = row[4] = row[5] = 0.0;
        }
        if (du) {
            double *row = du + (size_t)v * ld, t[6];
            sd_force_cross(V0, P, t);
            for (int c = 0; c < 3; ++c) {
                row[c] = Q[c] - t[c];
                row[3 + c] = -t[3 + c];
            }
        }
    }
}

/* The body-frame seed a universal or planar hinge adds along its own coordinate i (the change dH*
 * of its H*, hinge_partials.c), in the reference axes, and its rows' term dH*^T f(kj). */
static void hinge_seed(const sd_model *m, const sd_data *d, const sd_deriv_scratch *s, const double *u,
                       const double *qdd, int kj, int i, double dVq[6], double dAq[6], double dAu[6],
                       double row_term[6])
{
    double dS[18], dSdot_q[6], dSdot_u[6], dSu[6] = {0, 0, 0, 0, 0, 0}, dSqdd[6] = {0, 0, 0, 0, 0, 0};
    const int vk = m->v_index[kj], nk = m->nv_k[kj];
    sd_deriv_hinge_partials(m, d, kj, i, u + vk, dS, dSdot_q, dSdot_u);
    for (int c = 0; c < nk; ++c) {
        for (int r = 0; r < 6; ++r) {
            dSu[r] += dS[6 * c + r] * u[vk + c];
            dSqdd[r] += dS[6 * c + r] * qdd[vk + c];
        }
        row_term[c] = sd_s6_dot(dS + 6 * c, d->f + 6 * kj);
    }
    /* a change dSu of the hinge's motion H* u: dV = dSu, dA = dSu x H* u + V x dSu, with the
     * change of H* qdd and of d(H*)/dt u (body frame, then reference axes) */
    double vJ[6], t1[6], t2[6], dA[6];
    sd_hinge_motion(m, d, kj, u, vJ);
    sd_motion_cross(dSu, vJ, t1);
    sd_motion_cross(d->V + 6 * kj, dSu, t2);
    for (int r = 0; r < 6; ++r) dA[r] = t1[r] + t2[r] + dSqdd[r] + dSdot_q[r];
    const sd_transform *Xw = &s->Xref[kj];
    to_reference_motion(Xw, dSu, dVq);
    to_reference_motion(Xw, dA, dAq);
    to_reference_motion(Xw, dSdot_u, dAu);
}

void sd_deriv_composites(const sd_model *m, const sd_data *d, const sd_deriv_scratch *s)
{
    reference_placements(m, d, s);
    composite_pass(m, d, s);
}

void sd_deriv_columns(const sd_model *m, sd_data *d, const double *q, const double *u, const double *qdd,
                      const sd_deriv_scratch *s, double *dtau_dq, double *dtau_du, size_t ld)
{
    const int nv = m->nv;
    const size_t rows = ld == (size_t)nv ? 1 : (size_t)nv, width = ld == (size_t)nv ? (size_t)nv * ld : (size_t)nv;
    for (size_t r = 0; r < rows; ++r) { /* one call for a whole matrix, else row by row */
        if (dtau_dq) memset(dtau_dq + r * ld, 0, width * sizeof(double));
        if (dtau_du) memset(dtau_du + r * ld, 0, width * sizeof(double));
    }
    double a0[6];
    sd_deriv_base_acceleration(m, d, a0);
    static const double zero[6] = {0, 0, 0, 0, 0, 0};
    const int free_root = m->n > 0 && m->hinge[0] == SD_HINGE_FREE;
    if (free_root) free_root_columns(m, s, a0, dtau_dq, dtau_du, ld);
    for (int j = free_root ? 6 : 0; j < nv; ++j) {
        const int kj = m->v_body[j], p = m->parent[kj];
        const double *sj = s->Sw + 6 * j, *Vk = s->Vw + 6 * kj;
        const double *Vp = p >= 0 ? s->Vw + 6 * p : zero, *Ap = p >= 0 ? s->Aw + 6 * p : a0;
        double vJ[6], row_q[6] = {0, 0, 0, 0, 0, 0}, hq_V[6] = {0, 0, 0, 0, 0, 0}, hq_A[6] = {0, 0, 0, 0, 0, 0},
                      hu_A[6] = {0, 0, 0, 0, 0, 0};
        for (int r = 0; r < 6; ++r) vJ[r] = Vk[r] - Vp[r];
        if (d->hinge_sel[kj] == SD_HINGE_SEL_VARYING)
            hinge_seed(m, d, s, u, qdd, kj, j - m->v_index[kj], hq_V, hq_A, hu_A, row_q);
        column_seed sq, su;
        memset(&sq, 0, sizeof sq);
        memset(&su, 0, sizeof su);
        if (dtau_dq) {
            double sxV[6], sxA[6], dA[6], t[6];
            sd_motion_cross(sj, Vp, sxV);
            sd_motion_cross(sj, Ap, sxA);
            sd_motion_cross(vJ, sxV, t);
            for (int r = 0; r < 6; ++r) {
                sq.dV[r] = -sxV[r] + hq_V[r];
                dA[r] = -sxA[r] + t[r] + hq_A[r];
            }
            sd_motion_cross(Vk, sq.dV, t);
            for (int r = 0; r < 6; ++r) sq.dAp[r] = dA[r] + t[r];
            sd_force_cross(sj, s->Fw + 6 * kj, sq.extra);
        }
        if (dtau_du) {
            double t1[6], t2[6];
            sd_motion_cross(sj, vJ, t1);
            sd_motion_cross(Vk, sj, t2);
            for (int r = 0; r < 6; ++r) {
                su.dV[r] = sj[r];
                su.dAp[r] = t1[r] + 2.0 * t2[r] + hu_A[r]; /* dA + V_kj x dV with dV = s */
            }
        }
        column_rows(m, s, free_root, j, &sq, dtau_dq, &su, dtau_du, ld);
        if (dtau_dq)
            for (int c = 0; c < m->nv_k[kj]; ++c) dtau_dq[(size_t)(m->v_index[kj] + c) * ld + j] += row_q[c];
    }
    sd_deriv_joint_terms(m, q, u, dtau_dq, dtau_du, ld);
}

void sd_deriv_inverse_dynamics(const sd_model *m, sd_data *d, const double *q, const double *u,
                               const double *qdd, const sd_deriv_scratch *s, double *dtau_dq, double *dtau_du,
                               size_t ld)
{
    sd_deriv_composites(m, d, s);
    sd_deriv_columns(m, d, q, u, qdd, s, dtau_dq, dtau_du, ld);
}
