/*
 * soadyn/sim.h — the sim layer: time integration of the state (q, u) on the configuration
 * manifold, and trajectories out (CSV, plots).
 *
 * The equations of motion integrated are
 *     dq/dt = "u" on the manifold (q moves along u: q(t + h) = q(t) (+) u h for constant u)
 *     du/dt = sd_forward_dynamics(q, u, tau_total)   (sd_closed_loop_forward_dynamics with loops),
 *     tau_total = tau_const + control(t, q, u)
 * with the constant joint forces tau_const (options.tau) and the caller's control callback; the
 * forward dynamics adds the model's joint-level forces itself (damping and springs, with the
 * armature in M: soadyn/dynamics.h, "Joint-level dynamics").
 *
 * Integrators:
 *   SD_INTEGRATOR_RK4         classical fixed-step Runge-Kutta 4, run on a local chart of the
 *                             manifold (Munthe-Kaas): each step integrates the tangent increment
 *                             delta from q_n, so q_{n+1} = q_n (+) delta is 4th-order accurate and
 *                             quaternions are unit by construction (exponential map).
 *   SD_INTEGRATOR_CVODE_BDF   SUNDIALS CVODE, variable order BDF with Newton iterations (stiff).
 *                             Newton's matrix I - gamma J takes the Jacobian J of the right-hand
 *                             side from the analytical derivatives of the forward dynamics
 *                             (soadyn/derivatives.h) where they are offered, else from CVODE's
 *                             difference quotients (sd_sim_options.jacobian).
 *   SD_INTEGRATOR_CVODE_ADAMS SUNDIALS CVODE, Adams-Moulton with fixed-point iterations (non-stiff).
 *   SD_INTEGRATOR_RADAU_IIA   fixed-step Radau IIA, 3 stages (order 5, L-stable: stiff), on the same
 *                             local chart as RK4; its stage equations are solved by simplified
 *                             Newton on the Jacobian of the right-hand side (sd_sim_options.jacobian:
 *                             the analytical one, or forward differences of the right-hand side),
 *                             evaluated once per step, to 1e-12 relative. No error control: dt is
 *                             the step. A step whose Newton iterations do not contract is
 *                             SD_E_SOLVER ("take a smaller dt"). Does not need SUNDIALS.
 * CVODE integrates the same chart: its state is (delta, u) with q = q0 (+) delta, and q0 is moved to
 * the current q (a "re-base", which restarts CVODE at order 1) only at an output time where a rotation
 * part of delta exceeds half a radian. Quaternions are thus always formed by the exponential map and
 * never renormalised; the largest | |quat| - 1 | seen is reported (sd_sim_stats.max_quat_norm_error)
 * so that round-off drift is visible rather than hidden.
 *
 * Nothing in this layer prints. The per-step evaluation allocates nothing (all storage is made at
 * setup); the observer callback is where the caller writes output.
 */
#ifndef SOADYN_SIM_H
#define SOADYN_SIM_H

#include <signal.h>
#include <stddef.h>

#include "dynamics.h"
#include "export.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- integration */

typedef enum sd_integrator {
    SD_INTEGRATOR_RK4 = 0,
    SD_INTEGRATOR_CVODE_BDF,
    SD_INTEGRATOR_CVODE_ADAMS,
    SD_INTEGRATOR_RADAU_IIA
} sd_integrator;

