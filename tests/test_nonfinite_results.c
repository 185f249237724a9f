/*
 * tests/test_nonfinite_results.c — no evaluation returns SD_OK with an inf or NaN in an output.
 * Finite inputs whose products overflow a double (a body of 1e-300 kg pushed by 1e10 N m, speeds of
 * 1e200 rad/s, a free body 1e308 m from the origin) must give SD_E_NOT_FINITE with a message
 * naming the function, the output and its index; models and states that stay in range give SD_OK.
 * The models are made with the builder, whatever range checks a loader adds.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "test_util.h"

/* A pendulum of two revolute links; the second has mass m2 (and inertia m2 * 0.01). With
 * free_root, a free body carries them. */
static sd_model *pendulum(double m2, int free_root)
{
    sd_builder *b = sd_builder_new();
    sd_error err;
    sd_body_desc d;
    const char *parent = NULL;
    if (free_root) {
        sd_body_desc_init(&d);
        d.name = "float";
        d.hinge = SD_HINGE_FREE;
        d.mass = 2.0;
        d.inertia[0] = d.inertia[4] = d.inertia[8] = 0.1;
        CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
        parent = "float";
    }
    const char *names[2] = {"upper", "lower"};
    for (int i = 0; i < 2; ++i) {
        sd_body_desc_init(&d);
        d.name = names[i];
        d.parent = i ? names[0] : parent;
        d.hinge = SD_HINGE_REVOLUTE;
        d.axis[0] = 0, d.axis[1] = 1, d.axis[2] = 0;
        d.placement.p[2] = i ? -0.5 : 0.0;
        d.mass = i ? m2 : 1.0;
        d.com[2] = -0.25;
        d.inertia[0] = d.inertia[4] = d.inertia[8] = 0.01 * d.mass;
        if (sd_builder_add_body(b, &d, &err) != SD_OK) fprintf(stderr, "builder: %s\n", err.message);
    }
    sd_model *m = NULL;
    if (sd_builder_build(b, &m, &err) != SD_OK) fprintf(stderr, "builder: %s\n", err.message);
    sd_builder_free(b);
    return m;
}

/* st is SD_E_NOT_FINITE and the message names fn and the output. */
static void check_not_finite(sd_status st, const sd_data *d, const char *fn, const char *output)
{
    CHECK(st == SD_E_NOT_FINITE);
    const char *msg = sd_data_error(d);
    const int named = strstr(msg, fn) && strstr(msg, output) && strstr(msg, "[");
    CHECK(named);
    if (st != SD_E_NOT_FINITE || !named) fprintf(stderr, "  %s: status '%s', message: %s\n", fn, sd_status_name(st), msg);
}

/* A body of 1e-300 kg: a torque of the usual size accelerates it past a double. */
static void nearly_massless_body(void)
{
    sd_model *m = pendulum(1e-300, 0);
    CHECK(m != NULL);
    if (!m) return;
    sd_data *d = sd_data_new(m);
    const double q[2] = {0.3, -0.2}, u[2] = {0, 0}, tau[2] = {0, 1e10}, gentle[2] = {0, 1e-300};
    double qdd[2], det, logdet;
    check_not_finite(sd_forward_dynamics(m, d, q, u, tau, NULL, qdd), d, "sd_forward_dynamics", "qdd");
    /* the dense reference finds M singular against its largest pivot: an error too */
    CHECK(sd_forward_dynamics_cholesky(m, d, q, u, tau, NULL, qdd) == SD_E_SINGULAR);
    /* pushed gently it is in range; log det M is about -690 and det M is 1e-300: finite */
    CHECK(sd_forward_dynamics(m, d, q, u, gentle, NULL, qdd) == SD_OK);
    CHECK(sd_mass_matrix_determinant(m, d, q, &det, &logdet) == SD_OK);
    CHECK(isfinite(logdet) && det > 0.0);
    /* M^-1 of so few speeds is M's Cholesky inverse (innovations.c), which refuses a pivot this small
     * against M's largest diagonal entry and leaves the call to the recursion: finite (entries near
     * 1e302) */
    double Minv[4];
    CHECK(sd_mass_matrix_inverse(m, d, q, Minv) == SD_OK);
    CHECK(isfinite(Minv[0]) && isfinite(Minv[1]) && isfinite(Minv[3]) && Minv[3] > 1e290);
    sd_data_free(d);
    sd_model_free(m);
    /* 1e-310 kg (a subnormal double): D(k) itself has no finite inverse */
    m = pendulum(1e-310, 0);
    CHECK(m != NULL);
    if (!m) return;
    d = sd_data_new(m);
    CHECK(sd_forward_dynamics(m, d, q, u, gentle, NULL, qdd) == SD_E_SINGULAR);
    CHECK(strstr(sd_data_error(d), "'lower'") && strstr(sd_data_error(d), "too small to invert"));
    /* and M^-1 says the same (the recursion's verdict, after the Cholesky route's inverse overflowed) */
    CHECK(sd_mass_matrix_inverse(m, d, q, Minv) == SD_E_SINGULAR);
    CHECK(strstr(sd_data_error(d), "'lower'") && strstr(sd_data_error(d), "too small to invert"));
    sd_data_free(d);
    sd_model_free(m);
    /* a massless link that its hinge turns freely: M is singular, the Cholesky route finds a zero
     * pivot and the recursion names the hinge */
    m = pendulum(0.0, 0);
    CHECK(m != NULL);
    if (!m) return;
    d = sd_data_new(m);
    CHECK(sd_mass_matrix_inverse(m, d, q, Minv) == SD_E_SINGULAR);
    CHECK(strstr(sd_data_error(d), "'lower'") && strstr(sd_data_error(d), "singular"));
    sd_data_free(d);
    sd_model_free(m);
}

