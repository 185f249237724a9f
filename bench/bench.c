/*
 * bench/bench.c — the benchmark program (never a test): median nanoseconds per call, over many
 * timed batches after a warm-up, of each algorithm on
 *   the bundled 7-dof KUKA iiwa 14 (models/iiwa14.urdf, published inertial parameters),
 *   the bundled free-base quadruped with 12 revolute joints (models/quadruped.urdf, HyQ-like),
 *   a free-base humanoid with 31 revolute joints built here (Atlas/Talos-like proportions),
 *   serial revolute chains of 10 to 100 000 bodies (ns per body too).
 * Every call includes its kinematics, as the peers' figures do. Usage: soadyn_bench [--quick]
 * soadyn_bench --peers [--batches N] [--shared DIR] [--cpu-time] [--compiled]: soadyn beside MuJoCo
 * (bench_peers.c; --compiled adds the generated code's column).
 * soadyn_bench --codegen [--batches N] [--shared DIR] [--cflags F] [--flexible]: the library beside its generated code
 * (bench_codegen.c).
 * soadyn_bench --embed [--batches N] [--quick] [--shared DIR]: issue 11's cost, embedded vs tree-augmented
 * forward dynamics of closed mechanisms and the O(N) chain (bench_embed.c).
 * soadyn_bench --derivatives [--batches N] [--shared DIR]: issue 30's cost, the derivatives of the dynamics
 * beside ID and ABA on the iiwa, HyQ and Talos (bench_derivatives.c).
 * soadyn_bench --count K --model KEY: ID, M, FD, M^-1 and det M K times each, untimed, for callgrind's
 * instructions per call (bench_count.c, scripts/callgrind_engine.sh).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <soadyn/soadyn.h>

#include "internal.h" /* the dense Cholesky kernels, for the O(N^3) reference rows */

#ifndef SOADYN_SOURCE_DIR
#define SOADYN_SOURCE_DIR "."
#endif
#ifndef SOADYN_BENCH_BUILD /* how the library was compiled (bench/CMakeLists.txt): figures compare only alike */
#define SOADYN_BENCH_BUILD "unknown flags"
#endif

#include "bench_count.h"
#include "bench_derivatives.h"
#include "bench_embed.h"
#include "bench_codegen.h"
#include "bench_peers.h"
#include "timing.h"

/* Everything one timed call needs. */
typedef struct bench_case {
    const sd_model *m;
    sd_data *d;
    double *q, *u, *tau, *qdd, *out, *M;
} bench_case;

typedef void (*bench_fn)(bench_case *c);

static void run_id(bench_case *c) { sd_inverse_dynamics(c->m, c->d, c->q, c->u, c->qdd, NULL, c->out); }
static void run_crba(bench_case *c) { sd_mass_matrix(c->m, c->d, c->q, c->M); }
static void run_aba(bench_case *c) { sd_forward_dynamics(c->m, c->d, c->q, c->u, c->tau, NULL, c->out); }
static void run_aba_forces(bench_case *c)
{
    const sd_fd_options opt = {.interbody_forces = 1, .prescribed = NULL};
    sd_forward_dynamics_ex(c->m, c->d, c->q, c->u, c->tau, NULL, c->out, &opt);
}
static void run_aba_then_ne(bench_case *c) /* the alternative to by-product forces: a second pass */
{
    sd_forward_dynamics(c->m, c->d, c->q, c->u, c->tau, NULL, c->out);
    sd_inverse_dynamics(c->m, c->d, c->q, c->u, c->out, NULL, c->qdd + sd_model_nv(c->m));
}
static void run_chol_fd(bench_case *c) { sd_forward_dynamics_cholesky(c->m, c->d, c->q, c->u, c->tau, NULL, c->out); }
static void run_minv(bench_case *c) { sd_mass_matrix_inverse(c->m, c->d, c->q, c->M); }
static void run_det(bench_case *c)
{
    double logdet;
    sd_mass_matrix_determinant(c->m, c->d, c->q, NULL, &logdet);
    c->out[0] = logdet;
}
/* The reference for M^-1: mass matrix, dense Cholesky factorisation, inverse from the factors. */
static void run_crba_chol_inverse(bench_case *c)
{
    const int nv = sd_model_nv(c->m);
    sd_mass_matrix(c->m, c->d, c->q, c->M);
    sd_cholesky_factor(c->M, nv, 0.0);
    sd_cholesky_inverse(c->M, nv);
}

/* Median ns per call of fn over `batches` batches sized to take about 2 ms each. */
static double time_fn(bench_fn fn, bench_case *c, int batches)
{
    double t0 = now_ns();
    long calls = 0;
    while (now_ns() - t0 < 2e7 && calls < 1000000) { fn(c); ++calls; } /* warm-up, ~20 ms */
    const double per_call = (now_ns() - t0) / (double)calls;
    long batch = (long)(2e6 / per_call);
    if (batch < 1) batch = 1;
    double *samples = malloc((size_t)batches * sizeof(double));
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

static bench_case make_case(const sd_model *m, int dense)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    bench_case c = {m, sd_data_new(m), malloc((size_t)nq * 8), malloc((size_t)nv * 8), malloc((size_t)nv * 8),
                    malloc(2 * (size_t)nv * 8), malloc((size_t)nv * 8), dense ? malloc((size_t)nv * nv * 8) : NULL};
    uint64_t rng = 2026;
    sd_configuration_random(m, &rng, c.q);
    for (int i = 0; i < nv; ++i) {
        c.u[i] = 2 * sd_random_uniform(&rng) - 1;
        c.tau[i] = 2 * sd_random_uniform(&rng) - 1;
        c.qdd[i] = 2 * sd_random_uniform(&rng) - 1;
    }
    return c;
}

