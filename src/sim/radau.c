/*
 * src/sim/radau.c — fixed-step Radau IIA, 3 stages (order 5, L-stable, stiffly accurate; Hairer and
 * Wanner, Solving Ordinary Differential Equations II, Sec. IV.5 and IV.8), with simplified Newton
 * iterations on the Jacobian of the right-hand side.
 *
 * Each step starts a chart at q_n (delta = 0), y0 = [0; u_n] as RK4 does (rk4.c), and solves the
 * stage equations for the increments Z_i = Y_i - y0 (i = 1..3):
 *     Z_i = h sum_j a_ij f(t + c_j h, y0 + Z_j)
 * by simplified Newton (Hairer-Wanner IV.8, Eq. 8.2 with the Jacobian frozen over the step):
 *     (I - h A (x) J) dZ = -(Z - h (A (x) I) F(Z)),   Z <- Z + dZ,
 * J = d f / d y at (t, y0): the analytical one of jacobian.c, or forward differences of f (one
 * evaluation per state entry) where the derivatives are not offered. The 3m x 3m system is solved as
 * Hairer and Wanner do (IV.8, Eq. 8.16-8.19): with A^-1 = T Lambda T^-1 (one real eigenvalue gamma,
 * one complex pair alpha -+ i beta) and W = (T^-1 (x) I) Z, it splits into one real and one complex
 * m x m system,
 *     (gamma / h I - J) dW1 = r1,   ((alpha - i beta) / h I - J) (dW2 + i dW3) = r2 + i r3,
 *     r = (T^-1 (x) I) F(Z) - (Lambda / h (x) I) W,   dZ = (T (x) I) dW,
 * factored once per step (LAPACK dgetrf, zgetrf): about a fifth of the 3m x 3m factorisation's cost,
 * the same iterates. The iteration stops when the estimated remaining error
 * theta / (1 - theta) |dZ| (theta the contraction rate, IV.8 Eq. 8.10) falls below NEWTON_TOL, scaled
 * by 1 + |y0|; it is refused (SD_E_SOLVER, "take a smaller dt") when it does not contract or runs
 * out of iterations. Then y_{n+1} = y0 + Z_3 (c_3 = 1, b = the last row of A), and
 * q_{n+1} = q_n (+) delta_{n+1}.
 * There is no error control: dt is the step, as for RK4. Storage is made once by sim_radau_run.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"
/* after soadyn's headers: lapacke.h brings <complex.h> */
#include <lapacke.h>

#define NEWTON_TOL 1e-12  /* relative to 1 + |y0| per entry */
#define NEWTON_MAX_ITER 12

/* The Radau IIA tableau, s = 3 (Hairer-Wanner Table IV.5.6). */
#define SQ6 2.449489742783178098197284074705891391965947480656670128432692567
static const double radau_c[3] = {(4.0 - SQ6) / 10.0, (4.0 + SQ6) / 10.0, 1.0};
static const double radau_a[3][3] = {
    {(88.0 - 7.0 * SQ6) / 360.0, (296.0 - 169.0 * SQ6) / 1800.0, (-2.0 + 3.0 * SQ6) / 225.0},
    {(296.0 + 169.0 * SQ6) / 1800.0, (88.0 + 7.0 * SQ6) / 360.0, (-2.0 - 3.0 * SQ6) / 225.0},
    {(16.0 - SQ6) / 36.0, (16.0 + SQ6) / 36.0, 1.0 / 9.0}};

/* A^-1 = T Lambda T^-1, Lambda = [gamma 0 0; 0 alpha beta; 0 -beta alpha] (T's columns: the real
 * eigenvector, then the real and imaginary parts of the eigenvector of alpha + i beta). */
typedef struct radau_transform {
    double T[3][3], Tinv[3][3];
    double gamma, alpha, beta;
} radau_transform;

