/*
 * src/algorithms/node_kinematics.c — the node engine's base-to-tips scatters (node_engine.h):
 * placements with node frames, node velocities V_m, Coriolis accelerations a_m, biases b_m and node
 * masses M_m (001 Eq 13, 25, 27, 39-40), then accelerations alpha_m (001 Eq 26); sd_kinematics and
 * the Jacobian on them.
 *
 * A child c of p rides on the parent's frame, or on node t of a flexible p. Then (frames: p, the
 * deformed node frame N = N_t(eta_p), the joint frame fixed to N, c):
 *   Xup(c) = pose(N) * node_placement(c) * XJ(q_c) = pose(N) * T,   T = c placed in N
 *   V(c)   = X(c <- p) V(p) + Y(c) eta-dot_p + H*(c) u_c,           Y(c) = X(c <- N) S_t   (001 Eq 12-14)
 *   a(c)   = V(c) x H*(c) u_c + d(H*)/dt u_c + X(c <- N) (S_t-dot eta-dot_p + V_N x S_t eta-dot_p),
 *            V_N = X(N <- p) V(p) + S_t eta-dot_p                                         (001 Eq 27)
 * Both extra terms follow from alpha_B = X(B <- A) alpha_A + V_B x w + w-dot for a frame B moving at the
 * relative twist w (B's axes) on a frame A, applied to N on p and to c on N.
 */
#include <string.h>

#include "flex/flex_body.h"
#include "node_engine.h"

/* y (6) += A x for a 6 x n column-major A. */
static void add_cols(const double *A, int n, const double *x, double y[6])
{
    for (int r = 0; r < n; ++r)
        for (int i = 0; i < 6; ++i) y[i] += A[6 * r + i] * x[r];
}

