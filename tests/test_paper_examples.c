/*
 * tests/test_paper_examples.c — the two hand-derived examples of paper 003 (papers/
 * 003_36e005fe1694dbf2.txt, "Examples"), built with the builder API and checked against the
 * paper's closed forms to 1e-12: mass matrix (sd_mass_matrix), bias forces C(q, u) (sd_bias_forces),
 * and the equations of motion (inverse and forward dynamics).
 *
 * Mapping of the paper's conventions to the model (the same for both examples):
 *   - the motion is in the x-y plane; the pendulum hinge turns about +e_z (omega = theta' e_z);
 *   - theta is measured from the downward vertical: the COM sits at s = L (sin theta e_x -
 *     cos theta e_y) from the hinge, so at theta = 0 it hangs straight down along -e_y. In the body
 *     frame (which coincides with the joint frame at theta = 0) the COM is at (0, -L, 0);
 *   - gravity is g along -e_y: the paper writes the weight as the external force -m g e_y
 *     (F-bar), so the model's gravity vector is (0, -g, 0);
 *   - I^zz is the moment of inertia about the z axis through the COM (M4 adds m L^2 to it: the
 *     parallel-axis term), so it is the body's inertia[8] about its COM;
 *   - the paper's C collects everything on the left-hand side except M qdd, external forces
 *     included: M qdd + C = f (Eq 18). soadyn's sd_bias_forces returns C - J^T f_ext, i.e. the
 *     same quantity when the paper's external forces are passed as f_ext.
 *
 * Example 1 (simple pendulum, M4):  (I1zz + m1 L^2) theta'' = tau - m1 g L sin(theta),
 *   so M = I1zz + m1 L^2 and C = m1 g L sin(theta) (no velocity term for one hinge).
 * Example 2 (pendulum on a base sliding along e_x, N4), q = (x, theta), body 1 = the base (COM at
 *   its origin, s1 = 0, hinge 2 at the base origin, d2 = 0), an external force f e_x on the base:
 *   M = [m1 + m2, m2 L cos(theta); m2 L cos(theta), I2zz + m2 L^2],
 *   C = [-f - m2 L sin(theta) theta'^2, m2 g L sin(theta)].
 *   The text is readable; the closed forms were re-derived by Lagrange as a check:
 *   T = 1/2 (m1 + m2) x'^2 + m2 L cos(theta) x' theta' + 1/2 (I2zz + m2 L^2) theta'^2,
 *   V = -m2 g L cos(theta), generalized force of f e_x on x: f.
 */
#include <string.h>

#include <soadyn/soadyn.h>

#include "test_util.h"

#define PI 3.14159265358979323846
#define TOL 1e-12

typedef struct params {
    double m1, m2, L, I1zz, I2zz, g;
} params;

/* A planar body's inertia about its COM: I^zz as given, x/y moments that make it physical. */
static void planar_inertia(double Izz, double I[9])
{
    memset(I, 0, 9 * sizeof(double));
    I[0] = 0.6 * Izz;
    I[4] = 0.7 * Izz;
    I[8] = Izz;
}

/* Example 1. gravity_as_force: model gravity 0, weight applied by the caller as F-bar. */
static sd_model *build_example1(const params *p, int gravity_as_force)
{
    sd_builder *b = sd_builder_new();
    const double g[3] = {0.0, gravity_as_force ? 0.0 : -p->g, 0.0};
    sd_builder_set_gravity(b, g);
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "link1";
    d.hinge = SD_HINGE_REVOLUTE;
    sd_v3_set(d.axis, 0, 0, 1);   /* omega_1 = theta' e_z */
    d.mass = p->m1;
    sd_v3_set(d.com, 0, -p->L, 0); /* s_1 = L (sin e_x - cos e_y) at theta */
    planar_inertia(p->I1zz, d.inertia);
    sd_error err;
    sd_model *m = NULL;
    if (sd_builder_add_body(b, &d, &err) != SD_OK || sd_builder_build(b, &m, &err) != SD_OK)
        fprintf(stderr, "example 1: %s\n", err.message);
    sd_builder_free(b);
    return m;
}

