/*
 * tests/embed/test_embed_mechanisms.c — issue 11's mechanisms, embedded against tree-augmented
 * (embed_compare.h: at the same consistent state, qdd_tree = the tree-augmented qdd, every body's
 * inter-body force, lambda = the cut joints' multipliers, M_e = N^T M N, C_e = N^T (C + M qdd_c),
 * M_e^-1 M_e = I, log det, ID(FD(tau)) = tau, to 1e-10 relative):
 *   - the four-bar and the slider-crank of models/ (URDF+ loops), the four-bar also with each of its
 *     three joints named independent (the override), the same tree accelerations each time;
 *   - a geared motor (002 Eq 17): a rotor and a link coupled by q_rotor = 20 q_link on a turning
 *     base link, a link beyond it, built by hand (rotor + link + COUPLING) and by
 *     sd_builder_add_geared_motor: the same model, the same numbers;
 *   - a 10-link spatial chain with a four-bar at its tip (a payload pendulum hanging on the
 *     coupler, armature on the crank, damping on the coupler's hinge, a spring in the chain);
 * each at its assembled reference state and at random closed states (random speeds projected on
 * G's null space, random joint forces and external forces). The worst differences are printed.
 * Usage: test_embed_mechanisms <models folder>.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed_compare.h"

static const double TOL = 1e-10;

static sd_model *load_urdf(const char *folder, const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", folder, file);
    sd_model *m = NULL;
    sd_error err;
    if (sd_urdf_load_file(path, NULL, &m, &err) != SD_OK) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        return NULL;
    }
    return m;
}

/* A slender rod from e0 to e1 (frame coordinates, origin at the pivot) of mass m, with a little
 * thickness: com and inertia into d. */
static void rod(sd_body_desc *d, double mass, const double e0[3], const double e1[3])
{
    double dir[3], len;
    for (int j = 0; j < 3; ++j) d->com[j] = 0.5 * (e0[j] + e1[j]), dir[j] = e1[j] - e0[j];
    len = sd_v3_norm(dir);
    for (int j = 0; j < 3; ++j) dir[j] /= len;
    d->mass = mass;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            d->inertia[3 * r + c] = mass * len * len / 12.0 * ((r == c) - dir[r] * dir[c]) + mass * 1e-3 * (r == c);
}

/* ---- the geared motor: base (turns about z) -> rotor (about x, q = 20 q_link) and link (about x),
 * and a forearm on the link */
static const double RATIO = 20.0;

static void geared_parts(sd_body_desc *base, sd_body_desc *rotor, sd_body_desc *link, sd_body_desc *fore)
{
    sd_body_desc_init(base);
    base->name = "base";
    base->hinge = SD_HINGE_REVOLUTE;
    base->axis[2] = 1.0;
    const double b0[3] = {0, 0, 0}, b1[3] = {0.3, 0.05, 0.02};
    rod(base, 2.0, b0, b1);
    sd_body_desc_init(rotor);
    rotor->name = "arm_rotor";
    rotor->parent = "base";
    rotor->hinge = SD_HINGE_REVOLUTE;
    rotor->placement.p[0] = 0.25;
    rotor->axis[0] = 1.0, rotor->axis[1] = 0.05, rotor->axis[2] = 0.0;
    rotor->mass = 0.4;
    const double Ir[9] = {3e-4, 0, 0, 0, 1.6e-4, 0, 0, 0, 1.6e-4};
    memcpy(rotor->inertia, Ir, sizeof Ir);
    rotor->com[0] = 0.01;
    sd_body_desc_init(link);
    link->name = "arm";
    link->parent = "base";
    link->hinge = SD_HINGE_REVOLUTE;
    link->placement.p[0] = 0.3;
    link->placement.p[1] = 0.02;
    link->axis[0] = 1.0;
    const double l0[3] = {0, 0, 0}, l1[3] = {0.02, 0.35, 0.05};
    rod(link, 1.5, l0, l1);
    sd_body_desc_init(fore);
    fore->name = "forearm";
    fore->parent = "arm";
    fore->hinge = SD_HINGE_REVOLUTE;
    fore->placement.p[1] = 0.35;
    fore->axis[0] = 0.3, fore->axis[2] = 1.0;
    const double f1[3] = {0.1, 0.25, 0.0};
    rod(fore, 0.8, l0, f1);
    fore->armature = 0.02;
}

