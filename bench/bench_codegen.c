/*
 * bench/bench_codegen.c — soadyn_bench --codegen [--batches N] [--shared DIR] [--cflags FLAGS]: the
 * library beside the model's generated code (soadyn/codegen.h), as markdown.
 *
 * Rows: the iiwa 14 (the bundled models/iiwa14.urdf), HyQ (free base + 12) and Talos reduced (free
 * base) from DIR (default ../shared/models beside the source tree; a row whose file is absent is
 * left out, saying so), and a 1000-link chain of revolute joints (bench.c's), which the generator
 * refuses past SD_CODEGEN_MAX_BODIES (the row says so). Per model: the generation time, the compile
 * time of `CC FLAGS -shared -fPIC` (CC the compiler CMake found, FLAGS default -O2), the generated
 * object's .text bytes (`size -A`), and per algorithm (ID, M, FD, M^-1, each with its kinematics) the
 * median ns per call of N interleaved batches of about 2 ms (default 31) of the library and the
 * generated function at one random state, after checking that the two agree there.
 *
 * Flexible rows (after the rigid ones; --flexible: those alone): the bundled flexible arm and
 * spacecraft (models/), and 001 Sec 6's chain of 10 flexible bodies at 5 modes (flex_chain.h),
 * full and linearised modal mass matrix.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_codegen.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <soadyn/soadyn.h>

#include "flex_chain.h"
#include "timing.h"

typedef int (*gen4_fn)(const double *, const double *, const double *, const double *, double *);
typedef int (*gen1_fn)(const double *, double *);

enum { ALG_ID, ALG_M, ALG_FD, ALG_MINV, NALG };
static const char *const alg_symbol[NALG] = {"inverse_dynamics", "mass_matrix", "forward_dynamics",
                                             "mass_matrix_inverse"};

typedef struct cg_case {
    const sd_model *m;
    sd_data *d;
    double *q, *u, *x, *out;
    gen4_fn id, fd;
    gen1_fn mm, minv;
} cg_case;

/* One call of algorithm alg, the library's (gen 0) or the generated one's (gen 1). */
static int run(cg_case *c, int alg, int gen)
{
    switch (alg) {
    case ALG_ID: return gen ? c->id(c->q, c->u, c->x, NULL, c->out) : (int)sd_inverse_dynamics(c->m, c->d, c->q, c->u, c->x, NULL, c->out);
    case ALG_M: return gen ? c->mm(c->q, c->out) : (int)sd_mass_matrix(c->m, c->d, c->q, c->out);
    case ALG_FD: return gen ? c->fd(c->q, c->u, c->x, NULL, c->out) : (int)sd_forward_dynamics(c->m, c->d, c->q, c->u, c->x, NULL, c->out);
    default: return gen ? c->minv(c->q, c->out) : (int)sd_mass_matrix_inverse(c->m, c->d, c->q, c->out);
    }
}

static long batch_calls(cg_case *c, int alg, int gen)
{
    const double t0 = now_ns();
    long calls = 0;
    while (now_ns() - t0 < 2e7 && calls < 1000000) {
        run(c, alg, gen);
        ++calls;
    }
    const long n = (long)(2e6 / ((now_ns() - t0) / (double)calls));
    return n < 1 ? 1 : n;
}

/* The .text bytes of a shared object (size -A), or -1. */
static long text_bytes(const char *so)
{
    char cmd[4200], line[512];
    snprintf(cmd, sizeof cmd, "size -A '%s'", so);
    FILE *p = popen(cmd, "r");
    long bytes = -1;
    if (!p) return -1;
    while (fgets(line, sizeof line, p))
        if (strncmp(line, ".text ", 6) == 0) bytes = strtol(line + 6, NULL, 10);
    pclose(p);
    return bytes;
}

