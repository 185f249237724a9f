/*
 * tests/sim/test_sim_integrators.c — the sim layer against closed forms and invariants:
 *   - a point-mass pendulum of small amplitude swings with period 2 pi sqrt(l/g) (RK4, CVODE BDF
 *     and Adams), measured from zero crossings;
 *   - RK4 at dt = 1 ms keeps the energy of a 1 rad pendulum to 1e-8 relative over 10 s;
 *   - a tumbling free body keeps |quat| = 1, its energy and its world angular momentum;
 *   - the chart's rate is the derivative of its map (finite differences, every hinge type);
 *   - damping, the control callback, the stop flag, labels and the CSV header;
 *   - options that would not run what was asked (dt longer than the duration, a zero duration,
 *     non-finite numbers, every < 1, ...) are refused naming the option; dt = duration is one step;
 *     the progress callback sees every output time up to the end;
 *   - labels of random trees with 0-dof bodies name the hinge that owns each entry;
 *   - sample_energies = 0 leaves the samples' energies NaN and the trajectory bit for bit the same
 *     as with them (RK4 and CVODE), and the default's sample energies are sd_sim_energy's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "random_tree.h"
#include "sim/sim_internal.h"
#include "test_util.h"

#define PI 3.14159265358979323846
#define G 9.81
#define LEN 1.0

/* One revolute body about y, hanging along -z: a point mass at distance LEN (zero inertia). */
static sd_model *pendulum(double damping)
{
    sd_builder *b = sd_builder_new();
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "bob";
    d.joint_name = "swing";
    d.hinge = SD_HINGE_REVOLUTE;
    sd_v3_set(d.axis, 0, 1, 0);
    d.mass = 2.0;
    sd_v3_set(d.com, 0, 0, -LEN);
    d.damping = damping;
    sd_error err;
    sd_model *m = NULL;
    if (sd_builder_add_body(b, &d, &err) != SD_OK || sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "pendulum: %s\n", err.message);
        exit(1);
    }
    sd_builder_free(b);
    return m;
}

/* Zero crossings of q[0] from samples, linearly interpolated (q is locally linear there). */
typedef struct crossings {
    double prev_t, prev_q;
    int have_prev, n;
    double t[256];
} crossings;

static int record_crossing(void *user, const sd_sim_sample *s)
{
    crossings *c = user;
    if (c->have_prev && c->prev_q < 0.0 && s->q[0] >= 0.0 && c->n < 256)
        c->t[c->n++] = c->prev_t + (s->t - c->prev_t) * (-c->prev_q) / (s->q[0] - c->prev_q);
    c->prev_t = s->t;
    c->prev_q = s->q[0];
    c->have_prev = 1;
    return 0;
}

static void check_period(sd_integrator integrator)
{
    sd_model *m = pendulum(0.0);
    double q = 0.01, u = 0.0; /* starts at rest at amplitude 0.01 rad */
    crossings c;
    memset(&c, 0, sizeof(c));
    sd_sim_options o;
    sd_sim_options_init(&o);
    o.integrator = integrator;
    o.duration = 20.0;
    o.rtol = 1e-11;
    o.atol = 1e-13;
    o.observer = record_crossing;
    o.observer_user = &c;
    sd_error err;
    CHECK(sd_simulate(m, &o, &q, &u, NULL, &err) == SD_OK);
    CHECK(c.n >= 9);
    if (c.n >= 2) {
        const double period = (c.t[c.n - 1] - c.t[0]) / (c.n - 1);
        const double T0 = 2.0 * PI * sqrt(LEN / G); /* amplitude correction T0 a^2/16 = 6e-6 relative */
        printf("  %-12s period %.12f s, closed form %.12f s, relative %.2e\n", sd_integrator_name(integrator),
               period, T0, (period - T0) / T0);
        CHECK_CLOSE(period / T0, 1.0, 1e-5);
        /* and the exact large-amplitude series T0 (1 + a^2/16 + 11 a^4/3072), to the integrator's accuracy */
        CHECK_CLOSE(period / (T0 * (1.0 + 1e-4 / 16.0 + 11e-8 / 3072.0)), 1.0, 1e-9);
    }
    sd_model_free(m);
}

