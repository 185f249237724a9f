/*
 * tests/test_derivatives_flex.c — the derivatives of soadyn/derivatives.h on models with flexible
 * bodies, against independent computations: random trees mixing rigid hinges of every type and
 * flexible bodies of 1 to 5 modes (tests/flex/random_flex.c: full and linearised mass models,
 * children on nodes, modal stiffness and damping, free roots), with armature, joint damping and
 * springs, and random f_ext; and the bundled flexible arm and spacecraft (argument: the models folder).
 *   - every column of d tau/dq, d tau/du, d qdd/dq, d qdd/du, d qdd/d tau equals a 6th-order central
 *     difference of sd_inverse_dynamics / sd_forward_dynamics (q moved on the tangent space by
 *     sd_configuration_integrate; a modal coordinate is its own tangent) to 1e-7 of the column's size;
 *   - M d qdd/dx = -d tau/dx (x = q, u) and M d qdd/d tau = 1, with M from the composite-body
 *     algorithm, to 1e-10;
 *   - the batched calls give the single calls' numbers bit for bit;
 * and the refusals that remain: a closed loop on a flexible model (SD_E_NOT_SUPPORTED, saying why),
 * NaN inputs (SD_E_ARGUMENT).
 */
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "derivative_differences.h"
#include "flex/random_flex.h"
#include "loops/random_flex_loops.h"
#include "random_tree.h"
#include "test_util.h"

static double worst_seen[5];
static const char *const what_names[5] = {"dtau/dq", "dtau/du", "dqdd/dq", "dqdd/du", "dqdd/dtau"};
static double worst_identity;

/* Each column of J within tol of Jref's, relative to the column's largest entry (floors: 1e-6 of the
 * matrix's largest, for columns that are zero, and 1e-8 absolute, for a matrix that is zero, as d tau/du
 * of one revolute body without damping, where the difference is round-off alone). */
static void check_columns(const sd_model *m, const double *J, const double *Jref, double tol, int what,
                          const char *name)
{
    const int nv = sd_model_nv(m);
    double big = 0.0, worst = 0.0;
    int worst_j = -1;
    for (int i = 0; i < nv * nv; ++i) big = fabs(Jref[i]) > big ? fabs(Jref[i]) : big;
    for (int j = 0; j < nv; ++j) {
        double scale = fmax(1e-6 * big, 1e-8), err = 0.0;
        for (int i = 0; i < nv; ++i) scale = fabs(Jref[i * nv + j]) > scale ? fabs(Jref[i * nv + j]) : scale;
        for (int i = 0; i < nv; ++i) err = fmax(err, fabs(J[i * nv + j] - Jref[i * nv + j]));
        if (scale > 0.0 && err / scale > worst) worst = err / scale, worst_j = j;
    }
    if (worst > worst_seen[what]) worst_seen[what] = worst;
    if (!(worst <= tol))
        fprintf(stderr, "%s, %s: worst column error %.3g > %.3g (column %d)\n", name, what_names[what], worst, tol,
                worst_j);
    CHECK(worst <= tol);
}

/* Every derivative at one state against the differences and the identities. */
static void check_state(const sd_model *m, const double *q, const double *u, const double *qdd, const double *tau,
                        const double *f_ext, double h, const char *name)
{
    const int nv = sd_model_nv(m);
    const size_t vv = (size_t)nv * (size_t)nv;
    sd_data *d = sd_data_new(m);
    double *A = malloc(sizeof(double) * vv), *B = malloc(sizeof(double) * vv), *C = malloc(sizeof(double) * vv);
    double *D = malloc(sizeof(double) * vv), *E = malloc(sizeof(double) * vv), *R = malloc(sizeof(double) * vv);
    double *M = malloc(sizeof(double) * vv), *out = malloc(sizeof(double) * (size_t)nv);
    double *ref = malloc(sizeof(double) * (size_t)nv);
    /* along q the step h balances truncation (h^4) and rounding (eps / h); u, qdd and tau enter at
     * most quadratically, where the difference is exact at any step */
    const double h_ux = 0.1;
    /* the 6th-order difference: with the 4th-order one, some columns of these models, small beside
     * tau itself, were at 1e-7 from rounding at the step whose truncation allows 1e-7 */
    problem id = {m, d, f_ext, 0, 6}, fd = {m, d, f_ext, 1, 6};

    CHECK(sd_inverse_dynamics_derivatives(m, d, q, u, qdd, f_ext, out, A, B) == SD_OK);
    evaluate(&id, q, u, qdd, ref);
    CHECK(memcmp(out, ref, sizeof(double) * (size_t)nv) == 0);
    difference(&id, 0, q, u, qdd, h, R);
    check_columns(m, A, R, 1e-7, 0, name);
    difference(&id, 1, q, u, qdd, h_ux, R);
    check_columns(m, B, R, 1e-7, 1, name);
    CHECK(sd_inverse_dynamics_derivatives(m, d, q, u, qdd, f_ext, NULL, NULL, C) == SD_OK);
    CHECK(memcmp(B, C, sizeof(double) * vv) == 0);

    CHECK(sd_forward_dynamics_derivatives(m, d, q, u, tau, f_ext, out, A, B, C) == SD_OK);
    difference(&fd, 0, q, u, tau, h, R);
    check_columns(m, A, R, 1e-7, 2, name);
    difference(&fd, 1, q, u, tau, h_ux, R);
    check_columns(m, B, R, 1e-7, 3, name);
    difference(&fd, 2, q, u, tau, h_ux, R);
    check_columns(m, C, R, 1e-7, 4, name);
    /* the identities at qdd = FD(tau), with the composite-body M */
    CHECK(sd_inverse_dynamics_derivatives(m, d, q, u, out, f_ext, NULL, D, E) == SD_OK);
    CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
    const double r_q = residual(M, A, D, nv, 0), r_u = residual(M, B, E, nv, 0), r_t = residual(M, C, NULL, nv, 1);
    if (r_q > 1e-10 || r_u > 1e-10 || r_t > 1e-10)
        fprintf(stderr, "%s: identities %.3g %.3g %.3g\n", name, r_q, r_u, r_t);
    CHECK(r_q <= 1e-10 && r_u <= 1e-10 && r_t <= 1e-10);
    worst_identity = fmax(worst_identity, fmax(r_q, fmax(r_u, r_t)));
    /* a subset of the outputs: the same numbers */
    CHECK(sd_forward_dynamics_derivatives(m, d, q, u, tau, f_ext, NULL, NULL, D, NULL) == SD_OK);
    CHECK(memcmp(B, D, sizeof(double) * vv) == 0);
    free(A), free(B), free(C), free(D), free(E), free(R), free(M), free(out), free(ref);
    sd_data_free(d);
}

