/*
 * soadyn/flex.h — flexible bodies with assumed modes (001; 000 Sec 3).
 *
 * A flexible body is a lumped-mass finite-element model: n_nodes nodes, each a point mass (with an
 * optional rotary inertia) at an undeformed position in the body frame, and n_modes assumed modes
 * Pi (001 Eq 3): the spatial deformation of node j is Pi^j eta, angular part first (a small
 * rotation, then a translation, both in body axes). The body frame F_k is the frame the body's
 * inboard hinge moves (the hinge acts on F_k and the modes are deformations relative to it), so a
 * hinged body takes cantilever modes (zero at the hinge) and a free-floating body free-free ones.
 *
 * Coordinates: a flexible body's block of q is its hinge's coordinates followed by eta (n_modes),
 * its block of u the hinge's speeds followed by eta-dot; sd_model_mode_q_index/_v_index give where
 * the modal ones start. A child's hinge may ride on one of the parent's nodes
 * (sd_body_desc.parent_node): the child then moves with the node's deflection, its translation and
 * its rotation (exp of the node's small-rotation vector, so that positions and velocities agree
 * exactly).
 *
 * The modal mass matrix (001 Eq 25) is either the full one, exact for the lumped model (the nodes
 * sit at their deformed positions: M_m^fr and M_m^rr depend on eta), or the ruthlessly linearised one
 * of 001 Sec 6 (nodes at their undeformed positions: M_m constant, bias terms to first order).
 * Elastic forces are K_m eta + D_m eta-dot (001 Eq 40, modal damping); the strain energy is
 * 1/2 eta^T K_m eta.
 *
 * Where flexible models come from: a description filled by hand (sd_flex_desc), a data file
 * (sd_flex_data_read_file: JSON, see README), or the uniform Euler-Bernoulli beam generator
 * (sd_beam_modes). The descriptions are copied by the builder; the data objects are the caller's.
 */
#ifndef SOADYN_FLEX_H
#define SOADYN_FLEX_H

#include "dynamics.h" /* sd_data, sd_model, sd_builder */
#include "export.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sd_flex_mass_model {
    SD_FLEX_FULL = 0,      /* deformation-dependent modal mass matrix, exact for the lumped model */
    SD_FLEX_LINEARISED = 1 /* the ruthlessly linearised model of 001 Sec 6 (constant M_m) */
} sd_flex_mass_model;

/* A flexible body's modal model. Arrays are read, not kept: sd_builder_set_flexible copies them. */
typedef struct sd_flex_desc {
    int n_nodes;
    const double *node_position; /* 3 per node: undeformed position in the body frame, m */
    const double *node_mass;     /* 1 per node, kg, >= 0 */
    const double *node_inertia;  /* 9 per node, row-major, about the node, body axes, kg m^2, symmetric
                                    positive semi-definite; NULL: point masses */
    int n_modes;                 /* >= 0 (0: the body is rigid) */
    const double *modes;         /* Pi: (6 n_nodes) x n_modes, column-major (mode r is column r);
                                    per node [rotation 3; translation 3] in body axes */
    const double *stiffness;     /* K_m: n_modes x n_modes row-major, symmetric positive semi-definite */
    const double *damping;       /* D_m: n_modes x n_modes row-major, symmetric PSD; NULL: none */
    sd_flex_mass_model mass_model;
    const char *source_file;     /* where the model was described, for messages; may be NULL */
} sd_flex_desc;

/* Defaults: no nodes, no modes, SD_FLEX_FULL, every pointer NULL. */
SD_API void sd_flex_desc_init(sd_flex_desc *desc);

/* Make the body named `body` (added with sd_builder_add_body, before or after this call) flexible.
 * The body's own mass, centre of mass and inertia (sd_body_desc) stay as a rigid part moving with
 * F_k; the nodes add to it. Checked here (errors name the body and the source file): sizes, finite
 * numbers within the bounds of physical models, node masses >= 0, node inertias, K_m and D_m
 * symmetric positive semi-definite, the modal mass M_m^ff positive definite (modes independent). A
 * child's parent_node is checked when the model is built. */
