/*
 * src/algorithms/node_articulated.c — the node engine's articulated-body algorithms (node_engine.h):
 * the Riccati gather over nodes of any size with the split of modal and hinge coordinates of
 * 001 Eq 62 (each flexible node eliminates its modes first, then its hinge), the residual gather and
 * acceleration scatter of 001 Eq 63, prescribed hinges and inter-body forces from the by-products
 * (000 Sec 3, Eq 32-41), the articulated inertias alone, and det M = prod det D_f(k) det D_R(k)
 * (004 Cor 6.1 on the split chain of 001 Sec 5). Joint-level dynamics as the rigid fast path
 * (dynamics.h): a hinge's armature J adds to D_R, its passive force tau_passive to its T.
 *
 * Why the split. 001 Sec 5 replaces each flexible body by two: the body itself, carrying its modal
 * coordinates, and a massless body of zero extent at F_k carrying the hinge (soadyn's hinge acts on
 * F_k: 001 Eq 15 with Pi^d_F = 0, H(k) = diag(H_hinge, I)). The modes are then eliminated by an
 * nm x nm step and the hinge by an nv_k x nv_k one instead of one (nm + nv_k)^2 step, and what the
 * parent receives is a 6x6 P_R+ and a 6-vector z_R+, as from any rigid child.
 *
 * Glossary (node k of dimension n = 6 + nm, node vectors [rigid 6; modal nm], internal.h for the rest):
 *   P(k)      nd->P: M_m(k) + sum over children c of phi(k, c) P_R+(c) phi*(k, c)     (001 Eq 62)
 *   D_f(k)    P^ff(k), its Cholesky factor in nd->Dfchol (nm x nm)
 *   g(k)      P^rf D_f^-1 in nd->g (6 x nm, row-major)
 *   P_R(k)    P^rr - g P^fr, in d->P (the hinge's articulated inertia, as for a rigid body)
 *   D_R, G_R  the hinge's D and gain, in d->Dchol, d->Dinv, d->U, d->G as for a rigid body
 *   P_R+(k)   P_R - G_R D_R G_R*, in d->Pplus (P_R itself for a prescribed hinge)
 *   z(k)      nd->zm: b_m(k) (elastic, damping and minus f_ext included) + sum phi(k, c) z_R+(c)
 *   eps_f, nu_f  T_f - z_f and D_f^-1 eps_f per modal speed (nd->eps_f, nd->nu_f, indexed like u)
 *   z_R(k)    z_r + g eps_f + P_R a(k) in d->z; z_R+ = z_R + G_R eps_R in d->zplus  (001 Eq 63)
 *   alpha_R+  phi*(parent, k) alpha_m(parent) = Xup* alpha(parent) + Y(k) eta-ddot(parent), d->alpha_plus
 * phi(k, c) carries a child's rigid 6-quantity into the parent's node space: [Xup force; Y(c)^T]
 * (node_engine.h "parent force"), so P(k) receives [X P X^T, X P Y; Y^T P X^T, Y^T P Y].
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "node_engine.h"

/* A pivot of D_f or D_R below this times the scale of the inertia it came from is round-off: the
 * mass matrix is singular there (the rigid fast path's first test, forward_dynamics.c). */
static const double singular_tol = 1e-13;

/* ---------------------------------------------------------------- the node operations */

/* out = phi*(parent, c) x_m: the rigid motion at child c of its parent's node vector x_m
 * (node_engine.h "child motion"): Xup* x + Y(c) x_modal. */
static void child_motion(const sd_model *m, const sd_data *d, int c, const double *xp, double out[6])
{
    const struct sd_node_data *nd = d->nodes;
    sd_motion_to_child(&d->Xup[c], xp, out);
    const int off = nd->att_off[c];
    if (off < 0) return;
    const int nmp = m->n_modes[m->parent[c]];
    const double *Y = nd->Y + off;
    for (int r = 0; r < nmp; ++r)
        for (int i = 0; i < 6; ++i) out[i] += Y[6 * r + i] * xp[6 + r];
}

