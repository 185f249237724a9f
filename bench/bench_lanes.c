/*
 * bench/bench_lanes.c — soadyn_bench --codegen --lanes [--batches N] [--shared DIR] [--threads T]:
 * states per second of the batched forward dynamics (soadyn/batch.h) on the iiwa 14 and Talos
 * reduced, in one run: the library's single-state calls (SIMD off), the library's SIMD batch kernel
 * (src/batch/lanes_dynamics.c, AVX2 or AVX-512 as the processor has), the generated single-state
 * function called state by state, and sd_forward_dynamics_batch through the generated lane function
 * (sd_batch_use_lanes) at 4 and 8 lanes, the generated file compiled portable (-O2) and native
 * (-O2 -march=native). Each cell: the median of N interleaved batched calls over 4096 random states,
 * timed in the calling thread's CPU time with one thread (the project's machines are shared: wall
 * time there counts other jobs' slices), in wall time with more.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_codegen.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <soadyn/soadyn.h>

#include "timing.h"

typedef int (*fd_fn)(const double *, const double *, const double *, const double *, double *);

enum { STATES = 4096 };
enum { CFG_SCALAR, CFG_SIMD, CFG_GEN_SINGLE_P, CFG_GEN_SINGLE_N, CFG_X4_P, CFG_X8_P, CFG_X4_N, CFG_X8_N, NCFG };
static const char *const cfg_label[NCFG] = {
    "library, single-state calls (SIMD off)", "library, SIMD batch kernel", "generated single-state, portable",
    "generated single-state, native", "generated x4 lanes, portable", "generated x8 lanes, portable",
    "generated x4 lanes, native", "generated x8 lanes, native"};

/* The calling thread's CPU time, ns. */
static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

typedef struct lanes_case {
    const sd_model *m;
    const double *q, *u, *tau;
    double *qdd;
    sd_batch *batch[NCFG];
    fd_fn single[2];
} lanes_case;

/* One batched call of configuration c over the states; its status. */
static int run_cfg(lanes_case *c, int cfg)
{
    if (cfg == CFG_GEN_SINGLE_P || cfg == CFG_GEN_SINGLE_N) {
        const int nq = sd_model_nq(c->m), nv = sd_model_nv(c->m);
        const fd_fn f = c->single[cfg == CFG_GEN_SINGLE_N];
        int st = 0;
        for (long s = 0; s < STATES; ++s) st |= f(c->q + s * nq, c->u + s * nv, c->tau + s * nv, NULL, c->qdd + s * nv);
        return st;
    }
    return (int)sd_forward_dynamics_batch(c->batch[cfg], STATES, c->q, c->u, c->tau, NULL, c->qdd, NULL);
}

static void *symbol(void *h, const char *fn)
{
    char s[128];
    snprintf(s, sizeof s, "lanes_model_%s", fn);
    return dlsym(h, s);
}

