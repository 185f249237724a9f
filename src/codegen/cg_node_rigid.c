/*
 * src/codegen/cg_node_rigid.c — the rigid node kind's operations, emitted (cg_gen.h): the hinge
 * kernels of hinge.c (X_J(q), H*(k), d(H*)/dt u), the motion scatter's velocities (001 Eq 26-27,
 * 38), the node's own force and inertias (node_kinds.h), and the joint-level passive forces of
 * joint_dynamics.c, on the generator's scalars. The hinge type is read here, at generation time:
 * the generated code has no branch on it.
 */
#include <string.h>

#include "cg_gen.h"
#include "algorithms/node_engine.h"

/* Rotation by theta (sin s, cos c) about e_i, (i, a, b) cyclic: the selecting hinge's plane rotation
 * (hinge.c plane_rotation), with exact zeros and one on the axis. */
static void plane_rotation(int i, cg_val s, cg_val c, cg_emit *e, cg_val R[9])
{
    const int a = (i + 1) % 3, b = (i + 2) % 3;
    for (int r = 0; r < 9; ++r) R[r] = cg_const(0.0);
    R[3 * i + i] = cg_const(1.0);
    R[3 * a + a] = c;
    R[3 * a + b] = cg_neg(e, s);
    R[3 * b + a] = s;
    R[3 * b + b] = c;
}

/* Rodrigues' rotation about the unit axis n (constants) by angle (sd_m3_axis_angle). */
static void axis_angle(cg_emit *e, const double n_[3], cg_val angle, cg_val R[9])
{
    const cg_val s = cg_call1(e, "sin", angle), c = cg_call1(e, "cos", angle), t = cg_sub(e, cg_const(1.0), c);
    const cg_val n[3] = {cg_const(n_[0]), cg_const(n_[1]), cg_const(n_[2])};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            const cg_val tnn = cg_mul(e, t, cg_mul(e, n[i], n[j]));
            if (i == j) {
                R[3 * i + j] = cg_add(e, c, tnn);
                continue;
            }
            /* the skew part s [n x]: entry (i, j) is -s n_l for (i, j, l) cyclic, +s n_l otherwise */
            const int l = 3 - i - j, cyclic = (j == (i + 1) % 3);
            const cg_val sn = cg_mul(e, s, n[l]);
            R[3 * i + j] = cyclic ? cg_sub(e, tnn, sn) : cg_add(e, tnn, sn);
        }
}

/* The rotation of the unit quaternion (w, x, y, z) at q[0..3] (sd_quat_to_m3). */
static void quaternion_rotation(cg_emit *e, const cg_val *qk, cg_val R[9])
{
    const cg_val w = qk[0], x = qk[1], y = qk[2], z = qk[3], one = cg_const(1.0), two = cg_const(2.0);
    const cg_val xx = cg_mul(e, x, x), yy = cg_mul(e, y, y), zz = cg_mul(e, z, z);
    const cg_val xy = cg_mul(e, x, y), xz = cg_mul(e, x, z), yz = cg_mul(e, y, z);
    const cg_val wx = cg_mul(e, w, x), wy = cg_mul(e, w, y), wz = cg_mul(e, w, z);
    R[0] = cg_sub(e, one, cg_mul(e, two, cg_add(e, yy, zz)));
    R[1] = cg_mul(e, two, cg_sub(e, xy, wz));
    R[2] = cg_mul(e, two, cg_add(e, xz, wy));
    R[3] = cg_mul(e, two, cg_add(e, xy, wz));
    R[4] = cg_sub(e, one, cg_mul(e, two, cg_add(e, xx, zz)));
    R[5] = cg_mul(e, two, cg_sub(e, yz, wx));
    R[6] = cg_mul(e, two, cg_sub(e, xz, wy));
    R[7] = cg_mul(e, two, cg_add(e, yz, wx));
    R[8] = cg_sub(e, one, cg_mul(e, two, cg_add(e, xx, yy)));
}

static void set_column(cg_val *S, int col, const cg_val *ang, const cg_val *lin)
{
    for (int i = 0; i < 3; ++i) {
        S[6 * col + i] = ang ? ang[i] : cg_const(0.0);
        S[6 * col + 3 + i] = lin ? lin[i] : cg_const(0.0);
    }
}

static void const3(const double *x, cg_val out[3])
{
    for (int i = 0; i < 3; ++i) out[i] = cg_const(x[i]);
}

/* X_J(q) and H*(k) of body k's hinge (hinge.c sd_hinge_transform; a selecting hinge, H* = sgn e_i,
 * by its axis-selecting form). */
