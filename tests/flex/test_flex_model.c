/*
 * tests/flex/test_flex_model.c — flexible bodies in the model layer: the layout of q and u with the
 * modes after each hinge block (indices, nq, nv, v_body, v_parent), the node a child rides on and
 * its placement, the builder's errors (parent_node out of range or on a rigid parent, descriptions
 * refused with the body's name), configurations on modal coordinates, labels, rigid models laid out
 * as before, closure constraints accepted, and a workspace for a flexible model.
 */
#include <stdint.h>
#include <string.h>

#include <soadyn/flex.h>
#include <soadyn/soadyn.h>

#include "internal.h"
#include "random_tree.h"
#include "sim/sim_internal.h"
#include "test_util.h"

/* A flexible description of a bar along x: n nodes at x = L (j+1)/n, point masses, nm bending modes
 * in the x-y plane (translation y = (x/L)^(r+2), rotation z its slope), K_m = diag(r+1). The arrays
 * live in `store` (the builder copies them). */
typedef struct bar {
    double pos[3 * 8], mass[8], modes[6 * 8 * 4], K[16];
    sd_flex_desc d;
} bar;

static void make_bar(bar *b, int n, int nm, double L, const char *source)
{
    memset(b, 0, sizeof *b);
    for (int j = 0; j < n; ++j) {
        b->pos[3 * j] = L * (j + 1) / n;
        b->mass[j] = 0.2 + 0.1 * j;
    }
    for (int r = 0; r < nm; ++r) {
        for (int j = 0; j < n; ++j) {
            const double s = b->pos[3 * j] / L;
            double *P = b->modes + 6 * n * r + 6 * j;
            P[2] = (r + 2) * pow(s, r + 1) / L; /* rotation about z: dy/dx */
            P[4] = pow(s, r + 2);               /* translation along y */
        }
        b->K[nm * r + r] = r + 1.0;
    }
    sd_flex_desc_init(&b->d);
    b->d.n_nodes = n;
    b->d.node_position = b->pos;
    b->d.node_mass = b->mass;
    b->d.n_modes = nm;
    b->d.modes = b->modes;
    b->d.stiffness = b->K;
    b->d.source_file = source;
}

static void body(sd_body_desc *d, const char *name, const char *parent, sd_hinge_type h, int node, double mass)
{
    sd_body_desc_init(d);
    d->name = name;
    d->parent = parent;
    d->hinge = h;
    d->parent_node = node;
    d->mass = mass;
    d->com[0] = 0.1;
    for (int i = 0; i < 3; ++i) d->inertia[4 * i] = 0.01 * mass + 0.001;
    d->placement.p[0] = 0.3;
    d->placement.p[1] = 0.05;
    d->source_file = "robot.urdf";
    d->source_line = 10 + (int)strlen(name);
}

/* base (free, flexible 2 modes, 4 nodes) -> arm (revolute on base node 1, flexible 3 modes, linearised)
 * -> hand (revolute on arm node 2, rigid); base -> side (prismatic on base's frame, rigid). Added in
 * the order hand, arm, side, base (preorder: base, arm, hand, side), with set_flexible before and after
 * add_body. */
static sd_model *build_tree(int flexible, sd_error *err)
{
    sd_builder *B = sd_builder_new();
    bar base, arm;
    make_bar(&base, 4, 2, 1.0, "base.json");
    make_bar(&arm, 3, 3, 0.6, "arm.json");
    arm.d.mass_model = SD_FLEX_LINEARISED;
    sd_body_desc d;
    if (flexible) CHECK(sd_builder_set_flexible(B, "arm", &arm.d, err) == SD_OK);
    body(&d, "hand", "arm", SD_HINGE_REVOLUTE, flexible ? 2 : -1, 0.5);
    CHECK(sd_builder_add_body(B, &d, err) == SD_OK);
    body(&d, "arm", "base", SD_HINGE_REVOLUTE, flexible ? 1 : -1, 1.5);
    CHECK(sd_builder_add_body(B, &d, err) == SD_OK);
    body(&d, "side", "base", SD_HINGE_PRISMATIC, -1, 0.7);
    CHECK(sd_builder_add_body(B, &d, err) == SD_OK);
    body(&d, "base", NULL, SD_HINGE_FREE, -1, 3.0);
    CHECK(sd_builder_add_body(B, &d, err) == SD_OK);
    if (flexible) CHECK(sd_builder_set_flexible(B, "base", &base.d, err) == SD_OK);
    memset(&base, 0xff, sizeof base); /* the builder must have copied them */
    memset(&arm, 0xff, sizeof arm);
    sd_model *m = NULL;
    if (sd_builder_build(B, &m, err) != SD_OK) m = NULL;
    sd_builder_free(B);
    return m;
}

