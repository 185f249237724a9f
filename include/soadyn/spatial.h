/*
 * soadyn/spatial.h — the spatial algebra layer: 3-vectors, rotations, unit quaternions, rigid
 * placements, spatial motion and force vectors (angular part first) and spatial inertias.
 *
 * Everything here is a small fixed-size kernel: static inline, no allocation, no I/O.
 *
 * Storage conventions
 *   vec3   double[3]
 *   mat3   double[9], row-major
 *   quat   double[4], (w, x, y, z), Hamilton product, unit for rotations
 *   spatial vector double[6]: motion [omega; v], force [n; f] (angular first, as in the papers)
 *   sym6   double[36], row-major symmetric 6x6 [A B; B^T C] (angular block A first)
 *
 * A placement sd_transform {R, p} places a child frame in a parent frame:
 *   x_parent = R x_child + p
 * i.e. the columns of R are the child axes in parent coordinates and p is the child origin in
 * parent coordinates. Spatial vectors are moved between the two frames by the sd_*_to_child and
 * sd_*_to_parent kernels; these are the code form of the papers' phi(k, j) weights with the
 * rotation between body frames included (papers/README.md "phi / A").
 */
#ifndef SOADYN_SPATIAL_H
#define SOADYN_SPATIAL_H

#include <math.h>
#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A rigid placement of a child frame in a parent frame: x_parent = R x_child + p. */
typedef struct sd_transform {
    double R[9]; /* rotation, row-major; columns are the child axes in parent coordinates */
    double p[3]; /* child origin in parent coordinates */
} sd_transform;

/* ---------------------------------------------------------------- 3-vectors and 3x3 matrices */

static inline void sd_v3_set(double out[3], double x, double y, double z) { out[0] = x; out[1] = y; out[2] = z; }
static inline double sd_v3_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static inline double sd_v3_norm(const double a[3]) { return sqrt(sd_v3_dot(a, a)); }

