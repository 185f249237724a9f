/*
 * src/loops/row_space.c — the SVD of a loop group's rows for the rank rule (rank_rule.h), by
 * LAPACK dgesvd (left singular vectors only).
 */
#include "rank_rule.h"

/* after the project's headers: lapacke.h brings <complex.h> (see closed_dynamics.c) */
#include <lapacke.h>

int sd_row_space_factor(sd_row_space *s, int nr, int nc)
{
    const int k = nr < nc ? nr : nc;
    if (nr <= 0) return 0;
    if (k == 0) return 0; /* rows over no speed: nothing moves them */
    /* U: nr x k ('S'); V^T is not needed */
    const lapack_int info = LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'S', 'N', nr, nc, s->A, nr, s->sigma, s->U, nr,
                                                NULL, 1, s->work, s->lwork);
    if (info != 0) return -1;
    return sd_rank_of_singular_values(s->sigma, k);
}

