/*
 * tests/embed/test_embed_cassie.c — Cassie's four leg loops embedded (issue 11), from
 * ../shared/models/cassie_mjcf/cassie.xml as the file is (floating pelvis, its damping, springs and
 * armature): per leg the achilles loop (the rod hangs on the hip pitch by a ball; <connect> to the
 * heel spring) and the plantar loop (foot crank, plantar rod, <connect> to the foot).
 *   - structure: four aggregates; an achilles aggregate holds the rod, knee, shin, tarsus and heel
 *     spring below the hip pitch (7 tree speeds, 3 rows, 4 independent: one of them the rod's spin
 *     about its line, which the loop leaves free); a plantar aggregate holds the foot crank, plantar
 *     rod and foot and hangs on the tarsus, a body of the achilles aggregate (nesting); the
 *     embedded speeds = the tree-augmented mobility (sd_constraint_rank);
 *   - at the keyframe "home" (assembled holding hips, knee, tarsus, foot) and at random closed
 *     states near it (random projected speeds, joint and external forces), embedded vs
 *     tree-augmented (embed_compare.h): qdd_tree, every body's inter-body force, lambda, M_e = N^T M N,
 *     C_e, M^-1, log det, ID(FD) to 1e-10 relative;
 *   - the same with only the achilles loops embedded and the plantar loops left tree-augmented, and
 *     the other way round (the mixed solve of embed.h).
 * Usage: test_embed_cassie <shared models folder>; exits 77 when it is absent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed_compare.h"

static const char *const HOME_NAMES[10] = {"hip-roll", "hip-yaw", "hip-pitch", "knee", "shin", "tarsus",
                                           "heel-spring", "foot-crank", "plantar-rod", "foot"};
static const double HOME_LEFT[10] = {0.00449956, 0, 0.497301, -1.1997, 0, 1.42671, -2.25907e-06, -1.52439, 1.50645, -1.59681};
static const double HOME_RIGHT[10] = {-0.00449956, 0, 0.497301, -1.1997, 0, 1.42671, 0, -1.52439, 1.50645, -1.59681};

static void home(const sd_model *m, sd_data *d, double *q)
{
    const int nv = sd_model_nv(m);
    sd_configuration_reference(m, q);
    for (int i = 0; i < 10; ++i)
        for (int side = 0; side < 2; ++side) {
            char name[64];
            snprintf(name, sizeof name, "%s-%s", side ? "right" : "left", HOME_NAMES[i]);
            const int b = sd_model_joint_index(m, name);
            if (b >= 0) q[sd_model_q_index(m, b)] = (side ? HOME_RIGHT : HOME_LEFT)[i];
        }
    unsigned char *lock = calloc((size_t)nv, 1);
    static const char *const held[6] = {"hip-roll", "hip-yaw", "hip-pitch", "knee", "tarsus", "foot"};
    for (int b = 0; b < sd_model_nbodies(m); ++b)
        for (int i = 0; i < 6; ++i) {
            const char *bn = sd_model_body_name(m, b), *s = strchr(bn, '-');
            if (sd_model_hinge_nv(m, b) == 1 && s && strcmp(s + 1, held[i]) == 0) lock[sd_model_v_index(m, b)] = 1;
        }
    double left = 1.0;
    sd_assemble_configuration(m, d, q, lock, 1e-13, 200, q, &left);
    CHECK(left < 1e-12);
    free(lock);
}

/* The comma-separated names of the constraints one of whose bodies' names contains `part`. */
static void constraints_named(const sd_model *m, const char *part, char *out, size_t size)
{
    out[0] = '\0';
    for (int c = 0; c < sd_model_nconstraints(m); ++c) {
        int A = -1, B = -1;
        sd_model_constraint_bodies(m, c, &A, &B);
        if ((A >= 0 && strstr(sd_model_body_name(m, A), part)) || (B >= 0 && strstr(sd_model_body_name(m, B), part))) {
            if (out[0]) strncat(out, ",", size - strlen(out) - 1);
            strncat(out, sd_model_constraint_name(m, c), size - strlen(out) - 1);
        }
    }
}

static int has_body(const sd_model *m, const int *bodies, int n, const char *name)
{
    for (int i = 0; i < n; ++i)
        if (strcmp(sd_model_body_name(m, bodies[i]), name) == 0) return 1;
    return 0;
}

