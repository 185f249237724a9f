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

#include <stdint.h>
#include <string.h>

#include <soadyn/soadyn.h>

#define SD_PI 3.14159265358979323846
/* A rarely taken path (singularity analysis, error reports), or a less common one (hinges of
 * several speeds): kept out of line, so that the hot loop it branches from stays small. */
#if defined(__GNUC__)
#define SD_COLD __attribute__((cold, noinline))
#define SD_NOINLINE __attribute__((noinline))
#else
#define SD_COLD
#define SD_NOINLINE
#endif
/* Largest nv for which the Cholesky forward dynamics allocates its dense nv x nv matrix (128 MiB):
 * beyond it the O(N^3) reference path says it is not offered instead of allocating gigabytes. */
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
    double *hinge_turn;   /* 12 per body: for a revolute about an axis a that is not a coordinate axis,
                             P [a x] and P a with P the placement's rotation (hinge.c's
                             turn_placement; sd_hinge_turn_constants), else zeros */
    double *mass, *com, *inertia_com; /* 1, 3, 9 per body */
    double *rigid;        /* 13 per body: spatial inertia M(k) about the body origin as (m, h = m c, Io) */
    double *damping;      /* per speed */
    double *armature;     /* per speed: added to D(k) and to M's diagonal */
    double *stiffness;    /* per speed: the hinge's spring (revolute, prismatic, spherical) */
    double *spring_ref;   /* per speed: the rest coordinate (spherical: 0, the neutral orientation) */
    int has_armature;     /* some armature > 0: the recursions add it, else they skip it */
    int has_passive;      /* some damping or stiffness > 0, or a free hinge's armature: the bias C
                             includes tau_passive (joint_dynamics.c), else nothing is computed */
    int has_free_armature; /* a free hinge has an armature: tau_passive has its velocity term */
    double gravity[3];
    double time_step;     /* the model file's time step (sd_model_time_step), 0: none */
    double total_mass;
    unsigned params_generation; /* counts the parameter setters' changes (model_params.c): a workspace
                                   or batch context holding another count holds stale results */
    sd_body_desc *desc;   /* as given, strings owned by the model */
    int nframes;
    char **frame_name;
    int *frame_body;
    sd_transform *frame_placement;
    size_t nwarnings;
    char **warnings;
    struct sd_loops_model *loops; /* closure constraints (src/loops); NULL: a tree */
    /* Flexible bodies (src/flex; soadyn/flex.h). nflex == 0: every array below is NULL and every
     * algorithm takes the rigid fast path; nflex > 0: the public entry points run the node engine
     * (src/algorithms/node_engine.h). Body k's q block is its hinge's nq_k[k] coordinates, then
     * n_modes[k] modal coordinates eta at mode_q_index[k]; likewise u (mode_v_index[k]). */
    int nflex;
    struct sd_flex_body **flex;   /* per body: NULL for a rigid body */
    int *n_modes;                 /* per body, 0 for a rigid body */
    int *mode_q_index, *mode_v_index;
    int *parent_node;             /* per body: the parent's FE node carrying the hinge, -1: the parent frame */
    sd_transform *node_placement; /* per body with parent_node >= 0: the joint frame in the undeformed
                                     node frame (the node's position, body axes), i.e. Xnode0^-1 placement */
    /* A node model (src/embed builds one per embedding: one body per node of the embedded tree): per
     * body its sd_node_kind (node_engine.h); NULL on every model a user builds. */
    unsigned char *node_kind;
    /* Compiled code (soadyn/compile.h, src/compile): `compiled_code` owns the loaded object (NULL: never
     * compiled, or uncompiled); `compiled` is what the public entry points test, once per call
     * (SD_RUN_COMPILED), NULL when none runs: the parameter setters clear it, since the code folded
     * the old values in, and sd_model_compile sets it again. */
    struct sd_compiled_code *compiled_code;
    const struct sd_compiled_code *compiled;
};

/* The generated functions a compiled model runs (soadyn/codegen.h's NAME_* signatures; 0 is SD_OK) and
 * how the model releases them. Held by src/compile; the core sees only this. */
