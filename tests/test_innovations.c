/*
 * tests/test_innovations.c — 004 Sec 6 on random trees of every hinge type (1 to 300 bodies):
 *   the factors: [I + H phi K] D [I + H phi K]* = M (Eq 49) and [I - H psi K] = [I + H phi K]^-1
 *   (Eq 50), applied to unit vectors to form them densely;
 *   M^-1 from the O(N^2) recursion times M = I; M^-1 x (O(N)) = solve with Cholesky;
 *   det M = prod det D(k) against the determinant from a dense Cholesky of M, and log det for
 *   trees where det over- or underflows; the same with armature on every hinge (D(k) = H P H* + J).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "random_tree.h"
#include "test_util.h"

/* Dense matrix of a factor, column j = op(e_j). */
static void factor_dense(const sd_model *m, sd_data *d, sd_factor_op op, double *F)
{
    const int nv = sd_model_nv(m);
    double *e = calloc((size_t)nv, sizeof(double)), *y = malloc((size_t)nv * sizeof(double));
    for (int j = 0; j < nv; ++j) {
        e[j] = 1.0;
        sd_innovations_apply(m, d, op, e, y);
        for (int i = 0; i < nv; ++i) F[i * nv + j] = y[i];
        e[j] = 0.0;
    }
    free(e);
    free(y);
}

static void matmul(const double *A, const double *B, double *C, int n)
{
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0;
            for (int k = 0; k < n; ++k) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}

static void check_factors(const sd_model *m, sd_data *d, const double *q, const double *M)
{
    const int nv = sd_model_nv(m), n = sd_model_nbodies(m);
    const size_t nn = (size_t)nv * nv + 1;
    double *F = malloc(nn * 8), *Ft = malloc(nn * 8), *Fi = malloc(nn * 8), *T = malloc(nn * 8),
           *R = malloc(nn * 8), *I = calloc(nn, 8);
    for (int i = 0; i < nv; ++i) I[i * nv + i] = 1.0;
    CHECK(sd_articulated_inertias(m, d, q) == SD_OK);
    factor_dense(m, d, SD_FACTOR_NE, F);
    factor_dense(m, d, SD_FACTOR_NE_TRANSPOSE, Ft);
    /* the transpose op really is the transpose */
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j) T[i * nv + j] = F[j * nv + i];
    CHECK_ARRAY_CLOSE(Ft, T, nv * nv, 1e-12, "[I + H phi K]* vs transpose of [I + H phi K]");
    /* F D F* = M, with D block diagonal: D(k) = L L^T from its Cholesky factor */
    memset(T, 0, nn * 8);
    for (int k = 0; k < n; ++k) {
        const int vk = sd_model_v_index(m, k), nk = sd_model_hinge_nv(m, k);
        const double *L = d->Dchol + 36 * k;
        for (int i = 0; i < nk; ++i)
            for (int j = 0; j < nk; ++j) {
                double s = 0;
                for (int l = 0; l <= (i < j ? i : j); ++l) s += L[i * nk + l] * L[j * nk + l];
                T[(vk + i) * nv + vk + j] = s;
            }
    }
    matmul(F, T, R, nv);
    matmul(R, Ft, T, nv);
    CHECK_ARRAY_CLOSE(T, M, nv * nv, 1e-10, "[I + H phi K] D [I + H phi K]* vs M (004 Eq 49)");
    factor_dense(m, d, SD_FACTOR_INV, Fi);
    matmul(Fi, F, R, nv);
    CHECK_ARRAY_CLOSE(R, I, nv * nv, 1e-10, "[I - H psi K] [I + H phi K] vs I (004 Eq 50)");
    factor_dense(m, d, SD_FACTOR_INV_TRANSPOSE, T);
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j) R[i * nv + j] = Fi[j * nv + i];
    CHECK_ARRAY_CLOSE(T, R, nv * nv, 1e-12, "[I - H psi K]* vs transpose of [I - H psi K]");
    free(F); free(Ft); free(Fi); free(T); free(R); free(I);
}