/* Largest relative energy deviation seen. */
typedef struct energy_track {
    double e0, worst;
    int started;
} energy_track;

static int track_energy(void *user, const sd_sim_sample *s)
{
    energy_track *e = user;
    const double E = s->kinetic + s->potential;
    if (!e->started) { e->e0 = E; e->started = 1; }
    const double d = fabs(E - e->e0) / fabs(e->e0);
    if (d > e->worst) e->worst = d;
    return 0;
}

static void check_energy_rk4(void)
{
    sd_model *m = pendulum(0.0);
    double q = 1.0, u = 0.0;
    energy_track e = {0, 0, 0};
    sd_sim_options o;
    sd_sim_options_init(&o);
    o.duration = 10.0;
    o.dt = 1e-3;
    o.observer = track_energy;
    o.observer_user = &e;
    sd_sim_stats st;
    sd_error err;
    CHECK(sd_simulate(m, &o, &q, &u, &st, &err) == SD_OK);
    printf("  rk4 energy drift over 10 s at 1 rad: max %.2e, end %.2e relative (%ld steps)\n", e.worst,
           fabs(st.energy_end - st.energy_start) / fabs(st.energy_start), st.steps);
    CHECK(e.worst < 1e-8);
    CHECK(st.steps == 10000);
    CHECK_CLOSE(st.t_end, 10.0, 1e-15);
    sd_model_free(m);
}

/* A rigid body with three different principal inertias on a free hinge, no gravity. */
static sd_model *free_body(void)
{
    sd_builder *b = sd_builder_new();
    const double zero[3] = {0, 0, 0};
    sd_builder_set_gravity(b, zero);
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "brick";
    d.joint_name = "base";
    d.hinge = SD_HINGE_FREE;
    d.mass = 3.0;
    sd_v3_set(d.com, 0.1, -0.05, 0.02); /* off the origin: couples rotation and translation */
    d.inertia[0] = 0.15; d.inertia[4] = 0.2; d.inertia[8] = 0.3;
    sd_error err;
    sd_model *m = NULL;
    if (sd_builder_add_body(b, &d, &err) != SD_OK || sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "free body: %s\n", err.message);
        exit(1);
    }
    sd_builder_free(b);
    return m;
}

typedef struct spin_track {
    const sd_model *m;
    sd_data *d;
    double h0[6], worst_h, worst_quat;
    int started;
} spin_track;

static int track_spin(void *user, const sd_sim_sample *s)
{
    spin_track *k = user;
    double h[6];
    sd_kinematics(k->m, k->d, s->q, s->u, NULL);
    sd_spatial_momentum_world(k->m, k->d, h);
    if (!k->started) { memcpy(k->h0, h, sizeof(h)); k->started = 1; }
    double dh = 0.0;
    for (int i = 0; i < 6; ++i) dh = fmax(dh, fabs(h[i] - k->h0[i]));
    k->worst_h = fmax(k->worst_h, dh);
    const double *quat = s->q + 3;
    k->worst_quat = fmax(k->worst_quat, fabs(sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] +
                                                  quat[3] * quat[3]) - 1.0));
    return 0;
}

static void check_spinning_body(sd_integrator integrator)
{
    sd_model *m = free_body();
    double q[7], u[6] = {0.1, 5.0, 0.2, 0.3, -0.2, 0.1}; /* near the unstable middle axis: it tumbles */
    sd_configuration_neutral(m, q);
    spin_track k;
    memset(&k, 0, sizeof(k));
    k.m = m;
    k.d = sd_data_new(m);
    sd_sim_options o;
    sd_sim_options_init(&o);
    o.integrator = integrator;
    o.duration = 10.0;
    o.dt = 1e-3;
    o.rtol = 1e-10;
    o.atol = 1e-12;
    o.observer = track_spin;
    o.observer_user = &k;
    sd_sim_stats st;
    sd_error err;
    CHECK(sd_simulate(m, &o, q, u, &st, &err) == SD_OK);
    const double drift = fabs(st.energy_end - st.energy_start) / st.energy_start;
    printf("  %-12s spinning body: max | |quat|-1 | %.1e (reported %.1e), momentum drift %.1e, energy drift %.1e, "
           "%ld re-bases\n", sd_integrator_name(integrator), k.worst_quat, st.max_quat_norm_error, k.worst_h, drift,
           st.rebases);
    CHECK(k.worst_quat < 1e-12);
    CHECK(st.max_quat_norm_error >= k.worst_quat);
    CHECK(k.worst_h < 1e-6);
    CHECK(drift < 1e-6);
    if (integrator != SD_INTEGRATOR_RK4) CHECK(st.rebases > 0); /* 50 rad of spin: the chart moved */
    sd_data_free(k.d);
    sd_model_free(m);
}

