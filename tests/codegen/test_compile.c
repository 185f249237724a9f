/*
 * tests/codegen/test_compile.c — sd_model_compile (soadyn/compile.h): the library's entry points
 * running a model's compiled code against the same entry points running the library, and the cache.
 *
 * Arguments: the C compiler, a work directory (its cache is emptied first), the repository's models/
 * directory. The code is compiled at -O0 (seconds for a small model).
 *   - compiled = library for ID, bias forces, M, FD, M^-1 and the inter-body forces at 1000 random
 *     states of a random tree of every hinge type (1e-13 relative), and the compiled code did run
 *     (the workspace holds no state after a compiled call);
 *   - a second model with the same content hits the cache (no compiler run: sd_compile_count), a
 *     changed inertia gets another key and a compile; a parameter setter switches the code off;
 *   - a corrupt cache file is detected and rebuilt, and so is another model's code behind the key
 *     with the key's symbol (the self-check);
 *   - no compiler ($CC=/nonexistent, and in the options), or a failing compile: the message names the
 *     compiler (and quotes its diagnostics) and the library keeps running;
 *   - a model with flexible bodies (models/flexible_arm.urdf): compiled = library, as above;
 *   - models the generator refuses (closed loops) are said so;
 *   - two processes compiling the same model into an empty cache at once both succeed.
 */
#define _POSIX_C_SOURCE 200809L /* fork, waitpid, setenv, strdup, access */
#include <dlfcn.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <soadyn/soadyn.h>

#include "random_tree.h"
#include "test_util.h"

#define STATES 1000
#define TOL 1e-13

static const char *compiler, *work, *models;
static char cache[4096];

static sd_compile_options options(void)
{
    sd_compile_options o = {0};
    o.compiler = compiler;
    o.flags = "-O0 -std=c99";
    o.cache_dir = cache;
    return o;
}

/* A random tree of every hinge type (free root, joint terms as random_tree draws them). */
static sd_model *tree(void)
{
    uint64_t rng = 0x7e57c0de;
    return random_tree(&rng, 6, RT_FREE_ROOT);
}

/* max |a - b| / max |b| (absolute when b is zero). */
static double rel(const double *a, const double *b, int n)
{
    double d = 0.0, s = 0.0;
    for (int i = 0; i < n; ++i) {
        d = fmax(d, fabs(a[i] - b[i]));
        s = fmax(s, fabs(b[i]));
    }
    return s > 0.0 ? d / s : d;
}

/* The 1-norm (largest column sum) of an n x n matrix. */
static double norm1(const double *A, int n)
{
    double best = 0.0;
    for (int j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int i = 0; i < n; ++i) sum += fabs(A[i * n + j]);
        best = fmax(best, sum);
    }
    return best;
}

/* The largest relative difference of each output (tau, c, qdd, M, M^-1, f) over the last
 * evaluate_all, and the largest bound of FD and M^-1. */
static double worst_of[6], largest_bound;

/* Every covered entry point at `STATES` random states, with the library's results in ref (filled
 * when fill is 1) or compared with them. Returns the largest ratio of a relative difference to its
 * bound: <= 1 passes. */
static double evaluate_all(const sd_model *m, double *ref, int fill)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
    const int per = 3 * nv + 2 * nv * nv + 6 * n; /* tau, c, qdd, M, Minv, f */
    double *q = malloc(sizeof(double) * (size_t)(nq + 2 * nv + 6 * n + per));
    double *u = q + nq, *x = u + nv, *f_ext = x + nv, *out = f_ext + 6 * n;
    sd_data *d = sd_data_new(m);
    uint64_t rng = 0xfeedbeef;
    double worst = 0.0;
    memset(worst_of, 0, sizeof worst_of);
    largest_bound = 0.0;
    for (int s = 0; s < STATES; ++s) {
        random_state(m, &rng, q, u, x);
        random_vector(&rng, f_ext, 6 * n, 1.0);
        double *tau = out, *c = tau + nv, *qdd = c + nv, *M = qdd + nv, *Minv = M + nv * nv, *f = Minv + nv * nv;
        int ok = sd_inverse_dynamics(m, d, q, u, x, f_ext, tau) == SD_OK;
        ok &= sd_bias_forces(m, d, q, u, f_ext, c) == SD_OK;
        ok &= sd_forward_dynamics(m, d, q, u, x, f_ext, qdd) == SD_OK;
        ok &= sd_mass_matrix(m, d, q, M) == SD_OK;
        ok &= sd_mass_matrix_inverse(m, d, q, Minv) == SD_OK;
        ok &= sd_compiled_interbody_forces(m, d, q, u, x, f_ext, f) == SD_OK;
        CHECK(ok);
        double *r = ref + (size_t)s * (size_t)per;
        if (fill) {
            memcpy(r, out, sizeof(double) * (size_t)per);
            continue;
        }
        /* ID, C, M and the forces are products and sums: 1e-13; FD and M^-1 solve with M, whose
         * factorisations differ (the generated code's L^T L, the library's articulated bodies or, at
         * nv <= 8, a dense Cholesky): 1e-13 or 16 eps cond1(M), as test_codegen */
        const int len[6] = {nv, nv, nv, nv * nv, nv * nv, 6 * n};
        const double bound = fmax(TOL, 16 * DBL_EPSILON * norm1(r + 3 * nv, nv) * norm1(r + 3 * nv + nv * nv, nv));
        for (int k = 0, at = 0; k < 6; at += len[k++]) {
            const double e = rel(out + at, r + at, len[k]);
            worst_of[k] = fmax(worst_of[k], e);
            worst = fmax(worst, e / (k == 2 || k == 4 ? bound : TOL));
            if (k == 2) largest_bound = fmax(largest_bound, bound);
        }
    }
    sd_data_free(d);
    free(q);
    return worst;
}

