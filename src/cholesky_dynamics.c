/*
 * src/cholesky_dynamics.c — forward dynamics by forming the mass matrix (composite body inertias)
 * and the bias forces (Newton-Euler at zero acceleration), then solving M qdd = T - C with a dense
 * Cholesky factorisation: the O(N^3) composite body method of 001 Sec 3. It is the independent
 * reference the O(N) articulated-body algorithm is checked and benchmarked against.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

sd_status sd_forward_dynamics_cholesky(const sd_model *m, sd_data *d, const double *q, const double *u,
                                       const double *tau, const double *f_ext, double *qdd)
{
    if (!tau || !qdd) return sd_data_fail(d, SD_E_ARGUMENT, "sd_forward_dynamics_cholesky: NULL tau or qdd");
    sd_status st0 = sd_check_call(m, d, "sd_forward_dynamics_cholesky", q, u, NULL, tau, f_ext);
    if (st0 != SD_OK) return st0;
    const int nv = m->nv;
    if (nv > SD_DENSE_MAX_NV)
        return sd_data_fail(d, SD_E_NOT_SUPPORTED,
                            "sd_forward_dynamics_cholesky: nv = %d is past the dense reference path's limit of %d; "
                            "use the O(N) sd_forward_dynamics",
                            nv, SD_DENSE_MAX_NV);
    sd_status st = sd_bias_forces(m, d, q, u, f_ext, qdd); /* qdd holds C for now */
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
    return SD_OK;
}
