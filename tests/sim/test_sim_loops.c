/*
 * tests/sim/test_sim_loops.c — sd_simulate on a closed system (issue 8 item 4): the planar Grashof
 * crank-rocker four-bar of tests/loops/test_four_bar.c (ground 0.4, crank 0.1, coupler 0.35,
 * rocker 0.3), cut at the rocker's ground pivot and closed by a revolute constraint (5 rows, rank 2).
 *   - 10 s of RK4 at 1 ms with projection: energy conserved to 1e-8 relative, position residual
 *     below 1e-10, a projection after every step, and the crank, coupler and rocker angles at the end
 *     keep Freudenstein's equation (an independent check that the motion stayed on the mechanism);
 *   - the same run without projection: the drift is reported, and it is larger than with it (so the
 *     projection is what keeps the residual down);
 *   - the initial speeds are projected: a crank rate alone becomes a consistent motion (G u = 0);
 *   - CVODE (when built) closes the loops too.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"
#include <soadyn/soadyn.h>

static const double PI = 3.14159265358979323846;
static const double LA = 0.1, LB = 0.35, LC = 0.3, LD = 0.4;
static const double MASS[3] = {0.5, 1.2, 0.9};

/* Joint points O2, A, B, O4 at crank angle t2 (coupler above the ground line: circle intersection)
 * and the absolute link angles. */
static void four_bar_pose(double t2, double th[3], double P[4][3])
{
    const double A[2] = {LA * cos(t2), LA * sin(t2)}, O4[2] = {LD, 0.0};
    const double dx = O4[0] - A[0], dy = O4[1] - A[1], dist = sqrt(dx * dx + dy * dy);
    const double along = (LB * LB - LC * LC + dist * dist) / (2 * dist), h = sqrt(LB * LB - along * along);
    const double B[2] = {A[0] + along * dx / dist - h * dy / dist, A[1] + along * dy / dist + h * dx / dist};
    th[0] = t2;
    th[1] = atan2(B[1] - A[1], B[0] - A[0]);
    th[2] = atan2(B[1] - O4[1], B[0] - O4[0]);
    const double pts[4][2] = {{0, 0}, {A[0], A[1]}, {B[0], B[1]}, {LD, 0}};
    for (int i = 0; i < 4; ++i) P[i][0] = pts[i][0], P[i][1] = pts[i][1], P[i][2] = 0.0;
}

static double REF_TH[3], REF_P[4][3];

/* ground -> crank (at O2) -> coupler (at A) -> rocker (at B); the loop closes at O4. Body frames at
 * the pivots with world axes at the reference pose (every q zero there). */
static sd_model *four_bar(void)
{
    static const char *names[3] = {"crank", "coupler", "rocker"};
    static const int ends[3][2] = {{0, 1}, {1, 2}, {2, 3}};
    sd_builder *b = sd_builder_new();
    const double g[3] = {0.0, -9.81, 0.0};
    sd_builder_set_gravity(b, g);
    sd_error err;
    for (int i = 0; i < 3; ++i) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        d.name = names[i];
        d.parent = i ? names[i - 1] : NULL;
        d.hinge = SD_HINGE_REVOLUTE;
        const double *piv = REF_P[i], *e1 = REF_P[ends[i][1]];
        double dir[3], len;
        for (int j = 0; j < 3; ++j) {
            d.placement.p[j] = piv[j] - (i ? REF_P[i - 1][j] : 0.0);
            d.com[j] = 0.5 * (e1[j] - piv[j]);
            dir[j] = e1[j] - piv[j];
        }
        len = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
        d.mass = MASS[i];
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
                d.inertia[3 * r + c] = d.mass * len * len / 12.0 * ((r == c) - dir[r] * dir[c] / (len * len)) +
                                       d.mass * 1e-3 * (r == c);
        CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    }
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = "rocker_pivot";
    c.type = SD_CONSTRAINT_REVOLUTE;
    c.body_b = "rocker";
    for (int j = 0; j < 3; ++j) {
        c.frame_a.p[j] = REF_P[3][j];
        c.frame_b.p[j] = REF_P[3][j] - REF_P[2][j];
    }
    CHECK(sd_builder_add_constraint(b, &c, &err) == SD_OK);
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    return m;
}

static sd_status run(const sd_model *m, sd_integrator integrator, double duration, int project, double *q,
                     double *u, sd_sim_stats *stats)
{
    sd_sim_options o;
    sd_sim_options_init(&o);
    CHECK(o.project_constraints == 1); /* the default */
    o.integrator = integrator;
    o.duration = duration;
    o.dt = 1e-3;
    o.project_constraints = project;
    sd_error err;
    const sd_status st = sd_simulate(m, &o, q, u, stats, &err);
    if (st != SD_OK) printf("sd_simulate: %s\n", err.message);
    return st;
}

/* Freudenstein's equation K1 cos t4 - K2 cos t2 + K3 = cos(t2 - t4) (t4 the rocker angle from O4). */
static double freudenstein(const double *q)
{
    const double t2 = REF_TH[0] + q[0], t4r = REF_TH[2] + q[0] + q[1] + q[2];
    const double t4 = t4r; /* the rocker's angle, measured from O4 to B (REF_TH[2]) */
    const double K1 = LD / LA, K2 = LD / LC, K3 = (LA * LA - LB * LB + LC * LC + LD * LD) / (2 * LA * LC);
    return K1 * cos(t4) - K2 * cos(t2) + K3 - cos(t2 - t4);
}