static sd_model *geared_by_hand(void)
{
    sd_builder *b = sd_builder_new();
    sd_error err;
    sd_body_desc base, rotor, link, fore;
    geared_parts(&base, &rotor, &link, &fore);
    CHECK(sd_builder_add_body(b, &base, &err) == SD_OK);
    CHECK(sd_builder_add_body(b, &rotor, &err) == SD_OK);
    CHECK(sd_builder_add_body(b, &link, &err) == SD_OK);
    CHECK(sd_builder_add_body(b, &fore, &err) == SD_OK);
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = "arm_gear";
    c.type = SD_CONSTRAINT_COUPLING;
    c.joint_a = "arm_rotor";
    c.joint_b = "arm";
    c.ratio = RATIO;
    c.embed = 1;
    CHECK(sd_builder_add_constraint(b, &c, &err) == SD_OK);
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    return m;
}

static sd_model *geared_by_builder(void)
{
    sd_builder *b = sd_builder_new();
    sd_error err;
    sd_body_desc base, rotor, link, fore;
    geared_parts(&base, &rotor, &link, &fore);
    CHECK(sd_builder_add_body(b, &base, &err) == SD_OK);
    sd_geared_motor_desc g;
    sd_geared_motor_desc_init(&g);
    g.name = "arm";
    g.parent = "base";
    g.placement = link.placement;
    memcpy(g.axis, link.axis, sizeof g.axis);
    g.mass = link.mass;
    memcpy(g.com, link.com, sizeof g.com);
    memcpy(g.inertia, link.inertia, sizeof g.inertia);
    g.rotor_placement = rotor.placement;
    memcpy(g.rotor_axis, rotor.axis, sizeof g.rotor_axis);
    g.rotor_mass = rotor.mass;
    memcpy(g.rotor_com, rotor.com, sizeof g.rotor_com);
    memcpy(g.rotor_inertia, rotor.inertia, sizeof g.rotor_inertia);
    g.ratio = RATIO;
    CHECK(sd_builder_add_geared_motor(b, &g, &err) == SD_OK);
    CHECK(sd_builder_add_body(b, &fore, &err) == SD_OK);
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    return m;
}

/* ---- a 10-link spatial chain with a four-bar at its tip (crank a = 0.1, coupler b = 0.35, rocker
 * c = 0.3, ground d = 0.4 on the tip link, the planar loop in the tip's x-y plane, a Grashof crank-
 * rocker as in tests/loops/test_four_bar.c), closed at the rocker's pivot O4 by a revolute. */
static sd_model *chain_with_four_bar(int nlinks)
{
    const double LA = 0.1, LB = 0.35, LC = 0.3, LD = 0.4, t2 = 1.0;
    const double A[3] = {LA * cos(t2), LA * sin(t2), 0}, O4[3] = {LD, 0, 0};
    const double dx = O4[0] - A[0], dy = O4[1] - A[1], dist = sqrt(dx * dx + dy * dy);
    const double along = (LB * LB - LC * LC + dist * dist) / (2 * dist), h = sqrt(LB * LB - along * along);
    const double B[3] = {A[0] + along * dx / dist - h * dy / dist, A[1] + along * dy / dist + h * dx / dist, 0};
    const double O2[3] = {0.1, 0.03, 0.0}; /* the crank's pivot on the tip link */
    sd_builder *b = sd_builder_new();
    const double g[3] = {0, 0, -9.81};
    sd_builder_set_gravity(b, g);
    sd_error err;
    char names[64][16];
    for (int i = 0; i < nlinks; ++i) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        snprintf(names[i % 64], sizeof names[0], "link%d", i);
        d.name = names[i % 64];
        d.parent = i ? names[(i - 1) % 64] : NULL;
        d.hinge = SD_HINGE_REVOLUTE;
        d.placement.p[0] = i ? 0.2 : 0.0;
        d.axis[0] = sin(1.7 * i), d.axis[1] = cos(1.3 * i), d.axis[2] = 0.5;
        const double e0[3] = {0, 0, 0}, e1[3] = {0.2, 0.01 * i, 0.0};
        rod(&d, 1.0 + 0.1 * i, e0, e1);
        if (i == 3) d.stiffness = 2.0, d.spring_ref = 0.1;
        CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    }
    const char *tip = names[(nlinks - 1) % 64];
    const double *piv[3] = {NULL, A, B}; /* crank at O2 (offset 0 in the loop's coordinates), coupler at A, rocker at B */
    const double zero[3] = {0, 0, 0};
    const char *ln[3] = {"crank", "coupler", "rocker"};
    const double *ends[3][2] = {{zero, A}, {A, B}, {B, O4}};
    const double masses[3] = {0.5, 1.2, 0.9};
    for (int k = 0; k < 3; ++k) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        d.name = ln[k];
        d.parent = k ? ln[k - 1] : tip;
        d.hinge = SD_HINGE_REVOLUTE;
        const double *p = piv[k] ? piv[k] : zero, *pp = k == 0 ? NULL : (piv[k - 1] ? piv[k - 1] : zero);
        for (int j = 0; j < 3; ++j) d.placement.p[j] = k == 0 ? O2[j] : p[j] - pp[j];
        double e0[3], e1[3];
        for (int j = 0; j < 3; ++j) e0[j] = ends[k][0][j] - p[j], e1[j] = ends[k][1][j] - p[j];
        rod(&d, masses[k], e0, e1);
        if (k == 0) d.armature = 0.01;
        if (k == 1) d.damping = 0.05;
        CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    }
    sd_body_desc pay; /* a pendulum on the coupler: a rigid node hanging on an aggregate's body */
    sd_body_desc_init(&pay);
    pay.name = "payload";
    pay.parent = "coupler";
    pay.hinge = SD_HINGE_REVOLUTE;
    for (int j = 0; j < 3; ++j) pay.placement.p[j] = 0.5 * (B[j] - A[j]);
    pay.axis[0] = 1.0;
    const double p0[3] = {0, 0, 0}, p1[3] = {0, 0.05, -0.15};
    rod(&pay, 0.3, p0, p1);
    CHECK(sd_builder_add_body(b, &pay, &err) == SD_OK);
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = "tip_loop";
    c.type = SD_CONSTRAINT_REVOLUTE;
    c.body_a = tip;
    c.body_b = "rocker";
    for (int j = 0; j < 3; ++j) c.frame_a.p[j] = O2[j] + O4[j], c.frame_b.p[j] = O4[j] - B[j];
    c.axis[2] = 1.0;
    c.embed = 1;
    c.source_file = "chain_with_four_bar";
    c.source_line = 1;
    CHECK(sd_builder_add_constraint(b, &c, &err) == SD_OK);
    sd_model *m = NULL;
    if (sd_builder_build(b, &m, &err) != SD_OK) fprintf(stderr, "chain_with_four_bar: %s\n", err.message);
    sd_builder_free(b);
    return m;
}

