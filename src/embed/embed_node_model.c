/*
 * src/embed/embed_node_model.c — the embedded tree as a node model for the engine's sweeps (000 Sec 5;
 * src/algorithms/node_engine.h): one body per node of the embedding, a rigid node the body it is, an
 * aggregate S one node of the aggregate kind (SD_NODE_AGGREGATE), so that the articulated-body
 * recursion written once over nodes (forward_dynamics.c, innovations.c) runs the embedded system.
 *
 * An aggregate, to the engine, is what a flexible body is (001 Sec 5 and node_flexible.c):
 *   its rigid part  welded to the body it hangs on (no hinge speed, identity placement): its frame A is
 *                   the parent body's frame, V(A) = Xup V(parent)
 *   own coordinates the aggregate's independent speeds u_s (ni of them), in place of the modes
 *   node frames     its member bodies j: a child c of member j rides on node j, with node pose
 *                   pose(j in A), Y(c) = X(c <- j) Hbar*_j and the extra acceleration X(c <- j) a_s,j
 *   M(k), b(k)      with T = [W(s), Hbar*(s)] (dim_s x (6 + ni)): M(k) = T^T M_s T + diag(0, Jbar),
 *                   b(k) = T^T (M_s a_s + b_s), a(k) = 0: the node's force T^T (M_s alpha_S + b_s)
 *                   with alpha_S = T [alpha(A); u-dot_s] + a_s (000 Eq 52-60; embed_nodes.c's pieces)
 * so the flexible kind's elimination of own coordinates (D_f, g, P_R: 001 Eq 62-63) is the
 * aggregate's articulated step (000 Eq 62-65). The joint-level terms stay those of embed_nodes.c:
 * the armature as Jbar = X_S^T J X_S (in M(k)'s own block: 1/2 u^T Jbar u is kinetic energy), the
 * passive and dependent-armature forces tau_j = N^T (tau_passive - J qdd_c) added to the node's
 * generalized forces; a rigid node keeps its hinge's armature in the engine's D(k).
 *
 * The node model's motion is stored here from the tree workspace's (ed->tree after
 * sd_embed_velocities) and the nodes' pieces (embed_nodes.c): nothing is recomputed from q.
 */
#include <stdlib.h>
#include <string.h>

#include "algorithms/node_engine.h"
#include "embed/embed_internal.h"

void sd_embed_node_model_free(sd_model *nm)
{
    if (!nm) return;
    free(nm->parent);
    free(nm->subtree_end);
    free(nm->last_child);
    free(nm->q_index);
    free(nm->v_index);
    free(nm->nq_k);
    free(nm->nv_k);
    free(nm->v_body);
    free(nm->hinge);
    free(nm->placement);
    free(nm->hinge_axes);
    free(nm->rigid);
    free(nm->armature);
    free(nm->desc);
    free(nm->flex);
    free(nm->n_modes);
    free(nm->mode_q_index);
    free(nm->mode_v_index);
    free(nm->parent_node);
    free(nm->node_placement);
    free(nm->node_kind);
    free(nm);
}

/* The member index of body k in its aggregate node s (its place among the node's bodies). */
static int member_index(const sd_embedding *e, int s, int k)
{
    const sd_embed_node *nd = &e->nodes[s];
    for (int i = 0; i < nd->nb; ++i)
        if (e->node_bodies[nd->body0 + i] == k) return i;
    return -1;
}

