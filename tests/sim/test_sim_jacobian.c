/*
 * tests/sim/test_sim_jacobian.c — CVODE BDF with the analytical Jacobian (sd_sim_options.jacobian,
 * src/sim/jacobian.c):
 *   - the Jacobian handed to CVODE equals central differences of the right-hand side on the chart:
 *     every block on trees of revolute and prismatic hinges at any delta (where jacobian.c's
 *     approximations are exact), and on a free-root tree at delta = 0 all but the block it leaves out
 *     (d delta_dot / d delta, sim.h);
 *   - on a stiff model (a heavy free bus with two chains of stiff, damped revolute springs, like the
 *     flexible spacecraft of examples/python/stiff_integrators.py, as rigid segments), turned by a smooth torque:
 *     RK4 at BDF's mean step H fails (the model is stiff: H is past RK4's stability bound), the
 *     analytical Jacobian takes fewer right-hand sides than CVODE's difference quotients, and its
 *     final state is RK4's at H/10 to 10 rtol;
 *   - Radau IIA: at the same fixed step H the same claims, its order 5 (the error's ratio when the
 *     step is halved), and a step too long for Newton refused (SD_E_SOLVER, "take a smaller dt");
 *   - the choice: auto takes the analytical Jacobian on a tree, difference quotients with a control
 *     callback or closed loops; analytic refused (SD_E_NOT_SUPPORTED, naming the reason) with
 *     closed loops and with rk4 / cvode-adams, dq refused with rk4; an unknown choice is
 *     SD_E_ARGUMENT; names round-trip.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "random_tree.h"
#include "sim/sim_internal.h"
#include "test_util.h"

#define RTOL 1e-6 /* CVODE's rtol in the stiff runs (atol 1e-2 rtol) */

/* ---------------------------------------------------------------- the Jacobian against differences */

/* J of jacobian.c against central differences of sim_rhs_eval at (q0, y); `skip_chart_block` leaves
 * out the block jacobian.c approximates (rows and columns 0..nv-1). */
static double jacobian_error(const sd_model *m, const double *q0, const double *y, int skip_chart_block)
{
    const int nv = sd_model_nv(m), n = 2 * nv;
    sd_sim_options o;
    sd_sim_options_init(&o);
    sim_rhs rhs;
    sd_error err;
    sim_jacobian jac;
    if (sim_rhs_init(&rhs, m, &o, q0, &err) != SD_OK || sim_jacobian_init(&jac, nv) != SD_OK) {
        fprintf(stderr, "setup: %s\n", err.message);
        exit(1);
    }
    double *J = malloc(sizeof(double) * (size_t)(n * n)), *yp = malloc(sizeof(double) * (size_t)n);
    double *fp = malloc(sizeof(double) * (size_t)n), *fm = malloc(sizeof(double) * (size_t)n);
    CHECK(sim_jacobian_eval(&jac, &rhs, 0.0, q0, y, J) == SD_OK);
    double worst = 0.0, scale = 1.0;
    for (int i = 0; i < n * n; ++i) scale = fmax(scale, fabs(J[i]));
    const double h = 1e-6;
    for (int j = 0; j < n; ++j) {
        memcpy(yp, y, sizeof(double) * (size_t)n);
        yp[j] = y[j] + h;
        CHECK(sim_rhs_eval(&rhs, 0.0, q0, yp, fp) == SD_OK);
        yp[j] = y[j] - h;
        CHECK(sim_rhs_eval(&rhs, 0.0, q0, yp, fm) == SD_OK);
        for (int i = 0; i < n; ++i) {
            if (skip_chart_block && i < nv && j < nv) continue;
            const double d = (fp[i] - fm[i]) / (2.0 * h);
            worst = fmax(worst, fabs(J[(size_t)j * (size_t)n + (size_t)i] - d) / scale);
        }
    }
    free(J);
    free(yp);
    free(fp);
    free(fm);
    sim_jacobian_release(&jac);
    sim_rhs_release(&rhs);
    return worst;
}

