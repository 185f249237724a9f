/*
 * tests/test_spatial.c — the spatial algebra kernels of soadyn/spatial.h checked against
 * independent formulas and algebraic identities:
 *   quaternion <-> matrix round trips (all four Shepperd branches, angles up to pi);
 *   sd_quat_exp / sd_quat_log inverse, including tiny and near-pi angles, and exp vs Rodrigues;
 *   Hamilton product = product of rotation matrices;
 *   sd_m3_rpy = Rz(yaw) Ry(pitch) Rx(roll) from axis-angle rotations; axis-angle orthonormal;
 *   placements: compose / inverse / point;
 *   motion / force transforms: inverses of each other, duality of the power pairing, the velocity
 *   field of a rigid body, composition;
 *   sd_sym6_add_to_parent = Phi I Phi^T with Phi built column by column from sd_force_to_parent, and
 *   with phi = [R, [p x] R; 0, R] built from the numbers on scaled positive definite inertias;
 *   sd_inertia_from_com vs the parallel-axis theorem and vs momentum computed from first principles;
 *   spatial cross products: duality, Jacobi identity, equivariance under placements.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "random_tree.h"
#include "test_util.h"

#define TOL 1e-14
#define PI 3.14159265358979323846

static void random_unit(uint64_t *rng, double n[3])
{
    do random_vector(rng, n, 3, 1.0);
    while (sd_v3_norm(n) < 0.1);
    const double s = sd_v3_norm(n);
    for (int i = 0; i < 3; ++i) n[i] /= s;
}

static void random_quat(uint64_t *rng, double q[4])
{
    double w[3];
    random_vector(rng, w, 3, 2.5);
    sd_quat_exp(w, q);
    if (sd_random_uniform(rng) < 0.5) /* both signs of the double cover */
        for (int i = 0; i < 4; ++i) q[i] = -q[i];
}

static void random_transform(uint64_t *rng, sd_transform *X)
{
    double q[4];
    random_quat(rng, q);
    sd_quat_to_m3(q, X->R);
    random_vector(rng, X->p, 3, 2.0);
}

/* max |R^T R - 1| and det R */
static double orthonormality_error(const double R[9], double *det)
{
    double RtR[9], e = 0;
    sd_m3t_mul(R, R, RtR);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) e = fmax(e, fabs(RtR[3 * i + j] - (i == j ? 1.0 : 0.0)));
    *det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) + R[2] * (R[3] * R[7] - R[4] * R[6]);
    return e;
}

/* |a - b| <= tol |b|: a relative check for vectors of any size (tiny rotation vectors) */
static int vec_rel_close(const double *a, const double *b, int n, double tol)
{
    double d = 0, s = 0;
    for (int i = 0; i < n; ++i) {
        d = fmax(d, fabs(a[i] - b[i]));
        s = fmax(s, fabs(b[i]));
    }
    return d <= tol * s && !isnan(d);
}

static void test_quaternions(uint64_t *rng)
{
    for (int t = 0; t < 200; ++t) {
        double q[4], R[9], q2[4], R2[9], det;
        random_quat(rng, q);
        sd_quat_to_m3(q, R);
        CHECK(orthonormality_error(R, &det) <= 4 * TOL);
        CHECK_CLOSE(det, 1.0, 4 * TOL);
        /* matrix -> quaternion: the same rotation, with w >= 0 */
        sd_m3_to_quat(R, q2);
        CHECK(q2[0] >= 0);
        const double sign = q[0] < 0 ? -1.0 : 1.0;
        double qs[4] = {sign * q[0], sign * q[1], sign * q[2], sign * q[3]};
        CHECK_ARRAY_CLOSE(q2, qs, 4, 4 * TOL, "m3_to_quat(quat_to_m3(q)) vs q");
        sd_quat_to_m3(q2, R2);
        CHECK_ARRAY_CLOSE(R2, R, 9, 4 * TOL, "quat_to_m3(m3_to_quat(R)) vs R");
        /* Hamilton product is the product of rotations */
        double p[4], pq[4], Rp[9], Rpq[9], RpRq[9];
        random_quat(rng, p);
        sd_quat_mul(p, q, pq);
        sd_quat_to_m3(p, Rp);
        sd_quat_to_m3(pq, Rpq);
        sd_m3_mul(Rp, R, RpRq);
        CHECK_ARRAY_CLOSE(Rpq, RpRq, 9, 4 * TOL, "R(p q) vs R(p) R(q)");
    }
    /* rotations by pi and near pi about coordinate and random axes exercise every branch of
     * Shepperd's method (trace -1: the largest diagonal entry decides) */
    for (int t = 0; t < 60; ++t) {
        double n[3] = {0, 0, 0};
        if (t < 3) n[t] = 1.0;
        else random_unit(rng, n);
        const double angles[] = {PI, PI - 1e-7, PI - 1e-3, 2.5, 1e-9};
        for (int a = 0; a < 5; ++a) {
            double R[9], q[4], R2[9];
            sd_m3_axis_angle(n, angles[a], R);
            sd_m3_to_quat(R, q);
            CHECK_CLOSE(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1.0, 4 * TOL);
            sd_quat_to_m3(q, R2);
            CHECK_ARRAY_CLOSE(R2, R, 9, 4 * TOL, "quat round trip near pi");
        }
    }
}

