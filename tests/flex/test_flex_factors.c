/*
 * tests/flex/test_flex_factors.c — the factors of the articulated-body recursion on random trees
 * mixing rigid bodies of every hinge type and flexible bodies (children on nodes, full and linearised
 * modal masses, hinge armature on some), each against a dense computation from the engine's
 * composite-body M (sd_mass_matrix) by LAPACK:
 *   M^-1 (sd_mass_matrix_inverse)       = LAPACK's inverse of M (dpotrf, dpotri);
 *   M^-1 x (sd_mass_matrix_solve)       = LAPACK's solve (dposv);
 *   the innovations factors (001 Eq 51-56, 004 Lemma 11), formed column by column from
 *   sd_innovations_apply: A = [I + H phi K] and B = [I - H psi K] = A^-1, the transposed ones their
 *   transposes, and B M B* block diagonal, a block per hinge and per body's modes (the D of
 *   M = A D A*), with M = A D A*;
 *   log det M (sd_mass_matrix_determinant) = LAPACK's LU determinant (dgetrf);
 *   operational-space compliance         = J M^-1 J* of the task frames, J from sd_kinematics's
 *                                          velocities at unit speeds, M^-1 J* by dpotrs.
 * Tolerances 1e-10 relative, grown with cond M past 1e5 (test_util.h).
 */
#include <stdlib.h>
#include <string.h>

#include "flex/random_flex.h"
#include "internal.h"
#include "random_tree.h"
#include "test_util.h"

#include <lapacke.h> /* last: its complex.h defines I */

static double worst_minv, worst_solve, worst_factors, worst_block, worst_det, worst_os;

static double track(double *worst, double e)
{
    if (e > *worst) *worst = e;
    return e;
}

/* The block of speed v: 2k for body k's hinge speeds, 2k + 1 for its modal speeds. */
static void speed_blocks(const sd_model *m, int *block)
{
    for (int k = 0; k < m->n; ++k) {
        for (int i = 0; i < m->nv_k[k]; ++i) block[m->v_index[k] + i] = 2 * k;
        for (int i = 0; m->n_modes && i < m->n_modes[k]; ++i) block[m->mode_v_index[k] + i] = 2 * k + 1;
    }
}

/* The nv x nv matrix (row-major) of sd_innovations_apply(op), column by column. */
static void factor_matrix(const sd_model *m, sd_data *d, sd_factor_op op, double *F)
{
    const int nv = m->nv;
    double *e = calloc((size_t)nv, 8), *y = malloc((size_t)nv * 8);
    for (int c = 0; c < nv; ++c) {
        e[c] = 1.0;
        CHECK(sd_innovations_apply(m, d, op, e, y) == SD_OK);
        for (int r = 0; r < nv; ++r) F[r * nv + c] = y[r];
        e[c] = 0.0;
    }
    free(e);
    free(y);
}

/* C = A B (nv x nv), or A B^T when bt. */
static void matmul(const double *A, const double *B, int bt, int n, double *C)
{
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0.0;
            for (int k = 0; k < n; ++k) s += A[i * n + k] * (bt ? B[j * n + k] : B[k * n + j]);
            C[i * n + j] = s;
        }
}

static double max_abs(const double *A, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; ++i) s = fmax(s, fabs(A[i]));
    return s;
}

static void check_factors(const sd_model *m, sd_data *d, const double *q, const double *M, double cond)
{
    const int nv = m->nv, nn = nv * nv;
    const double tol = test_cond_tolerance(1e-10, cond);
    double *A = malloc((size_t)nn * 8), *B = malloc((size_t)nn * 8), *T = malloc((size_t)nn * 8),
           *W = malloc((size_t)nn * 8), *Id = calloc((size_t)nn, 8);
    int *block = malloc((size_t)nv * sizeof(int));
    speed_blocks(m, block);
    for (int i = 0; i < nv; ++i) Id[i * nv + i] = 1.0;
    CHECK(sd_articulated_inertias(m, d, q) == SD_OK);
    double kinetic;
    CHECK(sd_kinetic_energy(m, d, &kinetic) != SD_OK); /* placements only: no velocities of a state are current */
    factor_matrix(m, d, SD_FACTOR_NE, A);
    factor_matrix(m, d, SD_FACTOR_INV, B);
    /* B = A^-1 */
    matmul(A, B, 0, nv, T);
    track(&worst_factors, test_rel_diff(T, Id, nn));
    CHECK_ARRAY_CLOSE(T, Id, nn, tol, "[I + H phi K][I - H psi K] = I");
    /* the transposed factors */
    factor_matrix(m, d, SD_FACTOR_NE_TRANSPOSE, T);
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j) W[i * nv + j] = A[j * nv + i];
    track(&worst_factors, test_rel_diff(T, W, nn));
    CHECK_ARRAY_CLOSE(T, W, nn, 1e-12, "[I + H phi K]* = transpose");
    factor_matrix(m, d, SD_FACTOR_INV_TRANSPOSE, T);
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j) W[i * nv + j] = B[j * nv + i];
    track(&worst_factors, test_rel_diff(T, W, nn));
    CHECK_ARRAY_CLOSE(T, W, nn, 1e-12, "[I - H psi K]* = transpose");
    /* D = B M B*: block diagonal, and A D A* = M */
    matmul(B, M, 0, nv, T);
    matmul(T, B, 1, nv, W);
    const double scale = max_abs(M, nn);
    double off = 0.0;
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j)
            if (block[i] != block[j]) {
                off = fmax(off, fabs(W[i * nv + j]) / scale);
                W[i * nv + j] = 0.0; /* the block diagonal D */
            }
    track(&worst_block, off);
    CHECK(off <= tol);
    matmul(A, W, 0, nv, T);
    matmul(T, A, 1, nv, W);
    track(&worst_factors, test_rel_diff(W, M, nn));
    CHECK_ARRAY_CLOSE(W, M, nn, tol, "M = [I + H phi K] D [I + H phi K]*");
    free(A); free(B); free(T); free(W); free(Id); free(block);
}