static void check_model(const sd_model *m, uint64_t *rng, int dense_factors)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    const size_t nn = (size_t)nv * nv + 1;
    sd_data *d = sd_data_new(m);
    double *q = malloc((size_t)(nq + 1) * 8), *x = malloc((size_t)(nv + 1) * 8), *y = malloc((size_t)(nv + 1) * 8),
           *y2 = malloc((size_t)(nv + 1) * 8), *M = malloc(nn * 8), *Minv = malloc(nn * 8), *P = malloc(nn * 8),
           *I = calloc(nn, 8), *L = malloc(nn * 8);
    for (int i = 0; i < nv; ++i) I[i * nv + i] = 1.0;
    random_state(m, rng, q, x, NULL);
    CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
    memcpy(L, M, nn * 8);
    CHECK(sd_cholesky_factor(L, nv, 0.0) < 0);
    const double tol = test_cond_tolerance(1e-10, test_cond_estimate(M, L, nv));
    /* dense M^-1 by the O(N^2) recursion, times M */
    CHECK(sd_mass_matrix_inverse(m, d, q, Minv) == SD_OK);
    matmul(Minv, M, P, nv);
    CHECK_ARRAY_CLOSE(P, I, nv * nv, tol, "M^-1 (004 Eq 51 recursion) M vs I");
    double asym = 0;
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j) asym = fmax(asym, fabs(Minv[i * nv + j] - Minv[j * nv + i]));
    CHECK(asym == 0.0);
    /* M^-1 x in O(N) vs a Cholesky solve */
    CHECK(sd_articulated_inertias(m, d, q) == SD_OK);
    CHECK(sd_mass_matrix_solve(m, d, x, y) == SD_OK);
    memcpy(y2, x, (size_t)nv * 8);
    sd_cholesky_solve(L, nv, y2);
    /* compare residuals M y - x rather than y: the backward error does not grow with cond(M) */
    for (int i = 0; i < nv; ++i) {
        double s = 0;
        for (int j = 0; j < nv; ++j) s += M[i * nv + j] * y[j];
        P[i] = s;
    }
    CHECK_ARRAY_CLOSE(P, x, nv, tol, "M (M^-1 x) vs x, with M^-1 x from the innovations factors");
    CHECK_ARRAY_CLOSE(y, y2, nv, tol, "M^-1 x (O(N)) vs Cholesky solve");
    /* determinant */
    double det = 0, logdet = 0;
    CHECK(sd_mass_matrix_determinant(m, d, q, &det, &logdet) == SD_OK);
    const double logdet_dense = sd_cholesky_logdet(L, nv);
    CHECK_CLOSE(logdet, logdet_dense, 1e-10);
    /* det itself, where it is representable: its relative error is the absolute error of log det */
    if (fabs(logdet_dense) < 600) CHECK_CLOSE(det / exp(logdet_dense), 1.0, 1e-10 * fmax(1.0, fabs(logdet_dense)));
    if (dense_factors) check_factors(m, d, q, M);
    free(q); free(x); free(y); free(y2); free(M); free(Minv); free(P); free(I); free(L);
    sd_data_free(d);
}

/* A forest (four trees hanging from the inertial frame, one of them from a fixed root) of mixed hinges
 * with a fixed body inside and bodies of several children: M^-1's entries across trees are zero, and those between branches
 * come through their deepest common ancestor (innovations.c). Added in an order the builder sorts. */
static sd_model *forest(uint64_t *rng)
{
    static const struct { const char *name, *parent; sd_hinge_type hinge; } bodies[] = {
        {"a", NULL, SD_HINGE_REVOLUTE},   {"b", "a", SD_HINGE_SPHERICAL}, {"c", "a", SD_HINGE_PRISMATIC},
        {"d", NULL, SD_HINGE_UNIVERSAL},  {"e", "d", SD_HINGE_FIXED},     {"f", "e", SD_HINGE_REVOLUTE},
        {"g", "e", SD_HINGE_REVOLUTE},    {"h", "b", SD_HINGE_REVOLUTE},  {"i", "b", SD_HINGE_PLANAR},
        {"j", "c", SD_HINGE_REVOLUTE},    {"k", NULL, SD_HINGE_FREE},     {"l", "k", SD_HINGE_REVOLUTE},
        {"m", "a", SD_HINGE_REVOLUTE},    {"n", "g", SD_HINGE_SPHERICAL}, {"o", NULL, SD_HINGE_FIXED},
        {"p", "o", SD_HINGE_REVOLUTE},    {"r", "o", SD_HINGE_SPHERICAL}, {"s", "p", SD_HINGE_REVOLUTE},
    };
    sd_builder *b = sd_builder_new();
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; ++i) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        d.name = bodies[i].name;
        d.parent = bodies[i].parent;
        d.hinge = bodies[i].hinge;
        random_vector(rng, d.placement.p, 3, 0.5);
        random_vector(rng, d.axis, 3, 1.0);
        random_vector(rng, d.axis2, 3, 1.0);
        d.mass = 1.0 + sd_random_uniform(rng);
        random_vector(rng, d.com, 3, 0.2);
        d.inertia[0] = 0.3, d.inertia[4] = 0.4, d.inertia[8] = 0.5;
        sd_error err;
        if (sd_builder_add_body(b, &d, &err) != SD_OK) {
            fprintf(stderr, "forest: %s\n", err.message);
            abort();
        }
    }
    sd_model *m = NULL;
    sd_error err;
    if (sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "forest: %s\n", err.message);
        abort();
    }
    sd_builder_free(b);
    return m;
}

