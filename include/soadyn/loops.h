/*
 * soadyn/loops.h — closed loops by tree augmentation (000 Sec 4): a spanning tree (the model's
 * bodies) plus closure constraints with Lagrange multipliers.
 *
 * Equations of motion (000 Eq 43-44), with n_c constraint rows G(q) u = 0:
 *     M qdd + C - G* lambda = T,     G qdd = -Gdot u.
 * G* lambda is the generalized force of the constraint forces; lambda holds, per constraint, the
 * force the cut joint carries (000 Sec 4: "the Lagrange multipliers are precisely the inter-body
 * forces for the cut-joint pair"), see sd_constraint_force().
 *
 * A constraint ties a frame F_A on body A (or the inertial frame) to a frame F_B on body B. Its rows
 * are components of the relative spatial velocity of B with respect to A, taken in F_A's axes at
 * F_B's origin p, Delta = [R_A^T (w_B - w_A); R_A^T (v_B(p) - v_A(p))] (v_X(p): velocity of body
 * X's material point at p), so that lambda's entries are moments and forces in F_A's axes at p:
 *   WELD       6 rows  all of Delta                         (F_A and F_B coincide)
 *   BALL       3 rows  the linear part                      (origins of F_A, F_B coincide)
 *   REVOLUTE   5 rows  angular x, y and linear x, y, z      (rotation about `axis` free)
 *   PRISMATIC  5 rows  angular x, y, z and linear x, y      (translation along `axis` free)
 *   DISTANCE   1 row   e.(v_B(p_B) - v_A(p_A)), e the unit vector from F_A's origin to F_B's
 *                      (their distance stays `distance`; lambda is the pull along e on B)
 *   COUPLING   1 row   u_a - ratio u_b (q_a = ratio q_b + offset between two revolute or prismatic
 *                      hinges named by joint: gears, URDF <mimic>; lambda is the generalized force on
 *                      hinge a, and -ratio lambda acts on hinge b)
 *   POINT_IN_PLANE 1 row  linear z: F_B's origin stays in the plane through F_A's origin whose
 *                      normal is `axis` (lambda: the force along the normal on B)
 *   PLANAR     3 rows  angular x, y and linear z: B keeps F_A's plane (normal `axis`), turning
 *                      about the normal and sliding in the plane (a planar joint cut open)
 * For REVOLUTE, PRISMATIC, POINT_IN_PLANE and PLANAR, `axis` (the free axis, or the plane's normal)
 * is given in F_A's coordinates; the builder turns both F_A and F_B about the same rotation so that
 * the axis becomes their z (so the frames the caller gives must coincide, up to the free motion,
 * when the loop is closed; a point-in-plane only asks F_B's origin to lie in the plane).
 *
 * Redundant rows are normal (a planar four-bar closed by a full revolute constraint): the forward
 * dynamics then returns the minimum-norm multipliers and reports the rank of G M^-1 G*; rows that
 * contradict each other are an error naming the constraints. The rank-revealing solves use LAPACK
 * (Debian liblapacke-dev): the builder, queries, residuals, Jacobian and frames below are part of
 * libsoadyn_core (libm only); everything that solves with G M^-1 G* or G G* (sd_constraint_rank,
 * the forward and inverse dynamics, assembly, projection, forces) is in libsoadyn.
 *
 * Sizes: q has nq entries, u, qdd, tau nv, lambda n_c = sd_model_nconstraint_rows(), G n_c x nv
 * row-major. No function here allocates on an evaluation path: the workspace comes with sd_data_new().
 */
#ifndef SOADYN_LOOPS_H
#define SOADYN_LOOPS_H

#include "dynamics.h"
#include "export.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kinds of closure constraints (see the top of this header for their rows). */
typedef enum sd_constraint_type {
    SD_CONSTRAINT_WELD = 0,
    SD_CONSTRAINT_BALL,
    SD_CONSTRAINT_REVOLUTE,
    SD_CONSTRAINT_PRISMATIC,
    SD_CONSTRAINT_DISTANCE,
    SD_CONSTRAINT_COUPLING,
    SD_CONSTRAINT_POINT_IN_PLANE,
    SD_CONSTRAINT_PLANAR,
    SD_CONSTRAINT_TYPE_COUNT
} sd_constraint_type;

