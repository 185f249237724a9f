/*
 * tests/test_energy_momentum.c — physics the algorithms must respect, on random trees:
 *   power balance d(KE + PE)/dt = u . tau along the forward-dynamics motion (finite differences);
 *   the Coriolis terms are consistent with the Lagrangian: u . C_v(q, u) = 1/2 u . (dM/dt) u;
 *   a free-floating tree with no gravity and no forces conserves its spatial momentum (RK4 of
 *   the sim layer);
 *   a free body spinning about a principal axis keeps |quat| = 1 and follows q0 exp(w t).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "random_tree.h"
#include "test_util.h"
#include "workspace_read.h"

static double total_energy(const sd_model *m, sd_data *d, const double *q, const double *u)
{
    sd_kinematics(m, d, q, u, NULL);
    return kinetic_energy(m, d) + potential_energy(m, d);
}

/* RK4 from the sim layer (tangent-space chart, sim.h), constant tau, for `duration` seconds. */
static void integrate(const sd_model *m, double *q, double *u, const double *tau, double duration, double h)
{
    sd_sim_options opt;
    sd_sim_options_init(&opt);
    opt.integrator = SD_INTEGRATOR_RK4;
    opt.duration = duration;
    opt.dt = h;
    opt.tau = tau;
    sd_error err;
    if (sd_simulate(m, &opt, q, u, NULL, &err) != SD_OK) {
        fprintf(stderr, "sd_simulate: %s\n", err.message);
        CHECK(0);
    }
}

static void check_power_and_coriolis(const sd_model *m, uint64_t *rng)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    sd_data *d = sd_data_new(m);
    double *q = malloc((size_t)nq * 8), *u = malloc((size_t)nv * 8), *tau = malloc((size_t)nv * 8),
           *qdd = malloc((size_t)nv * 8), *qa = malloc((size_t)nq * 8), *qb = malloc((size_t)nv * 8 + (size_t)nq * 8),
           *ua = malloc((size_t)nv * 8), *ub = malloc((size_t)nv * 8), *M0 = malloc((size_t)nv * nv * 8),
           *M1 = malloc((size_t)nv * nv * 8), *C = malloc((size_t)nv * 8);
    random_state(m, rng, q, u, tau);
    sd_forward_dynamics(m, d, q, u, tau, NULL, qdd);
    /* d(KE + PE)/dt by central differences along (q (+) u h, u + qdd h): second order in h */
    const double h = 1e-5;
    sd_configuration_integrate(m, q, u, h, qa);
    sd_configuration_integrate(m, q, u, -h, qb);
    for (int i = 0; i < nv; ++i) { ua[i] = u[i] + h * qdd[i]; ub[i] = u[i] - h * qdd[i]; }
    const double dE = (total_energy(m, d, qa, ua) - total_energy(m, d, qb, ub)) / (2 * h);
    double power = 0;
    for (int i = 0; i < nv; ++i) power += u[i] * tau[i];
    const double scale = fabs(power) + fabs(total_energy(m, d, q, u)) + 1.0;
    CHECK(fabs(dE - power) <= 1e-6 * scale);
    /* u . C_v = 1/2 u . (dM/dt) u, with gravity switched off by taking C(q,u) - C(q,0) */
    sd_mass_matrix(m, d, qa, M1);
    sd_mass_matrix(m, d, qb, M0);
    double uMdu = 0;
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j) uMdu += u[i] * (M1[i * nv + j] - M0[i * nv + j]) / (2 * h) * u[j];
    sd_bias_forces(m, d, q, u, NULL, C);
    sd_bias_forces(m, d, q, NULL, NULL, ua);
    double uC = 0;
    for (int i = 0; i < nv; ++i) uC += u[i] * (C[i] - ua[i]);
    CHECK(fabs(uC - 0.5 * uMdu) <= 1e-6 * (fabs(uC) + 1.0));
    free(q); free(u); free(tau); free(qdd); free(qa); free(qb); free(ua); free(ub); free(M0); free(M1); free(C);
    sd_data_free(d);
}

