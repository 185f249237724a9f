/*
 * tests/batch/test_batch.c — soadyn/batch.h against the single-state calls, state by state, on
 * random trees of every hinge type (tests/random_tree.h): forward dynamics with and without
 * inter-body forces and external forces, inverse dynamics, M and M^-1; 1, 2 and 3 threads; batch
 * sizes that are not multiples of the SIMD width; the scalar path, the widest SIMD kernel (8 lanes
 * with AVX-512) and the 4-lane AVX2 kernel, then the widest again (its scratch laid out anew). The
 * scalar path must give the single-state results bit for bit. The SIMD kernel rounds differently
 * (its own transport of articulated inertias; fused multiply-adds on any x86-64 build), so its forward dynamics
 * is held to what round-off can explain (fd_check below): a backward error of 1e-13 through the
 * single-state inverse dynamics, and a forward difference from the single-state qdd that scales
 * with cond(M); its inverse dynamics to 1e-13 of the forces it comes from. Errors: a non-finite
 * input, an overflowing result and a singular hinge in the middle of a batch are reported
 * with the first failing state's index and the single-state call's message; with 2 and 3 threads
 * taking chunks in turn, failures at the first, a middle and the last state and two at once, with
 * every state before the reported one equal to the single call. Models with flexible bodies: every
 * batch function equal to the single-state calls bit for bit (the node engine per state).
 */
#include <stdlib.h>
#include <string.h>

#include <soadyn/batch.h>

#include "flex/random_flex.h"
#include "random_tree.h"
#include "test_util.h"

#include <lapacke.h> /* last: its <complex.h> defines I, a name soadyn/spatial.h's inline code uses */

/* max |x - y| / max |y|; with y NULL, max |x|. */
static double max_rel_diff(const double *x, const double *y, long n)
{
    if (!y) {
        double mx = 0.0;
        for (long i = 0; i < n; ++i) mx = fmax(mx, fabs(x[i]));
        return mx;
    }
    double scale = 0.0, diff = 0.0;
    for (long i = 0; i < n; ++i) {
        scale = fmax(scale, fabs(y[i]));
        diff = fmax(diff, fabs(x[i] - y[i]));
        if (isnan(x[i]) != isnan(y[i])) return INFINITY;
    }
    return diff / fmax(scale, 1e-300);
}

static double worst_simd = 0.0; /* the SIMD inverse dynamics, and qdd's plain relative difference */
static long simd_states = 0, simd_identical = 0, states_by_lanes[9];

/* The settings every check runs: the scalar path, the widest kernel the processor has (8 lanes with
 * AVX-512), the 4-lane AVX2 kernel (the same as the widest without AVX-512), the widest again (from
 * 4 lanes back to 8: the scratch laid out again). */
enum { SIMD_MODES = 4 };
static const sd_batch_simd simd_modes[SIMD_MODES] = {SD_BATCH_SIMD_OFF, SD_BATCH_SIMD_AUTO, SD_BATCH_SIMD_AVX2,
                                                     SD_BATCH_SIMD_AUTO};

/* The lanes the widest kernel has on this processor (as batch.c decides): 8 with AVX-512 F, DQ and
 * VL, 4 with AVX2 and FMA, 0 without (or off x86-64). */
static int expected_lanes(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return 0;
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                   __builtin_cpu_supports("avx512vl")
               ? 8
               : 4;
#else
    return 0;
#endif
}

/* Sets mode s of simd_modes and checks the lane count it reports: 0 for the scalar path, 4 for AVX2
 * and the processor's widest for AUTO (or 0 when the model has no SIMD path). */
static int set_simd_mode(sd_batch *b, int s)
{
    CHECK(sd_batch_set_simd(b, simd_modes[s]) == SD_OK);
    const int lanes = sd_batch_simd_lanes(b), widest = expected_lanes();
    if (simd_modes[s] == SD_BATCH_SIMD_OFF) CHECK(lanes == 0);
    if (simd_modes[s] == SD_BATCH_SIMD_AUTO) CHECK(lanes == 0 || lanes == widest);
    if (simd_modes[s] == SD_BATCH_SIMD_AVX2) CHECK(lanes == 0 || lanes == (widest ? 4 : 0));
    return lanes;
}

