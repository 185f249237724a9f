/*
 * src/algorithms/node_aggregate.c — the aggregate kind's own articulated step (node_engine.h,
 * SD_NODE_AGGREGATE; node_kinds.h "the aggregate kind"): the elimination of an embedded loop's
 * independent speeds with its members' 6x6 blocks, 000 Eq 62-65.
 *
 * Why its own operations. To the sweeps an aggregate is a node like a flexible body (its own
 * coordinates u_s, its members its node frames), and the flexible kind's dense step serves it: M(k) =
 * T^T M_s T formed by its owner, every child's P+ spread over the (6 + ni)^2 node inertia through
 * Y(c), then eliminated. But P(s) of 000 Eq 62 is block diagonal in the members: a child node adds to
 * the block of the one member it rides on, and the quantities the elimination needs are
 *   R   = W^T P W = sum_j X(j <- A)^T P_j X(j <- A)         the rigid block at the node frame A
 *   K   = W^T P Hbar* = sum_j X(j <- A)^T P_j Hbar*_j       (6 x ni)
 *   D_f = Hbar P Hbar* + Jbar = sum_j Hbar_j P_j Hbar*_j + Jbar   (ni x ni, 000 Eq 63)
 * each carried up the aggregate member by member with the rigid kind's fixed-size kernels (plane
 * rotations where the member's hinge allows), never a dense product. Then D_f, g and P_R = R - K D_f^-1
 * K^T as the flexible kind's (node_flexible.c: the same factor layout, so that the residual gather,
 * the scatter, the solves and log det read them alike). ni is 1 or 2 on the usual mechanisms (a
 * four-bar, a slider-crank, a gear pair, Cassie's knee and foot loops): the member loops are
 * instantiated for them with constant sizes.
 *
 * This is a core source (src/algorithms), not src/embed's: the articulated sweeps of
 * forward_dynamics.c and innovations.c call the kinds' operations through node_kinds.h, and the core
 * library links no component. The owner (src/embed/embed_node_model.c) hands the members over in
 * struct sd_aggregate_members (node_engine.h).
 *
 * Glossary (000 Sec 5): A the aggregate's frame (its parent body's), W = [X(j <- A)]_j, Hbar*_j the
 * member j's rows of Hbar* (its motion per unit independent speed), Jbar = X_S^T J X_S, P_j member j's
 * block of P(s), D_f, g, P_R as 001 Eq 62.
 */
#include <string.h>

#include "internal.h"
#include "node_kinds.h"

#define SD_AGG_INLINE static inline __attribute__((always_inline))

/* Each member's block P_j starts as its rigid inertia: before its first child node adds its P+
 * (sd_aggregate_inertia_from_child), or at the elimination when no child node rides on the aggregate. */
static void start_blocks(const struct sd_aggregate_members *a, int k)
{
    for (int l = a->first[k], e = l + a->count[k]; l < e; ++l)
        sd_rigid_inertia_to_sym6(a->rigid + 13 * a->body[l], a->Pm + 36 * l);
}

void sd_aggregate_inertia_from_child(const sd_model *m, struct sd_node_data *nd, int c, const double Pc[36])
{
    const struct sd_aggregate_members *a = nd->agg;
    const int p = m->parent[c], j = a->first[p] + m->parent_node[c], b = a->node_body[c];
    if (m->last_child[p] == c) start_blocks(a, p);
    double *Pj = a->Pm + 36 * j;
    if (b < 0) { /* an aggregate welded to member j: its frame is j's */
        for (int i = 0; i < 36; ++i) Pj[i] += Pc[i];
        return;
    }
    /* P_j += X(c <- j)^T P+(c) X(c <- j): the child's own placement in the member, not its node
     * placement in A (node_engine.h "nodes on nodes": Xup(c) = pose(j in A) X(c <- j)) */
    sd_sym6_add_to_parent_plane(&a->Xup[b], a->plane[b], Pc, Pj);
}

