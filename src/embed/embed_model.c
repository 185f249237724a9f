/*
 * src/embed/embed_model.c — building an embedding (soadyn/embed.h, embed_design.md "The model"):
 *   1. which constraints are embedded (options->loops, else each constraint's flag);
 *   2. each embedded constraint's loop: the bodies on the tree paths from its two bodies up to
 *      (excluding) their lowest common ancestor L (002 Eq 10-13), merged by union-find into
 *      aggregates (the strongly connected components of the loop graph), each hanging on one body;
 *   3. the node tree: every other body a rigid node, each aggregate one node, numbered by first body
 *      (parent_node < s), with the offsets the sweeps' workspaces use;
 *   4. the split of each aggregate's tree speeds at a closed configuration: the rank of Y by the
 *      rank rule of src/loops/rank_rule.h (its singular values, as the tree-augmented layer judges
 *      the same rows), the first rank pivots of a column-pivoted QR of Y (LAPACK dgeqp3) dependent
 *      (002 Eq 19-20); or the caller's independent joints, checked by the same rule on Y1;
 *   5. q_start: that configuration closed by the embedding's own Newton (embed_closure.c).
 * Construction allocates; nothing here runs on an evaluation path. The queries follow.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed_closure.h"

/* after soadyn's headers: lapacke.h brings <complex.h> (see closed_dynamics.c) */
#include <lapacke.h>

void sd_embed_options_init(sd_embed_options *o)
{
    if (!o) return; /* nothing to fill (was a NULL dereference) */
    if (o) memset(o, 0, sizeof *o);
}

/* " (file:line)" of a constraint, or "" */
static void where(const sd_loop_constraint *c, char *buf, size_t size)
{
    buf[0] = '\0';
    if (c->source_file && c->source_line > 0) snprintf(buf, size, " (%s:%d)", c->source_file, c->source_line);
    else if (c->source_file) snprintf(buf, size, " (%s)", c->source_file);
}

static int find_root(int *uf, int k)
{
    while (uf[k] != k) k = uf[k] = uf[uf[k]];
    return k;
}

void sd_embedding_free(sd_embedding *e)
{
    if (!e) return;
    for (int a = 0; a < e->naggs; ++a) {
        free(e->aggs[a].dep);
        free(e->aggs[a].ind);
        free(e->aggs[a].name);
    }
    free(e->aggs);
    free(e->speed_tree);
    free(e->tree_speed_embedded);
    free(e->nodes);
    free(e->node_of_body);
    free(e->node_bodies);
    free(e->tree_speeds);
    free(e->agg_cons);
    free(e->embedded);
    free(e->q_start);
    free(e->vec_off);
    free(e->mat_off);
    free(e->hbar_off);
    free(e->x_off);
    sd_embed_node_model_free(e->node_model);
    free(e);
}

/* Which constraints are embedded: options->loops parsed (names checked). */
static sd_status choose_embedded(const sd_model *m, const char *spec, unsigned char *emb, sd_error *err)
{
    const int nc = sd_model_nconstraints(m);
    for (int c = 0; c < nc; ++c) emb[c] = (unsigned char)(spec ? 0 : m->loops->cons[c].embed != 0);
    if (!spec || strcmp(spec, "none") == 0) return SD_OK;
    if (strcmp(spec, "all") == 0) {
        for (int c = 0; c < nc; ++c) emb[c] = 1;
        return SD_OK;
    }
    const char *p = spec;
    while (*p) {
        while (*p == ' ' || *p == ',') ++p;
        const char *q = p;
        while (*q && *q != ',') ++q;
        const char *end = q;
        while (end > p && end[-1] == ' ') --end;
        if (end > p) {
            int found = -1;
            for (int c = 0; c < nc && found < 0; ++c)
                if (strlen(m->loops->cons[c].name) == (size_t)(end - p) &&
                    strncmp(m->loops->cons[c].name, p, (size_t)(end - p)) == 0)
                    found = c;
            if (found < 0)
                return sd_error_set(err, SD_E_ARGUMENT, "sd_embedding_new: options.loops names '%.*s', which is no constraint of model '%s'",
                                    (int)(end - p), p, m->name ? m->name : "");
            emb[found] = 1;
        }
        p = q;
    }
    return SD_OK;
}

