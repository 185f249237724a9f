/*
 * src/algorithms/node_kinematics.c — the node engine's accelerations alpha_m (001 Eq 26) after the
 * motion scatter (sd_update_motion, kinematics.c, which leaves placements with node frames, node
 * velocities V_m, Coriolis accelerations a_m, biases b_m and node masses M_m in the workspace: 001
 * Eq 13, 25, 27, 39-40); sd_kinematics and the Jacobian on them.
 */
#include <string.h>

#include "node_kinds.h"

void sd_nodes_accelerations(const sd_model *m, sd_data *d, const double *qdd, int with_gravity)
{
    struct sd_node_data *nd = d->nodes;
    double a0[6] = {0, 0, 0, 0, 0, 0};
    if (with_gravity) sd_base_acceleration(m, a0);
    for (int k = 0; k < m->n; ++k) { /* 001 Eq 26: alpha_m(k) = phi*(p, k) alpha_m(p) + H*(k) chi-dot(k) + a_m(k) */
        const int p = m->parent[k], nm = sd_node_nmodes(m, k);
        double *alpha = nd->alpha_m + nd->vec_off[k];
        const double *am = nd->am + nd->vec_off[k];
        if (p < 0) {
            sd_motion_to_child(&d->Xup[k], a0, alpha);
        } else {
            const double *ap = nd->alpha_m + nd->vec_off[p];
            sd_motion_to_child(&d->Xup[k], ap, alpha);
            if (qdd && nd->att_off[k] >= 0) sd_attached_motion_modes(m, nd, k, qdd, alpha); /* Y(k) eta-ddot(p) */
        }
        for (int i = 0; i < 6; ++i) alpha[i] += am[i];
        if (qdd) {
            double aJ[6];
            sd_hinge_motion(m, d, k, qdd, aJ);
            for (int i = 0; i < 6; ++i) alpha[i] += aJ[i];
        }
        for (int r = 0; r < nm; ++r) alpha[6 + r] = qdd ? qdd[m->mode_v_index[k] + r] : 0.0;
        memcpy(d->alpha + 6 * k, alpha, 6 * sizeof(double));
    }
    d->alpha_has_gravity = with_gravity != 0;
    d->current |= SD_CURRENT_ACCELERATIONS;
}

sd_status sd_nodes_kinematics(const sd_model *m, sd_data *d, const double *q, const double *u, const double *qdd)
{
    const char *fn = "sd_kinematics";
    sd_status st = sd_check_call(m, d, fn, q, u, qdd, NULL, NULL);
    if (st != SD_OK) return st;
    sd_update_motion(m, d, q, u, NULL, 1);
    sd_nodes_accelerations(m, d, qdd, 0);
    const size_t n = (size_t)m->n;
    if ((st = sd_check_output(d, fn, "world placements", (const double *)d->Xworld, 12 * n, SD_CAUSE_OVERFLOW)))
        return st;
    if ((st = sd_check_output(d, fn, "velocities", d->nodes->Vm, (size_t)d->nodes->vec_total, SD_CAUSE_OVERFLOW)))
        return st;
    return sd_check_output(d, fn, "accelerations", d->nodes->alpha_m, (size_t)d->nodes->vec_total,
                           SD_CAUSE_OVERFLOW);
}

/* J column col = the world twist s (6, body j's axes) seen at the point p (world). */
static void jacobian_column(const sd_transform *Xw, const double s[6], const double p[3], int nv, int col,
                            double *J)
{
    double sw[6], wxp[3];
    sd_motion_to_parent(Xw, s, sw); /* world axes, about the origin */
    sd_v3_cross(sw, p, wxp);
    for (int r = 0; r < 3; ++r) {
        J[r * nv + col] = sw[r];
        J[(3 + r) * nv + col] = sw[3 + r] + wxp[r];
    }
}

sd_status sd_nodes_jacobian_world(const sd_model *m, sd_data *d, int body, const double point[3], double *J)
{
    const char *fn = "sd_jacobian_world";
    sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_WORLD);
    if (st == SD_OK) st = sd_check_body(m, d, fn, body);
    if (st != SD_OK) return st;
    if (!point || !J) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL point or J", fn);
    const struct sd_node_data *nd = d->nodes;
    double p[3];
    sd_transform_point(&d->Xworld[body], point, p);
    memset(J, 0, 6 * (size_t)m->nv * sizeof(double));
    /* the hinges on the path from the base, and the modes of the ancestors the path leaves at a node
     * (node_engine.h: a point moves with F_k, so the body's own modes have zero columns) */
    for (int j = body; j >= 0; j = m->parent[j]) {
        for (int i = 0; i < m->nv_k[j]; ++i)
            jacobian_column(&d->Xworld[j], d->S + 6 * (m->v_index[j] + i), p, m->nv, m->v_index[j] + i, J);
        if (nd->att_off[j] >= 0) {
            const int pj = m->parent[j];
            for (int r = 0; r < sd_node_nmodes(m, pj); ++r)
                jacobian_column(&d->Xworld[j], nd->Y + nd->att_off[j] + 6 * r, p, m->nv, m->mode_v_index[pj] + r, J);
        }
    }
    return sd_check_output(d, fn, "J", J, 6 * (size_t)m->nv, SD_CAUSE_OVERFLOW);
}

void sd_nodes_joint_frame(const sd_model *m, const sd_data *d, int k, sd_transform *J)
{
    if (sd_node_parent_node(m, k) < 0) *J = m->placement[k];
    else sd_transform_compose((const sd_transform *)(d->nodes->node_pose + 12 * k), &m->node_placement[k], J);
}
