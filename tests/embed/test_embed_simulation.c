/*
 * tests/embed/test_embed_simulation.c — 10 s of motion of embedded systems (issue 11, "Simulation"):
 * the embedded loops are closed by construction (never integrated, never projected), so at every
 * output sample the closure residual (sd_constraint_residuals of the embedded constraints) stays at
 * round-off (< 1e-12), and with no damping the total energy (kinetic with armature, gravity,
 * springs: sd_sim_energy) is conserved to 1e-8 of the largest kinetic energy of the run, with the
 * step chosen so that RK4's own error is below that.
 *
 *   test_embed_simulation four_bar <models folder>
 *       models/four_bar.urdf, its crank named independent (the Grashof crank turns fully; Y1 on the
 *       coupler and rocker stays regular), started at the reference pose with the crank at 4 rad/s,
 *       RK4 dt = 5e-4 s (at 1e-3 RK4's own energy error is 1.2e-8 of the largest kinetic energy). Twice: by this file's own RK4 on embed.h (the chart of model.h:
 *       q = q_n (+) delta, delta' = J^-1(delta) N u, u' = the embedded forward dynamics, q closed by
 *       sd_embedded_close after each step), and by sd_simulate with sd_sim_options.embed.
 *       The pivoting's own split is also run for 2 s, for the record (it may name the rocker or coupler
 *       independent, whose Y1 turns singular at the rocker's extremes: the run then stops with
 *       SD_E_SINGULAR saying the split must change, which is printed).
 *   test_embed_simulation cassie <shared models folder>
 *       ../shared/models/cassie_mjcf/cassie.xml, its four <connect> loops embedded, the pelvis
 *       WELDED to the world (its <freejoint/> removed), every damping attribute removed, and springs
 *       added at the legs' big joints (hip roll/yaw/pitch and knee 300 N m/rad, foot crank 30) about
 *       the keyframe "home" so the legs swing about it instead of flailing through the linkages'
 *       dead centres (joint limits are not modelled by soadyn, so none acts); the shin and heel
 *       springs of the file are kept. Started at "home" (assembled holding hips, knee, tarsus, foot)
 *       at rest under gravity (the legs then swing with up to ~66 J of kinetic energy). RK4 on this
 *       file's chart at dt = 3e-5 s: over 1 s, max |E - E0| / max kinetic was 5.3e-8 at dt = 1e-4 and
 *       1.6e-9 at 5e-5 (ratio 34: RK4's truncation, not the embedding), growing linearly in time
 *       (10 s at 1e-4: 5.6e-7), so 10 s within 1e-8 needs dt below ~4e-5. About 90 s of CPU:
 *       labelled embed_long. Optional arguments: dt and duration (to study the step).
 *       Exits 77 when the folder is absent.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <soadyn/soadyn.h>
#include <soadyn/embed.h>

#include "test_util.h"

typedef struct run_stats {
    double max_residual; /* over samples, embedded constraints */
    double e0, max_de, max_kinetic;
    double t_reached;
    long samples;
    sd_status status;
    char message[512];
} run_stats;

static double embedded_residual(const sd_model *m, const sd_embedding *e, sd_data *d, const double *q, double *pos)
{
    sd_constraint_residuals(m, d, q, NULL, pos, NULL);
    double r = 0.0;
    for (int c = 0; c < sd_model_nconstraints(m); ++c) {
        if (sd_embedding_constraint_embedded(e, c) != 1) continue;
        const int r0 = sd_model_constraint_row_offset(m, c);
        for (int i = 0; i < sd_model_constraint_nrows(m, c); ++i) r = fmax(r, fabs(pos[r0 + i]));
    }
    return r;
}

static void sample(const sd_model *m, const sd_embedding *e, sd_data *d, const double *q, const double *ut, double *pos,
                   run_stats *s)
{
    double T = 0, V = 0;
    s->max_residual = fmax(s->max_residual, embedded_residual(m, e, d, q, pos));
    sd_sim_energy(m, d, q, ut, &T, &V);
    if (s->samples == 0) s->e0 = T + V;
    s->max_de = fmax(s->max_de, fabs(T + V - s->e0));
    s->max_kinetic = fmax(s->max_kinetic, T);
    s->samples++;
}

