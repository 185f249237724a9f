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
#include <float.h>
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
    double *f;                  /* 6 n: the bodies' forces without the embedded constraints' */
    double *qt;                 /* model nv: the tree accelerations when the caller wants none */
    double *sap;                /* max_dim: sd_embed_solve's alpha+ */
    double *wh, *ref;           /* max_dim, max_ni: the singularity test's scratch */
    double *tp;                 /* max_nt: an aggregate's unbalanced tree generalized forces */
    double *tau_e;              /* embedded nv: N^T tau_tree when the caller gives tree forces */
    int *agg_of_con;            /* per constraint: its aggregate, -1 when tree-augmented */
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
    SD_EMBED_ALLOC(w->tau_e, nv);
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
    SD_EMBED_ALLOC(w->qt, (size_t)m->nv + 1);
    SD_EMBED_ALLOC(w->sap, (size_t)e->max_dim + 1);
    SD_EMBED_ALLOC(w->wh, (size_t)e->max_dim + 1);
    SD_EMBED_ALLOC(w->ref, (size_t)e->max_ni + 1);
    SD_EMBED_ALLOC(w->tp, (size_t)e->max_nt + 1);
    const int ncons = m->loops ? m->loops->ncons : 0;
    SD_EMBED_ALLOC(w->agg_of_con, (size_t)ncons + 1);
    for (int c = 0; c < ncons; ++c) w->agg_of_con[c] = -1;
    for (int a = 0; a < e->naggs; ++a)
        for (int i = 0; i < e->aggs[a].ncons; ++i) w->agg_of_con[e->agg_cons[e->aggs[a].cons0 + i]] = a;
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
    free(w->qt);
    free(w->tau_e);
    free(w->sap);
    free(w->wh);
    free(w->ref);
    free(w->tp);
    free(w->agg_of_con);
    free(w);
}

/* The 6x6 block of body slot `off` (its offset in its node's stacked vectors) in the node's dim x dim
 * row-major matrix A. */
static inline double *block(double *A, int dim, int off) { return A + (size_t)off * (size_t)dim + off; }

/* The parent body's 6-vector in a stacked array (alpha, z): NULL when the node hangs on the
 * inertial frame. */
static inline int parent_slot(const sd_embedding *e, const sd_embedded_data *ed, int s)
{
    const int pb = e->nodes[s].parent_body;
    return pb < 0 ? -1 : ed->nodes->slot[pb];
}

/* out (6) += W^T x (W dim x 6 row-major, x dim): a node's force carried to its parent body
 * (000 Eq 62's last line, 64-65: E_S phi_S). */
static void add_wt(const double *W, int dim, const double *x, double *out)
{
    for (int r = 0; r < dim; ++r)
        for (int c = 0; c < 6; ++c) out[c] += W[6 * r + c] * x[r];
}

/* Report a singular D(s): the hinge of a rigid node's body, or the embedded loop's independent
 * speeds. */
static sd_status singular_node(const sd_embedding *e, sd_embedded_data *ed, int s, int overflow)
{
    const sd_model *m = e->model;
    const sd_embed_node *nd = &e->nodes[s];
    const char *what = overflow ? "too small to invert in a double (a nearly massless subtree: D^-1 overflows)"
                                : "singular (a massless subtree that the node's speeds move freely)";
    if (nd->kind == SD_EMBED_RIGID)
        return sd_data_fail(ed->tree, SD_E_SINGULAR, "body '%s': articulated inertia D(s) of its hinge is %s",
                            m->desc[e->node_bodies[nd->body0]].name, what);
    return sd_data_fail(ed->tree, SD_E_SINGULAR,
                        "embedded loop '%s' (aggregate from body '%s'): articulated inertia D(s) of its %d "
                        "independent speeds is %s",
                        e->aggs[nd->aggregate].name, m->desc[e->node_bodies[nd->body0]].name, nd->ni, what);
}

/* Whether D(s), found negligible against the cheap scale (P's largest diagonal times Hbar*'s
 * largest column), is a true singularity: the scale is not what D must be compared with, since on
 * long chains P holds the inertia of everything outboard about axes the node's speeds cannot turn
 * (growing as N^3) while D stays that of a few links. As for a rigid hinge (forward_dynamics.c),
 * each speed is scaled by what it carries before the children's speeds are freed,
 * ref_i = Jbar_ii + Hbar_i^T (M_s + the children's W^T P(c) W, unprojected) Hbar*_i, and the scaled
 * D must factor with pivots above 1e-13. Cold: only when the cheap test fails. */
