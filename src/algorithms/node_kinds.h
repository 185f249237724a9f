/*
 * src/algorithms/node_kinds.h — the node kinds' operations (node_engine.h): what a sweep asks of a
 * node, answered by the node's kind. A recursion written once over nodes calls these and does not
 * test a kind itself (beyond sd_node_is_attached where a child's placement differs); this header is
 * where a node's kind is read for the sweeps it serves (docs/design.md lists every such place).
 *
 * Kinds: RIGID (dim 6: the fixed-size kernels of internal.h on the per-body arrays of sd_data,
 * inline here) and FLEXIBLE (dim 6 + nm: the node workspace's M_m, b_m of the motion scatter, 001
 * Eq 25, 38-40; in node_flexible.c, with the attachments' operations). Every child-to-parent quantity passes through the child's rigid part (001 Eq
 * 16-17), so the sweeps carry 6-vectors in the per-body arrays; a flexible node keeps its modal part
 * beside them in the node workspace, and a child riding on a node of a flexible parent adds the
 * attachment terms with Y(c) (node_engine.h: phi*(p, c) = [Xup(c), Y(c)]).
 *
 * nd is the model's node workspace, d->nodes; NULL on a model whose nodes are all rigid (which then
 * has no attachments either). A recursion is written once as an always-inlined body taking nd and
 * instantiated twice (SD_ENGINE_SWEEPS): with nd the constant NULL, every kind test below folds
 * away and the rigid model runs the fixed-size kernels alone, as fast as before the engine (a run-time
 * test per node, even of a register, made the compiler spill in the sweep: +5% instructions in
 * Newton-Euler on the iiwa); with nd the workspace, the kinds are asked per node.
 *
 * The motion scatter that every recursion starts with (sd_update_motion, kinematics.c) is one of them.
 */
#ifndef SOADYN_NODE_KINDS_H
#define SOADYN_NODE_KINDS_H

#include <string.h>

#include "node_engine.h"

/* The body of a recursion over nodes, written once, taking nd last; each file instantiates it in two
 * functions kept apart (SD_NOINLINE), the rigid one passing the constant NULL, so that each instance
 * gets the compiler's whole inlining budget (as one function with both instances inlined, the rigid
 * sweep lost its inlined sd_force_to_parent: +2.8% instructions in Newton-Euler on the iiwa). */
#define SD_ENGINE_SWEEPS static inline __attribute__((always_inline))

/* A node is handled by the flexible kind's operations (node_flexible.c): a flexible body, or an
 * aggregate (node_engine.h), which after its motion is stored is to the sweeps what a flexible body
 * is: M(k), b(k), Y of its children, own coordinates eliminated first (001 Eq 62-63). */
static inline int sd_node_is_flexible(const sd_model *m, const struct sd_node_data *nd, int k)
{
    return nd && sd_node_kind_of(m, k) != SD_NODE_RIGID;
}
/* A child riding on a node of its flexible parent (the attachment map Y(c) of node_engine.h). */
static inline int sd_node_is_attached(const struct sd_node_data *nd, int c) { return nd && nd->att_off[c] >= 0; }

/* ---- the flexible kind and attachments (node_flexible.c) ---- */

/* Motion (kinematics.c): the state the node workspace keeps (nd->q, nd->u: u NULL, zeros); a child
 * riding on node t of its flexible parent placed (Xup = pose(N_t) node_placement X_J, Y(c), world)
 * and moved (V, a with the node frame's terms, rigid b) as node_engine.h says; and each node's M(k),
 * b(k) and node vectors left in the workspace (rigid: the per-body numbers; flexible: 001 Eq 25,
 * 39-40, its b(k) also back into sd_data). */
void sd_node_motion_begin(const sd_model *m, struct sd_node_data *nd, const double *q, const double *u);
void sd_attached_motion(const sd_model *m, sd_data *d, struct sd_node_data *nd, int c, const double *q,
                        const double *u, const double *f_ext, int with_world);
void sd_node_motion_store(const sd_model *m, sd_data *d, struct sd_node_data *nd, int k, const double *q,
                          const double *u, const double *f_ext);

