/*
 * soadyn/dynamics.h — the data layer (one workspace per model) and the algorithms: kinematics,
 * Newton-Euler inverse dynamics, bias forces, the composite-body mass matrix, the articulated-body
 * forward dynamics, the Cholesky forward dynamics, and what the articulated-body recursion gives
 * almost for free (mass-matrix inverse and determinant, inter-body forces, mixed dynamics,
 * operational-space compliance).
 *
 * Array arguments are sized by the model: q has nq entries, u, qdd, tau have nv, a mass-matrix-
 * sized output has nv*nv (row-major), f_ext has 6 per body. f_ext, when not NULL, holds for each
 * body the external spatial force [moment; force] acting on it, in the body frame about the body
 * origin (sd_external_force_at_point() builds one from a force at a point).
 *
 * Every algorithm takes the state it needs and recomputes the kinematics it depends on, so calls
 * are independent. Results that are not returned through an argument stay in the sd_data, and the
 * workspace knows which of them belong to the state of the last call: a reader (sd_body_velocity(),
 * sd_jacobian_world(), sd_mass_matrix_solve(), sd_interbody_force(), ...) returns them only then,
 * and otherwise fails with a message saying which call must come first. No algorithm allocates
 * (but sd_forward_dynamics_cholesky(), once), prints or touches files.
 *
 * A failing call returns a status and leaves a message naming the element in sd_data_error(). No
 * call returns SD_OK with a non-finite number in an output: an overflow is SD_E_NOT_FINITE. A body
 * or frame index out of range is SD_E_ARGUMENT, and so is a workspace made for another model.
 */
#ifndef SOADYN_DYNAMICS_H
#define SOADYN_DYNAMICS_H

#include "export.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sd_data sd_data;

/* A workspace for one model, allocated once, O(N) in size; NULL when out of memory. The model must
 * outlive it. */
SD_API sd_data *sd_data_new(const sd_model *model);
SD_API void sd_data_free(sd_data *data);
/* The bytes the workspace holds (0 for NULL); grows by nv^2 doubles after the first
 * sd_forward_dynamics_cholesky(). */
SD_API size_t sd_data_size(const sd_data *data);
/* The message of the last failed call on this workspace ("" if none). */
SD_API const char *sd_data_error(const sd_data *data);

/* ---------------------------------------------------------------- kinematics */

/* Placements, and when u (and qdd) is given, spatial velocities (and accelerations) of every body.
 * u and qdd may be NULL (taken as zero). Accelerations exclude gravity. */
SD_API sd_status sd_kinematics(const sd_model *model, sd_data *data, const double *q, const double *u,
                               const double *qdd);

/* The readers below use the state of the last call on the workspace, of any algorithm that says
 * what they need: placements (every algorithm), velocities (sd_kinematics(), inverse and forward
 * dynamics), accelerations (the same three). */

/* World placement of a body at the last state (placements of any algorithm). */
SD_API sd_status sd_body_placement_world(const sd_model *model, sd_data *data, int body, sd_transform *X);
/* World placement of a model frame at the last state. */
SD_API sd_status sd_frame_placement_world(const sd_model *model, sd_data *data, int frame, sd_transform *X);
/* Spatial velocity [omega; v] of a body, in its body frame at its origin. */
SD_API sd_status sd_body_velocity(const sd_model *model, sd_data *data, int body, double V[6]);
/* Spatial acceleration of a body in its body frame at its origin, gravity excluded. */
SD_API sd_status sd_body_acceleration(const sd_model *model, sd_data *data, int body, double acc[6]);
/* The 6 x nv Jacobian (row-major) mapping u to the spatial velocity [omega; v] of the point `point`
 * (body coordinates) fixed on `body`, both in world axes: omega, and the velocity of that point. */
SD_API sd_status sd_jacobian_world(const sd_model *model, sd_data *data, int body, const double point[3],
                                   double *J);
/* Centre of mass of the whole system in world coordinates (the origin for a massless model). */
SD_API sd_status sd_center_of_mass_world(const sd_model *model, sd_data *data, double com[3]);
/* Total spatial momentum [angular about the world origin; linear], world axes (needs velocities). */
SD_API sd_status sd_spatial_momentum_world(const sd_model *model, sd_data *data, double h[6]);
/* Kinetic energy 1/2 u^T M u, the armature's 1/2 J u^2 included (needs velocities), and potential
 * energy of gravity -sum m g.c (the springs' is sd_spring_energy()). */
SD_API sd_status sd_kinetic_energy(const sd_model *model, sd_data *data, double *T);
SD_API sd_status sd_potential_energy(const sd_model *model, sd_data *data, double *U);

/* Add to f_ext (6 per body) a force `force` (world axes) applied at the point `point` (body
 * coordinates) of `body`, using the placements of the last state. This is 003's Y^T F-bar for one
 * point. */
SD_API sd_status sd_external_force_at_point(const sd_model *model, sd_data *data, int body,
                                            const double point[3], const double force[3], double *f_ext);

/* ---------------------------------------------------------------- dynamics */

