/*
 * src/sim/sim_internal.h — pieces of the sim layer shared by its files: the local chart of the
 * configuration manifold, the right-hand side of the equations of motion, and the two integrators.
 *
 * Glossary:
 *   q0      base configuration of the chart (nq)
 *   delta   tangent coordinates of the chart (nv): q = q0 (+) delta
 *   y       integrator state (nv + nu): [delta; u_s], u_s the state's speeds: the tree's u (nu = nv),
 *           or with an embedding (embed.h) the embedded speeds u_e (nu = sd_embedding_nv)
 *   ydot    its rate: [delta_dot; qdd_s], delta_dot = J^-1(delta) u_tree (dexp^-1 for rotations),
 *           u_tree = u for a tree, N(q) u_e with an embedding
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
    int nu;            /* speeds of the state: nv, or sd_embedding_nv with an embedding */
    /* The embedded system (embedded_system.c), NULL when the run has no embedded constraint. */
    sd_embedding *embedding;
    sd_embedded_data *edata;
    double *u_tree;    /* nv: N u_e of the evaluation */
    double *tau_e;     /* nu: N^T tau, the joint forces on the embedded speeds */
    double *tau_const; /* nv: constant joint forces */
    double *tau;       /* nv: scratch, the total joint force */
    double *q;         /* nq: scratch, q0 (+) delta */
    sd_control_fn control;
    void *control_user;
    long evals;
} sim_rhs;

/* q: the starting configuration (the embedding's split is chosen there when it closes the loops). */
sd_status sim_rhs_init(sim_rhs *rhs, const sd_model *model, const sd_sim_options *options, const double *q,
                       sd_error *err);
void sim_rhs_release(sim_rhs *rhs);
/* qdd at (t, q, u): tau_total = tau_const + control, then the articulated-body forward dynamics
 * (which adds the joints' damping and spring forces). With an embedding, u and qdd are the embedded
 * speeds and accelerations (sim_embedded_accel), and rhs->u_tree holds N u afterwards. */
sd_status sim_rhs_accel(sim_rhs *rhs, double t, const double *q, const double *u, double *qdd);
/* rhs->tau = tau_const + control(t, q, u): the joint forces of an evaluation at (t, q, u) (tree speeds). */
void sim_rhs_forces(sim_rhs *rhs, double t, const double *q, const double *u);
/* ydot = f(t, y) on the chart based at q0 (y = [delta; u_s]). */
sd_status sim_rhs_eval(sim_rhs *rhs, double t, const double *q0, const double *y, double *ydot);
/* The message of the last failed evaluation (the tree's or the embedding's workspace). */
const char *sim_rhs_error(const sim_rhs *rhs);

/* ---------------------------------------------------------------- the embedded system (embedded_system.c) */

/* With options->embed set, or a model whose file embeds a constraint: the embedding (the split chosen
 * at q when q closes the loops, else at the model's reference configuration) and its workspace into
 * rhs; nothing when no constraint ends up embedded (rhs->embedding stays NULL). */
sd_status sim_embedded_init(sim_rhs *rhs, const sd_sim_options *options, const double *q, sd_error *err);
void sim_embedded_release(sim_rhs *rhs);
/* The start of an embedded run: q closed (sd_embedded_close, in place), u projected onto G u = 0
 * (sd_project_velocities, in place: the nearest motion of the mechanism) and u_e (nu) its embedded
 * speeds (their selection). */
sd_status sim_embedded_start(sim_rhs *rhs, double *q, double *u, double *u_e, sd_error *err);
/* qdd_e of the embedded system at (t, q, u_e): u_tree = N u_e at the closed q, tau = tau_const +
 * control(t, q closed, u_tree), tau_e = N^T tau, then sd_embedded_forward_dynamics. */
sd_status sim_embedded_accel(sim_rhs *rhs, double t, const double *q, const double *u_e, double *qdd_e);
/* tau_e = N^T tau (virtual work: tau . N u_e = tau_e . u_e) with the X_S of the last evaluation. */
void sim_embedded_reduce_forces(const sd_embedding *e, const sd_embedded_data *ed, const double *tau,
                                double *tau_e);

/* ---------------------------------------------------------------- the right-hand side's Jacobian (jacobian.c) */

