/*
 * src/codegen/cg_spatial.c — spatial algebra on the generator's scalars (cg_spatial.h).
 */
#include "cg_spatial.h"

void cg_v3_cross(cg_emit *e, const cg_val a[3], const cg_val b[3], cg_val out[3])
{
    cg_val r[3];
    r[0] = cg_sub(e, cg_mul(e, a[1], b[2]), cg_mul(e, a[2], b[1]));
    r[1] = cg_sub(e, cg_mul(e, a[2], b[0]), cg_mul(e, a[0], b[2]));
    r[2] = cg_sub(e, cg_mul(e, a[0], b[1]), cg_mul(e, a[1], b[0]));
    for (int i = 0; i < 3; ++i) out[i] = r[i];
}

void cg_m3_mul_v(cg_emit *e, const cg_val R[9], const cg_val a[3], cg_val out[3])
{
    cg_val r[3];
    for (int i = 0; i < 3; ++i) r[i] = cg_dot(e, R + 3 * i, a, 3);
    for (int i = 0; i < 3; ++i) out[i] = r[i];
}

void cg_m3t_mul_v(cg_emit *e, const cg_val R[9], const cg_val a[3], cg_val out[3])
{
    cg_val r[3];
    for (int i = 0; i < 3; ++i) {
        const cg_val col[3] = {R[i], R[3 + i], R[6 + i]};
        r[i] = cg_dot(e, col, a, 3);
    }
    for (int i = 0; i < 3; ++i) out[i] = r[i];
}

void cg_m3_mul(cg_emit *e, const cg_val A[9], const cg_val B[9], cg_val out[9])
{
    cg_val r[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            const cg_val col[3] = {B[j], B[3 + j], B[6 + j]};
            r[3 * i + j] = cg_dot(e, A + 3 * i, col, 3);
        }
    for (int i = 0; i < 9; ++i) out[i] = r[i];
}

void cg_xform_compose(cg_emit *e, const cg_xform *a, const cg_xform *b, cg_xform *out)
{
    cg_m3_mul(e, a->R, b->R, out->R);
    cg_val rp[3];
    cg_m3_mul_v(e, a->R, b->p, rp);
    for (int i = 0; i < 3; ++i) out->p[i] = cg_add(e, a->p[i], rp[i]);
}

void cg_xform_const(const double R[9], const double p[3], cg_xform *out)
{
    for (int i = 0; i < 9; ++i) out->R[i] = cg_const(R[i]);
    for (int i = 0; i < 3; ++i) out->p[i] = cg_const(p[i]);
}

void cg_motion_to_child(cg_emit *e, const cg_xform *X, const cg_val m_p[6], cg_val m_c[6])
{
    cg_val v[3]; /* the parent's velocity at the child's origin: v_p + omega_p x p */
    cg_v3_cross(e, m_p, X->p, v);
    for (int i = 0; i < 3; ++i) v[i] = cg_add(e, v[i], m_p[3 + i]);
    cg_m3t_mul_v(e, X->R, m_p, m_c);
    cg_m3t_mul_v(e, X->R, v, m_c + 3);
}

void cg_force_to_parent(cg_emit *e, const cg_xform *X, const cg_val f_c[6], cg_val f_p[6])
{
    cg_val n[3], f[3], pxf[3];
    cg_m3_mul_v(e, X->R, f_c, n);
    cg_m3_mul_v(e, X->R, f_c + 3, f);
    cg_v3_cross(e, X->p, f, pxf);
    for (int i = 0; i < 3; ++i) {
        f_p[i] = cg_add(e, n[i], pxf[i]);
        f_p[3 + i] = f[i];
    }
}

void cg_motion_cross(cg_emit *e, const cg_val V[6], const cg_val m[6], cg_val out[6])
{
    cg_val a[3], b[3], c[3];
    cg_v3_cross(e, V, m, a);
    cg_v3_cross(e, V, m + 3, b);
    cg_v3_cross(e, V + 3, m, c);
    for (int i = 0; i < 3; ++i) {
        out[i] = a[i];
        out[3 + i] = cg_add(e, b[i], c[i]);
    }
}

void cg_force_cross(cg_emit *e, const cg_val V[6], const cg_val f[6], cg_val out[6])
{
    cg_val a[3], b[3], c[3];
    cg_v3_cross(e, V, f, a);
    cg_v3_cross(e, V + 3, f + 3, b);
    cg_v3_cross(e, V, f + 3, c);
    for (int i = 0; i < 3; ++i) {
        out[i] = cg_add(e, a[i], b[i]);
        out[3 + i] = c[i];
    }
}

void cg_rigid_inertia_mul(cg_emit *e, const cg_val ri[13], const cg_val V[6], cg_val out[6])
{
    const cg_val m = ri[0], *h = ri + 1, *Io = ri + 4;
    cg_val hxv[3], hxw[3], Iw[3];
    cg_v3_cross(e, h, V + 3, hxv);
    cg_v3_cross(e, h, V, hxw);
    cg_m3_mul_v(e, Io, V, Iw);
    for (int i = 0; i < 3; ++i) {
        out[i] = cg_add(e, Iw[i], hxv[i]);
        out[3 + i] = cg_sub(e, cg_mul(e, m, V[3 + i]), hxw[i]);
    }
}

