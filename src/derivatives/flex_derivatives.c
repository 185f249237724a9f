/*
 * src/derivatives/flex_derivatives.c — d tau/dq and d tau/du of the Newton-Euler inverse dynamics
 * over nodes (inverse_dynamics.c; 004 Alg 3.1, 001 Eq 26-40) on models with flexible bodies: the
 * tangent (forward-mode) sweep, one column per direction, O(N) per column.
 *
 * A direction is a speed j: along q it moves q on the tangent space (derivatives.h: a hinge
 * coordinate, a quaternion hinge's rotation vector, or a modal coordinate eta_r, which is its own
 * tangent), along u it moves u_j. Only body kj = v_body[j]'s subtree moves, so the scatter runs over
 * that subtree (contiguous in the preorder) and the gather over it and then kj's path to the base.
 *
 * Every quantity is in its body's axes, as in the sweeps. A variation of the placement Xup(k) of body
 * k in its parent is a twist xi(k) in k's axes applied on the right, Xup' = Xup exp(xi): then for a
 * motion m and a force f
 *     d(Xup^-1 m) = -xi x (Xup^-1 m) + Xup^-1 dm,      d(Xup f) = Xup (xi x* f + df).
 * Along q_j of k's own hinge xi(k) = H*(k) e_j (the hinge moves its child frame along its own
 * speeds: derivatives.h's tangent convention); along a mode eta_r of k's flexible parent p, when k
 * rides on p's node t (Xup = pose(N_t) T, T = node_placement X_J), pose(N_t) moves by zeta = S_t e_r
 * on the right (flex_body.h) and so xi(k) = T^-1 zeta = Y(k) e_r.
 * The variations of the scatter (inverse_dynamics.c, node_flexible.c; the base at rest with the
 * acceleration -g; u_k, qdd_k the hinge's speeds and accelerations, vJ = H* u_k):
 *     dV(k) = -xi x Xup^-1 V(p) + Xup^-1 dV(p) + dY eta-dot_p + Y deta-dot_p + dH* u_k + H* du_k
 *     da(k) = dV x vJ + V x dvJ + d(d(H*)/dt u_k) [+ d(T^-1 z) for a child on a node, below]
 *     dalpha(k) = -xi x Xup^-1 alpha(p) + Xup^-1 dalpha(p) + da + dY eta-ddot_p + dH* qdd_k
 * with dH* and the velocity term's variations from the hinge (hinge_partials.c) and, for a child on a
 * node, z = c_N + V_N x w (w = S_t eta-dot_p, V_N = pose(N)^-1 V(p) + w; node_flexible.c), so
 *     dz = dc_N + dV_N x w + V_N x dw,   dw = dS_t eta-dot_p + S_t deta-dot_p,
 *     dV_N = -zeta x pose(N)^-1 V(p) + pose(N)^-1 dV(p) + dw,
 *     d(T^-1 z) = -xi_T x T^-1 z + T^-1 dz   (xi_T = xi(k) along k's own hinge, else 0),
 *     dY = -xi x Y along k's own hinge, T^-1 dS_t along p's modes (Y = T^-1 S_t),
 * dS_t and dc_N being the flexible kind's node tangent (flex_tangent.c). Each node's own force is its
 * kind's (node_kinds.h): a rigid body's f = I alpha + V x* I V - f_ext varies by
 *     df = I dalpha + dV x* I V + V x* I dV,
 * a flexible body's f_m = M_m alpha_m + b_m (+ K_m eta + D_m eta-dot) by
 *     df_m = dM_m alpha_m + M_m [dalpha; 0] + db_m + [0; K_m deta + D_m deta-dot],
 * dM_m, db_m from the flexible kind's tangent (flex_tangent.c). The gather (001 Eq 38, 43):
 *     df(p) += Xup (xi x* f(k) + df(k)),   df_m^f(p) += dY^T f(k) + Y^T df(k)   (k on p's node),
 *     dT_hinge(k) = dH*^T f(k) + H*^T df(k),   dT_modes(k) = df_m^f(k),
 * with f(k), f_m the inverse dynamics' own (the whole subtree's) forces. The joint-level terms
 * (damping, springs, a free hinge's armature) are hinge_partials.c's.
 */
