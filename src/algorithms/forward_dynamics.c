/*
 * src/algorithms/forward_dynamics.c — the O(N) articulated-body forward dynamics in the papers' filter/smoother
 * form, written once over nodes (node_engine.h): the Riccati gather of articulated inertias (004 Eq 33;
 * 001 Eq 62), the residual gather (004 Eq 58a-d; 001 Eq 63), and the acceleration scatter (004 Eq 58e-g,
 * Alg 6.1; 000 Eq 13; 001 Eq 63, second half).
 *
 * Options (000 Sec 3, Eq 14-18): inter-body forces f(k) = P+(k) alpha+(k) + z+(k) from the
 * by-products, and prescribed hinges, whose accelerations are given: there P+ = P, no D^-1 is
 * formed, z+ = z + P H* qdd, and the hinge force T(k) = H(k) f(k) comes out of the scatter.
 *
 * Every node's hinge is eliminated by the rigid kind's step below, on the 6x6 P(k) and 6-vector z(k)
 * of sd_data; a node with coordinates of its own (a flexible body's modes) eliminates them first and
 * hands the hinge what is left (node_kinds.h, "articulated bodies"; 001 Sec 5). One source, two
 * instances (node_kinds.h): with nd NULL every kind test folds away and a rigid model runs the
 * fixed-size kernels (plane rotations, axis-selecting hinges) alone.
 *
 * Glossary: see internal.h; the flexible kind's quantities (D_f, g, eps_f, nu_f) in node_flexible.c.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "internal.h"
#include "node_kinds.h"

/* Whether D(k), found negligible against P(k)'s largest diagonal entry, is a true singularity. That
 * first test is cheap but not scale-correct: along a straight chain P(k) holds the rigid inertia
 * of the whole chain about axes the hinges cannot turn (growing as N^3 for N links) while D(k), the
 * inertia the hinge's own direction feels, stays that of a few links. What D(k) must not be
 * negligible against is what it was computed from in its own directions: the inertia the hinge
 * carries before the children's hinges are freed, H (M(k) + sum phi P(j) phi*) H* over the
 * children j (P(j) before its projection P+(j) = P(j) - G D G*, the subtraction where a massless
 * subtree's D cancels to round-off). Each hinge direction is scaled by it, and the scaled D must
 * then factor with pivots above `tol`. Only runs when the cheap test fails (rarely: singular
 * models, chains of tens of thousands of links). */
SD_COLD static int hinge_singular_nk(const sd_model *m, const sd_data *d, int k, const double *D, double tol)
{
    const int nk = m->nv_k[k], vk = m->v_index[k];
    double ref[6], Dn[36], Prr[36];
    /* a node with coordinates of its own: the rigid block of its P(k) before their elimination, the
     * children's shares included */
    const int node = sd_node_rigid_inertia(m, d->nodes, k, Prr);
    for (int i = 0; i < nk; ++i) {
        const double *s = d->S + 6 * (vk + i);
        double Ms[6];
        if (node) sd_sym6_mul(Prr, s, Ms);
        else sd_rigid_inertia_mul(m->rigid + 13 * k, s, Ms);
        ref[i] = m->armature[vk + i] + sd_s6_dot(s, Ms); /* D(k) holds the armature too */
        for (int j = k + 1; j < m->subtree_end[k] && !node; j = m->subtree_end[j]) { /* the children of k */
            double w[6], Pw[6];
            sd_motion_to_child(&d->Xup[j], s, w);
            sd_sym6_mul(d->P + 36 * j, w, Pw);
            ref[i] += sd_s6_dot(w, Pw);
        }
        if (!(ref[i] > 0.0)) return 1; /* the hinge carries nothing at all */
    }
    for (int i = 0; i < nk; ++i)
        for (int j = 0; j < nk; ++j) Dn[i * nk + j] = D[i * nk + j] / sqrt(ref[i] * ref[j]);
    return sd_cholesky_factor(Dn, nk, tol) >= 0;
}

/* The same for a one-speed hinge (D by value, so that the hot path keeps it in a register). */
SD_COLD static int hinge_singular(const sd_model *m, const sd_data *d, int k, double D, double tol)
{
    return hinge_singular_nk(m, d, k, &D, tol);
}

