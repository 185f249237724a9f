/*
 * src/loops/loops_internal.h — the loops part of sd_model (constraints resolved to bodies, the task
 * frames through which each constraint row acts, and the body lists the restricted recursions
 * visit) and of sd_data (the closed-loop workspace).
 *
 * Glossary (000 Sec 4, 004 Sec 6.2), beside internal.h's:
 *   n_c          rows of all constraints; G (n_c x nv) maps u to the rows
 *   task frame   f: a body k_f and a 6 x r_c matrix Ew_f (body k_f's frame, one column per row of
 *                its constraint c) such that G u = sum_f Ew_f^T V(k_f); equivalently Ew_f lambda is
 *                the spatial force (about k_f's origin) the constraint applies to k_f, and
 *                G* lambda = sum_f J(k_f)* Ew_f lambda
 *   F(k)         6 x n_c: the rows' forces gathered to body k, F(k) = sum_j psi(k, j) F(j) + the Ew_f
 *                of the frames on k, so that G M^-1 G* = sum_k F(k)^T H*(k) D^-1(k) H(k) F(k)
 *                (004 Eq 59-60: Omega = psi* H* D^-1 H psi), over the ancestors of frame bodies
 *                ("gather bodies") only
 *   kin bodies   the ancestors of the frame bodies: only they need world placements (the same
 *                bodies as the gather bodies, which the compliance gather places in world axes)
 */
#ifndef SOADYN_LOOPS_INTERNAL_H
#define SOADYN_LOOPS_INTERNAL_H

#include <soadyn/loops.h>

#include "internal.h"
#include "rank_rule.h"

typedef struct sd_loop_constraint {
    char *name;
    sd_constraint_type type;
    int nrows, row;        /* rows and first row in G */
    int nsel, sel[6];      /* cut kinds: the components of Delta (0-2 angular, 3-5 linear) kept */
    int body_a, body_b;    /* -1: the inertial frame; COUPLING: the bodies of the two hinges */
    sd_transform frame_a, frame_b; /* in body coordinates, z turned onto the axis */
    double length;         /* DISTANCE */
    double ratio, offset;  /* COUPLING */
    int embed;             /* the model's choice: 1 embedded (soadyn/embed.h), 0 tree-augmented */
    char *source_file;
    int source_line;
} sd_loop_constraint;

typedef struct sd_loop_frame {
    int body, constraint;
    int role;              /* which side: see sd_loops_frame_weights (constraint_kinematics.c) */
    int ew;                /* offset of Ew_f (6 x r_c, column-major) in the workspace */
} sd_loop_frame;

typedef struct sd_loops_model {
    int ncons, nrows;
    sd_loop_constraint *cons;
    int nframes;
    sd_loop_frame *frames;
    int nkin, *kin_bodies; /* ascending (parents first) */
    int *kin_slot;         /* per body: slot in the world-placement array, -1 if not a kin body */
    int nfb, *fb_bodies;   /* gather bodies: the ancestors of every frame body, ascending */
    int *fb_slot;          /* per body: slot of F(k), -1 if not a gather body */
    int *fb_lo, *fb_hi;    /* per slot: the rows [lo, hi) that reach it (F's other columns are zero) */
    int *fb_root;          /* per slot: the kin slot of its root, the point its gather's moments are about */
    int ew_total;          /* doubles of all Ew_f */
    /* rank groups (rank_rule.h): constraints whose loops share a body, as embedding would merge
     * them into one aggregate; group g's rows are group_rows[group_row0[g] .. group_row0[g + 1]) */
    int ngroups, *group_row0, *group_rows;
    int max_group_rows;
} sd_loops_model;

