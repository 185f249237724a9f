/*
 * bench/bench_loops.c — the closed-loop benchmark (issue 8; never a test): median nanoseconds per
 * call, over many timed batches, of
 *   tree ABA        sd_forward_dynamics on the spanning tree (the constraints ignored),
 *   closed-loop FD  sd_closed_loop_forward_dynamics (000 Eq 45-46: ABA, the compliance
 *                   G M^-1 G*, lambda, the correction sweep) for qdd alone, as sd_simulate calls
 *                   it (redundant rows: the independent-row fast path),
 *   FD + lambda     the same asked for the minimum-norm multipliers too (the full rank-revealing
 *                   path); its qdd and the fast path's are compared (printed),
 *   dense solve     the descriptor system of 000 Eq 44 formed and solved densely: M by
 *                   sd_mass_matrix, C by sd_bias_forces, G by sd_constraint_jacobian; M = L L^T
 *                   (LAPACK dpotrf), qdd_f = M^-1 (tau - C), S = G M^-1 G^T, S lambda = -G qdd_f by a
 *                   pivoted Cholesky (dpstrf: the constraints are redundant), qdd = qdd_f + M^-1 G^T
 *                   lambda. It leaves out the Gdot u term (the closed-loop FD computes it recursively;
 *                   it would only add to the dense row), so the dense figure is a lower bound.
 * on a planar four-bar (3 hinges, a revolute loop: 5 rows, rank 2) and a quadruped-size model (free
 * base, 4 legs of hip abduction, hip and knee hinges; a parallelogram four-bar drives each knee from
 * the hip: 2 more hinges and a revolute loop per leg, nv = 26, n_c = 20), at assembled states.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <soadyn/soadyn.h>

#include <lapacke.h> /* after soadyn's headers (loops/closed_dynamics.c says why) */

#include "timing.h"

typedef struct bench_case {
    const sd_model *m;
    sd_data *d;
    int nq, nv, nc;
    double *q, *u, *tau, *qdd, *lambda;
    double *M, *C, *G, *Y, *S, *rhs, *work; /* the dense solve's */
    int *piv;
} bench_case;

typedef void (*bench_fn)(bench_case *c);

static void run_aba(bench_case *c) { sd_forward_dynamics(c->m, c->d, c->q, c->u, c->tau, NULL, c->qdd); }
static void run_closed(bench_case *c)
{
    sd_closed_loop_forward_dynamics(c->m, c->d, c->q, c->u, c->tau, NULL, c->qdd, NULL, NULL);
}
static void run_closed_lambda(bench_case *c)
{
    sd_closed_loop_forward_dynamics(c->m, c->d, c->q, c->u, c->tau, NULL, c->qdd, c->lambda, NULL);
}
static void run_dense(bench_case *c)
{
    const int nv = c->nv, nc = c->nc;
    sd_mass_matrix(c->m, c->d, c->q, c->M);
    sd_bias_forces(c->m, c->d, c->q, c->u, NULL, c->C);
    sd_constraint_jacobian(c->m, c->d, c->q, c->G);
    LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', nv, c->M, nv); /* M = L L^T */
    for (int i = 0; i < nv; ++i) c->qdd[i] = c->tau[i] - c->C[i];
    LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', nv, 1, c->M, nv, c->qdd, 1); /* qdd_f */
    memcpy(c->Y, c->G, sizeof(double) * (size_t)(nc * nv)); /* Y = G L^-T, rows of G solved by L */
    LAPACKE_dtrtrs(LAPACK_COL_MAJOR, 'U', 'T', 'N', nv, nc, c->M, nv, c->Y, nv); /* row-major L is col-major U */
    for (int a = 0; a < nc; ++a) { /* S = Y Y^T, rhs = -G qdd_f */
        double r = 0.0;
        for (int j = 0; j < nv; ++j) r += c->G[a * nv + j] * c->qdd[j];
        c->rhs[a] = -r;
        for (int b = 0; b <= a; ++b) {
            double s = 0.0;
            for (int j = 0; j < nv; ++j) s += c->Y[a * nv + j] * c->Y[b * nv + j];
            c->S[a * nc + b] = c->S[b * nc + a] = s;
        }
    }
    int rank = 0;
    LAPACKE_dpstrf_work(LAPACK_COL_MAJOR, 'L', nc, c->S, nc, c->piv, &rank, 1e-12, c->work);
    /* a basic solution on the rank independent rows: P^T S P = L L^T, solve with the leading block */
    double *x = c->work;
    for (int i = 0; i < rank; ++i) x[i] = c->rhs[c->piv[i] - 1];
    LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', rank, 1, c->S, nc, x, rank);
    for (int a = 0; a < nc; ++a) c->lambda[a] = 0.0;
    for (int i = 0; i < rank; ++i) c->lambda[c->piv[i] - 1] = x[i];
    for (int j = 0; j < nv; ++j) { /* qdd = qdd_f + M^-1 G^T lambda */
        double s = 0.0;
        for (int a = 0; a < nc; ++a) s += c->G[a * nv + j] * c->lambda[a];
        c->C[j] = s;
    }
    LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', nv, 1, c->M, nv, c->C, 1);
    for (int j = 0; j < nv; ++j) c->qdd[j] += c->C[j];
}