static void check_jacobian_against_differences(void)
{
    uint64_t rng = 0x5eed1234ULL;
    for (int trial = 0; trial < 4; ++trial) {
        const int free_root = trial >= 2;
        sd_model *m = random_tree(&rng, 3 + 3 * trial, free_root ? RT_FREE_ROOT | RT_ONLY_1DOF : RT_ONLY_1DOF);
        const int nq = sd_model_nq(m), nv = sd_model_nv(m);
        double *q0 = malloc(sizeof(double) * (size_t)nq), *y = malloc(sizeof(double) * (size_t)(2 * nv));
        double *w = malloc(sizeof(double) * (size_t)nv);
        random_state(m, &rng, q0, y + nv, w);
        random_vector(&rng, y, nv, free_root ? 0.0 : 0.3); /* delta: 0 with a free root, else anywhere */
        const double e = jacobian_error(m, q0, y, free_root);
        printf("  Jacobian vs differences, %s tree of %d bodies: %.2e\n", free_root ? "free-root" : "1-dof",
               sd_model_nbodies(m), e);
        CHECK(e < 1e-6);
        free(q0);
        free(y);
        free(w);
        sd_model_free(m);
    }
}

/* ---------------------------------------------------------------- a stiff model */

static void add(sd_builder *b, const char *name, const char *parent, sd_hinge_type hinge, const double axis[3],
                double x, double mass, double length, double stiffness)
{
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = name;
    d.joint_name = name;
    d.parent = parent;
    d.hinge = hinge;
    if (axis) sd_v3_set(d.axis, axis[0], axis[1], axis[2]);
    d.placement.p[0] = x;
    d.mass = mass;
    d.com[0] = length / 2.0;
    const double i_end = mass * length * length / 12.0 + 1e-3 * mass;
    d.inertia[0] = i_end; /* a panel as wide as long */
    d.inertia[4] = d.inertia[8] = i_end;
    d.stiffness = stiffness;
    d.damping = stiffness > 0.0 ? 2.0 * 0.2 * sqrt(stiffness * 0.1) : 0.0;
    sd_error err;
    if (sd_builder_add_body(b, &d, &err) != SD_OK) {
        fprintf(stderr, "stiff model: %s\n", err.message);
        exit(1);
    }
}

/* A 200 kg bus on a free hinge, two arms of 4 segments (0.5 m, 2 kg each) on revolute springs of
 * 2e6 N m/rad about z and y in turn, damping ratio about 0.2; no gravity. */
static sd_model *stiff_craft(void)
{
    sd_builder *b = sd_builder_new();
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = d.joint_name = "bus";
    d.hinge = SD_HINGE_FREE;
    d.mass = 200.0;
    d.inertia[0] = d.inertia[4] = d.inertia[8] = 100.0;
    sd_error err;
    if (sd_builder_add_body(b, &d, &err) != SD_OK) exit(1);
    const double z[3] = {0, 0, 1}, y[3] = {0, 1, 0}, x[3] = {1, 0, 0};
    for (int side = 0; side < 2; ++side) {
        char name[32], parent[32];
        snprintf(name, sizeof(name), "drive%d", side);
        add(b, name, "bus", SD_HINGE_REVOLUTE, x, side ? -1.0 : 1.0, 2.0, 0.1, 0.0);
        for (int k = 0; k < 4; ++k) {
            snprintf(parent, sizeof(parent), "%s", name);
            snprintf(name, sizeof(name), "seg%d_%d", side, k);
            add(b, name, parent, SD_HINGE_REVOLUTE, k % 2 ? y : z, k ? 0.5 : 0.1, 2.0, 0.5, 2e6);
        }
    }
    const double g[3] = {0, 0, 0};
    sd_builder_set_gravity(b, g);
    sd_model *m = NULL;
    if (sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "stiff model: %s\n", err.message);
        exit(1);
    }
    sd_builder_free(b);
    return m;
}

