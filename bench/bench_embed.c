/*
 * bench/bench_embed.c — soadyn_bench --embed (issue 11, "Cost"; never a test): forward dynamics of
 * closed mechanisms by constraint embedding (soadyn/embed.h: the loop's bodies one aggregate node,
 * 000 Eq 62-67) against the tree-augmented method (soadyn/loops.h: ABA, compliance G M^-1 G*,
 * multipliers, correction, 000 Eq 45-46), at the same state of the same model.
 *
 * Mechanisms: models/four_bar.urdf, models/slider_crank.urdf, a geared motor (002 Eq 17 by
 * sd_builder_add_geared_motor: rotor and link on the ground, q_rotor = 20 q_link, a COUPLING), a
 * two-link arm with a geared motor at each joint (the second rotor rides on the first link: its
 * gyroscopic coupling is kept), a 10-link revolute chain
 * with a four-bar at its tip (closed to the tip link), and DIR/cassie_mjcf/cassie.xml (four leg
 * loops; left out, saying so, when DIR is absent). Every constraint is embedded (options.loops =
 * "all") in the embedded columns; the tree-augmented columns use the same model through loops.h.
 *
 * State: the model's reference configuration moved by a fixed pseudo-random step, closed by
 * sd_assemble_configuration and then by sd_embedded_close (so both methods see the same closed q);
 * random embedded speeds u, the tree speeds N u; random embedded forces tau, the tree forces with
 * tau on the independent speeds and 0 on the dependent ones (then N* tau_tree = tau: the same
 * problem on both sides). Before timing, both methods' accelerations and multipliers are compared
 * (printed: the largest difference relative to the largest entry).
 *
 * Columns (ns per call, kinematics included; each a median of N interleaved batches):
 *   tree ABA      sd_forward_dynamics on the spanning tree, constraints ignored (the floor)
 *   TA FD         sd_closed_loop_forward_dynamics, qdd only, as sd_simulate calls it
 *   embedded FD   sd_embedded_forward_dynamics at a closed q (Newton checks the closure: no step)
 *   after a step  the same from q (+) dt N u, dt = 1 ms: the state an integrator step leaves, open
 *                 by O(dt^2), so the call's Newton takes its iterations (what a simulation step pays)
 *   TA projection what a tree-augmented simulation adds once per step to stay closed (sim's
 *                 constraint_projection.c): sd_assemble_configuration from that same stepped q,
 *                 then sd_project_velocities
 *   embedded close the embedded counterpart once per step: sd_embedded_close from the stepped q,
 *                 then sd_embedded_tree_speeds (an RK4 step: 4 TA FD + 1 projection, against 4
 *                 embedded FD after a step + 1 close)
 *   + forces      TA with lambda and inter-body forces; embedded with inter-body forces, then
 *                 sd_embedded_constraint_forces
 * All methods of a mechanism are timed in interleaved batches of about 2 ms (A B C .. C B A ..:
 * ABBA, so that the machine's noise falls on all alike) after a 20 ms warm-up each, by this
 * thread's CPU time (--wall: by the wall clock; see clock_ns).
 *
 * O(N): the chain with a four-bar at its tip from 10 to 10 000 links: ns per call and per body of
 * tree ABA, TA FD and embedded FD; flat ns per body is the claim. --only KEY (below) times that one
 * mechanism's row and leaves the O(N) table out.
 *
 * Instruction counts: --count K --only KEY runs each method of one mechanism K times through the
 * functions embench_* (no timing), for
 *   valgrind --tool=callgrind --toggle-collect='embench_*' soadyn_bench --embed --count K --only KEY
 *   callgrind_annotate --inclusive=yes callgrind.out.<pid> | grep embench_   (Ir / K per call)
 * KEY: four_bar slider_crank geared_motor geared_arm chain_four_bar cassie, or chainN (N links + a
 * four-bar, the O(N) table's mechanism).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_embed.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <soadyn/soadyn.h>

#include "bench_common.h"
#include "timing.h"

#ifndef SOADYN_BENCH_BUILD
#define SOADYN_BENCH_BUILD "unknown flags"
#endif

/* One mechanism: the model, its embedding, one workspace per method (so each runs as it would
 * alone: the TA fast path reuses its own last pivots, the embedded Newton its own warm start) and
 * the state. Tree-sized arrays: nq, nv (the model's); embedded ones: nve. */