static void hinge_joint(cg_gen *g, int k, cg_xform *XJ, cg_val *S, cg_val aux[9])
{
    const sd_model *m = g->m;
    cg_emit *e = &g->e;
    const double *ax = m->hinge_axes + 9 * k;
    const cg_val *qk = g->q + m->q_index[k];
    static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, O3[3] = {0, 0, 0};
    cg_xform_const(I3, O3, XJ);
    double sgn;
    const int sel = sd_hinge_select(m, k, &sgn);
    cg_val a[3], a2[3];
    const3(ax, a);
    switch (m->hinge[k]) {
    case SD_HINGE_FIXED:
    case SD_HINGE_TYPE_COUNT:
        break;
    case SD_HINGE_REVOLUTE:
        if (sel >= 0 && sel < 3) {
            const cg_val theta = cg_mul(e, cg_const(sgn), qk[0]);
            plane_rotation(sel, cg_call1(e, "sin", theta), cg_call1(e, "cos", theta), e, XJ->R);
        } else {
            axis_angle(e, ax, qk[0], XJ->R);
        }
        set_column(S, 0, a, NULL);
        break;
    case SD_HINGE_PRISMATIC:
        for (int i = 0; i < 3; ++i) XJ->p[i] = cg_mul(e, qk[0], a[i]);
        set_column(S, 0, NULL, a);
        break;
    case SD_HINGE_SPHERICAL: {
        quaternion_rotation(e, qk, XJ->R);
        const cg_val zero = cg_const(0.0), one = cg_const(1.0);
        for (int c = 0; c < 3; ++c)
            for (int r = 0; r < 6; ++r) S[6 * c + r] = r == c ? one : zero;
        break;
    }
    case SD_HINGE_FREE: {
        quaternion_rotation(e, qk + 3, XJ->R);
        for (int i = 0; i < 3; ++i) XJ->p[i] = qk[i];
        const cg_val zero = cg_const(0.0), one = cg_const(1.0);
        for (int c = 0; c < 6; ++c)
            for (int r = 0; r < 6; ++r) S[6 * c + r] = r == c ? one : zero;
        break;
    }
    case SD_HINGE_UNIVERSAL: { /* R = R(a1, q0) R(a2, q1); omega = R2^T a1 q0' + a2 q1' */
        cg_val R1[9], a1_body[3];
        axis_angle(e, ax, qk[0], R1);
        axis_angle(e, ax + 3, qk[1], aux);
        cg_m3_mul(e, R1, aux, XJ->R);
        cg_m3t_mul_v(e, aux, a, a1_body);
        const3(ax + 3, a2);
        set_column(S, 0, a1_body, NULL);
        set_column(S, 1, a2, NULL);
        break;
    }
    case SD_HINGE_PLANAR: { /* p = s1 t1 + s2 t2, R = R(n, theta); v_body = R^T t_i s_i' */
        cg_val t1[3], t2[3], t1b[3], t2b[3];
        const3(ax + 3, t1);
        const3(ax + 6, t2);
        axis_angle(e, ax, qk[2], XJ->R);
        for (int i = 0; i < 9; ++i) aux[i] = XJ->R[i];
        for (int i = 0; i < 3; ++i) XJ->p[i] = cg_add(e, cg_mul(e, qk[0], t1[i]), cg_mul(e, qk[1], t2[i]));
        cg_m3t_mul_v(e, XJ->R, t1, t1b);
        cg_m3t_mul_v(e, XJ->R, t2, t2b);
        set_column(S, 0, NULL, t1b);
        set_column(S, 1, NULL, t2b);
        set_column(S, 2, a, NULL);
        break;
    }
    }
}

void cg_hinge_placement(cg_gen *g, int k)
{
    const sd_model *m = g->m;
    cg_node *nd = &g->node[k];
    cg_xform XJ, Xp;
    nd->nk = m->nv_k[k];
    hinge_joint(g, k, &XJ, nd->S, nd->aux);
    if (sd_node_parent_node(m, k) >= 0) { /* riding on a node of its flexible parent */
        cg_attached_placement(g, k, &XJ);
        return;
    }
    cg_xform_const(m->placement[k].R, m->placement[k].p, &Xp);
    cg_xform_compose(&g->e, &Xp, &XJ, &nd->Xup);
}

