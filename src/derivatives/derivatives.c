/*
 * src/derivatives/derivatives.c — the entry points of soadyn/derivatives.h: the checks, the
 * workspace's derivative block (allocated by the first call, kept), and the forward dynamics
 * derivatives from the inverse dynamics ones.
 *
 * Forward dynamics: qdd = FD(q, u, tau) solves ID(q, u, qdd) = tau, so differentiating
 * ID(q, u, FD(q, u, tau)) = tau gives d tau/dx + M d qdd/dx = 0 for x = q, u and M d qdd/d tau = 1:
 *     d qdd/dq = -M^-1 d tau/dq,   d qdd/du = -M^-1 d tau/du,   d qdd/d tau = M^-1,
 * with d tau/dx evaluated at qdd = FD(tau) (the Carpentier-Mansard form of the ABA derivatives).
 * M^-1 comes from the articulated-body recursion (sd_mass_matrix_inverse, 004 Eq 51).
 */
#include <stdlib.h>
#include <string.h>

#include "derivatives_internal.h"

/* Make sure the workspace's derivative block holds `need` bytes (allocated once, grown when a
 * forward dynamics derivative call needs the nv^2 matrices after inverse dynamics ones). */
static sd_status ensure_block(sd_data *d, const char *fn, size_t need)
{
    if (d->deriv_bytes >= need) return SD_OK;
    double *block = malloc(need);
    if (!block) return sd_data_fail(d, SD_E_MEMORY, "%s: out of memory for the derivatives' scratch (%zu bytes)", fn, need);
    free(d->deriv);
    d->deriv = block;
    d->deriv_bytes = need;
    return SD_OK;
}

/* The block's layout: the recursion's scratch (9 x 6 per body), a zero vector of nv (for a NULL u
 * or qdd), a vector of nv (tau or qdd when the caller skips it), then, for the forward dynamics derivatives, three nv x nv matrices. */
static size_t recursion_doubles(const sd_model *m) { return 54 * (size_t)m->n + 2 * (size_t)m->nv; }

static void scratch_layout(const sd_model *m, double *block, sd_deriv_scratch *s, double **zeros, double **spare)
{
    const size_t n6 = 6 * (size_t)m->n;
    double **parts[] = {&s->vJ, &s->qJ, &s->MV, &s->dVq, &s->dalq, &s->dfq, &s->dVu, &s->dalu, &s->dfu};
    for (size_t p = 0; p < sizeof parts / sizeof parts[0]; ++p) *parts[p] = block + p * n6;
    *zeros = block + 9 * n6;
    *spare = *zeros + m->nv;
    memset(*zeros, 0, (size_t)m->nv * sizeof(double));
}

/* What every derivative call checks besides the inputs: a rigid tree. */
static sd_status check_offered(const sd_model *m, sd_data *d, const char *fn)
{
    if (m->loops)
        return sd_data_fail(d, SD_E_NOT_SUPPORTED,
                            "%s: not offered on models with closure constraints (the derivatives of the "
                            "constrained dynamics, through the constraint forces, are not implemented)",
                            fn);
    if (m->nflex)
        return sd_data_fail(d, SD_E_NOT_SUPPORTED,
                            "%s: not offered on models with flexible bodies (the recursion differentiates "
                            "the rigid bodies' sweeps only, not the node engine's modal terms)",
                            fn);
    return SD_OK;
}

/* The inverse dynamics at (q, u, qdd) into tau, then its derivatives; u, qdd non-NULL. */
static sd_status id_and_derivatives(const char *fn, const sd_model *m, sd_data *d, const double *q,
                                    const double *u, const double *qdd, const double *f_ext, double *tau,
                                    const sd_deriv_scratch *s, double *dtau_dq, double *dtau_du)
{
    const sd_status st = sd_inverse_dynamics(m, d, q, u, qdd, f_ext, tau);
    if (st != SD_OK) return st;
    if (!dtau_dq && !dtau_du) return SD_OK;
    sd_deriv_inverse_dynamics(m, d, q, u, qdd, s, dtau_dq, dtau_du);
    /* the inverse dynamics is finite, so only the products with the state can overflow */
    const size_t nvv = (size_t)m->nv * (size_t)m->nv;
    if (dtau_dq && !sd_all_finite(dtau_dq, nvv)) return sd_check_output(d, fn, "dtau_dq", dtau_dq, nvv, SD_CAUSE_OVERFLOW);
    if (dtau_du && !sd_all_finite(dtau_du, nvv)) return sd_check_output(d, fn, "dtau_du", dtau_du, nvv, SD_CAUSE_OVERFLOW);
    return SD_OK;
}