SD_COLD static int node_singular(const sd_embedding *e, sd_embedded_data *ed, int s, double *L)
{
    const sd_model *m = e->model;
    const struct sd_embed_nodes_ws *nw = ed->nodes;
    const struct sd_embed_fd_ws *w = ed->fd;
    const sd_embed_node *nd = &e->nodes[s];
    const int ni = nd->ni, o = e->vec_off[s];
    const double *H = nw->Hbar + e->hbar_off[s], *J = nw->Jbar + nw->jb_off[s], *D = w->D + w->d_off[s];
    for (int i = 0; i < ni; ++i) {
        double ref = J[i * ni + i];
        for (int bi = 0; bi < nd->nb; ++bi) { /* h^T M_k h over the node's bodies */
            const int k = e->node_bodies[nd->body0 + bi], r0 = nw->slot[k] - o;
            double h[6], Mh[6];
            for (int r = 0; r < 6; ++r) h[r] = H[(size_t)(r0 + r) * ni + i];
            sd_rigid_inertia_mul(m->rigid + 13 * k, h, Mh);
            ref += sd_s6_dot(h, Mh);
        }
        for (int c = s + 1; c < e->nnodes; ++c) { /* (W(c) h_j)^T P(c) (W(c) h_j) over the child nodes */
            if (e->nodes[c].parent_node != s) continue;
            const int dc = e->nodes[c].dim, r0 = nw->slot[e->nodes[c].parent_body] - o;
            const double *W = nw->W + 6 * (size_t)e->vec_off[c], *Pc = w->P + e->mat_off[c];
            for (int r = 0; r < dc; ++r) {
                double v = 0.0;
                for (int t = 0; t < 6; ++t) v += W[6 * r + t] * H[(size_t)(r0 + t) * ni + i];
                w->wh[r] = v;
            }
            for (int r = 0; r < dc; ++r)
                for (int t = 0; t < dc; ++t) ref += w->wh[r] * Pc[(size_t)r * dc + t] * w->wh[t];
        }
        if (!(ref > 0.0)) return 1; /* the speed carries nothing at all */
        w->ref[i] = ref;
    }
    for (int i = 0; i < ni; ++i)
        for (int j = 0; j < ni; ++j) L[i * ni + j] = D[i * ni + j] / sqrt(w->ref[i] * w->ref[j]);
    return sd_cholesky_factor(L, ni, 1e-13) >= 0;
}

/* The 004 Eq 33 projection of a rigid node with one speed (the common node), the kernel of
 * forward_dynamics.c's project_one_speed: U = P h, D = h U + J, G = U / D, P+ = P - G U^T. Returns 0
 * when done, 1 when not such a node or when D is negligible against the cheap scale (the general
 * path then decides with the careful test). */
static int rigid_one_speed_kernel(const double *restrict P, const double *restrict h, double J, double *restrict Pp,
                                  double *restrict G, double *D, double *L, double *Dinv, double *logdet)
{
    double U[6], pscale = 0.0, h2 = 0.0;
    sd_sym6_mul(P, h, U);
    for (int r = 0; r < 6; ++r) {
        pscale = fmax(pscale, fabs(P[7 * r]));
        h2 += h[r] * h[r];
    }
    const double d = sd_s6_dot(h, U) + J, dinv = 1.0 / d;
    if (!(d > 1e-13 * (pscale * h2 + J)) || !(dinv <= DBL_MAX)) return 1;
    D[0] = d;
    L[0] = sqrt(d);
    Dinv[0] = dinv;
    *logdet += log(d);
    for (int r = 0; r < 6; ++r) G[r] = U[r] * dinv;
    for (int r = 0; r < 6; ++r)
        for (int c = 0; c < 6; ++c) Pp[6 * r + c] = P[6 * r + c] - G[r] * U[c];
    return 0;
}

/* The Riccati gather over nodes (000 Eq 62; 004 Eq 33 with the node pieces): P(s) = M_s + the
 * children's W^T P+ W at the bodies they hang on, D = Hbar P Hbar* + Jbar, G = P Hbar* D^-1,
 * P+ = P - G Hbar P. log det M_e = sum log det D(s) (004 Cor 6.1) on the way. */