/* ---------------------------------------------------------------- the SIMD forward dynamics' yardstick
 *
 * A fixed relative difference from the scalar qdd is the wrong yardstick for a kernel that rounds
 * differently: two backward-stable solutions of M qdd = tau - c differ by about cond(M) eps, and
 * random trees (massless bodies, light ones beside heavy ones) reach cond(M) ~ 1e6 here (more
 * elsewhere). What round-off can explain is this.
 *
 * Backward. The kernel's qdd^ is the exact forward dynamics of data perturbed by round-off: the
 * residual r = M qdd^ + c - tau is small. Every operation of the recursion is a sum of products of
 * spatial inertias, motions and forces, so each rounding error is eps times the size of what is
 * summed, and projected on the speeds those sizes are: |tau|; |M||qdd| (the inertial forces entry
 * by entry, their cancellations not counted); |c| (gravity, velocity products, external and
 * passive forces); and the inter-body forces f themselves, since H(k) keeps only part of f(k) but
 * all of f(k) is rounded (a hinge carrying a body's weight across its axis) and reaches the
 * parent's speeds through the transports' lever arms. Per state, largest entries (random_tree's
 * lengths are O(1), so moments and forces share one scale):
 *     S = max|tau| + max(|M||qdd|) + max|c| + max|f|,      ||r||_inf <= 1e-13 S.
 * r is formed by the single-state inverse dynamics at qdd^ (Newton-Euler: another algorithm, no code
 * shared with the kernel, so a wrong or missing term of the kernel's cannot cancel in it; its own
 * round-off is within the same S), and S from the single-state qdd and forces, never from the
 * kernel's output, so a wrong qdd^ cannot widen its own yardstick.
 *
 * Forward. qdd^ - qdd = M^-1 (r^ - r) with both residuals bounded as above, so
 *     ||qdd^ - qdd||_inf <= ||M^-1||_2 ||r^ - r||_2 <= 2 sqrt(nv) 1e-13 S / lambda_min(M)
 *                        = 2 sqrt(nv) 1e-13 cond_2(M) S / lambda_max(M),
 * cond_2(M) from M's eigenvalues (LAPACK dsyev on the single-state M). This is the comparison
 * with the single-state articulated-body result that a fixed 1e-13 made before, with the
 * condition number in its place. The inter-body forces follow qdd through the subtree's inertias
 * (at most about lambda_max(M) per unit of qdd) on top of their own round-off:
 *     ||f^ - f||_inf <= 2 sqrt(nv) 1e-13 (1 + cond_2(M)) S.
 * Both checks together: the backward one pins qdd^ to the equations of motion of the Newton-Euler
 * reference, the forward one to the articulated-body one. */
typedef struct fd_yardstick {
    double S, lmin, lmax;
} fd_yardstick;

#define FD_TOL 1e-13
static double worst_backward = 0.0, worst_forward = 0.0, worst_cond = 0.0;

