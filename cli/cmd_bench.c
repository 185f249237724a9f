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
    "usage: soadyn bench MODEL [--repeats N] [--embed LOOPS] [--independent J,..] [--floating] [--keep-fixed]\n"
    "                   [--gravity GX,GY,GZ] [--compiled]\n"
    "\n"
    "Time each algorithm on the model (median and minimum ns per call over N batches, default 21):\n"
    "inverse dynamics, mass matrix, forward dynamics (articulated body), forward dynamics (Cholesky),\n"
    "M^-1, det M. The dense ones (mass matrix, Cholesky, M^-1) are not run on models of more than\n"
    "4096 speeds, or when the library cannot serve them: their row shows \"-\" with a note.\n"
    "\n"
    "options:\n"
    "  --repeats N    batches per algorithm (default 21)\n"
    "  --embed LOOPS  also time the embedded system's algorithms (soadyn/embed.h: forward dynamics over\n"
    "                 nodes, mass matrix, inverse dynamics, M^-1, log det) beside the tree-augmented\n"
    "                 closed-loop forward dynamics, at the closed reference configuration; default: the\n"
    "                 model file's choice. --independent J,.. names the aggregates' independent joints\n"
    "  --floating     attach the root link with a free hinge\n"
    "  --keep-fixed   keep fixed joints as 0-dof bodies\n"
    CLI_GRAVITY_HELP
    CLI_COMPILED_HELP
    "                    (compiled: inverse dynamics, mass matrix, forward dynamics (articulated body),\n"
    "                    M^-1; the other rows run the library)\n"
    "  --help         this text\n";