/* A smooth torque on the bus: 1/2 A (1 - cos 2 pi t), A = 20 N m about the bus z axis (t alone: the analytical
 * Jacobian is then exact). */
static void torque(void *user, double t, const double *q, const double *u, double *tau)
{
    (void)q;
    (void)u;
    tau[*(const int *)user] += 10.0 * (1.0 - cos(2.0 * 3.14159265358979323846 * t));
}

static sd_status run(const sd_model *m, sd_integrator integ, sd_sim_jacobian jac, double dt, double *q, double *u,
                     sd_sim_stats *st)
{
    static int drive; /* the bus speed wz */
    drive = 2;
    sd_sim_options o;
    sd_sim_options_init(&o);
    o.integrator = integ;
    o.jacobian = jac;
    o.duration = 0.3;
    o.dt = dt;
    o.rtol = RTOL;
    o.atol = 1e-2 * RTOL;
    o.control = torque;
    o.control_user = &drive;
    sd_configuration_neutral(m, q);
    memset(u, 0, sizeof(double) * (size_t)sd_model_nv(m));
    sd_error err;
    const sd_status s = sd_simulate(m, &o, q, u, st, &err);
    if (s != SD_OK) printf("  (%s: %s)\n", sd_integrator_name(integ), err.message);
    return s;
}

static void check_stiff_claims(void)
{
    sd_model *m = stiff_craft();
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *qa = malloc(sizeof(double) * (size_t)nq), *ua = malloc(sizeof(double) * (size_t)nv);
    double *qd = malloc(sizeof(double) * (size_t)nq), *ud = malloc(sizeof(double) * (size_t)nv);
    double *qr = malloc(sizeof(double) * (size_t)nq), *ur = malloc(sizeof(double) * (size_t)nv);
    double *dq = malloc(sizeof(double) * (size_t)nv);
    sd_sim_stats sa, sd, sr;
    CHECK(run(m, SD_INTEGRATOR_CVODE_BDF, SD_SIM_JACOBIAN_ANALYTIC, 0.01, qa, ua, &sa) == SD_OK);
    CHECK(run(m, SD_INTEGRATOR_CVODE_BDF, SD_SIM_JACOBIAN_DQ, 0.01, qd, ud, &sd) == SD_OK);
    const double H = 0.3 / (double)sa.steps;
    CHECK(run(m, SD_INTEGRATOR_RK4, SD_SIM_JACOBIAN_AUTO, H / 10.0, qr, ur, &sr) == SD_OK);
    sd_configuration_difference(m, qr, qa, dq);
    double e = 0.0, umax = 1.0;
    for (int i = 0; i < nv; ++i) e = fmax(e, fmax(fabs(dq[i]), fabs(ua[i] - ur[i])));
    for (int i = 0; i < nv; ++i) umax = fmax(umax, fabs(ur[i]));
    printf("  stiff craft, 0.3 s: BDF analytic %ld steps, %ld Jacobians, %ld RHS; BDF dq %ld steps, %ld "
           "Jacobians, %ld RHS; RK4 at H/10 = %.3g s: %ld RHS, |final state difference| %.2e (largest |u| %.3g)\n",
           sa.steps, sa.jacobian_evals, sa.rhs_evals, sd.steps, sd.jacobian_evals, sd.rhs_evals, H / 10.0,
           sr.rhs_evals, e, umax);
    /* the model is stiff: RK4 at BDF's mean step H fails (its stability bound is below H) */
    const sd_status at_H = run(m, SD_INTEGRATOR_RK4, SD_SIM_JACOBIAN_AUTO, H, qr, ur, &sr);
    printf("  RK4 at H = %.3g s: %s\n", H, at_H == SD_OK ? "ran" : "failed");
    CHECK(at_H != SD_OK);
    CHECK(sa.jacobian == SD_SIM_JACOBIAN_ANALYTIC && sd.jacobian == SD_SIM_JACOBIAN_DQ);
    CHECK(sr.jacobian == SD_SIM_JACOBIAN_AUTO && sr.jacobian_evals == 0);
    CHECK(sa.jacobian_evals > 0 && sd.jacobian_evals > 0);
    CHECK(sa.rhs_evals < sd.rhs_evals);
    CHECK(e <= 10.0 * RTOL * umax);

    /* Radau IIA at the fixed step H (BDF's mean step, where RK4 fails): RK4's state at H/10 to
     * 10 rtol too, with fewer right-hand sides on the analytical Jacobian than on differences */
    CHECK(run(m, SD_INTEGRATOR_RADAU_IIA, SD_SIM_JACOBIAN_ANALYTIC, H, qa, ua, &sa) == SD_OK);
    CHECK(run(m, SD_INTEGRATOR_RADAU_IIA, SD_SIM_JACOBIAN_DQ, H, qd, ud, &sd) == SD_OK);
    CHECK(run(m, SD_INTEGRATOR_RK4, SD_SIM_JACOBIAN_AUTO, H / 10.0, qr, ur, &sr) == SD_OK);
    sd_configuration_difference(m, qr, qa, dq);
    e = 0.0;
    for (int i = 0; i < nv; ++i) e = fmax(e, fmax(fabs(dq[i]), fabs(ua[i] - ur[i])));
    printf("  Radau IIA at H: analytic %ld steps, %ld Jacobians, %ld RHS; dq %ld RHS; |final state - RK4 at "
           "H/10| %.2e\n", sa.steps, sa.jacobian_evals, sa.rhs_evals, sd.rhs_evals, e);
    CHECK(sa.jacobian == SD_SIM_JACOBIAN_ANALYTIC && sa.jacobian_evals == sa.steps);
    CHECK(sa.rhs_evals < sd.rhs_evals);
    CHECK(e <= 10.0 * RTOL * umax);
    free(qa);
    free(ua);
    free(qd);
    free(ud);
    free(qr);
    free(ur);
    free(dq);
    sd_model_free(m);
}

