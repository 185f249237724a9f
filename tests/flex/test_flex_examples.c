/*
 * tests/flex/test_flex_examples.c — what issue 9 says flexible bodies must show, through sd_simulate:
 *
 * (a) The clamped uniform beam: a cantilever (sd_beam_modes, one plane, L = 1 m, EI = 1 N m^2,
 *     1 kg/m) welded to the world, started with one mode's coordinate at 1e-3 (the others 0) and
 *     integrated by RK4 at omega_max h = 0.02; the frequency measured from the zero crossings of the
 *     tip deflection (sd_model_node_deflection, linear interpolation between steps: exact to O(h^3)
 *     at a crossing, where the curvature vanishes) matches Euler-Bernoulli,
 *     omega_i = (beta_i L)^2 sqrt(EI / (m L^4)), beta L = 1.8751041, 4.6940911, 7.8547574, within the
 *     discretisation error, which shrinks monotonically over 5, 10, 20, 40 elements. The table is
 *     printed. The measured frequency also equals the finite-element model's own
 *     (sd_model_flex_frequencies) to 1e-7: the integration adds nothing visible.
 * (b) Energy and momentum: the free-floating spacecraft of models/spacecraft.urdf built with the C
 *     API (the same numbers, gravity 0 as the file's <soadyn:gravity>), full modal mass model,
 *     no damping, spinning and vibrating: over 10 s (CVODE Adams, rtol 1e-13) kinetic + strain energy
 *     stays within 1e-8 (relative) and the spatial momentum (sd_spatial_momentum_world) within 1e-10
 *     (relative to its size).
 * The runtime of each part is printed.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <soadyn/config.h>
#include <soadyn/soadyn.h>
#include <soadyn/flex.h>

#include "test_util.h"

#define SD_PI 3.14159265358979323846

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------- (a) the beam table */

#define NMODES 3
static const double beta_L[NMODES] = {1.8751040687119611, 4.6940911329741746, 7.8547574382376126};

/* A cantilever of `elements` elements welded to the world, bending in x-y only, no gravity. */
static sd_model *clamped_beam(int elements)
{
    sd_beam_spec spec;
    sd_beam_spec_init(&spec); /* L 1 m, EI 1 N m^2, 1 kg/m, cantilever, no damping, full */
    spec.elements = elements;
    spec.modes = NMODES;
    spec.planes = 1; /* x-y: deflection along y */
    sd_flex_data *data = NULL;
    sd_error err = {0};
    sd_model *m = NULL;
    if (sd_beam_modes(&spec, &data, &err) != SD_OK) {
        fprintf(stderr, "sd_beam_modes: %s\n", err.message);
        return NULL;
    }
    sd_builder *b = sd_builder_new();
    sd_builder_set_name(b, "clamped_beam");
    const double g0[3] = {0, 0, 0};
    sd_builder_set_gravity(b, g0);
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "beam";
    d.hinge = SD_HINGE_FIXED;
    sd_transform_identity(&d.placement);
    if (sd_builder_add_body(b, &d, &err) != SD_OK || sd_builder_set_flexible(b, "beam", sd_flex_data_desc(data), &err) != SD_OK ||
        sd_builder_build(b, &m, &err) != SD_OK)
        fprintf(stderr, "clamped beam: %s\n", err.message);
    sd_builder_free(b);
    sd_flex_data_free(data);
    return m;
}

/* Zero crossings of the tip deflection, found as the run goes. */
typedef struct crossings {
    const sd_model *m;
    int node;
    double t_prev, y_prev;
    int have_prev;
    int count;
    double first, last;
} crossings;

static int observe_crossing(void *user, const sd_sim_sample *s)
{
    crossings *c = user;
    double d[6];
    sd_model_node_deflection(c->m, 0, c->node, s->q, d, NULL);
    const double y = d[4];
    if (c->have_prev && ((c->y_prev > 0.0 && y <= 0.0) || (c->y_prev < 0.0 && y >= 0.0))) {
        const double tc = c->t_prev + (s->t - c->t_prev) * c->y_prev / (c->y_prev - y); /* linear */
        if (c->count == 0) c->first = tc;
        c->last = tc;
        ++c->count;
    }
    c->t_prev = s->t;
    c->y_prev = y;
    c->have_prev = 1;
    return 0;
}