static sd_status riccati_gather(const sd_embedding *e, sd_embedded_data *ed)
{
    const sd_model *m = e->model;
    struct sd_embed_nodes_ws *nw = ed->nodes;
    struct sd_embed_fd_ws *w = ed->fd;
    w->factors_valid = 0;
    memset(w->P, 0, (size_t)e->mat_total * sizeof(double));
    for (int s = 0; s < e->nnodes; ++s) { /* P(s) starts as the block-diagonal M_s */
        const sd_embed_node *nd = &e->nodes[s];
        for (int bi = 0; bi < nd->nb; ++bi) {
            const int k = e->node_bodies[nd->body0 + bi];
            double I6[36];
            sd_rigid_inertia_to_sym6(m->rigid + 13 * k, I6);
            double *B = block(w->P + e->mat_off[s], nd->dim, nw->slot[k] - e->vec_off[s]);
            for (int r = 0; r < 6; ++r) memcpy(B + (size_t)r * nd->dim, I6 + 6 * r, 6 * sizeof(double));
        }
    }
    w->logdet = 0.0;
    for (int s = e->nnodes - 1; s >= 0; --s) {
        const sd_embed_node *nd = &e->nodes[s];
        const int dim = nd->dim, ni = nd->ni;
        const double *P = w->P + e->mat_off[s], *H = nw->Hbar + e->hbar_off[s], *J = nw->Jbar + nw->jb_off[s];
        double *Pp = w->Pplus + e->mat_off[s], *G = w->G + e->hbar_off[s], *PH = w->PH;
        double *D = w->D + w->d_off[s], *L = w->Dchol + w->d_off[s], *Dinv = w->Dinv + w->d_off[s];
        const int fast = nd->kind == SD_EMBED_RIGID && ni == 1 &&
                         !rigid_one_speed_kernel(P, H, J[0], Pp, G, D, L, Dinv, &w->logdet);
        if (!fast) memcpy(Pp, P, (size_t)dim * (size_t)dim * sizeof(double));
        if (!fast && ni > 0) {
            for (int r = 0; r < dim; ++r) /* PH = P Hbar* */
                for (int i = 0; i < ni; ++i) {
                    double v = 0.0;
                    for (int c = 0; c < dim; ++c) v += P[(size_t)r * dim + c] * H[(size_t)c * ni + i];
                    PH[(size_t)r * ni + i] = v;
                }
            double pscale = 0.0, hscale = 0.0;
            for (int r = 0; r < dim; ++r) pscale = fmax(pscale, fabs(P[(size_t)r * dim + r]));
            for (int i = 0; i < ni; ++i) {
                double h2 = 0.0;
                for (int r = 0; r < dim; ++r) h2 += H[(size_t)r * ni + i] * H[(size_t)r * ni + i];
                hscale = fmax(hscale, h2);
            }
            for (int i = 0; i < ni; ++i) /* D = Hbar P Hbar* + Jbar (symmetric: the lower half, mirrored) */
                for (int j = 0; j <= i; ++j) {
                    double v = J[i * ni + j];
                    for (int r = 0; r < dim; ++r) v += H[(size_t)r * ni + i] * PH[(size_t)r * ni + j];
                    D[i * ni + j] = D[j * ni + i] = L[i * ni + j] = L[j * ni + i] = v;
                }
            /* a pivot below 1e-13 of what P and Hbar* could give is round-off: M_e is singular there */
            double jscale = 0.0;
            for (int i = 0; i < ni; ++i) jscale = fmax(jscale, J[i * ni + i]);
            if (sd_cholesky_factor(L, ni, 1e-13 * (pscale * hscale + jscale)) >= 0) { /* negligible: look closer */
                if (node_singular(e, ed, s, L)) return singular_node(e, ed, s, 0);
                memcpy(L, D, (size_t)ni * (size_t)ni * sizeof(double));
                if (sd_cholesky_factor(L, ni, 0.0) >= 0) return singular_node(e, ed, s, 0);
            }
            w->logdet += sd_cholesky_logdet(L, ni);
            memcpy(Dinv, L, (size_t)ni * (size_t)ni * sizeof(double));
            sd_cholesky_inverse(Dinv, ni);
            if (!sd_all_finite(Dinv, (size_t)ni * (size_t)ni)) return singular_node(e, ed, s, 1);
            for (int r = 0; r < dim; ++r) /* G = P Hbar* D^-1 */
                for (int i = 0; i < ni; ++i) {
                    double v = 0.0;
                    for (int j = 0; j < ni; ++j) v += PH[(size_t)r * ni + j] * Dinv[j * ni + i];
                    G[(size_t)r * ni + i] = v;
                }
            for (int r = 0; r < dim; ++r) /* P+ = P - G (P Hbar*)^T */
                for (int c = 0; c < dim; ++c) {
                    double v = 0.0;
                    for (int i = 0; i < ni; ++i) v += G[(size_t)r * ni + i] * PH[(size_t)c * ni + i];
                    Pp[(size_t)r * dim + c] -= v;
                }
        }
        const int ps = parent_slot(e, ed, s);
        if (ps >= 0 && nd->kind == SD_EMBED_RIGID) { /* W = phi*(parent, k): the rigid kernel (004 Eq 33) */
            const int pn = nd->parent_node, pdim = e->nodes[pn].dim, k = e->node_bodies[nd->body0];
            double *B = block(w->P + e->mat_off[pn], pdim, ps - e->vec_off[pn]);
            if (pdim == 6) sd_sym6_add_to_parent(&ed->tree->Xup[k], Pp, B);
            else {
                double T[36] = {0};
                sd_sym6_add_to_parent(&ed->tree->Xup[k], Pp, T);
                for (int r = 0; r < 6; ++r)
                    for (int c = 0; c < 6; ++c) B[(size_t)r * pdim + c] += T[6 * r + c];
            }
        } else if (ps >= 0) { /* P(parent) block at the parent body += W^T P+ W (000 Eq 62) */
            const int pn = nd->parent_node, pdim = e->nodes[pn].dim;
            const double *W = nw->W + 6 * (size_t)e->vec_off[s];
            double *PW = w->PW, *B = block(w->P + e->mat_off[pn], pdim, ps - e->vec_off[pn]);
            for (int r = 0; r < dim; ++r)
                for (int c = 0; c < 6; ++c) {
                    double v = 0.0;
                    for (int t = 0; t < dim; ++t) v += Pp[(size_t)r * dim + t] * W[6 * t + c];
                    PW[6 * r + c] = v;
                }
            for (int a = 0; a < 6; ++a)
                for (int c = 0; c < 6; ++c) {
                    double v = 0.0;
                    for (int r = 0; r < dim; ++r) v += W[6 * r + a] * PW[6 * r + c];
                    B[(size_t)a * pdim + c] += v;
                }
        }
    }
    w->factors_valid = 1;
    return SD_OK;
}

