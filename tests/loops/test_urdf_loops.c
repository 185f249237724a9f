/*
 * tests/loops/test_urdf_loops.c — the closed-loop models soadyn ships, models/four_bar.urdf and
 * models/slider_crank.urdf, each closed by a URDF+ revolute <loop>:
 *   - both load with their one loop constraint (5 rows); at q = 0 (the assembled pose the files
 *     promise) the position residual is below 1e-12; sd_constraint_rank gives rank 2, mobility 1;
 *   - the four-bar from the file (x-z plane, axes along -y, gravity -z, link frames along the links)
 *     and the four-bar of tests/loops/test_four_bar.c built here with the builder (x-y plane, axes
 *     z, gravity -y, body frames with world axes at a different reference pose, cut at the same
 *     joint) have the same closed-loop link accelerations at an assembled state, to 1e-10; the
 *     assembled link angles equal the circle intersection;
 *   - the slider-crank assembled with the crank locked (a full turn in steps of 15 degrees, each
 *     from the last pose) puts the slider at x = r cos th + sqrt(l^2 - r^2 sin^2 th), to 1e-10; its
 *     closed-loop acceleration moves the slider as that formula's second time derivative says.
 *
 * Usage: test_urdf_loops <models folder>; exits 77 (skipped) in a build without the io component.
 */
#include <stdio.h>
#include <string.h>

#include <soadyn/config.h>
#include <soadyn/soadyn.h>

#include "test_util.h"

static const double PI = 3.14159265358979323846;

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

/* One revolute loop of 5 rows named `loop`, closed at q = 0 (residual below 1e-12), rank 2 of G,
 * mobility 1. */
static void check_loaded(const sd_model *m, const char *file, const char *loop)
{
    CHECK(sd_model_nq(m) == 3 && sd_model_nv(m) == 3);
    CHECK(sd_model_nconstraints(m) == 1 && sd_model_nconstraint_rows(m) == 5);
    CHECK(sd_model_constraint_index(m, loop) == 0);
    CHECK(sd_model_constraint_type(m, 0) == SD_CONSTRAINT_REVOLUTE);
    CHECK(sd_model_nwarnings(m) == 0);
    sd_data *d = sd_data_new(m);
    double q[3], pos[5], worst = 0.0;
    sd_configuration_neutral(m, q);
    CHECK(q[0] == 0.0 && q[1] == 0.0 && q[2] == 0.0);
    CHECK(sd_constraint_residuals(m, d, q, NULL, pos, NULL) == SD_OK);
    for (int i = 0; i < 5; ++i) worst = fmax(worst, fabs(pos[i]));
    CHECK(worst < 1e-12);
    int rank = -1, mobility = -1;
    CHECK(sd_constraint_rank(m, d, q, &rank, &mobility) == SD_OK);
    CHECK(rank == 2 && mobility == 1);
    printf("  %-18s loop '%s': residual at q = 0 %.2g, rank %d, mobility %d, mass %.3f kg\n", file, loop, worst,
           rank, mobility, sd_model_total_mass(m));
    sd_data_free(d);
}

/* ---------------------------------------------------------------- four-bar */

static const double LA = 0.1, LB = 0.35, LC = 0.3, LD = 0.4; /* crank, coupler, rocker, ground */
static const double MASS[3] = {0.5, 1.2, 0.9};

/* Planar pose at crank angle t2 (ground O2 at the origin, O4 at (LD, 0)), the coupler above the
 * ground line: the directions of crank O2->A, coupler A->B, rocker O4->B, and the points O2, A, B,
 * O4, by the circle intersection. */
static void four_bar_pose(double t2, double th[3], double P[4][2])
{
    const double A[2] = {LA * cos(t2), LA * sin(t2)}, dx = LD - A[0], dy = -A[1], dist = sqrt(dx * dx + dy * dy);
    const double along = (LB * LB - LC * LC + dist * dist) / (2 * dist), h = sqrt(LB * LB - along * along);
    const double B[2] = {A[0] + (along * dx - h * dy) / dist, A[1] + (along * dy + h * dx) / dist};
    th[0] = t2;
    th[1] = atan2(B[1] - A[1], B[0] - A[0]);
    th[2] = atan2(B[1], B[0] - LD);
    const double pts[4][2] = {{0, 0}, {A[0], A[1]}, {B[0], B[1]}, {LD, 0}};
    memcpy(P, pts, sizeof pts);
}

