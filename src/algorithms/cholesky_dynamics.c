/*
 * src/algorithms/cholesky_dynamics.c — forward dynamics by forming the mass matrix (composite body inertias)
 * and the bias forces (Newton-Euler at zero acceleration), then solving M qdd = T - C with a dense
 * Cholesky factorisation: the O(N^3) composite body method of 001 Sec 3. It is the independent
 * reference the O(N) articulated-body algorithm is checked and benchmarked against.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The nv x nv matrix this path needs, allocated by its first call and kept in the workspace: a
 * workspace that never runs it stays O(N). */
static sd_status dense_matrix(const sd_model *m, sd_data *d, const char *fn)
{
    if (d->dense) return SD_OK;
    const int nv = m->nv;
    if (nv > SD_DENSE_MAX_NV)
        return sd_data_fail(d, SD_E_NOT_SUPPORTED,
                            "%s: nv = %d is past the dense reference path's limit of %d; use the O(N) "
                            "sd_forward_dynamics",
                            fn, nv, SD_DENSE_MAX_NV);
    d->dense = malloc((size_t)(nv > 0 ? nv : 1) * (size_t)(nv > 0 ? nv : 1) * sizeof(double));
    if (!d->dense)
        return sd_data_fail(d, SD_E_MEMORY, "%s: no memory for the %d x %d mass matrix (%.3g MB)", fn, nv, nv,
                            (double)nv * nv * sizeof(double) / 1e6);
    return SD_OK;
}

sd_status sd_forward_dynamics_cholesky(const sd_model *m, sd_data *d, const double *q, const double *u,
                                       const double *tau, const double *f_ext, double *qdd)
{
    const char *fn = "sd_forward_dynamics_cholesky";
    if (!tau || !qdd) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL tau or qdd", fn);
    sd_status st = sd_check_call(m, d, fn, q, u, NULL, tau, f_ext);
    if (st != SD_OK || (st = dense_matrix(m, d, fn)) != SD_OK) return st;
    const int nv = m->nv;
    st = sd_bias_forces(m, d, q, u, f_ext, qdd); /* qdd holds C for now */
    if (st != SD_OK) return st;
    if ((st = sd_mass_matrix(m, d, q, d->dense)) != SD_OK) return st;
    for (int i = 0; i < nv; ++i) qdd[i] = tau[i] - qdd[i];
    double scale = 0.0;
    for (int i = 0; i < nv; ++i) scale = fmax(scale, fabs(d->dense[i * nv + i]));
    const int bad = sd_cholesky_factor(d->dense, nv, 1e-14 * scale);
    if (bad >= 0)
        return sd_data_fail(d, SD_E_SINGULAR, "mass matrix is singular at the speed of joint '%s'",
                            m->desc[m->v_body[bad]].joint_name);
    sd_cholesky_solve(d->dense, nv, qdd);
    return sd_check_output(d, fn, "qdd", qdd, (size_t)nv, SD_CAUSE_TINY_INERTIA);
}