/* The chart's rate is the derivative of its map: (q(delta + eps r) (-) q(delta)) / eps = u. */
static void check_chart_rate(void)
{
    uint64_t rng = 77;
    for (int trial = 0; trial < 20; ++trial) {
        sd_model *m = random_tree(&rng, 8, trial % 2 ? RT_FREE_ROOT : 0);
        const int nq = sd_model_nq(m), nv = sd_model_nv(m);
        double *q0 = malloc(sizeof(double) * nq), *qa = malloc(sizeof(double) * nq);
        double *qb = malloc(sizeof(double) * nq), *delta = malloc(sizeof(double) * nv);
        double *u = malloc(sizeof(double) * nv), *r = malloc(sizeof(double) * nv);
        double *d2 = malloc(sizeof(double) * nv), *v = malloc(sizeof(double) * nv);
        sim_chart chart;
        sim_chart_init(&chart, m);
        random_state(m, &rng, q0, u, delta);
        for (int i = 0; i < nv; ++i) delta[i] *= 0.8; /* rotations up to ~1.4 rad */
        sim_chart_rate(&chart, delta, u, r);
        const double eps = 1e-6;
        for (int i = 0; i < nv; ++i) d2[i] = delta[i] + eps * r[i];
        sim_chart_apply(&chart, q0, delta, qa);
        sim_chart_apply(&chart, q0, d2, qb);
        sd_configuration_difference(m, qa, qb, v);
        for (int i = 0; i < nv; ++i) v[i] /= eps;
        CHECK_ARRAY_CLOSE(v, u, nv, 1e-5, "chart rate vs finite difference");
        CHECK(sim_chart_quat_error(&chart, qa) < 1e-14);
        sim_chart_release(&chart);
        free(q0); free(qa); free(qb); free(delta); free(u); free(r); free(d2); free(v);
        sd_model_free(m);
    }
}

/* Gravity compensation by the control callback holds the pendulum where it starts. */
static void hold(void *user, double t, const double *q, const double *u, double *tau)
{
    (void)user; (void)t; (void)u;
    tau[0] += 2.0 * G * LEN * sin(q[0]); /* m g l sin(q): the pendulum falls toward q = 0 */
}

static int stop_after(void *user, const sd_sim_sample *s)
{
    volatile sig_atomic_t *flag = user;
    if (s->t >= 0.25) *flag = 1;
    return 0;
}

static void check_control_damping_stop(void)
{
    sd_model *m = pendulum(0.5);
    sd_sim_options o;
    sd_sim_options_init(&o);
    sd_sim_stats st;
    sd_error err;
    double q = 0.5, u = 0.0;
    o.control = hold;
    o.duration = 2.0;
    CHECK(sd_simulate(m, &o, &q, &u, &st, &err) == SD_OK);
    CHECK_CLOSE(q, 0.5, 1e-12);
    CHECK(fabs(u) < 1e-12);
    /* damping alone: the energy falls */
    o.control = NULL;
    q = 0.5;
    u = 0.0;
    CHECK(sd_simulate(m, &o, &q, &u, &st, &err) == SD_OK);
    CHECK(st.energy_end < st.energy_start - 0.1);
    /* the stop flag ends the run at the next step */
    volatile sig_atomic_t flag = 0;
    o.observer = stop_after;
    o.observer_user = (void *)&flag;
    o.stop = &flag;
    CHECK(sd_simulate(m, &o, &q, &u, &st, &err) == SD_OK);
    CHECK(st.stop_reason == SD_STOP_FLAG);
    CHECK_CLOSE(st.t_end, 0.251, 1e-12);
    /* bad options are refused with a message */
    o.dt = -1.0;
    CHECK(sd_simulate(m, &o, &q, &u, &st, &err) == SD_E_ARGUMENT);
    CHECK(strstr(err.message, "dt") != NULL);
    sd_model_free(m);
}

