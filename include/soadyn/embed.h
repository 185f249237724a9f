/*
 * soadyn/embed.h — closed loops by constraint embedding (000 Sec 5, 002 Sec 3): the bodies of each
 * embedded loop become one aggregate node whose hinge is the loop's independent speeds, and the
 * recursions run over a tree of nodes, so the forward dynamics stays O(N) outside the loops and the
 * embedded constraints hold by construction (they are never integrated).
 *
 * An EMBEDDING is a view of a model with closure constraints (loops.h). Each constraint is either
 * embedded or left tree-augmented (sd_embed_options.loops; the model file's choice by default).
 * The embedded constraints are grouped into aggregates automatically: two constraints share an
 * aggregate when their loops share a body (the strongly connected components of the loop graph),
 * and an aggregate holds every body on the tree paths between its constraints' bodies, below their
 * common ancestor (002 Eq 10-13: the aggregate's parent body). A COUPLING constraint (gears, a
 * geared motor, URDF <mimic>) makes the two hinges' bodies one aggregate.
 *
 * SPEEDS. The aggregate S's tree speeds theta-dot_S split into dependent ones theta-dot_S1 and
 * independent ones theta-dot_S2 (002 Eq 19-20): with Y = [Y1, Y2] the constraint rows on S's
 * speeds, Y1 of full column rank, theta-dot_S = X_S theta-dot_S2, X_S = [-Y1^+ Y2; I]. The split is
 * chosen by a column-pivoted QR of Y at the configuration given to sd_embedding_new (so Y1 is as
 * well conditioned as the pivoting finds), or named by the caller (sd_embed_options.independent).
 * The embedded system's speeds u (size sd_embedding_nv) are the tree speeds outside embedded
 * aggregates and the independent speeds inside them, ordered node by node (sd_embedding_speed_index
 * says which tree speed each one is); the tree speeds of the whole model are N(q) u.
 *
 * CONFIGURATION. The configuration stays the tree's q (nq entries, every hinge's coordinates), so
 * every reader of a body's placement works unchanged. Every evaluation first closes the embedded
 * loops: Newton on the closure residuals over the dependent speeds' directions, holding the
 * independent coordinates, warm-started from the q given (0 iterations when it is closed), to
 * round-off; the q it used is sd_embedded_configuration(). A loop that cannot close from there is
 * SD_E_SINGULAR naming it. When Y1 becomes ill-conditioned along a motion (the split must change)
 * the evaluation fails with SD_E_SINGULAR naming the loop, its condition number and the split
 * that the pivoting would choose there.
 *
 * Constraints left tree-augmented keep their multipliers: the forward dynamics of a model with
 * both kinds solves for them on top of the embedded system (a Schur complement over those rows).
 *
 * Sizes: q has the model's nq entries; u, qdd, tau sd_embedding_nv(); M and M^-1 that squared,
 * row-major; f_ext 6 per body as in dynamics.h; lambda the model's n_c rows (loops.h), for
 * embedded and tree-augmented constraints alike. No evaluation allocates.
 */
#ifndef SOADYN_EMBED_H
#define SOADYN_EMBED_H

#include "dynamics.h"
#include "export.h"
#include "loops.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sd_embedding sd_embedding;
typedef struct sd_embedded_data sd_embedded_data;

/* Options of sd_embedding_new(). Initialise with sd_embed_options_init(). */
typedef struct sd_embed_options {
    /* Which constraints to embed: NULL: the model's choice (each constraint's `embed` flag);
     * "all"; "none"; or a comma-separated list of constraint names (the others tree-augmented). */
    const char *loops;
    /* NULL or "": the split of every aggregate chosen by pivoting. Else a comma-separated list of
     * joint names whose hinge speeds are independent (the override, 002 Eq 19: every aggregate must
     * then get exactly its mobility from the list, and its Y1 must be of full rank). */
    const char *independent;
    /* The configuration (nq) at which aggregates are split by pivoting and from which the first
     * evaluation's Newton starts; NULL: the model's reference configuration, closed by
     * sd_assemble_configuration. */
    const double *q;
} sd_embed_options;

SD_API void sd_embed_options_init(sd_embed_options *options);

