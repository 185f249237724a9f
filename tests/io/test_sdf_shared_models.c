/*
 * tests/io/test_sdf_shared_models.c — the SDF files of ../shared/models through libsdformat:
 *   - every *.sdf under the folder loads, except four_bar_drake/four_bar_loop.sdf, whose frame-graph
 *     errors (frames attached to 'world', which a model file cannot name) come back as a parse error
 *     naming the file and libsdformat;
 *   - iiwa14_no_collision.sdf (welded to the world) has the same M (with Drake's reflected rotor
 *     inertia) and C as iiwa14_no_collision.urdf at 20 random states, to 1e-12 relative, once the
 *     URDF's joint damping (0.5, which the SDF does not give) is taken out of C;
 *   - cassie_v2.sdf: 23 links, a free root, its 4 loops (per leg the achilles rod's and the plantar
 *     rod's ball joints) closed as BALL constraints of 3 rows; the rank of G and the mobility at an
 *     assembled configuration (rank 10: the plantar-rod loops are planar, one row each redundant);
 *     welded at the pelvis, the closed-loop forward dynamics there keeps G qdd = -Gdot u = 0 at
 *     u = 0 and is finite, with nonzero loop forces;
 *   - four_bar.sdf: the tree of three revolute joints Drake closes in C++ (no loop in the file).
 *
 * Usage: test_sdf_shared_models <shared models folder>; exits 77 (skipped) when it is absent.
 */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <soadyn/dynamics.h>
#include <soadyn/loops.h>
#include <soadyn/sdf.h>
#include <soadyn/urdf.h>

#include "test_util.h"

static int nfiles = 0;

static void load_all(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat s;
        if (stat(path, &s) != 0) continue;
        if (S_ISDIR(s.st_mode)) {
            load_all(path);
            continue;
        }
        const size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 4, ".sdf") != 0) continue;
        ++nfiles;
        sd_model *m = NULL;
        sd_error err;
        const sd_status st = sd_sdf_load_file(path, NULL, &m, &err);
        if (strcmp(e->d_name, "four_bar_loop.sdf") == 0) {
            CHECK(st == SD_E_PARSE && m == NULL);
            CHECK(strstr(err.message, path) != NULL && strstr(err.message, "libsdformat") != NULL);
            printf("  %-60s refused: %.300s\n", path, err.message);
            continue;
        }
        CHECK(st == SD_OK);
        if (st != SD_OK) {
            fprintf(stderr, "  %s: %s\n", path, err.message);
            continue;
        }
        printf("  %-60s bodies %2d nq %2d nv %2d constraints %d mass %.4f warnings %zu\n", path,
               sd_model_nbodies(m), sd_model_nq(m), sd_model_nv(m), sd_model_nconstraints(m), sd_model_total_mass(m),
               sd_model_nwarnings(m));
        sd_model_free(m);
    }
    closedir(d);
}

/* The two iiwa files differ in one parameter: the URDF gives every joint <dynamics damping="0.5">,
 * the SDF no <dynamics>; both carry Drake's rotor inertia and gear ratio (armature 3.38, 3.38, 3.38,
 * 3.38, 1.32, 1.16, 1.16 kg m^2). So M must agree, and C_urdf = C_sdf + 0.5 u. */
