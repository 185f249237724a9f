/*
 * src/sim/cvode.c — error-controlled integration with SUNDIALS CVODE (BDF + Newton with a dense
 * Jacobian for stiff systems, Adams + fixed-point iterations for non-stiff ones). BDF's Jacobian is
 * the analytical one of jacobian.c (CVodeSetJacFn) or CVODE's own difference quotients, as
 * sim_jacobian_choose resolved sd_sim_options.jacobian (run->jacobian).
 *
 * CVODE's state is y = [delta; u] (u: the embedded speeds u_e with an embedding) on the chart q = q0 (+) delta of chart.c, so every q it produces
 * has exactly unit quaternions up to round-off. Output at t0 + k dt comes from CVODE's dense output
 * (CV_NORMAL interpolates; the internal steps are chosen by the error control). When a rotation in
 * delta passes REBASE_ANGLE at an output time, the chart is moved to the current q (q0 = q,
 * delta = 0) and CVODE restarted there; this keeps the chart far from its singularity at 2 pi.
 * CVODE's own messages go to our error handler (the library never prints).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "sim/sim_internal.h"

#define REBASE_ANGLE 0.5 /* rad */

typedef struct cv_ctx {
    SUNContext sun;
    void *mem;
    N_Vector y;
    SUNMatrix A;
    SUNLinearSolver LS;
    SUNNonlinearSolver NLS;
    sim_run *run;
    sim_jacobian jac;    /* storage of the analytical Jacobian (run->jacobian ANALYTIC) */
    double *q0;          /* base of the chart */
    sd_status rhs_status;
    char msg[256];       /* CVODE's last error message */
} cv_ctx;

static int cv_rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *user)
{
    cv_ctx *c = user;
    sd_status st = sim_rhs_eval(&c->run->rhs, t, c->q0, N_VGetArrayPointer(y), N_VGetArrayPointer(ydot));
    if (st != SD_OK) {
        c->rhs_status = st;
        return -1; /* unrecoverable: the dynamics failed, smaller steps will not help */
    }
    return 0;
}

/* CVLsJacFn: the analytical Jacobian into CVODE's dense matrix (column-major, 2 nv square). */
static int cv_jacobian(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *user, N_Vector tmp1,
                       N_Vector tmp2, N_Vector tmp3)
{
    cv_ctx *c = user;
    (void)fy;
    (void)tmp1;
    (void)tmp2;
    (void)tmp3;
    const sd_status st = sim_jacobian_eval(&c->jac, &c->run->rhs, t, c->q0, N_VGetArrayPointer(y),
                                           SUNDenseMatrix_Data(J));
    if (st != SD_OK) {
        c->rhs_status = st;
        return -1; /* unrecoverable, as a failed right-hand side */
    }
    return 0;
}

static void cv_error_handler(int code, const char *module, const char *function, char *msg, void *user)
{
    cv_ctx *c = user;
    (void)code;
    snprintf(c->msg, sizeof(c->msg), "%s: %s: %s", module ? module : "CVODE", function ? function : "",
             msg ? msg : "");
}

static void cv_free(cv_ctx *c)
{
    if (c->mem) CVodeFree(&c->mem);
    if (c->NLS) SUNNonlinSolFree(c->NLS);
    if (c->LS) SUNLinSolFree(c->LS);
    if (c->A) SUNMatDestroy(c->A);
    if (c->y) N_VDestroy(c->y);
    if (c->sun) SUNContext_Free(&c->sun);
    sim_jacobian_release(&c->jac);
    free(c->q0);
}

/* Fill y = [0; u] and configure CVODE for the chosen method. Returns 0 or a CVODE flag. */
static int cv_setup(cv_ctx *c, const sd_sim_options *o, int nv, int nu)
{
    if (SUNContext_Create(NULL, &c->sun) != 0) return -1;
    c->y = N_VNew_Serial(nv + nu, c->sun);
    if (!c->y) return -1;
    double *y = N_VGetArrayPointer(c->y);
    memset(y, 0, sizeof(double) * (size_t)nv);
    memcpy(y + nv, c->run->us, sizeof(double) * (size_t)nu);
    const int bdf = o->integrator == SD_INTEGRATOR_CVODE_BDF;
    c->mem = CVodeCreate(bdf ? CV_BDF : CV_ADAMS, c->sun);
    if (!c->mem) return -1;
    int f = CVodeSetErrHandlerFn(c->mem, cv_error_handler, c);
    if (!f) f = CVodeInit(c->mem, cv_rhs, o->t0, c->y);
    if (!f) f = CVodeSetUserData(c->mem, c);
    if (!f) f = CVodeSStolerances(c->mem, o->rtol, o->atol);
    if (!f) f = CVodeSetMaxNumSteps(c->mem, o->max_internal_steps > 0 ? o->max_internal_steps : 100000);
    if (!f && o->max_step > 0.0) f = CVodeSetMaxStep(c->mem, o->max_step);
    if (!f) f = CVodeSetStopTime(c->mem, c->run->t_end); /* never evaluate past the end */
    if (f) return f;
    if (bdf) {
        c->A = SUNDenseMatrix(nv + nu, nv + nu, c->sun);
        c->LS = c->A ? SUNLinSol_Dense(c->y, c->A, c->sun) : NULL;
        if (!c->LS) return -1;
        f = CVodeSetLinearSolver(c->mem, c->LS, c->A);
        if (!f && c->run->jacobian == SD_SIM_JACOBIAN_ANALYTIC) {
            if (sim_jacobian_init(&c->jac, nv) != SD_OK) return -1;
            f = CVodeSetJacFn(c->mem, cv_jacobian);
        }
        return f;
    }
    c->NLS = SUNNonlinSol_FixedPoint(c->y, 0, c->sun);
    if (!c->NLS) return -1;
    return CVodeSetNonlinearSolver(c->mem, c->NLS);
}