typedef struct radau_work {
    int m;                   /* state entries nv + nu */
    double *y0, *Z, *W, *dW; /* m, 3m, 3m, 3m */
    double *F;               /* 3m: f at the three stages */
    double *y, *f0, *f1;     /* m each: a stage's state, f at y0 and at a perturbed y0 (differences) */
    double *J;               /* m x m, column-major */
    double *E1;              /* m x m: gamma / h I - J, then its LU factors */
    lapack_complex_double *E2, *x; /* m x m: (alpha - i beta) / h I - J, then its LU factors; m: dW2 + i dW3 */
    lapack_int *ipiv;        /* 2m */
    radau_transform tr;
    sim_jacobian jac;        /* the analytical Jacobian's storage (when it is the one used) */
} radau_work;

static void radau_free(radau_work *w)
{
    free(w->y0);
    free(w->E2);
    free(w->ipiv);
    sim_jacobian_release(&w->jac);
}

/* The inverse of a 3 x 3 matrix by cofactors; 0 if it is singular. */
static int invert3(double a[3][3], double inv[3][3])
{
    const double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                       a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                       a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    if (det == 0.0 || !isfinite(det)) return 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            const int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
            inv[i][j] = (a[r0][c0] * a[r1][c1] - a[r0][c1] * a[r1][c0]) / det; /* cofactor of a[j][i] */
        }
    return 1;
}

/* T, T^-1 and the eigenvalues of A^-1 (LAPACK dgeev on the 3 x 3 matrix). */
static int radau_transform_init(radau_transform *tr)
{
    double a[3][3], ainv[3][3], m[9], wr[3], wi[3], vr[9];
    memcpy(a, radau_a, sizeof(a));
    if (!invert3(a, ainv)) return 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) m[j * 3 + i] = ainv[i][j]; /* column-major */
    if (LAPACKE_dgeev(LAPACK_COL_MAJOR, 'N', 'V', 3, m, 3, wr, wi, NULL, 3, vr, 3) != 0) return 0;
    int real = -1, pair = -1;
    for (int k = 0; k < 3; ++k) {
        if (wi[k] == 0.0) real = k;
        else if (wi[k] > 0.0) pair = k; /* its eigenvector is vr[:, k] + i vr[:, k + 1] */
    }
    if (real < 0 || pair < 0 || pair == 2) return 0;
    for (int i = 0; i < 3; ++i) {
        tr->T[i][0] = vr[real * 3 + i];
        tr->T[i][1] = vr[pair * 3 + i];
        tr->T[i][2] = vr[(pair + 1) * 3 + i];
    }
    tr->gamma = wr[real];
    tr->alpha = wr[pair];
    tr->beta = wi[pair];
    return invert3(tr->T, tr->Tinv);
}

static sd_status radau_alloc(radau_work *w, int nv, int nu, int analytic)
{
    memset(w, 0, sizeof(*w));
    const int m = nv + nu;
    w->m = m;
    const size_t mm = (size_t)(m > 0 ? m : 1);
    /* one block: y0 m, Z 3m, W 3m, dW 3m, F 3m, y m, f0 m, f1 m, J m^2, E1 m^2 */
    w->y0 = malloc(sizeof(double) * (16 * mm + 2 * mm * mm));
    w->E2 = malloc(sizeof(lapack_complex_double) * (mm * mm + mm));
    w->ipiv = malloc(sizeof(lapack_int) * 2 * mm);
    if (!w->y0 || !w->E2 || !w->ipiv || (analytic && sim_jacobian_init(&w->jac, nv) != SD_OK))
        return SD_E_MEMORY; /* the caller frees what was made (radau_free) */
    w->Z = w->y0 + mm;
    w->W = w->Z + 3 * mm;
    w->dW = w->W + 3 * mm;
    w->F = w->dW + 3 * mm;
    w->y = w->F + 3 * mm;
    w->f0 = w->y + mm;
    w->f1 = w->f0 + mm;
    w->J = w->f1 + mm;
    w->E1 = w->J + mm * mm;
    w->x = w->E2 + mm * mm;
    return radau_transform_init(&w->tr) ? SD_OK : SD_E_SOLVER;
}