/* ---------------------------------------------------------------- the choice and its refusals */

static void nothing(void *user, double t, const double *q, const double *u, double *tau)
{
    (void)user, (void)t, (void)q, (void)u, (void)tau;
}

static sd_status choose(const sd_model *m, sd_integrator integ, sd_sim_jacobian asked, int control,
                        sd_sim_jacobian *chosen, sd_error *err)
{
    sd_sim_options o;
    sd_sim_options_init(&o);
    o.integrator = integ;
    o.jacobian = asked;
    if (control) o.control = nothing;
    double q[64] = {0}, u[64] = {0};
    sd_configuration_neutral(m, q);
    const sd_status st = sd_simulate_check(m, &o, q, u, err);
    if (st == SD_OK) CHECK(sim_jacobian_choose(m, &o, q, u, chosen, err) == SD_OK);
    return st;
}

/* A four-bar: three revolute links closed by a revolute closure constraint. */
static sd_model *four_bar(void)
{
    sd_builder *b = sd_builder_new();
    const double z[3] = {0, 0, 1};
    add(b, "a", NULL, SD_HINGE_REVOLUTE, z, 0.0, 1.0, 1.0, 0.0);
    add(b, "b", "a", SD_HINGE_REVOLUTE, z, 1.0, 1.0, 1.0, 0.0);
    add(b, "c", "b", SD_HINGE_REVOLUTE, z, 1.0, 1.0, 1.0, 0.0);
    sd_constraint_desc l;
    sd_constraint_desc_init(&l);
    l.name = "close";
    l.type = SD_CONSTRAINT_REVOLUTE;
    l.body_a = "c";
    l.frame_a.p[0] = 1.0;
    l.frame_b.p[0] = 1.0; /* on the inertial frame */
    sd_error err;
    sd_model *m = NULL;
    if (sd_builder_add_constraint(b, &l, &err) != SD_OK || sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "four bar: %s\n", err.message);
        exit(1);
    }
    sd_builder_free(b);
    return m;
}