void sd_nodes_motion(const sd_model *m, sd_data *d, const double *q, const double *u, const double *f_ext,
                     int with_world)
{
    struct sd_node_data *nd = d->nodes;
    memcpy(nd->q, q, (size_t)m->nq * sizeof(double));
    if (u) memcpy(nd->u, u, (size_t)m->nv * sizeof(double));
    else memset(nd->u, 0, (size_t)m->nv * sizeof(double));
    double *St = nd->scratch; /* S_t of the node the current body rides on, 6 x nm(parent) */
    for (int k = 0; k < m->n; ++k) {
        const int p = m->parent[k], nm = sd_node_nmodes(m, k), dim = nd->dim[k], t = sd_node_parent_node(m, k);
        /* placement */
        sd_transform XJ, T;
        sd_hinge_transform(m, k, q + m->q_index[k], &XJ, d->S + 6 * m->v_index[k]);
        if (nm) memset(d->S + 6 * m->mode_v_index[k], 0, 6 * (size_t)nm * sizeof(double)); /* modes do not move F_k */
        sd_transform *N = (sd_transform *)(nd->node_pose + 12 * k);
        double *Yk = nd->att_off[k] >= 0 ? nd->Y + nd->att_off[k] : NULL;
        const int nmp = t >= 0 ? sd_node_nmodes(m, p) : 0;
        if (t >= 0) {
            sd_flex_node_frame(m->flex[p], t, q + m->mode_q_index[p], N, St);
            sd_transform_compose(&m->node_placement[k], &XJ, &T);
            sd_transform_compose(N, &T, &d->Xup[k]);
            for (int r = 0; r < nmp; ++r) sd_motion_to_child(&T, St + 6 * r, Yk + 6 * r); /* Y = X(c <- N) S_t */
        } else {
            sd_transform_compose(&m->placement[k], &XJ, &d->Xup[k]);
        }
        if (with_world) {
            if (p < 0) d->Xworld[k] = d->Xup[k];
            else sd_transform_compose(&d->Xworld[p], &d->Xup[k], &d->Xworld[k]);
        }
        /* velocities and Coriolis terms */
        double *Vm = nd->Vm + nd->vec_off[k], *am = nd->am + nd->vec_off[k], *bm = nd->bm + nd->vec_off[k];
        double *Mm = nd->Mm + nd->mat_off[k];
        memset(am, 0, (size_t)dim * sizeof(double));
        if (!u) {
            memset(Vm, 0, (size_t)dim * sizeof(double));
        } else {
            double vJ[6], c[6];
            sd_hinge_motion(m, d, k, u, vJ);
            if (p < 0) memcpy(Vm, vJ, sizeof vJ); /* the inertial frame does not move */
            else {
                const double *Vp = nd->Vm + nd->vec_off[p];
                sd_motion_to_child(&d->Xup[k], Vp, Vm);
                for (int i = 0; i < 6; ++i) Vm[i] += vJ[i];
                if (Yk) add_cols(Yk, nmp, Vp + 6, Vm); /* 001 Eq 12: the node's deformation rate */
            }
            for (int r = 0; r < nm; ++r) Vm[6 + r] = u[m->mode_v_index[k] + r];
            sd_hinge_velocity_term(m, k, q + m->q_index[k], u + m->v_index[k], am);
            sd_motion_cross(Vm, vJ, c);
            for (int i = 0; i < 6; ++i) am[i] += c[i];
            if (nmp > 0) { /* the node frame's own motion on p */
                const double *Vp = nd->Vm + nd->vec_off[p], *eta_dot_p = Vp + 6;
                double w[6] = {0, 0, 0, 0, 0, 0}, VN[6], cN[6], cc[6];
                add_cols(St, nmp, eta_dot_p, w);
                sd_motion_to_child(N, Vp, VN);
                for (int i = 0; i < 6; ++i) VN[i] += w[i];
                sd_flex_node_bias(m->flex[p], t, q + m->mode_q_index[p], eta_dot_p, cN);
                sd_motion_cross(VN, w, cc);
                for (int i = 0; i < 6; ++i) cN[i] += cc[i];
                sd_motion_to_child(&T, cN, cc);
                for (int i = 0; i < 6; ++i) am[i] += cc[i];
            }
        }
        /* node mass and bias: b = V x* M V (rigid) or b_m + K_m eta + D_m eta-dot (001 Eq 39-40) */
        if (m->flex && m->flex[k]) {
            const double *eta = q + m->mode_q_index[k];
            sd_flex_mass(m->flex[k], eta, Mm);
            if (u) sd_flex_bias(m->flex[k], eta, Vm + 6, Vm, bm);
            else memset(bm, 0, (size_t)dim * sizeof(double));
            if (nm) {
                double *fe = nd->scratch + 6 * nd->max_dim; /* past St */
                sd_flex_elastic(m->flex[k], eta, Vm + 6, fe);
                for (int r = 0; r < nm; ++r) bm[6 + r] += fe[r];
            }
        } else {
            sd_rigid_inertia_to_sym6(m->rigid + 13 * k, Mm);
            if (u) {
                double MV[6];
                sd_rigid_inertia_mul(m->rigid + 13 * k, Vm, MV);
                sd_force_cross(Vm, MV, bm);
            } else {
                memset(bm, 0, 6 * sizeof(double));
            }
        }
        if (f_ext)
            for (int i = 0; i < 6; ++i) bm[i] -= f_ext[6 * k + i];
        memcpy(d->V + 6 * k, Vm, 6 * sizeof(double));
        memcpy(d->a + 6 * k, am, 6 * sizeof(double));
        memcpy(d->b + 6 * k, bm, 6 * sizeof(double));
    }
    d->current = SD_CURRENT_PLACEMENTS | SD_CURRENT_VELOCITIES | (with_world ? SD_CURRENT_WORLD : 0u);
    d->params_generation = m->params_generation;
}

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
            if (nd->att_off[k] >= 0) add_cols(nd->Y + nd->att_off[k], sd_node_nmodes(m, p), ap + 6, alpha);
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
    sd_nodes_motion(m, d, q, u, NULL, 1);
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