#include <string.h>

#include "algorithms/node_kinds.h"
#include "derivatives_internal.h"
#include "flex/flex_body.h"
#include "flex_derivatives.h"

/* The per-column scratch, carved from the caller's block (sd_deriv_nodes_scratch_doubles). */
typedef struct tangent_scratch {
    double *dV, *dA, *dF; /* 6 per body: the variations of V, alpha, f (rigid parts, body axes) */
    double *xi;           /* 6 per body: the variation of Xup */
    double *dY;           /* att_total: the variation of Y(k) of every child on a node */
    double *col;          /* nv: the column of d tau */
    double *e, *zero;     /* max_dim each: a unit modal vector, zeros */
    double *dMm, *dbm;    /* max_dim^2, max_dim: a flexible node's dM_m, db_m */
    double *St, *dSt;     /* 6 max_dim each: S_t and its variation */
} tangent_scratch;

size_t sd_deriv_nodes_scratch_doubles(const sd_model *m, const sd_data *d)
{
    const struct sd_node_data *nd = d->nodes;
    const size_t n = (size_t)m->n, md = (size_t)nd->max_dim;
    return 24 * n + (size_t)nd->att_total + (size_t)m->nv + 2 * md + md * md + md + 12 * md;
}

static void scratch_from(const sd_model *m, const sd_data *d, double *block, tangent_scratch *s)
{
    const struct sd_node_data *nd = d->nodes;
    const size_t n = (size_t)m->n, md = (size_t)nd->max_dim;
    s->dV = block;
    s->dA = s->dV + 6 * n;
    s->dF = s->dA + 6 * n;
    s->xi = s->dF + 6 * n;
    s->dY = s->xi + 6 * n;
    s->col = s->dY + nd->att_total;
    s->e = s->col + m->nv;
    s->zero = s->e + md;
    s->dMm = s->zero + md;
    s->dbm = s->dMm + md * md;
    s->St = s->dbm + md;
    s->dSt = s->St + 6 * md;
}

/* The direction of one column: speed j along q (along_u = 0) or along u. */
typedef struct direction {
    int j, along_u;
} direction;

/* Where the direction enters body k: the index of j among k's hinge speeds, among k's own modes,
 * among its flexible parent's modes when k rides on one of its nodes (-1: not there). */
typedef struct local_seed {
    int hinge, own_mode, parent_mode;
} local_seed;

static local_seed seed_at(const sd_model *m, const struct sd_node_data *nd, int k, int j)
{
    local_seed ls = {-1, -1, -1};
    const int i = j - m->v_index[k];
    if (i >= 0 && i < m->nv_k[k]) ls.hinge = i;
    const int nmk = sd_node_nmodes(m, k), r = nmk ? j - m->mode_v_index[k] : -1;
    if (r >= 0 && r < nmk) ls.own_mode = r;
    if (sd_node_is_attached(nd, k)) {
        const int p = m->parent[k], rp = j - m->mode_v_index[p];
        if (rp >= 0 && rp < sd_node_nmodes(m, p)) ls.parent_mode = rp;
    }
    return ls;
}

static void add_scaled(double *y, const double *x, double a, int n)
{
    for (int i = 0; i < n; ++i) y[i] += a * x[i];
}

/* ---- the node kinds' tangent operations: a node's own force, and a child on a node ---- */

