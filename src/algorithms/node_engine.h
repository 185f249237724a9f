/*
 * src/algorithms/node_engine.h — the node seam: one pair of sweeps for every kind of node.
 *
 * WHY. 004 Sec 2.3 and Sec 8, 001 Sec 2-5 and 000 Sec 3 and 5 show that one tips-to-base gather and
 * one base-to-tips scatter over the SKO model (H, phi, M) serve rigid bodies, flexible bodies and
 * aggregated loop bodies alike: only the sizes of the blocks change. This engine is that claim in
 * code, in part: the motion scatter (kinematics.c), Newton-Euler (inverse_dynamics.c), composite
 * bodies (mass_matrix.c) and articulated bodies (forward_dynamics.c; their factors in innovations.c)
 * are written once over nodes, asking each node's kind for its operations (node_kinds.h) and
 * instantiated once for models of rigid nodes only (the fixed-size kernels alone) and once for the
 * others (docs/design.md lists the places that still know about kinds).
 *
 * A NODE is what a sweep visits. Node k has a dimension dim[k] = 6 + nm (rigid: nm = 0; flexible:
 * its n_modes; an aggregate (constraint embedding, next issue): the stacked sizes of its bodies) and
 * its vectors live at vec_off[k] (dim[k] doubles), its matrices at mat_off[k] (dim[k]^2, row-major).
 * A node vector is [V (the rigid part: omega, v of the node's frame, its own axes); the node's extra
 * coordinates' rates], so the rigid part of every node sits first. The node's generalized speeds are
 * chi(k) = [hinge speeds (nv_k); extra speeds (nm)]; its hinge map (001 Eq 15 with the hinge on F_k)
 * is block diagonal, H(k) = diag(H_hinge(k), I_nm).
 *
 * WHAT THE MOTION SCATTER LEAVES (sd_update_motion, kinematics.c, the first scatter of every
 * algorithm; the node kinds' operations of node_kinds.h / node_flexible.c). It asks each node for
 *   M(k)   (dim^2): the rigid inertia, or the modal mass matrix M_m (001 Eq 25, flex_body.c)
 *   b(k)   (dim):   V x* M V, or b_m + K_m eta + D_m eta-dot (001 Eq 38-40), minus f_ext on the rigid part
 *   a(k)   (dim):   the Coriolis acceleration [a; 0] (001 Eq 27), with the node frame's terms below
 *   Y(c)   (6 x nm(p)): how the parent's modal rates move child c (below); absent for a rigid parent
 * and leaves them in the workspace. Every later sweep (Newton-Euler, composite bodies, articulated
 * bodies, energies, Jacobian) reads only dim, the offsets, M_m, b_m, a_m and Y, and treats every node
 * alike; the motion and force maps between a child c and its parent p are
 *   child motion   V(c) = phi*(p, c) V_m(p) + H*(c) u(c),   phi*(p, c) = [Xup(c), Y(c)]   (001 Eq 13-14)
 *   parent force   phi(p, c) f = [Xup(c)^T f; Y(c)^T f] and phi P phi* for a 6x6 P (001 Eq 16-17:
 *                  A(k) B(k+1, k), every child-to-parent quantity passes through 6 numbers).
 * So a new kind of node is new operations in node_kinds.h (and its own elimination in the Riccati
 * step), not a change to the sweeps.
 * Because phi(p, c) acts only on the child's rigid part (the first block column of 001 Eq 14 is zero),
 * what a child hands its parent is always a 6-vector or 6x6 block: the Riccati step of a node eliminates
 * its extra coordinates first and then its hinge (001 Eq 62-63), its parent sees a rigid child, and the
 * composite inertia a child hands on is its 6x6 block R^rr (001 Eq 50).
 *
 * NODES ON NODES. A child c may ride on node t of a flexible parent p. With N = N_t(eta_p) the deformed
 * node frame (flex_body.h: pose in F_p, relative twist S_t eta-dot_p in N's axes) and T = c placed in N
 * (node_placement(c) * XJ(q_c)): Xup(c) = pose(N) T, Y(c) = X(c <- N) S_t, and a(c) gains
 * X(c <- N) (S_t-dot eta-dot_p + V_N x S_t eta-dot_p), V_N = X(N <- p) V(p) + S_t eta-dot_p (node_flexible.c).
 *
 * CONVENTIONS the engine keeps with the fast path, so that results mean the same on every model:
 * - Gravity: the base is given the acceleration -g (alpha_has_gravity), so every node's weight enters
 *   through M_m alpha_m; exact for the full mass model (M_m is the lumped nodes' kinetic metric).
 * - f_ext (6 per body, body frame) acts on the rigid part: a force at a point moving with F_k. It
 *   reaches the body's modes only through its children, as the Jacobian below says.
 * - Joint-level terms of the hinges (dynamics.h, joint_dynamics.c) as on rigid models: the armature J
 *   on the hinge speeds' diagonal of M (and of D(k)'s hinge block in the Riccati step), tau_passive
 *   = -damping u - stiffness (q - spring_ref) of each hinge in C, 1/2 J u^2 in the kinetic energy.
 *   Modal speeds have none of them; their damping and stiffness are the body's D_m, K_m (001 Eq 38-40),
 *   which are in b_m and so in C.
 * - The modal speeds' columns of d->S are zero (the modes do not move F_k), so readers of H* per
 *   speed see the truth; nv_k/v_index keep meaning the hinge's speeds.
 * - Currency: the engine sets the same SD_CURRENT_* flags. Y, node_pose, M_m and q are current when
 *   PLACEMENTS is; V_m, a_m, b_m when VELOCITIES is; alpha_m when ACCELERATIONS is.
 *
 * Bodies stay the user's unit: after a sweep the rigid parts are copied to the per-body arrays of
 * sd_data (V, a, b, alpha, f, Xup, Xworld, ...), so every reader of dynamics.h works unchanged.
 */