static void check_choice(void)
{
    uint64_t rng = 77;
    sd_model *tree = random_tree(&rng, 4, RT_FREE_ROOT);
    sd_model *loop = four_bar();
    sd_sim_jacobian c = SD_SIM_JACOBIAN_DQ;
    sd_error err;
    CHECK(choose(tree, SD_INTEGRATOR_CVODE_BDF, SD_SIM_JACOBIAN_AUTO, 0, &c, &err) == SD_OK &&
          c == SD_SIM_JACOBIAN_ANALYTIC);
    CHECK(choose(tree, SD_INTEGRATOR_CVODE_BDF, SD_SIM_JACOBIAN_AUTO, 1, &c, &err) == SD_OK && c == SD_SIM_JACOBIAN_DQ);
    CHECK(choose(tree, SD_INTEGRATOR_CVODE_BDF, SD_SIM_JACOBIAN_ANALYTIC, 1, &c, &err) == SD_OK &&
          c == SD_SIM_JACOBIAN_ANALYTIC);
    CHECK(choose(tree, SD_INTEGRATOR_CVODE_BDF, SD_SIM_JACOBIAN_DQ, 0, &c, &err) == SD_OK && c == SD_SIM_JACOBIAN_DQ);
    CHECK(choose(tree, SD_INTEGRATOR_RK4, SD_SIM_JACOBIAN_AUTO, 0, &c, &err) == SD_OK && c == SD_SIM_JACOBIAN_AUTO);
    CHECK(choose(tree, SD_INTEGRATOR_RADAU_IIA, SD_SIM_JACOBIAN_AUTO, 0, &c, &err) == SD_OK &&
          c == SD_SIM_JACOBIAN_ANALYTIC);
    CHECK(choose(loop, SD_INTEGRATOR_RADAU_IIA, SD_SIM_JACOBIAN_AUTO, 0, &c, &err) == SD_OK && c == SD_SIM_JACOBIAN_DQ);
    CHECK(choose(loop, SD_INTEGRATOR_RADAU_IIA, SD_SIM_JACOBIAN_ANALYTIC, 0, &c, &err) == SD_E_NOT_SUPPORTED);
    CHECK(choose(loop, SD_INTEGRATOR_CVODE_BDF, SD_SIM_JACOBIAN_AUTO, 0, &c, &err) == SD_OK && c == SD_SIM_JACOBIAN_DQ);
    CHECK(choose(loop, SD_INTEGRATOR_CVODE_BDF, SD_SIM_JACOBIAN_ANALYTIC, 0, &c, &err) == SD_E_NOT_SUPPORTED);
    CHECK(strstr(err.message, "closure constraint") != NULL);
    printf("  refused: %s\n", err.message);
    CHECK(choose(tree, SD_INTEGRATOR_RK4, SD_SIM_JACOBIAN_ANALYTIC, 0, &c, &err) == SD_E_NOT_SUPPORTED);
    CHECK(strstr(err.message, "rk4") != NULL);
    CHECK(choose(tree, SD_INTEGRATOR_CVODE_ADAMS, SD_SIM_JACOBIAN_DQ, 0, &c, &err) == SD_E_NOT_SUPPORTED);
    CHECK(strstr(err.message, "cvode-adams") != NULL);
    CHECK(choose(tree, SD_INTEGRATOR_CVODE_BDF, (sd_sim_jacobian)7, 0, &c, &err) == SD_E_ARGUMENT);
    /* sd_simulate itself refuses the same, before any step */
    sd_sim_options o;
    sd_sim_options_init(&o);
    o.jacobian = SD_SIM_JACOBIAN_ANALYTIC; /* with rk4 */
    double q[64] = {0}, u[64] = {0};
    sd_configuration_neutral(tree, q);
    CHECK(sd_simulate(tree, &o, q, u, NULL, &err) == SD_E_NOT_SUPPORTED);
    for (int i = 0; i <= (int)SD_SIM_JACOBIAN_DQ; ++i) {
        sd_sim_jacobian back = SD_SIM_JACOBIAN_DQ;
        CHECK(sd_sim_jacobian_from_name(sd_sim_jacobian_name((sd_sim_jacobian)i), &back) == SD_OK &&
              back == (sd_sim_jacobian)i);
    }
    CHECK(sd_sim_jacobian_from_name("exact", &c) == SD_E_ARGUMENT);
    CHECK(sd_sim_jacobian_from_name(NULL, &c) == SD_E_ARGUMENT);
    sd_model_free(tree);
    sd_model_free(loop);
}

