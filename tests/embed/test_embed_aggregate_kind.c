/*
 * tests/embed/test_embed_aggregate_kind.c — the aggregate kind's own articulated step
 * (src/algorithms/node_aggregate.c: the members' 6x6 blocks, 000 Eq 62-65) against the generic
 * dense path that the flexible kind runs on the aggregate's (6 + ni)^2 node inertia M(k)
 * (node_flexible.c, the path aggregates with flexible members take). The same embedding and state
 * through both: qdd of the embedded forward dynamics with inter-body forces, M_e^-1 and log det M_e,
 * to 1e-12 relative, on models/four_bar.urdf, slider_crank.urdf and random trees closed by random
 * loops (aggregates with child nodes on their members, aggregates nested in aggregates).
 * Which path ran is checked too: the kind never forms the dense M(k) in the node workspace.
 * argv[1]: the models folder.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>
#include <soadyn/embed.h>

#include "embed/embed_internal.h"
#include "loops/random_loops.h"
#include "random_tree.h"
#include "test_util.h"

static double worst_qdd = 0.0, worst_minv = 0.0, worst_logdet = 0.0;
static int cases = 0, with_children = 0;

/* The aggregates to the generic dense path (generic = 1) or to their kind (0): the kind takes a node
 * whose member count it is given (struct sd_aggregate_members). */
static void route_aggregates(const sd_embedding *e, sd_embedded_data *ed, int generic)
{
    for (int s = 0; s < e->nnodes; ++s)
        if (e->nodes[s].kind == SD_EMBED_AGGREGATE) ed->nm->agg_ints[1][s] = generic ? 0 : e->nodes[s].nb;
}

/* Whether any aggregate's dense M(k) in the node workspace is nonzero. */
static int dense_mass_formed(const sd_embedding *e, const sd_embedded_data *ed)
{
    const struct sd_node_data *nd = ed->node_data->nodes;
    for (int s = 0; s < e->nnodes; ++s) {
        if (e->nodes[s].kind != SD_EMBED_AGGREGATE) continue;
        for (int i = 0; i < nd->dim[s] * nd->dim[s]; ++i)
            if (nd->Mm[nd->mat_off[s] + i] != 0.0) return 1;
    }
    return 0;
}

static double rel(const double *a, const double *b, int n)
{
    double num = 0.0, den = 1e-300;
    for (int i = 0; i < n; ++i) {
        num = fmax(num, fabs(a[i] - b[i]));
        den = fmax(den, fabs(b[i]));
    }
    return num / den;
}