static void test_layout(void)
{
    sd_error err;
    sd_model *m = build_tree(1, &err);
    CHECK(m != NULL);
    if (!m) {
        fprintf(stderr, "build: %s\n", err.message);
        return;
    }
    const int base = sd_model_body_index(m, "base"), arm = sd_model_body_index(m, "arm"),
              hand = sd_model_body_index(m, "hand"), side = sd_model_body_index(m, "side");
    CHECK(base == 0 && sd_model_parent(m, arm) == base && sd_model_parent(m, hand) == arm &&
          sd_model_parent(m, side) == base);
    CHECK(sd_model_nflexible(m) == 2);
    CHECK(sd_model_body_nmodes(m, base) == 2 && sd_model_body_nmodes(m, arm) == 3);
    CHECK(sd_model_body_nmodes(m, hand) == 0 && sd_model_body_nmodes(m, side) == 0);
    CHECK(sd_model_body_nnodes(m, base) == 4 && sd_model_body_nnodes(m, arm) == 3 && sd_model_body_nnodes(m, hand) == 0);
    CHECK(sd_model_body_nmodes(m, 99) == -1 && sd_model_body_nnodes(m, -1) == -1);
    CHECK(sd_model_parent_node(m, arm) == 1 && sd_model_parent_node(m, hand) == 2);
    CHECK(sd_model_parent_node(m, side) == -1 && sd_model_parent_node(m, base) == -1);
    CHECK(sd_model_flex_mass_model(m, base) == SD_FLEX_FULL && sd_model_flex_mass_model(m, arm) == SD_FLEX_LINEARISED);
    /* q: base 7 + 2 modes, arm 1 + 3, hand 1, side 1; u: 6 + 2, 1 + 3, 1, 1 (preorder base, arm, hand, side) */
    CHECK(sd_model_nq(m) == 15 && sd_model_nv(m) == 14);
    CHECK(arm == 1 && hand == 2 && side == 3);
    const int qi[4] = {0, 9, 13, 14}, vi[4] = {0, 8, 12, 13}, mqi[4] = {7, 10, 14, 15}, mvi[4] = {6, 9, 13, 14};
    for (int k = 0; k < 4; ++k) {
        CHECK(sd_model_q_index(m, k) == qi[k] && sd_model_v_index(m, k) == vi[k]);
        CHECK(sd_model_mode_q_index(m, k) == mqi[k] && sd_model_mode_v_index(m, k) == mvi[k]);
    }
    CHECK(sd_model_hinge_nq(m, base) == 7 && sd_model_hinge_nv(m, arm) == 1); /* the hinge's, not the modes' */
    const int vb[14] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 3};
    const int vp[14] = {-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 7};
    for (int v = 0; v < 14; ++v) {
        CHECK(sd_model_v_body(m, v) == vb[v]);
        CHECK(m->v_parent[v] == vp[v]);
    }
    CHECK(m->v_index[m->n] == m->nv);
    for (int v = 6; v < 8; ++v) CHECK(m->damping[v] == 0.0);
    /* the nodes' masses count in the total: base 0.2+0.3+0.4+0.5, arm 0.2+0.3+0.4 */
    CHECK_CLOSE(sd_model_total_mass(m), 3.0 + 1.5 + 0.5 + 0.7 + 1.4 + 0.9, 1e-14);
    CHECK_CLOSE(sd_model_body_mass(m, arm), 1.5, 0);
    /* node_placement: the joint frame in the undeformed node frame (1, l0_t) */
    CHECK(m->parent_node[arm] == 1 && m->parent_node[hand] == 2 && m->parent_node[side] == -1);
    CHECK_CLOSE(m->node_placement[arm].p[0], 0.3 - 0.5, 1e-15);  /* base node 1 at x = 0.5 */
    CHECK_CLOSE(m->node_placement[hand].p[0], 0.3 - 0.6, 1e-15); /* arm node 2 at x = 0.6 */
    CHECK_CLOSE(m->node_placement[arm].p[1], 0.05, 0);
    CHECK_CLOSE(m->node_placement[side].p[0], 0.3, 0);
    for (int i = 0; i < 9; ++i) CHECK(m->node_placement[hand].R[i] == m->placement[hand].R[i]);

    /* labels: modal coordinates and their speeds */
    char buf[64];
    sd_coordinate_label(m, 7, buf, sizeof buf);
    CHECK(strcmp(buf, "base.eta1") == 0);
    sd_coordinate_label(m, 12, buf, sizeof buf);
    CHECK(strcmp(buf, "arm.eta3") == 0);
    sd_coordinate_label(m, 9, buf, sizeof buf);
    CHECK(strcmp(buf, "arm") == 0);
    sd_coordinate_label(m, 13, buf, sizeof buf);
    CHECK(strcmp(buf, "hand") == 0);
    sd_speed_label(m, 7, buf, sizeof buf);
    CHECK(strcmp(buf, "base.eta2") == 0);
    sd_speed_label(m, 9, buf, sizeof buf);
    CHECK(strcmp(buf, "arm.eta1") == 0);
    sd_speed_label(m, 5, buf, sizeof buf);
    CHECK(strcmp(buf, "base.vz") == 0);
    sd_coordinate_label(m, 15, buf, sizeof buf);
    CHECK(strcmp(buf, "q15") == 0);

    /* the rigid model of the same tree: the hinges' blocks are the same, without the modes */
    sd_model *r = build_tree(0, &err);
    CHECK(r != NULL && sd_model_nflexible(r) == 0 && sd_model_nq(r) == 10 && sd_model_nv(r) == 9);
    if (r) {
        int shift_q = 0, shift_v = 0;
        for (int k = 0; k < 4; ++k) {
            CHECK(sd_model_q_index(r, k) + shift_q == sd_model_q_index(m, k));
            CHECK(sd_model_v_index(r, k) + shift_v == sd_model_v_index(m, k));
            shift_q += sd_model_body_nmodes(m, k);
            shift_v += sd_model_body_nmodes(m, k);
        }
        CHECK(r->flex == NULL && r->n_modes == NULL && r->parent_node == NULL && r->node_placement == NULL);
        sd_model_free(r);
    }
    sd_model_free(m);
}

