/*
 * tests/io/test_urdf_bundled_models.c — the URDF files soadyn ships in models/ load with the sizes
 * their headers promise, and the two systems of paper 003 have the equations of motion of its
 * Examples 1 and 2 (Eqs. M4 and N4) with the parameters the files choose; the spacecraft's
 * <soadyn:gravity xyz="0 0 0"/> makes it float.
 *
 * Usage: test_urdf_bundled_models <models folder>
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <soadyn/dynamics.h>
#include <soadyn/urdf.h>

#include "test_util.h"

static sd_model *load(const char *folder, const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", folder, file);
    sd_model *m = NULL;
    sd_error err;
    const sd_status st = sd_urdf_load_file(path, NULL, &m, &err);
    CHECK(st == SD_OK);
    if (st != SD_OK) fprintf(stderr, "  %s\n", err.message);
    return m;
}

static void check_sizes(const char *folder)
{
    static const struct { const char *file; int nq, nv; double mass; } models[] = {
        {"simple_pendulum.urdf", 1, 1, 1.0},
        {"pendulum_on_cart.urdf", 2, 2, 3.0},
        {"double_pendulum.urdf", 2, 2, 2.0},
        {"iiwa14.urdf", 7, 7, 30.61},
        {"quadruped.urdf", 19, 18, 86.756},
        {"four_bar.urdf", 3, 3, 2.6},     /* closed by a URDF+ loop: tests/loops/test_urdf_loops.c */
        {"slider_crank.urdf", 3, 3, 3.5}, /* likewise */
        {"meshed_arm/meshed_arm.urdf", 4, 4, 10.4}, /* its meshes: the viewer's (tests/view) */
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; ++i) {
        sd_model *m = load(folder, models[i].file);
        if (m == NULL) continue;
        CHECK(sd_model_nq(m) == models[i].nq && sd_model_nv(m) == models[i].nv);
        CHECK_CLOSE(sd_model_total_mass(m), models[i].mass, 1e-12);
        CHECK(sd_model_nwarnings(m) == 0);
        printf("  %-24s nq %2d nv %2d bodies %2d frames %d mass %.3f warnings %zu\n", models[i].file, sd_model_nq(m),
               sd_model_nv(m), sd_model_nbodies(m), sd_model_nframes(m), sd_model_total_mass(m), sd_model_nwarnings(m));
        sd_model_free(m);
    }
}

/* 003 Eq. M4: (I + m L^2) theta'' = tau - m g L sin(theta), with m = 1, L = 1, I = 0.004. */
static void check_simple_pendulum(const char *folder)
{
    sd_model *m = load(folder, "simple_pendulum.urdf");
    if (m == NULL) return;
    sd_data *d = sd_data_new(m);
    const double g = 9.81;
    for (double theta = -2.0; theta <= 2.0; theta += 0.5) {
        double M, c, u = 0.7;
        CHECK(sd_mass_matrix(m, d, &theta, &M) == SD_OK);
        CHECK(sd_bias_forces(m, d, &theta, &u, NULL, &c) == SD_OK);
        CHECK_CLOSE(M, 1.004, 1e-12);
        CHECK_CLOSE(c, g * sin(theta), 1e-12);
    }
    sd_data_free(d);
    sd_model_free(m);
}

/* 003 Eq. N4 with f = 0, m1 = 2, m2 = 1, L = 1, I2 = 0.004:
 * M = [3, cos(theta); cos(theta), 1.004], C = [-sin(theta) theta'^2, g sin(theta)]. */
static void check_pendulum_on_cart(const char *folder)
{
    sd_model *m = load(folder, "pendulum_on_cart.urdf");
    if (m == NULL) return;
    sd_data *d = sd_data_new(m);
    const double g = 9.81;
    for (double theta = -2.0; theta <= 2.0; theta += 0.5) {
        const double q[2] = {0.3, theta}, u[2] = {-0.4, 1.3};
        double M[4], C[2];
        CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
        CHECK(sd_bias_forces(m, d, q, u, NULL, C) == SD_OK);
        const double M_ref[4] = {3.0, cos(theta), cos(theta), 1.004};
        const double C_ref[2] = {-sin(theta) * u[1] * u[1], g * sin(theta)};
        CHECK_ARRAY_CLOSE(M, M_ref, 4, 1e-12, "N4 mass matrix");
        CHECK_ARRAY_CLOSE(C, C_ref, 2, 1e-12, "N4 bias forces");
    }
    sd_data_free(d);
    sd_model_free(m);
}

/* The double pendulum's mass matrix as its header derives it. */
static void check_double_pendulum(const char *folder)
{
    sd_model *m = load(folder, "double_pendulum.urdf");
    if (m == NULL) return;
    sd_data *d = sd_data_new(m);
    for (double b = -2.0; b <= 2.0; b += 0.5) {
        const double q[2] = {0.4, b};
        double M[4];
        CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
        const double M_ref[4] = {3.008 + 2 * cos(b), 1.004 + cos(b), 1.004 + cos(b), 1.004};
        CHECK_ARRAY_CLOSE(M, M_ref, 4, 1e-12, "double pendulum mass matrix");
    }
    sd_data_free(d);
    sd_model_free(m);
}

/* The quadruped is free without any loader option, and its feet are frames. */
static void check_quadruped(const char *folder)
{
    sd_model *m = load(folder, "quadruped.urdf");
    if (m == NULL) return;
    const int trunk = sd_model_body_index(m, "trunk");
    CHECK(trunk >= 0 && sd_model_hinge(m, trunk) == SD_HINGE_FREE && sd_model_parent(m, trunk) == -1);
    static const char *const feet[] = {"lf_foot", "rf_foot", "lh_foot", "rh_foot"};
    for (int i = 0; i < 4; ++i) CHECK(sd_model_frame_index(m, feet[i]) >= 0);
    sd_model_free(m);
}

/* The spacecraft floats: its <soadyn:gravity xyz="0 0 0"/> switches gravity off, so at rest nothing
 * accelerates (with the URDF default -9.81 z the bus would fall). */
static void check_spacecraft_floats(const char *folder)
{
    sd_model *m = load(folder, "spacecraft.urdf");
    if (m == NULL) return;
    double g[3] = {1, 1, 1};
    sd_model_gravity(m, g);
    CHECK(g[0] == 0.0 && g[1] == 0.0 && g[2] == 0.0);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double q[64], u[64] = {0}, tau[64] = {0}, qdd[64];
    CHECK(nq <= 64 && nv <= 64);
    sd_configuration_reference(m, q);
    sd_data *d = sd_data_new(m);
    CHECK(sd_forward_dynamics(m, d, q, u, tau, NULL, qdd) == SD_OK);
    double worst = 0.0;
    for (int i = 0; i < nv; ++i) worst = fmax(worst, fabs(qdd[i]));
    printf("spacecraft at rest: gravity %g %g %g, largest |qdd| %.1e\n", g[0], g[1], g[2], worst);
    CHECK(worst <= 1e-12);
    sd_data_free(d);
    sd_model_free(m);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <models folder>\n", argv[0]);
        return 2;
    }
    check_sizes(argv[1]);
    check_simple_pendulum(argv[1]);
    check_pendulum_on_cart(argv[1]);
    check_double_pendulum(argv[1]);
    check_quadruped(argv[1]);
    check_spacecraft_floats(argv[1]);
    return test_summary("test_urdf_bundled_models");
}
