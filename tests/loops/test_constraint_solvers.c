/*
 * tests/loops/test_constraint_solvers.c — assembly, velocity projection and constrained inverse
 * dynamics on random trees of every hinge type closed by random constraints of every kind:
 *   - assembly from a perturbed closed configuration closes every loop to 1e-12, keeps quaternions
 *     unit and leaves locked speeds' coordinates untouched;
 *   - projected velocities satisfy G u = 0 and differ from u by M^-1 G* mu (M-orthogonal to every
 *     admissible velocity), and projecting twice changes nothing;
 *   - constrained inverse dynamics at the accelerations of the closed-loop forward dynamics: the
 *     equations M qdd + C - G* lambda = T hold with T zero on the unactuated speeds, and the forward
 *     dynamics of its T gives qdd back; a motion the actuators cannot produce and a qdd that opens
 *     the loops are refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loops/loops_oracle.h"
#include "loops/random_loops.h"
#include "random_tree.h"
#include "test_util.h"

/* max |x| relative to the size of the velocities it came from */
static double max_abs_rel(const double *x, int n, const double *ref, int nref)
{
    double a = 0.0, r = 1.0;
    for (int i = 0; i < n; ++i) a = fmax(a, fabs(x[i]));
    for (int i = 0; i < nref; ++i) r = fmax(r, fabs(ref[i]));
    return a / r;
}

/* The rank of G restricted to the speeds not locked (NULL: all), from the test's own eigen-solver. */
static int rank_of(const double *G, int nc, int nv, const unsigned char *locked)
{
    double *A = calloc((size_t)(nc * nc + 2 * nc + 1), 8), *b = A + nc * nc, *x = b + nc;
    for (int a = 0; a < nc; ++a)
        for (int c = 0; c < nc; ++c)
            for (int j = 0; j < nv; ++j)
                if (!(locked && locked[j])) A[a * nc + c] += G[a * nv + j] * G[c * nv + j];
    const int r = oracle_pinv_solve(A, nc, b, x, 1e-12, 1.0); /* rows of G are O(1): unit moments, forces */
    free(A);
    return r;
}

static double worst_assembly = 0, worst_proj = 0, worst_orth = 0, worst_cid = 0, worst_round = 0;
static int assembled = 0, cid_cases = 0, refused_motion = 0;