double sd_flexible_first_moment(const sd_model *m, const sd_data *d, int k, double mx[3]);
void sd_flexible_momentum(const sd_model *m, const sd_data *d, int k, double h[6]);
double sd_flexible_kinetic_energy(const sd_model *m, const sd_data *d, int k);
void sd_flexible_acceleration_store(const sd_model *m, struct sd_node_data *nd, int k, const double alpha[6],
                                    const double *qdd);
void sd_flexible_own_force(const sd_model *m, struct sd_node_data *nd, int k, const double alpha[6],
                           const double *qdd, double f[6]);
void sd_flexible_modal_forces(const sd_model *m, const struct sd_node_data *nd, int k, double *tau);
void sd_attached_motion_modes(const sd_model *m, const struct sd_node_data *nd, int c, const double *qdd,
                              double alpha[6]);
void sd_attached_force_to_parent_modes(const sd_model *m, struct sd_node_data *nd, int c, const double f[6]);

/* ---- accelerations (kinematics.c) and Newton-Euler (inverse_dynamics.c) ---- */

/* alpha(c) += Y(c) eta-ddot(p): the motion a child riding on a node of its flexible parent p gets
 * from the parent's modal accelerations (001 Eq 26, the second block of phi*(p, c)); nothing for a
 * child on a frame. qdd NULL: no modal accelerations. */
static inline void sd_node_child_motion_modes(const sd_model *m, const struct sd_node_data *nd, int c,
                                              const double *qdd, double alpha[6])
{
    if (sd_node_is_attached(nd, c) && qdd) sd_attached_motion_modes(m, nd, c, qdd, alpha);
}

/* A flexible node's alpha_m = [alpha; eta-ddot] into the workspace (qdd NULL: eta-ddot = 0); the
 * rigid part is the per-body alpha, all a rigid node has. */
static inline void sd_node_acceleration_store(const sd_model *m, struct sd_node_data *nd, int k,
                                              const double alpha[6], const double *qdd)
{
    if (sd_node_is_flexible(m, nd, k)) sd_flexible_acceleration_store(m, nd, k, alpha, qdd);
}

/* The node's own force M(k) alpha(k) + b(k) (001 Eq 38 without the children; bk: b(k) of sd_data):
 * its rigid part into f (6); a flexible node keeps its modal part, and alpha_m = [alpha; eta-ddot],
 * in the node workspace. qdd NULL: eta-ddot = 0. */
static inline void sd_node_own_force(const sd_model *m, struct sd_node_data *nd, const double *bk, int k,
                                     const double alpha[6], const double *qdd, double f[6])
{
    if (sd_node_is_flexible(m, nd, k)) {
        sd_flexible_own_force(m, nd, k, alpha, qdd, f);
        return;
    }
    sd_rigid_inertia_mul(m->rigid + 13 * k, alpha, f);
    for (int r = 0; r < 6; ++r) f[r] += bk[r];
}

/* The node's generalized forces beyond its hinge's: a flexible node's modal forces T^f(k) = f_m^f(k)
 * (001 Eq 43, the identity block of H(k)), its children's shares already gathered; none for a rigid one. */
static inline void sd_node_modal_forces(const sd_model *m, const struct sd_node_data *nd, int k, double *tau)
{
    if (sd_node_is_flexible(m, nd, k)) sd_flexible_modal_forces(m, nd, k, tau);
}

/* f_m^f(p) += Y(c)^T f(c): the share of a child's force riding on a node of its flexible parent p
 * in the parent's modal forces (001 Eq 38, the second block of phi(p, c)); nothing on a frame. */
static inline void sd_node_force_to_parent_modes(const sd_model *m, struct sd_node_data *nd, int c,
                                                 const double f[6])
{
    if (sd_node_is_attached(nd, c)) sd_attached_force_to_parent_modes(m, nd, c, f);
}

/* ---- what follows from the motion (kinematics.c: centre of mass, momentum, energies) ---- */

/* Node k's mass and first moment sum m_j x_j in world coordinates: a rigid body's at its centre of
 * mass; a flexible body's FE nodes at their deformed positions (node_engine.h), its rigid part included. */
