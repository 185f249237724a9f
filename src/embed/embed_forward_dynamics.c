/*
 * src/embed/embed_forward_dynamics.c — the articulated-body forward dynamics over the nodes of an
 * embedding (000 Sec 5, Eq 62-69): the Riccati gather of the nodes' articulated inertias, the
 * residual gather and the acceleration scatter; M_e^-1 and log det M_e from the same factors
 * (004 Eq 51, Cor 6.1); the inter-body forces of every body and the multipliers of the embedded
 * constraints (000 Eq 68-69).
 *
 * Glossary (node s of dimension dim, ni speeds; embed_internal.h for W, Hbar*, a_s, b_s, Jbar):
 *   P(s), P+(s)   dim x dim articulated inertia of the node and after its hinge is freed; P(s) is
 *                 block-diagonal (kept as its bodies' 6x6 blocks), P+ is never formed
 *   U(s)          dim x ni: P Hbar*
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
    double *P;                  /* 36 per body at 6 slot[k]: body k's diagonal block of P(s), M_k plus
                                   the children nodes' W^T P+ W hung on k (000 Eq 62) */
    double *U;                  /* hbar_total: P Hbar*, dim x ni row-major at hbar_off[s] */
    double *D, *Dchol, *Dinv;   /* ni x ni per node, at d_off[s] */
    double *G;                  /* hbar_total: G(s), dim x ni row-major at hbar_off[s] */
    double *z, *zplus, *alpha, *fp; /* vec_total */
    double *alpha_plus;         /* vec_total: alpha+ of each node */
    double *eps, *nu;           /* embedded nv */
    double *sz, *szplus, *salpha; /* vec_total: sd_embed_solve's own sweep (the FD state survives it) */
    double *seps, *snu;         /* embedded nv */
    double *C;                  /* 36 max_nb: a node's inertias carried up body by body (W^T P W) */
    double *K;                  /* 6 max_ni (max_nb + 2): its P Hbar* carried up likewise (W^T P Hbar*),
                                   then K at the parent body and K D^-1 */
    double *acc;                /* max_dim: a node's forces carried up body by body */
    double *col;                /* embedded nv: a unit column (M^-1) */
    double *r, *lam;            /* max_nt, max_rows: the multipliers' right side and rows */
    double *f;                  /* 6 n: the bodies' forces without the embedded constraints' */
    double *qt;                 /* model nv: the tree accelerations when the caller wants none */
    double *sap;                /* max_dim: sd_embed_solve's alpha+ */
    double *wh, *ref;           /* max_dim, max_ni: the singularity test's scratch */
    double *uta;                /* max_ni: (P Hbar*)^T alpha+ of a node (the inter-body forces) */
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
    const size_t vec = (size_t)e->vec_total + 1, nv = (size_t)e->nv + 1, max_nb = (size_t)e->max_dim / 6 + 1;
#define SD_EMBED_ALLOC(p, count)                                   \
    do {                                                           \
        if (!((p) = calloc((count), sizeof *(p)))) goto fail;      \
    } while (0)
    SD_EMBED_ALLOC(w->P, 36 * (size_t)m->n + 1);
    SD_EMBED_ALLOC(w->U, (size_t)e->hbar_total + 1);
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
    SD_EMBED_ALLOC(w->C, 36 * max_nb);
    SD_EMBED_ALLOC(w->K, 6 * ((size_t)e->max_ni + 1) * (max_nb + 2));
    SD_EMBED_ALLOC(w->acc, (size_t)e->max_dim + 1);
    SD_EMBED_ALLOC(w->col, nv);
    SD_EMBED_ALLOC(w->r, (size_t)e->max_nt + 1);
    SD_EMBED_ALLOC(w->lam, (size_t)e->max_rows + 1);
    SD_EMBED_ALLOC(w->f, 6 * (size_t)m->n + 1);
    SD_EMBED_ALLOC(w->qt, (size_t)m->nv + 1);
    SD_EMBED_ALLOC(w->sap, (size_t)e->max_dim + 1);
    SD_EMBED_ALLOC(w->wh, (size_t)e->max_dim + 1);
    SD_EMBED_ALLOC(w->ref, (size_t)e->max_ni + 1);
    SD_EMBED_ALLOC(w->uta, (size_t)e->max_ni + 1);
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
    free(w->U);
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
    free(w->C);
    free(w->K);
    free(w->acc);
    free(w->col);
    free(w->r);
    free(w->lam);
    free(w->f);
    free(w->qt);
    free(w->tau_e);
    free(w->sap);
    free(w->wh);
    free(w->ref);
    free(w->uta);
    free(w->tp);
    free(w->agg_of_con);
    free(w);
}