static void free_case(bench_case *c)
{
    sd_data_free(c->d);
    free(c->q); free(c->u); free(c->tau); free(c->qdd); free(c->out); free(c->M);
}

/* ---------------------------------------------------------------- models */

static sd_model *load_urdf(const char *rel, int floating)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", SOADYN_SOURCE_DIR, rel);
    sd_urdf_options opt = {.floating_base = floating, .keep_fixed_joints = 0};
    sd_model *m = NULL;
    sd_error err;
    if (sd_urdf_load_file(path, &opt, &m, &err) != SD_OK) {
        fprintf(stderr, "bench: %s\n", err.message);
        exit(1);
    }
    return m;
}

/* Add a body with a revolute hinge, a box-like inertia and the given offset from its parent. */
static void add_link(sd_builder *b, const char *name, const char *parent, sd_hinge_type hinge, double x, double y,
                     double z, int axis, double mass, double length)
{
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = name;
    d.parent = parent;
    d.hinge = hinge;
    d.placement.p[0] = x; d.placement.p[1] = y; d.placement.p[2] = z;
    d.axis[0] = axis == 0; d.axis[1] = axis == 1; d.axis[2] = axis == 2;
    d.mass = mass;
    d.com[2] = -0.5 * length;
    const double r = 0.05 + 0.02 * mass / 5.0;
    d.inertia[0] = d.inertia[4] = mass * (3 * r * r + length * length) / 12.0;
    d.inertia[8] = 0.5 * mass * r * r;
    sd_error err;
    if (sd_builder_add_body(b, &d, &err) != SD_OK) {
        fprintf(stderr, "bench: %s\n", err.message);
        exit(1);
    }
}

/* Build the model and free the builder; a failure is a bug in this program, so it stops. */
static sd_model *build_or_exit(sd_builder *b)
{
    sd_model *m = NULL;
    sd_error err;
    if (sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "bench: %s\n", err.message);
        exit(1);
    }
    sd_builder_free(b);
    return m;
}

/* A free-base humanoid: pelvis (free), legs 2 x 6, waist 3, arms 2 x 7, neck 2: 31 revolute. */
static sd_model *humanoid(void)
{
    sd_builder *b = sd_builder_new();
    sd_builder_set_name(b, "humanoid31");
    add_link(b, "pelvis", NULL, SD_HINGE_FREE, 0, 0, 1.0, 2, 10.0, 0.2);
    static const int leg_axes[6] = {2, 0, 1, 1, 1, 0}, arm_axes[7] = {1, 0, 2, 1, 2, 1, 0};
    static const double leg_len[6] = {0.05, 0.05, 0.4, 0.4, 0.05, 0.05}, leg_mass[6] = {1.5, 1.5, 8, 4, 1, 1.5};
    static const double arm_len[7] = {0.05, 0.05, 0.3, 0.25, 0.05, 0.05, 0.1}, arm_mass[7] = {1.5, 1.5, 2.5, 1.5, 0.8, 0.5, 0.7};
    char name[64], parent[64];
    for (int side = 0; side < 2; ++side) {
        const double s = side ? -1.0 : 1.0;
        snprintf(parent, sizeof parent, "pelvis");
        for (int j = 0; j < 6; ++j) {
            snprintf(name, sizeof name, "%s_leg%d", side ? "r" : "l", j);
            add_link(b, name, parent, SD_HINGE_REVOLUTE, 0, j ? 0 : s * 0.1, j ? -leg_len[j - 1] : -0.1, leg_axes[j],
                     leg_mass[j], leg_len[j]);
            snprintf(parent, sizeof parent, "%s", name);
        }
    }
    static const int waist_axes[3] = {2, 1, 0};
    snprintf(parent, sizeof parent, "pelvis");
    for (int j = 0; j < 3; ++j) {
        snprintf(name, sizeof name, "torso%d", j);
        add_link(b, name, parent, SD_HINGE_REVOLUTE, 0, 0, j ? 0.05 : 0.1, waist_axes[j], j == 2 ? 15.0 : 2.0, -0.05);
        snprintf(parent, sizeof parent, "%s", name);
    }
    for (int side = 0; side < 2; ++side) {
        const double s = side ? -1.0 : 1.0;
        snprintf(parent, sizeof parent, "torso2");
        for (int j = 0; j < 7; ++j) {
            snprintf(name, sizeof name, "%s_arm%d", side ? "r" : "l", j);
            add_link(b, name, parent, SD_HINGE_REVOLUTE, 0, j ? 0 : s * 0.2, j ? -arm_len[j - 1] : 0.35, arm_axes[j],
                     arm_mass[j], arm_len[j]);
            snprintf(parent, sizeof parent, "%s", name);
        }
    }
    add_link(b, "neck", "torso2", SD_HINGE_REVOLUTE, 0, 0, 0.4, 2, 0.5, -0.05);
    add_link(b, "head", "neck", SD_HINGE_REVOLUTE, 0, 0, 0.05, 1, 3.0, -0.2);
    return build_or_exit(b);
}