/* The residual gather (000 Eq 64-65): z(s) = the children's W^T z+ (+ b_s + P a_s with the bias
 * terms), eps = T (+ tau_j) - Hbar z, nu = D^-1 eps, z+ = z + G eps. */
static void residual_gather(const sd_embedding *e, sd_embedded_data *ed, const double *T, int bias, double *z,
                            double *zplus, double *eps, double *nu)
{
    const struct sd_embed_nodes_ws *nw = ed->nodes;
    const struct sd_embed_fd_ws *w = ed->fd;
    memset(z, 0, (size_t)e->vec_total * sizeof(double));
    for (int s = e->nnodes - 1; s >= 0; --s) {
        const sd_embed_node *nd = &e->nodes[s];
        const int dim = nd->dim, ni = nd->ni, o = e->vec_off[s];
        const double *P = w->P + e->mat_off[s], *H = nw->Hbar + e->hbar_off[s], *G = w->G + e->hbar_off[s];
        const double *Dinv = w->Dinv + w->d_off[s];
        double *zs = z + o, *zp = zplus + o;
        if (bias)
            for (int r = 0; r < dim; ++r) {
                double v = nw->b[o + r];
                for (int c = 0; c < dim; ++c) v += P[(size_t)r * dim + c] * nw->a[o + c];
                zs[r] += v;
            }
        for (int i = 0; i < ni; ++i) {
            double v = T[nd->v0 + i] + (bias ? nw->tau_j[nd->v0 + i] : 0.0);
            for (int r = 0; r < dim; ++r) v -= H[(size_t)r * ni + i] * zs[r];
            eps[nd->v0 + i] = v;
        }
        sd_dinv_mul(Dinv, ni, eps + nd->v0, nu + nd->v0);
        for (int r = 0; r < dim; ++r) {
            double v = zs[r];
            for (int i = 0; i < ni; ++i) v += G[(size_t)r * ni + i] * eps[nd->v0 + i];
            zp[r] = v;
        }
        const int ps = parent_slot(e, ed, s);
        if (ps >= 0 && nd->kind == SD_EMBED_RIGID) { /* W^T z+ = phi(parent, k) z+ */
            double f[6];
            sd_force_to_parent(&ed->tree->Xup[e->node_bodies[nd->body0]], zp, f);
            for (int r = 0; r < 6; ++r) z[ps + r] += f[r];
        } else if (ps >= 0)
            add_wt(nw->W + 6 * (size_t)o, dim, zp, z + ps);
    }
}