static sd_model *build_example2(const params *p, int gravity_as_force)
{
    sd_builder *b = sd_builder_new();
    const double g[3] = {0.0, gravity_as_force ? 0.0 : -p->g, 0.0};
    sd_builder_set_gravity(b, g);
    sd_error err;
    sd_body_desc d;
    /* added pendulum first: the builder must still number the base 0 and x first in q */
    sd_body_desc_init(&d);
    d.name = "link2";
    d.parent = "base";
    d.hinge = SD_HINGE_REVOLUTE;
    sd_v3_set(d.axis, 0, 0, 1);   /* omega_2 = theta' e_z, hinge at the base origin (d_2 = 0) */
    d.mass = p->m2;
    sd_v3_set(d.com, 0, -p->L, 0);
    planar_inertia(p->I2zz, d.inertia);
    sd_status st = sd_builder_add_body(b, &d, &err);
    sd_body_desc_init(&d);
    d.name = "base";
    d.hinge = SD_HINGE_PRISMATIC;
    sd_v3_set(d.axis, 1, 0, 0);   /* eta-bar_1 = x e_x */
    d.mass = p->m1;               /* s_1 = 0 */
    planar_inertia(p->I1zz, d.inertia);
    if (st == SD_OK) st = sd_builder_add_body(b, &d, &err);
    sd_model *m = NULL;
    if (st != SD_OK || sd_builder_build(b, &m, &err) != SD_OK) fprintf(stderr, "example 2: %s\n", err.message);
    sd_builder_free(b);
    return m;
}

static void random_params(uint64_t *rng, params *p)
{
    p->m1 = 0.5 + 3 * sd_random_uniform(rng);
    p->m2 = 0.5 + 3 * sd_random_uniform(rng);
    p->L = 0.2 + 1.5 * sd_random_uniform(rng);
    p->I1zz = 0.01 + 0.2 * sd_random_uniform(rng);
    p->I2zz = 0.01 + 0.2 * sd_random_uniform(rng);
    p->g = 9.0 + sd_random_uniform(rng);
}

static void check_example1(uint64_t *rng)
{
    for (int set = 0; set < 5; ++set) {
        params p;
        random_params(rng, &p);
        if (set == 0) p = (params){1.0, 0.0, 1.0, 0.1, 0.0, 9.81};
        sd_model *m = build_example1(&p, 0), *mf = build_example1(&p, 1);
        CHECK(m && mf);
        if (!m || !mf) return;
        CHECK(sd_model_nq(m) == 1 && sd_model_nv(m) == 1);
        sd_data *d = sd_data_new(m), *df = sd_data_new(mf);
        for (int t = 0; t < 8; ++t) {
            const double th = PI * (2 * sd_random_uniform(rng) - 1), thd = 3 * (2 * sd_random_uniform(rng) - 1),
                         tau = 2 * (2 * sd_random_uniform(rng) - 1);
            const double Mp = p.I1zz + p.m1 * p.L * p.L; /* M4 */
            const double Cp = p.m1 * p.g * p.L * sin(th);
            double M, C, qdd, tau_id;
            CHECK(sd_mass_matrix(m, d, &th, &M) == SD_OK);
            CHECK(sd_bias_forces(m, d, &th, &thd, NULL, &C) == SD_OK);
            CHECK_CLOSE(M, Mp, TOL);
            CHECK_CLOSE(C, Cp, TOL);
            /* EOM: theta'' = (tau - m g L sin theta) / (I + m L^2) */
            CHECK(sd_forward_dynamics(m, d, &th, &thd, &tau, NULL, &qdd) == SD_OK);
            CHECK_CLOSE(qdd, (tau - Cp) / Mp, TOL);
            CHECK(sd_inverse_dynamics(m, d, &th, &thd, &qdd, NULL, &tau_id) == SD_OK);
            CHECK_CLOSE(tau_id, tau, TOL);
            /* the paper's form: gravity as the external force F-bar_1 = [0; -m1 g e_y] at the COM
             * (Y^T F-bar), through sd_external_force_at_point on a model without gravity */
            double fext[6] = {0, 0, 0, 0, 0, 0}, Cf;
            const double weight[3] = {0, -p.m1 * p.g, 0};
            sd_kinematics(mf, df, &th, NULL, NULL);
            CHECK(sd_external_force_at_point(mf, df, 0, sd_model_body_com(mf, 0), weight, fext) == SD_OK);
            CHECK(sd_bias_forces(mf, df, &th, &thd, fext, &Cf) == SD_OK);
            CHECK_CLOSE(Cf, Cp, TOL);
            /* the COM is where the paper puts it: s_1 = L (sin theta e_x - cos theta e_y) */
            double com[3];
            sd_kinematics(m, d, &th, NULL, NULL);
            CHECK(sd_center_of_mass_world(m, d, com) == SD_OK);
            CHECK_CLOSE(com[0], p.L * sin(th), TOL);
            CHECK_CLOSE(com[1], -p.L * cos(th), TOL);
            CHECK_CLOSE(com[2], 0.0, TOL);
        }
        sd_data_free(d);
        sd_data_free(df);
        sd_model_free(m);
        sd_model_free(mf);
    }
}

