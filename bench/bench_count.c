/*
 * bench/bench_count.c — soadyn_bench --count K --model KEY [--shared DIR]: each of ID, M, FD, M^-1
 * and det M called K times on one model, nothing timed, for callgrind's instruction counts per call
 * (the figure the one-engine refactor is held to: exact and repeatable, where times are not):
 *   valgrind --tool=callgrind --toggle-collect='count_*' soadyn_bench --count K --model KEY
 *   callgrind_annotate --inclusive=yes callgrind.out.<pid> | grep count_      (Ir / K per call)
 * scripts/callgrind_engine.sh runs this for every model and prints the table.
 *
 * KEY: iiwa (the bundled models/iiwa14.urdf, 7 revolute), hyq (DIR/hyq/hyq_no_sensors.urdf, free +
 * 12), talos (DIR/talos/talos_reduced.urdf, free + 32, the rows of bench_peers.c), tree30 (a random
 * tree of 30 bodies holding every hinge type, tests/random_tree.c, seed fixed below). DIR defaults to
 * ../shared/models beside the source tree.
 *
 * Each algorithm is called once before the counted functions, so that what a first call does once
 * is not spread over the K calls. Every call includes its kinematics.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_count.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "bench_common.h"
#include "random_tree.h"


typedef struct count_case {
    const sd_model *m;
    sd_data *d;
    double *q, *u, *tau, *qdd, *M;
} count_case;

/* A failed call is a bug in the library or this program: the figure would be meaningless. */
static void check(sd_status s, const count_case *c, const char *what)
{
    if (s == SD_OK) return;
    fprintf(stderr, "soadyn_bench --count: %s failed: %s\n", what, sd_data_error(c->d));
    exit(1);
}

BENCH_NOINLINE static void count_id(count_case *c, long k)
{
    for (long i = 0; i < k; ++i) check(sd_inverse_dynamics(c->m, c->d, c->q, c->u, c->qdd, NULL, c->tau), c, "ID");
}
BENCH_NOINLINE static void count_mass_matrix(count_case *c, long k)
{
    for (long i = 0; i < k; ++i) check(sd_mass_matrix(c->m, c->d, c->q, c->M), c, "M");
}
BENCH_NOINLINE static void count_fd(count_case *c, long k)
{
    for (long i = 0; i < k; ++i)
        check(sd_forward_dynamics(c->m, c->d, c->q, c->u, c->tau, NULL, c->qdd), c, "FD");
}
BENCH_NOINLINE static void count_minv(count_case *c, long k)
{
    for (long i = 0; i < k; ++i) check(sd_mass_matrix_inverse(c->m, c->d, c->q, c->M), c, "M^-1");
}
BENCH_NOINLINE static void count_det(count_case *c, long k)
{
    double log_det = 0.0;
    for (long i = 0; i < k; ++i) check(sd_mass_matrix_determinant(c->m, c->d, c->q, NULL, &log_det), c, "det M");
}

static sd_model *load_urdf(const char *path, int floating)
{
    sd_urdf_options opt;
    memset(&opt, 0, sizeof opt);
    opt.floating_base = floating;
    sd_model *m = NULL;
    sd_error err;
    if (sd_urdf_load_file(path, &opt, &m, &err) != SD_OK) {
        fprintf(stderr, "soadyn_bench --count: %s\n", err.message);
        return NULL;
    }
    return m;
}

/* The 30-body tree: this seed draws every hinge type (checked when the model is made). */
static sd_model *tree30(void)
{
    uint64_t rng = 7;
    sd_model *m = random_tree(&rng, 30, 0);
    int seen[SD_HINGE_TYPE_COUNT] = {0};
    for (int k = 0; k < sd_model_nbodies(m); ++k) seen[sd_model_hinge(m, k)] = 1;
    for (int t = 0; t < SD_HINGE_TYPE_COUNT; ++t)
        if (!seen[t]) {
            fprintf(stderr, "soadyn_bench --count: tree30 lacks hinge type %d (change the seed)\n", t);
            exit(1);
        }
    return m;
}

int bench_count(int argc, char **argv)
{
    long k = 0;
    int bad = 0;
    const char *key = NULL, *shared = SOADYN_SHARED_MODELS_DIR;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) k = atol(argv[++i]);
        else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) key = argv[++i];
        else if (strcmp(argv[i], "--shared") == 0 && i + 1 < argc) shared = argv[++i];
        else bad = 1;
    }
    if (bad || k < 1 || !key) {
        fprintf(stderr, "usage: soadyn_bench --count K --model iiwa|hyq|talos|tree30 [--shared DIR]\n");
        return 2;
    }
    char path[1100];
    sd_model *m = NULL;
    if (strcmp(key, "iiwa") == 0) {
        m = load_urdf(SOADYN_SOURCE_DIR "/models/iiwa14.urdf", 0);
    } else if (strcmp(key, "hyq") == 0 || strcmp(key, "talos") == 0) {
        snprintf(path, sizeof path, "%s/%s", shared,
                 key[0] == 'h' ? "hyq/hyq_no_sensors.urdf" : "talos/talos_reduced.urdf");
        m = load_urdf(path, 1);
    } else if (strcmp(key, "tree30") == 0) {
        m = tree30();
    } else {
        fprintf(stderr, "soadyn_bench --count: unknown model %s (iiwa, hyq, talos, tree30)\n", key);
        return 2;
    }
    if (!m) return 1;
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    count_case c = {m, sd_data_new(m), malloc((size_t)nq * sizeof(double)), malloc((size_t)nv * sizeof(double)),
                    malloc((size_t)nv * sizeof(double)), malloc((size_t)nv * sizeof(double)),
                    malloc((size_t)nv * (size_t)nv * sizeof(double))};
    if (!c.d || !c.q || !c.u || !c.tau || !c.qdd || !c.M) {
        fprintf(stderr, "soadyn_bench --count: out of memory\n");
        return 1;
    }
    uint64_t rng = 2026;
    sd_configuration_random(m, &rng, c.q);
    random_vector(&rng, c.u, nv, 1.0);
    random_vector(&rng, c.tau, nv, 1.0);
    random_vector(&rng, c.qdd, nv, 1.0);
    printf("%s: %d bodies, nq %d, nv %d, %ld calls each\n", key, sd_model_nbodies(m), nq, nv, k);
    double log_det = 0.0; /* the warm-up calls, outside the counted functions */
    check(sd_inverse_dynamics(m, c.d, c.q, c.u, c.qdd, NULL, c.tau), &c, "ID");
    check(sd_mass_matrix(m, c.d, c.q, c.M), &c, "M");
    check(sd_forward_dynamics(m, c.d, c.q, c.u, c.tau, NULL, c.qdd), &c, "FD");
    check(sd_mass_matrix_inverse(m, c.d, c.q, c.M), &c, "M^-1");
    check(sd_mass_matrix_determinant(m, c.d, c.q, NULL, &log_det), &c, "det M");
    count_id(&c, k);
    count_mass_matrix(&c, k);
    count_fd(&c, k);
    count_minv(&c, k);
    count_det(&c, k);
    sd_data_free(c.d);
    free(c.q); free(c.u); free(c.tau); free(c.qdd); free(c.M);
    sd_model_free(m);
    return 0;
}