/* Median ns per call of fn over `batches` batches of about 2 ms each (as bench/bench.c). */
static double time_fn(bench_fn fn, bench_case *c, int batches)
{
    double t0 = now_ns();
    long calls = 0;
    while (now_ns() - t0 < 2e7 && calls < 1000000) { fn(c); ++calls; }
    long batch = (long)(2e6 / ((now_ns() - t0) / (double)calls));
    if (batch < 1) batch = 1;
    double *samples = malloc((size_t)batches * sizeof(double));
    if (!samples) exit(1);
    for (int b = 0; b < batches; ++b) {
        const double start = now_ns();
        for (long i = 0; i < batch; ++i) fn(c);
        samples[b] = (now_ns() - start) / (double)batch;
    }
    qsort(samples, (size_t)batches, sizeof(double), compare_doubles);
    const double median = samples[batches / 2];
    free(samples);
    return median;
}

static void fail(const char *what, const char *message)
{
    fprintf(stderr, "bench_loops: %s: %s\n", what, message);
    exit(1);
}

static void add_link(sd_builder *b, const char *name, const char *parent, sd_hinge_type hinge, const double p[3],
                     int axis, double mass, const double tip[3])
{
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = name;
    d.parent = parent;
    d.hinge = hinge;
    double len2 = 0.0;
    for (int j = 0; j < 3; ++j) {
        d.placement.p[j] = p[j];
        d.axis[j] = axis == j;
        d.com[j] = 0.5 * tip[j];
        len2 += tip[j] * tip[j];
    }
    d.mass = mass;
    for (int j = 0; j < 3; ++j) d.inertia[4 * j] = mass * (len2 / 12.0 + 1e-3);
    sd_error err;
    if (sd_builder_add_body(b, &d, &err) != SD_OK) fail(name, err.message);
}

static void add_loop(sd_builder *b, const char *name, const char *body_a, const double pa[3], const char *body_b,
                     const double pb[3], int axis)
{
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = name;
    c.type = SD_CONSTRAINT_REVOLUTE;
    c.body_a = body_a;
    c.body_b = body_b;
    for (int j = 0; j < 3; ++j) {
        c.frame_a.p[j] = pa[j];
        c.frame_b.p[j] = pb[j];
        c.axis[j] = axis == j;
    }
    sd_error err;
    if (sd_builder_add_constraint(b, &c, &err) != SD_OK) fail(name, err.message);
}

static sd_model *build(sd_builder *b)
{
    sd_model *m = NULL;
    sd_error err;
    if (sd_builder_build(b, &m, &err) != SD_OK) fail("build", err.message);
    sd_builder_free(b);
    return m;
}

/* The crank-rocker of tests/loops (crank 0.1, coupler 0.35, rocker 0.3, ground 0.4) at crank angle 60
 * degrees, assembled from a straight guess below. */