/* The samples of a run: time and state, and the energies they carried. */
#define MAX_SAMPLES 64
typedef struct samples {
    int n;
    double t[MAX_SAMPLES], q[MAX_SAMPLES][7], u[MAX_SAMPLES][6], kinetic[MAX_SAMPLES], potential[MAX_SAMPLES];
} samples;

static int record_samples(void *user, const sd_sim_sample *s)
{
    samples *r = user;
    if (r->n == MAX_SAMPLES) return 1;
    r->t[r->n] = s->t;
    memcpy(r->q[r->n], s->q, sizeof r->q[0]);
    memcpy(r->u[r->n], s->u, sizeof r->u[0]);
    r->kinetic[r->n] = s->kinetic;
    r->potential[r->n] = s->potential;
    r->n++;
    return 0;
}

static void run_samples(const sd_model *m, sd_integrator integrator, int sample_energies, samples *r)
{
    double q[7] = {0.1, -0.2, 0.3, 0.9, 0.1, 0.2, 0.3}, u[6] = {0.3, -0.2, 1.5, 0.1, 0.0, -0.4};
    sd_configuration_normalize(m, q);
    memset(r, 0, sizeof *r);
    sd_sim_options o;
    sd_sim_options_init(&o);
    o.integrator = integrator;
    o.duration = 0.5;
    o.dt = 0.01;
    o.every = 2;
    o.observer = record_samples;
    o.observer_user = r;
    o.sample_energies = sample_energies;
    sd_sim_stats st;
    sd_error err;
    CHECK(sd_simulate(m, &o, q, u, &st, &err) == SD_OK);
    CHECK(isfinite(st.energy_start) && isfinite(st.energy_end)); /* the statistics' energies either way */
}

static void check_sample_energies_off(sd_integrator integrator)
{
    sd_model *m = free_body();
    sd_sim_options defaults;
    sd_sim_options_init(&defaults);
    CHECK(defaults.sample_energies == 1);
    samples on, off;
    run_samples(m, integrator, 1, &on);
    run_samples(m, integrator, 0, &off);
    CHECK(on.n == 26 && off.n == on.n);
    CHECK(memcmp(on.t, off.t, sizeof on.t) == 0);
    CHECK(memcmp(on.q, off.q, sizeof on.q) == 0);
    CHECK(memcmp(on.u, off.u, sizeof on.u) == 0);
    sd_data *d = sd_data_new(m);
    for (int k = 0; k < on.n; ++k) {
        CHECK(isnan(off.kinetic[k]) && isnan(off.potential[k]));
        double T, V;
        CHECK(sd_sim_energy(m, d, on.q[k], on.u[k], &T, &V) == SD_OK);
        CHECK(on.kinetic[k] == T && on.potential[k] == V);
    }
    sd_data_free(d);
    sd_model_free(m);
}

/* sd_simulate with `o` changed by `change` must refuse with SD_E_ARGUMENT and a message holding `word`. */
static void expect_refused(const sd_model *m, const sd_sim_options *base, void (*change)(sd_sim_options *),
                           const char *word)
{
    sd_sim_options o = *base;
    change(&o);
    double q = 0.5, u = 0.0;
    sd_sim_stats st;
    sd_error err;
    err.message[0] = '\0';
    const sd_status s = sd_simulate(m, &o, &q, &u, &st, &err);
    if (s != SD_E_ARGUMENT || !strstr(err.message, word))
        fprintf(stderr, "  expected a refusal naming '%s', got status %d: %s\n", word, (int)s, err.message);
    CHECK(s == SD_E_ARGUMENT && strstr(err.message, word) != NULL);
    CHECK(q == 0.5 && u == 0.0); /* nothing was integrated */
}