sd_model *sd_embed_node_model_new(const sd_embedding *e)
{
    const sd_model *m = e->model;
    const int n = e->nnodes, nv = e->nv;
    sd_model *nm = calloc(1, sizeof *nm);
    if (!nm) return NULL;
    nm->name = m->name;
    nm->n = n;
    nm->nq = m->nq;
    nm->nv = nv;
    const size_t N = (size_t)n + 1, V = (size_t)nv + 1;
    nm->parent = malloc(N * sizeof(int));
    nm->subtree_end = malloc(N * sizeof(int));
    nm->last_child = malloc(N * sizeof(int));
    nm->q_index = calloc(N, sizeof(int));
    nm->v_index = calloc(N, sizeof(int));
    nm->nq_k = calloc(N, sizeof(int));
    nm->nv_k = calloc(N, sizeof(int));
    nm->v_body = calloc(V, sizeof(int));
    nm->hinge = calloc(N, sizeof(sd_hinge_type));
    nm->placement = calloc(N, sizeof(sd_transform));
    nm->hinge_axes = calloc(9 * N, sizeof(double));
    nm->rigid = calloc(13 * N, sizeof(double));
    nm->armature = calloc(V, sizeof(double));
    nm->desc = calloc(N, sizeof(sd_body_desc));
    nm->flex = calloc(N, sizeof(struct sd_flex_body *));
    nm->n_modes = calloc(N, sizeof(int));
    nm->mode_q_index = calloc(N, sizeof(int));
    nm->mode_v_index = calloc(N, sizeof(int));
    nm->parent_node = malloc(N * sizeof(int));
    nm->node_placement = calloc(N, sizeof(sd_transform));
    nm->node_kind = calloc(N, 1);
    if (!nm->parent || !nm->subtree_end || !nm->last_child || !nm->q_index || !nm->v_index || !nm->nq_k ||
        !nm->nv_k || !nm->v_body || !nm->hinge || !nm->placement || !nm->hinge_axes || !nm->rigid || !nm->armature ||
        !nm->desc || !nm->flex || !nm->n_modes || !nm->mode_q_index || !nm->mode_v_index || !nm->parent_node ||
        !nm->node_placement || !nm->node_kind) {
        sd_embed_node_model_free(nm);
        return NULL;
    }
    memcpy(nm->gravity, m->gravity, sizeof nm->gravity);
    nm->total_mass = m->total_mass;
    nm->has_armature = m->has_armature;
    for (int s = 0; s < n; ++s) {
        const sd_embed_node *nd = &e->nodes[s];
        const int k = e->node_bodies[nd->body0], pb = nd->parent_body;
        nm->parent[s] = nd->parent_node;
        nm->subtree_end[s] = s + 1;
        nm->last_child[s] = -1;
        nm->parent_node[s] = -1;
        nm->v_index[s] = nd->v0;
        nm->q_index[s] = m->q_index[k];
        sd_transform_identity(&nm->placement[s]);
        sd_transform_identity(&nm->node_placement[s]);
        for (int i = 0; i < nd->ni; ++i) nm->v_body[nd->v0 + i] = s;
        if (nd->kind == SD_EMBED_AGGREGATE) { /* welded to its parent body, its speeds its own coordinates */
            nm->node_kind[s] = SD_NODE_AGGREGATE;
            nm->hinge[s] = SD_HINGE_FIXED;
            nm->n_modes[s] = nd->ni;
            nm->mode_v_index[s] = nd->v0;
            nm->mode_q_index[s] = m->q_index[k];
            nm->desc[s].name = e->aggs[nd->aggregate].name;
            ++nm->nflex;
        } else { /* the body itself, its hinge on the parent body's frame or on a member of an aggregate */
            nm->node_kind[s] = SD_NODE_RIGID;
            nm->hinge[s] = m->hinge[k];
            nm->placement[s] = m->placement[k];
            memcpy(nm->hinge_axes + 9 * s, m->hinge_axes + 9 * k, 9 * sizeof(double));
            memcpy(nm->rigid + 13 * s, m->rigid + 13 * k, 13 * sizeof(double));
            nm->nq_k[s] = m->nq_k[k];
            nm->nv_k[s] = m->nv_k[k];
            for (int i = 0; i < nd->ni; ++i) nm->armature[nd->v0 + i] = m->armature[m->v_index[k] + i];
            nm->desc[s] = m->desc[k];
            nm->node_placement[s] = m->placement[k];
            if (m->flex && m->flex[k]) { /* a flexible body: its modes after its hinge's speeds */
                nm->node_kind[s] = SD_NODE_FLEXIBLE;
                nm->flex[s] = m->flex[k];
                nm->n_modes[s] = m->n_modes[k];
                nm->mode_v_index[s] = nd->v0 + m->nv_k[k];
                nm->mode_q_index[s] = m->mode_q_index[k];
                ++nm->nflex;
            }
            if (m->parent_node && m->parent_node[k] >= 0 && pb >= 0 && m->flex[pb]) { /* on its node */
                nm->parent_node[s] = m->parent_node[k];
                nm->node_placement[s] = m->node_placement[k];
            }
        }
        if (pb >= 0 && e->nodes[nd->parent_node].kind == SD_EMBED_AGGREGATE) /* rides on member pb */
            nm->parent_node[s] = member_index(e, nd->parent_node, pb);
    }
    for (int s = n - 1; s >= 0; --s) { /* subtrees are contiguous: nodes are numbered by their first body */
        const int p = nm->parent[s];
        if (p < 0) continue;
        if (nm->subtree_end[s] > nm->subtree_end[p]) nm->subtree_end[p] = nm->subtree_end[s];
        if (s > nm->last_child[p]) nm->last_child[p] = s;
    }
    return nm;
}