static sd_status cv_fail(cv_ctx *c, double t, sd_error *err)
{
    if (c->rhs_status != SD_OK)
        return sd_error_set(err, c->rhs_status, "dynamics failed at t = %.9g: %s", t,
                            sim_rhs_error(&c->run->rhs));
    return sd_error_set(err, SD_E_SOLVER, "CVODE failed at t = %.9g: %s", t,
                        c->msg[0] ? c->msg : "(no message)");
}

/* The counters of the run: CVODE's since its last (re)start plus those before it. */
typedef struct cv_counts {
    long steps, jacobians;
} cv_counts;

static cv_counts cv_counts_now(const cv_ctx *c, const cv_counts *before)
{
    long nst = 0, nje = 0;
    CVodeGetNumSteps(c->mem, &nst);
    if (c->run->jacobian != SD_SIM_JACOBIAN_AUTO) CVodeGetNumJacEvals(c->mem, &nje);
    cv_counts n = {before->steps + nst, before->jacobians + nje};
    return n;
}

/* Move the chart to the current q and restart CVODE there (which zeroes CVODE's counters). */
static int cv_rebase(cv_ctx *c, double t, cv_counts *before)
{
    sim_run *run = c->run;
    *before = cv_counts_now(c, before);
    memcpy(c->q0, run->q, sizeof(double) * (size_t)run->rhs.nq);
    memset(N_VGetArrayPointer(c->y), 0, sizeof(double) * (size_t)run->rhs.nv);
    memcpy(N_VGetArrayPointer(c->y) + run->rhs.nv, run->us, sizeof(double) * (size_t)run->rhs.nu); /* projected */
    ++run->stats.rebases;
    return CVodeReInit(c->mem, t, c->y);
}

sd_status sim_cvode_run(sim_run *run, sd_error *err)
{
    const sd_sim_options *o = run->opt;
    const int nv = run->rhs.nv, nu = run->rhs.nu, nq = run->rhs.nq;
    cv_ctx c;
    memset(&c, 0, sizeof(c));
    c.run = run;
    c.q0 = malloc(sizeof(double) * (size_t)(nq > 0 ? nq : 1));
    if (!c.q0) return sd_error_set(err, SD_E_MEMORY, "out of memory setting up CVODE");
    memcpy(c.q0, run->q, sizeof(double) * (size_t)nq);
    sd_status st = SD_OK;
    if (cv_setup(&c, o, nv, nu) != 0) {
        st = sd_error_set(err, SD_E_SOLVER, "CVODE setup failed: %s", c.msg[0] ? c.msg : "out of memory");
        cv_free(&c);
        return st;
    }
    cv_counts before = {0, 0};
    for (long k = 1; k <= run->nout; ++k) {
        double tout = o->t0 + (double)k * o->dt;
        if (k == run->nout || tout > run->t_end) tout = run->t_end;
        sunrealtype tret = tout;
        if (CVode(c.mem, tout, c.y, &tret, CV_NORMAL) < 0) {
            st = cv_fail(&c, run->stats.t_end, err);
            break;
        }
        const double *y = N_VGetArrayPointer(c.y);
        sim_chart_apply(&run->rhs.chart, c.q0, y, run->q);
        memcpy(run->us, y + nv, sizeof(double) * (size_t)nu); /* run->u follows (sim_run_output) */
        const cv_counts now = cv_counts_now(&c, &before);
        run->stats.steps = now.steps;
        run->stats.jacobian_evals = now.jacobians;
        const long projections = run->stats.projections;
        if (sim_run_output(run, k, tret, err, &st)) break;
        /* a projection of closed loops (sim_run_output) moved the state: CVODE restarts from it. The
         * closure of embedded loops does not: it moves only dependent coordinates, which every
         * evaluation solves for again (the chart's are a warm start), so CVODE goes on. */
        const int projected = run->stats.projections != projections;
        if ((projected || sim_chart_max_rotation(&run->rhs.chart, y) > REBASE_ANGLE) &&
            cv_rebase(&c, tret, &before)) {
            st = cv_fail(&c, tret, err);
            break;
        }
    }
    cv_free(&c);
    return st;
}