static void model_rows(const char *label, const sd_model *m, int batches, int threads, const char *dir)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    sd_error err;
    const sd_codegen_options o = {.algorithms = SD_CODEGEN_FD, .lanes = SD_CODEGEN_LANES_4 | SD_CODEGEN_LANES_8};
    if (sd_codegen_write(m, &o, dir, "lanes_model", &err) != SD_OK) {
        printf("| %s | %s |\n", label, err.message);
        return;
    }
    double cc_s[2] = {0, 0};
    void *h[2] = {bench_codegen_compile(dir, "lanes_model", "lanes_portable", "-O2", &cc_s[0]),
                  bench_codegen_compile(dir, "lanes_model", "lanes_native", "-O2 -march=native", &cc_s[1])};
    if (!h[0] || !h[1]) return;
    double *q = malloc(sizeof(double) * STATES * (size_t)nq), *u = malloc(sizeof(double) * STATES * (size_t)nv);
    double *tau = malloc(sizeof(double) * STATES * (size_t)nv), *qdd = malloc(sizeof(double) * STATES * (size_t)nv);
    double *ref = malloc(sizeof(double) * STATES * (size_t)nv);
    uint64_t rng = 2026;
    for (long s = 0; s < STATES; ++s) {
        sd_configuration_random(m, &rng, q + s * nq);
        for (int i = 0; i < nv; ++i) {
            u[s * nv + i] = 2 * sd_random_uniform(&rng) - 1;
            tau[s * nv + i] = 2 * sd_random_uniform(&rng) - 1;
        }
    }
    lanes_case c = {.m = m, .q = q, .u = u, .tau = tau, .qdd = qdd};
    for (int v = 0; v < 2; ++v) {
        void *p = symbol(h[v], "forward_dynamics");
        memcpy(&c.single[v], &p, sizeof p);
    }
    for (int cfg = 0; cfg < NCFG; ++cfg) {
        if (cfg == CFG_GEN_SINGLE_P || cfg == CFG_GEN_SINGLE_N) continue;
        if (!(c.batch[cfg] = sd_batch_new(m, threads, &err))) {
            fprintf(stderr, "soadyn_bench: %s\n", err.message);
            return;
        }
        if (cfg == CFG_SCALAR) sd_batch_set_simd(c.batch[cfg], SD_BATCH_SIMD_OFF);
        if (cfg >= CFG_X4_P) {
            const int native = cfg >= CFG_X4_N, lanes = (cfg - CFG_X4_P) % 2 ? 8 : 4;
            void *p = symbol(h[native], lanes == 8 ? "forward_dynamics_x8" : "forward_dynamics_x4");
            sd_batch_lanes_fd fn = NULL;
            memcpy(&fn, &p, sizeof p);
            sd_batch_use_lanes(c.batch[cfg], lanes, fn);
        }
    }
    /* every configuration agrees with the library's single-state calls before it is timed */
    double agree[NCFG] = {0};
    run_cfg(&c, CFG_SCALAR);
    memcpy(ref, qdd, sizeof(double) * STATES * (size_t)nv);
    for (int cfg = 1; cfg < NCFG; ++cfg) {
        if (run_cfg(&c, cfg) != 0) fprintf(stderr, "soadyn_bench: %s failed on %s\n", cfg_label[cfg], label);
        double d = 0.0, s = 0.0;
        for (long i = 0; i < STATES * (long)nv; ++i) {
            d = fmax(d, fabs(qdd[i] - ref[i]));
            s = fmax(s, fabs(ref[i]));
        }
        agree[cfg] = d / s;
    }
    double *samples = malloc(sizeof(double) * NCFG * (size_t)batches);
    for (int b = 0; b < batches; ++b)
        for (int k = 0; k < NCFG; ++k) {
            const int cfg = b % 2 ? NCFG - 1 - k : k; /* interleaved, alternating order */
            double (*clock)(void) = threads == 1 ? thread_cpu_ns : now_ns;
            const double t0 = clock();
            run_cfg(&c, cfg);
            samples[cfg * batches + b] = clock() - t0;
        }
    double base = 0.0;
    for (int cfg = 0; cfg < NCFG; ++cfg) {
        qsort(samples + cfg * batches, (size_t)batches, sizeof(double), compare_doubles);
        const double med = samples[cfg * batches + batches / 2], lo = samples[cfg * batches + batches / 4],
                     hi = samples[cfg * batches + 3 * batches / 4];
        const double rate = STATES / (med * 1e-9);
        if (cfg == CFG_SIMD) base = rate;
        printf("| %s | %s%s | %.3g | %.0f | %.0f-%.0f |", label, cfg_label[cfg],
               cfg == CFG_SIMD ? (sd_batch_simd_lanes(c.batch[cfg]) == 8 ? " (8 lanes)" : " (4 lanes)") : "", rate,
               med / STATES, lo / STATES, hi / STATES);
        if (cfg >= CFG_SIMD && base > 0) printf(" %.2f |", rate / base);
        else printf(" |");
        printf(" %.0e |\n", agree[cfg]);
    }
    printf("| %s | compile time (FD, lanes 4 and 8): portable %.1f s, native %.1f s | | | | | |\n", label, cc_s[0], cc_s[1]);
    fflush(stdout);
    for (int cfg = 0; cfg < NCFG; ++cfg) sd_batch_free(c.batch[cfg]);
    free(samples), free(q), free(u), free(tau), free(qdd), free(ref);
    dlclose(h[0]), dlclose(h[1]);
}

int bench_codegen_lanes(int argc, char **argv)
{
    int batches = 21, threads = 1;
    const char *shared = SOADYN_SHARED_MODELS_DIR;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--batches") == 0 && i + 1 < argc) batches = atoi(argv[++i]);
        else if (strcmp(argv[i], "--shared") == 0 && i + 1 < argc) shared = argv[++i];
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--codegen") != 0 && strcmp(argv[i], "--lanes") != 0) {
            fprintf(stderr, "usage: soadyn_bench --codegen --lanes [--batches N (>= 5)] [--shared DIR] [--threads T]\n");
            return 1;
        }
    }
    if (batches < 5) batches = 5;
    if (threads < 1) threads = 1;
    char dir[] = "/tmp/soadyn_bench_lanes_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("soadyn_bench: mkdtemp");
        return 1;
    }
    printf("soadyn %s, batched forward dynamics, %d states per call, %d thread%s (%s): states per second (median of %d "
           "interleaved calls), ns per state (median, quartiles), rate over the SIMD kernel's, largest difference "
           "from the library's single-state calls (relative to the largest qdd)\n\n",
           SOADYN_VERSION, STATES, threads, threads > 1 ? "s" : "", threads > 1 ? "wall time" : "the thread's CPU time",
           batches);
    printf("| model | path | states/s | ns/state | quartiles | / SIMD kernel | difference |\n|---|---|--:|--:|--:|--:|--:|\n");
    static const struct {
        const char *label, *file;
        int shared, floating;
    } rows[2] = {{"iiwa 14", "models/iiwa14.urdf", 0, 0}, {"Talos reduced (free base)", "talos/talos_reduced.urdf", 1, 1}};
    for (int r = 0; r < 2; ++r) {
        char path[1100];
        sd_model *m = NULL;
        const int loaded = bench_codegen_load(shared, rows[r].file, rows[r].shared, rows[r].floating, &m, path, sizeof path);
        if (loaded < 0) return 1;
        if (!loaded) {
            printf("| %s | left out: %s not found | | | | | |\n", rows[r].label, path);
            continue;
        }
        model_rows(rows[r].label, m, batches, threads, dir);
        sd_model_free(m);
    }
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "soadyn_bench: could not remove %s\n", dir);
    return 0;
}