/* ---------------------------------------------------------------- Radau IIA's order */

/* Radau IIA is of order 5: on a swinging double pendulum (a tree of two revolute links from
 * random_tree, no damping) the error of the final state against RK4 at a step 100x smaller falls
 * by 2^5 = 32 when the step is halved (between 20 and 45 allowed: the asymptotic regime). */
static void check_radau_order(void)
{
    uint64_t rng = 0xabcdefULL;
    sd_model *m = random_tree(&rng, 2, RT_CHAIN | RT_ONLY_1DOF);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double q0[8], u0[8], w[8], q[8], u[8], qr[8], ur[8], d[8];
    random_state(m, &rng, q0, u0, w);
    double err[2];
    sd_sim_options o;
    sd_sim_options_init(&o);
    o.duration = 1.0;
    o.dt = 1e-4;
    memcpy(qr, q0, sizeof(double) * (size_t)nq);
    memcpy(ur, u0, sizeof(double) * (size_t)nv);
    sd_error e;
    CHECK(sd_simulate(m, &o, qr, ur, NULL, &e) == SD_OK);
    o.integrator = SD_INTEGRATOR_RADAU_IIA;
    for (int k = 0; k < 2; ++k) {
        o.dt = k ? 0.025 : 0.05;
        memcpy(q, q0, sizeof(double) * (size_t)nq);
        memcpy(u, u0, sizeof(double) * (size_t)nv);
        CHECK(sd_simulate(m, &o, q, u, NULL, &e) == SD_OK);
        sd_configuration_difference(m, qr, q, d);
        err[k] = 0.0;
        for (int i = 0; i < nv; ++i) err[k] = fmax(err[k], fmax(fabs(d[i]), fabs(u[i] - ur[i])));
    }
    printf("  Radau IIA order: error %.3e at h = 0.05, %.3e at 0.025, ratio %.1f (2^5 = 32)\n", err[0], err[1],
           err[0] / err[1]);
    CHECK(err[0] / err[1] > 20.0 && err[0] / err[1] < 45.0);
    /* a step far too long for the motion (fast spin, dt = 0.5 s): refused, not a wrong answer */
    o.dt = 0.5;
    memcpy(q, q0, sizeof(double) * (size_t)nq);
    for (int i = 0; i < nv; ++i) u[i] = i % 2 ? -30.0 : 30.0;
    const sd_status st = sd_simulate(m, &o, q, u, NULL, &e);
    printf("  Radau IIA at dt = 0.5 s on a fast spin: %s\n", st == SD_OK ? "ran" : e.message);
    CHECK(st == SD_E_SOLVER && strstr(e.message, "take a smaller dt") != NULL);
    sd_model_free(m);
}

int main(void)
{
    check_radau_order();
    check_jacobian_against_differences();
    check_stiff_claims();
    check_choice();
    return test_summary("test_sim_jacobian");
}
