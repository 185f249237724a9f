/*
 * cli/cmd_simulate.c — `soadyn simulate MODEL`: integrate, write CSV and a plot, print a summary.
 *
 * Interruption: SIGINT, SIGTERM and SIGHUP only set a flag (sig_atomic_t) that the integrator checks
 * after every step; the run then stops cleanly, the CSV gets its last sample and a final line
 * "# truncated at t=... (interrupted by SIGINT)", is flushed and closed, the plot and the page (if
 * asked) are drawn from what was computed with "truncated at t = ..." in their titles, and the
 * command exits with 128 + the signal number (130, 143 or 129). SIGUSR1 asks for one line of progress
 * on stderr and the run goes on (its handler sets a flag the progress callback reads).
 *
 * Outputs: everything that could refuse the run (options, initial state, embedding, each output's
 * folder) is checked before the first output file is created, so a run refused at the start
 * leaves every file as it was.
 */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "progress.h"
#include <soadyn/flex.h>
#include <soadyn/config.h> /* SOADYN_HAS_CVODE, SOADYN_HAS_PLOT, SOADYN_HAS_VIEWER: refuse what this build lacks before running */

static const char help[] =
    "usage: soadyn simulate MODEL [options]\n"
    "\n"
    "Integrate the equations of motion from an initial state, under constant joint forces and the\n"
    "model's joint damping. A summary goes to stdout: the energy drift and, on a free-floating model,\n"
    "the momentum drift. On a terminal, a run that takes more than a second shows a progress line on\n"
    "stderr (time reached, real-time factor, time left).\n"
    "\n"
    "options:\n"
    "  --duration T        simulated time, s, > 0 (default 1)\n"
    "  --dt H              step (rk4, radau-iia), output interval for CVODE, s, 0 < H <= T (default: the\n"
    "                      model file's, MJCF <option timestep>; else 0.001); the last step ends\n"
    "                      at T (shorter when T is not a multiple of H)\n"
    "  --integrator NAME   rk4 (default), cvode-bdf, radau-iia (stiff) or cvode-adams\n"
    "  --jacobian J        Newton's Jacobian (cvode-bdf, radau-iia): analytic, dq (difference\n"
    "                      quotients) or auto (default: analytic where offered)\n"
    "  --rtol R, --atol A  CVODE tolerances (default 1e-8, 1e-10)\n"
    "  --q0 VALUES         initial configuration (default: the model's reference configuration:\n"
    "                      MJCF's qpos0, the refs of its joints; neutral for URDF and SDF)\n"
    "  --u0 VALUES         initial speeds (default: zero)\n"
    "  --tau VALUES        constant joint forces (default: zero)\n"
    "  --output FILE.csv   write the trajectory: time, q, u, kinetic, potential, total energy\n"
    "                      (written as FILE.csv.partial, renamed to FILE.csv when complete)\n"
    "  --every N           write every N-th output interval, N >= 1 (default 1)\n"
    "  --plot FILE         plot joint positions and energy (.png or .svg; also written beside\n"
    "                      and renamed when whole)\n"
    "  --html FILE.html    the run as a page to watch in a browser (soadyn view's; written beside\n"
    "                      and renamed when whole)\n"
    "  --embed LOOPS       closure constraints embedded into aggregate nodes: all, none, or a comma\n"
    "                      list of constraint names (default: the model file's choice)\n"
    "  --independent J,..  joints whose speeds are the aggregates' independent ones (default: chosen\n"
    "                      by pivoting at the initial configuration)\n"
    "  --tip-node BODY=N,...  flexible bodies: the node whose deflection the CSV, the plot and the\n"
    "                      summary show (default: each flexible body's last node, a beam's tip)\n"
    "  --floating          attach the root link with a free hinge\n"
    "  --keep-fixed        keep fixed joints as 0-dof bodies\n"
    CLI_GRAVITY_HELP
    "  --compiled          the dynamics by the model's compiled code (bench --help)\n"
    "  --help              this text\n"
    "\n"
    "VALUES is every value in order (0.1,0.2) or NAME=VALUE pairs (shoulder=0.3,elbow=-1.2).\n"
    "Flexible bodies: their modal coordinates are integrated with the rest (labels BODY.eta1, ..;\n"
    "speeds u.BODY.eta1, ..), and after the energies the CSV has each flexible body's node\n"
    "deflection (translation from the undeformed place, body axes): BODY.nodeN.dx, .dy, .dz.\n"
    "Interrupted by SIGINT, SIGTERM or SIGHUP, the run stops cleanly: the CSV ends with a line\n"
    "'# truncated at t=... (interrupted by SIGINT)', the plot's and the page's titles say\n"
    "'truncated at t = ...', and the exit status is 130, 143 or 129 (a run that fails midway marks\n"
    "them the same way and exits 3). SIGUSR1 prints the time reached on stderr and goes on.\n"
    "Options, the initial state and the outputs' folders are checked before any file is written; an\n"
    "output not written whole (disk full) is removed, and the exit status is 3.\n"
    "Closed loops: tree-augmented ones are integrated with all the tree's speeds and projected back onto\n"
    "the constraints after every step; embedded ones (--embed) are not integrated: only the independent\n"
    "speeds are, and every evaluation and step solves the dependent coordinates by Newton. Either way\n"
    "the CSV has every joint's q and u (u = N u_e for embedded loops) and the summary the largest\n"
    "closure residuals over the run.\n";

