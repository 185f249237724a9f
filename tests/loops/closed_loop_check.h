/*
 * tests/loops/closed_loop_check.h — the checks of one closed-loop model at a state closed at q0,
 * against the dense descriptor solve of 000 Eq 44 (loops_oracle.h: Jacobi pseudo-inverses, Gdot u
 * by differences), shared by the tests of rigid and flexible models:
 *   - the position residuals vanish at q0;
 *   - G from sd_constraint_jacobian equals the time derivative of the position residuals;
 *   - u projected on null(G): velocity residuals vanish;
 *   - qdd and lambda equal the dense solve (minimum-norm lambda, same rank), G qdd = -Gdot u, and
 *     M qdd + C - G* lambda = T;
 *   - the inter-body forces of the closed system equal those of Newton-Euler at the same qdd with
 *     the cut-joint forces of sd_constraint_force applied as external forces (which also checks
 *     what lambda means), and Newton-Euler then returns the given tau. (Skipped for a coupling
 *     whose hinge rides on a node of a flexible parent: its reaction on the parent's modes is no
 *     wrench on a body.)
 * Header-only (static), so that its CHECKs count in the test that includes it.
 */
#ifndef SOADYN_TEST_CLOSED_LOOP_CHECK_H
#define SOADYN_TEST_CLOSED_LOOP_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/flex.h>

#include "loops/loops_oracle.h"
#include "loops/random_loops.h"
#include "random_tree.h"
#include "test_util.h"

static double worst_cond = 0, worst_qdd = 0, worst_lambda = 0, worst_eq = 0, worst_force = 0, worst_jac = 0;
static int ambiguous_cases = 0, redundant_cases = 0, cases = 0, kinds_seen[SD_CONSTRAINT_TYPE_COUNT];

static double max_abs(const double *x, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; ++i) s = fmax(s, fabs(x[i]));
    return s;
}