/* A random state (modal coordinates within eta_scale), tau and f_ext; the joint-level terms are the
 * model's (RF_JOINT_DYNAMICS: armature, damping, springs on the hinges; the modes have K_m, D_m). */
static void random_model_state(const sd_model *m, uint64_t *rng, double eta_scale, double *q, double *u, double *qdd,
                               double *tau, double *f_ext)
{
    random_flex_state(m, rng, eta_scale, q, u, qdd);
    random_vector(rng, tau, sd_model_nv(m), 3.0);
    random_vector(rng, f_ext, 6 * sd_model_nbodies(m), 2.0);
}

static void check_random(uint64_t *rng)
{
    static const int flags[] = {
        RF_JOINT_DYNAMICS,
        RF_JOINT_DYNAMICS | RF_FREE_ROOT,
        RF_JOINT_DYNAMICS | RF_ALL_FLEXIBLE | RF_ON_NODES,
        RF_JOINT_DYNAMICS | RF_LINEARISED | RF_ON_NODES,
        RF_JOINT_DYNAMICS | RF_MIXED_MASS | RF_CHAIN | RF_POINT_MASSES,
        RF_ALL_FLEXIBLE | RF_ON_NODES | RF_NO_RIGID_PART | RF_FREE_ROOT,
    };
    static const int sizes[] = {1, 2, 4, 7};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (size_t f = 0; f < sizeof flags / sizeof flags[0]; ++f) {
            const random_flex_spec spec = {sizes[s], 5, flags[f], 0.2};
            sd_model *m = random_flex_tree(rng, &spec);
            while (sd_model_nflexible(m) == 0) { /* rigid trees are test_derivatives' */
                sd_model_free(m);
                m = random_flex_tree(rng, &spec);
            }
            const int nq = sd_model_nq(m), nv = sd_model_nv(m), nb = sd_model_nbodies(m);
            double *q = malloc(sizeof(double) * (size_t)nq), *u = malloc(sizeof(double) * (size_t)nv);
            double *qdd = malloc(sizeof(double) * (size_t)nv), *tau = malloc(sizeof(double) * (size_t)nv);
            double *f_ext = malloc(sizeof(double) * 6 * (size_t)nb);
            random_model_state(m, rng, 0.3, q, u, qdd, tau, f_ext);
            char name[96];
            snprintf(name, sizeof name, "random tree of %d bodies, flags %#x", sizes[s], flags[f]);
            check_state(m, q, u, qdd, tau, f_ext, 2e-2, name);
            free(q), free(u), free(qdd), free(tau), free(f_ext);
            sd_model_free(m);
        }
}