/* The embedding of a model's loops. Errors (SD_E_ARGUMENT / SD_E_SINGULAR, naming the constraint
 * and its source file:line): an unknown constraint name in `loops` or joint in `independent`; a
 * model with flexible bodies (SD_E_NOT_SUPPORTED: embedding over flexible nodes is not offered);
 * a loop that cannot be assembled at the configuration; a constraint that closes no loop (both
 * sides on one rigid body, or no speed between them); an override that does not give a loop exactly
 * its mobility or makes Y1 singular. A loop that locks its bodies (mobility 0) is accepted: its
 * aggregate has no speed of its own. The model must outlive the embedding. */
SD_API sd_embedding *sd_embedding_new(const sd_model *model, const sd_embed_options *options, sd_error *err);
SD_API void sd_embedding_free(sd_embedding *embedding);
SD_API const sd_model *sd_embedding_model(const sd_embedding *embedding);

/* The embedded system's speeds, and the tree speed (index into the model's u) of speed i. */
SD_API int sd_embedding_nv(const sd_embedding *embedding);
SD_API int sd_embedding_speed_index(const sd_embedding *embedding, int i);
/* Whether constraint c (loops.h numbering) is embedded (1) or tree-augmented (0); -1 out of range. */
SD_API int sd_embedding_constraint_embedded(const sd_embedding *embedding, int c);
/* Nodes of the embedded tree: rigid bodies outside aggregates, and the aggregates. */
SD_API int sd_embedding_nnodes(const sd_embedding *embedding);
SD_API int sd_embedding_naggregates(const sd_embedding *embedding);
/* Aggregate a (0 .. naggregates-1): its bodies (ascending), its constraints, its tree speeds and
 * which of them are independent (tree speed indices, ascending), and its parent body (-1: the
 * inertial frame). Each call returns the count and fills `out` (may be NULL) with up to that many. */
SD_API int sd_embedding_aggregate_bodies(const sd_embedding *embedding, int a, int *out);
SD_API int sd_embedding_aggregate_constraints(const sd_embedding *embedding, int a, int *out);
SD_API int sd_embedding_aggregate_independent(const sd_embedding *embedding, int a, int *out);
SD_API int sd_embedding_aggregate_parent(const sd_embedding *embedding, int a);
/* A one-paragraph description for reports (soadyn info): each aggregate, its bodies, constraints,
 * independent joints; the tree-augmented constraints. Writes at most size bytes (terminated);
 * returns the length it needed. */
SD_API size_t sd_embedding_describe(const sd_embedding *embedding, char *buf, size_t size);

/* ---------------------------------------------------------------- workspace and kinematics */

SD_API sd_embedded_data *sd_embedded_data_new(const sd_embedding *embedding);
SD_API void sd_embedded_data_free(sd_embedded_data *data);
/* The tree workspace the evaluations fill: placements, body velocities and accelerations, the
 * inter-body forces (when asked) of the last call, for dynamics.h's readers (sd_interbody_force,
 * sd_body_placement_world, sd_kinetic_energy, ...). Its sd_data_error() holds the last failure. */
SD_API sd_data *sd_embedded_tree_data(sd_embedded_data *data);
SD_API const char *sd_embedded_error(const sd_embedded_data *data);

/* Close the embedded loops from q (Newton over the dependent directions, independent coordinates
 * held; see the top of this header) into q_out (may alias q); residual (may be NULL): the largest
 * closure residual left, over the embedded constraints. */
SD_API sd_status sd_embedded_close(const sd_embedding *embedding, sd_embedded_data *data, const double *q,
                                   double *q_out, double *residual);
/* The closed configuration of the last evaluation (nq). */
SD_API const double *sd_embedded_configuration(const sd_embedded_data *data);
/* Tree speeds u_tree = N(q) u (nv of the model) at the closed q; and back: the embedded speeds
 * of tree speeds (their selection; u_tree should satisfy the embedded constraints). */
SD_API sd_status sd_embedded_tree_speeds(const sd_embedding *embedding, sd_embedded_data *data, const double *q,
                                         const double *u, double *u_tree);
SD_API void sd_embedded_speeds_of_tree(const sd_embedding *embedding, const double *u_tree, double *u);
/* The condition number of aggregate a's Y1 at the last evaluation (its split's quality). */
SD_API double sd_embedded_split_condition(const sd_embedded_data *data, int a);

/* ---------------------------------------------------------------- dynamics */

