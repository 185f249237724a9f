/*
 * tests/test_interbody_forces.c — 000 Eq 14-18 and 003 Prop 5 on random trees of every hinge type:
 *   f(k) from the ABA by-products (P+ alpha+ + z+) = f(k) of a Newton-Euler pass at ABA's qdd;
 *   the free-direction part H(k) f(k) = tau(k), and free + constrained parts rebuild f(k);
 *   mixed dynamics (prescribed hinges) = solving the partitioned M by hand, and its f(k) still
 *   equal the Newton-Euler ones; the world and joint frame views are the body view transformed
 *   (the world view compared as vectors with the body view turned by the body's world rotation from
 *   a separate sd_kinematics, whether or not the call that made the forces kept world placements).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "random_tree.h"
#include "test_util.h"

static void check_forces(const sd_model *m, uint64_t *rng)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
    sd_data *d = sd_data_new(m), *d2 = sd_data_new(m), *d3 = sd_data_new(m);
    double *q = malloc((size_t)(nq + 1) * 8), *u = malloc((size_t)(nv + 1) * 8), *tau = malloc((size_t)(nv + 1) * 8),
           *qdd = malloc((size_t)(nv + 1) * 8), *tau2 = malloc((size_t)(nv + 1) * 8),
           *fext = malloc(6 * (size_t)n * 8), *f_aba = malloc(6 * (size_t)n * 8), *f_ne = malloc(6 * (size_t)n * 8);
    random_state(m, rng, q, u, tau);
    random_vector(rng, fext, 6 * n, 1.0);
    sd_fd_options opt = {.interbody_forces = 1, .prescribed = NULL};
    CHECK(sd_forward_dynamics_ex(m, d, q, u, tau, fext, qdd, &opt) == SD_OK);
    CHECK(sd_inverse_dynamics(m, d2, q, u, qdd, fext, tau2) == SD_OK);
    CHECK(sd_kinematics(m, d3, q, NULL, NULL) == SD_OK); /* world rotations, independently */
    int parts_ok = 1;
    for (int k = 0; k < n; ++k) {
        CHECK(sd_interbody_force(m, d, k, SD_FRAME_BODY, f_aba + 6 * k) == SD_OK);
        CHECK(sd_interbody_force(m, d2, k, SD_FRAME_BODY, f_ne + 6 * k) == SD_OK);
        /* free part H(k) f(k) = tau(k); constrained part = W^T f on an orthonormal complement W */
        const int nk = sd_model_hinge_nv(m, k), vk = sd_model_v_index(m, k);
        double fr[6], cp[6], W[36];
        CHECK(sd_constraint_force_components(m, d, k, fr, cp, W) == SD_OK);
        for (int i = 0; i < nk; ++i)
            if (fabs(fr[i] - tau[vk + i]) > 1e-10 * (1 + fabs(tau[vk + i]))) parts_ok = 0;
        /* W orthonormal and orthogonal to H*(k); W^T f recomputed */
        for (int i = 0; i < 6 - nk; ++i) {
            for (int j = 0; j < 6 - nk; ++j)
                if (fabs(sd_s6_dot(W + 6 * i, W + 6 * j) - (i == j)) > 1e-12) parts_ok = 0;
            for (int j = 0; j < nk; ++j)
                if (fabs(sd_s6_dot(W + 6 * i, d->S + 6 * (vk + j))) > 1e-12) parts_ok = 0;
            if (fabs(sd_s6_dot(W + 6 * i, f_aba + 6 * k) - cp[i]) > 1e-12 * (1 + fabs(cp[i]))) parts_ok = 0;
        }
        /* frames: world view = the body view's moment and force turned into world axes (after
         * forward dynamics with world placements, and after inverse dynamics without them) */
        double fw[6], fw_ne[6], fj[6], fw_ref[6], fw_ne_ref[6];
        sd_transform Xw;
        CHECK(sd_body_placement_world(m, d3, k, &Xw) == SD_OK);
        for (int h = 0; h < 2; ++h) {
            sd_m3_mul_v(Xw.R, f_aba + 6 * k + 3 * h, fw_ref + 3 * h);
            sd_m3_mul_v(Xw.R, f_ne + 6 * k + 3 * h, fw_ne_ref + 3 * h);
        }
        CHECK(sd_interbody_force(m, d, k, SD_FRAME_WORLD, fw) == SD_OK);
        CHECK_ARRAY_CLOSE(fw, fw_ref, 6, 1e-12, "world-frame force vs R f(k), after forward dynamics");
        CHECK(sd_interbody_force(m, d2, k, SD_FRAME_WORLD, fw_ne) == SD_OK);
        CHECK_ARRAY_CLOSE(fw_ne, fw_ne_ref, 6, 1e-12, "world-frame force vs R f(k), after inverse dynamics");
        CHECK(sd_interbody_force(m, d, k, SD_FRAME_JOINT, fj) == SD_OK);
        double fjb[6];
        sd_transform XJ_inv, Xbody_in_joint;
        sd_transform_inverse(sd_model_placement(m, k), &XJ_inv);
        sd_transform_compose(&XJ_inv, &d->Xup[k], &Xbody_in_joint);
        sd_force_to_child(&Xbody_in_joint, fj, fjb);
        CHECK_ARRAY_CLOSE(fjb, f_aba + 6 * k, 6, 1e-12, "joint-frame force moved back to the body frame");
    }
    CHECK(parts_ok);
    CHECK_ARRAY_CLOSE(f_aba, f_ne, 6 * n, 1e-10, "f(k) = P+ alpha+ + z+ vs Newton-Euler f(k) at ABA qdd");
    free(q); free(u); free(tau); free(qdd); free(tau2); free(fext); free(f_aba); free(f_ne);
    sd_data_free(d);
    sd_data_free(d2);
    sd_data_free(d3);
}