/* The parent body's 6-vector in a stacked array (alpha, z): -1 when the node hangs on the inertial
 * frame. */
static inline int parent_slot(const sd_embedding *e, const sd_embedded_data *ed, int s)
{
    const int pb = e->nodes[s].parent_body;
    return pb < 0 ? -1 : ed->nodes->slot[pb];
}

/* Where body k (of node s, whose stacked vectors start at o) hangs: the offset of its parent's
 * 6-vector within the node (parent inside the node), or -1 (it hangs on the node's parent body). */
static inline int parent_inside(const sd_embedding *e, const sd_embedded_data *ed, int s, int k, int o)
{
    const int p = e->model->parent[k];
    return p >= 0 && e->node_of_body[p] == s ? ed->nodes->slot[p] - o : -1;
}

/* out (6) += W(s)^T f, f the node's stacked forces (dim): carried to the parent body (000 Eq 62's
 * last line, 64-65: E_S phi_S) body by body, phi(parent, k) of the rigid kernels, through the
 * node's bodies (children after parents, so descending order reaches each parent after all its
 * children). acc: max_dim scratch. */
static void forces_to_parent(const sd_embedding *e, const sd_embedded_data *ed, int s, const double *f, double *acc,
                             double *out)
{
    const sd_embed_node *nd = &e->nodes[s];
    const int o = e->vec_off[s];
    memcpy(acc, f, (size_t)nd->dim * sizeof(double));
    for (int l = nd->nb - 1; l >= 0; --l) {
        const int k = e->node_bodies[nd->body0 + l], pi = parent_inside(e, ed, s, k, o);
        double t[6], *dst = pi >= 0 ? acc + pi : out;
        sd_force_to_parent_plane(&ed->tree->Xup[k], ed->tree->hinge_plane[k], acc + 6 * l, t);
        for (int r = 0; r < 6; ++r) dst[r] += t[r];
    }
}

/* ap (dim) = W(s) src, src the parent body's motion (6): phi*(k, parent) body by body (000 Eq 52:
 * phi*_S E*_S), each body after its parent. */
static void motion_from_parent(const sd_embedding *e, const sd_embedded_data *ed, int s, const double *src, double *ap)
{
    const sd_embed_node *nd = &e->nodes[s];
    const int o = e->vec_off[s];
    for (int l = 0; l < nd->nb; ++l) {
        const int k = e->node_bodies[nd->body0 + l], pi = parent_inside(e, ed, s, k, o);
        sd_motion_to_child_plane(&ed->tree->Xup[k], ed->tree->hinge_plane[k], pi >= 0 ? ap + pi : src, ap + 6 * l);
    }
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
        for (int c = s + 1; c < e->nnodes; ++c) { /* (W(c) h)^T P(c) (W(c) h) over the child nodes */
            if (e->nodes[c].parent_node != s) continue;
            const int r0 = nw->slot[e->nodes[c].parent_body] - o, oc = e->vec_off[c];
            double h[6];
            for (int t = 0; t < 6; ++t) h[t] = H[(size_t)(r0 + t) * ni + i];
            motion_from_parent(e, ed, c, h, w->wh);
            for (int l = 0; l < e->nodes[c].nb; ++l) { /* P(c) is block-diagonal */
                double Pv[6];
                sd_sym6_mul(w->P + 6 * (size_t)(oc + 6 * l), w->wh + 6 * l, Pv);
                ref += sd_s6_dot(w->wh + 6 * l, Pv);
            }
        }
        if (!(ref > 0.0)) return 1; /* the speed carries nothing at all */
        w->ref[i] = ref;
    }
    for (int i = 0; i < ni; ++i)
        for (int j = 0; j < ni; ++j) L[i * ni + j] = D[i * ni + j] / sqrt(w->ref[i] * w->ref[j]);
    return sd_cholesky_factor(L, ni, 1e-13) >= 0;
}

