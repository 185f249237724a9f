/*
 * src/batch/lanes_dynamics.c — the dynamics on NL states at once (4 with AVX2, 8 with AVX-512), one
 * state per lane of a vector register: the articulated-body forward dynamics (004 Alg 6.1: the
 * Riccati gather Eq 33, the residual gather Eq 58a-d, the acceleration scatter Eq 58e-g) and the
 * Newton-Euler inverse dynamics (004 Alg 3.1), after one shared kinematics pass.
 *
 * Why across states and not within one: a single state's recursion is a chain of small dependent
 * 3x3 and 6x6 products that fill a vector register poorly; the same recursion on NL states is NL
 * independent copies of every operation, so each scalar operation of
 * src/algorithms/forward_dynamics.c, inverse_dynamics.c (and of the kinematics, kinematics.c, hinge.c)
 * becomes one vector operation on NL lanes, with no shuffles. A hinge whose H* selects one entry
 * of a spatial vector (sd_hinge_select: a revolute about or prismatic along a frame axis) takes
 * the scalar path's fast kernels here too (axis_placement_lanes, motion_cross_axis, U = sgn P(:, i)).
 * The code follows those files' operations and order (the sine and cosine are theirs too,
 * sincos4.h), but for two things: the transport phi P+ phi* takes a shorter form (sym6_to_parent)
 * and a free hinge's H* = 1 its own kernel (project_free, the same numbers).
 *
 * Fused multiply-adds: this file is compiled with FMA on every x86-64 build (src/batch/sources.cmake)
 * and, as the whole library, with floating-point contraction (-ffp-contract=fast, CMakeLists.txt),
 * so the compiler turns every a * b + c into one vfmadd, rounded once. Contraction rather than
 * explicit fma calls in the spatial kernels: it fuses everywhere (kinematics, transports,
 * projections, Cholesky, scatter) with the code left in the scalar files' notation, and explicit
 * calls could at best match it. Measured (callgrind, 1 thread, instructions per state, marginal
 * over 128 states, LTO, -march=native): Talos reduced on a free base 19135 -> 16546 (-13.5%),
 * iiwa 4247 -> 3684 (-13.3%). The price: a lane's result differs from the scalar one by round-off only, but no longer by a fixed fraction of its largest entry. Two
 * differently rounded solutions of M qdd = tau - C differ by about cond(M) eps (up to 6e-12
 * relative on tests/batch's random trees, cond(M) up to 1.4e6). What holds, and what batch.h
 * promises and tests/batch checks (fd_check there), is a backward error: the single-state inverse
 * dynamics at a lane's qdd gives back its tau to 1e-13 of max|tau| + max(|M||qdd|) + max|C| +
 * max|f| (about 2e-15 seen), so the difference from the single-state qdd is within about
 * 2 sqrt(nv) cond(M) times that over M's largest eigenvalue. (Near DBL_MAX a fused product can
 * stay finite where the separate product overflows, so a lane may succeed where the single-state
 * call reports an overflow.)
 *
 * It is written with GCC/Clang vector extensions (vector_size) so that the lane count is the
 * compile-time constant NL and the same text serves both widths: compiled on its own with -mavx2
 * -mfma it is the 4-lane kernel sd_lanes_avx2; lanes_dynamics_avx512.c includes it with NL 8 and
 * -mavx512f (sd_lanes_avx512). batch.c calls a kernel only when the processor has its instructions.
 * Why both: on this project's machines (AMD EPYC, AVX-512 on 256-bit units) the 8-lane build does
 * the same arithmetic in half the instructions and with 32 vector registers instead of 16, so the
 * 6x6 blocks spill less (bench/results/batch.md has the measured gain).
 *
 * Glossary: see src/internal.h. The workspace (batch_internal.h) holds one vector per scalar
 * entry of sd_data's arrays.
 */
#include <float.h>
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "batch_internal.h"
#include "common/sincos4.h"

/* The lane count of this compilation: 4 states per AVX2 register when this file is compiled on
 * its own; lanes_dynamics_avx512.c includes it with 8 (AVX-512) under another table's name. */
#ifndef SD_LANES_KERNEL
#define SD_LANES_WIDTH 4
#define SD_LANES_KERNEL sd_lanes_avx2
#endif
#define NL SD_LANES_WIDTH
typedef double vd __attribute__((vector_size(8 * NL)));
typedef long long vi __attribute__((vector_size(8 * NL)));

static inline vd splat(double x)
{
    vd v;
    for (int l = 0; l < NL; ++l) v[l] = x;
    return v;
}

/* Bitwise select: m ? a : b per lane (m all ones or all zeros, as comparisons give). */
static inline vd vsel(vi m, vd a, vd b) { return (vd)((m & (vi)a) | (~m & (vi)b)); }

static inline int any_lane(vi m)
{
    long long r = 0;
    for (int l = 0; l < NL; ++l) r |= m[l];
    return r != 0;
}

static inline vd vabs(vd x)
{
    vi mask;
    for (int l = 0; l < NL; ++l) mask[l] = 0x7FFFFFFFFFFFFFFFLL;
    return (vd)((vi)x & mask);
}

/* IEEE square root of every lane (the intrinsic: a lane loop of sqrt() would stay scalar). */
static inline vd vsqrt(vd x)
{
#if NL == 4
    return (vd)_mm256_sqrt_pd((__m256d)x);
#elif NL == 8
    return (vd)_mm512_sqrt_pd((__m512d)x);
#else
#error "SD_LANES_WIDTH must be 4 (AVX2) or 8 (AVX-512)"
#endif
}

/* sin x and cos x of every lane: the kernel of the single-state sweeps (sincos4.h) on each group of
 * four lanes, moved as whole 256-bit halves (memcpy: one extract or insert each, where lane by lane
 * the conversion took a fifth of this function's time). */
static void vsincos(vd x, vd *s, vd *c)
{
    for (int h = 0; h < NL; h += 4) {
        sd_d4 xh, sh, ch;
        memcpy(&xh, (const double *)&x + h, sizeof xh);
        sd_sincos4_v(&xh, &sh, &ch);
        memcpy((double *)s + h, &sh, sizeof sh);
        memcpy((double *)c + h, &ch, sizeof ch);
    }
}

/* ---------------------------------------------------------------- spatial.h, one vector per number */