static inline double sd_node_first_moment(const sd_model *m, const sd_data *d, int k, double mx[3])
{
    if (sd_node_is_flexible(m, d->nodes, k)) return sd_flexible_first_moment(m, d, k, mx);
    double c[3];
    sd_transform_point(&d->Xworld[k], m->com + 3 * k, c);
    for (int i = 0; i < 3; ++i) mx[i] = m->mass[k] * c[i];
    return m->mass[k];
}

/* The rigid rows of M(k) V_m(k), body axes: the node's momentum about F_k (001 Eq 25). */
static inline void sd_node_momentum(const sd_model *m, const sd_data *d, int k, double h[6])
{
    if (sd_node_is_flexible(m, d->nodes, k)) sd_flexible_momentum(m, d, k, h);
    else sd_rigid_inertia_mul(m->rigid + 13 * k, d->V + 6 * k, h);
}

/* 1/2 V_m(k)^T M(k) V_m(k) (001 Sec 2.2). */
static inline double sd_node_kinetic_energy(const sd_model *m, const sd_data *d, int k)
{
    if (sd_node_is_flexible(m, d->nodes, k)) return sd_flexible_kinetic_energy(m, d, k);
    double MV[6];
    sd_rigid_inertia_mul(m->rigid + 13 * k, d->V + 6 * k, MV);
    return 0.5 * sd_s6_dot(d->V + 6 * k, MV);
}

/* ==== articulated bodies (forward_dynamics.c, innovations.c, operational_space.c): 004 Alg 5.1,
 * Lemma 11, Eq 33, 50-51, 58; 001 Eq 51-56, 62-63 ====
 *
 * The operations a node kind supplies to the articulated-body recursion and to the sweeps of its
 * factors. The recursion keeps, per body, the hinge's rigid 6x6 and 6-vector quantities in sd_data
 * (P, P+, D, G, z, z+, alpha+, alpha) and eliminates every hinge by the rigid kind's step; a kind
 * with coordinates of its own eliminates them first and hands the hinge a 6x6 P(k) and a 6-vector z(k):
 *   start      P(k) before the hinge's projection (rigid leaf: its inertia; flexible: P_R after the
 *              modal elimination D_f, g, P_R = P^rr - g P^fr of 001 Eq 62)
 *   to parent  P(p) += phi(p, k) P+(k) phi*(p, k) (004 Eq 33; 001 Eq 62 through Y(k) on a node)
 *   residual   the node's own coordinates' eps = T - z, z(k) += g eps (001 Eq 63), nu = D_f^-1 eps
 *   scatter    the own coordinates' accelerations nu - g* alpha(k) (001 Eq 63, second half)
 *   log det    log det D_f(k) (004 Cor 6.1 on the split chain)
 * and the residual's modal part travels to a flexible parent through Y(c)^T as the forces do.
 * A rigid node has no own coordinates: its residual, scatter and log det are nothing. */

sd_status sd_flexible_eliminate_modes(const sd_model *m, sd_data *d, struct sd_node_data *nd, int k, double PR[36]);
sd_status sd_flexible_eliminate_from(const sd_model *m, sd_data *d, struct sd_node_data *nd, int k, const double *P,
                                     double PR[36]);
void sd_flexible_rigid_inertia(const sd_model *m, const struct sd_node_data *nd, int k, double Prr[36]);
void sd_flexible_inertia_from_child(const sd_model *m, const sd_data *d, struct sd_node_data *nd, int c,
                                    const double Pc[36]);
void sd_flexible_modal_residual(const sd_model *m, const struct sd_node_data *nd, int k, const double *T, double *eps,
                                double z[6]);
void sd_flexible_modal_solve(const sd_model *m, const struct sd_node_data *nd, int k, const double *eps, double *nu);
void sd_flexible_modal_scatter(const sd_model *m, const struct sd_node_data *nd, int k, const double *nu, double sign,
                               const double alpha[6], double *out);
void sd_flexible_modal_ne(const sd_model *m, const struct sd_node_data *nd, int k, const double *x, double *y,
                          double w[6]);