typedef struct mech {
    const char *key, *label;
    sd_model *m;
    sd_embedding *e;
    sd_data *d_aba, *d_ta, *d_taf, *d_proj;
    sd_embedded_data *ed, *ed_step, *edf, *ed_close;
    int nq, nv, nve, nc, nbodies;
    double *q, *q_step, *u_tree, *tau_tree, *qdd_aba, *qdd_ta, *qdd_taf, *lambda_ta, *q_proj, *u_proj;
    double *u, *tau, *qdd, *qdd_step, *qdd_f, *lambda_e;
} mech;

enum { M_ABA = 0, M_TA, M_EMB, M_EMB_STEP, M_TA_PROJ, M_EMB_CLOSE, M_TA_FORCES, M_EMB_FORCES, NMETHODS };
static const char *const method_names[NMETHODS] = {"tree ABA",      "TA FD",
                                                   "embedded FD",   "embedded FD after a step",
                                                   "TA projection", "embedded close",
                                                   "TA FD + lambda, forces", "embedded FD + lambda, forces"};

typedef sd_status (*method_fn)(mech *x);

static sd_status call_tree_aba(mech *x)
{
    return sd_forward_dynamics(x->m, x->d_aba, x->q, x->u_tree, x->tau_tree, NULL, x->qdd_aba);
}
static sd_status call_ta_fd(mech *x)
{
    return sd_closed_loop_forward_dynamics(x->m, x->d_ta, x->q, x->u_tree, x->tau_tree, NULL, x->qdd_ta, NULL, NULL);
}
static sd_status call_embedded_fd(mech *x)
{
    return sd_embedded_forward_dynamics(x->e, x->ed, x->q, x->u, x->tau, NULL, x->qdd, NULL, NULL);
}
static sd_status call_embedded_fd_step(mech *x)
{
    return sd_embedded_forward_dynamics(x->e, x->ed_step, x->q_step, x->u, x->tau, NULL, x->qdd_step, NULL, NULL);
}
/* What a tree-augmented simulation pays once per step to stay on the manifold (sim's
 * constraint_projection.c): q closed from the step's q by assembly, then u projected onto G u = 0. */
static sd_status call_ta_project(mech *x)
{
    double residual = 0.0;
    const sd_status s = sd_assemble_configuration(x->m, x->d_proj, x->q_step, NULL, 1e-12, 10, x->q_proj, &residual);
    return s != SD_OK ? s : sd_project_velocities(x->m, x->d_proj, x->q_proj, x->u_tree, x->u_proj);
}
/* The embedded counterpart (sim's constraint_projection.c): q closed from the stepped q by
 * sd_embedded_close, the tree speeds N u there. */
static sd_status call_embedded_close(mech *x)
{
    const sd_status s = sd_embedded_close(x->e, x->ed_close, x->q_step, x->q_proj, NULL);
    return s != SD_OK ? s : sd_embedded_tree_speeds(x->e, x->ed_close, x->q_proj, x->u, x->u_proj);
}
static sd_status call_ta_fd_forces(mech *x)
{
    const sd_closed_loop_options opt = {.interbody_forces = 1};
    return sd_closed_loop_forward_dynamics(x->m, x->d_taf, x->q, x->u_tree, x->tau_tree, NULL, x->qdd_taf,
                                           x->lambda_ta, &opt);
}
static sd_status call_embedded_fd_forces(mech *x)
{
    const sd_embedded_fd_options opt = {.interbody_forces = 1};
    const sd_status s = sd_embedded_forward_dynamics(x->e, x->edf, x->q, x->u, x->tau, NULL, x->qdd_f, NULL, &opt);
    return s != SD_OK ? s : sd_embedded_constraint_forces(x->e, x->edf, x->lambda_e);
}

/* n calls in a row under a name of its own, never inlined: what is timed and counted (a loop of
 * its own, so that no identical-code folding merges it with the single call above). */