static sd_model *four_bar(void)
{
    sd_builder *b = sd_builder_new();
    const double g[3] = {0, -9.81, 0}, o[3] = {0, 0, 0};
    sd_builder_set_gravity(b, g);
    const double a[3] = {0.1, 0, 0}, c[3] = {0.35, 0, 0}, r[3] = {0.3, 0, 0};
    add_link(b, "crank", NULL, SD_HINGE_REVOLUTE, o, 2, 0.5, a);
    add_link(b, "coupler", "crank", SD_HINGE_REVOLUTE, a, 2, 1.2, c);
    add_link(b, "rocker", "coupler", SD_HINGE_REVOLUTE, c, 2, 0.9, r);
    const double ground[3] = {0.4, 0, 0};
    add_loop(b, "rocker_pivot", NULL, ground, "rocker", r, 2);
    return build(b);
}

/* Free base, four legs; each knee driven through a parallelogram (crank at the hip, coupler down to a
 * lever on the shank) closed by a revolute loop. */
static sd_model *quadruped(void)
{
    sd_builder *b = sd_builder_new();
    const double o[3] = {0, 0, 0}, body[3] = {0.3, 0, 0};
    add_link(b, "base", NULL, SD_HINGE_FREE, o, 2, 12.0, body);
    static const char *legs[4] = {"fl", "fr", "hl", "hr"};
    for (int l = 0; l < 4; ++l) {
        char hip[32], thigh[32], shank[32], crank[32], coupler[32], loop[32];
        snprintf(hip, sizeof hip, "%s_hip", legs[l]);
        snprintf(thigh, sizeof thigh, "%s_thigh", legs[l]);
        snprintf(shank, sizeof shank, "%s_shank", legs[l]);
        snprintf(crank, sizeof crank, "%s_crank", legs[l]);
        snprintf(coupler, sizeof coupler, "%s_coupler", legs[l]);
        snprintf(loop, sizeof loop, "%s_knee_drive", legs[l]);
        const double at[3] = {l < 2 ? 0.2 : -0.2, l % 2 ? -0.1 : 0.1, 0}, down[3] = {0, 0, -0.25};
        const double lever[3] = {0.05, 0, 0}, tiny[3] = {0.05, 0, 0};
        add_link(b, hip, "base", SD_HINGE_REVOLUTE, at, 0, 1.0, tiny);
        add_link(b, thigh, hip, SD_HINGE_REVOLUTE, o, 1, 1.5, down);
        add_link(b, shank, thigh, SD_HINGE_REVOLUTE, down, 1, 0.4, down);
        add_link(b, crank, hip, SD_HINGE_REVOLUTE, o, 1, 0.1, lever);
        add_link(b, coupler, crank, SD_HINGE_REVOLUTE, lever, 1, 0.1, down);
        add_loop(b, loop, coupler, down, shank, lever, 1);
    }
    return build(b);
}

static double *vec(int n)
{
    double *x = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    if (!x) exit(1);
    return x;
}

/* A state on the constraint manifold: the neutral q moved by a fixed pseudo-random step, assembled;
 * random speeds projected; random joint forces. */
static bench_case make_case(const sd_model *m)
{
    bench_case c;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.d = sd_data_new(m);
    if (!c.d) exit(1);
    c.nq = sd_model_nq(m), c.nv = sd_model_nv(m), c.nc = sd_model_nconstraint_rows(m);
    c.q = vec(c.nq), c.u = vec(c.nv), c.tau = vec(c.nv), c.qdd = vec(c.nv), c.lambda = vec(c.nc);
    c.M = vec(c.nv * c.nv), c.C = vec(c.nv), c.G = vec(c.nc * c.nv), c.Y = vec(c.nc * c.nv);
    c.S = vec(c.nc * c.nc), c.rhs = vec(c.nc), c.work = vec(2 * c.nc + c.nv);
    c.piv = calloc((size_t)c.nc + 1, sizeof(int));
    double *step = vec(c.nv);
    unsigned s = 12345u;
    for (int i = 0; i < c.nv; ++i) {
        s = s * 1103515245u + 12345u;
        const double r = (double)(s >> 8) / 16777216.0 - 0.5;
        step[i] = 0.2 * r;
        c.u[i] = 2.0 * r;
        c.tau[i] = r;
    }
    sd_configuration_neutral(m, c.q);
    if (c.nv == 3) c.q[0] = c.q[1] = c.q[2] = 0.0;
    sd_configuration_integrate(m, c.q, step, 1.0, c.q);
    double residual = 0.0;
    if (sd_assemble_configuration(m, c.d, c.q, NULL, 1e-12, 50, c.q, &residual) != SD_OK)
        fail("assembly", sd_data_error(c.d));
    if (sd_project_velocities(m, c.d, c.q, c.u, c.u) != SD_OK) fail("projection", sd_data_error(c.d));
    free(step);
    return c;
}

