/*
 * soadyn/params.h — changing a built model's physical parameters without rebuilding it: gravity, a
 * body's mass, centre of mass and inertia, a hinge's joint-level terms, a flexible body's modal
 * frequencies and damping ratios. What a Monte Carlo campaign needs: load a model file once, copy it
 * (or set it back), disperse its parameters, simulate.
 *
 * Every setter checks its values as the builder checks a description (sd_builder_add_body: finite,
 * signed right, within the bounds of physical models, an inertia symmetric positive semi-definite
 * and bounded by its mass; sd_builder_set_flexible: the modal stiffness and damping symmetric
 * positive semi-definite and bounded), with the builder's messages naming the body or joint and the
 * file:line it was described at. On failure the model is unchanged.
 *
 * After a setter, every evaluation sees the new parameters: the model's derived quantities (spatial
 * inertias M(k), the flexible bodies' modal integrals, the total mass, the joint-level flags) are
 * recomputed by the setter, and a batch context (soadyn/batch.h) refreshes its copies at its next
 * call. Results held in a workspace from before the change are no longer readable: a reader
 * (sd_interbody_force, the energies, ...) asks for a new evaluation first. A workspace (sd_data) made
 * before the change stays valid for the model; the sizes and the topology never change.
 *
 * Threads: a setter changes the model, so it must not run while another thread evaluates the same
 * model. Give each thread its own copy (sd_model_copy) to disperse parameters in parallel.
 */
#ifndef SOADYN_PARAMS_H
#define SOADYN_PARAMS_H

#include "export.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A deep copy of the model (topology, names, frames, warnings, closure constraints, flexible
 * bodies, parameters) that the caller frees with sd_model_free(); it shares nothing with the
 * original. NULL with err (may be NULL) set: SD_E_ARGUMENT for a NULL model, SD_E_MEMORY. */
SD_API sd_model *sd_model_copy(const sd_model *model, sd_error *err);

/* Gravity, the acceleration of free fall in the inertial frame (m/s^2): finite and of magnitude at
 * most 1e7 m/s^2, as sd_builder_set_gravity. */
SD_API sd_status sd_model_set_gravity(sd_model *model, const double gravity[3], sd_error *err);

/* Body `body`'s mass (kg), centre of mass (body frame, m) and rotational inertia about the centre of
 * mass (body axes, row-major 3x3, kg m^2), together, since each bounds the others. An inertia that
 * breaks the triangle inequality is accepted (the builder warns, a setter keeps no warnings). On a
 * flexible body they are its rigid part (soadyn/flex.h), the nodes unchanged. */
SD_API sd_status sd_model_set_body_inertia(sd_model *model, int body, double mass, const double com[3],
                                           const double inertia[9], sd_error *err);

/* The joint-level terms (sd_body_desc; soadyn/dynamics.h "Joint-level dynamics") of the hinge speed
 * v (0 <= v < nv), read back by sd_model_armature(model, v) and the like:
 *   armature   kg m^2 or kg, >= 0, added to M(v, v)
 *   damping    >= 0, tau_v = -damping u_v
 *   stiffness  >= 0, on a revolute or prismatic hinge; on a spherical hinge the spring is one
 *              stiffness for its three speeds (setting it at any of them sets all three); refused
 *              (SD_E_NOT_SUPPORTED) on free, universal and planar hinges, as by the builder
 *   spring_ref the rest coordinate (rad or m) of a revolute or prismatic hinge; a spherical hinge's
 *              spring pulls toward the neutral orientation (spring_ref 0 only)
 * A flexible body's modal speeds have none of them (their stiffness and damping are the body's,
 * sd_model_set_flex_modes): SD_E_ARGUMENT names the body. sd_model_body_desc() reports the values
 * of the hinge's first speed. */
SD_API sd_status sd_model_set_armature(sd_model *model, int v, double armature, sd_error *err);
SD_API sd_status sd_model_set_damping(sd_model *model, int v, double damping, sd_error *err);
SD_API sd_status sd_model_set_stiffness(sd_model *model, int v, double stiffness, sd_error *err);
SD_API sd_status sd_model_set_spring_ref(sd_model *model, int v, double spring_ref, sd_error *err);

/* Flexible body `body`'s modal damping ratios zeta_r (n_modes of them, in the order of the
 * frequencies of sd_model_flex_frequencies, ascending): zeta_r = x_r^T D_m x_r / (2 omega_r) with
 * x_r the mass-normalised mode (x_r^T M_m^ff x_r = 1) of frequency omega_r; 0 where omega_r = 0.
 * Nothing for a rigid body (0 modes). */
SD_API sd_status sd_model_flex_damping_ratios(const sd_model *model, int body, double *zeta, sd_error *err);

/* Give flexible body `body`'s modes the natural frequencies omega (rad/s, >= 0, ascending order of
 * the current ones) and damping ratios zeta (>= 0), both n_modes long, keeping the mode shapes:
 * with X the current mass-normalised modes (K_m X = M_m^ff X diag(omega_now^2), X^T M_m^ff X = I),
 * K_m = M_m^ff X diag(omega^2) X^T M_m^ff and D_m = M_m^ff X diag(2 zeta omega) X^T M_m^ff (001
 * Eq 40 with proportional modal damping). A D_m that was not diagonal in the modes (coupled modal
 * damping) is replaced by the diagonal one. Modes of equal frequency share an eigenspace, whose
 * basis is the eigensolver's (LAPACK dsygv): give them equal new values to keep the model's
 * symmetry. SD_E_ARGUMENT for a rigid body or NULL arrays; the builder's checks on K_m and D_m. */
SD_API sd_status sd_model_set_flex_modes(sd_model *model, int body, const double *omega, const double *zeta,
                                         sd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_PARAMS_H */