typedef struct bench_ctx {
    const sd_model *m;
    sd_data *d;
    /* the embedded system (NULL: none) at the closed reference q_c, random embedded u_e, tau_e, qdd_e */
    const sd_embedding *e;
    sd_embedded_data *ed;
    double *q_c, *u_e, *tau_e, *qdd_e, *u_c, *tau_c; /* u_c = N u_e, tau_c: tree forces for the TA solve */
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

static sd_status b_e_fd(bench_ctx *c)
{
    return sd_embedded_forward_dynamics(c->e, c->ed, c->q_c, c->u_e, c->tau_e, NULL, c->out, NULL, NULL);
}
static sd_status b_ta_fd(bench_ctx *c)
{
    return sd_closed_loop_forward_dynamics(c->m, c->d, c->q_c, c->u_c, c->tau_c, NULL, c->out, NULL, NULL);
}
static sd_status b_e_mm(bench_ctx *c) { return sd_embedded_mass_matrix(c->e, c->ed, c->q_c, c->out); }
static sd_status b_e_id(bench_ctx *c)
{
    return sd_embedded_inverse_dynamics(c->e, c->ed, c->q_c, c->u_e, c->qdd_e, NULL, c->out);
}
static sd_status b_e_minv(bench_ctx *c) { return sd_embedded_mass_matrix_inverse(c->e, c->ed, c->q_c, c->out); }
static sd_status b_e_det(bench_ctx *c)
{
    double log_det;
    return sd_embedded_log_det(c->e, c->ed, c->q_c, &log_det);
}

typedef struct bench_item {
    const char *name;
    bench_fn fn;
    int dense; /* needs an nv x nv matrix (embedded: nv of the embedding) */
} bench_item;

/* The embedded system's rows (run with --embed or a file that embeds), after the tree's. */
static const bench_item embedded_benches[] = {{"closed loops, tree-augmented FD", b_ta_fd, 0},
                                              {"embedded forward dynamics (nodes)", b_e_fd, 0},
                                              {"embedded inverse dynamics", b_e_id, 0},
                                              {"embedded mass matrix", b_e_mm, 1},
                                              {"embedded mass matrix inverse", b_e_minv, 1},
                                              {"embedded log det M_e", b_e_det, 0}};

static const bench_item benches[] = {{"inverse dynamics (Newton-Euler)", b_id, 0},     {"mass matrix (composite body)", b_mm, 1},
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

/* The warm-up doubles a batch until it takes this long (ns). fuzz/fuzz_cli.c builds this file with 0 (one
 * call a batch, every row still run and checked): the command's behaviour is what it fuzzes, not its
 * timing, and at 2 ms a batch a bench input cost some 60 ms. */
#ifndef CLI_BENCH_MIN_BATCH_NS
#define CLI_BENCH_MIN_BATCH_NS 2e6
#endif

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

/* embedded: an item of embedded_benches (the sizes and messages are the embedding's). */
static int bench_one(bench_ctx *c, const bench_item *item, int embedded, int repeats, double *times)
{
    const char *name = item->name;
    const int nv = embedded ? sd_embedding_nv(c->e) : sd_model_nv(c->m);
    if (item->dense && (nv > CLI_DENSE_MAX_NV || !c->dense_out)) {
        char why[160];
        if (nv > CLI_DENSE_MAX_NV)
            snprintf(why, sizeof(why), "not run: needs a dense %d x %d matrix, formed only up to nv = %d", nv, nv,
                     CLI_DENSE_MAX_NV);
        else
            snprintf(why, sizeof(why), "not run: out of memory for a dense %d x %d matrix", nv, nv);
        print_skipped(name, why);
        return CLI_OK;
    }
    c->out = item->dense ? c->dense_out : c->vector_out;
    long n = 1;
    sd_status st = SD_OK;
    while (n < (1L << 30)) { /* warm-up, and find a batch that takes >= 2 ms */
        double t = 0.0;
        if ((st = batch(c, item->fn, n, &t)) != SD_OK) break;
        if (t * (double)n >= CLI_BENCH_MIN_BATCH_NS) break;
        n *= 2;
    }
    for (int r = 0; st == SD_OK && r < repeats; ++r) st = batch(c, item->fn, n, &times[r]);
    const char *why = embedded && item->fn != b_ta_fd ? sd_embedded_error(c->ed) : sd_data_error(c->d);
    if (!why || !why[0]) why = sd_status_name(st);
    if (st != SD_OK && (item->dense || item->fn == b_e_id) && (st == SD_E_NOT_SUPPORTED || st == SD_E_MEMORY)) {
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

/* The embedded system's state: the reference configuration closed (tree-augmented loops assembled
 * first), random embedded speeds, forces and accelerations; u_c = N u_e for the tree-augmented solve
 * (projected onto G u = 0 when loops stay tree-augmented). Returns CLI_OK or CLI_FAILURE. */
static int embedded_state(bench_ctx *c, uint64_t *rng)
{
    const sd_model *m = c->m;
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), ne = sd_embedding_nv(c->e);
    c->ed = sd_embedded_data_new(c->e);
    c->q_c = calloc((size_t)nq + 1, sizeof(double));
    c->u_e = calloc((size_t)ne + 1, sizeof(double));
    c->tau_e = calloc((size_t)ne + 1, sizeof(double));
    c->qdd_e = calloc((size_t)ne + 1, sizeof(double));
    c->u_c = calloc((size_t)nv + 1, sizeof(double));
    c->tau_c = calloc((size_t)nv + 1, sizeof(double));
    if (!c->ed || !c->q_c || !c->u_e || !c->tau_e || !c->qdd_e || !c->u_c || !c->tau_c) {
        fprintf(stderr, "soadyn bench: out of memory setting up the embedded system\n");
        return CLI_FAILURE;
    }
    for (int i = 0; i < ne; ++i) {
        c->u_e[i] = 2.0 * sd_random_uniform(rng) - 1.0;
        c->tau_e[i] = 2.0 * sd_random_uniform(rng) - 1.0;
        c->qdd_e[i] = 2.0 * sd_random_uniform(rng) - 1.0;
    }
    for (int i = 0; i < nv; ++i) c->tau_c[i] = 2.0 * sd_random_uniform(rng) - 1.0;
    int n_ta = 0;
    for (int k = 0; k < sd_model_nconstraints(m); ++k) n_ta += sd_embedding_constraint_embedded(c->e, k) == 0;
    sd_configuration_reference(m, c->q_c);
    sd_status st = n_ta ? sd_assemble_configuration(m, c->d, c->q_c, NULL, 1e-12, 100, c->q_c, NULL) : SD_OK;
    if (st == SD_OK) st = sd_embedded_close(c->e, c->ed, c->q_c, c->q_c, NULL);
    if (st == SD_OK) st = sd_embedded_tree_speeds(c->e, c->ed, c->q_c, c->u_e, c->u_c);
    if (st == SD_OK && n_ta) {
        st = sd_project_velocities(m, c->d, c->q_c, c->u_c, c->u_c);
        if (st == SD_OK) sd_embedded_speeds_of_tree(c->e, c->u_c, c->u_e);
    }
    if (st != SD_OK) {
        const char *why = sd_embedded_error(c->ed);
        fprintf(stderr, "soadyn bench: closing the loops at the reference configuration: %s\n",
                why && why[0] ? why : sd_data_error(c->d));
        return CLI_FAILURE;
    }
    return CLI_OK;
}

static int run_bench(sd_model *m, const sd_embedding *e, int repeats, const char *code)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    bench_ctx c;
    memset(&c, 0, sizeof(c));
    c.m = m;
    c.e = e;
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
        if (code) cli_printf("run by %s\n", code);
        cli_printf("  %-38s %12s %12s %12s\n", "algorithm", "median ns", "min ns", "calls/batch");
        cli_output_flush();
        /* each row appears when measured; a lost output (closed pipe) stops the run at once */
        for (int i = 0; rc == CLI_OK && !cli_output_failed() && i < (int)(sizeof(benches) / sizeof(benches[0])); ++i) {
            rc = bench_one(&c, &benches[i], 0, repeats, times);
            cli_output_flush();
        }
        if (rc == CLI_OK && e) {
            rc = embedded_state(&c, &rng);
            if (rc == CLI_OK)
                cli_printf("embedded system: %d speeds of %d, %d aggregates (at the closed reference configuration)\n",
                           sd_embedding_nv(e), nv, sd_embedding_naggregates(e));
        }
        for (int i = 0; rc == CLI_OK && e && !cli_output_failed() &&
                        i < (int)(sizeof(embedded_benches) / sizeof(embedded_benches[0]));
             ++i) {
            rc = bench_one(&c, &embedded_benches[i], 1, repeats, times);
            cli_output_flush();
        }
    }
    sd_embedded_data_free(c.ed);
    void *ep[] = {c.q_c, c.u_e, c.tau_e, c.qdd_e, c.u_c, c.tau_c};
    for (size_t i = 0; i < sizeof(ep) / sizeof(ep[0]); ++i) free(ep[i]);
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
    const char *repeats_text = NULL, *gravity = NULL;
    int floating = 0, keep_fixed = 0, compiled = 0;
    cli_embed_args ea = {0};
    const cli_option options[] = {{"repeats", 1, &repeats_text, NULL},
                                  CLI_EMBED_OPTIONS(ea),
                                  {"floating", 0, NULL, &floating},
                                  {"keep-fixed", 0, NULL, &keep_fixed},
                                  {"gravity", 1, &gravity, NULL},
                                  {"compiled", 0, NULL, &compiled},
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
    rc = cli_load_model("bench", path, floating, keep_fixed, gravity, &model);
    if (rc != CLI_OK) return rc;
    sd_embedding *e = NULL;
    rc = cli_embedding("bench", model, &ea, NULL, &e);
    char code[4400];
    if (rc == CLI_OK && compiled) cli_compile("bench", model, code, sizeof code);
    if (rc == CLI_OK) rc = run_bench(model, e, (int)repeats, compiled ? code : NULL);
    if (e) sd_embedding_free(e);
    sd_model_free(model);
    return rc;
}