/* The report of a singular D(k): zero to round-off, or so small that its inverse overflows (also
 * used by the node engine, node_articulated.c). */
SD_COLD sd_status sd_singular_hinge(const sd_model *m, sd_data *d, int k, int overflow)
{
    if (overflow)
        return sd_data_fail(d, SD_E_SINGULAR,
                            "body '%s': articulated inertia D(k) of its hinge is too small to invert in a double (a "
                            "nearly massless subtree: D^-1 overflows)",
                            m->desc[k].name);
    return sd_data_fail(d, SD_E_SINGULAR,
                        "body '%s': articulated inertia D(k) of its hinge is singular (a massless subtree that the "
                        "hinge can move freely)",
                        m->desc[k].name);
}

/* P+ = P - G U^T for a one-speed hinge, whole rows (they vectorise: restrict says the four arrays
 * are distinct, which they are: P and P+ of one body, its G and U). */
static inline void rank_one_update(const double *restrict P, const double *restrict G, const double *restrict U,
                                   double *restrict Pplus)
{
    for (int r = 0; r < 6; ++r)
        for (int c = 0; c < 6; ++c) Pplus[6 * r + c] = P[6 * r + c] - G[r] * U[c];
}

/* The projection of one hinge in the 004 Eq 33 step: D = H P H* + J, G = P H* D^-1 and
 * P+ = P - G (P H*)*, with U = P H* kept. J is the hinge's armature (zero without one), an inertia
 * of the hinge's own space: it adds to D only, and P+ with that D leaves the parent the part of
 * the subtree's inertia the hinge does not carry. Returns 0, or 1 when D(k) is singular, 2 when it is too
 * small to invert in a double. This one for a hinge of one speed, the common case: D is a number.
 * Always inlined: called from both instances of the step, GCC otherwise keeps it out of line (+17
 * instructions a body in det M on the iiwa, callgrind). */
static inline __attribute__((always_inline)) int project_one_speed(const sd_model *m, sd_data *d, int k,
                                                                   const double *P, double pscale, double tol,
                                                                   double *Pplus)
{
    const int vk = m->v_index[k];
    const double *S = d->S + 6 * vk;
    double *U = d->U + 6 * vk, *G = d->G + 6 * vk;
    const int sel = d->hinge_sel[k];
    if (sel >= 0) { /* H* = sgn e_sel selects: U = sgn P(:, sel) (a row of the symmetric P), D = P(sel, sel) */
        const double sgn = d->hinge_sgn[k];
        for (int r = 0; r < 6; ++r) U[r] = sgn * P[6 * sel + r];
    } else
        sd_sym6_mul(P, S, U);
    const double D = (sel >= 0 ? P[7 * sel] : sd_s6_dot(S, U)) + m->armature[vk], dinv = 1.0 / D;
    if (!(D > tol * pscale) && hinge_singular(m, d, k, D, tol)) return 1;
    if (!(dinv <= DBL_MAX)) return 2;
    d->Dchol[36 * k] = sqrt(D);
    d->Dinv[36 * k] = dinv;
    for (int r = 0; r < 6; ++r) G[r] = U[r] * dinv;
    rank_one_update(P, G, U, Pplus);
    return 0;
}