/* R, K, D_f of the header into the node's P (n = 6 + ni, row-major, as the flexible kind lays it out):
 * first every member's P_j Hbar*_j and Hbar_j P_j Hbar*_j with the blocks as the children left them,
 * then the blocks and the K columns carried up, children before parents (members are numbered
 * parents first). ni constant in the instances below. */
SD_AGG_INLINE void gather_members(const struct sd_aggregate_members *a, int k, int ni, double *P)
{
    const int l0 = a->first[k], l1 = l0 + a->count[k], n = 6 + ni, ks = 6 * a->max_ni;
    double R[36], h[12], kr[12];
    double *hc = ni <= 2 ? h : a->scratch, *Kr = ni <= 2 ? kr : a->scratch + 6 * ni;
    memset(R, 0, sizeof R);
    memset(Kr, 0, 6 * (size_t)ni * sizeof(double));
    for (int i = 0; i < ni; ++i)
        for (int j = 0; j < ni; ++j) P[(6 + i) * n + 6 + j] = a->Jbar[a->joff[k] + i * ni + j];
    for (int l = l0; l < l1; ++l) { /* K_j = P_j Hbar*_j, D_f += Hbar_j K_j (upper triangle) */
        const double *H = a->Hbar + a->hoff[l], *Pl = a->Pm + 36 * l;
        double *Kl = a->K + (size_t)ks * l;
        for (int i = 0; i < ni; ++i) {
            for (int r = 0; r < 6; ++r) hc[6 * i + r] = H[r * ni + i];
            sd_sym6_mul(Pl, hc + 6 * i, Kl + 6 * i);
            for (int j = 0; j <= i; ++j) P[(6 + j) * n + 6 + i] += sd_s6_dot(hc + 6 * j, Kl + 6 * i);
        }
    }
    for (int l = l1 - 1; l >= l0; --l) { /* carried up: X^T P_j X into the parent member's block, K as forces */
        const int b = a->body[l], pl = a->parent[l], plane = a->plane[b];
        const sd_transform *X = &a->Xup[b];
        sd_sym6_add_to_parent_plane(X, plane, a->Pm + 36 * l, pl >= 0 ? a->Pm + 36 * pl : R);
        const double *Kl = a->K + (size_t)ks * l;
        double *Kd = pl >= 0 ? a->K + (size_t)ks * pl : Kr;
        for (int i = 0; i < ni; ++i) {
            double f[6];
            sd_force_to_parent_plane(X, plane, Kl + 6 * i, f);
            for (int r = 0; r < 6; ++r) Kd[6 * i + r] += f[r];
        }
    }
    for (int r = 0; r < 6; ++r) {
        for (int c = 0; c < 6; ++c) P[r * n + c] = R[6 * r + c];
        for (int i = 0; i < ni; ++i) P[r * n + 6 + i] = P[(6 + i) * n + r] = Kr[6 * i + r];
    }
    for (int i = 0; i < ni; ++i)
        for (int j = 0; j < i; ++j) P[(6 + i) * n + 6 + j] = P[(6 + j) * n + 6 + i];
}

SD_NOINLINE static void gather_one(const struct sd_aggregate_members *a, int k, double *P) { gather_members(a, k, 1, P); }
SD_NOINLINE static void gather_two(const struct sd_aggregate_members *a, int k, double *P) { gather_members(a, k, 2, P); }
SD_NOINLINE static void gather_any(const struct sd_aggregate_members *a, int k, int ni, double *P)
{
    gather_members(a, k, ni, P);
}

sd_status sd_aggregate_eliminate(const sd_model *m, sd_data *d, struct sd_node_data *nd, int k, double PR[36])
{
    const struct sd_aggregate_members *a = nd->agg;
    const int ni = nd->dim[k] - 6;
    double *P = nd->P + nd->mat_off[k];
    if (m->last_child[k] < 0) start_blocks(a, k); /* no child node started them */
    if (ni == 1) gather_one(a, k, P);
    else if (ni == 2) gather_two(a, k, P);
    else gather_any(a, k, ni, P);
    return sd_flexible_eliminate_from(m, d, nd, k, P, PR); /* 001 Eq 62 = 000 Eq 63-65 */
}
