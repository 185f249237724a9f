/*
 * src/embed/embed_internal.h — the layout of an embedding (soadyn/embed.h) and the functions its
 * files share. Layers: embed_model.c builds it (grouping, node tree, split), embed_closure.c closes
 * the loops (Newton) and evaluates the aggregates' constraint rows Y and rates, embed_nodes.c gives
 * each node its SKO pieces, embed_node_model.c hands the engine the node model whose sweeps the
 * forward dynamics runs, embed_projected.c projects the tree's M and ID; src/embed runs no sweeps.
 *
 * Glossary (000 Sec 5, 002 Sec 3; node s of dimension dim = 6 nb, nb its bodies):
 *   V_s        stacked spatial velocities of the node's bodies (each in its own body frame), bodies
 *              in ascending order; a rigid node is one body: V_s = V(k)
 *   W(s)       dim x 6: the motion of the node's bodies caused by a unit motion of the parent body
 *              (phi*_S E*_S of 000 Eq 52): V_s = W(s) V(parent_body) + Hbar*(s) u_s; for a rigid
 *              node W = the 6x6 of Xup (sd_motion_to_child); every node hangs on ONE parent body
 *   Hbar*(s)   dim x ni: phi*_S H*_S X_S (000 Eq 56), the node's hinge map on its independent
 *              speeds u_s; for a rigid node H*(k)
 *   X_S        nt x ni: tree speeds of the aggregate from its independent ones (002 Eq 20): the
 *              independent rows are the identity, the dependent rows -Y1^+ Y2
 *   a_s        dim: phi*_S (a_S + H*_S Xdot_S u_s) (000 Eq 59-60), the node's Coriolis acceleration
 *   M_s, b_s   block-diagonal inertias and stacked gyroscopic forces minus f_ext
 *   A node's children hang on one body j of it: what a child hands up is a 6x6 (and a 6-vector) at j,
 *   W(c)^T P+(c) W(c) (000 Eq 62's last line), added to the node's block (j, j).
 */
#ifndef SOADYN_EMBED_INTERNAL_H
#define SOADYN_EMBED_INTERNAL_H

#include <soadyn/embed.h>

#include "algorithms/node_engine.h"
#include "internal.h"
#include "loops/loops_internal.h"

enum { SD_EMBED_RIGID = 0, SD_EMBED_AGGREGATE = 1 };

/* One node of the embedded tree. Nodes are numbered by their first body, so parent_node < s. */
typedef struct sd_embed_node {
    int kind;          /* SD_EMBED_RIGID or SD_EMBED_AGGREGATE */
    int aggregate;     /* index in sd_embedding.aggs, -1 for a rigid node */
    int parent_node;   /* -1: the inertial frame */
    int parent_body;   /* the body of parent_node it hangs on, -1: the inertial frame */
    int nb, body0;     /* bodies: node_bodies[body0 .. body0+nb-1], ascending */
    int dim;           /* 6 nb */
    int ni, v0;        /* its speeds in the embedded u: v0 .. v0+ni-1 */
    int nt, t0;        /* its tree speeds: tree_speeds[t0 .. t0+nt-1], ascending (rigid: the hinge's) */
} sd_embed_node;

/* One aggregate: its constraints and the split of its tree speeds. */
typedef struct sd_embed_aggregate {
    int node;
    int ncons, cons0;  /* constraints: agg_cons[cons0 .. cons0+ncons-1] (loops.h numbering) */
    int nrows;         /* their rows stacked (Y has nrows rows, some may be redundant) */
    int rank;          /* rank of Y at the split's configuration = nt - ni (the rows kept) */
    int project_rows;  /* rows redundant only to the rank rule's tolerance there (a dropped singular
                          value above SD_RANK_EXACT, rank_rule.h): Y is replaced by its kept
                          combinations at every evaluation (embed_closure.c) */
    int *dep, *ind;    /* rank and ni positions in the node's tree speeds (0 .. nt-1): Y1's and Y2's
                          columns, ascending (arrays owned by the embedding) */
    char *name;        /* for messages: the constraints' names joined by '+' */
} sd_embed_aggregate;

