/*
 * soadyn/batch.h — batched evaluation: one algorithm over many states of one model, the way
 * simulation-based optimisation and learning call a dynamics library (issue 12).
 *
 * A batch context (sd_batch) holds everything a batched call needs, made once by sd_batch_new():
 * the caller's number of threads (POSIX threads kept between calls: after a call they spin up to
 * 50 us, so that the next call starts at once, then sleep; a pool of more threads than processors
 * online does not spin), one sd_data workspace per thread, and the per-thread scratch of the SIMD
 * kernel. A batched call allocates nothing.
 *
 * Arrays are stacked per state, state i's block at i times the single-state size: q n x nq, u, tau,
 * qdd n x nv, f_ext and inter-body forces n x 6 nbodies, M and M^-1 n x nv^2 (row-major). Optional
 * inputs (u, f_ext) are NULL for all states or given for all. Every state's result is the one the
 * single-state call (soadyn/dynamics.h) gives at that state: bit for bit on the scalar path; on the
 * SIMD path up to round-off, rounded differently (a shorter transport of articulated inertias, fused
 * multiply-adds), so not to a fixed fraction of the result. What is promised, and checked on random
 * trees in tests/batch, is a backward error: the single-state inverse dynamics at the SIMD qdd gives
 * back tau to 1e-13 of S = max|tau| + max(|M||qdd|) + max|c| + max|f| (c = C - J^T f_ext, f the
 * inter-body forces; about 2e-15 seen), so qdd and f differ from the single-state ones by at most
 * about 2 sqrt(nv) 1e-13 cond(M) S / lambda_max(M) and 2 sqrt(nv) 1e-13 (1 + cond(M)) S, cond(M)
 * M's 2-norm condition number: more than 1e-13 of the largest entry when M is ill-conditioned (6e-12
 * seen, cond(M) up to 1.4e6). The SIMD inverse dynamics, which solves nothing, is within 1e-13 of
 * the largest inter-body force.
 *
 * SIMD across states: the articulated-body recursion (004 Alg 6.1) runs on 8 states at once, one
 * state per lane of an AVX-512 register (AVX-512 F, DQ and VL), or on 4 per AVX2 register (AVX2
 * and FMA), the widest the processor has (chosen at run time; both kernels are in every x86-64
 * build, GCC/Clang vector extensions). sd_batch_set_simd(b, SD_BATCH_SIMD_AVX2) keeps to 4: the
 * AVX-512 kernel was measured 1.1-1.3x faster on AMD EPYC; on processors that lower their clock for
 * 512-bit arithmetic (some Intel Xeons) the 4-lane kernel may be the faster one. It covers every rigid hinge type (fixed,
 * revolute, prismatic, spherical, free, universal, planar), the armature, damping and springs (but
 * a spring on a spherical hinge), external forces and the inter-body forces. Models with flexible
 * bodies or a spherical hinge's spring take the scalar path (sd_batch_simd_lanes() says 0 and
 * sd_batch_simd_note() why), as does a group of states with a non-finite input, a singular hinge or
 * a non-finite result, so that its error is the one the single-state call reports. The inverse
 * dynamics (004 Alg 3.1) has the same SIMD kernels on the same models; M and M^-1 run the
 * single-state calls on every thread. The scalar path is the single-state calls, so a model with
 * flexible bodies gets every batch function the single-state API offers on it (the node engine,
 * state by state on the threads), with the same results bit for bit and the same refusals.
 *
 * The model's generated code (soadyn/codegen.h, --lanes) can take the forward dynamics' place:
 * sd_batch_use_lanes() below.
 *
 * Errors: a call returns the status of the first failing state (the lowest index); sd_batch_error()
 * gives its message prefixed with "state i: ", sd_batch_error_state() its index i. The outputs of
 * states other than those before i are then unspecified (other threads may have stopped early).
 */
#ifndef SOADYN_BATCH_H
#define SOADYN_BATCH_H

#include "dynamics.h"
#include "export.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sd_batch sd_batch;

/* Whether the forward and inverse dynamics may use a SIMD kernel, and which. */
typedef enum sd_batch_simd {
    SD_BATCH_SIMD_AUTO = 0, /* the widest the processor and the model allow: AVX-512, else AVX2 (the default) */
    SD_BATCH_SIMD_OFF,      /* always the scalar single-state calls */
    SD_BATCH_SIMD_AVX2      /* at most the 4-lane AVX2 kernel, even where AVX-512 is there */
} sd_batch_simd;

/* A batch context for `model` (which must outlive it) with `threads` threads (>= 1; the calling
 * thread is one of them, so threads - 1 are started and wait between calls). One call at a time
 * per context: threads of the caller's that batch at once need a context each. NULL on failure, with err (may be NULL) set:
 * SD_E_ARGUMENT for a NULL model or threads < 1 or > 256, SD_E_MEMORY, or a thread that could not
 * be started. */
