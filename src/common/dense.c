/*
 * src/common/dense.c — the small dense linear algebra soadyn needs: Cholesky factorisation, solves, log
 * determinant and the inverse of a symmetric positive definite matrix, and the mirroring of a
 * symmetric result's triangle. Sizes here are a hinge's
 * D(k) (at most 6 x 6), a task-space compliance, or the whole mass matrix in the O(N^3) reference
 * path; a BLAS would not pay for itself at these sizes.
 */
#include <math.h>

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

SD_NOINLINE int sd_mirror_lower(double *A, int n)
{
    /* Copied in 32 x 32 tiles so that both triangles stay in cache on large matrices. The check
     * that every entry is finite is one vectorised pass when the matrix is in cache anyway (64 x 64
     * is 32 KiB); past that, a second pass over memory would cost as much as the copy, so each row
     * of a tile is checked right after it is copied. */
    const int by_tile = n > 64;
    int finite = 1;
    for (int ib = 0; ib < n; ib += 32)
        for (int jb = 0; jb <= ib; jb += 32)
            for (int i = ib; i < ib + 32 && i < n; ++i) {
                const int jend = jb + 32 < i ? jb + 32 : i; /* the strict lower part of the row's tile */
                const double *row = A + (size_t)i * n;
                double *col = A + (size_t)jb * n + i;
                for (int j = jb; j < jend; ++j, col += n) *col = row[j];
                if (by_tile) finite &= sd_all_finite(row + jb, (size_t)(jend - jb + (jend == i)));
            }
    return by_tile ? finite : sd_all_finite(A, (size_t)n * (size_t)n);
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