/* Where the Newton iterations of CVODE BDF and Radau IIA take the Jacobian J = d ydot / d y of the
 * right-hand side (y = [delta; u] on the chart, see above):
 *   SD_SIM_JACOBIAN_AUTO      the analytical one where it is offered (a tree, rigid or flexible as
 *                             soadyn/derivatives.h offers it, without a control callback, whose
 *                             derivatives are unknown), else difference quotients; the default
 *   SD_SIM_JACOBIAN_ANALYTIC  the analytical one:
 *                               d delta_dot / d u     = J^-1(delta)              (exact)
 *                               d qdd / d u           = sd_forward_dynamics_derivatives' dqdd/du
 *                               d qdd / d delta      ~= its dqdd/dq (tangent space at q = q0 (+) delta)
 *                               d delta_dot / d delta ~= 0
 *                             The two "~=" are exact for scalar hinges (revolute, prismatic, modal
 *                             coordinates) and at delta = 0; for a quaternion hinge they leave out
 *                             terms of order |delta| and |u| (the chart's curvature, which stays
 *                             small: CVODE re-bases at half a radian, Radau IIA takes J at delta = 0).
 *                             A control callback's derivatives are not included. Both only slow
 *                             Newton's convergence: the solution's accuracy is set by CVODE's error
 *                             control or Radau's step, whatever J.
 *                             SD_E_NOT_SUPPORTED (sd_simulate, sd_simulate_check) for closed loops,
 *                             an embedding, models the derivatives refuse, and integrators other
 *                             than cvode-bdf and radau-iia (RK4 and Adams take no Jacobian).
 *   SD_SIM_JACOBIAN_DQ        difference quotients: CVODE's internal dense ones for cvode-bdf,
 *                             forward differences of the right-hand side for radau-iia (nu + nv
 *                             right-hand-side evaluations per Jacobian either way). */
typedef enum sd_sim_jacobian {
    SD_SIM_JACOBIAN_AUTO = 0,
    SD_SIM_JACOBIAN_ANALYTIC,
    SD_SIM_JACOBIAN_DQ
} sd_sim_jacobian;

/* "auto", "analytic", "dq" (the command line's --jacobian). */
SD_API const char *sd_sim_jacobian_name(sd_sim_jacobian jacobian);
/* The choice named `name`; SD_E_ARGUMENT if there is none. */
SD_API sd_status sd_sim_jacobian_from_name(const char *name, sd_sim_jacobian *jacobian);

/* Name of an integrator as the command line spells it ("rk4", "cvode-bdf", "cvode-adams",
 * "radau-iia"). */
SD_API const char *sd_integrator_name(sd_integrator integrator);
/* The integrator named `name`; SD_E_ARGUMENT if there is none. */
SD_API sd_status sd_integrator_from_name(const char *name, sd_integrator *integrator);

/* A control law: add the joint forces it wants into tau (nv entries, already holding the constant
 * forces; the joints' damping and springs are the dynamics' own) at time t and state (q, u). Called
 * at every right-hand-side evaluation. */
typedef void (*sd_control_fn)(void *user, double t, const double *q, const double *u, double *tau);

/* One output sample handed to the observer. The arrays belong to the integrator and are valid only
 * during the call. */
typedef struct sd_sim_sample {
    double t;                /* time, s */
    const double *q;         /* coordinates (nq) */
    const double *u;         /* speeds (nv) */
    double kinetic;          /* kinetic energy, J (NaN when sd_sim_options.sample_energies is 0) */
    double potential;        /* potential energy (gravity, joint springs, strain), J (likewise) */
    long steps;              /* integrator steps taken since the start */
} sd_sim_sample;

/* Called at the start, every `every` output intervals, and at the end (or when stopped). Return 0
 * to go on, nonzero to stop the run early (sd_sim_stats.stop_reason = SD_STOP_OBSERVER). */
typedef int (*sd_observer_fn)(void *user, const sd_sim_sample *sample);

/* Called after every output interval with the time reached and the integrator steps taken so far;
 * nothing is computed for it (unlike a sample), so a progress display costs nothing. */
typedef void (*sd_progress_fn)(void *user, double t, long steps);