static void test_rk4_ten_seconds(void)
{
    sd_model *m = four_bar();
    sd_data *d = sd_data_new(m);
    /* only the crank's rate: the start projects it. (From 3 rad/s, RK4's own truncation at 1 ms is
     * 1.0e-8 of the energy, and halving dt cuts it 35-fold: the drift is the integrator's, not the
     * projection's.) */
    double q[3] = {0, 0, 0}, u[3] = {2.0, 0, 0};
    sd_sim_stats s;
    CHECK(run(m, SD_INTEGRATOR_RK4, 10.0, 1, q, u, &s) == SD_OK);
    double T = 0.0;
    CHECK(sd_sim_energy(m, d, q, u, &T, NULL) == SD_OK);
    const double drift = fabs(s.energy_end - s.energy_start) / fmax(fabs(s.energy_start), T);
    printf("RK4 10 s with projection: energy drift %.3g (relative), max position residual %.3g, max velocity "
           "residual %.3g, %ld projections, Freudenstein %.3g\n",
           drift, s.max_position_residual, s.max_velocity_residual, s.projections, freudenstein(q));
    CHECK(drift < 1e-8);
    CHECK(s.max_position_residual < 1e-10);
    CHECK(s.max_velocity_residual < 1e-10);
    CHECK(s.projections == 10001); /* the start and every step */
    CHECK(fabs(freudenstein(q)) < 1e-10);
    CHECK(T > 1e-3); /* it moved */

    /* without projection the drift is only reported, and larger */
    double q2[3] = {0, 0, 0}, u2[3] = {3.0, 0, 0};
    sd_sim_stats s2;
    CHECK(run(m, SD_INTEGRATOR_RK4, 1.0, 1, q2, u2, &s2) == SD_OK); /* projected start, then ... */
    sd_sim_stats s3;
    double q3[3] = {0, 0, 0}, u3[3];
    double pos[5], vel[5];
    memcpy(u3, u2, sizeof u3); /* ... a consistent start taken from the projected run's end */
    memcpy(q3, q2, sizeof q3);
    CHECK(run(m, SD_INTEGRATOR_RK4, 2.0, 0, q3, u3, &s3) == SD_OK);
    printf("RK4 2 s without projection: max position residual %.3g, max velocity residual %.3g, %ld projections\n",
           s3.max_position_residual, s3.max_velocity_residual, s3.projections);
    CHECK(s3.projections == 0);
    CHECK(s3.max_position_residual > s.max_position_residual);
    CHECK(sd_constraint_residuals(m, d, q3, u3, pos, vel) == SD_OK);
    double worst = 0.0;
    for (int i = 0; i < 5; ++i) worst = fmax(worst, fabs(pos[i]));
    CHECK(worst <= s3.max_position_residual); /* the end state is among those recorded */
    sd_data_free(d);
    sd_model_free(m);
}

static void test_start_projected(void)
{
    sd_model *m = four_bar();
    sd_data *d = sd_data_new(m);
    double q[3] = {0.01, -0.02, 0.005}, u[3] = {3.0, 0, 0}; /* open and inconsistent */
    sd_sim_stats s;
    CHECK(run(m, SD_INTEGRATOR_RK4, 1e-3, 1, q, u, &s) == SD_OK);
    double pos[5], vel[5], worst = 0.0;
    CHECK(sd_constraint_residuals(m, d, q, u, pos, vel) == SD_OK);
    for (int i = 0; i < 5; ++i) worst = fmax(worst, fmax(fabs(pos[i]), fabs(vel[i])));
    CHECK(worst < 1e-10);
    CHECK(s.max_position_residual < 1e-10);
    CHECK(s.projections == 2);
    sd_data_free(d);
    sd_model_free(m);
}

static void test_cvode(void)
{
    sd_model *m = four_bar();
    double q[3] = {0, 0, 0}, u[3] = {3.0, 0, 0};
    sd_sim_stats s;
    const sd_status st = run(m, SD_INTEGRATOR_CVODE_BDF, 1.0, 1, q, u, &s);
    if (st == SD_E_NOT_SUPPORTED) {
        printf("CVODE not built: skipped\n");
    } else {
        CHECK(st == SD_OK);
        const double drift = fabs(s.energy_end - s.energy_start) / fabs(s.energy_start);
        printf("CVODE BDF 1 s: energy drift %.3g, max position residual %.3g, %ld projections, %ld rebases\n", drift,
               s.max_position_residual, s.projections, s.rebases);
        CHECK(s.max_position_residual < 1e-10);
        CHECK(s.projections == 1001);
        CHECK(drift < 1e-5);
        CHECK(fabs(freudenstein(q)) < 1e-10);
    }
    sd_model_free(m);
}

int main(void)
{
    four_bar_pose(PI / 3, REF_TH, REF_P);
    test_rk4_ten_seconds();
    test_start_projected();
    test_cvode();
    return test_summary("test_sim_loops");
}
