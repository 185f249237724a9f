/*
 * tests/test_dynamics_consistency.c — the core algorithms checked against each other and against
 * a dense operator computation, on random trees of every hinge type (1 to 300 bodies, massless
 * intermediate bodies, external forces):
 *   inverse dynamics tau = M qdd + C;  ABA qdd = Cholesky qdd;  ID(ABA qdd) = tau;
 *   M symmetric positive definite;  M (004 Alg 4.2) = sum_k J_k^T M(k) J_k formed densely.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "random_tree.h"
#include "test_util.h"
#include "workspace_read.h"

/* The body Jacobian of body k: J_k u = V(k), column by column from the hinges on k's path, each
 * H*(j) column carried to k's frame by the relative placement (an independent dense evaluation
 * of phi* H*). Uses sd_jacobian_world's world Jacobian at the body origin, rotated into body axes. */
static void body_jacobian(const sd_model *m, sd_data *d, int k, double *Jk)
{
    const int nv = sd_model_nv(m);
    const double origin[3] = {0, 0, 0};
    double *Jw = malloc(6 * (size_t)nv * sizeof(double));
    sd_jacobian_world(m, d, k, origin, Jw);
    const double *R = world_placement(m, d, k).R;
    for (int c = 0; c < nv; ++c)
        for (int blk = 0; blk < 2; ++blk) {
            double w[3] = {Jw[(3 * blk + 0) * nv + c], Jw[(3 * blk + 1) * nv + c], Jw[(3 * blk + 2) * nv + c]}, b[3];
            sd_m3t_mul_v(R, w, b);
            for (int r = 0; r < 3; ++r) Jk[(3 * blk + r) * nv + c] = b[r];
        }
    free(Jw);
}

static void dense_mass_matrix(const sd_model *m, sd_data *d, const double *q, double *M)
{
    const int nv = sd_model_nv(m), n = sd_model_nbodies(m);
    double *Jk = malloc(6 * (size_t)nv * sizeof(double));
    memset(M, 0, (size_t)nv * nv * sizeof(double));
    sd_kinematics(m, d, q, NULL, NULL);
    for (int k = 0; k < n; ++k) {
        double I[36];
        sd_inertia_from_com(sd_model_body_mass(m, k), sd_model_body_com(m, k), sd_model_body_inertia(m, k), I);
        body_jacobian(m, d, k, Jk);
        for (int a = 0; a < nv; ++a) {
            double IJ[6];
            for (int r = 0; r < 6; ++r) {
                IJ[r] = 0;
                for (int c = 0; c < 6; ++c) IJ[r] += I[6 * r + c] * Jk[c * nv + a];
            }
            for (int b = 0; b < nv; ++b) {
                double s = 0;
                for (int r = 0; r < 6; ++r) s += Jk[r * nv + b] * IJ[r];
                M[b * nv + a] += s;
            }
        }
    }
    free(Jk);
}