/* Task frames on random bodies at random placements; Lambda_inv against J M^-1 J*, Lambda against
 * its inverse. Lf holds M's Cholesky factor (LAPACK's, lower). */
static void check_operational_space(const sd_model *m, sd_data *d, uint64_t *rng, const double *q,
                                    const double *Lf, double cond)
{
    const int nv = m->nv, nframes = 1 + (int)(sd_random_uniform(rng) * 3), N = 6 * nframes;
    sd_task_frame frames[3];
    double *J = malloc((size_t)N * nv * 8), *X = malloc((size_t)N * nv * 8), *ref = malloc((size_t)N * N * 8),
           *L = malloc((size_t)N * N * 8), *e = calloc((size_t)nv, 8);
    for (int i = 0; i < nframes; ++i) {
        double w[3], quat[4];
        frames[i].body = (int)(sd_random_uniform(rng) * m->n);
        random_vector(rng, w, 3, 2.0);
        sd_quat_exp(w, quat);
        sd_quat_to_m3(quat, frames[i].placement.R);
        random_vector(rng, frames[i].placement.p, 3, 0.4);
    }
    for (int c = 0; c < nv; ++c) { /* column c of J: the frames' velocities at u = e_c */
        e[c] = 1.0;
        CHECK(sd_kinematics(m, d, q, e, NULL) == SD_OK);
        for (int i = 0; i < nframes; ++i) {
            double V[6], Vf[6];
            CHECK(sd_body_velocity(m, d, frames[i].body, V) == SD_OK);
            sd_motion_to_child(&frames[i].placement, V, Vf);
            for (int r = 0; r < 6; ++r) J[(6 * i + r) * nv + c] = Vf[r];
        }
        e[c] = 0.0;
    }
    memcpy(X, J, (size_t)N * nv * 8); /* X = M^-1 J^T, stored as its transpose (rows of J solved) */
    CHECK(LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'U', nv, N, Lf, nv, X, nv) == 0);
    for (int a = 0; a < N; ++a)
        for (int b = 0; b < N; ++b) {
            double s = 0.0;
            for (int c = 0; c < nv; ++c) s += J[(size_t)a * nv + c] * X[(size_t)b * nv + c];
            ref[a * N + b] = s;
        }
    CHECK(sd_operational_space_compliance(m, d, q, nframes, frames, L) == SD_OK);
    track(&worst_os, test_rel_diff(L, ref, N * N));
    CHECK_ARRAY_CLOSE(L, ref, N * N, test_cond_tolerance(1e-10, cond), "compliance vs J M^-1 J*");
    /* the inertia is the compliance's Cholesky inverse (unchanged code): offered, or singular when the
     * frames outnumber the speeds that move them */
    const sd_status st = sd_operational_space_inertia(m, d, q, nframes, frames, L);
    CHECK(st == SD_OK || st == SD_E_SINGULAR);
    free(J); free(X); free(ref); free(L); free(e);
}