/* The acceleration scatter (000 Eq 66-67): alpha+(s) = W(s) alpha(parent body) (the inertial frame's
 * a0), x = nu - G^T alpha+, alpha(s) = alpha+ + Hbar* x (+ a_s with the bias terms). ap: the
 * stacked alpha+ (vec_total), or a max_dim scratch when `keep_ap` is 0. */
static void acceleration_scatter(const sd_embedding *e, sd_embedded_data *ed, const double a0[6], int bias,
                                 const double *nu, double *x, double *alpha, double *ap, int keep_ap)
{
    const struct sd_embed_nodes_ws *nw = ed->nodes;
    const struct sd_embed_fd_ws *w = ed->fd;
    for (int s = 0; s < e->nnodes; ++s) {
        const sd_embed_node *nd = &e->nodes[s];
        const int dim = nd->dim, ni = nd->ni, o = e->vec_off[s], ps = parent_slot(e, ed, s);
        const double *W = nw->W + 6 * (size_t)o, *H = nw->Hbar + e->hbar_off[s], *G = w->G + e->hbar_off[s];
        const double *src = ps >= 0 ? alpha + ps : a0;
        double *aps = keep_ap ? ap + o : ap, *al = alpha + o;
        if (nd->kind == SD_EMBED_RIGID) /* W alpha = phi*(parent, k) alpha */
            sd_motion_to_child(&ed->tree->Xup[e->node_bodies[nd->body0]], src, aps);
        else
            for (int r = 0; r < dim; ++r) {
                double v = 0.0;
                for (int c = 0; c < 6; ++c) v += W[6 * r + c] * src[c];
                aps[r] = v;
            }
        for (int i = 0; i < ni; ++i) {
            double v = nu[nd->v0 + i];
            for (int r = 0; r < dim; ++r) v -= G[(size_t)r * ni + i] * aps[r];
            x[nd->v0 + i] = v;
        }
        for (int r = 0; r < dim; ++r) {
            double v = aps[r] + (bias ? nw->a[o + r] : 0.0);
            for (int i = 0; i < ni; ++i) v += H[(size_t)r * ni + i] * x[nd->v0 + i];
            al[r] = v;
        }
    }
}

/* x may alias rhs: the gather has read all of rhs before the scatter writes x. */
void sd_embed_solve(const sd_embedding *e, sd_embedded_data *ed, const double *rhs, double *x)
{
    struct sd_embed_fd_ws *w = ed->fd;
    static const double zero[6] = {0, 0, 0, 0, 0, 0};
    residual_gather(e, ed, rhs, 0, w->sz, w->szplus, w->seps, w->snu);
    acceleration_scatter(e, ed, zero, 0, w->snu, x, w->salpha, w->sap, 0);
}

/* Every body's inter-body force and the embedded constraints' multipliers (000 Eq 68-69), after
 * the scatter: f'(s) = P+ alpha+ + z+ (Eq 68); inside an aggregate, phi_S f'_S (Eq 69, a gather
 * over its bodies) is what the tree hinges would carry with no constraint force, so the generalized
 * forces its dependent hinges leave unbalanced, r = H phi_S f' - (tau_tree + tau_passive - J qdd)
 * (tau_tree: the caller's tree forces, or none on a dependent speed), are G*_S lambda: Y1^T lambda = r_dep (sd_embed_multipliers). Then the
 * physical forces f(k) = f'(k) - (the embedded constraints' forces Ew lambda on k) + the children's
 * inside the aggregate, carried up. Outside aggregates f' is the hinge force already (the
 * constraint forces on an aggregate's parent body are inside its node's f', 000 Eq 61). */
