/*
 * tests/embed/test_embed_errors.c — bad input to the embedding (issue 11, "Bad input"): each case
 * is refused with the status embed.h promises and a message that names the loop (and its source
 * file:line when the description gave one), checked by text:
 *   - unknown names: a constraint in `loops`, a joint in `independent`;
 *   - an override that does not give the loop exactly its mobility (two joints for a four-bar);
 *   - an override whose Y1 is singular at every configuration: a crank and a rod on a ball joint
 *     whose tip is tied to a slider by a ball constraint, with the crank and the slider named
 *     independent: Y1 would be the ball's three columns, and its spin about the rod's line moves
 *     nothing the constraint sees (a zero column, everywhere);
 *   - a loop that cannot be assembled: a four-bar whose coupler and rocker together are shorter
 *     than the nearest the crank pin comes to the rocker's pivot;
 *   - a loop that cannot close from the configuration given: a double rocker (its input link
 *     cannot turn fully) asked to close with that link held beyond its reach;
 *   - the split must change along a motion: a Grashof four-bar with its rocker's hinge (the
 *     coupler-to-rocker angle) named independent, evaluated with the crank along the ground line
 *     (that angle at its extreme, Y1 singular there): SD_E_SINGULAR naming the loop and saying the
 *     split must change; the same state with the crank independent evaluates fine;
 *   - a loop that locks its bodies (a pendulum welded to the world: mobility 0, no independent
 *     speed) is NOT refused: an aggregate of no speeds, the same forces as tree-augmented;
 *   - flexible bodies outside the aggregates: sd_embedding_new builds the embedding, with or without
 *     loops (a flexible body inside an aggregate: test_embed_flexible)
 *     (SD_E_NOT_SUPPORTED, saying so; its loops are offered tree-augmented);
 *   - a "loop" through no speed at all (a weld between a body and its child on a fixed hinge: the
 *     constraint's rows are zero at every configuration, so there is nothing to embed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>
#include <soadyn/embed.h>

#include "test_util.h"

#define SRC "bad_loops.txt"

/* The message holds `what` (prints it either way, so the log shows every message). */
static void check_message(const char *label, const char *msg, const char *what)
{
    printf("  %-34s %s\n", label, msg);
    const int ok = strstr(msg, what) != NULL;
    CHECK(ok);
    if (!ok) fprintf(stderr, "%s: message \"%s\" does not name \"%s\"\n", label, msg, what);
}

/* ---- a planar four-bar in the x-y plane: crank a from O2 = 0, coupler b, rocker c to O4 = (d, 0);
 * body frames at the pivots with world axes at crank angle t2ref (every q = 0 there), closed at O4
 * by a revolute "loop" from SRC:line. When the lengths cannot close, B is put on the line A -> O4 at b
 * from A and the rocker keeps its length c (the frames then do not coincide). */
typedef struct fb_geom {
    double a, b, c, d, t2ref;
    double A[3], B[3];
    double th[3]; /* crank, coupler, rocker (B -> O4) directions at the reference */
} fb_geom;

static int fb_pose(fb_geom *g, double t2, double A[3], double B[3])
{
    A[0] = g->a * cos(t2), A[1] = g->a * sin(t2), A[2] = 0.0;
    const double dx = g->d - A[0], dy = -A[1], dist = sqrt(dx * dx + dy * dy);
    const double along = (g->b * g->b - g->c * g->c + dist * dist) / (2 * dist), h2 = g->b * g->b - along * along;
    if (h2 < 0) {
        for (int j = 0; j < 2; ++j) B[j] = A[j] + g->b * (j ? dy : dx) / dist;
        B[2] = 0.0;
        return 0;
    }
    const double h = sqrt(h2);
    B[0] = A[0] + along * dx / dist - h * dy / dist, B[1] = A[1] + along * dy / dist + h * dx / dist, B[2] = 0.0;
    return 1;
}