static void check_model(const sd_model *m, uint64_t *rng)
{
    const int nq = m->nq, nv = m->nv, nn = nv * nv;
    sd_data *d = sd_data_new(m);
    double *q = malloc((size_t)(nq + 1) * 8), *M = malloc((size_t)(nn + 1) * 8), *Minv = malloc((size_t)(nn + 1) * 8),
           *Lf = malloc((size_t)(nn + 1) * 8), *Mi = malloc((size_t)(nn + 1) * 8), *LU = malloc((size_t)(nn + 1) * 8),
           *x = malloc((size_t)(nv + 1) * 8), *y = malloc((size_t)(nv + 1) * 8), *r = malloc((size_t)(nv + 1) * 8);
    int *ipiv = malloc((size_t)(nv + 1) * sizeof(int));
    random_flex_state(m, rng, 0.1, q, NULL, x);
    CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
    memcpy(Lf, M, (size_t)nn * 8);
    CHECK(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'U', nv, Lf, nv) == 0); /* M symmetric: row- = column-major */
    /* cond M from the Cholesky factor's own estimate (test_util.h) */
    double *Lt = malloc((size_t)(nn + 1) * 8);
    memcpy(Lt, M, (size_t)nn * 8);
    CHECK(sd_cholesky_factor(Lt, nv, 0.0) < 0);
    const double cond = test_cond_estimate(M, Lt, nv), tol = test_cond_tolerance(1e-10, cond);
    free(Lt);

    /* M^-1 = LAPACK's inverse of M */
    memcpy(Mi, Lf, (size_t)nn * 8);
    CHECK(LAPACKE_dpotri(LAPACK_COL_MAJOR, 'U', nv, Mi, nv) == 0);
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < i; ++j) Mi[j * nv + i] = Mi[i * nv + j]; /* dpotri fills the upper (column-major) */
    CHECK(sd_mass_matrix_inverse(m, d, q, Minv) == SD_OK);
    track(&worst_minv, test_rel_diff(Minv, Mi, nn) / fmax(1.0, cond / 1e5));
    CHECK_ARRAY_CLOSE(Minv, Mi, nn, tol, "M^-1 vs LAPACK's inverse of M");

    /* M^-1 x = LAPACK's solve, also in place */
    CHECK(sd_articulated_inertias(m, d, q) == SD_OK);
    CHECK(sd_mass_matrix_solve(m, d, x, y) == SD_OK);
    memcpy(r, x, (size_t)nv * 8);
    CHECK(LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'U', nv, 1, Lf, nv, r, nv) == 0);
    track(&worst_solve, test_rel_diff(y, r, nv) / fmax(1.0, cond / 1e5));
    CHECK_ARRAY_CLOSE(y, r, nv, tol, "M^-1 x vs LAPACK's solve");
    CHECK(sd_mass_matrix_solve(m, d, x, x) == SD_OK);
    CHECK_ARRAY_CLOSE(x, y, nv, 0.0, "M^-1 x in place");

    /* log det M = LAPACK's LU determinant */
    memcpy(LU, M, (size_t)nn * 8);
    CHECK(LAPACKE_dgetrf(LAPACK_ROW_MAJOR, nv, nv, LU, nv, ipiv) == 0);
    double ld_ref = 0.0, ld = 0.0;
    for (int i = 0; i < nv; ++i) ld_ref += log(fabs(LU[i * nv + i]));
    CHECK(sd_mass_matrix_determinant(m, d, q, NULL, &ld) == SD_OK);
    track(&worst_det, fabs(ld - ld_ref) / fmax(1.0, fabs(ld_ref)));
    CHECK_CLOSE(ld, ld_ref, 1e-10 * fmax(1.0, fabs(ld_ref)));

    check_factors(m, d, q, M, cond);
    check_operational_space(m, d, rng, q, Lf, cond);

    free(q); free(M); free(Minv); free(Lf); free(Mi); free(LU); free(x); free(y); free(r); free(ipiv);
    sd_data_free(d);
}

int main(void)
{
    uint64_t rng = 0x2545f4914f6cdd1du;
    int nflex = 0;
    for (int trial = 0; trial < 120; ++trial) {
        const int shapes[6] = {0, RF_LINEARISED, RF_MIXED_MASS | RF_FREE_ROOT, RF_CHAIN | RF_ALL_FLEXIBLE | RF_ON_NODES,
                               RF_JOINT_DYNAMICS | RF_ON_NODES, RF_JOINT_DYNAMICS | RF_MIXED_MASS | RF_FREE_ROOT};
        const random_flex_spec spec = {.n_bodies = 1 + trial % 10, .max_modes = 6, .flags = shapes[trial % 6],
                                       .mode_scale = 0.2};
        sd_model *m = random_flex_tree(&rng, &spec);
        nflex += sd_model_nflexible(m) > 0;
        if (m->nv > 0) check_model(m, &rng); /* a single welded body has nothing to factor */
        sd_model_free(m);
    }
    for (int trial = 0; trial < 20; ++trial) { /* 11-16 modes: past the kernels' fixed instances (node_flexible.c) */
        const random_flex_spec spec = {.n_bodies = 1 + trial % 4, .max_modes = 16,
                                       .flags = trial % 2 ? RF_CHAIN | RF_ALL_FLEXIBLE | RF_ON_NODES : RF_ALL_FLEXIBLE,
                                       .mode_scale = 0.2};
        sd_model *m = random_flex_tree(&rng, &spec);
        if (m->nv > 0) check_model(m, &rng);
        sd_model_free(m);
    }
    printf("models with flexible bodies %d of 120; worst relative differences (M^-1 and solve scaled by cond/1e5 "
           "past 1e5): M^-1 %.2e, M^-1 x %.2e, factors %.2e, off-block of B M B* %.2e, log det %.2e, compliance "
           "%.2e\n",
           nflex, worst_minv, worst_solve, worst_factors, worst_block, worst_det, worst_os);
    return test_summary("test_flex_factors");
}