/* A build expected to fail: the status and every needle in the message. */
static void expect_build_error(sd_builder *B, sd_status status, const char *const *needles, int n)
{
    sd_error err;
    memset(&err, 0, sizeof err);
    sd_model *m = NULL;
    const sd_status st = sd_builder_build(B, &m, &err);
    CHECK(st == status && m == NULL);
    for (int i = 0; i < n; ++i)
        if (!strstr(err.message, needles[i])) {
            CHECK(!"message names it");
            fprintf(stderr, "  '%s' not in: %s\n", needles[i], err.message);
        }
    sd_model_free(m);
}

static void test_parent_node_errors(void)
{
    sd_error err;
    bar p;
    make_bar(&p, 3, 2, 1.0, NULL);
    sd_body_desc d;
    {   /* node out of range */
        sd_builder *B = sd_builder_new();
        body(&d, "beam", NULL, SD_HINGE_REVOLUTE, -1, 1.0);
        sd_builder_add_body(B, &d, &err);
        CHECK(sd_builder_set_flexible(B, "beam", &p.d, &err) == SD_OK);
        body(&d, "tip", "beam", SD_HINGE_REVOLUTE, 3, 1.0);
        CHECK(sd_builder_add_body(B, &d, &err) == SD_OK);
        const char *needles[] = {"robot.urdf:13:", "'tip'", "'beam'", "node 3", "3 nodes"};
        expect_build_error(B, SD_E_MODEL, needles, 5);
        sd_builder_free(B);
    }
    {   /* parent rigid */
        sd_builder *B = sd_builder_new();
        body(&d, "link", NULL, SD_HINGE_REVOLUTE, -1, 1.0);
        sd_builder_add_body(B, &d, &err);
        body(&d, "tip", "link", SD_HINGE_REVOLUTE, 0, 1.0);
        sd_builder_add_body(B, &d, &err);
        const char *needles[] = {"robot.urdf:13:", "'tip'", "'link'", "node 0", "not flexible"};
        expect_build_error(B, SD_E_MODEL, needles, 5);
        sd_builder_free(B);
    }
    {   /* a root on a node */
        sd_builder *B = sd_builder_new();
        body(&d, "tip", NULL, SD_HINGE_REVOLUTE, 1, 1.0);
        sd_builder_add_body(B, &d, &err);
        const char *needles[] = {"'tip'", "node 1", "inertial frame"};
        expect_build_error(B, SD_E_MODEL, needles, 3);
        sd_builder_free(B);
    }
    {   /* parent_node below -1 refused when added */
        sd_builder *B = sd_builder_new();
        body(&d, "tip", NULL, SD_HINGE_REVOLUTE, -2, 1.0);
        CHECK(sd_builder_add_body(B, &d, &err) == SD_E_MODEL && strstr(err.message, "'tip'") &&
              strstr(err.message, "-2"));
        sd_builder_free(B);
    }
    {   /* a description for a body never added */
        sd_builder *B = sd_builder_new();
        body(&d, "link", NULL, SD_HINGE_REVOLUTE, -1, 1.0);
        sd_builder_add_body(B, &d, &err);
        p.d.source_file = "ghost.json";
        CHECK(sd_builder_set_flexible(B, "ghost", &p.d, &err) == SD_OK);
        const char *needles[] = {"ghost.json", "'ghost'"};
        expect_build_error(B, SD_E_MODEL, needles, 2);
        sd_builder_free(B);
    }
}

