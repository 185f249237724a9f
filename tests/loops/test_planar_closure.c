/*
 * tests/loops/test_planar_closure.c — the PLANAR closure constraint (three rows: B keeps a plane of
 * A, turning about its normal and sliding in it) against the planar hinge it cuts open:
 *   - a body on a free joint held to the world by a PLANAR constraint moves as the same body on a
 *     planar hinge: its spatial acceleration equal to the hinge model's at the same state (qdd of
 *     the free joint is the body's spatial acceleration, 1e-10), under a gravity with an
 *     out-of-plane part that the constraint carries (lambda's normal force = m g_n, and the moments
 *     that hold the inertia's products of a spinning body in the plane, checked against the
 *     hinge model's own inter-body force);
 *   - rank 3 of 3 rows, mobility 3; the residuals vanish in the plane and measure a lift off it;
 *   - qdd and lambda of both kinds against the dense descriptor solve of 000 Eq 44 (1e-10);
 *   - a point-in-plane row (one row) of the same body: rank 1, mobility 5, and the body's normal
 *     acceleration at the point is zero.
 * Every number comes from the tree algorithms of the hinge model, not from the loops layer.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "loops/loops_oracle.h"
#include "test_util.h"

static const double GRAVITY[3] = {0.7, -9.81, -3.2};
static const double NORMAL[3] = {0.0, 0.0, 1.0};

/* The puck: mass 2.3, a centre of mass off its origin and an inertia with products (so that a
 * spin about the normal needs moments about x and y to stay in the plane). */
static void puck_desc(sd_body_desc *d, sd_hinge_type hinge)
{
    sd_body_desc_init(d);
    d->name = "puck";
    d->hinge = hinge;
    d->axis[0] = NORMAL[0], d->axis[1] = NORMAL[1], d->axis[2] = NORMAL[2];
    d->mass = 2.3;
    d->com[0] = 0.11, d->com[1] = -0.07, d->com[2] = 0.05;
    const double I[9] = {0.31, 0.04, -0.06, 0.04, 0.27, 0.05, -0.06, 0.05, 0.42};
    memcpy(d->inertia, I, sizeof I);
}

static sd_model *build(sd_hinge_type hinge, sd_constraint_type closure)
{
    sd_builder *b = sd_builder_new();
    sd_builder_set_gravity(b, GRAVITY);
    sd_error err;
    sd_body_desc d;
    puck_desc(&d, hinge);
    CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    if (hinge == SD_HINGE_FREE) {
        sd_constraint_desc c;
        sd_constraint_desc_init(&c);
        c.name = "plane";
        c.type = closure;
        c.body_b = "puck"; /* F_A: the world's frame (normal z), F_B: the puck's origin */
        memcpy(c.axis, NORMAL, sizeof c.axis);
        CHECK(sd_builder_add_constraint(b, &c, &err) == SD_OK);
    }
    sd_model *m = NULL;
    if (sd_builder_build(b, &m, &err) != SD_OK) fprintf(stderr, "build: %s\n", err.message);
    sd_builder_free(b);
    return m;
}

/* The free joint's (q, u) of the planar hinge's state (x, y, theta; their rates): position, unit
 * quaternion (w, x, y, z) about z, body-axes (omega, v). */
static void free_state(const double qp[3], const double up[3], double q[7], double u[6])
{
    const double c = cos(qp[2]), s = sin(qp[2]);
    q[0] = qp[0], q[1] = qp[1], q[2] = 0.0;
    q[3] = cos(qp[2] / 2), q[4] = 0.0, q[5] = 0.0, q[6] = sin(qp[2] / 2);
    u[0] = 0.0, u[1] = 0.0, u[2] = up[2];
    u[3] = c * up[0] + s * up[1]; /* R^T (xdot, ydot, 0) */
    u[4] = -s * up[0] + c * up[1];
    u[5] = 0.0;
}