static void check_model(sd_model *m, uint64_t *rng, int dense_check)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
    sd_data *d = sd_data_new(m);
    double *q = malloc((size_t)(nq + 1) * sizeof(double)), *u = malloc((size_t)(nv + 1) * sizeof(double)),
           *tau = malloc((size_t)(nv + 1) * sizeof(double)), *qdd = malloc((size_t)(nv + 1) * sizeof(double)),
           *qdd2 = malloc((size_t)(nv + 1) * sizeof(double)), *tau2 = malloc((size_t)(nv + 1) * sizeof(double)),
           *c = malloc((size_t)(nv + 1) * sizeof(double)), *M = malloc((size_t)(nv * nv + 1) * sizeof(double)),
           *Md = malloc((size_t)(nv * nv + 1) * sizeof(double)), *fext = malloc(6 * (size_t)n * sizeof(double));
    random_state(m, rng, q, u, tau);
    random_vector(rng, fext, 6 * n, 2.0);
    random_vector(rng, qdd, nv, 1.0);
    /* inverse dynamics = M qdd + C */
    CHECK(sd_inverse_dynamics(m, d, q, u, qdd, fext, tau2) == SD_OK);
    CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
    CHECK(sd_bias_forces(m, d, q, u, fext, c) == SD_OK);
    for (int i = 0; i < nv; ++i) {
        double s = c[i];
        for (int j = 0; j < nv; ++j) s += M[i * nv + j] * qdd[j];
        qdd2[i] = s;
    }
    CHECK_ARRAY_CLOSE(tau2, qdd2, nv, 1e-10, "inverse dynamics vs M qdd + C");
    /* M symmetric, positive definite (Cholesky succeeds in the reference forward dynamics) */
    double asym = 0, scale = 1e-300;
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j) {
            asym = fmax(asym, fabs(M[i * nv + j] - M[j * nv + i]));
            scale = fmax(scale, fabs(M[i * nv + j]));
        }
    CHECK(asym <= 1e-13 * scale);
    /* ABA vs Cholesky forward dynamics, and inverse dynamics of ABA's qdd returns tau (the
     * backward error, which does not depend on conditioning). Two different exact algorithms
     * can only agree on qdd to about cond(M) eps, so past cond(M) ~ 1e5 (large random trees with
     * massless bodies) the qdd tolerance grows with an estimate of cond(M) (power
     * iterations, test_util.h). */
    memcpy(Md, M, (size_t)nv * nv * sizeof(double));
    CHECK(sd_cholesky_factor(Md, nv, 0.0) < 0);
    const double cond = test_cond_estimate(M, Md, nv);
    CHECK(sd_forward_dynamics(m, d, q, u, tau, fext, qdd) == SD_OK);
    CHECK(sd_forward_dynamics_cholesky(m, d, q, u, tau, fext, qdd2) == SD_OK);
    if (!CHECK_ARRAY_CLOSE(qdd, qdd2, nv, test_cond_tolerance(1e-10, cond), "ABA qdd vs Cholesky qdd"))
        fprintf(stderr, "  cond(M) ~ %.3g\n", cond);
    CHECK(sd_inverse_dynamics(m, d, q, u, qdd, fext, tau2) == SD_OK);
    CHECK_ARRAY_CLOSE(tau2, tau, nv, 1e-10, "ID(ABA qdd) vs tau");
    if (dense_check) {
        dense_mass_matrix(m, d, q, Md);
        CHECK_ARRAY_CLOSE(M, Md, nv * nv, 1e-11, "M (Alg 4.2) vs sum J^T M J");
        /* entries of unrelated bodies are exactly zero */
        int zero_ok = 1;
        for (int i = 0; i < nv; ++i)
            for (int j = 0; j < nv; ++j) {
                const int bi = sd_model_v_body(m, i), bj = sd_model_v_body(m, j);
                if (!sd_model_is_ancestor(m, bi, bj) && !sd_model_is_ancestor(m, bj, bi) && M[i * nv + j] != 0.0)
                    zero_ok = 0;
            }
        CHECK(zero_ok);
    }
    free(q); free(u); free(tau); free(qdd); free(qdd2); free(tau2); free(c); free(M); free(Md); free(fext);
    sd_data_free(d);
}

/* A NaN or infinity given to a dynamics call is an error naming the argument, never a NaN out. */
static void check_non_finite_inputs(uint64_t *rng)
{
    sd_model *m = random_tree(rng, 6, RT_FREE_ROOT);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    sd_data *d = sd_data_new(m);
    double *q = malloc((size_t)nq * 8), *u = malloc((size_t)nv * 8), *tau = malloc((size_t)nv * 8),
           *qdd = malloc((size_t)nv * 8), *M = malloc((size_t)nv * nv * 8);
    random_state(m, rng, q, u, tau);
    q[2] = NAN;
    CHECK(sd_forward_dynamics(m, d, q, u, tau, NULL, qdd) == SD_E_ARGUMENT);
    CHECK(strstr(sd_data_error(d), "q[2]") != NULL);
    CHECK(sd_mass_matrix(m, d, q, M) == SD_E_ARGUMENT);
    CHECK(sd_inverse_dynamics(m, d, q, u, tau, NULL, qdd) == SD_E_ARGUMENT);
    random_state(m, rng, q, u, tau);
    u[nv - 1] = INFINITY;
    CHECK(sd_inverse_dynamics(m, d, q, u, tau, NULL, qdd) == SD_E_ARGUMENT);
    CHECK(strstr(sd_data_error(d), "u[") != NULL);
    u[nv - 1] = 0.0;
    tau[0] = NAN;
    CHECK(sd_forward_dynamics_cholesky(m, d, q, u, tau, NULL, qdd) == SD_E_ARGUMENT);
    CHECK(strstr(sd_data_error(d), "tau[0]") != NULL);
    free(q); free(u); free(tau); free(qdd); free(M);
    sd_data_free(d);
    sd_model_free(m);
}

int main(void)
{
    uint64_t rng = 12345;
    const int sizes[] = {1, 2, 3, 5, 8, 13, 30, 60, 120, 300};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (int trial = 0; trial < 6; ++trial) {
            const int flags = (trial & 1 ? RT_MASSLESS : 0) | (trial & 2 ? RT_FREE_ROOT : 0) | (trial == 4 ? RT_CHAIN : 0);
            sd_model *m = random_tree(&rng, sizes[s], flags);
            const int before = test_failed_count;
            check_model(m, &rng, sizes[s] <= 60);
            if (test_failed_count != before) fprintf(stderr, "  (model of %d bodies, flags %d)\n", sizes[s], flags);
            sd_model_free(m);
        }
    check_non_finite_inputs(&rng);
    return test_summary("test_dynamics_consistency");
}
