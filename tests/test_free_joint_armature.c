/*
 * tests/test_free_joint_armature.c — a free hinge's armature J acts as MuJoCo's does: on the linear
 * velocity in the joint frame's axes and on the angular velocity (soadyn/dynamics.h). Its kinetic
 * energy 1/2 J |R v|^2 + 1/2 J |omega|^2 is that of a rigid body: the mass J at the body origin
 * with the inertia J 1 about it. So, independently:
 *   - a tree whose free root carries J has the M, C, inverse and forward dynamics of the same tree
 *     without armature whose root body is augmented by that point mass and inertia (gravity zero:
 *     an armature has no weight), at random states, every algorithm;
 *   - a torque-free body with armature, spinning about z while it moves along x, keeps its linear
 *     and angular momentum (the rigid part plus J R v and J (x cross R v) + J R omega) over 10 s of
 *     RK4 free flight, to 1e-12.
 * Without the armature's velocity term J (omega x v) the body drifts sideways and both fail.
 * Per-speed armatures (params.h): the velocity term does no work (u . C = 0 for a lone free body).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "test_util.h"

#define ARMATURE 0.7
static const double MASS = 2.0, COM[3] = {0.1, -0.05, 0.2};
static const double INERTIA[9] = {0.3, 0.01, -0.02, 0.01, 0.4, 0.03, -0.02, 0.03, 0.5};

/* A free root (with the armature, or augmented by its rigid equivalent), with a pendulum on it or
 * alone; no gravity. */
static sd_model *build(int augmented, int with_arm)
{
    sd_builder *b = sd_builder_new();
    const double zero[3] = {0.0, 0.0, 0.0};
    sd_builder_set_gravity(b, zero);
    sd_body_desc root, arm;
    sd_body_desc_init(&root);
    root.name = "root";
    root.hinge = SD_HINGE_FREE;
    root.mass = MASS;
    memcpy(root.com, COM, sizeof COM);
    memcpy(root.inertia, INERTIA, sizeof INERTIA);
    if (augmented) { /* + mass J at the origin, + J 1 about it: the parallel-axis theorem both ways */
        const double mt = MASS + ARMATURE, c[3] = {MASS * COM[0] / mt, MASS * COM[1] / mt, MASS * COM[2] / mt};
        const double c2 = COM[0] * COM[0] + COM[1] * COM[1] + COM[2] * COM[2], n2 = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                const double about_origin = INERTIA[3 * i + j] + MASS * ((i == j) * c2 - COM[i] * COM[j]) +
                                            (i == j) * ARMATURE;
                root.inertia[3 * i + j] = about_origin - mt * ((i == j) * n2 - c[i] * c[j]);
            }
        root.mass = mt;
        memcpy(root.com, c, sizeof c);
    } else {
        root.armature = ARMATURE;
    }
    sd_body_desc_init(&arm);
    arm.name = "arm";
    arm.parent = "root";
    arm.hinge = SD_HINGE_REVOLUTE;
    arm.axis[0] = 1.0;
    arm.axis[2] = 0.0;
    arm.placement.p[1] = 0.3;
    arm.mass = 0.5;
    arm.com[1] = 0.2;
    arm.inertia[0] = arm.inertia[4] = arm.inertia[8] = 0.01;
    arm.armature = 0.05;
    sd_error err;
    sd_model *m = NULL;
    if (sd_builder_add_body(b, &root, &err) != SD_OK || (with_arm && sd_builder_add_body(b, &arm, &err) != SD_OK) ||
        sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "build: %s\n", err.message);
        exit(2);
    }
    sd_builder_free(b);
    return m;
}

static void check_against_rigid_equivalent(void)
{
    sd_model *a = build(0, 1), *r = build(1, 1);
    sd_data *da = sd_data_new(a), *dr = sd_data_new(r);
    const int nv = sd_model_nv(a);
    double q[8], u[7], tau[7], x[7], y[7], M[49], Mr[49];
    uint64_t rng = 4242;
    double worst = 0.0;
    for (int trial = 0; trial < 20; ++trial) {
        sd_configuration_random(a, &rng, q);
        for (int i = 0; i < nv; ++i) u[i] = 4.0 * sd_random_uniform(&rng) - 2.0;
        for (int i = 0; i < nv; ++i) tau[i] = 2.0 * sd_random_uniform(&rng) - 1.0;
        CHECK(sd_mass_matrix(a, da, q, M) == SD_OK && sd_mass_matrix(r, dr, q, Mr) == SD_OK);
        /* the rigid equivalent has J on no diagonal of the root: M agrees as a whole */
        worst = fmax(worst, test_rel_diff(M, Mr, nv * nv));
        CHECK_ARRAY_CLOSE(M, Mr, nv * nv, 1e-13, "M with free-joint armature = M of the augmented body");
        CHECK(sd_bias_forces(a, da, q, u, NULL, x) == SD_OK && sd_bias_forces(r, dr, q, u, NULL, y) == SD_OK);
        worst = fmax(worst, test_rel_diff(x, y, nv));
        CHECK_ARRAY_CLOSE(x, y, nv, 1e-13, "C with free-joint armature = C of the augmented body");
        CHECK(sd_inverse_dynamics(a, da, q, u, tau, NULL, x) == SD_OK &&
              sd_inverse_dynamics(r, dr, q, u, tau, NULL, y) == SD_OK);
        CHECK_ARRAY_CLOSE(x, y, nv, 1e-13, "inverse dynamics");
        CHECK(sd_forward_dynamics(a, da, q, u, tau, NULL, x) == SD_OK &&
              sd_forward_dynamics(r, dr, q, u, tau, NULL, y) == SD_OK);
        worst = fmax(worst, test_rel_diff(x, y, nv));
        CHECK_ARRAY_CLOSE(x, y, nv, 1e-12, "forward dynamics (articulated body)");
        CHECK(sd_forward_dynamics_cholesky(a, da, q, u, tau, NULL, x) == SD_OK);
        CHECK_ARRAY_CLOSE(x, y, nv, 1e-12, "forward dynamics (Cholesky)");
    }
    printf("free-joint armature vs the augmented rigid body: largest relative difference %.2e\n", worst);
    sd_data_free(da);
    sd_data_free(dr);
    sd_model_free(a);
    sd_model_free(r);
}