static BENCH_NOINLINE void embench_tree_aba(mech *x, long n) { for (long i = 0; i < n; ++i) call_tree_aba(x); }
static BENCH_NOINLINE void embench_ta_fd(mech *x, long n) { for (long i = 0; i < n; ++i) call_ta_fd(x); }
static BENCH_NOINLINE void embench_embedded_fd(mech *x, long n) { for (long i = 0; i < n; ++i) call_embedded_fd(x); }
static BENCH_NOINLINE void embench_embedded_fd_step(mech *x, long n) { for (long i = 0; i < n; ++i) call_embedded_fd_step(x); }
static BENCH_NOINLINE void embench_ta_project(mech *x, long n) { for (long i = 0; i < n; ++i) call_ta_project(x); }
static BENCH_NOINLINE void embench_embedded_close(mech *x, long n) { for (long i = 0; i < n; ++i) call_embedded_close(x); }
static BENCH_NOINLINE void embench_ta_fd_forces(mech *x, long n) { for (long i = 0; i < n; ++i) call_ta_fd_forces(x); }
static BENCH_NOINLINE void embench_embedded_fd_forces(mech *x, long n) { for (long i = 0; i < n; ++i) call_embedded_fd_forces(x); }

/* first[]: the untimed first calls (mech_check), so that the counted functions see only the
 * repeated ones; methods[]: the timed and counted. */
static const method_fn first[NMETHODS] = {call_tree_aba,     call_ta_fd,       call_embedded_fd,
                                          call_embedded_fd_step, call_ta_project, call_embedded_close,
                                          call_ta_fd_forces, call_embedded_fd_forces};
typedef void (*batch_fn)(mech *x, long n);
static const batch_fn methods[NMETHODS] = {embench_tree_aba,         embench_ta_fd,      embench_embedded_fd,
                                            embench_embedded_fd_step, embench_ta_project, embench_embedded_close,
                                            embench_ta_fd_forces, embench_embedded_fd_forces};

/* ---------------------------------------------------------------- failures, arrays */

static void fail(const char *what, const char *message)
{
    fprintf(stderr, "soadyn_bench --embed: %s: %s\n", what, message);
    exit(1);
}

static double *vec(int n)
{
    double *x = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    if (!x) fail("memory", "out of memory");
    return x;
}