static volatile sig_atomic_t stop_signal = 0;
static volatile sig_atomic_t report_asked = 0; /* SIGUSR1 */

/* Only set flags: everything else (output, exit) happens in normal code. */
static void on_signal(int sig)
{
    stop_signal = sig;
}

static void on_report_signal(int sig)
{
    (void)sig;
    report_asked = 1;
}

static const char *signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

/* The progress callback: the progress line, and the one line SIGUSR1 asks for. */
static void on_progress(void *user, double t, long steps)
{
    cli_progress *p = user;
    if (report_asked) {
        report_asked = 0;
        fprintf(stderr, "soadyn simulate: t = %.6g of %.6g s, %ld steps (SIGUSR1)\n", t, p->t_end, steps);
    }
    cli_progress_update(user, t, steps);
}

typedef struct sim_args {
    const char *duration, *dt, *integrator, *jacobian, *rtol, *atol, *q0, *u0, *tau, *output, *every, *plot, *tip_node;
    const char *gravity;
    const char *html, *model_path; /* --html: the page, and the model file it re-reads for visuals */
    const char *dt_from;           /* where the step came from, for the summary */
    int floating, keep_fixed, compiled;
    const char *code; /* --compiled: what ran (cli_compile) */
    cli_embed_args embed;
} sim_args;

/* What the observer writes to, and the progress line. */
typedef struct sim_out {
    sd_csv_writer *csv;
    sd_trajectory *traj;
    sd_error err;
    int failed;
    int csv_failed; /* the failure was the CSV's: sd_csv_close() reports it, with what became of the file */
    cli_progress progress;
} sim_out;

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int observer(void *user, const sd_sim_sample *s)
{
    sim_out *o = user;
    if (o->csv && sd_csv_write(o->csv, s, &o->err) != SD_OK) o->failed = o->csv_failed = 1;
    if (o->traj && sd_trajectory_append(o->traj, s) != SD_OK) {
        snprintf(o->err.message, sizeof(o->err.message), "out of memory keeping the trajectory for the plot");
        o->failed = 1;
    }
    return o->failed; /* stop on an output error: going on would only lose more */
}

static int parse_positive(const char *opt, const char *text, double *out)
{
    if (!text) return 0;
    if (cli_parse_double(text, out) || !(*out > 0.0)) {
        fprintf(stderr, "soadyn simulate: --%s: '%s' is not a positive number\n", opt, text);
        return 1;
    }
    return 0;
}

/* The step: --dt, else the model file's (MJCF <option timestep>), else the default; not longer than
 * the run. */
