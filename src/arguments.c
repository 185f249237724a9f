/*
 * src/arguments.c — the checks every dynamics call makes at the API boundary: pointers present,
 * the workspace made for this model, and every number given finite, so that a NaN in is an error
 * naming the argument and index, never a NaN out.
 */
#include <math.h>

#include "internal.h"

/* Index of the first entry that is not finite, or -1. One multiply-add per entry in the common
 * case: x * 0 is 0 for every finite x and NaN otherwise. */
static int first_non_finite(const double *x, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; ++i) s += x[i] * 0.0;
    if (s == 0.0) return -1;
    for (int i = 0; i < n; ++i)
        if (!isfinite(x[i])) return i;
    return -1;
}

static sd_status check_finite(sd_data *d, const char *fn, const char *name, const double *x, int n)
{
    const int bad = x ? first_non_finite(x, n) : -1;
    if (bad >= 0) return sd_data_fail(d, SD_E_ARGUMENT, "%s: %s[%d] is not finite (%g)", fn, name, bad, x[bad]);
    return SD_OK;
}

sd_status sd_check_call(const sd_model *m, sd_data *d, const char *fn, const double *q, const double *u,
                        const double *qdd, const double *tau, const double *f_ext)
{
    if (!m || !d || !q) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL model, data or q", fn);
    if (d->model != m) return sd_data_fail(d, SD_E_ARGUMENT, "%s: the workspace belongs to another model", fn);
    sd_status st;
    if ((st = check_finite(d, fn, "q", q, m->nq)) != SD_OK) return st;
    if ((st = check_finite(d, fn, "u", u, m->nv)) != SD_OK) return st;
    if ((st = check_finite(d, fn, "qdd", qdd, m->nv)) != SD_OK) return st;
    if ((st = check_finite(d, fn, "tau", tau, m->nv)) != SD_OK) return st;
    return check_finite(d, fn, "f_ext", f_ext, 6 * m->n);
}