/* The angular frequency of mode r of the beam, measured from a free oscillation in that mode. */
static double measured_frequency(const sd_model *m, int r, const double *omega_fe)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double q[NMODES] = {0}, u[NMODES] = {0};
    CHECK(nq == NMODES && nv == NMODES);
    q[sd_model_mode_q_index(m, 0) + r] = 1e-3;
    crossings c = {m, sd_model_body_nnodes(m, 0) - 1, 0, 0, 0, 0, 0, 0};
    sd_sim_options o;
    sd_sim_options_init(&o);
    o.integrator = SD_INTEGRATOR_RK4;
    const double period = 2.0 * SD_PI / omega_fe[r];
    /* omega h = 0.02 for the mode excited (RK4's phase error (omega h)^4 / 120 ~ 1e-9); the others stay
     * at zero (fixed base: M_m^ff = I, K_m diagonal) and within RK4's stability (omega_3 h < 0.4) */
    o.dt = 0.02 / omega_fe[r];
    o.duration = 20.5 * period;        /* 41 crossings */
    o.observer = observe_crossing;
    o.observer_user = &c;
    sd_error err = {0};
    if (sd_simulate(m, &o, q, u, NULL, &err) != SD_OK) {
        fprintf(stderr, "sd_simulate: %s\n", err.message);
        CHECK(0);
        return NAN;
    }
    CHECK(c.count >= 40);
    return c.count >= 2 ? SD_PI * (c.count - 1) / (c.last - c.first) : NAN; /* crossings half a period apart */
}

static void check_beam_table(void)
{
    static const int elements[4] = {5, 10, 20, 40};
    double err_tab[4][NMODES];
    const double t0 = wall();
    printf("clamped uniform beam (L 1 m, EI 1 N m^2, 1 kg/m; Euler-Bernoulli omega = (beta L)^2 rad/s):\n");
    printf("  elements  mode  measured (rad/s)  Euler-Bernoulli  rel. error   FE model (rad/s)\n");
    for (int e = 0; e < 4; ++e) {
        sd_model *m = clamped_beam(elements[e]);
        CHECK(m != NULL);
        if (!m) return;
        double omega_fe[NMODES];
        sd_error err = {0};
        CHECK(sd_model_flex_frequencies(m, 0, omega_fe, &err) == SD_OK);
        for (int r = 0; r < NMODES; ++r) {
            const double w = measured_frequency(m, r, omega_fe);
            const double eb = beta_L[r] * beta_L[r]; /* sqrt(EI / (m L^4)) = 1 */
            err_tab[e][r] = (w - eb) / eb;
            printf("  %8d  %4d  %16.10f  %15.10f  %+10.3e  %16.10f\n", elements[e], r + 1, w, eb, err_tab[e][r],
                   omega_fe[r]);
            CHECK_CLOSE(w, omega_fe[r], 1e-7 * omega_fe[r]); /* the simulation reproduces its model */
        }
        sd_model_free(m);
    }
    for (int r = 0; r < NMODES; ++r) {
        for (int e = 1; e < 4; ++e) CHECK(fabs(err_tab[e][r]) < fabs(err_tab[e - 1][r])); /* monotone */
        CHECK(fabs(err_tab[3][r]) < 5e-3);
    }
    CHECK(fabs(err_tab[3][0]) < 5e-4); /* 40 elements: mode 1 within 0.05 % */
    /* the order of convergence of mode 1 (lumped masses: 2) */
    printf("  mode 1 error ratios: %.2f %.2f %.2f (order 2: 4)\n", err_tab[0][0] / err_tab[1][0],
           err_tab[1][0] / err_tab[2][0], err_tab[2][0] / err_tab[3][0]);
    printf("  beam table: %.2f s\n", wall() - t0);
}

/* ---------------------------------------------------------------- (b) the spacecraft */

static int add_beam(sd_builder *b, const char *body, double L, double EI, double mpl, sd_error *err)
{
    sd_beam_spec spec;
    sd_beam_spec_init(&spec);
    spec.length = L;
    spec.EI = EI;
    spec.mass_per_length = mpl;
    spec.elements = 10;
    spec.modes = 4;
    spec.mass_model = SD_FLEX_FULL;
    sd_flex_data *data = NULL;
    if (sd_beam_modes(&spec, &data, err) != SD_OK) return 0;
    const int ok = sd_builder_set_flexible(b, body, sd_flex_data_desc(data), err) == SD_OK;
    sd_flex_data_free(data);
    return ok;
}