/* The joints named in options->independent, as a flag per body (checked: every name a joint). */
static sd_status parse_independent(const sd_model *m, const char *spec, unsigned char *flag, sd_error *err)
{
    const char *p = spec;
    char name[256];
    while (*p) {
        while (*p == ' ' || *p == ',') ++p;
        const char *q = p;
        while (*q && *q != ',') ++q;
        const char *end = q;
        while (end > p && end[-1] == ' ') --end;
        if (end > p) {
            const size_t len = (size_t)(end - p) < sizeof name - 1 ? (size_t)(end - p) : sizeof name - 1;
            memcpy(name, p, len);
            name[len] = '\0';
            const int k = sd_model_joint_index(m, name);
            if (k < 0)
                return sd_error_set(err, SD_E_ARGUMENT, "sd_embedding_new: options.independent names '%s', which is no joint of model '%s'",
                                    name, m->name ? m->name : "");
            flag[k] = 1;
        }
        p = q;
    }
    return SD_OK;
}

/* Max |residual| of the model's constraints at q (all of them: the split configuration must close
 * every loop, and sd_assemble_configuration closes all at once). */
static double max_residual(const sd_model *m, sd_data *d, const double *q, double *res, int *worst)
{
    double r = 0.0;
    *worst = -1;
    if (sd_constraint_residuals(m, d, q, NULL, res, NULL) != SD_OK) return INFINITY;
    for (int c = 0; c < m->loops->ncons; ++c)
        for (int i = 0; i < m->loops->cons[c].nrows; ++i)
            if (!(fabs(res[m->loops->cons[c].row + i]) <= r)) r = fabs(res[m->loops->cons[c].row + i]), *worst = c;
    return r;
}

/* The tree's placements at q; with flexible bodies by the motion scatter, which also places the
 * bodies riding on their nodes (Xup through the deformed node frame, Y: sd_embed_prepare's). */
static void place_tree(const sd_model *m, sd_data *tree, const double *q)
{
    if (tree->nodes) sd_update_motion(m, tree, q, NULL, NULL, 0);
    else sd_update_placements(m, tree, q, 0);
}

/* A modal speed: a flexible body's modal coordinates' rates (after its hinge's, model.h). */
static int is_modal_speed(const sd_model *m, int v)
{
    const int k = m->v_body[v];
    return v >= m->v_index[k] + m->nv_k[k];
}

