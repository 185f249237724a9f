/*
 * src/derivatives/derivatives.c — the entry points of soadyn/derivatives.h: the checks, the
 * workspace's derivative block (allocated by the first call, kept), and the forward dynamics
 * derivatives from the inverse dynamics ones.
 *
 * Forward dynamics: qdd = FD(q, u, tau) solves ID(q, u, qdd) = tau, so differentiating
 * ID(q, u, FD(q, u, tau)) = tau gives d tau/dx + M d qdd/dx = 0 for x = q, u and M d qdd/d tau = 1:
 *     d qdd/dq = -M^-1 d tau/dq,   d qdd/du = -M^-1 d tau/du,   d qdd/d tau = M^-1,
 * with d tau/dx evaluated at qdd = FD(tau) (the Carpentier-Mansard form of the ABA derivatives).
 * qdd is the articulated-body recursion's (sd_forward_dynamics' own numbers), run with its
 * inter-body forces, which leaves in the workspace the velocities, accelerations and forces of the
 * inverse dynamics at qdd: the recursion's composite pass reads them there, with no second inverse
 * dynamics. M is a by-product of that pass (mass_factor.c). -M^-1 is applied to d tau/dq, d tau/du
 * and -1, side by side in one scratch block, through M's tree-sparse factors; asked for d qdd/d tau
 * alone, the call gives the articulated-body recursion's M^-1 (sd_mass_matrix_inverse, 004 Eq 51).
 */
#include <stdlib.h>
#include <string.h>

#include "derivatives_internal.h"
#include "flex_derivatives.h"

/* Make sure the workspace's derivative block holds `need` bytes (allocated once, grown when a
 * forward dynamics derivative call needs the nv^2 matrices after inverse dynamics ones). */
static sd_status ensure_block(sd_data *d, const char *fn, size_t need)
{
    if (d->deriv_bytes >= need) return SD_OK;
    need = (need + 63) & ~(size_t)63;
    double *block = aligned_alloc(64, need); /* whole cache lines: the solve's rows of X are whole vectors */
    if (!block) return sd_data_fail(d, SD_E_MEMORY, "%s: out of memory for the derivatives' scratch (%zu bytes)", fn, need);
    free(d->deriv);
    d->deriv = block;
    d->deriv_bytes = need;
    return SD_OK;
}

/* The block's layout: the recursion's scratch, a zero vector of nv (for a NULL u or qdd), a vector
 * of nv (tau or qdd when the caller skips it), then, for the forward dynamics derivatives, M's
 * factors (nv x nv) and the right-hand sides (nv x W), each from a 64-byte line. */
static size_t recursion_doubles(const sd_model *m) { return sd_deriv_scratch_doubles(m) + 2 * (size_t)m->nv; }

/* n rounded up to whole 64-byte lines of doubles */
static size_t line_doubles(size_t n) { return (n + 7) & ~(size_t)7; }

static void scratch_layout(const sd_model *m, double *block, sd_deriv_scratch *s, double **zeros, double **spare)
{
    const size_t n = (size_t)m->n, nv = (size_t)m->nv;
    s->Vw = block;
    s->Aw = s->Vw + 6 * n;
    s->Fw = s->Aw + 6 * n;
    s->ICr = s->Fw + 6 * n;
    s->BCr = s->ICr + 13 * n;
    s->Sw = s->BCr + 12 * n;
    s->P = s->Sw + 6 * nv;
    s->Q = s->P + 6 * nv;
    s->Xref = (sd_transform *)(s->Q + 6 * nv);
    *zeros = (double *)(s->Xref + n);
    *spare = *zeros + nv;
    memset(*zeros, 0, nv * sizeof(double));
}

/* What every derivative call checks besides the inputs: a tree (rigid or with flexible bodies). */
static sd_status check_offered(const sd_model *m, sd_data *d, const char *fn)
{
    if (m->loops)
        return sd_data_fail(d, SD_E_NOT_SUPPORTED,
                            "%s: not offered on models with closure constraints (it differentiates the open "
                            "tree's dynamics; the closed system's would also need the constraint forces' "
                            "derivatives)",
                            fn);
    return SD_OK;
}

/* ---- models with flexible bodies: the node engine's tangent sweep (flex_derivatives.c) ----
 * The recursion of id_derivatives.c and mass_factor.c works on the rigid bodies' composite quantities
 * in world axes; a model whose nodes are not all rigid (d->nodes) takes the node engine's tangent
 * sweep instead, whose per-node operations come from the node kinds. The block: the sweep's scratch,
 * then a zero vector and a spare vector of nv. */
