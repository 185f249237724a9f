/*
 * tests/test_dispatch.c — the run-time dispatch of the hot paths (soadyn/cpu.h, docs/dispatch.md):
 * ID, M, FD and M^-1 of random models, and the closed-loop forward dynamics of both loop layers
 * (tree-augmented and embedded) on a random tree closed by random loops, computed by the baseline
 * code, the AVX2 copy and the AVX-512 copy agree to 1e-12 relative, and each level really runs its
 * own code (the closed-loop entry points too).
 *
 * The level is read once at load (SOADYN_CPU), so the program runs itself once per level
 * (`test_dispatch --emit`, SOADYN_CPU set) and reads back the results as hexadecimal floats, exact.
 * Levels this processor lacks are left out, saying so; a build without dispatch skips (77).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/embed.h>
#include <soadyn/soadyn.h>

#include "loops/random_loops.h"
#include "random_tree.h"
#include "test_util.h"

enum { STATES = 5, MAX_VALUES = 200000 };

/* The models: a tree of every hinge type under a free root, and an axis-aligned chain (the fast
 * paths of the selecting and plane hinges). */
static sd_model *test_model(int which)
{
    uint64_t rng = 0x5eed0000u + (uint64_t)which;
    return which == 0 ? random_tree(&rng, 24, RT_FREE_ROOT)
                      : random_tree(&rng, 16, RT_CHAIN | RT_ONLY_1DOF | RT_AXIS_ALIGNED);
}

/* The closed-loop forward dynamics of both loop layers (dispatched_components.h): a random tree
 * closed by random loops, qdd tree-augmented and embedded (every loop) at STATES closed states, into
 * out; the count, or -1 on a failure. */
static int closed_loop_values(double *out)
{
    uint64_t rng = 0x100b5;
    for (int attempt = 0; attempt < 50; ++attempt) {
        sd_model *m;
        double q0[128], q[128], qc[128], u[128], ue[128], tau[128], qdd[128];
        sd_embedding *e = embed_randomly(&rng, 10, attempt % 2 ? RT_CHAIN : 0, &m, q0);
        if (!e) continue;
        sd_embedded_data *ed = sd_embedded_data_new(e);
        sd_data *d = sd_data_new(m);
        const int nv = sd_model_nv(m), ne = sd_embedding_nv(e);
        int n = 0, ok = 1;
        for (int s = 0; s < STATES && ok; ++s) {
            random_state(m, &rng, q, u, tau); /* q: a small step from q0, closed again */
            random_vector(&rng, u, nv, 0.02);
            sd_configuration_integrate(m, q0, u, 1.0, q);
            ok = sd_embedded_close(e, ed, q, qc, NULL) == SD_OK;
            random_vector(&rng, ue, ne, 1.0);
            ok = ok && sd_embedded_tree_speeds(e, ed, qc, ue, u) == SD_OK;
            ok = ok && sd_closed_loop_forward_dynamics(m, d, qc, u, tau, NULL, qdd, NULL, NULL) == SD_OK;
            for (int i = 0; ok && i < nv; ++i) out[n++] = qdd[i];
            ok = ok && sd_embedded_forward_dynamics(e, ed, qc, ue, tau, NULL, qdd, NULL, NULL) == SD_OK;
            for (int i = 0; ok && i < ne; ++i) out[n++] = qdd[i];
        }
        if (!ok) fprintf(stderr, "test_dispatch --emit: %s %s\n", sd_data_error(d), sd_embedded_error(ed));
        sd_data_free(d);
        sd_embedded_data_free(ed);
        sd_embedding_free(e);
        sd_model_free(m);
        return ok ? n : -1;
    }
    return -1;
}

/* The child: this level's level name, the number of closed-loop values, then ID, M, FD, M^-1 of both
 * models at STATES random states and the closed-loop values, each value as %a. */