typedef struct sd_loops_data {
    sd_transform *Xw;      /* world placements of the kin bodies (by kin slot) */
    sd_transform *Xf;      /* 2 per constraint: F_A and F_B in world (cut and distance constraints) */
    double *Ew;            /* see the glossary */
    double *Eww;           /* Ew_f in world axes, moments about the root of the frame's body (the
                              compliance gather's frame, closed_dynamics.c) */
    double *F;             /* 6 n_c per gather slot: F(k), column-major, world axes, moments about the
                              slot's root (fb_root) */
    double *HF;            /* nv x n_c: row v_index[k] + s is H(k) F(k)'s row s, for the gather bodies */
    double *DHF;           /* 6 n_c: D^-1(k) H(k) F(k) of a gather body of several speeds */
    int gather_nc;         /* the last compliance gather's columns (the correction sweep's) */
    const int *gather_lo, *gather_hi; /* and their ranges per gather slot */
    double *Sc;            /* n_c x n_c: G M^-1 G* */
    double *Sf;            /* n_c x n_c: its (pivoted) Cholesky factor */
    double *Kf;            /* n_c x n_c: L^T L of a rank-deficient factor */
    double *eig, *tmp;     /* n_c each: permuted right-hand side, (L^T L)^-2 L^T c */
    double *work;          /* 4 n_c + 1: LAPACK dpstrf's and dgeqp3's work */
    int *piv;              /* n_c: dpstrf's or dgeqp3's pivots (1-based) */
    double *gamma, *lambda, *rhs; /* n_c each */
    double *alpha;         /* 6 per body: the correction sweep's alpha */
    double *dense;         /* n_c x nv: G for assembly and inverse dynamics */
    double *vq, *vv, *vv2; /* nq, nv, nv: scratch of the assembly and the inverse dynamics */
    /* the independent row subset of the fast path (closed_dynamics.c): after the last
     * rank-deficient solve, when its dropped rows were redundant to round-off, the rows a pivoted
     * QR picks to carry the kept combinations, ascending; nsub = 0: none recorded */
    int nsub, *sub;        /* n_c */
    int *sub_col;          /* n_c: per row, its column in the subset's system, -1 if not kept */
    int *fb_slo, *fb_shi;  /* per gather slot: the subset columns [slo, shi) that reach it */
    double *qdd_save, *alpha_save; /* nv, 6 per body: step 1's results while the fast path is tried */
    sd_row_space rows;     /* the rank rule's SVD of one group's rows of G (max_group_rows x nv) */
    /* the engine path (closed_dynamics.c): models whose articulated factors the compliance gather
     * cannot read (flexible nodes), and prescribed hinges */
    const unsigned char *held; /* per body, during one call: prescribed hinges (their columns of G
                                  are not the system's); NULL: none */
    double *fx;            /* 6 per body: f_ext plus the constraint forces (step 3 as a second sweep) */
    double *tau_work;      /* nv: tau plus the constraint forces' modal part, the prescribed outputs */
    double *Mff;           /* flexible models: nv x nv, M over the free speeds, then its Cholesky factor */
    double *Z;             /* flexible models: n_c x nv, row c = M_ff^-1 G_f(c)^T over the free speeds */
    int *free_speed;       /* flexible models: nv, the speeds not held */
    int nfree;
    double *basis;         /* n_c x n_c, column-major: the kept row combinations of every group */
    int rank;              /* of the last solve, -1 before */
    int lambda_valid;      /* lambda holds the multipliers of the last solve */
} sd_loops_data;

/* A motion vector of a body with world placement (R, p) in world axes about the point o (r = p - o):
 * w = R w_k, v = R v_k + r x w. */
static inline void sd_loops_motion_to_world(const double R[9], const double r[3], const double m_k[6], double m_w[6])
{
    double rxw[3];
    sd_m3_mul_v(R, m_k, m_w);
    sd_m3_mul_v(R, m_k + 3, m_w + 3);
    sd_v3_cross(r, m_w, rxw);
    for (int i = 0; i < 3; ++i) m_w[3 + i] += rxw[i];
}

/* A force vector the same way: f = R f_k, n = R n_k + r x f. */
static inline void sd_loops_force_to_world(const double R[9], const double r[3], const double f_k[6], double f_w[6])
{
    double rxf[3];
    sd_m3_mul_v(R, f_k, f_w);
    sd_m3_mul_v(R, f_k + 3, f_w + 3);
    sd_v3_cross(r, f_w + 3, rxf);
    for (int i = 0; i < 3; ++i) f_w[i] += rxf[i];
}

/* The top of constraint c's loop (constraint_model.c): the bodies strictly below it on the paths
 * from its two bodies are the loop's (-1: the inertial frame). */
int sd_loops_loop_top(const sd_model *m, const sd_loop_constraint *c);

/* The rank of G by the rule of rank_rule.h, group by group, from w->dense (the current G); the
 * kept row combinations into w->basis (n_c x rank, column-major) when basis is nonzero, the largest
 * dropped singular value relative to its group's largest into *dropped (may be NULL). -1 when
 * LAPACK fails. (constraint_solvers.c) */
