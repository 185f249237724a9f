/*
 * src/common/dense.c — the small dense linear algebra soadyn needs: Cholesky factorisation, solves, log
 * determinant and the inverse of a symmetric positive definite matrix, and the mirroring of a
 * symmetric result's triangle. Sizes here are a hinge's
 * D(k) (at most 6 x 6), a task-space compliance, or the whole mass matrix in the O(N^3) reference
 * path; a BLAS would not pay for itself at these sizes.
 */
#include <math.h>
#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "internal.h"

int sd_cholesky_factor(double *A, int n, double min_pivot)
{
    for (int j = 0; j < n; ++j) {
        double djj = A[j * n + j];
        for (int k = 0; k < j; ++k) djj -= A[j * n + k] * A[j * n + k];
        if (!(djj > min_pivot)) return j; /* also catches NaN */
        const double ljj = sqrt(djj);
        A[j * n + j] = ljj;
        for (int i = j + 1; i < n; ++i) {
            double s = A[i * n + j];
            for (int k = 0; k < j; ++k) s -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = s / ljj;
        }
    }
    return -1;
}

void sd_cholesky_solve(const double *L, int n, double *x)
{
    for (int i = 0; i < n; ++i) { /* L y = b */
        double s = x[i];
        for (int k = 0; k < i; ++k) s -= L[i * n + k] * x[k];
        x[i] = s / L[i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) { /* L^T x = y */
        double s = x[i];
        for (int k = i + 1; k < n; ++k) s -= L[k * n + i] * x[k];
        x[i] = s / L[i * n + i];
    }
}

double sd_cholesky_logdet(const double *L, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; ++i) s += 2.0 * log(L[i * n + i]);
    return s;
}

void sd_cholesky_inverse(double *A, int n)
{
    /* A holds L (lower). First L^-1 in place (lower), then A^-1 = L^-T L^-1, both triangles. */
    for (int j = 0; j < n; ++j) {
        A[j * n + j] = 1.0 / A[j * n + j];
        for (int i = j + 1; i < n; ++i) {
            double s = 0.0;
            for (int k = j; k < i; ++k) s -= A[i * n + k] * A[k * n + j];
            A[i * n + j] = s / A[i * n + i];
        }
    }
    for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) {
            double s = 0.0;
            for (int k = i; k < n; ++k) s += A[k * n + i] * A[k * n + j];
            A[j * n + i] = s; /* upper triangle first: row i of the lower part is still needed */
        }
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < i; ++j) A[i * n + j] = A[j * n + i];
}

#if defined(__AVX__)
/* The transpose of the 4 x 4 block at src (rows of stride n): two unpacks and two lane permutes
 * per pair of rows. c[j] is the block's column j. */
