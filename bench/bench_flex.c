/*
 * bench/bench_flex.c — 001 Sec 6 and Fig 2 reproduced (never a test): the composite-body forward
 * dynamics (mass matrix, bias forces, dense Cholesky solve; 001 Sec 3) against the articulated-body one
 * (001 Eq 62-63) on a serial chain of 10 flexible bodies on revolute hinges with 1 .. 10 modes per
 * body, both ways:
 *   (a) the operation counts of 001 Sec 6.1 and 6.2 from the paper's formulas (multiplications plus
 *       additions; for Eq 62 the paper's explicit inversion of D(k) up to 7 modes, its indirect O(nm^2)
 *       procedure from 8 on, as it says), and their ratio;
 *   (b) the measured median CPU ns per call of sd_forward_dynamics_cholesky and sd_forward_dynamics on the
 *       same chain, with the full and the linearised modal mass matrix, and their ratio (the two
 *       answers are compared as they are timed).
 * Prints a markdown table and writes bench_flex.dat (columns named in its header line) and, when the
 * library was built with PLplot, bench_flex.svg and bench_flex.png, into the folder given as the first argument (default
 * "."). Without PLplot the .dat file is plotted by e.g. gnuplot:
 *   set logscale y; plot 'bench_flex.dat' u 1:3 w lp t 'CB ops', '' u 1:4 w lp t 'AB ops'
 *
 * The chain: flex_chain.h (10 links of 8 lumped nodes, cantilever shapes, each link on its parent's
 * tip node). The shapes are assumed modes, not eigenmodes: the cost of
 * either algorithm does not depend on which modes are used, only on how many.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/config.h>
#include <soadyn/flex.h>
#include <soadyn/soadyn.h>

#if SOADYN_HAS_PLOT
#include <plplot.h>
#endif

#include "flex_chain.h"
#include "timing.h"

enum { NBODIES = 10, MAX_MODES = BENCH_FLEX_CHAIN_MAX_MODES };

/* ---------------------------------------------------------------- 001 Sec 6 operation counts */

/* Multiplications + additions of the composite body forward dynamics (001 Sec 6.1) for a chain of
 * nb bodies of nm modes and one hinge speed each. Body k = 1 .. nb is numbered from the tip as in
 * the paper, whose item 2 charges body k for its k off-diagonal blocks. */
static double ops_composite(int nb, int nm)
{
    const double m = nm, N = (double)nb * (nm + 1);
    double ops = 0.0;
    for (int k = 1; k <= nb; ++k) {
        ops += (48 * m + 90) + (m * m + 97.0 / 2 * m + 116);                 /* 1. R(k), Eq 50 */
        ops += k * (12 * m * m + 34 * m + 13) + k * (11 * m * m + 24 * m + 13); /* 2. M, Eq 50 */
        ops += (2 * m * m + 54 * m + 206) + (2 * m * m + 50 * m + 143);       /* 3. C by inverse dynamics */
    }
    ops += N;                                                                  /* 4. T - C */
    ops += (N * N * N / 6 + 1.5 * N * N - 2.0 / 3 * N) + (N * N * N / 6 + N * N - 7.0 / 6 * N); /* 5. solve */
    return ops;
}

/* Eq 62 per body: explicit inversion of D(k) (the paper's choice for nm <= 7) or its indirect
 * O(nm^2) procedure (nm >= 8). */
static double ops_eq62(int nm, int explicit_inverse)
{
    const double m = nm;
    if (explicit_inverse)
        return (5.0 / 6 * m * m * m + 25.0 / 2 * m * m + 764.0 / 3 * m + 180) +
               (5.0 / 6 * m * m * m + 21.0 / 2 * m * m + 548.0 / 3 * m + 161);
    return (12 * m * m + 255 * m + 572) + (13 * m * m + 182 * m + 445);
}

/* Multiplications + additions of the articulated body forward dynamics (001 Sec 6.2). */
static double ops_articulated(int nb, int nm)
{
    const double m = nm;
    const double per_body = ops_eq62(nm, nm <= 7) +
                            (m * m + 25 * m + 49) + (m * m + 24 * m + 50) + /* 2. tip-to-base, Eq 63 */
                            (18 * m + 52) + (19 * m + 42);                  /* 3. base-to-tip, Eq 63 */
    return nb * per_body;
}

/* ---------------------------------------------------------------- timing */

typedef struct fd_case {
    const sd_model *m;
    sd_data *d;
    double *q, *u, *tau, *qdd;
    int cholesky;
} fd_case;