void *bench_codegen_compile(const char *dir, const char *src, const char *so, const char *cflags, double *cc_s)
{
    char cmd[8192], path[4200];
    snprintf(path, sizeof path, "%s/%s.so", dir, so);
    snprintf(cmd, sizeof cmd, "'%s' %s -std=c99 -shared -fPIC -o '%s' '%s/%s.c' -lm", SOADYN_BENCH_CC, cflags, path, dir, src);
    const double t0 = now_ns();
    if (system(cmd) != 0) {
        fprintf(stderr, "soadyn_bench: the compiler failed: %s\n", cmd);
        return NULL;
    }
    *cc_s = (now_ns() - t0) * 1e-9;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) fprintf(stderr, "soadyn_bench: dlopen: %s\n", dlerror());
    return h;
}

int bench_codegen_load(const char *shared, const char *file, int in_shared, int floating, sd_model **m, char *path,
                       size_t size)
{
    *m = NULL;
    snprintf(path, size, "%s/%s", in_shared ? shared : SOADYN_SOURCE_DIR, file);
    if (access(path, R_OK) != 0) return 0;
    sd_urdf_options opt;
    memset(&opt, 0, sizeof opt);
    opt.floating_base = floating;
    opt.mimic_independent = 1;
    sd_error err;
    if (sd_urdf_load_file(path, &opt, m, &err) != SD_OK) {
        fprintf(stderr, "soadyn_bench: %s\n", err.message);
        return -1;
    }
    return 1;
}

static void *symbol(void *h, const char *name, const char *fn)
{
    char s[256];
    snprintf(s, sizeof s, "%s_%s", name, fn);
    return dlsym(h, s);
}

/* nalg: the algorithms timed, the first nalg of ID, M, FD, M^-1 (the rest not generated). */
static void model_row(const char *label, const sd_model *m, int batches, const char *dir, const char *cflags, int nalg)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    const char *name = "bench_model";
    const sd_codegen_options options = {.algorithms = nalg < NALG ? SD_CODEGEN_ID | SD_CODEGEN_M | SD_CODEGEN_FD : 0};
    sd_error err;
    double t0 = now_ns();
    if (sd_codegen_write(m, &options, dir, name, &err) != SD_OK) {
        printf("| %s | %d | %s |\n", label, nv, err.message);
        return;
    }
    const double gen_s = (now_ns() - t0) * 1e-9;
    double cc_s = 0.0;
    void *h = bench_codegen_compile(dir, name, name, cflags, &cc_s);
    if (!h) return;
    char so[4200];
    snprintf(so, sizeof so, "%s/%s.so", dir, name);
    cg_case c = {m, sd_data_new(m), malloc(sizeof(double) * (size_t)nq), malloc(sizeof(double) * (size_t)nv),
                 malloc(sizeof(double) * (size_t)nv), malloc(sizeof(double) * (size_t)nv * (size_t)nv),
                 NULL, NULL, NULL, NULL};
    void *p[NALG] = {NULL, NULL, NULL, NULL};
    for (int a = 0; a < nalg; ++a) p[a] = symbol(h, name, alg_symbol[a]);
    memcpy(&c.id, &p[ALG_ID], sizeof c.id);
    memcpy(&c.mm, &p[ALG_M], sizeof c.mm);
    memcpy(&c.fd, &p[ALG_FD], sizeof c.fd);
    memcpy(&c.minv, &p[ALG_MINV], sizeof c.minv);
    uint64_t rng = 2026;
    sd_configuration_random(m, &rng, c.q);
    for (int i = 0; i < nv; ++i) {
        c.u[i] = 2 * sd_random_uniform(&rng) - 1;
        c.x[i] = 2 * sd_random_uniform(&rng) - 1;
    }
    /* the two agree at this state before they are timed */
    double *ref = malloc(sizeof(double) * (size_t)nv * (size_t)nv);
    double agree = 0.0;
    for (int a = 0; a < nalg; ++a) {
        const size_t n = a == ALG_M || a == ALG_MINV ? (size_t)nv * (size_t)nv : (size_t)nv;
        if (run(&c, a, 0) != 0) {
            fprintf(stderr, "soadyn_bench: the library's %s failed on %s\n", alg_symbol[a], label);
            return;
        }
        memcpy(ref, c.out, n * sizeof(double));
        if (run(&c, a, 1) != 0) {
            fprintf(stderr, "soadyn_bench: the generated %s failed on %s\n", alg_symbol[a], label);
            return;
        }
        double d = 0.0, s = 0.0;
        for (size_t i = 0; i < n; ++i) {
            d = fmax(d, fabs(c.out[i] - ref[i]));
            s = fmax(s, fabs(ref[i]));
        }
        agree = fmax(agree, s > 0 ? d / s : d);
    }
    long calls[NALG][2];
    for (int a = 0; a < nalg; ++a)
        for (int g = 0; g < 2; ++g) calls[a][g] = batch_calls(&c, a, g);
    double *samples = malloc(sizeof(double) * 2 * NALG * (size_t)batches), median[NALG][2];
    for (int b = 0; b < batches; ++b)
        for (int k = 0; k < 2 * nalg; ++k) {
            const int cell = b % 2 ? 2 * nalg - 1 - k : k; /* interleaved, alternating order */
            const int a = cell / 2, g = cell % 2;
            const double start = now_ns();
            for (long i = 0; i < calls[a][g]; ++i) run(&c, a, g);
            samples[cell * batches + b] = (now_ns() - start) / (double)calls[a][g];
        }
    for (int cell = 0; cell < 2 * nalg; ++cell) {
        qsort(samples + cell * batches, (size_t)batches, sizeof(double), compare_doubles);
        median[cell / 2][cell % 2] = samples[cell * batches + batches / 2];
    }
    printf("| %s | %d |", label, nv);
    for (int a = 0; a < NALG; ++a)
        if (a < nalg) printf(" %.0f / %.0f (%.2f) |", median[a][0], median[a][1], median[a][1] / median[a][0]);
        else printf(" not generated |");
    printf(" %ld | %.2f | %.1f | %.0e |\n", text_bytes(so), gen_s, cc_s, agree);
    fflush(stdout);
    free(samples), free(ref);
    dlclose(h);
    sd_data_free(c.d);
    free(c.q), free(c.u), free(c.x), free(c.out);
}

