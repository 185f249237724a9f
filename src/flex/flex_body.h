/*
 * src/flex/flex_body.h — one flexible body's modal model and its node operations (001 Sec 2): what
 * the node engine asks of a flexible node. Library-internal.
 *
 * Notation (001): body k, n = n_nodes, nm = n_modes; node j at l_j(eta) = l0_j + Pi_t^j eta (full
 * model) or l0_j (linearised), Pi^j = [Pi_r^j; Pi_t^j] (6 x nm, rotation rows first, body axes).
 * A node vector of the flexible node is [V (6: omega, v of F_k, body axes); eta-dot (nm)] — rigid
 * part FIRST, then the modes (the papers write [eta-dot; V]; soadyn keeps V first so that the rigid
 * part of every node sits where a rigid body's does). Matrices over node vectors are (6+nm)^2
 * row-major in that order.
 *
 * Nodal kinematics (body axes, the nodes' frames parallel to F_k):
 *   omega_j = omega + Pi_r^j eta-dot,   v_j = v + omega x l_j + Pi_t^j eta-dot        (001 Eq 23)
 * Kinetic energy 1/2 sum (m_j |v_j|^2 + omega_j^T J_j omega_j) (J_j constant in body axes), which
 * defines M_m (001 Eq 25) exactly; the bias b_m (001 Eq 39) is the matching velocity-product term
 * (the nodal gyroscopic moment of 001 Eq 33 with J_j held in body axes, omega x J_j omega_j on the
 * rigid rows, which is what the Lagrangian of this kinetic energy gives, and the Coriolis and
 * centripetal accelerations of the moving nodes), so that M_m alpha_m + b_m is the generalized force the body's nodes need for the
 * acceleration alpha_m = [alpha (spatial, of F_k); eta-ddot].
 *
 * Attachment of a child at node t (the child's hinge rides on the node): the deformed node frame N_t
 * has pose (R_t, l0_t + Pi_t^t eta) in F_k with R_t = exp(theta^), theta = Pi_r^t eta. Its motion
 * relative to F_k, in N_t's own axes, is S_t(eta) eta-dot with S_t = [J_r(theta) Pi_r^t; R_t^T Pi_t^t]
 * (J_r: the right Jacobian of SO(3)), and d(S_t)/dt eta-dot is the bias the child's Coriolis term
 * needs. With the linearised model the same exact kinematics is used for attachments (a child's
 * motion is never approximated; only the body's own mass matrix is).
 */
#ifndef SOADYN_FLEX_BODY_H
#define SOADYN_FLEX_BODY_H

#include <soadyn/flex.h>
#include <soadyn/spatial.h>

typedef struct sd_flex_body sd_flex_body;

/* Copy and check a description (errors name `body_name` and desc->source_file; see
 * sd_builder_set_flexible for what is checked), and precompute what the node operations need
 * (the constant M_m^ff, the modal integrals of the full model, M_m of the linearised one). The
 * body's rigid part (mass, com, inertia about the com, body axes) is added to M_m^rr. NULL and
 * err set on failure. */
sd_flex_body *sd_flex_body_new(const sd_flex_desc *desc, double rigid_mass, const double rigid_com[3],
                               const double rigid_inertia_com[9], const char *body_name, sd_error *err);
void sd_flex_body_free(sd_flex_body *fb);

int sd_flex_body_nmodes(const sd_flex_body *fb);
int sd_flex_body_nnodes(const sd_flex_body *fb);
sd_flex_mass_model sd_flex_body_mass_model(const sd_flex_body *fb);
/* The undeformed position of node j in the body frame (j in 0 .. n_nodes-1). */
const double *sd_flex_body_node_position(const sd_flex_body *fb, int j);
/* The copied description's arrays (for info output, frequencies, tests). */
const sd_flex_desc *sd_flex_body_desc(const sd_flex_body *fb);
/* M_m^ff, the constant flex/flex block of the modal mass matrix (001 Sec 2.2): nm x nm row-major. */
const double *sd_flex_body_modal_mass(const sd_flex_body *fb);
/* Bytes the body holds (for sd_data_size-like reports). */
size_t sd_flex_body_size(const sd_flex_body *fb);

/* ---- node operations: no allocation, no branching on strings ---- */

/* M_m(eta): (6+nm)^2 row-major, rigid part first (001 Eq 25), including the rigid part. */
void sd_flex_mass(const sd_flex_body *fb, const double *eta, double *Mm);
/* b_m(eta, eta-dot, V): (6+nm) (001 Eq 39; gyroscopic and Coriolis, no elastic terms), V the spatial
 * velocity of F_k in body axes. Includes the rigid part's V x* M V. */