/* df = I dalpha + dV x* I V + V x* I dV (a rigid body; f_ext is constant in its frame). */
static void rigid_own_force_tangent(const sd_model *m, const sd_data *d, const tangent_scratch *s, int k,
                                    const direction *dir, const local_seed *ls, double df[6])
{
    (void)dir;
    (void)ls;
    const double *ri = m->rigid + 13 * k, *V = d->V + 6 * k, *dV = s->dV + 6 * k;
    double IdA[6], IV[6], IdV[6], t1[6], t2[6];
    sd_rigid_inertia_mul(ri, s->dA + 6 * k, IdA);
    sd_rigid_inertia_mul(ri, V, IV);
    sd_rigid_inertia_mul(ri, dV, IdV);
    sd_force_cross(dV, IV, t1);
    sd_force_cross(V, IdV, t2);
    for (int r = 0; r < 6; ++r) df[r] = IdA[r] + t1[r] + t2[r];
}

/* df_m = dM_m alpha_m + M_m [dalpha; 0] + db_m + [0; K_m deta + D_m deta-dot]: the rigid part into
 * df, the modal part added to the column's rows of the body's modes. */
static void flexible_own_force_tangent(const sd_model *m, const sd_data *d, const tangent_scratch *s, int k,
                                       const direction *dir, const local_seed *ls, double df[6])
{
    const struct sd_node_data *nd = d->nodes;
    const sd_flex_body *fb = m->flex[k];
    const int dim = nd->dim[k], nm = dim - 6;
    const double *Mm = nd->Mm + nd->mat_off[k], *Vm = nd->Vm + nd->vec_off[k], *alpha_m = nd->alpha_m + nd->vec_off[k];
    const double *eta = nd->q + m->mode_q_index[k], *dA = s->dA + 6 * k;
    const double *deta = NULL, *deta_dot = NULL;
    if (ls->own_mode >= 0) {
        memset(s->e, 0, (size_t)nm * sizeof(double));
        s->e[ls->own_mode] = 1.0;
        if (dir->along_u) deta_dot = s->e;
        else deta = s->e;
    }
    sd_flex_mass_bias_tangent(fb, eta, Vm + 6, Vm, deta, deta_dot, s->dV + 6 * k, s->dMm, s->dbm);
    double *out = s->St; /* dim numbers of scratch (S_t is not in use here) */
    for (int i = 0; i < dim; ++i) {
        double v = s->dbm[i];
        for (int c = 0; c < dim; ++c) v += s->dMm[i * dim + c] * alpha_m[c];
        for (int c = 0; c < 6; ++c) v += Mm[i * dim + c] * dA[c];
        out[i] = v;
    }
    if (nm && (deta || deta_dot)) { /* K_m eta + D_m eta-dot is linear: its variation is itself of the variations */
        double *fe = s->dSt;
        sd_flex_elastic(fb, deta ? deta : s->zero, deta_dot ? deta_dot : s->zero, fe);
        add_scaled(out + 6, fe, 1.0, nm);
    }
    memcpy(df, out, 6 * sizeof(double));
    add_scaled(s->col + m->mode_v_index[k], out + 6, 1.0, nm);
}

/* The node kinds' tangent operations (node_engine.h's kinds), read by the sweep below: the sweep
 * asks a node's kind for the variation of its own force and does not test kinds itself. */
typedef void (*own_force_tangent_fn)(const sd_model *m, const sd_data *d, const tangent_scratch *s, int k,
                                     const direction *dir, const local_seed *ls, double df[6]);
static const own_force_tangent_fn own_force_tangent[] = {
    [SD_NODE_RIGID] = rigid_own_force_tangent,
    [SD_NODE_FLEXIBLE] = flexible_own_force_tangent,
};

/* A child k on node t of its flexible parent p: dY(k) into s->dY, xi(k) when it comes from p's
 * modes, and the variation of the node frame's acceleration term d(T^-1 z) into da_node (the file
 * comment). eta-dot_p, its variation: p's modal speeds. */