/* A tree with a free root, gravity off, no forces: momentum about the world origin is constant. */
static void check_momentum(uint64_t *rng)
{
    sd_model *m0 = random_tree(rng, 8, RT_FREE_ROOT);
    /* rebuild the same tree without gravity: copy descriptions into a new builder */
    sd_builder *b = sd_builder_new();
    const double g0[3] = {0, 0, 0};
    sd_builder_set_gravity(b, g0);
    for (int k = 0; k < sd_model_nbodies(m0); ++k) sd_builder_add_body(b, sd_model_body_desc(m0, k), NULL);
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, NULL) == SD_OK);
    sd_builder_free(b);
    sd_model_free(m0);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    sd_data *d = sd_data_new(m);
    double *q = malloc((size_t)nq * 8), *u = malloc((size_t)nv * 8), *tau = calloc((size_t)nv, 8), h0[6], h1[6];
    random_state(m, rng, q, u, NULL);
    sd_kinematics(m, d, q, u, NULL);
    CHECK(sd_spatial_momentum_world(m, d, h0) == SD_OK);
    const double E0 = kinetic_energy(m, d);
    integrate(m, q, u, tau, 2.0, 1e-3);
    sd_kinematics(m, d, q, u, NULL);
    CHECK(sd_spatial_momentum_world(m, d, h1) == SD_OK);
    CHECK_ARRAY_CLOSE(h1, h0, 6, 1e-8, "spatial momentum after 2 s free flight");
    CHECK_CLOSE(kinetic_energy(m, d), E0, 1e-7);
    free(q); free(u); free(tau);
    sd_data_free(d);
    sd_model_free(m);
}

/* One free body spinning about a principal axis: omega stays constant and q(t) = q0 exp(omega t). */
static void check_spinning_body(void)
{
    sd_builder *b = sd_builder_new();
    const double g0[3] = {0, 0, 0};
    sd_builder_set_gravity(b, g0);
    sd_body_desc desc;
    sd_body_desc_init(&desc);
    desc.name = "spinner";
    desc.hinge = SD_HINGE_FREE;
    desc.mass = 2.0;
    desc.inertia[0] = 0.1; desc.inertia[4] = 0.2; desc.inertia[8] = 0.3;
    sd_builder_add_body(b, &desc, NULL);
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, NULL) == SD_OK);
    sd_builder_free(b);
    sd_data *d = sd_data_new(m);
    double q[7] = {0.1, -0.2, 0.3, 1, 0, 0, 0}, u[6] = {0, 0, 7.0, 0.5, 0, 0}, tau[6] = {0};
    const double w0[4] = {0.9, 0.1, -0.3, 0.2}, norm = sqrt(0.81 + 0.01 + 0.09 + 0.04);
    for (int i = 0; i < 4; ++i) q[3 + i] = w0[i] / norm;
    double q0[4];
    memcpy(q0, q + 3, sizeof q0);
    const double T = 3.0, h = 1e-3;
    integrate(m, q, u, tau, T, h);
    double wt[3] = {0, 0, 7.0 * T}, e[4], expect[4];
    sd_quat_exp(wt, e);
    sd_quat_mul(q0, e, expect);
    /* never renormalised: only round-off of 3000 quaternion products may move the norm */
    CHECK_CLOSE(sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]), 1.0, 1e-12);
    CHECK_ARRAY_CLOSE(q + 3, expect, 4, 1e-10, "spinning body quaternion vs q0 exp(w t)");
    CHECK_CLOSE(u[2], 7.0, 1e-12);
    sd_data_free(d);
    sd_model_free(m);
}

int main(void)
{
    uint64_t rng = 2024;
    for (int trial = 0; trial < 40; ++trial) {
        sd_model *m = random_tree(&rng, 1 + trial % 12, (trial & 1 ? RT_FREE_ROOT : 0) | (trial & 2 ? RT_MASSLESS : 0));
        check_power_and_coriolis(m, &rng);
        sd_model_free(m);
    }
    for (int trial = 0; trial < 3; ++trial) check_momentum(&rng);
    check_spinning_body();
    return test_summary("test_energy_momentum");
}