static void test_exp_log(uint64_t *rng)
{
    /* log(exp(w)) = w for |w| < pi; relative to |w| so that tiny angles must keep full precision */
    const double mags[] = {1e-300, 1e-15, 1e-12, 1e-9, 1e-7, 1e-6, 1.0000001e-6, 1e-5, 1e-3, 0.1, 1.0, 2.0, 3.0,
                           PI - 1e-4, PI - 1e-7, PI - 1e-10};
    for (size_t m = 0; m < sizeof mags / sizeof mags[0]; ++m)
        for (int t = 0; t < 20; ++t) {
            double n[3], w[3], q[4], w2[3];
            random_unit(rng, n);
            for (int i = 0; i < 3; ++i) w[i] = mags[m] * n[i];
            sd_quat_exp(w, q);
            CHECK_CLOSE(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1.0, 2 * TOL);
            sd_quat_log(q, w2);
            /* near pi the angle is ill-conditioned in w = cos(angle/2): allow a few ulps of pi */
            const double tol = mags[m] > 3.0 ? 1e-13 : 2 * TOL;
            if (!vec_rel_close(w2, w, 3, tol)) {
                ++test_failed_count;
                fprintf(stderr, "log(exp(w)) != w at |w| = %.17g: got |w2| = %.17g (rel err %.3g)\n", mags[m],
                        sd_v3_norm(w2), fabs(sd_v3_norm(w2) - mags[m]) / mags[m]);
            } else {
                ++test_passed_count;
            }
            /* log of -q is the same rotation vector */
            double mq[4] = {-q[0], -q[1], -q[2], -q[3]}, w3[3];
            sd_quat_log(mq, w3);
            CHECK(vec_rel_close(w3, w, 3, tol));
            /* exp agrees with Rodrigues' formula */
            if (mags[m] > 1e-300) {
                double R1[9], R2[9];
                sd_quat_to_m3(q, R1);
                sd_m3_axis_angle(n, mags[m], R2);
                CHECK_ARRAY_CLOSE(R1, R2, 9, 4 * TOL, "R(exp(w)) vs axis_angle");
            }
        }
    /* exp(0) is the identity and log(identity) is zero */
    const double zero[3] = {0, 0, 0};
    double q0[4], w0[3];
    sd_quat_exp(zero, q0);
    CHECK(q0[0] == 1.0 && q0[1] == 0.0 && q0[2] == 0.0 && q0[3] == 0.0);
    sd_quat_log(q0, w0);
    CHECK(w0[0] == 0.0 && w0[1] == 0.0 && w0[2] == 0.0);
    /* angles beyond pi come back as the shorter rotation: w - 2 pi w/|w| */
    for (int t = 0; t < 20; ++t) {
        double n[3], w[3], q[4], w2[3], expect[3];
        random_unit(rng, n);
        const double a = PI + 0.1 + 2.0 * sd_random_uniform(rng);
        for (int i = 0; i < 3; ++i) {
            w[i] = a * n[i];
            expect[i] = (a - 2 * PI) * n[i];
        }
        sd_quat_exp(w, q);
        sd_quat_log(q, w2);
        CHECK_ARRAY_CLOSE(w2, expect, 3, 1e-13, "log(exp(w)) for |w| > pi");
    }
    /* exp(log(q)) = +-q for random unit quaternions */
    for (int t = 0; t < 100; ++t) {
        double q[4], w[3], q2[4];
        random_quat(rng, q);
        sd_quat_log(q, w);
        CHECK(sd_v3_norm(w) <= PI + 1e-15);
        sd_quat_exp(w, q2);
        const double sign = q[0] < 0 ? -1.0 : 1.0;
        double qs[4] = {sign * q[0], sign * q[1], sign * q[2], sign * q[3]};
        CHECK_ARRAY_CLOSE(q2, qs, 4, 4 * TOL, "exp(log(q)) vs q");
    }
}