/* Joint-level dynamics. A hinge may carry an armature J (a rotor's reflected inertia), viscous
 * damping and a linear spring (sd_body_desc: armature, damping, stiffness, spring_ref; per speed
 * from sd_model_armature() ...). The equations of motion every call below solves are
 *     M(q) qdd + C(q, u) = tau + J^T f_ext,
 *     M = M_rigid + diag(J),   C = C_rigid - tau_passive,
 *     tau_passive = -damping u - stiffness (q - spring_ref)   [- J (omega x v), free hinges]
 * (a spherical hinge's spring: -stiffness r, r the rotation vector of the body in the joint frame,
 * toward the neutral orientation, energy 1/2 stiffness theta^2; no spring on other multi-speed
 * hinges). A free hinge's armature acts, as MuJoCo's, on the linear velocity in the joint frame's
 * axes and on the angular velocity: its energy is 1/2 J |u|^2, and its velocity term J (omega x v)
 * on the linear speeds (u = (omega, v), body axes) is in C, written above as part of tau_passive
 * (with per-speed values, soadyn/params.h, the term of the body-fixed inertia diag(J) about the
 * body origin: joint_dynamics.c).
 * So sd_mass_matrix, the innovations factors (J enters D(k) = H P H* + J(k), 004 Eq 33),
 * M^-1 and det M include the armature; sd_bias_forces and sd_inverse_dynamics include
 * -tau_passive; sd_forward_dynamics (and the Cholesky path, sd_simulate) add tau_passive to tau.
 * For a prescribed hinge (sd_forward_dynamics_ex) tau out is H f + J qdd - tau_passive. The
 * inter-body force f(k) is the force through the hinge: H(k) f(k) = tau + tau_passive - J qdd.
 * The kinetic energy includes 1/2 J u^2; the springs' energy is its own call, since it needs q
 * (an angle of several turns is not in the placements), and sd_sim_energy() adds it to the
 * potential energy. A model with none of them runs the rigid algorithms unchanged. */

/* tau_passive(q, u) of every speed (zero on modal speeds); u may be NULL (zero). */
SD_API sd_status sd_passive_forces(const sd_model *model, sd_data *data, const double *q, const double *u,
                                   double *tau_passive);
/* The energy of the joints' springs at q: sum 1/2 stiffness (q - spring_ref)^2. */
SD_API sd_status sd_spring_energy(const sd_model *model, sd_data *data, const double *q, double *E);

/* tau = M(q) qdd + C(q, u) - J^T f_ext: Newton-Euler inverse dynamics (004 Alg 3.1), O(N), with
 * the armature and passive forces (above).
 * The inter-body forces f(k) it computes stay readable with sd_interbody_force(). */
SD_API sd_status sd_inverse_dynamics(const sd_model *model, sd_data *data, const double *q, const double *u,
                                     const double *qdd, const double *f_ext, double *tau);
/* c = C(q, u) - J^T f_ext, gravity and velocity terms and -tau_passive (inverse dynamics at qdd = 0). */
SD_API sd_status sd_bias_forces(const sd_model *model, sd_data *data, const double *q, const double *u,
                                const double *f_ext, double *c);
/* M(q), nv x nv row-major, by composite body inertias (004 Alg 4.2), diag(armature) added; entries
 * of unrelated bodies are zero and not computed. */
SD_API sd_status sd_mass_matrix(const sd_model *model, sd_data *data, const double *q, double *M);
/* qdd = M^-1 (tau - C + J^T f_ext) by the O(N) articulated-body algorithm (004 Alg 6.1). */
SD_API sd_status sd_forward_dynamics(const sd_model *model, sd_data *data, const double *q, const double *u,
                                     const double *tau, const double *f_ext, double *qdd);
/* The same qdd by forming M and C and solving with a dense Cholesky factorisation, O(N^3) (the
 * composite body method of 001 Sec 3); the reference the O(N) algorithm is checked against. Its
 * first call allocates the nv x nv matrix in the workspace, kept for the later calls (SD_E_MEMORY
 * when that fails, SD_E_NOT_SUPPORTED past nv = 4096). */
SD_API sd_status sd_forward_dynamics_cholesky(const sd_model *model, sd_data *data, const double *q,
                                              const double *u, const double *tau, const double *f_ext,
                                              double *qdd);

/* Options of sd_forward_dynamics_ex(). Zero-initialise, then set what you need. */
typedef struct sd_fd_options {
    /* Nonzero: also compute every inter-body force f(k) from the recursion's by-products
     * (000 Eq 17: f = P+ alpha+ + z+), read with sd_interbody_force(). */
    int interbody_forces;
    /* NULL, or one flag per body: nonzero marks its hinge prescribed (mixed dynamics). For a
     * prescribed hinge qdd holds the given acceleration on input, and tau receives the hinge force
     * needed to produce it on output; for the others tau is input and qdd output (000 Sec 3). */
    const unsigned char *prescribed;
} sd_fd_options;

/* Forward dynamics with options. tau is read for free hinges and written for prescribed ones, so
 * it is not const; qdd is read for prescribed hinges and written for free ones. */