struct sd_embedding {
    const sd_model *model;
    int nv;                    /* embedded speeds */
    int *speed_tree;           /* nv: the tree speed of each embedded speed */
    int *tree_speed_embedded;  /* model nv: the embedded speed of each tree speed, -1 when dependent */
    int nnodes;
    sd_embed_node *nodes;
    int *node_of_body;         /* per body: its node */
    int *node_bodies;          /* model n: bodies grouped by node */
    int *tree_speeds;          /* model nv: tree speeds grouped by node */
    int naggs;
    sd_embed_aggregate *aggs;
    int *agg_cons;             /* constraints grouped by aggregate */
    unsigned char *embedded;   /* per constraint: 1 embedded, 0 tree-augmented */
    int n_ta, n_ta_rows;       /* tree-augmented constraints and their rows */
    double *q_start;           /* nq: the configuration the first evaluation starts from (closed) */
    /* sizes of the workspace (embed_dynamics.c allocates by them) */
    int vec_total, mat_total;  /* sums of dim and dim^2 over nodes */
    int hbar_total;            /* sum of dim * ni */
    int x_total;               /* sum over aggregates of nt * ni */
    int max_dim, max_ni, max_nt, max_rows;
    int *vec_off, *mat_off, *hbar_off, *x_off; /* per node (x_off -1 for a rigid node) */
    sd_model *node_model;      /* the embedded tree for the engine's sweeps (embed_node_model.c) */
};

/* The workspace of an embedding (embed_data.c allocates it, one part per file that owns it). */
struct sd_embedded_data {
    const sd_embedding *e;
    sd_data *tree;             /* the tree workspace (placements, V, a, b, alpha, f per body) */
    double *q;                 /* nq: the closed configuration of the last evaluation */
    int have_q;                /* q holds a closed configuration (the next Newton's warm start) */
    double *u_tree;            /* model nv: N u of the last evaluation with speeds */
    double *qdd_c;             /* model nv: Xdot_S u on the dependent speeds, 0 elsewhere */
    double *X;                 /* x_total: X_S of every aggregate (nt x ni, row-major) at q */
    double *cond;              /* per aggregate: condition number of Y1 at q */
    struct sd_embed_closure_ws *closure; /* embed_closure.c */
    struct sd_embed_nodes_ws *nodes;     /* embed_nodes.c: Hbar, a_s, b_s, passive terms */
    struct sd_embed_fd_ws *fd;           /* embed_forward_dynamics.c: N^T tau, the multipliers' scratch */
    sd_data *node_data;                  /* the node model's workspace (the engine's factors) */
    struct sd_embed_nm_ws *nm;           /* embed_node_model.c: the aggregates' M(k), b(k) scratch */
    struct sd_embed_mixed_ws *mixed;     /* embed_mixed.c: tree-augmented rows on top; NULL: none */
    struct sd_embed_pres_ws *pres;       /* embed_prescribed.c: the dense partitioned solve */
    struct sd_embed_proj_ws *proj;       /* embed_projected.c: M_e, ID and C_e through the tree's sweeps */
};

/* ---- embed_closure.c (closing the loops, the split) ---- */

struct sd_embed_closure_ws *sd_embed_closure_ws_new(const sd_embedding *e);
void sd_embed_closure_ws_free(struct sd_embed_closure_ws *w);
/* Close the embedded loops from q (warm start; NULL: ed->q if have_q, else e->q_start) into ed->q,
 * leave the tree placements in ed->tree current at it (SD_CURRENT_PLACEMENTS; the loop frame weights
 * with tree-augmented rows, sd_embed_loop_frames),
 * and compute every aggregate's X_S (ed->X) and cond(Y1) (ed->cond). SD_E_SINGULAR names the loop
 * that cannot close, or whose Y1 is ill-conditioned (cond > 1e10: the split must change; the
 * message names the split the pivoting would choose there). */
sd_status sd_embed_prepare(const sd_embedding *e, sd_embedded_data *ed, const double *q);
/* The loops layer's world placements and constraint frame weights Ew at ed->q (after
 * sd_embed_prepare): what the tree-augmented rows (embed_mixed.c), the embedded constraints' forces
 * on bodies and the readers of constraint frames (sd_constraint_force) use. sd_embed_prepare leaves
 * them current only when the embedding has tree-augmented rows: the other evaluations ask for them
 * when they compute forces. */
sd_status sd_embed_loop_frames(const sd_embedding *e, sd_embedded_data *ed);
/* After sd_embed_prepare: u_tree = N u into ed->u_tree, the tree velocities (V, a, b without f_ext)
 * current in ed->tree at (ed->q, ed->u_tree), and ed->qdd_c = Xdot_S u: the dependent accelerations
 * that keep Y qdd + Ydot u = 0 when the independent ones and every speed outside are 0 (000 Eq 58,
 * from the rows' rates sd_loops_row_rates). u NULL: zero speeds. */