/* pose (12 per tree body, an sd_transform) of every member of an aggregate in its frame A (the
 * parent body's frame): the tree's Xup composed down the aggregate, parents before children. */
static void member_poses(const sd_embedding *e, const sd_embedded_data *ed, int s, sd_transform *pose)
{
    const sd_model *m = e->model;
    const sd_embed_node *nd = &e->nodes[s];
    for (int i = 0; i < nd->nb; ++i) {
        const int k = e->node_bodies[nd->body0 + i], p = m->parent[k];
        if (p == nd->parent_body) pose[k] = ed->tree->Xup[k];
        else sd_transform_compose(&pose[p], &ed->tree->Xup[k], &pose[k]);
    }
}

/* A flexible member k (the l-th of aggregate node s) in M(k) and b(k): its stacked velocity is
 * [V_k; eta_k] = [Hbar*_k; E_k] u_s + ... (embed_nodes.c: E_k X_S's rows of its modal speeds), its
 * mass the flexible kind's M_m (001 Eq 25) and bias b_m with its modal stiffness and damping (001 Eq
 * 38-40), so its terms in T^T M_s T and T^T (M_s a_s + b_s) are, per column i of u_s,
 *   K_i = M^rr h_i + M^rf E_i          (its force, carried up to A as a rigid member's M_j Hbar*_j)
 *   M(6 + c, 6 + i) += h_c . K_i + E_c . (M^fr h_i + M^ff E_i)
 *   F = M^rr a_k + M^rf e_k + b^r,  b(6 + i) += h_i . F + E_i . (M^fr a_k + M^ff e_k + b^f)
 * with h_i = Hbar*_k's column i, a_k its Coriolis acceleration in a_s and e_k = Xdot_S u on its modal
 * speeds (qdd_c). C gets M^rr for the carry up. */
static void flexible_member_terms(const sd_embedding *e, sd_embedded_data *ed, int s, int l, double *Mm, double *bm,
                                  int with_bias)
{
    const sd_model *m = e->model;
    const sd_embed_node *nd = &e->nodes[s];
    const struct sd_embed_nodes_ws *nw = ed->nodes;
    const struct sd_node_data *tn = ed->tree->nodes;
    struct sd_embed_nm_ws *w = ed->nm;
    const int k = e->node_bodies[nd->body0 + l], ni = nd->ni, dim = 6 + ni, nmk = m->n_modes[k], nf = 6 + nmk;
    const int row = nw->slot[k] - e->vec_off[s], te = nw->toff[k] + m->nv_k[k];
    const double *H = nw->Hbar + e->hbar_off[s], *X = ed->X + e->x_off[s];
    const double *Mf = tn->Mm + tn->mat_off[k]; /* (6 + nm)^2, row-major: [M^rr M^rf; M^fr M^ff] */
    double *C = w->C + 36 * l, *K = w->K + 6 * (size_t)ni * l, *h = w->T, *g = w->gm;
    for (int r = 0; r < 6; ++r)
        for (int c = 0; c < 6; ++c) C[6 * r + c] = Mf[r * nf + c];
    for (int i = 0; i < ni; ++i) { /* h_i, K_i and g_i = M^fr h_i + M^ff E_i */
        for (int r = 0; r < 6; ++r) h[6 * i + r] = H[(size_t)(row + r) * ni + i];
        for (int r = 0; r < nf; ++r) {
            double v = 0.0;
            for (int c = 0; c < 6; ++c) v += Mf[r * nf + c] * h[6 * i + c];
            for (int j = 0; j < nmk; ++j) v += Mf[r * nf + 6 + j] * X[(size_t)(te + j) * ni + i];
            if (r < 6) K[6 * i + r] = v;
            else g[r - 6] = v;
        }
        for (int c = 0; c <= i; ++c) {
            double v = sd_s6_dot(h + 6 * c, K + 6 * i);
            for (int j = 0; j < nmk; ++j) v += X[(size_t)(te + j) * ni + c] * g[j];
            Mm[(6 + c) * dim + 6 + i] += v;
        }
    }
    if (!with_bias) return;
    const double *ak = nw->a + nw->slot[k], *ek = ed->qdd_c + m->mode_v_index[k];
    const double *bf = tn->bm + tn->vec_off[k] + 6; /* b^f: with K_m eta + D_m eta-dot */
    double *F = w->Fb + 6 * l;
    for (int r = 0; r < nf; ++r) {
        double v = r < 6 ? nw->b[nw->slot[k] + r] : bf[r - 6]; /* b^r: minus f_ext (embed_nodes.c) */
        for (int c = 0; c < 6; ++c) v += Mf[r * nf + c] * ak[c];
        for (int j = 0; j < nmk; ++j) v += Mf[r * nf + 6 + j] * ek[j];
        if (r < 6) F[r] = v;
        else g[r - 6] = v;
    }
    for (int i = 0; i < ni; ++i) {
        double v = sd_s6_dot(h + 6 * i, F);
        for (int j = 0; j < nmk; ++j) v += X[(size_t)(te + j) * ni + i] * g[j];
        bm[6 + i] += v;
    }
}

