/*
 * src/embed/embed_closure.h — what embed_model.c (the split at construction) and embed_closure.c
 * (every evaluation) share: an aggregate's constraint rows Y on its tree speeds and its position
 * residuals, evaluated locally (bodies placed in the aggregate's parent-body frame, so the cost is
 * the aggregate's size, not the model's), and the Newton closure of every aggregate.
 *
 * Both are the loops layer's definitions (constraint_kinematics.c: sd_constraint_residuals and the
 * rows of G) restricted to the aggregate: a constraint's rows are the relative motion of F_B with
 * respect to F_A, and its residuals relative placements, so both are unchanged when every body is
 * placed relative to the aggregate's parent body instead of the world, and the speeds above that
 * body have zero entries (embed_design.md, "SPEEDS").
 */
#ifndef SOADYN_EMBED_CLOSURE_H
#define SOADYN_EMBED_CLOSURE_H

#include "embed_internal.h"

struct sd_embed_closure_ws {
    int *local;          /* per body: its place among its node's bodies */
    sd_transform *T;     /* max bodies per node: placements in the aggregate's parent-body frame */
    double *Vl, *Al;     /* 6 per node body: velocities and accelerations relative to the parent body */
    double *Y;           /* max_rows x max_nt, column-major: the rows on the tree speeds */
    double *r, *rhs;     /* max_rows: position residuals, a right-hand side */
    double *qr, *qtau;   /* per aggregate at qr_off / tau_off: Y1's Householder QR (nrows x rank) */
    int *qr_off, *tau_off;
    double *dstep;       /* max_nt: a step on the aggregate's tree speeds */
    double *x;           /* max_nt: a solution of Y1 x = b, or of Y1^T */
    double *qsave;       /* nq: the coordinates before a Newton step (restored when it made things worse) */
    double *work;        /* LAPACK dgeqrf / dgeqp3 work */
    int lwork;
    int *jpvt;           /* max_nt: pivots of the cold-path split report */
    double *St;          /* 6 x the most modes of a body: S_t of a flexible member's node (001 Eq 12) */
    sd_row_space rows;   /* the rank rule's SVD of Y (max_rows x max_nt, rank_rule.h) */
    double residual;     /* the largest closure residual left by the last close */
};

/* Bodies of aggregate a placed in its parent body's frame (w->T) from the tree's Xup. */
void sd_embed_aggregate_frames(const sd_embedding *e, struct sd_embed_closure_ws *w, const sd_data *tree, int a);
/* Y (nrows x nt, column-major, leading dimension nrows) and the position residuals r (may be NULL)
 * of aggregate a at w->T and the tree's H* (S); q for the couplings' residuals. */
void sd_embed_aggregate_rows(const sd_embedding *e, const struct sd_embed_closure_ws *w, const sd_data *tree,
                             const double *q, int a, double *Y, double *r);
/* Y <- U_r U_r^T Y with U_r Y's leading left singular vectors, r the split's rank: the rows' kept
 * combinations by the rank rule (rank_rule.h). An aggregate whose rows are (nearly) redundant so
 * keeps exactly the combinations the tree-augmented solve keeps, and Y1's least squares (X_S, the
 * dependent accelerations, the multipliers) solve them exactly. Returns the rule's rank of Y here
 * (-1 when LAPACK fails). */
int sd_embed_keep_row_combinations(const sd_embedding *e, struct sd_embed_closure_ws *w, int a, double *Y);
/* Close every aggregate from q (in place: only dependent directions move), with the tree's Xup and S
 * of every body current at q on entry and left current at the closed q; X (x_total) and cond
 * (naggs) receive X_S and cond(Y1). SD_E_SINGULAR recorded on `tree` naming the loop. */
sd_status sd_embed_close_aggregates(const sd_embedding *e, struct sd_embed_closure_ws *w, sd_data *tree, double *q,
                                    double *X, double *cond);

#endif /* SOADYN_EMBED_CLOSURE_H */