static void test_set_flexible(void)
{
    sd_error err;
    sd_builder *B = sd_builder_new();
    bar p;
    make_bar(&p, 3, 2, 1.0, "beam.json");
    CHECK(sd_builder_set_flexible(NULL, "x", &p.d, &err) == SD_E_ARGUMENT);
    CHECK(sd_builder_set_flexible(B, NULL, &p.d, &err) == SD_E_ARGUMENT);
    CHECK(sd_builder_set_flexible(B, "x", NULL, &err) == SD_E_ARGUMENT);
    CHECK(sd_builder_set_flexible(B, "x", &p.d, NULL) == SD_OK);

    /* refused at the call, naming the body: a negative node mass, dependent modes, a NaN */
    p.mass[1] = -1.0;
    memset(&err, 0, sizeof err);
    CHECK(sd_builder_set_flexible(B, "wing", &p.d, &err) != SD_OK && err.status != SD_OK);
    CHECK(strstr(err.message, "wing") != NULL);
    p.mass[1] = 0.3;
    memcpy(p.modes + 18, p.modes, 18 * sizeof(double)); /* mode 1 = mode 0 */
    CHECK(sd_builder_set_flexible(B, "wing", &p.d, &err) != SD_OK && strstr(err.message, "wing") != NULL);
    make_bar(&p, 3, 2, 1.0, "beam.json");
    p.K[1] = p.K[2] = NAN;
    CHECK(sd_builder_set_flexible(B, "wing", &p.d, &err) != SD_OK && strstr(err.message, "wing") != NULL);
    make_bar(&p, 3, 2, 1.0, "beam.json");
    p.d.n_modes = -1;
    CHECK(sd_builder_set_flexible(B, "wing", &p.d, &err) != SD_OK && strstr(err.message, "wing") != NULL);
    sd_builder_free(B);

    /* a second call replaces the first; the builder is empty after a build */
    B = sd_builder_new();
    sd_body_desc d;
    body(&d, "wing", NULL, SD_HINGE_REVOLUTE, -1, 1.0);
    sd_builder_add_body(B, &d, &err);
    make_bar(&p, 3, 3, 1.0, NULL);
    CHECK(sd_builder_set_flexible(B, "wing", &p.d, &err) == SD_OK);
    make_bar(&p, 2, 1, 1.0, NULL);
    CHECK(sd_builder_set_flexible(B, "wing", &p.d, &err) == SD_OK);
    sd_model *m = NULL;
    CHECK(sd_builder_build(B, &m, &err) == SD_OK);
    CHECK(sd_model_body_nmodes(m, 0) == 1 && sd_model_body_nnodes(m, 0) == 2 && sd_model_nq(m) == 2);
    sd_model_free(m);
    body(&d, "other", NULL, SD_HINGE_REVOLUTE, -1, 1.0);
    sd_builder_add_body(B, &d, &err);
    CHECK(sd_builder_build(B, &m, &err) == SD_OK && sd_model_nflexible(m) == 0 && sd_model_nq(m) == 1);
    sd_model_free(m);
    sd_builder_free(B);
}

