/*
 * src/batch/batch_internal.h — the seam between the batch context (batch.c: threads, scalar path,
 * dispatch) and the SIMD kernel (lanes_dynamics.c, compiled for AVX2 + FMA and called only
 * when the processor has them).
 */
#ifndef SOADYN_BATCH_INTERNAL_H
#define SOADYN_BATCH_INTERNAL_H

#include "internal.h"

/* States per vector register: 4 doubles in an AVX2 register. An AVX-512 build sets
 * SOADYN_BATCH_LANES=8 (and compiles the kernel with -mavx512f): nothing else changes. */
#ifndef SOADYN_BATCH_LANES
#define SOADYN_BATCH_LANES 4
#endif
#define SD_BATCH_LANES SOADYN_BATCH_LANES

/* The kernel's per-thread scratch: each array holds SD_BATCH_LANES doubles per scalar entry (one
 * vector), entry-major, 64-byte aligned; sizes in entries per body or per speed as in sd_data. */
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
} sd_lanes_ws;

/* Bytes of one thread's scratch for model m (batch.c lays it out; one allocation). */
size_t sd_lanes_ws_doubles(const sd_model *m);
void sd_lanes_ws_layout(const sd_model *m, double *block, sd_lanes_ws *ws);

/* The articulated-body forward dynamics (004 Alg 6.1) on SD_BATCH_LANES states at once: q, u, tau,
 * f_ext, qdd, f point at the first state's block of stacked arrays; `count` (1 .. SD_BATCH_LANES)
 * states are real, the other lanes repeat the last one and their results are not written. u, f_ext,
 * f may be NULL. Returns 0 when every real state's results are written and finite, nonzero when the
 * group must be redone by the scalar path (a singular or overflowing D(k), a non-finite result),
 * which then reports the error of the single-state call. The model must pass sd_lanes_model_ok(). */
int sd_lanes_forward_dynamics(const sd_model *m, const sd_lanes_ws *ws, int count, const double *q,
                              const double *u, const double *tau, const double *f_ext, double *qdd, double *f);

/* The Newton-Euler inverse dynamics (004 Alg 3.1) the same way: tau (and f, the inter-body forces,
 * when not NULL) of `count` states; 0, or nonzero when the group must be redone by the scalar path. */
int sd_lanes_inverse_dynamics(const sd_model *m, const sd_lanes_ws *ws, int count, const double *q,
                              const double *u, const double *qdd, const double *f_ext, double *tau, double *f);

#endif /* SOADYN_BATCH_INTERNAL_H */