static void attached_tangent(const sd_model *m, const sd_data *d, const tangent_scratch *s, int k,
                             const direction *dir, const local_seed *ls, const double *q, const double *u,
                             double xi[6], double da_node[6])
{
    const struct sd_node_data *nd = d->nodes;
    const int p = m->parent[k], t = m->parent_node[k], nmp = sd_node_nmodes(m, p);
    const sd_flex_body *fb = m->flex[p];
    const double *eta = q + m->mode_q_index[p], *eta_dot = u + m->mode_v_index[p];
    const double *Y = nd->Y + nd->att_off[k];
    double *dY = s->dY + nd->att_off[k];
    sd_transform XJ, T, N;
    double Sk[36], cN[6], dcN[6] = {0, 0, 0, 0, 0, 0}, zeta[6] = {0, 0, 0, 0, 0, 0};
    sd_hinge_transform(m, k, q + m->q_index[k], &XJ, Sk);
    sd_transform_compose(&m->node_placement[k], &XJ, &T);
    sd_flex_node_motion(fb, t, eta, eta_dot, &N, s->St, cN);
    memset(s->dSt, 0, 6 * (size_t)nmp * sizeof(double));
    const double *deta = NULL, *deta_dot = NULL;
    if (ls->parent_mode >= 0) {
        memset(s->e, 0, (size_t)nmp * sizeof(double));
        s->e[ls->parent_mode] = 1.0;
        if (dir->along_u) deta_dot = s->e;
        else deta = s->e;
        sd_flex_node_tangent(fb, t, eta, eta_dot, deta, deta_dot, deta ? s->dSt : NULL, dcN);
        if (deta) {
            memcpy(zeta, s->St + 6 * ls->parent_mode, 6 * sizeof(double)); /* zeta = S_t e_r */
            memcpy(xi, Y + 6 * ls->parent_mode, 6 * sizeof(double));      /* xi = T^-1 zeta = Y e_r */
        }
    }
    /* dY: -xi x Y along k's own hinge, T^-1 dS_t along p's modes, else 0 */
    const int own_q = !dir->along_u && ls->hinge >= 0;
    for (int r = 0; r < nmp; ++r) {
        if (own_q) {
            sd_motion_cross(xi, Y + 6 * r, dY + 6 * r);
            for (int i = 0; i < 6; ++i) dY[6 * r + i] = -dY[6 * r + i];
        } else {
            sd_motion_to_child(&T, s->dSt + 6 * r, dY + 6 * r);
        }
    }
    /* z = c_N + V_N x w and its variation */
    const double *Vp = d->V + 6 * p, *dVp = s->dV + 6 * p;
    double w[6] = {0, 0, 0, 0, 0, 0}, dw[6] = {0, 0, 0, 0, 0, 0}, VNp[6], VN[6], dVN[6], t1[6], t2[6];
    for (int r = 0; r < nmp; ++r) {
        add_scaled(w, s->St + 6 * r, eta_dot[r], 6);
        add_scaled(dw, s->dSt + 6 * r, eta_dot[r], 6);
        if (deta_dot) add_scaled(dw, s->St + 6 * r, deta_dot[r], 6);
    }
    sd_motion_to_child(&N, Vp, VNp);
    sd_motion_cross(zeta, VNp, t1);
    sd_motion_to_child(&N, dVp, t2);
    for (int i = 0; i < 6; ++i) {
        VN[i] = VNp[i] + w[i];
        dVN[i] = -t1[i] + t2[i] + dw[i];
    }
    double z[6], dz[6];
    sd_motion_cross(VN, w, t1);
    for (int i = 0; i < 6; ++i) z[i] = cN[i] + t1[i];
    sd_motion_cross(dVN, w, t1);
    sd_motion_cross(VN, dw, t2);
    for (int i = 0; i < 6; ++i) dz[i] = dcN[i] + t1[i] + t2[i];
    /* d(T^-1 z) = -xi_T x T^-1 z + T^-1 dz */
    double Tz[6];
    sd_motion_to_child(&T, dz, da_node);
    if (own_q) {
        sd_motion_to_child(&T, z, Tz);
        sd_motion_cross(xi, Tz, t1);
        for (int i = 0; i < 6; ++i) da_node[i] -= t1[i];
    }
}