/* J at (t, q0, y0) by forward differences of f: column j = (f(y0 + eps_j e_j) - f(y0)) / eps_j. */
static sd_status difference_jacobian(sim_rhs *rhs, radau_work *w, double t, const double *q0)
{
    const int m = w->m;
    sd_status st = sim_rhs_eval(rhs, t, q0, w->y0, w->f0);
    memcpy(w->y, w->y0, sizeof(double) * (size_t)m);
    for (int j = 0; j < m && st == SD_OK; ++j) {
        const double eps = sqrt(DBL_EPSILON) * fmax(1.0, fabs(w->y0[j]));
        w->y[j] = w->y0[j] + eps;
        st = sim_rhs_eval(rhs, t, q0, w->y, w->f1);
        w->y[j] = w->y0[j];
        for (int i = 0; i < m; ++i) w->J[(size_t)j * (size_t)m + (size_t)i] = (w->f1[i] - w->f0[i]) / eps;
    }
    return st;
}

/* The two Newton matrices of the step, factored: E1 = gamma / h I - J (real), E2 = (alpha - i beta) / h
 * I - J (complex). 0 if either is singular. */
static int newton_matrices(radau_work *w, double h)
{
    const int m = w->m;
    const radau_transform *tr = &w->tr;
    for (int c = 0; c < m; ++c)
        for (int r = 0; r < m; ++r) {
            const size_t k = (size_t)c * (size_t)m + (size_t)r;
            const double diag = r == c ? 1.0 : 0.0;
            w->E1[k] = diag * tr->gamma / h - w->J[k];
            w->E2[k] = lapack_make_complex_double(diag * tr->alpha / h - w->J[k], -diag * tr->beta / h);
        }
    return LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, m, w->E1, m, w->ipiv) == 0 &&
           LAPACKE_zgetrf_work(LAPACK_COL_MAJOR, m, m, w->E2, m, w->ipiv + m) == 0;
}

/* dW = the Newton correction in the transformed variables: r = (T^-1 (x) I) F - (Lambda / h (x) I) W,
 * then the real and the complex solve. */
static void newton_correction(radau_work *w, double h)
{
    const int m = w->m;
    const radau_transform *tr = &w->tr;
    for (int k = 0; k < m; ++k) {
        const double w1 = w->W[k], w2 = w->W[m + k], w3 = w->W[2 * m + k];
        double r[3];
        for (int i = 0; i < 3; ++i)
            r[i] = tr->Tinv[i][0] * w->F[k] + tr->Tinv[i][1] * w->F[m + k] + tr->Tinv[i][2] * w->F[2 * m + k];
        w->dW[k] = r[0] - tr->gamma / h * w1;
        w->x[k] = lapack_make_complex_double(r[1] - (tr->alpha * w2 + tr->beta * w3) / h,
                                             r[2] - (-tr->beta * w2 + tr->alpha * w3) / h);
    }
    LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', m, 1, w->E1, m, w->ipiv, w->dW, m);
    LAPACKE_zgetrs_work(LAPACK_COL_MAJOR, 'N', m, 1, w->E2, m, w->ipiv + m, w->x, m);
    for (int k = 0; k < m; ++k) {
        w->dW[m + k] = creal(w->x[k]);
        w->dW[2 * m + k] = cimag(w->x[k]);
    }
}

/* One step of length h from (q, u) at t: q and u (the state's nu speeds) replaced by the new state.
 * *failed_why says what went wrong on SD_E_SOLVER. */