/* b(k) of aggregate node s alone (the aggregate kind's, node_aggregate.c, which forms from the members
 * what it needs of M(k)): the rigid part W^T (M_s a_s + b_s), each member's force M_j a_j + b_j carried
 * up the aggregate with the tree's kernels, and the modal part Hbar (M_s a_s + b_s). */
static void aggregate_bias(const sd_embedding *e, sd_embedded_data *ed, int s, double *bm, int with_bias)
{
    const sd_model *m = e->model;
    const sd_data *t = ed->tree;
    const sd_embed_node *nd = &e->nodes[s];
    const struct sd_embed_nodes_ws *nw = ed->nodes;
    const int ni = nd->ni, o = e->vec_off[s], nb = nd->nb;
    memset(bm, 0, (size_t)(6 + ni) * sizeof(double));
    if (!with_bias) return;
    const double *H = nw->Hbar + e->hbar_off[s];
    double *Fb = ed->nm->Fb;
    for (int l = 0; l < nb; ++l) {
        const int k = e->node_bodies[nd->body0 + l], row = nw->slot[k] - o;
        double *fb = Fb + 6 * l;
        sd_rigid_inertia_mul(m->rigid + 13 * k, nw->a + nw->slot[k], fb);
        for (int r = 0; r < 6; ++r) fb[r] += nw->b[nw->slot[k] + r];
        for (int i = 0; i < ni; ++i) {
            double v = 0.0;
            for (int r = 0; r < 6; ++r) v += H[(size_t)(row + r) * ni + i] * fb[r];
            bm[6 + i] += v;
        }
    }
    for (int l = nb - 1; l >= 0; --l) {
        const int k = e->node_bodies[nd->body0 + l], p = m->parent[k];
        const int pl = p >= 0 && e->node_of_body[p] == s ? (nw->slot[p] - o) / 6 : -1;
        double f[6], *dst = pl >= 0 ? Fb + 6 * pl : bm;
        sd_force_to_parent_plane(&t->Xup[k], t->hinge_plane[k], Fb + 6 * l, f);
        for (int r = 0; r < 6; ++r) dst[r] += f[r];
    }
}

/* M(k) and b(k) of aggregate node s (the header), with T_j = [X(j <- A), Hbar*_j] of each member j:
 * the rigid block W^T M_s W, the rigid-modal block W^T M_s Hbar* and the rigid bias W^T (M_s a_s +
 * b_s) are the members' inertias, forces M_j Hbar*_j and M_j a_j + b_j carried up the aggregate to A
 * body by body, children before parents, with the tree's kernels (plane rotations where the hinge
 * allows: the cost of the gather it replaces, never a general 6x6 per member); the modal block
 * Hbar_j M_j Hbar*_j and modal bias per member (upper triangle, mirrored). */
