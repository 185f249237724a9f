/*
 * tests/embed/test_embed_model.c — the embedding's model and closure (embed_model.c,
 * embed_closure.c), each checked against the loops layer's own computations (constraint_kinematics.c:
 * the dense G, the position residuals, the row rates from a whole-tree acceleration scatter):
 *   - grouping on models/four_bar.urdf and slider_crank.urdf (one aggregate of the three moving
 *     links, one independent speed) and on random trees closed by random loops of every kind;
 *   - the node tree's invariants (nodes numbered by first body, parent_node < s, bodies and speeds
 *     partitioned, every aggregate hanging on one body, offsets the sums of the sizes);
 *   - X_S: G N = 0 on the embedded rows (G the loops layer's, N from sd_embedded_tree_speeds);
 *   - Newton: a perturbed configuration closed to 1e-13 (the loops layer's residuals), the
 *     independent 1-dof coordinates bit for bit;
 *   - qdd_c = Xdot_S u: the loops layer's row rates G qdd_c + Gdot u = 0 on the embedded rows;
 *   - the multipliers: Y1^T lambda = r_dep with lambda in range(Y1) (minimum norm);
 *   - every error the model refuses, by the text of its message (the loop's name).
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

static double worst_gn = 0.0, worst_close = 0.0, worst_rate = 0.0, worst_mult = 0.0;
static int closed_cases = 0, rate_cases = 0;

static sd_model *load(const char *folder, const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", folder, file);
    sd_model *m = NULL;
    sd_error err;
    const sd_status st = sd_urdf_load_file(path, NULL, &m, &err);
    CHECK(st == SD_OK);
    if (st != SD_OK) fprintf(stderr, "  %s: %s\n", path, err.message);
    return m;
}

/* The node tree's invariants (embed_internal.h). */
static void check_nodes(const sd_embedding *e)
{
    const sd_model *m = e->model;
    int *seen_body = calloc((size_t)m->n + 1, sizeof(int)), *seen_speed = calloc((size_t)m->nv + 1, sizeof(int));
    int vec = 0, mat = 0, hbar = 0, xt = 0, v = 0, ok = 1;
    for (int s = 0; s < e->nnodes; ++s) {
        const sd_embed_node *nd = &e->nodes[s];
        ok &= nd->parent_node < s && nd->nb >= 1 && nd->dim == 6 * nd->nb && nd->v0 == v;
        ok &= nd->parent_node == (nd->parent_body >= 0 ? e->node_of_body[nd->parent_body] : -1);
        ok &= e->vec_off[s] == vec && e->mat_off[s] == mat && e->hbar_off[s] == hbar;
        ok &= s == 0 || e->node_bodies[nd->body0] > e->node_bodies[e->nodes[s - 1].body0]; /* by first body */
        for (int l = 0; l < nd->nb; ++l) {
            const int k = e->node_bodies[nd->body0 + l], p = m->parent[k];
            ok &= e->node_of_body[k] == s && (l == 0 || k > e->node_bodies[nd->body0 + l - 1]);
            ok &= p == nd->parent_body || (p >= 0 && e->node_of_body[p] == s); /* one parent body */
            seen_body[k]++;
        }
        int nt = 0;
        for (int l = 0; l < nd->nb; ++l) nt += m->nv_k[e->node_bodies[nd->body0 + l]];
        ok &= nt == nd->nt;
        for (int i = 0; i < nd->nt; ++i) seen_speed[e->tree_speeds[nd->t0 + i]]++;
        if (nd->kind == SD_EMBED_RIGID) ok &= nd->nb == 1 && nd->ni == nd->nt && e->x_off[s] == -1;
        else {
            const sd_embed_aggregate *A = &e->aggs[nd->aggregate];
            ok &= A->node == s && A->rank + nd->ni == nd->nt && e->x_off[s] == xt;
            xt += nd->nt * nd->ni;
        }
        vec += nd->dim, mat += nd->dim * nd->dim, hbar += nd->dim * nd->ni, v += nd->ni;
    }
    for (int k = 0; k < m->n; ++k) ok &= seen_body[k] == 1;
    for (int i = 0; i < m->nv; ++i) ok &= seen_speed[i] == 1;
    ok &= v == e->nv && vec == e->vec_total && mat == e->mat_total && hbar == e->hbar_total && xt == e->x_total;
    for (int i = 0; i < e->nv; ++i) ok &= e->tree_speed_embedded[e->speed_tree[i]] == i;
    int nemb = 0;
    for (int i = 0; i < m->nv; ++i) nemb += e->tree_speed_embedded[i] >= 0;
    ok &= nemb == e->nv;
    CHECK(ok);
    free(seen_body);
    free(seen_speed);
}