/* d(H*)/dt u in the body frame (hinge.c sd_hinge_velocity_term): nonzero for universal and planar. */
static void hinge_velocity_term(cg_gen *g, int k, cg_val c[6])
{
    const sd_model *m = g->m;
    cg_emit *e = &g->e;
    const double *ax = m->hinge_axes + 9 * k;
    const cg_val *uk = g->u + m->v_index[k], *aux = g->node[k].aux;
    for (int i = 0; i < 6; ++i) c[i] = cg_const(0.0);
    if (m->hinge[k] == SD_HINGE_UNIVERSAL) { /* d/dt (R2^T a1) = -(a2 q1') x (R2^T a1) */
        cg_val a1[3], a1b[3], w2[3], d[3];
        const3(ax, a1);
        cg_m3t_mul_v(e, aux, a1, a1b);
        for (int i = 0; i < 3; ++i) w2[i] = cg_mul(e, cg_const(ax[3 + i]), uk[1]);
        cg_v3_cross(e, w2, a1b, d);
        for (int i = 0; i < 3; ++i) c[i] = cg_neg(e, cg_mul(e, d[i], uk[0]));
    } else if (m->hinge[k] == SD_HINGE_PLANAR) { /* d/dt (R^T t) = -(n theta') x (R^T t) */
        cg_val t[3], tb[3], w[3], d[3];
        for (int i = 0; i < 3; ++i)
            t[i] = cg_add(e, cg_mul(e, cg_const(ax[3 + i]), uk[0]), cg_mul(e, cg_const(ax[6 + i]), uk[1]));
        cg_m3t_mul_v(e, aux, t, tb);
        for (int i = 0; i < 3; ++i) w[i] = cg_mul(e, cg_const(ax[i]), uk[2]);
        cg_v3_cross(e, w, tb, d);
        for (int i = 0; i < 3; ++i) c[3 + i] = cg_neg(e, d[i]);
    }
}

/* out = H*(k) x for the hinge's nk speeds (or accelerations) x. */
static void hinge_motion(cg_emit *e, const cg_node *nd, const cg_val *x, cg_val out[6])
{
    for (int r = 0; r < 6; ++r) {
        cg_val s = cg_const(0.0);
        for (int j = 0; j < nd->nk; ++j) s = cg_add(e, s, cg_mul(e, nd->S[6 * j + r], x[j]));
        out[r] = s;
    }
}

static void rigid_inertia(const sd_model *m, int k, cg_val ri[13])
{
    for (int i = 0; i < 13; ++i) ri[i] = cg_const(m->rigid[13 * k + i]);
}

/* V(k) = phi*(p, k) V(p) + H* u, a(k) = V x H* u + d(H*)/dt u (001 Eq 26-27; kinematics.c's motion
 * scatter), with the node frame's terms for a node riding on a node of its flexible parent. */
void cg_hinge_velocities(cg_gen *g, int k)
{
    const sd_model *m = g->m;
    cg_emit *e = &g->e;
    cg_node *nd = &g->node[k];
    const int p = m->parent[k];
    cg_val Vp[6], vJ[6], cross[6], hv[6];
    if (p >= 0) cg_motion_to_child(e, &nd->Xup, g->node[p].V, Vp);
    else
        for (int r = 0; r < 6; ++r) Vp[r] = cg_const(0.0);
    hinge_motion(e, nd, g->u + m->v_index[k], vJ);
    for (int r = 0; r < 6; ++r) nd->V[r] = cg_add(e, Vp[r], vJ[r]);
    if (nd->ny) cg_attached_velocity(g, k, nd->V, NULL); /* 001 Eq 12: + Y(k) eta-dot(p) */
    cg_motion_cross(e, nd->V, vJ, cross);
    hinge_velocity_term(g, k, hv);
    for (int r = 0; r < 6; ++r) nd->a[r] = cg_add(e, cross[r], hv[r]);
    if (sd_node_parent_node(m, k) >= 0) cg_attached_velocity(g, k, NULL, nd->a); /* the node frame's acceleration terms */
}

/* b(k) = V x* M V - f_ext(k) (001 Eq 38). */
static void rigid_velocities(cg_gen *g, int k)
{
    const sd_model *m = g->m;
    cg_emit *e = &g->e;
    cg_node *nd = &g->node[k];
    cg_val ri[13], MV[6], gyro[6];
    cg_hinge_velocities(g, k);
    rigid_inertia(m, k, ri);
    cg_rigid_inertia_mul(e, ri, nd->V, MV);
    cg_force_cross(e, nd->V, MV, gyro);
    for (int r = 0; r < 6; ++r) nd->b[r] = cg_sub(e, gyro[r], g->f_ext[6 * k + r]);
}

