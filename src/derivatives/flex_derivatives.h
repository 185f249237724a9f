/*
 * src/derivatives/flex_derivatives.h — the derivatives of the inverse dynamics over nodes, on models
 * with flexible bodies (flex_derivatives.c): the tangent sweep of the node engine's Newton-Euler.
 */
#ifndef SOADYN_FLEX_DERIVATIVES_H
#define SOADYN_FLEX_DERIVATIVES_H

#include "internal.h"

/* The doubles of scratch sd_deriv_nodes_inverse_dynamics needs (the model's node workspace decides). */
size_t sd_deriv_nodes_scratch_doubles(const sd_model *m, const sd_data *d);
/* d tau/dq and d tau/du (either may be NULL) at the state of the inverse dynamics the workspace holds
 * (sd_inverse_dynamics at q, u, qdd just run, u and qdd not NULL), their rows ld apart, filled
 * completely; scratch: sd_deriv_nodes_scratch_doubles doubles. */
void sd_deriv_nodes_inverse_dynamics(const sd_model *m, sd_data *d, const double *q, const double *u,
                                     const double *qdd, double *scratch, double *dtau_dq, double *dtau_du,
                                     size_t ld);
/* The forward dynamics derivatives of derivatives.h on the node engine: qdd = FD(q, u, tau), M^-1
 * (sd_mass_matrix_inverse), and d qdd/dx = -M^-1 d tau/dx (x = q, u) by the tangent sweep and the
 * articulated-body solve, column by column; u not NULL; scratch:
 * sd_deriv_nodes_forward_scratch_doubles doubles. */
size_t sd_deriv_nodes_forward_scratch_doubles(const sd_model *m, const sd_data *d);
sd_status sd_deriv_nodes_forward_dynamics(const sd_model *m, sd_data *d, const double *q, const double *u,
                                          const double *tau, const double *f_ext, double *qdd, double *dqdd_dq,
                                          double *dqdd_du, double *dqdd_dtau, double *scratch);

#endif /* SOADYN_FLEX_DERIVATIVES_H */
