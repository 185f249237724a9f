/*
 * src/loops/rank_rule.h — the one rank rule of the closed-loop layers: how many of a loop's rows
 * are independent, decided on the singular values of the rows themselves (G's rows over the tree
 * speeds, or an aggregate's Y, 002 Eq 19), the same way by the tree-augmented layer (src/loops:
 * which rows' multipliers the solve keeps, sd_constraint_rank) and the embedded layer (src/embed:
 * how many of an aggregate's speeds are dependent). Both layers judge the same matrix, group by
 * group (a group: constraints whose loops share a body, i.e. one embedding aggregate), so that
 * they find the same rank and the same mobility.
 *
 * Rule: sigma_i counts when sigma_i > SD_RANK_RTOL sigma_1 and sigma_i > SD_RANK_ABS. Rows are
 * unit moments and forces, entries 1 or lever arms in metres: SD_RANK_ABS is round-off of a row
 * whose both sides the tree cannot move. SD_RANK_RTOL = 1e-5 is the level the tree-augmented
 * layer has always judged at (eigenvalues of G G* or G M^-1 G* at 1e-10 of the largest): a loop
 * that is planar only to 1e-7 rad (a file's axes rounded) counts as planar, as its author meant,
 * instead of a stiff spatial linkage with a near-singular split.
 *
 * Only constructions, reports and rank-deficient solves call it (SVD by LAPACK dgesvd on the
 * workspace allocated here); a full-rank solve keeps its plain Cholesky.
 */
#ifndef SOADYN_RANK_RULE_H
#define SOADYN_RANK_RULE_H

#define SD_RANK_RTOL 1e-5
#define SD_RANK_ABS 1e-12
/* Dropped singular values at most this (relative) are redundancy to round-off (a planar loop closed
 * by a spatial joint): solving an independent subset of the rows then gives the kept combinations'
 * answer, and the layers skip the projection onto them. Above it (up to SD_RANK_RTOL) the rows are
 * only nearly redundant, and both layers solve the kept combinations themselves. */
#define SD_RANK_EXACT 1e-12

typedef struct sd_row_space {
    int max_rows, max_cols, lwork;
    double *A;     /* max_rows x max_cols, column-major: the rows to judge, filled by the caller */
    double *U;     /* max_rows x max_rows: the left singular vectors, column-major */
    double *sigma; /* max_rows: the singular values, descending */
    double *work;  /* LAPACK dgesvd's */
} sd_row_space;

/* Allocate for up to max_rows x max_cols; 0 when out of memory. */
int sd_row_space_init(sd_row_space *s, int max_rows, int max_cols);
void sd_row_space_free(sd_row_space *s);

/* The rank of singular values sigma (descending, n of them) by the rule. */
int sd_rank_of_singular_values(const double *sigma, int n);

/* The SVD of the nr x nc rows in s->A (column-major, leading dimension nr; destroyed): returns
 * their rank by the rule (-1 when LAPACK fails); s->U's first `rank` columns (leading dimension
 * nr) are an orthonormal basis of the kept row combinations, s->sigma the singular values. */
int sd_row_space_factor(sd_row_space *s, int nr, int nc);

/* The largest singular value dropped, relative to the largest (0 when none is dropped) after
 * sd_row_space_factor returned rank: how close to exact the redundancy is. */
double sd_row_space_dropped(const sd_row_space *s, int nr, int nc, int rank);

#endif /* SOADYN_RANK_RULE_H */