static void test_rotations(uint64_t *rng)
{
    const double ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};
    for (int t = 0; t < 100; ++t) {
        double rpy[3], R[9], Rx[9], Ry[9], Rz[9], T[9], R2[9], det;
        random_vector(rng, rpy, 3, PI);
        sd_m3_rpy(rpy[0], rpy[1], rpy[2], R);
        sd_m3_axis_angle(ex, rpy[0], Rx);
        sd_m3_axis_angle(ey, rpy[1], Ry);
        sd_m3_axis_angle(ez, rpy[2], Rz);
        sd_m3_mul(Ry, Rx, T);
        sd_m3_mul(Rz, T, R2);
        CHECK_ARRAY_CLOSE(R, R2, 9, 4 * TOL, "rpy vs Rz Ry Rx");
        CHECK(orthonormality_error(R, &det) <= 4 * TOL);
        CHECK_CLOSE(det, 1.0, 4 * TOL);
        /* axis-angle: orthonormal, proper, leaves the axis fixed, turns a perpendicular vector by
         * the angle (cos = dot, sin = along the axis of the cross product) */
        double n[3], A[9], Rn[3], perp[3], Rp[3], c[3];
        random_unit(rng, n);
        const double angle = 2 * PI * (2 * sd_random_uniform(rng) - 1);
        sd_m3_axis_angle(n, angle, A);
        CHECK(orthonormality_error(A, &det) <= 4 * TOL);
        CHECK_CLOSE(det, 1.0, 4 * TOL);
        sd_m3_mul_v(A, n, Rn);
        CHECK_ARRAY_CLOSE(Rn, n, 3, 4 * TOL, "axis fixed by axis_angle");
        const double e[3] = {n[1], -n[0] + n[2], -n[1]}; /* perpendicular-ish seed */
        sd_v3_cross(n, e, perp);
        const double pn = sd_v3_norm(perp);
        for (int i = 0; i < 3; ++i) perp[i] /= pn;
        sd_m3_mul_v(A, perp, Rp);
        sd_v3_cross(perp, Rp, c);
        CHECK_CLOSE(sd_v3_dot(perp, Rp), cos(angle), 4 * TOL);
        CHECK_CLOSE(sd_v3_dot(c, n), sin(angle), 4 * TOL);
        /* skew: [a x] b = a x b */
        double a[3], b[3], S[9], Sb[3], axb[3];
        random_vector(rng, a, 3, 2.0);
        random_vector(rng, b, 3, 2.0);
        sd_m3_skew(a, S);
        sd_m3_mul_v(S, b, Sb);
        sd_v3_cross(a, b, axb);
        CHECK_ARRAY_CLOSE(Sb, axb, 3, TOL, "skew vs cross");
        /* transposed products */
        double B[9], P1[9], P2[9], At[9], Bt[9];
        sd_m3_rpy(a[0], a[1], a[2], B);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) At[3 * i + j] = A[3 * j + i], Bt[3 * i + j] = B[3 * j + i];
        sd_m3t_mul(A, B, P1);
        sd_m3_mul(At, B, P2);
        CHECK_ARRAY_CLOSE(P1, P2, 9, TOL, "A^T B");
        sd_m3_mul_t(A, B, P1);
        sd_m3_mul(A, Bt, P2);
        CHECK_ARRAY_CLOSE(P1, P2, 9, TOL, "A B^T");
        double v1[3], v2[3];
        sd_m3t_mul_v(A, a, v1);
        sd_m3_mul_v(At, a, v2);
        CHECK_ARRAY_CLOSE(v1, v2, 3, TOL, "A^T a");
    }
}

