/*
 * src/sim/sim_internal.h — pieces of the sim layer shared by its files: the local chart of the
 * configuration manifold, the right-hand side of the equations of motion, and the two integrators.
 *
 * Glossary:
 *   q0      base configuration of the chart (nq)
 *   delta   tangent coordinates of the chart (nv): q = q0 (+) delta
 *   y       integrator state (2 nv): [delta; u]
 *   ydot    its rate: [delta_dot; qdd], delta_dot = J^-1(delta) u (dexp^-1 for rotations)
 */
#ifndef SOADYN_SIM_INTERNAL_H
#define SOADYN_SIM_INTERNAL_H

#include "internal.h"

/* ---------------------------------------------------------------- chart (chart.c) */

/* The chart q = q0 (+) delta of the configuration manifold (the model layer defines it per hinge). */
typedef struct sim_chart {
    const sd_model *model;
    int nq, nv;
} sim_chart;

sd_status sim_chart_init(sim_chart *chart, const sd_model *model);
void sim_chart_release(sim_chart *chart);
/* q = q0 (+) delta = sd_configuration_integrate(q0, delta, 1). */
void sim_chart_apply(const sim_chart *chart, const double *q0, const double *delta, double *q);
/* delta_dot = J^-1(delta) u: the rate of the chart coordinates when the body speeds are u at
 * q = q0 (+) delta. */
void sim_chart_rate(const sim_chart *chart, const double *delta, const double *u, double *delta_dot);
/* Largest rotation angle |delta_rot| among the quaternion hinges (0 if none). */
double sim_chart_max_rotation(const sim_chart *chart, const double *delta);
/* Largest | |quat| - 1 | in q. */
double sim_chart_quat_error(const sim_chart *chart, const double *q);

/* ---------------------------------------------------------------- equations of motion (rhs.c) */

/* Everything one right-hand-side evaluation needs, allocated once at setup. */
typedef struct sim_rhs {
    const sd_model *model;
    sd_data *data;
    sim_chart chart;
    int nq, nv;
    double *tau_const; /* nv: constant joint forces */
    double *tau;       /* nv: scratch, the total joint force */
    double *q;         /* nq: scratch, q0 (+) delta */
    sd_control_fn control;
    void *control_user;
    long evals;
} sim_rhs;

sd_status sim_rhs_init(sim_rhs *rhs, const sd_model *model, const sd_sim_options *options, sd_error *err);
void sim_rhs_release(sim_rhs *rhs);
/* qdd at (t, q, u): tau_total = tau_const + control, then the articulated-body forward dynamics
 * (which adds the joints' damping and spring forces). */
sd_status sim_rhs_accel(sim_rhs *rhs, double t, const double *q, const double *u, double *qdd);
/* ydot = f(t, y) on the chart based at q0 (y = [delta; u]). */
sd_status sim_rhs_eval(sim_rhs *rhs, double t, const double *q0, const double *y, double *ydot);

/* ---------------------------------------------------------------- integrators (rk4.c, cvode.c) */

/* The driver's view of a run, shared by both integrators (simulate.c). */
typedef struct sim_run {
    const sd_model *model;
    const sd_sim_options *opt;
    sim_rhs rhs;
    double *q, *u;       /* the caller's state, updated in place */
    double t_end;
    long nout;           /* number of dt output intervals */
    sd_sim_stats stats;
    double *residual;    /* 2 n_c: position then velocity residuals (NULL for a tree) */
} sim_run;

/* Called by an integrator after each output interval k (1..nout) with the state in run->q/u at
 * time t; returns nonzero to stop (flag or observer). Also tracks the quaternion-norm error. */
int sim_run_output(sim_run *run, long k, double t, sd_error *err, sd_status *status);

sd_status sim_rk4_run(sim_run *run, sd_error *err);

/* ---------------------------------------------------------------- closed loops (constraint_projection.c) */

/* Scratch for a model with closure constraints (none for a tree); released by the second. */
sd_status sim_constraints_init(sim_run *run, sd_error *err);
void sim_constraints_release(sim_run *run);
/* Project run->q onto phi(q) = 0 and run->u onto G u = 0 (when options.project_constraints), then
 * record the residuals left in run->stats. Does nothing for a tree. */
sd_status sim_constraints_project(sim_run *run, double t, sd_error *err);
sd_status sim_cvode_run(sim_run *run, sd_error *err);

#endif /* SOADYN_SIM_INTERNAL_H */