static sd_status nodes_block(const sd_model *m, sd_data *d, const char *fn, size_t sweep, double **zeros,
                              double **spare)
{
    const sd_status st = ensure_block(d, fn, (sweep + 2 * (size_t)m->nv) * sizeof(double));
    if (st != SD_OK) return st;
    *zeros = d->deriv + sweep;
    *spare = *zeros + m->nv;
    memset(*zeros, 0, (size_t)m->nv * sizeof(double));
    return SD_OK;
}

static sd_status nodes_inverse(const sd_model *m, sd_data *d, const char *fn, const double *q, const double *u,
                               const double *qdd, const double *f_ext, double *tau, double *dtau_dq, double *dtau_du)
{
    double *zeros, *spare;
    sd_status st = nodes_block(m, d, fn, sd_deriv_nodes_scratch_doubles(m, d), &zeros, &spare);
    if (st != SD_OK) return st;
    if (!u) u = zeros;
    if (!qdd) qdd = zeros;
    if ((st = sd_inverse_dynamics(m, d, q, u, qdd, f_ext, tau ? tau : spare)) != SD_OK) return st;
    if (dtau_dq || dtau_du) sd_deriv_nodes_inverse_dynamics(m, d, q, u, qdd, d->deriv, dtau_dq, dtau_du, (size_t)m->nv);
    return SD_OK;
}

static sd_status nodes_forward(const sd_model *m, sd_data *d, const char *fn, const double *q, const double *u,
                               const double *tau, const double *f_ext, double *qdd, double *dqdd_dq,
                               double *dqdd_du, double *dqdd_dtau)
{
    double *zeros, *spare;
    const sd_status st = nodes_block(m, d, fn, sd_deriv_nodes_forward_scratch_doubles(m, d), &zeros, &spare);
    if (st != SD_OK) return st;
    return sd_deriv_nodes_forward_dynamics(m, d, q, u ? u : zeros, tau, f_ext, qdd ? qdd : spare, dqdd_dq, dqdd_du,
                                           dqdd_dtau, d->deriv);
}

/* The inverse dynamics at (q, u, qdd) into tau, then its derivatives (rows ld apart); u, qdd
 * non-NULL. */
static sd_status id_and_derivatives(const sd_model *m, sd_data *d, const double *q, const double *u,
                                    const double *qdd, const double *f_ext, double *tau, const sd_deriv_scratch *s,
                                    double *dtau_dq, double *dtau_du, size_t ld)
{
    const sd_status st = sd_inverse_dynamics(m, d, q, u, qdd, f_ext, tau);
    if (st != SD_OK) return st;
    if (dtau_dq || dtau_du) sd_deriv_inverse_dynamics(m, d, q, u, qdd, s, dtau_dq, dtau_du, ld);
    return SD_OK;
}

/* The end of both calls: every derivative asked for finite (the dynamics itself was checked, so
 * only products with the state can overflow here). */