static int row_embedded(const sd_embedding *e, int row)
{
    const sd_model *m = e->model;
    for (int c = 0; c < sd_model_nconstraints(m); ++c) {
        const int r0 = sd_model_constraint_row_offset(m, c);
        if (row >= r0 && row < r0 + sd_model_constraint_nrows(m, c)) return sd_embedding_constraint_embedded(e, c);
    }
    return 0;
}

/* G N = 0 on the embedded rows; the closure from a perturbed q; the rates of qdd_c; multipliers. */
static void check_closure(const sd_embedding *e, uint64_t *rng, double perturb)
{
    const sd_model *m = e->model;
    const int nq = m->nq, nv = m->nv, nc = sd_model_nconstraint_rows(m), ne = e->nv;
    sd_embedded_data *ed = sd_embedded_data_new(e);
    sd_data *d = sd_data_new(m);
    double *q = malloc(sizeof(double) * (size_t)nq), *q1 = malloc(sizeof(double) * (size_t)nq);
    double *du = malloc(sizeof(double) * (size_t)nv), *G = malloc(sizeof(double) * (size_t)(nc * nv + 1));
    double *u = calloc((size_t)ne + 1, sizeof(double)), *ut = malloc(sizeof(double) * (size_t)nv);
    double *res = malloc(sizeof(double) * (size_t)(nc + 1)), *ydot = malloc(sizeof(double) * (size_t)(nc + 1));
    double *alpha = malloc(sizeof(double) * 6 * (size_t)m->n);
    CHECK(ed && d);
    /* 1. Newton from q_start perturbed along every speed */
    random_vector(rng, du, nv, perturb);
    sd_configuration_integrate(m, e->q_start, du, 1.0, q);
    double left = -1.0;
    const sd_status st = sd_embedded_close(e, ed, q, q1, &left);
    if (st != SD_OK) {
        fprintf(stderr, "  close failed: %s\n", sd_embedded_error(ed));
        CHECK(st == SD_OK);
        goto done;
    }
    ++closed_cases;
    CHECK(sd_constraint_residuals(m, d, q1, NULL, res, NULL) == SD_OK);
    double rmax = 0.0;
    for (int i = 0; i < nc; ++i)
        if (row_embedded(e, i)) rmax = fmax(rmax, fabs(res[i]));
    worst_close = fmax(worst_close, rmax);
    CHECK(rmax <= 1e-13 && left <= 1e-13);
    for (int k = 0; k < m->n; ++k) { /* a 1-dof hinge whose speed is independent never moves */
        if (m->nv_k[k] != 1 || e->tree_speed_embedded[m->v_index[k]] < 0) continue;
        CHECK(memcmp(q + m->q_index[k], q1 + m->q_index[k], (size_t)m->nq_k[k] * sizeof(double)) == 0);
    }
    double q1_again[64];
    if (nq <= 64) { /* closed already: the same bits back */
        CHECK(sd_embedded_close(e, ed, q1, q1_again, NULL) == SD_OK);
        CHECK(memcmp(q1, q1_again, (size_t)nq * sizeof(double)) == 0);
    }
    /* 2. G N = 0 on the embedded rows, G the loops layer's at the closed q */
    CHECK(sd_constraint_jacobian(m, d, q1, G) == SD_OK);
    double gscale = 1.0;
    for (int i = 0; i < nc * nv; ++i) gscale = fmax(gscale, fabs(G[i]));
    for (int j = 0; j < ne; ++j) {
        memset(u, 0, sizeof(double) * (size_t)ne);
        u[j] = 1.0;
        CHECK(sd_embedded_tree_speeds(e, ed, NULL, u, ut) == SD_OK);
        double xs = 1.0;
        for (int i = 0; i < nv; ++i) xs = fmax(xs, fabs(ut[i]));
        for (int r = 0; r < nc; ++r) {
            if (!row_embedded(e, r)) continue;
            double s = 0.0;
            for (int i = 0; i < nv; ++i) s += G[(size_t)r * nv + i] * ut[i];
            worst_gn = fmax(worst_gn, fabs(s) / (gscale * xs));
            CHECK(fabs(s) <= 1e-12 * gscale * xs);
        }
        double back[512];
        if (ne <= 512) {
            sd_embedded_speeds_of_tree(e, ut, back);
            CHECK(fabs(back[j] - 1.0) == 0.0);
        }
    }
    /* 3. qdd_c: the loops layer's row rates of the embedded rows vanish at (u_tree = N u, qdd_c) */
    random_vector(rng, u, ne, 1.0);
    CHECK(sd_embed_prepare(e, ed, NULL) == SD_OK);
    CHECK(sd_embed_velocities(e, ed, u) == SD_OK);
    {
        sd_data *t = ed->tree; /* V, a current at (q, u_tree): alpha by the tree's own scatter */
        for (int k = 0; k < m->n; ++k) {
            double ap[6] = {0, 0, 0, 0, 0, 0}, hq[6];
            if (m->parent[k] >= 0) sd_motion_to_child(&t->Xup[k], alpha + 6 * m->parent[k], ap);
            sd_hinge_motion(m, t, k, ed->qdd_c, hq);
            for (int i = 0; i < 6; ++i) alpha[6 * k + i] = ap[i] + hq[i] + t->a[6 * k + i];
        }
        const double a0[6] = {0, 0, 0, 0, 0, 0};
        sd_loops_world_placements(m, t);
        sd_loops_row_rates(m, t, alpha, a0, ed->qdd_c, ydot);
        double us = 1.0;
        for (int i = 0; i < nv; ++i) us = fmax(us, fabs(ed->u_tree[i]) + fabs(ed->qdd_c[i]));
        for (int r = 0; r < nc; ++r) {
            if (!row_embedded(e, r)) continue;
            worst_rate = fmax(worst_rate, fabs(ydot[r]) / (gscale * us * us));
            if (getenv("DBG") && fabs(ydot[r]) > 1e-10 * gscale * us * us) printf("row %d ydot %g nc %d n %d\n", r, ydot[r], nc, m->n);
            CHECK(fabs(ydot[r]) <= 1e-10 * gscale * us * us);
        }
        ++rate_cases;
    }
    /* 4. multipliers: Y1^T lambda = r_dep, lambda = Y1 z (in Y1's range: the minimum norm) */
    for (int a = 0; a < e->naggs; ++a) {
        const sd_embed_aggregate *A = &e->aggs[a];
        const sd_embed_node *nd = &e->nodes[A->node];
        const int nr = A->nrows, rk = A->rank;
        if (rk == 0) continue;
        double *Y1 = malloc(sizeof(double) * (size_t)(nr * rk)), *lam = malloc(sizeof(double) * (size_t)nr);
        double *rdep = malloc(sizeof(double) * (size_t)rk), *Mn = malloc(sizeof(double) * (size_t)(rk * (rk + 1)));
        int row = 0;
        for (int ci = 0; ci < A->ncons; ++ci) { /* Y1 from the loops layer's G: the aggregate's rows, dep columns */
            const int c = e->agg_cons[A->cons0 + ci], r0 = sd_model_constraint_row_offset(m, c);
            for (int i = 0; i < sd_model_constraint_nrows(m, c); ++i, ++row)
                for (int j = 0; j < rk; ++j)
                    Y1[row * rk + j] = G[(size_t)(r0 + i) * nv + e->tree_speeds[nd->t0 + A->dep[j]]];
        }
        random_vector(rng, rdep, rk, 1.0);
        sd_embed_multipliers(e, ed, a, rdep, lam);
        double ymax = 0.0, lmax = 0.0;
        for (int i = 0; i < nr * rk; ++i) ymax = fmax(ymax, fabs(Y1[i]));
        for (int i = 0; i < nr; ++i) lmax = fmax(lmax, fabs(lam[i]));
        for (int j = 0; j < rk; ++j) {
            double s = -rdep[j];
            for (int i = 0; i < nr; ++i) s += Y1[i * rk + j] * lam[i];
            worst_mult = fmax(worst_mult, fabs(s) / (1.0 + ymax * lmax));
            CHECK(fabs(s) <= 1e-10 * (1.0 + ymax * lmax));
        }
        /* in range(Y1): lambda = Y1 z with z = (Y1^T Y1)^-1 Y1^T lambda, by Gaussian elimination */
        for (int i = 0; i < rk; ++i) {
            for (int j = 0; j < rk; ++j) {
                double s = 0.0;
                for (int r = 0; r < nr; ++r) s += Y1[r * rk + i] * Y1[r * rk + j];
                Mn[i * (rk + 1) + j] = s;
            }
            double s = 0.0;
            for (int r = 0; r < nr; ++r) s += Y1[r * rk + i] * lam[r];
            Mn[i * (rk + 1) + rk] = s;
        }
        for (int p = 0; p < rk; ++p)
            for (int i = p + 1; i < rk; ++i) {
                const double f = Mn[i * (rk + 1) + p] / Mn[p * (rk + 1) + p];
                for (int j = p; j <= rk; ++j) Mn[i * (rk + 1) + j] -= f * Mn[p * (rk + 1) + j];
            }
        for (int i = rk - 1; i >= 0; --i) {
            double s = Mn[i * (rk + 1) + rk];
            for (int j = i + 1; j < rk; ++j) s -= Mn[i * (rk + 1) + j] * rdep[j];
            rdep[i] = s / Mn[i * (rk + 1) + i]; /* z, over rdep */
        }
        for (int r = 0; r < nr; ++r) {
            double s = lam[r];
            for (int j = 0; j < rk; ++j) s -= Y1[r * rk + j] * rdep[j];
            worst_mult = fmax(worst_mult, fabs(s) / (1.0 + lmax));
            CHECK(fabs(s) <= 1e-9 * (1.0 + lmax));
        }
        free(Y1), free(lam), free(rdep), free(Mn);
    }
done:
    sd_embedded_data_free(ed);
    sd_data_free(d);
    free(q), free(q1), free(du), free(G), free(u), free(ut), free(res), free(ydot), free(alpha);
}