/* acc_m += phi(parent, c) f: a child's rigid force in its parent's node space (the transpose). */
static void force_to_parent_node(const sd_model *m, const sd_data *d, int c, const double f[6], double *acc)
{
    const struct sd_node_data *nd = d->nodes;
    double fp[6];
    sd_force_to_parent(&d->Xup[c], f, fp);
    for (int i = 0; i < 6; ++i) acc[i] += fp[i];
    const int off = nd->att_off[c];
    if (off < 0) return;
    const int nmp = m->n_modes[m->parent[c]];
    const double *Y = nd->Y + off;
    for (int r = 0; r < nmp; ++r) acc[6 + r] += sd_s6_dot(Y + 6 * r, f);
}

/* Pp += phi(parent, c) Pc phi*(parent, c) for a child's symmetric 6x6 Pc (in the child's frame),
 * Pp the parent's node matrix of dimension np: the rigid block by the fixed-size kernel, the blocks
 * that touch the parent's modes through W = Pc Y(c). */
static void inertia_to_parent_node(const sd_data *d, int c, const double Pc[36], double *Pp,
                                   int np)
{
    const struct sd_node_data *nd = d->nodes;
    if (np == 6) {
        sd_sym6_add_to_parent(&d->Xup[c], Pc, Pp);
        return;
    }
    double rr[36] = {0};
    sd_sym6_add_to_parent(&d->Xup[c], Pc, rr);
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) Pp[i * np + j] += rr[6 * i + j];
    const int off = nd->att_off[c];
    if (off < 0) return;
    const int nmp = np - 6;
    const double *Y = nd->Y + off;
    for (int r = 0; r < nmp; ++r) {
        double w[6], wp[6];
        sd_sym6_mul(Pc, Y + 6 * r, w); /* column r of W = Pc Y */
        sd_force_to_parent(&d->Xup[c], w, wp); /* column r of X W: the rigid-modal block */
        for (int i = 0; i < 6; ++i) {
            Pp[i * np + 6 + r] += wp[i];
            Pp[(6 + r) * np + i] += wp[i];
        }
        for (int s = 0; s <= r; ++s) { /* Y^T W, symmetric */
            const double v = sd_s6_dot(Y + 6 * s, w);
            Pp[(6 + s) * np + 6 + r] += v;
            if (s != r) Pp[(6 + r) * np + 6 + s] += v;
        }
    }
}

/* ---------------------------------------------------------------- the Riccati step */

SD_COLD static sd_status singular_modes(const sd_model *m, sd_data *d, int k)
{
    return sd_data_fail(d, SD_E_SINGULAR,
                        "body '%s': the articulated inertia of its modes D_f(k) is singular (001 Eq 62; modes "
                        "without mass)",
                        m->desc[k].name);
}

/* Eliminate node k's modes (001 Eq 62): D_f = P^ff factored, g = P^rf D_f^-1, P_R = P^rr - g P^fr
 * into PR (6x6). A rigid node's P_R is its P. */
static sd_status eliminate_modes(const sd_model *m, sd_data *d, int k, double PR[36])
{
    struct sd_node_data *nd = d->nodes;
    const int n = nd->dim[k], nm = n - 6;
    const double *P = nd->P + nd->mat_off[k];
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) PR[6 * i + j] = P[i * n + j];
    if (nm == 0) return SD_OK;
    double *L = nd->Dfchol + nd->mat_off[k], *g = nd->g + nd->mat_off[k], scale = 0.0;
    for (int i = 0; i < nm; ++i) {
        for (int j = 0; j < nm; ++j) L[i * nm + j] = P[(6 + i) * n + 6 + j];
        scale = fabs(L[i * nm + i]) > scale ? fabs(L[i * nm + i]) : scale;
    }
    if (!(scale > 0.0) || sd_cholesky_factor(L, nm, singular_tol * scale) >= 0) return singular_modes(m, d, k);
    for (int r = 0; r < 6; ++r) { /* row r of g: D_f^-1 P^fr e_r (D_f symmetric) */
        double *gr = g + r * nm;
        for (int i = 0; i < nm; ++i) gr[i] = P[(6 + i) * n + r];
        sd_cholesky_solve(L, nm, gr);
    }
    for (int r = 0; r < 6; ++r) /* P_R = P^rr - g P^fr, symmetric: upper half mirrored */
        for (int c = r; c < 6; ++c) {
            double v = PR[6 * r + c];
            for (int i = 0; i < nm; ++i) v -= g[r * nm + i] * P[(6 + i) * n + c];
            PR[6 * r + c] = PR[6 * c + r] = v;
        }
    return SD_OK;
}