/* Angular rates of the three links from the crank's: w2 k x a + w3 k x b = w4 k x c (the velocity
 * of B along both paths). */
static void four_bar_rates(const double th[3], double w2, double w[3])
{
    const double a[2] = {LA * cos(th[0]), LA * sin(th[0])}, b[2] = {LB * cos(th[1]), LB * sin(th[1])},
                 c[2] = {LC * cos(th[2]), LC * sin(th[2])};
    const double m11 = -b[1], m12 = c[1], m21 = b[0], m22 = -c[0], r1 = w2 * a[1], r2 = -w2 * a[0];
    const double det = m11 * m22 - m12 * m21;
    w[0] = w2;
    w[1] = (r1 * m22 - m12 * r2) / det;
    w[2] = (m11 * r2 - r1 * m21) / det;
}

/* The four-bar of test_four_bar.c cut at O4 (its CUTS[3]): ground -J1- crank -J2- coupler -J3-
 * rocker, hinges about z, gravity -y, body frames at the pivots O2, A, B with world axes at the pose
 * of crank angle `ref`, each link a rod m L^2/12 (1 - d d^T) plus m 1e-3 1; the loop a revolute
 * constraint between the ground at O4 and the rocker. */
static sd_model *builder_four_bar(double ref)
{
    double th[3], P[4][2];
    four_bar_pose(ref, th, P);
    static const char *const names[3] = {"crank", "coupler", "rocker"};
    static const int pivot[3] = {0, 1, 2}, far_end[3] = {1, 2, 3};
    sd_builder *b = sd_builder_new();
    const double g[3] = {0.0, -9.81, 0.0};
    sd_builder_set_gravity(b, g);
    sd_error err;
    for (int k = 0; k < 3; ++k) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        d.name = names[k];
        d.parent = k > 0 ? names[k - 1] : NULL;
        d.hinge = SD_HINGE_REVOLUTE; /* axis z */
        const double *p = P[pivot[k]], *e = P[far_end[k]];
        for (int i = 0; i < 2; ++i) d.placement.p[i] = p[i] - (k > 0 ? P[pivot[k - 1]][i] : 0.0);
        d.mass = MASS[k];
        const double dir[2] = {e[0] - p[0], e[1] - p[1]}, len = hypot(dir[0], dir[1]);
        const double u[3] = {dir[0] / len, dir[1] / len, 0.0};
        d.com[0] = 0.5 * dir[0];
        d.com[1] = 0.5 * dir[1];
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
                d.inertia[3 * r + c] = d.mass * len * len / 12.0 * ((r == c) - u[r] * u[c]) + d.mass * 1e-3 * (r == c);
        CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    }
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = "loop";
    c.type = SD_CONSTRAINT_REVOLUTE; /* axis z */
    c.body_b = "rocker";
    c.frame_a.p[0] = LD;
    for (int i = 0; i < 2; ++i) c.frame_b.p[i] = P[3][i] - P[2][i];
    CHECK(sd_builder_add_constraint(b, &c, &err) == SD_OK);
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    return m;
}

/* Closed-loop forward dynamics of one model at relative joint angles q and rates u (crank, coupler,
 * rocker, in that order down the chain): the links' absolute angular accelerations. */
static int link_accelerations(const sd_model *m, const double q_chain[3], const double u_chain[3], double tau_crank,
                              double acc[3])
{
    static const char *const joints[2][3] = {{"crank_joint", "coupler_joint", "rocker_joint"},
                                             {"crank", "coupler", "rocker"}};
    const int named_by_link = sd_model_joint_index(m, joints[0][0]) < 0;
    double q[3], u[3], tau[3] = {0, 0, 0}, qdd[3];
    int v[3];
    for (int k = 0; k < 3; ++k) {
        const int body = sd_model_joint_index(m, joints[named_by_link][k]);
        CHECK(body >= 0);
        if (body < 0) return 0;
        q[sd_model_q_index(m, body)] = q_chain[k];
        v[k] = sd_model_v_index(m, body);
        u[v[k]] = u_chain[k];
    }
    tau[v[0]] = tau_crank;
    sd_data *d = sd_data_new(m);
    double vel[5];
    CHECK(sd_constraint_residuals(m, d, q, u, NULL, vel) == SD_OK);
    for (int i = 0; i < 5; ++i) CHECK(fabs(vel[i]) < 1e-12);
    const sd_status st = sd_closed_loop_forward_dynamics(m, d, q, u, tau, NULL, qdd, NULL, NULL);
    CHECK(st == SD_OK && sd_closed_loop_rank(d) == 2);
    acc[0] = qdd[v[0]];
    acc[1] = acc[0] + qdd[v[1]];
    acc[2] = acc[1] + qdd[v[2]];
    sd_data_free(d);
    return st == SD_OK;
}