static void run(fd_case *c)
{
    const sd_status st = c->cholesky ? sd_forward_dynamics_cholesky(c->m, c->d, c->q, c->u, c->tau, NULL, c->qdd)
                                     : sd_forward_dynamics(c->m, c->d, c->q, c->u, c->tau, NULL, c->qdd);
    if (st != SD_OK) {
        fprintf(stderr, "bench_flex: %s\n", sd_data_error(c->d));
        exit(1);
    }
}

/* The calling thread's CPU time in ns: on a shared, loaded machine a batch's wall-clock time counts the
 * time slices other processes took; its CPU time does not (only their cache traffic stays). */
static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

/* Calls of c that take about 2 ms of CPU (after ~20 ms of warm-up). */
static long batch_size(fd_case *c)
{
    const double t0 = cpu_ns();
    long calls = 0;
    while (cpu_ns() - t0 < 2e7 && calls < 1000000) { run(c); ++calls; }
    const long batch = (long)(2e6 / ((cpu_ns() - t0) / (double)calls));
    return batch < 1 ? 1 : batch;
}

/* CPU ns per call of one batch. */
static double time_batch(fd_case *c, long batch)
{
    const double start = cpu_ns();
    for (long j = 0; j < batch; ++j) run(c);
    return (cpu_ns() - start) / (double)batch;
}

/* Median CPU ns per call of the composite-body (cb) and articulated-body (ab) cases over `batches`
 * batches of about 2 ms each, the two cases' batches interleaved, so that both see the same load of
 * a shared machine and their ratio is fair even when the absolute times drift. */
static void time_pair(fd_case *cb, fd_case *ab, int batches, double *t_cb, double *t_ab)
{
    const long nb_cb = batch_size(cb), nb_ab = batch_size(ab);
    double *s_cb = malloc((size_t)batches * sizeof(double)), *s_ab = malloc((size_t)batches * sizeof(double));
    for (int i = 0; i < batches; ++i) {
        s_cb[i] = time_batch(cb, nb_cb);
        s_ab[i] = time_batch(ab, nb_ab);
    }
    qsort(s_cb, (size_t)batches, sizeof(double), compare_doubles);
    qsort(s_ab, (size_t)batches, sizeof(double), compare_doubles);
    *t_cb = s_cb[batches / 2];
    *t_ab = s_ab[batches / 2];
    free(s_cb);
    free(s_ab);
}

typedef struct row {
    int nm, N;
    double ops_cb, ops_ab;
    double t_cb[2], t_ab[2]; /* [full, linearised] */
    double diff[2];          /* max relative difference of the two qdd */
} row;

/* Times both algorithms on one chain at one random state; returns the relative difference of qdd. */
static double measure(int nm, sd_flex_mass_model mm, int batches, double *t_cb, double *t_ab)
{
    sd_model *m = bench_flexible_chain(NBODIES, nm, mm);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    fd_case c = {m, sd_data_new(m), malloc((size_t)nq * 8), malloc((size_t)nv * 8), malloc((size_t)nv * 8),
                 malloc((size_t)nv * 8), 0};
    double *ref = malloc((size_t)nv * 8);
    uint64_t rng = 2026;
    sd_configuration_random(m, &rng, c.q);
    for (int i = 0; i < sd_model_nbodies(m); ++i) /* small deflections: a random eta of order 1 is absurd */
        for (int r = 0; r < sd_model_body_nmodes(m, i); ++r) c.q[sd_model_mode_q_index(m, i) + r] *= 0.01;
    for (int i = 0; i < nv; ++i) {
        c.u[i] = 2 * sd_random_uniform(&rng) - 1;
        c.tau[i] = 2 * sd_random_uniform(&rng) - 1;
    }
    fd_case cb = c, ab = c; /* one model, state and workspace; each run recomputes everything */
    cb.cholesky = 1;
    run(&cb);
    memcpy(ref, c.qdd, (size_t)nv * 8);
    run(&ab);
    double num = 0.0, den = 1e-300;
    for (int i = 0; i < nv; ++i) {
        num = fmax(num, fabs(c.qdd[i] - ref[i]));
        den = fmax(den, fabs(ref[i]));
    }
    time_pair(&cb, &ab, batches, t_cb, t_ab);
    free(ref);
    free(c.q); free(c.u); free(c.tau); free(c.qdd);
    sd_data_free(c.d);
    sd_model_free(m);
    return num / den;
}