/* A serial chain of n revolute links about alternating axes (bench.c's long chain). */
static sd_model *chain(int n)
{
    sd_builder *b = sd_builder_new();
    char name[32], parent[32] = "";
    for (int i = 0; i < n; ++i) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        snprintf(name, sizeof name, "link%d", i);
        d.name = name;
        d.parent = i ? parent : NULL;
        d.hinge = SD_HINGE_REVOLUTE;
        d.axis[0] = i % 2 ? 0.0 : 1.0;
        d.axis[1] = i % 2 ? 1.0 : 0.0;
        d.axis[2] = 0.0;
        d.placement.p[2] = i ? 0.1 : 0.0;
        d.mass = 1.0;
        d.com[2] = 0.05;
        d.inertia[0] = d.inertia[4] = d.inertia[8] = 1e-3;
        sd_error err;
        if (sd_builder_add_body(b, &d, &err) != SD_OK) fprintf(stderr, "soadyn_bench: %s\n", err.message);
        memcpy(parent, name, sizeof parent);
    }
    sd_model *m = NULL;
    sd_error err;
    if (sd_builder_build(b, &m, &err) != SD_OK) fprintf(stderr, "soadyn_bench: the chain: %s\n", err.message);
    sd_builder_free(b);
    return m;
}

/* The flexible rows (file comment). */
static void flexible_rows(int batches, const char *dir, const char *cflags, char *table, size_t *len, size_t size)
{
    static const struct {
        const char *label, *file;
    } files[] = {{"flexible arm", "models/flexible_arm.urdf"}, {"spacecraft (free bus, 3 flexible bodies)", "models/spacecraft.urdf"}};
    for (size_t r = 0; r < sizeof files / sizeof files[0]; ++r) {
        char path[1100];
        snprintf(path, sizeof path, "%s/%s", SOADYN_SOURCE_DIR, files[r].file);
        sd_model *m = NULL;
        sd_error err;
        if (sd_model_load_file(path, NULL, &m, NULL, &err) != SD_OK) {
            *len += (size_t)snprintf(table + *len, size - *len, "%s: left out, %s\n", files[r].label, err.message);
            continue;
        }
        *len += (size_t)snprintf(table + *len, size - *len, "%s: %s\n", files[r].label, path);
        model_row(files[r].label, m, batches, dir, cflags, NALG);
        sd_model_free(m);
    }
    for (int linear = 0; linear < 2; ++linear) {
        sd_model *m = bench_flexible_chain(10, 5, linear ? SD_FLEX_LINEARISED : SD_FLEX_FULL);
        /* M^-1 left out: straight-line, 60 coupled speeds are 255 000 statements (15 MB of C) */
        model_row(linear ? "10 flexible bodies x 5 modes, linearised" : "10 flexible bodies x 5 modes", m, batches, dir,
                  cflags, ALG_MINV);
        sd_model_free(m);
    }
    *len += (size_t)snprintf(table + *len, size - *len, "10 flexible bodies: 001 Sec 6's chain (bench/flex_chain.h)\n");
}