/* qdd and lambda against the dense descriptor solve of 000 Eq 44 (loops_oracle.h: M, C, G, Gdot u
 * by differences, eigen-decompositions written there), to 1e-10 relative. */
static void check_descriptor(const sd_model *m, sd_data *d, const double *q, const double *u, const double *tau,
                             const double *qdd, const double *lam)
{
    enum { NV = 6, NC = 3 };
    const int nv = sd_model_nv(m), nc = sd_model_nconstraint_rows(m);
    CHECK(nv == NV && nc <= NC);
    double M[NV * NV], c[NV], rhs[NV], G[NC * NV], gdu[NC], qdd_o[NV], lam_o[NC], res = 1.0, cond = 0.0;
    int ambiguous = 1;
    CHECK(sd_mass_matrix(m, d, q, M) == SD_OK && sd_bias_forces(m, d, q, u, NULL, c) == SD_OK);
    CHECK(sd_constraint_jacobian(m, d, q, G) == SD_OK && oracle_gdot_u(m, d, q, u, 1e-3, gdu));
    for (int i = 0; i < nv; ++i) rhs[i] = tau[i] - c[i];
    const int rank = oracle_descriptor_solve(M, rhs, G, gdu, nv, nc, qdd_o, lam_o, &res, &cond, &ambiguous);
    CHECK(rank == nc && !ambiguous);
    CHECK_ARRAY_CLOSE(qdd, qdd_o, nv, 1e-10, "closed-loop qdd vs the dense descriptor solve");
    CHECK_ARRAY_CLOSE(lam, lam_o, nc, 1e-10, "lambda vs the dense descriptor solve");
}

static void test_planar_as_hinge(void)
{
    sd_model *mh = build(SD_HINGE_PLANAR, SD_CONSTRAINT_PLANAR), *mf = build(SD_HINGE_FREE, SD_CONSTRAINT_PLANAR);
    if (!mh || !mf) return;
    sd_data *dh = sd_data_new(mh), *df = sd_data_new(mf);
    CHECK(sd_model_nconstraint_rows(mf) == 3);
    CHECK(strcmp(sd_constraint_type_name(SD_CONSTRAINT_PLANAR), "planar") == 0);
    const double qp[3] = {0.4, -0.25, 0.9}, up[3] = {1.3, -0.6, 4.0}, taup[3] = {0.0, 0.0, 0.0};
    double q[7], u[6], tau[6] = {0, 0, 0, 0, 0, 0}, qdd[6], lam[3], qddp[3], acc[6], pos[3], vel[3];
    free_state(qp, up, q, u);
    CHECK(sd_constraint_residuals(mf, df, q, u, pos, vel) == SD_OK);
    for (int i = 0; i < 3; ++i) CHECK(fabs(pos[i]) < 1e-15 && fabs(vel[i]) < 1e-14);
    double tau_id[3];
    CHECK(sd_forward_dynamics(mh, dh, qp, up, taup, NULL, qddp) == SD_OK);
    CHECK(sd_kinematics(mh, dh, qp, up, qddp) == SD_OK);
    CHECK(sd_body_acceleration(mh, dh, 0, acc) == SD_OK);
    CHECK(sd_inverse_dynamics(mh, dh, qp, up, qddp, NULL, tau_id) == SD_OK); /* its inter-body force */
    int rank = -1, mobility = -1;
    CHECK(sd_constraint_rank(mf, df, q, &rank, &mobility) == SD_OK && rank == 3 && mobility == 3);
    CHECK(sd_closed_loop_forward_dynamics(mf, df, q, u, tau, NULL, qdd, lam, NULL) == SD_OK);
    CHECK(sd_closed_loop_rank(df) == 3);
    double fc[6], fh[6];
    CHECK(sd_constraint_force(mf, df, 0, SD_CONSTRAINT_FRAME_WORLD, fc) == SD_OK);
    check_descriptor(mf, df, q, u, tau, qdd, lam);
    CHECK_ARRAY_CLOSE(qdd, acc, 6, 1e-10, "free body + planar closure: qdd = the planar hinge's body acceleration");
    /* the constraint's force on the puck = the planar hinge's inter-body force (world axes, about the
     * puck's origin) */
    CHECK(sd_interbody_force(mh, dh, 0, SD_FRAME_WORLD, fh) == SD_OK);
    printf("planar closure: qdd %.10g %.10g %.10g %.10g %.10g %.10g; normal force %.10g (m g_n %.10g)\n", qdd[0],
           qdd[1], qdd[2], qdd[3], qdd[4], qdd[5], fc[5], -2.3 * GRAVITY[2]);
    CHECK_ARRAY_CLOSE(fc, fh, 6, 1e-10, "planar closure force = the planar hinge's inter-body force");
    CHECK(fabs(fc[5] + 2.3 * GRAVITY[2]) < 1e-10 * 2.3 * 9.81);
    /* lifted off the plane by 1e-3 and tilted by 2e-3 about x: the residuals see both */
    q[2] = 1e-3;
    const double t = 1e-3; /* half the tilt angle, composed after the turn about z */
    const double cz = q[3], sz = q[6], cx = cos(t), sx = sin(t); /* (cz, 0, 0, sz) (cx, sx, 0, 0) */
    q[3] = cz * cx, q[4] = cz * sx, q[5] = sz * sx, q[6] = sz * cx;
    CHECK(sd_constraint_residuals(mf, df, q, NULL, pos, NULL) == SD_OK);
    printf("lifted 1e-3 and tilted 2e-3 rad: residuals %.6g %.6g %.6g\n", pos[0], pos[1], pos[2]);
    CHECK(fabs(pos[2] - 1e-3) < 1e-12);
    CHECK(fabs(hypot(pos[0], pos[1]) - sin(2e-3)) < 1e-12);
    sd_data_free(dh);
    sd_data_free(df);
    sd_model_free(mh);
    sd_model_free(mf);
}