SD_API sd_status sd_forward_dynamics_ex(const sd_model *model, sd_data *data, const double *q, const double *u,
                                        double *tau, const double *f_ext, double *qdd,
                                        const sd_fd_options *options);

/* Frames in which inter-body forces can be read. */
typedef enum sd_force_frame {
    SD_FRAME_BODY = 0,  /* the child body's frame, about its origin (the joint's child side) */
    SD_FRAME_WORLD,     /* world axes, about the child body's origin */
    SD_FRAME_JOINT      /* the joint frame on the parent side (axes and origin), at the current q */
} sd_force_frame;

/* The spatial force f(k) = [moment; force] that the parent exerts on `body` through its hinge,
 * from the last call when that was sd_inverse_dynamics() or sd_forward_dynamics_ex() with
 * interbody_forces (otherwise an error saying so). */
SD_API sd_status sd_interbody_force(const sd_model *model, sd_data *data, int body, sd_force_frame frame,
                                    double f[6]);
/* The parts of f(k) along the hinge's free directions (H(k) f(k), which equals the hinge force
 * tau(k); nv entries) and along its constrained directions (the 6 - nv reactions a bearing sees,
 * components on an orthonormal complement of H(k) in the body frame; 003 Prop 5). `constrained_dirs`
 * (may be NULL) receives the 6 x (6 - nv) complement, column-major, as unit motion directions. */
SD_API sd_status sd_constraint_force_components(const sd_model *model, sd_data *data, int body,
                                                double *free_part, double *constrained_part,
                                                double *constrained_dirs);

/* ---------------------------------------------------------------- innovations factors (004 Sec 6) */

/* Compute the articulated-body quantities P, D, G of configuration q (004 Eq 33) and keep them in
 * the data, for the calls below that say they use them. */
SD_API sd_status sd_articulated_inertias(const sd_model *model, sd_data *data, const double *q);
/* y = [I + H phi K] x, y = [I + H phi K]* x, y = [I - H psi K] x, y = [I - H psi K]* x
 * (004 Lemma 11), O(N) each, with the factors of the last call when that was
 * sd_articulated_inertias() or sd_forward_dynamics() with no prescribed hinge (otherwise an error
 * saying so). y may alias x. */
typedef enum sd_factor_op {
    SD_FACTOR_NE = 0,        /* [I + H phi K]     */
    SD_FACTOR_NE_TRANSPOSE,  /* [I + H phi K]*    */
    SD_FACTOR_INV,           /* [I - H psi K]     */
    SD_FACTOR_INV_TRANSPOSE  /* [I - H psi K]*    */
} sd_factor_op;
SD_API sd_status sd_innovations_apply(const sd_model *model, sd_data *data, sd_factor_op op, const double *x,
                                      double *y);
/* y = M^-1 x in O(N) without forming M (004 Eq 51), with the factors of the last call as above.
 * y may alias x. */
SD_API sd_status sd_mass_matrix_solve(const sd_model *model, sd_data *data, const double *x, double *y);
/* The dense M^-1(q) (nv x nv, row-major) in O(N^2) straight from the recursion (004 Eq 51), with
 * O(N) scratch of the workspace besides Minv itself; on a model of at most 8 speeds (a robot arm)
 * from M(q)'s Cholesky factors instead, which cost less there (the same matrix to round-off). */
SD_API sd_status sd_mass_matrix_inverse(const sd_model *model, sd_data *data, const double *q, double *Minv);
/* log det M(q) = sum log det D(k) (004 Cor 6.1, Eq 53), and det M itself. Either pointer may be
 * NULL. det M over- or underflows for large trees: asked for when it overflows, it is an
 * SD_E_NOT_FINITE error (log_det is still set); use the log. */
SD_API sd_status sd_mass_matrix_determinant(const sd_model *model, sd_data *data, const double *q,
                                            double *det, double *log_det);

/* ---------------------------------------------------------------- operational space (004 Sec 6.2) */

/* A task frame: a frame fixed on a body (placement in body coordinates). */
typedef struct sd_task_frame {
    int body;
    sd_transform placement;
} sd_task_frame;

/* The operational-space compliance J M^-1 J* = B* Omega B (004 Eq 59-60) of `nframes` task frames,
 * a 6 nframes x 6 nframes row-major matrix, each frame's velocity [omega; v] taken in its own
 * axes at its origin, computed by the backward-Lyapunov recursions of 004 Lemma 5 / Alg 4.3. */
SD_API sd_status sd_operational_space_compliance(const sd_model *model, sd_data *data, const double *q,
                                                 int nframes, const sd_task_frame *frames, double *Lambda_inv);
/* The operational-space inertia Lambda = (J M^-1 J*)^-1 of the same frames; SD_E_SINGULAR when the
 * frames are kinematically dependent (the compliance is singular). Lambda has 36 nframes^2 entries;
 * the inversion happens in place, with no other storage. */
SD_API sd_status sd_operational_space_inertia(const sd_model *model, sd_data *data, const double *q,
                                              int nframes, const sd_task_frame *frames, double *Lambda);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_DYNAMICS_H */