/* The split of aggregate a from Y at the current placements (embed_design.md "SPEEDS"). */
static sd_status split_aggregate(sd_embedding *e, struct sd_embed_closure_ws *w, sd_data *tree, const double *q,
                                 int a, const unsigned char *indep_flag, sd_error *err)
{
    const sd_model *m = e->model;
    sd_embed_aggregate *A = &e->aggs[a];
    sd_embed_node *nd = &e->nodes[A->node];
    const int nr = A->nrows, nt = nd->nt;
    char at[300];
    where(&m->loops->cons[e->agg_cons[A->cons0]], at, sizeof at);
    sd_embed_aggregate_frames(e, w, tree, a);
    sd_embed_aggregate_rows(e, w, tree, q, a, w->Y, NULL);
    double *Yc = malloc((size_t)nr * (size_t)nt * sizeof(double));
    double *tau = malloc((size_t)(nt + 1) * sizeof(double));
    lapack_int *jpvt = calloc((size_t)nt + 1, sizeof(lapack_int));
    A->dep = malloc((size_t)(nt + 1) * sizeof(int));
    A->ind = malloc((size_t)(nt + 1) * sizeof(int));
    sd_status st = SD_OK;
    if (!Yc || !tau || !jpvt || !A->dep || !A->ind) {
        st = sd_error_set(err, SD_E_MEMORY, "sd_embedding_new: out of memory");
        goto done;
    }
    memcpy(w->rows.A, w->Y, (size_t)nr * (size_t)nt * sizeof(double));
    const int rank = sd_row_space_factor(&w->rows, nr, nt);
    if (rank < 0) {
        st = sd_error_set(err, SD_E_SINGULAR, "embedded loop '%s'%s: the SVD of its rows failed", A->name, at);
        goto done;
    }
    A->rank = rank;
    A->project_rows = sd_row_space_dropped(&w->rows, nr, nt, rank) > SD_RANK_EXACT;
    nd->ni = nt - rank;
    /* the candidates for dependent speeds: the hinges' (a flexible member's modal coordinates stay
     * independent, so the closure's Newton moves hinge angles only), Y_h their columns */
    int nh = 0;
    for (int i = 0; i < nt; ++i)
        if (!is_modal_speed(m, e->tree_speeds[nd->t0 + i])) jpvt[nh++] = (lapack_int)i;
    for (int j = 0; j < nh; ++j) memcpy(Yc + (size_t)j * nr, w->Y + (size_t)jpvt[j] * nr, (size_t)nr * sizeof(double));
    if (nh < nt) { /* Y_h must have Y's rank by the same rule: the hinges alone close the loop */
        memcpy(w->rows.A, Yc, (size_t)nr * (size_t)nh * sizeof(double));
        const int rank_h = sd_row_space_factor(&w->rows, nr, nh);
        if (rank_h != rank) {
            st = sd_error_set(err, SD_E_NOT_SUPPORTED,
                              "embedded loop '%s'%s: its rows have rank %d, its hinges' columns rank %d: the loop "
                              "would need a modal coordinate among its dependent speeds, which an aggregate does not "
                              "offer (the closure solves for hinge angles only): make it tree-augmented",
                              A->name, at, rank, rank_h);
            goto done;
        }
    }
    int *hinge_col = A->dep; /* Y_h's column j is Y's hinge_col[j] (A->dep is filled after) */
    for (int j = 0; j < nh; ++j) hinge_col[j] = (int)jpvt[j];
    memset(jpvt, 0, (size_t)(nt + 1) * sizeof(lapack_int));
    if (nh > 0 && LAPACKE_dgeqp3(LAPACK_COL_MAJOR, nr, nh, Yc, nr, jpvt, tau) != 0) {
        st = sd_error_set(err, SD_E_SINGULAR, "embedded loop '%s'%s: the pivoted QR of its rows failed", A->name, at);
        goto done;
    }
    if (!indep_flag) { /* the pivoting's choice: dependent = the first rank pivots among the hinges */
        unsigned char *isdep = calloc((size_t)nt + 1, 1);
        if (!isdep) {
            st = sd_error_set(err, SD_E_MEMORY, "sd_embedding_new: out of memory");
            goto done;
        }
        for (int j = 0; j < rank; ++j) isdep[hinge_col[jpvt[j] - 1]] = 1;
        int nd_ = 0, ni_ = 0;
        for (int i = 0; i < nt; ++i) {
            if (isdep[i]) A->dep[nd_++] = i;
            else A->ind[ni_++] = i;
        }
        free(isdep);
        goto done;
    }
    /* the override: the listed joints' speeds independent, exactly the mobility, Y1 of full rank */
    int ni_ = 0, nd_ = 0;
    for (int i = 0; i < nt; ++i) { /* a modal speed is always independent (above) */
        const int v = e->tree_speeds[nd->t0 + i], k = m->v_body[v];
        if (indep_flag[k] || is_modal_speed(m, v)) A->ind[ni_++] = i;
        else A->dep[nd_++] = i;
    }
    if (ni_ != nt - rank) {
        st = sd_error_set(err, SD_E_ARGUMENT,
                          "embedded loop '%s'%s has mobility %d (%d tree speeds, %d independent rows) but "
                          "options.independent names joints with %d of its speeds",
                          A->name, at, nt - rank, nt, rank, ni_);
        goto done;
    }
    if (nd_ > 0) { /* Y1's rank by the same rule */
        for (int j = 0; j < nd_; ++j)
            memcpy(w->rows.A + (size_t)j * nr, w->Y + (size_t)A->dep[j] * nr, (size_t)nr * sizeof(double));
        const int r1 = sd_row_space_factor(&w->rows, nr, nd_);
        if (r1 < nd_)
            st = sd_error_set(err, SD_E_SINGULAR,
                              "embedded loop '%s'%s: the split of options.independent leaves Y1 singular (rank %d of "
                              "%d dependent speeds): those joints cannot all be independent here",
                              A->name, at, r1, nd_);
    }
done:
    free(Yc);
    free(tau);
    free(jpvt);
    return st;
}