#ifndef SOADYN_NODE_ENGINE_H
#define SOADYN_NODE_ENGINE_H

#include "internal.h"

typedef enum sd_node_kind {
    SD_NODE_RIGID = 0,
    SD_NODE_FLEXIBLE = 1,
    /* An aggregate of constraint embedding (000 Sec 5, Eq 52-60; 002): to the sweeps after the motion
     * scatter, a node like a flexible body whose rigid part is welded to the body it hangs on and
     * whose own coordinates are the aggregate's independent speeds u_s; its member bodies are its
     * node frames. Only node models exist with it; their owner (src/embed/embed_node_model.c) stores
     * their motion, and the articulated sweeps run on it (sd_nodes_articulated). */
    SD_NODE_AGGREGATE = 2
} sd_node_kind;

/* The engine's workspace (allocated once per model by sd_node_data_new, one block). */
struct sd_node_data {
    int *dim;            /* per body: 6 + n_modes */
    int *vec_off;        /* per body: offset of its node vectors */
    int *mat_off;        /* per body: offset of its node matrices */
    int *att_off;        /* per body: offset of Y(c) (6 x nm(parent), column-major), -1: none */
    int vec_total, mat_total, att_total;
    int max_dim;         /* the largest dim[k] */
    /* kinematics (the motion scatter, kinematics.c and node_flexible.c) */
    double *Y;           /* att_total: attachment maps Y(c) */
    double *node_pose;   /* 12 per body (an sd_transform: R row-major, p): for a body with parent_node
                            t >= 0, the deformed node frame N_t in the parent's frame; else unused */
    double *q;           /* nq: the q of the last motion scatter (the energies and the centre of mass
                            read eta from it) */
    double *u;           /* nv: the u of the last motion scatter, zeros for none (the armature's energy) */
    double *Vm;          /* vec_total: node velocities [V; eta-dot] */
    double *am;          /* vec_total: Coriolis accelerations a_m (001 Eq 27), [a; 0] */
    double *bm;          /* vec_total: node bias b(k) incl. elastic and damping forces, minus f_ext */
    double *Mm;          /* mat_total: node masses M(k) at the current q */
    double *alpha_m;     /* vec_total: node accelerations [alpha; eta-ddot] */
    double *fm;          /* vec_total: node forces f_m (001 Eq 38) */
    /* composite bodies (mass_matrix.c, 001 Eq 47-50; node_kinds.h says the frame) */
    double *R;           /* mat_total: a flexible node's modal blocks of R(k), world axes: R^rf (6 x nm,
                            column-major), then R^ff (nm x nm); R^rr(k) is in d->Rc */
    double *Yw;          /* att_total: Y_w(c) = X_world(c) Y(c), world axes */
    double *ST;          /* 6 x nv: H* of every speed in world axes, by rows (a modal speed's zero) */
    /* articulated bodies (forward_dynamics.c, innovations.c; node_flexible.c: 001 Eq 62-63) */
    double *P;           /* mat_total: P(k) before elimination (started by its first child) */
    double *Dfchol;      /* mat_total (nm^2 + nm used): Cholesky factor L of D_f(k) = P^ff(k), then the
                            reciprocals of its diagonal */
    double *g;           /* mat_total (nm x 6 used): g(k)^T = D_f^-1 P^fr, row-major */
    double *zm;          /* vec_total: z(k) (its modal part used; the rigid part is sd_data's z) */
    double *eps_f, *nu_f;/* nv each, indexed like u (the modal speeds' entries used): eps_f, nu_f */
    double *scratch;     /* vec_total + mat_total doubles of scratch */
    size_t bytes;
    /* aggregate nodes (node_aggregate.c): their members as the aggregate kind reads them, owned and
     * filled by the node model's owner (src/embed); NULL: every aggregate by the generic path */
    struct sd_aggregate_members *agg;
};