typedef struct sd_embedded_fd_options {
    /* Nonzero: also every body's inter-body force (000 Eq 68-69 inside aggregates, Eq 17 outside),
     * read with sd_interbody_force() on sd_embedded_tree_data(), and the multipliers of every
     * constraint (sd_embedded_constraint_forces). */
    int interbody_forces;
    /* NULL: the actuation is `tau` on the embedded speeds. Else the tree's generalized forces (the
     * model's nv, `tau` then unused and may be NULL): the motion is that of N^T tau_tree, and the
     * multipliers and inter-body forces inside the aggregates are those of tau_tree itself (a
     * force on a dependent hinge moves the mechanism like N^T of it but loads the loop otherwise). */
    const double *tau_tree;
    /* NULL, or one flag per embedded speed: nonzero marks it prescribed (mixed dynamics, 000 Sec 3,
     * on the embedded speeds): qdd holds its given acceleration on input, and its actuator force is
     * an unknown, written to tau_out. The partitioned system M_e,ff qdd_f + C_e,f - G_e,f* lambda_ta
     * = tau_f - M_e,fp qdd_p (with the tree-augmented rows, loops.h's sd_closed_loop_options) is
     * solved densely from M_e and C_e (O(nv^3)); then the embedded forward dynamics under the whole
     * tau gives qdd_tree, the inter-body forces and the multipliers as without prescribed speeds.
     * Prescribed accelerations the tree-augmented loops cannot follow are SD_E_SINGULAR naming them.
     * Not with tau_tree. */
    const unsigned char *prescribed;
    double *tau_out; /* with prescribed: nv entries, tau with the prescribed speeds' forces written */
} sd_embedded_fd_options;

/* qdd of the embedded system (000 Eq 62-67): the Riccati gather over nodes, the aggregate's
 * D_S = Hbar P_S Hbar* of the size of its independent speeds; tree-augmented constraints on top.
 * qdd_tree (nv of the model, may be NULL): the tree accelerations X_S qdd + Xdot_S u. */
SD_API sd_status sd_embedded_forward_dynamics(const sd_embedding *embedding, sd_embedded_data *data,
                                              const double *q, const double *u, const double *tau,
                                              const double *f_ext, double *qdd, double *qdd_tree,
                                              const sd_embedded_fd_options *options);
/* tau (embedded speeds) producing qdd: tau = M_e qdd + C_e by Newton-Euler over nodes.
 * With constraints left tree-augmented beside the embedded ones (rows G_ta on the tree speeds,
 * G_e = G_ta N on the embedded ones), the equations are M_e qdd + C_e - G_e* lambda_ta = tau and
 * G_e qdd + (Gdot u)_ta = 0 (000 Eq 44 on the embedded speeds). The motion must be one the
 * tree-augmented loops allow: qdd that breaks them is SD_E_ARGUMENT naming the constraints. Then
 * lambda_ta is not fixed by the motion alone but by which speeds the actuators drive: here every
 * embedded speed is driven, and lambda_ta is the one of least norm, zero (the loops carry no force
 * the actuators could take; as sd_constrained_inverse_dynamics with every speed actuated), so tau
 * = M_e qdd + C_e, and sd_embedded_forward_dynamics under this tau returns qdd with lambda_ta = 0. */
SD_API sd_status sd_embedded_inverse_dynamics(const sd_embedding *embedding, sd_embedded_data *data,
                                              const double *q, const double *u, const double *qdd,
                                              const double *f_ext, double *tau);
/* The same with only the embedded speeds flagged in `actuated` driven (one flag per embedded speed;
 * NULL: none): tau is zero on the others, and the tree-augmented loops carry what the unactuated
 * speeds need: G_e,U* lambda_ta = (M_e qdd + C_e)_U over the unactuated speeds U, lambda_ta of
 * minimum norm where several do (over-actuation, redundant rows), tau = M_e qdd + C_e - G_e*
 * lambda_ta. lambda_ta (may be NULL): one multiplier per tree-augmented row, the model's rows
 * (loops.h) of the constraints not embedded, in their order. Errors as above, and SD_E_SINGULAR
 * naming an unactuated joint when the actuated speeds and the tree-augmented loops cannot produce
 * the motion. (The forces inside the aggregates: sd_embedded_forward_dynamics under this tau, with
 * interbody_forces, and sd_embedded_constraint_forces.) */
SD_API sd_status sd_embedded_constrained_inverse_dynamics(const sd_embedding *embedding, sd_embedded_data *data,
                                                          const double *q, const double *u, const double *qdd,
                                                          const double *f_ext, const unsigned char *actuated,
                                                          double *tau, double *lambda_ta);
