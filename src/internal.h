/*
 * src/internal.h — the layout of sd_model and sd_data, shared by the library's own files only.
 *
 * Glossary of per-body quantities (papers' names; body k's own frame unless a name says _world):
 *   Xup[k]       placement of body k in its parent's body frame: joint placement * joint transform.
 *                The papers' phi(parent, k) (force, child->parent) and phi*(parent, k) (motion,
 *                parent->child) are sd_force_to_parent / sd_motion_to_child with it.
 *   Xworld[k]    placement of body k in the inertial frame
 *   S            H*(k): the hinge's motion directions, 6 x nv(k) column-major at 6*v_index[k]
 *   V[k]         spatial velocity; alpha[k] spatial acceleration (plus the gravity offset when
 *                alpha_has_gravity: the base is given acceleration -g, so f includes weight)
 *   a[k]         Coriolis acceleration V x H* u + d(H*)/dt u (000 Eq 2)
 *   b[k]         gyroscopic force V x* M V minus the external force (000 Eq 2)
 *   f[k]         inter-body force of the parent on body k through the hinge (004 Alg 3.1)
 *   Rc[k]        composite body inertia R(k) (004 Eq 20), 13 numbers in world axes (mass_matrix.c)
 *   P, Pplus     articulated body inertia P(k) and P+(k) (004 Eq 33)
 *   U            P H*, 6 x nv(k) at 6*v_index[k]; G = U D^-1 the Kalman gain (004 Eq 32)
 *   Dchol[k]     Cholesky factor (lower, row-major nv(k) x nv(k) in 36 slots) of D(k) = H P H*
 *   Dinv[k]      D(k)^-1, row-major nv(k) x nv(k) in 36 slots (every solve with D is a product)
 *   z, zplus     residual forces z(k), z+(k) (004 Eq 58a-b); eps, nu per speed (Eq 58c-d)
 *   alpha_plus   alpha+(k) = phi* alpha(parent) (004 Eq 58e)
 */
#ifndef SOADYN_INTERNAL_H
#define SOADYN_INTERNAL_H

#include <soadyn/soadyn.h>

#define SD_PI 3.14159265358979323846
/* Largest nv for which the workspace holds a dense nv x nv matrix (128 MiB): beyond it the O(N^3)
 * Cholesky forward dynamics says it is not offered instead of allocating gigabytes. */
#define SD_DENSE_MAX_NV 4096

struct sd_model {
    char *name;
    int n, nq, nv;
    int *parent;          /* parent-first, depth-first preorder: parent[k] < k, subtrees contiguous */
    int *subtree_end;     /* bodies of k's subtree are k .. subtree_end[k]-1 */
    int *last_child;      /* the child with the largest index (first reached by a gather), -1: leaf */
    int *q_index, *v_index, *nq_k, *nv_k;
    int *v_body;          /* body owning each speed */
    int *v_parent;        /* the speed before each on the path to the base (in its own hinge, or the
                             last speed of the nearest moving ancestor), -1 at the base */
    sd_hinge_type *hinge;
    sd_transform *placement;
    double *hinge_axes;   /* 9 per body: axis, axis2 (universal) or t1, t2 (planar) */
    double *mass, *com, *inertia_com; /* 1, 3, 9 per body */
    double *rigid;        /* 13 per body: spatial inertia M(k) about the body origin as (m, h = m c, Io) */
    double *damping;      /* per speed */
    double gravity[3];
    double total_mass;
    sd_body_desc *desc;   /* as given, strings owned by the model */
    int nframes;
    char **frame_name;
    int *frame_body;
    sd_transform *frame_placement;
    size_t nwarnings;
    char **warnings;
    struct sd_loops_model *loops; /* closure constraints (src/loops); NULL: a tree */
};

struct sd_data {
    const sd_model *model;
    sd_transform *Xup, *Xworld;
    double *S;
    double *V, *alpha, *a, *b, *f;
    double *Rc, *P, *Pplus;
    double *U, *G, *Dchol, *Dinv;
    double *z, *zplus, *alpha_plus;
    double *eps, *nu;
    double *S_world, *G_world; /* H* and G in world axes about the world origin (M^-1 sweep) */
    double *minv_z;            /* 6 x nv: residual force per column, one buffer (see innovations.c) */
    double *minv_alpha;        /* 6 x nv per branching body + 1: accelerations per column */
    int *branch_slot;          /* per body: its slot in minv_alpha when it has 2+ children, else -1 */
    double *psi;               /* 36 per body: psi(parent, k) = phi(parent, k) tau_bar(k), 6x6 */
    double *Y;                 /* 36 per body: Omega(k, k) (004 Lemma 5) */
    double *dense;             /* nv x nv scratch (Cholesky forward dynamics) */
    unsigned char *prescribed_none; /* all-zero flags, for the plain forward dynamics */
    int world_valid;           /* Xworld matches the last placements */
    int alpha_has_gravity;
    int forces_valid;          /* f holds inter-body forces of the last dynamics call */
    char error[256];
    struct sd_loops_data *loops; /* closed-loop workspace (src/loops); NULL when the model has none */
};

/* The API-boundary checks of a dynamics call (arguments.c): q and the workspace required, and every
 * array given (others may be NULL) finite; the failure names the argument and index. */