/* The Jacobian d ydot / d y that the Newton iterations of CVODE BDF and Radau IIA use, from the analytical derivatives
 * of the forward dynamics (soadyn/derivatives.h); storage made once by sim_jacobian_init. */
typedef struct sim_jacobian {
    double *dqdd_dq, *dqdd_du; /* nv x nv, row-major */
    double *unit, *column;     /* nv: e_j, and J^-1(delta) e_j */
} sim_jacobian;

/* Which Jacobian the run takes (sd_sim_options.jacobian resolved, see sd_sim_jacobian in sim.h) into
 * *chosen: SD_SIM_JACOBIAN_AUTO for integrators that take none. SD_E_NOT_SUPPORTED, naming the
 * combination and why, when the choice asked for cannot be taken; the analytical one is tried once at
 * (q, u, tau) so that a model the derivatives refuse is refused before the run. */
sd_status sim_jacobian_choose(const sd_model *model, const sd_sim_options *options, const double *q,
                              const double *u, sd_sim_jacobian *chosen, sd_error *err);
sd_status sim_jacobian_init(sim_jacobian *jac, int nv);
void sim_jacobian_release(sim_jacobian *jac);
/* J (m x m, m = 2 nv, column-major with leading dimension m, as SUNDIALS' and LAPACK's) at
 * (t, y = [delta; u]) on the chart based at q0; the terms and approximations are sim.h's. */
sd_status sim_jacobian_eval(sim_jacobian *jac, sim_rhs *rhs, double t, const double *q0, const double *y,
                            double *J);

/* ---------------------------------------------------------------- integrators (rk4.c, radau.c, cvode.c) */

/* The driver's view of a run, shared by both integrators (simulate.c). */
typedef struct sim_run {
    const sd_model *model;
    const sd_sim_options *opt;
    sim_rhs rhs;
    double *q, *u;       /* the caller's state, updated in place (u: tree speeds, also with an
                          * embedding: N u_e after every step) */
    double *us;          /* the integrated speeds (nu): u, or the embedded u_e */
    double t_end;
    long nout;           /* number of dt output intervals */
    sd_sim_stats stats;
    double *residual;    /* 2 n_c: position then velocity residuals (NULL for a tree) */
    sd_sim_jacobian jacobian; /* CVODE BDF's Jacobian, resolved (sim_jacobian_choose) */
} sim_run;

/* Called by an integrator after each output interval k (1..nout) with the state in run->q/u at
 * time t; returns nonzero to stop (flag or observer). Also tracks the quaternion-norm error. */
int sim_run_output(sim_run *run, long k, double t, sd_error *err, sd_status *status);

/* One fixed step of length h from run->q, run->us at t, replacing them by the new state; on failure
 * the status with its message in err (naming the method, t and why). */
typedef sd_status (*sim_step_fn)(void *work, sim_run *run, double t, double h, sd_error *err);
/* The fixed-step driver of RK4 and Radau IIA (simulate.c): steps of dt from t0, the last one ending at
 * t0 + duration, each followed by sim_run_output. */
sd_status sim_fixed_step_run(sim_run *run, sim_step_fn step, void *work, sd_error *err);
sd_status sim_rk4_run(sim_run *run, sd_error *err);
sd_status sim_radau_run(sim_run *run, sd_error *err);
/* The index of `name` among names[0..count-1], -1 if it is not there (or is NULL). */
int sim_name_index(const char *const *names, int count, const char *name);

/* ---------------------------------------------------------------- closed loops (constraint_projection.c) */

/* Scratch for a model with closure constraints (none for a tree); released by the second. */
sd_status sim_constraints_init(sim_run *run, sd_error *err);
void sim_constraints_release(sim_run *run);
/* Project run->q onto phi(q) = 0 and run->u onto G u = 0 (when options.project_constraints), then
 * record the residuals left in run->stats. Does nothing for a tree. With an embedding: q is closed
 * (sd_embedded_close: the embedded loops solved, never projected), the tree-augmented constraints
 * (if any) projected as above, u_e taken from the projected speeds, and run->u = N u_e. */
sd_status sim_constraints_project(sim_run *run, double t, sd_error *err);
sd_status sim_cvode_run(sim_run *run, sd_error *err);

#endif /* SOADYN_SIM_INTERNAL_H */