static int resolve_dt(sim_args *a, const sd_model *m, sd_sim_options *so)
{
    a->dt_from = "--dt";
    if (!a->dt && sd_model_time_step(m) > 0.0) {
        so->dt = sd_model_time_step(m);
        a->dt_from = "the model file's <option timestep>";
    } else if (!a->dt) {
        a->dt_from = "the default";
    }
    if (so->dt > so->duration) { /* refused, not shortened: the step asked for would not be taken */
        fprintf(stderr, "soadyn simulate: dt %g (%s) is longer than --duration %g%s: not one step of dt fits in "
                        "the run; give --dt <= --duration\n",
                so->dt, a->dt_from, so->duration, a->duration ? "" : " (the default)");
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* Options that do not need the model. */
static int parse_settings(const sim_args *a, sd_sim_options *so)
{
    long every = 1;
    if (parse_positive("duration", a->duration, &so->duration) || parse_positive("dt", a->dt, &so->dt) ||
        parse_positive("rtol", a->rtol, &so->rtol) || parse_positive("atol", a->atol, &so->atol))
        return CLI_USAGE;
    if (a->every && (cli_parse_long(a->every, &every) || every < 1 || every > 1000000000L)) {
        fprintf(stderr, "soadyn simulate: --every: '%s' is not a positive integer\n", a->every);
        return CLI_USAGE;
    }
    so->every = (int)every;
    if (a->integrator && sd_integrator_from_name(a->integrator, &so->integrator) != SD_OK) {
        fprintf(stderr, "soadyn simulate: --integrator: unknown '%s' (rk4, cvode-bdf, cvode-adams, radau-iia)\n",
                a->integrator);
        return CLI_USAGE;
    }
    if (a->jacobian && sd_sim_jacobian_from_name(a->jacobian, &so->jacobian) != SD_OK) {
        fprintf(stderr, "soadyn simulate: --jacobian: unknown '%s' (auto, analytic, dq)\n", a->jacobian);
        return CLI_USAGE;
    }
    if (!SOADYN_HAS_CVODE && (so->integrator == SD_INTEGRATOR_CVODE_BDF || so->integrator == SD_INTEGRATOR_CVODE_ADAMS)) {
        fprintf(stderr, "soadyn simulate: --integrator %s is not offered: built without SUNDIALS CVODE "
                        "(SOADYN_WITH_CVODE=OFF); rk4 and radau-iia are\n", a->integrator);
        return CLI_USAGE;
    }
    if (!SOADYN_HAS_PLOT && a->plot) {
        fprintf(stderr, "soadyn simulate: --plot is not offered: built without PLplot (SOADYN_WITH_PLOT=OFF)\n");
        return CLI_USAGE;
    }
    if (!SOADYN_HAS_VIEWER && a->html) {
        fprintf(stderr, "soadyn simulate: --html is not offered: built without npm (SOADYN_WITH_VIEWER=OFF)\n");
        return CLI_USAGE;
    }
    if (a->plot) {
        const char *dot = strrchr(a->plot, '.');
        if (!dot || (strcmp(dot, ".png") && strcmp(dot, ".svg"))) {
            fprintf(stderr, "soadyn simulate: --plot: '%s' must end in .png or .svg\n", a->plot);
            return CLI_USAGE;
        }
    }
    return CLI_OK;
}

static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_report_signal;
    sigaction(SIGUSR1, &sa, NULL);
}

static int has_quaternions(const sd_model *m)
{
    for (int k = 0; k < sd_model_nbodies(m); ++k)
        if (sd_model_hinge(m, k) == SD_HINGE_SPHERICAL || sd_model_hinge(m, k) == SD_HINGE_FREE) return 1;
    return 0;
}

/* Energy is conserved only without damping and joint forces; say so next to the drift. */
static int energy_conserved(const sd_model *m, const double *tau)
{
    for (int k = 0; k < sd_model_nbodies(m); ++k)
        if (sd_model_body_desc(m, k)->damping > 0.0) return 0;
    for (int i = 0; i < sd_model_nv(m); ++i)
        if (tau[i] != 0.0) return 0;
    return 1;
}

/* Momentum is worth a line on a free-floating model (every root body on a free hinge); it is
 * conserved there unless gravity, a closure to the world, or a force or damper on a free hinge acts
 * from outside (joint forces and dampers between bodies are internal). Returns 0: no line, 1: the
 * line, 2: the line with "not conserved". */
static int momentum_line(const sd_model *m, const double *tau)
{
    int conserved = 1;
    for (int k = 0; k < sd_model_nbodies(m); ++k) {
        if (sd_model_parent(m, k) >= 0) continue;
        if (sd_model_hinge(m, k) != SD_HINGE_FREE) return 0;
        if (sd_model_body_desc(m, k)->damping > 0.0) conserved = 0;
        for (int i = 0; i < sd_model_hinge_nv(m, k); ++i)
            if (tau[sd_model_v_index(m, k) + i] != 0.0) conserved = 0;
    }
    double g[3];
    sd_model_gravity(m, g);
    if (g[0] != 0.0 || g[1] != 0.0 || g[2] != 0.0) conserved = 0;
    for (int c = 0; c < sd_model_nconstraints(m); ++c) {
        int a = 0, b = 0;
        if (sd_model_constraint_bodies(m, c, &a, &b) == SD_OK && (a < 0 || b < 0)) conserved = 0;
    }
    return conserved ? 1 : 2;
}

/* |end - start| of the three components from `first` of the spatial momentum. */
static double momentum_change(const sd_sim_stats *st, int first)
{
    double s = 0.0;
    for (int i = first; i < first + 3; ++i) s += (st->momentum_end[i] - st->momentum_start[i]) *
                                                 (st->momentum_end[i] - st->momentum_start[i]);
    return sqrt(s);
}

/* --tip-node BODY=N,...: per body the node shown (-1: the last one). Returns 0, or 1 after a message. */
static int parse_tip_nodes(const sd_model *m, const char *text, int *nodes)
{
    for (int k = 0; k < sd_model_nbodies(m); ++k) nodes[k] = -1;
    if (!text) return 0;
    const char *p = text;
    while (*p) {
        const char *end = strchr(p, ','), *eq = strchr(p, '=');
        if (!end) end = p + strlen(p);
        if (!eq || eq > end) {
            fprintf(stderr, "soadyn simulate: --tip-node: '%.*s' is not BODY=NODE\n", (int)(end - p), p);
            return 1;
        }
        char name[256], num[64];
        if ((size_t)(eq - p) >= sizeof(name) || (size_t)(end - eq - 1) >= sizeof(num)) {
            fprintf(stderr, "soadyn simulate: --tip-node: '%.*s' is too long\n", (int)(end - p), p);
            return 1;
        }
        memcpy(name, p, (size_t)(eq - p));
        name[eq - p] = '\0';
        memcpy(num, eq + 1, (size_t)(end - eq - 1));
        num[end - eq - 1] = '\0';
        const int k = sd_model_body_index(m, name);
        long node = -1;
        if (k < 0 || sd_model_body_nnodes(m, k) <= 0) {
            fprintf(stderr, "soadyn simulate: --tip-node: %s is not a flexible body of the model\n", name);
            return 1;
        }
        if (cli_parse_long(num, &node) || node < 0 || node >= sd_model_body_nnodes(m, k)) {
            fprintf(stderr, "soadyn simulate: --tip-node: %s has no node '%s' (nodes 0..%d)\n", name, num,
                    sd_model_body_nnodes(m, k) - 1);
            return 1;
        }
        nodes[k] = (int)node;
        p = *end ? end + 1 : end;
    }
    return 0;
}

/* Each flexible body's node deflection at the end of the run (the node of --tip-node, else its last). */
static void print_deflections(const sd_model *m, const int *nodes, const double *q)
{
    for (int k = 0; k < sd_model_nbodies(m); ++k) {
        const int nn = sd_model_body_nnodes(m, k);
        if (nn <= 0) continue;
        const int t = nodes[k] >= 0 ? nodes[k] : nn - 1;
        double d[6];
        if (sd_model_node_deflection(m, k, t, q, d, NULL) != SD_OK) continue;
        cli_printf("deflection end   %s node %d: %.6g %.6g %.6g m (body axes)\n", sd_model_body_name(m, k), t, d[3],
                   d[4], d[5]);
    }
}

/* What the run integrated for the loops: the embedded ones and the speeds left. */
static void print_embedding(const sd_model *m, const sd_embedding *e)
{
    int n_emb = 0;
    for (int c = 0; c < sd_model_nconstraints(m); ++c) n_emb += sd_embedding_constraint_embedded(e, c) == 1;
    cli_printf("embedded loops   %d of %d constraint%s in %d aggregate%s; %d integrated speed%s of %d (", n_emb,
               sd_model_nconstraints(m), sd_model_nconstraints(m) == 1 ? "" : "s", sd_embedding_naggregates(e),
               sd_embedding_naggregates(e) == 1 ? "" : "s", sd_embedding_nv(e), sd_embedding_nv(e) == 1 ? "" : "s",
               sd_model_nv(m));
    const int shown = sd_embedding_nv(e) <= 12 ? sd_embedding_nv(e) : 10; /* a line, not a list: info has it */
    for (int i = 0; i < shown; ++i) {
        char *label = cli_embedded_speed_label(e, i);
        cli_printf("%s%s", i ? ", " : "", label ? label : "?");
        free(label);
    }
    if (shown < sd_embedding_nv(e)) cli_printf(", ... %d more: soadyn info --embed", sd_embedding_nv(e) - shown);
    cli_printf(")\n");
}

static void print_summary(const sd_model *m, const sd_embedding *e, const sd_sim_options *so, const sd_sim_stats *st,
                          double wall, const char *dt_from)
{
    const double simulated = st->t_end - so->t0;
    const double e0 = st->energy_start, e1 = st->energy_end;
    cli_printf("model            %s (nq %d, nv %d)\n", sd_model_name(m), sd_model_nq(m), sd_model_nv(m));
    if (so->integrator == SD_INTEGRATOR_RK4 || so->integrator == SD_INTEGRATOR_RADAU_IIA)
        cli_printf("integrator       %s, dt = %g s (%s)\n", sd_integrator_name(so->integrator), so->dt, dt_from);
    else
        cli_printf("integrator       %s, rtol = %g, atol = %g, output every %g s (%s)\n",
                   sd_integrator_name(so->integrator), so->rtol, so->atol, so->dt, dt_from);
    if (st->jacobian != SD_SIM_JACOBIAN_AUTO)
        cli_printf("jacobian         %s, %ld evaluations\n",
                   st->jacobian == SD_SIM_JACOBIAN_ANALYTIC ? "analytic (forward dynamics derivatives)"
                                                            : "difference quotients",
                   st->jacobian_evals);
    cli_printf("steps            %ld (%ld dynamics evaluations", st->steps, st->rhs_evals);
    if (st->rebases) cli_printf(", %ld chart re-bases", st->rebases);
    cli_printf(")\n");
    cli_printf("simulated time   %.6g s%s\n", simulated, st->stop_reason != SD_STOP_NONE ? " (stopped early)" : "");
    cli_printf("wall time        %.6g s\n", wall);
    cli_printf("real-time factor %.4g (%.4g steps/s)\n", wall > 0 ? simulated / wall : INFINITY,
               wall > 0 ? (double)st->steps / wall : INFINITY);
    cli_printf("energy start     %.12g J\n", e0);
    cli_printf("energy end       %.12g J\n", e1);
    const double scale = fabs(e0) > 1e-300 ? fabs(e0) : 1.0; /* a zero start: the drift is absolute */
    cli_printf("energy drift     %.3e %s%s\n", (e1 - e0) / scale, fabs(e0) > 1e-300 ? "(relative)" : "J (absolute)",
               energy_conserved(m, so->tau) ? "" : "  [not conserved: damping or joint forces act]");
    const int momentum = momentum_line(m, so->tau);
    if (momentum)
        cli_printf("momentum drift   linear %.3e kg m/s, angular %.3e N m s (|end - start|, world frame)%s\n",
                   momentum_change(st, 3), momentum_change(st, 0),
                   momentum == 1 ? "" : "  [not conserved: gravity or outside forces act]");
    if (has_quaternions(m))
        cli_printf("max | |quat|-1 | %.3e (never renormalised)\n", st->max_quat_norm_error);
    if (e) print_embedding(m, e);
    if (sd_model_nconstraints(m) > 0) /* closed loops: projected (or, embedded, closed) after every step */
        cli_printf("loop residuals   position %.3e, velocity %.3e (largest over the run; %ld projections%s)\n",
                   st->max_position_residual, st->max_velocity_residual, st->projections,
                   e ? "; embedded loops solved by Newton, never projected" : "");
}

/* Finish the outputs; returns the exit status of the run. */
static int finish(const sim_args *a, sim_out *o, sd_status run_status, const sd_error *run_err,
                  const sd_sim_stats *st)
{
    int rc = CLI_OK;
    char note[64];
    const char *truncated = NULL;
    if (st->stop_reason == SD_STOP_FLAG) {
        snprintf(note, sizeof(note), "interrupted by %s", signal_name((int)stop_signal));
        truncated = note;
        rc = 128 + (int)stop_signal;
    } else if (run_status != SD_OK || o->failed) {
        truncated = run_status != SD_OK ? "integration failed" : "output failed";
        rc = CLI_FAILURE;
    }
    if (truncated && o->traj) { /* the plot and the page say it as the CSV's last line does */
        char mark[128];
        snprintf(mark, sizeof(mark), "truncated at t = %.6g s (%s)", st->t_end, truncated);
        sd_trajectory_set_note(o->traj, mark);
    }
    cli_progress_finish(&o->progress, st->t_end);
    if (run_status != SD_OK) fprintf(stderr, "soadyn simulate: %s\n", run_err->message);
    if (o->failed && !o->csv_failed) fprintf(stderr, "soadyn simulate: %s\n", o->err.message);
    sd_error err = {0};
    if (o->csv && sd_csv_close(o->csv, truncated, &err) != SD_OK) {
        fprintf(stderr, "soadyn simulate: %s\n", err.message);
        if (rc == CLI_OK) rc = CLI_FAILURE;
    }
    o->csv = NULL;
    if (a->plot && o->traj && sd_trajectory_length(o->traj) > 0) {
        if (sd_plot_trajectory(o->traj, a->plot, &err) != SD_OK) {
            fprintf(stderr, "soadyn simulate: %s\n", err.message);
            if (rc == CLI_OK) rc = CLI_FAILURE;
        }
    }
    if (truncated && st->stop_reason == SD_STOP_FLAG)
        fprintf(stderr, "soadyn simulate: %s at t = %.6g s%s\n", note, st->t_end,
                a->output ? "; the CSV ends there" : "");
    return rc;
}

/* --html: the page of what was computed (also of a run stopped early); returns the exit status. */
static int write_html(const sd_model *m, const sim_args *a, const sim_out *o, int rc)
{
    if (!o->traj || sd_trajectory_length(o->traj) == 0) return rc;
    sd_view_options vo;
    sd_view_options_init(&vo);
    vo.model_path = a->model_path;
    sd_error err = {0};
    cli_view_meshes meshes; /* $ROS_PACKAGE_PATH; meshes not drawn reported on stderr */
    if (cli_view_meshes_begin(&vo, &meshes, "simulate", NULL) != CLI_OK) { /* said on stderr */
        if (rc == CLI_OK) rc = CLI_FAILURE;
    } else if (sd_view_write_html(m, o->traj, &vo, a->html, &err) != SD_OK) {
        fprintf(stderr, "soadyn simulate: %s\n", err.message);
        if (rc == CLI_OK) rc = CLI_FAILURE;
    }
    cli_view_meshes_done(&meshes);
    return rc;
}

static int run_simulation(sd_model *m, const sim_args *a, sd_sim_options *so)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *q = calloc((size_t)nq + 1, sizeof(double)), *u = calloc((size_t)nv + 1, sizeof(double));
    double *tau = calloc((size_t)nv + 1, sizeof(double));
    int *nodes = calloc((size_t)sd_model_nbodies(m) + 1, sizeof(int));
    sim_out o;
    memset(&o, 0, sizeof(o));
    int rc = CLI_OK;
    if (!q || !u || !tau || !nodes) {
        fprintf(stderr, "soadyn simulate: out of memory (nq %d, nv %d)\n", nq, nv);
        rc = CLI_FAILURE;
    }
    if (rc == CLI_OK) {
        sd_configuration_reference(m, q);
        if ((a->q0 && cli_parse_values(m, "q0", a->q0, CLI_LIST_Q, q, NULL)) ||
            (a->u0 && cli_parse_values(m, "u0", a->u0, CLI_LIST_V, u, NULL)) ||
            (a->tau && cli_parse_values(m, "tau", a->tau, CLI_LIST_V, tau, NULL)) ||
            parse_tip_nodes(m, a->tip_node, nodes))
            rc = CLI_USAGE;
    }
    if (rc == CLI_OK && sd_configuration_quaternion_error(m, q) > 1e-9) {
        fprintf(stderr, "soadyn simulate: --q0: a quaternion is not unit (| |q| - 1 | = %.3g)\n",
                sd_configuration_quaternion_error(m, q));
        rc = CLI_USAGE;
    }
    /* the embedding is built here only to refuse bad --embed / --independent before any output exists
     * (exit 1, the library's message); sd_simulate builds its own from the same options */
    sd_embedding *e = NULL;
    if (rc == CLI_OK) rc = cli_embedding("simulate", m, &a->embed, q, &e);
    if (rc == CLI_OK && (a->plot || a->html) && !(o.traj = sd_trajectory_new_nodes(m, nodes))) {
        fprintf(stderr, "soadyn simulate: out of memory setting up the trajectory for the plot\n");
        rc = CLI_FAILURE;
    }
    so->tau = tau;
    so->stop = &stop_signal;
    so->embed = a->embed.embed;
    so->independent = a->embed.independent;
    /* what sd_simulate would refuse at once is refused before any output is touched */
    if (rc == CLI_OK && sd_simulate_check(m, so, q, u, &o.err) != SD_OK) {
        fprintf(stderr, "soadyn simulate: %s\n", o.err.message);
        rc = CLI_USAGE;
    }
    /* and so is an output that cannot be created, though the plot and the page are written at the end */
    if (rc == CLI_OK && ((a->plot && sd_output_probe(a->plot, &o.err) != SD_OK) ||
                         (a->html && sd_output_probe(a->html, &o.err) != SD_OK))) {
        fprintf(stderr, "soadyn simulate: %s\n", o.err.message);
        rc = CLI_FAILURE;
    }
    /* the CSV is opened last: once it exists, the run goes ahead and finish() closes it */
    if (rc == CLI_OK && a->output && sd_csv_open_nodes(m, a->output, nodes, &o.csv, &o.err) != SD_OK) {
        fprintf(stderr, "soadyn simulate: %s\n", o.err.message);
        rc = CLI_FAILURE;
    }
    if (rc == CLI_OK) {
        if (o.csv || o.traj) { /* samples cost a kinematics pass: only when wanted */
            so->observer = observer;
            so->observer_user = &o;
        }
        so->progress = on_progress; /* costs nothing: draws only on a terminal, after 1 s */
        so->progress_user = &o.progress;
        install_handlers();
        sd_sim_stats st;
        sd_error err = {0};
        cli_progress_start(&o.progress, so->t0, so->t0 + so->duration);
        const double w0 = wall_now();
        const sd_status s = sd_simulate(m, so, q, u, &st, &err);
        const double wall = wall_now() - w0;
        rc = finish(a, &o, s, &err, &st);
        if (a->html) rc = write_html(m, a, &o, rc);
        if (s == SD_OK) {
            print_summary(m, e, so, &st, wall, a->dt_from);
            if (a->code) cli_printf("dynamics         %s\n", a->code);
            print_deflections(m, nodes, q);
        }
    }
    if (e) sd_embedding_free(e);
    sd_trajectory_free(o.traj);
    free(nodes);
    free(q);
    free(u);
    free(tau);
    return rc;
}

