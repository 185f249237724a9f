/*
 * src/batch/batch_internal.h — the seam between the batch context (batch.c: threads, scalar path,
 * dispatch) and the SIMD kernels (lanes_dynamics.c, compiled once for AVX2 + FMA and once for
 * AVX-512, each called only when the processor has its instructions).
 */
#ifndef SOADYN_BATCH_INTERNAL_H
#define SOADYN_BATCH_INTERNAL_H

#include "internal.h"

/* The kernel's per-thread scratch: each array holds one vector of `lanes` doubles per scalar entry,
 * entry-major, 64-byte aligned; sizes in entries per body or per speed as in sd_data. */
typedef struct sd_lanes_ws {
    double *Xup;   /* 12 per body: R (9), p (3) */
    double *S;     /* 6 per speed: H* */
    double *V, *a, *b, *z, *zplus, *alpha; /* 6 per body */
    double *P, *Pplus, *Dinv;              /* 36 per body */
    double *U, *G; /* 6 per speed */
    double *nu;    /* 1 per speed */
    double *M6;    /* 36 per body, one double each (not per lane): M(k) as a 6x6, broadcast into P */
    double *sgn;   /* 1 per body: the sign of H* = sgn e_sel (sd_hinge_select), 1 otherwise */
    int *sel;      /* 1 per body: sd_hinge_select(), fixed by the model (in a block of n doubles) */
    int *plane;    /* 1 per body: sd_plane_axis(), likewise */
} sd_lanes_ws;

/* Doubles of one thread's scratch for model m and a kernel of `lanes` states per step, and its
 * layout over `block` (batch.c: one allocation, laid out again when the kernel changes). */
size_t sd_lanes_ws_doubles(const sd_model *m, int lanes);
void sd_lanes_ws_layout(const sd_model *m, int lanes, double *block, sd_lanes_ws *ws);

/* One SIMD kernel: the same recursions compiled for one vector width (lanes_dynamics.c).
 *
 * forward_dynamics: the articulated-body forward dynamics (004 Alg 6.1) on `lanes` states at once:
 * q, u, tau, f_ext, qdd, f point at the first state's block of stacked arrays; `count` (1 .. lanes)
 * states are real, the other lanes repeat the last one and their results are not written. u, f_ext,
 * f may be NULL. Returns 0 when every real state's results are written and finite, nonzero when the
 * group must be redone by the scalar path (a singular or overflowing D(k), a non-finite result),
 * which then reports the error of the single-state call. The model must pass batch.c's
 * model_has_simd().
 *
 * inverse_dynamics: the Newton-Euler inverse dynamics (004 Alg 3.1) the same way: tau (and f, the
 * inter-body forces, when not NULL) of `count` states; 0, or nonzero when the group must be redone
 * by the scalar path. */
typedef struct sd_lanes_kernel {
    int lanes;
    int (*forward_dynamics)(const sd_model *m, const sd_lanes_ws *ws, int count, const double *q, const double *u,
                            const double *tau, const double *f_ext, double *qdd, double *f);
    int (*inverse_dynamics)(const sd_model *m, const sd_lanes_ws *ws, int count, const double *q, const double *u,
                            const double *qdd, const double *f_ext, double *tau, double *f);
} sd_lanes_kernel;

/* 4 states per step, compiled with -mavx2 -mfma; 8 per step, compiled with AVX-512 F, DQ and VL. */
extern const sd_lanes_kernel sd_lanes_avx2, sd_lanes_avx512;

#endif /* SOADYN_BATCH_INTERNAL_H */