/* Options of sd_simulate(). Initialise with sd_sim_options_init(), then set what you need. */
typedef struct sd_sim_options {
    sd_integrator integrator;      /* default RK4 */
    double t0;                     /* start time, s (default 0) */
    double duration;               /* simulated time, s, > 0 (default 1) */
    double dt;                     /* RK4 and Radau IIA step; for CVODE the output interval; 0 < dt <= duration
                                    * (default 1e-3). The last interval ends at t0 + duration (it
                                    * is shorter when duration is not a multiple of dt). */
    int every;                     /* observe every `every`-th dt interval, >= 1 (default 1) */
    double rtol, atol;             /* CVODE relative and absolute tolerances (default 1e-8, 1e-10) */
    double max_step;               /* CVODE largest internal step, 0: no limit */
    long max_internal_steps;       /* CVODE steps allowed per output interval (default 100000) */
    const double *tau;             /* constant joint forces (nv), NULL: zero; copied at the start */
    sd_control_fn control;         /* NULL: no control */
    void *control_user;
    sd_observer_fn observer;       /* NULL: no output */
    void *observer_user;
    sd_progress_fn progress;       /* NULL: none */
    void *progress_user;
    /* NULL, or a flag that stops the run when nonzero (checked after every RK4 step, and after
     * every dt output interval for CVODE); a signal handler may set it. */
    const volatile sig_atomic_t *stop;
    /* Models with closure constraints (loops.h): nonzero (the default) projects q onto the position
     * constraints (sd_assemble_configuration from the step's q) and u onto the velocity constraints
     * (sd_project_velocities) at the start and after every RK4 step / CVODE output interval (CVODE
     * then restarts from the projected state). The right-hand side is then
     * sd_closed_loop_forward_dynamics(). Baumgarte terms are not offered (the closed-loop forward
     * dynamics takes no addition to gamma); 0 leaves the drift uncorrected and only reported. */
    int project_constraints;
    /* Constraint embedding (embed.h, issue 11). `embed`: NULL: the model file's choice of which
     * constraints are embedded (a model whose constraints are all tree-augmented, or a tree, then runs
     * as above); "all", "none", or a comma-separated list of constraint names (as
     * sd_embed_options.loops). `independent`: NULL/"" (the split chosen by pivoting) or a list of joint
     * names (sd_embed_options.independent). With at least one embedded constraint, sd_simulate
     * integrates the embedded system: the state is the tree's q and the embedded speeds u_e
     * (sd_embedding_nv); each right-hand side is sd_embedded_forward_dynamics (which closes the
     * embedded loops by Newton, independent coordinates held), q moves with the tree speeds N u_e, and
     * after every RK4 step / CVODE output interval q is closed again (sd_embedded_close): embedded
     * constraints are solved, never projected; tree-augmented ones keep project_constraints. The
     * caller's q and u, the samples (observer, CSV, trajectory), tau and control all stay in the
     * TREE's sizes (nq, nv): u = N u_e, tau is reduced by N^T, and the energy is the tree's at (q, N u_e).
     * At the start q is closed and u projected onto G u = 0 (the nearest motion of the mechanism, as
     * for tree-augmented loops) before its embedded speeds are taken.
     * Errors of the embedding (unknown names, a loop that cannot be split) are SD_E_ARGUMENT /
     * SD_E_SINGULAR from sd_embedding_new. */
    const char *embed;
    const char *independent;
    /* Nonzero (the default): every sample handed to the observer carries the kinetic and potential
     * energies. 0: they are not computed (the sample's kinetic and potential are NaN), for an
     * observer that reads neither; the energies cost a kinematics sweep and the energy sums per
     * sample. sd_sim_stats.energy_start and energy_end are computed either way. */
    int sample_energies;
    /* CVODE BDF's and Radau IIA's Jacobian (sd_sim_jacobian above); default SD_SIM_JACOBIAN_AUTO. */
    sd_sim_jacobian jacobian;
} sd_sim_options;

SD_API void sd_sim_options_init(sd_sim_options *options);

typedef enum sd_stop_reason {
    SD_STOP_NONE = 0,   /* ran to t0 + duration */
    SD_STOP_FLAG,       /* options.stop became nonzero */
    SD_STOP_OBSERVER    /* the observer returned nonzero */
} sd_stop_reason;