static void dt_past_duration(sd_sim_options *o) { o->dt = 2.0; o->duration = 1.0; }
static void dt_just_past_duration(sd_sim_options *o) { o->dt = 0.25000001; o->duration = 0.25; }
static void zero_duration(sd_sim_options *o) { o->duration = 0.0; }
static void negative_duration(sd_sim_options *o) { o->duration = -1.0; }
static void nan_duration(sd_sim_options *o) { o->duration = NAN; }
static void infinite_duration(sd_sim_options *o) { o->duration = INFINITY; }
static void zero_dt(sd_sim_options *o) { o->dt = 0.0; }
static void nan_dt(sd_sim_options *o) { o->dt = NAN; }
static void zero_every(sd_sim_options *o) { o->every = 0; }
static void nan_t0(sd_sim_options *o) { o->t0 = NAN; }
static void negative_max_step(sd_sim_options *o) { o->max_step = -1.0; }
static void negative_internal_steps(sd_sim_options *o) { o->max_internal_steps = -5; }
static void infinite_rtol(sd_sim_options *o) { o->integrator = SD_INTEGRATOR_CVODE_BDF; o->rtol = INFINITY; }
static const double nan_force[1] = {NAN};
static void nan_tau(sd_sim_options *o) { o->tau = nan_force; }

typedef struct progress_seen {
    int calls, increasing;
    double last_t;
    long last_steps;
} progress_seen;

static void on_progress(void *user, double t, long steps)
{
    progress_seen *p = user;
    if (p->calls > 0 && !(t > p->last_t && steps >= p->last_steps)) p->increasing = 0;
    ++p->calls;
    p->last_t = t;
    p->last_steps = steps;
}

static void check_options_refused(void)
{
    sd_model *m = pendulum(0.0);
    sd_sim_options base;
    sd_sim_options_init(&base);
    base.duration = 0.25;
    expect_refused(m, &base, dt_past_duration, "longer than the duration");
    expect_refused(m, &base, dt_just_past_duration, "longer than the duration");
    expect_refused(m, &base, zero_duration, "duration");
    expect_refused(m, &base, negative_duration, "duration");
    expect_refused(m, &base, nan_duration, "duration");
    expect_refused(m, &base, infinite_duration, "duration");
    expect_refused(m, &base, zero_dt, "dt");
    expect_refused(m, &base, nan_dt, "dt");
    expect_refused(m, &base, zero_every, "every");
    expect_refused(m, &base, nan_t0, "t0");
    expect_refused(m, &base, negative_max_step, "max_step");
    expect_refused(m, &base, negative_internal_steps, "max_internal_steps");
    expect_refused(m, &base, infinite_rtol, "tolerances");
    expect_refused(m, &base, nan_tau, "tau[0]");

    /* dt = duration: one step of it; a duration that is not a multiple of dt ends with a shorter step,
     * exactly at t0 + duration; the progress callback sees each output time, increasing, to the end */
    sd_sim_options o = base;
    sd_sim_stats st;
    sd_error err;
    double q = 0.5, u = 0.0;
    o.dt = 0.25;
    CHECK(sd_simulate(m, &o, &q, &u, &st, &err) == SD_OK);
    CHECK(st.steps == 1 && st.t_end == 0.25);
    progress_seen seen = {0, 1, 0.0, 0};
    o = base;
    o.t0 = 1.0;
    o.duration = 1.0;
    o.dt = 0.3;
    o.progress = on_progress;
    o.progress_user = &seen;
    q = 0.5;
    u = 0.0;
    CHECK(sd_simulate(m, &o, &q, &u, &st, &err) == SD_OK);
    CHECK(st.steps == 4 && st.t_end == 2.0);
    CHECK(seen.calls == 4 && seen.increasing && seen.last_t == 2.0 && seen.last_steps == 4);
    sd_model_free(m);
}

/* Each label of a random tree's coordinates and speeds starts with the joint name of the hinge
 * that owns the entry (found here by a plain search), the labels are all different, and an index
 * past the end gets "q<i>" / "u<i>". Random trees have 0-dof (fixed) bodies, which share their
 * first index with the next body. */