/* Body k of the moving subtree: xi(k), dV(k), dalpha(k), then its own df (its kind's). p's variations
 * are zero when p is outside the subtree (k = kj). */
static void scatter_body(const sd_model *m, const sd_data *d, const tangent_scratch *s, int k, int kj,
                         const direction *dir, const double *q, const double *u, const double *qdd, const double a0[6])
{
    const struct sd_node_data *nd = d->nodes;
    static const double zero6[6] = {0, 0, 0, 0, 0, 0};
    const int p = m->parent[k], vk = m->v_index[k], nk = m->nv_k[k];
    const local_seed ls = seed_at(m, nd, k, dir->j);
    const double *Vp = p >= 0 ? d->V + 6 * p : zero6, *Ap = p >= 0 ? d->alpha + 6 * p : a0;
    const double *dVp = k != kj ? s->dV + 6 * p : zero6, *dAp = k != kj ? s->dA + 6 * p : zero6;
    const double *S = d->S + 6 * vk, *V = d->V + 6 * k;
    double *xi = s->xi + 6 * k, *dV = s->dV + 6 * k, *dA = s->dA + 6 * k;
    memset(xi, 0, 6 * sizeof(double));
    /* the hinge's own variations: dH*, d(d(H*)/dt u) (hinge_partials.c), du */
    double dS[36] = {0}, dSdot_q[6] = {0}, dSdot_u[6] = {0}, dvJ[6] = {0, 0, 0, 0, 0, 0}, dSdot[6] = {0, 0, 0, 0, 0, 0};
    double dSqdd[6] = {0, 0, 0, 0, 0, 0};
    if (ls.hinge >= 0) {
        if (d->hinge_sel[k] == SD_HINGE_SEL_VARYING)
            sd_deriv_hinge_partials(m, d, k, ls.hinge, u + vk, dS, dSdot_q, dSdot_u);
        if (dir->along_u) {
            add_scaled(dvJ, S + 6 * ls.hinge, 1.0, 6);
            memcpy(dSdot, dSdot_u, sizeof dSdot);
        } else {
            memcpy(xi, S + 6 * ls.hinge, 6 * sizeof(double));
            for (int c = 0; c < nk; ++c) {
                add_scaled(dvJ, dS + 6 * c, u[vk + c], 6);
                add_scaled(dSqdd, dS + 6 * c, qdd[vk + c], 6);
            }
            memcpy(dSdot, dSdot_q, sizeof dSdot);
        }
    }
    double da_node[6] = {0, 0, 0, 0, 0, 0};
    if (sd_node_is_attached(nd, k)) attached_tangent(m, d, s, k, dir, &ls, q, u, xi, da_node);
    /* dV = -xi x Xup^-1 V(p) + Xup^-1 dV(p) + dY eta-dot_p + Y deta-dot_p + dvJ */
    double Vpc[6], Apc[6], t1[6], t2[6];
    sd_motion_to_child(&d->Xup[k], Vp, Vpc);
    sd_motion_to_child(&d->Xup[k], Ap, Apc);
    sd_motion_cross(xi, Vpc, t1);
    sd_motion_to_child(&d->Xup[k], dVp, t2);
    for (int i = 0; i < 6; ++i) dV[i] = -t1[i] + t2[i] + dvJ[i];
    double dYqdd[6] = {0, 0, 0, 0, 0, 0};
    if (sd_node_is_attached(nd, k)) {
        const int nmp = sd_node_nmodes(m, p), mv = m->mode_v_index[p];
        const double *dY = s->dY + nd->att_off[k], *Y = nd->Y + nd->att_off[k];
        for (int r = 0; r < nmp; ++r) {
            add_scaled(dV, dY + 6 * r, u[mv + r], 6);
            add_scaled(dYqdd, dY + 6 * r, qdd[mv + r], 6);
        }
        if (dir->along_u && ls.parent_mode >= 0) add_scaled(dV, Y + 6 * ls.parent_mode, 1.0, 6);
    }
    /* da = dV x vJ + V x dvJ + dSdot + d(T^-1 z); dalpha = -xi x Xup^-1 alpha(p) + Xup^-1 dalpha(p) + da
     * + dY eta-ddot_p + dH* qdd */
    double vJ[6], c1[6], c2[6];
    sd_hinge_motion(m, d, k, u, vJ);
    sd_motion_cross(dV, vJ, c1);
    sd_motion_cross(V, dvJ, c2);
    sd_motion_cross(xi, Apc, t1);
    sd_motion_to_child(&d->Xup[k], dAp, t2);
    for (int i = 0; i < 6; ++i)
        dA[i] = c1[i] + c2[i] + dSdot[i] + da_node[i] - t1[i] + t2[i] + dYqdd[i] + dSqdd[i];
    own_force_tangent[sd_node_is_flexible(m, nd, k) ? SD_NODE_FLEXIBLE : SD_NODE_RIGID](m, d, s, k, dir, &ls,
                                                                                       s->dF + 6 * k);
}