static void free_case(bench_case *c)
{
    sd_data_free(c->d);
    double *arrays[] = {c->q, c->u, c->tau, c->qdd, c->lambda, c->M, c->C, c->G, c->Y, c->S, c->rhs, c->work};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) free(arrays[i]);
    free(c->piv);
}

/* The dense solve is checked against the closed-loop FD once at u = 0 (where the Gdot u term it
 * leaves out vanishes), so that the row times a correct solve; the difference is printed. */
static void row(const char *label, const sd_model *m, int batches)
{
    bench_case c = make_case(m);
    double *u = c.u, *zero = vec(c.nv), *qdd_closed = vec(c.nv), diff = 0.0;
    c.u = zero;
    run_closed(&c);
    memcpy(qdd_closed, c.qdd, sizeof(double) * (size_t)c.nv);
    run_dense(&c);
    for (int i = 0; i < c.nv; ++i) diff = fmax(diff, fabs(c.qdd[i] - qdd_closed[i]));
    c.u = u;
    free(zero);
    free(qdd_closed);
    double *qdd_full = vec(c.nv), fast_diff = 0.0, qscale = 1e-300;
    run_closed_lambda(&c); /* the full path, then the fast path (it reuses the full path's row subset) */
    memcpy(qdd_full, c.qdd, sizeof(double) * (size_t)c.nv);
    run_closed(&c);
    for (int i = 0; i < c.nv; ++i) {
        fast_diff = fmax(fast_diff, fabs(c.qdd[i] - qdd_full[i]));
        qscale = fmax(qscale, fabs(qdd_full[i]));
    }
    free(qdd_full);
    const double aba = time_fn(run_aba, &c, batches);
    const double closed = time_fn(run_closed, &c, batches);
    const double closed_lambda = time_fn(run_closed_lambda, &c, batches);
    const double dense = time_fn(run_dense, &c, batches);
    int rank = -1;
    sd_constraint_rank(m, c.d, c.q, &rank, NULL);
    printf("%-30s %3d %3d %4d %9.0f %9.0f %11.0f %9.0f %7.2fx %8.2fx %8.2fx  (dense - FD at u = 0: %.1e; "
           "fast - full qdd: %.1e rel)\n",
           label, c.nv, c.nc, rank, aba, closed, closed_lambda, dense, closed / aba, closed_lambda / aba,
           dense / closed, diff, fast_diff / qscale);
    free_case(&c);
}

int main(int argc, char **argv)
{
    const int batches = argc > 1 ? atoi(argv[1]) : 201;
    if (batches < 1) fail("usage", "bench_loops [batches >= 1]");
    printf("soadyn closed-loop benchmark: median ns per call over %d batches\n", batches);
    printf("%-30s %3s %3s %4s %9s %9s %11s %9s %8s %9s %9s\n", "model", "nv", "n_c", "rank", "tree ABA", "closed FD",
           "FD + lambda", "dense", "FD/ABA", "FDl/ABA", "dense/FD");
    sd_model *fb = four_bar(), *qd = quadruped();
    row("four-bar (revolute loop)", fb, batches);
    row("quadruped, a four-bar per leg", qd, batches);
    sd_model_free(fb);
    sd_model_free(qd);
    return 0;
}
