/*
 * src/model/hinge.c — the one place that knows what each hinge type is.
 *
 * For a body k it yields the joint transform X_J(q) (the body frame placed in the joint frame),
 * the joint map H*(k) in the body frame (relative spatial velocity = H*(k) u(k), papers/README.md
 * "Hinges"), the velocity-dependent term d(H*)/dt u, and the configuration-space operations
 * (neutral, integrate, difference, normalise, random) with the rates of the local chart
 * q = q0 (+) delta that integrators work in. No other file switches on hinge type.
 *
 * Body-frame choices keep H* constant wherever possible (revolute, prismatic, spherical, free),
 * so that their d(H*)/dt u vanishes; universal and planar hinges have a q-dependent H*.
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "common/sincos4.h"

static const struct {
    const char *name;
    int nq, nv;
} hinge_table[SD_HINGE_TYPE_COUNT] = {
    [SD_HINGE_FIXED] = {"fixed", 0, 0},         [SD_HINGE_REVOLUTE] = {"revolute", 1, 1},
    [SD_HINGE_PRISMATIC] = {"prismatic", 1, 1}, [SD_HINGE_SPHERICAL] = {"spherical", 4, 3},
    [SD_HINGE_FREE] = {"free", 7, 6},           [SD_HINGE_UNIVERSAL] = {"universal", 2, 2},
    [SD_HINGE_PLANAR] = {"planar", 3, 3},
};

static int hinge_known(sd_hinge_type type) { return (int)type >= 0 && type < SD_HINGE_TYPE_COUNT; }

const char *sd_hinge_type_name(sd_hinge_type type) { return hinge_known(type) ? hinge_table[type].name : "unknown"; }
int sd_hinge_type_nq(sd_hinge_type type) { return hinge_known(type) ? hinge_table[type].nq : -1; }
int sd_hinge_type_nv(sd_hinge_type type) { return hinge_known(type) ? hinge_table[type].nv : -1; }

static void set_column(double *S, int col, const double ang[3], const double lin[3])
{
    double *c = S + 6 * col;
    for (int i = 0; i < 3; ++i) {
        c[i] = ang ? ang[i] : 0.0;
        c[3 + i] = lin ? lin[i] : 0.0;
    }
}

void sd_hinge_transform(const sd_model *m, int k, const double *qk, sd_transform *XJ, double *S)
{
    const double *ax = m->hinge_axes + 9 * k; /* axis, then axis2 / t1, t2 */
    static const double I6[36] = {1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
                                  0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1};
    sd_transform_identity(XJ);
    switch (m->hinge[k]) {
    case SD_HINGE_FIXED:
    case SD_HINGE_TYPE_COUNT:
        break;
    case SD_HINGE_REVOLUTE: /* rotation q about the axis; H* = [axis; 0] */
        sd_m3_axis_angle(ax, qk[0], XJ->R);
        set_column(S, 0, ax, NULL);
        break;
    case SD_HINGE_PRISMATIC: /* translation q along the axis; H* = [0; axis] */
        for (int i = 0; i < 3; ++i) XJ->p[i] = qk[0] * ax[i];
        set_column(S, 0, NULL, ax);
        break;
    case SD_HINGE_SPHERICAL: /* quaternion; u = body angular velocity; H* = [1; 0] */
        sd_quat_to_m3(qk, XJ->R);
        memcpy(S, I6, 18 * sizeof(double));
        break;
    case SD_HINGE_FREE: /* position + quaternion; u = body (omega, v); H* = 1 */
        sd_quat_to_m3(qk + 3, XJ->R);
        memcpy(XJ->p, qk, 3 * sizeof(double));
        memcpy(S, I6, 36 * sizeof(double));
        break;
    case SD_HINGE_UNIVERSAL: { /* R = R(a1, q0) R(a2, q1); omega = R2^T a1 q0' + a2 q1' */
        double R1[9], R2[9], a1_body[3];
        sd_m3_axis_angle(ax, qk[0], R1);
        sd_m3_axis_angle(ax + 3, qk[1], R2);
        sd_m3_mul(R1, R2, XJ->R);
        sd_m3t_mul_v(R2, ax, a1_body);
        set_column(S, 0, a1_body, NULL);
        set_column(S, 1, ax + 3, NULL);
        break;
    }
    case SD_HINGE_PLANAR: { /* p = s1 t1 + s2 t2, R = R(n, theta); v_body = R^T t_i s_i' */
        double t1_body[3], t2_body[3];
        const double *n = ax, *t1 = ax + 3, *t2 = ax + 6;
        sd_m3_axis_angle(n, qk[2], XJ->R);
        for (int i = 0; i < 3; ++i) XJ->p[i] = qk[0] * t1[i] + qk[1] * t2[i];
        sd_m3t_mul_v(XJ->R, t1, t1_body);
        sd_m3t_mul_v(XJ->R, t2, t2_body);
        set_column(S, 0, NULL, t1_body);
        set_column(S, 1, NULL, t2_body);
        set_column(S, 2, n, NULL);
        break;
    }
    }
}