static void check_four_bar(const char *folder)
{
    sd_model *m = load(folder, "four_bar.urdf");
    if (m == NULL) return;
    check_loaded(m, "four_bar.urdf", "rocker_pivot");
    const double file_ref = PI / 3, builder_ref = 1.0; /* crank angles of q = 0 in each model */
    double th_file[3], P[4][2];
    four_bar_pose(file_ref, th_file, P);
    sd_model *mb = builder_four_bar(builder_ref);
    sd_data *d = sd_data_new(m);
    const int crank = sd_model_joint_index(m, "crank_joint"), coupler = sd_model_joint_index(m, "coupler_joint"),
              rocker = sd_model_joint_index(m, "rocker_joint");
    const double t2s[3] = {1.9, -2.4, 0.2}, w2s[3] = {2.5, -1.0, 4.0}, taus[3] = {0.3, 0.0, -1.1};
    for (int i = 0; i < 3 && mb != NULL; ++i) {
        /* assemble the file's model with the crank locked at t2 */
        double q0[3] = {0, 0, 0}, q[3], residual = 1.0, th[3], w[3];
        unsigned char locked[3] = {0, 0, 0};
        q0[sd_model_q_index(m, crank)] = t2s[i] - file_ref;
        locked[sd_model_v_index(m, crank)] = 1;
        CHECK(sd_assemble_configuration(m, d, q0, locked, 1e-14, 50, q, &residual) == SD_OK);
        const double qc[3] = {q[sd_model_q_index(m, crank)], q[sd_model_q_index(m, coupler)],
                              q[sd_model_q_index(m, rocker)]};
        /* the file's link directions: crank, coupler, rocker B -> O4 (= O4 -> B + pi) */
        const double assembled[3] = {th_file[0] + qc[0], th_file[1] + qc[0] + qc[1],
                                     th_file[2] + qc[0] + qc[1] + qc[2]};
        four_bar_pose(t2s[i], th, P);
        for (int k = 0; k < 3; ++k) CHECK(fabs(remainder(assembled[k] - th[k], 2 * PI)) < 1e-10);
        four_bar_rates(th, w2s[i], w);
        const double u_chain[3] = {w[0], w[1] - w[0], w[2] - w[1]};
        /* the builder's model at the same pose, from its own reference */
        double th_b[3], Pb[4][2];
        four_bar_pose(builder_ref, th_b, Pb);
        const double qb[3] = {th[0] - th_b[0], (th[1] - th_b[1]) - (th[0] - th_b[0]),
                              (th[2] - th_b[2]) - (th[1] - th_b[1])};
        double acc_file[3], acc_builder[3];
        if (link_accelerations(m, qc, u_chain, taus[i], acc_file) &&
            link_accelerations(mb, qb, u_chain, taus[i], acc_builder)) {
            CHECK_ARRAY_CLOSE(acc_file, acc_builder, 3, 1e-10, "four_bar.urdf vs the builder's four-bar");
            printf("  four_bar.urdf at crank %+.2f rad, %+.1f rad/s: link accelerations %+.12f %+.12f %+.12f "
                   "(builder's: relative difference %.1e)\n",
                   t2s[i], w2s[i], acc_file[0], acc_file[1], acc_file[2], test_rel_diff(acc_file, acc_builder, 3));
        }
    }
    sd_data_free(d);
    sd_model_free(mb);
    sd_model_free(m);
}

/* ---------------------------------------------------------------- slider-crank */

static const double R_CRANK = 0.1, L_ROD = 0.3;

/* The slider's pin at crank angle th, and its first and second derivatives in th:
 * x = r cos th + S, S = sqrt(l^2 - r^2 sin^2 th); with f = r^2 sin th cos th (S' = -f / S),
 * x' = -r sin th - f / S, x'' = -r cos th - r^2 cos 2th / S - f^2 / S^3. */
