/*
 * tests/derivative_differences.c — central differences of the dynamics for the derivatives' tests
 * (derivative_differences.h).
 */
#include "derivative_differences.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void evaluate(const problem *p, const double *q, const double *u, const double *x, double *out)
{
    const sd_status st = p->forward ? sd_forward_dynamics(p->m, p->d, q, u, x, p->f_ext, out)
                                    : sd_inverse_dynamics(p->m, p->d, q, u, x, p->f_ext, out);
    if (st != SD_OK) {
        fprintf(stderr, "evaluate: %s\n", sd_data_error(p->d));
        exit(2);
    }
}

void difference(const problem *p, int which, const double *q, const double *u, const double *x, double h, double *J)
{
    const int nq = sd_model_nq(p->m), nv = sd_model_nv(p->m);
    double *qs = malloc(sizeof(double) * (size_t)nq), *us = malloc(sizeof(double) * (size_t)nv);
    double *xs = malloc(sizeof(double) * (size_t)nv), *e = calloc((size_t)nv, sizeof(double));
    double *F = malloc(sizeof(double) * (size_t)nv);
    static const double steps4[4] = {2, 1, -1, -2}, weights4[4] = {-1, 8, -8, 1};
    static const double steps6[6] = {3, 2, 1, -1, -2, -3}, weights6[6] = {1, -9, 45, -45, 9, -1};
    const int sixth = p->order == 6, n = sixth ? 6 : 4;
    const double *steps = sixth ? steps6 : steps4, *weights = sixth ? weights6 : weights4, den = sixth ? 60.0 : 12.0;
    for (int j = 0; j < nv; ++j) {
        for (int i = 0; i < nv; ++i) J[i * nv + j] = 0.0;
        for (int s = 0; s < n; ++s) {
            memcpy(qs, q, sizeof(double) * (size_t)nq);
            memcpy(us, u, sizeof(double) * (size_t)nv);
            memcpy(xs, x, sizeof(double) * (size_t)nv);
            const double t = steps[s] * h;
            if (which == 0) {
                e[j] = t;
                sd_configuration_integrate(p->m, q, e, 1.0, qs);
                e[j] = 0.0;
            } else if (which == 1) {
                us[j] += t;
            } else {
                xs[j] += t;
            }
            evaluate(p, qs, us, xs, F);
            for (int i = 0; i < nv; ++i) J[i * nv + j] += weights[s] * F[i] / (den * h);
        }
    }
    free(qs), free(us), free(xs), free(e), free(F);
}

double residual(const double *A, const double *B, const double *C, int nv, int identity)
{
    double worst = 0.0, scale = 1.0;
    for (int i = 0; i < nv * nv; ++i)
        if (C && fabs(C[i]) > scale) scale = fabs(C[i]);
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j) {
            double s = C ? C[i * nv + j] : (identity && i == j ? -1.0 : 0.0);
            for (int k = 0; k < nv; ++k) s += A[i * nv + k] * B[k * nv + j];
            if (fabs(s) > worst) worst = fabs(s);
        }
    return worst / scale;
}

int batch_matches_single(const sd_model *m, sd_batch *b, int n, const double *q, const double *u, const double *x,
                         const double *fe)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), nb = sd_model_nbodies(m);
    const size_t vv = (size_t)nv * (size_t)nv;
    double *out = malloc(sizeof(double) * (size_t)n * (size_t)nv), *one = malloc(sizeof(double) * (size_t)nv);
    double *J[3], *Jone[3];
    for (int k = 0; k < 3; ++k) J[k] = malloc(sizeof(double) * (size_t)n * vv), Jone[k] = malloc(sizeof(double) * vv);
    sd_data *d = sd_data_new(m);
    int same = 1;
    for (int fwd = 0; fwd < 2; ++fwd) {
        const sd_status st = fwd ? sd_batch_forward_dynamics_derivatives(b, n, q, u, x, fe, out, J[0], J[1], J[2])
                                 : sd_batch_inverse_dynamics_derivatives(b, n, q, u, x, fe, out, J[0], J[1]);
        same &= st == SD_OK;
        for (int i = 0; i < n && same; ++i) {
            const double *qi = q + i * nq, *ui = u + i * nv, *xi = x + i * nv, *fi = fe + i * 6 * nb;
            const sd_status si =
                fwd ? sd_forward_dynamics_derivatives(m, d, qi, ui, xi, fi, one, Jone[0], Jone[1], Jone[2])
                    : sd_inverse_dynamics_derivatives(m, d, qi, ui, xi, fi, one, Jone[0], Jone[1]);
            same &= si == SD_OK && memcmp(one, out + i * nv, sizeof(double) * (size_t)nv) == 0;
            for (int k = 0; k < 2 + fwd; ++k) same &= memcmp(Jone[k], J[k] + i * vv, sizeof(double) * vv) == 0;
        }
    }
    sd_data_free(d);
    for (int k = 0; k < 3; ++k) free(J[k]), free(Jone[k]);
    free(out), free(one);
    return same;
}