/* max(a, b) for the scales below, inline (libm's fmax is a call); a NaN b leaves a, as fmax does. */
static inline double max2(double a, double b) { return b > a ? b : a; }

/* The 004 Eq 33 projection of a node with one speed (every rigid revolute or prismatic node, and an
 * aggregate with one independent speed): U = P h block by block, D = h U + J, G = U / D, the
 * kernel of forward_dynamics.c's project_one_speed. Returns 0 when done, 1 when D is negligible
 * against the cheap scale (the general path then decides with the careful test). */
static int one_speed_kernel(const double *restrict P, const double *restrict h, int nb, double J, double *restrict U,
                            double *restrict G, double *D, double *L, double *Dinv, double *logdet)
{
    double pscale = 0.0, h2 = 0.0, d = J;
    for (int l = 0; l < nb; ++l) {
        sd_sym6_mul(P + 36 * l, h + 6 * l, U + 6 * l);
        for (int r = 0; r < 6; ++r) {
            pscale = max2(pscale, fabs(P[36 * l + 7 * r]));
            h2 += h[6 * l + r] * h[6 * l + r];
        }
        d += sd_s6_dot(h + 6 * l, U + 6 * l);
    }
    const double dinv = 1.0 / d;
    if (!(d > 1e-13 * (pscale * h2 + J)) || !(dinv <= DBL_MAX)) return 1;
    D[0] = d;
    L[0] = sqrt(d);
    Dinv[0] = dinv;
    *logdet += log(d);
    for (int r = 0; r < 6 * nb; ++r) G[r] = U[r] * dinv;
    return 0;
}

/* B (the parent body's block of P(parent)) += phi P+ phi* for a rigid node (004 Eq 33), P+ = P - G U^T. */
static void rigid_to_parent(const sd_embedded_data *ed, int k, int ni, const double *P, const double *U,
                            const double *G, double *B)
{
    double Pp[36];
    for (int r = 0; r < 6; ++r)
        for (int c = 0; c < 6; ++c) {
            double v = P[6 * r + c];
            for (int i = 0; i < ni; ++i) v -= G[r * ni + i] * U[c * ni + i];
            Pp[6 * r + c] = v;
        }
    sd_sym6_add_to_parent_plane(&ed->tree->Xup[k], ed->tree->hinge_plane[k], Pp, B);
}

/* B (the parent body's 6x6 block of P(parent)) += W^T P+ W (000 Eq 62's last line) for an aggregate,
 * whose P+ (dim x dim) is not formed: P+ = P - U D^-1 U^T with U = P Hbar*, so W^T P+ W = W^T P W - K D^-1 K^T with
 * K = W^T U. Both products are carried up the node's bodies by the rigid kernels (phi(parent, k)
 * applied to a 6x6 and to U's columns), so the cost is the node's bodies times 6x6 work, never
 * dim x dim. */
static void inertia_to_parent(const sd_embedding *e, sd_embedded_data *ed, int s, double *B)
{
    struct sd_embed_fd_ws *w = ed->fd;
    const sd_embed_node *nd = &e->nodes[s];
    const int ni = nd->ni, nb = nd->nb, o = e->vec_off[s];
    const double *U = w->U + e->hbar_off[s], *Dinv = w->Dinv + w->d_off[s];
    double *C = w->C, *K = w->K, *Kp = K + (size_t)6 * ni * nb, *KD = Kp + (size_t)6 * ni, Cp[36] = {0};
    memcpy(C, w->P + 6 * (size_t)o, (size_t)36 * nb * sizeof(double));
    memcpy(K, U, (size_t)6 * ni * nb * sizeof(double));
    memset(Kp, 0, (size_t)6 * ni * sizeof(double));
    for (int l = nb - 1; l >= 0; --l) { /* children before parents: each body's sums are complete */
        const int k = e->node_bodies[nd->body0 + l], pi = parent_inside(e, ed, s, k, o);
        const sd_transform *X = &ed->tree->Xup[k];
        const int plane = ed->tree->hinge_plane[k];
        sd_sym6_add_to_parent_plane(X, plane, C + 36 * l, pi >= 0 ? C + 6 * pi : Cp);
        double *Kdst = pi >= 0 ? K + (size_t)pi * ni : Kp;
        for (int i = 0; i < ni; ++i) {
            double f[6], t[6];
            for (int r = 0; r < 6; ++r) f[r] = K[(size_t)(6 * l + r) * ni + i];
            sd_force_to_parent_plane(X, plane, f, t);
            for (int r = 0; r < 6; ++r) Kdst[r * ni + i] += t[r];
        }
    }
    for (int r = 0; r < 6; ++r) /* KD = K D^-1 */
        for (int i = 0; i < ni; ++i) {
            double v = 0.0;
            for (int j = 0; j < ni; ++j) v += Kp[r * ni + j] * Dinv[j * ni + i];
            KD[r * ni + i] = v;
        }
    for (int r = 0; r < 6; ++r) /* symmetric: the upper half, mirrored */
        for (int c = r; c < 6; ++c) {
            double v = Cp[6 * r + c];
            for (int i = 0; i < ni; ++i) v -= KD[r * ni + i] * Kp[c * ni + i];
            B[6 * r + c] += v;
            if (c != r) B[6 * c + r] += v;
        }
}