/* The hinge's projection on P_R (001 Eq 62, the rigid body's 004 Eq 33): D_R = H P_R H* + J, factored
 * into d->Dchol, inverted into d->Dinv, U = P_R H*, G_R = U D_R^-1, P_R+ = P_R - G_R U*. */
static sd_status project_hinge(const sd_model *m, sd_data *d, int k, const double PR[36], double Pplus[36])
{
    const int nk = m->nv_k[k], vk = m->v_index[k];
    const double *S = d->S + 6 * vk;
    double *U = d->U + 6 * vk, *G = d->G + 6 * vk, *L = d->Dchol + 36 * k, *Dinv = d->Dinv + 36 * k;
    double pscale = 0.0;
    for (int i = 0; i < 6; ++i) pscale = fabs(PR[7 * i]) > pscale ? fabs(PR[7 * i]) : pscale;
    for (int i = 0; i < nk; ++i) sd_sym6_mul(PR, S + 6 * i, U + 6 * i);
    for (int i = 0; i < nk; ++i) /* D_R = H U + J, J the hinge's armature (dynamics.h) */
        for (int j = 0; j < nk; ++j)
            L[i * nk + j] = sd_s6_dot(S + 6 * i, U + 6 * j) + (i == j && m->has_armature ? m->armature[vk + i] : 0.0);
    if (!(pscale > 0.0) || sd_cholesky_factor(L, nk, singular_tol * pscale) >= 0) return sd_singular_hinge(m, d, k, 0);
    for (int i = 0; i < nk * nk; ++i) Dinv[i] = L[i];
    sd_cholesky_inverse(Dinv, nk);
    for (int i = 0; i < nk; ++i)
        if (!(fabs(Dinv[i * nk + i]) <= DBL_MAX)) return sd_singular_hinge(m, d, k, 1);
    for (int r = 0; r < 6; ++r)
        for (int i = 0; i < nk; ++i) {
            double s = 0.0;
            for (int j = 0; j < nk; ++j) s += U[6 * j + r] * Dinv[j * nk + i];
            G[6 * i + r] = s;
        }
    for (int r = 0; r < 6; ++r)
        for (int c = r; c < 6; ++c) {
            double v = PR[6 * r + c];
            for (int i = 0; i < nk; ++i) v -= G[6 * i + r] * U[6 * i + c];
            Pplus[6 * r + c] = Pplus[6 * c + r] = v;
        }
    return SD_OK;
}

/* The Riccati gather over the nodes (001 Eq 62; 000 Eq 32-33 for prescribed hinges, whose P_R+ is
 * P_R), at the node masses of the last sd_update_motion. P(k) starts as M_m(k) and receives each
 * child's P_R+ as the child is done (children have larger indices). */
static sd_status node_riccati(const sd_model *m, sd_data *d, const unsigned char *prescribed)
{
    struct sd_node_data *nd = d->nodes;
    memcpy(nd->P, nd->Mm, (size_t)nd->mat_total * sizeof(double));
    for (int k = m->n - 1; k >= 0; --k) {
        double *PR = d->P + 36 * k, *Pplus = d->Pplus + 36 * k;
        sd_status st = eliminate_modes(m, d, k, PR);
        if (st != SD_OK) return st;
        if ((prescribed && prescribed[k]) || m->nv_k[k] == 0) memcpy(Pplus, PR, 36 * sizeof(double));
        else if ((st = project_hinge(m, d, k, PR, Pplus)) != SD_OK) return st;
        const int p = m->parent[k];
        if (p >= 0) inertia_to_parent_node(d, k, Pplus, nd->P + nd->mat_off[p], nd->dim[p]);
    }
    return SD_OK;
}

/* ---------------------------------------------------------------- forward dynamics */