/* out = a x b (out may alias neither a nor b) */
static inline void sd_v3_cross(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* out = R a */
static inline void sd_m3_mul_v(const double R[9], const double a[3], double out[3])
{
    out[0] = R[0] * a[0] + R[1] * a[1] + R[2] * a[2];
    out[1] = R[3] * a[0] + R[4] * a[1] + R[5] * a[2];
    out[2] = R[6] * a[0] + R[7] * a[1] + R[8] * a[2];
}

/* out = R^T a */
static inline void sd_m3t_mul_v(const double R[9], const double a[3], double out[3])
{
    out[0] = R[0] * a[0] + R[3] * a[1] + R[6] * a[2];
    out[1] = R[1] * a[0] + R[4] * a[1] + R[7] * a[2];
    out[2] = R[2] * a[0] + R[5] * a[1] + R[8] * a[2];
}

/* out = A B (out must not alias A or B) */
static inline void sd_m3_mul(const double A[9], const double B[9], double out[9])
{
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            out[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

/* out = A^T B (out must not alias A or B) */
static inline void sd_m3t_mul(const double A[9], const double B[9], double out[9])
{
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            out[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
}

/* out = A B^T (out must not alias A or B) */
static inline void sd_m3_mul_t(const double A[9], const double B[9], double out[9])
{
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            out[3 * i + j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] + A[3 * i + 2] * B[3 * j + 2];
}

static inline void sd_m3_identity(double out[9])
{
    memset(out, 0, 9 * sizeof(double));
    out[0] = out[4] = out[8] = 1.0;
}

/* out = [a x], the cross-product matrix: [a x] b = a x b */
static inline void sd_m3_skew(const double a[3], double out[9])
{
    out[0] = 0.0;   out[1] = -a[2]; out[2] = a[1];
    out[3] = a[2];  out[4] = 0.0;   out[5] = -a[0];
    out[6] = -a[1]; out[7] = a[0];  out[8] = 0.0;
}

/* Rotation by angle about a unit axis (Rodrigues): R = I + sin [n x] + (1 - cos) [n x]^2. */
static inline void sd_m3_axis_angle(const double n[3], double angle, double out[9])
{
    const double s = sin(angle), c = cos(angle), t = 1.0 - c;
    out[0] = c + t * n[0] * n[0];        out[1] = t * n[0] * n[1] - s * n[2]; out[2] = t * n[0] * n[2] + s * n[1];
    out[3] = t * n[0] * n[1] + s * n[2]; out[4] = c + t * n[1] * n[1];        out[5] = t * n[1] * n[2] - s * n[0];
    out[6] = t * n[0] * n[2] - s * n[1]; out[7] = t * n[1] * n[2] + s * n[0]; out[8] = c + t * n[2] * n[2];
}

/* Rotation from roll-pitch-yaw (fixed axes X, then Y, then Z): R = Rz(yaw) Ry(pitch) Rx(roll), as URDF. */
static inline void sd_m3_rpy(double roll, double pitch, double yaw, double out[9])
{
    const double cr = cos(roll), sr = sin(roll), cp = cos(pitch), sp = sin(pitch), cy = cos(yaw), sy = sin(yaw);
    out[0] = cy * cp; out[1] = cy * sp * sr - sy * cr; out[2] = cy * sp * cr + sy * sr;
    out[3] = sy * cp; out[4] = sy * sp * sr + cy * cr; out[5] = sy * sp * cr - cy * sr;
    out[6] = -sp;     out[7] = cp * sr;                out[8] = cp * cr;
}

/* ---------------------------------------------------------------- unit quaternions (w, x, y, z) */

/* Rotation matrix of a unit quaternion. */
static inline void sd_quat_to_m3(const double q[4], double out[9])
{
    const double w = q[0], x = q[1], y = q[2], z = q[3];
    out[0] = 1 - 2 * (y * y + z * z); out[1] = 2 * (x * y - w * z);     out[2] = 2 * (x * z + w * y);
    out[3] = 2 * (x * y + w * z);     out[4] = 1 - 2 * (x * x + z * z); out[5] = 2 * (y * z - w * x);
    out[6] = 2 * (x * z - w * y);     out[7] = 2 * (y * z + w * x);     out[8] = 1 - 2 * (x * x + y * y);
}

/* Unit quaternion of a rotation matrix (Shepperd's method, stable for every rotation); w >= 0. */
static inline void sd_m3_to_quat(const double R[9], double out[4])
{
    const double tr = R[0] + R[4] + R[8];
    double w, x, y, z;
    if (tr >= R[0] && tr >= R[4] && tr >= R[8]) {
        const double s = 2.0 * sqrt(1.0 + tr);
        w = 0.25 * s; x = (R[7] - R[5]) / s; y = (R[2] - R[6]) / s; z = (R[3] - R[1]) / s;
    } else if (R[0] >= R[4] && R[0] >= R[8]) {
        const double s = 2.0 * sqrt(1.0 + R[0] - R[4] - R[8]);
        w = (R[7] - R[5]) / s; x = 0.25 * s; y = (R[1] + R[3]) / s; z = (R[2] + R[6]) / s;
    } else if (R[4] >= R[8]) {
        const double s = 2.0 * sqrt(1.0 + R[4] - R[0] - R[8]);
        w = (R[2] - R[6]) / s; x = (R[1] + R[3]) / s; y = 0.25 * s; z = (R[5] + R[7]) / s;
    } else {
        const double s = 2.0 * sqrt(1.0 + R[8] - R[0] - R[4]);
        w = (R[3] - R[1]) / s; x = (R[2] + R[6]) / s; y = (R[5] + R[7]) / s; z = 0.25 * s;
    }
    const double sign = w < 0 ? -1.0 : 1.0;
    out[0] = sign * w; out[1] = sign * x; out[2] = sign * y; out[3] = sign * z;
}

/* out = a b (Hamilton product; out may not alias a or b) */
static inline void sd_quat_mul(const double a[4], const double b[4], double out[4])
{
    out[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    out[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    out[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    out[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

/* Quaternion of the rotation by |w| about w/|w| (the exponential map), exact for every angle. */
static inline void sd_quat_exp(const double w[3], double out[4])
{
    const double angle = sd_v3_norm(w);
    const double half = 0.5 * angle;
    /* sin(half)/angle, by its Taylor series near zero so that tiny rotations keep full precision */
    const double k = angle < 1e-6 ? 0.5 - angle * angle / 48.0 : sin(half) / angle;
    out[0] = cos(half); out[1] = k * w[0]; out[2] = k * w[1]; out[3] = k * w[2];
}

/* Rotation vector of a unit quaternion (the logarithm map): angle in [0, pi] times the axis. */
static inline void sd_quat_log(const double q[4], double out[3])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    if (w < 0) { w = -w; x = -x; y = -y; z = -z; } /* q and -q are the same rotation */
    const double s = sqrt(x * x + y * y + z * z);
    const double angle = 2.0 * atan2(s, w);
    const double k = s < 1e-9 ? 2.0 / w : angle / s;
    out[0] = k * x; out[1] = k * y; out[2] = k * z;
}

/* ---------------------------------------------------------------- placements */

static inline void sd_transform_identity(sd_transform *X)
{
    sd_m3_identity(X->R);
    X->p[0] = X->p[1] = X->p[2] = 0.0;
}

/* out = a * b: the placement of frame c in frame a, given b (c in b's parent a-child) and a (b in a). */
static inline void sd_transform_compose(const sd_transform *a, const sd_transform *b, sd_transform *out)
{
#if defined(__AVX2__)
    /* Row i of [a.R b.R | a.R b.p + a.p] as one vector: sum_j a.R_ij [row j of b.R, b.p_j], then
     * a.p_i added to lane 3: the scalar form's products and sums in its order (fused alike where
     * the build fuses multiply-adds), in ~45 instructions instead of ~100 (the world placements of
     * M and M^-1). Everything is read before anything is written, so out may alias a or b. */
    __m256d B[3], row[3];
    for (int j = 0; j < 3; ++j) /* [R_j0 R_j1 R_j2 p_j]; the load of row 2 reads p[0], inside *b */
        B[j] = _mm256_blend_pd(_mm256_loadu_pd(b->R + 3 * j), _mm256_broadcast_sd(b->p + j), 0x8);
    for (int i = 0; i < 3; ++i) {
        __m256d r = _mm256_mul_pd(_mm256_broadcast_sd(a->R + 3 * i), B[0]);
        r = _mm256_add_pd(r, _mm256_mul_pd(_mm256_broadcast_sd(a->R + 3 * i + 1), B[1]));
        r = _mm256_add_pd(r, _mm256_mul_pd(_mm256_broadcast_sd(a->R + 3 * i + 2), B[2]));
        row[i] = _mm256_blend_pd(r, _mm256_add_pd(r, _mm256_broadcast_sd(a->p + i)), 0x8);
    }
    /* rows at R, R + 3, R + 6, each 4-wide store's lane 3 overwritten by the next row, then p */
    double p[3];
    for (int i = 0; i < 3; ++i) p[i] = _mm_cvtsd_f64(_mm_permute_pd(_mm256_extractf128_pd(row[i], 1), 1));
    _mm256_storeu_pd(out->R, row[0]);
    _mm256_storeu_pd(out->R + 3, row[1]);
    _mm256_storeu_pd(out->R + 6, row[2]);
    out->p[0] = p[0];
    out->p[1] = p[1];
    out->p[2] = p[2];
#else
    sd_transform t;
    sd_m3_mul(a->R, b->R, t.R);
    sd_m3_mul_v(a->R, b->p, t.p);
    t.p[0] += a->p[0]; t.p[1] += a->p[1]; t.p[2] += a->p[2];
    *out = t;
#endif
}

/* out = X^-1: the parent placed in the child. */
static inline void sd_transform_inverse(const sd_transform *X, sd_transform *out)
{
    sd_transform t;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) t.R[3 * i + j] = X->R[3 * j + i];
    sd_m3_mul_v(t.R, X->p, t.p);
    t.p[0] = -t.p[0]; t.p[1] = -t.p[1]; t.p[2] = -t.p[2];
    *out = t;
}

/* A point given in child coordinates, in parent coordinates. */
static inline void sd_transform_point(const sd_transform *X, const double x[3], double out[3])
{
    sd_m3_mul_v(X->R, x, out);
    out[0] += X->p[0]; out[1] += X->p[1]; out[2] += X->p[2];
}

/* ---------------------------------------------------------------- spatial vectors */

/* A motion vector in the parent frame, expressed in the child frame:
 * omega_c = R^T omega_p, v_c = R^T (v_p + omega_p x p). This is phi*(parent, child) V. */
static inline void sd_motion_to_child(const sd_transform *X, const double m_p[6], double m_c[6])
{
    double v[3];
    sd_v3_cross(m_p, X->p, v);
    v[0] += m_p[3]; v[1] += m_p[4]; v[2] += m_p[5];
    sd_m3t_mul_v(X->R, m_p, m_c);
    sd_m3t_mul_v(X->R, v, m_c + 3);
}

/* A motion vector in the child frame, expressed in the parent frame (inverse of the above). */
static inline void sd_motion_to_parent(const sd_transform *X, const double m_c[6], double m_p[6])
{
    double w[3], v[3];
    sd_m3_mul_v(X->R, m_c, w);
    sd_m3_mul_v(X->R, m_c + 3, v);
    double pxw[3];
    sd_v3_cross(X->p, w, pxw);
    m_p[0] = w[0]; m_p[1] = w[1]; m_p[2] = w[2];
    m_p[3] = v[0] + pxw[0]; m_p[4] = v[1] + pxw[1]; m_p[5] = v[2] + pxw[2];
}

/* A force vector in the child frame, expressed in the parent frame:
 * f_p = R f_c, n_p = R n_c + p x f_p. This is phi(parent, child) f. */
static inline void sd_force_to_parent(const sd_transform *X, const double f_c[6], double f_p[6])
{
    double n[3], f[3], pxf[3];
    sd_m3_mul_v(X->R, f_c, n);
    sd_m3_mul_v(X->R, f_c + 3, f);
    sd_v3_cross(X->p, f, pxf);
    f_p[0] = n[0] + pxf[0]; f_p[1] = n[1] + pxf[1]; f_p[2] = n[2] + pxf[2];
    f_p[3] = f[0]; f_p[4] = f[1]; f_p[5] = f[2];
}

/* A force vector in the parent frame, expressed in the child frame (inverse of the above). */
static inline void sd_force_to_child(const sd_transform *X, const double f_p[6], double f_c[6])
{
    double n[3], pxf[3];
    sd_v3_cross(X->p, f_p + 3, pxf);
    n[0] = f_p[0] - pxf[0]; n[1] = f_p[1] - pxf[1]; n[2] = f_p[2] - pxf[2];
    sd_m3t_mul_v(X->R, n, f_c);
    sd_m3t_mul_v(X->R, f_p + 3, f_c + 3);
}

/* out = V x m, the spatial cross product of motion vectors (out must not alias). */
static inline void sd_motion_cross(const double V[6], const double m[6], double out[6])
{
    double a[3], b[3];
    sd_v3_cross(V, m, out);
    sd_v3_cross(V, m + 3, a);
    sd_v3_cross(V + 3, m, b);
    out[3] = a[0] + b[0]; out[4] = a[1] + b[1]; out[5] = a[2] + b[2];
}

/* out = V x* f, the spatial cross product acting on a force (out must not alias). */
static inline void sd_force_cross(const double V[6], const double f[6], double out[6])
{
    double a[3], b[3];
    sd_v3_cross(V, f, a);
    sd_v3_cross(V + 3, f + 3, b);
    out[0] = a[0] + b[0]; out[1] = a[1] + b[1]; out[2] = a[2] + b[2];
    sd_v3_cross(V, f + 3, out + 3);
}

static inline double sd_s6_dot(const double a[6], const double b[6])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* ---------------------------------------------------------------- spatial inertias */

/* The 6x6 spatial inertia about a frame's origin of a body of mass m whose centre of mass is at c
 * and whose rotational inertia about the centre of mass is Ic (both in that frame):
 *   M = [Ic - m [c x]^2, m [c x]; -m [c x], m 1]  (004 Sec 2: M(k), angular first). */
static inline void sd_inertia_from_com(double m, const double c[3], const double Ic[9], double out[36])
{
    double C[9], CC[9];
    sd_m3_skew(c, C);
    sd_m3_mul(C, C, CC);
    memset(out, 0, 36 * sizeof(double));
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            out[6 * i + j] = Ic[3 * i + j] - m * CC[3 * i + j];
            out[6 * i + 3 + j] = m * C[3 * i + j];
            out[6 * (3 + i) + j] = -m * C[3 * i + j];
        }
        out[6 * (3 + i) + 3 + i] = m;
    }
}

/* A rigid body's spatial inertia about a frame's origin in 13 numbers: mass m, first moment
 * h = m c (c the centre of mass), and the 3x3 rotational inertia Io about the origin. */
static inline void sd_rigid_inertia_from_com(double m, const double c[3], const double Ic[9], double out[13])
{
    double M6[36];
    sd_inertia_from_com(m, c, Ic, M6);
    out[0] = m;
    for (int i = 0; i < 3; ++i) {
        out[1 + i] = m * c[i];
        for (int j = 0; j < 3; ++j) out[4 + 3 * i + j] = M6[6 * i + j];
    }
}

/* The 13-number rigid inertia of a body (mass m, centre of mass c and inertia Ic about it, in the
 * child frame) expressed in the parent frame about the parent's origin:
 *   c' = R c + p,  Io' = R Ic R^T + m (|c'|^2 1 - c' c'^T)  (parallel axes),  h' = m c'. */
static inline void sd_rigid_inertia_to_parent(const sd_transform *X, double m, const double c[3], const double Ic[9],
                                              double out[13])
{
    const double *R = X->R;
    double cp[3], T[9];
    sd_transform_point(X, c, cp);
    sd_m3_mul(R, Ic, T);
    const double c2 = sd_v3_dot(cp, cp);
    out[0] = m;
    for (int i = 0; i < 3; ++i) {
        out[1 + i] = m * cp[i];
        for (int j = i; j < 3; ++j) {
            const double v = T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2] +
                             m * ((i == j) * c2 - cp[i] * cp[j]);
            out[4 + 3 * i + j] = out[4 + 3 * j + i] = v;
        }
    }
}

/* The full 6x6 spatial inertia [Io, [h x]; [h x]^T, m 1] of a rigid inertia in the 13-number form. */
static inline void sd_rigid_inertia_to_sym6(const double ri[13], double out[36])
{
    const double m = ri[0], *h = ri + 1, *Io = ri + 4;
    double H[9];
    sd_m3_skew(h, H);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            out[6 * i + j] = Io[3 * i + j];
            out[6 * i + 3 + j] = H[3 * i + j];
            out[6 * (3 + j) + i] = H[3 * i + j];
            out[6 * (3 + i) + 3 + j] = i == j ? m : 0.0;
        }
}

/* out = M V for a rigid inertia in the 13-number form: [Io omega + h x v; m v - h x omega], which
 * is the 6x6 product with about two thirds of the multiplications (out must not alias V). */
static inline void sd_rigid_inertia_mul(const double ri[13], const double V[6], double out[6])
{
    const double m = ri[0], *h = ri + 1, *Io = ri + 4;
    double hxv[3], hxw[3];
    sd_v3_cross(h, V + 3, hxv);
    sd_v3_cross(h, V, hxw);
    sd_m3_mul_v(Io, V, out);
    for (int i = 0; i < 3; ++i) {
        out[i] += hxv[i];
        out[3 + i] = m * V[3 + i] - hxw[i];
    }
}

/* out = I v for a symmetric 6x6 I (out must not alias v), summed as v_j times row j (= column j),
 * which compilers turn into 6-wide vector operations. */
static inline void sd_sym6_mul(const double I[36], const double v[6], double out[6])
{
    double acc[6] = {0, 0, 0, 0, 0, 0};
    for (int j = 0; j < 6; ++j)
        for (int i = 0; i < 6; ++i) acc[i] += v[j] * I[6 * j + i];
    for (int i = 0; i < 6; ++i) out[i] = acc[i];
}

/* out = p x (each column of M), i.e. [p x] M (3x3 row-major; out must not alias M) */
static inline void sd_m3_skew_mul(const double p[3], const double M[9], double out[9])
{
    for (int j = 0; j < 3; ++j) {
        out[j] = p[1] * M[6 + j] - p[2] * M[3 + j];
        out[3 + j] = p[2] * M[j] - p[0] * M[6 + j];
        out[6 + j] = p[0] * M[3 + j] - p[1] * M[j];
    }
}

#if defined(__AVX2__)
/* The AVX2 form of sd_sym6_add_to_parent below: the 3x3 blocks as three rows of 4 lanes each
 * (lanes 0-2 hold a row, lane 3 is padding that no step moves into lanes 0-2), so that each row
 * operation is one instruction. */
#if defined(__FMA__)
#define SD_AVX_MADD(a, b, c) _mm256_fmadd_pd((a), (b), (c))
#else
#define SD_AVX_MADD(a, b, c) _mm256_add_pd(_mm256_mul_pd((a), (b)), (c))
#endif
#define SD_AVX_LANE(v, l) _mm256_permute4x64_pd((v), (l) * 0x55) /* lane l in every lane */

/* The columns of the 3x3 whose rows are a, b, c (lanes 0-2). */
static inline void sd_avx_transpose3(__m256d a, __m256d b, __m256d c, __m256d out[3])
{
    const __m256d t0 = _mm256_unpacklo_pd(a, b), t1 = _mm256_unpackhi_pd(a, b), t2 = _mm256_unpacklo_pd(c, c),
                  t3 = _mm256_unpackhi_pd(c, c);
    out[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    out[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    out[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
}

/* The rows of R Y R^T from the rows of Y: T = R Y row by row (R's entries broadcast from memory),
 * then T R^T = sum_l T_il (column l of R), Rc holding R's columns. */
static inline void sd_avx_rotate3(const double R[9], const __m256d Rc[3], const __m256d Y[3], __m256d out[3])
{
    for (int i = 0; i < 3; ++i) {
        __m256d t = _mm256_mul_pd(_mm256_broadcast_sd(R + 3 * i), Y[0]);
        t = SD_AVX_MADD(_mm256_broadcast_sd(R + 3 * i + 1), Y[1], t);
        t = SD_AVX_MADD(_mm256_broadcast_sd(R + 3 * i + 2), Y[2], t);
        __m256d o = _mm256_mul_pd(SD_AVX_LANE(t, 0), Rc[0]);
        o = SD_AVX_MADD(SD_AVX_LANE(t, 1), Rc[1], o);
        out[i] = SD_AVX_MADD(SD_AVX_LANE(t, 2), Rc[2], o);
    }
}

/* p x v for each lane-row v, with pyzx = (p1, p2, p0), pzxy = (p2, p0, p1) */
static inline __m256d sd_avx_cross(__m256d pyzx, __m256d pzxy, __m256d v)
{
    const __m256d vyzx = _mm256_permute4x64_pd(v, 0xC9), vzxy = _mm256_permute4x64_pd(v, 0xD2);
    return _mm256_sub_pd(_mm256_mul_pd(pyzx, vzxy), _mm256_mul_pd(pzxy, vyzx));
}

/* acc's row r (6 entries) += [lo lanes 0-2, hi lanes 0-2] */
static inline void sd_avx_add_row6(double *row, __m256d lo, __m256d hi)
{
    const __m256d first = _mm256_blend_pd(lo, _mm256_permute4x64_pd(hi, 0x00), 0x8); /* lo0 lo1 lo2 hi0 */
    const __m128d last = _mm256_castpd256_pd128(_mm256_permute4x64_pd(hi, 0x09));  /* hi1 hi2 */
    _mm256_storeu_pd(row, _mm256_add_pd(_mm256_loadu_pd(row), first));
    _mm_storeu_pd(row + 4, _mm_add_pd(_mm_loadu_pd(row + 4), last));
}

/* The rest of sd_sym6_add_to_parent's AVX2 form, once the blocks are in parent axes (rows of
 * A' = R A R^T, B' = R B R^T, C' = R C R^T in lanes 0-2): the shift by p and the sum into acc.
 * Also the end of the plane-rotation form (src/internal.h). */
static inline void sd_avx_sym6_shift_add(const double p[3], const __m256d A2[3], const __m256d B2[3],
                                         const __m256d C2[3], double acc[36])
{
    const __m256d p0 = _mm256_broadcast_sd(p), p1 = _mm256_broadcast_sd(p + 1), p2 = _mm256_broadcast_sd(p + 2);
    __m256d K[3], KT[3], W[3], WT[3], TL[3];
    K[0] = _mm256_add_pd(B2[0], _mm256_sub_pd(_mm256_mul_pd(p1, C2[2]), _mm256_mul_pd(p2, C2[1])));
    K[1] = _mm256_add_pd(B2[1], _mm256_sub_pd(_mm256_mul_pd(p2, C2[0]), _mm256_mul_pd(p0, C2[2])));
    K[2] = _mm256_add_pd(B2[2], _mm256_sub_pd(_mm256_mul_pd(p0, C2[1]), _mm256_mul_pd(p1, C2[0])));
    const __m256d pyzx = _mm256_setr_pd(p[1], p[2], p[0], 0.0), pzxy = _mm256_setr_pd(p[2], p[0], p[1], 0.0);
    for (int i = 0; i < 3; ++i) W[i] = sd_avx_cross(pyzx, pzxy, B2[i]);
    sd_avx_transpose3(W[0], W[1], W[2], WT);
    for (int i = 0; i < 3; ++i)
        TL[i] = _mm256_add_pd(_mm256_add_pd(A2[i], sd_avx_cross(pyzx, pzxy, K[i])), WT[i]);
    sd_avx_transpose3(K[0], K[1], K[2], KT);
    for (int i = 0; i < 3; ++i) {
        sd_avx_add_row6(acc + 6 * i, TL[i], K[i]);
        sd_avx_add_row6(acc + 6 * (3 + i), KT[i], C2[i]);
    }
}
#endif

/* acc += phi(parent, child) I phi*(parent, child): a symmetric 6x6 inertia-like quantity held in the
 * child frame (a composite or articulated inertia: 004 Eq 33's phi P+ phi*), moved to the parent
 * frame and added to acc. With the child blocks of I = [A B; B^T C] rotated into parent axes,
 * A' = R A R^T, B' = R B R^T, C' = R C R^T, and [p x] the shift, phi = [1 [p x]; 0 1] diag(R, R) gives
 *   [A' + [p x] B'^T - K [p x],  K;  K^T,  C'],   K = B' + [p x] C'.
 * With AVX2 (a -march=native build) the blocks are rows of 4 lanes and, with X_i the row i of X and
 * v^T [p x] = -(p x v)^T, the top-left block is A' + V + W^T, V_i = p x K_i, W_j = p x B'_j: about
 * 250 instructions instead of 600 (callgrind). Otherwise the scalar form below: the shift terms as
 * S + S^T - [p x]C'[p x], S = [p x] B'^T, with symmetry halving the work on A' and C'. */
static inline void sd_sym6_add_to_parent(const sd_transform *X, const double I[36], double acc[36])
{
#if defined(__AVX2__)
    const double *R = X->R, *p = X->p;
    __m256d Rc[3], Y[3], A2[3], B2[3], C2[3];
    sd_avx_transpose3(_mm256_loadu_pd(R), _mm256_loadu_pd(R + 3), _mm256_loadu_pd(R + 6), Rc); /* R + 6: lane 3 is p[0] */
    for (int l = 0; l < 3; ++l) Y[l] = _mm256_loadu_pd(I + 6 * l);
    sd_avx_rotate3(R, Rc, Y, A2);
    for (int l = 0; l < 3; ++l) Y[l] = _mm256_loadu_pd(I + 6 * l + 3);
    sd_avx_rotate3(R, Rc, Y, B2);
    for (int l = 0; l < 3; ++l) /* from one entry early (the last row ends the array), moved down a lane */
        Y[l] = _mm256_permute4x64_pd(_mm256_loadu_pd(I + 6 * (3 + l) + 2), 0x39);
    sd_avx_rotate3(R, Rc, Y, C2);
    sd_avx_sym6_shift_add(p, A2, B2, C2, acc);
#else
    const double *R = X->R, *p = X->p;
    double T[9], A2[9], B2[9], C2[9];
    for (int i = 0; i < 3; ++i) /* T = R A */
        for (int j = 0; j < 3; ++j) T[3 * i + j] = R[3 * i] * I[j] + R[3 * i + 1] * I[6 + j] + R[3 * i + 2] * I[12 + j];
    for (int i = 0; i < 3; ++i) /* A2 = T R^T, upper triangle mirrored */
        for (int j = i; j < 3; ++j)
            A2[3 * i + j] = A2[3 * j + i] = T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2];
    for (int i = 0; i < 3; ++i) /* T = R C */
        for (int j = 0; j < 3; ++j)
            T[3 * i + j] = R[3 * i] * I[21 + j] + R[3 * i + 1] * I[27 + j] + R[3 * i + 2] * I[33 + j];
    for (int i = 0; i < 3; ++i)
        for (int j = i; j < 3; ++j)
            C2[3 * i + j] = C2[3 * j + i] = T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2];
    for (int i = 0; i < 3; ++i) /* T = R B */
        for (int j = 0; j < 3; ++j)
            T[3 * i + j] = R[3 * i] * I[3 + j] + R[3 * i + 1] * I[9 + j] + R[3 * i + 2] * I[15 + j];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            B2[3 * i + j] = T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2];
    double PC[9], Bt[9], S[9], CPt[9];
    sd_m3_skew_mul(p, C2, PC);                  /* [p x] C' */
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) Bt[3 * i + j] = B2[3 * j + i];
    sd_m3_skew_mul(p, Bt, S);                   /* S = [p x] B'^T */
    double PCt[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) PCt[3 * i + j] = PC[3 * j + i];
    sd_m3_skew_mul(p, PCt, CPt);                /* [p x] ([p x] C')^T = -([p x] C' [p x])^T */
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            /* -[p x] C' [p x] = CPt^T */
            const double a = A2[3 * i + j] + S[3 * i + j] + S[3 * j + i] + CPt[3 * j + i];
            const double b = B2[3 * i + j] + PC[3 * i + j];
            acc[6 * i + j] += a;
            acc[6 * i + 3 + j] += b;
            acc[6 * (3 + j) + i] += b;
            acc[6 * (3 + i) + 3 + j] += C2[3 * i + j];
        }
#endif
}

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_SPATIAL_H */