static sd_model *fb_model(fb_geom *g, int line)
{
    fb_pose(g, g->t2ref, g->A, g->B);
    const double O4[3] = {g->d, 0, 0};
    g->th[0] = g->t2ref;
    g->th[1] = atan2(g->B[1] - g->A[1], g->B[0] - g->A[0]);
    g->th[2] = atan2(O4[1] - g->B[1], O4[0] - g->B[0]);
    sd_builder *bld = sd_builder_new();
    const double grav[3] = {0, -9.81, 0};
    sd_builder_set_gravity(bld, grav);
    sd_error err;
    const char *names[3] = {"crank", "coupler", "rocker"};
    const double zero[3] = {0, 0, 0};
    const double *piv[3] = {zero, g->A, g->B};
    const double len[3] = {g->a, g->b, g->c};
    for (int k = 0; k < 3; ++k) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        d.name = names[k];
        d.parent = k ? names[k - 1] : NULL;
        d.hinge = SD_HINGE_REVOLUTE;
        for (int j = 0; j < 3; ++j) d.placement.p[j] = piv[k][j] - (k ? piv[k - 1][j] : 0.0);
        d.mass = 0.5 + 0.3 * k;
        d.com[0] = 0.5 * len[k] * cos(g->th[k]), d.com[1] = 0.5 * len[k] * sin(g->th[k]);
        for (int j = 0; j < 3; ++j) d.inertia[4 * j] = d.mass * len[k] * len[k] / 12.0 + 1e-3;
        d.source_file = SRC;
        d.source_line = 10 + k;
        CHECK(sd_builder_add_body(bld, &d, &err) == SD_OK);
    }
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = "loop";
    c.type = SD_CONSTRAINT_REVOLUTE;
    c.body_b = "rocker";
    c.frame_a.p[0] = g->d;
    c.frame_b.p[0] = g->c * cos(g->th[2]), c.frame_b.p[1] = g->c * sin(g->th[2]);
    c.embed = 1;
    c.source_file = SRC;
    c.source_line = line;
    CHECK(sd_builder_add_constraint(bld, &c, &err) == SD_OK);
    sd_model *m = NULL;
    CHECK(sd_builder_build(bld, &m, &err) == SD_OK);
    sd_builder_free(bld);
    return m;
}

/* The tree q of the four-bar with link directions th (crank, coupler, rocker). */
static void fb_q(const sd_model *m, const fb_geom *g, const double th[3], double *q)
{
    const char *names[3] = {"crank", "coupler", "rocker"};
    for (int k = 0; k < 3; ++k)
        q[sd_model_q_index(m, sd_model_body_index(m, names[k]))] = (th[k] - g->th[k]) - (k ? th[k - 1] - g->th[k - 1] : 0.0);
}

static sd_embedding *embed(const sd_model *m, const char *loops, const char *independent, const double *q, sd_error *err)
{
    sd_embed_options o;
    sd_embed_options_init(&o);
    o.loops = loops;
    o.independent = independent;
    o.q = q;
    memset(err, 0, sizeof *err);
    return sd_embedding_new(m, &o, err);
}

static void expect_refused(const char *label, const sd_model *m, const char *loops, const char *independent,
                           const double *q, sd_status status, const char *const *names, int nnames)
{
    sd_error err;
    sd_embedding *e = embed(m, loops, independent, q, &err);
    CHECK(e == NULL);
    if (e) {
        fprintf(stderr, "%s: accepted\n", label);
        sd_embedding_free(e);
        return;
    }
    CHECK(err.status == status);
    if (err.status != status)
        fprintf(stderr, "%s: status %s, expected %s\n", label, sd_status_name(err.status), sd_status_name(status));
    for (int i = 0; i < nnames; ++i) check_message(label, err.message, names[i]);
}

static void test_names_and_overrides(void)
{
    fb_geom g = {0.1, 0.35, 0.3, 0.4, 1.0, {0}, {0}, {0}};
    sd_model *m = fb_model(&g, 7);
    const char *n1[1] = {"no_such_loop"};
    expect_refused("unknown constraint in loops:", m, "loop,no_such_loop", NULL, NULL, SD_E_ARGUMENT, n1, 1);
    const char *n2[1] = {"no_such_joint"};
    expect_refused("unknown joint in independent:", m, "all", "no_such_joint", NULL, SD_E_ARGUMENT, n2, 1);
    const char *n3[2] = {"loop", SRC ":7"};
    expect_refused("override with 2 of mobility 1:", m, "all", "crank,coupler", NULL, SD_E_ARGUMENT, n3, 2);
    /* the override accepted when it is right, and each joint alone gives the loop its mobility */
    sd_error err;
    const char *ok[3] = {"crank", "coupler", "rocker"};
    for (int i = 0; i < 3; ++i) {
        sd_embedding *e = embed(m, "all", ok[i], NULL, &err);
        CHECK(e != NULL && sd_embedding_nv(e) == 1);
        if (!e) fprintf(stderr, "override %s refused: %s\n", ok[i], err.message);
        sd_embedding_free(e);
    }
    /* "none": nothing embedded, every constraint tree-augmented; an embedding with no aggregate */
    sd_embedding *e = embed(m, "none", NULL, NULL, &err);
    CHECK(e != NULL && sd_embedding_naggregates(e) == 0 && sd_embedding_constraint_embedded(e, 0) == 0);
    sd_embedding_free(e);
    sd_model_free(m);
}

