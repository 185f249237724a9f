/*
 * tests/loops/loops_oracle.h — the independent side of the closed-loop tests: dense linear algebra
 * written here (a cyclic Jacobi eigen-solver for symmetric matrices, so that pseudo-inverses do not
 * come from the LAPACK the library uses), Gdot u by Richardson-extrapolated central differences of
 * G(q(t)) u along q(t) = q (+) t u (u constant, so d/dt (G u) = Gdot u), and the dense solve of the
 * descriptor form 000 Eq 44 with minimum-norm multipliers.
 */
#ifndef SOADYN_TEST_LOOPS_ORACLE_H
#define SOADYN_TEST_LOOPS_ORACLE_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

/* Eigen-decomposition of the symmetric n x n A (destroyed): eigenvalues w, eigenvectors as columns
 * of V (row-major n x n), by cyclic Jacobi rotations. */
static inline void oracle_eigen(double *A, int n, double *w, double *V)
{
    for (int i = 0; i < n * n; ++i) V[i] = (i % (n + 1)) == 0;
    for (int sweep = 0; sweep < 100; ++sweep) {
        double off = 0.0, diag = 0.0;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                if (i == j) diag += A[i * n + j] * A[i * n + j];
                else off += A[i * n + j] * A[i * n + j];
            }
        if (off <= 1e-32 * diag || off == 0.0) break;
        for (int p = 0; p < n; ++p)
            for (int q = p + 1; q < n; ++q) {
                const double apq = A[p * n + q];
                if (apq == 0.0) continue;
                const double theta = (A[q * n + q] - A[p * n + p]) / (2.0 * apq);
                const double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                const double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (int k = 0; k < n; ++k) { /* A = J^T A J */
                    const double akp = A[k * n + p], akq = A[k * n + q];
                    A[k * n + p] = c * akp - s * akq;
                    A[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; ++k) {
                    const double apk = A[p * n + k], aqk = A[q * n + k];
                    A[p * n + k] = c * apk - s * aqk;
                    A[q * n + k] = s * apk + c * aqk;
                }
                for (int k = 0; k < n; ++k) {
                    const double vkp = V[k * n + p], vkq = V[k * n + q];
                    V[k * n + p] = c * vkp - s * vkq;
                    V[k * n + q] = s * vkp + c * vkq;
                }
            }
    }
    for (int i = 0; i < n; ++i) w[i] = A[i * n + i];
}

/* x = A^+ b for symmetric positive semi-definite A (n x n, kept), eigenvalues below
 * rel * max(largest, ref) dropped; returns the rank. */
static inline int oracle_pinv_solve_cond(const double *A, int n, const double *b, double *x, double rel, double ref,
                                         double *cond, int *ambiguous)
{
    double *T = malloc((size_t)(n * n + n * n + n) * sizeof(double) + 8), *V = T + n * n, *w = V + n * n;
    memcpy(T, A, (size_t)n * n * sizeof(double));
    oracle_eigen(T, n, w, V);
    double wmax = ref;
    for (int i = 0; i < n; ++i) wmax = fmax(wmax, fabs(w[i]));
    int rank = 0;
    double wkept = INFINITY, wtop = 0.0;
    for (int i = 0; i < n; ++i) x[i] = 0.0;
    for (int e = 0; e < n; ++e) {
        if (!(w[e] > rel * wmax)) continue;
        ++rank;
        wkept = fmin(wkept, w[e]);
        wtop = fmax(wtop, w[e]);
        double vb = 0.0;
        for (int i = 0; i < n; ++i) vb += V[i * n + e] * b[i];
        for (int i = 0; i < n; ++i) x[i] += V[i * n + e] * vb / w[e];
    }
    if (cond) *cond = rank ? wtop / wkept : 1.0;
    if (ambiguous) { /* an eigenvalue within three decades of the threshold: the rank is a judgement */
        *ambiguous = 0;
        for (int e = 0; e < n; ++e)
            if (w[e] > 1e-3 * rel * wmax && w[e] < 1e3 * rel * wmax) *ambiguous = 1;
    }
    free(T);
    return rank;
}

static inline int oracle_pinv_solve(const double *A, int n, const double *b, double *x, double rel, double ref)
{
    return oracle_pinv_solve_cond(A, n, b, x, rel, ref, NULL, NULL);
}

/* Gdot u by central differences of G(q (+) t u) u at t = +-h, +-h/2, Richardson-extrapolated
 * (error O(h^4)). */
static inline int oracle_gdot_u(const sd_model *m, sd_data *d, const double *q, const double *u, double h,
                                double *out)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), nc = sd_model_nconstraint_rows(m);
    double *qt = malloc((size_t)nq * sizeof(double)), *G = malloc((size_t)(nc * nv + 1) * sizeof(double));
    double *y = calloc((size_t)(4 * nc + 1), sizeof(double));
    const double t[4] = {h, -h, h / 2, -h / 2};
    int ok = 1;
    for (int s = 0; s < 4 && ok; ++s) {
        sd_configuration_integrate(m, q, u, t[s], qt);
        ok = sd_constraint_jacobian(m, d, qt, G) == SD_OK;
        for (int i = 0; i < nc; ++i) {
            double v = 0.0;
            for (int j = 0; j < nv; ++j) v += G[i * nv + j] * u[j];
            y[s * nc + i] = v;
        }
    }
    for (int i = 0; i < nc; ++i) {
        const double dh = (y[i] - y[nc + i]) / (2 * h), dh2 = (y[2 * nc + i] - y[3 * nc + i]) / h;
        out[i] = (4.0 * dh2 - dh) / 3.0;
    }
    free(qt);
    free(G);
    free(y);
    return ok;
}