/* Name of a constraint type ("weld", ...); "unknown" out of range. */
SD_API const char *sd_constraint_type_name(sd_constraint_type type);
/* Rows of a constraint type (6, 3, 5, 5, 1, 1, 1, 3); -1 out of range. */
SD_API int sd_constraint_type_nrows(sd_constraint_type type);

/* One closure constraint. Initialise with sd_constraint_desc_init(). */
typedef struct sd_constraint_desc {
    const char *name;         /* unique among the constraints (required) */
    sd_constraint_type type;
    const char *body_a;       /* body or model frame (sd_builder_add_frame) carrying F_A; NULL or "": the
                                 inertial frame. Not used by COUPLING. */
    sd_transform frame_a;     /* F_A in body_a's frame (in the named frame's, when body_a names a frame) */
    const char *body_b;       /* likewise for F_B */
    sd_transform frame_b;
    double axis[3];           /* REVOLUTE / PRISMATIC: the free axis, POINT_IN_PLANE / PLANAR: the plane's
                                 normal, in F_A coordinates (normalised) */
    double distance;          /* DISTANCE: the length kept, > 0 */
    const char *joint_a;      /* COUPLING: q(joint_a) = ratio q(joint_b) + offset */
    const char *joint_b;
    double ratio, offset;
    int embed;                /* the model's choice for this loop: nonzero embedded into an aggregate
                                 node (soadyn/embed.h), 0 tree-augmented (the default) */
    const char *source_file;  /* where the constraint was described, for messages; may be NULL */
    int source_line;          /* 0: unknown */
} sd_constraint_desc;

/* Defaults: no name, WELD, both frames identity on the inertial frame, axis z, distance 0 (must be
 * set for DISTANCE), ratio 1, offset 0. */
SD_API void sd_constraint_desc_init(sd_constraint_desc *desc);

/* Add a closure constraint to the builder (strings copied). Checked here: name present and unique,
 * type known, numbers finite, axis (normal) nonzero, distance > 0, ratio nonzero, a coupling not to itself.
 * Names of bodies, frames and joints are resolved by sd_builder_build(), whose errors name the
 * constraint (and source_file:line): unknown names, a constraint between a body and itself, a
 * coupling on a hinge that is not revolute or prismatic. */
SD_API sd_status sd_builder_add_constraint(sd_builder *builder, const sd_constraint_desc *desc, sd_error *err);

/* ---------------------------------------------------------------- queries */

SD_API int sd_model_nconstraints(const sd_model *model);
/* n_c: the rows of all constraints, stacked in the order they were added. */
SD_API int sd_model_nconstraint_rows(const sd_model *model);
SD_API int sd_model_constraint_index(const sd_model *model, const char *name); /* -1 if none */
SD_API const char *sd_model_constraint_name(const sd_model *model, int constraint);
SD_API sd_constraint_type sd_model_constraint_type(const sd_model *model, int constraint);
SD_API int sd_model_constraint_nrows(const sd_model *model, int constraint);
/* The model's choice for a constraint: 1 embedded (soadyn/embed.h), 0 tree-augmented; -1 out of range. */
SD_API int sd_model_constraint_embed(const sd_model *model, int constraint);
/* The first row of a constraint in G, lambda and the residuals. */
SD_API int sd_model_constraint_row_offset(const sd_model *model, int constraint);
/* The bodies a constraint ties (-1: the inertial frame); for COUPLING the bodies whose hinges it
 * couples. Either pointer may be NULL. */
SD_API sd_status sd_model_constraint_bodies(const sd_model *model, int constraint, int *body_a, int *body_b);

/* ---------------------------------------------------------------- kinematics of the constraints */