/* f(delta, u) at base q_n: delta_dot, u_dot */
static sd_status rhs(const sd_model *m, const sd_embedding *e, sd_embedded_data *ed, const double *qn, const double *delta,
                     const double *u, const double *tau, double *qs, double *ut, double *ddot, double *udot)
{
    sd_configuration_integrate(m, qn, delta, 1.0, qs);
    sd_status st = sd_embedded_forward_dynamics(e, ed, qs, u, tau, NULL, udot, NULL, NULL);
    if (st == SD_OK) st = sd_embedded_tree_speeds(e, ed, qs, u, ut);
    if (st == SD_OK) sd_configuration_chart_rate(m, delta, ut, ddot);
    return st;
}

/* Classical RK4 on the chart for `duration` s at step dt, sampled every `every` steps. */
static void run_own_rk4(const sd_model *m, const sd_embedding *e, double *q, double *u, double dt, double duration,
                        int every, run_stats *s)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), ne = sd_embedding_nv(e);
    sd_embedded_data *ed = sd_embedded_data_new(e);
    sd_data *d = sd_data_new(m);
    double *qs = malloc((size_t)nq * sizeof *qs), *ut = malloc((size_t)nv * sizeof *ut);
    double *pos = malloc((size_t)(sd_model_nconstraint_rows(m) + 1) * sizeof *pos);
    double *k[4], *l[4], *delta = calloc((size_t)nv, sizeof *delta), *us = malloc((size_t)ne * sizeof *us);
    double *tau = calloc((size_t)ne + 1, sizeof *tau);
    for (int i = 0; i < 4; ++i) k[i] = malloc((size_t)nv * sizeof(double)), l[i] = malloc((size_t)(ne + 1) * sizeof(double));
    memset(s, 0, sizeof *s);
    s->status = sd_embedded_close(e, ed, q, q, NULL);
    if (s->status == SD_OK) s->status = sd_embedded_tree_speeds(e, ed, q, u, ut);
    if (s->status == SD_OK) sample(m, e, d, q, ut, pos, s);
    /* whole steps to the end: dt shortened a hair when the duration is not a multiple of it */
    const long nsteps = (long)ceil(duration / dt - 1e-9);
    dt = duration / (double)nsteps;
    static const double c[4] = {0.0, 0.5, 0.5, 1.0};
    for (long n = 0; n < nsteps && s->status == SD_OK; ++n) {
        for (int st = 0; st < 4 && s->status == SD_OK; ++st) {
            for (int i = 0; i < nv; ++i) delta[i] = st ? c[st] * dt * k[st - 1][i] : 0.0;
            for (int i = 0; i < ne; ++i) us[i] = u[i] + (st ? c[st] * dt * l[st - 1][i] : 0.0);
            s->status = rhs(m, e, ed, q, delta, us, tau, qs, ut, k[st], l[st]);
        }
        if (s->status != SD_OK) break;
        for (int i = 0; i < nv; ++i) delta[i] = dt / 6.0 * (k[0][i] + 2 * k[1][i] + 2 * k[2][i] + k[3][i]);
        for (int i = 0; i < ne; ++i) u[i] += dt / 6.0 * (l[0][i] + 2 * l[1][i] + 2 * l[2][i] + l[3][i]);
        sd_configuration_integrate(m, q, delta, 1.0, qs);
        s->status = sd_embedded_close(e, ed, qs, q, NULL);
        s->t_reached = (double)(n + 1) * dt; /* the last one is `duration` to round-off */
        if (s->status == SD_OK && ((n + 1) % every == 0 || n + 1 == nsteps)) {
            s->status = sd_embedded_tree_speeds(e, ed, q, u, ut);
            if (s->status == SD_OK) sample(m, e, d, q, ut, pos, s);
        }
    }
    if (s->status != SD_OK) snprintf(s->message, sizeof s->message, "%s", sd_embedded_error(ed));
    for (int i = 0; i < 4; ++i) free(k[i]), free(l[i]);
    free(qs); free(ut); free(pos); free(delta); free(us); free(tau);
    sd_data_free(d);
    sd_embedded_data_free(ed);
}