static void check_example2(uint64_t *rng)
{
    for (int set = 0; set < 5; ++set) {
        params p;
        random_params(rng, &p);
        sd_model *m = build_example2(&p, 0), *mf = build_example2(&p, 1);
        CHECK(m && mf);
        if (!m || !mf) return;
        CHECK(sd_model_nv(m) == 2 && sd_model_body_index(m, "base") == 0 && sd_model_v_index(m, 0) == 0);
        sd_data *d = sd_data_new(m), *df = sd_data_new(mf);
        for (int t = 0; t < 8; ++t) {
            const double q[2] = {2 * (2 * sd_random_uniform(rng) - 1), PI * (2 * sd_random_uniform(rng) - 1)};
            const double u[2] = {2 * (2 * sd_random_uniform(rng) - 1), 3 * (2 * sd_random_uniform(rng) - 1)};
            const double f = 5 * (2 * sd_random_uniform(rng) - 1);
            const double th = q[1], thd = u[1], s = sin(th), c = cos(th);
            /* N4 */
            const double Mp[4] = {p.m1 + p.m2, p.m2 * p.L * c, p.m2 * p.L * c, p.I2zz + p.m2 * p.L * p.L};
            const double Cp[2] = {-f - p.m2 * p.L * s * thd * thd, p.m2 * p.g * p.L * s};
            const double C0[2] = {-p.m2 * p.L * s * thd * thd, p.m2 * p.g * p.L * s}; /* without f */
            double M[4], C[2];
            CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
            CHECK_ARRAY_CLOSE(M, Mp, 4, TOL, "example 2: M vs N4");
            CHECK(sd_bias_forces(m, d, q, u, NULL, C) == SD_OK);
            CHECK_ARRAY_CLOSE(C, C0, 2, TOL, "example 2: C (f = 0) vs N4");
            /* with the external force f e_x on the base (F-bar_1), at its origin */
            double fext[12] = {0};
            const double fx[3] = {f, 0, 0}, origin[3] = {0, 0, 0};
            sd_kinematics(m, d, q, NULL, NULL);
            CHECK(sd_external_force_at_point(m, d, 0, origin, fx, fext) == SD_OK);
            CHECK(sd_bias_forces(m, d, q, u, fext, C) == SD_OK);
            CHECK_ARRAY_CLOSE(C, Cp, 2, TOL, "example 2: C with f vs N4");
            /* the paper's exact F-bar: [0; f e_x - m1 g e_y] on body 1 and [0; -m2 g e_y] at body 2's
             * COM, on a model without gravity */
            double fext2[12] = {0}, Cf[2];
            const double F1[3] = {f, -p.m1 * p.g, 0}, F2[3] = {0, -p.m2 * p.g, 0};
            sd_kinematics(mf, df, q, NULL, NULL);
            CHECK(sd_external_force_at_point(mf, df, 0, origin, F1, fext2) == SD_OK);
            CHECK(sd_external_force_at_point(mf, df, 1, sd_model_body_com(mf, 1), F2, fext2) == SD_OK);
            CHECK(sd_bias_forces(mf, df, q, u, fext2, Cf) == SD_OK);
            CHECK_ARRAY_CLOSE(Cf, Cp, 2, TOL, "example 2: C with the paper's F-bar vs N4");
            /* EOM (N4) with joint forces [0, 0]: solve the 2x2 closed form and compare with ABA */
            const double rhs[2] = {-Cp[0], -Cp[1]}, det = Mp[0] * Mp[3] - Mp[1] * Mp[2];
            const double qdd_p[2] = {(Mp[3] * rhs[0] - Mp[1] * rhs[1]) / det, (Mp[0] * rhs[1] - Mp[2] * rhs[0]) / det};
            const double zero[2] = {0, 0};
            double qdd[2], tau[2];
            CHECK(sd_forward_dynamics(m, d, q, u, zero, fext, qdd) == SD_OK);
            CHECK_ARRAY_CLOSE(qdd, qdd_p, 2, TOL, "example 2: ABA qdd vs N4 solved");
            CHECK(sd_forward_dynamics_cholesky(m, d, q, u, zero, fext, qdd) == SD_OK);
            CHECK_ARRAY_CLOSE(qdd, qdd_p, 2, TOL, "example 2: Cholesky qdd vs N4 solved");
            CHECK(sd_inverse_dynamics(m, d, q, u, qdd_p, fext, tau) == SD_OK);
            CHECK_ARRAY_CLOSE(tau, zero, 2, TOL, "example 2: ID at the N4 accelerations");
        }
        sd_data_free(d);
        sd_data_free(df);
        sd_model_free(m);
        sd_model_free(mf);
    }
}

int main(void)
{
    uint64_t rng = 3003;
    check_example1(&rng);
    check_example2(&rng);
    return test_summary("test_paper_examples");
}