static inline void v3_cross(const vd a[3], const vd b[3], vd out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static inline void m3_mul_v(const vd R[9], const vd a[3], vd out[3])
{
    out[0] = R[0] * a[0] + R[1] * a[1] + R[2] * a[2];
    out[1] = R[3] * a[0] + R[4] * a[1] + R[5] * a[2];
    out[2] = R[6] * a[0] + R[7] * a[1] + R[8] * a[2];
}

static inline void m3t_mul_v(const vd R[9], const vd a[3], vd out[3])
{
    out[0] = R[0] * a[0] + R[3] * a[1] + R[6] * a[2];
    out[1] = R[1] * a[0] + R[4] * a[1] + R[7] * a[2];
    out[2] = R[2] * a[0] + R[5] * a[1] + R[8] * a[2];
}

/* R^T a for a constant vector a (the hinge axes). */
static inline void m3t_mul_c(const vd R[9], const double a[3], vd out[3])
{
    out[0] = R[0] * a[0] + R[3] * a[1] + R[6] * a[2];
    out[1] = R[1] * a[0] + R[4] * a[1] + R[7] * a[2];
    out[2] = R[2] * a[0] + R[5] * a[1] + R[8] * a[2];
}

static inline void m3_mul(const vd A[9], const vd B[9], vd out[9])
{
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            out[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

static inline void m3_axis_angle(const double n[3], vd s, vd c, vd out[9])
{
    const vd t = 1.0 - c;
    out[0] = c + t * n[0] * n[0];        out[1] = t * n[0] * n[1] - s * n[2]; out[2] = t * n[0] * n[2] + s * n[1];
    out[3] = t * n[0] * n[1] + s * n[2]; out[4] = c + t * n[1] * n[1];        out[5] = t * n[1] * n[2] - s * n[0];
    out[6] = t * n[0] * n[2] - s * n[1]; out[7] = t * n[1] * n[2] + s * n[0]; out[8] = c + t * n[2] * n[2];
}

static inline void quat_to_m3(const vd q[4], vd out[9])
{
    const vd w = q[0], x = q[1], y = q[2], z = q[3];
    out[0] = 1 - 2 * (y * y + z * z); out[1] = 2 * (x * y - w * z);     out[2] = 2 * (x * z + w * y);
    out[3] = 2 * (x * y + w * z);     out[4] = 1 - 2 * (x * x + z * z); out[5] = 2 * (y * z - w * x);
    out[6] = 2 * (x * z - w * y);     out[7] = 2 * (y * z + w * x);     out[8] = 1 - 2 * (x * x + y * y);
}

/* phi*(parent, child) m_p: omega_c = R^T omega_p, v_c = R^T (v_p + omega_p x p) (sd_motion_to_child). */
static inline void motion_to_child(const vd *X, const vd m_p[6], vd m_c[6])
{
    vd v[3];
    v3_cross(m_p, X + 9, v);
    v[0] += m_p[3]; v[1] += m_p[4]; v[2] += m_p[5];
    m3t_mul_v(X, m_p, m_c);
    m3t_mul_v(X, v, m_c + 3);
}

/* phi(parent, child) f_c (sd_force_to_parent). */
static inline void force_to_parent(const vd *X, const vd f_c[6], vd f_p[6])
{
    vd n[3], f[3], pxf[3];
    m3_mul_v(X, f_c, n);
    m3_mul_v(X, f_c + 3, f);
    v3_cross(X + 9, f, pxf);
    f_p[0] = n[0] + pxf[0]; f_p[1] = n[1] + pxf[1]; f_p[2] = n[2] + pxf[2];
    f_p[3] = f[0]; f_p[4] = f[1]; f_p[5] = f[2];
}

/* The same two when R is a plane rotation about e_i (plane = sd_plane_axis() >= 0; internal.h's
 * sd_motion_to_child_plane): R^T x and R x from c = R(a, a) and s = R(b, a), 4 products a
 * 3-vector where the 3x3 takes 9. */
static inline __attribute__((always_inline)) void plane_rt_mul(const vd *R, int i, int a, int b, const vd x[3],
                                                               vd out[3])
{
    const vd c = R[3 * a + a], s = R[3 * b + a];
    out[i] = x[i];
    out[a] = c * x[a] + s * x[b];
    out[b] = c * x[b] - s * x[a];
}

static inline __attribute__((always_inline)) void plane_r_mul(const vd *R, int i, int a, int b, const vd x[3],
                                                              vd out[3])
{
    const vd c = R[3 * a + a], s = R[3 * b + a];
    out[i] = x[i];
    out[a] = c * x[a] - s * x[b];
    out[b] = s * x[a] + c * x[b];
}

static inline void motion_to_child_plane(const vd *X, int plane, const vd m_p[6], vd m_c[6])
{
    if (plane < 0) {
        motion_to_child(X, m_p, m_c);
        return;
    }
    vd v[3];
    v3_cross(m_p, X + 9, v);
    v[0] += m_p[3]; v[1] += m_p[4]; v[2] += m_p[5];
    if (plane == 2) plane_rt_mul(X, 2, 0, 1, m_p, m_c), plane_rt_mul(X, 2, 0, 1, v, m_c + 3);
    else if (plane == 1) plane_rt_mul(X, 1, 2, 0, m_p, m_c), plane_rt_mul(X, 1, 2, 0, v, m_c + 3);
    else plane_rt_mul(X, 0, 1, 2, m_p, m_c), plane_rt_mul(X, 0, 1, 2, v, m_c + 3);
}

static inline void force_to_parent_plane(const vd *X, int plane, const vd f_c[6], vd f_p[6])
{
    if (plane < 0) {
        force_to_parent(X, f_c, f_p);
        return;
    }
    vd n[3], f[3], pxf[3];
    if (plane == 2) plane_r_mul(X, 2, 0, 1, f_c, n), plane_r_mul(X, 2, 0, 1, f_c + 3, f);
    else if (plane == 1) plane_r_mul(X, 1, 2, 0, f_c, n), plane_r_mul(X, 1, 2, 0, f_c + 3, f);
    else plane_r_mul(X, 0, 1, 2, f_c, n), plane_r_mul(X, 0, 1, 2, f_c + 3, f);
    v3_cross(X + 9, f, pxf);
    f_p[0] = n[0] + pxf[0]; f_p[1] = n[1] + pxf[1]; f_p[2] = n[2] + pxf[2];
    f_p[3] = f[0]; f_p[4] = f[1]; f_p[5] = f[2];
}

static inline void motion_cross(const vd V[6], const vd mv[6], vd out[6])
{
    vd a[3], b[3];
    v3_cross(V, mv, out);
    v3_cross(V, mv + 3, a);
    v3_cross(V + 3, mv, b);
    out[3] = a[0] + b[0]; out[4] = a[1] + b[1]; out[5] = a[2] + b[2];
}

static inline void force_cross(const vd V[6], const vd f[6], vd out[6])
{
    vd a[3], b[3];
    v3_cross(V, f, a);
    v3_cross(V + 3, f + 3, b);
    out[0] = a[0] + b[0]; out[1] = a[1] + b[1]; out[2] = a[2] + b[2];
    v3_cross(V, f + 3, out + 3);
}

static inline vd s6_dot(const vd a[6], const vd b[6])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* M V for a rigid inertia (m, h, Io) of the model (sd_rigid_inertia_mul). */
static inline void rigid_inertia_mul(const double ri[13], const vd V[6], vd out[6])
{
    const double m = ri[0], *Io = ri + 4;
    const vd h[3] = {splat(ri[1]), splat(ri[2]), splat(ri[3])};
    vd hxv[3], hxw[3];
    v3_cross(h, V + 3, hxv);
    v3_cross(h, V, hxw);
    out[0] = Io[0] * V[0] + Io[1] * V[1] + Io[2] * V[2];
    out[1] = Io[3] * V[0] + Io[4] * V[1] + Io[5] * V[2];
    out[2] = Io[6] * V[0] + Io[7] * V[1] + Io[8] * V[2];
    for (int i = 0; i < 3; ++i) {
        out[i] += hxv[i];
        out[3 + i] = m * V[3 + i] - hxw[i];
    }
}

/* I v for a symmetric 6x6 I (sd_sym6_mul: v_j times row j, summed in that order). */
static inline void sym6_mul(const vd *I, const vd v[6], vd out[6])
{
    vd acc[6];
    for (int i = 0; i < 6; ++i) acc[i] = splat(0.0);
    for (int j = 0; j < 6; ++j)
        for (int i = 0; i < 6; ++i) acc[i] += v[j] * I[6 * j + i];
    for (int i = 0; i < 6; ++i) out[i] = acc[i];
}

static inline void m3_skew_mul(const vd p[3], const vd M[9], vd out[9])
{
    for (int j = 0; j < 3; ++j) {
        out[j] = p[1] * M[6 + j] - p[2] * M[3 + j];
        out[3 + j] = p[2] * M[j] - p[0] * M[6 + j];
        out[6 + j] = p[0] * M[3 + j] - p[1] * M[j];
    }
}

/* R Y R^T for a 3x3 block Y of a 6x6 (row stride 6) and a general R: T = R Y, then T R^T; only
 * the upper triangle when `symmetric` (the caller mirrors it). */
static inline __attribute__((always_inline)) void rotate_block(const vd *R, const vd *Y, int symmetric, vd out[9])
{
    vd T[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) T[3 * i + j] = R[3 * i] * Y[j] + R[3 * i + 1] * Y[6 + j] + R[3 * i + 2] * Y[12 + j];
    for (int i = 0; i < 3; ++i)
        for (int j = symmetric ? i : 0; j < 3; ++j)
            out[3 * i + j] = T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2];
}

/* The same when R is a plane rotation about e_i (plane_r_mul's c and s): R Y mixes rows a and b of
 * Y, (R Y) R^T columns a and b, 24 products where the general form takes 54 (45 symmetric). Row i
 * of R Y is Y's own, read in place: a loop copying it became a memcpy call (~4% of Talos's FD). */
static inline __attribute__((always_inline)) void rotate_block_plane(const vd *R, int i, int a, int b, const vd *Y,
                                                                    int symmetric, vd out[9])
{
    const vd c = R[3 * a + a], s = R[3 * b + a];
    vd Ta[3], Tb[3]; /* rows a and b of R Y */
    for (int j = 0; j < 3; ++j) {
        Ta[j] = c * Y[6 * a + j] - s * Y[6 * b + j];
        Tb[j] = s * Y[6 * a + j] + c * Y[6 * b + j];
    }
    for (int r = 0; r < 3; ++r) {
        const vd *t = r == i ? Y + 6 * i : r == a ? Ta : Tb;
        if (!symmetric || i >= r) out[3 * r + i] = t[i];
        if (!symmetric || a >= r) out[3 * r + a] = c * t[a] - s * t[b];
        if (!symmetric || b >= r) out[3 * r + b] = s * t[a] + c * t[b];
    }
}

/* A' = R A R^T (upper triangle), B' = R B R^T and C' = R C R^T (upper triangle) of the blocks
 * [A B; B^T C] of I, by the plane kernel when plane = i >= 0 (a revolute about e_i on an unrotated
 * placement, sd_plane_axis) and by the general products otherwise. */
static inline __attribute__((always_inline)) void rotate_blocks(const vd *R, int plane, const vd *I, vd A2[9],
                                                               vd B2[9], vd C2[9])
{
    switch (plane) {
    case 0:
        rotate_block_plane(R, 0, 1, 2, I, 1, A2), rotate_block_plane(R, 0, 1, 2, I + 3, 0, B2);
        rotate_block_plane(R, 0, 1, 2, I + 21, 1, C2);
        return;
    case 1:
        rotate_block_plane(R, 1, 2, 0, I, 1, A2), rotate_block_plane(R, 1, 2, 0, I + 3, 0, B2);
        rotate_block_plane(R, 1, 2, 0, I + 21, 1, C2);
        return;
    case 2:
        rotate_block_plane(R, 2, 0, 1, I, 1, A2), rotate_block_plane(R, 2, 0, 1, I + 3, 0, B2);
        rotate_block_plane(R, 2, 0, 1, I + 21, 1, C2);
        return;
    default:
        rotate_block(R, I, 1, A2), rotate_block(R, I + 3, 0, B2), rotate_block(R, I + 21, 1, C2);
        return;
    }
}

/* acc += phi I phi* (sd_sym6_add_to_parent's algebra); with `first`, the parent's first child,
 * acc = M(parent) + phi I phi* instead, M's broadcast fused into the sum (the same numbers as
 * broadcasting M into acc first, without that pass of 36 stores and loads). With A' = R A R^T,
 * B' = R B R^T, C' = R C R^T (rotate_blocks) and K = B' + [p x] C' (the upper-right block), the
 * upper-left block is
 *   A' + [p x] K^T + ([p x] B'^T)^T,
 * symmetric: its upper triangle is formed and mirrored, as C''s is, and the lower-left block is
 * K^T, so acc stays exactly symmetric and 21 sums do for 36 entries (the old form,
 * A' + S + S^T + [p x] ([p x] C')^T with S = [p x] B'^T, formed all 9 entries of three products).
 * Reads the upper-right and the two diagonal 3x3 blocks of I only. */
static inline __attribute__((always_inline)) void sym6_to_parent(const vd *X, int plane, const vd *I, int first,
                                                                const double *M, vd *acc)
{
    const vd *R = X, *p = X + 9;
    vd A2[9], B2[9], C2[9];
    rotate_blocks(R, plane, I, A2, B2, C2);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < i; ++j) C2[3 * i + j] = C2[3 * j + i];
    vd PC[9], K[9];
    m3_skew_mul(p, C2, PC);
    for (int i = 0; i < 9; ++i) K[i] = B2[i] + PC[i];
    const int a1[3] = {1, 2, 0}, a2[3] = {2, 0, 1}; /* row i of [p x] is p[a1] e_a2 - p[a2] e_a1 */
    for (int i = 0; i < 3; ++i)
        for (int j = i; j < 3; ++j) {
            /* ([p x] K^T)_ij = row i of [p x] . row j of K; ([p x] B'^T)_ji = row j of [p x] . row i of B' */
            const vd v = p[a1[i]] * K[3 * j + a2[i]] - p[a2[i]] * K[3 * j + a1[i]];
            const vd w = p[a1[j]] * B2[3 * i + a2[j]] - p[a2[j]] * B2[3 * i + a1[j]];
            const vd tl = (A2[3 * i + j] + v) + w;
            const int e = 6 * i + j, et = 6 * j + i, c = 6 * (3 + i) + 3 + j, ct = 6 * (3 + j) + 3 + i;
            acc[e] = acc[et] = (first ? splat(M[e]) : acc[e]) + tl;
            acc[c] = acc[ct] = (first ? splat(M[c]) : acc[c]) + C2[3 * i + j];
        }
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            const int e1 = 6 * i + 3 + j, e2 = 6 * (3 + j) + i;
            acc[e1] = acc[e2] = (first ? splat(M[e1]) : acc[e1]) + K[3 * i + j];
        }
}