/* out = a b^T + b a^T - 2 (a . b) 1 = [a][b] + [b][a], the symmetric part of the shift. */
static void sym_skew_product(cg_emit *e, const cg_val a[3], const cg_val b[3], cg_val out[9])
{
    const cg_val ab2 = cg_mul(e, cg_const(2.0), cg_dot(e, a, b, 3));
    for (int i = 0; i < 3; ++i)
        for (int j = i; j < 3; ++j) {
            cg_val x = cg_add(e, cg_mul(e, a[i], b[j]), cg_mul(e, b[i], a[j]));
            if (i == j) x = cg_sub(e, x, ab2);
            out[3 * i + j] = out[3 * j + i] = x;
        }
}

void cg_rigid_inertia_to_parent_add(cg_emit *e, const cg_xform *X, const cg_val ri[13], cg_val acc[13])
{
    const cg_val m = ri[0], *p = X->p;
    cg_val h[3], RI[9], Rt[9], RIRt[9], pp[9], ph[9];
    cg_val hr[3];
    cg_m3_mul_v(e, X->R, ri + 1, hr);
    for (int i = 0; i < 3; ++i) h[i] = cg_add(e, hr[i], cg_mul(e, m, p[i])); /* h' = R h + m p */
    cg_m3_mul(e, X->R, ri + 4, RI);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) Rt[3 * i + j] = X->R[3 * j + i];
    /* R Io R^T: symmetric, so only the upper triangle is formed */
    for (int i = 0; i < 3; ++i)
        for (int j = i; j < 3; ++j) {
            const cg_val col[3] = {Rt[j], Rt[3 + j], Rt[6 + j]};
            RIRt[3 * i + j] = RIRt[3 * j + i] = cg_dot(e, RI + 3 * i, col, 3);
        }
    /* -m [p]^2 = m (|p|^2 1 - p p^T); -([p][R h] + [R h][p]) */
    const cg_val p2 = cg_dot(e, p, p, 3);
    for (int i = 0; i < 3; ++i)
        for (int j = i; j < 3; ++j) {
            cg_val x = cg_neg(e, cg_mul(e, p[i], p[j]));
            if (i == j) x = cg_add(e, x, p2);
            pp[3 * i + j] = pp[3 * j + i] = cg_mul(e, m, x);
        }
    sym_skew_product(e, p, hr, ph);
    acc[0] = cg_add(e, acc[0], m);
    for (int i = 0; i < 3; ++i) acc[1 + i] = cg_add(e, acc[1 + i], h[i]);
    for (int i = 0; i < 3; ++i)
        for (int j = i; j < 3; ++j) {
            const cg_val x = cg_sub(e, cg_add(e, RIRt[3 * i + j], pp[3 * i + j]), ph[3 * i + j]);
            acc[4 + 3 * i + j] = cg_add(e, acc[4 + 3 * i + j], x);
            if (j != i) acc[4 + 3 * j + i] = acc[4 + 3 * i + j];
        }
}

void cg_rigid_inertia_to_sym6(cg_emit *e, const cg_val ri[13], cg_val out[36])
{
    const cg_val *h = ri + 1, *Io = ri + 4, zero = cg_const(0.0);
    const cg_val hx[9] = {zero, cg_neg(e, h[2]), h[1], h[2], zero, cg_neg(e, h[0]), cg_neg(e, h[1]), h[0], zero};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            out[6 * i + j] = Io[3 * i + j];
            out[6 * i + 3 + j] = hx[3 * i + j];       /* [h] */
            out[6 * (3 + j) + i] = hx[3 * i + j];     /* [h]^T */
            out[6 * (3 + i) + 3 + j] = i == j ? ri[0] : zero;
        }
}

/* The force transform phi(parent, k) = [R, [p] R; 0, R] as a 6x6. */
static void force_matrix(cg_emit *e, const cg_xform *X, cg_val F[36])
{
    const cg_val *p = X->p, zero = cg_const(0.0);
    const cg_val px[9] = {zero, cg_neg(e, p[2]), p[1], p[2], zero, cg_neg(e, p[0]), cg_neg(e, p[1]), p[0], zero};
    cg_val pR[9];
    cg_m3_mul(e, px, X->R, pR);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            F[6 * i + j] = X->R[3 * i + j];
            F[6 * i + 3 + j] = pR[3 * i + j];
            F[6 * (3 + i) + j] = zero;
            F[6 * (3 + i) + 3 + j] = X->R[3 * i + j];
        }
}

void cg_sym6_to_parent_add(cg_emit *e, const cg_xform *X, const cg_val P[36], cg_val acc[36])
{
    cg_val F[36], T[36];
    force_matrix(e, X, F);
    for (int i = 0; i < 6; ++i) /* T = F P */
        for (int j = 0; j < 6; ++j) {
            const cg_val col[6] = {P[j], P[6 + j], P[12 + j], P[18 + j], P[24 + j], P[30 + j]};
            T[6 * i + j] = cg_dot(e, F + 6 * i, col, 6);
        }
    for (int i = 0; i < 6; ++i) /* acc += T F^T, upper triangle, mirrored */
        for (int j = i; j < 6; ++j) {
            const cg_val x = cg_add(e, acc[6 * i + j], cg_dot(e, T + 6 * i, F + 6 * j, 6));
            acc[6 * i + j] = acc[6 * j + i] = x;
        }
}

void cg_m6_mul_v(cg_emit *e, const cg_val A[36], const cg_val x[6], cg_val out[6])
{
    cg_val r[6];
    for (int i = 0; i < 6; ++i) r[i] = cg_dot(e, A + 6 * i, x, 6);
    for (int i = 0; i < 6; ++i) out[i] = r[i];
}
