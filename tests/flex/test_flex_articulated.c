/*
 * tests/flex/test_flex_articulated.c — the node engine's articulated-body algorithms
 * (src/algorithms/forward_dynamics.c over nodes: 001 Eq 62-63, 000 Sec 3) on random flexible trees (1-10 modes
 * per flexible body, and 1-16 on some, past the node kernels' fixed instances, rigid bodies of every hinge type, children on random nodes, full and linearised
 * modal mass matrices, a third of them with hinge armature, damping and springs), each against an
 * independent computation:
 *   flexible ABA = the composite-body solve M qdd = tau - C (sd_mass_matrix, sd_bias_forces, dense
 *     Cholesky) to 1e-10 (grown with cond M past 1e5, see test_util.h);
 *   ID(FD(tau)) = tau;
 *   inter-body forces from the ABA by-products (000 Eq 41) = those of inverse dynamics at ABA's qdd;
 *   prescribed hinges (mixed dynamics): ID at the completed qdd gives the completed tau;
 *   log det M (prod det D_f det D_R) = log det of the dense M;
 * and rigid models through the node instance (a workspace given a node part) = the rigid fast path to 1e-12 (with and without
 * hinge armature and damping).
 */
#include <stdlib.h>
#include <string.h>

#include "algorithms/node_engine.h"
#include "flex/random_flex.h"
#include "internal.h"
#include "random_tree.h"
#include "test_util.h"

typedef struct state {
    int nq, nv, n;
    double *q, *u, *tau, *qdd, *tau2, *qdd2, *fext, *f1, *f2, *M, *L, *c;
} state;

static state state_new(const sd_model *m)
{
    state s;
    s.nq = sd_model_nq(m);
    s.nv = sd_model_nv(m);
    s.n = sd_model_nbodies(m);
    const size_t nv = (size_t)s.nv + 1, n6 = 6 * (size_t)s.n;
    s.q = malloc(((size_t)s.nq + 1) * 8);
    s.u = malloc(nv * 8);
    s.tau = malloc(nv * 8);
    s.qdd = malloc(nv * 8);
    s.tau2 = malloc(nv * 8);
    s.qdd2 = malloc(nv * 8);
    s.c = malloc(nv * 8);
    s.fext = malloc(n6 * 8);
    s.f1 = malloc(n6 * 8);
    s.f2 = malloc(n6 * 8);
    s.M = malloc(nv * nv * 8);
    s.L = malloc(nv * nv * 8);
    return s;
}

static void state_free(state *s)
{
    free(s->q); free(s->u); free(s->tau); free(s->qdd); free(s->tau2); free(s->qdd2); free(s->c);
    free(s->fext); free(s->f1); free(s->f2); free(s->M); free(s->L);
}

static double worst_fd = 0, worst_id = 0, worst_f = 0, worst_mixed = 0, worst_det = 0, worst_rigid = 0;

static double track(double *worst, double e)
{
    if (e > *worst) *worst = e;
    return e;
}

/* The composite-body reference: qdd = M^-1 (tau - C); returns cond M (estimate), L holds M's factor. */
static double reference_solve(const sd_model *m, sd_data *d, state *s, double *qdd)
{
    const int nv = s->nv;
    CHECK(sd_mass_matrix(m, d, s->q, s->M) == SD_OK);
    CHECK(sd_bias_forces(m, d, s->q, s->u, s->fext, s->c) == SD_OK);
    memcpy(s->L, s->M, (size_t)nv * nv * 8);
    CHECK(sd_cholesky_factor(s->L, nv, 0.0) < 0);
    for (int i = 0; i < nv; ++i) qdd[i] = s->tau[i] - s->c[i];
    sd_cholesky_solve(s->L, nv, qdd);
    return test_cond_estimate(s->M, s->L, nv);
}