sd_status sd_embed_velocities(const sd_embedding *e, sd_embedded_data *ed, const double *u);
/* lambda_rows (aggregate a's nrows multipliers, minimum norm) from r_dep (its rank entries: the
 * generalized forces the aggregate's dependent tree speeds leave unbalanced, in dep order):
 * Y1^T lambda = r_dep (000 Eq 68-69 read as 000 Eq 43's G* lambda). After sd_embed_prepare. */
void sd_embed_multipliers(const sd_embedding *e, sd_embedded_data *ed, int a, const double *r_dep,
                          double *lambda_rows);

/* ---- embed_nodes.c (each node's SKO pieces: the one place that knows a node's kind) ---- */

struct sd_embed_nodes_ws {
    double *Hbar;    /* hbar_total: Hbar*(s), dim x ni row-major, at hbar_off[s] */
    double *a, *b;   /* vec_total: a_s (000 Eq 59-60) and b_s (gyroscopic force minus f_ext) */
    int *jb_off;     /* per node: offset of Jbar(s) (ni x ni) */
    double *Jbar;    /* X_S^T diag(armature) X_S per node (the hinge's armature on a rigid node) */
    double *tau_j;   /* embedded nv: N^T (tau_passive - J qdd_c), the joint-level generalized force */
    int *slot;       /* per body: offset of its 6-vector in the vec_total arrays (its node's
                        vec_off + 6 * its place among the node's bodies) */
    int *toff;       /* per body: its first tree speed among its node's (0 .. nt-1): its hinge's,
                        then a flexible body's modal speeds */
    double *passive; /* model nv: tau_passive - J qdd_c on the tree speeds (scratch of tau_j) */
};
struct sd_embed_nodes_ws *sd_embed_nodes_ws_new(const sd_embedding *e);
void sd_embed_nodes_ws_free(struct sd_embed_nodes_ws *w);
/* Hbar of every node at ed->q (after sd_embed_prepare); with_velocity (after sd_embed_velocities):
 * also a_s, b_s (f_ext may be NULL) and tau_j; Jbar always. Without the dim x 6 map W(s): the
 * node model (embed_node_model.c) carries motions and forces through a node body by body with the
 * tree's Xup. */
void sd_embed_node_pieces_without_w(const sd_embedding *e, sd_embedded_data *ed, int with_velocity,
                                    const double *f_ext);

/* ---- embed_node_model.c (the embedded tree as the engine's node model: aggregate nodes) ---- */

/* The node model of an embedding (NULL: out of memory); its workspace is sd_data_new's. */
sd_model *sd_embed_node_model_new(const sd_embedding *e);
void sd_embed_node_model_free(sd_model *nm);
struct sd_embed_nm_ws {
    double *T;           /* 6 x max_ni: a member's Hbar*_j */
    double *C, *K, *Fb;  /* per member (max_nb): its 6x6, 6 x ni and 6 carried up the aggregate */
    double *Kr;          /* 6 x max_ni: the rigid-modal block at A (more than 8 speeds) */
    sd_transform *pose;  /* per tree body: a member's pose in its aggregate's frame */
    double *tau;         /* embedded nv: the node model's generalized forces */
    double *gm;          /* the most modes of a body: a flexible member's modal rows (M^fr h + M^ff E) */
    struct sd_aggregate_members agg; /* the aggregates' members for the aggregate kind (node_aggregate.c) */
    int *agg_ints[7];    /* its index arrays, owned here */
    double *agg_Pm, *agg_K, *agg_scratch;
};
struct sd_embed_nm_ws *sd_embed_nm_ws_new(const sd_embedding *e);
void sd_embed_nm_ws_free(struct sd_embed_nm_ws *w);
/* The aggregates' members handed to the node model's workspace (node_engine.h struct
 * sd_aggregate_members), once the tree and node workspaces of ed exist; 0: out of memory. */
int sd_embed_aggregate_members_attach(const sd_embedding *e, sd_embedded_data *ed);
/* The node model's motion in ed->node_data from the tree's (ed->tree) and the node pieces (after
 * sd_embed_node_pieces; with_bias: after sd_embed_velocities, with its velocity terms and f_ext):
 * Xup, H*, a, b per node, the aggregates' M(k), b(k), their children's Y and node poses. */
void sd_embed_node_motion(const sd_embedding *e, sd_embedded_data *ed, int with_bias, const double *f_ext);

/* ---- embed_forward_dynamics.c (the engine's sweeps on the node model, 000 Eq 62-69) ---- */