static void test_shipped(const char *folder)
{
    const char *files[2] = {"four_bar.urdf", "slider_crank.urdf"};
    uint64_t rng = 11;
    for (int f = 0; f < 2; ++f) {
        sd_model *m = load(folder, files[f]);
        if (!m) continue;
        sd_embed_options o;
        sd_embed_options_init(&o);
        o.loops = "all";
        sd_error err;
        sd_embedding *e = sd_embedding_new(m, &o, &err);
        CHECK(e != NULL);
        if (!e) {
            fprintf(stderr, "  %s: %s\n", files[f], err.message);
            sd_model_free(m);
            continue;
        }
        check_nodes(e);
        int bodies[16], cons[4], ind[4];
        CHECK(sd_embedding_naggregates(e) == 1 && sd_embedding_nv(e) == 1);
        CHECK(sd_embedding_aggregate_bodies(e, 0, bodies) == 3 && bodies[0] < bodies[1] && bodies[1] < bodies[2]);
        CHECK(sd_embedding_aggregate_constraints(e, 0, cons) == 1 && cons[0] == 0);
        CHECK(sd_embedding_aggregate_independent(e, 0, ind) == 1);
        CHECK(sd_embedding_constraint_embedded(e, 0) == 1 && sd_embedding_constraint_embedded(e, 1) == -1);
        CHECK(sd_embedding_speed_index(e, 0) == ind[0] && sd_embedding_speed_index(e, 1) == -1);
        CHECK(e->aggs[0].rank == 2 && e->aggs[0].nrows == 5); /* planar: 5 rows, 2 independent */
        char text[1024];
        const size_t need = sd_embedding_describe(e, text, sizeof text);
        CHECK(need == strlen(text) && strstr(text, sd_model_constraint_name(m, 0)) != NULL);
        char small[16];
        CHECK(sd_embedding_describe(e, small, sizeof small) == need && strlen(small) == 15);
        printf("  %s: %s\n", files[f], text);
        for (int t = 0; t < 5; ++t) check_closure(e, &rng, 0.05);
        /* the override: each joint in turn, when its Y1 is regular there */
        for (int k = 0; k < sd_model_nbodies(m); ++k) {
            if (sd_model_hinge_nv(m, k) != 1) continue;
            o.independent = sd_model_joint_name(m, k);
            sd_embedding *e2 = sd_embedding_new(m, &o, &err);
            if (!e2) {
                printf("    override '%s' refused: %s\n", o.independent, err.message);
                CHECK(strstr(err.message, sd_model_constraint_name(m, 0)) != NULL);
                continue;
            }
            CHECK(sd_embedding_aggregate_independent(e2, 0, ind) == 1 && ind[0] == sd_model_v_index(m, k));
            check_nodes(e2);
            check_closure(e2, &rng, 0.02);
            sd_embedding_free(e2);
        }
        o.independent = NULL;
        /* loops "none": every body a rigid node, speeds the tree's */
        o.loops = "none";
        sd_embedding *e0 = sd_embedding_new(m, &o, &err);
        CHECK(e0 && sd_embedding_naggregates(e0) == 0 && sd_embedding_nv(e0) == sd_model_nv(m) &&
              sd_embedding_nnodes(e0) == sd_model_nbodies(m) && sd_embedding_constraint_embedded(e0, 0) == 0);
        if (e0) check_nodes(e0);
        sd_embedding_free(e0);
        sd_embedding_free(e);
        sd_model_free(m);
    }
}