/* ---------------------------------------------------------------- output */

static int write_data(const char *path, const row *rows, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    fprintf(f, "# 001 Sec 6 / Fig 2: serial chain of %d flexible bodies, revolute hinges (soadyn bench_flex)\n",
            NBODIES);
    fprintf(f, "# nm N ops_cb ops_ab ops_ratio dinv(1=explicit) ns_cb_full ns_ab_full ratio_full ns_cb_lin "
               "ns_ab_lin ratio_lin\n");
    for (int i = 0; i < n; ++i) {
        const row *r = rows + i;
        fprintf(f, "%d %d %.0f %.0f %.4f %d %.1f %.1f %.4f %.1f %.1f %.4f\n", r->nm, r->N, r->ops_cb, r->ops_ab,
                r->ops_cb / r->ops_ab, r->nm <= 7, r->t_cb[0], r->t_ab[0], r->t_cb[0] / r->t_ab[0], r->t_cb[1],
                r->t_ab[1], r->t_cb[1] / r->t_ab[1]);
    }
    return fclose(f) == 0;
}

#if SOADYN_HAS_PLOT
/* Three panels: the paper's operation counts (Fig 2) and the measured times, both on a log scale, and
 * their ratios. */
static void plot_file(const char *path, const char *device, const row *rows, int n)
{
    PLFLT x[MAX_MODES], y[4][MAX_MODES], ymin = 1e300, ymax = 0;
    PLINT old_stream, stream;
    plgstrm(&old_stream);
    plmkstrm(&stream);
    plsdev(device);
    plsfnam(path);
    plspage(0.0, 0.0, 1500, 500, 0, 0);
    plscol0(0, 255, 255, 255);
    plscol0(1, 0, 0, 0);
    plscol0(2, 200, 40, 40);
    plscol0(3, 40, 80, 200);
    plscol0(4, 240, 150, 150);
    plscol0(5, 130, 160, 240);
    plssub(3, 1);
    plinit();
    plschr(0, 0.7);
    for (int i = 0; i < n; ++i) {
        x[i] = rows[i].nm;
        y[0][i] = log10(rows[i].ops_cb);
        y[1][i] = log10(rows[i].ops_ab);
        ymin = fmin(ymin, fmin(y[0][i], y[1][i]));
        ymax = fmax(ymax, fmax(y[0][i], y[1][i]));
    }
    pladv(0);
    plcol0(1);
    plvsta();
    plwind(0.5, MAX_MODES + 0.5, floor(ymin), ceil(ymax));
    plbox("bcnst", 1.0, 0, "bcnstvl", 0, 0);
    pllab("modes per body", "multiplications + additions", "001 Sec 6 operation counts");
    const char *text[4] = {"composite body (6.1)", "articulated body (6.2)", "", ""};
    for (int s = 0; s < 2; ++s) {
        plcol0(2 + s);
        plline(n, x, y[s]);
        plpoin(n, x, y[s], s ? 2 : 4);
        plptex(1.0, floor(ymin) + (ceil(ymax) - floor(ymin)) * (0.92 - 0.07 * s), 1, 0, 0, text[s]);
    }
    ymin = 1e300;
    ymax = 0;
    for (int i = 0; i < n; ++i) {
        y[0][i] = log10(rows[i].t_cb[0]);
        y[1][i] = log10(rows[i].t_ab[0]);
        y[2][i] = log10(rows[i].t_cb[1]);
        y[3][i] = log10(rows[i].t_ab[1]);
        for (int s = 0; s < 4; ++s) {
            ymin = fmin(ymin, y[s][i]);
            ymax = fmax(ymax, y[s][i]);
        }
    }
    pladv(0);
    plcol0(1);
    plvsta();
    plwind(0.5, MAX_MODES + 0.5, floor(ymin), ceil(ymax));
    plbox("bcnst", 1.0, 0, "bcnstvl", 0, 0);
    pllab("modes per body", "median ns per call", "measured forward dynamics");
    const char *names[4] = {"composite body, full", "articulated body, full", "composite body, lin.",
                            "articulated body, lin."};
    const int colours[4] = {2, 3, 4, 5};
    for (int s = 0; s < 4; ++s) {
        plcol0(colours[s]);
        plline(n, x, y[s]);
        plpoin(n, x, y[s], s % 2 ? 2 : 4);
        plptex(1.0, floor(ymin) + (ceil(ymax) - floor(ymin)) * (0.92 - 0.07 * s), 1, 0, 0, names[s]);
    }
    /* the ratios, composite over articulated: the paper's counts and the two measured ones */
    ymax = 0;
    for (int i = 0; i < n; ++i) {
        y[0][i] = rows[i].ops_cb / rows[i].ops_ab;
        y[1][i] = rows[i].t_cb[0] / rows[i].t_ab[0];
        y[2][i] = rows[i].t_cb[1] / rows[i].t_ab[1];
        for (int s = 0; s < 3; ++s) ymax = fmax(ymax, y[s][i]);
    }
    pladv(0);
    plcol0(1);
    plvsta();
    plwind(0.5, MAX_MODES + 0.5, 0.0, ceil(ymax));
    plbox("bcnst", 1.0, 0, "bcnstv", 0, 0);
    pllab("modes per body", "composite / articulated", "composite over articulated");
    const char *ratio_names[3] = {"counts (001 Sec 6)", "measured, full", "measured, lin."};
    const int ratio_colours[3] = {1, 3, 5};
    for (int s = 0; s < 3; ++s) {
        plcol0(ratio_colours[s]);
        plline(n, x, y[s]);
        plpoin(n, x, y[s], s ? 2 : 4);
        plptex(1.0, ceil(ymax) * (0.92 - 0.07 * s), 1, 0, 0, ratio_names[s]);
    }
    plend1();
    plsstrm(old_stream);
}
#endif

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    const int batches = argc > 2 ? atoi(argv[2]) : 101;
    row rows[MAX_MODES];
    printf("soadyn bench_flex: 001 Sec 6 / Fig 2, a serial chain of %d flexible bodies on revolute hinges\n",
           NBODIES);
    printf("library built with %s\n", SOADYN_BENCH_BUILD);
    printf("operation counts: 001 Sec 6.1 (composite body) and 6.2 (articulated body), multiplications + "
           "additions;\nD^-1 in Eq 62 by explicit inversion for nm <= 7, by the indirect O(nm^2) procedure for "
           "nm >= 8 (as the paper)\n");
    printf("times: median CPU ns per call (the thread's CPU time, CLOCK_THREAD_CPUTIME_ID) over %d batches; CB = sd_forward_dynamics_cholesky (mass matrix, bias "
           "forces, dense Cholesky), AB = sd_forward_dynamics (001 Eq 62-63)\n\n",
           batches);
    printf("| modes/body | N | CB ops | AB ops | CB/AB ops | D^-1 | CB ns full | AB ns full | CB/AB full | CB ns lin "
           "| AB ns lin | CB/AB lin | max rel diff qdd |\n");
    printf("|---:|---:|---:|---:|---:|:---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int nm = 1; nm <= MAX_MODES; ++nm) {
        row *r = rows + nm - 1;
        r->nm = nm;
        r->N = NBODIES * (nm + 1);
        r->ops_cb = ops_composite(NBODIES, nm);
        r->ops_ab = ops_articulated(NBODIES, nm);
        r->diff[0] = measure(nm, SD_FLEX_FULL, batches, &r->t_cb[0], &r->t_ab[0]);
        r->diff[1] = measure(nm, SD_FLEX_LINEARISED, batches, &r->t_cb[1], &r->t_ab[1]);
        printf("| %d | %d | %.0f | %.0f | %.2f | %s | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f | %.1e |\n", nm, r->N,
               r->ops_cb, r->ops_ab, r->ops_cb / r->ops_ab, nm <= 7 ? "explicit" : "indirect", r->t_cb[0],
               r->t_ab[0], r->t_cb[0] / r->t_ab[0], r->t_cb[1], r->t_ab[1], r->t_cb[1] / r->t_ab[1],
               fmax(r->diff[0], r->diff[1]));
        fflush(stdout);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_flex.dat", dir);
    if (!write_data(path, rows, MAX_MODES)) {
        fprintf(stderr, "bench_flex: cannot write %s\n", path);
        return 1;
    }
    printf("\ndata: %s\n", path);
#if SOADYN_HAS_PLOT
    snprintf(path, sizeof path, "%s/bench_flex.svg", dir);
    plot_file(path, "svgcairo", rows, MAX_MODES);
    printf("plot: %s\n", path);
    snprintf(path, sizeof path, "%s/bench_flex.png", dir);
    plot_file(path, "pngcairo", rows, MAX_MODES);
    printf("plot: %s\n", path);
#else
    printf("plot: not drawn (built without PLplot); see the gnuplot line at the top of bench/bench_flex.c\n");
#endif
    return 0;
}