/* S and M's extreme eigenvalues at one state, from the single-state calls; qdd is theirs. */
static fd_yardstick fd_yardstick_at(const sd_model *m, sd_data *d, const double *q, const double *u,
                                    const double *tau, const double *fext, const double *qdd)
{
    const int nv = sd_model_nv(m), nb = sd_model_nbodies(m);
    double *M = malloc((size_t)(nv * nv) * 8 + 8), *c = malloc((size_t)nv * 8 + 8), *t = malloc((size_t)nv * 8 + 8),
           *w = malloc((size_t)nv * 8 + 8);
    double s_tau = 0.0, s_mq = 0.0, s_c = 0.0, s_f = 0.0, fk[6];
    CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
    CHECK(sd_bias_forces(m, d, q, u, fext, c) == SD_OK);
    for (int i = 0; i < nv; ++i) {
        double r = 0.0;
        for (int j = 0; j < nv; ++j) r += fabs(M[i * nv + j]) * fabs(qdd[j]);
        s_tau = fmax(s_tau, fabs(tau[i]));
        s_mq = fmax(s_mq, r);
        s_c = fmax(s_c, fabs(c[i]));
    }
    CHECK(sd_inverse_dynamics(m, d, q, u, qdd, fext, t) == SD_OK);
    for (int k = 0; k < nb; ++k) {
        CHECK(sd_interbody_force(m, d, k, SD_FRAME_BODY, fk) == SD_OK);
        for (int r = 0; r < 6; ++r) s_f = fmax(s_f, fabs(fk[r]));
    }
    fd_yardstick y = {.S = s_tau + s_mq + s_c + s_f, .lmin = 1.0, .lmax = 1.0};
    if (nv > 0) {
        CHECK(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', nv, M, nv, w) == 0);
        y.lmin = w[0], y.lmax = w[nv - 1];
    }
    free(M), free(c), free(t), free(w);
    return y;
}

/* The SIMD qdd^ (and f^, when f is given) of one state against the bounds above; 1 when they hold. */
static int fd_check(const sd_model *m, sd_data *d, const double *q, const double *u, const double *tau,
                    const double *fext, const fd_yardstick *y, const double *qdd_ref, const double *qdd,
                    const double *f_ref, const double *f)
{
    const int nv = sd_model_nv(m), nf = 6 * sd_model_nbodies(m);
    double *t = malloc((size_t)nv * 8 + 8), r = 0.0, dq = 0.0, df = 0.0;
    CHECK(sd_inverse_dynamics(m, d, q, u, qdd, fext, t) == SD_OK);
    for (int i = 0; i < nv; ++i) {
        r = isnan(t[i]) ? INFINITY : fmax(r, fabs(t[i] - tau[i]));
        dq = isnan(qdd[i]) ? INFINITY : fmax(dq, fabs(qdd[i] - qdd_ref[i]));
    }
    for (int i = 0; f && i < nf; ++i) df = isnan(f[i]) ? INFINITY : fmax(df, fabs(f[i] - f_ref[i]));
    free(t);
    const double cond = y->lmin > 0.0 ? y->lmax / y->lmin : INFINITY, k = 2.0 * sqrt((double)nv) * FD_TOL;
    const double backward = r / y->S, forward = dq / (k * y->S / y->lmin), forward_f = df / (k * (1.0 + cond) * y->S);
    worst_backward = fmax(worst_backward, backward);
    worst_forward = fmax(worst_forward, fmax(forward, forward_f));
    worst_cond = fmax(worst_cond, cond);
    worst_simd = fmax(worst_simd, max_rel_diff(qdd, qdd_ref, nv));
    const int ok = backward <= FD_TOL && forward <= 1.0 && forward_f <= 1.0;
    if (!ok)
        fprintf(stderr,
                "SIMD forward dynamics: backward %.3g (of S %.3g), qdd %.3g and f %.3g of their bounds, cond(M) %.3g\n",
                backward, y->S, forward, forward_f, cond);
    return ok;
}

/* Every batched call on `count` random states of m, against the single-state calls. */
/* One state's single-state references: the forward dynamics with u and f_ext (qdd) and its inter-body
 * forces (f, body frame); the forward dynamics without u and f_ext (qdd0); the inverse dynamics at that
 * qdd with u and f_ext (tau_id) and its inter-body forces (f_id). tau is not written (no hinge is
 * prescribed). */
static void single_state_dynamics(const sd_model *m, sd_data *d, const double *q, const double *u, double *tau,
                                  const double *fext, double *qdd, double *f, double *qdd0, double *tau_id,
                                  double *f_id)
{
    const sd_fd_options opt = {.interbody_forces = 1, .prescribed = NULL};
    CHECK(sd_forward_dynamics_ex(m, d, q, u, tau, fext, qdd, &opt) == SD_OK);
    for (int k = 0; k < sd_model_nbodies(m); ++k) CHECK(sd_interbody_force(m, d, k, SD_FRAME_BODY, f + 6 * k) == SD_OK);
    CHECK(sd_forward_dynamics(m, d, q, NULL, tau, NULL, qdd0) == SD_OK);
    CHECK(sd_inverse_dynamics(m, d, q, u, qdd, fext, tau_id) == SD_OK);
    for (int k = 0; k < sd_model_nbodies(m); ++k)
        CHECK(sd_interbody_force(m, d, k, SD_FRAME_BODY, f_id + 6 * k) == SD_OK);
}

static void check_model(const sd_model *m, uint64_t *rng, long count)
{
    const long nq = sd_model_nq(m), nv = sd_model_nv(m), nf = 6L * sd_model_nbodies(m);
    const size_t c = (size_t)count;
    double *q = malloc(c * (size_t)nq * 8 + 8), *u = malloc(c * (size_t)nv * 8 + 8),
           *tau = malloc(c * (size_t)nv * 8 + 8), *fext = malloc(c * (size_t)nf * 8 + 8);
    double *qdd_ref = malloc(c * (size_t)nv * 8 + 8), *f_ref = malloc(c * (size_t)nf * 8 + 8),
           *tau_ref = malloc(c * (size_t)nv * 8 + 8), *fid_ref = malloc(c * (size_t)nf * 8 + 8),
           *M_ref = malloc(c * (size_t)(nv * nv) * 8 + 8), *Mi_ref = malloc(c * (size_t)(nv * nv) * 8 + 8),
           *qdd0_ref = malloc(c * (size_t)nv * 8 + 8);
    fd_yardstick *y1 = malloc(c * sizeof *y1), *y0 = malloc(c * sizeof *y0); /* with u and f_ext; without */
    double *out = malloc(c * (size_t)(nv * nv + nf + nv) * 8 + 8), *fout = malloc(c * (size_t)nf * 8 + 8);
    sd_data *d = sd_data_new(m);
    for (long i = 0; i < count; ++i) {
        random_state(m, rng, q + i * nq, u + i * nv, tau + i * nv);
        random_vector(rng, fext + i * nf, (int)nf, 1.0);
        single_state_dynamics(m, d, q + i * nq, u + i * nv, tau + i * nv, fext + i * nf, qdd_ref + i * nv,
                              f_ref + i * nf, qdd0_ref + i * nv, tau_ref + i * nv, fid_ref + i * nf);
        y1[i] = fd_yardstick_at(m, d, q + i * nq, u + i * nv, tau + i * nv, fext + i * nf, qdd_ref + i * nv);
        y0[i] = fd_yardstick_at(m, d, q + i * nq, NULL, tau + i * nv, NULL, qdd0_ref + i * nv);
        CHECK(sd_mass_matrix(m, d, q + i * nq, M_ref + i * nv * nv) == SD_OK);
        CHECK(sd_mass_matrix_inverse(m, d, q + i * nq, Mi_ref + i * nv * nv) == SD_OK);
    }
    for (int threads = 1; threads <= 3; ++threads) {
        sd_error err;
        sd_batch *b = sd_batch_new(m, threads, &err);
        CHECK(b != NULL);
        if (!b) continue;
        CHECK(sd_batch_threads(b) == threads);
        for (int simd = 0; simd < SIMD_MODES; ++simd) {
            const int lanes = set_simd_mode(b, simd);
            /* forward dynamics with u, f_ext and forces; without u, f_ext, forces */
            CHECK(sd_forward_dynamics_batch(b, count, q, u, tau, fext, out, fout) == SD_OK);
            CHECK(sd_batch_error_state(b) == -1 && sd_batch_error(b)[0] == '\0');
            for (long i = 0; i < count; ++i) {
                if (!lanes) {
                    CHECK(memcmp(out + i * nv, qdd_ref + i * nv, (size_t)nv * 8) == 0);
                    CHECK(memcmp(fout + i * nf, f_ref + i * nf, (size_t)nf * 8) == 0);
                    continue;
                }
                const int ok = fd_check(m, d, q + i * nq, u + i * nv, tau + i * nv, fext + i * nf, y1 + i,
                                        qdd_ref + i * nv, out + i * nv, f_ref + i * nf, fout + i * nf);
                if (!ok) fprintf(stderr, "  state %ld of %ld, %d threads, nv %ld\n", i, count, threads, nv);
                CHECK(ok);
                ++simd_states;
                ++states_by_lanes[lanes];
                simd_identical += memcmp(out + i * nv, qdd_ref + i * nv, (size_t)nv * 8) == 0 &&
                                  memcmp(fout + i * nf, f_ref + i * nf, (size_t)nf * 8) == 0;
            }
            CHECK(sd_forward_dynamics_batch(b, count, q, NULL, tau, NULL, out, NULL) == SD_OK);
            for (long i = 0; i < count; ++i) {
                if (lanes)
                    CHECK(fd_check(m, d, q + i * nq, NULL, tau + i * nv, NULL, y0 + i, qdd0_ref + i * nv, out + i * nv,
                                   NULL, NULL));
                else CHECK(memcmp(out + i * nv, qdd0_ref + i * nv, (size_t)nv * 8) == 0);
            }
            /* inverse dynamics (SIMD or not), then M, M^-1: the single-state calls, bit for bit */
            CHECK(sd_inverse_dynamics_batch(b, count, q, u, qdd_ref, fext, out, fout) == SD_OK);
            for (long i = 0; i < count; ++i) {
                if (!lanes) {
                    CHECK(memcmp(out + i * nv, tau_ref + i * nv, (size_t)nv * 8) == 0);
                    CHECK(memcmp(fout + i * nf, fid_ref + i * nf, (size_t)nf * 8) == 0);
                    continue;
                }
                /* No solve here, so no cond(M): the backward reasoning of fd_check with qdd given, where
                 * tau(k) = H(k) f(k) can cancel and its round-off is that of the forces it comes from */
                const double tmax = max_rel_diff(tau_ref + i * nv, NULL, nv);
                const double fmax_ = max_rel_diff(fid_ref + i * nf, NULL, nf);
                const double e1 = max_rel_diff(out + i * nv, tau_ref + i * nv, nv) * tmax / fmax(tmax, fmax_);
                const double e2 = max_rel_diff(fout + i * nf, fid_ref + i * nf, nf);
                if (!(e1 <= 1e-13 && e2 <= 1e-13)) fprintf(stderr, "ID state %ld: tau %.3g f %.3g\n", i, e1, e2);
                CHECK(e1 <= 1e-13 && e2 <= 1e-13);
                worst_simd = fmax(worst_simd, fmax(e1, e2));
            }
            CHECK(sd_mass_matrix_batch(b, count, q, out) == SD_OK);
            CHECK(memcmp(out, M_ref, c * (size_t)(nv * nv) * 8) == 0);
            CHECK(sd_mass_matrix_inverse_batch(b, count, q, out) == SD_OK);
            CHECK(memcmp(out, Mi_ref, c * (size_t)(nv * nv) * 8) == 0);
        }
        sd_batch_free(b);
    }
    sd_data_free(d);
    free(q), free(u), free(tau), free(fext), free(qdd_ref), free(f_ref), free(tau_ref), free(fid_ref), free(M_ref),
        free(Mi_ref), free(qdd0_ref), free(out), free(fout), free(y1), free(y0);
}

/* Models with flexible bodies (tests/flex/random_flex.h: rigid bodies of every hinge type and flexible
 * ones, children on nodes and on frames, full and linearised mass models, joint dynamics) run the
 * node engine per state on the thread pool, whatever the SIMD mode: every batch function gives the
 * single-state call's result bit for bit, on 1 to 4 threads and batches that split into several
 * chunks; a function the single-state call does not offer on the model fails the same way at state 0. */
static void check_flexible_models(uint64_t *rng)
{
    const int flag_sets[] = {RF_ON_NODES | RF_JOINT_DYNAMICS, RF_ALL_FLEXIBLE | RF_ON_NODES | RF_FREE_ROOT,
                             RF_CHAIN | RF_MIXED_MASS, RF_LINEARISED | RF_FREE_ROOT | RF_JOINT_DYNAMICS,
                             RF_NO_RIGID_PART | RF_ALL_FLEXIBLE | RF_ON_NODES};
    const long counts[] = {1, 6, 13, 37, 70};
    long states = 0, minv_offered = 0;
    for (int trial = 0; trial < 10; ++trial) {
        random_flex_spec spec = {1 + (int)(sd_random_uniform(rng) * 8), 1 + trial % 5, flag_sets[trial % 5], 0};
        sd_model *m = random_flex_tree(rng, &spec);
        const long count = counts[trial % 5], nq = sd_model_nq(m), nv = sd_model_nv(m), nf = 6L * sd_model_nbodies(m);
        const size_t c = (size_t)count, nvv = (size_t)(nv * nv);
        double *q = malloc(c * (size_t)nq * 8), *u = malloc(c * (size_t)nv * 8), *tau = malloc(c * (size_t)nv * 8),
               *fext = malloc(c * (size_t)nf * 8);
        double *qdd_ref = malloc(c * (size_t)nv * 8), *f_ref = malloc(c * (size_t)nf * 8),
               *qdd0_ref = malloc(c * (size_t)nv * 8), *tau_ref = malloc(c * (size_t)nv * 8),
               *fid_ref = malloc(c * (size_t)nf * 8), *M_ref = malloc(c * nvv * 8), *Mi_ref = malloc(c * nvv * 8);
        double *out = malloc(c * nvv * 8 + c * (size_t)nv * 8), *fout = malloc(c * (size_t)nf * 8);
        sd_data *d = sd_data_new(m);
        sd_status minv_status = SD_OK;
        char minv_message[700] = "";
        for (long i = 0; i < count; ++i) {
            random_flex_state(m, rng, 0.3, q + i * nq, u + i * nv, tau + i * nv);
            random_vector(rng, fext + i * nf, (int)nf, 1.0);
            single_state_dynamics(m, d, q + i * nq, u + i * nv, tau + i * nv, fext + i * nf, qdd_ref + i * nv,
                                  f_ref + i * nf, qdd0_ref + i * nv, tau_ref + i * nv, fid_ref + i * nf);
            CHECK(sd_mass_matrix(m, d, q + i * nq, M_ref + i * nvv) == SD_OK);
            const sd_status st = sd_mass_matrix_inverse(m, d, q + i * nq, Mi_ref + i * nvv);
            if (i == 0) {
                minv_status = st;
                snprintf(minv_message, sizeof minv_message, "state 0: %s", sd_data_error(d));
            }
            CHECK(st == minv_status);
        }
        minv_offered += minv_status == SD_OK;
        for (int threads = 1; threads <= 4; ++threads) {
            sd_batch *b = sd_batch_new(m, threads, NULL);
            CHECK(b != NULL);
            if (!b) continue;
            for (int simd = 0; simd < SIMD_MODES; ++simd) {
                CHECK(set_simd_mode(b, simd) == 0);
                if (expected_lanes()) CHECK(strstr(sd_batch_simd_note(b), "flexible") != NULL);
                CHECK(sd_forward_dynamics_batch(b, count, q, u, tau, fext, out, fout) == SD_OK);
                CHECK(memcmp(out, qdd_ref, c * (size_t)nv * 8) == 0 && memcmp(fout, f_ref, c * (size_t)nf * 8) == 0);
                CHECK(sd_forward_dynamics_batch(b, count, q, NULL, tau, NULL, out, NULL) == SD_OK);
                CHECK(memcmp(out, qdd0_ref, c * (size_t)nv * 8) == 0);
                CHECK(sd_inverse_dynamics_batch(b, count, q, u, qdd_ref, fext, out, fout) == SD_OK);
                CHECK(memcmp(out, tau_ref, c * (size_t)nv * 8) == 0 && memcmp(fout, fid_ref, c * (size_t)nf * 8) == 0);
                CHECK(sd_mass_matrix_batch(b, count, q, out) == SD_OK);
                CHECK(memcmp(out, M_ref, c * nvv * 8) == 0);
                const sd_status st = sd_mass_matrix_inverse_batch(b, count, q, out);
                CHECK(st == minv_status);
                if (st == SD_OK) CHECK(memcmp(out, Mi_ref, c * nvv * 8) == 0);
                else CHECK(sd_batch_error_state(b) == 0 && strcmp(sd_batch_error(b), minv_message) == 0);
                states += 5 * count;
            }
            sd_batch_free(b);
        }
        sd_data_free(d);
        sd_model_free(m);
        free(q), free(u), free(tau), free(fext), free(qdd_ref), free(f_ref), free(qdd0_ref), free(tau_ref),
            free(fid_ref), free(M_ref), free(Mi_ref), free(out), free(fout);
    }
    printf("flexible models (node engine per state): FD, FD with forces, ID, M%s bit for bit equal to the single "
           "calls, %ld states on 1-4 threads%s\n", minv_offered ? ", M^-1" : "", states,
           minv_offered ? "" : " (M^-1: refused as the single call is)");
}

/* A state in the middle of a batch of 11 that fails: the batch reports it (index, status, the
 * single-state message), whatever the threads and SIMD. */
static void check_errors(const sd_model *m, uint64_t *rng)
{
    const long count = 11, bad = 6, nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *q = malloc((size_t)(count * nq) * 8), *u = malloc((size_t)(count * nv) * 8),
           *tau = malloc((size_t)(count * nv) * 8), *qdd = malloc((size_t)(count * nv) * 8),
           *ref = malloc((size_t)nv * 8);
    sd_data *d = sd_data_new(m);
    for (long i = 0; i < count; ++i) random_state(m, rng, q + i * nq, u + i * nv, tau + i * nv);
    for (int threads = 1; threads <= 3; ++threads) {
        sd_batch *b = sd_batch_new(m, threads, NULL);
        for (int simd = 0; simd < SIMD_MODES; ++simd) {
            set_simd_mode(b, simd);
            for (int kind = 0; kind < 2; ++kind) { /* a NaN in q; speeds whose products overflow */
                const double saved = kind == 0 ? q[bad * nq + nq - 1] : u[bad * nv];
                if (kind == 0) q[bad * nq + nq - 1] = NAN;
                else u[bad * nv] = 1e300;
                const sd_status want = sd_forward_dynamics(m, d, q + bad * nq, u + bad * nv, tau + bad * nv, NULL, ref);
                char msg[700];
                snprintf(msg, sizeof msg, "state %ld: %s", bad, sd_data_error(d));
                const sd_status got = sd_forward_dynamics_batch(b, count, q, u, tau, NULL, qdd, NULL);
                CHECK(want != SD_OK && got == want);
                CHECK(sd_batch_error_state(b) == bad);
                CHECK(strcmp(sd_batch_error(b), msg) == 0);
                if (strcmp(sd_batch_error(b), msg) != 0) fprintf(stderr, "got '%s'\nwant '%s'\n", sd_batch_error(b), msg);
                for (long i = 0; i < bad; ++i) { /* the states before it are done */
                    CHECK(sd_forward_dynamics(m, d, q + i * nq, u + i * nv, tau + i * nv, NULL, ref) == SD_OK);
                    const fd_yardstick y = fd_yardstick_at(m, d, q + i * nq, u + i * nv, tau + i * nv, NULL, ref);
                    CHECK(fd_check(m, d, q + i * nq, u + i * nv, tau + i * nv, NULL, &y, ref, qdd + i * nv, NULL,
                                   NULL));
                }
                if (kind == 0) q[bad * nq + nq - 1] = saved;
                else u[bad * nv] = saved;
            }
            { /* inverse dynamics: a NaN in qdd of the bad state */
                for (long i = 0; i < count * nv; ++i) qdd[i] = tau[i];
                qdd[bad * nv + nv - 1] = NAN;
                const sd_status want = sd_inverse_dynamics(m, d, q + bad * nq, u + bad * nv, qdd + bad * nv, NULL, ref);
                char msg[700];
                snprintf(msg, sizeof msg, "state %ld: %s", bad, sd_data_error(d));
                CHECK(want == SD_E_ARGUMENT && sd_inverse_dynamics_batch(b, count, q, u, qdd, NULL, tau, NULL) == want);
                CHECK(sd_batch_error_state(b) == bad && strcmp(sd_batch_error(b), msg) == 0);
                for (long i = 0; i < count * nv; ++i) tau[i] = qdd[i];
                tau[bad * nv + nv - 1] = 0.5;
            }
            CHECK(sd_inverse_dynamics_batch(b, count, q, u, NULL, NULL, qdd, NULL) == SD_E_ARGUMENT);
            CHECK(sd_forward_dynamics_batch(b, count, q, u, tau, NULL, qdd, NULL) == SD_OK);
            CHECK(sd_batch_error_state(b) == -1);
        }
        sd_batch_free(b);
    }
    sd_data_free(d);
    free(q), free(u), free(tau), free(qdd), free(ref);
}

/* The chunks of the threads (handed out in turn by an atomic counter) against failures: in a batch
 * of 203 states (17 chunks of 12 with 2 threads), a NaN in q at the first state, a middle one and
 * the last, and two at once (the lower is reported whichever thread meets it first): the status,
 * index and message are the single call's, and every state before it equals the single call (bit
 * for bit on the scalar path, within fd_check's bounds on the SIMD one). Repeated, since the threads' interleaving
 * differs from run to run. */
static void check_failure_positions(const sd_model *m, uint64_t *rng)
{
    const long count = 203, nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *q = malloc((size_t)(count * nq) * 8), *u = malloc((size_t)(count * nv) * 8),
           *tau = malloc((size_t)(count * nv) * 8), *qdd = malloc((size_t)(count * nv) * 8),
           *ref = malloc((size_t)(count * nv) * 8), *one = malloc((size_t)nv * 8);
    fd_yardstick *ys = malloc((size_t)count * sizeof *ys);
    sd_data *d = sd_data_new(m);
    for (long i = 0; i < count; ++i) {
        random_state(m, rng, q + i * nq, u + i * nv, tau + i * nv);
        CHECK(sd_forward_dynamics(m, d, q + i * nq, u + i * nv, tau + i * nv, NULL, ref + i * nv) == SD_OK);
        ys[i] = fd_yardstick_at(m, d, q + i * nq, u + i * nv, tau + i * nv, NULL, ref + i * nv);
    }
    /* single failures; two in one chunk; two far apart; two on each side of a chunk boundary (chunks
     * of 12 states with 2 threads, 8 with 3 at 4 lanes; of 8 with either at 8), where the higher may be met
     * first */
    static const long bads[][2] = {{0, -1}, {101, -1}, {202, -1}, {7, 6}, {150, 40}, {190, 12},
                                   {12, 11}, {24, 23}, {8, 7}, {16, 15}};
    long cases = 0;
    for (int threads = 2; threads <= 3; ++threads) {
        sd_batch *b = sd_batch_new(m, threads, NULL);
        for (int simd = 0; simd < SIMD_MODES; ++simd) {
            const int lanes = set_simd_mode(b, simd);
            for (size_t c = 0; c < sizeof bads / sizeof bads[0]; ++c)
                for (int rep = 0; rep < 8; ++rep) {
                    const long b0 = bads[c][0], b1 = bads[c][1], first = b1 >= 0 && b1 < b0 ? b1 : b0;
                    const double s0 = q[b0 * nq], s1 = b1 >= 0 ? q[b1 * nq] : 0.0;
                    q[b0 * nq] = NAN;
                    if (b1 >= 0) q[b1 * nq] = NAN;
                    const sd_status want =
                        sd_forward_dynamics(m, d, q + first * nq, u + first * nv, tau + first * nv, NULL, one);
                    char msg[700];
                    snprintf(msg, sizeof msg, "state %ld: %s", first, sd_data_error(d));
                    for (long i = 0; i < count * nv; ++i) qdd[i] = -1.0;
                    const sd_status got = sd_forward_dynamics_batch(b, count, q, u, tau, NULL, qdd, NULL);
                    CHECK(want == SD_E_ARGUMENT && got == want);
                    CHECK(sd_batch_error_state(b) == first);
                    CHECK(strcmp(sd_batch_error(b), msg) == 0);
                    if (sd_batch_error_state(b) != first || strcmp(sd_batch_error(b), msg) != 0)
                        fprintf(stderr, "%d threads, SIMD %d: got %ld '%s', want '%s'\n", threads, lanes,
                                sd_batch_error_state(b), sd_batch_error(b), msg);
                    for (long i = 0; i < first; ++i) {
                        if (lanes)
                            CHECK(fd_check(m, d, q + i * nq, u + i * nv, tau + i * nv, NULL, ys + i, ref + i * nv,
                                           qdd + i * nv, NULL, NULL));
                        else CHECK(memcmp(qdd + i * nv, ref + i * nv, (size_t)nv * 8) == 0);
                    }
                    q[b0 * nq] = s0;
                    if (b1 >= 0) q[b1 * nq] = s1;
                    ++cases;
                }
            CHECK(sd_forward_dynamics_batch(b, count, q, u, tau, NULL, qdd, NULL) == SD_OK);
            CHECK(sd_batch_error_state(b) == -1 && sd_batch_error(b)[0] == '\0');
        }
        sd_batch_free(b);
    }
    printf("failures at states 0, 101, 202 of 203 and pairs across chunks on 2 and 3 threads: %ld batches checked\n",
           cases);
    sd_data_free(d);
    free(q), free(u), free(tau), free(qdd), free(ref), free(one), free(ys);
}

/* A chain with armature, damping and springs on its hinges (covered by the kernel); with `ball`,
 * a spherical hinge with a spring (not covered). */
static sd_model *chain_with(double armature, double damping, int ball)
{
    sd_builder *b = sd_builder_new();
    const char *names[] = {"a", "b", "c", "d"};
    for (int k = 0; k < 4; ++k) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        d.name = names[k];
        d.parent = k ? names[k - 1] : NULL;
        d.hinge = k == 2 ? SD_HINGE_PRISMATIC : k == 3 && ball ? SD_HINGE_SPHERICAL : SD_HINGE_REVOLUTE;
        d.stiffness = damping * (1 + k);
        d.spring_ref = k == 3 && ball ? 0.0 : 0.1 * k;
        d.axis[0] = 0.3, d.axis[1] = 1.0 - 0.2 * k, d.axis[2] = 0.1 * k;
        d.placement.p[0] = 0.4;
        d.mass = 1.0 + k;
        d.com[0] = 0.2;
        d.inertia[0] = d.inertia[4] = d.inertia[8] = 0.05;
        d.armature = armature;
        d.damping = damping;
        sd_builder_add_body(b, &d, NULL);
    }
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, NULL) == SD_OK);
    sd_builder_free(b);
    return m;
}