/* Body k's rows of the column and its share in its parent's: dT_hinge(k) = dH*^T f + H*^T df, and
 * df(p) += Xup (xi x* f + df), df_m^f(p) += dY^T f + Y^T df on a node. Along u and outside the
 * subtree xi, dH* and dY are zero. */
static void gather_body(const sd_model *m, const sd_data *d, const tangent_scratch *s, int k, int in_subtree,
                        const direction *dir)
{
    const struct sd_node_data *nd = d->nodes;
    const int p = m->parent[k], vk = m->v_index[k];
    const double *f = d->f + 6 * k, *df = s->dF + 6 * k, *S = d->S + 6 * vk;
    const local_seed ls = seed_at(m, nd, k, dir->j);
    const int own_q = in_subtree && !dir->along_u && ls.hinge >= 0 && d->hinge_sel[k] == SD_HINGE_SEL_VARYING;
    double dS[36] = {0}, dSdot_q[6], dSdot_u[6]; /* 6 columns: a free hinge's (zero: its H* is constant) */
    if (own_q) sd_deriv_hinge_partials(m, d, k, ls.hinge, d->nodes->u + vk, dS, dSdot_q, dSdot_u);
    for (int i = 0; i < m->nv_k[k]; ++i) s->col[vk + i] = sd_s6_dot(S + 6 * i, df) + sd_s6_dot(dS + 6 * i, f);
    if (p < 0) return;
    double g[6], gp[6];
    const double *xi = s->xi + 6 * k;
    if (in_subtree) sd_force_cross(xi, f, g);
    else memset(g, 0, sizeof g);
    for (int i = 0; i < 6; ++i) g[i] += df[i];
    sd_force_to_parent(&d->Xup[k], g, gp);
    add_scaled(s->dF + 6 * p, gp, 1.0, 6);
    if (sd_node_is_attached(nd, k)) {
        const double *Y = nd->Y + nd->att_off[k], *dY = s->dY + nd->att_off[k];
        double *colp = s->col + m->mode_v_index[p];
        for (int r = 0; r < sd_node_nmodes(m, p); ++r)
            colp[r] += sd_s6_dot(Y + 6 * r, df) + (in_subtree ? sd_s6_dot(dY + 6 * r, f) : 0.0);
    }
}