static inline __attribute__((always_inline)) void sym6_add_to_parent(const vd *X, int plane, const vd *I, vd *acc)
{
    sym6_to_parent(X, plane, I, 0, NULL, acc);
}

static inline __attribute__((always_inline)) void sym6_set_parent(const vd *X, int plane, const vd *I,
                                                                  const double *M, vd *acc)
{
    sym6_to_parent(X, plane, I, 1, M, acc);
}

/* ---------------------------------------------------------------- hinges (hinge.c) */

static inline void set_column(vd *S, const double *ang, const double *lin)
{
    for (int i = 0; i < 3; ++i) {
        S[i] = splat(ang ? ang[i] : 0.0);
        S[3 + i] = splat(lin ? lin[i] : 0.0);
    }
}

/* X_J(q) of body k's hinge (R, p), its H* (S) and d(H*)/dt u (c), as sd_hinge_transform and
 * sd_hinge_velocity_term; qk and uk hold the hinge's coordinates and speeds. */
static void hinge_lanes(const sd_model *m, int k, const vd *qk, const vd *uk, vd R[9], vd p[3], vd *S, vd c[6])
{
    const double *ax = m->hinge_axes + 9 * k;
    for (int i = 0; i < 9; ++i) R[i] = splat(i % 4 == 0 ? 1.0 : 0.0);
    for (int i = 0; i < 3; ++i) p[i] = splat(0.0);
    for (int i = 0; i < 6; ++i) c[i] = splat(0.0);
    switch (m->hinge[k]) {
    case SD_HINGE_FIXED:
    case SD_HINGE_TYPE_COUNT:
        break;
    case SD_HINGE_REVOLUTE: {
        vd s, co;
        vsincos(qk[0], &s, &co);
        m3_axis_angle(ax, s, co, R);
        set_column(S, ax, NULL);
        break;
    }
    case SD_HINGE_PRISMATIC:
        for (int i = 0; i < 3; ++i) p[i] = qk[0] * ax[i];
        set_column(S, NULL, ax);
        break;
    case SD_HINGE_SPHERICAL:
        quat_to_m3(qk, R);
        for (int j = 0; j < 3; ++j)
            for (int i = 0; i < 6; ++i) S[6 * j + i] = splat(i == j ? 1.0 : 0.0);
        break;
    case SD_HINGE_FREE:
        quat_to_m3(qk + 3, R);
        for (int i = 0; i < 3; ++i) p[i] = qk[i];
        for (int j = 0; j < 6; ++j)
            for (int i = 0; i < 6; ++i) S[6 * j + i] = splat(i == j ? 1.0 : 0.0);
        break;
    case SD_HINGE_UNIVERSAL: { /* R = R(a1, q0) R(a2, q1); omega = R2^T a1 q0' + a2 q1' */
        vd R1[9], R2[9], a1_body[3], s, co;
        vsincos(qk[0], &s, &co);
        m3_axis_angle(ax, s, co, R1);
        vsincos(qk[1], &s, &co);
        m3_axis_angle(ax + 3, s, co, R2);
        m3_mul(R1, R2, R);
        m3t_mul_c(R2, ax, a1_body);
        for (int i = 0; i < 3; ++i) {
            S[i] = a1_body[i];
            S[3 + i] = splat(0.0);
        }
        set_column(S + 6, ax + 3, NULL);
        if (uk) { /* d/dt (R2^T a1) = -(a2 q1') x (R2^T a1) */
            vd w2[3], d[3];
            for (int i = 0; i < 3; ++i) w2[i] = ax[3 + i] * uk[1];
            v3_cross(w2, a1_body, d);
            for (int i = 0; i < 3; ++i) c[i] = -d[i] * uk[0];
        }
        break;
    }
    case SD_HINGE_PLANAR: { /* p = s1 t1 + s2 t2, R = R(n, theta); v_body = R^T t_i s_i' */
        vd t1_body[3], t2_body[3], s, co;
        const double *nrm = ax, *t1 = ax + 3, *t2 = ax + 6;
        vsincos(qk[2], &s, &co);
        m3_axis_angle(nrm, s, co, R);
        for (int i = 0; i < 3; ++i) p[i] = qk[0] * t1[i] + qk[1] * t2[i];
        m3t_mul_c(R, t1, t1_body);
        m3t_mul_c(R, t2, t2_body);
        for (int i = 0; i < 3; ++i) {
            S[i] = S[6 + i] = splat(0.0);
            S[3 + i] = t1_body[i];
            S[9 + i] = t2_body[i];
        }
        set_column(S + 12, nrm, NULL);
        if (uk) { /* d/dt (R^T t) = -(n theta') x (R^T t) */
            vd t[3], tb[3], w[3], d[3];
            for (int i = 0; i < 3; ++i) t[i] = ax[3 + i] * uk[0] + ax[6 + i] * uk[1];
            m3t_mul_v(R, t, tb);
            for (int i = 0; i < 3; ++i) w[i] = nrm[i] * uk[2];
            v3_cross(w, tb, d);
            for (int i = 0; i < 3; ++i) c[3 + i] = -d[i];
        }
        break;
    }
    }
}

