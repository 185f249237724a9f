/*
 * src/sim/trajectory.c — a trajectory kept in memory (for plots): rows of
 * [t, q(0..nq-1), kinetic, potential], grown geometrically.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/sim_trajectory.h"

sd_trajectory *sd_trajectory_new(const sd_model *model)
{
    if (!model) return NULL;
    sd_trajectory *tr = calloc(1, sizeof(*tr));
    if (!tr) return NULL;
    tr->model = model;
    tr->nq = sd_model_nq(model);
    tr->stride = (size_t)tr->nq + 3;
    return tr;
}

void sd_trajectory_free(sd_trajectory *tr)
{
    if (!tr) return;
    free(tr->rows);
    free(tr);
}

sd_status sd_trajectory_append(sd_trajectory *tr, const sd_sim_sample *s)
{
    if (!tr || !s) return SD_E_ARGUMENT;
    if (tr->n == tr->cap) {
        const size_t cap = tr->cap ? 2 * tr->cap : 1024;
        double *rows = realloc(tr->rows, sizeof(double) * cap * tr->stride);
        if (!rows) return SD_E_MEMORY;
        tr->rows = rows;
        tr->cap = cap;
    }
    double *r = tr->rows + tr->n * tr->stride;
    r[0] = s->t;
    memcpy(r + 1, s->q, sizeof(double) * (size_t)tr->nq);
    r[1 + tr->nq] = s->kinetic;
    r[2 + tr->nq] = s->potential;
    ++tr->n;
    return SD_OK;
}

size_t sd_trajectory_length(const sd_trajectory *tr)
{
    return tr ? tr->n : 0;
}