static void test_equal_to_library(void)
{
    sd_model *m = tree();
    const int nv = sd_model_nv(m), n = sd_model_nbodies(m);
    double *ref = malloc(sizeof(double) * STATES * (size_t)(3 * nv + 2 * nv * nv + 6 * n));
    evaluate_all(m, ref, 1);
    const long runs = sd_compile_count();
    sd_compile_options o = options();
    sd_error err = {0};
    CHECK(!sd_model_compiled(m));
    const sd_status st = sd_model_compile(m, &o, &err);
    if (st != SD_OK) fprintf(stderr, "sd_model_compile: %s\n", err.message);
    CHECK(st == SD_OK);
    CHECK(sd_model_compiled(m));
    sd_compile_info info;
    CHECK(sd_model_compile_info(m, &info) == SD_OK);
    CHECK(!info.cache_hit && info.compiled && sd_compile_count() == runs + 1);
    CHECK(info.self_check_error <= 1e-12);
    CHECK(strlen(info.key) == 16 && strstr(info.path, info.key) && access(info.path, R_OK) == 0);
    printf("compiled %s in %.2f s (generated in %.3f s, checked in %.3f s, self-check %.2g)\n", info.path,
           info.compile_seconds, info.generate_seconds, info.check_seconds, info.self_check_error);

    const double worst = evaluate_all(m, ref, 0);
    printf("compiled vs library, %d states, largest relative difference: ID %.2g, C %.2g, M %.2g, forces %.2g "
           "(bound 1e-13); FD %.2g, M^-1 %.2g (bound max(1e-13, 16 eps cond1(M)), at most %.2g)\n",
           STATES, worst_of[0], worst_of[1], worst_of[3], worst_of[5], worst_of[2], worst_of[4], largest_bound);
    CHECK(worst <= 1.0);

    /* the compiled code ran: it leaves no state in the workspace, and the reader says why */
    sd_data *d = sd_data_new(m);
    double *q = calloc((size_t)(sd_model_nq(m) + 2 * nv), sizeof *q), *tau = q + sd_model_nq(m), *V = tau + nv;
    uint64_t rng = 3;
    sd_configuration_random(m, &rng, q);
    CHECK(sd_inverse_dynamics(m, d, q, NULL, NULL, NULL, tau) == SD_OK);
    double fk[6];
    CHECK(sd_interbody_force(m, d, 1, SD_FRAME_BODY, fk) == SD_E_ARGUMENT);
    CHECK(strstr(sd_data_error(d), "compiled") != NULL);
    CHECK(sd_kinematics(m, d, q, tau, NULL) == SD_OK && sd_body_velocity(m, d, 1, V) == SD_OK);
    /* a failing input runs the library, whose message names the argument */
    q[0] = NAN;
    CHECK(sd_mass_matrix(m, d, q, V) == SD_E_ARGUMENT && strstr(sd_data_error(d), "q") != NULL);
    free(q);
    sd_data_free(d);

    /* a copy runs the library until compiled itself; both free their own (valgrind: no double free) */
    sd_model *copy = sd_model_copy(m, &err);
    CHECK(copy && !sd_model_compiled(copy) && sd_model_compiled(m));
    sd_model_free(copy);

    /* the same content again: the cache, no compiler run */
    sd_model *same = tree();
    const long before = sd_compile_count();
    CHECK(sd_model_compile(same, &o, &err) == SD_OK);
    sd_compile_info again;
    CHECK(sd_model_compile_info(same, &again) == SD_OK);
    CHECK(again.cache_hit && sd_compile_count() == before && strcmp(again.key, info.key) == 0);
    printf("cache hit: loaded and checked in %.4f s (compile %.2f s)\n", again.check_seconds, info.compile_seconds);

    /* one inertia changed: the setter switches the code off, a compile gets another key */
    const double com[3] = {0.01, 0.02, 0.03}, I[9] = {0.2, 0, 0, 0, 0.3, 0, 0, 0, 0.4};
    CHECK(sd_model_set_body_inertia(same, 2, 1.5, com, I, &err) == SD_OK);
    CHECK(!sd_model_compiled(same));
    CHECK(sd_model_compile(same, &o, &err) == SD_OK);
    sd_compile_info changed;
    CHECK(sd_model_compile_info(same, &changed) == SD_OK);
    CHECK(!changed.cache_hit && sd_compile_count() == before + 1 && strcmp(changed.key, info.key) != 0);

    /* a corrupt cache file: detected and rebuilt */
    sd_model_uncompile(m);
    CHECK(!sd_model_compiled(m));
    sd_model_free(same); /* holds the changed key's object; m's, released above, was the last of info.key's */
    FILE *f = fopen(info.path, "wb");
    fputs("not an object file", f);
    fclose(f);
    CHECK(sd_model_compile(m, &o, &err) == SD_OK);
    sd_compile_info rebuilt;
    CHECK(sd_model_compile_info(m, &rebuilt) == SD_OK);
    CHECK(!rebuilt.cache_hit && sd_compile_count() == before + 2 && strcmp(rebuilt.key, info.key) == 0);
    CHECK(evaluate_all(m, ref, 0) <= 1.0);

    /* another model's code behind this key, with this key's symbol: the self-check rejects it */
    char symbol[64], text[256] = "", dir[4200], cmd[20000];
    snprintf(symbol, sizeof symbol, "sdc_%s_soadyn_key", info.key);
    void *h = dlopen(rebuilt.path, RTLD_NOW);
    const char *embedded = h ? dlsym(h, symbol) : NULL;
    CHECK(embedded != NULL);
    if (embedded) snprintf(text, sizeof text, "%s", embedded);
    if (h) dlclose(h);
    sd_model *other = tree();
    CHECK(sd_model_set_body_inertia(other, 2, 1.5, com, I, &err) == SD_OK);
    snprintf(dir, sizeof dir, "%s/wrong", work);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    CHECK(system(cmd) == 0);
    char name[32];
    snprintf(name, sizeof name, "sdc_%s", info.key);
    CHECK(sd_codegen_write(other, NULL, dir, name, &err) == SD_OK);
    sd_model_free(other);
    snprintf(cmd, sizeof cmd, "%s/key.c", dir);
    f = fopen(cmd, "w");
    fprintf(f, "const char %s[] = \"%s\";\n", symbol, text);
    fclose(f);
    sd_model_uncompile(m); /* unloaded: the next dlopen reads the file */
    snprintf(cmd, sizeof cmd, "'%s' -O0 -std=c99 -shared -fPIC -o '%s' '%s/%s.c' '%s/key.c' -lm", compiler, rebuilt.path,
             dir, name, dir);
    CHECK(system(cmd) == 0);
    CHECK(sd_model_compile(m, &o, &err) == SD_OK);
    sd_compile_info checked;
    CHECK(sd_model_compile_info(m, &checked) == SD_OK);
    CHECK(!checked.cache_hit && sd_compile_count() == before + 3);
    CHECK(evaluate_all(m, ref, 0) <= 1.0);
    free(ref);
    sd_model_free(m);
}