static void check_model(const sd_model *m, uint64_t *rng, const double *q0)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), nc = sd_model_nconstraint_rows(m);
    sd_data *d = sd_data_new(m);
    double *q = calloc((size_t)nq, 8), *qg = calloc((size_t)nq, 8), *dq = calloc((size_t)nv, 8),
           *u = calloc((size_t)nv, 8), *up = calloc((size_t)nv, 8), *up2 = calloc((size_t)nv, 8),
           *v = calloc((size_t)nv, 8), *G = calloc((size_t)(nc * nv), 8), *M = calloc((size_t)(nv * nv), 8),
           *pos = calloc((size_t)nc, 8), *vel = calloc((size_t)nc, 8), *tau = calloc((size_t)nv, 8),
           *tau2 = calloc((size_t)nv, 8), *qdd = calloc((size_t)nv, 8), *qdd2 = calloc((size_t)nv, 8),
           *lam = calloc((size_t)nc, 8), *c = calloc((size_t)nv, 8);
    unsigned char *locked = calloc((size_t)nv, 1), *act = calloc((size_t)nv, 1);
    /* assembly from a perturbed configuration, some speeds locked */
    random_vector(rng, dq, nv, 0.03);
    for (int j = 0; j < nv; ++j) locked[j] = sd_random_uniform(rng) < 0.2;
    /* locks that take rank from G make q0 a singular (isolated) solution of the locked problem,
     * where Gauss-Newton crawls: keep locks only when the free speeds keep G's rank */
    CHECK(sd_constraint_jacobian(m, d, q0, G) == SD_OK);
    const int rank_g = rank_of(G, nc, nv, NULL);
    if (rank_g != rank_of(G, nc, nv, locked)) memset(locked, 0, (size_t)nv);
    int rank = -1, mobility = -1;
    CHECK(sd_constraint_rank(m, d, q0, &rank, &mobility) == SD_OK);
    CHECK(rank == rank_g && mobility == nv - rank_g);
    for (int j = 0; j < nv; ++j)
        if (locked[j]) dq[j] = 0.0; /* so that q0 stays reachable */
    sd_configuration_integrate(m, q0, dq, 1.0, qg);
    double res;
    const sd_status st = sd_assemble_configuration(m, d, qg, locked, 1e-12, 50, q, &res);
    if (st == SD_OK) {
        ++assembled;
        CHECK(sd_constraint_residuals(m, d, q, NULL, pos, NULL) == SD_OK);
        worst_assembly = fmax(worst_assembly, res);
        for (int i = 0; i < nc; ++i) CHECK(fabs(pos[i]) <= 1e-12);
        CHECK(sd_configuration_quaternion_error(m, q) < 1e-14);
        for (int k = 0; k < sd_model_nbodies(m); ++k) { /* locked 1-dof hinges keep their coordinate */
            const sd_hinge_type h = sd_model_hinge(m, k);
            if ((h == SD_HINGE_REVOLUTE || h == SD_HINGE_PRISMATIC) && locked[sd_model_v_index(m, k)])
                CHECK(q[sd_model_q_index(m, k)] == qg[sd_model_q_index(m, k)]);
        }
    } else {
        fprintf(stderr, "note: assembly refused: %s\n", sd_data_error(d));
        CHECK(st == SD_E_SINGULAR && strstr(sd_data_error(d), "'c"));
        memcpy(q, q0, (size_t)nq * sizeof(double));
    }
    /* projection */
    random_vector(rng, u, nv, 1.0);
    CHECK(sd_project_velocities(m, d, q, u, up) == SD_OK);
    CHECK(sd_constraint_residuals(m, d, q, up, NULL, vel) == SD_OK);
    worst_proj = fmax(worst_proj, max_abs_rel(vel, nc, u, nv));
    CHECK(max_abs_rel(vel, nc, u, nv) < 1e-12);
    CHECK(sd_project_velocities(m, d, q, up, up2) == SD_OK);
    CHECK_ARRAY_CLOSE(up2, up, nv, 1e-11, "projection is idempotent");
    CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
    CHECK(sd_constraint_jacobian(m, d, q, G) == SD_OK);
    random_vector(rng, v, nv, 1.0);
    project_on_nullspace(G, nc, nv, v);
    double orth = 0.0, sc = 1e-300;
    for (int i = 0; i < nv; ++i) {
        double Mdu = 0.0;
        for (int j = 0; j < nv; ++j) Mdu += M[i * nv + j] * (u[j] - up[j]);
        orth += v[i] * Mdu;
        sc += fabs(v[i] * Mdu);
    }
    worst_orth = fmax(worst_orth, fabs(orth) / fmax(sc, 1.0));
    CHECK(fabs(orth) <= 1e-10 * fmax(sc, 1.0));
    /* constrained inverse dynamics: forward dynamics with tau on a random actuated set, then back */
    for (int j = 0; j < nv; ++j) act[j] = sd_random_uniform(rng) < 0.6;
    random_vector(rng, tau, nv, 2.0);
    for (int j = 0; j < nv; ++j)
        if (!act[j]) tau[j] = 0.0;
    if (sd_closed_loop_forward_dynamics(m, d, q, up, tau, NULL, qdd, NULL, NULL) == SD_OK) {
        ++cid_cases;
        CHECK(sd_constrained_inverse_dynamics(m, d, q, up, qdd, NULL, act, tau2, lam) == SD_OK);
        for (int j = 0; j < nv; ++j)
            if (!act[j]) CHECK(tau2[j] == 0.0);
        CHECK(sd_bias_forces(m, d, q, up, NULL, c) == SD_OK);
        double worst = 0.0, scale = 1.0;
        for (int i = 0; i < nv; ++i) { /* M qdd + C - G* lambda = T */
            double s = c[i] - tau2[i];
            for (int j = 0; j < nv; ++j) s += M[i * nv + j] * qdd[j];
            for (int a = 0; a < nc; ++a) s -= G[a * nv + i] * lam[a];
            worst = fmax(worst, fabs(s));
            scale = fmax(scale, fmax(fabs(c[i]), fabs(tau2[i])));
        }
        worst_cid = fmax(worst_cid, worst / scale);
        CHECK(worst / scale < 1e-10);
        CHECK(sd_closed_loop_forward_dynamics(m, d, q, up, tau2, NULL, qdd2, NULL, NULL) == SD_OK);
        worst_round = fmax(worst_round, test_rel_diff(qdd2, qdd, nv));
        CHECK_ARRAY_CLOSE(qdd2, qdd, nv, 1e-9, "forward dynamics of the constrained inverse dynamics' tau");
        /* nothing actuated: only the free motion (tau = 0) is producible */
        double tmax = 0.0;
        for (int j = 0; j < nv; ++j) tmax = fmax(tmax, fabs(tau2[j]));
        if (tmax > 1e-6) {
            const sd_status s2 = sd_constrained_inverse_dynamics(m, d, q, up, qdd, NULL, NULL, tau2, NULL);
            if (s2 == SD_E_SINGULAR) {
                ++refused_motion;
                CHECK(strstr(sd_data_error(d), "cannot produce") != NULL);
            }
        }
        /* accelerations that open the loops */
        if (nc > 0) {
            for (int j = 0; j < nv; ++j) qdd2[j] = qdd[j] + G[j]; /* plus row 0 of G */
            double g0 = 0.0;
            for (int j = 0; j < nv; ++j) g0 += G[j] * G[j];
            if (g0 > 1e-6) CHECK(sd_constrained_inverse_dynamics(m, d, q, up, qdd2, NULL, act, tau2, NULL) == SD_E_ARGUMENT);
        }
    }
    free(q); free(qg); free(dq); free(u); free(up); free(up2); free(v); free(G); free(M); free(pos); free(vel);
    free(tau); free(tau2); free(qdd); free(qdd2); free(lam); free(c); free(locked); free(act);
    sd_data_free(d);
}

int main(void)
{
    uint64_t rng = 0xa55e3b1eULL;
    for (int trial = 0; trial < 60; ++trial) {
        const int n = 2 + trial % 15;
        const int flags = (trial % 3 == 1 ? RT_FREE_ROOT : 0) | (trial % 4 == 2 ? RT_MASSLESS : 0);
        sd_model *tree = random_tree(&rng, n, flags);
        double *q0 = malloc((size_t)sd_model_nq(tree) * sizeof(double));
        sd_configuration_random(tree, &rng, q0);
        sd_model *m = close_randomly(tree, &rng, q0, NULL);
        if (m) check_model(m, &rng, q0);
        sd_model_free(m);
        sd_model_free(tree);
        free(q0);
    }
    printf("assembled %d; worst: assembly residual %.2g, G u after projection %.2g, M-orthogonality %.2g, "
           "inverse dynamics equations %.2g, round trip qdd %.2g (%d cases, %d unproducible motions refused)\n",
           assembled, worst_assembly, worst_proj, worst_orth, worst_cid, worst_round, cid_cases, refused_motion);
    CHECK(assembled == cid_cases && cid_cases >= 50 && refused_motion > 0);
    return test_summary("test_constraint_solvers");
}