static void check_model(const sd_model *m, uint64_t *rng, const double *q0)
{
    int node_coupling = 0; /* a coupling on a hinge that rides on a node (see the top) */
    for (int ci = 0; ci < sd_model_nconstraints(m); ++ci) {
        int a, b;
        sd_model_constraint_bodies(m, ci, &a, &b);
        if (sd_model_constraint_type(m, ci) == SD_CONSTRAINT_COUPLING)
            node_coupling |= sd_model_parent_node(m, a) >= 0 || sd_model_parent_node(m, b) >= 0;
    }
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m), nc = sd_model_nconstraint_rows(m);
    sd_data *d = sd_data_new(m), *d2 = sd_data_new(m);
    double *u = calloc((size_t)nv, 8), *ur = calloc((size_t)nv, 8), *tau = calloc((size_t)nv, 8),
           *qdd = calloc((size_t)nv, 8), *qdd_o = calloc((size_t)nv, 8), *c = calloc((size_t)nv, 8),
           *rhs = calloc((size_t)nv, 8), *tau_id = calloc((size_t)nv, 8), *M = calloc((size_t)(nv * nv), 8),
           *G = calloc((size_t)(nc * nv), 8), *lam = calloc((size_t)nc, 8), *lam_o = calloc((size_t)nc, 8),
           *gdu = calloc((size_t)nc, 8), *pos = calloc((size_t)nc, 8), *vel = calloc((size_t)nc, 8),
           *fext = calloc(6 * (size_t)n, 8), *ftot = calloc(6 * (size_t)n, 8), *qt = calloc((size_t)nq, 8),
           *p4 = calloc(4 * (size_t)nc, 8), *Gur = calloc((size_t)nc, 8), *f_cl = calloc(6 * (size_t)n, 8),
           *f_ne = calloc(6 * (size_t)n, 8);
    /* closed at q0 */
    CHECK(sd_constraint_residuals(m, d, q0, NULL, pos, NULL) == SD_OK);
    CHECK(max_abs(pos, nc) < 1e-12);
    /* G = d/dt of the position residuals (exact at closure), Richardson-extrapolated differences */
    CHECK(sd_constraint_jacobian(m, d, q0, G) == SD_OK);
    random_vector(rng, ur, nv, 1.0);
    const double h = 1e-3, t[4] = {h, -h, h / 2, -h / 2};
    for (int s = 0; s < 4; ++s) {
        sd_configuration_integrate(m, q0, ur, t[s], qt);
        sd_constraint_residuals(m, d, qt, NULL, p4 + s * nc, NULL);
    }
    for (int i = 0; i < nc; ++i) {
        const double dh = (p4[i] - p4[nc + i]) / (2 * h), dh2 = (p4[2 * nc + i] - p4[3 * nc + i]) / h;
        Gur[i] = (4.0 * dh2 - dh) / 3.0;
    }
    double *GurA = calloc((size_t)nc, 8);
    for (int i = 0; i < nc; ++i)
        for (int j = 0; j < nv; ++j) GurA[i] += G[i * nv + j] * ur[j];
    const double ej = test_rel_diff(GurA, Gur, nc);
    worst_jac = fmax(worst_jac, ej);
    CHECK_ARRAY_CLOSE(GurA, Gur, nc, 1e-8, "G u vs d/dt of the position residuals");
    free(GurA);
    /* a consistent velocity */
    random_vector(rng, u, nv, 1.0);
    project_on_nullspace(G, nc, nv, u);
    CHECK(sd_constraint_residuals(m, d, q0, u, NULL, vel) == SD_OK);
    CHECK(max_abs(vel, nc) < 1e-10);
    random_vector(rng, tau, nv, 2.0);
    random_vector(rng, fext, 6 * n, 1.0);
    sd_closed_loop_options opt = {.interbody_forces = 1};
    const sd_status st = sd_closed_loop_forward_dynamics(m, d, q0, u, tau, fext, qdd, lam, &opt);
    /* the oracle */
    CHECK(sd_mass_matrix(m, d2, q0, M) == SD_OK);
    CHECK(sd_bias_forces(m, d2, q0, u, fext, c) == SD_OK);
    for (int i = 0; i < nv; ++i) rhs[i] = tau[i] - c[i];
    CHECK(oracle_gdot_u(m, d2, q0, u, 1e-3, gdu));
    double resid, cond;
    int ambiguous;
    const int rank_o = oracle_descriptor_solve(M, rhs, G, gdu, nv, nc, qdd_o, lam_o, &resid, &cond, &ambiguous);
    ++cases;
    if (st != SD_OK) { /* only acceptable where the dense solve cannot satisfy the constraints either */
        fprintf(stderr, "note: closed-loop FD refused (%s); dense residual %.3g\n", sd_data_error(d), resid);
        CHECK(st == SD_E_SINGULAR && resid > 1e-6);
        goto done;
    }
    /* near-redundant rows (an eigenvalue of G M^-1 G* near the rank threshold): the rank and the
     * split of lambda along them are a judgement; qdd and the equations are still checked */
    if (ambiguous) ++ambiguous_cases;
    CHECK(ambiguous || sd_closed_loop_rank(d) == rank_o);
    if (rank_o < nc) ++redundant_cases;
    const double eq = test_rel_diff(qdd, qdd_o, nv), el = test_rel_diff(lam, lam_o, nc);
    worst_qdd = fmax(worst_qdd, eq);
    worst_lambda = fmax(worst_lambda, el);
    /* two exact solves agree to about cond x their inputs' errors: the tolerance grows past
     * cond(G M^-1 G*) = 1e3 (the oracle's Gdot u is good to about 1e-13) */
    const double tol = test_cond_tolerance(1e-10, cond * 100.0);
    worst_cond = fmax(worst_cond, cond);
    CHECK_ARRAY_CLOSE(qdd, qdd_o, nv, tol, "closed-loop qdd vs dense descriptor solve (000 Eq 44)");
    if (!ambiguous) CHECK_ARRAY_CLOSE(lam, lam_o, nc, tol, "lambda vs dense minimum-norm multipliers");
    /* M qdd + C - G* lambda = T, and G qdd = -Gdot u */
    double scale = 1.0, worst = 0.0;
    for (int i = 0; i < nv; ++i) {
        double s = c[i] - tau[i];
        for (int j = 0; j < nv; ++j) s += M[i * nv + j] * qdd[j];
        for (int a = 0; a < nc; ++a) s -= G[a * nv + i] * lam[a];
        worst = fmax(worst, fabs(s));
        scale = fmax(scale, fmax(fabs(tau[i]), fabs(c[i])));
    }
    worst_eq = fmax(worst_eq, worst / scale);
    CHECK(worst / scale < 1e-10);
    for (int a = 0; a < nc; ++a) {
        double s = gdu[a];
        for (int j = 0; j < nv; ++j) s += G[a * nv + j] * qdd[j];
        CHECK_CLOSE(s, 0.0, 1e-9 * fmax(1.0, max_abs(gdu, nc)));
    }
    /* inter-body forces: Newton-Euler with the cut-joint forces as external forces */
    if (node_coupling) goto done;
    sd_kinematics(m, d2, q0, NULL, NULL);
    memcpy(ftot, fext, 6 * (size_t)n * sizeof(double));
    for (int ci = 0; ci < sd_model_nconstraints(m); ++ci) {
        int a, b;
        sd_model_constraint_bodies(m, ci, &a, &b);
        double f[6];
        CHECK(sd_constraint_force(m, d, ci, SD_CONSTRAINT_FRAME_WORLD, f) == SD_OK);
        if (sd_model_constraint_type(m, ci) == SD_CONSTRAINT_COUPLING) {
            const int hinge[2] = {a, b};
            for (int s = 0; s < 2; ++s) { /* generalized force f[s] on the hinge: a couple or a force pair */
                const int k = hinge[s], p = sd_model_parent(m, k);
                sd_transform Xk_, Xp_;
                CHECK(sd_body_placement_world(m, d2, k, &Xk_) == SD_OK);
                const sd_transform *Xk = &Xk_;
                double ax[3], w[3], nw[3] = {0, 0, 0}, fw[3] = {0, 0, 0}, neg_n[3], neg_f[3];
                memcpy(ax, sd_model_axis(m, k), sizeof ax);
                sd_m3_mul_v(Xk->R, ax, w);
                double *target = sd_model_hinge(m, k) == SD_HINGE_REVOLUTE ? nw : fw;
                for (int i = 0; i < 3; ++i) target[i] = f[s] * w[i];
                oracle_add_wrench(Xk, k, Xk->p, nw, fw, ftot);
                for (int i = 0; i < 3; ++i) neg_n[i] = -nw[i], neg_f[i] = -fw[i];
                if (p >= 0) {
                    CHECK(sd_body_placement_world(m, d2, p, &Xp_) == SD_OK);
                    oracle_add_wrench(&Xp_, p, Xk->p, neg_n, neg_f, ftot);
                }
            }
            continue;
        }
        /* the point of application: F_B's origin (on the line of action for a distance) */
        sd_transform XB, XA, FB;
        CHECK(sd_body_placement_world(m, d2, b, &XB) == SD_OK);
        double neg[6];
        for (int i = 0; i < 6; ++i) neg[i] = -f[i];
        CHECK(sd_constraint_frame_world(m, d, ci, 1, &FB) == SD_OK);
        oracle_add_wrench(&XB, b, FB.p, f, f + 3, ftot);
        if (a >= 0) {
            CHECK(sd_body_placement_world(m, d2, a, &XA) == SD_OK);
            oracle_add_wrench(&XA, a, FB.p, neg, neg + 3, ftot);
        }
    }
    CHECK(sd_inverse_dynamics(m, d2, q0, u, qdd, ftot, tau_id) == SD_OK);
    CHECK_ARRAY_CLOSE(tau_id, tau, nv, 1e-10, "Newton-Euler with the cut-joint forces returns tau");
    for (int k = 0; k < n; ++k) {
        CHECK(sd_interbody_force(m, d, k, SD_FRAME_BODY, f_cl + 6 * k) == SD_OK);
        CHECK(sd_interbody_force(m, d2, k, SD_FRAME_BODY, f_ne + 6 * k) == SD_OK);
    }
    worst_force = fmax(worst_force, test_rel_diff(f_cl, f_ne, 6 * n));
    CHECK_ARRAY_CLOSE(f_cl, f_ne, 6 * n, 1e-10, "closed-system inter-body forces vs Newton-Euler");
done:
    free(u); free(ur); free(tau); free(qdd); free(qdd_o); free(c); free(rhs); free(tau_id); free(M); free(G);
    free(lam); free(lam_o); free(gdu); free(pos); free(vel); free(fext); free(ftot); free(qt); free(p4); free(Gur);
    free(f_cl); free(f_ne);
    sd_data_free(d);
    sd_data_free(d2);
}

#endif /* SOADYN_TEST_CLOSED_LOOP_CHECK_H */