static int emit(void)
{
    static double loops[2 * STATES * 128];
    const int nloops = closed_loop_values(loops);
    if (nloops < 0) return 1;
    printf("%s\n%d\n", sd_cpu_level(), nloops);
    for (int which = 0; which < 2; ++which) {
        sd_model *m = test_model(which);
        sd_data *d = sd_data_new(m);
        const int nq = sd_model_nq(m), nv = sd_model_nv(m);
        double *q = malloc(sizeof(double) * (size_t)nq), *u = malloc(sizeof(double) * (size_t)nv),
               *w = malloc(sizeof(double) * (size_t)nv), *out = malloc(sizeof(double) * (size_t)(nv * nv));
        uint64_t rng = 42 + (uint64_t)which;
        for (int s = 0; s < STATES; ++s) {
            random_state(m, &rng, q, u, w);
            for (int cell = 0; cell < 4; ++cell) {
                sd_status st = cell == 0   ? sd_inverse_dynamics(m, d, q, u, w, NULL, out)
                               : cell == 1 ? sd_mass_matrix(m, d, q, out)
                               : cell == 2 ? sd_forward_dynamics(m, d, q, u, w, NULL, out)
                                           : sd_mass_matrix_inverse(m, d, q, out);
                if (st != SD_OK) {
                    fprintf(stderr, "test_dispatch --emit: %s\n", sd_data_error(d));
                    return 1;
                }
                const int count = cell == 0 || cell == 2 ? nv : nv * nv;
                for (int i = 0; i < count; ++i) printf("%a\n", out[i]);
            }
        }
        free(q), free(u), free(w), free(out);
        sd_data_free(d);
        sd_model_free(m);
    }
    for (int i = 0; i < nloops; ++i) printf("%a\n", loops[i]);
    return 0;
}

/* Runs this program with SOADYN_CPU=level; the level it ran in *ran, its values in x (count in *n,
 * the closed-loop ones last, *nloops of them). */
static int run_level(const char *self, const char *level, char ran[32], double *x, int *n, int *nloops)
{
    setenv("SOADYN_CPU", level, 1);
    char command[4200];
    snprintf(command, sizeof command, "'%s' --emit", self);
    FILE *p = popen(command, "r");
    if (!p) return 0;
    *n = 0;
    int ok = fscanf(p, "%31s", ran) == 1 && fscanf(p, "%d", nloops) == 1;
    char word[64];
    while (ok && *n < MAX_VALUES && fscanf(p, "%63s", word) == 1) x[(*n)++] = strtod(word, NULL);
    return pclose(p) == 0 && ok;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--emit") == 0) return emit();
    if (strcmp(sd_cpu_level(), "build target") == 0) {
        printf("test_dispatch: skipped: %s\n", sd_cpu_note());
        return 77;
    }
    static double base[MAX_VALUES], other[MAX_VALUES];
    char ran[32];
    int nbase = 0, n = 0, nloops = 0;
    CHECK(run_level(argv[0], "baseline", ran, base, &nbase, &nloops));
    CHECK(strcmp(ran, "baseline") == 0);
    CHECK(nbase > 0 && nbase < MAX_VALUES);
    const char *levels[] = {"avx2", "avx512"};
    for (int l = 0; l < 2; ++l) {
        CHECK(run_level(argv[0], levels[l], ran, other, &n, &nloops));
        if (strcmp(ran, levels[l]) != 0) {
            printf("%s: not run by this processor (it ran %s instead)\n", levels[l], ran);
            continue;
        }
        CHECK(n == nbase);
        double worst = 0.0;
        int differ = 0, differ_loops = 0;
        for (int i = 0; i < n && i < nbase; ++i) {
            const double scale = fabs(base[i]) > 1.0 ? fabs(base[i]) : 1.0;
            const double rel = fabs(other[i] - base[i]) / scale;
            if (!(rel <= worst)) worst = rel; /* a NaN too */
            differ += memcmp(&other[i], &base[i], sizeof(double)) != 0;
            differ_loops += i >= n - nloops && memcmp(&other[i], &base[i], sizeof(double)) != 0;
        }
        printf("%s against baseline: %d values, %d differ in some bit (closed-loop: %d of %d), largest relative "
               "difference %.2g\n",
               levels[l], n, differ, differ_loops, nloops, worst);
        CHECK(worst <= 1e-12);
        /* the copy's fused multiply-adds round differently somewhere: it is another code that ran, in the
           closed-loop entry points too */
        CHECK(differ > 0 && differ_loops > 0 && nloops > 0);
    }
    /* a value not understood: the processor's own level, as with auto */
    char automatic[32];
    CHECK(run_level(argv[0], "auto", automatic, other, &n, &nloops));
    CHECK(run_level(argv[0], "avx-512", ran, other, &n, &nloops));
    CHECK(strcmp(ran, automatic) == 0);
    return test_summary("test_dispatch");
}