/* a crank (revolute about z at the origin), a rod on a ball at the crank pin, its tip tied by a
 * ball constraint to a slider on the world's x axis */
static void test_singular_override(void)
{
    sd_builder *bld = sd_builder_new();
    sd_error err;
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "crank", d.hinge = SD_HINGE_REVOLUTE, d.mass = 0.5, d.com[0] = 0.05;
    for (int j = 0; j < 3; ++j) d.inertia[4 * j] = 1e-3;
    CHECK(sd_builder_add_body(bld, &d, &err) == SD_OK);
    sd_body_desc_init(&d);
    d.name = "rod", d.parent = "crank", d.hinge = SD_HINGE_SPHERICAL, d.placement.p[0] = 0.1, d.mass = 1.0;
    d.com[0] = 0.15;
    d.inertia[0] = 1e-4, d.inertia[4] = d.inertia[8] = 0.0075;
    CHECK(sd_builder_add_body(bld, &d, &err) == SD_OK);
    sd_body_desc_init(&d);
    d.name = "slider", d.hinge = SD_HINGE_PRISMATIC, d.axis[0] = 1.0, d.axis[2] = 0.0, d.placement.p[0] = 0.4, d.mass = 2.0;
    for (int j = 0; j < 3; ++j) d.inertia[4 * j] = 2e-3;
    CHECK(sd_builder_add_body(bld, &d, &err) == SD_OK);
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = "wrist", c.type = SD_CONSTRAINT_BALL, c.body_a = "slider", c.body_b = "rod", c.frame_b.p[0] = 0.3;
    c.embed = 1, c.source_file = SRC, c.source_line = 21;
    CHECK(sd_builder_add_constraint(bld, &c, &err) == SD_OK);
    sd_model *m = NULL;
    CHECK(sd_builder_build(bld, &m, &err) == SD_OK);
    sd_builder_free(bld);
    /* at q = 0 the rod lies along x from 0.1 to 0.4: the slider's pin, closed */
    const char *n[2] = {"wrist", SRC ":21"};
    expect_refused("override with Y1 singular:", m, "all", "crank,slider", NULL, SD_E_SINGULAR, n, 2);
    /* the pivoting's own split works: 5 speeds, 3 rows, 2 independent (one of them the rod's spin) */
    sd_embedding *e = embed(m, "all", NULL, NULL, &err);
    CHECK(e != NULL && sd_embedding_nv(e) == 2);
    if (!e) fprintf(stderr, "wrist by pivoting: %s\n", err.message);
    sd_embedding_free(e);
    sd_model_free(m);
}

