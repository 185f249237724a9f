/*
 * src/algorithms/node_kinds.h — the node kinds' operations (node_engine.h): what a sweep asks of a
 * node, answered by the node's kind. A recursion written once over nodes calls these and never
 * tests a kind itself; this header is where a node's kind is read for the sweeps it serves
 * (docs/design.md lists every such place).
 *
 * Kinds: RIGID (dim 6: the fixed-size kernels of internal.h on the per-body arrays of sd_data,
 * inline here) and FLEXIBLE (dim 6 + nm: the node workspace's M_m, b_m of node_kinematics.c, 001
 * Eq 25, 38-40; out of line in node_flexible.c, so that the rigid kernels inlined into a sweep keep
 * their registers). Every child-to-parent quantity passes through the child's rigid part (001 Eq
 * 16-17), so the sweeps carry 6-vectors in the per-body arrays; a flexible node keeps its modal part
 * beside them in the node workspace, and a child riding on a node of a flexible parent adds the
 * attachment terms with Y(c) (node_engine.h: phi*(p, c) = [Xup(c), Y(c)]).
 *
 * nd is the model's node workspace, d->nodes; NULL on a model whose nodes are all rigid (which then
 * has no attachments either). A recursion is written once as an always-inlined body taking nd and
 * instantiated twice by SD_ENGINE_INSTANCES: with nd the constant NULL, every kind test below folds
 * away and the rigid model runs the fixed-size kernels alone, as fast as before the engine (a run-time
 * test per node, even of a register, made the compiler spill in the sweep: +5% instructions in
 * Newton-Euler on the iiwa); with nd the workspace, the kinds are asked per node.
 *
 * The motion scatter that every recursion starts with is still written twice (kinematics.c for
 * models without a node workspace, node_kinematics.c for the others); sd_engine_motion picks one.
 */
#ifndef SOADYN_NODE_KINDS_H
#define SOADYN_NODE_KINDS_H

#include "node_engine.h"

/* The first scatter of every recursion: placements, V, a(k), b(k) (minus f_ext) and, on a model
 * with a node workspace, the node masses and modal parts. */
static inline void sd_engine_motion(const sd_model *m, sd_data *d, const double *q, const double *u,
                                    const double *f_ext, int with_world)
{
    if (d->nodes) sd_nodes_motion(m, d, q, u, f_ext, with_world);
    else sd_update_motion(m, d, q, u, f_ext, with_world);
}

/* The body of a recursion over nodes (written once, taking nd last). */
#define SD_ENGINE_SWEEPS static inline __attribute__((always_inline))
/* Call body(args..., nd) in its instance: rigid nodes only (nd NULL) or the node workspace's. */
#define SD_ENGINE_INSTANCES(d, body, ...) \
    ((d)->nodes ? body(__VA_ARGS__, (d)->nodes) : body(__VA_ARGS__, (struct sd_node_data *)NULL))

/* A node is handled by the flexible kind's operations (node_flexible.c). */
static inline int sd_node_is_flexible(const sd_model *m, const struct sd_node_data *nd, int k)
{
    return nd && sd_node_kind_of(m, k) == SD_NODE_FLEXIBLE;
}
/* A child riding on a node of its flexible parent (the attachment map Y(c) of node_engine.h). */
static inline int sd_node_is_attached(const struct sd_node_data *nd, int c) { return nd && nd->att_off[c] >= 0; }

/* ---- the flexible kind and attachments (node_flexible.c) ---- */

void sd_flexible_own_force(const sd_model *m, struct sd_node_data *nd, int k, const double alpha[6],
                           const double *qdd, double f[6]);
void sd_flexible_modal_forces(const sd_model *m, const struct sd_node_data *nd, int k, double *tau);
void sd_attached_motion_modes(const sd_model *m, const struct sd_node_data *nd, int c, const double *qdd,
                              double alpha[6]);
void sd_attached_force_to_parent_modes(const sd_model *m, struct sd_node_data *nd, int c, const double f[6]);

/* ---- Newton-Euler (inverse_dynamics.c) ---- */

/* alpha(c) += Y(c) eta-ddot(p): the motion a child riding on a node of its flexible parent p gets
 * from the parent's modal accelerations (001 Eq 26, the second block of phi*(p, c)); nothing for a
 * child on a frame. qdd NULL: no modal accelerations. */
static inline void sd_node_child_motion_modes(const sd_model *m, const struct sd_node_data *nd, int c,
                                              const double *qdd, double alpha[6])
{
    if (sd_node_is_attached(nd, c) && qdd) sd_attached_motion_modes(m, nd, c, qdd, alpha);
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

#endif /* SOADYN_NODE_KINDS_H */
