/*
 * src/embed/embed_forward_dynamics.c — the articulated-body forward dynamics over the nodes of an
 * embedding (000 Sec 5, Eq 62-69): the Riccati gather of the nodes' articulated inertias, the
 * residual gather and the acceleration scatter; M_e^-1 and log det M_e from the same factors
 * (004 Eq 51, Cor 6.1); the inter-body forces of every body and the multipliers of the embedded
 * constraints (000 Eq 68-69).
 *
 * Glossary (node s of dimension dim, ni speeds; embed_internal.h for W, Hbar*, a_s, b_s, Jbar):
 *   P(s), P+(s)   dim x dim articulated inertia of the node and after its hinge is freed
 *   D(s)          ni x ni: Hbar P Hbar* + Jbar; Dchol its Cholesky factor, Dinv its inverse
 *   G(s)          dim x ni: P Hbar* D^-1 (the Kalman gain)
 *   z, z+         dim: residual forces; eps, nu per speed (000 Eq 64-65)
 *   alpha+(s)     dim: W(s) alpha(parent body), the node's bodies' acceleration with its hinge held
 *   alpha(s)      dim: alpha+ + Hbar* u-dot + a_s (000 Eq 66-67)
 *   f'(s)         dim: P+ alpha+ + z+ (000 Eq 68), the forces on the node's bodies across its hinge
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed_internal.h"

struct sd_embed_fd_ws {
    int *d_off;                 /* per node: offset of its ni x ni blocks */
    double *P, *Pplus;          /* mat_total, at mat_off[s] */
    double *D, *Dchol, *Dinv;   /* ni x ni per node, at d_off[s] */
    double *G;                  /* hbar_total: G(s), dim x ni row-major at hbar_off[s] */
    double *z, *zplus, *alpha, *fp; /* vec_total */
    double *alpha_plus;         /* vec_total: alpha+ of each node */
    double *eps, *nu;           /* embedded nv */
    double *sz, *szplus, *salpha; /* vec_total: sd_embed_solve's own sweep (the FD state survives it) */
    double *seps, *snu;         /* embedded nv */
    double *PH;                 /* max_dim x max_ni scratch: P Hbar* */
    double *PW;                 /* max_dim x 6 scratch: P+ W */
    double *col;                /* embedded nv: a unit column (M^-1) */
    double *r, *lam;            /* max_nt, max_rows: the multipliers' right side and rows */
    double *f;                  /* 6 n: the bodies' inter-body forces before the tree's d->f */
    double logdet;              /* sum log det D(s) of the last gather */
    int factors_valid;          /* P, D, G hold the factors at ed->q */
};

struct sd_embed_fd_ws *sd_embed_fd_ws_new(const sd_embedding *e)
{
    const sd_model *m = e->model;
    struct sd_embed_fd_ws *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->d_off = malloc((size_t)(e->nnodes + 1) * sizeof(int));
    if (!w->d_off) goto fail;
    size_t d_total = 0;
    for (int s = 0; s < e->nnodes; ++s) {
        w->d_off[s] = (int)d_total;
        d_total += (size_t)e->nodes[s].ni * (size_t)e->nodes[s].ni;
    }
    const size_t vec = (size_t)e->vec_total + 1, nv = (size_t)e->nv + 1;
#define SD_EMBED_ALLOC(p, count)                                   \
    do {                                                           \
        if (!((p) = calloc((count), sizeof *(p)))) goto fail;      \
    } while (0)
    SD_EMBED_ALLOC(w->P, (size_t)e->mat_total + 1);
    SD_EMBED_ALLOC(w->Pplus, (size_t)e->mat_total + 1);
    SD_EMBED_ALLOC(w->D, d_total + 1);
    SD_EMBED_ALLOC(w->Dchol, d_total + 1);
    SD_EMBED_ALLOC(w->Dinv, d_total + 1);
    SD_EMBED_ALLOC(w->G, (size_t)e->hbar_total + 1);
    SD_EMBED_ALLOC(w->z, vec);
    SD_EMBED_ALLOC(w->zplus, vec);
    SD_EMBED_ALLOC(w->alpha, vec);
    SD_EMBED_ALLOC(w->fp, vec);
    SD_EMBED_ALLOC(w->alpha_plus, vec);
    SD_EMBED_ALLOC(w->eps, nv);
    SD_EMBED_ALLOC(w->nu, nv);
    SD_EMBED_ALLOC(w->sz, vec);
    SD_EMBED_ALLOC(w->szplus, vec);
    SD_EMBED_ALLOC(w->salpha, vec);
    SD_EMBED_ALLOC(w->seps, nv);
    SD_EMBED_ALLOC(w->snu, nv);
    SD_EMBED_ALLOC(w->PH, (size_t)e->max_dim * (size_t)e->max_ni + 1);
    SD_EMBED_ALLOC(w->PW, (size_t)e->max_dim * 6 + 1);
    SD_EMBED_ALLOC(w->col, nv);
    SD_EMBED_ALLOC(w->r, (size_t)e->max_nt + 1);
    SD_EMBED_ALLOC(w->lam, (size_t)e->max_rows + 1);
    SD_EMBED_ALLOC(w->f, 6 * (size_t)m->n + 1);
#undef SD_EMBED_ALLOC
    return w;
fail:
    sd_embed_fd_ws_free(w);
    return NULL;
}

void sd_embed_fd_ws_free(struct sd_embed_fd_ws *w)
{
    if (!w) return;
    free(w->d_off);
    free(w->P);
    free(w->Pplus);
    free(w->D);
    free(w->Dchol);
    free(w->Dinv);
    free(w->G);
    free(w->z);
    free(w->zplus);
    free(w->alpha);
    free(w->fp);
    free(w->alpha_plus);
    free(w->eps);
    free(w->nu);
    free(w->sz);
    free(w->szplus);
    free(w->salpha);
    free(w->seps);
    free(w->snu);
    free(w->PH);
    free(w->PW);
    free(w->col);
    free(w->r);
    free(w->lam);
    free(w->f);
    free(w);
}
