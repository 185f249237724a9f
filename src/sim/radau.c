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
 * evaluation per state entry) where the derivatives are not offered. The 3m x 3m matrix is factored
 * once per step (LAPACK dgetrf). The iteration stops when the estimated remaining error
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

typedef struct radau_work {
    int m;                 /* state entries nv + nu */
    double *y0, *Z, *dZ;   /* m, 3m, 3m */
    double *F;             /* 3m: f at the three stages */
    double *y, *f0, *f1;   /* m each: a stage's state, f at y0 and at a perturbed y0 (differences) */
    double *J;             /* m x m, column-major */
    double *E;             /* 3m x 3m, column-major: I - h A (x) J, then its LU factors */
    lapack_int *ipiv;      /* 3m */
    sim_jacobian jac;      /* the analytical Jacobian's storage (when it is the one used) */
} radau_work;

static void radau_free(radau_work *w)
{
    free(w->y0);
    free(w->ipiv);
    sim_jacobian_release(&w->jac);
}

static sd_status radau_alloc(radau_work *w, int nv, int nu, int analytic)
{
    memset(w, 0, sizeof(*w));
    const int m = nv + nu;
    w->m = m;
    const size_t mm = (size_t)(m > 0 ? m : 1);
    /* one block: y0 m, Z 3m, dZ 3m, F 3m, y m, f0 m, f1 m, J m^2, E 9 m^2 */
    w->y0 = malloc(sizeof(double) * (13 * mm + 10 * mm * mm));
    w->ipiv = malloc(sizeof(lapack_int) * 3 * mm);
    if (!w->y0 || !w->ipiv || (analytic && sim_jacobian_init(&w->jac, nv) != SD_OK)) {
        radau_free(w);
        return SD_E_MEMORY;
    }
    w->Z = w->y0 + mm;
    w->dZ = w->Z + 3 * mm;
    w->F = w->dZ + 3 * mm;
    w->y = w->F + 3 * mm;
    w->f0 = w->y + mm;
    w->f1 = w->f0 + mm;
    w->J = w->f1 + mm;
    w->E = w->J + mm * mm;
    return SD_OK;
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

/* E = I - h A (x) J, column-major 3m x 3m: block (i, j) is delta_ij I - h a_ij J. */
static void newton_matrix(radau_work *w, double h)
{
    const int m = w->m, n = 3 * m;
    for (int bj = 0; bj < 3; ++bj)
        for (int c = 0; c < m; ++c) {
            double *col = w->E + (size_t)(bj * m + c) * (size_t)n;
            for (int bi = 0; bi < 3; ++bi)
                for (int r = 0; r < m; ++r)
                    col[bi * m + r] = (bi == bj && r == c ? 1.0 : 0.0) -
                                      h * radau_a[bi][bj] * w->J[(size_t)c * (size_t)m + (size_t)r];
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
    newton_matrix(w, h);
    if (LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, w->E, n, w->ipiv) != 0) {
        *failed_why = "the Newton matrix I - h A (x) J is singular";
        return SD_E_SOLVER;
    }
    memset(w->Z, 0, sizeof(double) * (size_t)n);
    double prev = 0.0;
    for (int it = 0; it < NEWTON_MAX_ITER; ++it) {
        for (int i = 0; i < 3 && st == SD_OK; ++i) {
            for (int k = 0; k < m; ++k) w->y[k] = w->y0[k] + w->Z[i * m + k];
            st = sim_rhs_eval(rhs, t + radau_c[i] * h, q, w->y, w->F + i * m);
        }
        if (st != SD_OK) return st;
        for (int i = 0; i < 3; ++i) /* dZ = -(Z - h (A (x) I) F), then solved in place */
            for (int k = 0; k < m; ++k) {
                double s = 0.0;
                for (int j = 0; j < 3; ++j) s += radau_a[i][j] * w->F[j * m + k];
                w->dZ[i * m + k] = h * s - w->Z[i * m + k];
            }
        LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', n, 1, w->E, n, w->ipiv, w->dZ, n);
        double norm = 0.0;
        for (int i = 0; i < 3; ++i)
            for (int k = 0; k < m; ++k) {
                w->Z[i * m + k] += w->dZ[i * m + k];
                norm = fmax(norm, fabs(w->dZ[i * m + k]) / (1.0 + fabs(w->y0[k])));
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
    if (radau_alloc(&w, run->rhs.nv, run->rhs.nu, run->jacobian == SD_SIM_JACOBIAN_ANALYTIC) != SD_OK)
        return sd_error_set(err, SD_E_MEMORY, "out of memory setting up Radau IIA");
    const sd_status st = sim_fixed_step_run(run, radau_driver_step, &w, err);
    radau_free(&w);
    return st;
}