static void slider_of_crank(double th, double x[3])
{
    const double S = sqrt(L_ROD * L_ROD - R_CRANK * R_CRANK * sin(th) * sin(th));
    const double f = R_CRANK * R_CRANK * sin(th) * cos(th);
    x[0] = R_CRANK * cos(th) + S;
    x[1] = -R_CRANK * sin(th) - f / S;
    x[2] = -R_CRANK * cos(th) - R_CRANK * R_CRANK * cos(2 * th) / S - f * f / (S * S * S);
}

static void check_slider_crank(const char *folder)
{
    sd_model *m = load(folder, "slider_crank.urdf");
    if (m == NULL) return;
    check_loaded(m, "slider_crank.urdf", "wrist_pin");
    sd_data *d = sd_data_new(m);
    const int crank = sd_model_joint_index(m, "crank_joint"), rod = sd_model_joint_index(m, "rod_joint"),
              slider = sd_model_joint_index(m, "slider_joint");
    const double file_ref = PI / 3;
    double x_ref[3];
    slider_of_crank(file_ref, x_ref); /* the slider joint's origin: q = 0 puts the pin there */
    double worst_x = 0.0, worst_acc = 0.0, q[3] = {0, 0, 0};
    unsigned char locked[3] = {0, 0, 0};
    locked[sd_model_v_index(m, crank)] = 1;
    /* a full turn of the crank in steps of 15 degrees, each assembled from the last (the nearest
     * closed pose to the origin's guess could be the mirrored one, the slider left of the crank) */
    for (int i = 1; i <= 24; ++i) {
        const double th = file_ref + 2 * PI * i / 24, w = 3.0 - 0.25 * i;
        double q0[3], residual = 1.0, x[3];
        memcpy(q0, q, sizeof q0);
        q0[sd_model_q_index(m, crank)] = th - file_ref;
        CHECK(sd_assemble_configuration(m, d, q0, locked, 1e-14, 50, q, &residual) == SD_OK);
        CHECK(q[sd_model_q_index(m, crank)] == q0[sd_model_q_index(m, crank)] && residual <= 1e-14);
        slider_of_crank(th, x);
        const double x_assembled = x_ref[0] + q[sd_model_q_index(m, slider)];
        CHECK(fabs(x_assembled - x[0]) < 1e-10);
        worst_x = fmax(worst_x, fabs(x_assembled - x[0]));
        /* speeds on the manifold: the rod's absolute angle phi = -asin(r sin th / l) */
        const double phi_dot = -R_CRANK * cos(th) * w / sqrt(L_ROD * L_ROD - R_CRANK * R_CRANK * sin(th) * sin(th));
        double u[3], tau[3] = {0, 0, 0}, qdd[3];
        u[sd_model_v_index(m, crank)] = w;
        u[sd_model_v_index(m, rod)] = phi_dot - w;
        u[sd_model_v_index(m, slider)] = x[1] * w;
        tau[sd_model_v_index(m, crank)] = 0.5;
        CHECK(sd_closed_loop_forward_dynamics(m, d, q, u, tau, NULL, qdd, NULL, NULL) == SD_OK);
        const double th_dd = qdd[sd_model_v_index(m, crank)];
        const double expect = x[1] * th_dd + x[2] * w * w;
        CHECK_CLOSE(qdd[sd_model_v_index(m, slider)], expect, 1e-10);
        worst_acc = fmax(worst_acc, fabs(qdd[sd_model_v_index(m, slider)] - expect));
    }
    printf("  slider_crank.urdf: slider position vs r cos th + sqrt(l^2 - r^2 sin^2 th) over a turn of the crank: "
           "worst %.1e m; slider acceleration vs x' th'' + x'' th'^2: worst %.1e m/s^2\n", worst_x, worst_acc);
    sd_data_free(d);
    sd_model_free(m);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <models folder>\n", argv[0]);
        return 2;
    }
    if (!SOADYN_HAS_IO) {
        printf("skipped: built without the io component (SOADYN_WITH_IO=OFF): no URDF reader\n");
        return 77;
    }
    check_four_bar(argv[1]);
    check_slider_crank(argv[1]);
    return test_summary("test_urdf_loops");
}