/* The embedding of m (loops, independent), its reference state and `nrandom` random states
 * checked; returns the embedding's nv (-1 on failure). */
static int check_mechanism(const char *name, const sd_model *m, const char *loops, const char *independent,
                           int nrandom, uint64_t seed, double scale, ec_worst *w)
{
    sd_embed_options opt;
    sd_embed_options_init(&opt);
    opt.loops = loops;
    opt.independent = independent;
    sd_error err;
    sd_embedding *e = sd_embedding_new(m, &opt, &err);
    CHECK(e != NULL);
    if (!e) {
        fprintf(stderr, "%s: sd_embedding_new: %s\n", name, err.message);
        return -1;
    }
    char desc[2048];
    sd_embedding_describe(e, desc, sizeof desc);
    printf("%s: %s\n", name, desc);
    sd_embedded_data *ed = sd_embedded_data_new(e);
    sd_data *d = sd_data_new(m);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), nb = sd_model_nbodies(m), nc = sd_model_nconstraint_rows(m);
    double *q0 = malloc((size_t)nq * sizeof *q0), *q = malloc((size_t)nq * sizeof *q);
    double *u = malloc((size_t)nv * sizeof *u), *tau = malloc((size_t)nv * sizeof *tau);
    double *fx = malloc((size_t)(6 * nb) * sizeof *fx), *G = malloc((size_t)(nc * nv + 1) * sizeof *G);
    /* the model's reference closed by the embedding (sd_embedding_new started from it) */
    sd_configuration_reference(m, q0);
    CHECK(sd_embedded_close(e, ed, q0, q0, NULL) == SD_OK);
    /* the mobility the tree-augmented side sees = the embedding's speeds (all embedded) */
    int rank = -1, mobility = -1;
    CHECK(sd_constraint_rank(m, d, q0, &rank, &mobility) == SD_OK);
    if (ec_all_embedded(m, e)) CHECK(sd_embedding_nv(e) == mobility);
    uint64_t rng = seed;
    /* the reference state itself, with random projected speeds */
    random_vector(&rng, u, nv, 2.0);
    CHECK(sd_constraint_jacobian(m, d, q0, G) == SD_OK);
    project_on_nullspace(G, nc, nv, u);
    random_vector(&rng, tau, nv, 1.0);
    memset(fx, 0, (size_t)(6 * nb) * sizeof *fx);
    ec_compare(m, e, ed, d, q0, u, tau, fx, TOL, w);
    for (int s = 0; s < nrandom; ++s) {
        double sc = scale;
        int ok = 0;
        for (int tries = 0; tries < 6 && !ok; ++tries, sc *= 0.5)
            ok = ec_random_state(m, e, ed, d, &rng, q0, sc, 2.0, q, u, tau, fx);
        CHECK(ok);
        if (ok) ec_compare(m, e, ed, d, q, u, tau, fx, TOL, w);
    }
    const int ne = sd_embedding_nv(e);
    free(q0); free(q); free(u); free(tau); free(fx); free(G);
    sd_data_free(d);
    sd_embedded_data_free(ed);
    sd_embedding_free(e);
    return ne;
}

