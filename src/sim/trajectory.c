/*
 * src/sim/trajectory.c — a trajectory kept in memory (for plots and the viewer): rows of
 * [t, q(0..nq-1), kinetic, potential, u(0..nv-1)], grown geometrically; for a model with flexible bodies, the
 * node of each whose deflection the plot shows (computed from q when plotting).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/flex.h>

#include "sim/sim_trajectory.h"

sd_trajectory *sd_trajectory_new(const sd_model *model)
{
    return sd_trajectory_new_nodes(model, NULL);
}

sd_trajectory *sd_trajectory_new_nodes(const sd_model *model, const int *nodes)
{
    if (!model) return NULL;
    sd_trajectory *tr = calloc(1, sizeof(*tr));
    if (!tr) return NULL;
    tr->model = model;
    tr->nq = sd_model_nq(model);
    tr->nv = sd_model_nv(model);
    tr->stride = (size_t)tr->nq + 3 + (size_t)tr->nv;
    const int nflex = sd_model_nflexible(model);
    if (nflex > 0) {
        tr->tip_body = malloc(sizeof(int) * (size_t)nflex);
        tr->tip_node = malloc(sizeof(int) * (size_t)nflex);
        if (!tr->tip_body || !tr->tip_node) {
            sd_trajectory_free(tr);
            return NULL;
        }
        for (int k = 0; k < sd_model_nbodies(model); ++k) {
            const int nn = sd_model_body_nnodes(model, k);
            if (sd_model_body_nmodes(model, k) == 0 && nn == 0) continue; /* rigid */
            const int t = nodes && nodes[k] >= 0 ? nodes[k] : nn - 1;
            if (t >= nn) { /* the caller checks (sd_model_body_nnodes) */
                sd_trajectory_free(tr);
                return NULL;
            }
            tr->tip_body[tr->ntip] = k;
            tr->tip_node[tr->ntip++] = t;
        }
    }
    return tr;
}

void sd_trajectory_free(sd_trajectory *tr)
{
    if (!tr) return;
    free(tr->rows);
    free(tr->tip_body);
    free(tr->tip_node);
    free(tr);
}

void sd_trajectory_set_note(sd_trajectory *tr, const char *note)
{
    if (!tr) return;
    snprintf(tr->note, sizeof(tr->note), "%s", note ? note : "");
}

const char *sd_trajectory_note(const sd_trajectory *tr) { return tr ? tr->note : ""; }

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
    if (s->u) memcpy(r + 3 + tr->nq, s->u, sizeof(double) * (size_t)tr->nv);
    else memset(r + 3 + tr->nq, 0, sizeof(double) * (size_t)tr->nv);
    ++tr->n;
    return SD_OK;
}

size_t sd_trajectory_length(const sd_trajectory *tr)
{
    return tr ? tr->n : 0;
}
