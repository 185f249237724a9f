/*
 * bench/bench_derivatives.c — soadyn_bench --derivatives [--batches N] [--shared DIR]: the cost of the
 * derivatives of soadyn/derivatives.h beside soadyn's own inverse and forward dynamics, same model,
 * same state, same run, as markdown.
 *
 * Rows: the iiwa 14 (the bundled models/iiwa14.urdf, 7 dof), HyQ (DIR/hyq/hyq_no_sensors.urdf, free
 * base + 12) and Talos reduced (DIR/talos/talos_reduced.urdf, free base + its revolute joints); DIR
 * defaults to ../shared/models beside the source tree, and a row whose file is absent is left out,
 * saying so. Cells, each call with its kinematics: ID = sd_inverse_dynamics, ABA =
 * sd_forward_dynamics, ID derivatives = sd_inverse_dynamics_derivatives (tau, d tau/dq, d tau/du),
 * FD derivatives = sd_forward_dynamics_derivatives (qdd, d qdd/dq, d qdd/du, d qdd/d tau = M^-1).
 * The four are timed in interleaved batches of about 2 ms each after a 20 ms warm-up, so that the
 * machine's noise falls on all alike; each number is the median of N batches (default 51). The
 * ratios are the targets: ID derivatives <= 3 ID, FD derivatives <= 4 ABA on the humanoid.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_derivatives.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <soadyn/soadyn.h>

#include "timing.h"

#ifndef SOADYN_SOURCE_DIR
#define SOADYN_SOURCE_DIR "."
#endif
#ifndef SOADYN_SHARED_MODELS_DIR
#define SOADYN_SHARED_MODELS_DIR "../shared/models"
#endif
#ifndef SOADYN_BENCH_BUILD
#define SOADYN_BENCH_BUILD "unknown flags"
#endif

typedef struct deriv_case {
    const sd_model *m;
    sd_data *d;
    double *q, *u, *x, *out, *A, *B, *C;
} deriv_case;

enum { CELL_ID, CELL_ABA, CELL_ID_DERIV, CELL_FD_DERIV, NCELLS };

static sd_status run_cell(deriv_case *c, int cell)
{
    switch (cell) {
    case CELL_ID: return sd_inverse_dynamics(c->m, c->d, c->q, c->u, c->x, NULL, c->out);
    case CELL_ABA: return sd_forward_dynamics(c->m, c->d, c->q, c->u, c->x, NULL, c->out);
    case CELL_ID_DERIV: return sd_inverse_dynamics_derivatives(c->m, c->d, c->q, c->u, c->x, NULL, c->out, c->A, c->B);
    default: return sd_forward_dynamics_derivatives(c->m, c->d, c->q, c->u, c->x, NULL, c->out, c->A, c->B, c->C);
    }
}

/* Calls of `cell` per batch of about 2 ms, after a 20 ms warm-up. */
static long batch_calls(deriv_case *c, int cell)
{
    const double t0 = now_ns();
    long calls = 0;
    while (now_ns() - t0 < 2e7 && calls < 1000000) {
        if (run_cell(c, cell) != SD_OK) {
            fprintf(stderr, "soadyn_bench: %s\n", sd_data_error(c->d));
            exit(1);
        }
        ++calls;
    }
    const long n = (long)(2e6 / ((now_ns() - t0) / (double)calls));
    return n < 1 ? 1 : n;
}

