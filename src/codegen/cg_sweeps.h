/*
 * src/codegen/cg_sweeps.h — the algorithms the generator emits (cg_sweeps.c), each into the scalars
 * of one generated function: g's inputs given as scalars, its outputs returned as scalars for the
 * caller to store.
 */
#ifndef SOADYN_CG_SWEEPS_H
#define SOADYN_CG_SWEEPS_H

#include "cg_gen.h"

/* tau (nv) = M qdd + C - J^T f_ext with the joint-level terms; g->w is qdd. */
void cg_sweep_inverse_dynamics(cg_gen *g, cg_val *tau);
/* The same, and the inter-body forces f(k) (6 per body, body frame; sd_interbody_force's). */
void cg_sweep_interbody_forces(cg_gen *g, cg_val *tau, cg_val *f);
/* M (nv x nv) with the armature. */
void cg_sweep_mass_matrix(cg_gen *g, cg_val *M);
/* qdd (nv) by articulated bodies; g->w is tau. A non-positive D(k) pivot emits g->singular_return. */
void cg_sweep_forward_dynamics(cg_gen *g, cg_val *qdd);
/* M^-1 (nv x nv) through M (the caller's scratch, nv x nv). */
void cg_sweep_mass_matrix_inverse(cg_gen *g, cg_val *M, cg_val *Minv);

#endif /* SOADYN_CG_SWEEPS_H */