/* Node offsets, speeds and sizes from the nodes' nb, nt, ni (after the split). */
static int lay_out(sd_embedding *e)
{
    const sd_model *m = e->model;
    const int nn = e->nnodes;
    e->vec_off = malloc((size_t)(nn + 1) * sizeof(int));
    e->mat_off = malloc((size_t)(nn + 1) * sizeof(int));
    e->hbar_off = malloc((size_t)(nn + 1) * sizeof(int));
    e->x_off = malloc((size_t)(nn + 1) * sizeof(int));
    e->speed_tree = malloc((size_t)(m->nv + 1) * sizeof(int));
    e->tree_speed_embedded = malloc((size_t)(m->nv + 1) * sizeof(int));
    if (!e->vec_off || !e->mat_off || !e->hbar_off || !e->x_off || !e->speed_tree || !e->tree_speed_embedded) return 0;
    int v = 0;
    e->vec_total = e->mat_total = e->hbar_total = e->x_total = 0;
    for (int i = 0; i < m->nv; ++i) e->tree_speed_embedded[i] = -1;
    for (int s = 0; s < nn; ++s) {
        sd_embed_node *nd = &e->nodes[s];
        nd->v0 = v;
        if (nd->kind == SD_EMBED_RIGID)
            for (int i = 0; i < nd->nt; ++i) e->speed_tree[v + i] = e->tree_speeds[nd->t0 + i];
        else {
            const sd_embed_aggregate *A = &e->aggs[nd->aggregate];
            for (int i = 0; i < nd->ni; ++i) e->speed_tree[v + i] = e->tree_speeds[nd->t0 + A->ind[i]];
        }
        for (int i = 0; i < nd->ni; ++i) e->tree_speed_embedded[e->speed_tree[v + i]] = v + i;
        v += nd->ni;
        e->vec_off[s] = e->vec_total;
        e->mat_off[s] = e->mat_total;
        e->hbar_off[s] = e->hbar_total;
        e->x_off[s] = nd->kind == SD_EMBED_AGGREGATE ? e->x_total : -1;
        e->vec_total += nd->dim;
        e->mat_total += nd->dim * nd->dim;
        e->hbar_total += nd->dim * nd->ni;
        if (nd->kind == SD_EMBED_AGGREGATE) e->x_total += nd->nt * nd->ni;
        if (nd->ni > e->max_ni) e->max_ni = nd->ni;
    }
    e->nv = v;
    return 1;
}