/* A serial chain of n revolute bodies, axes alternating so that no two neighbours are parallel. */
static sd_model *chain(int n)
{
    sd_builder *b = sd_builder_new();
    char name[32], parent[32];
    for (int k = 0; k < n; ++k) {
        snprintf(name, sizeof name, "link%d", k);
        add_link(b, name, k ? parent : NULL, SD_HINGE_REVOLUTE, 0, 0, k ? -0.1 : 0.0, k % 2 ? 1 : 0, 1.0, 0.1);
        memcpy(parent, name, sizeof name);
    }
    return build_or_exit(b);
}

/* ---------------------------------------------------------------- tables */

static void robot_row(const char *label, const sd_model *m, int batches)
{
    bench_case c = make_case(m, 1);
    const double id = time_fn(run_id, &c, batches), crba = time_fn(run_crba, &c, batches),
                 aba = time_fn(run_aba, &c, batches), abaf = time_fn(run_aba_forces, &c, batches),
                 abane = time_fn(run_aba_then_ne, &c, batches), chol = time_fn(run_chol_fd, &c, batches),
                 minv = time_fn(run_minv, &c, batches), ref = time_fn(run_crba_chol_inverse, &c, batches),
                 det = time_fn(run_det, &c, batches);
    printf("| %-22s | %3d | %7.0f | %7.0f | %7.0f | %7.0f (%+.0f%%) | %7.0f (%+.0f%%) | %7.0f | %7.0f | %7.0f | %7.0f |\n",
           label, sd_model_nv(m), id, crba, aba, abaf, 100 * (abaf / aba - 1), abane, 100 * (abane / aba - 1), chol,
           minv, ref, det);
    fflush(stdout);
    free_case(&c);
}

static void chain_row(int n, int batches)
{
    sd_model *m = chain(n);
    bench_case c = make_case(m, n <= 1000);
    const double id = time_fn(run_id, &c, batches), aba = time_fn(run_aba, &c, batches);
    printf("| %6d | %10.0f | %6.1f | %10.0f | %6.1f |", n, id, id / n, aba, aba / n);
    if (n <= 1000) {
        const double crba = time_fn(run_crba, &c, batches), chol = time_fn(run_chol_fd, &c, batches);
        printf(" %12.0f | %14.0f |\n", crba, chol);
    } else {
        printf(" %12s | %14s |\n", "-", "-");
    }
    fflush(stdout);
    free_case(&c);
    sd_model_free(m);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--peers") == 0) return bench_peers(argc, argv); /* issue 12's table */
    if (argc > 1 && strcmp(argv[1], "--embed") == 0) return bench_embed(argc, argv); /* issue 11's cost */
    if (argc > 1 && strcmp(argv[1], "--count") == 0) return bench_count(argc, argv); /* callgrind's counts */
    if (argc > 1 && strcmp(argv[1], "--derivatives") == 0) return bench_derivatives(argc, argv); /* issue 30's row */
    if (argc > 1 && strcmp(argv[1], "--codegen") == 0) return bench_codegen(argc, argv); /* library vs generated code */
    const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    const int batches = quick ? 11 : 51;
    printf("soadyn %s benchmark: median ns per call over %d batches (kinematics included)\n", SOADYN_VERSION, batches);
    printf("built with %s\nmachine code run: %s (%s)\n\n", SOADYN_BENCH_BUILD, sd_cpu_level(), sd_cpu_note());
    printf("| model                  |  nv |      ID |    CRBA |     ABA | ABA + forces      | ABA then NE       | Chol FD |  M^-1 | CRBA+Chol inv |   det M |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    sd_model *iiwa = load_urdf("models/iiwa14.urdf", 0), *quad = load_urdf("models/quadruped.urdf", 1),
             *hum = humanoid();
    robot_row("iiwa 14 (7 dof)", iiwa, batches);
    robot_row("quadruped (free + 12)", quad, batches);
    robot_row("humanoid (free + 31)", hum, batches);
    sd_model_free(iiwa);
    sd_model_free(quad);
    sd_model_free(hum);
    printf("\nSerial revolute chains (ns per call and per body):\n\n");
    printf("| bodies |    ID (ns) | ns/body |   ABA (ns) | ns/body | CRBA M (ns)  | Cholesky FD (ns) |\n");
    printf("|---|---|---|---|---|---|---|\n");
    const int sizes[] = {10, 100, 1000, 10000, 100000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) chain_row(sizes[i], sizes[i] >= 10000 ? 11 : batches);
    return 0;
}