int cmd_simulate(int argc, char **argv)
{
    sim_args a;
    memset(&a, 0, sizeof(a));
    const cli_option options[] = {
        {"duration", 1, &a.duration, NULL}, {"dt", 1, &a.dt, NULL},
        {"integrator", 1, &a.integrator, NULL}, {"jacobian", 1, &a.jacobian, NULL}, {"rtol", 1, &a.rtol, NULL},
        {"atol", 1, &a.atol, NULL}, {"q0", 1, &a.q0, NULL},
        {"u0", 1, &a.u0, NULL}, {"tau", 1, &a.tau, NULL},
        {"output", 1, &a.output, NULL}, {"every", 1, &a.every, NULL},
        {"plot", 1, &a.plot, NULL}, {"tip-node", 1, &a.tip_node, NULL}, {"html", 1, &a.html, NULL},
        {"floating", 0, NULL, &a.floating}, CLI_EMBED_OPTIONS(a.embed),
        {"keep-fixed", 0, NULL, &a.keep_fixed}, {"gravity", 1, &a.gravity, NULL},
        {"compiled", 0, NULL, &a.compiled},     {NULL, 0, NULL, NULL}};
    const char *path;
    int rc = cli_parse("simulate", argc, argv, options, help, &path);
    if (rc >= 0) return rc;
    a.model_path = path;
    sd_sim_options so;
    sd_sim_options_init(&so);
    rc = parse_settings(&a, &so);
    if (rc != CLI_OK) return rc;
    sd_model *model;
    rc = cli_load_model("simulate", path, a.floating, a.keep_fixed, a.gravity, &model);
    if (rc != CLI_OK) return rc;
    rc = resolve_dt(&a, model, &so);
    char code[4400];
    if (rc == CLI_OK && a.compiled) {
        cli_compile("simulate", model, code, sizeof code);
        a.code = code;
    }
    if (rc == CLI_OK) rc = run_simulation(model, &a, &so);
    sd_model_free(model);
    return rc;
}