static void check_iiwa(const char *folder)
{
    char sdf[1024], urdf[1024];
    snprintf(sdf, sizeof sdf, "%s/iiwa14/iiwa14_no_collision.sdf", folder);
    snprintf(urdf, sizeof urdf, "%s/iiwa14/iiwa14_no_collision.urdf", folder);
    sd_model *a = NULL, *b = NULL;
    sd_error err;
    const sd_sdf_options fixed = {.fixed_base = 1};
    CHECK(sd_sdf_load_file(sdf, &fixed, &a, &err) == SD_OK);
    CHECK(sd_urdf_load_file(urdf, NULL, &b, &err) == SD_OK);
    if (a != NULL && b != NULL && sd_model_nv(a) == 7 && sd_model_nv(b) == 7) {
        CHECK_CLOSE(sd_model_total_mass(a), sd_model_total_mass(b), 1e-14);
        for (int v = 0; v < 7; ++v) {
            CHECK(strcmp(sd_model_joint_name(a, sd_model_v_body(a, v)), sd_model_joint_name(b, sd_model_v_body(b, v))) == 0);
            CHECK_CLOSE(sd_model_armature(a, v), sd_model_armature(b, v), 1e-15);
            CHECK(sd_model_armature(a, v) > 1.0);
            CHECK(sd_model_damping(a, v) == 0.0 && sd_model_damping(b, v) == 0.5);
        }
        sd_data *da = sd_data_new(a), *db = sd_data_new(b);
        uint64_t rng = 20261126;
        double q[7], u[7], Ma[49], Mb[49], ca[7], cb[7], dM = 0.0, dC = 0.0;
        for (int t = 0; t < 20; ++t) {
            sd_configuration_random(a, &rng, q);
            for (int i = 0; i < 7; ++i) u[i] = 4.0 * sd_random_uniform(&rng) - 2.0;
            CHECK(sd_mass_matrix(a, da, q, Ma) == SD_OK && sd_mass_matrix(b, db, q, Mb) == SD_OK);
            CHECK(sd_bias_forces(a, da, q, u, NULL, ca) == SD_OK && sd_bias_forces(b, db, q, u, NULL, cb) == SD_OK);
            for (int i = 0; i < 7; ++i) cb[i] -= 0.5 * u[i]; /* the URDF's damping */
            dM = fmax(dM, test_rel_diff(Ma, Mb, 49));
            dC = fmax(dC, test_rel_diff(ca, cb, 7));
        }
        printf("  iiwa14 SDF vs URDF at 20 states: M (with armature) %.2e, C (the URDF's damping 0.5 u taken out) "
               "%.2e relative\n", dM, dC);
        CHECK(dM <= 1e-12 && dC <= 1e-12);
        sd_data_free(da);
        sd_data_free(db);
    }
    sd_model_free(a);
    sd_model_free(b);
    /* floating by default: no joint to 'world' in the file */
    CHECK(sd_sdf_load_file(sdf, NULL, &a, &err) == SD_OK);
    if (a != NULL) {
        CHECK(sd_model_nv(a) == 13 && sd_model_hinge(a, 0) == SD_HINGE_FREE);
        CHECK(strcmp(sd_model_joint_name(a, 0), "iiwa_link_0_root") == 0);
    }
    sd_model_free(a);
}