static void test_assembly(void)
{
    /* coupler + rocker = 0.2 < d - a = 0.3: never closes */
    fb_geom g = {0.1, 0.1, 0.1, 0.4, 1.0, {0}, {0}, {0}};
    sd_model *m = fb_model(&g, 33);
    const char *n[2] = {"loop", SRC ":33"};
    expect_refused("loop that cannot be assembled:", m, "all", NULL, NULL, SD_E_SINGULAR, n, 2);
    sd_model_free(m);

    /* a double rocker (a = 0.3, b = 0.2, c = 0.35, d = 0.4: s + l = 0.6 < p + q = 0.65 with the
     * coupler the shortest): the "crank" only rocks; held at pi its pin is 0.7 from O4 > b + c */
    fb_geom h = {0.3, 0.2, 0.35, 0.4, 1.0, {0}, {0}, {0}};
    sd_model *mh = fb_model(&h, 44);
    sd_error err;
    sd_embedding *e = embed(mh, "all", "crank", NULL, &err);
    CHECK(e != NULL);
    if (!e) fprintf(stderr, "double rocker: %s\n", err.message);
    if (e) {
        sd_embedded_data *ed = sd_embedded_data_new(e);
        double q[3], qo[3], th[3] = {3.14159, h.th[1], h.th[2]};
        fb_q(mh, &h, th, q);
        const sd_status st = sd_embedded_close(e, ed, q, qo, NULL);
        CHECK(st == SD_E_SINGULAR);
        check_message("loop that cannot close from q:", sd_embedded_error(ed), "loop");
        check_message("loop that cannot close from q:", sd_embedded_error(ed), SRC ":44");
        /* and the forward dynamics from there says the same */
        double u[1] = {0}, tau[1] = {0}, qdd[1];
        CHECK(sd_embedded_forward_dynamics(e, ed, q, u, tau, NULL, qdd, NULL, NULL) == SD_E_SINGULAR);
        check_message("FD from a q that cannot close:", sd_embedded_error(ed), "loop");
        sd_embedded_data_free(ed);
        sd_embedding_free(e);
    }
    sd_model_free(mh);
}

static void test_split_must_change(void)
{
    fb_geom g = {0.1, 0.35, 0.3, 0.4, 1.0, {0}, {0}, {0}};
    sd_model *m = fb_model(&g, 55);
    sd_error err;
    sd_embedding *e = embed(m, "all", "rocker", NULL, &err);
    CHECK(e != NULL);
    if (!e) {
        fprintf(stderr, "rocker independent: %s\n", err.message);
        sd_model_free(m);
        return;
    }
    /* "rocker" is the coupler-to-rocker angle: held, coupler and rocker are one rigid triangle and
     * the crank and it form a three-bar whose Jacobian (Y1 on the crank's and coupler's speeds, at
     * the cut point O4) is singular when O2, A and O4 are in line: the crank along the ground, where
     * that angle reaches its extreme. The Grashof crank passes there every turn. */
    double A[3], B[3], q[3];
    CHECK(fb_pose(&g, 0.0, A, B));
    double th[3] = {0.0, atan2(B[1] - A[1], B[0] - A[0]), atan2(-B[1], g.d - B[0])};
    fb_q(m, &g, th, q);
    sd_embedded_data *ed = sd_embedded_data_new(e);
    sd_data *d = sd_data_new(m);
    double pos[5], u[1] = {0.5}, tau[1] = {0}, qdd[1];
    CHECK(sd_constraint_residuals(m, d, q, NULL, pos, NULL) == SD_OK);
    double worst = 0.0;
    for (int i = 0; i < 5; ++i) worst = fmax(worst, fabs(pos[i]));
    printf("  crank along the ground: q = %.6f %.6f %.6f, loop residual %.1e\n", q[0], q[1], q[2], worst);
    CHECK(worst < 1e-14);
    sd_data_free(d);
    const sd_status st = sd_embedded_forward_dynamics(e, ed, q, u, tau, NULL, qdd, NULL, NULL);
    CHECK(st == SD_E_SINGULAR);
    check_message("split must change (rocker indep.):", sd_embedded_error(ed), "loop");
    check_message("split must change (rocker indep.):", sd_embedded_error(ed), SRC ":55");
    check_message("split must change (rocker indep.):", sd_embedded_error(ed), "split must change");
    sd_embedded_data_free(ed);
    sd_embedding_free(e);
    /* with the crank independent the same state is regular */
    e = embed(m, "all", "crank", NULL, &err);
    CHECK(e != NULL);
    if (e) {
        ed = sd_embedded_data_new(e);
        CHECK(sd_embedded_forward_dynamics(e, ed, q, u, tau, NULL, qdd, NULL, NULL) == SD_OK);
        CHECK(sd_embedded_split_condition(ed, 0) < 1e3);
        sd_embedded_data_free(ed);
        sd_embedding_free(e);
    }
    sd_model_free(m);
}

/* a pendulum (about x, hanging along -z) carrying a bob on a fixed hinge, welded to the world where
 * it is ("lock": mobility 0); with `glued`, also a weld between the pendulum and its bob */
