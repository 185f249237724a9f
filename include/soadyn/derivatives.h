/*
 * soadyn/derivatives.h — analytical derivatives of the inverse and forward dynamics with respect
 * to the state (q, u) and the applied forces, single-state and batched (docs/derivatives.md).
 *
 * The quantities are those of soadyn/dynamics.h: the equations of motion
 *     M(q) qdd + C(q, u) = tau + J^T f_ext
 * with the armature in M, the damping, springs and a free hinge's armature velocity term in C,
 * gravity, and f_ext (6 per body, [moment; force] in the body frame about its origin) held
 * constant in the body frame: it turns with the body, so its derivative with respect to q is that
 * of the body's motion, not zero.
 *
 * Tangent space. q-derivatives are taken on the tangent space of the configuration manifold, in the
 * convention sd_configuration_integrate() uses: column j of a q-derivative is
 *     d/d eps  F(q (+) eps e_j)  at eps = 0,      q (+) delta = sd_configuration_integrate(q, delta, 1),
 * so it has nv columns, one per speed. For revolute, prismatic, universal and planar hinges this is
 * the derivative with respect to the coordinate itself. For a spherical hinge it is with respect to
 * the rotation vector of a rotation applied on the body side (q exp(eps e_j), the axes of the body
 * frame), and for a free hinge the same for the orientation and, for the position, with respect to
 * a displacement along the body's own axes (p + R(q) eps e_j). These are exactly the directions of
 * the hinge's speeds u. sd_configuration_tangent_map() converts to and from derivatives with
 * respect to the nq coordinates.
 *
 * All matrices are nv x nv (tangent maps nq x nv and nv x nq), row-major as sd_mass_matrix(): row i
 * is output i, column j the variable j. Any output pointer may be NULL to skip it (what it needs
 * alone is then not computed). d tau/d qdd = M and d qdd/d tau = M^-1 are the mass matrix and its
 * inverse (sd_mass_matrix(), sd_mass_matrix_inverse()).
 *
 * Offered on trees of every hinge type, rigid or with flexible bodies (soadyn/flex.h): a modal
 * coordinate eta is an ordinary vector coordinate, its own tangent, and its derivatives include the
 * modal mass matrix's and bias's dependence on eta, the deformed node frames children ride on, and
 * the modal stiffness and damping (docs/derivatives-integrators.md). Refused with SD_E_NOT_SUPPORTED, and a
 * message saying why, on models with closure constraints (soadyn/loops.h), tree-augmented or embedded.
 * Inputs are checked as by the other dynamics calls (NULL, non-finite entries: SD_E_ARGUMENT naming
 * the argument and index); an overflow in the outputs is SD_E_NOT_FINITE.
 *
 * Workspace: the first derivative call on a workspace allocates its scratch (O(N) for the inverse
 * dynamics derivatives, plus about 4 nv^2 doubles for the forward dynamics derivatives of a rigid
 * tree; O(N + nv) on a model with flexible bodies, whose d qdd/dq and d qdd/du are solved in place
 * column by column by the articulated-body factors, O(N nv) in all) and keeps
 * it for later calls (SD_E_MEMORY when that fails); sd_data_size() counts it. After these calls the
 * workspace's readers (sd_interbody_force(), ...) see the last algorithm the call ran: the inverse
 * dynamics at (q, u, qdd) whenever a derivative with respect to q or u was asked for.
 */
#ifndef SOADYN_DERIVATIVES_H
#define SOADYN_DERIVATIVES_H

#include "batch.h"
#include "dynamics.h"
#include "export.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tau = ID(q, u, qdd, f_ext) as sd_inverse_dynamics(), and its derivatives d tau/dq (tangent
 * space, above) and d tau/du. u and f_ext may be NULL (zero). */
SD_API sd_status sd_inverse_dynamics_derivatives(const sd_model *model, sd_data *data, const double *q,
                                                 const double *u, const double *qdd, const double *f_ext,
                                                 double *tau, double *dtau_dq, double *dtau_du);

/* qdd = FD(q, u, tau, f_ext) as sd_forward_dynamics(), and its derivatives d qdd/dq (tangent
 * space), d qdd/du and d qdd/d tau = M^-1. They are those of the inverse dynamics at qdd:
 * d qdd/dx = -M^-1 d tau/dx for x = q, u (differentiate ID(q, u, FD(q, u, tau)) = tau). u and f_ext
 * may be NULL (zero). */
SD_API sd_status sd_forward_dynamics_derivatives(const sd_model *model, sd_data *data, const double *q,
                                                 const double *u, const double *tau, const double *f_ext,
                                                 double *qdd, double *dqdd_dq, double *dqdd_du,
                                                 double *dqdd_dtau);

/* The tangent map at q: T = dq/d delta (nq x nv, row-major) of q (+) delta at delta = 0, and
 * Tinv (nv x nq), a left inverse of it (Tinv T = 1): for plain coordinates the identity; for a
 * quaternion w, dw/d delta = 1/2 w (x) [0; 1] and its left inverse 2 ([0 1] of w^-1 (x) .) /|w|^2;
 * for a free hinge's position, dp/d delta_v = R(q) and its inverse R(q)^T. Either output may be
 * NULL. With them, a derivative G (rows x nv) on the tangent space gives the derivative with
 * respect to the nq coordinates G Tinv (along the unit-quaternion sphere; the direction that
 * changes a quaternion's norm is not seen), and a derivative with respect to the coordinates
 * Gq (rows x nq) gives the tangent one Gq T. Nothing is done when model or q is NULL. */
SD_API void sd_configuration_tangent_map(const sd_model *model, const double *q, double *T, double *Tinv);

/* ---------------------------------------------------------------- batched (soadyn/batch.h) */

/* The two calls above for n states on the batch's threads; the arrays are stacked per state as in
 * batch.h (q n x nq, u, qdd, tau n x nv, f_ext n x 6 nbodies, every matrix n x nv^2), each state's
 * result bit for bit the single-state call's. Optional inputs (u, f_ext) are NULL for all states or
 * given for all; any output may be NULL for all states. Errors as in batch.h (the first failing
 * state's status, sd_batch_error()). */
SD_API sd_status sd_batch_inverse_dynamics_derivatives(sd_batch *batch, long n, const double *q, const double *u,
                                                       const double *qdd, const double *f_ext, double *tau,
                                                       double *dtau_dq, double *dtau_du);
SD_API sd_status sd_batch_forward_dynamics_derivatives(sd_batch *batch, long n, const double *q, const double *u,
                                                       const double *tau, const double *f_ext, double *qdd,
                                                       double *dqdd_dq, double *dqdd_du, double *dqdd_dtau);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_DERIVATIVES_H */
