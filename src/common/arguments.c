/*
 * src/common/arguments.c — the checks every call makes at the API boundary: pointers present, the
 * workspace made for this model, every number given finite (so that a NaN in is an error naming the
 * argument and index), what a reader needs current, and every number returned finite (so that an
 * overflow is an error naming the output and index, never a NaN or inf returned as a success).
 */
#include <math.h>
#include <stddef.h>

#include "internal.h"

/* Index of the first entry that is not finite, or -1: the vectorised bit test of sd_all_finite in the
 * common case, the search for the index only when it fails. */
static ptrdiff_t first_non_finite(const double *x, size_t n)
{
    if (sd_all_finite(x, n)) return -1;
    for (size_t i = 0; i < n; ++i)
        if (!isfinite(x[i])) return (ptrdiff_t)i;
    return -1;
}

static sd_status check_finite(sd_data *d, const char *fn, const char *name, const double *x, int n)
{
    const ptrdiff_t bad = x ? first_non_finite(x, (size_t)n) : -1;
    if (bad >= 0) return sd_data_fail(d, SD_E_ARGUMENT, "%s: %s[%td] is not finite (%g)", fn, name, bad, x[bad]);
    return SD_OK;
}

sd_status sd_check_input(sd_data *d, const char *fn, const char *name, const double *x, int n)
{
    return check_finite(d, fn, name, x, n);
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

sd_status sd_check_output(sd_data *d, const char *fn, const char *name, const double *x, size_t n,
                          const char *cause)
{
    const ptrdiff_t bad = first_non_finite(x, n);
    if (bad < 0) return SD_OK;
    return sd_data_fail(d, SD_E_NOT_FINITE, "%s: %s[%td] came out %g: %s", fn, name, bad, x[bad], cause);
}

/* The parts of the workspace in the order they are checked, and the calls that make each current. */
static const struct {
    unsigned part;
    const char *what, *calls;
} parts_needed[] = {
    {SD_CURRENT_PLACEMENTS, "no placements computed yet", "sd_kinematics() or a dynamics call"},
    {SD_CURRENT_VELOCITIES, "the body velocities are not those of the last call's state",
     "sd_kinematics() with u, sd_inverse_dynamics() or sd_forward_dynamics()"},
    {SD_CURRENT_ACCELERATIONS, "the body accelerations are not those of the last call's state",
     "sd_kinematics(), sd_inverse_dynamics() or sd_forward_dynamics()"},
    {SD_CURRENT_ARTICULATED, "the articulated-body factors are not those of the last call's state",
     "sd_articulated_inertias() (or sd_forward_dynamics() with no prescribed hinge)"},
    {SD_CURRENT_FORCES, "the inter-body forces are not those of the last call's state",
     "sd_inverse_dynamics() or sd_forward_dynamics_ex() with interbody_forces"},
};

sd_status sd_check_reader(const sd_model *m, sd_data *d, const char *fn, unsigned parts)
{
    if (!m || !d) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL model or data", fn);
    if (d->model != m) return sd_data_fail(d, SD_E_ARGUMENT, "%s: the workspace belongs to another model", fn);
    const unsigned wanted = parts | ((parts & SD_CURRENT_WORLD) ? SD_CURRENT_PLACEMENTS : 0u);
    if (wanted && d->params_generation != m->params_generation) { /* a setter ran since (soadyn/params.h) */
        d->current = 0;
        return sd_data_fail(d, SD_E_ARGUMENT, "%s: the model's parameters changed since the last evaluation "
                            "(soadyn/params.h): call sd_kinematics() or a dynamics call first", fn);
    }
    for (size_t i = 0; i < sizeof parts_needed / sizeof parts_needed[0]; ++i)
        if ((wanted & parts_needed[i].part) && !(d->current & parts_needed[i].part))
            return sd_data_fail(d, SD_E_ARGUMENT, "%s: %s: call %s first%s", fn, parts_needed[i].what,
                                parts_needed[i].calls,
                                m->compiled ? " (the model is compiled, soadyn/compile.h: its compiled calls return "
                                              "their outputs only and leave no state in the workspace; "
                                              "sd_kinematics() still fills it, or sd_model_uncompile())"
                                            : "");
    if ((wanted & SD_CURRENT_WORLD) && !(d->current & SD_CURRENT_WORLD)) sd_update_world(m, d);
    return SD_OK;
}

sd_status sd_check_body(const sd_model *m, sd_data *d, const char *fn, int body)
{
    if (body >= 0 && body < m->n) return SD_OK;
    return sd_data_fail(d, SD_E_ARGUMENT, "%s: body index %d is out of range (the model has bodies 0 to %d)", fn,
                        body, m->n - 1);
}