/* ---- sd_simulate with options.embed */
typedef struct obs_ctx {
    const sd_model *m;
    const sd_embedding *e;
    sd_data *d;
    double *pos;
    run_stats *s;
} obs_ctx;

static int observe(void *user, const sd_sim_sample *smp)
{
    obs_ctx *c = user;
    run_stats *s = c->s;
    s->max_residual = fmax(s->max_residual, embedded_residual(c->m, c->e, c->d, smp->q, c->pos));
    const double E = smp->kinetic + smp->potential;
    if (s->samples == 0) s->e0 = E;
    s->max_de = fmax(s->max_de, fabs(E - s->e0));
    s->max_kinetic = fmax(s->max_kinetic, smp->kinetic);
    s->t_reached = smp->t;
    s->samples++;
    return 0;
}

static void run_simulate(const sd_model *m, const sd_embedding *e, const char *embed, const char *independent, double *q,
                         double *u_tree, double dt, double duration, int every, run_stats *s, sd_sim_stats *st)
{
    memset(s, 0, sizeof *s);
    obs_ctx c = {m, e, sd_data_new(m), malloc((size_t)(sd_model_nconstraint_rows(m) + 1) * sizeof(double)), s};
    sd_sim_options o;
    sd_sim_options_init(&o);
    o.dt = dt;
    o.duration = duration;
    o.every = every;
    o.observer = observe;
    o.observer_user = &c;
    o.project_constraints = 0;
    o.embed = embed;
    o.independent = independent;
    sd_error err;
    memset(&err, 0, sizeof err);
    s->status = sd_simulate(m, &o, q, u_tree, st, &err);
    if (s->status != SD_OK) snprintf(s->message, sizeof s->message, "%s", err.message);
    sd_data_free(c.d);
    free(c.pos);
}

static void report(const char *what, const run_stats *s, double dt, double secs)
{
    printf("%-46s dt %.0e: %s, t %.3f s, %ld samples, closure residual max %.2e, energy E0 %.6g J, "
           "max |E - E0| %.2e J = %.2e of max kinetic %.4g J (%.2e of |E0|), %.2f s wall\n",
           what, dt, sd_status_name(s->status), s->t_reached, s->samples, s->max_residual, s->e0, s->max_de,
           s->max_de / fmax(1e-300, s->max_kinetic), s->max_kinetic, s->max_de / fmax(1e-300, fabs(s->e0)), secs);
    if (s->status != SD_OK) printf("  (%s)\n", s->message);
}

static void check_run(const run_stats *s, double duration)
{
    CHECK(s->status == SD_OK);
    CHECK(fabs(s->t_reached - duration) < 1e-9);
    CHECK(s->max_residual < 1e-12);
    CHECK(s->max_de <= 1e-8 * s->max_kinetic);
}