sd_status sd_inverse_dynamics_derivatives(const sd_model *m, sd_data *d, const double *q, const double *u,
                                          const double *qdd, const double *f_ext, double *tau, double *dtau_dq,
                                          double *dtau_du)
{
    const char *fn = "sd_inverse_dynamics_derivatives";
    sd_status st = sd_check_call(m, d, fn, q, u, qdd, NULL, f_ext);
    if (st != SD_OK) return st;
    if ((st = check_offered(m, d, fn)) != SD_OK) return st;
    if ((st = ensure_block(d, fn, recursion_doubles(m) * sizeof(double))) != SD_OK) return st;
    sd_deriv_scratch s;
    double *zeros, *spare;
    scratch_layout(m, d->deriv, &s, &zeros, &spare);
    double *tau_out = tau ? tau : spare;
    return id_and_derivatives(fn, m, d, q, u ? u : zeros, qdd ? qdd : zeros, f_ext, tau_out, &s, dtau_dq, dtau_du);
}

/* out = -A B for nv x nv row-major A, B (out distinct from both). */
static void negative_product(int nv, const double *A, const double *B, double *out)
{
    const size_t n = (size_t)nv;
    memset(out, 0, n * n * sizeof(double));
    for (size_t r = 0; r < n; ++r) {
        double *o = out + r * n;
        for (size_t k = 0; k < n; ++k) {
            const double a = A[r * n + k];
            if (a == 0.0) continue;
            const double *b = B + k * n;
            for (size_t c = 0; c < n; ++c) o[c] -= a * b[c];
        }
    }
}

sd_status sd_forward_dynamics_derivatives(const sd_model *m, sd_data *d, const double *q, const double *u,
                                          const double *tau, const double *f_ext, double *qdd, double *dqdd_dq,
                                          double *dqdd_du, double *dqdd_dtau)
{
    const char *fn = "sd_forward_dynamics_derivatives";
    sd_status st = sd_check_call(m, d, fn, q, u, NULL, tau, f_ext);
    if (st != SD_OK) return st;
    if (!tau) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL tau", fn);
    if ((st = check_offered(m, d, fn)) != SD_OK) return st;
    const size_t nv = (size_t)m->nv, nvv = nv * nv, base = recursion_doubles(m);
    const int want = dqdd_dq || dqdd_du || dqdd_dtau;
    if ((st = ensure_block(d, fn, (base + (want ? 3 * nvv : 0)) * sizeof(double))) != SD_OK) return st;
    sd_deriv_scratch s;
    double *zeros, *spare;
    scratch_layout(m, d->deriv, &s, &zeros, &spare);
    double *Minv = d->deriv + base, *dtau_dq = Minv + nvv, *dtau_du = dtau_dq + nvv;
    double *qdd_out = qdd ? qdd : spare;
    if (!u) u = zeros;
    if ((st = sd_forward_dynamics(m, d, q, u, tau, f_ext, qdd_out)) != SD_OK) return st;
    if (!want) return SD_OK;
    double *M_inv = dqdd_dtau ? dqdd_dtau : Minv;
    if ((st = sd_mass_matrix_inverse(m, d, q, M_inv)) != SD_OK) return st;
    if (!dqdd_dq && !dqdd_du) return SD_OK;
    /* the inverse dynamics at qdd gives back tau (to round-off): its output is not needed */
    double *tau_back = qdd ? spare : dtau_du; /* dtau_du is written after tau is last read */
    if ((st = id_and_derivatives(fn, m, d, q, u, qdd_out, f_ext, tau_back, &s, dqdd_dq ? dtau_dq : NULL,
                                 dqdd_du ? dtau_du : NULL)) != SD_OK)
        return st;
    if (dqdd_dq) negative_product(m->nv, M_inv, dtau_dq, dqdd_dq);
    if (dqdd_du) negative_product(m->nv, M_inv, dtau_du, dqdd_du);
    if (dqdd_dq && !sd_all_finite(dqdd_dq, nvv)) return sd_check_output(d, fn, "dqdd_dq", dqdd_dq, nvv, SD_CAUSE_OVERFLOW);
    if (dqdd_du && !sd_all_finite(dqdd_du, nvv)) return sd_check_output(d, fn, "dqdd_du", dqdd_du, nvv, SD_CAUSE_OVERFLOW);
    return SD_OK;
}