static void test_point_in_plane_row(void)
{
    sd_model *m = build(SD_HINGE_FREE, SD_CONSTRAINT_POINT_IN_PLANE);
    if (!m) return;
    sd_data *d = sd_data_new(m);
    const double qp[3] = {-0.3, 0.8, -1.1}, up[3] = {0.5, 2.0, -3.0};
    double q[7], u[6], tau[6] = {0.1, -0.2, 0.3, 0.0, 0.4, 0.0}, qdd[6], lam[1];
    free_state(qp, up, q, u);
    u[0] = 0.7, u[1] = -0.4; /* tumbling: only the point is held */
    int rank = -1, mobility = -1;
    CHECK(sd_constraint_rank(m, d, q, &rank, &mobility) == SD_OK && rank == 1 && mobility == 5);
    CHECK(sd_closed_loop_forward_dynamics(m, d, q, u, tau, NULL, qdd, lam, NULL) == SD_OK);
    CHECK(sd_closed_loop_rank(d) == 1);
    check_descriptor(m, d, q, u, tau, qdd, lam);
    /* the origin's classical acceleration along the world normal: R (vdot + omega x v), z */
    double R[9], a[3], wxv[3];
    sd_quat_to_m3(q + 3, R);
    sd_v3_cross(u, u + 3, wxv);
    for (int i = 0; i < 3; ++i) a[i] = qdd[3 + i] + wxv[i];
    const double an = R[6] * a[0] + R[7] * a[1] + R[8] * a[2];
    printf("point in plane: normal acceleration of the point %.3g, lambda %.10g\n", an, lam[0]);
    CHECK(fabs(an) < 1e-12);
    sd_data_free(d);
    sd_model_free(m);
}

int main(void)
{
    test_planar_as_hinge();
    test_point_in_plane_row();
    return test_summary("test_planar_closure");
}