int sd_loops_rank_of_rows(const sd_model *m, sd_loops_data *w, double *dropped);

/* Kinematics of the constraints at the placements and velocities in d (constraint_kinematics.c). */
/* The world placements of the kin bodies and of every F_A, F_B (Xw, Xf). */
void sd_loops_world_placements(const sd_model *m, sd_data *d);
/* Fill every Ew_f (and Eww) at the current placements; SD_E_SINGULAR names a DISTANCE whose frames meet. */
sd_status sd_loops_frame_weights(const sd_model *m, sd_data *d);
/* World placement of F_A (side 0) or F_B (side 1) of constraint c, as the last world placements left it. */
void sd_loops_frame_world(const sd_model *m, const sd_data *d, int c, int side, sd_transform *out);
/* The position residuals of one cut or distance constraint (its nrows, sd_constraint_residuals'
 * definitions) from the placements of F_A and F_B in any one frame (they are relative). */
void sd_loops_frame_residual(const sd_loop_constraint *c, const sd_transform *XA, const sd_transform *XB, double *r);
/* Row rates ydot = G qdd + Gdot u of every constraint from body velocities d->V and the
 * accelerations `alpha` (6 per body, body frames; a uniform gravity offset a0 cancels) and the
 * accelerations qdd (couplings); the world's acceleration is a0 (world axes). */
void sd_loops_row_rates(const sd_model *m, const sd_data *d, const double *alpha, const double a0[6],
                        const double *qdd, double *ydot);
/* The constraint forces of lambda as loads of a forward-dynamics sweep: fx (6 per body) = f_ext
 * (NULL: zero) plus Ew_f lambda on each frame's body; and, for a coupling whose hinge rides on a node
 * of a flexible parent, tau (nv) += the modal part of the reaction on that parent (-Y^T F, which no
 * force on the parent's rigid part carries), so that the loads' generalized force is G* lambda. */
void sd_loops_constraint_loads(const sd_model *m, const sd_data *d, const double *lambda, const double *f_ext,
                               double *fx, double *tau);

/* The dense G (n_c x nv, row-major) from the current placements and frame weights. */
void sd_loops_dense_jacobian(const sd_model *m, const sd_data *d, double *G);

/* ---- closed_dynamics.c, shared by the solvers of constraint_solvers.c ---- */
/* Lambda_c = G M^-1 G* into Sc from the current factors (P, D, G) and frame weights; returns the
 * largest single-frame compliance (the scale the rank is judged against). */
double sd_loops_compliance(const sd_model *m, sd_data *d);
/* The same over the recorded row subset only (nsub x nsub into Sc). */
double sd_loops_compliance_subset(const sd_model *m, sd_data *d);
/* Lambda_c = G_f M_ff^-1 G_f* into Sc over the free speeds (those of hinges not held) from the
 * engine's M(q) and a dense Cholesky factorisation of M_ff (flexible models); leaves G in dense,
 * Z = M_ff^-1 G_f* by rows (zero on held speeds) and the rank's scale in *ref. */
sd_status sd_loops_compliance_dense(const sd_model *m, sd_data *d, const double *q, double *ref);
/* lambda = -Lambda_c^+ gamma (minimum norm), the rank, and the consistency check. */
sd_status sd_loops_solve_multipliers(const sd_model *m, sd_data *d, double ref);
/* x = A^+ b for a symmetric positive semi-definite n x n A (n <= n_c), pivots below
 * rel * max(largest diagonal, ref) dropped (LAPACK dpstrf); returns the rank, -1 on failure. */
int sd_loops_psd_solve(sd_data *d, const double *A, int n, const double *b, double *x, double ref, double rel);
/* x += M^-1 G* lambda with the current factors and the last compliance gather's H F (a scatter only);
 * lambda is given over that gather's columns (gather_nc). The sweep's inter-body forces are added
 * to d->f when want_forces, its accelerations to d->alpha when add_alpha; w->alpha keeps them. */
void sd_loops_correction_sweep(const sd_model *m, sd_data *d, const double *lambda, double *x, int want_forces,
                               int add_alpha);

#endif /* SOADYN_LOOPS_INTERNAL_H */
