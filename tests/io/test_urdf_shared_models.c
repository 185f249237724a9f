/*
 * tests/io/test_urdf_shared_models.c — every URDF of ../shared/models loads with the degrees of
 * freedom MODELS.md gives (robots with an implicit floating base are loaded with floating_base:
 * nv = DOF + 6), with fixed joints merged and kept alike; merging changes neither the total mass
 * nor M(q) and C(q, u) at random states; mimic joints on moving joints are coupling constraints by
 * default (as many as MODELS.md gives) and independent joints, listed by one warning, with
 * mimic_independent. Prints each model's sizes and warnings.
 *
 * Usage: test_urdf_shared_models <shared models folder>; exits 77 (skipped) when it is absent.
 */
#include <stdio.h>
#include <string.h>

#include <soadyn/dynamics.h>
#include <soadyn/loops.h>
#include <soadyn/urdf.h>

#include "io/model_compare.h"
#include "test_util.h"

typedef struct shared_case {
    const char *file;
    int floating;  /* MODELS.md: "floating base: yes (implicit)" */
    int nv;        /* DOF, + 6 when floating */
    int mimics;    /* mimic joints on moving joints (couplings; or independent, one warning) */
} shared_case;

static const shared_case cases[] = {
    {"acrobot/acrobot.urdf", 0, 2, 0},
    {"double_pendulum/double_pendulum.urdf", 0, 2, 0},
    {"iiwa14/iiwa14_no_collision.urdf", 0, 7, 0},
    {"iiwa14/iiwa14_primitive_collision.urdf", 0, 7, 0},
    {"iiwa_benchmark/kuka_iiwa_robot.urdf", 0, 7, 0},
    {"panda/panda.urdf", 0, 9, 1},
    {"ur5/ur5_robot.urdf", 0, 6, 0},
    {"hyq/hyq_no_sensors.urdf", 1, 12 + 6, 0},
    {"solo/solo12.urdf", 1, 12 + 6, 0},
    {"solo/solo.urdf", 1, 8 + 6, 0},
    {"anymal_b/anymal.urdf", 1, 12 + 6, 0},
    {"anymal_c/anymal.urdf", 1, 12 + 6, 0},
    {"atlas/atlas_convex_hull.urdf", 1, 30 + 6, 0},
    {"atlas/atlas_minimal_contact.urdf", 1, 30 + 6, 0},
    {"talos/talos_full_v2.urdf", 1, 44 + 6, 12},
    {"talos/talos_reduced.urdf", 1, 32 + 6, 0},
    {"cassie_drake/cassie_v2.urdf", 1, 16 + 6, 0},
};

static sd_model *load(const char *path, int floating, int keep_fixed, int mimic_independent)
{
    const sd_urdf_options opt = {
        .floating_base = floating, .keep_fixed_joints = keep_fixed, .mimic_independent = mimic_independent};
    sd_model *m = NULL;
    sd_error err;
    const sd_status st = sd_urdf_load_file(path, &opt, &m, &err);
    CHECK(st == SD_OK);
    if (st != SD_OK) fprintf(stderr, "  %s\n", err.message);
    return m;
}

/* Number of warnings that mention mimic joints, and the count that warning gives. */
static int mimic_warning_count(const sd_model *m, int *nwarnings_about_mimic)
{
    int count = 0;
    *nwarnings_about_mimic = 0;
    for (size_t i = 0; i < sd_model_nwarnings(m); ++i) {
        const char *w = sd_model_warning(m, i), *p = strstr(w, " mimic joint");
        if (p == NULL) continue;
        ++*nwarnings_about_mimic;
        while (p > w && p[-1] >= '0' && p[-1] <= '9') --p;
        sscanf(p, "%d", &count);
    }
    return count;
}

static void check_case(const char *folder, const shared_case *c)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", folder, c->file);
    sd_model *merged = load(path, c->floating, 0, 0), *kept = load(path, c->floating, 1, 0);
    sd_model *independent = load(path, c->floating, 0, 1);
    if (merged != NULL && kept != NULL) {
        const int nq_expect = c->nv + (c->floating ? 1 : 0);
        CHECK(sd_model_nv(merged) == c->nv && sd_model_nq(merged) == nq_expect);
        CHECK(sd_model_nv(kept) == c->nv && sd_model_nq(kept) == nq_expect);
        CHECK(sd_model_nbodies(kept) >= sd_model_nbodies(merged));
        CHECK_CLOSE(sd_model_total_mass(merged), sd_model_total_mass(kept), 1e-12);
        int nmimic_warnings;
        CHECK(mimic_warning_count(merged, &nmimic_warnings) == 0 && nmimic_warnings == 0);
        CHECK(sd_model_nconstraints(merged) == c->mimics && sd_model_nconstraints(kept) == c->mimics);
        CHECK(sd_model_nconstraint_rows(merged) == c->mimics);
        if (independent != NULL) {
            const int mimics = mimic_warning_count(independent, &nmimic_warnings);
            CHECK(mimics == c->mimics && nmimic_warnings == (c->mimics > 0));
            CHECK(sd_model_nconstraints(independent) == 0 && sd_model_nv(independent) == c->nv);
        }
        const double diff = compare_dynamics(merged, kept, 3, 777);
        CHECK(diff >= 0.0 && diff <= 1e-10);
        printf("  %-42s nq %2d nv %2d bodies %3d (kept %3d) frames %3d mass %8.3f warnings %zu  |dM,dC| %.1e\n",
               c->file, sd_model_nq(merged), sd_model_nv(merged), sd_model_nbodies(merged), sd_model_nbodies(kept),
               sd_model_nframes(merged), sd_model_total_mass(merged), sd_model_nwarnings(merged), diff);
        if (sd_model_nconstraints(merged) > 0) printf("      %d coupling constraints\n", sd_model_nconstraints(merged));
        for (size_t i = 0; i < sd_model_nwarnings(merged); ++i)
            printf("      warning: %.200s\n", sd_model_warning(merged, i));
    }
    sd_model_free(merged);
    sd_model_free(kept);
    sd_model_free(independent);
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
    return test_summary("test_urdf_shared_models");
}