static void test_no_compiler(void)
{
    sd_model *m = tree();
    sd_data *d = sd_data_new(m);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *q = calloc((size_t)(nq + 2 * nv), sizeof *q), *tau = q + nq, *tau_ref = tau + nv;
    uint64_t rng = 5;
    sd_configuration_random(m, &rng, q);
    CHECK(sd_inverse_dynamics(m, d, q, NULL, NULL, NULL, tau_ref) == SD_OK);
    sd_error err = {0};
    /* $CC when the options name none */
    sd_compile_options o = options();
    o.compiler = NULL;
    const char *had = getenv("CC");
    char *saved = had ? strdup(had) : NULL;
    setenv("CC", "/nonexistent", 1);
    CHECK(sd_model_compile(m, &o, &err) == SD_E_NOT_SUPPORTED);
    printf("no compiler: %s\n", err.message);
    CHECK(strstr(err.message, "/nonexistent") && strstr(err.message, "library"));
    if (saved) setenv("CC", saved, 1), free(saved);
    else unsetenv("CC");
    o.compiler = "/nonexistent/cc";
    CHECK(sd_model_compile(m, &o, &err) == SD_E_NOT_SUPPORTED && strstr(err.message, "/nonexistent/cc"));
    CHECK(!sd_model_compiled(m));
    CHECK(sd_inverse_dynamics(m, d, q, NULL, NULL, NULL, tau) == SD_OK && rel(tau, tau_ref, nv) == 0.0);
    /* a compiler that fails: its first lines quoted */
    o = options();
    o.flags = "-O0 -std=c99 -DSD_BROKEN=( -include no_such_header_file.h";
    CHECK(sd_model_compile(m, &o, &err) == SD_E_NOT_SUPPORTED);
    printf("failing compile: %s\n", err.message);
    CHECK(strstr(err.message, "failed") && strstr(err.message, "no_such_header_file"));
    CHECK(!sd_model_compiled(m));
    CHECK(sd_inverse_dynamics(m, d, q, NULL, NULL, NULL, tau) == SD_OK && rel(tau, tau_ref, nv) == 0.0);
    free(q);
    sd_data_free(d);
    sd_model_free(m);
}

