/*
 * cli/cmd_bench.c — `soadyn bench MODEL`: time each algorithm on one model. Each is warmed up, then
 * timed in batches long enough for the clock (>= ~2 ms); the report is the median and the minimum
 * time per call over the batches, at random (reproducible) states. Rows are printed as they are
 * measured. An algorithm that needs a dense nv x nv matrix is not run past CLI_DENSE_MAX_NV speeds,
 * nor when the library says it cannot serve the model (not offered, out of memory): its row shows
 * "-" and a note says why. Any other failure stops the run with the library's message.
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
    "M^-1, det M. The dense ones (mass matrix, Cholesky, M^-1) are not run on models of more than\n"
    "4096 speeds, or when the library cannot serve them: their row shows \"-\" with a note.\n"
    "\n"
    "options:\n"
    "  --repeats N    batches per algorithm (default 21)\n"
    "  --floating     attach the root link with a free hinge\n"
    "  --keep-fixed   keep fixed joints as 0-dof bodies\n"
    "  --help         this text\n";

typedef struct bench_ctx {
    const sd_model *m;
    sd_data *d;
    double *q, *u, *tau, *qdd;
    double *vector_out, *dense_out; /* nv, and nv x nv (NULL past CLI_DENSE_MAX_NV or out of memory) */
    double *out;                    /* the one the algorithm being timed writes */
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
    int dense; /* needs an nv x nv matrix */
} benches[] = {{"inverse dynamics (Newton-Euler)", b_id, 0},     {"mass matrix (composite body)", b_mm, 1},
               {"forward dynamics (articulated body)", b_aba, 0}, {"forward dynamics (Cholesky)", b_chol, 1},
               {"mass matrix inverse", b_minv, 1},               {"mass matrix determinant", b_det, 0}};

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

/* ns per call of one batch of n calls, into *ns; the status of the first failing call */
static sd_status batch(bench_ctx *c, bench_fn fn, long n, double *ns)
{
    const double t0 = now_ns();
    for (long i = 0; i < n; ++i) {
        const sd_status st = fn(c);
        if (st != SD_OK) return st;
    }
    *ns = (now_ns() - t0) / (double)n;
    return SD_OK;
}

/* The row of an algorithm that was not run, and why (a note under it). */
static void print_skipped(const char *name, const char *why)
{
    cli_printf("  %-38s %12s %12s %12s\n", name, "-", "-", "-");
    cli_printf("  %-38s (%s)\n", "", why);
}

static int bench_one(bench_ctx *c, int i, int repeats, double *times)
{
    const char *name = benches[i].name;
    const int nv = sd_model_nv(c->m);
    if (benches[i].dense && (nv > CLI_DENSE_MAX_NV || !c->dense_out)) {
        char why[160];
        if (nv > CLI_DENSE_MAX_NV)
            snprintf(why, sizeof(why), "not run: needs a dense %d x %d matrix, formed only up to nv = %d", nv, nv,
                     CLI_DENSE_MAX_NV);
        else
            snprintf(why, sizeof(why), "not run: out of memory for a dense %d x %d matrix", nv, nv);
        print_skipped(name, why);
        return CLI_OK;
    }
    c->out = benches[i].dense ? c->dense_out : c->vector_out;
    long n = 1;
    sd_status st = SD_OK;
    while (n < (1L << 30)) { /* warm-up, and find a batch that takes >= 2 ms */
        double t = 0.0;
        if ((st = batch(c, benches[i].fn, n, &t)) != SD_OK) break;
        if (t * (double)n >= 2e6) break;
        n *= 2;
    }
    for (int r = 0; st == SD_OK && r < repeats; ++r) st = batch(c, benches[i].fn, n, &times[r]);
    const char *why = sd_data_error(c->d);
    if (!why || !why[0]) why = sd_status_name(st);
    if (st != SD_OK && benches[i].dense && (st == SD_E_NOT_SUPPORTED || st == SD_E_MEMORY)) {
        print_skipped(name, why); /* the library cannot serve this model densely: a fact, not a failure */
        return CLI_OK;
    }
    if (st != SD_OK) {
        fprintf(stderr, "soadyn bench: %s failed: %s\n", name, why);
        return CLI_FAILURE;
    }
    qsort(times, (size_t)repeats, sizeof(double), cmp_double);
    cli_printf("  %-38s %12.1f %12.1f %12ld\n", name, times[repeats / 2], times[0], n);
    return CLI_OK;
}

static int run_bench(sd_model *m, int repeats)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    bench_ctx c;
    memset(&c, 0, sizeof(c));
    c.m = m;
    c.d = sd_data_new(m);
    c.q = calloc((size_t)nq + 1, sizeof(double));
    c.u = calloc((size_t)nv + 1, sizeof(double));
    c.tau = calloc((size_t)nv + 1, sizeof(double));
    c.qdd = calloc((size_t)nv + 1, sizeof(double));
    c.vector_out = calloc((size_t)nv + 1, sizeof(double));
    if (nv <= CLI_DENSE_MAX_NV) c.dense_out = calloc((size_t)nv * (size_t)nv + 1, sizeof(double));
    double *times = calloc((size_t)repeats, sizeof(double));
    int rc = CLI_OK;
    if (!c.d || !c.q || !c.u || !c.tau || !c.qdd || !c.vector_out || !times) {
        fprintf(stderr, "soadyn bench: out of memory setting up the workspace (%d bodies, nv %d)\n",
                sd_model_nbodies(m), nv);
        rc = CLI_FAILURE;
    }
    if (rc == CLI_OK) {
        uint64_t rng = 12345;
        sd_configuration_random(m, &rng, c.q);
        for (int i = 0; i < nv; ++i) {
            c.u[i] = 2.0 * sd_random_uniform(&rng) - 1.0;
            c.tau[i] = 2.0 * sd_random_uniform(&rng) - 1.0;
            c.qdd[i] = 2.0 * sd_random_uniform(&rng) - 1.0;
        }
        cli_printf("model %s: %d bodies, nv %d; %d batches per algorithm\n", sd_model_name(m), sd_model_nbodies(m),
                   nv, repeats);
        cli_printf("  %-38s %12s %12s %12s\n", "algorithm", "median ns", "min ns", "calls/batch");
        cli_output_flush();
        /* each row appears when measured; a lost output (closed pipe) stops the run at once */
        for (int i = 0; rc == CLI_OK && !cli_output_failed() && i < (int)(sizeof(benches) / sizeof(benches[0])); ++i) {
            rc = bench_one(&c, i, repeats, times);
            cli_output_flush();
        }
    }
    sd_data_free(c.d);
    free(c.q);
    free(c.u);
    free(c.tau);
    free(c.qdd);
    free(c.vector_out);
    free(c.dense_out);
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