typedef struct sd_compiled_code {
    int (*inverse_dynamics)(const double *q, const double *u, const double *qdd, const double *f_ext, double *tau);
    int (*mass_matrix)(const double *q, double *M);
    int (*forward_dynamics)(const double *q, const double *u, const double *tau, const double *f_ext, double *qdd);
    int (*mass_matrix_inverse)(const double *q, double *Minv);
    int (*interbody_forces)(const double *q, const double *u, const double *qdd, const double *f_ext, double *f);
    void (*release)(struct sd_compiled_code *self); /* unload and free (sd_model_free, sd_model_uncompile) */
} sd_compiled_code;

/* sd_inverse_dynamics without the hook below, its messages naming sd_compiled_interbody_forces: that
 * call's library path, which reads the forces from the workspace (inverse_dynamics.c). */
sd_status sd_inverse_dynamics_library(const sd_model *m, sd_data *d, const double *q, const double *u,
                                      const double *qdd, const double *f_ext, double *tau);

/* The first statement of a public entry point the compiled code covers: with compiled code, a workspace
 * made for the model, and the generated function's success, the call is done (the workspace then
 * holds no state of it: readers say so, sd_check_reader); otherwise the library's code runs, and on
 * an argument error or a failing state it names the element as always (the generated code returns a
 * bare status). One test of model->compiled when there is none. */
#define SD_RUN_COMPILED(m, d, fn, args)                                                                      \
    do {                                                                                                    \
        if ((m) && (m)->compiled && (d) && (d)->model == (m) && (m)->compiled->fn args == 0) {              \
            (d)->current = 0;                                                                               \
            return SD_OK;                                                                                   \
        }                                                                                                   \
    } while (0)

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
    double *psi;               /* 36 per body: psi(parent, k) = phi(parent, k) tau_bar(k), 6x6 (operational
                                  space); the M^-1 scatter's scratch (innovations.c) */
    double *Y;                 /* 36 per body: Omega(k, k) (004 Lemma 5) */
    unsigned char *prescribed_none; /* all-zero flags, for the plain forward dynamics */
    signed char *hinge_sel;    /* per body: sd_hinge_select(), fixed by the model, set by sd_data_new */
    double *hinge_sgn;         /* per body: its sign (+-1) */
    signed char *hinge_plane;  /* per body: i when Xup's rotation is a plane rotation about e_i (a
                                  revolute about e_i, placement unrotated: sd_plane_axis), else -1 */
    size_t block_bytes;        /* the one block holding every array above */
    double *dense;             /* nv x nv, allocated by the first Cholesky forward dynamics, else NULL */
    double *deriv;             /* the derivatives' scratch (src/derivatives), allocated by their first call */
    size_t deriv_bytes;
    unsigned current;          /* SD_CURRENT_* flags: what holds the state of the last call */
    unsigned params_generation; /* the model's params_generation at the last call that computed
                                   placements: another one makes every part stale (sd_check_reader) */
    int alpha_has_gravity;
    char error[512];
    struct sd_loops_data *loops; /* closed-loop workspace (src/loops); NULL when the model has none */
    struct sd_node_data *nodes;  /* the node engine's workspace (node_engine.h); NULL when nflex == 0 */
};

/* Which parts of the workspace hold the state (q, u, ...) of the last call that computed
 * placements (sd_data.current). Every call that computes placements clears the flags of what it does
 * not recompute, and a call that uses a part as scratch clears its flag, so a reader never takes a
 * stale value for a current one. */
enum {
    SD_CURRENT_PLACEMENTS = 1u << 0,    /* Xup and H* (S) at the last q */
    SD_CURRENT_WORLD = 1u << 1,         /* Xworld (refreshable from Xup) */
    SD_CURRENT_VELOCITIES = 1u << 2,    /* V, a, b at the last u */
    SD_CURRENT_ACCELERATIONS = 1u << 3, /* alpha (with gravity when alpha_has_gravity) */
    SD_CURRENT_ARTICULATED = 1u << 4,   /* P, D, Dinv, G of every hinge: the factors of M(q) */
    SD_CURRENT_FORCES = 1u << 5         /* f, the inter-body forces */
};