static sd_model *locked_pendulum(int glued)
{
    sd_builder *bld = sd_builder_new();
    const double grav[3] = {0.0, 0.0, -9.81};
    sd_builder_set_gravity(bld, grav);
    sd_error err;
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "pendulum", d.hinge = SD_HINGE_REVOLUTE, d.axis[0] = 1.0, d.axis[2] = 0.0, d.mass = 1.0, d.com[1] = 0.1, d.com[2] = -0.5;
    for (int j = 0; j < 3; ++j) d.inertia[4 * j] = 0.01;
    CHECK(sd_builder_add_body(bld, &d, &err) == SD_OK);
    sd_body_desc_init(&d);
    d.name = "bob", d.parent = "pendulum", d.hinge = SD_HINGE_FIXED, d.placement.p[2] = -1.0, d.mass = 0.2;
    for (int j = 0; j < 3; ++j) d.inertia[4 * j] = 1e-3;
    CHECK(sd_builder_add_body(bld, &d, &err) == SD_OK);
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = "lock", c.type = SD_CONSTRAINT_WELD, c.body_b = "pendulum", c.embed = 1;
    c.source_file = SRC, c.source_line = 61;
    CHECK(sd_builder_add_constraint(bld, &c, &err) == SD_OK);
    if (glued) {
        sd_constraint_desc_init(&c);
        c.name = "glued", c.type = SD_CONSTRAINT_WELD, c.body_a = "pendulum", c.body_b = "bob", c.embed = 1;
        c.frame_a.p[2] = -1.0;
        c.source_file = SRC, c.source_line = 62;
        CHECK(sd_builder_add_constraint(bld, &c, &err) == SD_OK);
    }
    sd_model *m = NULL;
    CHECK(sd_builder_build(bld, &m, &err) == SD_OK);
    sd_builder_free(bld);
    return m;
}

static void test_locks_and_no_speeds(void)
{
    /* A loop that locks its bodies is not an error (decided with the engine's author, against
     * embed.h's list of errors, which names it): its aggregate has no independent speed (a node of
     * no speeds, X_S empty), the tree-augmented solution is the same mechanism welded, and the
     * weld's multipliers are the hanging weight. Checked: accepted, 0 speeds, describe() says so,
     * lambda and the hinge's inter-body force equal the tree-augmented ones. */
    sd_model *m = locked_pendulum(0);
    sd_error err;
    sd_embedding *e = m ? embed(m, "all", NULL, NULL, &err) : NULL;
    CHECK(e != NULL);
    if (!e && m) fprintf(stderr, "locked pendulum refused: %s\n", err.message);
    if (e) {
        char desc[512];
        sd_embedding_describe(e, desc, sizeof desc);
        printf("  loop that locks its bodies:        accepted: %s\n", desc);
        CHECK(sd_embedding_nv(e) == 0 && sd_embedding_naggregates(e) == 1);
        CHECK(strstr(desc, "locks its bodies") != NULL);
        sd_embedded_data *ed = sd_embedded_data_new(e);
        sd_data *d = sd_data_new(m);
        double q[1] = {0}, u[1] = {0}, tau[1] = {0}, qdd[1] = {0}, lam_e[6], lam_t[6], f_e[6], f_t[6], dummy[1];
        sd_embedded_fd_options eo = {.interbody_forces = 1};
        CHECK(sd_embedded_forward_dynamics(e, ed, q, dummy, dummy, NULL, dummy, qdd, &eo) == SD_OK);
        CHECK(sd_embedded_constraint_forces(e, ed, lam_e) == SD_OK);
        CHECK(sd_interbody_force(m, sd_embedded_tree_data(ed), 0, SD_FRAME_WORLD, f_e) == SD_OK);
        sd_closed_loop_options co = {.interbody_forces = 1};
        CHECK(sd_closed_loop_forward_dynamics(m, d, q, u, tau, NULL, qdd, lam_t, &co) == SD_OK);
        CHECK(sd_interbody_force(m, d, 0, SD_FRAME_WORLD, f_t) == SD_OK);
        CHECK_ARRAY_CLOSE(lam_e, lam_t, 6, 1e-12, "locked pendulum: lambda embedded = tree-augmented");
        CHECK_ARRAY_CLOSE(f_e, f_t, 6, 1e-12, "locked pendulum: hinge force embedded = tree-augmented");
        printf("  locked pendulum: weld wrench [%.6f %.6f %.6f; %.6f %.6f %.6f] (embedded), moment x %.6f N m "
               "(tree-augmented)\n", lam_e[0], lam_e[1], lam_e[2], lam_e[3], lam_e[4], lam_e[5], lam_t[0]);
        sd_data_free(d);
        sd_embedded_data_free(ed);
        sd_embedding_free(e);
    }
    sd_model_free(m);
    /* a "loop" through no speed: refused, there is nothing to embed */
    m = locked_pendulum(1);
    const char *n2[2] = {"glued", SRC ":62"};
    if (m) expect_refused("loop through no speed:", m, "glued", NULL, NULL, SD_E_ARGUMENT, n2, 2);
    sd_model_free(m);
}

