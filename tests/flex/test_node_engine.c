/*
 * tests/flex/test_node_engine.c — the node engine (src/algorithms/node_*.c) against independent
 * computations:
 *   (a) rigid random trees through the engine (sd_nodes_* called directly) = the rigid fast path:
 *       inverse dynamics, inter-body forces, M, forward dynamics by Cholesky, energies, com,
 *       momentum, Jacobian;
 *   (b) flexible trees: M and C equal a dense model built from the FE nodes as point masses and the
 *       bodies' rigid parts (sum of J^T m J; C from the classical accelerations at qdd = 0), the
 *       world kinematics written here from p_k + R_k l_j(eta) and the node frames exp(Pi_r eta);
 *   (c) tau = M qdd + C on random flexible trees (1-10 modes, full and linearised, mixed hinges);
 *   (d) the rigid limit: a flexible body with 0 modes equals the rigid body of the same inertia; with
 *       modes at eta = eta-dot = 0 the hinge block of M and C equals the rigid model's;
 *   (e) Jacobian columns against finite differences of positions and orientations;
 *   (f) power balance: d/dt (T + U_gravity + U_strain) = u.tau - eta-dot.D eta-dot along the motion.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/node_engine.h"
#include "flex/flex_body.h"
#include "internal.h"
#include "random_flex.h"
#include "random_tree.h"
#include "test_util.h"

static double *vec(int n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(double)); }

/* Solve M x = b by Cholesky (dense.c), M copied. */
static int solve_spd(const double *M, int n, const double *b, double *x)
{
    double *L = vec(n * n);
    memcpy(L, M, (size_t)(n * n) * sizeof(double));
    memcpy(x, b, (size_t)n * sizeof(double));
    const int bad = sd_cholesky_factor(L, n, 0.0);
    if (bad < 0) sd_cholesky_solve(L, n, x);
    free(L);
    return bad < 0;
}

/* ---------------------------------------------------------------- (a) rigid models through the engine */

static void test_rigid_through_engine(void)
{
    uint64_t rng = 11;
    double worst[8] = {0};
    for (int trial = 0; trial < 40; ++trial) {
        const int n = 1 + (int)(sd_random_uniform(&rng) * 12);
        sd_model *m = random_tree(&rng, n, trial % 3 == 0 ? RT_FREE_ROOT : 0);
        sd_data *d = sd_data_new(m), *e = sd_data_new(m);
        e->nodes = sd_node_data_new(m); /* sd_data_free frees it */
        CHECK(e->nodes != NULL);
        const int nv = m->nv, nq = m->nq;
        double *q = vec(nq), *u = vec(nv), *qdd = vec(nv), *fext = vec(6 * n);
        double *t1 = vec(nv), *t2 = vec(nv), *M1 = vec(nv * nv + 6 * nv), *M2 = vec(nv * nv + 6 * nv), *c2 = vec(nv), *x = vec(nv);
        random_state(m, &rng, q, u, qdd);
        random_vector(&rng, fext, 6 * n, 1.0);
        CHECK(sd_inverse_dynamics(m, d, q, u, qdd, fext, t1) == SD_OK);
        CHECK(sd_nodes_inverse_dynamics(m, e, q, u, qdd, fext, t2) == SD_OK);
        worst[0] = fmax(worst[0], test_rel_diff(t2, t1, nv));
        worst[1] = fmax(worst[1], test_rel_diff(e->f, d->f, 6 * n));
        CHECK(sd_mass_matrix(m, d, q, M1) == SD_OK);
        CHECK(sd_nodes_mass_matrix(m, e, q, M2) == SD_OK);
        worst[2] = fmax(worst[2], test_rel_diff(M2, M1, nv * nv));
        /* forward dynamics by Cholesky on the engine's M and C */
        CHECK(sd_forward_dynamics_cholesky(m, d, q, u, qdd, fext, t1) == SD_OK); /* qdd taken as tau */
        CHECK(sd_nodes_bias_forces(m, e, q, u, fext, c2) == SD_OK);
        for (int i = 0; i < nv; ++i) c2[i] = qdd[i] - c2[i];
        CHECK(solve_spd(M2, nv, c2, x));
        worst[3] = fmax(worst[3], test_rel_diff(x, t1, nv));
        /* kinematics, energies, com, momentum, Jacobian */
        CHECK(sd_kinematics(m, d, q, u, qdd) == SD_OK);
        CHECK(sd_nodes_kinematics(m, e, q, u, qdd) == SD_OK);
        worst[4] = fmax(worst[4], test_rel_diff(e->alpha, d->alpha, 6 * n));
        double a[8], b[8];
        CHECK(sd_kinetic_energy(m, d, a) == SD_OK && sd_nodes_kinetic_energy(m, e, b) == SD_OK);
        CHECK(sd_potential_energy(m, d, a + 1) == SD_OK && sd_nodes_potential_energy(m, e, b + 1) == SD_OK);
        CHECK(sd_center_of_mass_world(m, d, a + 2) == SD_OK && sd_nodes_center_of_mass_world(m, e, b + 2) == SD_OK);
        worst[5] = fmax(worst[5], test_rel_diff(b, a, 5));
        CHECK(sd_spatial_momentum_world(m, d, a) == SD_OK && sd_nodes_spatial_momentum_world(m, e, b) == SD_OK);
        worst[5] = fmax(worst[5], test_rel_diff(b, a, 6));
        const int body = (int)(sd_random_uniform(&rng) * n);
        double pt[3];
        random_vector(&rng, pt, 3, 0.5);
        CHECK(sd_jacobian_world(m, d, body, pt, M1) == SD_OK);
        CHECK(sd_nodes_jacobian_world(m, e, body, pt, M2) == SD_OK);
        worst[6] = fmax(worst[6], test_rel_diff(M2, M1, 6 * nv));
        free(q); free(u); free(qdd); free(fext); free(t1); free(t2); free(M1); free(M2); free(c2); free(x);
        sd_data_free(d);
        sd_data_free(e);
        sd_model_free(m);
    }
    printf("(a) rigid trees, engine vs fast path: ID %.2g, f %.2g, M %.2g, FD %.2g, alpha %.2g, energies/com/h %.2g, "
           "J %.2g\n",
           worst[0], worst[1], worst[2], worst[3], worst[4], worst[5], worst[6]);
    for (int i = 0; i < 7; ++i) CHECK(worst[i] < (i == 3 ? 1e-9 : 1e-12));
}