/* The API-boundary checks of a dynamics call (arguments.c): q and the workspace required, and every
 * array given (others may be NULL) finite; the failure names the argument and index. */
sd_status sd_check_call(const sd_model *m, sd_data *d, const char *fn, const double *q, const double *u,
                        const double *qdd, const double *tau, const double *f_ext);
/* x[0 .. n-1] finite (x may be NULL), else an error naming fn, the argument and the index. */
sd_status sd_check_input(sd_data *d, const char *fn, const char *name, const double *x, int n);
/* The checks of a call that reads the workspace (arguments.c): model and workspace present and made
 * for each other, and every part in `parts` (SD_CURRENT_*) current; world placements are refreshed
 * from Xup when only they are stale. The failure names `fn` and the call that must come first. */
sd_status sd_check_reader(const sd_model *m, sd_data *d, const char *fn, unsigned parts);
/* body in 0 .. n-1, else an error naming fn and the index. */
sd_status sd_check_body(const sd_model *m, sd_data *d, const char *fn, int body);
/* Whether x[0 .. n-1] are all finite. inf and NaN are the doubles whose exponent bits are all
 * ones; testing the bits with integer operations lets the loop vectorise (a floating-point sum
 * would be evaluated in order). */
static inline int sd_all_finite(const double *x, size_t n)
{
    /* (bits & exponent) + one exponent step carries into bit 63 exactly when every exponent bit is
     * set: an and, an add and an or per number, which plain x86-64 vectorises (a 64-bit compare
     * did not: ~9 instructions a number, 14% of the 1000-link chain's M^-1). */
    const uint64_t exponent = 0x7FF0000000000000u, step = 0x0010000000000000u;
    uint64_t acc = 0;
    for (size_t i = 0; i < n; ++i) {
        uint64_t bits;
        memcpy(&bits, x + i, sizeof bits);
        acc |= (bits & exponent) + step;
    }
    return !(acc >> 63);
}

/* The check every evaluation ends with (arguments.c): SD_OK when x[0 .. n-1] are all finite, else
 * SD_E_NOT_FINITE naming fn, the output, the first bad index and `cause`, the likely reason. */
sd_status sd_check_output(sd_data *d, const char *fn, const char *name, const double *x, size_t n,
                          const char *cause);
/* The likely causes sd_check_output names. */
#define SD_CAUSE_OVERFLOW "products of the state and the model overflow a double (speeds, forces or positions far beyond a physical system's)"
#define SD_CAUSE_TINY_INERTIA "an articulated inertia D(k) so small that the accelerations overflow (a nearly massless body), or products of the state and the model that overflow a double"

/* Free the strings a builder copied into a body description (model_builder.c). */
void sd_body_desc_free_strings(sd_body_desc *d);
/* The checks sd_builder_add_body and sd_builder_build make on one description's numbers (finite,
 * signed right, within model_bounds.h, the hinge's spring rules, limits) and its inertia against its
 * mass, with the same messages; an inertia breaking the triangle inequality is accepted without the
 * builder's warning (model_builder.c; the parameter setters, model_params.c). */
sd_status sd_body_desc_check(const sd_body_desc *d, sd_error *err);
/* Fill an sd_error (may be NULL) with a message prefixed by the description's "file:line: " (or
 * "file: ", or nothing when it has no source) and return status (model_builder.c). */