static double now(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int four_bar(const char *folder)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/four_bar.urdf", folder);
    sd_model *m = NULL;
    sd_error err;
    if (sd_urdf_load_file(path, NULL, &m, &err) != SD_OK) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        CHECK(0);
        return test_summary("test_embed_simulation four_bar");
    }
    const double dt = 5e-4, T = 10.0;
    sd_embed_options eo;
    sd_embed_options_init(&eo);
    eo.loops = "all";
    eo.independent = "crank_joint";
    sd_embedding *e = sd_embedding_new(m, &eo, &err);
    CHECK(e != NULL);
    if (!e) fprintf(stderr, "four-bar embedding: %s\n", err.message);
    if (e) {
        double q[3], u[1] = {4.0}, ut[3];
        sd_configuration_reference(m, q);
        run_stats s;
        double t0 = now();
        run_own_rk4(m, e, q, u, dt, T, 20, &s);
        report("four-bar, own RK4 on embed.h (crank independent)", &s, dt, now() - t0);
        check_run(&s, T);
        /* the same through sd_simulate: the state in the tree's sizes, u_tree = N u_e */
        sd_embedded_data *ed = sd_embedded_data_new(e);
        double ue0[1] = {4.0};
        sd_configuration_reference(m, q);
        CHECK(sd_embedded_tree_speeds(e, ed, q, ue0, ut) == SD_OK);
        sd_embedded_data_free(ed);
        sd_sim_stats st;
        memset(&st, 0, sizeof st);
        t0 = now();
        run_simulate(m, e, "all", "crank_joint", q, ut, dt, T, 20, &s, &st);
        report("four-bar, sd_simulate (options.embed = all)", &s, dt, now() - t0);
        check_run(&s, T);
        CHECK(st.projections == 0);
        sd_embedding_free(e);
    }
    /* the pivoting's own split, for the record */
    eo.independent = NULL;
    e = sd_embedding_new(m, &eo, &err);
    CHECK(e != NULL);
    if (e) {
        char desc[1024];
        sd_embedding_describe(e, desc, sizeof desc);
        printf("pivoting's split: %s\n", desc);
        double q[3], u[1] = {4.0};
        sd_configuration_reference(m, q);
        run_stats s;
        const double t0 = now();
        run_own_rk4(m, e, q, u, 1e-3, 2.0, 10, &s);
        report("four-bar, own RK4 (pivoting's split), 2 s", &s, 1e-3, now() - t0);
        sd_embedding_free(e);
    }
    sd_model_free(m);
    return test_summary("test_embed_simulation four_bar");
}

/* ---- Cassie */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) free(s), s = NULL;
    fclose(f);
    if (s) s[n] = '\0';
    return s;
}

static int blank(char *s, const char *open, const char *close)
{
    int count = 0;
    for (char *p = strstr(s, open); p; p = strstr(p, open)) {
        char *e = strstr(p + strlen(open), close);
        if (!e) break;
        e += strlen(close);
        memset(p, ' ', (size_t)(e - p));
        ++count;
        p = e;
    }
    return count;
}

/* Insert `attrs` after `<joint name="NAME"` (returns a new string, frees s; NULL if absent). */
static char *add_attrs(char *s, const char *name, const char *attrs)
{
    char key[128];
    snprintf(key, sizeof key, "<joint name=\"%s\"", name);
    char *p = strstr(s, key);
    if (!p) {
        free(s);
        return NULL;
    }
    const size_t at = (size_t)(p - s) + strlen(key), n = strlen(s), k = strlen(attrs);
    char *out = malloc(n + k + 1);
    memcpy(out, s, at);
    memcpy(out + at, attrs, k);
    memcpy(out + at + k, s + at, n - at + 1);
    free(s);
    return out;
}

static const char *const HOME_NAMES[10] = {"hip-roll", "hip-yaw", "hip-pitch", "knee", "shin", "tarsus",
                                           "heel-spring", "foot-crank", "plantar-rod", "foot"};
static const double HOME_LEFT[10] = {0.00449956, 0, 0.497301, -1.1997, 0, 1.42671, -2.25907e-06, -1.52439, 1.50645, -1.59681};
static const double HOME_RIGHT[10] = {-0.00449956, 0, 0.497301, -1.1997, 0, 1.42671, 0, -1.52439, 1.50645, -1.59681};