static void test_configurations(void)
{
    sd_error err;
    sd_model *m = build_tree(1, &err);
    if (!m) return;
    const int nq = m->nq, nv = m->nv;
    double q[15], q1[15], q2[15], u[14], u1[14], dd[14];
    uint64_t rng = 12345;

    for (int i = 0; i < nq; ++i) q[i] = 7.0;
    sd_configuration_neutral(m, q);
    for (int k = 0; k < m->n; ++k)
        for (int r = 0; r < m->n_modes[k]; ++r) CHECK(q[m->mode_q_index[k] + r] == 0.0);
    CHECK(q[3] == 1.0 && q[9] == 0.0); /* the free hinge's quaternion w, the arm's angle */

    /* random: modal coordinates small (every node moves at most 5% of the size per mode), nonzero */
    int nonzero = 0;
    for (int trial = 0; trial < 50; ++trial) {
        sd_configuration_random(m, &rng, q);
        for (int r = 0; r < 2; ++r) { /* base: mode r moves node 3 (x = 1) by eta_r along y */
            CHECK(fabs(q[7 + r]) <= 0.05 / (r + 2) + 1e-15);
            nonzero += q[7 + r] != 0.0;
        }
        for (int r = 0; r < 3; ++r) CHECK(fabs(q[10 + r]) <= 0.05 * 0.6 + 1e-15);
        CHECK(sd_configuration_quaternion_error(m, q) < 1e-14);
    }
    CHECK(nonzero == 100);

    /* integrate adds eta-dot dt; difference is its inverse; the hinge parts as in the rigid model */
    sd_configuration_random(m, &rng, q);
    random_vector(&rng, u, nv, 1.0);
    sd_configuration_integrate(m, q, u, 0.3, q1);
    for (int k = 0; k < m->n; ++k)
        for (int r = 0; r < m->n_modes[k]; ++r)
            CHECK_CLOSE(q1[m->mode_q_index[k] + r], q[m->mode_q_index[k] + r] + 0.3 * u[m->mode_v_index[k] + r], 1e-15);
    sd_model *rm = build_tree(0, &err);
    if (rm) { /* rigid q (10) and u (9) gathered from the flexible ones */
        double rq[10], ru[9], rq1[10];
        for (int k = 0; k < 4; ++k) {
            memcpy(rq + rm->q_index[k], q + m->q_index[k], (size_t)m->nq_k[k] * sizeof(double));
            memcpy(ru + rm->v_index[k], u + m->v_index[k], (size_t)m->nv_k[k] * sizeof(double));
        }
        sd_configuration_integrate(rm, rq, ru, 0.3, rq1);
        for (int k = 0; k < 4; ++k)
            for (int i = 0; i < m->nq_k[k]; ++i) CHECK(rq1[rm->q_index[k] + i] == q1[m->q_index[k] + i]);
        sd_model_free(rm);
    }
    sd_configuration_difference(m, q, q1, u1);
    for (int i = 0; i < nv; ++i) CHECK_CLOSE(u1[i], 0.3 * u[i], 1e-12);
    memcpy(q2, q, sizeof q);
    sd_configuration_integrate(m, q2, u, 0.3, q2); /* aliasing */
    CHECK(test_rel_diff(q2, q1, nq) == 0.0);

    /* chart: modal chart coordinates move at eta-dot; large eta hold no angle */
    for (int i = 0; i < nv; ++i) dd[i] = 0.0;
    double delta[14] = {0};
    sd_configuration_chart_rate(m, delta, u, dd);
    for (int k = 0; k < m->n; ++k)
        for (int r = 0; r < m->n_modes[k]; ++r) CHECK(dd[m->mode_v_index[k] + r] == u[m->mode_v_index[k] + r]);
    delta[7] = delta[10] = 100.0;
    CHECK(sd_configuration_chart_angle(m, delta) == 0.0);
    delta[0] = 0.5;
    CHECK_CLOSE(sd_configuration_chart_angle(m, delta), 0.5, 1e-15);

    /* normalize and the quaternion error leave eta alone */
    sd_configuration_neutral(m, q);
    q[3] = 2.0;
    q[7] = 3.0;
    q[10] = -4.0;
    CHECK_CLOSE(sd_configuration_quaternion_error(m, q), 1.0, 1e-15);
    CHECK_CLOSE(sd_configuration_normalize(m, q), 1.0, 1e-15);
    CHECK(q[3] == 1.0 && q[7] == 3.0 && q[10] == -4.0);
    sd_model_free(m);
}