static void test_transforms(uint64_t *rng)
{
    for (int t = 0; t < 200; ++t) {
        sd_transform a, b, ab, ainv, id, I;
        double x[3], y1[3], y2[3], tmp[3];
        random_transform(rng, &a);
        random_transform(rng, &b);
        random_vector(rng, x, 3, 3.0);
        /* compose: (a b) x = a (b x) */
        sd_transform_compose(&a, &b, &ab);
        sd_transform_point(&ab, x, y1);
        sd_transform_point(&b, x, tmp);
        sd_transform_point(&a, tmp, y2);
        CHECK_ARRAY_CLOSE(y1, y2, 3, 4 * TOL, "compose point");
        /* inverse: a^-1 (a x) = x, a a^-1 = a^-1 a = 1 */
        sd_transform_inverse(&a, &ainv);
        sd_transform_point(&a, x, tmp);
        sd_transform_point(&ainv, tmp, y1);
        CHECK_ARRAY_CLOSE(y1, x, 3, 4 * TOL, "inverse point");
        sd_transform_identity(&I);
        sd_transform_compose(&a, &ainv, &id);
        CHECK_ARRAY_CLOSE(id.R, I.R, 9, 4 * TOL, "a a^-1 rotation");
        CHECK_ARRAY_CLOSE(id.p, I.p, 3, 8 * TOL, "a a^-1 position");
        sd_transform_compose(&ainv, &a, &id);
        CHECK_ARRAY_CLOSE(id.R, I.R, 9, 4 * TOL, "a^-1 a rotation");
        CHECK_ARRAY_CLOSE(id.p, I.p, 3, 8 * TOL, "a^-1 a position");
        /* compose may alias its output with an input */
        sd_transform c = a;
        sd_transform_compose(&c, &b, &c);
        CHECK_ARRAY_CLOSE(c.R, ab.R, 9, 0.0, "compose aliasing R");
        CHECK_ARRAY_CLOSE(c.p, ab.p, 3, 0.0, "compose aliasing p");
        c = b;
        sd_transform_compose(&a, &c, &c);
        CHECK_ARRAY_CLOSE(c.R, ab.R, 9, 0.0, "compose aliasing b, R");
        CHECK_ARRAY_CLOSE(c.p, ab.p, 3, 0.0, "compose aliasing b, p");
        /* every build (scalar, AVX2) gives the written sums in their order: without fused
         * multiply-adds the same bits, with them (CMakeLists.txt) within 3 roundings of the terms */
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) {
                volatile double t0 = a.R[3 * i] * b.R[j], t1 = a.R[3 * i + 1] * b.R[3 + j],
                                t2 = a.R[3 * i + 2] * b.R[6 + j]; /* volatile: never contracted */
                const double terms = fabs(t0) + fabs(t1) + fabs(t2);
                CHECK(fabs(ab.R[3 * i + j] - (t0 + t1 + t2)) <= (TEST_FUSED ? 3 * DBL_EPSILON * terms : 0.0));
            }
            volatile double t0 = a.R[3 * i] * b.p[0], t1 = a.R[3 * i + 1] * b.p[1], t2 = a.R[3 * i + 2] * b.p[2];
            const double terms = fabs(t0) + fabs(t1) + fabs(t2) + fabs(a.p[i]);
            CHECK(fabs(ab.p[i] - (t0 + t1 + t2 + a.p[i])) <= (TEST_FUSED ? 4 * DBL_EPSILON * terms : 0.0));
        }
        /* the placement's meaning: p is the child origin, columns of R the child axes */
        const double origin[3] = {0, 0, 0}, e1[3] = {1, 0, 0};
        sd_transform_point(&a, origin, y1);
        CHECK_ARRAY_CLOSE(y1, a.p, 3, 0.0, "child origin");
        sd_transform_point(&a, e1, y1);
        const double col0[3] = {a.R[0] + a.p[0], a.R[3] + a.p[1], a.R[6] + a.p[2]};
        CHECK_ARRAY_CLOSE(y1, col0, 3, TOL, "child x axis");
    }
}