/* The aggregate's bodies by name, for the structure checks. */
static int aggregate_is(const sd_model *m, const sd_embedding *e, int a, const char *const *names, int n)
{
    int bodies[64];
    const int nb = sd_embedding_aggregate_bodies(e, a, bodies);
    if (nb != n) return 0;
    for (int i = 0; i < n; ++i) {
        int found = 0;
        for (int j = 0; j < nb; ++j) found |= strcmp(sd_model_body_name(m, bodies[j]), names[i]) == 0;
        if (!found) return 0;
    }
    return 1;
}

static void structure(const sd_model *m, const char *const *names, int n, const char *parent, int nv)
{
    sd_error err;
    sd_embed_options opt;
    sd_embed_options_init(&opt);
    opt.loops = "all";
    sd_embedding *e = sd_embedding_new(m, &opt, &err);
    CHECK(e != NULL);
    if (!e) return;
    CHECK(sd_embedding_naggregates(e) == 1);
    CHECK(aggregate_is(m, e, 0, names, n));
    CHECK(sd_embedding_aggregate_parent(e, 0) == (parent ? sd_model_body_index(m, parent) : -1));
    CHECK(sd_embedding_nv(e) == nv);
    CHECK(sd_embedding_nnodes(e) == sd_model_nbodies(m) - n + 1);
    CHECK(sd_embedding_constraint_embedded(e, 0) == 1);
    CHECK(sd_embedding_constraint_embedded(e, 1) == -1);
    sd_embedding_free(e);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <models folder>\n", argv[0]);
        return 2;
    }
    ec_worst all = {0};
    #define ACC(w) do { all.closure = fmax(all.closure, w.closure); all.speeds = fmax(all.speeds, w.speeds); \
        all.nmap = fmax(all.nmap, w.nmap); all.qdd = fmax(all.qdd, w.qdd); all.force = fmax(all.force, w.force); \
        all.lambda = fmax(all.lambda, w.lambda); all.mass = fmax(all.mass, w.mass); all.bias = fmax(all.bias, w.bias); \
        all.minv = fmax(all.minv, w.minv); all.logdet = fmax(all.logdet, w.logdet); all.id = fmax(all.id, w.id); \
        all.accrows = fmax(all.accrows, w.accrows); all.cond = fmax(all.cond, w.cond); all.states += w.states; } while (0)

    /* the four-bar: pivoting, then each joint named independent */
    sd_model *fb = load_urdf(argv[1], "four_bar.urdf");
    CHECK(fb != NULL);
    if (fb) {
        static const char *const fb_bodies[3] = {"crank", "coupler", "rocker"};
        structure(fb, fb_bodies, 3, NULL, 1);
        static const char *const splits[4] = {NULL, "crank_joint", "coupler_joint", "rocker_joint"};
        for (int s = 0; s < 4; ++s) {
            ec_worst w = {0};
            char name[64];
            snprintf(name, sizeof name, "four-bar (%s)", splits[s] ? splits[s] : "pivoting");
            CHECK(check_mechanism(name, fb, "all", splits[s], 4, 11 + (uint64_t)s, 0.3, &w) == 1);
            ec_print(name, &w);
            ACC(w);
        }
        sd_model_free(fb);
    }
    sd_model *sc = load_urdf(argv[1], "slider_crank.urdf");
    CHECK(sc != NULL);
    if (sc) {
        static const char *const sc_bodies[3] = {"crank", "rod", "slider"};
        structure(sc, sc_bodies, 3, NULL, 1);
        ec_worst w = {0};
        CHECK(check_mechanism("slider-crank", sc, "all", NULL, 4, 21, 0.3, &w) == 1);
        ec_print("slider-crank", &w);
        ACC(w);
        sd_model_free(sc);
    }
    /* the geared motor, by hand and by the builder: the same numbers */
    sd_model *gh = geared_by_hand(), *gb = geared_by_builder();
    CHECK(gh != NULL && gb != NULL);
    if (gh && gb) {
        static const char *const g_bodies[2] = {"arm_rotor", "arm"};
        structure(gh, g_bodies, 2, "base", 3);
        structure(gb, g_bodies, 2, "base", 3);
        ec_worst w = {0}, wb = {0};
        CHECK(check_mechanism("geared motor (by hand)", gh, NULL, NULL, 4, 31, 0.5, &w) == 3);
        CHECK(check_mechanism("geared motor (builder)", gb, NULL, NULL, 4, 31, 0.5, &wb) == 3);
        ec_print("geared motor (by hand)", &w);
        ec_print("geared motor (builder)", &wb);
        ACC(w);
        ACC(wb);
        /* the same model: at one state (u_rotor = RATIO u_arm, no forces) the tree accelerations by
         * body name are equal, whichever speed each split made independent */
        CHECK(sd_model_nv(gh) == 4 && sd_model_nv(gb) == 4);
        sd_embed_options eo;
        sd_embed_options_init(&eo);
        sd_error e1, e2;
        sd_embedding *eh = sd_embedding_new(gh, &eo, &e1), *eb = sd_embedding_new(gb, &eo, &e2);
        CHECK(eh && eb);
        if (eh && eb && sd_model_nv(gh) == 4 && sd_model_nv(gb) == 4) {
            sd_embedded_data *dh = sd_embedded_data_new(eh), *db = sd_embedded_data_new(eb);
            const char *bn[4] = {"base", "arm_rotor", "arm", "forearm"};
            const double qv[4] = {0.3, RATIO * -0.4, -0.4, 0.9}, uv[4] = {0.7, RATIO * -1.1, -1.1, 2.0};
            double qh[4], qb[4], uth[4], utb[4], ueh[3], ueb[3], zero[3] = {0, 0, 0}, qddh[3], qddb[3], qth[4], qtb[4];
            for (int i = 0; i < 4; ++i) {
                const int kh = sd_model_body_index(gh, bn[i]), kb = sd_model_body_index(gb, bn[i]);
                qh[sd_model_q_index(gh, kh)] = qv[i], qb[sd_model_q_index(gb, kb)] = qv[i];
                uth[sd_model_v_index(gh, kh)] = uv[i], utb[sd_model_v_index(gb, kb)] = uv[i];
            }
            sd_embedded_speeds_of_tree(eh, uth, ueh);
            sd_embedded_speeds_of_tree(eb, utb, ueb);
            CHECK(sd_embedded_forward_dynamics(eh, dh, qh, ueh, zero, NULL, qddh, qth, NULL) == SD_OK);
            CHECK(sd_embedded_forward_dynamics(eb, db, qb, ueb, zero, NULL, qddb, qtb, NULL) == SD_OK);
            double ah[4], ab[4];
            for (int i = 0; i < 4; ++i) {
                ah[i] = qth[sd_model_v_index(gh, sd_model_body_index(gh, bn[i]))];
                ab[i] = qtb[sd_model_v_index(gb, sd_model_body_index(gb, bn[i]))];
            }
            CHECK_ARRAY_CLOSE(ab, ah, 4, 1e-12, "geared motor: builder = by hand");
            const int t = sd_embedding_speed_index(eh, 1), tb = sd_embedding_speed_index(eb, 1);
            printf("geared motor: the aggregate's independent speed: %s (by hand), %s (builder); tree qdd "
                   "base %.6f rotor %.6f arm %.6f forearm %.6f\n",
                   sd_model_joint_name(gh, sd_model_v_body(gh, t)), sd_model_joint_name(gb, sd_model_v_body(gb, tb)),
                   ah[0], ah[1], ah[2], ah[3]);
            sd_embedded_data_free(dh);
            sd_embedded_data_free(db);
        }
        sd_embedding_free(eh);
        sd_embedding_free(eb);
    }
    sd_model_free(gh);
    sd_model_free(gb);
    /* the chain with a four-bar at its tip */
    sd_model *ch = chain_with_four_bar(10);
    CHECK(ch != NULL);
    if (ch) {
        static const char *const c_bodies[3] = {"crank", "coupler", "rocker"};
        structure(ch, c_bodies, 3, "link9", 12);
        ec_worst w = {0};
        CHECK(check_mechanism("10-link chain + four-bar", ch, NULL, NULL, 4, 41, 0.3, &w) == 12);
        ec_print("10-link chain + four-bar", &w);
        ACC(w);
        sd_model_free(ch);
    }
    ec_print("WORST over all mechanisms", &all);
    return test_summary("test_embed_mechanisms");
}