sd_status sd_body_desc_fail(sd_error *err, sd_status status, const sd_body_desc *d, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Record a failure on the workspace and return its status. */
sd_status sd_data_fail(sd_data *data, sd_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Record that body k's hinge articulated inertia D(k) is singular (overflow 0: zero to round-off)
 * or too small to invert in a double (overflow 1); returns SD_E_SINGULAR (forward_dynamics.c). */
sd_status sd_singular_hinge(const sd_model *m, sd_data *d, int k, int overflow) SD_COLD;
/* Fill an sd_error (may be NULL) and return its status. */
sd_status sd_error_set(sd_error *err, sd_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- the one place that knows hinge types (hinge.c) ---- */

/* Joint transform XJ (the body frame in the joint frame) and H*(k) (6 x nv(k) column-major, body
 * frame) of body k's hinge at its coordinates qk. */
void sd_hinge_transform(const sd_model *m, int k, const double *qk, sd_transform *XJ, double *S);
/* What the rigid fast path may exploit in body k's hinge: i in 0 .. 5 when H*(k) = sgn e_i (a
 * revolute about, or a prismatic along, a coordinate axis of its frame: H* selects entry i of a
 * spatial vector), SD_HINGE_SEL_CONSTANT when H* is another constant (d(H*)/dt u = 0), else
 * SD_HINGE_SEL_VARYING (universal, planar). *sgn receives +-1 (1 when not a selection). */
#define SD_HINGE_SEL_CONSTANT (-1)
#define SD_HINGE_SEL_VARYING (-2)
int sd_hinge_select(const sd_model *m, int k, double *sgn);
/* out[0 .. 11] = P [a x] (row-major 3x3) and P a for body k's placement rotation P and
 * its revolute axis a when that is not a coordinate axis (sd_hinge_select gives
 * SD_HINGE_SEL_CONSTANT), else zeros: the model's hinge_turn, filled once by the builder. */
void sd_hinge_turn_constants(const sd_model *m, int k, double out[12]);
/* s[l], c[l] = sin, cos of theta = sgn q of body k0 + l for l = 0 .. 3 when it is a revolute (its H*
 * selecting an axis, sel 0 .. 2, or about any other constant axis; 0 and 1 for the others and past
 * the last body): four bodies' angles in one vector kernel (common/sincos4.h), for
 * sd_hinge_placement. */
void sd_hinge_sincos4(const sd_model *m, const signed char *sel, const double *sgn, const double *q, int k0,
                      double s[4], double c[4]);
/* Xup(k) = placement(k) * X_J(q) and H*(k) in one step, with sel and sgn from sd_hinge_select:
 * for a selecting hinge the joint rotation is a plane rotation applied to two columns, for a
 * revolute about another axis Rodrigues' formula with the placement folded into its constants
 * (m->hinge_turn), both by the angle whose sin s and cos c sd_hinge_sincos4 gave (read only for
 * those two). */
void sd_hinge_placement(const sd_model *m, int k, int sel, double sgn, const double *qk, double s, double c,
                        sd_transform *X, double *S);
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
 * placements Xworld when with_world is nonzero (the body-frame recursions do not need them). Marks
 * every other part of the workspace stale. */
void sd_update_placements(const sd_model *m, sd_data *d, const double *q, int with_world);
/* Xworld from the current Xup. */
void sd_update_world(const sd_model *m, sd_data *d);
/* out = H*(k) x(k): the spatial motion of body k's hinge for the speeds (or accelerations) x. */
void sd_hinge_motion(const sd_model *m, const sd_data *d, int k, const double *x, double out[6]);
/* The rotation of body k's axes in world axes, from Xworld or, when that is stale, from Xup. */
void sd_world_rotation(const sd_model *m, const sd_data *d, int k, double R[9]);
/* Placements (as above) and V(k), a(k), b(k) (with f_ext) at speeds u in one scatter; u may be
 * NULL (all zero). Marks every part but these stale. */
void sd_update_motion(const sd_model *m, sd_data *d, const double *q, const double *u, const double *f_ext,
                      int with_world);
/* V(k), a(k), b(k) (with f_ext) at speeds u (may be NULL), as sd_update_motion leaves them, where
 * the placements are already current at q (sd_update_placements, or a caller that placed some bodies
 * again): the velocity part of the scatter alone. A model with flexible bodies takes
 * sd_update_motion. */
void sd_update_velocities(const sd_model *m, sd_data *d, const double *q, const double *u, const double *f_ext);
/* M(q) of a rigid model (the composite-body algorithm in world axes, mass_matrix.c) into the nv x nv
 * row-major M, for a caller that has checked the arguments; returns whether every entry is finite. */
int sd_mass_matrix_fill(const sd_model *m, sd_data *d, const double *q, double *M);
/* The articulated-body gather of 004 Eq 33 (P, D, G, P+) at the current placements, with the
 * prescribed hinges of 000 Sec 3 (P+ = P, no D inverse); NULL: none prescribed. */
sd_status sd_riccati_gather(const sd_model *m, sd_data *d, const unsigned char *prescribed);
/* The acceleration the base is given so that gravity is included: [0; -g] in world axes. */
void sd_base_acceleration(const sd_model *m, double a0[6]);

/* ---- joint-level dynamics (joint_dynamics.c; the flags has_armature, has_passive say when) ---- */

/* out[0 .. nv(k)-1] = tau_passive of body k's hinge = -damping u - stiffness (q - spring_ref)
 * (spherical: -stiffness times the rotation vector; free: also -J (omega x v) on the linear speeds,
 * the armature's velocity term); u may be NULL (zero speeds). */
void sd_passive_hinge(const sd_model *m, int k, const double *q, const double *u, double *out);
/* tau -= tau_passive of every hinge (the rigid tree's speeds; u may be NULL): what a per-body
 * loop over sd_passive_hinge gives, up to round-off, in one loop over the speeds. */
void sd_passive_subtract(const sd_model *m, const double *q, const double *u, double *tau);
/* The rotation vector theta n of the quaternion qk = (w, x, y, z), theta in [0, pi] (the shorter
 * way round, as a spherical hinge's spring); scale-free. */
void sd_quat_rotation_vector(const double *qk, double r[3]);
/* The springs' energy sum 1/2 stiffness (q - spring_ref)^2 (spherical: 1/2 stiffness theta^2). */
double sd_spring_energy_at(const sd_model *m, const double *q);
/* The armature's kinetic energy sum 1/2 J u^2, with u recovered from the current velocities V. */
double sd_armature_energy(const sd_model *m, const sd_data *d);
/* The same 1/2 sum J u^2 from the speeds themselves (a model whose V carries more than H* u). */
double sd_armature_energy_of_speeds(const sd_model *m, const double *u);

/* y = D(k)^-1 x for one hinge's nk speeds (y must not alias x). */
static inline void sd_dinv_mul(const double *Dinv, int nk, const double *x, double *y)
{
    for (int i = 0; i < nk; ++i) {
        double s = 0.0;
        for (int j = 0; j < nk; ++j) s += Dinv[i * nk + j] * x[j];
        y[i] = s;
    }
}

/* out = V x (w e_sel), the spatial cross product with a hinge motion that selects entry sel of a
 * spatial vector (sd_hinge_select), from the entries of V it touches: a revolute about e_i
 * (sel = i) gives [omega x w e_i; v x w e_i], a prismatic along e_i (sel = 3 + i) [0; omega x w e_i].
 * With (a, b) the axes after i cyclically, x x e_i = (.., x_i = 0, x_a = x_b, x_b = -x_a). */
static inline __attribute__((always_inline)) void sd_motion_cross_axis_(const double V[6], int lin, int i, int a,
                                                                        int b, double w, double out[6])
{
    const double *x = lin ? V : V + 3; /* what multiplies the linear part */
    out[i] = out[3 + i] = 0.0;
    if (lin) out[a] = out[b] = 0.0;
    else {
        out[a] = w * V[b];
        out[b] = -w * V[a];
    }
    out[3 + a] = w * x[b];
    out[3 + b] = -w * x[a];
}
/* The switch gives each of the six selections constant indices (no (i + 1) % 3 at run time). */
static inline void sd_motion_cross_axis(const double V[6], int sel, double w, double out[6])
{
    switch (sel) {
    case 0: sd_motion_cross_axis_(V, 0, 0, 1, 2, w, out); break;
    case 1: sd_motion_cross_axis_(V, 0, 1, 2, 0, w, out); break;
    case 2: sd_motion_cross_axis_(V, 0, 2, 0, 1, w, out); break;
    case 3: sd_motion_cross_axis_(V, 1, 0, 1, 2, w, out); break;
    case 4: sd_motion_cross_axis_(V, 1, 1, 2, 0, w, out); break;
    default: sd_motion_cross_axis_(V, 1, 2, 0, 1, w, out); break;
    }
}

/* Xup's rotation when it is a plane rotation about e_i (sd_data's hinge_plane[k] = i): a revolute
 * hinge about e_i whose placement has the identity rotation (most joints of URDF files written with
 * rpy="0 0 0": Talos, the chains). R = [e_i, c e_a + s e_b, -s e_a + c e_b] with (a, b) the axes
 * after i cyclically, so R^T x and R x take 4 multiplications where the 3x3 products take 9: the
 * others are with R's exact zeros and one, and the sums left are the 3x3 product's own, so the
 * numbers are the same for finite x up to where the compiler fuses a product with its sum (with
 * FMA, CMakeLists.txt's -ffp-contract=fast: a few ulp of the largest term). c and s are read off R
 * itself (hinge.c's plane_rotation writes c = R(a, a) and s = R(b, a) exactly when the placement
 * is unrotated). */
static inline __attribute__((always_inline)) void sd_plane_rt_mul_(const double R[9], int i, int a, int b,
                                                                   const double x[3], double out[3])
{
    const double c = R[3 * a + a], s = R[3 * b + a];
    out[i] = x[i];
    out[a] = c * x[a] + s * x[b];
    out[b] = c * x[b] - s * x[a];
}

static inline __attribute__((always_inline)) void sd_plane_r_mul_(const double R[9], int i, int a, int b,
                                                                  const double x[3], double out[3])
{
    const double c = R[3 * a + a], s = R[3 * b + a];
    out[i] = x[i];
    out[a] = c * x[a] - s * x[b];
    out[b] = s * x[a] + c * x[b];
}

/* sd_motion_to_child (phi*(parent, k) m) with the plane kernel when plane = hinge_plane[k] >= 0; each
 * branch has its axis's constant indices. (An infinite x passes through here where the 3x3 product's
 * 0 * inf makes a NaN: both are non-finite, and the sweeps' output checks report either.) */
static inline void sd_motion_to_child_plane(const sd_transform *X, int plane, const double m_p[6], double m_c[6])
{
    if (plane < 0) {
        sd_motion_to_child(X, m_p, m_c);
        return;
    }
    double v[3]; /* v_p + omega_p x p, as sd_motion_to_child */
    sd_v3_cross(m_p, X->p, v);
    v[0] += m_p[3];
    v[1] += m_p[4];
    v[2] += m_p[5];
    if (plane == 2) sd_plane_rt_mul_(X->R, 2, 0, 1, m_p, m_c), sd_plane_rt_mul_(X->R, 2, 0, 1, v, m_c + 3);
    else if (plane == 1) sd_plane_rt_mul_(X->R, 1, 2, 0, m_p, m_c), sd_plane_rt_mul_(X->R, 1, 2, 0, v, m_c + 3);
    else sd_plane_rt_mul_(X->R, 0, 1, 2, m_p, m_c), sd_plane_rt_mul_(X->R, 0, 1, 2, v, m_c + 3);
}

/* sd_force_to_parent (phi(parent, k) f) the same way. */
static inline void sd_force_to_parent_plane(const sd_transform *X, int plane, const double f_c[6], double f_p[6])
{
    if (plane < 0) {
        sd_force_to_parent(X, f_c, f_p);
        return;
    }
    double n[3], f[3], pxf[3]; /* n_p = R n_c + p x f_p, f_p = R f_c, as sd_force_to_parent */
    if (plane == 2) sd_plane_r_mul_(X->R, 2, 0, 1, f_c, n), sd_plane_r_mul_(X->R, 2, 0, 1, f_c + 3, f);
    else if (plane == 1) sd_plane_r_mul_(X->R, 1, 2, 0, f_c, n), sd_plane_r_mul_(X->R, 1, 2, 0, f_c + 3, f);
    else sd_plane_r_mul_(X->R, 0, 1, 2, f_c, n), sd_plane_r_mul_(X->R, 0, 1, 2, f_c + 3, f);
    sd_v3_cross(X->p, f, pxf);
    f_p[0] = n[0] + pxf[0];
    f_p[1] = n[1] + pxf[1];
    f_p[2] = n[2] + pxf[2];
    f_p[3] = f[0];
    f_p[4] = f[1];
    f_p[5] = f[2];
}

#if defined(__AVX2__)
/* R Y R^T for a 3x3 block whose rows are Y[0..2] (lanes 0-2, sd_sym6_add_to_parent's layout) when R is
 * the plane rotation about e_i above: R Y mixes rows a and b (4 products and sums), and each row of
 * (R Y) R^T is t cv + swap_ab(t) sv with cv = (c at a and b, 1 at i), sv = (-s at a, s at b, 0 at i),
 * one lane permute and 2 products a row, where the general form (sd_avx_rotate3) broadcasts
 * three lanes and takes 3 products for each of the two factors. Lane 3 is padding, never moved
 * into lanes 0-2. */
static inline __attribute__((always_inline)) void sd_avx_rotate3_plane_(const double R[9], int i, int a, int b,
                                                                        const __m256d Y[3], __m256d out[3])
{
    const double c = R[3 * a + a], s = R[3 * b + a];
    const __m256d cc = _mm256_set1_pd(c), ss = _mm256_set1_pd(s);
    __m256d T[3];
    T[i] = Y[i];
    T[a] = SD_AVX_MADD(cc, Y[a], _mm256_mul_pd(_mm256_set1_pd(-s), Y[b]));
    T[b] = SD_AVX_MADD(ss, Y[a], _mm256_mul_pd(cc, Y[b]));
    const __m256d cv = _mm256_setr_pd(i == 0 ? 1.0 : c, i == 1 ? 1.0 : c, i == 2 ? 1.0 : c, 0.0);
    const __m256d sv = _mm256_setr_pd(a == 0 ? -s : b == 0 ? s : 0.0, a == 1 ? -s : b == 1 ? s : 0.0,
                                      a == 2 ? -s : b == 2 ? s : 0.0, 0.0);
    for (int r = 0; r < 3; ++r) { /* the permutes swap lanes a and b: 1 and 2, 2 and 0, 0 and 1 */
        const __m256d t = T[r], swapped = i == 0 ? _mm256_permute4x64_pd(t, 0xD8)
                                          : i == 1 ? _mm256_permute4x64_pd(t, 0xC6)
                                                   : _mm256_permute4x64_pd(t, 0xE1);
        out[r] = SD_AVX_MADD(swapped, sv, _mm256_mul_pd(t, cv));
    }
}

static inline __attribute__((always_inline)) void sd_sym6_add_to_parent_plane_(const sd_transform *X, int i, int a,
                                                                               int b, const double I[36],
                                                                               double acc[36])
{
    __m256d Y[3], A2[3], B2[3], C2[3];
    for (int l = 0; l < 3; ++l) Y[l] = _mm256_loadu_pd(I + 6 * l);
    sd_avx_rotate3_plane_(X->R, i, a, b, Y, A2);
    for (int l = 0; l < 3; ++l) Y[l] = _mm256_loadu_pd(I + 6 * l + 3);
    sd_avx_rotate3_plane_(X->R, i, a, b, Y, B2);
    for (int l = 0; l < 3; ++l) /* as sd_sym6_add_to_parent: from one entry early, moved down a lane */
        Y[l] = _mm256_permute4x64_pd(_mm256_loadu_pd(I + 6 * (3 + l) + 2), 0x39);
    sd_avx_rotate3_plane_(X->R, i, a, b, Y, C2);
    sd_avx_sym6_shift_add(X->p, A2, B2, C2, acc);
}
#endif

/* sd_sym6_add_to_parent (acc += phi P phi*, 004 Eq 33) with the plane kernel when plane =
 * hinge_plane[k] >= 0 and the build has AVX2: the three blocks' rotations take about a third of
 * the general form's operations. The numbers are the general form's up to round-off (a few ulp
 * of the largest term: sums are formed in another order; test_hinge_kernels). */
static inline void sd_sym6_add_to_parent_plane(const sd_transform *X, int plane, const double I[36], double acc[36])
{
#if defined(__AVX2__)
    if (plane == 0) sd_sym6_add_to_parent_plane_(X, 0, 1, 2, I, acc);
    else if (plane == 1) sd_sym6_add_to_parent_plane_(X, 1, 2, 0, I, acc);
    else if (plane == 2) sd_sym6_add_to_parent_plane_(X, 2, 0, 1, I, acc);
    else sd_sym6_add_to_parent(X, I, acc);
#else
    (void)plane;
    sd_sym6_add_to_parent(X, I, acc);
#endif
}

/* i when body k's hinge is a revolute about e_i (sel = i) and its placement's rotation is exactly
 * the identity, in a model without flexible bodies; else -1 (hinge.c; sd_data's hinge_plane). */
int sd_plane_axis(const sd_model *m, int k, int sel);

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
/* Copy the upper triangle of the n x n row-major A onto its lower one; returns whether every entry
 * is finite. */
int sd_mirror_upper(double *A, int n);
/* Copy the strict lower part of rows [r0, r1) of A onto the columns r0 .. r1-1 of its upper
 * triangle, so a caller can mirror rows while they are in cache; no check. */
void sd_mirror_lower_rows(double *A, int n, int r0, int r1);
/* Pivoted Cholesky (largest remaining diagonal first) of the symmetric n x n row-major A, in place:
 * stops when no remaining diagonal exceeds rtol * max|A_ij| and returns that rank. piv (n) receives
 * the pivot order (original indices). *bad is -1 when A is positive semi-definite within that
 * tolerance, else the original index of a row that shows a negative direction. */
int sd_pivoted_cholesky(double *A, int n, double rtol, int *piv, int *bad);
/* Principal axes of a symmetric 3x3 A (an inertia): A = V diag(d) V^T, V's columns the axes and V a
 * rotation, by cyclic Jacobi rotations to machine precision (a few sweeps for 3x3; a library
 * eigen-solver call would cost more than the solve). */
void sd_sym3_eigen(const double A[9], double d[3], double V[9]);

/* ---- closed loops (src/loops/constraint_model.c): the hooks of the builder, model and data ---- */
struct sd_loops_builder;
/* The builder's constraint list (model_builder.c keeps the pointer). */
struct sd_loops_builder **sd_builder_loops(sd_builder *b);
void sd_loops_builder_free(struct sd_loops_builder *lb);
/* Resolve the constraints against the built model m (errors name the constraint) and move them
 * into m->loops; the list is emptied on success. */
sd_status sd_loops_build(struct sd_loops_builder *lb, sd_model *m, sd_error *err);
void sd_loops_model_free(struct sd_loops_model *lm);
/* A deep copy of a model's loops part (sd_model_copy) for a model of n bodies; NULL when out of memory. */
struct sd_loops_model *sd_loops_model_copy(const struct sd_loops_model *lm, int n);
/* The closed-loop workspace of a model with constraints; NULL when out of memory. */
struct sd_loops_data *sd_loops_data_new(const sd_model *m);
void sd_loops_data_free(struct sd_loops_data *ld);

/* ---- flexible bodies (src/model/flex_model.c): the hooks of the builder and model ---- */
struct sd_flex_builder;
/* The builder's flexible-body descriptions (model_builder.c keeps the pointer). */
struct sd_flex_builder **sd_builder_flex(sd_builder *b);
void sd_flex_builder_free(struct sd_flex_builder *fb);
/* After the bodies are in m (parent-first, rigid layout): check every parent_node (also of a model
 * without flexible bodies), make the flexible bodies, lay q and u out with the modes after each
 * hinge block (q_index, v_index, nq, nv) and fill the flexible fields of sd_model. fb may be NULL. */
sd_status sd_flex_model_build(const struct sd_flex_builder *fb, sd_model *m, sd_error *err);
/* Free the flexible fields of m (sd_model_free). */
void sd_flex_model_free(sd_model *m);

#endif /* SOADYN_INTERNAL_H */