/* The same for a hinge of several speeds: D by its Cholesky factor L, D^-1 formed once. */
SD_NOINLINE static int project_speeds(const sd_model *m, sd_data *d, int k, const double *P, double pscale, double tol,
                          double *Pplus)
{
    const int nk = m->nv_k[k], vk = m->v_index[k];
    const double *S = d->S + 6 * vk;
    double *U = d->U + 6 * vk, *G = d->G + 6 * vk, *L = d->Dchol + 36 * k, *Dinv = d->Dinv + 36 * k;
    for (int i = 0; i < nk; ++i) sd_sym6_mul(P, S + 6 * i, U + 6 * i); /* U = P H* */
    for (int i = 0; i < nk; ++i)
        for (int j = 0; j < nk; ++j) /* D = H U + J */
            L[i * nk + j] = sd_s6_dot(S + 6 * i, U + 6 * j) + (i == j ? m->armature[vk + i] : 0.0);
    if (sd_cholesky_factor(L, nk, tol * pscale) >= 0) { /* negligible against P: look closer */
        double D[36];
        for (int i = 0; i < nk; ++i)
            for (int j = 0; j < nk; ++j)
                L[i * nk + j] = D[i * nk + j] =
                    sd_s6_dot(S + 6 * i, U + 6 * j) + (i == j ? m->armature[vk + i] : 0.0);
        if (hinge_singular_nk(m, d, k, D, tol) || sd_cholesky_factor(L, nk, 0.0) >= 0) return 1;
    }
    for (int i = 0; i < nk * nk; ++i) Dinv[i] = L[i];
    sd_cholesky_inverse(Dinv, nk);
    for (int i = 0; i < nk; ++i)
        if (!(fabs(Dinv[i * nk + i]) <= DBL_MAX)) return 2;
    for (int r = 0; r < 6; ++r) /* G = U D^-1 */
        for (int i = 0; i < nk; ++i) {
            double g = 0.0;
            for (int j = 0; j < nk; ++j) g += U[6 * j + r] * Dinv[j * nk + i];
            G[6 * i + r] = g;
        }
    for (int r = 0; r < 6; ++r) /* P+ = P - G U^T, symmetric: the upper half, mirrored */
        for (int c = r; c < 6; ++c) {
            double v = P[6 * r + c];
            for (int i = 0; i < nk; ++i) v -= G[6 * i + r] * U[6 * i + c];
            Pplus[6 * r + c] = Pplus[6 * c + r] = v;
        }
    return 0;
}

/* One step of the 004 Eq 33 gather at body k (001 Eq 62 for a node with coordinates of its own):
 * P(k) holds M(k) plus the children's phi P+ phi* (a leaf's P(k) is M(k), set here; a flexible node's
 * modes are eliminated here first, leaving the hinge's P_R), the projection above, then P+ is sent to
 * the parent, whose P starts as its M when its first child (the one with the largest index) arrives.
 * Starting each P at the last moment, rather than in a pass of its own, keeps the sweep to one pass
 * over memory, which is what limits trees of 10^4-10^5 bodies. P+ is kept only when the inter-body
 * forces need it. Written once (node_kinds.h): the two instances below. */
SD_ENGINE_SWEEPS sd_status riccati_step_body(const sd_model *m, sd_data *d, int k, int prescribed, int keep_pplus,
                                             struct sd_node_data *nd)
{
    const int nk = m->nv_k[k];
    double *P = d->P + 36 * k, Pplus_local[36], *Pplus = keep_pplus ? d->Pplus + 36 * k : Pplus_local;
    const sd_status st = sd_node_articulated_start(m, d, nd, k, P);
    if (st != SD_OK) return st;
    if (prescribed || nk == 0) {
        memcpy(Pplus, P, 36 * sizeof(double));
    } else {
        double pscale = 0.0;
        for (int i = 0; i < 6; ++i) { /* the diagonal's scale, for the singularity test */
            const double a = fabs(P[7 * i]);
            pscale = a > pscale ? a : pscale; /* not fmax(): that is a library call in the hot loop */
        }
        const double tol = 1e-13; /* a D(k) below tol times its scale is round-off: M is singular */
        const int bad = nk == 1 ? project_one_speed(m, d, k, P, pscale, tol, Pplus)
                                : project_speeds(m, d, k, P, pscale, tol, Pplus);
        if (bad) return sd_singular_hinge(m, d, k, bad == 2);
    }
    if (m->parent[k] >= 0) sd_node_inertia_to_parent(m, d, nd, k, Pplus);
    return SD_OK;
}

SD_NOINLINE static sd_status riccati_step_rigid(const sd_model *m, sd_data *d, int k, int prescribed, int keep_pplus)
{
    return riccati_step_body(m, d, k, prescribed, keep_pplus, NULL);
}
SD_NOINLINE static sd_status riccati_step_nodes(const sd_model *m, sd_data *d, int k, int prescribed, int keep_pplus)
{
    return riccati_step_body(m, d, k, prescribed, keep_pplus, d->nodes);
}

/* The step of the instance nd names (a constant in each instance: the test folds away). */
SD_ENGINE_SWEEPS sd_status riccati_step(const sd_model *m, sd_data *d, int k, int prescribed, int keep_pplus,
                                        const struct sd_node_data *nd)
{
    return nd ? riccati_step_nodes(m, d, k, prescribed, keep_pplus) : riccati_step_rigid(m, d, k, prescribed, keep_pplus);
}