/* The descriptor system 000 Eq 44 solved densely: with M, C - tau (rhs = tau - C), G and Gdot u,
 * lambda = -(G M^-1 G*)^+ (G M^-1 rhs + Gdot u) (minimum norm), qdd = M^-1 (rhs + G* lambda).
 * Returns the rank of G M^-1 G*; *residual receives max |G qdd + Gdot u| / scale, *cond the
 * condition number of G M^-1 G* on its range, *ambiguous whether an eigenvalue lies so near the
 * rank threshold that another judge of rank could differ. */
static inline int oracle_descriptor_solve(const double *M, const double *rhs, const double *G, const double *gdu,
                                          int nv, int nc, double *qdd, double *lambda, double *residual,
                                          double *cond, int *ambiguous)
{
    double *Minv = malloc((size_t)(nv * nv) * sizeof(double)), *W = malloc((size_t)(nv * nv) * sizeof(double));
    double *MG = malloc((size_t)(nv * nc + 1) * sizeof(double)), *S = malloc((size_t)(nc * nc + 1) * sizeof(double));
    double *g = malloc((size_t)(nc + nv + 1) * sizeof(double)), *Mr = g + nc;
    /* M^-1 by eigen-decomposition too (M is symmetric positive definite) */
    double *V = malloc((size_t)(nv * nv) * sizeof(double)), *w = malloc((size_t)nv * sizeof(double));
    memcpy(W, M, (size_t)(nv * nv) * sizeof(double));
    oracle_eigen(W, nv, w, V);
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j) {
            double s = 0.0;
            for (int k = 0; k < nv; ++k) s += V[i * nv + k] * V[j * nv + k] / w[k];
            Minv[i * nv + j] = s;
        }
    for (int i = 0; i < nv; ++i) { /* Mr = M^-1 rhs */
        double s = 0.0;
        for (int j = 0; j < nv; ++j) s += Minv[i * nv + j] * rhs[j];
        Mr[i] = s;
    }
    for (int i = 0; i < nv; ++i) /* MG = M^-1 G* */
        for (int c = 0; c < nc; ++c) {
            double s = 0.0;
            for (int j = 0; j < nv; ++j) s += Minv[i * nv + j] * G[c * nv + j];
            MG[i * nc + c] = s;
        }
    for (int a = 0; a < nc; ++a) {
        for (int b = 0; b < nc; ++b) {
            double s = 0.0;
            for (int j = 0; j < nv; ++j) s += G[a * nv + j] * MG[j * nc + b];
            S[a * nc + b] = s;
        }
        double s = gdu[a];
        for (int j = 0; j < nv; ++j) s += G[a * nv + j] * Mr[j];
        g[a] = -s;
    }
    /* rank judged against the size of a unit row's compliance, 1 / (smallest eigenvalue of M), so
     * that a constraint whose two sides cancel (G of round-off) has rank 0 */
    double wmin = INFINITY; /* (not w[0]: GCC without LTO warns it may be unset when nv is 0) */
    for (int i = 0; i < nv; ++i) wmin = fmin(wmin, w[i]);
    const int rank = oracle_pinv_solve_cond(S, nc, g, lambda, 1e-10, 1.0 / wmin, cond, ambiguous);
    for (int i = 0; i < nv; ++i) {
        double s = Mr[i];
        for (int c = 0; c < nc; ++c) s += MG[i * nc + c] * lambda[c];
        qdd[i] = s;
    }
    double worst = 0.0, scale = 1e-300;
    for (int a = 0; a < nc; ++a) {
        double s = gdu[a];
        for (int j = 0; j < nv; ++j) s += G[a * nv + j] * qdd[j];
        worst = fmax(worst, fabs(s));
        scale = fmax(scale, fabs(gdu[a]));
    }
    *residual = worst / fmax(scale, 1.0);
    free(Minv);
    free(W);
    free(MG);
    free(S);
    free(g);
    free(V);
    free(w);
    return rank;
}

/* Add to f_ext (body frames, about body origins) the wrench [n; f] (world axes) applied at the
 * world point p of `body`, with world placement X. */
static inline void oracle_add_wrench(const sd_transform *X, int body, const double p[3], const double n[3],
                                     const double f[3], double *f_ext)
{
    double r[3] = {p[0] - X->p[0], p[1] - X->p[1], p[2] - X->p[2]}, rf[3], nw[3];
    sd_v3_cross(r, f, rf);
    for (int i = 0; i < 3; ++i) nw[i] = n[i] + rf[i];
    double nb[3], fb[3];
    sd_m3t_mul_v(X->R, nw, nb);
    sd_m3t_mul_v(X->R, f, fb);
    for (int i = 0; i < 3; ++i) {
        f_ext[6 * body + i] += nb[i];
        f_ext[6 * body + 3 + i] += fb[i];
    }
}

#endif /* SOADYN_TEST_LOOPS_ORACLE_H */