struct sd_embed_fd_ws *sd_embed_fd_ws_new(const sd_embedding *e);
void sd_embed_fd_ws_free(struct sd_embed_fd_ws *w);
/* x = M_e^-1 rhs (embedded nv each) with the factors of the last Riccati gather (no bias terms):
 * one residual gather and scatter (004 Eq 51). For embed_mixed.c. */
void sd_embed_solve(const sd_embedding *e, sd_embedded_data *ed, const double *rhs, double *x);

/* ---- embed_mixed.c (tree-augmented constraints on top of the embedded system, 000 Eq 45-46) ---- */

/* out (tree nv) = N x (x: embedded nv) and out (embedded nv) = N^T g (g: tree nv), N = block-diag(I,
 * X_S) at the last sd_embed_prepare (002 Eq 20). */
void sd_embed_apply_N(const sd_embedding *e, const sd_embedded_data *ed, const double *x, double *out);
void sd_embed_apply_NT(const sd_embedding *e, const sd_embedded_data *ed, const double *g, double *out);

/* NULL when the embedding has no tree-augmented constraint. */
struct sd_embed_mixed_ws *sd_embed_mixed_ws_new(const sd_embedding *e);
void sd_embed_mixed_ws_free(struct sd_embed_mixed_ws *w);
/* After the embedded forward dynamics has left free accelerations qdd (embedded nv) and its
 * factors: qdd += M_e^-1 G_e* lambda with G_e = G_ta N and lambda (the tree-augmented rows, minimum
 * norm) making G_e qdd + (Gdot u)_ta = 0; the multipliers kept for sd_embedded_constraint_forces,
 * the bodies' forces of the correction added to the tree's f when want_forces. */
sd_status sd_embed_mixed_correct(const sd_embedding *e, sd_embedded_data *ed, double *qdd, int want_forces);

/* After Newton-Euler over nodes left tau_ID (embedded nv) in tau for the accelerations qdd: the
 * embedded inverse dynamics with the tree-augmented rows (embed.h, sd_embedded_inverse_dynamics and
 * sd_embedded_constrained_inverse_dynamics): qdd checked against the rows (SD_E_ARGUMENT naming
 * them), tau = tau_ID - G_e* lambda_ta with lambda_ta of minimum norm making tau zero on the speeds
 * not actuated (all_actuated: every speed actuated, lambda_ta = 0), SD_E_SINGULAR naming a joint
 * when that is impossible; lambda_ta (may be NULL) one per tree-augmented row. */
sd_status sd_embed_mixed_inverse(const sd_embedding *e, sd_embedded_data *ed, const double *qdd,
                                 const unsigned char *actuated, int all_actuated, double *tau, double *lambda_ta);

/* The tree-augmented rows' G_e (m x embedded nv, row-major) and rates gamma (m) at the embedded
 * accelerations qdd (after sd_embed_velocities); returns m, 0 without tree-augmented rows. */
int sd_embed_mixed_rates(const sd_embedding *e, sd_embedded_data *ed, const double *qdd, const double **Ge,
                         const double **gamma);

/* ---- embed_projected.c (M, ID and bias forces: the tree's sweeps projected by N) ---- */

struct sd_embed_proj_ws *sd_embed_proj_ws_new(const sd_embedding *e);
void sd_embed_proj_ws_free(struct sd_embed_proj_ws *w);
/* tau (embedded nv) = N^T tau_tree(q, N u, N qdd + Xdot_S u, f_ext): the embedded inverse dynamics
 * (qdd NULL: the bias forces), after the caller's argument checks. */
sd_status sd_embed_projected_inverse_dynamics(const sd_embedding *e, sd_embedded_data *ed, const double *q,
                                              const double *u, const double *qdd, const double *f_ext, double *tau);
/* M_e = N^T M_tree N (embedded nv x nv, row-major), after the caller's argument checks. */
sd_status sd_embed_projected_mass_matrix(const sd_embedding *e, sd_embedded_data *ed, const double *q, double *M);

/* ---- embed_prescribed.c (prescribed speeds, sd_embedded_fd_options.prescribed) ---- */

struct sd_embed_pres_ws *sd_embed_pres_ws_new(const sd_embedding *e);
void sd_embed_pres_ws_free(struct sd_embed_pres_ws *w);
/* sd_embedded_forward_dynamics with options->prescribed (embed.h), after its argument checks. */
sd_status sd_embed_prescribed_forward_dynamics(const sd_embedding *e, sd_embedded_data *ed, const double *q,
                                               const double *u, const double *tau, const double *f_ext, double *qdd,
                                               double *qdd_tree, const sd_embedded_fd_options *options);

#endif /* SOADYN_EMBED_INTERNAL_H */