static void check_flexible(const sd_model *m, uint64_t *rng)
{
    state s = state_new(m);
    const int nv = s.nv, n = s.n;
    sd_data *d = sd_data_new(m), *d2 = sd_data_new(m);
    random_flex_state(m, rng, 0.1, s.q, s.u, s.tau);
    random_vector(rng, s.fext, 6 * n, 1.0);

    /* ABA = composite body solve */
    CHECK(sd_forward_dynamics(m, d, s.q, s.u, s.tau, s.fext, s.qdd) == SD_OK);
    const double cond = reference_solve(m, d2, &s, s.qdd2);
    const double tol = test_cond_tolerance(1e-10, cond);
    track(&worst_fd, test_rel_diff(s.qdd, s.qdd2, nv) / fmax(1.0, cond / 1e5));
    CHECK_ARRAY_CLOSE(s.qdd, s.qdd2, nv, tol, "flexible ABA vs M^-1 (tau - C)");

    /* log det M = sum log det D_f + log det D_R */
    double ld = 0.0;
    CHECK(sd_mass_matrix_determinant(m, d, s.q, NULL, &ld) == SD_OK);
    const double ld_ref = sd_cholesky_logdet(s.L, nv);
    track(&worst_det, fabs(ld - ld_ref) / fmax(1.0, fabs(ld_ref)));
    CHECK_CLOSE(ld, ld_ref, 1e-10);

    /* ID(FD(tau)) = tau, and the inter-body forces of both */
    sd_fd_options opt = {.interbody_forces = 1, .prescribed = NULL};
    CHECK(sd_forward_dynamics_ex(m, d, s.q, s.u, s.tau, s.fext, s.qdd, &opt) == SD_OK);
    for (int k = 0; k < n; ++k) CHECK(sd_interbody_force(m, d, k, SD_FRAME_BODY, s.f1 + 6 * k) == SD_OK);
    CHECK(sd_inverse_dynamics(m, d2, s.q, s.u, s.qdd, s.fext, s.tau2) == SD_OK);
    track(&worst_id, test_rel_diff(s.tau2, s.tau, nv));
    CHECK_ARRAY_CLOSE(s.tau2, s.tau, nv, test_cond_tolerance(1e-10, cond), "ID(FD(tau)) vs tau");
    for (int k = 0; k < n; ++k) CHECK(sd_interbody_force(m, d2, k, SD_FRAME_BODY, s.f2 + 6 * k) == SD_OK);
    track(&worst_f, test_rel_diff(s.f1, s.f2, 6 * n));
    CHECK_ARRAY_CLOSE(s.f1, s.f2, 6 * n, test_cond_tolerance(1e-10, cond), "f from ABA by-products vs f from ID");

    /* prescribed hinges: given qdd on them (modal coordinates are never prescribed), tau out */
    unsigned char *pres = calloc((size_t)n + 1, 1);
    for (int k = 0; k < n; ++k) pres[k] = sd_random_uniform(rng) < 0.4;
    random_vector(rng, s.qdd, nv, 1.0); /* the prescribed entries are read, the others written */
    memcpy(s.qdd2, s.qdd, (size_t)nv * 8);
    memcpy(s.tau2, s.tau, (size_t)nv * 8);
    opt.prescribed = pres;
    CHECK(sd_forward_dynamics_ex(m, d, s.q, s.u, s.tau2, s.fext, s.qdd2, &opt) == SD_OK);
    for (int k = 0; k < n; ++k)
        for (int i = 0; i < sd_model_hinge_nv(m, k); ++i) {
            const int v = sd_model_v_index(m, k) + i;
            if (pres[k]) CHECK(s.qdd2[v] == s.qdd[v]);   /* given accelerations kept */
            else CHECK(s.tau2[v] == s.tau[v]);           /* given forces kept */
        }
    for (int k = 0; k < n; ++k) CHECK(sd_interbody_force(m, d, k, SD_FRAME_BODY, s.f1 + 6 * k) == SD_OK);
    double *tau_id = s.c;
    CHECK(sd_inverse_dynamics(m, d2, s.q, s.u, s.qdd2, s.fext, tau_id) == SD_OK);
    track(&worst_mixed, test_rel_diff(tau_id, s.tau2, nv));
    CHECK_ARRAY_CLOSE(tau_id, s.tau2, nv, test_cond_tolerance(1e-10, cond), "mixed dynamics: ID(qdd) vs tau");
    for (int k = 0; k < n; ++k) CHECK(sd_interbody_force(m, d2, k, SD_FRAME_BODY, s.f2 + 6 * k) == SD_OK);
    CHECK_ARRAY_CLOSE(s.f1, s.f2, 6 * n, test_cond_tolerance(1e-10, cond), "mixed dynamics: f vs f from ID");
    free(pres);


    sd_data_free(d);
    sd_data_free(d2);
    state_free(&s);
}

/* A rigid model through the node engine (the workspace given its node part by hand) against the
 * rigid fast path: plain, with forces, with prescribed hinges, and det M. */