/* ---------------------------------------------------------------- axis-selecting hinges */

/* Xup = placement * X_J(q) for a hinge with H* = sgn e_sel (sd_hinge_select; hinge.c's
 * axis_placement, the same operations): a revolute about e_i is a plane rotation by theta = sgn q
 * of the placement's columns a, b (the axes after i cyclically), 12 products where Rodrigues'
 * formula and the 3x3 product of hinge_lanes take 42; a prismatic along e_i moves the origin along
 * column i. */
static void axis_placement_lanes(const sd_transform *Xp, int sel, double sgn, vd qk, vd X[12])
{
    const double *P = Xp->R;
    const vd theta = sgn * qk;
    if (sel >= 3) {
        for (int r = 0; r < 9; ++r) X[r] = splat(P[r]);
        for (int r = 0; r < 3; ++r) X[9 + r] = Xp->p[r] + theta * P[3 * r + sel - 3];
        return;
    }
    const int i = sel, a = (i + 1) % 3, b = (i + 2) % 3;
    vd s, c;
    vsincos(theta, &s, &c);
    for (int r = 0; r < 3; ++r) {
        const double pa = P[3 * r + a], pb = P[3 * r + b];
        X[3 * r + i] = splat(P[3 * r + i]);
        X[3 * r + a] = c * pa + s * pb;
        X[3 * r + b] = c * pb - s * pa;
        X[9 + r] = splat(Xp->p[r]);
    }
}