/* The mass matrix in the embedded speeds (= N* M N of the tree, armature included), by composite
 * nodes; the bias forces C (N* of the tree's C plus the Xdot terms). */
SD_API sd_status sd_embedded_mass_matrix(const sd_embedding *embedding, sd_embedded_data *data, const double *q,
                                         double *M);
SD_API sd_status sd_embedded_bias_forces(const sd_embedding *embedding, sd_embedded_data *data, const double *q,
                                         const double *u, const double *f_ext, double *c);
/* M^-1 from the innovations factors over nodes (004 Eq 51 with the nodes' D, G), and
 * log det M = sum over nodes of log det D (004 Cor 6.1). */
SD_API sd_status sd_embedded_mass_matrix_inverse(const sd_embedding *embedding, sd_embedded_data *data,
                                                 const double *q, double *Minv);
SD_API sd_status sd_embedded_log_det(const sd_embedding *embedding, sd_embedded_data *data, const double *q,
                                     double *log_det);
/* The multipliers (n_c) of every constraint at the last forward dynamics that asked for inter-body
 * forces: embedded constraints' from the aggregate's internal forces (Y1^T lambda = the tree
 * generalized forces the aggregate's bodies leave unbalanced, minimum norm on redundant rows),
 * tree-augmented ones' from their Schur solve. sd_constraint_force() reads them the same way. */
SD_API sd_status sd_embedded_constraint_forces(const sd_embedding *embedding, sd_embedded_data *data,
                                               double *lambda);

/* ---------------------------------------------------------------- the geared motor (002 Eq 17) */

/* A link driven through a gear by a motor whose rotor sits on the link's parent: two bodies, both
 * children of `parent`, and one COUPLING constraint q_rotor = ratio q_link (002 Eq 17:
 * theta-dot_S = [theta-dot_mtr, theta-dot_lnk], X_S = [ratio, 1]^T). Unlike an armature (the rotor's
 * inertia times ratio^2 on the link's speed), the rotor is a body of its own, so its gyroscopic
 * coupling with the parent's rotation and its own mass and placement are kept. Bodies and joints:
 * NAME (the link, revolute about `axis`), NAME_rotor (revolute about `rotor_axis`); constraint
 * NAME_gear (embedded by default: the pair becomes one aggregate node with one speed). The split's
 * pivoting makes the link's speed the dependent one when |ratio| > 1 (its column of the gear's row
 * is the larger), so the embedded speed is the rotor's; sd_embed_options.independent = NAME gives
 * 002's split (the link's speed). The embedded torque acts on that independent speed: a motor torque
 * tau_m on the rotor is ratio tau_m on the link. Initialise with sd_geared_motor_desc_init(). */
typedef struct sd_geared_motor_desc {
    const char *name;            /* the link's body and joint name (required); the rest derive from it */
    const char *parent;          /* the body both hang on; NULL or "": the inertial frame */
    sd_transform placement;      /* the link's joint frame in the parent's frame */
    double axis[3];              /* the link's revolute axis (joint frame) */
    double mass, com[3], inertia[9];                 /* the link, as in sd_body_desc */
    sd_transform rotor_placement; /* the rotor's joint frame in the parent's frame */
    double rotor_axis[3];        /* the rotor's revolute axis (its joint frame) */
    double rotor_mass, rotor_com[3], rotor_inertia[9]; /* the rotor */
    double ratio;                /* q_rotor = ratio q_link (nonzero; the gear ratio, e.g. 100) */
    double damping;              /* viscous damping on the link's hinge (as sd_body_desc.damping) */
    int embed;                   /* the gear constraint's embed flag (sd_constraint_desc.embed); 1 */
    const char *source_file;     /* for messages; may be NULL */
    int source_line;
} sd_geared_motor_desc;

/* Defaults: no name, the inertial frame, identity placements, both axes z, zero masses and
 * inertias, ratio 1, no damping, embed 1. */
SD_API void sd_geared_motor_desc_init(sd_geared_motor_desc *desc);
/* Add the motor's two bodies and its gear constraint to the builder (libsoadyn_core). Errors
 * (SD_E_MODEL, the message starting with the source file:line and naming the motor): no name, a
 * zero or non-finite ratio (nothing added), and whatever sd_builder_add_body /
 * sd_builder_add_constraint refuse (duplicate names, bad inertias or placements). */
SD_API sd_status sd_builder_add_geared_motor(sd_builder *builder, const sd_geared_motor_desc *desc, sd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_EMBED_H */