sd_status sd_nodes_forward_dynamics(const sd_model *m, sd_data *d, const double *q, const double *u, double *tau,
                                    const double *f_ext, double *qdd, const sd_fd_options *options)
{
    struct sd_node_data *nd = d->nodes;
    const unsigned char *pres = options ? options->prescribed : NULL;
    const int want_forces = options && options->interbody_forces;
    sd_update_motion(m, d, q, u, f_ext, want_forces); /* Xup, Y, S, V_m, a_m, b_m, M_m */
    sd_status st = node_riccati(m, d, pres);
    if (st != SD_OK) return st;
    /* the residual gather (001 Eq 63): z(k) starts as b_m(k) and receives each child's z_R+ */
    memcpy(nd->zm, nd->bm, (size_t)nd->vec_total * sizeof(double));
    for (int k = m->n - 1; k >= 0; --k) {
        const int n = nd->dim[k], nm = n - 6, nk = m->nv_k[k], vk = m->v_index[k];
        const double *zk = nd->zm + nd->vec_off[k], *PR = d->P + 36 * k, *a = nd->am + nd->vec_off[k];
        double *zR = d->z + 6 * k, *zplus = d->zplus + 6 * k, Pa[6];
        memcpy(zR, zk, 6 * sizeof(double));
        if (nm > 0) { /* eps_f = T_f - z_f, nu_f = D_f^-1 eps_f, z_R = z_r + g eps_f */
            const int mv = m->mode_v_index[k];
            const double *g = nd->g + nd->mat_off[k];
            double *eps_f = nd->eps_f + mv, *nu_f = nd->nu_f + mv;
            for (int i = 0; i < nm; ++i) nu_f[i] = eps_f[i] = tau[mv + i] - zk[6 + i];
            sd_cholesky_solve(nd->Dfchol + nd->mat_off[k], nm, nu_f);
            for (int r = 0; r < 6; ++r)
                for (int i = 0; i < nm; ++i) zR[r] += g[r * nm + i] * eps_f[i];
        }
        sd_sym6_mul(PR, a, Pa); /* + P_R a(k): the Coriolis term enters at the hinge (a_m = [a; 0]) */
        for (int r = 0; r < 6; ++r) zplus[r] = zR[r] += Pa[r];
        if (pres && pres[k]) { /* 000 Eq 35: z_R+ = z_R + P_R H* qdd */
            double aJ[6], PaJ[6];
            sd_hinge_motion(m, d, k, qdd, aJ);
            sd_sym6_mul(PR, aJ, PaJ);
            for (int r = 0; r < 6; ++r) zplus[r] += PaJ[r];
        } else if (nk > 0) { /* eps_R = T_R - H z_R; nu_R = D_R^-1 eps_R; z_R+ = z_R + G_R eps_R */
            const double *S = d->S + 6 * vk;
            double *eps = d->eps + vk, *nu = d->nu + vk;
            for (int i = 0; i < nk; ++i) eps[i] = tau[vk + i] - sd_s6_dot(S + 6 * i, zR);
            if (m->has_passive) { /* T = tau + tau_passive (dynamics.h, joint-level dynamics) */
                double tp[6];
                sd_passive_hinge(m, k, q, u, tp);
                for (int i = 0; i < nk; ++i) eps[i] += tp[i];
            }
            sd_dinv_mul(d->Dinv + 36 * k, nk, eps, nu);
            for (int i = 0; i < nk; ++i)
                for (int r = 0; r < 6; ++r) zplus[r] += d->G[6 * (vk + i) + r] * eps[i];
        }
        const int p = m->parent[k];
        if (p >= 0) force_to_parent_node(m, d, k, zplus, nd->zm + nd->vec_off[p]);
    }
    /* the acceleration scatter (001 Eq 63, second half; 000 Eq 36-40), from the base given -g */
    double a0[6];
    sd_base_acceleration(m, a0);
    for (int k = 0; k < m->n; ++k) {
        const int n = nd->dim[k], nm = n - 6, nk = m->nv_k[k], vk = m->v_index[k], p = m->parent[k];
        const double *S = d->S + 6 * vk, *a = nd->am + nd->vec_off[k];
        double *ap = d->alpha_plus + 6 * k, *am = nd->alpha_m + nd->vec_off[k];
        if (p < 0) sd_motion_to_child(&d->Xup[k], a0, ap);
        else child_motion(m, d, k, nd->alpha_m + nd->vec_off[p], ap);
        if (pres && pres[k]) { /* 000 Eq 38: T(k) = H f(k'), f(k') = P_R alpha_R+ + z_R+ */
            double f[6];
            sd_sym6_mul(d->P + 36 * k, ap, f);
            for (int r = 0; r < 6; ++r) f[r] += d->zplus[6 * k + r];
            for (int i = 0; i < nk; ++i) tau[vk + i] = sd_s6_dot(S + 6 * i, f);
            if (m->has_passive || m->has_armature) { /* the actuator gives H f + J qdd - tau_passive */
                double tp[6];
                sd_passive_hinge(m, k, q, u, tp);
                for (int i = 0; i < nk; ++i)
                    tau[vk + i] += (m->has_armature ? m->armature[vk + i] * qdd[vk + i] : 0.0) - tp[i];
            }
        } else
            for (int i = 0; i < nk; ++i) /* qdd_R = nu_R - G_R* alpha_R+ */
                qdd[vk + i] = d->nu[vk + i] - sd_s6_dot(d->G + 6 * (vk + i), ap);
        double aJ[6]; /* alpha_R = alpha_R+ + H* qdd + a */
        sd_hinge_motion(m, d, k, qdd, aJ);
        for (int r = 0; r < 6; ++r) am[r] = (ap[r] + a[r]) + aJ[r];
        if (nm > 0) { /* eta-ddot = nu_f - g* alpha_R (000 Eq 40) */
            const int mv = m->mode_v_index[k];
            const double *g = nd->g + nd->mat_off[k];
            for (int i = 0; i < nm; ++i) {
                double s = nd->nu_f[mv + i];
                for (int r = 0; r < 6; ++r) s -= g[r * nm + i] * am[r];
                qdd[mv + i] = am[6 + i] = s;
            }
        }
        memcpy(d->alpha + 6 * k, am, 6 * sizeof(double));
        if (want_forces) { /* 000 Eq 41: f(k') = P_R+(k) alpha_R+(k) + z_R+(k), the hinge's force */
            double *f = d->f + 6 * k;
            sd_sym6_mul(d->Pplus + 36 * k, ap, f);
            for (int r = 0; r < 6; ++r) f[r] += d->zplus[6 * k + r];
        }
    }
    d->alpha_has_gravity = 1;
    const int mixed = pres != NULL;
    d->current |= SD_CURRENT_ACCELERATIONS | (want_forces ? SD_CURRENT_FORCES : 0u) |
                  (mixed ? 0u : SD_CURRENT_ARTICULATED);
    if (sd_all_finite(qdd, (size_t)m->nv) && (!mixed || sd_all_finite(tau, (size_t)m->nv))) return SD_OK;
    const char *fn = "sd_forward_dynamics";
    st = sd_check_output(d, fn, "qdd", qdd, (size_t)m->nv, SD_CAUSE_TINY_INERTIA);
    return st != SD_OK ? st : sd_check_output(d, fn, "tau", tau, (size_t)m->nv, SD_CAUSE_TINY_INERTIA);
}

/* ---------------------------------------------------------------- articulated inertias, det M */

sd_status sd_nodes_articulated_inertias(const sd_model *m, sd_data *d, const double *q)
{
    sd_update_motion(m, d, q, NULL, NULL, 1);
    const sd_status st = node_riccati(m, d, NULL);
    if (st == SD_OK) d->current |= SD_CURRENT_ARTICULATED;
    return st;
}

sd_status sd_nodes_log_det(const sd_model *m, sd_data *d, double *log_det)
{
    const char *fn = "sd_mass_matrix_determinant";
    const sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_ARTICULATED);
    if (st != SD_OK) return st;
    /* 004 Cor 6.1 on the split chain of 001 Sec 5: every node contributes its modes' D_f(k) and its
     * hinge's D_R(k), and a symmetric reordering of the coordinates leaves det M unchanged */
    const struct sd_node_data *nd = d->nodes;
    double s = 0.0;
    for (int k = 0; k < m->n; ++k) {
        s += sd_cholesky_logdet(d->Dchol + 36 * k, m->nv_k[k]);
        s += sd_cholesky_logdet(nd->Dfchol + nd->mat_off[k], nd->dim[k] - 6);
    }
    *log_det = s;
    return SD_OK;
}