/* out = V x (w e_sel) from the entries of V it touches (sd_motion_cross_axis): a revolute about
 * e_i gives [omega x w e_i; v x w e_i], a prismatic along e_i [0; omega x w e_i]. */
static inline void motion_cross_axis(const vd V[6], int sel, vd w, vd out[6])
{
    const int lin = sel >= 3, i = lin ? sel - 3 : sel, a = (i + 1) % 3, b = (i + 2) % 3;
    const vd *x = lin ? V : V + 3; /* what multiplies the linear part */
    out[i] = out[3 + i] = splat(0.0);
    if (lin) out[a] = out[b] = splat(0.0);
    else {
        out[a] = w * V[b];
        out[b] = -w * V[a];
    }
    out[3 + a] = w * x[b];
    out[3 + b] = -w * x[a];
}

/* ---------------------------------------------------------------- the 004 Eq 33 projection */

/* Cholesky of D in place (sd_cholesky_factor); the lanes whose pivot is not above min_pivot. */
static vi cholesky_lanes(vd *A, int n, vd min_pivot)
{
    vi bad = (vi)splat(0.0);
    for (int j = 0; j < n; ++j) {
        vd djj = A[j * n + j];
        for (int k = 0; k < j; ++k) djj -= A[j * n + k] * A[j * n + k];
        bad |= ~(djj > min_pivot);
        const vd ljj = vsqrt(djj);
        A[j * n + j] = ljj;
        for (int i = j + 1; i < n; ++i) {
            vd s = A[i * n + j];
            for (int k = 0; k < j; ++k) s -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = s / ljj;
        }
    }
    return bad;
}

/* (L L^T)^-1 from L, both triangles (sd_cholesky_inverse). */
static void cholesky_inverse_lanes(vd *A, int n)
{
    for (int j = 0; j < n; ++j) {
        A[j * n + j] = 1.0 / A[j * n + j];
        for (int i = j + 1; i < n; ++i) {
            vd s = splat(0.0);
            for (int k = j; k < i; ++k) s -= A[i * n + k] * A[k * n + j];
            A[i * n + j] = s / A[i * n + i];
        }
    }
    for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) {
            vd s = splat(0.0);
            for (int k = i; k < n; ++k) s += A[k * n + i] * A[k * n + j];
            A[j * n + i] = s;
        }
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < i; ++j) A[i * n + j] = A[j * n + i];
}

/* D = H P H* + J, G = P H* D^-1, P+ = P - G (P H*)* for a one-speed hinge (project_one_speed);
 * returns the lanes whose D is negligible or whose inverse overflows. */
static vi project_one_speed(const vd *S, int sel, double sgn, vd *U, vd *G, vd *Dinv, const vd *P, double armature,
                            vd tol_scale, int full, vd *Pplus)
{
    if (sel >= 0) /* H* = sgn e_sel selects: U = sgn P(:, sel) (a row of the symmetric P), D = P(sel, sel) */
        for (int r = 0; r < 6; ++r) U[r] = sgn * P[6 * sel + r];
    else
        sym6_mul(P, S, U);
    const vd D = (sel >= 0 ? P[7 * sel] : s6_dot(S, U)) + armature, dinv = 1.0 / D;
    const vi bad = ~(D > tol_scale) | ~(dinv <= splat(DBL_MAX));
    Dinv[0] = dinv;
    for (int r = 0; r < 6; ++r) G[r] = U[r] * dinv;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 6; ++c) Pplus[6 * r + c] = P[6 * r + c] - G[r] * U[c];
    for (int r = 3; r < 6; ++r)
        for (int c = 3; c < 6; ++c) Pplus[6 * r + c] = P[6 * r + c] - G[r] * U[c];
    if (full) /* the lower-left block, for the forces only (sym6_to_parent does not read it) */
        for (int r = 3; r < 6; ++r)
            for (int c = 0; c < 3; ++c) Pplus[6 * r + c] = P[6 * r + c] - G[r] * U[c];
    return bad;
}