void sd_deriv_nodes_inverse_dynamics(const sd_model *m, sd_data *d, const double *q, const double *u,
                                     const double *qdd, double *scratch, double *dtau_dq, double *dtau_du,
                                     size_t ld)
{
    tangent_scratch s;
    scratch_from(m, d, scratch, &s);
    memset(s.zero, 0, (size_t)d->nodes->max_dim * sizeof(double));
    double a0[6];
    sd_base_acceleration(m, a0);
    const int nv = m->nv;
    for (int along_u = 0; along_u < 2; ++along_u) {
        double *out = along_u ? dtau_du : dtau_dq;
        if (!out) continue;
        for (int j = 0; j < nv; ++j) {
            const direction dir = {j, along_u};
            const int kj = m->v_body[j], end = m->subtree_end[kj];
            memset(s.col, 0, (size_t)nv * sizeof(double));
            for (int k = kj; k < end; ++k) scatter_body(m, d, &s, k, kj, &dir, q, u, qdd, a0);
            for (int a = m->parent[kj]; a >= 0; a = m->parent[a]) memset(s.dF + 6 * a, 0, 6 * sizeof(double));
            for (int k = end - 1; k >= kj; --k) gather_body(m, d, &s, k, 1, &dir);
            for (int a = m->parent[kj]; a >= 0; a = m->parent[a]) gather_body(m, d, &s, a, 0, &dir);
            for (int i = 0; i < nv; ++i) out[(size_t)i * ld + j] = s.col[i];
        }
    }
    sd_deriv_joint_terms(m, q, u, dtau_dq, dtau_du, ld);
}

/* ---- the forward dynamics derivatives on the node engine (derivatives.c's identities) ---- */

/* X = -M^-1 X column by column for the nv x nv row-major X, by the articulated-body factors of the
 * last sd_articulated_inertias (004 Eq 51, node engine: O(N) per column); col: nv doubles. */
static sd_status solve_columns(const sd_model *m, sd_data *d, double *X, double *col)
{
    const int nv = m->nv;
    for (int j = 0; j < nv; ++j) {
        for (int i = 0; i < nv; ++i) col[i] = X[(size_t)i * nv + j];
        const sd_status st = sd_mass_matrix_solve(m, d, col, col);
        if (st != SD_OK) return st;
        for (int i = 0; i < nv; ++i) X[(size_t)i * nv + j] = -col[i];
    }
    return SD_OK;
}

size_t sd_deriv_nodes_forward_scratch_doubles(const sd_model *m, const sd_data *d)
{
    return sd_deriv_nodes_scratch_doubles(m, d) + 2 * (size_t)m->nv;
}

sd_status sd_deriv_nodes_forward_dynamics(const sd_model *m, sd_data *d, const double *q, const double *u,
                                          const double *tau, const double *f_ext, double *qdd, double *dqdd_dq,
                                          double *dqdd_du, double *dqdd_dtau, double *scratch)
{
    double *spare = scratch + sd_deriv_nodes_scratch_doubles(m, d), *col = spare + m->nv;
    sd_status st = sd_forward_dynamics(m, d, q, u, tau, f_ext, qdd);
    if (st != SD_OK) return st;
    if (dqdd_dtau && (st = sd_mass_matrix_inverse(m, d, q, dqdd_dtau)) != SD_OK) return st;
    if (!dqdd_dq && !dqdd_du) return SD_OK;
    /* d qdd/dx = -M^-1 d tau/dx at qdd = FD(tau): the tangent sweep at the inverse dynamics at qdd,
     * then M^-1 by the articulated-body factors; last, the inverse dynamics at qdd again, the state
     * derivatives.h says the workspace's readers see (O(N), against the O(N nv) above) */
    if ((st = sd_inverse_dynamics(m, d, q, u, qdd, f_ext, spare)) != SD_OK) return st;
    sd_deriv_nodes_inverse_dynamics(m, d, q, u, qdd, scratch, dqdd_dq, dqdd_du, (size_t)m->nv);
    if ((st = sd_articulated_inertias(m, d, q)) != SD_OK) return st;
    if (dqdd_dq && (st = solve_columns(m, d, dqdd_dq, col)) != SD_OK) return st;
    if (dqdd_du && (st = solve_columns(m, d, dqdd_du, col)) != SD_OK) return st;
    return sd_inverse_dynamics(m, d, q, u, qdd, f_ext, spare);
}