static inline void tile4_columns(const double *src, size_t n, __m256d c[4])
{
    const __m256d r0 = _mm256_loadu_pd(src), r1 = _mm256_loadu_pd(src + n), r2 = _mm256_loadu_pd(src + 2 * n),
                  r3 = _mm256_loadu_pd(src + 3 * n);
    const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1), t2 = _mm256_unpacklo_pd(r2, r3),
                  t3 = _mm256_unpackhi_pd(r2, r3);
    c[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    c[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    c[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    c[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}
#endif

/* dst's 4 x 4 block (rows of stride n) = the transpose of src's: 16 entries in 4 loads, 8 shuffles
 * and 4 stores instead of 16 scalar copies (the scalar copy, ~9 instructions an entry with its
 * loops, was 62% of the 1000-link chain's M). */
static inline void mirror_tile4(const double *src, double *dst, size_t n)
{
#if defined(__AVX__)
    __m256d c[4];
    tile4_columns(src, n, c);
    for (size_t j = 0; j < 4; ++j) _mm256_storeu_pd(dst + j * n, c[j]);
#else
    for (size_t i = 0; i < 4; ++i)
        for (size_t j = 0; j < 4; ++j) dst[j * n + i] = src[i * n + j];
#endif
}

/* A 4 x 4 block on the diagonal: its strict upper part from its strict lower part, each row the
 * blend of the row (left of the diagonal and on it) and the transposed row (right of it). */
static inline void mirror_diagonal4(double *D, size_t n)
{
#if defined(__AVX__)
    __m256d c[4];
    tile4_columns(D, n, c);
    _mm256_storeu_pd(D, _mm256_blend_pd(_mm256_loadu_pd(D), c[0], 0xE));
    _mm256_storeu_pd(D + n, _mm256_blend_pd(_mm256_loadu_pd(D + n), c[1], 0xC));
    _mm256_storeu_pd(D + 2 * n, _mm256_blend_pd(_mm256_loadu_pd(D + 2 * n), c[2], 0x8));
#else
    for (size_t i = 1; i < 4; ++i)
        for (size_t j = 0; j < i; ++j) D[j * n + i] = D[i * n + j];
#endif
}

SD_NOINLINE void sd_mirror_lower_rows(double *A, int n, int r0, int r1)
{
    /* Rows in groups of 4 from r1 down. A group's strict lower part goes by 4 x 4 tiles from its
     * diagonal block leftwards (mirror_tile4); the columns left over at column 0 (fewer than 4) by
     * one more tile over columns 0-3, which copies a few entries twice with the same numbers; the
     * diagonal block by mirror_diagonal4. The rows left over are the block's lowest (the shortest
     * when r0 = 0), copied one by one. */
    const size_t N = (size_t)n;
    int i0 = r1 - 4;
    for (; i0 >= r0; i0 -= 4) {
        double *group = A + (size_t)i0 * N;
        int j = i0 - 4;
        for (; j >= 0; j -= 4) mirror_tile4(group + j, A + (size_t)j * N + i0, N);
        if (j > -4) { /* columns [0, j + 4) are left */
            if (i0 >= 4) mirror_tile4(group, A + i0, N);
            else
                for (int i = i0; i < i0 + 4; ++i)
                    for (int c = 0; c < j + 4; ++c) A[(size_t)c * N + i] = A[(size_t)i * N + c];
        }
        mirror_diagonal4(group + i0, N);
    }
    for (int i = r0; i < i0 + 4; ++i)
        for (int c = 0; c < i; ++c) A[(size_t)c * N + i] = A[(size_t)i * N + c];
}

int sd_mirror_upper(double *A, int n)
{
    /* Rows in groups of 4: the part right of the group's diagonal block by 4 x 4 tiles (the scalar
     * copy, ~9 instructions an entry, was ~28% of the 1000-link chain's M^-1 and 6000 instructions
     * of Talos's), the few entries next to the diagonal one by one. Finiteness is checked on the
     * upper rows as they are read (callgrind counts fewer instructions so than in one pass over the
     * whole matrix afterwards). */
    const size_t N = (size_t)n;
    int finite = 1, i0 = 0;
    for (; i0 + 4 <= n; i0 += 4) {
        for (int i = i0; i < i0 + 4; ++i) {
            finite &= sd_all_finite(A + (size_t)i * N + i, N - (size_t)i);
            for (int c = i + 1; c < i0 + 4; ++c) A[(size_t)c * N + i] = A[(size_t)i * N + c];
        }
        int j = i0 + 4;
        for (; j + 4 <= n; j += 4) mirror_tile4(A + (size_t)i0 * N + j, A + (size_t)j * N + i0, N);
        for (int i = i0; i < i0 + 4; ++i)
            for (int c = j; c < n; ++c) A[(size_t)c * N + i] = A[(size_t)i * N + c];
    }
    for (int i = i0; i < n; ++i) {
        finite &= sd_all_finite(A + (size_t)i * N + i, N - (size_t)i);
        for (int c = i + 1; c < n; ++c) A[(size_t)c * N + i] = A[(size_t)i * N + c];
    }
    return finite;
}

int sd_pivoted_cholesky(double *A, int n, double rtol, int *piv, int *bad)
{
    double scale = 0.0;
    for (int i = 0; i < n * n; ++i)
        if (fabs(A[i]) > scale) scale = fabs(A[i]);
    const double tol = rtol * scale;
    for (int i = 0; i < n; ++i) piv[i] = i;
    *bad = -1;
    int k = 0;
    for (; k < n; ++k) {
        int p = k; /* the largest remaining diagonal: the best conditioned direction left */
        for (int i = k + 1; i < n; ++i)
            if (A[i * n + i] > A[p * n + p]) p = i;
        if (!(A[p * n + p] > tol)) break;
        if (p != k) { /* symmetric swap of rows and columns k and p */
            for (int j = 0; j < n; ++j) { const double t = A[k * n + j]; A[k * n + j] = A[p * n + j]; A[p * n + j] = t; }
            for (int i = 0; i < n; ++i) { const double t = A[i * n + k]; A[i * n + k] = A[i * n + p]; A[i * n + p] = t; }
            const int t = piv[k]; piv[k] = piv[p]; piv[p] = t;
        }
        const double l = sqrt(A[k * n + k]);
        A[k * n + k] = l;
        for (int i = k + 1; i < n; ++i) A[i * n + k] /= l;
        for (int i = k + 1; i < n; ++i) /* Schur complement, both triangles */
            for (int j = k + 1; j < n; ++j) A[i * n + j] -= A[i * n + k] * A[j * n + k];
    }
    /* The remainder of a semi-definite matrix has diagonals <= tol and |a_ij| <= sqrt(a_ii a_jj). */
    for (int i = k; i < n && *bad < 0; ++i) {
        const double aii = A[i * n + i];
        if (!(aii >= -tol)) { *bad = piv[i]; break; }
        for (int j = k; j < n; ++j) {
            const double ajj = A[j * n + j];
            if (j != i && !(fabs(A[i * n + j]) <= sqrt(fmax(aii, 0.0) * fmax(ajj, 0.0)) + tol)) { *bad = piv[i]; break; }
        }
    }
    return k;
}

void sd_sym3_eigen(const double A_in[9], double d[3], double V[9])
{
    double A[9];
    for (int i = 0; i < 9; ++i) A[i] = A_in[i];
    for (int i = 0; i < 9; ++i) V[i] = i % 4 == 0;
    for (int sweep = 0; sweep < 50; ++sweep) {
        const double off = A[1] * A[1] + A[2] * A[2] + A[5] * A[5];
        const double diag = A[0] * A[0] + A[4] * A[4] + A[8] * A[8];
        if (off <= 1e-32 * diag || off == 0.0) break;
        for (int p = 0; p < 2; ++p)
            for (int q = p + 1; q < 3; ++q) {
                const double apq = A[3 * p + q];
                if (apq == 0.0) continue;
                /* the rotation in (p, q) that zeroes A(p, q), its tangent the smaller root (stable) */
                const double theta = (A[3 * q + q] - A[3 * p + p]) / (2.0 * apq);
                const double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                const double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (int k = 0; k < 3; ++k) { /* A = J^T A J (columns, then rows), V = V J */
                    const double akp = A[3 * k + p], akq = A[3 * k + q];
                    A[3 * k + p] = c * akp - s * akq;
                    A[3 * k + q] = s * akp + c * akq;
                }
                for (int k = 0; k < 3; ++k) {
                    const double apk = A[3 * p + k], aqk = A[3 * q + k];
                    A[3 * p + k] = c * apk - s * aqk;
                    A[3 * q + k] = s * apk + c * aqk;
                }
                for (int k = 0; k < 3; ++k) {
                    const double vkp = V[3 * k + p], vkq = V[3 * k + q];
                    V[3 * k + p] = c * vkp - s * vkq;
                    V[3 * k + q] = s * vkp + c * vkq;
                }
            }
    }
    d[0] = A[0], d[1] = A[4], d[2] = A[8];
    const double det = V[0] * (V[4] * V[8] - V[5] * V[7]) - V[1] * (V[3] * V[8] - V[5] * V[6]) +
                       V[2] * (V[3] * V[7] - V[4] * V[6]);
    if (det < 0) /* Jacobi rotations keep det V = 1; kept explicit: callers turn V into a quaternion */
        for (int k = 0; k < 3; ++k) V[3 * k + 2] = -V[3 * k + 2];
}