/* A model with flexible bodies runs its compiled code too: the same comparison at 1000 states. */
static void test_flexible_compiled(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/flexible_arm.urdf", models);
    sd_model *m = NULL;
    sd_error err = {0};
    if (sd_model_load_file(path, NULL, &m, NULL, &err) != SD_OK) {
        fprintf(stderr, "cannot load %s: %s\n", path, err.message);
        CHECK(0);
        return;
    }
    const int nv = sd_model_nv(m), n = sd_model_nbodies(m);
    double *ref = malloc(sizeof(double) * STATES * (size_t)(3 * nv + 2 * nv * nv + 6 * n));
    evaluate_all(m, ref, 1);
    sd_compile_options o = options();
    const sd_status st = sd_model_compile(m, &o, &err);
    if (st != SD_OK) fprintf(stderr, "sd_model_compile (flexible_arm): %s\n", err.message);
    CHECK(st == SD_OK && sd_model_compiled(m));
    const double worst = evaluate_all(m, ref, 0);
    printf("flexible_arm compiled vs library, %d states: ID %.2g, C %.2g, M %.2g, forces %.2g; FD %.2g, M^-1 %.2g\n",
           STATES, worst_of[0], worst_of[1], worst_of[3], worst_of[5], worst_of[2], worst_of[4]);
    CHECK(worst <= 1.0);
    free(ref);
    sd_model_free(m);
}

static void refused(const char *file, const char *says)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", models, file);
    sd_model *m = NULL;
    sd_error err = {0};
    if (sd_model_load_file(path, NULL, &m, NULL, &err) != SD_OK) {
        fprintf(stderr, "cannot load %s: %s\n", path, err.message);
        CHECK(0);
        return;
    }
    sd_compile_options o = options();
    CHECK(sd_model_compile(m, &o, &err) == SD_E_NOT_SUPPORTED);
    printf("%s: %s\n", file, err.message);
    CHECK(strstr(err.message, says) != NULL);
    CHECK(!sd_model_compiled(m));
    sd_model_free(m);
}

/* Two processes, one empty cache, the same model at once: both end with a working object. */
static void test_two_processes(void)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/cache_two", work);
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    fflush(NULL);
    pid_t child[2];
    for (int i = 0; i < 2; ++i)
        if ((child[i] = fork()) == 0) {
            sd_model *m = tree();
            sd_compile_options o = options();
            o.cache_dir = dir;
            sd_error err = {0};
            _exit(sd_model_compile(m, &o, &err) == SD_OK && sd_model_compiled(m) ? 0 : 1);
        }
    for (int i = 0; i < 2; ++i) {
        int status = 1;
        CHECK(child[i] > 0 && waitpid(child[i], &status, 0) == child[i] && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0);
    }
    sd_model *m = tree();
    sd_compile_options o = options();
    o.cache_dir = dir;
    sd_error err = {0};
    const long runs = sd_compile_count();
    CHECK(sd_model_compile(m, &o, &err) == SD_OK && sd_compile_count() == runs); /* the object they left */
    sd_model_free(m);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_compile CC WORK_DIR MODELS_DIR\n");
        return 2;
    }
    compiler = argv[1], work = argv[2], models = argv[3];
    snprintf(cache, sizeof cache, "%s/cache", work);
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", cache, work);
    if (system(cmd) != 0) return 2;
    test_equal_to_library();
    test_no_compiler();
    test_flexible_compiled();
    refused("four_bar.urdf", "closure");
    test_two_processes();
    return test_summary("test_compile");
}