int sd_hinge_select(const sd_model *m, int k, double *sgn)
{
    *sgn = 1.0;
    const sd_hinge_type t = m->hinge[k];
    if (t == SD_HINGE_UNIVERSAL || t == SD_HINGE_PLANAR) return SD_HINGE_SEL_VARYING;
    if (t != SD_HINGE_REVOLUTE && t != SD_HINGE_PRISMATIC) return SD_HINGE_SEL_CONSTANT;
    const double *ax = m->hinge_axes + 9 * k;
    for (int i = 0; i < 3; ++i) { /* exactly +-e_i (the builder keeps such an axis exact), else generic */
        const int j = (i + 1) % 3, l = (i + 2) % 3;
        if (fabs(ax[i]) == 1.0 && ax[j] == 0.0 && ax[l] == 0.0) {
            *sgn = ax[i];
            return t == SD_HINGE_REVOLUTE ? i : 3 + i;
        }
    }
    return SD_HINGE_SEL_CONSTANT;
}

int sd_plane_axis(const sd_model *m, int k, int sel)
{
    if (m->nflex || sel < 0 || sel > 2) return -1; /* a flexible parent deforms the placement (node engine) */
    static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    for (int i = 0; i < 9; ++i)
        if (m->placement[k].R[i] != identity[i]) return -1;
    return sel;
}

/* Xup = placement * X_J(q) when H* = sgn e_sel (sd_hinge_select): the joint rotation is a plane
 * rotation by theta = sgn q in the two axes a, b that follow the hinge axis i cyclically, so the
 * product with the placement's rotation P only mixes two of its columns,
 *   col_a = c P_a + s P_b,  col_b = -s P_a + c P_b,  col_i = P_i,  p = p_placement,
 * 12 multiplications where Rodrigues' formula and a 3x3 product take 27 + 15; a prismatic hinge
 * along e_i only moves the origin along P_i. Same numbers as sd_hinge_transform composed with the
 * placement up to round-off (test_hinge_kernels).
 *
 * The column indices are arguments of an always-inlined body instantiated once per axis below
 * (rotate_x/y/z, slide_x/y/z), so each kernel has constant indices: no (i + 1) % 3 at run time,
 * straight-line loads and stores (issue 12: ~190 instructions a body with run-time indices).
 * restrict: the placement (model) and Xup (workspace) never overlap, which spares the compiler's
 * overlap test and its second, scalar copy of the loop. */
static inline __attribute__((always_inline)) void plane_rotation(const sd_transform *restrict Xp, int i, int a,
                                                                int b, double c, double s, sd_transform *restrict X)
{
    const double *P = Xp->R;
    for (int r = 0; r < 3; ++r) {
        const double pa = P[3 * r + a], pb = P[3 * r + b];
        X->R[3 * r + i] = P[3 * r + i];
        X->R[3 * r + a] = c * pa + s * pb;
        X->R[3 * r + b] = c * pb - s * pa;
    }
    /* written out, not a loop: GCC makes a copy loop a memcpy call */
    X->p[0] = Xp->p[0];
    X->p[1] = Xp->p[1];
    X->p[2] = Xp->p[2];
}