/* a model with a flexible body (a one-mode panel on its own hinge) beside an embedded loop: the
 * flexible body is outside the aggregate, so the embedding is built (test_embed_flexible checks its
 * dynamics); a flexible body inside an aggregate is refused there */
static void test_flexible(void)
{
    sd_builder *bld = sd_builder_new();
    sd_error err;
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "pendulum", d.hinge = SD_HINGE_REVOLUTE, d.axis[0] = 1.0, d.axis[2] = 0.0, d.mass = 1.0, d.com[2] = -0.5;
    for (int j = 0; j < 3; ++j) d.inertia[4 * j] = 0.01;
    CHECK(sd_builder_add_body(bld, &d, &err) == SD_OK);
    sd_body_desc_init(&d);
    d.name = "panel", d.hinge = SD_HINGE_REVOLUTE, d.placement.p[1] = 1.0, d.mass = 2.0;
    for (int j = 0; j < 3; ++j) d.inertia[4 * j] = 0.1;
    CHECK(sd_builder_add_body(bld, &d, &err) == SD_OK);
    const double pos[3] = {0.5, 0, 0}, mass[1] = {0.3}, modes[6] = {0, 0, 0, 0, 1, 0}, K[1] = {50.0};
    sd_flex_desc f;
    sd_flex_desc_init(&f);
    f.n_nodes = 1, f.node_position = pos, f.node_mass = mass, f.n_modes = 1, f.modes = modes, f.stiffness = K;
    CHECK(sd_builder_set_flexible(bld, "panel", &f, &err) == SD_OK);
    /* a loop on a model with flexible bodies builds; embedding it is offered (the panel is outside) */
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = "lock", c.type = SD_CONSTRAINT_WELD, c.body_b = "pendulum", c.embed = 1;
    c.source_file = SRC, c.source_line = 71;
    CHECK(sd_builder_add_constraint(bld, &c, &err) == SD_OK);
    sd_model *m = NULL;
    CHECK(sd_builder_build(bld, &m, &err) == SD_OK && m != NULL);
    sd_builder_free(bld);
    if (m) {
        sd_embed_options o;
        sd_embed_options_init(&o);
        o.loops = "all";
        sd_embedding *e = sd_embedding_new(m, &o, &err);
        CHECK(e != NULL && sd_embedding_nv(e) == sd_model_nv(m) - 1); /* the weld locks the pendulum */
        sd_embedding_free(e);
    }
    sd_model_free(m);
    /* without the constraint: a flexible model embeds as itself */
    bld = sd_builder_new();
    sd_body_desc_init(&d);
    d.name = "panel", d.hinge = SD_HINGE_REVOLUTE, d.placement.p[1] = 1.0, d.mass = 2.0;
    for (int j = 0; j < 3; ++j) d.inertia[4 * j] = 0.1;
    CHECK(sd_builder_add_body(bld, &d, &err) == SD_OK);
    CHECK(sd_builder_set_flexible(bld, "panel", &f, &err) == SD_OK);
    m = NULL;
    CHECK(sd_builder_build(bld, &m, &err) == SD_OK);
    sd_builder_free(bld);
    if (!m) return;
    sd_embedding *e = sd_embedding_new(m, NULL, &err);
    CHECK(e != NULL && sd_embedding_nv(e) == sd_model_nv(m));
    sd_embedding_free(e);
    sd_model_free(m);
}

int main(void)
{
    test_names_and_overrides();
    test_singular_override();
    test_assembly();
    test_split_must_change();
    test_locks_and_no_speeds();
    test_flexible();
    return test_summary("test_embed_errors");
}
