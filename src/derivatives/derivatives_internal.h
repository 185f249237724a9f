/*
 * src/derivatives/derivatives_internal.h — the pieces of the derivatives (soadyn/derivatives.h)
 * shared by their files: the recursion (id_derivatives.c), the hinge's own partials
 * (hinge_partials.c), M's tree-sparse factors (mass_factor.c) and the entry points (derivatives.c).
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
 * dynamics.h) to d tau/dq and d tau/du (either may be NULL; rows ld apart); u may be NULL (zero). */
void sd_deriv_joint_terms(const sd_model *m, const double *q, const double *u, double *dtau_dq, double *dtau_du,
                          size_t ld);

/* The scratch of the recursion (id_derivatives.c), in the workspace's derivative block
 * (derivatives.c), in the reference axes (body 0's frame at this instant, id_derivatives.c; the
 * names keep a w from when they were world axes): per body V, A, F (6 each), the composite rigid
 * inertia IC in the 13-number form of sd_rigid_inertia_to_parent (ICr) and the composite velocity
 * term BC as the 12 numbers [B11, hv] of id_derivatives.c's velocity_terms (BCr); per speed H*
 * (Sw), P = IC H*, Q = BC^T H* (6 each); per body its placement in the reference axes (Xref, 12
 * doubles: an sd_transform). */
typedef struct sd_deriv_scratch {
    double *Vw, *Aw, *Fw, *ICr, *BCr;
    double *Sw, *P, *Q;
    sd_transform *Xref;
} sd_deriv_scratch;
/* Its size in doubles. */
static inline size_t sd_deriv_scratch_doubles(const sd_model *m)
{
    return (18 + 13 + 12 + sizeof(sd_transform) / sizeof(double)) * (size_t)m->n + 18 * (size_t)m->nv;
}

/* d tau/dq and d tau/du (either may be NULL) at the state of the inverse dynamics the workspace
 * holds (sd_inverse_dynamics at q, u, qdd just run: V, alpha with gravity, f current; the scratch's
 * reference placements are computed here); u and qdd not NULL. Fills both nv x nv matrices
 * completely, their rows ld apart (nv, or wider when they are blocks of one matrix). */
void sd_deriv_inverse_dynamics(const sd_model *m, sd_data *d, const double *q, const double *u,
                               const double *qdd, const sd_deriv_scratch *s, double *dtau_dq, double *dtau_du,
                               size_t ld);
/* sd_deriv_inverse_dynamics in two steps, for the forward dynamics derivatives, which factor M in
 * between: the reference placements and the composite pass (every field of the scratch) at the
 * workspace's V, alpha and f, then the columns at that state. */
void sd_deriv_composites(const sd_model *m, const sd_data *d, const sd_deriv_scratch *s);
void sd_deriv_columns(const sd_model *m, sd_data *d, const double *q, const double *u, const double *qdd,
                      const sd_deriv_scratch *s, double *dtau_dq, double *dtau_du, size_t ld);
/* The base acceleration [0; -g] in the reference axes. */
void sd_deriv_base_acceleration(const sd_model *m, const sd_data *d, double a0[6]);

/* The mass matrix M = S^T IC S + diag(armature) from the last sd_deriv_inverse_dynamics' composite
 * inertias, factored as M = L^T D L (L unit lower triangular with the tree's sparsity: L(i, j) != 0
 * only for j on i's path to the base; Featherstone's LTDL), in the nv x nv row-major F (D on the
 * diagonal, L below with zeros off the paths, above untouched); then X = sign M^-1 X in place for
 * the nv x w row-major X (rows ld apart), by row operations on blocks of columns. Returns the first
 * speed whose pivot is not positive, or -1. */
int sd_deriv_mass_matrix_factor(const sd_model *m, const sd_deriv_scratch *s, double *F);
void sd_deriv_mass_matrix_solve(const sd_model *m, const double *F, double *X, int w, size_t ld, double sign);

#endif /* SOADYN_DERIVATIVES_INTERNAL_H */