/* The same for nk speeds (project_speeds): D by its Cholesky factor, D^-1 formed once. */
static vi project_speeds(int nk, const double *armature, const vd *S, vd *U, vd *G, vd *Dinv, const vd *P,
                         vd tol_scale, vd *Pplus)
{
    vd L[36];
    for (int i = 0; i < nk; ++i) sym6_mul(P, S + 6 * i, U + 6 * i);
    for (int i = 0; i < nk; ++i)
        for (int j = 0; j < nk; ++j) L[i * nk + j] = s6_dot(S + 6 * i, U + 6 * j) + (i == j ? armature[i] : 0.0);
    vi bad = cholesky_lanes(L, nk, tol_scale);
    for (int i = 0; i < nk * nk; ++i) Dinv[i] = L[i];
    cholesky_inverse_lanes(Dinv, nk);
    for (int i = 0; i < nk; ++i) bad |= ~(vabs(Dinv[i * nk + i]) <= splat(DBL_MAX));
    for (int r = 0; r < 6; ++r)
        for (int i = 0; i < nk; ++i) {
            vd g = splat(0.0);
            for (int j = 0; j < nk; ++j) g += U[6 * j + r] * Dinv[j * nk + i];
            G[6 * i + r] = g;
        }
    for (int r = 0; r < 6; ++r)
        for (int c = r; c < 6; ++c) {
            vd v = P[6 * r + c];
            for (int i = 0; i < nk; ++i) v -= G[6 * i + r] * U[6 * i + c];
            Pplus[6 * r + c] = Pplus[6 * c + r] = v;
        }
    return bad;
}

/* The same for a free hinge, whose H* is the 6x6 identity (hinge_lanes): U = P H* is P (P is
 * symmetric) and D = H U + J is P + J, copies where project_speeds forms 36 dot products of 6 for
 * each (the same numbers: the products by 0 and 1 are exact); G = U D^-1 as there. P+ only when
 * the parent or the forces read it (a floating base has no parent). */
static vi project_free(const double *armature, vd *G, vd *Dinv, const vd *P, vd tol_scale, int need_pplus,
                       vd *Pplus)
{
    for (int i = 0; i < 36; ++i) Dinv[i] = P[i];
    for (int i = 0; i < 6; ++i) Dinv[7 * i] += armature[i];
    vi bad = cholesky_lanes(Dinv, 6, tol_scale);
    cholesky_inverse_lanes(Dinv, 6);
    for (int i = 0; i < 6; ++i) bad |= ~(vabs(Dinv[7 * i]) <= splat(DBL_MAX));
    for (int r = 0; r < 6; ++r)
        for (int i = 0; i < 6; ++i) {
            vd g = splat(0.0);
            for (int j = 0; j < 6; ++j) g += P[6 * j + r] * Dinv[6 * j + i];
            G[6 * i + r] = g;
        }
    if (need_pplus)
        for (int r = 0; r < 6; ++r)
            for (int c = r; c < 6; ++c) {
                vd v = P[6 * r + c];
                for (int i = 0; i < 6; ++i) v -= G[6 * i + r] * P[6 * i + c];
                Pplus[6 * r + c] = Pplus[6 * c + r] = v;
            }
    return bad;
}

/* ---------------------------------------------------------------- the recursion */

/* Where each lane's block of a stacked input starts (lanes past the real ones repeat the last
 * state), found once per group: a load is then NL loads from fixed pointers, no index products. */
typedef struct lane_rows {
    const double *x[NL];
} lane_rows;

static inline lane_rows rows_of(const double *x, long stride, int count)
{
    lane_rows r;
    for (int l = 0; l < NL; ++l) r.x[l] = x ? x + (l < count ? l : count - 1) * stride : NULL;
    return r;
}

/* Entry i of every lane's block. */
static inline vd load_row(const lane_rows *r, int i)
{
    vd v;
    for (int l = 0; l < NL; ++l) v[l] = r->x[l][i];
    return v;
}

static inline void store_lanes(double *x, long stride, int i, vd v, int count)
{
    for (int l = 0; l < count; ++l) x[l * stride + i] = v[l];
}

static inline vi finite_lanes(vd x) { return vabs(x) <= splat(DBL_MAX); }

/* Placements Xup, H*, V, a, b (with f_ext) of every body in one base-to-tips pass (kinematics.c,
 * sd_update_motion); z zeroed for the gather that follows. */
static void motion_lanes(const sd_model *m, const sd_lanes_ws *ws, const lane_rows *qr, const double *u,
                         const lane_rows *ur, const double *f_ext, const lane_rows *fr)
{
    const int n = m->n;
    vd *Xup = (vd *)ws->Xup, *Sv = (vd *)ws->S, *V = (vd *)ws->V, *a = (vd *)ws->a, *b = (vd *)ws->b;
    vd *z = (vd *)ws->z;
    for (int k = 0; k < n; ++k) {
        const int nk = m->nv_k[k], vk = m->v_index[k], qk0 = m->q_index[k], par = m->parent[k];
        vd qk[7], uk[6], R[9], p[3], c[6], vJ[6];
        for (int i = 0; i < m->nq_k[k]; ++i) qk[i] = load_row(qr, qk0 + i);
        for (int i = 0; i < nk; ++i) uk[i] = u ? load_row(ur, vk + i) : splat(0.0);
        vd *S = Sv + 6 * vk, *X = Xup + 12 * k, *Vk = V + 6 * k, *ak = a + 6 * k, *bk = b + 6 * k;
        const int sel = ws->sel[k];
        if (sel >= 0) { /* H* = sgn e_sel (kinematics.c's fast path): V += H* u, a = V x H* u */
            const double sgn = ws->sgn[k];
            axis_placement_lanes(&m->placement[k], sel, sgn, qk[0], X);
            for (int r = 0; r < 6; ++r) S[r] = splat(0.0);
            S[sel] = splat(sgn);
            const vd w = sgn * uk[0];
            if (par < 0)
                for (int r = 0; r < 6; ++r) Vk[r] = splat(0.0);
            else
                motion_to_child_plane(X, ws->plane[k], V + 6 * par, Vk);
            Vk[sel] += w;
            motion_cross_axis(Vk, sel, w, ak);
        } else {
            hinge_lanes(m, k, qk, u ? uk : NULL, R, p, S, c);
            const sd_transform *A = &m->placement[k]; /* Xup = placement X_J (sd_transform_compose) */
            for (int i = 0; i < 3; ++i) {
                for (int j = 0; j < 3; ++j)
                    X[3 * i + j] = A->R[3 * i] * R[j] + A->R[3 * i + 1] * R[3 + j] + A->R[3 * i + 2] * R[6 + j];
                X[9 + i] = (A->R[3 * i] * p[0] + A->R[3 * i + 1] * p[1] + A->R[3 * i + 2] * p[2]) + A->p[i];
            }
            for (int r = 0; r < 6; ++r) vJ[r] = splat(0.0);
            for (int i = 0; i < nk; ++i)
                for (int r = 0; r < 6; ++r) vJ[r] += S[6 * i + r] * uk[i];
            if (par < 0) memcpy(Vk, vJ, sizeof vJ);
            else {
                motion_to_child(X, V + 6 * par, Vk);
                for (int r = 0; r < 6; ++r) Vk[r] += vJ[r];
            }
            vd cr[6];
            motion_cross(Vk, vJ, cr);
            for (int r = 0; r < 6; ++r) ak[r] = c[r] + cr[r];
        }
        vd MV[6];
        rigid_inertia_mul(m->rigid + 13 * k, Vk, MV);
        force_cross(Vk, MV, bk);
        if (f_ext)
            for (int r = 0; r < 6; ++r) bk[r] -= load_row(fr, 6 * k + r);
        for (int r = 0; r < 6; ++r) z[6 * k + r] = splat(0.0);
    }
}