sd_embedding *sd_embedding_new(const sd_model *m, const sd_embed_options *options, sd_error *err)
{
    if (!m) {
        sd_error_set(err, SD_E_ARGUMENT, "sd_embedding_new: NULL model");
        return NULL;
    }
    sd_embed_options defaults;
    sd_embed_options_init(&defaults);
    const sd_embed_options *o = options ? options : &defaults;
    const int n = m->n, nc = sd_model_nconstraints(m);
    sd_embedding *e = calloc(1, sizeof *e);
    int *uf = malloc((size_t)(n + 1) * sizeof(int));
    int *top = malloc((size_t)(nc + 1) * sizeof(int));
    int *agg_of_root = malloc((size_t)(n + 1) * sizeof(int));
    unsigned char *in_loop = calloc((size_t)n + 1, 1), *indep = NULL;
    sd_data *tree = NULL;
    struct sd_embed_closure_ws *w = NULL;
    double *q = NULL, *res = NULL;
    sd_status st = SD_OK;
    if (!e || !uf || !top || !agg_of_root || !in_loop) goto oom;
    e->model = m;
    e->embedded = calloc((size_t)nc + 1, 1);
    if (!e->embedded) goto oom;
    if ((st = choose_embedded(m, o->loops, e->embedded, err)) != SD_OK) goto fail;

    int n_embedded = 0;
    for (int c = 0; c < nc; ++c) n_embedded += e->embedded[c] != 0;
    if (m->nflex > 0 && n_embedded > 0 && n_embedded < nc) {
        st = sd_error_set(err, SD_E_NOT_SUPPORTED,
                          "sd_embedding_new: model '%s' has flexible bodies: tree-augmented loops beside embedded ones "
                          "are not offered for it (their rows on the embedded speeds are formed with the rigid maps): "
                          "embed all its loops or none",
                          m->name ? m->name : "");
        goto fail;
    }
    /* 2. loops and their union (embed_design.md "AGGREGATES") */
    for (int k = 0; k < n; ++k) uf[k] = k;
    for (int c = 0; c < nc; ++c) {
        const sd_loop_constraint *con = &m->loops->cons[c];
        if (!e->embedded[c]) {
            ++e->n_ta;
            e->n_ta_rows += con->nrows;
            continue;
        }
        const int L = top[c] = sd_loops_loop_top(m, con);
        int first = -1, speeds = 0;
        const int side[2] = {con->body_a, con->body_b};
        for (int s = 0; s < 2; ++s)
            for (int k = side[s]; k >= 0 && k != L; k = m->parent[k]) {
                speeds += m->nv_k[k];
                in_loop[k] = 1;
                if (first < 0) first = k;
                else uf[find_root(uf, k)] = find_root(uf, first);
            }
        if (speeds == 0) {
            char at[300];
            where(con, at, sizeof at);
            st = sd_error_set(err, SD_E_ARGUMENT,
                              "constraint '%s'%s: its two sides are one rigid body (no hinge speed between them): "
                              "there is no loop to embed",
                              con->name, at);
            goto fail;
        }
    }

    /* aggregates, numbered by their first body (bodies ascend, so node order) */
    for (int k = 0; k < n; ++k) agg_of_root[k] = -1;
    e->node_of_body = malloc((size_t)(n + 1) * sizeof(int));
    e->nodes = calloc((size_t)n + 1, sizeof(sd_embed_node));
    e->aggs = calloc((size_t)n + 1, sizeof(sd_embed_aggregate));
    e->node_bodies = malloc((size_t)(n + 1) * sizeof(int));
    e->tree_speeds = malloc((size_t)(m->nv + 1) * sizeof(int));
    e->agg_cons = malloc((size_t)(nc + 1) * sizeof(int));
    if (!e->node_of_body || !e->nodes || !e->aggs || !e->node_bodies || !e->tree_speeds || !e->agg_cons) goto oom;
    for (int k = 0; k < n; ++k) {
        if (!in_loop[k]) {
            sd_embed_node *nd = &e->nodes[e->nnodes];
            nd->kind = SD_EMBED_RIGID;
            nd->aggregate = -1;
            nd->nb = 1;
            e->node_of_body[k] = e->nnodes++;
            continue;
        }
        const int r = find_root(uf, k);
        if (agg_of_root[r] < 0) {
            agg_of_root[r] = e->naggs;
            sd_embed_node *nd = &e->nodes[e->nnodes];
            nd->kind = SD_EMBED_AGGREGATE;
            nd->aggregate = e->naggs;
            e->aggs[e->naggs++].node = e->nnodes++;
        }
        const int s = e->aggs[agg_of_root[r]].node;
        e->nodes[s].nb++;
        e->node_of_body[k] = s;
    }
    for (int k = 0; k < n && m->nflex > 0; ++k) { /* an aggregate hangs on its parent's body frame */
        const sd_embed_node *nd = &e->nodes[e->node_of_body[k]];
        if (nd->kind != SD_EMBED_AGGREGATE) continue;
        const int p = m->parent[k];
        if (p < 0 || !m->flex[p] || m->parent_node[k] < 0 || e->node_of_body[p] == e->node_of_body[k]) continue;
        st = sd_error_set(err, SD_E_NOT_SUPPORTED,
                          "sd_embedding_new: body '%s' of an embedded loop hangs on a node of the flexible body '%s' "
                          "below the loop: an aggregate hangs on its parent's body frame (000 Eq 52: W(s) is one "
                          "rigid motion of that body), which the node's deflection does not move (embed the other "
                          "loops, or none: tree-augmented loops take it)",
                          m->desc[k].name, m->desc[p].name);
        goto fail;
    }
    { /* bodies and tree speeds grouped by node (ascending inside: bodies are visited in order) */
        int b = 0, t = 0;
        for (int s = 0; s < e->nnodes; ++s) {
            e->nodes[s].body0 = b;
            b += e->nodes[s].nb;
            e->nodes[s].nb = 0;
        }
        for (int k = 0; k < n; ++k) {
            sd_embed_node *nd = &e->nodes[e->node_of_body[k]];
            e->node_bodies[nd->body0 + nd->nb++] = k;
        }
        for (int s = 0; s < e->nnodes; ++s) {
            sd_embed_node *nd = &e->nodes[s];
            const int k0 = e->node_bodies[nd->body0];
            nd->dim = 6 * nd->nb;
            nd->t0 = t;
            for (int l = 0; l < nd->nb; ++l) {
                const int k = e->node_bodies[nd->body0 + l];
                /* a flexible body's modal speeds follow its hinge's (model.h): all its node's own */
                const int speeds = m->nv_k[k] + (m->n_modes ? m->n_modes[k] : 0);
                for (int i = 0; i < speeds; ++i) e->tree_speeds[t++] = m->v_index[k] + i;
            }
            nd->nt = t - nd->t0;
            nd->ni = nd->kind == SD_EMBED_RIGID ? nd->nt : 0;
            nd->parent_body = m->parent[k0]; /* the first body's parent: the aggregate's top L */
            nd->parent_node = nd->parent_body >= 0 ? e->node_of_body[nd->parent_body] : -1;
            if (nd->dim > e->max_dim) e->max_dim = nd->dim;
            if (nd->nt > e->max_nt) e->max_nt = nd->nt;
            for (int l = 1; l < nd->nb; ++l) { /* every body hangs inside the node or on its parent body */
                const int p = m->parent[e->node_bodies[nd->body0 + l]];
                if (p != nd->parent_body && (p < 0 || e->node_of_body[p] != s)) {
                    st = sd_error_set(err, SD_E_MODEL, "sd_embedding_new: internal error: aggregate of body '%s' hangs on two bodies",
                                      m->desc[k0].name);
                    goto fail;
                }
            }
        }
    }
    { /* constraints grouped by aggregate, in loops.h order; names joined by '+' */
        int cc = 0;
        for (int a = 0; a < e->naggs; ++a) {
            sd_embed_aggregate *A = &e->aggs[a];
            A->cons0 = cc;
            size_t len = 1;
            for (int c = 0; c < nc; ++c) {
                if (!e->embedded[c]) continue;
                const sd_loop_constraint *con = &m->loops->cons[c];
                const int k = con->body_a != top[c] && con->body_a >= 0 ? con->body_a : con->body_b;
                if (e->node_of_body[k] != A->node) continue;
                e->agg_cons[cc++] = c;
                A->ncons++;
                A->nrows += con->nrows;
                len += strlen(con->name) + 1;
            }
            if (A->nrows > e->max_rows) e->max_rows = A->nrows;
            if (!(A->name = malloc(len))) goto oom;
            A->name[0] = '\0';
            for (int i = 0; i < A->ncons; ++i) {
                if (i) strcat(A->name, "+");
                strcat(A->name, m->loops->cons[e->agg_cons[A->cons0 + i]].name);
            }
        }
    }

    /* 4. the split configuration, closed (every loop), then the split per aggregate */
    tree = sd_data_new(m);
    q = malloc((size_t)(m->nq + 1) * sizeof(double));
    res = malloc((size_t)(sd_model_nconstraint_rows(m) + 1) * sizeof(double));
    e->q_start = malloc((size_t)(m->nq + 1) * sizeof(double));
    if (!tree || !q || !res || !e->q_start) goto oom;
    if (o->q) memcpy(q, o->q, (size_t)m->nq * sizeof(double));
    else sd_configuration_reference(m, q);
    if (!sd_all_finite(q, (size_t)m->nq)) {
        st = sd_error_set(err, SD_E_ARGUMENT, "sd_embedding_new: options.q has a non-finite entry");
        goto fail;
    }
    if (nc > 0) {
        int worst;
        if (!(max_residual(m, tree, q, res, &worst) <= 1e-10)) {
            double left = 0.0;
            const sd_status as = sd_assemble_configuration(m, tree, q, NULL, 1e-13, 100, q, &left);
            const double r = max_residual(m, tree, q, res, &worst);
            if (as != SD_OK || !(r <= 1e-9)) {
                const sd_loop_constraint *con = &m->loops->cons[worst >= 0 ? worst : 0];
                char at[300];
                where(con, at, sizeof at);
                st = sd_error_set(err, SD_E_SINGULAR,
                                  "constraint '%s'%s: the loops cannot be assembled at the split configuration "
                                  "(residual %.3g left): %s",
                                  con->name, at, r, sd_data_error(tree));
                goto fail;
            }
        }
    }
    if (!(w = sd_embed_closure_ws_new(e))) goto oom;
    if (o->independent && o->independent[0]) {
        if (!(indep = calloc((size_t)n + 1, 1))) goto oom;
        if ((st = parse_independent(m, o->independent, indep, err)) != SD_OK) goto fail;
        for (int k = 0; k < n; ++k)
            if (indep[k] && e->nodes[e->node_of_body[k]].kind != SD_EMBED_AGGREGATE) {
                st = sd_error_set(err, SD_E_ARGUMENT,
                                  "sd_embedding_new: options.independent names joint '%s', which is in no embedded loop",
                                  sd_model_joint_name(m, k));
                goto fail;
            }
    }
    place_tree(m, tree, q);
    for (int a = 0; a < e->naggs; ++a)
        if ((st = split_aggregate(e, w, tree, q, a, indep, err)) != SD_OK) goto fail;
    if (!lay_out(e) || !(e->node_model = sd_embed_node_model_new(e))) goto oom;

    /* 5. q_start: closed by this embedding's Newton (round-off, in its own residuals) */
    {
        double *X = malloc((size_t)(e->x_total + 1) * sizeof(double));
        double *cond = malloc((size_t)(e->naggs + 1) * sizeof(double));
        if (!X || !cond) {
            free(X);
            free(cond);
            goto oom;
        }
        place_tree(m, tree, q);
        st = sd_embed_close_aggregates(e, w, tree, q, X, cond);
        free(X);
        free(cond);
        if (st != SD_OK) {
            sd_error_set(err, st, "%s", sd_data_error(tree));
            goto fail;
        }
        memcpy(e->q_start, q, (size_t)m->nq * sizeof(double));
    }
    goto done;
oom:
    st = sd_error_set(err, SD_E_MEMORY, "sd_embedding_new: out of memory");
fail:
    sd_embedding_free(e);
    e = NULL;
done:
    (void)st;
    sd_embed_closure_ws_free(w);
    sd_data_free(tree);
    free(q);
    free(res);
    free(uf);
    free(top);
    free(agg_of_root);
    free(in_loop);
    free(indep);
    return e;
}