static sd_status check_derivatives(sd_data *d, const char *fn, int nv, double *const *outs, const char *const *names)
{
    const size_t nvv = (size_t)nv * (size_t)nv;
    for (int i = 0; i < 3; ++i)
        if (outs[i] && !sd_all_finite(outs[i], nvv)) return sd_check_output(d, fn, names[i], outs[i], nvv, SD_CAUSE_OVERFLOW);
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
    double *const outs[3] = {dtau_dq, dtau_du, NULL};
    static const char *const names[3] = {"dtau_dq", "dtau_du", ""};
    if (d->nodes) { /* flexible bodies: the node engine's sweep */
        if ((st = nodes_inverse(m, d, fn, q, u, qdd, f_ext, tau, dtau_dq, dtau_du)) != SD_OK) return st;
        return check_derivatives(d, fn, m->nv, outs, names);
    }
    if ((st = ensure_block(d, fn, recursion_doubles(m) * sizeof(double))) != SD_OK) return st;
    sd_deriv_scratch s;
    double *zeros, *spare;
    scratch_layout(m, d->deriv, &s, &zeros, &spare);
    if ((st = id_and_derivatives(m, d, q, u ? u : zeros, qdd ? qdd : zeros, f_ext, tau ? tau : spare, &s, dtau_dq,
                                 dtau_du, (size_t)m->nv)) != SD_OK)
        return st;
    return check_derivatives(d, fn, m->nv, outs, names);
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
    const int nv = m->nv;
    const size_t base = line_doubles(recursion_doubles(m)), n = (size_t)nv;
    double *const outs[3] = {dqdd_dq, dqdd_du, dqdd_dtau};
    static const char *const names[3] = {"dqdd_dq", "dqdd_du", "dqdd_dtau"};
    if (d->nodes) { /* flexible bodies: the node engine's sweep */
        if ((st = nodes_forward(m, d, fn, q, u, tau, f_ext, qdd, dqdd_dq, dqdd_du, dqdd_dtau)) != SD_OK) return st;
        return check_derivatives(d, fn, nv, outs, names);
    }
    /* the right-hand sides side by side, rows W apart (W a multiple of 8: whole vectors) */
    const size_t nblocks = (size_t)(dqdd_dq != NULL) + (size_t)(dqdd_du != NULL) + (size_t)(dqdd_dtau != NULL);
    const size_t W = (nblocks * n + 7) & ~(size_t)7;
    /* the scratch, then M's factors F (nv x nv), then the right-hand sides X (nv x W) */
    if ((st = ensure_block(d, fn, (base + line_doubles(n * n) + n * W) * sizeof(double))) != SD_OK) return st;
    sd_deriv_scratch s;
    double *zeros, *spare;
    scratch_layout(m, d->deriv, &s, &zeros, &spare);
    double *F = d->deriv + base, *X = F + line_doubles(n * n);
    double *qdd_out = qdd ? qdd : spare;
    if (!u) u = zeros;
    if (!dqdd_dq && !dqdd_du) { /* M^-1 alone (or nothing): the articulated-body recursion's own */
        if ((st = sd_forward_dynamics(m, d, q, u, tau, f_ext, qdd_out)) != SD_OK) return st;
        if (dqdd_dtau && (st = sd_mass_matrix_inverse(m, d, q, dqdd_dtau)) != SD_OK) return st;
        return check_derivatives(d, fn, nv, outs, names);
    }
    /* qdd = FD(tau) by the articulated-body recursion (the call's qdd is sd_forward_dynamics' own),
     * with the inter-body forces from its by-products (000 Eq 17), so the workspace holds V, alpha
     * and f of the inverse dynamics at qdd without running it; then M's factors */
    sd_fd_options with_forces;
    memset(&with_forces, 0, sizeof with_forces);
    with_forces.interbody_forces = 1;
    st = sd_forward_dynamics_ex(m, d, q, u, (double *)tau, f_ext, qdd_out, &with_forces); /* tau only read */
    if (st != SD_OK) return st;
    sd_deriv_composites(m, d, &s);
    const int bad = sd_deriv_mass_matrix_factor(m, &s, F);
    if (bad >= 0)
        return sd_data_fail(d, SD_E_SINGULAR, "%s: the mass matrix is not positive definite to round-off (pivot of "
                            "speed %d)", fn, bad);
    /* X = [d tau/dq, d tau/du, -1] (those asked for, in that order; the padding zero), the inverse
     * dynamics derivatives at qdd written straight into X */
    double *Xq = dqdd_dq ? X : NULL, *Xu = dqdd_du ? X + (dqdd_dq ? n : 0) : NULL;
    double *Xt = dqdd_dtau ? X + (nblocks - 1) * n : NULL;
    const size_t written = (size_t)(Xq != NULL) + (size_t)(Xu != NULL); /* blocks the recursion fills */
    for (size_t r = 0; r < n; ++r) memset(X + r * W + written * n, 0, (W - written * n) * sizeof(double));
    sd_deriv_columns(m, d, q, u, qdd_out, &s, Xq, Xu, W);
    if (Xt)
        for (size_t r = 0; r < n; ++r) Xt[r * W + r] = -1.0;
    /* all blocks in one solve, -M^-1 X: d qdd/dx = -M^-1 d tau/dx, d qdd/d tau = -M^-1 (-1) (one
     * pass over M's factors for the three) */
    sd_deriv_mass_matrix_solve(m, F, X, (int)W, W, -1.0);
    double *const blocks[3] = {Xq, Xu, Xt};
    for (int b = 0; b < 3; ++b)
        if (outs[b])
            for (size_t r = 0; r < n; ++r) memcpy(outs[b] + r * n, blocks[b] + r * W, n * sizeof(double));
    return check_derivatives(d, fn, nv, outs, names);
}