static void test_spatial_transforms(uint64_t *rng)
{
    for (int t = 0; t < 200; ++t) {
        sd_transform X, Y, XY;
        double m_p[6], m_c[6], f_c[6], f_p[6], r1[6], r2[6], r3[6];
        random_transform(rng, &X);
        random_transform(rng, &Y);
        random_vector(rng, m_p, 6, 2.0);
        random_vector(rng, m_c, 6, 2.0);
        random_vector(rng, f_c, 6, 2.0);
        random_vector(rng, f_p, 6, 2.0);
        /* duality of the power pairing: phi and phi* are adjoint */
        sd_force_to_parent(&X, f_c, r1);
        sd_motion_to_child(&X, m_p, r2);
        CHECK_CLOSE(sd_s6_dot(r1, m_p), sd_s6_dot(f_c, r2), TOL * 10);
        sd_force_to_child(&X, f_p, r1);
        sd_motion_to_parent(&X, m_c, r2);
        CHECK_CLOSE(sd_s6_dot(r1, m_c), sd_s6_dot(f_p, r2), TOL * 10);
        /* inverses */
        sd_motion_to_child(&X, m_p, r1);
        sd_motion_to_parent(&X, r1, r2);
        CHECK_ARRAY_CLOSE(r2, m_p, 6, 4 * TOL, "motion_to_parent(motion_to_child(m))");
        sd_motion_to_parent(&X, m_c, r1);
        sd_motion_to_child(&X, r1, r2);
        CHECK_ARRAY_CLOSE(r2, m_c, 6, 4 * TOL, "motion_to_child(motion_to_parent(m))");
        sd_force_to_parent(&X, f_c, r1);
        sd_force_to_child(&X, r1, r2);
        CHECK_ARRAY_CLOSE(r2, f_c, 6, 4 * TOL, "force_to_child(force_to_parent(f))");
        /* to_child with X equals to_parent with X^-1 */
        sd_transform Xi;
        sd_transform_inverse(&X, &Xi);
        sd_motion_to_child(&X, m_p, r1);
        sd_motion_to_parent(&Xi, m_p, r2);
        CHECK_ARRAY_CLOSE(r1, r2, 6, 4 * TOL, "motion_to_child(X) vs motion_to_parent(X^-1)");
        sd_force_to_child(&X, f_p, r1);
        sd_force_to_parent(&Xi, f_p, r2);
        CHECK_ARRAY_CLOSE(r1, r2, 6, 4 * TOL, "force_to_child(X) vs force_to_parent(X^-1)");
        /* composition: a motion carried through X then Y equals carried through X Y */
        sd_transform_compose(&X, &Y, &XY);
        sd_motion_to_child(&X, m_p, r1);
        sd_motion_to_child(&Y, r1, r2);
        sd_motion_to_child(&XY, m_p, r3);
        CHECK_ARRAY_CLOSE(r2, r3, 6, 8 * TOL, "motion_to_child composition");
        sd_force_to_parent(&Y, f_c, r1);
        sd_force_to_parent(&X, r1, r2);
        sd_force_to_parent(&XY, f_c, r3);
        CHECK_ARRAY_CLOSE(r2, r3, 6, 8 * TOL, "force_to_parent composition");
        /* the velocity field of a rigid body, from first principles: a body with twist m_c
         * (child axes, at the child origin) moves its point x (child coordinates) with velocity
         * v + omega x x in child axes, i.e. R (v + omega x x) in parent axes; the parent-frame
         * twist m_p must give the same velocity at the same point, R x + p */
        double x[3], wx[3], vc[3], vp_expect[3], xp[3], wxp[3], vp[3];
        random_vector(rng, x, 3, 2.0);
        sd_v3_cross(m_c, x, wx);
        for (int i = 0; i < 3; ++i) vc[i] = m_c[3 + i] + wx[i];
        sd_m3_mul_v(X.R, vc, vp_expect);
        sd_motion_to_parent(&X, m_c, r1);
        sd_transform_point(&X, x, xp);
        sd_v3_cross(r1, xp, wxp);
        for (int i = 0; i < 3; ++i) vp[i] = r1[3 + i] + wxp[i];
        CHECK_ARRAY_CLOSE(vp, vp_expect, 3, 8 * TOL, "rigid velocity field");
        double wexp[3];
        sd_m3_mul_v(X.R, m_c, wexp);
        CHECK_ARRAY_CLOSE(r1, wexp, 3, 4 * TOL, "angular velocity in parent axes");
        /* a pure force F through the child point x: in the parent it is R F with moment
         * (R x + p) x R F about the parent origin */
        double F[3], fc6[6], FP[3], nP[3];
        random_vector(rng, F, 3, 2.0);
        sd_v3_cross(x, F, fc6);
        memcpy(fc6 + 3, F, sizeof F);
        sd_force_to_parent(&X, fc6, r1);
        sd_m3_mul_v(X.R, F, FP);
        sd_v3_cross(xp, FP, nP);
        CHECK_ARRAY_CLOSE(r1, nP, 3, 8 * TOL, "moment of a point force in the parent");
        CHECK_ARRAY_CLOSE(r1 + 3, FP, 3, 4 * TOL, "point force in the parent");
    }
}

static void random_sym6(uint64_t *rng, double S[36])
{
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j <= i; ++j) {
            const double v = 2.0 * (2 * sd_random_uniform(rng) - 1);
            S[6 * i + j] = S[6 * j + i] = v;
        }
}