static void check_labels_random_trees(void)
{
    uint64_t rng = 777;
    for (int trial = 0; trial < 20; ++trial) {
        sd_model *m = random_tree(&rng, 2 + trial * 3, 0);
        const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
        char (*labels)[160] = malloc(sizeof(*labels) * (size_t)(nq + nv + 1));
        for (int i = 0; i < nq + nv; ++i) {
            const int speed = i >= nq, index = speed ? i - nq : i;
            int owner = -1;
            for (int k = 0; k < n; ++k) {
                const int first = speed ? sd_model_v_index(m, k) : sd_model_q_index(m, k);
                const int count = speed ? sd_model_hinge_nv(m, k) : sd_model_hinge_nq(m, k);
                if (index >= first && index < first + count) owner = k;
            }
            const int len = speed ? sd_speed_label(m, index, labels[i], sizeof(labels[i]))
                                  : sd_coordinate_label(m, index, labels[i], sizeof(labels[i]));
            const char *joint = sd_model_joint_name(m, owner);
            const size_t jl = strlen(joint);
            CHECK(owner >= 0 && len == (int)strlen(labels[i]));
            CHECK(strncmp(labels[i], joint, jl) == 0 && (labels[i][jl] == '\0' || labels[i][jl] == '.'));
            for (int j = 0; j < i; ++j)
                if ((j >= nq) == speed) CHECK(strcmp(labels[i], labels[j]) != 0);
        }
        char past[32], expect[32];
        sd_coordinate_label(m, nq, past, sizeof(past));
        snprintf(expect, sizeof(expect), "q%d", nq);
        CHECK(strcmp(past, expect) == 0);
        free(labels);
        sd_model_free(m);
    }
}

static void check_labels_and_csv(void)
{
    sd_model *m = free_body();
    char buf[64];
    sd_coordinate_label(m, 0, buf, sizeof(buf));
    CHECK(strcmp(buf, "base.x") == 0);
    sd_coordinate_label(m, 3, buf, sizeof(buf));
    CHECK(strcmp(buf, "base.qw") == 0);
    sd_speed_label(m, 5, buf, sizeof(buf));
    CHECK(strcmp(buf, "base.vz") == 0);
    const char *path = "test_sim_labels.csv";
    sd_csv_writer *w;
    sd_error err;
    CHECK(sd_csv_open(m, path, &w, &err) == SD_OK);
    double q[7], u[6] = {0};
    sd_configuration_neutral(m, q);
    sd_sim_sample s = {0.5, q, u, 1.0, 2.0, 0};
    CHECK(sd_csv_write(w, &s, &err) == SD_OK);
    CHECK(sd_csv_close(w, "test", &err) == SD_OK);
    FILE *fp = fopen(path, "r");
    char line[1024];
    CHECK(fp && fgets(line, sizeof(line), fp));
    CHECK(strcmp(line, "time,base.x,base.y,base.z,base.qw,base.qx,base.qy,base.qz,u.base.wx,u.base.wy,u.base.wz,"
                       "u.base.vx,u.base.vy,u.base.vz,kinetic,potential,total\n") == 0);
    CHECK(fp && fgets(line, sizeof(line), fp) && strncmp(line, "0.5,0,0,0,1,0,0,0,", 18) == 0);
    CHECK(fp && fgets(line, sizeof(line), fp) && strcmp(line, "# truncated at t=0.5 (test)\n") == 0);
    if (fp) fclose(fp);
    remove(path);
    sd_model_free(m);
}

int main(void)
{
    check_period(SD_INTEGRATOR_RK4);
    check_period(SD_INTEGRATOR_CVODE_BDF);
    check_period(SD_INTEGRATOR_CVODE_ADAMS);
    check_energy_rk4();
    check_spinning_body(SD_INTEGRATOR_RK4);
    check_spinning_body(SD_INTEGRATOR_CVODE_BDF);
    check_spinning_body(SD_INTEGRATOR_CVODE_ADAMS);
    check_chart_rate();
    check_control_damping_stop();
    check_options_refused();
    check_labels_and_csv();
    check_labels_random_trees();
    check_sample_energies_off(SD_INTEGRATOR_RK4);
    check_sample_energies_off(SD_INTEGRATOR_CVODE_BDF);
    return test_summary("test_sim_integrators");
}