void sd_attached_residual_to_parent_modes(const sd_model *m, struct sd_node_data *nd, int c, const double f[6]);
double sd_flexible_modal_log_det(const struct sd_node_data *nd, int k);

/* ---- the aggregate kind (node_aggregate.c): an aggregate of rigid members ----
 * Its P(s) is block diagonal in its members (000 Eq 62): each child node adds its P+ to the block of
 * the member it rides on, and the start carries the blocks up the aggregate with the owner's
 * fixed-size kernels, forming only W^T P W, W^T P Hbar* and Hbar P Hbar* + Jbar before the elimination
 * of its independent speeds; no dense (6 + ni)^2 M(k). An aggregate it does not take (count 0: e.g.
 * a flexible member) is the flexible kind's, on the dense M(k) its owner stores. */
static inline int sd_node_is_aggregate(const sd_model *m, const struct sd_node_data *nd, int k)
{
    return nd && nd->agg && sd_node_kind_of(m, k) == SD_NODE_AGGREGATE && nd->agg->count[k] > 0;
}
sd_status sd_aggregate_eliminate(const sd_model *m, sd_data *d, struct sd_node_data *nd, int k, double PR[36]);
void sd_aggregate_inertia_from_child(const sd_model *m, struct sd_node_data *nd, int c, const double Pc[36]);

/* P(k), the 6x6 the hinge's projection starts from (d->P + 36 k): a rigid leaf's inertia (a rigid
 * node with children had its P started by its first child, sd_node_inertia_to_parent); a flexible
 * node's or an aggregate's P_R after eliminating its own coordinates (SD_E_SINGULAR when D_f is). */
static inline sd_status sd_node_articulated_start(const sd_model *m, sd_data *d, struct sd_node_data *nd, int k,
                                                  double P[36])
{
    if (sd_node_is_aggregate(m, nd, k)) return sd_aggregate_eliminate(m, d, nd, k, P);
    if (sd_node_is_flexible(m, nd, k)) return sd_flexible_eliminate_modes(m, d, nd, k, P);
    if (m->last_child[k] < 0) sd_rigid_inertia_to_sym6(m->rigid + 13 * k, P);
    return SD_OK;
}

/* The rigid block of P(k) before any elimination (the hinge's singularity test asks what D(k) was
 * computed from); 0: the rigid kind, whose test forms it from the body's inertia and its children. */
static inline int sd_node_rigid_inertia(const sd_model *m, const struct sd_node_data *nd, int k, double Prr[36])
{
    if (!sd_node_is_flexible(m, nd, k)) return 0;
    sd_flexible_rigid_inertia(m, nd, k, Prr);
    return 1;
}

/* P(p) += phi(p, k) P+(k) phi*(p, k) for body k's parent p, P(p) started as M(p) by its first child
 * (the one with the largest index): one pass over memory (004 Eq 33; 001 Eq 62). */
static inline void sd_node_inertia_to_parent(const sd_model *m, sd_data *d, struct sd_node_data *nd, int k,
                                             const double Pplus[36])
{
    const int p = m->parent[k];
    if (sd_node_is_aggregate(m, nd, p)) {
        sd_aggregate_inertia_from_child(m, nd, k, Pplus);
        return;
    }
    if (sd_node_is_flexible(m, nd, p)) {
        sd_flexible_inertia_from_child(m, d, nd, k, Pplus);
        return;
    }
    if (m->last_child[p] == k) sd_rigid_inertia_to_sym6(m->rigid + 13 * p, d->P + 36 * p);
    sd_sym6_add_to_parent_plane(&d->Xup[k], d->hinge_plane[k], Pplus, d->P + 36 * p);
}

/* The modal parts of the residuals z(k) before a gather: b_m^f (forward dynamics) or zero (the
 * factors applied to a vector, a = b = 0). Nothing without a node workspace. */
static inline void sd_node_residual_begin(struct sd_node_data *nd, int with_bias)
{
    if (!nd) return;
    if (with_bias) memcpy(nd->zm, nd->bm, (size_t)nd->vec_total * sizeof(double));
    else memset(nd->zm, 0, (size_t)nd->vec_total * sizeof(double));
}