static void test_sym6_add_to_parent(uint64_t *rng)
{
    for (int t = 0; t < 200; ++t) {
        sd_transform X;
        double I[36], acc[36], acc0[36], Phi[36], expect[36];
        random_transform(rng, &X);
        random_sym6(rng, I);
        random_sym6(rng, acc0);
        memcpy(acc, acc0, sizeof acc);
        sd_sym6_add_to_parent(&X, I, acc);
        /* Phi column j = sd_force_to_parent(X, e_j) */
        for (int j = 0; j < 6; ++j) {
            double e[6] = {0, 0, 0, 0, 0, 0}, col[6];
            e[j] = 1.0;
            sd_force_to_parent(&X, e, col);
            for (int i = 0; i < 6; ++i) Phi[6 * i + j] = col[i];
        }
        double PI_[36];
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) {
                double s = 0;
                for (int k = 0; k < 6; ++k) s += Phi[6 * i + k] * I[6 * k + j];
                PI_[6 * i + j] = s;
            }
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) {
                double s = acc0[6 * i + j];
                for (int k = 0; k < 6; ++k) s += PI_[6 * i + k] * Phi[6 * j + k];
                expect[6 * i + j] = s;
            }
        CHECK_ARRAY_CLOSE(acc, expect, 36, 1e-14, "sym6_add_to_parent vs Phi I Phi^T");
        /* the result stays exactly symmetric */
        int sym = 1;
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j)
                if (fabs(acc[6 * i + j] - acc[6 * j + i]) > 1e-14 * 50) sym = 0;
        CHECK(sym);
        /* sym6_mul against a plain matrix-vector product */
        double v[6], Iv[6], Iv2[6];
        random_vector(rng, v, 6, 2.0);
        sd_sym6_mul(I, v, Iv);
        for (int i = 0; i < 6; ++i) {
            Iv2[i] = 0;
            for (int k = 0; k < 6; ++k) Iv2[i] += I[6 * i + k] * v[k];
        }
        CHECK_ARRAY_CLOSE(Iv, Iv2, 6, TOL, "sym6_mul");
    }
}

/* A random positive definite 6x6 inertia-like matrix of scale `mass` (L L^T, L lower triangular). */
static void random_spd6(uint64_t *rng, double mass, double S[36])
{
    double L[36] = {0};
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j <= i; ++j) L[6 * i + j] = (i == j ? 1.0 : 0.0) + 0.7 * (2 * sd_random_uniform(rng) - 1);
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
            double v = 0;
            for (int k = 0; k < 6; ++k) v += L[6 * i + k] * L[6 * j + k];
            S[6 * i + j] = mass * v;
        }
}

/* The congruence acc += phi P phi^T (sd_sym6_add_to_parent, an AVX2 form in a native build and the
 * scalar one otherwise) against the plain 6x6 product with phi = [R, [p x] R; 0, R] built from X's
 * numbers directly (not through the force-transform kernels), relative to the largest entry of the
 * result: positive definite P over masses 1e-3 .. 1e3 and offsets |p| 1e-3 .. 1e2, as articulated
 * inertias of real trees, then a tips-to-base chain of 40 such additions into one accumulator. */