static void aggregate_mass(const sd_embedding *e, sd_embedded_data *ed, int s, double *Mm, double *bm, int with_bias)
{
    if (ed->nm->agg.count[s] > 0) { /* the aggregate kind's own step forms what it needs of M(k) */
        aggregate_bias(e, ed, s, bm, with_bias);
        return;
    }
    const sd_model *m = e->model;
    const sd_data *t = ed->tree;
    const sd_embed_node *nd = &e->nodes[s];
    const struct sd_embed_nodes_ws *nw = ed->nodes;
    struct sd_embed_nm_ws *w = ed->nm;
    const int ni = nd->ni, dim = 6 + ni, o = e->vec_off[s], nb = nd->nb;
    const double *H = nw->Hbar + e->hbar_off[s];
    double *C = w->C, *K = w->K, *Fb = w->Fb, Rrr[36] = {0}, Krf[6 * 8] = {0}, *Kr = ni <= 8 ? Krf : w->Kr;
    double fbr[6] = {0, 0, 0, 0, 0, 0};
    memset(Mm, 0, (size_t)dim * (size_t)dim * sizeof(double));
    memset(bm, 0, (size_t)dim * sizeof(double));
    if (ni > 8) memset(Kr, 0, 6 * (size_t)ni * sizeof(double));
    for (int l = 0; l < nb; ++l) { /* each member's own terms */
        const int k = e->node_bodies[nd->body0 + l], row = nw->slot[k] - o;
        if (m->flex && m->flex[k]) { /* its modal mass block too */
            flexible_member_terms(e, ed, s, l, Mm, bm, with_bias);
            continue;
        }
        const double *Mk = m->rigid + 13 * k;
        double *h = w->T, *Kl = K + 6 * (size_t)ni * l;
        sd_rigid_inertia_to_sym6(Mk, C + 36 * l);
        for (int i = 0; i < ni; ++i) {
            for (int r = 0; r < 6; ++r) h[6 * i + r] = H[(size_t)(row + r) * ni + i];
            sd_rigid_inertia_mul(Mk, h + 6 * i, Kl + 6 * i);
            for (int c = 0; c <= i; ++c) Mm[(6 + c) * dim + 6 + i] += sd_s6_dot(h + 6 * c, Kl + 6 * i);
        }
        if (with_bias) {
            double *fb = Fb + 6 * l;
            sd_rigid_inertia_mul(Mk, nw->a + nw->slot[k], fb);
            for (int r = 0; r < 6; ++r) fb[r] += nw->b[nw->slot[k] + r];
            for (int i = 0; i < ni; ++i) bm[6 + i] += sd_s6_dot(h + 6 * i, fb);
        }
    }
    for (int l = nb - 1; l >= 0; --l) { /* carried up: descending order reaches a parent after its children */
        const int k = e->node_bodies[nd->body0 + l], p = m->parent[k];
        const int pl = p >= 0 && e->node_of_body[p] == s ? (nw->slot[p] - o) / 6 : -1;
        const sd_transform *X = &t->Xup[k];
        const int plane = t->hinge_plane[k];
        sd_sym6_add_to_parent_plane(X, plane, C + 36 * l, pl >= 0 ? C + 36 * pl : Rrr);
        double *Kdst = pl >= 0 ? K + 6 * (size_t)ni * pl : Kr;
        for (int i = 0; i < ni; ++i) {
            double f[6];
            sd_force_to_parent_plane(X, plane, K + 6 * ((size_t)ni * l + i), f);
            for (int r = 0; r < 6; ++r) Kdst[6 * i + r] += f[r];
        }
        if (with_bias) {
            double f[6], *dst = pl >= 0 ? Fb + 6 * pl : fbr;
            sd_force_to_parent_plane(X, plane, Fb + 6 * l, f);
            for (int r = 0; r < 6; ++r) dst[r] += f[r];
        }
    }
    const double *J = nw->Jbar + nw->jb_off[s];
    for (int r = 0; r < 6; ++r) {
        for (int c = 0; c < 6; ++c) Mm[r * dim + c] = Rrr[6 * r + c];
        for (int i = 0; i < ni; ++i) Mm[r * dim + 6 + i] = Kr[6 * i + r];
        bm[r] = fbr[r];
    }
    for (int i = 0; i < ni; ++i)
        for (int j = i; j < ni; ++j) Mm[(6 + i) * dim + 6 + j] += J[i * ni + j];
    for (int r = 0; r < dim; ++r)
        for (int c = 0; c < r; ++c) Mm[r * dim + c] = Mm[c * dim + r];
}

