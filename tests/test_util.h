/*
 * tests/test_util.h — the few checks every test uses. Each failed check prints what it compared
 * (expression, values, tolerance, file:line) and counts; a test's main() ends with
 * `return test_summary("name");`, which prints "N passed, N failed" and returns nonzero on failure.
 */
#ifndef SOADYN_TEST_UTIL_H
#define SOADYN_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* 1 when the build fuses a * b + c into one rounding (a processor with FMA and CMakeLists.txt's
 * -ffp-contract=fast): checks that hold bit for bit otherwise allow a few ulp then. */
#if defined(__FP_FAST_FMA) || defined(__FMA__)
#define TEST_FUSED 1
#else
#define TEST_FUSED 0
#endif

static int test_passed_count = 0;
static int test_failed_count = 0;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (cond) {                                                                      \
            ++test_passed_count;                                                         \
        } else {                                                                         \
            ++test_failed_count;                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);     \
        }                                                                                \
    } while (0)

/* |a - b| <= tol * max(1, |a|, |b|): relative for large values, absolute near zero. */
#define CHECK_CLOSE(a, b, tol) test_check_close((a), (b), (tol), #a, #b, __FILE__, __LINE__)

static inline int test_check_close(double a, double b, double tol, const char *ea, const char *eb,
                                   const char *file, int line)
{
    double scale = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    if (scale < 1.0) scale = 1.0;
    if (fabs(a - b) <= tol * scale && !isnan(a) && !isnan(b)) {
        ++test_passed_count;
        return 1;
    }
    ++test_failed_count;
    fprintf(stderr, "%s:%d: CHECK_CLOSE failed: %s = %.17g vs %s = %.17g (diff %.3g, tol %.3g)\n", file,
            line, ea, a, eb, b, fabs(a - b), tol * scale);
    return 0;
}

/* Largest relative difference of two arrays: max|a - b| / max(1, max|b|). */
static inline double test_rel_diff(const double *a, const double *b, int n)
{
    double num = 0.0, den = 1.0;
    for (int i = 0; i < n; ++i) {
        double d = fabs(a[i] - b[i]);
        if (isnan(d)) return INFINITY;
        if (d > num) num = d;
        if (fabs(b[i]) > den) den = fabs(b[i]);
    }
    return num / den;
}

/* Check two arrays agree to a relative tolerance; prints the worst entry on failure. */
#define CHECK_ARRAY_CLOSE(a, b, n, tol, what) test_check_array((a), (b), (n), (tol), (what), __FILE__, __LINE__)

static inline int test_check_array(const double *a, const double *b, int n, double tol, const char *what,
                                   const char *file, int line)
{
    double err = test_rel_diff(a, b, n);
    if (err <= tol) {
        ++test_passed_count;
        return 1;
    }
    int worst = 0;
    double wd = -1.0;
    for (int i = 0; i < n; ++i)
        if (!(fabs(a[i] - b[i]) <= wd)) { wd = fabs(a[i] - b[i]); worst = i; }
    ++test_failed_count;
    fprintf(stderr, "%s:%d: %s: relative difference %.3g > %.3g (worst entry %d: %.17g vs %.17g)\n", file,
            line, what, err, tol, worst, a[worst], b[worst]);
    return 0;
}

/* An estimate of the 2-norm condition number of a symmetric positive definite A (row-major n x n)
 * with Cholesky factor L: power iteration for the largest eigenvalue, inverse iteration (through
 * L) for the smallest. Two exact algorithms agree on a solve only to about cond(A) eps, so tests
 * on large ill-conditioned random trees let their tolerance grow past cond ~ 1e5 with
 * test_cond_tolerance(). */
static inline double test_cond_estimate(const double *A, const double *L, int n)
{
    if (n == 0) return 1.0;
    double *x = malloc((size_t)n * sizeof(double)), *y = malloc((size_t)n * sizeof(double));
    double lmax = 0, lmin_inv = 0;
    for (int pass = 0; pass < 2; ++pass) {
        for (int i = 0; i < n; ++i) x[i] = 1.0 + 0.1 * (i % 7);
        double lambda = 0;
        for (int it = 0; it < 60; ++it) {
            double norm = 0;
            for (int i = 0; i < n; ++i) norm += x[i] * x[i];
            norm = sqrt(norm);
            for (int i = 0; i < n; ++i) x[i] /= norm;
            if (pass == 0) {
                for (int i = 0; i < n; ++i) {
                    double s = 0;
                    for (int j = 0; j < n; ++j) s += A[i * n + j] * x[j];
                    y[i] = s;
                }
            } else { /* y = A^-1 x = L^-T L^-1 x */
                for (int i = 0; i < n; ++i) {
                    double s = x[i];
                    for (int k = 0; k < i; ++k) s -= L[i * n + k] * y[k];
                    y[i] = s / L[i * n + i];
                }
                for (int i = n - 1; i >= 0; --i) {
                    double s = y[i];
                    for (int k = i + 1; k < n; ++k) s -= L[k * n + i] * y[k];
                    y[i] = s / L[i * n + i];
                }
            }
            lambda = 0;
            for (int i = 0; i < n; ++i) lambda += x[i] * y[i];
            for (int i = 0; i < n; ++i) x[i] = y[i];
        }
        if (pass == 0) lmax = lambda;
        else lmin_inv = lambda;
    }
    free(x);
    free(y);
    return lmax * lmin_inv;
}

static inline double test_cond_tolerance(double tol, double cond) { return tol * fmax(1.0, cond / 1e5); }

static inline int test_summary(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, test_passed_count, test_failed_count);
    return test_failed_count == 0 ? 0 : 1;
}

/* The whole of a text file, NUL-terminated (malloc'd; NULL when it cannot be read). */
static inline char *test_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

#endif /* SOADYN_TEST_UTIL_H */