/* models/spacecraft.urdf by hand, gravity 0. */
static sd_model *spacecraft(void)
{
    sd_builder *b = sd_builder_new();
    sd_builder_set_name(b, "spacecraft");
    const double g0[3] = {0, 0, 0};
    sd_builder_set_gravity(b, g0);
    sd_error err = {0};
    int ok = 1;
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "bus";
    d.joint_name = "orbit";
    d.hinge = SD_HINGE_FREE;
    sd_transform_identity(&d.placement);
    d.mass = 1000.0;
    d.inertia[0] = d.inertia[4] = d.inertia[8] = 1000.0 * 8.0 / 12.0;
    ok = ok && sd_builder_add_body(b, &d, &err) == SD_OK;
    for (int side = 0; side < 2; ++side) {
        sd_body_desc_init(&d);
        d.name = side == 0 ? "array_right" : "array_left";
        d.joint_name = side == 0 ? "sada_right" : "sada_left";
        d.parent = "bus";
        d.hinge = SD_HINGE_REVOLUTE;
        sd_m3_rpy(0, 0, side == 0 ? SD_PI / 2 : -SD_PI / 2, d.placement.R);
        d.placement.p[0] = 0;
        d.placement.p[1] = side == 0 ? 1.1 : -1.1;
        d.placement.p[2] = 0;
        d.axis[0] = 1; /* the array's long axis (sd_body_desc_init's default axis is z) */
        d.axis[1] = d.axis[2] = 0;
        d.mass = 2.0;
        d.inertia[0] = 20.0 * 4.0 / 12.0;
        d.inertia[4] = 0.01;
        d.inertia[8] = 20.0 * 4.0 / 12.0;
        ok = ok && sd_builder_add_body(b, &d, &err) == SD_OK && add_beam(b, d.name, 5.0, 2000.0, 4.0, &err);
    }
    sd_body_desc_init(&d);
    d.name = "boom";
    d.joint_name = "boom_root";
    d.parent = "bus";
    d.hinge = SD_HINGE_FIXED;
    sd_m3_rpy(0, SD_PI / 2, 0, d.placement.R);
    d.placement.p[2] = -1.0;
    ok = ok && sd_builder_add_body(b, &d, &err) == SD_OK && add_beam(b, "boom", 4.0, 500.0, 1.5, &err);
    sd_body_desc_init(&d);
    d.name = "magnetometer";
    d.joint_name = "boom_tip";
    d.parent = "boom";
    d.parent_node = 10;
    d.hinge = SD_HINGE_FIXED;
    sd_transform_identity(&d.placement);
    d.placement.p[0] = 4.0;
    d.mass = 2.0;
    d.inertia[0] = d.inertia[4] = d.inertia[8] = 0.002;
    ok = ok && sd_builder_add_body(b, &d, &err) == SD_OK;
    sd_model *m = NULL;
    if (!ok || sd_builder_build(b, &m, &err) != SD_OK) fprintf(stderr, "spacecraft: %s\n", err.message);
    sd_builder_free(b);
    return m;
}

static void set_q(const sd_model *m, double *x, int speed, const char *label, double value)
{
    char buf[64];
    const int n = speed ? sd_model_nv(m) : sd_model_nq(m);
    for (int i = 0; i < n; ++i) {
        if (speed) sd_speed_label(m, i, buf, sizeof(buf));
        else sd_coordinate_label(m, i, buf, sizeof(buf));
        if (strcmp(buf, label) == 0) {
            x[i] = value;
            return;
        }
    }
    fprintf(stderr, "no %s named %s\n", speed ? "speed" : "coordinate", label);
    CHECK(0);
}

typedef struct conservation {
    const sd_model *m;
    sd_data *d;
    double E0, h0[6], hscale;
    double max_dE, max_dh;
    int samples;
} conservation;

static double energy_of(const sd_model *m, sd_data *d, const double *q, const double *u, double h[6])
{
    double T = 0, U = 0;
    sd_kinematics(m, d, q, u, NULL);
    sd_kinetic_energy(m, d, &T);
    sd_strain_energy(m, d, &U);
    sd_spatial_momentum_world(m, d, h);
    return T + U;
}

static int observe_conservation(void *user, const sd_sim_sample *s)
{
    conservation *c = user;
    double h[6];
    const double E = energy_of(c->m, c->d, s->q, s->u, h);
    CHECK_CLOSE(s->kinetic + s->potential, E, 1e-12); /* sd_sim_energy includes the strain energy */
    if (c->samples++ == 0) {
        c->E0 = E;
        memcpy(c->h0, h, sizeof(h));
        c->hscale = 0;
        for (int i = 0; i < 6; ++i) c->hscale = fmax(c->hscale, fabs(h[i]));
    }
    c->max_dE = fmax(c->max_dE, fabs(E - c->E0) / fabs(c->E0));
    for (int i = 0; i < 6; ++i) c->max_dh = fmax(c->max_dh, fabs(h[i] - c->h0[i]) / c->hscale);
    return 0;
}