static void test_random(void)
{
    uint64_t rng = 20261126;
    int built = 0, refused = 0, no_loop = 0, aggs = 0, nested = 0, kinds[SD_CONSTRAINT_TYPE_COUNT] = {0};
    for (int trial = 0; trial < 120; ++trial) {
        const int n = 3 + (int)(sd_random_uniform(&rng) * 12.0);
        const int flags = (trial % 3 == 0 ? RT_CHAIN : 0) | (trial % 4 == 1 ? RT_FREE_ROOT : 0) |
                          (trial % 5 == 2 ? RT_ONLY_1DOF : 0);
        sd_model *tree = random_tree(&rng, n, flags);
        double *q0 = malloc(sizeof(double) * (size_t)sd_model_nq(tree));
        sd_configuration_random(tree, &rng, q0);
        sd_model *m = close_randomly(tree, &rng, q0, kinds);
        if (m) {
            sd_embed_options o;
            sd_embed_options_init(&o);
            o.loops = "all";
            o.q = q0;
            sd_error err;
            sd_embedding *e = sd_embedding_new(m, &o, &err);
            char keep[256] = "";
            if (!e && strstr(err.message, "no loop to embed")) { /* refused rightly: embed the others */
                ++no_loop;
                for (int c = 0; c < sd_model_nconstraints(m); ++c) {
                    char quoted[64];
                    snprintf(quoted, sizeof quoted, "'%s'", sd_model_constraint_name(m, c));
                    if (strstr(err.message, quoted) || !sd_model_constraint_nrows(m, c)) continue;
                    snprintf(keep + strlen(keep), sizeof keep - strlen(keep), "%s%s", keep[0] ? "," : "",
                             sd_model_constraint_name(m, c));
                }
                o.loops = keep[0] ? keep : "none";
                e = sd_embedding_new(m, &o, &err);
            }
            if (e) {
                ++built;
                check_nodes(e);
                aggs += e->naggs;
                for (int s = 0; s < e->nnodes; ++s)
                    nested += e->nodes[s].kind == SD_EMBED_AGGREGATE && e->nodes[s].parent_node >= 0 &&
                              e->nodes[e->nodes[s].parent_node].kind == SD_EMBED_AGGREGATE;
                /* the union: two embedded constraints share an aggregate iff linked by shared bodies;
                   checked one way: every constraint's bodies (but its top) are in its aggregate */
                for (int a = 0; a < e->naggs; ++a)
                    for (int ci = 0; ci < e->aggs[a].ncons; ++ci) {
                        int ba, bb;
                        sd_model_constraint_bodies(m, e->agg_cons[e->aggs[a].cons0 + ci], &ba, &bb);
                        const int top = e->nodes[e->aggs[a].node].parent_body;
                        CHECK((ba == top || ba < 0 || e->node_of_body[ba] == e->aggs[a].node) &&
                              (bb == top || bb < 0 || e->node_of_body[bb] == e->aggs[a].node));
                    }
                check_closure(e, &rng, 1e-3);
                sd_embedding_free(e);
            } else {
                ++refused; /* a split singular at q0 (random loops may lock or be degenerate there) */
                CHECK(strstr(err.message, "embedded loop '") != NULL || strstr(err.message, "constraint '") != NULL);
                printf("  refused: %s\n", err.message);
            }
            sd_model_free(m);
        }
        sd_model_free(tree);
        free(q0);
    }
    printf("random trees with loops: %d embedded (%d aggregates, %d nested in another; %d with a loop-less constraint "
           "left tree-augmented), %d refused; kinds",
           built, aggs, nested, no_loop, refused);
    for (int k = 0; k < SD_CONSTRAINT_TYPE_COUNT; ++k) printf(" %s %d", sd_constraint_type_name((sd_constraint_type)k), kinds[k]);
    printf("\n");
    CHECK(built >= 60 && refused <= built / 10);
}