/* A random rigid tree keeps the plain layout: blocks in body order, no flexible fields. */
static void test_rigid_unchanged(void)
{
    uint64_t rng = 99;
    for (int trial = 0; trial < 20; ++trial) {
        sd_model *m = random_tree(&rng, 1 + trial * 3, trial % 2 ? RT_FREE_ROOT : 0);
        int nq = 0, nv = 0, ok = 1;
        for (int k = 0; k < m->n; ++k) {
            ok &= m->q_index[k] == nq && m->v_index[k] == nv;
            ok &= sd_model_mode_q_index(m, k) == nq + m->nq_k[k] && sd_model_body_nmodes(m, k) == 0;
            ok &= sd_model_parent_node(m, k) == -1 && sd_model_body_nnodes(m, k) == 0;
            for (int i = 0; i < m->nv_k[k]; ++i) ok &= m->v_body[nv + i] == k;
            nq += m->nq_k[k];
            nv += m->nv_k[k];
        }
        CHECK(ok && m->nq == nq && m->nv == nv && m->nflex == 0 && sd_model_nflexible(m) == 0);
        CHECK(m->flex == NULL && m->n_modes == NULL && m->mode_q_index == NULL && m->node_placement == NULL);
        sd_model_free(m);
    }
    CHECK(sd_model_nflexible(NULL) == 0 && sd_model_mode_v_index(NULL, 0) == -1);
}

/* Random trees with random flexible bodies (1..8 nodes, 0..4 modes) and children on random nodes,
 * added in shuffled order: the layout against an independent walk of each body's path to the base
 * (the speeds on it, root first, each body's hinge then its modes; v_parent is the one before). */
static void test_random_layout(void)
{
    uint64_t rng = 2024;
    for (int trial = 0; trial < 40; ++trial) {
        enum { N = 12 };
        const int n = 1 + (int)(sd_random_uniform(&rng) * N);
        static bar bars[N];
        char names[N][16];
        int parent[N], nnodes[N], nm[N], flexible[N], order[N];
        sd_hinge_type hinge[N];
        for (int k = 0; k < n; ++k) {
            snprintf(names[k], sizeof names[k], "b%d", k);
            parent[k] = k ? (int)(sd_random_uniform(&rng) * k) - (sd_random_uniform(&rng) < 0.1) : -1;
            hinge[k] = (sd_hinge_type)(sd_random_uniform(&rng) * SD_HINGE_TYPE_COUNT);
            flexible[k] = sd_random_uniform(&rng) < 0.5;
            nnodes[k] = 1 + (int)(sd_random_uniform(&rng) * 8);
            nm[k] = flexible[k] ? (int)(sd_random_uniform(&rng) * (1 + (nnodes[k] < 4 ? nnodes[k] : 4))) : 0;
            order[k] = k;
        }
        for (int k = n - 1; k > 0; --k) { /* shuffle the insertion order */
            const int j = (int)(sd_random_uniform(&rng) * (k + 1)), t = order[k];
            order[k] = order[j];
            order[j] = t;
        }
        sd_builder *B = sd_builder_new();
        sd_error err;
        for (int i = 0; i < n; ++i) {
            const int k = order[i];
            sd_body_desc d;
            const int node = parent[k] >= 0 && flexible[parent[k]] && sd_random_uniform(&rng) < 0.7
                                 ? (int)(sd_random_uniform(&rng) * nnodes[parent[k]])
                                 : -1;
            body(&d, names[k], parent[k] >= 0 ? names[parent[k]] : NULL, hinge[k], node, 1.0);
            d.axis[0] = 1.0; /* universal: axis2 = y not parallel */
            CHECK(sd_builder_add_body(B, &d, &err) == SD_OK);
            if (flexible[k]) {
                make_bar(&bars[k], nnodes[k], nm[k], 0.5 + k * 0.1, NULL);
                if (sd_builder_set_flexible(B, names[k], &bars[k].d, &err) != SD_OK) {
                    CHECK(!"set_flexible");
                    fprintf(stderr, "  %s\n", err.message);
                }
            }
        }
        sd_model *m = NULL;
        if (sd_builder_build(B, &m, &err) != SD_OK) {
            CHECK(!"build");
            fprintf(stderr, "  %s\n", err.message);
            sd_builder_free(B);
            continue;
        }
        sd_builder_free(B);
        int nflex = 0, nq = 0, nv = 0, ok = 1;
        for (int k = 0; k < m->n; ++k) { /* blocks contiguous in body order */
            const int src = atoi(sd_model_body_name(m, k) + 1);
            nflex += flexible[src];
            ok &= sd_model_body_nmodes(m, k) == nm[src];
            ok &= sd_model_body_nnodes(m, k) == (flexible[src] ? nnodes[src] : 0);
            ok &= sd_model_q_index(m, k) == nq && sd_model_mode_q_index(m, k) == nq + sd_hinge_type_nq(hinge[src]);
            ok &= sd_model_v_index(m, k) == nv && sd_model_mode_v_index(m, k) == nv + sd_hinge_type_nv(hinge[src]);
            nq += sd_hinge_type_nq(hinge[src]) + nm[src];
            nv += sd_hinge_type_nv(hinge[src]) + nm[src];
        }
        CHECK(ok && m->nq == nq && m->nv == nv && sd_model_nflexible(m) == nflex);
        for (int k = 0; k < m->n; ++k) { /* each body's path, walked from the body to the base */
            int path[6 * N + 4 * N], len = 0;
            for (int j = k; j >= 0; j = m->parent[j]) {
                for (int r = m->n_modes ? m->n_modes[j] - 1 : -1; r >= 0; --r) path[len++] = m->mode_v_index[j] + r;
                for (int i = m->nv_k[j] - 1; i >= 0; --i) path[len++] = m->v_index[j] + i;
            }
            /* path[0] is k's last speed (if it has any); every speed of k is followed by its v_parent */
            for (int i = 0; i < len && m->v_body[path[i]] == k; ++i) {
                ok &= m->v_parent[path[i]] == (i + 1 < len ? path[i + 1] : -1);
                char label[32];
                sd_speed_label(m, path[i], label, sizeof label);
                const int modal = m->n_modes && path[i] >= m->mode_v_index[k];
                ok &= (strstr(label, ".eta") != NULL) == modal;
            }
        }
        for (int i = 0; i < m->nq; ++i) { /* modal coordinates labelled by their body */
            char label[32];
            sd_coordinate_label(m, i, label, sizeof label);
            int k = m->n - 1;
            while (m->q_index[k] > i) --k;
            const int modal = m->n_modes && i >= m->mode_q_index[k];
            ok &= (strstr(label, ".eta") != NULL) == modal;
            if (modal) {
                char want[32];
                snprintf(want, sizeof want, "%s.eta%d", sd_model_body_name(m, k), i - m->mode_q_index[k] + 1);
                ok &= strcmp(label, want) == 0;
            }
        }
        CHECK(ok);
        sd_model_free(m);
    }
}