static void interbody_forces(const sd_embedding *e, sd_embedded_data *ed, const double *qt, const double *tau_tree)
{
    const sd_model *m = e->model;
    sd_data *d = ed->tree;
    const struct sd_embed_nodes_ws *nw = ed->nodes;
    struct sd_embed_fd_ws *w = ed->fd;
    for (int s = 0; s < e->nnodes; ++s) { /* f' = P+ alpha+ + z+ (000 Eq 68) */
        const int dim = e->nodes[s].dim, o = e->vec_off[s];
        const double *Pp = w->Pplus + e->mat_off[s];
        for (int r = 0; r < dim; ++r) {
            double v = w->zplus[o + r];
            for (int c = 0; c < dim; ++c) v += Pp[(size_t)r * dim + c] * w->alpha_plus[o + c];
            w->fp[o + r] = v;
        }
    }
    for (int k = 0; k < m->n; ++k) memcpy(w->f + 6 * k, w->fp + nw->slot[k], 6 * sizeof(double));
    for (int k = m->n - 1; k >= 0; --k) { /* phi_S f' (000 Eq 69), within each node */
        const int p = m->parent[k];
        if (p < 0 || e->node_of_body[p] != e->node_of_body[k]) continue;
        double fp[6];
        sd_force_to_parent(&d->Xup[k], w->f + 6 * k, fp);
        for (int r = 0; r < 6; ++r) w->f[6 * p + r] += fp[r];
    }
    double *lambda = d->loops ? d->loops->lambda : NULL;
    for (int a = 0; a < e->naggs; ++a) { /* the multipliers from the dependent hinges' balance */
        const sd_embed_aggregate *ag = &e->aggs[a];
        const sd_embed_node *nd = &e->nodes[ag->node];
        for (int bi = 0, t = 0; bi < nd->nb; ++bi) {
            const int k = e->node_bodies[nd->body0 + bi], nk = m->nv_k[k], vk = m->v_index[k];
            double tp[6] = {0, 0, 0, 0, 0, 0};
            if (m->has_passive) sd_passive_hinge(m, k, ed->q, ed->u_tree, tp);
            for (int j = 0; j < nk; ++j)
                w->tp[t + j] = sd_s6_dot(d->S + 6 * (vk + j), w->f + 6 * k) - tp[j] + m->armature[vk + j] * qt[vk + j] -
                               (tau_tree ? tau_tree[vk + j] : 0.0);
            t += nk;
        }
        for (int i = 0; i < ag->rank; ++i) w->r[i] = w->tp[ag->dep[i]];
        sd_embed_multipliers(e, ed, a, w->r, w->lam);
        for (int ci = 0, row = 0; ci < ag->ncons; ++ci) {
            const sd_loop_constraint *c = &m->loops->cons[e->agg_cons[ag->cons0 + ci]];
            for (int i = 0; i < c->nrows; ++i) lambda[c->row + i] = w->lam[row + i];
            row += c->nrows;
        }
    }
    for (int k = 0; k < m->n; ++k) memcpy(d->f + 6 * k, w->fp + nw->slot[k], 6 * sizeof(double));
    const sd_loops_model *L = m->loops;
    for (int fi = 0; L && fi < L->nframes; ++fi) { /* minus the embedded constraints' forces Ew lambda */
        const sd_loop_frame *fr = &L->frames[fi];
        const int a = w->agg_of_con[fr->constraint];
        if (a < 0 || fr->body < 0 || e->node_of_body[fr->body] != e->aggs[a].node) continue;
        const sd_loop_constraint *c = &L->cons[fr->constraint];
        const double *Ew = d->loops->Ew + fr->ew;
        for (int i = 0; i < c->nrows; ++i)
            for (int r = 0; r < 6; ++r) d->f[6 * fr->body + r] -= Ew[6 * i + r] * lambda[c->row + i];
    }
    for (int k = m->n - 1; k >= 0; --k) { /* carried up inside the aggregates */
        const int p = m->parent[k];
        if (p < 0 || e->node_of_body[p] != e->node_of_body[k]) continue;
        double fp[6];
        sd_force_to_parent(&d->Xup[k], d->f + 6 * k, fp);
        for (int r = 0; r < 6; ++r) d->f[6 * p + r] += fp[r];
    }
    if (d->loops) d->loops->lambda_valid = 1;
}

/* The checks every public entry runs: arguments present, the workspace the embedding's. */
static sd_status check_args(const sd_embedding *e, sd_embedded_data *ed, const char *fn, const double *q)
{
    if (!e || !ed || !ed->tree) return SD_E_ARGUMENT;
    if (ed->e != e) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: the workspace belongs to another embedding", fn);
    if (!q) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: NULL q", fn);
    return sd_check_input(ed->tree, fn, "q", q, e->model->nq);
}