/* Node s (body k) riding on a node N of a flexible member j of aggregate node sp: j's modes move it by
 * the tree's Y(k) = X(k <- N) S_t (node_engine.h), and j's modal speeds are E_j u_s (embed_nodes.c), so
 * Y(s) += Y(k) E_j, and its extra acceleration gains Y(k) e_j (e_j: Xdot_S u on j's modal speeds;
 * the tree's a(k) already has the node frame's terms). */
static void member_node_child(const sd_embedding *e, sd_embedded_data *ed, int s, int with_bias, double *Y,
                              double a[6])
{
    const sd_model *m = e->model;
    const sd_embed_node *en = &e->nodes[s];
    const int k = e->node_bodies[en->body0], j = en->parent_body, sp = en->parent_node, ni = e->nodes[sp].ni;
    const struct sd_node_data *tn = ed->tree->nodes;
    const double *Yk = tn->Y + tn->att_off[k], *X = ed->X + e->x_off[sp], *ej = ed->qdd_c + m->mode_v_index[j];
    const int te = ed->nodes->toff[j] + m->nv_k[j];
    for (int r = 0; r < m->n_modes[j]; ++r)
        for (int c = 0; c < 6; ++c) {
            for (int i = 0; i < ni; ++i) Y[6 * i + c] += Yk[6 * r + c] * X[(size_t)(te + r) * ni + i];
            if (with_bias) a[c] += Yk[6 * r + c] * ej[r];
        }
}

