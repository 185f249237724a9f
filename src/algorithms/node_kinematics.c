/*
 * src/algorithms/node_kinematics.c — the Jacobian of a point on a model with flexible bodies, and a
 * hinge's joint frame on a node, after the motion scatter (sd_update_motion, kinematics.c, which
 * leaves placements with node frames and the attachment maps Y in the workspace).
 */
#include <string.h>

#include "node_kinds.h"

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