/* The Riccati gather over nodes (000 Eq 62; 004 Eq 33 with the node pieces): P(s) = M_s + the
 * children's W^T P+ W at the bodies they hang on, D = Hbar P Hbar* + Jbar, G = P Hbar* D^-1,
 * P+ = P - G Hbar P. log det M_e = sum log det D(s) (004 Cor 6.1) on the way. P(s) is block-diagonal
 * (each child adds to the block of the one body it hangs on), so it is kept as its bodies' 6x6
 * blocks, and an aggregate's P+ (dense: P minus a rank-ni term) is never formed: what the sweeps
 * need of it is W^T P+ W (inertia_to_parent; a rigid node's 6x6 P+ is formed, rigid_to_parent) and
 * P+ alpha+ = P alpha+ - G (P Hbar*)^T alpha+ (the forces). */
static sd_status riccati_gather(const sd_embedding *e, sd_embedded_data *ed)
{
    const sd_model *m = e->model;
    struct sd_embed_nodes_ws *nw = ed->nodes;
    struct sd_embed_fd_ws *w = ed->fd;
    w->factors_valid = 0;
    for (int k = 0; k < m->n; ++k) /* P(s) starts as the block-diagonal M_s */
        sd_rigid_inertia_to_sym6(m->rigid + 13 * k, w->P + 6 * (size_t)nw->slot[k]);
    w->logdet = 0.0;
    for (int s = e->nnodes - 1; s >= 0; --s) {
        const sd_embed_node *nd = &e->nodes[s];
        const int dim = nd->dim, ni = nd->ni, o = e->vec_off[s], ps = parent_slot(e, ed, s);
        const double *P = w->P + 6 * (size_t)o, *H = nw->Hbar + e->hbar_off[s], *J = nw->Jbar + nw->jb_off[s];
        double *U = w->U + e->hbar_off[s], *G = w->G + e->hbar_off[s], *B = ps >= 0 ? w->P + 6 * (size_t)ps : NULL;
        double *D = w->D + w->d_off[s], *L = w->Dchol + w->d_off[s], *Dinv = w->Dinv + w->d_off[s];
        const int one_speed = ni == 1 && !one_speed_kernel(P, H, nd->nb, J[0], U, G, D, L, Dinv, &w->logdet);
        if (!one_speed && ni > 0) {
            double pscale = 0.0, hscale = 0.0;
            for (int l = 0; l < nd->nb; ++l) /* U = P Hbar*, block by block */
                for (int i = 0; i < ni; ++i) {
                    double h[6], u[6];
                    for (int r = 0; r < 6; ++r) h[r] = H[(size_t)(6 * l + r) * ni + i];
                    sd_sym6_mul(P + 36 * l, h, u);
                    for (int r = 0; r < 6; ++r) U[(size_t)(6 * l + r) * ni + i] = u[r];
                }
            for (int l = 0; l < nd->nb; ++l)
                for (int r = 0; r < 6; ++r) pscale = max2(pscale, fabs(P[36 * l + 7 * r]));
            for (int i = 0; i < ni; ++i) {
                double h2 = 0.0;
                for (int r = 0; r < dim; ++r) h2 += H[(size_t)r * ni + i] * H[(size_t)r * ni + i];
                hscale = max2(hscale, h2);
            }
            for (int i = 0; i < ni; ++i) /* D = Hbar P Hbar* + Jbar (symmetric: the lower half, mirrored) */
                for (int j = 0; j <= i; ++j) {
                    double v = J[i * ni + j];
                    for (int r = 0; r < dim; ++r) v += H[(size_t)r * ni + i] * U[(size_t)r * ni + j];
                    D[i * ni + j] = D[j * ni + i] = L[i * ni + j] = L[j * ni + i] = v;
                }
            /* a pivot below 1e-13 of what P and Hbar* could give is round-off: M_e is singular there */
            double jscale = 0.0;
            for (int i = 0; i < ni; ++i) jscale = max2(jscale, J[i * ni + i]);
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
                    for (int j = 0; j < ni; ++j) v += U[(size_t)r * ni + j] * Dinv[j * ni + i];
                    G[(size_t)r * ni + i] = v;
                }
        }
        if (B && nd->kind == SD_EMBED_RIGID) rigid_to_parent(ed, e->node_bodies[nd->body0], ni, P, U, G, B);
        else if (B) inertia_to_parent(e, ed, s, B);
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
        const int dim = nd->dim, ni = nd->ni, o = e->vec_off[s], ps = parent_slot(e, ed, s);
        const double *P = w->P + 6 * (size_t)o, *H = nw->Hbar + e->hbar_off[s], *G = w->G + e->hbar_off[s];
        const double *Dinv = w->Dinv + w->d_off[s];
        double *zs = z + o, *zp = zplus + o;
        if (bias)
            for (int l = 0; l < nd->nb; ++l) { /* + b_s + P a_s, block by block */
                double Pa[6];
                sd_sym6_mul(P + 36 * l, nw->a + o + 6 * l, Pa);
                for (int r = 0; r < 6; ++r) zs[6 * l + r] += nw->b[o + 6 * l + r] + Pa[r];
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
        if (ps >= 0) forces_to_parent(e, ed, s, zp, w->acc, z + ps);
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
        const double *H = nw->Hbar + e->hbar_off[s], *G = w->G + e->hbar_off[s];
        double *aps = keep_ap ? ap + o : ap, *al = alpha + o;
        motion_from_parent(e, ed, s, ps >= 0 ? alpha + ps : a0, aps);
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
    for (int s = 0; s < e->nnodes; ++s) { /* f' = P+ alpha+ + z+ (000 Eq 68), P+ alpha+ = P alpha+ - G U^T alpha+ */
        const sd_embed_node *nd = &e->nodes[s];
        const int ni = nd->ni, o = e->vec_off[s];
        const double *P = w->P + 6 * (size_t)o, *U = w->U + e->hbar_off[s], *G = w->G + e->hbar_off[s];
        const double *ap = w->alpha_plus + o;
        for (int i = 0; i < ni; ++i) {
            double v = 0.0;
            for (int r = 0; r < nd->dim; ++r) v += U[(size_t)r * ni + i] * ap[r];
            w->uta[i] = v;
        }
        for (int l = 0; l < nd->nb; ++l) {
            double Pa[6];
            sd_sym6_mul(P + 36 * l, ap + 6 * l, Pa);
            for (int r = 0; r < 6; ++r) {
                double v = w->zplus[o + 6 * l + r] + Pa[r];
                for (int i = 0; i < ni; ++i) v -= G[(size_t)(6 * l + r) * ni + i] * w->uta[i];
                w->fp[o + 6 * l + r] = v;
            }
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
    sd_embed_node_pieces_without_w(e, ed, 1, f_ext);
    if ((st = riccati_gather(e, ed)) != SD_OK) return st;
    residual_gather(e, ed, tau, 1, w->z, w->zplus, w->eps, w->nu);
    double a0[6];
    sd_base_acceleration(m, a0); /* the base accelerates at -g: f includes the weights (004 Sec 8) */
    acceleration_scatter(e, ed, a0, 1, w->nu, qdd, w->alpha, w->alpha_plus, 1);
    double *qt = qdd_tree ? qdd_tree : w->qt;
    tree_accelerations(e, ed, qdd, qt);
    if (want_forces) {
        if (e->n_ta == 0 && (st = sd_embed_loop_frames(e, ed)) != SD_OK) return st; /* Ew, sd_constraint_force */
        interbody_forces(e, ed, qt, tau_tree);
    }
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
    sd_embed_node_pieces_without_w(e, ed, 0, NULL);
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