/* The model rebuilt with armature J on every hinge speed (0.05 .. 0.55), added to D(k) = H P H* + J:
 * then H G = I - J D^-1 is no longer I, and a multi-speed hinge's T = I - H* G* is no longer a
 * product of its speeds' rank-one steps (the all-columns M^-1 once applied them one after another
 * on the rows of unrelated bodies: M^-1 M - I up to 0.5). sd_mass_matrix adds J itself. */
static sd_model *with_armature(const sd_model *rigid, uint64_t *rng)
{
    sd_builder *b = sd_builder_new();
    for (int k = 0; k < sd_model_nbodies(rigid); ++k) {
        sd_body_desc d = *sd_model_body_desc(rigid, k);
        d.armature = 0.05 + 0.5 * sd_random_uniform(rng);
        sd_error err;
        if (sd_builder_add_body(b, &d, &err) != SD_OK) {
            fprintf(stderr, "with_armature: %s\n", err.message);
            abort();
        }
    }
    sd_model *m = NULL;
    sd_error err;
    if (sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "with_armature: %s\n", err.message);
        abort();
    }
    sd_builder_free(b);
    return m;
}

int main(void)
{
    uint64_t rng = 777;
    const int sizes[] = {1, 2, 4, 7, 12, 25, 50, 100, 300};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (int trial = 0; trial < 6; ++trial) {
            const int flags = (trial & 1 ? RT_MASSLESS : 0) | (trial & 2 ? RT_FREE_ROOT : 0) | (trial == 4 ? RT_CHAIN : 0);
            sd_model *m = random_tree(&rng, sizes[s], flags);
            const int before = test_failed_count;
            check_model(m, &rng, sizes[s] <= 25);
            if (test_failed_count != before) fprintf(stderr, "  (model of %d bodies, flags %d)\n", sizes[s], flags);
            sd_model_free(m);
        }
    for (int trial = 0; trial < 4; ++trial) {
        sd_model *m = forest(&rng);
        check_model(m, &rng, 1);
        sd_model *a = with_armature(m, &rng); /* a spherical body between unrelated rows and columns */
        check_model(a, &rng, 1);
        sd_model_free(a);
        sd_model_free(m);
    }
    /* armature on random trees of every hinge type, with branches through multi-speed hinges */
    const int asizes[] = {7, 25, 60};
    for (size_t s = 0; s < sizeof asizes / sizeof asizes[0]; ++s)
        for (int trial = 0; trial < 4; ++trial) {
            const int flags = (trial & 1 ? RT_MASSLESS : 0) | (trial & 2 ? RT_FREE_ROOT : 0);
            sd_model *r = random_tree(&rng, asizes[s], flags), *m = with_armature(r, &rng);
            const int before = test_failed_count;
            check_model(m, &rng, asizes[s] <= 25);
            if (test_failed_count != before) fprintf(stderr, "  (armature, model of %d bodies, flags %d)\n", asizes[s], flags);
            sd_model_free(m);
            sd_model_free(r);
        }
    /* a long chain whose det M overflows a double: the log form still agrees, and det M asked
     * for is an error, not inf */
    sd_model *m = random_tree(&rng, 600, RT_CHAIN | RT_ONLY_1DOF);
    sd_data *d = sd_data_new(m);
    const int nv = sd_model_nv(m);
    double *q = malloc((size_t)sd_model_nq(m) * 8), *M = malloc((size_t)nv * nv * 8), det, logdet;
    random_state(m, &rng, q, NULL, NULL);
    sd_mass_matrix(m, d, q, M);
    CHECK(sd_cholesky_factor(M, nv, 0.0) < 0);
    CHECK(sd_mass_matrix_determinant(m, d, q, NULL, &logdet) == SD_OK);
    CHECK_CLOSE(logdet, sd_cholesky_logdet(M, nv), 1e-10);
    CHECK(logdet > 710); /* past log(DBL_MAX) */
    logdet = 0;
    CHECK(sd_mass_matrix_determinant(m, d, q, &det, &logdet) == SD_E_NOT_FINITE);
    CHECK(strstr(sd_data_error(d), "log_det") != NULL);
    CHECK_CLOSE(logdet, sd_cholesky_logdet(M, nv), 1e-10);
    printf("600-body chain: log det M = %.6f (det M overflows)\n", logdet);
    free(q); free(M);
    sd_data_free(d);
    sd_model_free(m);
    return test_summary("test_innovations");
}