SD_API sd_batch *sd_batch_new(const sd_model *model, int threads, sd_error *err);
/* Stops the threads and frees everything; NULL is fine. */
SD_API void sd_batch_free(sd_batch *batch);

/* The SIMD setting of later calls (default SD_BATCH_SIMD_AUTO). SD_E_ARGUMENT with "unknown mode" in
 * sd_batch_error() for a value not in sd_batch_simd. Where the processor or the model has no SIMD
 * kernel every mode is the scalar path (sd_batch_simd_note() says why). */
SD_API sd_status sd_batch_set_simd(sd_batch *batch, sd_batch_simd mode);

/* A generated lane function of the forward dynamics (soadyn/codegen.h: NAME_forward_dynamics_x4 or
 * _x8 of this model): L states per call, each array lane-minor (entry i of state l at [i * L + l]),
 * u, tau, f_ext may be NULL, one status per lane, a failing lane's outputs untouched. */
typedef int (*sd_batch_lanes_fd)(const double *q, const double *u, const double *tau, const double *f_ext, double *qdd,
                                 int *status);
/* From now on, sd_forward_dynamics_batch runs `lanes` (4 or 8) states per call of fd, the model's
 * generated lane function, on the thread pool: each thread gathers a group of states into lane-minor
 * arrays, calls fd, and scatters the results. A state whose lane fails (a non-finite input, a failed
 * pivot, a non-finite result) is redone by the single-state call, which reports the library's error
 * (or, where only the generated pivot test failed, gives the library's result). The results are
 * the generated code's: each state equal bit for bit to the generated single-state function, and to
 * the library's to its round-off (docs/codegen.md). A call that asks for the inter-body forces (f not
 * NULL) does not use it, nor does any call after a parameter setter (soadyn/params.h) changed the
 * model: the generated code has the parameters it was generated with folded in (generate it again
 * and call this again). fd NULL goes back to the library's kernels. The caller keeps the generated
 * code loaded while the context uses it (sd_model_compile does). Allocates each thread's gather
 * arrays here, none in a call. SD_E_ARGUMENT for lanes other than 4 or 8, SD_E_MEMORY. */
SD_API sd_status sd_batch_use_lanes(sd_batch *batch, int lanes, sd_batch_lanes_fd fd);
/* The lanes of the generated function sd_forward_dynamics_batch uses, 0 when none (or when the
 * model's parameters changed since sd_batch_use_lanes). */
SD_API int sd_batch_generated_lanes(const sd_batch *batch);
SD_API int sd_batch_threads(const sd_batch *batch);
/* States per SIMD step of the forward and inverse dynamics with the current setting: 8 (AVX-512) or
 * 4 (AVX2) when a SIMD kernel runs, 0 when the scalar path does (sd_batch_simd_note() says why). */
SD_API int sd_batch_simd_lanes(const sd_batch *batch);
SD_API const char *sd_batch_simd_note(const sd_batch *batch);

/* The message of the last failed call ("" if none), "state i: " and the single-state message. */
SD_API const char *sd_batch_error(const sd_batch *batch);
/* The index of the first failing state of the last failed call, -1 if none. */
SD_API long sd_batch_error_state(const sd_batch *batch);

/* qdd = M^-1 (tau - C + J^T f_ext) for n states (sd_forward_dynamics()). u, f_ext may be NULL.
 * f (may be NULL) receives every body's inter-body force, 6 per body per state, in the body frame
 * (sd_forward_dynamics_ex() with interbody_forces, then sd_interbody_force(.., SD_FRAME_BODY, ..)). */
SD_API sd_status sd_forward_dynamics_batch(sd_batch *batch, long n, const double *q, const double *u,
                                           const double *tau, const double *f_ext, double *qdd, double *f);
/* tau = M qdd + C - J^T f_ext for n states (sd_inverse_dynamics()). u, f_ext may be NULL; f (may be
 * NULL) receives the inter-body forces as above. */
SD_API sd_status sd_inverse_dynamics_batch(sd_batch *batch, long n, const double *q, const double *u,
                                           const double *qdd, const double *f_ext, double *tau, double *f);
/* M(q) (sd_mass_matrix()) and M^-1(q) (sd_mass_matrix_inverse()) for n states, nv^2 each. */
SD_API sd_status sd_mass_matrix_batch(sd_batch *batch, long n, const double *q, double *M);
SD_API sd_status sd_mass_matrix_inverse_batch(sd_batch *batch, long n, const double *q, double *Minv);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_BATCH_H */