/* printf onto the end of buf (size bytes in all, kept terminated). */
static void append(char *buf, size_t size, const char *fmt, ...)
{
    const size_t len = strlen(buf);
    if (len + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

/* ---------------------------------------------------------------- models */

/* A body hinged on `parent` at p (parent frame) about axis 0/1/2 of its frame: a slender bar from
 * its origin to `tip` (centre of mass halfway, m |tip|^2 / 12 about every axis plus m 1e-3 for its
 * thickness, as bench_loops.c's). */
static void bar_desc(sd_body_desc *d, const char *name, const char *parent, const double p[3], int axis, double mass,
                     const double tip[3])
{
    sd_body_desc_init(d);
    d->name = name;
    d->parent = parent;
    d->hinge = SD_HINGE_REVOLUTE;
    double len2 = 0.0;
    for (int j = 0; j < 3; ++j) {
        d->placement.p[j] = p[j];
        d->axis[j] = axis == j;
        d->com[j] = 0.5 * tip[j];
        len2 += tip[j] * tip[j];
    }
    d->mass = mass;
    for (int j = 0; j < 3; ++j) d->inertia[4 * j] = mass * (len2 / 12.0 + 1e-3);
}

static void add(sd_builder *b, const sd_body_desc *d)
{
    sd_error err;
    if (sd_builder_add_body(b, d, &err) != SD_OK) fail(d->name, err.message);
}

static void add_bar(sd_builder *b, const char *name, const char *parent, const double p[3], int axis, double mass,
                    const double tip[3])
{
    sd_body_desc d;
    bar_desc(&d, name, parent, p, axis, mass, tip);
    add(b, &d);
}

static void add_constraint(sd_builder *b, const sd_constraint_desc *c)
{
    sd_error err;
    if (sd_builder_add_constraint(b, c, &err) != SD_OK) fail(c->name, err.message);
}

static sd_model *build(sd_builder *b)
{
    sd_model *m = NULL;
    sd_error err;
    if (sd_builder_build(b, &m, &err) != SD_OK) fail("build", err.message);
    sd_builder_free(b);
    return m;
}

/* A geared motor (002 Eq 17, sd_builder_add_geared_motor: link NAME and rotor NAME_rotor on one
 * parent, q_rotor = 20 q_link, embedded): the link a bar as bar_desc's about axis 0/1/2 at p, the
 * rotor a small disc (0.3 kg, radius 2 cm) on the same axis at the same place. */
static void add_motor(sd_builder *b, const char *name, const char *parent, const double p[3], int axis, double mass,
                      const double tip[3])
{
    sd_body_desc link;
    bar_desc(&link, name, parent, p, axis, mass, tip);
    sd_geared_motor_desc g;
    sd_geared_motor_desc_init(&g);
    g.name = name;
    g.parent = parent;
    g.placement = g.rotor_placement = link.placement;
    g.mass = mass;
    g.rotor_mass = 0.3;
    const double r2 = 0.02 * 0.02;
    for (int j = 0; j < 3; ++j) {
        g.axis[j] = g.rotor_axis[j] = link.axis[j];
        g.com[j] = link.com[j];
        g.inertia[4 * j] = link.inertia[4 * j];
        g.rotor_inertia[4 * j] = j == axis ? 0.5 * 0.3 * r2 : 0.25 * 0.3 * r2;
    }
    g.ratio = 20.0;
    sd_error err;
    if (sd_builder_add_geared_motor(b, &g, &err) != SD_OK) fail(name, err.message);
}

/* One geared motor on the ground about y (gravity -z loads the link). */
static sd_model *geared_motor(void)
{
    sd_builder *b = sd_builder_new();
    sd_builder_set_name(b, "geared_motor");
    const double o[3] = {0, 0, 0}, link[3] = {0.4, 0, 0};
    add_motor(b, "link", NULL, o, 1, 2.0, link);
    return build(b);
}

/* A two-link arm (shoulder about z on the ground, elbow about y), each joint a geared motor; the
 * elbow's rotor is carried by the upper arm, so its spin couples gyroscopically with the shoulder's
 * motion. Two aggregates, the second hanging on a body of the first. */
static sd_model *geared_arm(void)
{
    sd_builder *b = sd_builder_new();
    sd_builder_set_name(b, "geared_arm");
    const double o[3] = {0, 0, 0}, upper[3] = {0.4, 0, 0}, fore[3] = {0.3, 0, 0};
    add_motor(b, "link1", NULL, o, 2, 3.0, upper);
    add_motor(b, "link2", "link1", upper, 1, 2.0, fore);
    return build(b);
}

/* A serial revolute chain of n links (bench.c's: 1 kg, 0.1 m, axes alternating x and y) with a
 * planar four-bar at its tip: crank, coupler and rocker about the tip link's z (the dimensions of
 * models/four_bar.urdf), the rocker's end pinned to the tip link 0.4 m from the crank's pivot. Its
 * reference configuration closes the loop (the crank at 60 degrees, four_bar.urdf's angles). */
static sd_model *chain_four_bar(int n)
{
    sd_builder *b = sd_builder_new();
    char name[32], parent[32] = "";
    const double o[3] = {0, 0, 0}, down[3] = {0, 0, -0.1};
    for (int k = 0; k < n; ++k) {
        snprintf(name, sizeof name, "link%d", k);
        add_bar(b, name, k ? parent : NULL, k ? down : o, k % 2 ? 1 : 0, 1.0, down);
        memcpy(parent, name, sizeof name);
    }
    static const char *const bars[3] = {"crank", "coupler", "rocker"};
    static const double len[3] = {0.1, 0.35, 0.3}, mass[3] = {0.5, 1.2, 0.9};
    static const double angle[3] = {1.0471975511965977, -0.41848242355105715, -1.9745328078391253};
    for (int k = 0; k < 3; ++k) {
        const double p[3] = {k ? len[k - 1] : 0, 0, k ? 0 : -0.1}, tip[3] = {len[k], 0, 0};
        sd_body_desc d;
        bar_desc(&d, bars[k], k ? bars[k - 1] : parent, p, 2, mass[k], tip);
        d.has_reference = 1;
        d.reference[0] = angle[k];
        add(b, &d);
    }
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = "rocker_pivot";
    c.type = SD_CONSTRAINT_REVOLUTE;
    c.body_a = parent;
    c.frame_a.p[0] = 0.4;
    c.frame_a.p[2] = -0.1;
    c.body_b = "rocker";
    c.frame_b.p[0] = 0.3;
    c.axis[0] = c.axis[1] = 0.0;
    c.axis[2] = 1.0;
    add_constraint(b, &c);
    return build(b);
}

static sd_model *load_file(const char *path)
{
    sd_model *m = NULL;
    sd_error err;
    if (sd_model_load_file(path, NULL, &m, NULL, &err) != SD_OK) fail(path, err.message);
    return m;
}

/* ---------------------------------------------------------------- the state */

/* The largest |a - b| over n entries relative to the largest |b| (1e-300 floor). */
static double rel_diff(const double *a, const double *b, int n)
{
    double d = 0.0, s = 1e-300;
    for (int i = 0; i < n; ++i) {
        d = fmax(d, fabs(a[i] - b[i]));
        s = fmax(s, fabs(b[i]));
    }
    return d / s;
}

/* The model's reference configuration moved by `amplitude` times a fixed pseudo-random step, closed
 * (see the top of this file); speeds and forces as described there. */
static void mech_init(mech *x, const char *key, const char *label, sd_model *m, double amplitude)
{
    memset(x, 0, sizeof *x);
    x->key = key, x->label = label, x->m = m;
    x->nq = sd_model_nq(m), x->nv = sd_model_nv(m), x->nc = sd_model_nconstraint_rows(m);
    x->nbodies = sd_model_nbodies(m);
    x->d_aba = sd_data_new(m), x->d_ta = sd_data_new(m), x->d_taf = sd_data_new(m), x->d_proj = sd_data_new(m);
    if (!x->d_aba || !x->d_ta || !x->d_taf || !x->d_proj) fail(label, "out of memory");
    x->q = vec(x->nq), x->q_step = vec(x->nq), x->q_proj = vec(x->nq), x->u_proj = vec(x->nv);
    x->u_tree = vec(x->nv), x->tau_tree = vec(x->nv), x->qdd_aba = vec(x->nv), x->qdd_ta = vec(x->nv);
    x->qdd_taf = vec(x->nv), x->lambda_ta = vec(x->nc), x->lambda_e = vec(x->nc);
    double *step = vec(x->nv);
    uint64_t rng = 2026;
    for (int i = 0; i < x->nv; ++i) step[i] = amplitude * (2.0 * sd_random_uniform(&rng) - 1.0);
    sd_configuration_reference(m, x->q);
    sd_configuration_integrate(m, x->q, step, 1.0, x->q);
    free(step);
    double residual = 0.0;
    if (sd_assemble_configuration(m, x->d_ta, x->q, NULL, 1e-13, 50, x->q, &residual) != SD_OK)
        fail(label, sd_data_error(x->d_ta));

    sd_embed_options opt;
    sd_embed_options_init(&opt);
    opt.loops = "all";
    opt.q = x->q;
    sd_error err;
    x->e = sd_embedding_new(m, &opt, &err);
    if (!x->e) fail(label, err.message);
    x->ed = sd_embedded_data_new(x->e), x->ed_step = sd_embedded_data_new(x->e), x->edf = sd_embedded_data_new(x->e);
    x->ed_close = sd_embedded_data_new(x->e);
    if (!x->ed || !x->ed_step || !x->edf || !x->ed_close) fail(label, "out of memory");
    if (sd_embedded_close(x->e, x->ed, x->q, x->q, &residual) != SD_OK) fail(label, sd_embedded_error(x->ed));
    x->nve = sd_embedding_nv(x->e);
    x->u = vec(x->nve), x->tau = vec(x->nve), x->qdd = vec(x->nve), x->qdd_step = vec(x->nve), x->qdd_f = vec(x->nve);
    for (int i = 0; i < x->nve; ++i) {
        x->u[i] = 2.0 * sd_random_uniform(&rng) - 1.0;
        x->tau[i] = 2.0 * sd_random_uniform(&rng) - 1.0;
        x->tau_tree[sd_embedding_speed_index(x->e, i)] = x->tau[i]; /* N* tau_tree = tau */
    }
    if (sd_embedded_tree_speeds(x->e, x->ed, x->q, x->u, x->u_tree) != SD_OK) fail(label, sd_embedded_error(x->ed));
    sd_configuration_integrate(m, x->q, x->u_tree, 1e-3, x->q_step);
}

static void mech_free(mech *x)
{
    sd_data_free(x->d_aba), sd_data_free(x->d_ta), sd_data_free(x->d_taf), sd_data_free(x->d_proj);
    sd_embedded_data_free(x->ed), sd_embedded_data_free(x->ed_step), sd_embedded_data_free(x->edf);
    sd_embedded_data_free(x->ed_close);
    sd_embedding_free(x->e);
    sd_model_free(x->m);
    double *arrays[] = {x->q,         x->q_step,   x->u_tree,   x->tau_tree, x->qdd_aba, x->qdd_ta,
                        x->qdd_taf,   x->lambda_ta, x->lambda_e, x->u,        x->tau,     x->qdd,
                        x->qdd_step,  x->qdd_f,     x->q_proj,   x->u_proj};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) free(arrays[i]);
}

/* Each method once (the first calls: the TA pivots, the embedded warm starts); a method that fails
 * is left out of the timing and its message printed. ok[i] says which ran. Then the agreement of
 * the embedded and tree-augmented results (the embedded tree accelerations X qdd + Xdot u against
 * TA's qdd; the multipliers, minimum norm on both sides). */
static void mech_check(mech *x, int ok[NMETHODS], char *notes, size_t size)
{
    for (int i = 0; i < NMETHODS; ++i) {
        const sd_status s = first[i](x);
        ok[i] = s == SD_OK;
        if (!ok[i]) {
            const char *msg = i == M_ABA ? sd_data_error(x->d_aba)
                              : i == M_TA ? sd_data_error(x->d_ta)
                              : i == M_TA_FORCES ? sd_data_error(x->d_taf)
                              : i == M_TA_PROJ ? sd_data_error(x->d_proj)
                              : i == M_EMB ? sd_embedded_error(x->ed)
                              : i == M_EMB_STEP ? sd_embedded_error(x->ed_step)
                              : i == M_EMB_CLOSE ? sd_embedded_error(x->ed_close)
                                                : sd_embedded_error(x->edf);
            append(notes, size, "  %s: %s left out: %s (%s)\n", x->label, method_names[i], sd_status_name(s), msg);
        }
    }
    if (!ok[M_EMB] || !ok[M_TA_FORCES]) return;
    double *qdd_tree = vec(x->nv), *qdd = vec(x->nve);
    sd_embedded_data *ed = sd_embedded_data_new(x->e);
    if (!ed) fail(x->label, "out of memory");
    if (sd_embedded_forward_dynamics(x->e, ed, x->q, x->u, x->tau, NULL, qdd, qdd_tree, NULL) == SD_OK) {
        append(notes, size, "  %s: embedded tree qdd vs TA qdd: %.1e relative", x->label,
               rel_diff(qdd_tree, x->qdd_taf, x->nv));
        if (ok[M_EMB_FORCES]) append(notes, size, "; lambda: %.1e relative", rel_diff(x->lambda_e, x->lambda_ta, x->nc));
        append(notes, size, "; after a step, embedded qdd moved by %.1e relative\n", rel_diff(x->qdd_step, qdd, x->nve));
    }
    sd_embedded_data_free(ed);
    free(qdd_tree);
    free(qdd);
}

/* ---------------------------------------------------------------- timing */

/* The clock batches are timed with: this thread's CPU time by default, since the machine these
 * figures come from is shared (load averages of 10-20 on 2 cores), and wall time would count the
 * spells the process waits for a core; --wall: the monotonic clock of timing.h, as bench.c. */
static int use_wall_clock = 0;

static double clock_ns(void)
{
    if (use_wall_clock) return now_ns();
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

/* Calls per batch of about 2 ms, after a 20 ms warm-up (at least one call). */
static long batch_size(batch_fn fn, mech *x)
{
    const double t0 = clock_ns();
    long calls = 0;
    while (clock_ns() - t0 < 2e7 && calls < 1000000) { fn(x, 1); ++calls; }
    const long n = (long)(2e6 / ((clock_ns() - t0) / (double)calls));
    return n < 1 ? 1 : n;
}

/* Median ns per call of each selected method (use[i]) over `batches` batches, interleaved forwards
 * and backwards (A B C, C B A, A B C, ...: ABBA), so that slow spells of the machine fall on every
 * method alike; unselected methods get NAN. */
static void time_methods(mech *x, const int use[NMETHODS], int batches, double median[NMETHODS])
{
    long n[NMETHODS] = {0};
    double *samples[NMETHODS] = {0};
    for (int i = 0; i < NMETHODS; ++i) {
        median[i] = NAN;
        if (!use[i]) continue;
        n[i] = batch_size(methods[i], x);
        samples[i] = vec(batches);
    }
    for (int b = 0; b < batches; ++b)
        for (int j = 0; j < NMETHODS; ++j) {
            const int i = b % 2 ? NMETHODS - 1 - j : j;
            if (!use[i]) continue;
            const double start = clock_ns();
            methods[i](x, n[i]);
            samples[i][b] = (clock_ns() - start) / (double)n[i];
        }
    for (int i = 0; i < NMETHODS; ++i) {
        if (!use[i]) continue;
        qsort(samples[i], (size_t)batches, sizeof(double), compare_doubles);
        median[i] = samples[i][batches / 2];
        free(samples[i]);
    }
}

static void load_average(char *buf, size_t size)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double a = 0, b = 0, c = 0;
    if (f && fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(buf, size, "%.2f %.2f %.2f", a, b, c);
    else snprintf(buf, size, "unknown");
    if (f) fclose(f);
}

static void cell(char *buf, size_t size, double ns)
{
    if (isnan(ns)) snprintf(buf, size, "-");
    else snprintf(buf, size, "%.0f", ns);
}

/* ---------------------------------------------------------------- the tables */

static void mechanism_row(mech *x, int batches, char *table, size_t table_size)
{
    int ok[NMETHODS];
    char desc[1024];
    sd_embedding_describe(x->e, desc, sizeof desc);
    printf("  %s (%s): %d bodies, nv %d -> %d embedded, %d constraint rows. %s\n", x->label, x->key, x->nbodies,
           x->nv, x->nve, x->nc, desc);
    char notes[2048] = "";
    mech_check(x, ok, notes, sizeof notes);
    fputs(notes, stdout);
    double t[NMETHODS];
    time_methods(x, ok, batches, t);
    char c[NMETHODS][32];
    for (int i = 0; i < NMETHODS; ++i) cell(c[i], sizeof c[i], t[i]);
    append(table, table_size, "| %s | %d | %d / %d | %s | %s | %s | %s | %.2f | %s | %s | %s | %s |\n", x->label,
           x->nbodies, x->nv, x->nve, c[M_ABA], c[M_TA], c[M_EMB], c[M_EMB_STEP], t[M_EMB] / t[M_TA], c[M_TA_PROJ],
           c[M_EMB_CLOSE], c[M_TA_FORCES], c[M_EMB_FORCES]);
    fprintf(stderr, "soadyn_bench --embed: %s done\n", x->label);
}

static void scaling_row(int links, int batches, char *notes, size_t notes_size)
{
    mech x;
    char label[64];
    snprintf(label, sizeof label, "chain %d + four-bar", links);
    mech_init(&x, "chain", label, chain_four_bar(links), 0.1);
    int ok[NMETHODS];
    mech_check(&x, ok, notes, notes_size);
    const int use[NMETHODS] = {ok[M_ABA], ok[M_TA], ok[M_EMB], ok[M_EMB_STEP], 0, 0, 0, 0};
    double t[NMETHODS];
    time_methods(&x, use, batches, t);
    const double nb = x.nbodies;
    printf("| %d | %d | %.0f | %.1f | %.0f | %.1f | %.0f | %.1f | %.0f | %.2f |\n", links, x.nbodies, t[M_ABA],
           t[M_ABA] / nb, t[M_TA], t[M_TA] / nb, t[M_EMB], t[M_EMB] / nb, t[M_EMB_STEP], t[M_EMB] / t[M_TA]);
    fflush(stdout);
    fprintf(stderr, "soadyn_bench --embed: %s done\n", label);
    mech_free(&x);
}

/* The small mechanisms, in table order; cassie only when its file is there (else a note). */
static int small_mechanisms(mech *out, const char *shared, const char *only)
{
    int n = 0;
    char path[1100];
    if (!only || !strcmp(only, "four_bar"))
        mech_init(&out[n++], "four_bar", "four-bar (URDF)", load_file(SOADYN_SOURCE_DIR "/models/four_bar.urdf"), 0.1);
    if (!only || !strcmp(only, "slider_crank"))
        mech_init(&out[n++], "slider_crank", "slider-crank (URDF)",
                  load_file(SOADYN_SOURCE_DIR "/models/slider_crank.urdf"), 0.1);
    if (!only || !strcmp(only, "geared_motor"))
        mech_init(&out[n++], "geared_motor", "geared motor (rotor + link)", geared_motor(), 0.1);
    if (!only || !strcmp(only, "geared_arm"))
        mech_init(&out[n++], "geared_arm", "2-link arm, 2 geared motors", geared_arm(), 0.1);
    if (!only || !strcmp(only, "chain_four_bar"))
        mech_init(&out[n++], "chain_four_bar", "10-link chain + four-bar", chain_four_bar(10), 0.1);
    if (only && !strncmp(only, "chain", 5) && atoi(only + 5) > 0) { /* chainN: the O(N) table's, for counting */
        const int links = atoi(only + 5);
        mech_init(&out[n++], only, "chain + four-bar", chain_four_bar(links), 0.1);
    }
    if (!only || !strcmp(only, "cassie")) {
        snprintf(path, sizeof path, "%s/cassie_mjcf/cassie.xml", shared);
        if (access(path, R_OK) == 0) mech_init(&out[n++], "cassie", "Cassie (MJCF, 4 leg loops)", load_file(path), 0.02);
        else printf("  Cassie: left out, %s not found\n", path);
    }
    return n;
}

static int usage(void)
{
    fprintf(stderr, "usage: soadyn_bench --embed [--batches N (>= 31)] [--quick] [--wall] [--shared DIR] [--only KEY]\n"
                    "       soadyn_bench --embed --count K --only KEY   (for callgrind; see bench_embed.c)\n");
    return 1;
}

int bench_embed(int argc, char **argv)
{
    int batches = 31, quick = 0;
    long count = 0;
    const char *shared = SOADYN_SHARED_MODELS_DIR, *only = NULL;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--batches") == 0 && i + 1 < argc) batches = atoi(argv[++i]);
        else if (strcmp(argv[i], "--shared") == 0 && i + 1 < argc) shared = argv[++i];
        else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) count = atol(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--wall") == 0) use_wall_clock = 1;
        else if (strcmp(argv[i], "--embed") != 0) return usage();
    }
    mech mechs[8];
    if (count > 0) { /* callgrind mode: each method `count` times, nothing timed */
        if (!only) return usage();
        const int n = small_mechanisms(mechs, shared, only);
        if (n == 0) return usage();
        int ok[NMETHODS];
        char notes[2048] = "";
        mech_check(&mechs[0], ok, notes, sizeof notes);
        fputs(notes, stdout);
        for (int i = 0; i < NMETHODS; ++i)
            if (ok[i]) methods[i](&mechs[0], count);
        mech_free(&mechs[0]);
        return 0;
    }
    if (quick) batches = 11;
    else if (batches < 31) batches = 31;
    char load[64];
    load_average(load, sizeof load);
    printf("soadyn %s: constraint embedding vs tree augmentation, median ns per call (%s) of %d interleaved "
           "(ABBA) batches, kinematics included\nbuilt with %s\nload average (1, 5, 15 min) at the start: %s\n\n"
           "models:\n",
           SOADYN_VERSION, use_wall_clock ? "wall clock" : "thread CPU time", batches, SOADYN_BENCH_BUILD, load);
    const int n = small_mechanisms(mechs, shared, only);
    static char table[8192];
    table[0] = '\0';
    for (int k = 0; k < n; ++k) {
        mechanism_row(&mechs[k], batches, table, sizeof table);
        mech_free(&mechs[k]);
    }
    printf("\n| mechanism | bodies | nv tree / embedded | tree ABA | TA FD | embedded FD | embedded FD after a step "
           "| embedded / TA | TA projection | embedded close | TA FD + lambda, forces | embedded FD + lambda, forces "
           "|\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n%s",
           table);
    if (only) { /* one mechanism's row: no O(N) table */
        load_average(load, sizeof load);
        printf("\nload average (1, 5, 15 min) at the end: %s\n", load);
        return 0;
    }
    printf("\nO(N): a revolute chain with a four-bar at its tip (ns per call and per body):\n\n"
           "| links | bodies | tree ABA | /body | TA FD | /body | embedded FD | /body | embedded FD after a step "
           "| embedded / TA |\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    fflush(stdout);
    static const int sizes[] = {10, 30, 100, 300, 1000, 3000, 10000};
    static char notes[8192];
    notes[0] = '\0';
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        if (quick && sizes[i] > 1000) break;
        scaling_row(sizes[i], batches, notes, sizeof notes);
    }
    printf("\nchecks:\n%s", notes);
    load_average(load, sizeof load);
    printf("\nload average (1, 5, 15 min) at the end: %s\n", load);
    return 0;
}