static void structure(const sd_model *m, const sd_embedding *e, sd_data *d, const double *q)
{
    CHECK(sd_embedding_naggregates(e) == 4);
    int rank = -1, mobility = -1;
    CHECK(sd_constraint_rank(m, d, q, &rank, &mobility) == SD_OK);
    printf("cassie: tree nv %d, constraint rows %d, rank %d, mobility %d; embedded nv %d, %d nodes\n", sd_model_nv(m),
           sd_model_nconstraint_rows(m), rank, mobility, sd_embedding_nv(e), sd_embedding_nnodes(e));
    CHECK(sd_embedding_nv(e) == mobility);
    int achilles = 0, plantar = 0;
    for (int a = 0; a < sd_embedding_naggregates(e); ++a) {
        int bodies[64], ind[64];
        const int nb = sd_embedding_aggregate_bodies(e, a, bodies), ni = sd_embedding_aggregate_independent(e, a, ind);
        const int parent = sd_embedding_aggregate_parent(e, a);
        const char *pn = parent >= 0 ? sd_model_body_name(m, parent) : "(world)";
        const char *side = strncmp(pn, "left", 4) == 0 ? "left" : "right";
        char name[5][64];
        static const char *const ach[5] = {"achilles-rod", "knee", "shin", "tarsus", "heel-spring"};
        static const char *const pla[3] = {"foot-crank", "plantar-rod", "foot"};
        if (strstr(pn, "hip-pitch")) {
            int all = nb == 5 && ni == 4;
            for (int i = 0; i < 5; ++i) snprintf(name[i], sizeof name[i], "%s-%s", side, ach[i]), all &= has_body(m, bodies, nb, name[i]);
            CHECK(all);
            achilles += all;
        } else if (strstr(pn, "tarsus")) {
            int all = nb == 3 && ni == 1;
            for (int i = 0; i < 3; ++i) snprintf(name[i], sizeof name[i], "%s-%s", side, pla[i]), all &= has_body(m, bodies, nb, name[i]);
            CHECK(all);
            plantar += all;
            /* nested: its parent body lies in another aggregate */
            int nested = 0;
            for (int b = 0; b < sd_embedding_naggregates(e); ++b) {
                int ob[64];
                const int n2 = sd_embedding_aggregate_bodies(e, b, ob);
                if (b != a && has_body(m, ob, n2, pn)) nested = 1;
            }
            CHECK(nested);
        } else {
            CHECK(0);
        }
        printf("  aggregate %d on %s: %d bodies, %d independent tree speeds:", a, pn, nb, ni);
        for (int i = 0; i < ni; ++i) {
            char lab[64];
            sd_speed_label(m, ind[i], lab, sizeof lab);
            printf(" %s", lab);
        }
        printf("\n");
    }
    CHECK(achilles == 2 && plantar == 2);
}

static void run(const char *label, const sd_model *m, sd_data *d, const char *loops, const double *q0, int nrandom,
                uint64_t seed, ec_worst *w)
{
    sd_embed_options o;
    sd_embed_options_init(&o);
    o.loops = loops;
    o.q = q0;
    sd_error err;
    sd_embedding *e = sd_embedding_new(m, &o, &err);
    CHECK(e != NULL);
    if (!e) {
        fprintf(stderr, "%s: %s\n", label, err.message);
        return;
    }
    if (strcmp(loops, "all") == 0) structure(m, e, d, q0);
    char desc[4096];
    sd_embedding_describe(e, desc, sizeof desc);
    printf("%s: %s\n", label, desc);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), nb = sd_model_nbodies(m), nc = sd_model_nconstraint_rows(m);
    sd_embedded_data *ed = sd_embedded_data_new(e);
    double *q = malloc((size_t)nq * sizeof *q), *u = malloc((size_t)nv * sizeof *u), *tau = malloc((size_t)nv * sizeof *tau);
    double *fx = calloc((size_t)(6 * nb), sizeof *fx), *G = malloc((size_t)(nc * nv) * sizeof *G);
    uint64_t rng = seed;
    random_vector(&rng, u, nv, 1.0);
    CHECK(sd_constraint_jacobian(m, d, q0, G) == SD_OK);
    project_on_nullspace(G, nc, nv, u);
    random_vector(&rng, tau, nv, 5.0);
    ec_compare(m, e, ed, d, q0, u, tau, fx, 1e-10, w);
    for (int s = 0; s < nrandom; ++s) {
        double sc = 0.05;
        int ok = 0;
        for (int tries = 0; tries < 5 && !ok; ++tries, sc *= 0.5) ok = ec_random_state(m, e, ed, d, &rng, q0, sc, 1.0, q, u, tau, fx);
        CHECK(ok);
        if (ok) ec_compare(m, e, ed, d, q, u, tau, fx, 1e-10, w);
    }
    ec_print(label, w);
    free(q); free(u); free(tau); free(fx); free(G);
    sd_embedded_data_free(ed);
    sd_embedding_free(e);
}

int main(int argc, char **argv)
{
    char path[1024];
    const int absent = ec_shared_model(argc, argv, "cassie_mjcf/cassie.xml", path, sizeof path);
    if (absent) return absent;
    sd_model *m = NULL;
    sd_error err;
    if (sd_mjcf_load_file(path, &m, &err) != SD_OK) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        return 1;
    }
    sd_data *d = sd_data_new(m);
    double *q0 = malloc((size_t)sd_model_nq(m) * sizeof *q0);
    home(m, d, q0);
    ec_worst all = {0}, ach = {0}, pla = {0};
    run("cassie, all four loops embedded", m, d, "all", q0, 5, 101, &all);
    char loops[256];
    constraints_named(m, "achilles", loops, sizeof loops);
    printf("achilles loops: %s\n", loops);
    run("cassie, achilles embedded, plantar TA", m, d, loops, q0, 3, 202, &ach);
    constraints_named(m, "plantar", loops, sizeof loops);
    printf("plantar loops: %s\n", loops);
    run("cassie, plantar embedded, achilles TA", m, d, loops, q0, 3, 303, &pla);
    free(q0);
    sd_data_free(d);
    sd_model_free(m);
    return test_summary("test_embed_cassie");
}