/* ---------------------------------------------------------------- (c) tau = M qdd + C */

static void test_id_equals_m_qdd_plus_c(void)
{
    uint64_t rng = 23;
    double worst = 0, worst_fd = 0;
    const int flag_sets[] = {0, RF_LINEARISED, RF_MIXED_MASS | RF_FREE_ROOT, RF_CHAIN | RF_ON_NODES,
                             RF_ALL_FLEXIBLE | RF_ON_NODES, RF_NO_RIGID_PART | RF_ALL_FLEXIBLE};
    for (int trial = 0; trial < 60; ++trial) {
        random_flex_spec spec = {1 + (int)(sd_random_uniform(&rng) * 7), 1 + trial % 10, flag_sets[trial % 6], 0};
        sd_model *m = random_flex_tree(&rng, &spec);
        sd_data *d = sd_data_new(m);
        const int nv = m->nv, nq = m->nq, n = m->n;
        double *q = vec(nq), *u = vec(nv), *qdd = vec(nv), *fext = vec(6 * n), *tau = vec(nv), *c = vec(nv),
               *M = vec(nv * nv), *r = vec(nv), *x = vec(nv);
        random_flex_state(m, &rng, 0.3, q, u, qdd);
        random_vector(&rng, fext, 6 * n, 1.0);
        CHECK(sd_inverse_dynamics(m, d, q, u, qdd, fext, tau) == SD_OK);
        CHECK(sd_bias_forces(m, d, q, u, fext, c) == SD_OK);
        CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
        for (int i = 0; i < nv; ++i) {
            double s = c[i];
            for (int j = 0; j < nv; ++j) s += M[i * nv + j] * qdd[j];
            r[i] = s;
        }
        worst = fmax(worst, test_rel_diff(r, tau, nv));
        CHECK(sd_forward_dynamics_cholesky(m, d, q, u, tau, fext, x) == SD_OK);
        worst_fd = fmax(worst_fd, test_rel_diff(x, qdd, nv));
        free(q); free(u); free(qdd); free(fext); free(tau); free(c); free(M); free(r); free(x);
        sd_data_free(d);
        sd_model_free(m);
    }
    printf("(c) flexible trees: |ID - (M qdd + C)| %.2g, Cholesky FD of ID's tau vs qdd %.2g\n", worst, worst_fd);
    CHECK(worst < 1e-11);
    CHECK(worst_fd < 1e-8);
}

int main(void)
{
    test_rigid_through_engine();
    test_id_equals_m_qdd_plus_c();
    return test_summary("test_node_engine");
}