static int lanes_forward_dynamics(const sd_model *m, const sd_lanes_ws *ws, int count, const double *q,
                                  const double *u, const double *tau, const double *f_ext, double *qdd, double *f)
{
    const int n = m->n;
    const long nq = m->nq, nv = m->nv, nf = 6L * n;
    vd *Xup = (vd *)ws->Xup, *Sv = (vd *)ws->S, *a = (vd *)ws->a, *b = (vd *)ws->b;
    vd *z = (vd *)ws->z, *zplus = (vd *)ws->zplus, *alpha = (vd *)ws->alpha, *Pv = (vd *)ws->P;
    vd *Pplus_all = (vd *)ws->Pplus, *Dinv = (vd *)ws->Dinv, *U = (vd *)ws->U, *G = (vd *)ws->G;
    vd *nu = (vd *)ws->nu;
    const lane_rows qrows = rows_of(q, nq, count), urows = rows_of(u, nv, count), frows = rows_of(f_ext, nf, count),
                    tr = rows_of(tau, nv, count), *qr = &qrows, *ur = &urows;
    vi bad = (vi)splat(0.0);
    motion_lanes(m, ws, qr, u, ur, f_ext, &frows);

    /* tips-to-base gather: 004 Eq 33 (riccati_step) and Eq 58a-d */
    const double tol = 1e-13;
    for (int k = n - 1; k >= 0; --k) {
        const int nk = m->nv_k[k], vk = m->v_index[k], par = m->parent[k];
        vd *P = Pv + 36 * k, Pplus_local[36], *Pplus = f ? Pplus_all + 36 * k : Pplus_local;
        if (m->last_child[k] < 0)
            for (int i = 0; i < 36; ++i) P[i] = splat(ws->M6[36 * k + i]);
        const vd *S = Sv + 6 * vk;
        if (nk == 0) memcpy(Pplus, P, 36 * sizeof(vd));
        else {
            vd pscale = splat(0.0);
            for (int i = 0; i < 6; ++i) {
                const vd aa = vabs(P[7 * i]);
                pscale = vsel(aa > pscale, aa, pscale);
            }
            if (nk == 1)
                bad |= project_one_speed(S, ws->sel[k], ws->sgn[k], U + 6 * vk, G + 6 * vk, Dinv + 36 * k, P,
                                         m->armature[vk], tol * pscale, f != NULL, Pplus);
            else if (m->hinge[k] == SD_HINGE_FREE)
                bad |= project_free(m->armature + vk, G + 6 * vk, Dinv + 36 * k, P, tol * pscale,
                                    par >= 0 || f != NULL, Pplus);
            else
                bad |= project_speeds(nk, m->armature + vk, S, U + 6 * vk, G + 6 * vk, Dinv + 36 * k, P,
                                      tol * pscale, Pplus);
        }
        if (par >= 0) { /* P(parent) = M(parent) + sum phi P+ phi*, the sum begun by the first child */
            if (m->last_child[par] == k)
                sym6_set_parent(Xup + 12 * k, ws->plane[k], Pplus, ws->M6 + 36 * par, Pv + 36 * par);
            else sym6_add_to_parent(Xup + 12 * k, ws->plane[k], Pplus, Pv + 36 * par);
        }
        vd *zk = z + 6 * k, *zp = zplus + 6 * k, Pa[6];
        sym6_mul(P, a + 6 * k, Pa); /* z(k) = sum phi z+(j) + P(k) a(k) + b(k) */
        for (int r = 0; r < 6; ++r) zp[r] = zk[r] += Pa[r] + b[6 * k + r];
        if (nk > 0) { /* eps = T - H z; nu = D^-1 eps; z+ = z + G eps */
            vd eps[6];
            if (ws->sel[k] >= 0) /* H = sgn e_sel^T */
                eps[0] = load_row(&tr, vk) - ws->sgn[k] * zk[ws->sel[k]];
            else if (m->hinge[k] == SD_HINGE_FREE) /* H = 1 */
                for (int i = 0; i < 6; ++i) eps[i] = load_row(&tr, vk + i) - zk[i];
            else
                for (int i = 0; i < nk; ++i) eps[i] = load_row(&tr, vk + i) - s6_dot(S + 6 * i, zk);
            if (m->has_passive) { /* T = tau + tau_passive (sd_passive_hinge; no spherical spring here) */
                vd tp[6];
                for (int i = 0; i < nk; ++i)
                    tp[i] = u ? -m->damping[vk + i] * load_row(ur, vk + i) : splat(0.0);
                if (m->stiffness[vk] != 0.0)
                    tp[0] -= m->stiffness[vk] * (load_row(qr, m->q_index[k]) - m->spring_ref[vk]);
                for (int i = 0; i < nk; ++i) eps[i] += tp[i];
            }
            for (int i = 0; i < nk; ++i) {
                vd s = splat(0.0);
                for (int j = 0; j < nk; ++j) s += Dinv[36 * k + i * nk + j] * eps[j];
                nu[vk + i] = s;
            }
            for (int i = 0; i < nk; ++i)
                for (int r = 0; r < 6; ++r) zp[r] += G[6 * (vk + i) + r] * eps[i];
        }
        if (par >= 0) {
            vd fp[6];
            force_to_parent_plane(Xup + 12 * k, ws->plane[k], zp, fp);
            for (int r = 0; r < 6; ++r) z[6 * par + r] += fp[r];
        }
    }

    /* base-to-tips scatter: 004 Eq 58e-g */
    vd a0[6];
    for (int r = 0; r < 3; ++r) {
        a0[r] = splat(0.0);
        a0[3 + r] = splat(-m->gravity[r]);
    }
    for (int k = 0; k < n; ++k) {
        const int nk = m->nv_k[k], vk = m->v_index[k], par = m->parent[k];
        const vd *S = Sv + 6 * vk;
        vd ap[6], qk[6], aJ[6], *al = alpha + 6 * k;
        motion_to_child_plane(Xup + 12 * k, ws->plane[k], par < 0 ? a0 : alpha + 6 * par, ap);
        for (int i = 0; i < nk; ++i) { /* qdd = nu - G* alpha+ */
            qk[i] = nu[vk + i] - s6_dot(G + 6 * (vk + i), ap);
            bad |= ~finite_lanes(qk[i]);
            store_lanes(qdd, nv, vk + i, qk[i], count);
        }
        if (ws->sel[k] >= 0) { /* alpha = alpha+ + H* qdd + a */
            for (int r = 0; r < 6; ++r) al[r] = ap[r] + a[6 * k + r];
            al[ws->sel[k]] += ws->sgn[k] * qk[0];
        } else if (m->hinge[k] == SD_HINGE_FREE) { /* H* = 1: aJ = qdd */
            for (int r = 0; r < 6; ++r) al[r] = (ap[r] + a[6 * k + r]) + qk[r];
        } else {
            for (int r = 0; r < 6; ++r) aJ[r] = splat(0.0);
            for (int i = 0; i < nk; ++i)
                for (int r = 0; r < 6; ++r) aJ[r] += S[6 * i + r] * qk[i];
            for (int r = 0; r < 6; ++r) al[r] = (ap[r] + a[6 * k + r]) + aJ[r];
        }
        if (f) { /* 000 Eq 17: f(k) = P+(k) alpha+(k) + z+(k) */
            vd fk[6];
            sym6_mul(Pplus_all + 36 * k, ap, fk);
            for (int r = 0; r < 6; ++r) {
                fk[r] += zplus[6 * k + r];
                bad |= ~finite_lanes(fk[r]);
                store_lanes(f, nf, 6 * k + r, fk[r], count);
            }
        }
    }
    return any_lane(bad);
}

