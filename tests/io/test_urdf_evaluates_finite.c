/*
 * tests/io/test_urdf_evaluates_finite.c — every model that loads evaluates to finite numbers.
 * Over the broken corpus, the bundled models and generated models at the physical bounds (the
 * heaviest and largest bodies, the stiffest dampers, the widest limits, light bodies among heavy
 * ones), with every loader option, at the neutral configuration and at random ones with random
 * speeds, accelerations and forces: inverse dynamics, bias forces, the mass matrix and both
 * forward dynamics either succeed with finite outputs or report a singular mass matrix: never
 * SD_OK with a NaN or an infinity, never an overflow. This is what the loader's bounds promise, and
 * what a fuzzer of sd_urdf_load_string checks on every input that loads.
 *
 * Usage: test_urdf_evaluates_finite <broken corpus folder> <bundled models folder>
 */
#define _POSIX_C_SOURCE 200809L /* opendir, readdir */

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "test_util.h"

static int nloaded, nrefused, nevaluated, nfailed_cleanly;

static int all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* One call's outcome: SD_OK with finite outputs, or a singular mass matrix (a massless subtree, or
 * one so light against its neighbours that M is singular to working precision) reported with a
 * message; never an overflow: the bounds keep every product in range. */
static void expect_finite(const char *model, const char *call, const sd_data *data, sd_status st, const double *out,
                          size_t n)
{
    if (st != SD_OK) {
        ++nfailed_cleanly;
        CHECK(st == SD_E_SINGULAR && sd_data_error(data)[0] != '\0');
        if (st != SD_E_SINGULAR)
            fprintf(stderr, "  %s: %s failed with %s: %s\n", model, call, sd_status_name(st), sd_data_error(data));
        return;
    }
    const int ok = all_finite(out, n);
    CHECK(ok);
    if (!ok) fprintf(stderr, "  %s: %s returned SD_OK with a non-finite output\n", model, call);
    ++nevaluated;
}

static double uniform(uint64_t *rng) { return 2.0 * sd_random_uniform(rng) - 1.0; }

static void evaluate(const sd_model *m, const char *name)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    const size_t Q = (size_t)(nq > 0 ? nq : 1), V = (size_t)(nv > 0 ? nv : 1);
    double *q = calloc(Q, sizeof *q), *u = calloc(V, sizeof *u), *tau = calloc(V, sizeof *tau),
           *qdd = calloc(V, sizeof *qdd), *out = calloc(V, sizeof *out), *M = calloc(V * V, sizeof *M);
    sd_data *data = sd_data_new(m);
    CHECK(q && u && tau && qdd && out && M && data);
    if (!(q && u && tau && qdd && out && M && data)) goto done;
    uint64_t rng = 0x5DEECE66Du;
    for (int trial = 0; trial < 4; ++trial) {
        if (trial == 0) {
            sd_configuration_neutral(m, q);
        } else {
            sd_configuration_random(m, &rng, q);
            for (int i = 0; i < nv; ++i) u[i] = uniform(&rng), tau[i] = uniform(&rng), qdd[i] = uniform(&rng);
        }
        expect_finite(name, "sd_inverse_dynamics", data, sd_inverse_dynamics(m, data, q, u, qdd, NULL, out), out,
                      (size_t)nv);
        expect_finite(name, "sd_bias_forces", data, sd_bias_forces(m, data, q, u, NULL, out), out, (size_t)nv);
        expect_finite(name, "sd_mass_matrix", data, sd_mass_matrix(m, data, q, M), M, (size_t)nv * (size_t)nv);
        expect_finite(name, "sd_forward_dynamics", data, sd_forward_dynamics(m, data, q, u, tau, NULL, out), out,
                      (size_t)nv);
        expect_finite(name, "sd_forward_dynamics_cholesky", data,
                      sd_forward_dynamics_cholesky(m, data, q, u, tau, NULL, out), out, (size_t)nv);
    }
done:
    sd_data_free(data);
    free(q), free(u), free(tau), free(qdd), free(out), free(M);
}