/* What a run did. */
typedef struct sd_sim_stats {
    long steps;                  /* integrator steps (RK4 steps or CVODE internal steps) */
    long rhs_evals;              /* forward-dynamics evaluations */
    long rebases;                /* CVODE chart re-bases (restarts) */
    double t_end;                /* time reached, s */
    sd_stop_reason stop_reason;
    double energy_start, energy_end; /* kinetic + potential at the start and at t_end, J */
    double max_quat_norm_error;  /* largest | |quat| - 1 | at every RK4 step / CVODE output time */
    /* Closed loops (0 for a tree): the largest |position residual| and |G u| entry left after the
     * projection at the start, every RK4 step and every CVODE output time, and the projections made. */
    double max_position_residual, max_velocity_residual;
    long projections;
    /* CVODE BDF and Radau IIA: the Jacobians evaluated (analytical ones, or difference quotients,
     * whose right-hand sides are counted in rhs_evals) and which kind was used:
     * SD_SIM_JACOBIAN_ANALYTIC or SD_SIM_JACOBIAN_DQ; SD_SIM_JACOBIAN_AUTO (and 0 evaluations) for
     * RK4 and Adams. */
    long jacobian_evals;
    sd_sim_jacobian jacobian;
    /* The total spatial momentum [angular about the world origin; linear] in world axes
     * (sd_spatial_momentum_world) at the start (after the start's projection) and at t_end: on a
     * free-floating model without gravity or external forces it is conserved, and the difference is
     * the integrator's (and the projection's) momentum drift. */
    double momentum_start[6], momentum_end[6];
} sd_sim_stats;

/* Integrate from (q, u) at options->t0 for options->duration. On return q and u hold the state at
 * stats->t_end (also after an early stop). stats may be NULL. Errors: SD_E_ARGUMENT (bad options,
 * named in the message: a dt that is not finite and positive or is longer than the duration - the
 * run would not take the step asked for -, a duration that is not finite and positive, every < 1,
 * tolerances not finite and positive, max_step or max_internal_steps negative, a non-finite entry
 * of q, u or tau),
 * SD_E_SINGULAR (forward dynamics failed), SD_E_SOLVER (CVODE failed: message says why),
 * SD_E_NOT_SUPPORTED (a Jacobian choice the run cannot take, named with the reason: see
 * sd_sim_jacobian), SD_E_MEMORY. */
SD_API sd_status sd_simulate(const sd_model *model, const sd_sim_options *options, double *q, double *u,
                             sd_sim_stats *stats, sd_error *err);
/* The checks sd_simulate() makes before it starts, alone: SD_OK when sd_simulate would accept the
 * options and the initial state, else its SD_E_ARGUMENT and message. A caller that writes files
 * checks first, so that a run refused at once (a duration of 1e12 steps) touches no file. */
SD_API sd_status sd_simulate_check(const sd_model *model, const sd_sim_options *options, const double *q,
                                   const double *u, sd_error *err);

/* Kinetic and potential energy at (q, u): sd_kinematics() then sd_kinetic_energy() (with the
 * armature's) and sd_potential_energy() plus sd_spring_energy() plus, for flexible bodies,
 * sd_strain_energy() (flex.h). Either output may be NULL. */
SD_API sd_status sd_sim_energy(const sd_model *model, sd_data *data, const double *q, const double *u,
                               double *kinetic, double *potential);

/* ---------------------------------------------------------------- names of state entries */

/* Label of coordinate i (0 <= i < nq) into buf, like snprintf: the joint name for a 1-dof hinge,
 * else the joint name and a component: "ball.qw" .. "ball.qz", "base.x" .. "base.z" then
 * "base.qw" .. "base.qz", "uj.1" "uj.2" (universal), "plane.s1" "plane.s2" "plane.theta". */
SD_API int sd_coordinate_label(const sd_model *model, int i, char *buf, size_t size);
/* Label of speed i (0 <= i < nv): the joint name for a 1-dof hinge, else "ball.wx" .. "ball.wz",
 * "base.wx" .. "base.wz" "base.vx" .. "base.vz", "uj.1" "uj.2", "plane.s1" "plane.s2" "plane.theta". */
SD_API int sd_speed_label(const sd_model *model, int i, char *buf, size_t size);

/* ---------------------------------------------------------------- CSV out */

/* A CSV trajectory file. Columns: time, one per coordinate (labelled as sd_coordinate_label), one
 * per speed ("u." + sd_speed_label), kinetic, potential, total (energies in J), then, for a model
 * with flexible bodies, a node's deflection per flexible body (sd_csv_open_nodes). Numbers are
 * written with 17 significant digits, so they read back exactly. */
typedef struct sd_csv_writer sd_csv_writer;

/* Start the file `path` and write the header line; *writer is freed by sd_csv_close(). The lines go
 * to "<path>.partial" beside it, renamed onto `path` by sd_csv_close() only when everything was
 * written: a file named `path` is always complete (or says where it was truncated), and a failed
 * run leaves an existing `path` untouched. A path that is not a regular file (a pipe, /dev/stdout)
 * is written directly. */
