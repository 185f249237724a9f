/*
 * src/algorithms/inverse_dynamics.c — Newton-Euler inverse dynamics over nodes, the one copy for
 * every kind of node (004 Alg 3.1, Eq 10; 003 Eq 15; 001 Eq 38, 42-44 for flexible nodes): a
 * base-to-tips scatter of velocities and accelerations, then a tips-to-base gather of the
 * inter-body forces f(k) and generalized forces T(k) = H(k) f(k). What differs between rigid and
 * flexible nodes (the node's own force, its modal forces, the attachment terms of a child riding on
 * a flexible parent's node) is asked of the node's kind (node_kinds.h).
 */
#include <string.h>

#include "internal.h"
#include "node_kinds.h"

/* tau += J qdd - tau_passive: the hinge's armature and its damping and spring forces (dynamics.h,
 * joint-level dynamics); f(k) stays the force through the hinge. qdd NULL: zero (bias forces). */
SD_NOINLINE static void joint_terms(const sd_model *m, const double *q, const double *u, const double *qdd,
                                    double *tau)
{
    if (qdd && m->has_armature)
        for (int v = 0; v < m->nv; ++v) tau[v] += m->armature[v] * qdd[v];
    if (m->has_passive) sd_passive_subtract(m, q, u, tau);
}

/* The two sweeps after the motion scatter (node_kinds.h: nd NULL, every node rigid). */
SD_ENGINE_SWEEPS void newton_euler_sweeps(const sd_model *m, sd_data *d, const double *qdd, double *tau,
                                         struct sd_node_data *nd)
{
    double a0[6];
    sd_base_acceleration(m, a0);
    /* The sweeps work in local 6-vectors and store once: the compiler cannot tell the workspace
     * arrays (alpha, a, b, f) apart, so element-wise updates in place reload and store each entry. */
    for (int k = 0; k < m->n; ++k) { /* scatter */
        const double *ak = d->a + 6 * k, *bk = d->b + 6 * k;
        const int sel = d->hinge_sel[k];
        double al[6], fk[6];
        /* alpha(k) = phi*(parent, k) alpha(parent) + H*(k) qdd(k) + a(k)   (001 Eq 26) */
        const double *alpha_parent = m->parent[k] < 0 ? a0 : d->alpha + 6 * m->parent[k];
        sd_motion_to_child_plane(&d->Xup[k], d->hinge_plane[k], alpha_parent, al);
        for (int r = 0; r < 6; ++r) al[r] += ak[r];
        sd_node_child_motion_modes(m, nd, k, qdd, al);
        if (qdd && sel >= 0) al[sel] += d->hinge_sgn[k] * qdd[m->v_index[k]];
        else if (qdd) {
            double aJ[6];
            sd_hinge_motion(m, d, k, qdd, aJ);
            for (int r = 0; r < 6; ++r) al[r] += aJ[r];
        }
        /* the node's own part of f(k) = M(k) alpha(k) + b(k); children are added in the gather */
        sd_node_own_force(m, nd, bk, k, al, qdd, fk);
        double *alpha = d->alpha + 6 * k, *f = d->f + 6 * k;
        for (int r = 0; r < 6; ++r) {
            alpha[r] = al[r];
            f[r] = fk[r];
        }
    }
    for (int k = m->n - 1; k >= 0; --k) { /* gather: f(k) += sum phi(k, j) f(j); T(k) = H(k) f(k) (001 Eq 38, 43) */
        const double *S = d->S + 6 * m->v_index[k], *f = d->f + 6 * k;
        const int sel = d->hinge_sel[k], vk = m->v_index[k], p = m->parent[k];
        if (sel >= 0) tau[vk] = d->hinge_sgn[k] * f[sel]; /* H = sgn e_sel^T */
        else
            for (int i = 0; i < m->nv_k[k]; ++i) tau[vk + i] = sd_s6_dot(S + 6 * i, f);
        sd_node_modal_forces(m, nd, k, tau);
        if (p >= 0) {
            double fp[6];
            sd_force_to_parent_plane(&d->Xup[k], d->hinge_plane[k], f, fp);
            double *fpar = d->f + 6 * p;
            for (int r = 0; r < 6; ++r) fpar[r] += fp[r];
            sd_node_force_to_parent_modes(m, nd, k, f);
        }
    }
}

SD_NOINLINE static void newton_euler_rigid(const sd_model *m, sd_data *d, const double *qdd, double *tau)
{
    newton_euler_sweeps(m, d, qdd, tau, NULL);
}
SD_NOINLINE static void newton_euler_nodes(const sd_model *m, sd_data *d, const double *qdd, double *tau)
{
    newton_euler_sweeps(m, d, qdd, tau, d->nodes);
}

/* Both public calls; fn and out name them in messages. */
static sd_status newton_euler(const char *fn, const char *out, const sd_model *m, sd_data *d, const double *q,
                              const double *u, const double *qdd, const double *f_ext, double *tau)
{
    const sd_status st = sd_check_call(m, d, fn, q, u, qdd, NULL, f_ext);
    if (st != SD_OK) return st;
    if (!tau) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL %s", fn, out);
    sd_update_motion(m, d, q, u, f_ext, 0);
    if (d->nodes) newton_euler_nodes(m, d, qdd, tau); /* the two instances (node_kinds.h) */
    else newton_euler_rigid(m, d, qdd, tau);
    if (m->has_armature || m->has_passive) joint_terms(m, q, u, qdd, tau);
    d->alpha_has_gravity = 1;
    d->current |= SD_CURRENT_ACCELERATIONS | SD_CURRENT_FORCES;
    if (sd_all_finite(tau, (size_t)m->nv)) return SD_OK;
    return sd_check_output(d, fn, out, tau, (size_t)m->nv, SD_CAUSE_OVERFLOW);
}

sd_status sd_inverse_dynamics(const sd_model *m, sd_data *d, const double *q, const double *u, const double *qdd,
                              const double *f_ext, double *tau)
{
    SD_RUN_COMPILED(m, d, inverse_dynamics, (q, u, qdd, f_ext, tau));
    return newton_euler("sd_inverse_dynamics", "tau", m, d, q, u, qdd, f_ext, tau);
}

sd_status sd_inverse_dynamics_library(const sd_model *m, sd_data *d, const double *q, const double *u,
                                      const double *qdd, const double *f_ext, double *tau)
{
    return newton_euler("sd_compiled_interbody_forces", "tau", m, d, q, u, qdd, f_ext, tau);
}

sd_status sd_bias_forces(const sd_model *m, sd_data *d, const double *q, const double *u, const double *f_ext,
                         double *c)
{
    SD_RUN_COMPILED(m, d, inverse_dynamics, (q, u, NULL, f_ext, c)); /* C - J^T f_ext: ID at qdd = 0 */
    return newton_euler("sd_bias_forces", "c", m, d, q, u, NULL, f_ext, c);
}
