/*
 * cli/cmd_bench.c — `soadyn bench MODEL`: time each algorithm on one model. Each is warmed up, then
 * timed in batches long enough for the clock (>= ~2 ms); the report is the median and the minimum
 * time per call over the batches, at random (reproducible) states.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static const char help[] =
    "usage: soadyn bench MODEL [--repeats N] [--floating] [--keep-fixed]\n"
    "\n"
    "Time each algorithm on the model (median and minimum ns per call over N batches, default 21):\n"
    "inverse dynamics, mass matrix, forward dynamics (articulated body), forward dynamics (Cholesky),\n"
    "M^-1, det M.\n";

typedef struct bench_ctx {
    const sd_model *m;
    sd_data *d;
    double *q, *u, *tau, *qdd, *out;
} bench_ctx;

typedef sd_status (*bench_fn)(bench_ctx *c);

static sd_status b_id(bench_ctx *c) { return sd_inverse_dynamics(c->m, c->d, c->q, c->u, c->qdd, NULL, c->out); }
static sd_status b_mm(bench_ctx *c) { return sd_mass_matrix(c->m, c->d, c->q, c->out); }
static sd_status b_aba(bench_ctx *c) { return sd_forward_dynamics(c->m, c->d, c->q, c->u, c->tau, NULL, c->out); }
static sd_status b_chol(bench_ctx *c)
{
    return sd_forward_dynamics_cholesky(c->m, c->d, c->q, c->u, c->tau, NULL, c->out);
}
static sd_status b_minv(bench_ctx *c) { return sd_mass_matrix_inverse(c->m, c->d, c->q, c->out); }
static sd_status b_det(bench_ctx *c)
{
    double det, log_det;
    return sd_mass_matrix_determinant(c->m, c->d, c->q, &det, &log_det);
}

static const struct {
    const char *name;
    bench_fn fn;
} benches[] = {{"inverse dynamics (Newton-Euler)", b_id},   {"mass matrix (composite body)", b_mm},
               {"forward dynamics (articulated body)", b_aba}, {"forward dynamics (Cholesky)", b_chol},
               {"mass matrix inverse", b_minv},             {"mass matrix determinant", b_det}};

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ns per call of one batch of n calls; negative on failure */
static double batch(bench_ctx *c, bench_fn fn, long n)
{
    const double t0 = now_ns();
    for (long i = 0; i < n; ++i)
        if (fn(c) != SD_OK) return -1.0;
    return (now_ns() - t0) / (double)n;
}

static int bench_one(bench_ctx *c, const char *name, bench_fn fn, int repeats, double *times)
{
    long n = 1;
    while (n < (1L << 30)) { /* warm-up, and find a batch that takes >= 2 ms */
        const double t = batch(c, fn, n);
        if (t < 0) {
            fprintf(stderr, "soadyn bench: %s failed: %s\n", name, sd_data_error(c->d));
            return CLI_FAILURE;
        }
        if (t * (double)n >= 2e6) break;
        n *= 2;
    }
    for (int r = 0; r < repeats; ++r) times[r] = batch(c, fn, n);
    qsort(times, (size_t)repeats, sizeof(double), cmp_double);
    printf("  %-38s %12.1f %12.1f %12ld\n", name, times[repeats / 2], times[0], n);
    return CLI_OK;
}

static int run_bench(sd_model *m, int repeats)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    bench_ctx c = {m, sd_data_new(m), calloc((size_t)nq + 1, sizeof(double)), calloc((size_t)nv + 1, sizeof(double)),
                   calloc((size_t)nv + 1, sizeof(double)), calloc((size_t)nv + 1, sizeof(double)),
                   calloc((size_t)nv * (size_t)nv + 1, sizeof(double))};
    double *times = calloc((size_t)repeats, sizeof(double));
    int rc = c.d && c.q && c.u && c.tau && c.qdd && c.out && times ? CLI_OK : CLI_FAILURE;
    if (rc == CLI_OK) {
        uint64_t rng = 12345;
        sd_configuration_random(m, &rng, c.q);
        for (int i = 0; i < nv; ++i) {
            c.u[i] = 2.0 * sd_random_uniform(&rng) - 1.0;
            c.tau[i] = 2.0 * sd_random_uniform(&rng) - 1.0;
            c.qdd[i] = 2.0 * sd_random_uniform(&rng) - 1.0;
        }
        printf("model %s: %d bodies, nv %d; %d batches per algorithm\n", sd_model_name(m), sd_model_nbodies(m), nv,
               repeats);
        printf("  %-38s %12s %12s %12s\n", "algorithm", "median ns", "min ns", "calls/batch");
        for (size_t i = 0; rc == CLI_OK && i < sizeof(benches) / sizeof(benches[0]); ++i)
            rc = bench_one(&c, benches[i].name, benches[i].fn, repeats, times);
    }
    sd_data_free(c.d);
    free(c.q);
    free(c.u);
    free(c.tau);
    free(c.qdd);
    free(c.out);
    free(times);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    const char *repeats_text = NULL;
    int floating = 0, keep_fixed = 0;
    const cli_option options[] = {{"repeats", 1, &repeats_text, NULL},
                                  {"floating", 0, NULL, &floating},
                                  {"keep-fixed", 0, NULL, &keep_fixed},
                                  {NULL, 0, NULL, NULL}};
    const char *path;
    int rc = cli_parse("bench", argc, argv, options, help, &path);
    if (rc >= 0) return rc;
    long repeats = 21;
    if (repeats_text && (cli_parse_long(repeats_text, &repeats) || repeats < 1 || repeats > 100000)) {
        fprintf(stderr, "soadyn bench: --repeats: '%s' is not a positive integer\n", repeats_text);
        return CLI_USAGE;
    }
    sd_model *model;
    rc = cli_load_model(path, floating, keep_fixed, &model);
    if (rc != CLI_OK) return rc;
    rc = run_bench(model, (int)repeats);
    sd_model_free(model);
    return rc;
}
