/*
 * tests/embed/test_embed_mixed.c — embedded and tree-augmented constraints in one model
 * (embed_mixed.c: the tree-augmented rows solved on top of the embedded system, 000 Eq 45-46 on the
 * embedded speeds). The reference is the same model with every constraint tree-augmented
 * (sd_closed_loop_forward_dynamics), at the same consistent state (closed q, G u = 0):
 *   - two planar four-bars, the second hung on the first's coupler (nested), closed by 5-row
 *     revolute constraints (rank 2 each: redundant rows), one embedded and the other not, both
 *     ways round, and both embedded: qdd_tree, lambda (minimum norm: the redundancy stays inside
 *     each constraint) and every inter-body force equal to 1e-10;
 *   - random trees of every hinge type closed by two to four random constraints of every kind
 *     (tests/loops/random_loops.h), a random nonempty proper subset embedded: qdd_tree and
 *     G* lambda equal to 1e-10 (cond-scaled); lambda and the inter-body forces too when the rows
 *     are independent (otherwise the minimum-norm split over all rows and the split per kind
 *     differ, both right);
 *   - a tree-augmented coupling that locks the embedded four-bar: zero accelerations at rest.
 */
#include "embed/embed_reference.h"
#include "loops/random_loops.h"
#include "random_tree.h"

static void inertia_rod(double I[9], double m, double l)
{
    memset(I, 0, 9 * sizeof *I);
    I[0] = 1e-3 * m;
    I[4] = I[8] = m * l * l / 12.0 + 1e-3 * m;
}

static void add_link(sd_builder *b, const char *name, const char *parent, double x, double y, double len)
{
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = name;
    d.parent = parent;
    d.hinge = SD_HINGE_REVOLUTE;
    d.placement.p[0] = x;
    d.placement.p[1] = y;
    d.mass = len;
    d.com[0] = len / 2;
    inertia_rod(d.inertia, len, len);
    d.damping = 0.01;
    d.armature = 0.002;
    sd_error err;
    CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
}

/* A four-bar P_crank, P_coupler, P_rocker on `parent` at (x, 0), closed by the revolute P_loop
 * between the coupler's tip and the rocker's tip; lengths scaled by s. */
static void add_four_bar(sd_builder *b, const char *P, const char *parent, double x, double s)
{
    char crank[32], coupler[32], rocker[32], loop[32];
    snprintf(crank, sizeof crank, "%s_crank", P);
    snprintf(coupler, sizeof coupler, "%s_coupler", P);
    snprintf(rocker, sizeof rocker, "%s_rocker", P);
    snprintf(loop, sizeof loop, "%s_loop", P);
    add_link(b, crank, parent, x, 0.0, 0.4 * s);
    add_link(b, coupler, crank, 0.4 * s, 0.0, 1.1 * s);
    add_link(b, rocker, parent, x + 1.0 * s, 0.0, 0.8 * s);
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = loop;
    c.type = SD_CONSTRAINT_REVOLUTE;
    c.body_a = coupler;
    c.frame_a.p[0] = 1.1 * s;
    c.body_b = rocker;
    c.frame_b.p[0] = 0.8 * s;
    c.axis[0] = 0.0, c.axis[1] = 0.0, c.axis[2] = 1.0;
    sd_error err;
    CHECK(sd_builder_add_constraint(b, &c, &err) == SD_OK);
}

static sd_model *two_four_bars(void)
{
    sd_builder *b = sd_builder_new();
    const double g[3] = {0.0, -9.81, 0.0};
    sd_builder_set_gravity(b, g);
    add_four_bar(b, "A", NULL, 0.0, 1.0);
    add_four_bar(b, "B", "A_coupler", 0.3, 0.5);
    sd_model *m = NULL;
    sd_error err;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    return m;
}

static int cases = 0, lambda_cases = 0, skipped = 0;
static double worst_qdd = 0.0, worst_lambda = 0.0, worst_gl = 0.0, worst_force = 0.0;

/* One comparison; `full`: lambda and the forces are unique (compare them). */
static void compare(const sd_model *m, const char *loops, const double *q, uint64_t *rng, int full, double tol)
{
    const int nv = sd_model_nv(m), nc = sd_model_nconstraint_rows(m), nb = sd_model_nbodies(m);
    sd_embed_options o;
    sd_embed_options_init(&o);
    o.loops = loops;
    o.q = q;
    sd_error err;
    sd_embedding *e = sd_embedding_new(m, &o, &err);
    if (!e) {
        fprintf(stderr, "  note: embedding '%s' refused: %s\n", loops, err.message);
        ++skipped;
        return;
    }
    sd_embedded_data *ed = sd_embedded_data_new(e);
    sd_data *d = sd_data_new(m);
    double *u = calloc((size_t)nv, sizeof *u), *tau = calloc((size_t)nv, sizeof *tau);
    double *G = calloc((size_t)(nc * nv) + 1, sizeof *G), *f_ext = calloc((size_t)(6 * nb), sizeof *f_ext);
    CHECK(sd_constraint_jacobian(m, d, q, G) == SD_OK);
    random_vector(rng, u, nv, 1.0);
    project_on_nullspace(G, nc, nv, u);
    random_vector(rng, tau, nv, 1.0);
    random_vector(rng, f_ext, 6 * nb, 0.5);
    const er_result r = er_compare(m, e, ed, d, q, u, tau, f_ext, NULL);
    CHECK(r.ok);
    if (r.ok) {
        ++cases;
        full = full || r.ta_rank == nc;
        CHECK(r.qdd < tol && r.gl < tol);
        if (full) CHECK(r.lambda < tol && r.force < tol);
        if (r.qdd >= tol || r.gl >= tol || (full && (r.lambda >= tol || r.force >= tol)))
            fprintf(stderr, "  embedded '%s': qdd %.3g, G* lambda %.3g, lambda %.3g, forces %.3g (rank %d of %d)\n",
                    loops, r.qdd, r.gl, r.lambda, r.force, r.ta_rank, nc);
        worst_qdd = fmax(worst_qdd, r.qdd);
        worst_gl = fmax(worst_gl, r.gl);
        if (full) {
            ++lambda_cases;
            worst_lambda = fmax(worst_lambda, r.lambda);
            worst_force = fmax(worst_force, r.force);
        }
    }
    free(u);
    free(tau);
    free(G);
    free(f_ext);
    sd_data_free(d);
    sd_embedded_data_free(ed);
    sd_embedding_free(e);
}