/* ---------------------------------------------------------------- queries */

const sd_model *sd_embedding_model(const sd_embedding *e) { return e ? e->model : NULL; }
int sd_embedding_nv(const sd_embedding *e) { return e ? e->nv : 0; }
int sd_embedding_speed_index(const sd_embedding *e, int i) { return e && i >= 0 && i < e->nv ? e->speed_tree[i] : -1; }
int sd_embedding_nnodes(const sd_embedding *e) { return e ? e->nnodes : 0; }
int sd_embedding_naggregates(const sd_embedding *e) { return e ? e->naggs : 0; }

int sd_embedding_constraint_embedded(const sd_embedding *e, int c)
{
    return e && c >= 0 && c < sd_model_nconstraints(e->model) ? e->embedded[c] : -1;
}

static int valid_agg(const sd_embedding *e, int a) { return e && a >= 0 && a < e->naggs; }

int sd_embedding_aggregate_bodies(const sd_embedding *e, int a, int *out)
{
    if (!valid_agg(e, a)) return 0;
    const sd_embed_node *nd = &e->nodes[e->aggs[a].node];
    if (out) memcpy(out, e->node_bodies + nd->body0, (size_t)nd->nb * sizeof(int));
    return nd->nb;
}

int sd_embedding_aggregate_constraints(const sd_embedding *e, int a, int *out)
{
    if (!valid_agg(e, a)) return 0;
    const sd_embed_aggregate *A = &e->aggs[a];
    if (out) memcpy(out, e->agg_cons + A->cons0, (size_t)A->ncons * sizeof(int));
    return A->ncons;
}