static sd_status radau_step(sim_run *run, radau_work *w, double t, double h, double *q, double *u,
                            const char **failed_why)
{
    sim_rhs *rhs = &run->rhs;
    const int nv = rhs->nv, nu = rhs->nu, m = w->m, n = 3 * m;
    memset(w->y0, 0, sizeof(double) * (size_t)nv); /* delta = 0: the chart is based at q_n */
    memcpy(w->y0 + nv, u, sizeof(double) * (size_t)nu);
    sd_status st = run->jacobian == SD_SIM_JACOBIAN_ANALYTIC ? sim_jacobian_eval(&w->jac, rhs, t, q, w->y0, w->J)
                                                             : difference_jacobian(rhs, w, t, q);
    if (st != SD_OK) return st;
    ++run->stats.jacobian_evals;
    if (!newton_matrices(w, h)) {
        *failed_why = "a Newton matrix (gamma / h I - J or its complex pair's) is singular";
        return SD_E_SOLVER;
    }
    memset(w->Z, 0, sizeof(double) * (size_t)n);
    memset(w->W, 0, sizeof(double) * (size_t)n);
    double prev = 0.0;
    for (int it = 0; it < NEWTON_MAX_ITER; ++it) {
        for (int i = 0; i < 3 && st == SD_OK; ++i) {
            for (int k = 0; k < m; ++k) w->y[k] = w->y0[k] + w->Z[i * m + k];
            st = sim_rhs_eval(rhs, t + radau_c[i] * h, q, w->y, w->F + i * m);
        }
        if (st != SD_OK) return st;
        newton_correction(w, h);
        double norm = 0.0;
        for (int k = 0; k < m; ++k) {
            for (int i = 0; i < 3; ++i) {
                const double dz = w->tr.T[i][0] * w->dW[k] + w->tr.T[i][1] * w->dW[m + k] +
                                  w->tr.T[i][2] * w->dW[2 * m + k]; /* dZ = (T (x) I) dW */
                w->Z[i * m + k] += dz;
                norm = fmax(norm, fabs(dz) / (1.0 + fabs(w->y0[k])));
            }
            for (int i = 0; i < 3; ++i) w->W[i * m + k] += w->dW[i * m + k];
        }
        if (!isfinite(norm)) {
            *failed_why = "the Newton iterations diverged";
            return SD_E_SOLVER;
        }
        if (norm <= NEWTON_TOL) break;
        if (it > 0) {
            const double theta = norm / prev;
            if (theta >= 1.0) {
                *failed_why = "the Newton iterations do not contract";
                return SD_E_SOLVER;
            }
            if (theta / (1.0 - theta) * norm <= NEWTON_TOL) break;
        }
        if (it == NEWTON_MAX_ITER - 1) {
            *failed_why = "the Newton iterations did not converge";
            return SD_E_SOLVER;
        }
        prev = norm;
    }
    for (int k = 0; k < m; ++k) w->y[k] = w->y0[k] + w->Z[2 * m + k]; /* stiffly accurate: b = a_3j */
    sim_chart_apply(&rhs->chart, q, w->y, rhs->q);
    memcpy(q, rhs->q, sizeof(double) * (size_t)rhs->nq);
    memcpy(u, w->y + nv, sizeof(double) * (size_t)nu);
    return SD_OK;
}

/* sim_step_fn of the fixed-step driver (simulate.c). */
static sd_status radau_driver_step(void *w, sim_run *run, double t, double h, sd_error *err)
{
    const char *why = NULL;
    const sd_status st = radau_step(run, w, t, h, run->q, run->us, &why);
    if (st == SD_E_SOLVER)
        return sd_error_set(err, st, "Radau IIA step at t = %.9g, h = %.3g: %s; take a smaller dt", t, h, why);
    if (st != SD_OK) return sd_error_set(err, st, "Radau IIA step at t = %.9g: %s", t, sim_rhs_error(&run->rhs));
    return SD_OK;
}

sd_status sim_radau_run(sim_run *run, sd_error *err)
{
    radau_work w;
    const sd_status a = radau_alloc(&w, run->rhs.nv, run->rhs.nu, run->jacobian == SD_SIM_JACOBIAN_ANALYTIC);
    if (a != SD_OK) {
        radau_free(&w);
        return sd_error_set(err, a, a == SD_E_MEMORY ? "out of memory setting up Radau IIA"
                                                     : "Radau IIA: the eigen-decomposition of its matrix A^-1 failed");
    }
    const sd_status st = sim_fixed_step_run(run, radau_driver_step, &w, err);
    radau_free(&w);
    return st;
}