static inline __attribute__((always_inline)) void axis_slide(const sd_transform *restrict Xp, int i, double d,
                                                            sd_transform *restrict X)
{
    const double *P = Xp->R;
    memcpy(X->R, P, 9 * sizeof(double));
    for (int r = 0; r < 3; ++r) X->p[r] = Xp->p[r] + d * P[3 * r + i];
}

static void rotate_x(const sd_transform *Xp, double c, double s, sd_transform *X) { plane_rotation(Xp, 0, 1, 2, c, s, X); }
static void rotate_y(const sd_transform *Xp, double c, double s, sd_transform *X) { plane_rotation(Xp, 1, 2, 0, c, s, X); }
static void rotate_z(const sd_transform *Xp, double c, double s, sd_transform *X) { plane_rotation(Xp, 2, 0, 1, c, s, X); }

void sd_hinge_turn_constants(const sd_model *m, int k, double out[12])
{
    double sgn, K[9];
    memset(out, 0, 12 * sizeof(double));
    if (m->hinge[k] != SD_HINGE_REVOLUTE || sd_hinge_select(m, k, &sgn) != SD_HINGE_SEL_CONSTANT) return;
    const double *a = m->hinge_axes + 9 * k;
    sd_m3_skew(a, K);
    sd_m3_mul(m->placement[k].R, K, out);
    sd_m3_mul_v(m->placement[k].R, a, out + 9);
}

/* Xup = placement * X_J(q) for a revolute about a unit axis a that is not a coordinate axis.
 * Rodrigues' formula R_J = c 1 + s [a x] + (1 - c) a a^T makes the placement's rotation P times it
 *   P R_J = c P + s (P [a x]) + (1 - c) (P a) a^T,
 * whose P [a x] and P a are constants of the model (m->hinge_turn): 30 multiplications, where the
 * rotation and a 3x3 product take 27 + 15 and more, and no libm call, as sin and cos come from the
 * vector kernel with the selecting hinges' (sd_hinge_sincos4). Its terms are no larger than
 * Rodrigues' own, so the entries are about as accurate as the composition (over 2e5 random axes,
 * placements and angles: at most 2.6 ulp of 1 from the exact product, the composition 1.8, and 5.1
 * for the form P + s P [a x] + (1 - c) P [a x]^2, whose P and (1 - c) P [a x]^2 cancel near a half
 * turn); test_hinge_kernels checks them within 3 ulp of the exact product. */
static void turn_placement(const sd_model *m, int k, double s, double c, sd_transform *restrict X, double *S)
{
    const sd_transform *restrict Xp = &m->placement[k];
    const double *restrict A = m->hinge_turn + 12 * k, *restrict w = A + 9, *a = m->hinge_axes + 9 * k;
    const double t = 1.0 - c;
    for (int i = 0; i < 3; ++i) {
        const double tw = t * w[i];
        for (int j = 0; j < 3; ++j) X->R[3 * i + j] = (c * Xp->R[3 * i + j] + s * A[3 * i + j]) + tw * a[j];
    }
    X->p[0] = Xp->p[0];
    X->p[1] = Xp->p[1];
    X->p[2] = Xp->p[2];
    S[0] = a[0];
    S[1] = a[1];
    S[2] = a[2];
    S[3] = S[4] = S[5] = 0.0;
}

/* Any other hinge: X_J(q) composed with the placement. Kept out of line so that the selecting
 * hinges' path, inlined into the sweeps, does not pay for this one's stack frame. */
SD_NOINLINE static void generic_placement(const sd_model *m, int k, const double *qk, sd_transform *X, double *S)
{
    if (m->hinge[k] == SD_HINGE_FIXED) { /* X_J = 1 (a welded base; no H* columns) */
        *X = m->placement[k];
        return;
    }
    sd_transform XJ;
    sd_hinge_transform(m, k, qk, &XJ, S);
    sd_transform_compose(&m->placement[k], &XJ, X);
}