static void check_spacecraft(const char *models_dir)
{
    const double t0 = wall();
    sd_model *m = spacecraft();
    CHECK(m != NULL);
    if (!m) return;
    CHECK(sd_model_nq(m) == 21 && sd_model_nv(m) == 20 && sd_model_nflexible(m) == 3);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));

    /* the file is this model (its <soadyn:gravity> 0 too): M at a random state */
    if (models_dir) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/spacecraft.urdf", models_dir);
        sd_model *f = NULL;
        sd_error err = {0};
        if (sd_model_load_file(path, NULL, &f, NULL, &err) != SD_OK) {
            fprintf(stderr, "%s\n", err.message);
            CHECK(0);
        } else {
            CHECK(sd_model_nq(f) == nq && sd_model_nv(f) == nv);
            double g[3] = {1, 1, 1};
            sd_model_gravity(f, g);
            CHECK(g[0] == 0.0 && g[1] == 0.0 && g[2] == 0.0);
            uint64_t rng = 7;
            sd_configuration_random(m, &rng, q);
            double *M1 = malloc(sizeof(double) * (size_t)(nv * nv)), *M2 = malloc(sizeof(double) * (size_t)(nv * nv));
            sd_data *d1 = sd_data_new(m), *d2 = sd_data_new(f);
            CHECK(sd_mass_matrix(m, d1, q, M1) == SD_OK && sd_mass_matrix(f, d2, q, M2) == SD_OK);
            CHECK_ARRAY_CLOSE(M1, M2, nv * nv, 1e-12, "spacecraft: M of the C-API model vs the URDF file");
            sd_data_free(d1);
            sd_data_free(d2);
            free(M1);
            free(M2);
            sd_model_free(f);
        }
    }

    /* spinning, drives turning, every appendage vibrating */
    sd_configuration_neutral(m, q);
    memset(u, 0, sizeof(double) * (size_t)nv);
    set_q(m, q, 0, "array_right.eta1", 0.05);
    set_q(m, q, 0, "array_left.eta2", -0.04);
    set_q(m, q, 0, "array_left.eta3", 0.01);
    set_q(m, q, 0, "boom.eta1", 0.03);
    set_q(m, q, 0, "sada_left", 0.3);
    set_q(m, u, 1, "orbit.wx", 0.02);
    set_q(m, u, 1, "orbit.wz", 0.05);
    set_q(m, u, 1, "orbit.vx", 0.1);
    set_q(m, u, 1, "sada_right", 0.1);
    set_q(m, u, 1, "sada_left", -0.2);
    set_q(m, u, 1, "boom.eta2", 0.05);
    set_q(m, u, 1, "array_right.eta4", 0.02);

    conservation c = {m, sd_data_new(m), 0, {0}, 0, 0, 0, 0};
    sd_sim_options o;
    sd_sim_options_init(&o);
#if SOADYN_HAS_CVODE
    o.integrator = SD_INTEGRATOR_CVODE_ADAMS;
    o.rtol = 1e-13;
    o.atol = 1e-15;
    o.dt = 0.01;
#else
    o.integrator = SD_INTEGRATOR_RK4;
    o.dt = 2.5e-4;
#endif
    o.duration = 10.0;
    o.observer = observe_conservation;
    o.observer_user = &c;
    sd_sim_stats st;
    sd_error err = {0};
    const sd_status s = sd_simulate(m, &o, q, u, &st, &err);
    if (s != SD_OK) fprintf(stderr, "sd_simulate: %s\n", err.message);
    CHECK(s == SD_OK);
    printf("free-floating spacecraft (full model, no gravity or damping), %s, 10 s: %ld steps, %ld evaluations\n",
           sd_integrator_name(o.integrator), st.steps, st.rhs_evals);
    printf("  energy T + U_strain = %.10g J: largest relative change %.2e (limit 1e-8)\n", c.E0, c.max_dE);
    printf("  spatial momentum |h|max = %.6g: largest change %.2e of it (limit 1e-10)\n", c.hscale, c.max_dh);
    CHECK(c.samples > 100);
    CHECK(c.max_dE < 1e-8);
    CHECK(c.max_dh < 1e-10);
    printf("  spacecraft: %.2f s\n", wall() - t0);
    sd_data_free(c.d);
    free(q);
    free(u);
    sd_model_free(m);
}

int main(int argc, char **argv)
{
    check_beam_table();
    check_spacecraft(argc > 1 ? argv[1] : NULL);
    return test_summary("test_flex_examples");
}