/* Linear and angular (about the world origin) momentum of the lone free body with its armature. */
static void momentum(const double *q, const double *u, double h[6])
{
    double R[9], w[3], v[3], wxc[3], lin_b[3], ang_c[3];
    sd_quat_to_m3(q + 3, R);
    sd_v3_cross(u, COM, wxc);
    for (int i = 0; i < 3; ++i) lin_b[i] = MASS * (u[3 + i] + wxc[i]) + ARMATURE * u[3 + i];
    sd_m3_mul_v(R, lin_b, h + 3);
    /* about the origin: c x m v_c + I_c omega (rigid), J omega (armature), all body axes, then R;
     * plus x x p with x the body origin in the world */
    double vc[3], cxp[3], Iw[3];
    for (int i = 0; i < 3; ++i) vc[i] = MASS * (u[3 + i] + wxc[i]);
    sd_v3_cross(COM, vc, cxp);
    sd_m3_mul_v(INERTIA, u, Iw);
    for (int i = 0; i < 3; ++i) ang_c[i] = cxp[i] + Iw[i] + ARMATURE * u[i];
    sd_m3_mul_v(R, ang_c, w);
    sd_v3_cross(q, h + 3, v);
    for (int i = 0; i < 3; ++i) h[i] = w[i] + v[i];
}

static void check_free_flight(void)
{
    sd_model *m = build(0, 0);
    sd_error err;
    /* spinning about z (and a little about x, y), moving along x */
    double q[7] = {0, 0, 0, 1, 0, 0, 0}, u[6] = {0.2, -0.1, 3.0, 1.0, 0.0, 0.0}, h0[6], h1[6];
    momentum(q, u, h0);
    sd_sim_options opt;
    sd_sim_options_init(&opt);
    opt.integrator = SD_INTEGRATOR_RK4;
    opt.duration = 10.0;
    opt.dt = 1e-4; /* RK4's drift of the momentum ~ dt^4: 4e-13 relative here, 6e-11 at 1 ms */
    CHECK(sd_simulate(m, &opt, q, u, NULL, &err) == SD_OK);
    momentum(q, u, h1);
    double dl = 0, da = 0, nl = 0, na = 0;
    for (int i = 0; i < 3; ++i) {
        da = fmax(da, fabs(h1[i] - h0[i]));
        dl = fmax(dl, fabs(h1[3 + i] - h0[3 + i]));
        na = fmax(na, fabs(h0[i]));
        nl = fmax(nl, fabs(h0[3 + i]));
    }
    printf("10 s RK4 free flight with armature: momentum change linear %.2e (of %.3g), angular %.2e (of %.3g)\n",
           dl, nl, da, na);
    CHECK(dl <= 1e-12 * nl);
    CHECK(da <= 1e-12 * na);
    sd_model_free(m);
}

/* Per-speed armatures (soadyn/params.h) make the armature the body-fixed inertia diag(J) about the
 * origin: its velocity term does no work. A lone free body's M is constant in its body-axes speeds,
 * so with no gravity u . C(q, u) = 1/2 u . (dM/dt) u = 0, to round-off. */
static void check_per_speed_armature(void)
{
    sd_model *m = build(0, 0);
    const double J[6] = {0.2, 0.5, 0.9, 0.3, 1.1, 0.7};
    sd_error err;
    for (int v = 0; v < 6; ++v) CHECK(sd_model_set_armature(m, v, J[v], &err) == SD_OK);
    sd_data *d = sd_data_new(m);
    uint64_t rng = 99;
    double q[7], u[6], C[6], worst = 0.0;
    for (int trial = 0; trial < 20; ++trial) {
        sd_configuration_random(m, &rng, q);
        for (int i = 0; i < 6; ++i) u[i] = 4.0 * sd_random_uniform(&rng) - 2.0;
        CHECK(sd_bias_forces(m, d, q, u, NULL, C) == SD_OK);
        double power = 0.0, scale = 0.0;
        for (int i = 0; i < 6; ++i) {
            power += u[i] * C[i];
            scale += fabs(u[i] * C[i]);
        }
        worst = fmax(worst, fabs(power) / fmax(scale, 1e-300));
    }
    printf("per-speed armature: largest |u . C| / sum |u_i C_i| %.2e\n", worst);
    CHECK(worst <= 1e-14);
    sd_data_free(d);
    sd_model_free(m);
}

int main(void)
{
    check_against_rigid_equivalent();
    check_per_speed_armature();
    check_free_flight();
    return test_summary("test_free_joint_armature");
}
