/*
 * src/algorithms/node_flexible.c — the flexible node kind's operations for the recursions written
 * once over nodes (node_kinds.h), and the attachment terms of a child riding on a node of a flexible
 * parent. Node k's vectors are [rigid part (6); modal part (nm)] at nd->vec_off[k], its matrices
 * dim x dim row-major at nd->mat_off[k] (node_engine.h); M_m, b_m are node_kinematics.c's.
 */
#include <string.h>

#include "node_kinds.h"

/* f_m(k) = M_m(k) alpha_m(k) + b_m(k) (001 Eq 38 without the children), alpha_m = [alpha; eta-ddot]. */
void sd_flexible_own_force(const sd_model *m, struct sd_node_data *nd, int k, const double alpha[6],
                           const double *qdd, double f[6])
{
    const int dim = nd->dim[k];
    const double *M = nd->Mm + nd->mat_off[k], *b = nd->bm + nd->vec_off[k];
    double *alpha_m = nd->alpha_m + nd->vec_off[k], *fm = nd->fm + nd->vec_off[k];
    memcpy(alpha_m, alpha, 6 * sizeof(double));
    for (int r = 6; r < dim; ++r) alpha_m[r] = qdd ? qdd[m->mode_v_index[k] + r - 6] : 0.0;
    for (int i = 0; i < dim; ++i) {
        double s = b[i];
        for (int j = 0; j < dim; ++j) s += M[i * dim + j] * alpha_m[j];
        fm[i] = s;
    }
    memcpy(f, fm, 6 * sizeof(double));
}

/* T^f(k) = f_m^f(k) (001 Eq 43: H(k) = diag(H_hinge(k), I_nm)). */
void sd_flexible_modal_forces(const sd_model *m, const struct sd_node_data *nd, int k, double *tau)
{
    const double *fm = nd->fm + nd->vec_off[k];
    for (int r = 0; r < nd->dim[k] - 6; ++r) tau[m->mode_v_index[k] + r] = fm[6 + r];
}

/* alpha(c) += Y(c) eta-ddot(p) (001 Eq 26). */
void sd_attached_motion_modes(const sd_model *m, const struct sd_node_data *nd, int c, const double *qdd,
                              double alpha[6])
{
    const int p = m->parent[c], nmp = sd_node_nmodes(m, p);
    const double *Y = nd->Y + nd->att_off[c], *eta_ddot = qdd + m->mode_v_index[p];
    for (int r = 0; r < nmp; ++r)
        for (int i = 0; i < 6; ++i) alpha[i] += Y[6 * r + i] * eta_ddot[r];
}

/* f_m^f(p) += Y(c)^T f(c) (001 Eq 38). */
void sd_attached_force_to_parent_modes(const sd_model *m, struct sd_node_data *nd, int c, const double f[6])
{
    const int p = m->parent[c];
    const double *Y = nd->Y + nd->att_off[c];
    double *fp = nd->fm + nd->vec_off[p];
    for (int r = 0; r < sd_node_nmodes(m, p); ++r) fp[6 + r] += sd_s6_dot(Y + 6 * r, f);
}