/* An aggregate node's member bodies, for the aggregate kind's own articulated step (node_aggregate.c,
 * 000 Eq 62-65 with the members' 6x6 blocks). Members are numbered globally, those of node s from
 * first[s] to first[s] + count[s] - 1, parents before children; count[s] = 0 leaves node s (or any
 * node not an aggregate) to the generic dense path of the flexible kind (node_flexible.c: M(k) in
 * the node workspace). The pointers into the owner's arrays stay valid for the workspace's life:
 * the kind reads the members' placements and hinge maps where the owner's motion leaves them. */
struct sd_aggregate_members {
    const int *first, *count;   /* per node of the node model */
    const int *node_body;       /* per node: the owner's body whose placement in its parent member is
                                   X(c <- j) for a node c riding on member j (node_engine.h "nodes on nodes");
                                   -1 for an aggregate, welded to the member (X(c <- j) the identity) */
    const int *parent;          /* per member: the member it hangs on (global index), -1: the node frame A */
    const int *body;            /* per member: the owner's body (index into Xup, plane, rigid) */
    const int *hoff;            /* per member: Hbar*_j's rows in Hbar, Hbar[hoff + r ni + i] (r < 6, i < ni) */
    const int *joff;            /* per node: Jbar(s) (ni x ni, row-major) in Jbar */
    const double *Hbar, *Jbar;  /* the aggregates' hinge maps and reflected armature (000 Eq 52-60) */
    const sd_transform *Xup;    /* the owner's placements: Xup[body] = X(body <- its parent body) */
    const signed char *plane;   /* the owner's plane rotations (sd_data's hinge_plane) */
    const double *rigid;        /* the owner's inertias, 13 per body */
    double *Pm;                 /* 36 per member: its block of P(s) (its inertia and its children's P+) */
    double *K;                  /* 6 max_ni per member: P_j Hbar*_j, then carried up the aggregate */
    double *scratch;            /* 12 max_ni + 6: Hbar*_j's columns, K at the node frame */
    int max_ni;
};

/* The workspace of a model with nflex > 0 (data.c calls these); NULL when out of memory. */
struct sd_node_data *sd_node_data_new(const sd_model *m);
void sd_node_data_free(struct sd_node_data *nd);