/* Refused with `status` and a message holding each of `needles`. */
static void expect_error(const sd_model *m, const char *loops, const char *independent, sd_status status,
                         const char *n1, const char *n2)
{
    sd_embed_options o;
    sd_embed_options_init(&o);
    o.loops = loops;
    o.independent = independent;
    sd_error err;
    err.message[0] = '\0';
    sd_embedding *e = sd_embedding_new(m, &o, &err);
    CHECK(e == NULL && err.status == status);
    CHECK(!n1 || strstr(err.message, n1));
    CHECK(!n2 || strstr(err.message, n2));
    printf("  refused as expected: %s\n", err.message);
    sd_embedding_free(e);
}

static void test_errors(const char *folder)
{
    sd_model *m = load(folder, "four_bar.urdf");
    if (m) {
        const char *loop = sd_model_constraint_name(m, 0);
        expect_error(m, "nosuch", NULL, SD_E_ARGUMENT, "'nosuch'", "options.loops");
        expect_error(m, "all", "nosuch_joint", SD_E_ARGUMENT, "'nosuch_joint'", "options.independent");
        char two[512] = "";
        int nj = 0;
        for (int k = 0; k < sd_model_nbodies(m) && nj < 2; ++k)
            if (sd_model_hinge_nv(m, k) == 1) snprintf(two + strlen(two), sizeof two - strlen(two), "%s%s", nj++ ? "," : "", sd_model_joint_name(m, k));
        expect_error(m, "all", two, SD_E_ARGUMENT, loop, "mobility 1");
        /* the rocker's relative angle held far outside its range: Newton cannot close from there */
        sd_embed_options o;
        sd_embed_options_init(&o);
        o.loops = "all", o.independent = "rocker_joint";
        sd_error err;
        sd_embedding *e = sd_embedding_new(m, &o, &err);
        CHECK(e != NULL);
        if (e) {
            sd_embedded_data *ed = sd_embedded_data_new(e);
            double q[3], r = 0.0;
            memcpy(q, e->q_start, sizeof q);
            q[sd_model_q_index(m, sd_model_joint_index(m, "rocker_joint"))] += 2.5;
            const sd_status st = sd_embedded_close(e, ed, q, q, &r);
            CHECK(st == SD_E_SINGULAR && strstr(sd_embedded_error(ed), "embedded loop 'rocker_pivot'") &&
                  strstr(sd_embedded_error(ed), "four_bar.urdf:125") && r > 1e-3);
            printf("  refused as expected: %s\n", sd_embedded_error(ed));
            sd_embedded_data_free(ed);
            sd_embedding_free(e);
        }
        sd_model_free(m);
    }
    /* a weld between a body and its child on a fixed hinge: no speed, no loop; a source line named */
    sd_builder *b = sd_builder_new();
    sd_error err;
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "arm", d.hinge = SD_HINGE_REVOLUTE, d.mass = 1.0, d.com[0] = 0.5;
    for (int j = 0; j < 3; ++j) d.inertia[4 * j] = 0.01;
    CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    sd_body_desc_init(&d);
    d.name = "tip", d.parent = "arm", d.hinge = SD_HINGE_FIXED, d.placement.p[0] = 1.0, d.mass = 0.1;
    for (int j = 0; j < 3; ++j) d.inertia[4 * j] = 0.001;
    CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = "glued", c.type = SD_CONSTRAINT_WELD, c.body_a = "arm", c.body_b = "tip";
    c.frame_a.p[0] = 1.0, c.source_file = "glue.txt", c.source_line = 7, c.embed = 1;
    CHECK(sd_builder_add_constraint(b, &c, &err) == SD_OK);
    sd_model *g = NULL;
    CHECK(sd_builder_build(b, &g, &err) == SD_OK);
    sd_builder_free(b);
    if (g) {
        expect_error(g, NULL, NULL, SD_E_ARGUMENT, "'glued'", "glue.txt:7");
        sd_model_free(g);
    }
    /* a tree without constraints: names in options.loops are still checked */
    sd_model *pend = load(folder, "simple_pendulum.urdf");
    if (pend) {
        expect_error(pend, "c0", NULL, SD_E_ARGUMENT, "'c0'", "options.loops");
        sd_embedding *e = sd_embedding_new(pend, NULL, &err);
        CHECK(e && sd_embedding_naggregates(e) == 0 && sd_embedding_nv(e) == sd_model_nv(pend));
        sd_embedding_free(e);
        sd_model_free(pend);
    }
    /* flexible bodies outside aggregates: a tree with a flexible arm embeds as itself (every speed,
     * the modes included; test_embed_flexible for loops beside them) */
    sd_model *fx = load(folder, "flexible_arm.urdf");
    if (fx) {
        sd_embedding *e = sd_embedding_new(fx, NULL, &err);
        CHECK(e && sd_embedding_naggregates(e) == 0 && sd_embedding_nv(e) == sd_model_nv(fx));
        sd_embedding_free(e);
        sd_model_free(fx);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_embed_model MODELS_FOLDER\n");
        return 2;
    }
    test_shipped(argv[1]);
    test_random();
    test_errors(argv[1]);
    printf("worst: G N %.2g, closure residual %.2g (%d closed), rates G qdd_c + Gdot u %.2g (%d), multipliers %.2g\n",
           worst_gn, worst_close, closed_cases, worst_rate, rate_cases, worst_mult);
    return test_summary("test_embed_model");
}
