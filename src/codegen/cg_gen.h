/*
 * src/codegen/cg_gen.h — the generator's node table: what it keeps per node while it emits a sweep,
 * and the operations a node kind emits (the generated-code counterpart of node_kinds.h).
 *
 * The sweeps (cg_sweeps.c) walk the model's node table (parent[], parent-first) as the engine's do
 * (node_engine.h) and ask each node's kind for its operations through cg_kind_ops; the rigid kind
 * (cg_node_rigid.c) emits them with the hinge kernels of hinge.c and the joint-level terms of
 * joint_dynamics.c, on the generator's scalars, so the model's constants fold (cg_emit.h). A node
 * kind without generated operations (an aggregate) is refused before any file is written; the
 * flexible kind (cg_node_flexible.c) emits those of node_flexible.c and flex_body.c.
 */
#ifndef SOADYN_CG_GEN_H
#define SOADYN_CG_GEN_H

#include "cg_spatial.h"
#include "internal.h"

/* Per node, the quantities of the sweep being emitted (scalars: constants or temporaries). */
typedef struct cg_node {
    int nk;            /* hinge speeds nv(k) */
    cg_xform Xup;      /* placement in the parent (node_engine.h's phi*(p, k) = Xup) */
    cg_val S[36];      /* H*(k), 6 x nk column-major */
    cg_val aux[9];     /* a hinge's rotation its velocity term needs again (universal: R2; planar: R) */
    cg_val V[6], a[6], b[6]; /* velocity, Coriolis acceleration, bias force (with -f_ext) */
    cg_val alpha[6], f[6];   /* acceleration (with -g at the base) and force (Newton-Euler) */
    cg_val R[13];      /* composite inertia (004 Eq 20), 13 numbers, body frame */
    cg_val P[36], z[6];/* articulated inertia and residual force (004 Eq 33, 58) */
    cg_val U[36], Dinv[36], eps[6]; /* P H*, D^-1 (nk x nk), tau - H z (004 Eq 58c) */
    /* A node of dimension 6 + nf (node_engine.h): the blocks its nf own coordinates (a flexible
     * body's modes, at speeds vf..vf+nf-1) add to the quantities above, and the map Y of a node
     * riding on a node of its flexible parent, phi*(p, k) = [Xup, Y] (001 Eq 14; ny = the parent's
     * nf, 0 on a frame). The rigid kind has none (nf = ny = 0). They, and what the kinds keep between
     * their operations (kind_state), live in one block ext of next scalars (cg_node_flexible.c lays
     * it out), which the part split carries over whole. */
    int nf, vf, ny;
    cg_val *Y;                /* 6 x ny, column-major */
    cg_val *bf, *ff;          /* b(k), f(k) own parts (nf) */
    cg_val *Rrf, *Rff;        /* composite inertia R(k): 6 x nf column-major, nf x nf row-major */
    cg_val *Prf, *Pff;        /* articulated inertia P(k), likewise */
    cg_val *zf, *eps_f, *nu_f;/* residual z(k)'s own part, eps_f = T_f - z_f, nu_f = D_f^-1 eps_f (001 Eq 63) */
    cg_val *kind_state;
    cg_val *ext;
    size_t next;
} cg_node;

/* An array of scalars a sweep holds across bodies besides the node table (its results, M's factor). */
typedef struct cg_live {
    cg_val *v;
    size_t n;
} cg_live;
enum { CG_MAX_LIVE = 8 };

/* What one generated function reads (its inputs as scalars) and how it is being written. */
typedef struct cg_gen {
    const sd_model *m;
    cg_emit e;
    cg_node *node;     /* m->n entries */
    cg_val *q, *u, *w; /* nq, nv, nv: w is qdd (inverse dynamics) or tau (forward dynamics) */
    cg_val *f_ext;     /* 6 n */
    const char *singular_return; /* the statement a failed pivot test emits */
    int out_of_memory;           /* set by a step that could not allocate: the file is abandoned */
    /* A long function is written in parts (codegen.c): at a checkpoint past part_limit statements,
     * every temporary still held (node table, live arrays) is stored into the workspace w and the
     * next part begins, so that the C compiler's register allocation, which grows faster than the
     * code, works on parts of bounded size. */
    cg_live live[CG_MAX_LIVE];
    int nlive;
    const char *fn_name; /* NAME_algorithm, the parts' prefix */
    int part, nslot;
    long part_limit;
} cg_gen;

/* Between two bodies of a sweep (no scalar held but the node table's and the live arrays'): end
 * the part when it is long enough (codegen.c). */
void cg_checkpoint(cg_gen *g);
static inline void cg_live_push(cg_gen *g, cg_val *v, size_t n) { g->live[g->nlive++] = (cg_live){v, n}; }
static inline void cg_live_pop(cg_gen *g, int count) { g->nlive -= count; }