/* eps = -tau_passive for every speed, the hinges' damping and spring forces, before the gather:
 * one loop over the speeds (sd_passive_subtract on zeros, as inverse dynamics), not a call per
 * body. The gather then forms each hinge's eps = (tau - H z) - eps in place, i.e. T = tau +
 * tau_passive, and a prescribed hinge, whose eps the gather leaves alone, reads it in the scatter.
 * The values are those of sd_passive_hinge negated (0 + x = x, and negation is exact). */
SD_NOINLINE static void passive_into_eps(const sd_model *m, sd_data *d, const double *q, const double *u)
{
    memset(d->eps, 0, (size_t)m->nv * sizeof(double));
    sd_passive_subtract(m, q, u, d->eps);
}

/* A prescribed hinge's force H f (in tau) becomes what the actuator gives, H f + J qdd - tau_passive:
 * the hinge equation is H f = tau + tau_passive - J qdd. ntp = -tau_passive (passive_into_eps), or
 * NULL without passive forces. */
SD_NOINLINE static void prescribed_joint_terms(const sd_model *m, int k, const double *ntp, const double *qdd,
                                               double *tau)
{
    const int nk = m->nv_k[k], vk = m->v_index[k];
    for (int i = 0; i < nk; ++i)
        tau[vk + i] += m->armature[vk + i] * qdd[vk + i] + (ntp ? ntp[vk + i] : 0.0); /* - (-ntp): exact */
}

/* The Riccati gather alone (004 Eq 33; 001 Eq 62), at the placements (and node masses) of the last
 * motion scatter. */
SD_ENGINE_SWEEPS sd_status riccati_gather(const sd_model *m, sd_data *d, const unsigned char *prescribed,
                                          const struct sd_node_data *nd)
{
    for (int k = m->n - 1; k >= 0; --k) {
        const sd_status st = riccati_step(m, d, k, prescribed && prescribed[k], 0, nd);
        if (st != SD_OK) return st;
    }
    return SD_OK;
}

SD_NOINLINE static sd_status riccati_gather_nodes(const sd_model *m, sd_data *d, const unsigned char *prescribed)
{
    return riccati_gather(m, d, prescribed, d->nodes);
}

sd_status sd_riccati_gather(const sd_model *m, sd_data *d, const unsigned char *prescribed)
{
    /* the node instance out of line, so that the rigid one stays small enough to inline into its callers */
    const sd_status st = d->nodes ? riccati_gather_nodes(m, d, prescribed) : riccati_gather(m, d, prescribed, NULL);
    if (st == SD_OK && !prescribed) d->current |= SD_CURRENT_ARTICULATED;
    return st;
}

/* The residual gather and the acceleration scatter after the motion scatter, with the Riccati gather
 * inside the first (one pass over the bodies), written once over nodes (node_kinds.h: nd NULL, every
 * node rigid). pres: the prescribed hinges (d->prescribed_none for none). */