static void test_loops_offered(void)
{
    sd_error err;
    sd_builder *B = sd_builder_new();
    bar p;
    make_bar(&p, 3, 2, 1.0, NULL);
    sd_body_desc d;
    body(&d, "beam", NULL, SD_HINGE_REVOLUTE, -1, 1.0);
    sd_builder_add_body(B, &d, &err);
    body(&d, "link", NULL, SD_HINGE_REVOLUTE, -1, 1.0);
    sd_builder_add_body(B, &d, &err);
    sd_builder_set_flexible(B, "beam", &p.d, &err);
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = "closure";
    c.type = SD_CONSTRAINT_BALL;
    c.body_a = "beam";
    c.body_b = "link";
    CHECK(sd_builder_add_constraint(B, &c, &err) == SD_OK);
    sd_model *m = NULL; /* tree-augmented loops on flexible models: tests/loops/test_flexible_loops.c */
    CHECK(sd_builder_build(B, &m, &err) == SD_OK);
    CHECK(m && sd_model_nconstraints(m) == 1 && sd_model_nflexible(m) == 1);
    sd_model_free(m);
    sd_builder_free(B);
}

static void test_workspace(void)
{
    sd_error err;
    sd_model *m = build_tree(1, &err);
    if (!m) return;
    sd_data *d = sd_data_new(m);
    CHECK(d != NULL);
    if (d) CHECK(d->nodes != NULL); /* the node engine's workspace */
    sd_data_free(d);
    sd_model_free(m);
}

int main(void)
{
    test_layout();
    test_parent_node_errors();
    test_set_flexible();
    test_configurations();
    test_rigid_unchanged();
    test_random_layout();
    test_loops_offered();
    test_workspace();
    return test_summary("test_flex_model");
}