/* Both paths at `states` random states of e (u, tau random; q closed from q_start perturbed). */
static void compare(const sd_embedding *e, uint64_t *rng, int states)
{
    const sd_model *m = e->model;
    const int ne = e->nv, nq = m->nq, nv = m->nv;
    sd_embedded_data *ed = sd_embedded_data_new(e);
    CHECK(ed != NULL);
    if (!ed) return;
    for (int s = 0; s < e->nnodes; ++s)
        if (e->nodes[s].kind == SD_EMBED_AGGREGATE)
            for (int c = s + 1; c < e->nnodes; ++c)
                if (e->nodes[c].parent_node == s) ++with_children, s = c = e->nnodes;
    double *q = malloc(sizeof(double) * (size_t)nq), *qc = malloc(sizeof(double) * (size_t)nq);
    double *du = malloc(sizeof(double) * (size_t)nv), *u = malloc(sizeof(double) * (size_t)(ne + 1));
    double *tau = malloc(sizeof(double) * (size_t)(ne + 1)), *qdd[2], *minv[2], logdet[2];
    for (int p = 0; p < 2; ++p) {
        qdd[p] = malloc(sizeof(double) * (size_t)(ne + 1));
        minv[p] = malloc(sizeof(double) * (size_t)(ne * ne + 1));
    }
    const sd_embedded_fd_options forces = {.interbody_forces = 1};
    for (int st = 0; st < states; ++st) {
        random_vector(rng, du, nv, 0.05);
        sd_configuration_integrate(m, e->q_start, du, 1.0, q);
        if (sd_embedded_close(e, ed, q, qc, NULL) != SD_OK) continue; /* a random loop locked there */
        random_vector(rng, u, ne, 1.0);
        random_vector(rng, tau, ne, 1.0);
        int ok = 1;
        for (int p = 0; p < 2; ++p) { /* p = 0: the aggregate kind; 1: the generic dense path */
            route_aggregates(e, ed, p);
            memset(ed->node_data->nodes->Mm, 0, (size_t)ed->node_data->nodes->mat_total * sizeof(double));
            ok = ok && sd_embedded_forward_dynamics(e, ed, qc, u, tau, NULL, qdd[p], NULL, &forces) == SD_OK;
            CHECK(dense_mass_formed(e, ed) == (p == 1 && e->naggs > 0));
            ok = ok && sd_embedded_mass_matrix_inverse(e, ed, qc, minv[p]) == SD_OK;
            ok = ok && sd_embedded_log_det(e, ed, qc, &logdet[p]) == SD_OK;
        }
        route_aggregates(e, ed, 0);
        CHECK(ok);
        if (!ok) {
            fprintf(stderr, "  %s\n", sd_embedded_error(ed));
            continue;
        }
        ++cases;
        const double eq = rel(qdd[0], qdd[1], ne), em = rel(minv[0], minv[1], ne * ne);
        const double el = fabs(logdet[0] - logdet[1]) / fmax(1.0, fabs(logdet[1]));
        worst_qdd = fmax(worst_qdd, eq);
        worst_minv = fmax(worst_minv, em);
        worst_logdet = fmax(worst_logdet, el);
        CHECK(eq <= 1e-12 && em <= 1e-12 && el <= 1e-12);
    }
    for (int p = 0; p < 2; ++p) free(qdd[p]), free(minv[p]);
    free(q), free(qc), free(du), free(u), free(tau);
    sd_embedded_data_free(ed);
}

static void test_file(const char *folder, const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", folder, file);
    sd_model *m = NULL;
    sd_error err;
    CHECK(sd_urdf_load_file(path, NULL, &m, &err) == SD_OK);
    if (!m) return;
    sd_embed_options o;
    sd_embed_options_init(&o);
    o.loops = "all";
    sd_embedding *e = sd_embedding_new(m, &o, &err);
    CHECK(e != NULL && e->naggs == 1);
    uint64_t rng = 7;
    if (e) compare(e, &rng, 8);
    sd_embedding_free(e);
    sd_model_free(m);
}

static void test_random(void)
{
    uint64_t rng = 20261128;
    int built = 0;
    for (int trial = 0; trial < 60; ++trial) {
        const int n = 3 + (int)(sd_random_uniform(&rng) * 12.0);
        const int flags = (trial % 3 == 0 ? RT_CHAIN : 0) | (trial % 4 == 1 ? RT_FREE_ROOT : 0) |
                          (trial % 5 == 2 ? RT_ONLY_1DOF : 0);
        sd_model *m;
        sd_embedding *e = embed_randomly(&rng, n, flags, &m, NULL);
        if (!e) continue;
        ++built;
        compare(e, &rng, 3);
        sd_embedding_free(e);
        sd_model_free(m);
    }
    printf("random trees with loops: %d embedded with aggregates\n", built);
    CHECK(built >= 25);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_embed_aggregate_kind MODELS_FOLDER\n");
        return 2;
    }
    test_file(argv[1], "four_bar.urdf");
    test_file(argv[1], "slider_crank.urdf");
    test_random();
    printf("aggregate kind vs the dense path, %d states (%d embeddings with a node on an aggregate's member): "
           "qdd %.2g, M^-1 %.2g, log det %.2g\n",
           cases, with_children, worst_qdd, worst_minv, worst_logdet);
    CHECK(cases >= 40 && with_children >= 3);
    return test_summary("test_embed_aggregate_kind");
}