SD_ENGINE_SWEEPS sd_status articulated_sweeps(const sd_model *m, sd_data *d, double *tau, double *qdd,
                                              const unsigned char *pres, int want_forces, struct sd_node_data *nd)
{
    memset(d->z, 0, 6 * (size_t)m->n * sizeof(double));
    sd_node_residual_begin(nd, 1);
    for (int k = m->n - 1; k >= 0; --k) { /* tips-to-base gather: 004 Eq 33 and Eq 58a-d; 001 Eq 62-63 */
        const sd_status st = riccati_step(m, d, k, pres[k], want_forces, nd);
        if (st != SD_OK) return st;
        const int nk = m->nv_k[k], vk = m->v_index[k];
        const double *S = d->S + 6 * vk, *P = d->P + 36 * k;
        double *z = d->z + 6 * k, *zplus = d->zplus + 6 * k, Pa[6];
        /* a node's own coordinates: eps_f = T_f - z_f, nu_f = D_f^-1 eps_f, z_R = z_r + g eps_f (001 Eq 63) */
        if (nd) {
            sd_node_modal_residual(m, nd, k, tau, nd->eps_f, z);
            sd_node_modal_solve(m, nd, k, nd->eps_f, nd->nu_f);
        }
        sd_sym6_mul(P, d->a + 6 * k, Pa); /* z(k) = sum phi z+(j) + P(k) a(k) + b(k) */
        for (int r = 0; r < 6; ++r) zplus[r] = z[r] += Pa[r] + d->b[6 * k + r];
        if (pres[k]) { /* z+ = z + P H* qdd (000 Eq 35) */
            double aJ[6], PaJ[6];
            sd_hinge_motion(m, d, k, qdd, aJ);
            sd_sym6_mul(P, aJ, PaJ);
            for (int r = 0; r < 6; ++r) zplus[r] += PaJ[r];
        } else if (nk > 0) { /* eps = T - H z; nu = D^-1 eps; z+ = z + G eps */
            double *eps = d->eps + vk, *nu = d->nu + vk;
            if (d->hinge_sel[k] >= 0) { /* H = sgn e_sel^T */
                const double e = tau[vk] - d->hinge_sgn[k] * z[d->hinge_sel[k]];
                eps[0] = m->has_passive ? e - eps[0] : e; /* T = tau + tau_passive */
            } else
                for (int i = 0; i < nk; ++i) {
                    const double e = tau[vk + i] - sd_s6_dot(S + 6 * i, z);
                    eps[i] = m->has_passive ? e - eps[i] : e;
                }
            sd_dinv_mul(d->Dinv + 36 * k, nk, eps, nu);
            for (int i = 0; i < nk; ++i)
                for (int r = 0; r < 6; ++r) zplus[r] += d->G[6 * (vk + i) + r] * eps[i];
        }
        if (m->parent[k] >= 0) { /* z(parent) += phi(parent, k) z+(k) */
            double zp[6];
            sd_force_to_parent_plane(&d->Xup[k], d->hinge_plane[k], zplus, zp);
            for (int r = 0; r < 6; ++r) d->z[6 * m->parent[k] + r] += zp[r];
            sd_node_residual_to_parent_modes(m, nd, k, zplus);
        }
    }
    double a0[6];
    sd_base_acceleration(m, a0);
    for (int k = 0; k < m->n; ++k) { /* base-to-tips scatter: 004 Eq 58e-g; 001 Eq 63; 000 Eq 36-41 */
        const int nk = m->nv_k[k], vk = m->v_index[k];
        const double *S = d->S + 6 * vk;
        double *ap = d->alpha_plus + 6 * k, *alpha = d->alpha + 6 * k;
        const double *alpha_parent = m->parent[k] < 0 ? a0 : d->alpha + 6 * m->parent[k];
        /* alpha+ = phi*(parent, k) alpha(parent) = Xup* alpha(parent) + Y(k) eta-ddot(parent) */
        sd_motion_to_child_plane(&d->Xup[k], d->hinge_plane[k], alpha_parent, ap);
        sd_node_child_motion_modes(m, nd, k, qdd, ap);
        if (pres[k]) { /* T(k) = H(k) f(k), f(k) = P+ alpha+ + z+ with P+ = P */
            double f[6];
            sd_sym6_mul(d->P + 36 * k, ap, f);
            for (int r = 0; r < 6; ++r) f[r] += d->zplus[6 * k + r];
            for (int i = 0; i < nk; ++i) tau[vk + i] = sd_s6_dot(S + 6 * i, f);
            if (m->has_passive || m->has_armature)
                prescribed_joint_terms(m, k, m->has_passive ? d->eps : NULL, qdd, tau);
        } else
            for (int i = 0; i < nk; ++i) /* qdd = nu - G* alpha+ */
                qdd[vk + i] = d->nu[vk + i] - sd_s6_dot(d->G + 6 * (vk + i), ap);
        /* alpha = alpha+ + H* qdd + a */
        if (d->hinge_sel[k] >= 0) {
            for (int r = 0; r < 6; ++r) alpha[r] = ap[r] + d->a[6 * k + r];
            alpha[d->hinge_sel[k]] += d->hinge_sgn[k] * qdd[vk];
        } else {
            double aJ[6];
            sd_hinge_motion(m, d, k, qdd, aJ);
            for (int r = 0; r < 6; ++r) alpha[r] = (ap[r] + d->a[6 * k + r]) + aJ[r];
        }
        if (nd) { /* a node's own coordinates: eta-ddot = nu_f - g* alpha_R (001 Eq 63; 000 Eq 40) */
            sd_node_modal_scatter(m, nd, k, nd->nu_f, -1.0, alpha, qdd);
            sd_node_acceleration_store(m, nd, k, alpha, qdd);
        }
        if (want_forces) { /* 000 Eq 17: f(k) = P+(k) alpha+(k) + z+(k), one 6x6 product */
            double *f = d->f + 6 * k;
            sd_sym6_mul(d->Pplus + 36 * k, ap, f);
            for (int r = 0; r < 6; ++r) f[r] += d->zplus[6 * k + r];
        }
    }
    return SD_OK;
}