void sd_embed_node_motion(const sd_embedding *e, sd_embedded_data *ed, int with_bias, const double *f_ext)
{
    const sd_model *m = e->model;
    const sd_model *nm = e->node_model;
    const sd_data *t = ed->tree;
    sd_data *d = ed->node_data;
    struct sd_node_data *nd = d->nodes;
    const struct sd_embed_nodes_ws *nw = ed->nodes;
    sd_transform *pose = ed->nm->pose, own;
    for (int s = 0; s < e->nnodes; ++s) {
        const sd_embed_node *en = &e->nodes[s];
        double *a = d->a + 6 * s, *b = d->b + 6 * s;
        if (en->kind == SD_EMBED_AGGREGATE) { /* welded to its parent body: M(k), b(k) of the header */
            if (nm->last_child[s] >= 0) member_poses(e, ed, s, pose); /* where its child nodes ride */
            sd_transform_identity(&own);
            double *Mm = nd->Mm + nd->mat_off[s], *bm = nd->bm + nd->vec_off[s];
            aggregate_mass(e, ed, s, Mm, bm, with_bias);
            memset(a, 0, 6 * sizeof(double));
            memcpy(b, bm, 6 * sizeof(double));
        } else { /* the tree's hinge and velocity terms */
            const int k = e->node_bodies[en->body0];
            own = t->Xup[k];
            memcpy(d->S + 6 * en->v0, t->S + 6 * m->v_index[k], 6 * (size_t)en->ni * sizeof(double));
            for (int r = 0; r < 6; ++r) {
                a[r] = with_bias ? t->a[6 * k + r] : 0.0;
                b[r] = with_bias ? t->b[6 * k + r] - (f_ext ? f_ext[6 * k + r] : 0.0) : 0.0;
            }
        }
        const struct sd_node_data *tn = t->nodes;
        if (nm->parent_node[s] < 0 || (en->kind == SD_EMBED_RIGID && nm->node_kind[nm->parent[s]] == SD_NODE_FLEXIBLE)) {
            d->Xup[s] = own; /* on a frame, or on a flexible body's node: the tree's placement */
            if (nm->parent_node[s] >= 0) {
                const int k = e->node_bodies[en->body0];
                memcpy(nd->Y + nd->att_off[s], tn->Y + tn->att_off[k], (size_t)(6 * nm->n_modes[nm->parent[s]]) * sizeof(double));
                memcpy(nd->node_pose + 12 * s, tn->node_pose + 12 * k, 12 * sizeof(double));
            }
        } else { /* riding on member j of an aggregate: Xup = pose(j in A) own, Y = X(s <- j) Hbar*_j, and
                  * the member's extra acceleration X(s <- j) a_s,j (node_engine.h "nodes on nodes") */
            const int j = en->parent_body, sp = en->parent_node, ni = e->nodes[sp].ni;
            const int row = nw->slot[j] - e->vec_off[sp];
            const double *H = nw->Hbar + e->hbar_off[sp];
            sd_transform_compose(&pose[j], &own, &d->Xup[s]);
            memcpy(nd->node_pose + 12 * s, &pose[j], 12 * sizeof(double));
            double *Y = nd->Y + nd->att_off[s];
            for (int i = 0; i < ni; ++i) {
                double h[6];
                for (int r = 0; r < 6; ++r) h[r] = H[(size_t)(row + r) * ni + i];
                sd_motion_to_child(&own, h, Y + 6 * i);
            }
            if (with_bias) {
                double aj[6];
                sd_motion_to_child(&own, nw->a + nw->slot[j], aj);
                for (int r = 0; r < 6; ++r) a[r] += aj[r];
            }
            if (tn && tn->att_off[e->node_bodies[en->body0]] >= 0) /* on a node of flexible member j */
                member_node_child(e, ed, s, with_bias, Y, a);
        }
        double *am = nd->am + nd->vec_off[s];
        memset(am, 0, (size_t)nd->dim[s] * sizeof(double));
        memcpy(am, a, 6 * sizeof(double));
        if (nm->node_kind[s] == SD_NODE_FLEXIBLE) { /* the tree's M_m, b_m (001 Eq 25, 38-40), with f_ext */
            const int k = e->node_bodies[en->body0], dim = nd->dim[s];
            double *bm = nd->bm + nd->vec_off[s];
            memcpy(nd->Mm + nd->mat_off[s], tn->Mm + tn->mat_off[k], (size_t)dim * (size_t)dim * sizeof(double));
            for (int r = 0; r < dim; ++r) bm[r] = with_bias ? tn->bm[tn->vec_off[k] + r] : 0.0;
            for (int r = 0; r < 6; ++r) bm[r] -= with_bias && f_ext ? f_ext[6 * k + r] : 0.0;
            memcpy(b, bm, 6 * sizeof(double));
        } else if (en->kind == SD_EMBED_RIGID) { /* the rigid node's M(k), b(k) as the motion scatter leaves them */
            sd_rigid_inertia_to_sym6(m->rigid + 13 * e->node_bodies[en->body0], nd->Mm + nd->mat_off[s]);
            memcpy(nd->bm + nd->vec_off[s], b, 6 * sizeof(double));
        }
    }
    d->current = SD_CURRENT_PLACEMENTS | SD_CURRENT_VELOCITIES;
}

/* The aggregates' members for the aggregate kind's own step (node_engine.h struct
 * sd_aggregate_members), pointing into the tree workspace and the node pieces of ed, and handed to
 * the node model's workspace. Every aggregate of rigid members is the kind's; one with a flexible
 * member has count[s] = 0, which leaves node s to the generic dense path. */