/* The kernel of a selecting hinge, with sin and cos of theta = sgn q from sd_hinge_sincos4 for a
 * revolute; the switch is a jump table on the fixed sel. */
static void axis_placement(const sd_transform *Xp, int sel, double sgn, double qk, double s, double c, sd_transform *X)
{
    switch (sel) {
    case 0: rotate_x(Xp, c, s, X); return;
    case 1: rotate_y(Xp, c, s, X); return;
    case 2: rotate_z(Xp, c, s, X); return;
    case 3: axis_slide(Xp, 0, sgn * qk, X); return;
    case 4: axis_slide(Xp, 1, sgn * qk, X); return;
    default: axis_slide(Xp, 2, sgn * qk, X); return;
    }
}

/* A revolute about an axis that is not a coordinate axis: turn_placement's case. */
static inline int tilted_revolute(const sd_model *m, int k, int sel)
{
    return sel == SD_HINGE_SEL_CONSTANT && m->hinge[k] == SD_HINGE_REVOLUTE;
}

void sd_hinge_sincos4(const sd_model *m, const signed char *sel, const double *sgn, const double *q, int k0,
                      double s[4], double c[4])
{
    double theta[4];
    for (int l = 0; l < 4; ++l) {
        const int k = k0 + l;
        const int turns = k < m->n && ((sel[k] >= 0 && sel[k] < 3) || tilted_revolute(m, k, sel[k]));
        theta[l] = turns ? sgn[k] * q[m->q_index[k]] : 0.0;
    }
    sd_sincos4(theta, s, c);
}

void sd_hinge_placement(const sd_model *m, int k, int sel, double sgn, const double *qk, double s, double c,
                        sd_transform *X, double *S)
{
    if (sel >= 0) {
        axis_placement(&m->placement[k], sel, sgn, qk[0], s, c, X);
        memset(S, 0, 6 * sizeof(double));
        S[sel] = sgn;
        return;
    }
    if (tilted_revolute(m, k, sel)) {
        turn_placement(m, k, s, c, X, S);
        return;
    }
    generic_placement(m, k, qk, X, S);
}

void sd_hinge_velocity_term(const sd_model *m, int k, const double *qk, const double *uk, double c[6])
{
    const double *ax = m->hinge_axes + 9 * k;
    memset(c, 0, 6 * sizeof(double));
    switch (m->hinge[k]) {
    case SD_HINGE_UNIVERSAL: { /* d/dt (R2^T a1) = -(a2 q1') x (R2^T a1) */
        double R2[9], a1_body[3], w2[3], d[3];
        sd_m3_axis_angle(ax + 3, qk[1], R2);
        sd_m3t_mul_v(R2, ax, a1_body);
        for (int i = 0; i < 3; ++i) w2[i] = ax[3 + i] * uk[1];
        sd_v3_cross(w2, a1_body, d);
        for (int i = 0; i < 3; ++i) c[i] = -d[i] * uk[0];
        break;
    }
    case SD_HINGE_PLANAR: { /* d/dt (R^T t) = -(n theta') x (R^T t) */
        double R[9], t[3], tb[3], w[3], d[3];
        const double *n = ax;
        sd_m3_axis_angle(n, qk[2], R);
        for (int i = 0; i < 3; ++i) t[i] = ax[3 + i] * uk[0] + ax[6 + i] * uk[1];
        sd_m3t_mul_v(R, t, tb);
        for (int i = 0; i < 3; ++i) w[i] = n[i] * uk[2];
        sd_v3_cross(w, tb, d);
        for (int i = 0; i < 3; ++i) c[3 + i] = -d[i];
        break;
    }
    default: /* H* is constant in the body frame */
        break;
    }
}