static void rigid_own_force(cg_gen *g, int k, const cg_val alpha[6], cg_val f[6])
{
    cg_val ri[13], Ma[6];
    rigid_inertia(g->m, k, ri);
    cg_rigid_inertia_mul(&g->e, ri, alpha, Ma);
    for (int r = 0; r < 6; ++r) f[r] = cg_add(&g->e, Ma[r], g->node[k].b[r]);
}

static void rigid_composite_start(cg_gen *g, int k, cg_val R[13]) { rigid_inertia(g->m, k, R); }

static void rigid_articulated_start(cg_gen *g, int k, cg_val P[36])
{
    cg_val ri[13];
    rigid_inertia(g->m, k, ri);
    cg_rigid_inertia_to_sym6(&g->e, ri, P);
}

/* The rotation vector theta n of the quaternion qk, theta in [0, pi] (sd_quat_rotation_vector). */
static void rotation_vector(cg_emit *e, const cg_val *qk, cg_val r[3])
{
    const cg_val sgn = cg_select_negative(e, qk[0], cg_const(-1.0), cg_const(1.0));
    const cg_val w = cg_mul(e, sgn, qk[0]);
    const cg_val s = cg_call1(e, "sqrt", cg_dot(e, qk + 1, qk + 1, 3));
    /* s > 0 ? 2 sgn atan2(s, w) / s : 0, the division guarded by the same choice */
    const cg_val s_or_one = cg_select_positive(e, s, s, cg_const(1.0));
    const cg_val f_raw = cg_div(e, cg_mul(e, cg_mul(e, sgn, cg_const(2.0)), cg_call2(e, "atan2", s, w)), s_or_one);
    const cg_val f = cg_select_positive(e, s, f_raw, cg_const(0.0));
    for (int i = 0; i < 3; ++i) r[i] = cg_mul(e, f, qk[1 + i]);
}

/* tau_passive = -damping u - stiffness (q - spring_ref), a free hinge's -(u x* I_J u), a spherical
 * spring's -stiffness r (joint_dynamics.c sd_passive_hinge). */
void cg_hinge_passive(cg_gen *g, int k, cg_val *out)
{
    const sd_model *m = g->m;
    cg_emit *e = &g->e;
    const int nk = m->nv_k[k], vk = m->v_index[k];
    const cg_val *uk = g->u + vk, *qk = g->q + m->q_index[k];
    for (int i = 0; i < nk; ++i) out[i] = cg_neg(e, cg_mul(e, cg_const(m->damping[vk + i]), uk[i]));
    if (m->hinge[k] == SD_HINGE_FREE) { /* zero armature folds the whole term away */
        const double *J = m->armature + vk;
        cg_val Jw[3], Jv[3], a[3], b[3], c[3];
        for (int i = 0; i < 3; ++i) {
            Jw[i] = cg_mul(e, cg_const(J[i]), uk[i]);
            Jv[i] = cg_mul(e, cg_const(J[3 + i]), uk[3 + i]);
        }
        cg_v3_cross(e, uk, Jw, a);
        cg_v3_cross(e, uk + 3, Jv, b);
        cg_v3_cross(e, uk, Jv, c);
        for (int i = 0; i < 3; ++i) {
            out[i] = cg_sub(e, out[i], cg_add(e, a[i], b[i]));
            out[3 + i] = cg_sub(e, out[3 + i], c[i]);
        }
    }
    if (nk == 0 || m->stiffness[vk] == 0.0) return;
    if (m->hinge[k] == SD_HINGE_SPHERICAL) {
        cg_val r[3];
        rotation_vector(e, qk, r);
        for (int i = 0; i < 3; ++i) out[i] = cg_sub(e, out[i], cg_mul(e, cg_const(m->stiffness[vk + i]), r[i]));
    } else {
        const cg_val dq = cg_sub(e, qk[0], cg_const(m->spring_ref[vk]));
        out[0] = cg_sub(e, out[0], cg_mul(e, cg_const(m->stiffness[vk]), dq));
    }
}

const cg_kind_ops cg_rigid_kind = {
    .placement = cg_hinge_placement,
    .velocities = rigid_velocities,
    .own_force = rigid_own_force,
    .composite_start = rigid_composite_start,
    .articulated_start = rigid_articulated_start,
    .passive = cg_hinge_passive,
};

const cg_kind_ops *cg_kind_of(const sd_model *m, int k)
{
    switch (sd_node_kind_of(m, k)) {
    case SD_NODE_RIGID: return &cg_rigid_kind;
    case SD_NODE_FLEXIBLE: return &cg_flexible_kind;
    default: return NULL; /* an aggregate's operations are not generated */
    }
}