static void check_rigid(const sd_model *m, uint64_t *rng)
{
    state s = state_new(m);
    const int nv = s.nv, n = s.n;
    sd_data *d = sd_data_new(m), *dn = sd_data_new(m);
    dn->nodes = sd_node_data_new(m); /* freed by sd_data_free */
    CHECK(dn->nodes != NULL);
    random_state(m, rng, s.q, s.u, s.tau);
    random_vector(rng, s.fext, 6 * n, 1.0);
    unsigned char *pres = calloc((size_t)n + 1, 1);
    for (int pass = 0; pass < 2; ++pass) {
        if (pass) {
            for (int k = 0; k < n; ++k) pres[k] = sd_random_uniform(rng) < 0.4;
            random_vector(rng, s.qdd, nv, 1.0);
        }
        memcpy(s.qdd2, s.qdd, (size_t)nv * 8);
        memcpy(s.tau2, s.tau, (size_t)nv * 8);
        sd_fd_options opt = {.interbody_forces = 1, .prescribed = pass ? pres : NULL};
        CHECK(sd_forward_dynamics_ex(m, d, s.q, s.u, s.tau, s.fext, s.qdd, &opt) == SD_OK);
        CHECK(sd_forward_dynamics_ex(m, dn, s.q, s.u, s.tau2, s.fext, s.qdd2, &opt) == SD_OK);
        track(&worst_rigid, fmax(test_rel_diff(s.qdd2, s.qdd, nv), test_rel_diff(s.tau2, s.tau, nv)));
        CHECK_ARRAY_CLOSE(s.qdd2, s.qdd, nv, 1e-12, "rigid model: node engine qdd vs fast path");
        CHECK_ARRAY_CLOSE(s.tau2, s.tau, nv, 1e-12, "rigid model: node engine tau vs fast path");
        for (int k = 0; k < n; ++k) {
            CHECK(sd_interbody_force(m, d, k, SD_FRAME_BODY, s.f1 + 6 * k) == SD_OK);
            CHECK(sd_interbody_force(m, dn, k, SD_FRAME_BODY, s.f2 + 6 * k) == SD_OK);
        }
        track(&worst_rigid, test_rel_diff(s.f2, s.f1, 6 * n));
        CHECK_ARRAY_CLOSE(s.f2, s.f1, 6 * n, 1e-12, "rigid model: node engine forces vs fast path");
    }
    double ld = 0, ld2 = 0;
    CHECK(sd_mass_matrix_determinant(m, d, s.q, NULL, &ld) == SD_OK);
    CHECK(sd_mass_matrix_determinant(m, dn, s.q, NULL, &ld2) == SD_OK);
    track(&worst_rigid, fabs(ld2 - ld) / fmax(1.0, fabs(ld)));
    CHECK_CLOSE(ld2, ld, 1e-12);
    free(pres);
    sd_data_free(d);
    sd_data_free(dn);
    state_free(&s);
}

int main(void)
{
    uint64_t rng = 0x9e3779b97f4a7c15u;
    int nflex_models = 0;
    for (int trial = 0; trial < 200; ++trial) {
        const int shapes[6] = {0, RF_LINEARISED, RF_MIXED_MASS | RF_FREE_ROOT, RF_CHAIN | RF_ALL_FLEXIBLE | RF_ON_NODES,
                               RF_JOINT_DYNAMICS, RF_JOINT_DYNAMICS | RF_MIXED_MASS | RF_FREE_ROOT};
        const random_flex_spec spec = {.n_bodies = 1 + trial % 12, .max_modes = 10, .flags = shapes[trial % 6],
                                       .mode_scale = 0.2};
        sd_model *m = random_flex_tree(&rng, &spec);
        nflex_models += sd_model_nflexible(m) > 0;
        check_flexible(m, &rng);
        sd_model_free(m);
    }
    for (int trial = 0; trial < 30; ++trial) { /* 11-16 modes: past the kernels' fixed instances (node_flexible.c) */
        const random_flex_spec spec = {.n_bodies = 1 + trial % 4, .max_modes = 16,
                                       .flags = trial % 2 ? RF_CHAIN | RF_ALL_FLEXIBLE | RF_ON_NODES : RF_ALL_FLEXIBLE,
                                       .mode_scale = 0.2};
        sd_model *m = random_flex_tree(&rng, &spec);
        nflex_models += sd_model_nflexible(m) > 0;
        check_flexible(m, &rng);
        sd_model_free(m);
    }
    for (int trial = 0; trial < 40; ++trial) {
        sd_model *m = random_tree(&rng, 1 + trial % 12, trial % 3 == 0 ? RT_FREE_ROOT : 0);
        if (trial % 2) { /* joint-level dynamics: armature and damping on every speed (set in the model
                            the builder made, which only the tests may do) */
            for (int v = 0; v < m->nv; ++v) {
                m->armature[v] = 0.5 * sd_random_uniform(&rng);
                m->damping[v] = 0.5 * sd_random_uniform(&rng);
            }
            m->has_armature = m->has_passive = m->nv > 0;
        }
        check_rigid(m, &rng);
        sd_model_free(m);
    }
    printf("flexible models %d; worst relative differences: ABA vs M^-1(tau - C) %.2e (scaled by cond/1e5 past "
           "1e5), ID(FD) %.2e, forces %.2e, mixed %.2e, log det %.2e; rigid through the engine vs fast path %.2e\n",
           nflex_models, worst_fd, worst_id, worst_f, worst_mixed, worst_det, worst_rigid);
    return test_summary("test_flex_articulated");
}