/* Speeds of 1e200 rad/s: the velocity-product terms (m |omega|^2 |r|) overflow. */
static void huge_speeds(void)
{
    sd_model *m = pendulum(1.0, 0);
    CHECK(m != NULL);
    if (!m) return;
    sd_data *d = sd_data_new(m);
    const double q[2] = {0.3, -0.2}, u[2] = {1e200, -1e200}, zero[2] = {0, 0};
    double out[2], f[6], T;
    check_not_finite(sd_inverse_dynamics(m, d, q, u, zero, NULL, out), d, "sd_inverse_dynamics", "tau");
    check_not_finite(sd_interbody_force(m, d, 1, SD_FRAME_BODY, f), d, "sd_interbody_force", "f");
    check_not_finite(sd_bias_forces(m, d, q, u, NULL, out), d, "sd_bias_forces", "c");
    check_not_finite(sd_forward_dynamics(m, d, q, u, zero, NULL, out), d, "sd_forward_dynamics", "qdd");
    check_not_finite(sd_kinematics(m, d, q, u, NULL), d, "sd_kinematics", "accelerations");
    check_not_finite(sd_kinetic_energy(m, d, &T), d, "sd_kinetic_energy", "T");
    /* a tenth of the square root of DBL_MAX is still in range */
    const double fast[2] = {1e150, -1e150};
    CHECK(sd_kinematics(m, d, q, fast, NULL) == SD_OK);
    CHECK(sd_kinetic_energy(m, d, &T) == SD_OK && isfinite(T));
    sd_data_free(d);
    sd_model_free(m);
}

/* A free body 1e308 m from the origin: its placement is finite, but a point 1e308 m further on is
 * not, nor are the quantities the recursions carry about a far origin (m |p|^2, p x f). */
static void far_away(void)
{
    sd_model *m = pendulum(1.0, 1);
    CHECK(m != NULL);
    if (!m) return;
    sd_data *d = sd_data_new(m);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *q = calloc((size_t)nq, sizeof(double)), *M = malloc((size_t)nv * nv * sizeof(double)),
           *J = malloc(6 * (size_t)nv * sizeof(double)), *x = calloc((size_t)nv, sizeof(double)),
           *y = malloc((size_t)nv * sizeof(double));
    sd_configuration_neutral(m, q);
    q[0] = 1e308;
    for (int i = 0; i < nv; ++i) x[i] = 1.0;
    check_not_finite(sd_mass_matrix(m, d, q, M), d, "sd_mass_matrix", "M");
    check_not_finite(sd_mass_matrix_inverse(m, d, q, M), d, "sd_mass_matrix_inverse", "Minv");
    CHECK(sd_kinematics(m, d, q, NULL, NULL) == SD_OK);
    sd_transform X;
    CHECK(sd_body_placement_world(m, d, 0, &X) == SD_OK && X.p[0] == 1e308);
    const double point[3] = {1e308, 0, 0};
    check_not_finite(sd_jacobian_world(m, d, 0, point, J), d, "sd_jacobian_world", "J");
    /* 1e8 m away is in range */
    q[0] = 1e8;
    CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
    CHECK(sd_mass_matrix_inverse(m, d, q, M) == SD_OK);
    CHECK(sd_articulated_inertias(m, d, q) == SD_OK);
    CHECK(sd_mass_matrix_solve(m, d, x, y) == SD_OK);
    free(q); free(M); free(J); free(x); free(y);
    sd_data_free(d);
    sd_model_free(m);
}

/* The factors applied to numbers near DBL_MAX, and a task frame 1e200 m from its body: their sums
 * and products overflow. */
static void huge_vectors(void)
{
    sd_model *m = pendulum(1.0, 0);
    CHECK(m != NULL);
    if (!m) return;
    sd_data *d = sd_data_new(m);
    const double q[2] = {0.3, -0.2}, x[2] = {1.5e308, -1.5e308};
    double y[2];
    CHECK(sd_articulated_inertias(m, d, q) == SD_OK);
    check_not_finite(sd_mass_matrix_solve(m, d, x, y), d, "sd_mass_matrix_solve", "y");
    CHECK(sd_articulated_inertias(m, d, q) == SD_OK);
    sd_status st = SD_OK;
    for (int op = 0; op < 4 && st == SD_OK; ++op) st = sd_innovations_apply(m, d, (sd_factor_op)op, x, y);
    check_not_finite(st, d, "sd_innovations_apply", "y");
    const sd_task_frame far = {1, {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {1e200, 0, 0}}}, near = {1, {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {1, 0, 0}}};
    double Lam[36];
    check_not_finite(sd_operational_space_compliance(m, d, q, 1, &far, Lam), d, "sd_operational_space_compliance",
                     "Lambda_inv");
    CHECK(sd_operational_space_compliance(m, d, q, 1, &near, Lam) == SD_OK);
    sd_data_free(d);
    sd_model_free(m);
}

int main(void)
{
    nearly_massless_body();
    huge_speeds();
    far_away();
    huge_vectors();
    return test_summary("test_nonfinite_results");
}