/* Position residuals (n_c: zero when the loops are closed) and velocity residuals G u (n_c) at
 * (q, u); either output may be NULL, u may be NULL when vel is. Position residuals per kind:
 * translation R_A^T (p_B - p_A) (the constrained components), rotation log(R_A^T R_B) (WELD,
 * PRISMATIC) or (-b_y, b_x) with b = R_A^T R_B e_z (REVOLUTE), |p_B - p_A| - distance, and
 * q_a - ratio q_b - offset. Their time derivatives are the rows of G u (exactly for translations,
 * distances and couplings, at closure for rotations). PLANAR's rotation residuals are REVOLUTE's. */
SD_API sd_status sd_constraint_residuals(const sd_model *model, sd_data *data, const double *q, const double *u,
                                         double *pos, double *vel);
/* World placement of F_A (side 0) or F_B (side 1) of a cut or distance constraint (axes turned by
 * the builder), at the configuration of the last call of this header's functions on `data`. */
SD_API sd_status sd_constraint_frame_world(const sd_model *model, const sd_data *data, int constraint, int side,
                                           sd_transform *out);
/* The constraint Jacobian G(q), n_c x nv row-major (dense; for tests, assembly and reports). */
SD_API sd_status sd_constraint_jacobian(const sd_model *model, sd_data *data, const double *q, double *G);

/* The rank of G(q) (how many rows are independent there) and the mobility nv - rank (the degrees
 * of freedom of the closed system at q); either output may be NULL. */
SD_API sd_status sd_constraint_rank(const sd_model *model, sd_data *data, const double *q, int *rank, int *mobility);

/* ---------------------------------------------------------------- forward dynamics */

/* Options of sd_closed_loop_forward_dynamics(). Zero-initialise, then set what you need. */
typedef struct sd_closed_loop_options {
    /* Nonzero: also the inter-body force of every tree hinge of the closed system (the step-1 and
     * correction by-products combined, 000 Sec 4), read with sd_interbody_force() and
     * sd_constraint_force_components(). */
    int interbody_forces;
    /* NULL, or one flag per body: nonzero marks its hinge prescribed (mixed dynamics, 000 Sec 3, with
     * the loops closed): qdd holds the given accelerations of those hinges' speeds on input, and
     * their hinge forces are unknowns beside the free accelerations and the multipliers. The
     * partitioned system solved is, with f the free speeds and p the prescribed ones,
     *     M_ff qdd_f + C_f - G_f* lambda = tau_f - M_fp qdd_p
     *     G_f qdd_f = -(G_p qdd_p + Gdot u)
     *     tau_p = M_pf qdd_f + M_pp qdd_p + C_p - G_p* lambda
     * (lambda minimum-norm over the rows G_f leaves independent). Prescribed accelerations the
     * constraints cannot follow are SD_E_SINGULAR naming the constraints. */
    const unsigned char *prescribed;
    /* With `prescribed`: nv entries receiving tau with the prescribed hinges' forces written (the
     * others copied from tau; may be tau itself). Required when `prescribed` is set. */
    double *tau_out;
} sd_closed_loop_options;

/* qdd of the closed system (000 Eq 45-46): free accelerations by the articulated-body sweep, the
 * constraint-space compliance G M^-1 G* by the backward-Lyapunov recursion on the same factors
 * (004 Lemma 5), lambda (minimum-norm when constraints are redundant), and the correction
 * M^-1 G* lambda by one more residual sweep with the same factors. lambda (n_c) may be NULL.
 * options may be NULL. With redundant rows, a call that asks for neither lambda nor inter-body
 * forces solves over an independent row subset only (the first pivots of the last rank-revealing
 * solve on this workspace; same qdd, fewer rows), accepted when every row's G qdd + Gdot u is 0,
 * else the full path runs; its multipliers are not the minimum-norm ones, so sd_constraint_force()
 * then refuses (SD_E_ARGUMENT) until a call asks for lambda or forces. SD_E_SINGULAR when the constraints contradict each other (names them) or a
 * DISTANCE constraint's frames coincide. The state should satisfy the constraints (see
 * sd_assemble_configuration and sd_project_velocities); the call does not check it.
 * Models with flexible bodies (soadyn/flex.h) and calls with prescribed hinges take the engine path:
 * the multipliers from the same compliance (on a flexible model formed from M(q) and a dense
 * Cholesky factorisation, O(nv^3)), then qdd, the prescribed hinges' forces and the inter-body
 * forces from a second forward-dynamics sweep with the constraint forces as loads. A constraint
 * frame on a flexible body moves with its body frame F_k, as every frame and Jacobian point does
 * (sd_jacobian_world): to close a loop at a deformed point, hang the next body of the loop on the
 * node (sd_body_desc.parent_node) and put the frame there. */