static void test_sym6_congruence_explicit(uint64_t *rng)
{
    double worst = 0.0;
    double chain_acc[36], chain_ref[36];
    random_spd6(rng, 1.0, chain_acc);
    memcpy(chain_ref, chain_acc, sizeof chain_acc);
    for (int t = 0; t < 400; ++t) {
        sd_transform X;
        random_transform(rng, &X);
        const double pscale = pow(10.0, -3.0 + 5.0 * sd_random_uniform(rng)),
                     mass = pow(10.0, -3.0 + 6.0 * sd_random_uniform(rng));
        for (int i = 0; i < 3; ++i) X.p[i] *= pscale;
        double P[36], acc0[36], acc[36], phi[36] = {0}, phiP[36], expect[36];
        random_spd6(rng, mass, P);
        random_spd6(rng, mass * (1 + pscale * pscale), acc0);
        const double *R = X.R, *p = X.p;
        const double px[9] = {0, -p[2], p[1], p[2], 0, -p[0], -p[1], p[0], 0};
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                phi[6 * i + j] = phi[6 * (3 + i) + 3 + j] = R[3 * i + j];
                for (int l = 0; l < 3; ++l) phi[6 * i + 3 + j] += px[3 * i + l] * R[3 * l + j];
            }
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) {
                double v = 0;
                for (int k = 0; k < 6; ++k) v += phi[6 * i + k] * P[6 * k + j];
                phiP[6 * i + j] = v;
            }
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) {
                double v = 0;
                for (int k = 0; k < 6; ++k) v += phiP[6 * i + k] * phi[6 * j + k];
                expect[6 * i + j] = acc0[6 * i + j] + v;
            }
        memcpy(acc, acc0, sizeof acc);
        sd_sym6_add_to_parent(&X, P, acc);
        double num = 0, den = 0;
        for (int i = 0; i < 36; ++i) {
            num = fmax(num, fabs(acc[i] - expect[i]));
            den = fmax(den, fabs(expect[i]));
        }
        worst = fmax(worst, num / den);
        if (t < 40) { /* the chain: the same step applied to one growing accumulator */
            sd_sym6_add_to_parent(&X, P, chain_acc);
            for (int i = 0; i < 36; ++i) chain_ref[i] += expect[i] - acc0[i];
        }
    }
    CHECK(worst <= 1e-14);
    printf("sym6_add_to_parent vs explicit phi P phi^T: worst relative error %.2g over 400 cases\n", worst);
    double num = 0, den = 0;
    for (int i = 0; i < 36; ++i) {
        num = fmax(num, fabs(chain_acc[i] - chain_ref[i]));
        den = fmax(den, fabs(chain_ref[i]));
    }
    CHECK(num / den <= 1e-14);
}

static void random_inertia3(uint64_t *rng, double m, double Ic[9])
{
    double s[3], R[9], D[9] = {0}, T[9], q[4];
    for (int i = 0; i < 3; ++i) s[i] = 0.05 + 0.5 * sd_random_uniform(rng);
    D[0] = m * (s[1] * s[1] + s[2] * s[2]);
    D[4] = m * (s[0] * s[0] + s[2] * s[2]);
    D[8] = m * (s[0] * s[0] + s[1] * s[1]);
    random_quat(rng, q);
    sd_quat_to_m3(q, R);
    sd_m3_mul(R, D, T);
    sd_m3_mul_t(T, R, Ic);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < i; ++j) Ic[3 * i + j] = Ic[3 * j + i];
}

static void test_inertia(uint64_t *rng)
{
    for (int t = 0; t < 200; ++t) {
        const double m = 0.1 + 5.0 * sd_random_uniform(rng);
        double c[3], Ic[9], M[36];
        random_vector(rng, c, 3, 1.5);
        random_inertia3(rng, m, Ic);
        sd_inertia_from_com(m, c, Ic, M);
        /* parallel-axis theorem: I_O = Ic + m (|c|^2 1 - c c^T); off-diagonal m [c x]; mass block m 1 */
        const double cc = sd_v3_dot(c, c);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                const double IO = Ic[3 * i + j] + m * ((i == j ? cc : 0.0) - c[i] * c[j]);
                CHECK_CLOSE(M[6 * i + j], IO, 4 * TOL);
                CHECK_CLOSE(M[6 * (3 + i) + 3 + j], i == j ? m : 0.0, TOL);
            }
        /* momentum of a body moving with twist V = [w; v] (v at the frame origin): linear
         * m (v + w x c); angular about the origin Ic w + c x m (v + w x c) */
        double V[6], h[6], wxc[3], vc[3], L[3], Icw[3], cxL[3];
        random_vector(rng, V, 6, 2.0);
        sd_sym6_mul(M, V, h);
        sd_v3_cross(V, c, wxc);
        for (int i = 0; i < 3; ++i) vc[i] = V[3 + i] + wxc[i], L[i] = m * vc[i];
        sd_m3_mul_v(Ic, V, Icw);
        sd_v3_cross(c, L, cxL);
        const double hexp[6] = {Icw[0] + cxL[0], Icw[1] + cxL[1], Icw[2] + cxL[2], L[0], L[1], L[2]};
        CHECK_ARRAY_CLOSE(h, hexp, 6, 8 * TOL, "M V vs momentum from first principles");
        /* kinetic energy 1/2 V.MV = 1/2 m |v_c|^2 + 1/2 w.Ic w */
        CHECK_CLOSE(0.5 * sd_s6_dot(V, h), 0.5 * m * sd_v3_dot(vc, vc) + 0.5 * sd_v3_dot(V, Icw), 8 * TOL);
        /* the same inertia by moving the COM-frame inertia [Ic 0; 0 m] with the placement {1, c} */
        double Mc[36] = {0}, M2[36] = {0};
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) Mc[6 * i + j] = Ic[3 * i + j];
            Mc[6 * (3 + i) + 3 + i] = m;
        }
        sd_transform Xc;
        sd_transform_identity(&Xc);
        memcpy(Xc.p, c, sizeof c);
        sd_sym6_add_to_parent(&Xc, Mc, M2);
        CHECK_ARRAY_CLOSE(M, M2, 36, 4 * TOL, "inertia_from_com vs COM inertia moved by {1, c}");
    }
}