static void check_cassie(const char *folder)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/cassie_sdf/cassie_v2.sdf", folder);
    sd_model *m = NULL;
    sd_error err;
    CHECK(sd_sdf_load_file(path, NULL, &m, &err) == SD_OK);
    if (m == NULL) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    CHECK(sd_model_nbodies(m) == 23);
    CHECK(sd_model_hinge(m, 0) == SD_HINGE_FREE && strcmp(sd_model_body_name(m, 0), "pelvis") == 0);
    CHECK(sd_model_nv(m) == 6 + 22 && sd_model_nq(m) == 7 + 22);
    CHECK(sd_model_nconstraints(m) == 4 && sd_model_nconstraint_rows(m) == 12);
    /* the shin spring: <damping>0.1</damping> <spring_reference>0</spring_reference> <spring_stiffness>1500 */
    const int shin = sd_model_joint_index(m, "left-knee-shin-joint");
    CHECK(shin >= 0 && sd_model_hinge(m, shin) == SD_HINGE_REVOLUTE);
    if (shin >= 0) {
        const int v = sd_model_v_index(m, shin);
        CHECK(sd_model_stiffness(m, v) == 1500.0 && sd_model_damping(m, v) == 0.1 && sd_model_spring_ref(m, v) == 0.0);
    }
    static const char *const loops[4] = {"left-pitch-rod-joint", "right-pitch-rod-joint", "left-plantar-foot-joint",
                                         "right-plantar-foot-joint"};
    for (int c = 0; c < sd_model_nconstraints(m); ++c) {
        CHECK(sd_model_constraint_type(m, c) == SD_CONSTRAINT_BALL);
        printf("  cassie loop %d: %s (%s)\n", c, sd_model_constraint_name(m, c),
               sd_constraint_type_name(sd_model_constraint_type(m, c)));
    }
    for (int c = 0; c < 4; ++c) CHECK(sd_model_constraint_index(m, loops[c]) >= 0);
    const int nq = sd_model_nq(m), nc = sd_model_nconstraint_rows(m);
    int nv = sd_model_nv(m);
    double *q = calloc((size_t)nq, sizeof *q), *qa = calloc((size_t)nq, sizeof *qa);
    double *u = calloc((size_t)nv, sizeof *u), *tau = calloc((size_t)nv, sizeof *tau), *qdd = calloc((size_t)nv, sizeof *qdd);
    double *res = calloc((size_t)nc, sizeof *res), *G = calloc((size_t)nc * (size_t)nv, sizeof *G);
    double *lambda = calloc((size_t)nc, sizeof *lambda);
    sd_data *d = sd_data_new(m);
    sd_configuration_neutral(m, q);
    /* the file's configuration closes the loops up to the rounding of its 5-digit poses */
    CHECK(sd_constraint_residuals(m, d, q, NULL, res, NULL) == SD_OK);
    double open = 0.0;
    for (int i = 0; i < nc; ++i) open = fmax(open, fabs(res[i]));
    printf("  cassie: largest loop residual at the file's configuration %.2e m\n", open);
    CHECK(open < 1e-3);
    /* a nearby configuration: the knees bent a little, assembled back onto the loops */
    uint64_t rng = 12345;
    for (int i = 7; i < nq; ++i) q[i] += 0.05 * (2.0 * sd_random_uniform(&rng) - 1.0);
    double left = 1.0;
    CHECK(sd_assemble_configuration(m, d, q, NULL, 1e-12, 100, qa, &left) == SD_OK);
    CHECK(left <= 1e-12);
    int rank = -1, mobility = -1;
    CHECK(sd_constraint_rank(m, d, qa, &rank, &mobility) == SD_OK);
    printf("  cassie: assembled (residual %.1e), rank of G %d, mobility %d\n", left, rank, mobility);
    /* the plantar-rod loops are planar (tarsus-crank, crank-rod and foot joints about parallel axes),
     * so each ball's row along those axes is redundant; the achilles loops are spatial */
    CHECK(rank == 10 && mobility == nv - 10);
    /* welded at the pelvis, so that the loops carry the legs' weight (floating, all falls freely) */
    sd_model *w = NULL;
    const sd_sdf_options weld = {.fixed_base = 1};
    CHECK(sd_sdf_load_file(path, &weld, &w, &err) == SD_OK && w != NULL && sd_model_nv(w) == nv - 6);
    if (w == NULL) return;
    sd_data_free(d);
    m = (sd_model_free(m), w);
    d = sd_data_new(m);
    nv -= 6;
    memmove(qa, qa + 7, (size_t)(nq - 7) * sizeof *qa);
    CHECK(sd_assemble_configuration(m, d, qa, NULL, 1e-12, 100, qa, &left) == SD_OK && left <= 1e-12);
    const sd_status fd = sd_closed_loop_forward_dynamics(m, d, qa, u, tau, NULL, qdd, lambda, NULL);
    CHECK(fd == SD_OK);
    if (fd != SD_OK) fprintf(stderr, "  closed-loop FD: %s\n", sd_data_error(d));
    CHECK(sd_constraint_jacobian(m, d, qa, G) == SD_OK);
    double worst = 0.0, size = 1.0;
    for (int i = 0; i < nv; ++i) size = fmax(size, fabs(qdd[i]));
    for (int r = 0; r < nc; ++r) {
        double s = 0.0;
        for (int k = 0; k < nv; ++k) s += G[r * nv + k] * qdd[k];
        worst = fmax(worst, fabs(s));
    }
    int finite = 1;
    for (int i = 0; i < nv; ++i) finite = finite && isfinite(qdd[i]);
    for (int i = 0; i < nc; ++i) finite = finite && isfinite(lambda[i]);
    printf("  cassie welded at the pelvis: closed-loop FD at rest, |G qdd| %.1e (|qdd| up to %.2f), lambda[0..2] "
           "%.3f %.3f %.3f N\n", worst, size, lambda[0], lambda[1], lambda[2]);
    double pull = 0.0;
    for (int i = 0; i < nc; ++i) pull = fmax(pull, fabs(lambda[i]));
    CHECK(finite && worst <= 1e-9 * size && pull > 1.0);
    sd_data_free(d);
    free(q); free(qa); free(u); free(tau); free(qdd); free(res); free(G); free(lambda);
    sd_model_free(m);
}

static void check_four_bar(const char *folder)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/four_bar_drake/four_bar.sdf", folder);
    sd_model *m = NULL;
    sd_error err;
    CHECK(sd_sdf_load_file(path, NULL, &m, &err) == SD_OK);
    if (m == NULL) return;
    CHECK(sd_model_nv(m) == 3 && sd_model_nbodies(m) == 3 && sd_model_nconstraints(m) == 0);
    for (int k = 0; k < sd_model_nbodies(m); ++k) CHECK(sd_model_hinge(m, k) == SD_HINGE_REVOLUTE);
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
    load_all(argv[1]);
    printf("  %d SDF files\n", nfiles);
    CHECK(nfiles >= 4);
    check_iiwa(argv[1]);
    check_cassie(argv[1]);
    check_four_bar(argv[1]);
    return test_summary("test_sdf_shared_models");
}