/* The tree accelerations N qdd + qdd_c (002 Eq 20 differentiated: X_S qdd + Xdot_S u). */
static void tree_accelerations(const sd_embedding *e, const sd_embedded_data *ed, const double *qdd, double *qt)
{
    for (int s = 0; s < e->nnodes; ++s) {
        const sd_embed_node *nd = &e->nodes[s];
        const int *ts = e->tree_speeds + nd->t0;
        if (nd->kind == SD_EMBED_RIGID) {
            for (int i = 0; i < nd->ni; ++i) qt[ts[i]] = qdd[nd->v0 + i];
            continue;
        }
        const double *X = ed->X + e->x_off[s];
        for (int r = 0; r < nd->nt; ++r) {
            double v = ed->qdd_c[ts[r]];
            for (int i = 0; i < nd->ni; ++i) v += X[r * nd->ni + i] * qdd[nd->v0 + i];
            qt[ts[r]] = v;
        }
    }
}

sd_status sd_embedded_forward_dynamics(const sd_embedding *e, sd_embedded_data *ed, const double *q, const double *u,
                                       const double *tau, const double *f_ext, double *qdd, double *qdd_tree,
                                       const sd_embedded_fd_options *options)
{
    const char *fn = "sd_embedded_forward_dynamics";
    sd_status st = check_args(e, ed, fn, q);
    if (st != SD_OK) return st;
    const sd_model *m = e->model;
    sd_data *d = ed->tree;
    const double *tau_tree = options ? options->tau_tree : NULL;
    if ((!tau && !tau_tree) || !qdd) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL tau (and no tau_tree) or qdd", fn);
    if ((st = sd_check_input(d, fn, "u", u, e->nv)) != SD_OK ||
        (st = sd_check_input(d, fn, "tau", tau_tree ? NULL : tau, e->nv)) != SD_OK ||
        (st = sd_check_input(d, fn, "tau_tree", tau_tree, m->nv)) != SD_OK ||
        (st = sd_check_input(d, fn, "f_ext", f_ext, 6 * m->n)) != SD_OK)
        return st;
    if (options && options->prescribed) /* mixed dynamics (embed_prescribed.c) */
        return sd_embed_prescribed_forward_dynamics(e, ed, q, u, tau, f_ext, qdd, qdd_tree, options);
    const int want_forces = options && options->interbody_forces;
    struct sd_embed_fd_ws *w = ed->fd;
    if (d->loops) d->loops->lambda_valid = 0;
    if ((st = sd_embed_prepare(e, ed, q)) != SD_OK || (st = sd_embed_velocities(e, ed, u)) != SD_OK) return st;
    if (tau_tree) { /* tau_e = N^T tau_tree (002 Eq 12: the power of the tree forces on N u) */
        for (int s = 0; s < e->nnodes; ++s) {
            const sd_embed_node *nd = &e->nodes[s];
            const double *X = nd->kind == SD_EMBED_AGGREGATE ? ed->X + e->x_off[s] : NULL;
            for (int j = 0; j < nd->ni; ++j) {
                double v = 0.0;
                if (!X) v = tau_tree[e->tree_speeds[nd->t0 + j]];
                else
                    for (int t = 0; t < nd->nt; ++t) v += X[(size_t)t * nd->ni + j] * tau_tree[e->tree_speeds[nd->t0 + t]];
                w->tau_e[nd->v0 + j] = v;
            }
        }
        tau = w->tau_e;
    }
    sd_embed_node_pieces(e, ed, 1, f_ext);
    if ((st = riccati_gather(e, ed)) != SD_OK) return st;
    residual_gather(e, ed, tau, 1, w->z, w->zplus, w->eps, w->nu);
    double a0[6];
    sd_base_acceleration(m, a0); /* the base accelerates at -g: f includes the weights (004 Sec 8) */
    acceleration_scatter(e, ed, a0, 1, w->nu, qdd, w->alpha, w->alpha_plus, 1);
    double *qt = qdd_tree ? qdd_tree : w->qt;
    tree_accelerations(e, ed, qdd, qt);
    if (want_forces) interbody_forces(e, ed, qt, tau_tree);
    if (e->n_ta > 0) { /* tree-augmented constraints on top (000 Eq 45-46, embed_mixed.c) */
        if ((st = sd_embed_mixed_correct(e, ed, qdd, want_forces)) != SD_OK) return st;
        tree_accelerations(e, ed, qdd, qt);
        for (int k = 0; k < m->n; ++k) { /* alpha(k) = Xup alpha(parent) + H* qdd_tree + a(k) (000 Eq 2) */
            double *al = d->alpha + 6 * k, aJ[6];
            sd_motion_to_child(&d->Xup[k], m->parent[k] < 0 ? a0 : d->alpha + 6 * m->parent[k], al);
            sd_hinge_motion(m, d, k, qt, aJ);
            for (int r = 0; r < 6; ++r) al[r] += aJ[r] + d->a[6 * k + r];
        }
    } else
        for (int k = 0; k < m->n; ++k) memcpy(d->alpha + 6 * k, w->alpha + ed->nodes->slot[k], 6 * sizeof(double));
    d->alpha_has_gravity = 1;
    d->current = (d->current & ~(unsigned)SD_CURRENT_ARTICULATED) | SD_CURRENT_ACCELERATIONS |
                 (want_forces ? SD_CURRENT_FORCES : 0u);
    if (!want_forces) d->current &= ~(unsigned)SD_CURRENT_FORCES;
    if ((st = sd_check_output(d, fn, "qdd", qdd, (size_t)e->nv, SD_CAUSE_TINY_INERTIA)) != SD_OK) return st;
    return sd_check_output(d, fn, "qdd_tree", qt, (size_t)m->nv, SD_CAUSE_TINY_INERTIA);
}