static int cassie(const char *folder, double dt, double T)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/cassie_mjcf/cassie.xml", folder);
    char *xml = read_text(path);
    if (!xml) {
        printf("skipped: %s not found (the shared models are absent)\n", path);
        return 77;
    }
    CHECK(blank(xml, "<freejoint", "/>") == 1);
    CHECK(blank(xml, "damping=\"", "\"") == 18);
    /* springs about "home" (degrees: the file's compiler angle) */
    static const int sprung[5] = {0, 1, 2, 3, 7};
    static const double K[5] = {300, 300, 300, 300, 30};
    for (int side = 0; side < 2 && xml; ++side)
        for (int i = 0; i < 5 && xml; ++i) {
            char name[64], attrs[128];
            snprintf(name, sizeof name, "%s-%s", side ? "right" : "left", HOME_NAMES[sprung[i]]);
            const double ref = (side ? HOME_RIGHT : HOME_LEFT)[sprung[i]] * 180.0 / 3.14159265358979323846;
            snprintf(attrs, sizeof attrs, " stiffness=\"%g\" springref=\"%.17g\"", K[i], ref);
            xml = add_attrs(xml, name, attrs);
        }
    CHECK(xml != NULL);
    sd_model *m = NULL;
    sd_error err;
    if (!xml || sd_mjcf_load_string(xml, strlen(xml), path, &m, &err) != SD_OK) {
        if (xml) fprintf(stderr, "cassie: %s\n", err.message);
        free(xml);
        CHECK(0);
        return test_summary("test_embed_simulation cassie");
    }
    free(xml);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *q = malloc((size_t)nq * sizeof *q);
    sd_configuration_neutral(m, q);
    for (int i = 0; i < 10; ++i)
        for (int side = 0; side < 2; ++side) {
            char name[64];
            snprintf(name, sizeof name, "%s-%s", side ? "right" : "left", HOME_NAMES[i]);
            const int b = sd_model_joint_index(m, name);
            if (b >= 0) q[sd_model_q_index(m, b)] = (side ? HOME_RIGHT : HOME_LEFT)[i];
        }
    unsigned char *lock = calloc((size_t)nv, 1);
    static const char *const held[6] = {"hip-roll", "hip-yaw", "hip-pitch", "knee", "tarsus", "foot"};
    for (int b = 0; b < sd_model_nbodies(m); ++b)
        for (int i = 0; i < 6; ++i) {
            const char *bn = sd_model_body_name(m, b), *s = strchr(bn, '-');
            if (sd_model_hinge_nv(m, b) == 1 && s && strcmp(s + 1, held[i]) == 0) lock[sd_model_v_index(m, b)] = 1;
        }
    sd_data *d = sd_data_new(m);
    double left = 1.0;
    sd_assemble_configuration(m, d, q, lock, 1e-13, 200, q, &left);
    printf("cassie (pelvis welded, no damping, springs about home): nq %d nv %d, assembled at home to %.1e\n", nq, nv, left);
    CHECK(left < 1e-12);
    sd_embed_options eo;
    sd_embed_options_init(&eo);
    eo.loops = "all";
    eo.q = q;
    sd_embedding *e = sd_embedding_new(m, &eo, &err);
    CHECK(e != NULL);
    if (!e) fprintf(stderr, "cassie embedding: %s\n", err.message);
    if (e) {
        char desc[4096];
        sd_embedding_describe(e, desc, sizeof desc);
        printf("%s\n", desc);
        const int ne = sd_embedding_nv(e);
        double *u = calloc((size_t)ne + 1, sizeof *u), *q1 = malloc((size_t)nq * sizeof *q1);
        memcpy(q1, q, (size_t)nq * sizeof *q);
        run_stats s;
        const double t0 = now();
        run_own_rk4(m, e, q1, u, dt, T, 100, &s);
        report("cassie legs, own RK4 on embed.h", &s, dt, now() - t0);
        check_run(&s, T);
        free(u);
        free(q1);
        sd_embedding_free(e);
    }
    free(lock);
    free(q);
    sd_data_free(d);
    sd_model_free(m);
    return test_summary("test_embed_simulation cassie");
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s four_bar <models folder> | cassie <shared models folder>\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "four_bar") == 0) return four_bar(argv[2]);
    /* optional: step and duration (for studying the step; the test uses the defaults) */
    if (strcmp(argv[1], "cassie") == 0) return cassie(argv[2], argc > 3 ? atof(argv[3]) : 3e-5, argc > 4 ? atof(argv[4]) : 10.0);
    fprintf(stderr, "unknown case %s\n", argv[1]);
    return 2;
}