void sd_hinge_neutral(sd_hinge_type type, double *qk)
{
    const int nq = sd_hinge_type_nq(type);
    for (int i = 0; i < nq; ++i) qk[i] = 0.0;
    if (type == SD_HINGE_SPHERICAL) qk[0] = 1.0;
    if (type == SD_HINGE_FREE) qk[3] = 1.0;
}

/* q (+) w dt for a unit quaternion and a body-frame angular velocity: q exp(w dt). */
static void quat_integrate(const double *q, const double w[3], double dt, double *out)
{
    double wdt[3] = {w[0] * dt, w[1] * dt, w[2] * dt}, e[4], r[4];
    sd_quat_exp(wdt, e);
    sd_quat_mul(q, e, r);
    memcpy(out, r, sizeof r);
}

void sd_hinge_integrate(const sd_model *m, int k, const double *qk, const double *uk, double dt, double *out)
{
    switch (m->hinge[k]) {
    case SD_HINGE_SPHERICAL:
        quat_integrate(qk, uk, dt, out);
        break;
    case SD_HINGE_FREE: {
        /* The body moves along the screw of its constant body twist (omega, v): exact on SE(3) is
         * not needed for a first-order retraction; we use the SO(3) x R3 one: p += R(q) v dt with R
         * at the start, orientation by the exponential map. Both are retractions whose derivative
         * at dt = 0 is u, which is all integrators and differences need. */
        double R[9], dp[3];
        sd_quat_to_m3(qk + 3, R);
        sd_m3_mul_v(R, uk + 3, dp);
        for (int i = 0; i < 3; ++i) out[i] = qk[i] + dp[i] * dt;
        quat_integrate(qk + 3, uk, dt, out + 3);
        break;
    }
    default:
        for (int i = 0; i < m->nq_k[k]; ++i) out[i] = qk[i] + uk[i] * dt;
        break;
    }
}

/* The body angular velocity that takes unit quaternion q0 to q1 in unit time: log(q0^-1 q1). */
static void quat_difference(const double *q0, const double *q1, double *w)
{
    const double inv[4] = {q0[0], -q0[1], -q0[2], -q0[3]};
    double r[4];
    sd_quat_mul(inv, q1, r);
    sd_quat_log(r, w);
}

void sd_hinge_difference(const sd_model *m, int k, const double *q0, const double *q1, double *uk)
{
    switch (m->hinge[k]) {
    case SD_HINGE_SPHERICAL:
        quat_difference(q0, q1, uk);
        break;
    case SD_HINGE_FREE: { /* inverse of the retraction in sd_hinge_integrate */
        double R[9], dp[3] = {q1[0] - q0[0], q1[1] - q0[1], q1[2] - q0[2]};
        sd_quat_to_m3(q0 + 3, R);
        sd_m3t_mul_v(R, dp, uk + 3);
        quat_difference(q0 + 3, q1 + 3, uk);
        break;
    }
    default:
        for (int i = 0; i < m->nq_k[k]; ++i) uk[i] = q1[i] - q0[i];
        break;
    }
}

static double quat_normalize(double *q)
{
    const double norm = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int i = 0; i < 4; ++i) q[i] /= norm;
    return fabs(1.0 - norm);
}

double sd_hinge_normalize(sd_hinge_type type, double *qk)
{
    if (type == SD_HINGE_SPHERICAL) return quat_normalize(qk);
    if (type == SD_HINGE_FREE) return quat_normalize(qk + 3);
    return 0.0;
}

/* A uniformly distributed unit quaternion (Shoemake's subgroup algorithm). */
static void random_quat(uint64_t *rng, double *q)
{
    const double u1 = sd_random_uniform(rng), u2 = 2 * SD_PI * sd_random_uniform(rng),
                 u3 = 2 * SD_PI * sd_random_uniform(rng);
    const double a = sqrt(1 - u1), b = sqrt(u1);
    q[0] = a * sin(u2); q[1] = a * cos(u2); q[2] = b * sin(u3); q[3] = b * cos(u3);
}