int sd_embedding_aggregate_independent(const sd_embedding *e, int a, int *out)
{
    if (!valid_agg(e, a)) return 0;
    const sd_embed_node *nd = &e->nodes[e->aggs[a].node];
    if (out)
        for (int i = 0; i < nd->ni; ++i) out[i] = e->tree_speeds[nd->t0 + e->aggs[a].ind[i]];
    return nd->ni;
}

int sd_embedding_aggregate_parent(const sd_embedding *e, int a)
{
    return valid_agg(e, a) ? e->nodes[e->aggs[a].node].parent_body : -1;
}

/* snprintf appended at *len (which counts what would have been written, like snprintf). */
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char dummy[1];
    const int n = *len < size ? vsnprintf(buf + *len, size - *len, fmt, ap) : vsnprintf(dummy, 0, fmt, ap);
    va_end(ap);
    if (n > 0) *len += (size_t)n;
}

size_t sd_embedding_describe(const sd_embedding *e, char *buf, size_t size)
{
    char empty[1];
    if (!buf || size == 0) buf = empty, size = 0;
    else buf[0] = '\0';
    size_t len = 0;
    if (!e) return 0;
    const sd_model *m = e->model;
    append(buf, size, &len, "Embedding: %d speeds of the tree's %d, %d nodes, %d aggregate%s.", e->nv, m->nv, e->nnodes,
           e->naggs, e->naggs == 1 ? "" : "s");
    for (int a = 0; a < e->naggs; ++a) {
        const sd_embed_aggregate *A = &e->aggs[a];
        const sd_embed_node *nd = &e->nodes[A->node];
        append(buf, size, &len, " Aggregate %d (constraints %s): bodies", a, A->name);
        for (int l = 0; l < nd->nb; ++l)
            append(buf, size, &len, "%s '%s'", l ? "," : "", m->desc[e->node_bodies[nd->body0 + l]].name);
        if (nd->parent_body >= 0) append(buf, size, &len, " on '%s'", m->desc[nd->parent_body].name);
        else append(buf, size, &len, " on the inertial frame");
        append(buf, size, &len, "; %d tree speeds, %d independent:", nd->nt, nd->ni);
        for (int i = 0; i < nd->ni; ++i) {
            const int v = e->tree_speeds[nd->t0 + A->ind[i]], k = m->v_body[v];
            if (is_modal_speed(m, v))
                append(buf, size, &len, "%s '%s.eta%d'", i ? "," : "", m->desc[k].name, v - m->mode_v_index[k] + 1);
            else if (m->nv_k[k] > 1) append(buf, size, &len, "%s '%s'[%d]", i ? "," : "", sd_model_joint_name(m, k), v - m->v_index[k]);
            else append(buf, size, &len, "%s '%s'", i ? "," : "", sd_model_joint_name(m, k));
        }
        if (nd->ni == 0) append(buf, size, &len, " none (the loop locks its bodies)");
        append(buf, size, &len, ".");
    }
    if (e->n_ta > 0) {
        append(buf, size, &len, " Tree-augmented:");
        int i = 0;
        for (int c = 0; c < sd_model_nconstraints(m); ++c)
            if (!e->embedded[c]) append(buf, size, &len, "%s '%s'", i++ ? "," : "", m->loops->cons[c].name);
        append(buf, size, &len, ".");
    }
    return len;
}