/* Mixed dynamics against the partitioned mass matrix: with prescribed set p and free set f,
 * M_ff qdd_f = tau_f - C_f - M_fp qdd_p, and tau_p = M_pf qdd_f + M_pp qdd_p + C_p. */
static void check_mixed(const sd_model *m, uint64_t *rng)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
    sd_data *d = sd_data_new(m);
    double *q = malloc((size_t)(nq + 1) * 8), *u = malloc((size_t)(nv + 1) * 8), *tau = malloc((size_t)(nv + 1) * 8),
           *qdd = malloc((size_t)(nv + 1) * 8), *M = malloc((size_t)(nv * nv + 1) * 8), *C = malloc((size_t)(nv + 1) * 8),
           *Mff = malloc((size_t)(nv * nv + 1) * 8), *rhs = malloc((size_t)(nv + 1) * 8),
           *tau_ref = malloc((size_t)(nv + 1) * 8), *f_mixed = malloc(6 * (size_t)n * 8);
    int *free_idx = malloc((size_t)(nv + 1) * sizeof(int));
    unsigned char *pres = calloc((size_t)n, 1), *vpres = calloc((size_t)(nv + 1), 1);
    random_state(m, rng, q, u, tau);
    random_vector(rng, qdd, nv, 1.0);
    for (int k = 0; k < n; ++k) {
        pres[k] = sd_random_uniform(rng) < 0.4;
        for (int i = 0; i < sd_model_hinge_nv(m, k); ++i) vpres[sd_model_v_index(m, k) + i] = pres[k];
    }
    sd_mass_matrix(m, d, q, M);
    sd_bias_forces(m, d, q, u, NULL, C);
    int nf = 0;
    for (int i = 0; i < nv; ++i)
        if (!vpres[i]) free_idx[nf++] = i;
    for (int a = 0; a < nf; ++a) {
        double s = tau[free_idx[a]] - C[free_idx[a]];
        for (int j = 0; j < nv; ++j)
            if (vpres[j]) s -= M[free_idx[a] * nv + j] * qdd[j];
        rhs[a] = s;
        for (int b = 0; b < nf; ++b) Mff[a * nf + b] = M[free_idx[a] * nv + free_idx[b]];
    }
    CHECK(sd_cholesky_factor(Mff, nf, 0.0) < 0);
    sd_cholesky_solve(Mff, nf, rhs);
    double *qdd_ref = malloc((size_t)(nv + 1) * 8);
    memcpy(qdd_ref, qdd, (size_t)nv * 8);
    for (int a = 0; a < nf; ++a) qdd_ref[free_idx[a]] = rhs[a];
    for (int i = 0; i < nv; ++i) {
        double s = C[i];
        for (int j = 0; j < nv; ++j) s += M[i * nv + j] * qdd_ref[j];
        tau_ref[i] = s;
    }
    sd_fd_options opt = {.interbody_forces = 1, .prescribed = pres};
    CHECK(sd_forward_dynamics_ex(m, d, q, u, tau, NULL, qdd, &opt) == SD_OK);
    CHECK_ARRAY_CLOSE(qdd, qdd_ref, nv, 1e-10, "mixed dynamics qdd vs partitioned M solve");
    CHECK_ARRAY_CLOSE(tau, tau_ref, nv, 1e-10, "mixed dynamics tau (prescribed hinges) vs M qdd + C");
    for (int k = 0; k < n; ++k) sd_interbody_force(m, d, k, SD_FRAME_BODY, f_mixed + 6 * k);
    double *tau_ne = malloc((size_t)(nv + 1) * 8);
    CHECK(sd_inverse_dynamics(m, d, q, u, qdd, NULL, tau_ne) == SD_OK);
    CHECK_ARRAY_CLOSE(f_mixed, d->f, 6 * n, 1e-10, "mixed dynamics f(k) vs Newton-Euler f(k)");
    free(q); free(u); free(tau); free(qdd); free(M); free(C); free(Mff); free(rhs); free(tau_ref); free(f_mixed);
    free(free_idx); free(pres); free(vpres); free(qdd_ref); free(tau_ne);
    sd_data_free(d);
}

int main(void)
{
    uint64_t rng = 4242;
    const int sizes[] = {1, 2, 3, 6, 10, 20, 50, 100, 300};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (int trial = 0; trial < 4; ++trial) {
            sd_model *m = random_tree(&rng, sizes[s], (trial & 1 ? RT_MASSLESS : 0) | (trial & 2 ? RT_FREE_ROOT : 0));
            check_forces(m, &rng);
            sd_model_free(m);
            m = random_tree(&rng, sizes[s], trial & 2 ? RT_FREE_ROOT : 0);
            check_mixed(m, &rng);
            sd_model_free(m);
        }
    return test_summary("test_interbody_forces");
}