/* eps_f = T_f - z_f into eps (indexed like u), z(k) += g eps_f: the node's own coordinates in the
 * residual gather (001 Eq 63; 004 Eq 58a-c); nothing for a rigid node. */
static inline void sd_node_modal_residual(const sd_model *m, const struct sd_node_data *nd, int k, const double *T,
                                          double *eps, double z[6])
{
    if (sd_node_is_flexible(m, nd, k)) sd_flexible_modal_residual(m, nd, k, T, eps, z);
}

/* nu_f = D_f^-1 eps_f (nu may be eps). */
static inline void sd_node_modal_solve(const sd_model *m, const struct sd_node_data *nd, int k, const double *eps,
                                       double *nu)
{
    if (sd_node_is_flexible(m, nd, k)) sd_flexible_modal_solve(m, nd, k, eps, nu);
}

/* out_f = nu_f + sign g* alpha (sign -1: the acceleration scatter's eta-ddot = nu_f - g* alpha_R,
 * 001 Eq 63; +1: the transposed factor [I + H phi K]*); nu may be out. */
static inline void sd_node_modal_scatter(const sd_model *m, const struct sd_node_data *nd, int k, const double *nu,
                                         double sign, const double alpha[6], double *out)
{
    if (sd_node_is_flexible(m, nd, k)) sd_flexible_modal_scatter(m, nd, k, nu, sign, alpha, out);
}

/* The factor [I + H phi K] x at the node's own coordinates: y_f = x_f + w_f, w(k) += g x_f. */
static inline void sd_node_modal_ne(const sd_model *m, const struct sd_node_data *nd, int k, const double *x,
                                    double *y, double w[6])
{
    if (sd_node_is_flexible(m, nd, k)) sd_flexible_modal_ne(m, nd, k, x, y, w);
}

/* z_f(p) += Y(c)^T z+(c): a child's residual in its flexible parent's modes (001 Eq 63 through
 * phi(p, c)); nothing for a child on a frame. */
static inline void sd_node_residual_to_parent_modes(const sd_model *m, struct sd_node_data *nd, int c,
                                                    const double f[6])
{
    if (sd_node_is_attached(nd, c)) sd_attached_residual_to_parent_modes(m, nd, c, f);
}

/* log det D_f(k) (0 for a rigid node). */
static inline double sd_node_modal_log_det(const sd_model *m, const struct sd_node_data *nd, int k)
{
    return sd_node_is_flexible(m, nd, k) ? sd_flexible_modal_log_det(nd, k) : 0.0;
}

/* ---- closure constraints (src/loops: the rows of G and the constraint forces as loads) ---- */

/* tau[the parent's modal speeds] += w Y(c)^T F: the share of a force F (child c's frame) in the modal
 * generalized forces of c's flexible parent when c rides on one of its nodes (001 Eq 38, the second
 * block of phi(p, c)); nothing for a child on a frame. With w = 1 it is the parent-mode entries of
 * a row of G = J* F; the loops layer walks the rest of the path with the rigid maps. */
static inline void sd_node_attachment_force(const sd_model *m, const struct sd_node_data *nd, int c,
                                            const double F[6], double w, double *tau)
{
    if (!sd_node_is_attached(nd, c)) return;
    const int p = m->parent[c];
    const double *Y = nd->Y + nd->att_off[c];
    for (int r = 0; r < sd_node_nmodes(m, p); ++r) tau[m->mode_v_index[p] + r] += w * sd_s6_dot(Y + 6 * r, F);
}

/* ---- composite bodies (mass_matrix.c; 004 Alg 4.1-4.2, Eq 20; 001 Eq 47-50) ----
 *
 * The recursion works in world axes about the world origin, where phi(p, c) of a child on its
 * parent's frame is the identity: a node's rigid block R^rr(k) is a rigid-body inertia in the
 * 13-number form (d->Rc) and the gather only adds them. A flexible node's M_m^rr has that form too
 * ([Io, [h x]; [h x]^T, m 1], flex_body.c), so its R^rr starts in d->Rc like a rigid body's; its
 * modal blocks stay beside it in the node workspace (nd->R at mat_off[k]): R^rf(k) moved to the world
 * as forces (6 x nm, column-major) and R^ff(k) (nm x nm, row-major), which has no frame. A child c
 * riding on a node of its flexible parent p moves, in world axes, by phi*(p, c) = [1, Y_w(c)] with
 * Y_w(c) = X_world(c) Y(c) (nd->Yw at att_off[c]). */