SD_API sd_status sd_csv_open(const sd_model *model, const char *path, sd_csv_writer **writer, sd_error *err);
/* sd_csv_open for a model with flexible bodies, choosing the node whose deflection is written:
 * nodes (NULL, or one entry per body) gives body k's node (nodes[k] >= 0) or its last node (-1);
 * entries of rigid bodies are ignored. sd_csv_open writes every flexible body's last node (a beam's
 * tip). The three columns per flexible body follow the energies: "<body>.node<N>.dx" .. ".dz", the
 * node's translation from its undeformed place in body axes (sd_model_node_deflection, flex.h).
 * SD_E_ARGUMENT names a body and a node it does not have. */
SD_API sd_status sd_csv_open_nodes(const sd_model *model, const char *path, const int *nodes,
                                   sd_csv_writer **writer, sd_error *err);
/* Append one sample as a line. */
SD_API sd_status sd_csv_write(sd_csv_writer *writer, const sd_sim_sample *sample, sd_error *err);
/* Finish the file and free the writer. If `truncated_note` is not NULL the run did not complete,
 * and a last line "# truncated at t=<last time> (<note>)" says so. Everything is flushed and
 * closed, then renamed onto the path asked for; a write error anywhere (disk full) is reported here,
 * and the incomplete file is removed. writer may be NULL. */
SD_API sd_status sd_csv_close(sd_csv_writer *writer, const char *truncated_note, sd_error *err);

/* ---------------------------------------------------------------- trajectories and plots */

/* A trajectory kept in memory for plots and the viewer (view.h): time, q, u and the energies of each
 * sample appended. */
typedef struct sd_trajectory sd_trajectory;

/* NULL when out of memory; free with sd_trajectory_free(). The model must outlive it. */
SD_API sd_trajectory *sd_trajectory_new(const sd_model *model);
/* The same, choosing for a model with flexible bodies the node whose deflection the plot shows, as
 * sd_csv_open_nodes does (nodes: NULL, or per body a node index or -1 for the last node). NULL
 * also when a node is out of range (check with sd_model_body_nnodes). */
SD_API sd_trajectory *sd_trajectory_new_nodes(const sd_model *model, const int *nodes);
SD_API void sd_trajectory_free(sd_trajectory *trajectory);
/* Append a sample (the storage grows geometrically). */
SD_API sd_status sd_trajectory_append(sd_trajectory *trajectory, const sd_sim_sample *sample);
SD_API size_t sd_trajectory_length(const sd_trajectory *trajectory);
/* A note that the trajectory is incomplete ("truncated at t = 0.42 s (interrupted by SIGINT)"),
 * shown in the plot's title and the viewer page's heading; NULL or "" removes it. At most 159
 * characters are kept. sd_trajectory_note() gives it ("" when none). */
SD_API void sd_trajectory_set_note(sd_trajectory *trajectory, const char *note);
SD_API const char *sd_trajectory_note(const sd_trajectory *trajectory);

/* Plot the trajectory with PLplot into `path`: the device is chosen by the extension, ".png"
 * (pngcairo) or ".svg" (svgcairo). Two panels: every joint coordinate against time (legend with the
 * coordinate labels), and the kinetic, potential and total energy against time; a model with
 * flexible bodies gets a third: each flexible body's node deflection (sd_trajectory_new_nodes), the
 * components that move. Like the CSV, the
 * picture is drawn into "<path>.partial", checked to be whole (PLplot reports no write errors: the
 * file must end as a PNG or SVG file ends), then renamed onto `path`; SD_E_IO if it is not. */
SD_API sd_status sd_plot_trajectory(const sd_trajectory *trajectory, const char *path, sd_error *err);

/* Whether an output file can be created at `path` (a plot, a page, a CSV): its temporary file
 * "<path>.partial" is created and removed again (a path that is not a regular file, such as
 * /dev/null, is opened for appending and closed). SD_E_IO "path: cannot create: reason" when it
 * cannot, so that a run refuses an unwritable output before it starts rather than after. */
SD_API sd_status sd_output_probe(const char *path, sd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_SIM_H */