static void model_row(const char *label, const sd_model *m, int batches)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    const size_t vv = (size_t)nv * (size_t)nv;
    deriv_case c = {m, sd_data_new(m), malloc(sizeof(double) * (size_t)nq), malloc(sizeof(double) * (size_t)nv),
                    malloc(sizeof(double) * (size_t)nv), malloc(sizeof(double) * (size_t)nv),
                    malloc(sizeof(double) * vv), malloc(sizeof(double) * vv), malloc(sizeof(double) * vv)};
    uint64_t rng = 2026;
    sd_configuration_random(m, &rng, c.q);
    for (int i = 0; i < nv; ++i) {
        c.u[i] = 2 * sd_random_uniform(&rng) - 1;
        c.x[i] = 2 * sd_random_uniform(&rng) - 1;
    }
    long calls[NCELLS];
    for (int cell = 0; cell < NCELLS; ++cell) calls[cell] = batch_calls(&c, cell);
    double *samples = malloc(sizeof(double) * NCELLS * (size_t)batches), median[NCELLS];
    for (int b = 0; b < batches; ++b)
        for (int k = 0; k < NCELLS; ++k) {
            const int cell = b % 2 ? NCELLS - 1 - k : k; /* interleaved, alternating order */
            const double start = now_ns();
            for (long i = 0; i < calls[cell]; ++i) run_cell(&c, cell);
            samples[cell * batches + b] = (now_ns() - start) / (double)calls[cell];
        }
    for (int cell = 0; cell < NCELLS; ++cell) {
        qsort(samples + cell * batches, (size_t)batches, sizeof(double), compare_doubles);
        median[cell] = samples[cell * batches + batches / 2];
    }
    printf("| %s | %d | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f |\n", label, nv, median[CELL_ID], median[CELL_ABA],
           median[CELL_ID_DERIV], median[CELL_FD_DERIV], median[CELL_ID_DERIV] / median[CELL_ID],
           median[CELL_FD_DERIV] / median[CELL_ABA]);
    fflush(stdout);
    free(samples);
    sd_data_free(c.d);
    free(c.q), free(c.u), free(c.x), free(c.out), free(c.A), free(c.B), free(c.C);
}

int bench_derivatives(int argc, char **argv)
{
    int batches = 51;
    const char *shared = SOADYN_SHARED_MODELS_DIR;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--batches") == 0 && i + 1 < argc) batches = atoi(argv[++i]);
        else if (strcmp(argv[i], "--shared") == 0 && i + 1 < argc) shared = argv[++i];
        else if (strcmp(argv[i], "--derivatives") != 0) {
            fprintf(stderr, "usage: soadyn_bench --derivatives [--batches N (>= 11)] [--shared DIR]\n");
            return 1;
        }
    }
    if (batches < 11) batches = 11;
    printf("soadyn %s derivatives: median ns per call of %d interleaved batches, kinematics included\n",
           SOADYN_VERSION, batches);
    printf("built with %s\n\n", SOADYN_BENCH_BUILD);
    static const struct {
        const char *label, *file;
        int shared, floating;
    } rows[3] = {{"iiwa 14", "models/iiwa14.urdf", 0, 0},
                 {"HyQ (free + 12)", "hyq/hyq_no_sensors.urdf", 1, 1},
                 {"Talos reduced (free base)", "talos/talos_reduced.urdf", 1, 1}};
    char table[4096] = "";
    size_t len = 0;
    printf("| model | nv | ID (ns) | ABA (ns) | ID derivatives (ns) | FD derivatives (ns) | ID deriv / ID | FD deriv / ABA |\n");
    printf("|---|--:|--:|--:|--:|--:|--:|--:|\n");
    for (int r = 0; r < 3; ++r) {
        char path[1100];
        snprintf(path, sizeof path, "%s/%s", rows[r].shared ? shared : SOADYN_SOURCE_DIR, rows[r].file);
        if (access(path, R_OK) != 0) {
            len += (size_t)snprintf(table + len, sizeof table - len, "%s: left out, %s not found\n", rows[r].label, path);
            continue;
        }
        sd_urdf_options opt;
        memset(&opt, 0, sizeof opt);
        opt.floating_base = rows[r].floating;
        sd_model *m = NULL;
        sd_error err;
        if (sd_urdf_load_file(path, &opt, &m, &err) != SD_OK) {
            fprintf(stderr, "soadyn_bench: %s\n", err.message);
            return 1;
        }
        len += (size_t)snprintf(table + len, sizeof table - len, "%s: %s\n", rows[r].label, path);
        model_row(rows[r].label, m, batches);
        sd_model_free(m);
    }
    printf("\nmodels:\n%s", table);
    return 0;
}