sd_status sd_check_call(const sd_model *m, sd_data *d, const char *fn, const double *q, const double *u,
                        const double *qdd, const double *tau, const double *f_ext);

/* Free the strings a builder copied into a body description (model_builder.c). */
void sd_body_desc_free_strings(sd_body_desc *d);

/* Record a failure on the workspace and return its status. */
sd_status sd_data_fail(sd_data *data, sd_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Fill an sd_error (may be NULL) and return its status. */
sd_status sd_error_set(sd_error *err, sd_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- the one place that knows hinge types (hinge.c) ---- */

/* Joint transform XJ (the body frame in the joint frame) and H*(k) (6 x nv(k) column-major, body
 * frame) of body k's hinge at its coordinates qk. */
void sd_hinge_transform(const sd_model *m, int k, const double *qk, sd_transform *XJ, double *S);
/* dH*(k)/dt u(k) in the body frame: the hinge part of the Coriolis acceleration a(k). */
void sd_hinge_velocity_term(const sd_model *m, int k, const double *qk, const double *uk, double c[6]);
void sd_hinge_neutral(sd_hinge_type type, double *qk);
void sd_hinge_integrate(const sd_model *m, int k, const double *qk, const double *uk, double dt, double *out);
void sd_hinge_difference(const sd_model *m, int k, const double *q0, const double *q1, double *uk);
double sd_hinge_normalize(sd_hinge_type type, double *qk);
void sd_hinge_random(const sd_model *m, int k, uint64_t *rng, double *qk);
/* The hinge's part of sd_configuration_chart_rate / _chart_angle / _quaternion_error. */
void sd_hinge_chart_rate(const sd_model *m, int k, const double *delta, const double *uk, double *rate);
double sd_hinge_chart_angle(sd_hinge_type type, const double *delta);
double sd_hinge_quaternion_error(sd_hinge_type type, const double *qk);

/* ---- shared sweeps ---- */

/* Placements Xup and H* of every body at q (the first step of every algorithm), and the world
 * placements Xworld when with_world is nonzero (the body-frame recursions do not need them). */
void sd_update_placements(const sd_model *m, sd_data *d, const double *q, int with_world);
/* out = H*(k) x(k): the spatial motion of body k's hinge for the speeds (or accelerations) x. */
void sd_hinge_motion(const sd_model *m, const sd_data *d, int k, const double *x, double out[6]);
/* The rotation of body k's axes in world axes, from Xworld or, when that is stale, from Xup. */
void sd_world_rotation(const sd_model *m, const sd_data *d, int k, double R[9]);
/* Placements (as above) and V(k), a(k), b(k) (with f_ext) at speeds u in one scatter; u may be
 * NULL (all zero). */
void sd_update_motion(const sd_model *m, sd_data *d, const double *q, const double *u, const double *f_ext,
                      int with_world);
/* The articulated-body gather of 004 Eq 33 (P, D, G, P+) at the current placements, with the
 * prescribed hinges of 000 Sec 3 (P+ = P, no D inverse); NULL: none prescribed. */
sd_status sd_riccati_gather(const sd_model *m, sd_data *d, const unsigned char *prescribed);
/* The acceleration the base is given so that gravity is included: [0; -g] in world axes. */
void sd_base_acceleration(const sd_model *m, double a0[6]);

/* y = D(k)^-1 x for one hinge's nk speeds (y must not alias x). */
static inline void sd_dinv_mul(const double *Dinv, int nk, const double *x, double *y)
{
    for (int i = 0; i < nk; ++i) {
        double s = 0.0;
        for (int j = 0; j < nk; ++j) s += Dinv[i * nk + j] * x[j];
        y[i] = s;
    }
}

/* ---- small dense linear algebra (dense.c) ---- */

/* In-place Cholesky factorisation of a symmetric positive definite n x n row-major matrix A into
 * its lower factor L (upper part left untouched). Returns the index of the first pivot that is not
 * larger than min_pivot (or is NaN), or -1 on success. */
int sd_cholesky_factor(double *A, int n, double min_pivot);
/* Solve L L^T x = b in place (x holds b on entry), with L from sd_cholesky_factor. */
void sd_cholesky_solve(const double *L, int n, double *x);
/* log det of L L^T = 2 sum log L_ii. */
double sd_cholesky_logdet(const double *L, int n);
/* Replace L (from sd_cholesky_factor) by (L L^T)^-1, both triangles. */
void sd_cholesky_inverse(double *A, int n);

/* ---- closed loops (src/loops/constraint_model.c): the hooks of the builder, model and data ---- */
struct sd_loops_builder;
/* The builder's constraint list (model_builder.c keeps the pointer). */
struct sd_loops_builder **sd_builder_loops(sd_builder *b);
void sd_loops_builder_free(struct sd_loops_builder *lb);
/* Resolve the constraints against the built model m (errors name the constraint) and move them
 * into m->loops; the list is emptied on success. */
sd_status sd_loops_build(struct sd_loops_builder *lb, sd_model *m, sd_error *err);
void sd_loops_model_free(struct sd_loops_model *lm);
/* The closed-loop workspace of a model with constraints; NULL when out of memory. */
struct sd_loops_data *sd_loops_data_new(const sd_model *m);
void sd_loops_data_free(struct sd_loops_data *ld);

#endif /* SOADYN_INTERNAL_H */