/* Newton-Euler inverse dynamics (004 Alg 3.1, inverse_dynamics.c) on NL states: the
 * scatter alpha(k) = phi* alpha(parent) + a(k) + H* qdd, f(k) = M(k) alpha(k) + b(k), then the
 * gather f(k) += phi f(children), T(k) = H(k) f(k), and the joint terms J qdd - tau_passive. */
static int lanes_inverse_dynamics(const sd_model *m, const sd_lanes_ws *ws, int count, const double *q,
                                  const double *u, const double *qdd, const double *f_ext, double *tau, double *f)
{
    const int n = m->n;
    const long nq = m->nq, nv = m->nv, nf = 6L * n;
    vd *Xup = (vd *)ws->Xup, *Sv = (vd *)ws->S, *a = (vd *)ws->a, *b = (vd *)ws->b;
    vd *alpha = (vd *)ws->alpha, *fv = (vd *)ws->zplus; /* f(k) in z+'s place */
    const lane_rows qrows = rows_of(q, nq, count), urows = rows_of(u, nv, count), frows = rows_of(f_ext, nf, count),
                    ar = rows_of(qdd, nv, count), *qr = &qrows, *ur = &urows;
    vi bad = (vi)splat(0.0);
    motion_lanes(m, ws, qr, u, ur, f_ext, &frows);
    vd a0[6];
    for (int r = 0; r < 3; ++r) {
        a0[r] = splat(0.0);
        a0[3 + r] = splat(-m->gravity[r]);
    }
    for (int k = 0; k < n; ++k) { /* scatter */
        const int nk = m->nv_k[k], vk = m->v_index[k], par = m->parent[k];
        const vd *S = Sv + 6 * vk;
        vd *al = alpha + 6 * k, aJ[6], MA[6];
        motion_to_child_plane(Xup + 12 * k, ws->plane[k], par < 0 ? a0 : alpha + 6 * par, al);
        for (int r = 0; r < 6; ++r) al[r] += a[6 * k + r];
        if (ws->sel[k] >= 0) al[ws->sel[k]] += ws->sgn[k] * load_row(&ar, vk);
        else {
            for (int r = 0; r < 6; ++r) aJ[r] = splat(0.0);
            for (int i = 0; i < nk; ++i) {
                const vd x = load_row(&ar, vk + i);
                for (int r = 0; r < 6; ++r) aJ[r] += S[6 * i + r] * x;
            }
            for (int r = 0; r < 6; ++r) al[r] += aJ[r];
        }
        rigid_inertia_mul(m->rigid + 13 * k, al, MA);
        for (int r = 0; r < 6; ++r) fv[6 * k + r] = MA[r] + b[6 * k + r];
    }
    for (int k = n - 1; k >= 0; --k) { /* gather */
        const int nk = m->nv_k[k], vk = m->v_index[k], par = m->parent[k];
        const vd *S = Sv + 6 * vk, *fk = fv + 6 * k;
        for (int i = 0; i < nk; ++i) {
            vd t = ws->sel[k] >= 0 ? ws->sgn[k] * fk[ws->sel[k]] : s6_dot(S + 6 * i, fk); /* H = sgn e_sel^T */
            if (m->has_armature) t += m->armature[vk + i] * load_row(&ar, vk + i);
            if (m->has_passive) { /* - tau_passive (sd_passive_hinge) */
                vd tp = u ? -m->damping[vk + i] * load_row(ur, vk + i) : splat(0.0);
                if (i == 0 && m->stiffness[vk] != 0.0)
                    tp -= m->stiffness[vk] * (load_row(qr, m->q_index[k]) - m->spring_ref[vk]);
                t -= tp;
            }
            bad |= ~finite_lanes(t);
            store_lanes(tau, nv, vk + i, t, count);
        }
        if (f)
            for (int r = 0; r < 6; ++r) {
                bad |= ~finite_lanes(fk[r]);
                store_lanes(f, nf, 6 * k + r, fk[r], count);
            }
        if (par >= 0) {
            vd fp[6];
            force_to_parent_plane(Xup + 12 * k, ws->plane[k], fk, fp);
            for (int r = 0; r < 6; ++r) fv[6 * par + r] += fp[r];
        }
    }
    return any_lane(bad);
}

const sd_lanes_kernel SD_LANES_KERNEL = {NL, lanes_forward_dynamics, lanes_inverse_dynamics};