static void check_batch(uint64_t *rng)
{
    enum { N = 4 };
    const random_flex_spec spec = {5, 3, RF_JOINT_DYNAMICS | RF_ON_NODES | RF_FREE_ROOT, 0.2};
    sd_model *m = random_flex_tree(rng, &spec);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), nb = sd_model_nbodies(m);
    double *q = malloc(sizeof(double) * N * (size_t)nq), *u = malloc(sizeof(double) * N * (size_t)nv);
    double *x = malloc(sizeof(double) * N * (size_t)nv), *fe = malloc(sizeof(double) * N * 6 * (size_t)nb);
    double *out = malloc(sizeof(double) * N * (size_t)nv), *J = malloc(sizeof(double) * N * (size_t)nv * (size_t)nv);
    for (int i = 0; i < N; ++i) random_flex_state(m, rng, 0.3, q + i * nq, u + i * nv, x + i * nv);
    random_vector(rng, fe, N * 6 * nb, 1.0);
    sd_error err;
    sd_batch *b = sd_batch_new(m, 2, &err);
    CHECK(batch_matches_single(m, b, N, q, u, x, fe));
    q[2 * nq + nq - 1] = NAN; /* a NaN in state 2 (its last coordinate, a modal one or a hinge's) */
    CHECK(sd_batch_forward_dynamics_derivatives(b, N, q, u, x, fe, out, J, NULL, NULL) == SD_E_ARGUMENT);
    CHECK(sd_batch_error_state(b) == 2);
    sd_batch_free(b);
    free(q), free(u), free(x), free(fe), free(out), free(J);
    sd_model_free(m);
}

/* The bundled models (the flexible arm: a child on the beam's tip node; the spacecraft: a free base,
 * three flexible appendages, an instrument on a node), their modal stiffness as in the files. */
static void check_bundled(const char *models, uint64_t *rng)
{
    static const char *const files[] = {"flexible_arm.urdf", "spacecraft.urdf"};
    for (int f = 0; f < 2; ++f) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", models, files[f]);
        sd_model *m = NULL;
        sd_error err = {0};
        if (sd_model_load_file(path, NULL, &m, NULL, &err) != SD_OK) {
            fprintf(stderr, "%s\n", err.message);
            CHECK(0);
            continue;
        }
        const int nq = sd_model_nq(m), nv = sd_model_nv(m), nb = sd_model_nbodies(m);
        double *q = malloc(sizeof(double) * (size_t)nq), *u = malloc(sizeof(double) * (size_t)nv);
        double *qdd = malloc(sizeof(double) * (size_t)nv), *tau = malloc(sizeof(double) * (size_t)nv);
        double *f_ext = malloc(sizeof(double) * 6 * (size_t)nb);
        random_model_state(m, rng, 0.05, q, u, qdd, tau, f_ext);
        /* the arm's second mode (24.8 Hz) makes qdd steep in eta: a shorter step than the random trees' */
        check_state(m, q, u, qdd, tau, f_ext, 1e-3, files[f]);
        free(q), free(u), free(qdd), free(tau), free(f_ext);
        sd_model_free(m);
    }
}

static void check_refusals(uint64_t *rng)
{
    const random_flex_spec spec = {3, 2, RF_ALL_FLEXIBLE, 0.2};
    sd_model *m = random_flex_tree(rng, &spec);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    sd_data *d = sd_data_new(m);
    double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
    double *J = malloc(sizeof(double) * (size_t)nv * (size_t)nv);
    sd_configuration_neutral(m, q);
    u[nv - 1] = NAN; /* a modal speed */
    CHECK(sd_inverse_dynamics_derivatives(m, d, q, u, NULL, NULL, NULL, J, NULL) == SD_E_ARGUMENT);
    CHECK(strstr(sd_data_error(d), "u[") != NULL);
    u[nv - 1] = 0.0;
    q[nq - 1] = INFINITY;
    CHECK(sd_forward_dynamics_derivatives(m, d, q, u, u, NULL, NULL, J, NULL, NULL) == SD_E_ARGUMENT);
    free(q), free(u), free(J);
    sd_data_free(d);
    sd_model_free(m);

    /* a closed loop on a flexible model (tests/loops/random_flex_loops.c) */
    sd_model *loop = NULL;
    double *q0 = NULL;
    while (!loop) {
        free(q0);
        q0 = NULL;
        loop = random_closed_flex(rng, &(random_flex_spec){5, 2, 0, 0.2}, &q0, NULL);
    }
    free(q0);
    sd_data *dl = sd_data_new(loop);
    double *ql = calloc((size_t)sd_model_nq(loop), sizeof(double));
    double *ul = calloc((size_t)sd_model_nv(loop), sizeof(double));
    double *Jl = malloc(sizeof(double) * (size_t)sd_model_nv(loop) * (size_t)sd_model_nv(loop));
    sd_configuration_neutral(loop, ql);
    CHECK(sd_forward_dynamics_derivatives(loop, dl, ql, ul, ul, NULL, NULL, Jl, NULL, NULL) == SD_E_NOT_SUPPORTED);
    CHECK(strstr(sd_data_error(dl), "closure constraints") != NULL);
    free(ql), free(ul), free(Jl);
    sd_data_free(dl);
    sd_model_free(loop);
}

int main(int argc, char **argv)
{
    uint64_t rng = 0xf1e7de71ULL;
    check_random(&rng);
    check_batch(&rng);
    if (argc > 1) check_bundled(argv[1], &rng);
    check_refusals(&rng);
    for (int i = 0; i < 5; ++i) printf("worst relative column error, %-10s %.2g\n", what_names[i], worst_seen[i]);
    printf("worst identity residual %.2g\n", worst_identity);
    return test_summary("test_derivatives_flex");
}