void sd_hinge_random(const sd_model *m, int k, uint64_t *rng, double *qk)
{
    const sd_body_desc *desc = &m->desc[k];
    switch (m->hinge[k]) {
    case SD_HINGE_SPHERICAL:
        random_quat(rng, qk);
        break;
    case SD_HINGE_FREE:
        for (int i = 0; i < 3; ++i) qk[i] = 2 * sd_random_uniform(rng) - 1;
        random_quat(rng, qk + 3);
        break;
    case SD_HINGE_REVOLUTE:
    case SD_HINGE_PRISMATIC:
        if (desc->has_limits && desc->upper > desc->lower) {
            qk[0] = desc->lower + (desc->upper - desc->lower) * sd_random_uniform(rng);
            break;
        }
        qk[0] = (m->hinge[k] == SD_HINGE_REVOLUTE ? SD_PI : 1.0) * (2 * sd_random_uniform(rng) - 1);
        break;
    case SD_HINGE_UNIVERSAL:
        for (int i = 0; i < 2; ++i) qk[i] = SD_PI * (2 * sd_random_uniform(rng) - 1);
        break;
    case SD_HINGE_PLANAR:
        qk[0] = 2 * sd_random_uniform(rng) - 1;
        qk[1] = 2 * sd_random_uniform(rng) - 1;
        qk[2] = SD_PI * (2 * sd_random_uniform(rng) - 1);
        break;
    default:
        break;
    }
}

/* phi_dot = Jr^-1(phi) omega: the rate of the rotation vector phi of quat0 exp(phi) when the body
 * turns at omega (body axes); Jr^-1(phi) = 1 + 1/2 [phi x] + c(theta) [phi x]^2 with
 * c(theta) = 1/theta^2 - (1 + cos theta) / (2 theta sin theta), the inverse right Jacobian of SO(3). */
static void rotation_chart_rate(const double phi[3], const double omega[3], double phi_dot[3])
{
    const double theta2 = sd_v3_dot(phi, phi);
    double c;
    if (theta2 < 1e-8) {
        c = 1.0 / 12.0 + theta2 / 720.0; /* series: the closed form loses digits near zero */
    } else {
        const double theta = sqrt(theta2);
        c = 1.0 / theta2 - (1.0 + cos(theta)) / (2.0 * theta * sin(theta));
    }
    double a[3], b[3];
    sd_v3_cross(phi, omega, a);
    sd_v3_cross(phi, a, b);
    for (int i = 0; i < 3; ++i) phi_dot[i] = omega[i] + 0.5 * a[i] + c * b[i];
}

void sd_hinge_chart_rate(const sd_model *m, int k, const double *delta, const double *uk, double *rate)
{
    switch (m->hinge[k]) {
    case SD_HINGE_SPHERICAL:
        rotation_chart_rate(delta, uk, rate);
        break;
    case SD_HINGE_FREE: { /* p = p0 + R(quat0) x: x_dot = exp(phi) v, the body velocity in base axes */
        double e[4], R[9];
        sd_quat_exp(delta, e);
        sd_quat_to_m3(e, R);
        rotation_chart_rate(delta, uk, rate);
        sd_m3_mul_v(R, uk + 3, rate + 3);
        break;
    }
    default: /* coordinates are plain numbers: delta_dot = u */
        for (int i = 0; i < m->nv_k[k]; ++i) rate[i] = uk[i];
        break;
    }
}

double sd_hinge_chart_angle(sd_hinge_type type, const double *delta)
{
    return type == SD_HINGE_SPHERICAL || type == SD_HINGE_FREE ? sd_v3_norm(delta) : 0.0;
}

double sd_hinge_quaternion_error(sd_hinge_type type, const double *qk)
{
    if (type != SD_HINGE_SPHERICAL && type != SD_HINGE_FREE) return 0.0;
    const double *w = type == SD_HINGE_FREE ? qk + 3 : qk;
    return fabs(sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2] + w[3] * w[3]) - 1.0);
}