/* The node's speed count: chi(k) = [hinge speeds (nv_k); modal speeds (nm)] (node_engine.h). */
static inline int sd_node_speeds(const sd_model *m, const struct sd_node_data *nd, int k)
{
    return m->nv_k[k] + (nd ? nd->dim[k] - 6 : 0);
}
/* Whether speed v is a modal speed (its H* is zero: the modes do not move F_k). */
static inline int sd_node_speed_is_modal(const sd_model *m, const struct sd_node_data *nd, int v)
{
    return nd && m->n_modes && v >= m->mode_v_index[m->v_body[v]];
}
/* The motion columns of the parent's modes at child c, Y(c) (6 x nm(p), c's axes; 001 Eq 14), and
 * their count: 0 for a child on a frame (or of a rigid parent). */
static inline int sd_node_parent_mode_columns(const sd_model *m, const struct sd_node_data *nd, int c,
                                              const double **Y)
{
    if (!sd_node_is_attached(nd, c)) return 0;
    *Y = nd->Y + nd->att_off[c];
    return sd_node_nmodes(m, m->parent[c]);
}

void sd_flexible_composite_start(const sd_model *m, const sd_data *d, struct sd_node_data *nd, int k,
                                 double Rk[13]);
void sd_attached_composite_start(const sd_model *m, const sd_data *d, struct sd_node_data *nd, int c);
void sd_flexible_composite_modal_column(const struct sd_node_data *nd, int k, int r, double X[6]);
void sd_nodes_composite_row_modes(const sd_model *m, const struct sd_node_data *nd, int k, int i,
                                  const double X[6], double *row);
void sd_attached_composite_to_parent(const sd_model *m, struct sd_node_data *nd, int c, const double Rc[13]);

/* Y_w(c) = X_world(c) Y(c) for a child riding on a node of its flexible parent (at the world
 * placements); nothing for a child on a frame. */
static inline void sd_node_attachment_to_world(const sd_model *m, const sd_data *d, struct sd_node_data *nd,
                                               int c)
{
    if (sd_node_is_attached(nd, c)) sd_attached_composite_start(m, d, nd, c);
}

/* The entries of row `row` (node k's speed i, lower triangle of M) in the modal columns, from the
 * column's rigid force X = R^r(k) H*(k) e_i (world axes): node k's own modes s <= i (R^ff(k), when i
 * is a modal speed) and every ancestor p's modes, Y_w(c)^T X for the child c of p on the path (001 Eq
 * 50: M(p, k) = H(p) phi(p, c) ... X, the second block of phi(p, c)). Nothing on a model whose nodes
 * are all rigid; the hinge columns are the recursion's (mm_row). */
static inline void sd_node_row_modal_entries(const sd_model *m, const struct sd_node_data *nd, int k, int i,
                                             const double X[6], double *row)
{
    if (nd) sd_nodes_composite_row_modes(m, nd, k, i, X, row);
}

/* The modal blocks of R(p) += phi(p, c) R^rr(c) phi*(p, c) (001 Eq 47) for a child c riding on a node
 * of its flexible parent p: R^rf(p) += R^rr(c) Y_w(c), R^ff(p) += Y_w(c)^T R^rr(c) Y_w(c); its rigid
 * block is the recursion's sum of 13 numbers. Nothing for a child on a frame. */
static inline void sd_node_composite_to_parent_modes(const sd_model *m, struct sd_node_data *nd, int c,
                                                     const double Rc[13])
{
    if (sd_node_is_attached(nd, c)) sd_attached_composite_to_parent(m, nd, c, Rc);
}

#endif /* SOADYN_NODE_KINDS_H */