static void test_four_bars(uint64_t *rng)
{
    sd_model *m = two_four_bars();
    if (!m) return;
    const int nq = sd_model_nq(m);
    CHECK(nq == 6);
    double guess[6] = {1.2, -1.0, 1.8, 1.2, -1.0, 1.8}, q[6], res = 1.0;
    sd_data *d = sd_data_new(m);
    for (int s = 0; s < 5; ++s) {
        for (int i = 0; i < nq; ++i) guess[i] += 0.05 * (sd_random_uniform(rng) - 0.5);
        CHECK(sd_assemble_configuration(m, d, guess, NULL, 1e-14, 100, q, &res) == SD_OK && res < 1e-12);
        compare(m, "A_loop", q, rng, 1, 1e-10);
        compare(m, "B_loop", q, rng, 1, 1e-10);
        compare(m, "all", q, rng, 1, 1e-10);
    }
    sd_data_free(d);
    sd_model_free(m);
}

static void test_random(uint64_t *rng)
{
    static int kinds[SD_CONSTRAINT_TYPE_COUNT];
    for (int trial = 0; trial < 60; ++trial) {
        const int n = 3 + trial % 12;
        const int flags = (trial % 3 == 1 ? RT_FREE_ROOT : 0) | (trial % 5 == 3 ? RT_CHAIN : 0);
        sd_model *tree = random_tree(rng, n, flags);
        double *q0 = malloc((size_t)sd_model_nq(tree) * sizeof *q0);
        sd_configuration_random(tree, rng, q0);
        sd_model *m = close_randomly(tree, rng, q0, kinds);
        const int nc = m ? sd_model_nconstraints(m) : 0;
        if (nc >= 2) {
            char loops[64];
            random_loop_subset(m, rng, loops, sizeof loops);
            compare(m, loops, q0, rng, 0, 1e-10);
        }
        sd_model_free(m);
        sd_model_free(tree);
        free(q0);
    }
}

/* A tree-augmented coupling that takes the embedded four-bar's one mobility (q_rocker = 3 q_crank,
 * which the four-bar's motion does not follow): the system is locked, so at rest under any torque
 * the accelerations are zero (the correction cancels the free ones exactly). */
static void test_locked(void)
{
    sd_builder *b = sd_builder_new();
    add_four_bar(b, "A", NULL, 0.0, 1.0);
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = "gear";
    c.type = SD_CONSTRAINT_COUPLING;
    c.joint_a = "A_rocker";
    c.joint_b = "A_crank";
    c.ratio = 3.0;
    sd_error err;
    CHECK(sd_builder_add_constraint(b, &c, &err) == SD_OK);
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    if (!m) return;
    /* a configuration where the loop and the coupling both hold */
    sd_data *d = sd_data_new(m);
    double guess[3] = {0.5, -0.5, 1.5}, q[3], res = 1.0;
    if (sd_assemble_configuration(m, d, guess, NULL, 1e-14, 200, q, &res) != SD_OK) {
        printf("  locked case: no assembled configuration (skipped)\n");
        sd_data_free(d);
        sd_model_free(m);
        return;
    }
    sd_embed_options o;
    sd_embed_options_init(&o);
    o.loops = "A_loop";
    o.q = q;
    sd_embedding *e = sd_embedding_new(m, &o, &err);
    CHECK(e != NULL);
    if (e) {
        sd_embedded_data *ed = sd_embedded_data_new(e);
        const int ne = sd_embedding_nv(e);
        CHECK(ne == 1);
        double ue[1] = {0.0}, tau_e[1] = {0.7}, qdd_e[1] = {1.0}, qdd_t[3];
        const sd_status st = sd_embedded_forward_dynamics(e, ed, q, ue, tau_e, NULL, qdd_e, qdd_t, NULL);
        CHECK(st == SD_OK);
        if (st == SD_OK) CHECK(fabs(qdd_e[0]) < 1e-10 && er_maxabs(qdd_t, 3) < 1e-10);
        sd_embedded_data_free(ed);
        sd_embedding_free(e);
    }
    sd_data_free(d);
    sd_model_free(m);
}

int main(void)
{
    uint64_t rng = 0x313d3a1edULL;
    test_four_bars(&rng);
    test_random(&rng);
    test_locked();
    printf("  %d comparisons (%d with unique lambda; %d embeddings refused): worst relative qdd %.2g, G* lambda "
           "%.2g, lambda %.2g, inter-body forces %.2g\n",
           cases, lambda_cases, skipped, worst_qdd, worst_gl, worst_lambda, worst_force);
    CHECK(cases >= 40 && lambda_cases >= 15);
    return test_summary("test_embed_mixed");
}
