/*
 * src/algorithms/node_inverse_dynamics.c — Newton-Euler inverse dynamics over nodes (001 Eq 38, 42-44):
 * the scatter of node_kinematics.c, then a tips-to-base gather of the node forces
 *   f_m(k) = sum over children c of phi(k, c) f(c) + M_m(k) alpha_m(k) + b_m(k)   (b_m with K_m eta + D_m eta-dot)
 *   T(k)   = H(k) f_m(k) = [H_hinge(k) f(k); f_m^f(k)]
 * where phi(k, c) f = [Xup(c)^T f; Y(c)^T f] carries the child's rigid 6-force into k's node space.
 * The rigid parts f(k) are the inter-body forces of sd_interbody_force.
 */
#include <string.h>

#include "node_engine.h"

static sd_status newton_euler(const char *fn, const char *out, const sd_model *m, sd_data *d, const double *q,
                              const double *u, const double *qdd, const double *f_ext, double *tau)
{
    const sd_status st = sd_check_call(m, d, fn, q, u, qdd, NULL, f_ext);
    if (st != SD_OK) return st;
    if (!tau) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL %s", fn, out);
    struct sd_node_data *nd = d->nodes;
    sd_nodes_motion(m, d, q, u, f_ext, 0);
    sd_nodes_accelerations(m, d, qdd, 1); /* the base accelerates at -g: f includes weight (004 Sec 8) */
    for (int k = 0; k < m->n; ++k) { /* the node's own part M_m alpha_m + b_m */
        const int dim = nd->dim[k];
        const double *M = nd->Mm + nd->mat_off[k], *alpha = nd->alpha_m + nd->vec_off[k],
                     *b = nd->bm + nd->vec_off[k];
        double *f = nd->fm + nd->vec_off[k];
        for (int i = 0; i < dim; ++i) {
            double s = b[i];
            for (int j = 0; j < dim; ++j) s += M[i * dim + j] * alpha[j];
            f[i] = s;
        }
    }
    for (int k = m->n - 1; k >= 0; --k) { /* gather: 001 Eq 38, T = H f_m (Eq 43) */
        const int p = m->parent[k], nm = sd_node_nmodes(m, k);
        const double *f = nd->fm + nd->vec_off[k], *S = d->S + 6 * m->v_index[k];
        for (int i = 0; i < m->nv_k[k]; ++i) tau[m->v_index[k] + i] = sd_s6_dot(S + 6 * i, f);
        for (int r = 0; r < nm; ++r) tau[m->mode_v_index[k] + r] = f[6 + r];
        memcpy(d->f + 6 * k, f, 6 * sizeof(double));
        if (p < 0) continue;
        double *fp = nd->fm + nd->vec_off[p], fx[6];
        sd_force_to_parent(&d->Xup[k], f, fx);
        for (int i = 0; i < 6; ++i) fp[i] += fx[i];
        if (nd->att_off[k] >= 0) {
            const double *Y = nd->Y + nd->att_off[k];
            for (int r = 0; r < sd_node_nmodes(m, p); ++r) fp[6 + r] += sd_s6_dot(Y + 6 * r, f);
        }
    }
    if (m->has_armature || m->has_passive) /* tau += J qdd - tau_passive on the hinge speeds (dynamics.h) */
        for (int k = 0; k < m->n; ++k) {
            const int vk = m->v_index[k];
            double tp[6];
            sd_passive_hinge(m, k, q, u, tp);
            for (int i = 0; i < m->nv_k[k]; ++i)
                tau[vk + i] += (qdd ? m->armature[vk + i] * qdd[vk + i] : 0.0) - (m->has_passive ? tp[i] : 0.0);
        }
    d->current |= SD_CURRENT_ACCELERATIONS | SD_CURRENT_FORCES;
    if (sd_all_finite(tau, (size_t)m->nv)) return SD_OK;
    return sd_check_output(d, fn, out, tau, (size_t)m->nv, SD_CAUSE_OVERFLOW);
}

sd_status sd_nodes_inverse_dynamics(const sd_model *m, sd_data *d, const double *q, const double *u,
                                    const double *qdd, const double *f_ext, double *tau)
{
    return newton_euler("sd_inverse_dynamics", "tau", m, d, q, u, qdd, f_ext, tau);
}

sd_status sd_nodes_bias_forces(const sd_model *m, sd_data *d, const double *q, const double *u,
                               const double *f_ext, double *c)
{
    return newton_euler("sd_bias_forces", "c", m, d, q, u, NULL, f_ext, c);
}