/* The operations a node kind emits for the sweeps (node_kinds.h's, on the generator's scalars). */
typedef struct cg_kind_ops {
    /* Xup(k), H*(k) at q (the motion scatter's placements). */
    void (*placement)(cg_gen *g, int k);
    /* V(k), a(k), b(k) from the parent's V (the motion scatter's velocities; 001 Eq 26-27, 38). */
    void (*velocities)(cg_gen *g, int k);
    /* f = M(k) alpha + b(k): the node's own force (node_kinds.h sd_node_own_force). */
    void (*own_force)(cg_gen *g, int k, const cg_val alpha[6], cg_val f[6]);
    /* M(k) as 13 numbers (composite bodies start) and as a symmetric 6x6 (articulated start). */
    void (*composite_start)(cg_gen *g, int k, cg_val R[13]);
    void (*articulated_start)(cg_gen *g, int k, cg_val P[36]);
    /* tau_passive of the hinge's speeds (joint_dynamics.c), nk entries. */
    void (*passive)(cg_gen *g, int k, cg_val *out);
    /* A node's own coordinates (NULL for a kind without them; node_kinds.h "articulated bodies"):
     * eliminate them from P(k) before its hinge's step, P <- P_R (001 Eq 62); their residual in the
     * gather, eps_f = T_f - z_f, z += g eps_f, nu_f = D_f^-1 eps_f (T: the speeds' forces, 001 Eq 63);
     * and their accelerations in the scatter, x[vf + i] = nu_f(i) - g*(i) alpha (001 Eq 63). */
    void (*eliminate)(cg_gen *g, int k);
    void (*own_residual)(cg_gen *g, int k, const cg_val *T);
    void (*own_scatter)(cg_gen *g, int k, const cg_val alpha[6], cg_val *x);
} cg_kind_ops;

/* The kind of node k's operations; NULL when the kind has no generated code (an aggregate: only
 * src/embed's node models have one). */
const cg_kind_ops *cg_kind_of(const sd_model *m, int k);
extern const cg_kind_ops cg_rigid_kind;
extern const cg_kind_ops cg_flexible_kind;

/* ---- shared by the kinds (cg_node_rigid.c: the hinge; cg_node_flexible.c: node frames) ---- */

/* Xup(k), H*(k) and, for a node riding on a node of its flexible parent, Y(k) (every kind's placement). */
void cg_hinge_placement(cg_gen *g, int k);
/* V(k) = phi*(p, k) V_m(p) + H* u and a(k) (001 Eq 26-27), with the node frame's terms on a node. */
void cg_hinge_velocities(cg_gen *g, int k);
/* tau_passive of the hinge's speeds (joint_dynamics.c), nk entries (every kind's passive). */
void cg_hinge_passive(cg_gen *g, int k, cg_val *out);
/* The scalars node k's ext block needs (by its nf, ny), and the block laid out: nf, vf, ny and the
 * pointers of cg_node set (cg_node_flexible.c). */
size_t cg_node_ext_size(const sd_model *m, int k);
void cg_node_ext_layout(const sd_model *m, int k, cg_node *nd, cg_val *ext);
/* The node frame of a child c on node t of its flexible parent (cg_node_flexible.c): Xup(c) = pose(N)
 * node_placement XJ, Y(c) = X(c <- N) S_t; and the node frame's share of V(c) and a(c) (node_engine.h). */
void cg_attached_placement(cg_gen *g, int c, const cg_xform *XJ);
void cg_attached_velocity(cg_gen *g, int c, cg_val V[6], cg_val a[6]);

/* ---- phi(p, c) beyond the rigid 6 (cg_node_flexible.c), for a child riding on a node: nothing
 * when node c has no Y ---- */
/* out += Y(c) x_p, x_p the parent's own accelerations (001 Eq 26). */
void cg_child_motion_modes(cg_gen *g, int c, const cg_val *x_parent, cg_val out[6]);
/* acc_p += Y(c)^T f (nf of the parent; 001 Eq 38). */
void cg_force_to_parent_modes(cg_gen *g, int c, const cg_val f[6], cg_val *acc_p);
/* The blocks of phi(p, c) I phi*(p, c) touching p's own coordinates, for the child's 6x6 I (sym6)
 * or 13-number rigid inertia ri (one of them): Irf(p) col r += X^T (I Y_r), Iff(p)(s, r) += Y_s . I Y_r
 * (001 Eq 47, 62). */
void cg_inertia_to_parent_modes(cg_gen *g, int c, const cg_val *sym6, const cg_val *ri, cg_val *Irf_p, cg_val *Iff_p);

/* The inverse of a symmetric positive definite n x n A (row-major), n <= nmax, into Ainv, by the
 * factorisation A = L^T L from the last row up (Featherstone's LTL: on a tree's M, parent-first, its
 * factor has no fill, and the folding of cg_emit.h finds the zeros without the tree's parent array);
 * each pivot is tested and a non-positive one emits g->singular_return. may_split: checkpoints
 * between rows (when the caller holds no other scalar). */
void cg_spd_inverse(cg_gen *g, const cg_val *A, int n, cg_val *Ainv, int may_split);

#endif /* SOADYN_CG_GEN_H */