/* Load with each of the four option combinations; evaluate whatever loads. */
static void load_and_evaluate(const char *name, const char *path, const char *xml)
{
    for (int o = 0; o < 4; ++o) {
        const sd_urdf_options opt = {.floating_base = o & 1, .keep_fixed_joints = (o >> 1) & 1};
        sd_model *m = NULL;
        sd_error err;
        const sd_status st = xml != NULL ? sd_urdf_load_string(xml, strlen(xml), name, &opt, &m, &err)
                                         : sd_urdf_load_file(path, &opt, &m, &err);
        if (st != SD_OK) {
            ++nrefused;
            CHECK(m == NULL);
            continue;
        }
        ++nloaded;
        evaluate(m, name);
        sd_model_free(m);
    }
}

static void each_file(const char *folder)
{
    DIR *dir = opendir(folder);
    CHECK(dir != NULL);
    if (dir == NULL) return;
    for (struct dirent *e = readdir(dir); e != NULL; e = readdir(dir)) {
        const size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 5, ".urdf") != 0) continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", folder, e->d_name);
        load_and_evaluate(e->d_name, path, NULL);
    }
    closedir(dir);
}

/* A chain of n links at the bounds: link k has mass `mass(k)`, its centre of mass and the next
 * joint 1e6 m away, principal moments m (1e6 m)^2 / 2 (the largest the bound allows that keeps the
 * triangle inequality), damping 1e30, revolute joints about changing axes and prismatic ones with
 * limits of +-1e6 m. */
static char *chain_at_bounds(int n, double light_mass)
{
    const size_t size = (size_t)n * 700 + 200;
    char *xml = malloc(size), *p = xml;
    if (xml == NULL) return NULL;
    p += sprintf(p, "<robot name='bounds'>\n");
    for (int k = 0; k < n; ++k) {
        const double m = (k % 3 == 2 && light_mass > 0) ? light_mass : 1e12, I = m * 0.5e12;
        p += sprintf(p,
                     "<link name='l%d'><inertial><origin xyz='1e6 0 -1e6' rpy='0.3 1e6 -2'/><mass value='%.17g'/>"
                     "<inertia ixx='%.17g' ixy='0' ixz='0' iyy='%.17g' iyz='0' izz='%.17g'/></inertial></link>\n",
                     k, m, I, I, I);
        if (k == 0) continue;
        if (k % 4 == 3)
            p += sprintf(p,
                         "<joint name='j%d' type='prismatic'><parent link='l%d'/><child link='l%d'/>"
                         "<origin xyz='1e6 -1e6 1e6'/><axis xyz='1e300 1e300 0'/>"
                         "<limit lower='-1e6' upper='1e6' effort='1e25' velocity='3e8'/>"
                         "<dynamics damping='1e30' friction='1e25'/></joint>\n",
                         k, k - 1, k);
        else
            p += sprintf(p,
                         "<joint name='j%d' type='revolute'><parent link='l%d'/><child link='l%d'/>"
                         "<origin xyz='-1e6 1e6 1e6' rpy='1e6 -1e6 0.5'/><axis xyz='%d 1e-300 %d'/>"
                         "<limit lower='-1e6' upper='1e6'/><dynamics damping='1e30'/></joint>\n",
                         k, k - 1, k, k % 2, 1 - k % 2);
    }
    sprintf(p, "</robot>\n");
    return xml;
}

static void check_bounds_evaluate(void)
{
    const struct { int n; double light; } cases[] = {{2, 0}, {30, 0}, {30, 1e-12}, {200, 1e-6}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        char *xml = chain_at_bounds(cases[c].n, cases[c].light);
        CHECK(xml != NULL);
        if (xml == NULL) continue;
        char name[64];
        snprintf(name, sizeof name, "bounds_%d_%g.urdf", cases[c].n, cases[c].light);
        const int before = nloaded;
        load_and_evaluate(name, NULL, xml);
        CHECK(nloaded == before + 4); /* at the bounds, not beyond: every option loads */
        free(xml);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s <broken corpus folder> <bundled models folder>\n", argv[0]);
        return 2;
    }
    each_file(argv[1]);
    each_file(argv[2]);
    check_bounds_evaluate();
    printf("%d loads evaluated (%d refused): %d calls finite, %d failed with a status\n", nloaded, nrefused,
           nevaluated, nfailed_cleanly);
    CHECK(nloaded >= 36 && nevaluated > 0); /* 5 bundled models and 4 generated ones, 4 options each */
    return test_summary("test_urdf_evaluates_finite");
}
