/*
 * src/loops/rank_rule.c — the one rank rule of the closed-loop layers (rank_rule.h): singular
 * values counted against SD_RANK_RTOL and SD_RANK_ABS, and the SVD workspace (allocated with the
 * closed-loop workspace, a core source; the SVD itself is row_space.c's, with LAPACK).
 */
#include <math.h>
#include <stdlib.h>

#include "rank_rule.h"

int sd_row_space_init(sd_row_space *s, int max_rows, int max_cols)
{
    s->max_rows = max_rows > 0 ? max_rows : 1;
    s->max_cols = max_cols > 0 ? max_cols : 1;
    const int mn = s->max_rows < s->max_cols ? s->max_rows : s->max_cols, mx = s->max_rows + s->max_cols;
    /* dgesvd (row_space.c) asks for max(3 min + max, 5 min); its blocked paths do better with more */
    s->lwork = 5 * mx + 64 * (mn + 1);
    s->A = malloc((size_t)s->max_rows * (size_t)s->max_cols * sizeof(double));
    s->U = malloc((size_t)s->max_rows * (size_t)s->max_rows * sizeof(double));
    s->sigma = malloc((size_t)s->max_rows * sizeof(double));
    s->work = malloc((size_t)s->lwork * sizeof(double));
    if (!s->A || !s->U || !s->sigma || !s->work) {
        sd_row_space_free(s);
        return 0;
    }
    return 1;
}

void sd_row_space_free(sd_row_space *s)
{
    free(s->A);
    free(s->U);
    free(s->sigma);
    free(s->work);
    s->A = s->U = s->sigma = s->work = NULL;
}

int sd_rank_of_singular_values(const double *sigma, int n)
{
    if (n <= 0) return 0;
    const double tol = fmax(SD_RANK_RTOL * sigma[0], SD_RANK_ABS);
    int r = 0;
    while (r < n && sigma[r] > tol) ++r;
    return r;
}

double sd_row_space_dropped(const sd_row_space *s, int nr, int nc, int rank)
{
    const int k = nr < nc ? nr : nc;
    if (rank >= k || k == 0 || !(s->sigma[0] > 0.0)) return 0.0;
    return s->sigma[rank] / s->sigma[0];
}
