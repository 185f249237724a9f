/*
 * tests/packaging/test_components.c — what this build offers, as <soadyn/config.h> says: a component
 * that is built works, one switched off (SOADYN_WITH_IO / _CVODE / _PLOT = OFF) answers
 * SD_E_NOT_SUPPORTED with a message naming the option, and writes nothing. RK4 and CSV output, which
 * need no dependency, work in every build. Run in the normal build (components on) and in the build
 * with every component off (packaging_components_off).
 */
#include <stdio.h>
#include <string.h>

#include <soadyn/config.h>
#include <soadyn/soadyn.h>

#include "test_util.h"

static const char pendulum_urdf[] =
    "<robot name='pendulum'>\n"
    "  <link name='world'/>\n"
    "  <link name='arm'><inertial><mass value='1'/><origin xyz='0 0 -0.5'/>\n"
    "    <inertia ixx='0.1' iyy='0.1' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "  <joint name='hinge' type='continuous'><parent link='world'/><child link='arm'/>\n"
    "    <axis xyz='0 1 0'/></joint>\n"
    "</robot>\n";

/* The same pendulum through the builder, so that the sim checks do not need the io component. */
static sd_model *build_pendulum(void)
{
    sd_builder *b = sd_builder_new();
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "arm";
    d.hinge = SD_HINGE_REVOLUTE;
    d.axis[0] = 0.0; d.axis[1] = 1.0; d.axis[2] = 0.0;
    d.mass = 1.0;
    d.com[2] = -0.5;
    d.inertia[0] = d.inertia[4] = 0.1;
    d.inertia[8] = 0.01;
    sd_error err = {0};
    sd_model *m = NULL;
    if (!b || sd_builder_add_body(b, &d, &err) != SD_OK || sd_builder_build(b, &m, &err) != SD_OK)
        fprintf(stderr, "building the pendulum: %s\n", err.message);
    sd_builder_free(b);
    return m;
}

static int file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

static void check_io(void)
{
    sd_model *m = NULL;
    sd_error err = {0};
    const sd_status st = sd_urdf_load_string(pendulum_urdf, sizeof pendulum_urdf - 1, "<pendulum>", NULL, &m, &err);
    if (SOADYN_HAS_IO) {
        CHECK(st == SD_OK);
        CHECK(m && sd_model_nbodies(m) == 1 && sd_model_nv(m) == 1);
    } else {
        CHECK(st == SD_E_NOT_SUPPORTED && err.status == SD_E_NOT_SUPPORTED && m == NULL);
        CHECK(strstr(err.message, "<pendulum>") && strstr(err.message, "not offered") &&
              strstr(err.message, "SOADYN_WITH_IO=OFF"));
        sd_model *m2 = NULL;
        CHECK(sd_urdf_load_file("no/such/file.urdf", NULL, &m2, &err) == SD_E_NOT_SUPPORTED && m2 == NULL);
        CHECK(strstr(err.message, "no/such/file.urdf") && strstr(err.message, "SOADYN_WITH_IO=OFF"));
    }
    sd_model_free(m);
}

/* Simulate 0.1 s from 0.5 rad; returns the status and the angle reached. */
static sd_status swing(const sd_model *m, sd_integrator integrator, double *angle, sd_error *err)
{
    sd_sim_options o;
    sd_sim_options_init(&o);
    o.integrator = integrator;
    o.duration = 0.1;
    o.dt = 1e-3;
    double q[1] = {0.5}, u[1] = {0.0};
    const sd_status st = sd_simulate(m, &o, q, u, NULL, err);
    *angle = q[0];
    return st;
}

static void check_sim(const sd_model *m)
{
    sd_error err = {0};
    double rk4 = 0.0, bdf = 0.0;
    CHECK(swing(m, SD_INTEGRATOR_RK4, &rk4, &err) == SD_OK);
    CHECK(rk4 < 0.5 && rk4 > 0.3); /* it falls back towards 0 */
    const sd_status st = swing(m, SD_INTEGRATOR_CVODE_BDF, &bdf, &err);
    if (SOADYN_HAS_CVODE) {
        CHECK(st == SD_OK);
        CHECK_CLOSE(bdf, rk4, 1e-6);
    } else {
        CHECK(st == SD_E_NOT_SUPPORTED);
        CHECK(strstr(err.message, "cvode-bdf") && strstr(err.message, "not offered") &&
              strstr(err.message, "SOADYN_WITH_CVODE=OFF"));
    }
}

static void check_csv_and_plot(const sd_model *m)
{
    const char *csv_path = "test_components.csv", *plot_path = "test_components.png";
    remove(csv_path);
    remove(plot_path);
    sd_error err = {0};
    sd_csv_writer *w = NULL;
    const double q[1] = {0.25}, u[1] = {0.0};
    const sd_sim_sample s = {0.0, q, u, 0.0, 0.0, 0};
    CHECK(sd_csv_open(m, csv_path, &w, &err) == SD_OK);
    CHECK(sd_csv_write(w, &s, &err) == SD_OK);
    CHECK(sd_csv_close(w, NULL, &err) == SD_OK);
    CHECK(file_exists(csv_path));
    remove(csv_path);
    if (!SOADYN_HAS_PLOT) { /* plotting itself is test_cli's: here only that it is refused */
        sd_trajectory *t = sd_trajectory_new(m);
        CHECK(t && sd_trajectory_append(t, &s) == SD_OK);
        CHECK(sd_plot_trajectory(t, plot_path, &err) == SD_E_NOT_SUPPORTED);
        CHECK(strstr(err.message, plot_path) && strstr(err.message, "SOADYN_WITH_PLOT=OFF"));
        CHECK(!file_exists(plot_path));
        sd_trajectory_free(t);
    }
}

int main(void)
{
    printf("this build: io %d, cvode %d, plot %d\n", SOADYN_HAS_IO, SOADYN_HAS_CVODE, SOADYN_HAS_PLOT);
    check_io();
    sd_model *m = build_pendulum();
    CHECK(m != NULL);
    if (m) {
        check_sim(m);
        check_csv_and_plot(m);
    }
    sd_model_free(m);
    return test_summary("test_components");
}
