/*
 * src/sim/rk4.c — classical fixed-step Runge-Kutta 4 on the configuration manifold.
 *
 * Each step starts a chart at q_n (delta = 0) and applies RK4 to y = [delta; u] (u: the embedded
 * speeds u_e with an embedding, whose stages close the embedded loops themselves):
 *   k1 = f(t, y),  k2 = f(t + h/2, y + h/2 k1),  k3 = f(t + h/2, y + h/2 k2),  k4 = f(t + h, y + h k3)
 *   y+ = y + h/6 (k1 + 2 k2 + 2 k3 + k4),  q_{n+1} = q_n (+) delta+
 * The stages' rates are combined in the tangent space at q_n, and delta_dot = dexp^-1(delta) u makes
 * this 4th order on the manifold (Munthe-Kaas); for scalar hinges it is plain RK4. Quaternions are
 * quat_n * exp(phi), unit by construction: nothing is renormalised.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

/* y_out = y + a k (m entries). */
static void axpy(int m, const double *y, double a, const double *k, double *y_out)
{
    for (int i = 0; i < m; ++i) y_out[i] = y[i] + a * k[i];
}

/* One RK4 step of length h from (q, u) at t; q and u are replaced by the new state (u: the state's
 * nu speeds, embedded ones with an embedding). */
static sd_status rk4_step(sim_rhs *rhs, double t, double h, double *q, double *u, double *w)
{
    const int nv = rhs->nv, nu = rhs->nu, m = nv + nu;
    double *y = w, *yt = w + m, *k1 = w + 2 * m, *k2 = w + 3 * m, *k3 = w + 4 * m, *k4 = w + 5 * m;
    double *q_new = w + 6 * m;
    memset(y, 0, sizeof(double) * (size_t)nv); /* delta = 0: the chart is based at q_n */
    memcpy(y + nv, u, sizeof(double) * (size_t)nu);
    sd_status st = sim_rhs_eval(rhs, t, q, y, k1);
    if (st == SD_OK) { axpy(m, y, 0.5 * h, k1, yt); st = sim_rhs_eval(rhs, t + 0.5 * h, q, yt, k2); }
    if (st == SD_OK) { axpy(m, y, 0.5 * h, k2, yt); st = sim_rhs_eval(rhs, t + 0.5 * h, q, yt, k3); }
    if (st == SD_OK) { axpy(m, y, h, k3, yt); st = sim_rhs_eval(rhs, t + h, q, yt, k4); }
    if (st != SD_OK) return st;
    for (int i = 0; i < m; ++i) y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    sim_chart_apply(&rhs->chart, q, y, q_new);
    memcpy(q, q_new, sizeof(double) * (size_t)rhs->nq);
    memcpy(u, y + nv, sizeof(double) * (size_t)nu);
    return SD_OK;
}

/* sim_step_fn of the fixed-step driver (simulate.c). */
static sd_status rk4_driver_step(void *w, sim_run *run, double t, double h, sd_error *err)
{
    const sd_status st = rk4_step(&run->rhs, t, h, run->q, run->us, w);
    if (st != SD_OK) return sd_error_set(err, st, "RK4 step at t = %.9g: %s", t, sim_rhs_error(&run->rhs));
    return SD_OK;
}

sd_status sim_rk4_run(sim_run *run, sd_error *err)
{
    const int nv = run->rhs.nv, nu = run->rhs.nu, nq = run->rhs.nq;
    double *w = malloc(sizeof(double) * (size_t)(6 * (nv + nu) + nq + 1)); /* y, yt, k1..k4, q_new */
    if (!w) return sd_error_set(err, SD_E_MEMORY, "out of memory setting up RK4");
    const sd_status st = sim_fixed_step_run(run, rk4_driver_step, w, err);
    free(w);
    return st;
}
