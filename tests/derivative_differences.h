/*
 * tests/derivative_differences.h — the independent computation the derivatives' tests compare with
 * (test_derivatives.c, test_derivatives_flex.c): central differences of sd_inverse_dynamics and
 * sd_forward_dynamics, q moved on the tangent space by sd_configuration_integrate, and the residual
 * of the identities M d qdd/dx = -d tau/dx.
 */
#ifndef SOADYN_TEST_DERIVATIVE_DIFFERENCES_H
#define SOADYN_TEST_DERIVATIVE_DIFFERENCES_H

#include <soadyn/soadyn.h>

/* The dynamics whose derivatives are checked, as a function of (q, u, x): x is qdd (inverse
 * dynamics, out tau) or tau (forward dynamics, out qdd). order: of the central difference, 4 (also
 * for 0) or 6. */
typedef struct problem {
    const sd_model *m;
    sd_data *d;
    const double *f_ext;
    int forward;
    int order;
} problem;

/* The dynamics at (q, u, x) into out; exits the test on an error. */
void evaluate(const problem *p, const double *q, const double *u, const double *x, double *out);
/* The nv x nv reference derivative with respect to `which` (0: q on the tangent space, 1: u, 2: x)
 * by the central difference of p->order at step h:
 *   4th: (-F(2h) + 8 F(h) - 8 F(-h) + F(-2h)) / 12h,
 *   6th: (F(3h) - 9 F(2h) + 45 F(h) - 45 F(-h) + 9 F(-2h) - F(-3h)) / 60h. */
void difference(const problem *p, int which, const double *q, const double *u, const double *x, double h, double *J);
/* max |A B + C| / max(|C|, 1) for nv x nv A, B, C (C NULL: -1 on the diagonal when identity, else 0). */
double residual(const double *A, const double *B, const double *C, int nv, int identity);
/* Both batched derivative calls on n states (q, u, x, fe stacked as in batch.h) on b: 1 when they
 * succeed and each state's outputs are the single calls' bit for bit. */
int batch_matches_single(const sd_model *m, sd_batch *b, int n, const double *q, const double *u, const double *x,
                         const double *fe);

#endif