SD_API sd_status sd_builder_set_flexible(sd_builder *builder, const char *body, const sd_flex_desc *desc,
                                         sd_error *err);

/* ---------------------------------------------------------------- model queries */

SD_API int sd_model_nflexible(const sd_model *model);             /* flexible bodies in the model */
SD_API int sd_model_body_nmodes(const sd_model *model, int body); /* 0 for a rigid body */
SD_API int sd_model_body_nnodes(const sd_model *model, int body); /* 0 for a rigid body */
SD_API int sd_model_mode_q_index(const sd_model *model, int body); /* first modal coordinate in q */
SD_API int sd_model_mode_v_index(const sd_model *model, int body); /* first modal speed in u */
/* The parent's node carrying the body's hinge, -1 when the hinge sits on the parent body frame. */
SD_API int sd_model_parent_node(const sd_model *model, int body);
SD_API sd_flex_mass_model sd_model_flex_mass_model(const sd_model *model, int body);
/* The body's mass with its nodes': its rigid part (sd_model_body_mass) plus every node's mass; a
 * rigid body's mass; NAN out of range. */
SD_API double sd_model_body_total_mass(const sd_model *model, int body);
/* The body's modal natural frequencies (rad/s, ascending; n_modes of them) with every hinge locked
 * and every other body's modes held, the bodies riding on its nodes riding (their mass moves with
 * the nodes), at the reference configuration: the eigenvalues of K_m w.r.t. the mass matrix on the
 * body's modal speeds (M_m^ff when nothing rides on it). LAPACK; part of libsoadyn; allocates. The
 * coupled structure's modes: sd_model_system_frequencies. */
SD_API sd_status sd_model_flex_frequencies(const sd_model *model, int body, double *omega, sd_error *err);

/* The model's system modes: every flexible body's modal coordinates together, with every hinge
 * locked except free (floating) joints, which stay free (a free-flying structure vibrates
 * free-free; its six rigid-body modes per free joint, at 0 Hz, are not listed). The eigenproblem
 * K x = omega^2 M_s x, M_s the model's mass matrix at q (sd_mass_matrix; NULL q: the reference
 * configuration) on those speeds, so the bodies riding on nodes, the other flexible bodies and a
 * floating base's recoil all count; K the modal stiffnesses K_m (001 Eq 40); gravity's stiffness
 * is not included. sd_model_nsystem_modes() values: omega (rad/s, ascending) and, when `body` and
 * `share` are not NULL, the flexible body holding the largest share of each mode's kinetic energy
 * and that share (0..1; the free joints' speeds hold the rest). Allocates (a report, not an
 * evaluation); LAPACK dsygv. */
SD_API int sd_model_nsystem_modes(const sd_model *model);
SD_API sd_status sd_model_system_frequencies(const sd_model *model, const double *q, double *omega, int *body,
                                             double *share, sd_error *err);

/* The deflection of node `node` of flexible body `body` at q: Pi^node eta (001 Eq 3), the node's
 * small rotation (3) then its translation (3) from its undeformed place, in body axes. Linear in
 * eta (the full model's nodes sit exactly there). SD_E_ARGUMENT for a rigid body or a node out of
 * range (named in the message). */
SD_API sd_status sd_model_node_deflection(const sd_model *model, int body, int node, const double *q,
                                          double deflection[6], sd_error *err);

/* ---------------------------------------------------------------- flexible models from data */

/* An owned flexible-body model: what a data file or the beam generator makes. */
typedef struct sd_flex_data sd_flex_data;
SD_API void sd_flex_data_free(sd_flex_data *data);
/* The description (valid while `data` lives), ready for sd_builder_set_flexible. */
SD_API const sd_flex_desc *sd_flex_data_desc(const sd_flex_data *data);

