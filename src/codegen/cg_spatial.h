/*
 * src/codegen/cg_spatial.h — the spatial algebra of soadyn/spatial.h on the generator's scalars
 * (cg_emit.h): the same kernels, with the same conventions (spatial vectors [angular; linear], a
 * transform X = (R, p) placing a child frame in its parent's, a rigid inertia as the 13 numbers
 * (m, h = m c, Io) about the body origin), written once for constants and run-time values alike.
 */
#ifndef SOADYN_CG_SPATIAL_H
#define SOADYN_CG_SPATIAL_H

#include "cg_emit.h"

typedef struct cg_xform {
    cg_val R[9]; /* row-major */
    cg_val p[3];
} cg_xform;

void cg_v3_cross(cg_emit *e, const cg_val a[3], const cg_val b[3], cg_val out[3]);
void cg_m3_mul_v(cg_emit *e, const cg_val R[9], const cg_val a[3], cg_val out[3]);
void cg_m3t_mul_v(cg_emit *e, const cg_val R[9], const cg_val a[3], cg_val out[3]);
void cg_m3_mul(cg_emit *e, const cg_val A[9], const cg_val B[9], cg_val out[9]);
/* out = a * b (out may not alias either). */
void cg_xform_compose(cg_emit *e, const cg_xform *a, const cg_xform *b, cg_xform *out);
/* The model's constant transform as scalars. */
void cg_xform_const(const double R[9], const double p[3], cg_xform *out);

/* phi*(parent, k) m: a motion of the parent carried to the child (sd_motion_to_child). */
void cg_motion_to_child(cg_emit *e, const cg_xform *X, const cg_val m_p[6], cg_val m_c[6]);
/* phi(parent, k) f: a force of the child carried to the parent (sd_force_to_parent). */
void cg_force_to_parent(cg_emit *e, const cg_xform *X, const cg_val f_c[6], cg_val f_p[6]);
/* V x m and V x* f (sd_motion_cross, sd_force_cross). */
void cg_motion_cross(cg_emit *e, const cg_val V[6], const cg_val m[6], cg_val out[6]);
void cg_force_cross(cg_emit *e, const cg_val V[6], const cg_val f[6], cg_val out[6]);
/* out = M V for a rigid inertia of 13 numbers (sd_rigid_inertia_mul). */
void cg_rigid_inertia_mul(cg_emit *e, const cg_val ri[13], const cg_val V[6], cg_val out[6]);
/* acc += the child's rigid inertia ri (13 numbers, child frame) expressed in the parent's frame:
 * h' = R h + m p, Io' = R Io R^T - m [p]^2 - [p][R h] - [R h][p] (the parallel-axis theorem moved to
 * the new origin, the composite inertia of 004 Eq 20 in 13 numbers). */
void cg_rigid_inertia_to_parent_add(cg_emit *e, const cg_xform *X, const cg_val ri[13], cg_val acc[13]);
/* The symmetric 6x6 [Io, [h]; [h]^T, m 1] of 13 numbers (sd_rigid_inertia_to_sym6). */
void cg_rigid_inertia_to_sym6(cg_emit *e, const cg_val ri[13], cg_val out[36]);
/* acc += phi P phi* for a symmetric 6x6 P of the child (004 Eq 33's congruence; upper triangle
 * formed, mirrored). */
void cg_sym6_to_parent_add(cg_emit *e, const cg_xform *X, const cg_val P[36], cg_val acc[36]);
/* out = A x for a 6x6 A. */
void cg_m6_mul_v(cg_emit *e, const cg_val A[36], const cg_val x[6], cg_val out[6]);

#endif /* SOADYN_CG_SPATIAL_H */