void sd_flex_bias(const sd_flex_body *fb, const double *eta, const double *eta_dot, const double V[6],
                  double *bm);
/* sd_flex_mass and sd_flex_bias in one pass over the modal integrals (the terms both take from
 * eta are formed once): what the motion scatter asks of a moving flexible node. */
void sd_flex_mass_bias(const sd_flex_body *fb, const double *eta, const double *eta_dot, const double V[6],
                       double *Mm, double *bm);
/* The modal elastic and damping force K_m eta + D_m eta-dot (nm entries, 001 Eq 40). */
void sd_flex_elastic(const sd_flex_body *fb, const double *eta, const double *eta_dot, double *fe);
/* 1/2 eta^T K_m eta. */
double sd_flex_strain_energy(const sd_flex_body *fb, const double *eta);
/* The body's mass (nodes and rigid part) and its first moment h = h0 + Hp eta about F_k's origin, F_k
 * axes, nodes at their deformed positions whatever the mass model (centre of mass, gravity energy). */
double sd_flex_first_moment(const sd_flex_body *fb, const double *eta, double h[3]);

/* The deformed frame of node t (its pose in F_k, see above) and S_t(eta) (6 x nm, column-major:
 * column r is the node frame's relative twist for eta-dot = e_r, in the node frame's axes). */
void sd_flex_node_frame(const sd_flex_body *fb, int t, const double *eta, sd_transform *pose, double *S);
/* sd_flex_node_frame, and c = d(S_t)/dt eta-dot (6, node frame axes): the node frame's relative
 * acceleration at eta-ddot = 0. */
void sd_flex_node_motion(const sd_flex_body *fb, int t, const double *eta, const double *eta_dot, sd_transform *pose,
                         double *S, double c[6]);

/* ---- the modal integrals, read by the code generator (src/codegen/cg_node_flexible.c), which folds
 * them into the generated file as constants: the numbers the node operations above use, with their
 * layouts (flex_body.c's file comment). Pointers into the body, valid while it lives. ---- */
typedef struct sd_flex_integrals {
    int nm, n_nodes;
    sd_flex_mass_model mass_model;
    double m;                  /* the body's mass (nodes and rigid part) */
    const double *h0, *I0;     /* 3, 9: first moment and inertia about F_k at eta = 0 */
    const double *Hp, *JQ, *N0;/* 3 per mode */
    const double *A;           /* 9 per mode */
    const double *C;           /* C_sr at [(r nm + s) 9 + 3a + b] */
    const double *G2;          /* G2_sr at [(r nm + s) 3 + c] */
    const double *Mff;         /* nm x nm */
    const double *M0;          /* M_m at eta = 0, (6 + nm)^2 (the linearised model's constant M_m) */
    const double *K, *D;       /* nm x nm row-major; D NULL: no modal damping */
    const double *modes;       /* 6 n_nodes x nm, column-major (Pi: rotation rows first per node) */
    const double *node_position; /* 3 per node */
} sd_flex_integrals;
void sd_flex_body_integrals(const sd_flex_body *fb, sd_flex_integrals *out);
/* ---- tangent operations (first-order variations; flex_tangent.c): the derivatives of flexible
 * models (src/derivatives/flex_derivatives.c). A NULL variation is zero. ---- */

/* dM_m and db_m, the variations of sd_flex_mass_bias' outputs along (deta, deta_dot, dV) at (eta,
 * eta_dot, V): (6+nm)^2 and (6+nm). The elastic force is linear: its variation is sd_flex_elastic of
 * the variations. */
void sd_flex_mass_bias_tangent(const sd_flex_body *fb, const double *eta, const double *eta_dot, const double V[6],
                               const double *deta, const double *deta_dot, const double dV[6], double *dMm,
                               double *dbm);
/* The variations of node t's S_t(eta) (6 x nm, column-major, as sd_flex_node_frame) along deta, and
 * of its bias c(eta, eta_dot) (sd_flex_node_motion) along (deta, deta_dot). The pose varies by the
 * twist S_t deta (node frame axes, applied on the right: pose exp(S_t deta)). dS may be NULL. */
void sd_flex_node_tangent(const sd_flex_body *fb, int t, const double *eta, const double *eta_dot, const double *deta,
                          const double *deta_dot, double *dS, double dc[6]);

#endif /* SOADYN_FLEX_BODY_H */