int main(void)
{
    uint64_t rng = 12;
    /* from the seventh: hinges along +-x, +-y, +-z, which the scalar path and the kernel take by their
     * axis-selecting kernels (sd_hinge_select); the last three also on unrotated placements, where
     * both take the plane kernels (sd_plane_axis), drawn after the others (whose draws stay as
     * they were before those kernels) */
    const int flags[] = {0,
                         RT_CHAIN,
                         RT_MASSLESS,
                         RT_FREE_ROOT,
                         RT_ONLY_1DOF,
                         RT_FREE_ROOT | RT_MASSLESS,
                         RT_AXIS_ALIGNED,
                         RT_AXIS_ALIGNED | RT_FREE_ROOT | RT_ONLY_1DOF,
                         RT_AXIS_ALIGNED | RT_CHAIN | RT_MASSLESS,
                         RT_AXIS_ALIGNED | RT_UNROTATED,
                         RT_AXIS_ALIGNED | RT_FREE_ROOT | RT_ONLY_1DOF | RT_UNROTATED,
                         RT_AXIS_ALIGNED | RT_CHAIN | RT_ONLY_1DOF | RT_UNROTATED};
    const size_t nflags = sizeof flags / sizeof flags[0], first_plane = nflags - 3;
    const long counts[] = {1, 3, 5, 7, 13};
    int simd_models = 0;
    for (int plane = 0; plane < 2; ++plane)
        for (int rep = 0; rep < 4; ++rep)
            for (size_t f = plane ? first_plane : 0; f < (plane ? nflags : first_plane); ++f) {
                const int n = 1 + (int)(sd_random_uniform(&rng) * 14);
                sd_model *m = random_tree(&rng, n, flags[f]);
                check_model(m, &rng, counts[(rep + f) % 5]);
                sd_batch *b = sd_batch_new(m, 1, NULL);
                simd_models += sd_batch_simd_lanes(b) > 0;
                sd_batch_free(b);
                sd_model_free(m);
            }
    if (expected_lanes()) CHECK(simd_models == (int)(4 * nflags)); /* random trees: rigid, no ball springs */
    check_flexible_models(&rng);
    sd_model *m = random_tree(&rng, 9, RT_FREE_ROOT);
    check_errors(m, &rng);
    check_failure_positions(m, &rng);
    sd_model_free(m);
    m = chain_with(0.3, 0.0, 0);
    check_model(m, &rng, 6);
    sd_model_free(m);
    m = chain_with(0.2, 0.5, 0);
    sd_batch *bd = sd_batch_new(m, 1, NULL);
    CHECK(sd_batch_simd_lanes(bd) > 0); /* damping and springs stay on the SIMD path */
    sd_batch_free(bd);
    check_model(m, &rng, 7);
    sd_model_free(m);
    m = chain_with(0.0, 0.5, 1);
    sd_batch *b = sd_batch_new(m, 2, NULL);
    CHECK(sd_batch_simd_lanes(b) == 0 && strstr(sd_batch_simd_note(b), "spring on a spherical") != NULL);
    sd_batch_free(b);
    check_model(m, &rng, 5);
    sd_model_free(m);
    /* argument errors */
    sd_error err;
    CHECK(sd_batch_new(NULL, 1, &err) == NULL && err.status == SD_E_ARGUMENT);
    m = chain_with(0.0, 0.0, 0);
    CHECK(sd_batch_new(m, 0, &err) == NULL && err.status == SD_E_ARGUMENT);
    b = sd_batch_new(m, 1, NULL);
    CHECK(sd_forward_dynamics_batch(b, -1, NULL, NULL, NULL, NULL, NULL, NULL) == SD_E_ARGUMENT);
    CHECK(sd_forward_dynamics_batch(b, 0, NULL, NULL, NULL, NULL, NULL, NULL) == SD_OK);
    CHECK(sd_batch_set_simd(b, (sd_batch_simd)3) == SD_E_ARGUMENT && strstr(sd_batch_error(b), "unknown mode"));
    printf("SIMD kernel: %d of %d random models (%s); %ld SIMD states (%ld at 8 lanes, %ld at 4), %ld bit-identical "
           "to the scalar call, largest relative difference %.3g (qdd, and the inverse dynamics')\n",
           simd_models, (int)(4 * nflags), sd_batch_simd_note(b), simd_states,
           states_by_lanes[8], states_by_lanes[4], simd_identical, worst_simd);
    printf("forward dynamics: largest backward error %.3g of S (bound %.0e), forward differences at most %.3g of "
           "their cond(M) bounds, largest cond(M) %.3g\n",
           worst_backward, FD_TOL, worst_forward, worst_cond);
    sd_batch_free(b);
    sd_model_free(m);
    return test_summary("test_batch");
}
