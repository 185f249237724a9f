/*
 * tests/io/test_mjcf_shared_models.c — every MJCF file of ../shared/models loads, by
 * sd_mjcf_load_file and by content through sd_model_load_file, with the sizes MODELS.md gives (nq,
 * nv, the constraints: cassie's four connect loops, panda's joint equality), the loops closed at
 * MuJoCo's reference configuration, one warning listing what soadyn does not model, and M, C
 * finite at random states. Prints each model's sizes and warning.
 *
 * Usage: test_mjcf_shared_models <shared models folder>; exits 77 (skipped) when it is absent.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "test_util.h"

typedef struct mjcf_case {
    const char *file;
    int nq, nv, nconstraints, rows;
    double mass; /* total mass, kg; < 0: not checked */
} mjcf_case;

static const mjcf_case cases[] = {
    {"humanoid_mjcf/humanoid.xml", 28, 27, 0, 0, -1},
    {"humanoid_mjcf_debian/humanoid.xml", 28, 27, 0, 0, -1},
    {"humanoid_mjcf_debian/22_humanoids.xml", 22 * 28, 594, 0, 0, -1},
    {"ant_mjcf/ant.xml", 15, 14, 0, 0, -1},
    {"half_cheetah_mjcf/half_cheetah.xml", 9, 9, 0, 0, 14.0},
    {"acrobot/acrobot.xml", 2, 2, 0, 0, 2.0},
    {"cassie_mjcf/cassie.xml", 35, 32, 4, 12, -1},
    {"panda/panda.xml", 9, 9, 1, 1, -1},
    {"iiwa14/iiwa14.xml", 7, 7, 0, 0, -1},
    {"ur5/ur5e.xml", 6, 6, 0, 0, -1},
};

static void check_case(const char *dir, const mjcf_case *c)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, c->file);
    sd_model *m = NULL;
    sd_error err;
    if (sd_mjcf_load_file(path, &m, &err) != SD_OK) {
        fprintf(stderr, "%s: %s\n", c->file, err.message);
        CHECK(0);
        return;
    }
    sd_model *m2 = NULL;
    sd_model_format f;
    CHECK(sd_model_load_file(path, NULL, &m2, &f, &err) == SD_OK);
    CHECK(f == SD_FORMAT_MJCF);
    CHECK(m2 != NULL && sd_model_nv(m2) == sd_model_nv(m));
    sd_model_free(m2);
    printf("%-40s nq %3d nv %3d bodies %3d constraints %d (rows %d) mass %.6g\n", c->file, sd_model_nq(m),
           sd_model_nv(m), sd_model_nbodies(m), sd_model_nconstraints(m), sd_model_nconstraint_rows(m),
           sd_model_total_mass(m));
    for (size_t i = 0; i < sd_model_nwarnings(m); ++i) printf("    warning: %s\n", sd_model_warning(m, i));
    CHECK(sd_model_nq(m) == c->nq);
    CHECK(sd_model_nv(m) == c->nv);
    CHECK(sd_model_nconstraints(m) == c->nconstraints);
    CHECK(sd_model_nconstraint_rows(m) == c->rows);
    if (c->mass > 0) CHECK_CLOSE(sd_model_total_mass(m), c->mass, 1e-12);
    CHECK(sd_model_total_mass(m) > 0);
    const int nv = sd_model_nv(m), nq = sd_model_nq(m);
    sd_data *d = sd_data_new(m);
    double *q = calloc((size_t)nq, sizeof *q), *u = calloc((size_t)nv, sizeof *u);
    double *M = calloc((size_t)nv * nv, sizeof *M), *C = calloc((size_t)nv, sizeof *C);
    uint64_t rng = 12345;
    for (int trial = 0; trial < 3; ++trial) {
        sd_configuration_random(m, &rng, q);
        for (int i = 0; i < nv; ++i) u[i] = 2.0 * sd_random_uniform(&rng) - 1.0;
        CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
        CHECK(sd_bias_forces(m, d, q, u, NULL, C) == SD_OK);
        int finite = 1;
        for (int i = 0; i < nv * nv; ++i) finite &= isfinite(M[i]);
        for (int i = 0; i < nv; ++i) finite &= isfinite(C[i]);
        CHECK(finite);
    }
    free(q);
    free(u);
    free(M);
    free(C);
    sd_data_free(d);
    sd_model_free(m);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <shared models folder>\n", argv[0]);
        return 2;
    }
    char probe[1024];
    snprintf(probe, sizeof probe, "%s/MODELS.md", argv[1]);
    FILE *f = fopen(probe, "r");
    if (f == NULL) {
        printf("skipped: shared models folder %s not found\n", argv[1]);
        return 77;
    }
    fclose(f);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) check_case(argv[1], &cases[i]);
    return test_summary("test_mjcf_shared_models");
}