SD_NOINLINE static sd_status articulated_rigid(const sd_model *m, sd_data *d, double *tau, double *qdd,
                                               const unsigned char *pres, int want_forces)
{
    return articulated_sweeps(m, d, tau, qdd, pres, want_forces, NULL);
}
SD_NOINLINE static sd_status articulated_nodes(const sd_model *m, sd_data *d, double *tau, double *qdd,
                                               const unsigned char *pres, int want_forces)
{
    return articulated_sweeps(m, d, tau, qdd, pres, want_forces, d->nodes);
}

sd_status sd_nodes_articulated(const sd_model *m, sd_data *d, const double *tau, double *qdd)
{
    const sd_status st = articulated_nodes(m, d, (double *)tau, qdd, d->prescribed_none, 0); /* tau only read */
    if (st != SD_OK) return st;
    d->alpha_has_gravity = 1;
    d->current |= SD_CURRENT_ACCELERATIONS | SD_CURRENT_ARTICULATED;
    return SD_OK;
}

sd_status sd_forward_dynamics_ex(const sd_model *m, sd_data *d, const double *q, const double *u, double *tau,
                                 const double *f_ext, double *qdd, const sd_fd_options *options)
{
    if (!tau || !qdd) return sd_data_fail(d, SD_E_ARGUMENT, "sd_forward_dynamics: NULL tau or qdd");
    /* with prescribed hinges, tau and qdd are part input and part output: only q, u, f_ext checked */
    const int mixed = options && options->prescribed;
    const sd_status st0 = sd_check_call(m, d, "sd_forward_dynamics", q, u, NULL, mixed ? NULL : tau, f_ext);
    if (st0 != SD_OK) return st0;
    const unsigned char *pres = mixed ? options->prescribed : d->prescribed_none;
    const int want_forces = options && options->interbody_forces;
    sd_update_motion(m, d, q, u, f_ext, want_forces); /* world placements only to show forces in world axes */
    if (m->has_passive) passive_into_eps(m, d, q, u);
    const sd_status st = d->nodes ? articulated_nodes(m, d, tau, qdd, pres, want_forces) /* the two instances */
                                  : articulated_rigid(m, d, tau, qdd, pres, want_forces);
    if (st != SD_OK) return st;
    d->alpha_has_gravity = 1;
    /* with prescribed hinges the gather skipped their D(k): P, D, G are no factors of M then */
    d->current |= SD_CURRENT_ACCELERATIONS | (want_forces ? SD_CURRENT_FORCES : 0u) |
                  (mixed ? 0u : SD_CURRENT_ARTICULATED);
    if (sd_all_finite(qdd, (size_t)m->nv) && (!mixed || sd_all_finite(tau, (size_t)m->nv))) return SD_OK;
    const char *fn = "sd_forward_dynamics";
    const sd_status st1 = sd_check_output(d, fn, "qdd", qdd, (size_t)m->nv, SD_CAUSE_TINY_INERTIA);
    return st1 != SD_OK ? st1 : sd_check_output(d, fn, "tau", tau, (size_t)m->nv, SD_CAUSE_TINY_INERTIA);
}

sd_status sd_forward_dynamics(const sd_model *m, sd_data *d, const double *q, const double *u, const double *tau,
                              const double *f_ext, double *qdd)
{
    SD_RUN_COMPILED(m, d, forward_dynamics, (q, u, tau, f_ext, qdd));
    /* with no hinge prescribed, tau is only read */
    return sd_forward_dynamics_ex(m, d, q, u, (double *)tau, f_ext, qdd, NULL);
}