int sd_embed_aggregate_members_attach(const sd_embedding *e, sd_embedded_data *ed)
{
    const sd_model *m = e->model;
    struct sd_embed_nm_ws *w = ed->nm;
    struct sd_aggregate_members *a = &w->agg;
    const size_t N = (size_t)e->nnodes + 1, B = (size_t)m->n + 1, ni = (size_t)e->max_ni + 1;
    int *first = calloc(N, sizeof(int)), *count = calloc(N, sizeof(int)), *node_body = calloc(N, sizeof(int));
    int *joff = calloc(N, sizeof(int)), *parent = calloc(B, sizeof(int)), *body = calloc(B, sizeof(int));
    int *hoff = calloc(B, sizeof(int));
    w->agg_ints[0] = first, w->agg_ints[1] = count, w->agg_ints[2] = node_body, w->agg_ints[3] = joff;
    w->agg_ints[4] = parent, w->agg_ints[5] = body, w->agg_ints[6] = hoff;
    a->Pm = w->agg_Pm = malloc(36 * B * sizeof(double));
    a->K = w->agg_K = malloc(6 * ni * B * sizeof(double));
    a->scratch = w->agg_scratch = malloc((12 * ni + 6) * sizeof(double));
    if (!first || !count || !node_body || !joff || !parent || !body || !hoff || !a->Pm || !a->K || !a->scratch) return 0;
    const struct sd_embed_nodes_ws *nw = ed->nodes;
    for (int s = 0; s < e->nnodes; ++s) {
        const sd_embed_node *nd = &e->nodes[s];
        node_body[s] = nd->kind == SD_EMBED_AGGREGATE ? -1 : e->node_bodies[nd->body0];
        joff[s] = nw->jb_off[s];
        first[s] = nd->body0;
        for (int i = 0; i < nd->nb; ++i) { /* ascending bodies: a member's parent member comes first */
            const int l = nd->body0 + i, k = e->node_bodies[l], p = m->parent[k];
            body[l] = k;
            parent[l] = p >= 0 && e->node_of_body[p] == s ? nd->body0 + (nw->slot[p] - e->vec_off[s]) / 6 : -1;
            hoff[l] = e->hbar_off[s] + (nw->slot[k] - e->vec_off[s]) * nd->ni;
        }
        int rigid_members = 1;
        for (int i = 0; i < nd->nb; ++i) rigid_members &= !(m->flex && m->flex[e->node_bodies[nd->body0 + i]]);
        /* an aggregate holding a flexible member (flexible_member_terms) takes the generic dense path */
        if (nd->kind == SD_EMBED_AGGREGATE && rigid_members) count[s] = nd->nb;
    }
    a->first = first, a->count = count, a->node_body = node_body, a->joff = joff;
    a->parent = parent, a->body = body, a->hoff = hoff;
    a->Hbar = nw->Hbar, a->Jbar = nw->Jbar;
    a->Xup = ed->tree->Xup, a->plane = ed->tree->hinge_plane, a->rigid = m->rigid;
    a->max_ni = e->max_ni;
    ed->node_data->nodes->agg = a;
    /* A rigid node placed as its body (on a frame of the tree, not on an aggregate's member or a
     * flexible body's node) has the tree's Xup, so the tree's plane rotation holds for it too (the
     * node model's own test refuses every node of a model with nodes of other kinds). */
    const sd_model *nm = e->node_model;
    for (int s = 0; s < e->nnodes; ++s)
        if (nm->node_kind[s] == SD_NODE_RIGID && nm->parent_node[s] < 0)
            ed->node_data->hinge_plane[s] = ed->tree->hinge_plane[e->node_bodies[e->nodes[s].body0]];
    return 1;
}

struct sd_embed_nm_ws *sd_embed_nm_ws_new(const sd_embedding *e)
{
    struct sd_embed_nm_ws *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    const size_t ni = (size_t)e->max_ni + 1, nb = (size_t)e->max_dim / 6 + 1;
    w->T = malloc(6 * ni * sizeof(double));
    w->Kr = malloc(6 * ni * sizeof(double));
    w->C = malloc(36 * nb * sizeof(double));
    w->K = malloc(6 * ni * nb * sizeof(double));
    w->Fb = malloc(6 * nb * sizeof(double));
    w->pose = malloc(((size_t)e->model->n + 1) * sizeof(sd_transform));
    w->tau = calloc((size_t)e->nv + 1, sizeof(double));
    int max_modes = 0;
    for (int k = 0; k < e->model->n && e->model->n_modes; ++k)
        if (e->model->n_modes[k] > max_modes) max_modes = e->model->n_modes[k];
    w->gm = malloc(((size_t)max_modes + 1) * sizeof(double));
    if (!w->gm || !w->T || !w->Kr || !w->C || !w->K || !w->Fb || !w->pose || !w->tau) {
        sd_embed_nm_ws_free(w);
        return NULL;
    }
    return w;
}

void sd_embed_nm_ws_free(struct sd_embed_nm_ws *w)
{
    if (!w) return;
    free(w->T);
    free(w->Kr);
    free(w->C);
    free(w->K);
    free(w->Fb);
    free(w->pose);
    free(w->tau);
    free(w->gm);
    for (int i = 0; i < 7; ++i) free(w->agg_ints[i]);
    free(w->agg_Pm);
    free(w->agg_K);
    free(w->agg_scratch);
    free(w);
}