SD_API sd_status sd_closed_loop_forward_dynamics(const sd_model *model, sd_data *data, const double *q,
                                                 const double *u, const double *tau, const double *f_ext,
                                                 double *qdd, double *lambda, const sd_closed_loop_options *options);
/* Rank of G M^-1 G* in the last closed-loop solve (n_c when no row is redundant); -1 before any. */
SD_API int sd_closed_loop_rank(const sd_data *data);

/* Frames in which a constraint force is read. */
typedef enum sd_constraint_frame {
    SD_CONSTRAINT_FRAME_LOCAL = 0, /* F_A's axes (as turned by the builder), about F_B's origin */
    SD_CONSTRAINT_FRAME_WORLD      /* world axes, about F_B's origin */
} sd_constraint_frame;

/* The spatial force [moment; force] that constraint `constraint` applies to body B through the cut
 * joint (A receives its opposite), from the lambda of the last sd_closed_loop_forward_dynamics()
 * or sd_constrained_inverse_dynamics(). For DISTANCE the force acts at F_B's origin along the line
 * of the frames. For COUPLING, f = (generalized force on hinge a, on hinge b, 0, 0, 0, 0). */
SD_API sd_status sd_constraint_force(const sd_model *model, const sd_data *data, int constraint,
                                     sd_constraint_frame frame, double f[6]);

/* ---------------------------------------------------------------- staying on the constraint manifold */

/* A configuration that closes the loops, from a guess: Gauss-Newton on the position residuals with
 * minimum-norm steps over the speeds not `locked` (one flag per speed, nonzero: that speed stays
 * put; NULL: none locked), moved on the manifold (quaternions stay unit), until every residual is
 * at most tol or max_iter steps. q_out may alias q_guess; `residual` (may be NULL) receives the
 * largest residual left. SD_E_SINGULAR, naming the constraints left open, when it does not
 * converge (no closed configuration near the guess, or the locked speeds forbid one). */
SD_API sd_status sd_assemble_configuration(const sd_model *model, sd_data *data, const double *q_guess,
                                           const unsigned char *locked, double tol, int max_iter, double *q_out,
                                           double *residual);
/* The speeds nearest to u in the kinetic-energy metric that keep the loops closed (G u_out = 0):
 * u_out = u - M^-1 G* (G M^-1 G*)^+ G u, with the compliance and correction sweeps of the forward
 * dynamics. u_out may alias u. */
SD_API sd_status sd_project_velocities(const sd_model *model, sd_data *data, const double *q, const double *u,
                                       double *u_out);

/* ---------------------------------------------------------------- inverse dynamics */

/* The actuator forces that produce accelerations qdd of the closed system (qdd must keep the loops
 * closed: G qdd + Gdot u = 0, else SD_E_ARGUMENT naming the constraints), with only the speeds
 * flagged in `actuated` (one flag per speed; NULL: none) driven: tau (nv, zero on the unactuated
 * speeds) and the multipliers lambda (n_c, may be NULL; then readable through
 * sd_constraint_force()). Where several (tau, lambda) produce the motion (over-actuation, redundant
 * rows) lambda is the one of minimum norm (the least internal loop force). SD_E_SINGULAR, naming
 * an unactuated joint, when the actuated set cannot produce the motion. */
SD_API sd_status sd_constrained_inverse_dynamics(const sd_model *model, sd_data *data, const double *q,
                                                 const double *u, const double *qdd, const double *f_ext,
                                                 const unsigned char *actuated, double *tau, double *lambda);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_LOOPS_H */