/* Read a flexible-body data file (JSON; format in README.md "Flexible bodies"). Errors name the
 * file, the member and, where known, the line. Part of libsoadyn (needs the io component). */
SD_API sd_status sd_flex_data_read_file(const char *path, sd_flex_data **data, sd_error *err);

typedef enum sd_beam_boundary {
    SD_BEAM_CANTILEVER = 0, /* clamped at x = 0 (the body frame), free at x = length */
    SD_BEAM_FREE_FREE = 1   /* both ends free (rigid-body modes removed) */
} sd_beam_boundary;

/* A uniform Euler-Bernoulli beam along the body x axis from x = 0 to x = length, bending in the
 * x-y and x-z planes with the same EI (Hermite cubic elements, lumped translational masses). */
typedef struct sd_beam_spec {
    double length;          /* m, > 0 */
    double EI;              /* bending stiffness, N m^2, > 0 */
    double mass_per_length; /* kg/m, > 0 */
    int elements;           /* >= 1 */
    int modes;              /* lowest modes kept, 1 .. the model's count */
    sd_beam_boundary boundary;
    int planes;             /* bit 0: bending in x-y (deflection along y), bit 1: in x-z; 0 means both */
    double damping_ratio;   /* modal damping ratio zeta >= 0 (D_m = 2 zeta omega m_r) */
    sd_flex_mass_model mass_model;
} sd_beam_spec;

SD_API void sd_beam_spec_init(sd_beam_spec *spec); /* 1 m, EI 1, 1 kg/m, 10 elements, 4 modes,
                                                      cantilever, both planes, no damping, full */
/* Build the beam's lumped-mass model and solve its eigenproblem (LAPACK): nodes at the element ends,
 * modes mass-normalised (Pi^T M_s Pi = I), K_m = diag(omega^2). Part of libsoadyn. */
SD_API sd_status sd_beam_modes(const sd_beam_spec *spec, sd_flex_data **data, sd_error *err);

/* ---------------------------------------------------------------- evaluation */

/* The functions of dynamics.h on a model with flexible bodies (the node engine,
 * src/algorithms/node_engine.h), with their usual contracts and these meanings:
 * - u and qdd include eta-dot and eta-ddot; tau includes the modal forces; M and C (sd_mass_matrix,
 *   sd_bias_forces) are over every speed, C with K_m eta + D_m eta-dot (001 Eq 44-45).
 * - A point or a frame on a flexible body moves with its body frame F_k: the body's own modes do not
 *   move it (zero Jacobian columns); the modes of an ancestor do when the path to the body leaves
 *   that ancestor at a node. f_ext (6 per body) and sd_external_force_at_point act on such points.
 * - The centre of mass, momentum and energies count every node at its deformed position (also for the
 *   linearised model, which approximates only M_m); the kinetic energy is 1/2 V_m^T M_m V_m per body.
 *   sd_potential_energy is gravity's; the strain energy is sd_strain_energy below.
 * - sd_interbody_force gives the rigid part of the force through each hinge (000 Sec 3).
 * - The innovations factors (sd_innovations_apply), sd_mass_matrix_solve, sd_mass_matrix_inverse and
 *   det M are those of the split chain (001 Sec 5, Eq 51-56): each flexible body's modes are
 *   eliminated before its hinge, D holds every hinge's D(k) and every body's modal D_f(k). The
 *   operational-space compliance and inertia of task frames (on any body; a frame moves with its
 *   body frame F_k, as above) are offered too. */

/* 1/2 sum eta^T K_m eta over the flexible bodies at the q of the last call that computed
 * placements (sd_kinematics or any dynamics call); 0 for a rigid model. */
SD_API sd_status sd_strain_energy(const sd_model *model, sd_data *data, double *E);

#ifdef __cplusplus
}
#endif
#endif /* SOADYN_FLEX_H */