/* The factors of M_e at q: closed loops, node pieces without velocities, the Riccati gather. */
static sd_status factor_at(const sd_embedding *e, sd_embedded_data *ed, const double *q)
{
    sd_status st = sd_embed_prepare(e, ed, q);
    if (st != SD_OK) return st;
    sd_embed_node_pieces(e, ed, 0, NULL);
    return riccati_gather(e, ed);
}

sd_status sd_embedded_mass_matrix_inverse(const sd_embedding *e, sd_embedded_data *ed, const double *q, double *Minv)
{
    const char *fn = "sd_embedded_mass_matrix_inverse";
    sd_status st = check_args(e, ed, fn, q);
    if (st != SD_OK) return st;
    if (!Minv) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: NULL output", fn);
    if ((st = factor_at(e, ed, q)) != SD_OK) return st;
    const int nv = e->nv;
    double *col = ed->fd->col;
    for (int j = 0; j < nv; ++j) { /* column j = M_e^-1 e_j: one residual gather and scatter (004 Eq 51) */
        memset(col, 0, (size_t)nv * sizeof(double));
        col[j] = 1.0;
        sd_embed_solve(e, ed, col, col); /* in place: the gather reads col before the scatter writes it */
        for (int i = 0; i < nv; ++i) Minv[(size_t)i * nv + j] = col[i];
    }
    return sd_check_output(ed->tree, fn, "Minv", Minv, (size_t)nv * (size_t)nv, SD_CAUSE_TINY_INERTIA);
}

sd_status sd_embedded_log_det(const sd_embedding *e, sd_embedded_data *ed, const double *q, double *log_det)
{
    const char *fn = "sd_embedded_log_det";
    sd_status st = check_args(e, ed, fn, q);
    if (st != SD_OK) return st;
    if (!log_det) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: NULL output", fn);
    if ((st = factor_at(e, ed, q)) != SD_OK) return st;
    *log_det = ed->fd->logdet; /* 004 Cor 6.1: det M = prod det D(s) */
    return sd_check_output(ed->tree, fn, "log_det", log_det, 1, SD_CAUSE_TINY_INERTIA);
}

sd_status sd_embedded_constraint_forces(const sd_embedding *e, sd_embedded_data *ed, double *lambda)
{
    const char *fn = "sd_embedded_constraint_forces";
    if (!e || !ed || !ed->tree) return SD_E_ARGUMENT;
    if (ed->e != e) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: the workspace belongs to another embedding", fn);
    if (!lambda) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: NULL output", fn);
    const sd_data *d = ed->tree;
    if (!d->loops || !d->loops->lambda_valid)
        return sd_data_fail(ed->tree, SD_E_ARGUMENT,
                            "%s: no multipliers: call sd_embedded_forward_dynamics with interbody_forces first", fn);
    const int nc = e->model->loops->nrows;
    memcpy(lambda, d->loops->lambda, (size_t)nc * sizeof(double));
    return sd_check_output(ed->tree, fn, "lambda", lambda, (size_t)nc, SD_CAUSE_TINY_INERTIA);
}
