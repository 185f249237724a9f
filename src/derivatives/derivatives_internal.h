/*
 * src/derivatives/derivatives_internal.h — the pieces of the derivatives (soadyn/derivatives.h)
 * shared by their files: the recursion (id_derivatives.c), the hinge's own partials
 * (hinge_partials.c) and the entry points (derivatives.c).
 */
#ifndef SOADYN_DERIVATIVES_INTERNAL_H
#define SOADYN_DERIVATIVES_INTERNAL_H

#include "internal.h"

/* Column i of d(H*(k))/dq_i (i a coordinate of body k's hinge) as a 6 x nv(k) column-major block in
 * dS (zero for hinges whose H* is constant in the body frame), and the derivatives of the hinge's
 * velocity term d(H*)/dt u(k) (kinematics.c's a(k) part) with respect to that coordinate (dSdot_q)
 * and to its speed (dSdot_u). uk: the hinge's speeds. */
void sd_deriv_hinge_partials(const sd_model *m, const sd_data *d, int k, int i, const double *uk,
                             double dS[18], double dSdot_q[6], double dSdot_u[6]);
/* Add the joint-level terms' derivatives (damping, springs, a free hinge's armature velocity term;
 * dynamics.h) to d tau/dq and d tau/du (either may be NULL); u may be NULL (zero). */
void sd_deriv_joint_terms(const sd_model *m, const double *q, const double *u, double *dtau_dq, double *dtau_du);

/* The scratch of the recursion, in the workspace's derivative block (derivatives.c): per body
 * the hinge motions H* u and H* qdd and M V, and per body the derivatives of V, alpha and f along
 * one q-direction and one u-direction. */
typedef struct sd_deriv_scratch {
    double *vJ, *qJ, *MV;
    double *dVq, *dalq, *dfq, *dVu, *dalu, *dfu;
} sd_deriv_scratch;

/* d tau/dq and d tau/du (either may be NULL) at the state of the inverse dynamics the workspace
 * holds (sd_inverse_dynamics at q, u, qdd just run: V, a, alpha with gravity, f current); u and qdd
 * not NULL. Fills both matrices completely. */
void sd_deriv_inverse_dynamics(const sd_model *m, const sd_data *d, const double *q, const double *u,
                               const double *qdd, const sd_deriv_scratch *s, double *dtau_dq, double *dtau_du);

#endif /* SOADYN_DERIVATIVES_INTERNAL_H */