int bench_codegen(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i)
        if (strcmp(argv[i], "--lanes") == 0) return bench_codegen_lanes(argc, argv);
    int batches = 31, only_flexible = 0;
    const char *shared = SOADYN_SHARED_MODELS_DIR, *cflags = "-O2";
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--batches") == 0 && i + 1 < argc) batches = atoi(argv[++i]);
        else if (strcmp(argv[i], "--shared") == 0 && i + 1 < argc) shared = argv[++i];
        else if (strcmp(argv[i], "--cflags") == 0 && i + 1 < argc) cflags = argv[++i];
        else if (strcmp(argv[i], "--flexible") == 0) only_flexible = 1;
        else if (strcmp(argv[i], "--codegen") != 0) {
            fprintf(stderr, "usage: soadyn_bench --codegen [--batches N (>= 11)] [--shared DIR] [--cflags FLAGS] "
                            "[--flexible]\n");
            return 1;
        }
    }
    if (batches < 11) batches = 11;
    char dir[] = "/tmp/soadyn_bench_codegen_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("soadyn_bench: mkdtemp");
        return 1;
    }
    printf("soadyn %s, library / generated code: median ns per call of %d interleaved batches, kinematics "
           "included\n",
           SOADYN_VERSION, batches);
    printf("library built with %s; generated code compiled with %s %s\n\n", SOADYN_BENCH_BUILD, SOADYN_BENCH_CC, cflags);
    printf("| model | nv | ID lib / gen (ratio) | M | FD | M^-1 | .text bytes | generation (s) | compile (s) | "
           "largest difference |\n");
    printf("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    static const struct {
        const char *label, *file;
        int shared, floating;
    } rows[3] = {{"iiwa 14", "models/iiwa14.urdf", 0, 0},
                 {"HyQ (free + 12)", "hyq/hyq_no_sensors.urdf", 1, 1},
                 {"Talos reduced (free base)", "talos/talos_reduced.urdf", 1, 1}};
    char table[4096] = "";
    size_t len = 0;
    for (int r = 0; r < 3 && !only_flexible; ++r) {
        char path[1100];
        sd_model *m = NULL;
        const int loaded = bench_codegen_load(shared, rows[r].file, rows[r].shared, rows[r].floating, &m, path, sizeof path);
        if (loaded < 0) return 1;
        if (!loaded) {
            len += (size_t)snprintf(table + len, sizeof table - len, "%s: left out, %s not found\n", rows[r].label, path);
            continue;
        }
        len += (size_t)snprintf(table + len, sizeof table - len, "%s: %s\n", rows[r].label, path);
        model_row(rows[r].label, m, batches, dir, cflags, NALG);
        sd_model_free(m);
    }
    sd_model *ch = only_flexible ? NULL : chain(1000);
    if (ch) model_row("1000-link chain", ch, batches, dir, cflags, NALG);
    else if (!only_flexible) printf("| 1000-link chain | 1000 | the chain could not be built |\n");
    sd_model_free(ch);
    flexible_rows(batches, dir, cflags, table, &len, sizeof table);
    printf("\nmodels:\n%s", table);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "soadyn_bench: could not remove %s\n", dir);
    return 0;
}