static inline sd_node_kind sd_node_kind_of(const sd_model *m, int k)
{
    if (m->node_kind) return (sd_node_kind)m->node_kind[k];
    return m->flex && m->flex[k] ? SD_NODE_FLEXIBLE : SD_NODE_RIGID;
}

/* The body's modes (0 for a rigid body, also on a model without flexible fields) and the parent's
 * node its hinge rides on (-1: the parent's frame). */
static inline int sd_node_nmodes(const sd_model *m, int k) { return m->n_modes ? m->n_modes[k] : 0; }
static inline int sd_node_parent_node(const sd_model *m, int k)
{
    return m->parent_node && m->parent[k] >= 0 && sd_node_kind_of(m, m->parent[k]) != SD_NODE_RIGID ? m->parent_node[k]
                                                                                                   : -1;
}

/* ---- the engine's algorithms: the same contracts as the public functions they serve ---- */

/* The motion scatter is sd_update_motion (kinematics.c), one for every node kind: placements (Xup
 * with node frames, Y), velocities Vm/am/bm (u may be NULL), node masses, and the per-body copies;
 * sd_kinematics's accelerations (001 Eq 26) are one sweep for every kind too. */

/* Articulated bodies (forward dynamics, prescribed hinges, inter-body forces, det M) and the
 * innovations factors, M^-1 and their solves are written once for every node kind
 * (forward_dynamics.c, innovations.c, node_kinds.h "articulated bodies"). */
/* y = M^-1 J_body^T f and d->alpha = J qdd for y: the response of every body (its rigid part, body axes)
 * to a spatial force f on `body` (its frame, its axes), by the residual gather, D^-1 and the scatter
 * of the factors of the last Riccati gather (004 Eq 58-60 with a = b = 0): Omega(., body) f. */
/* The articulated-body forward dynamics (the Riccati gather, the residual gather and the
 * acceleration scatter of forward_dynamics.c, node instance) on a workspace whose motion the caller
 * stored: per body Xup, H* (S), a, b, and in d->nodes M(k), b(k), Y, node poses. A node model's
 * owner (src/embed) does this for its aggregate nodes, whose motion is the embedding's. Leaves the
 * factors (SD_CURRENT_ARTICULATED), qdd, alpha. */
sd_status sd_nodes_articulated(const sd_model *m, sd_data *d, const double *tau, double *qdd);

void sd_nodes_force_response(const sd_model *m, sd_data *d, int body, const double f[6], double *y);

/* The motion scatter, the accelerations, Newton-Euler, the Jacobian, centre of mass, momentum and
 * energies are written once for every node kind (kinematics.c, inverse_dynamics.c, node_kinds.h);
 * on a rigid model given a node workspace (d->nodes set) they run their node instance, which is how
 * the tests check the engine's node sweeps against the fast path.
 * A POINT ON A FLEXIBLE BODY (sd_jacobian_world, frames) moves with the body frame F_k: the body's own
 * modes deform the body relative to F_k and do not move it, so their Jacobian columns are zero; the
 * modes of an ancestor p move the point when the path from p to the body leaves p at a node (the
 * columns of Y). A point that should follow the deformation rides on a child body at a node.
 * Centre of mass, momentum and energies count every FE node at its deformed position
 * (l0_j + Pi_t^j eta in F_k, both mass models: the linearised model approximates only M_m), the
 * body's rigid part at its centre of mass; kinetic energy 1/2 V_m^T M_m V_m and momentum the rigid
 * rows of M_m V_m (the nodes' momentum about F_k) per node. */
/* The joint frame of body k's hinge in its parent's body frame at the last placements: the joint
 * placement, or for a body riding on node t, pose(N_t(eta)) * node_placement (sd_interbody_force's
 * joint frame). */
void sd_nodes_joint_frame(const sd_model *m, const sd_data *d, int k, sd_transform *J);

#endif /* SOADYN_NODE_ENGINE_H */