static void test_cross_products(uint64_t *rng)
{
    for (int t = 0; t < 200; ++t) {
        double V[6], W[6], U[6], f[6], m[6], r1[6], r2[6];
        random_vector(rng, V, 6, 2.0);
        random_vector(rng, W, 6, 2.0);
        random_vector(rng, U, 6, 2.0);
        random_vector(rng, f, 6, 2.0);
        random_vector(rng, m, 6, 2.0);
        /* duality: (V x* f) . m = -f . (V x m) */
        sd_force_cross(V, f, r1);
        sd_motion_cross(V, m, r2);
        CHECK_CLOSE(sd_s6_dot(r1, m), -sd_s6_dot(f, r2), 10 * TOL);
        /* V x V = 0; V x* (M V) . V = 0 (gyroscopic forces do no work) */
        sd_motion_cross(V, V, r1);
        double zero[6] = {0, 0, 0, 0, 0, 0};
        CHECK_ARRAY_CLOSE(r1, zero, 6, 4 * TOL, "V x V");
        /* anti-symmetry and the Jacobi identity of the Lie bracket */
        sd_motion_cross(W, V, r2);
        sd_motion_cross(V, W, r1);
        for (int i = 0; i < 6; ++i) r2[i] = -r2[i];
        CHECK_ARRAY_CLOSE(r1, r2, 6, TOL, "V x W = -W x V");
        double a[6], b[6], c[6], j1[6], j2[6], j3[6], sum[6];
        sd_motion_cross(W, U, a);
        sd_motion_cross(V, a, j1);
        sd_motion_cross(U, V, b);
        sd_motion_cross(W, b, j2);
        sd_motion_cross(V, W, c);
        sd_motion_cross(U, c, j3);
        for (int i = 0; i < 6; ++i) sum[i] = j1[i] + j2[i] + j3[i];
        double scale = 0;
        for (int i = 0; i < 6; ++i) scale = fmax(scale, fmax(fabs(j1[i]), fmax(fabs(j2[i]), fabs(j3[i]))));
        CHECK(sqrt(sd_s6_dot(sum, sum)) <= 16 * TOL * fmax(1.0, scale));
        /* equivariance under a change of frame: X*(V x m) = (X* V) x (X* m), and the force version */
        sd_transform X;
        random_transform(rng, &X);
        double Vc[6], mc[6], fc[6], x1[6], x2[6];
        sd_motion_cross(V, m, r1);
        sd_motion_to_child(&X, r1, x1);
        sd_motion_to_child(&X, V, Vc);
        sd_motion_to_child(&X, m, mc);
        sd_motion_cross(Vc, mc, x2);
        CHECK_ARRAY_CLOSE(x1, x2, 6, 32 * TOL, "motion cross equivariance");
        sd_force_cross(V, f, r1);
        sd_force_to_child(&X, r1, x1);
        sd_force_to_child(&X, f, fc);
        sd_force_cross(Vc, fc, x2);
        CHECK_ARRAY_CLOSE(x1, x2, 6, 32 * TOL, "force cross equivariance");
        /* the angular block of V x m is w x w_m (a rotation rate does not see translations) */
        double wxw[3];
        sd_motion_cross(V, m, r1);
        sd_v3_cross(V, m, wxw);
        CHECK_ARRAY_CLOSE(r1, wxw, 3, TOL, "angular part of motion cross");
    }
}

int main(void)
{
    uint64_t rng = 0x5EEDULL;
    test_quaternions(&rng);
    test_exp_log(&rng);
    test_rotations(&rng);
    test_transforms(&rng);
    test_spatial_transforms(&rng);
    test_sym6_add_to_parent(&rng);
    test_sym6_congruence_explicit(&rng);
    test_inertia(&rng);
    test_cross_products(&rng);
    return test_summary("test_spatial");
}
