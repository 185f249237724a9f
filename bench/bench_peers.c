/*
 * bench/bench_peers.c — soadyn_bench --peers [--batches N] [--shared DIR] [--cpu-time]: the table of
 * issue 12, soadyn and MuJoCo timed on the same models in the same run, as markdown.
 *
 * Rows: iiwa 7 (the bundled models/iiwa14.urdf), HyQ free + 12 (DIR/hyq/hyq_no_sensors.urdf),
 * Talos reduced free + 32 (DIR/talos/talos_reduced.urdf: the file's 32 revolute joints, legs 2 x 6,
 * torso 2, arms 2 x 7, one gripper joint per hand, head 2; the gripper's other 12 joints are fixed in
 * that file and merged by both libraries; the program lists the joints), and the 1000-link
 * revolute chain of bench.c, written as a URDF file from soadyn's model (MuJoCo 2.2.2's XML reader
 * refuses elements nested more than 100 deep, so not as MJCF). DIR defaults
 * to ../shared/models beside the source tree; rows whose file is absent are left out, saying so.
 * A URDF is given to both libraries as one copy (bench_mujoco.c: geometry stripped; a free base as
 * a "world" link and a floating joint, which soadyn makes a free hinge and MuJoCo a free joint), so
 * both time the same file; the program prints, per model, nv on each side and the largest difference
 * of M at the benchmark state (soadyn's M against T^T M_MuJoCo T, T the speed map).
 *
 * Cells (each call includes its kinematics): ID = sd_inverse_dynamics, M = sd_mass_matrix (dense),
 * FD = sd_forward_dynamics (articulated body), M^-1 = sd_mass_matrix_inverse (dense); the MuJoCo
 * calls of each cell are listed in bench_mujoco.c. The two libraries are timed in interleaved
 * batches (soadyn, MuJoCo, MuJoCo, soadyn, ...) of about 2 ms each after a 20 ms warm-up, so that
 * the machine's noise falls on both alike; each number is the median of N batches (default 51), but
 * a call slower than 0.25 s gets about 15 s of batches (at least 3; the table says how many).
 * The target column is issue 12's: half the fastest peer of its table.
 *
 * --compiled adds the generated code (soadyn/compile.h: a copy of the model compiled with the default
 * compiler, flags and cache) as a third caller in the same interleaved batches, times each cell in
 * three runs (the median of the runs' medians, and their spread), and checks generated / MuJoCo against
 * the target ratios (half the fastest peer's time).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_peers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <soadyn/soadyn.h>

#include "bench_common.h"
#include "timing.h"
#ifdef SOADYN_BENCH_MUJOCO
#include "bench_mujoco.h"
#else
typedef enum bench_cell { CELL_ID = 0, CELL_M, CELL_FD, CELL_MINV, NCELLS } bench_cell;
#endif

#ifndef SOADYN_BENCH_BUILD
#define SOADYN_BENCH_BUILD "unknown flags"
#endif

static const char *const cell_names[NCELLS] = {"ID", "M", "FD", "M^-1"};

/* soadyn's side of one model: the workspace and a state. */
typedef struct sd_side {
    const sd_model *m;
    sd_data *d;
    double *q, *u, *qdd, *tau, *out, *M;
    bench_cell cell;
} sd_side;

static void sd_run(void *ctx)
{
    sd_side *s = ctx;
    switch (s->cell) {
    case CELL_ID: sd_inverse_dynamics(s->m, s->d, s->q, s->u, s->qdd, NULL, s->out); break;
    case CELL_M: sd_mass_matrix(s->m, s->d, s->q, s->M); break;
    case CELL_FD: sd_forward_dynamics(s->m, s->d, s->q, s->u, s->tau, NULL, s->out); break;
    case CELL_MINV: sd_mass_matrix_inverse(s->m, s->d, s->q, s->M); break;
    default: break;
    }
}

#ifdef SOADYN_BENCH_MUJOCO
typedef struct mj_side {
    mj_peer *p;
    bench_cell cell;
} mj_side;
static void mj_run(void *ctx)
{
    mj_side *s = ctx;
    mj_peer_run(s->p, s->cell);
}
#endif

typedef void (*call_fn)(void *ctx);

/* The clock: the monotonic one of timing.h, or with --cpu-time this thread's CPU time, which leaves
 * out the spells the process waits for a core on a shared machine (both sides alike). */
static int use_cpu_time = 0;

static double clock_ns(void)
{
    if (!use_cpu_time) return now_ns();
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

/* Calls per batch of about 2 ms after a 20 ms warm-up (at least one call); *call_ns: one call's time. */
static long batch_size(call_fn fn, void *ctx, double *call_ns)
{
    const double t0 = clock_ns();
    long calls = 0;
    while (clock_ns() - t0 < 2e7 && calls < 1000000) { fn(ctx); ++calls; }
    *call_ns = (clock_ns() - t0) / (double)calls;
    const long n = (long)(2e6 / *call_ns);
    return n < 1 ? 1 : n;
}

static double time_batch(call_fn fn, void *ctx, long n)
{
    const double start = clock_ns();
    for (long i = 0; i < n; ++i) fn(ctx);
    return (clock_ns() - start) / (double)n;
}

/* A call slower than this gets fewer batches (an odd number, at least 3, about 15 s in all), so
 * that MuJoCo's O(N^3) chain cells (M^-1 of the 1000-link chain: seconds per call) end; the table
 * says how many. */
#define SLOW_CALL_NS 2.5e8

static int batches_for(double call_ns, int batches)
{
    if (call_ns <= SLOW_CALL_NS) return batches;
    int n = (int)(1.5e10 / call_ns);
    if (n < 3) n = 3;
    if (n > batches) n = batches;
    return n | 1;
}

/* Median ns per call of each of the n callers over their batches, interleaved: in each round every
 * caller times one batch while it has batches left, in order on even rounds and in reverse on odd
 * ones (a b b a ... for two), so that the machine's noise falls on all alike; k[i]: the number of
 * batches of caller i. */
static void time_cells(int n, call_fn *fn, void **ctx, int batches, double *median, int *k)
{
    long size[3];
    double *samples[3];
    int left = 0;
    for (int i = 0; i < n; ++i) {
        double call_ns;
        size[i] = batch_size(fn[i], ctx[i], &call_ns);
        k[i] = batches_for(call_ns, batches);
        samples[i] = malloc((size_t)k[i] * sizeof(double));
        left += k[i];
    }
    int taken[3] = {0, 0, 0};
    for (int round = 0; left > 0; ++round)
        for (int j = 0; j < n; ++j) {
            const int i = round % 2 ? n - 1 - j : j;
            if (taken[i] < k[i]) {
                samples[i][taken[i]++] = time_batch(fn[i], ctx[i], size[i]);
                --left;
            }
        }
    for (int i = 0; i < n; ++i) {
        qsort(samples[i], (size_t)k[i], sizeof(double), compare_doubles);
        median[i] = samples[i][k[i] / 2];
        free(samples[i]);
    }
}

/* Issue 12's targets (ns): half the fastest peer of its table; the generated code's, as
 * generated / MuJoCo time ratios (half the fastest peer's time; 0: none, the chain's FD and M^-1, where
 * MuJoCo's dense O(N^3) makes a ratio meaningless). */
typedef struct row_spec {
    const char *label;
    double target[NCELLS];
    double generated_target[NCELLS];
} row_spec;
static const row_spec rows[] = {
    {"iiwa 7", {250, 270, 680, 690}, {0.19, 0.24, 0.40, 0.48}},
    {"HyQ, free + 12", {495, 500, 1530, 1740}, {0.20, 0.22, 0.41, 0.32}},
    {"Talos reduced, free + 32", {1270, 1600, 3560, 5000}, {0.20, 0.25, 0.35, 0.20}},
    {"1000-link chain", {43e3, 0.32e6, 109e3, 2.8e6}, {0.21, 0.23, 0, 0}},
};

/* --compiled: a generated column (soadyn/compile.h), each cell three runs. */
static int compiled_mode = 0;

static double *alloc_doubles(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof(double));
    if (p == NULL) {
        fprintf(stderr, "soadyn_bench: out of memory\n");
        exit(1);
    }
    return p;
}

static void fail(const char *what, const char *msg)
{
    fprintf(stderr, "soadyn_bench: %s: %s\n", what, msg);
    exit(1);
}

/* The table's chain: n revolute bodies 0.1 m apart, 1 kg each (bench.c's masses and lengths), axes
 * alternating (x + z)/sqrt 2 and (y + z)/sqrt 2. The tilt is the table's since its first run (16f4d56:
 * the axis's z left at sd_body_desc_init's 1, where bench.c's chain has axes x and y), kept so that
 * the row compares with every earlier run of the table; it times the hinges whose axis is not
 * a coordinate axis (hinge.c's turn_placement, no plane kernels), as bench.c's chain times the others. */
static sd_model *chain_model(int n)
{
    sd_builder *b = sd_builder_new();
    char name[32], parent[32];
    for (int k = 0; k < n; ++k) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        snprintf(name, sizeof name, "link%d", k);
        d.name = name;
        d.parent = k ? parent : NULL;
        d.hinge = SD_HINGE_REVOLUTE;
        d.placement.p[2] = k ? -0.1 : 0.0;
        d.axis[0] = k % 2 ? 0 : 1;
        d.axis[1] = k % 2 ? 1 : 0;
        d.axis[2] = 1; /* normalised by the builder */
        d.mass = 1.0;
        d.com[2] = -0.05;
        const double r = 0.05 + 0.02 / 5.0;
        d.inertia[0] = d.inertia[4] = (3 * r * r + 0.01) / 12.0;
        d.inertia[8] = 0.5 * r * r;
        sd_error err;
        if (sd_builder_add_body(b, &d, &err) != SD_OK) fail("chain", err.message);
        memcpy(parent, name, sizeof name);
    }
    sd_model *m = NULL;
    sd_error err;
    if (sd_builder_build(b, &m, &err) != SD_OK) fail("chain", err.message);
    sd_builder_free(b);
    return m;
}

/* soadyn's serial chain as a URDF file: a massless root link "base" fixed to the world, each body a
 * link at the same placement on a revolute joint about the same axis, with the same mass, centre of
 * mass and inertia about it (soadyn's default gravity is URDF's). Returns 0 when written. */
static int write_chain_urdf(const sd_model *m, const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) return -1;
    fprintf(f, "<?xml version=\"1.0\"?>\n<robot name=\"chain%d\">\n<link name=\"base\"/>\n", sd_model_nbodies(m));
    for (int k = 0; k < sd_model_nbodies(m); ++k) {
        const sd_transform *X = sd_model_placement(m, k);
        const double *a = sd_model_axis(m, k), *c = sd_model_body_com(m, k), *I = sd_model_body_inertia(m, k);
        const int parent = sd_model_parent(m, k);
        fprintf(f,
                "<link name=\"%s\"><inertial><origin xyz=\"%.17g %.17g %.17g\"/><mass value=\"%.17g\"/>"
                "<inertia ixx=\"%.17g\" iyy=\"%.17g\" izz=\"%.17g\" ixy=\"%.17g\" ixz=\"%.17g\" iyz=\"%.17g\"/></inertial></link>\n"
                "<joint name=\"%s\" type=\"continuous\"><parent link=\"%s\"/><child link=\"%s\"/>"
                "<origin xyz=\"%.17g %.17g %.17g\"/><axis xyz=\"%.17g %.17g %.17g\"/></joint>\n",
                sd_model_body_name(m, k), c[0], c[1], c[2], sd_model_body_mass(m, k), I[0], I[4], I[8], I[1], I[2], I[5],
                sd_model_joint_name(m, k), parent < 0 ? "base" : sd_model_body_name(m, parent), sd_model_body_name(m, k),
                X->p[0], X->p[1], X->p[2], a[0], a[1], a[2]);
    }
    fprintf(f, "</robot>\n");
    return fclose(f) == 0 ? 0 : -1;
}

/* The table, printed when every row is timed (the model checks come first). */
static char table[16384];
static size_t table_len = 0;

/* Time one model's row into the table; `peer` may be NULL (MuJoCo not built or not loaded). */
static void model_row(const row_spec *row, const sd_model *m, void *peer, void *check, const char *peer_note,
                      int batches, const sd_model *compiled, const char *compiled_note)
{
    (void)check; /* the M check of builds with MuJoCo */
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    sd_side s = {m, sd_data_new(m), alloc_doubles((size_t)nq), alloc_doubles((size_t)nv), alloc_doubles((size_t)nv),
                 alloc_doubles((size_t)nv), alloc_doubles((size_t)nv), alloc_doubles((size_t)nv * nv), CELL_ID};
    uint64_t rng = 2026;
    sd_configuration_random(m, &rng, s.q);
    for (int i = 0; i < nv; ++i) {
        s.u[i] = 2 * sd_random_uniform(&rng) - 1;
        s.tau[i] = 2 * sd_random_uniform(&rng) - 1;
        s.qdd[i] = 2 * sd_random_uniform(&rng) - 1;
    }
#ifdef SOADYN_BENCH_MUJOCO
    mj_side ms = {peer, CELL_ID};
    if (peer) {
        mj_peer_set_state(peer, s.q, s.u, s.qdd, s.tau);
        mj_peer_set_state(check, s.q, s.u, s.qdd, s.tau);
        sd_mass_matrix(m, s.d, s.q, s.M);
        const double exact = mj_peer_mass_matrix_difference(check, s.M), fused = mj_peer_mass_matrix_difference(peer, s.M);
        printf("  %s: nv %d (soadyn) = %d (MuJoCo); max |M - T^T M_MuJoCo T| / max |M| at the benchmark state: %.2g "
               "(%s 1e-10; MuJoCo's fusestatic off), %.2g as timed (fusestatic on)\n",
               row->label, nv, mj_peer_nv(peer), exact, exact <= 1e-10 ? "within" : "ABOVE", fused);
    }
#endif
    if (peer == NULL) printf("  %s: nv %d; MuJoCo: %s\n", row->label, nv, peer_note);
    /* the generated code: the same state on the compiled copy (its own workspace) */
    sd_side g = s;
    if (compiled) {
        g.m = compiled;
        g.d = sd_data_new(compiled);
    }
    for (int c = 0; c < NCELLS; ++c) {
        /* the callers: the library, the generated code (--compiled), MuJoCo (when loaded) */
        call_fn fn[3] = {sd_run};
        void *ctx[3] = {&s};
        int n = 1, at_generated = -1, at_mujoco = -1;
        s.cell = g.cell = (bench_cell)c;
        if (compiled) at_generated = n, fn[n] = sd_run, ctx[n++] = &g;
#ifdef SOADYN_BENCH_MUJOCO
        ms.cell = (bench_cell)c;
        if (peer) at_mujoco = n, fn[n] = mj_run, ctx[n++] = &ms;
#endif
        /* with --compiled, three runs: each caller's median of the runs' medians, and their spread */
        const int runs = compiled_mode ? 3 : 1;
        double t[3][3], med[3], spread[3];
        int k[3];
        for (int r = 0; r < runs; ++r) {
            double m_r[3];
            time_cells(n, fn, ctx, batches, m_r, k);
            for (int i = 0; i < n; ++i) t[i][r] = m_r[i];
        }
        for (int i = 0; i < n; ++i) {
            qsort(t[i], (size_t)runs, sizeof(double), compare_doubles);
            med[i] = t[i][runs / 2];
            spread[i] = (t[i][runs - 1] - t[i][0]) / med[i];
        }
        char text[3][64];
        for (int i = 0; i < n; ++i) {
            int len = snprintf(text[i], sizeof text[i], "%.0f", med[i]);
            if (runs > 1) len += snprintf(text[i] + len, sizeof text[i] - (size_t)len, " (%.0f%%)", 100 * spread[i]);
            if (k[i] < batches) snprintf(text[i] + len, sizeof text[i] - (size_t)len, " (%d batches)", k[i]);
        }
        const char *mj_text = at_mujoco >= 0 ? text[at_mujoco] : peer_note;
        char ratio[32] = "-", gen_ratio[32] = "-", met[16] = "-";
        if (at_mujoco >= 0) snprintf(ratio, sizeof ratio, "%.3g", med[0] / med[at_mujoco]);
        if (!compiled_mode) {
            table_len += (size_t)snprintf(table + table_len, sizeof table - table_len, "| %s | %s | %s | %s | %s | %.0f |\n",
                                          row->label, cell_names[c], text[0], mj_text, ratio, row->target[c]);
        } else {
            if (at_generated >= 0 && at_mujoco >= 0) {
                const double rg = med[at_generated] / med[at_mujoco];
                snprintf(gen_ratio, sizeof gen_ratio, "%.3g", rg);
                if (row->generated_target[c] > 0) snprintf(met, sizeof met, "%s", rg <= row->generated_target[c] ? "yes" : "no");
            }
            char target[16] = "-";
            if (row->generated_target[c] > 0) snprintf(target, sizeof target, "%.2f", row->generated_target[c]);
            table_len += (size_t)snprintf(table + table_len, sizeof table - table_len,
                                          "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", row->label, cell_names[c],
                                          text[0], at_generated >= 0 ? text[at_generated] : compiled_note, mj_text, ratio,
                                          gen_ratio, target, met);
        }
        fprintf(stderr, "soadyn_bench: %s %s done\n", row->label, cell_names[c]);
    }
    if (compiled) sd_data_free(g.d);
    sd_data_free(s.d);
    free(s.q); free(s.u); free(s.qdd); free(s.tau); free(s.out); free(s.M);
}

int bench_peers(int argc, char **argv)
{
    int batches = 51;
    const char *shared = SOADYN_SHARED_MODELS_DIR;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--batches") == 0 && i + 1 < argc) batches = atoi(argv[++i]);
        else if (strcmp(argv[i], "--shared") == 0 && i + 1 < argc) shared = argv[++i];
        else if (strcmp(argv[i], "--cpu-time") == 0) use_cpu_time = 1;
        else if (strcmp(argv[i], "--compiled") == 0) compiled_mode = 1;
        else if (strcmp(argv[i], "--peers") != 0) {
            fprintf(stderr, "usage: soadyn_bench --peers [--batches N (>= 31)] [--shared DIR] [--cpu-time] [--compiled]\n");
            return 1;
        }
    }
    if (batches < 31) batches = 31;
    char tmpdir[] = "/tmp/soadyn_bench_XXXXXX";
    if (mkdtemp(tmpdir) == NULL) fail("mkdtemp", "cannot make a temporary folder");
#ifdef SOADYN_BENCH_MUJOCO
    printf("soadyn %s and MuJoCo %s (Debian libmujoco-dev), same models, same run: median ns per call of %d "
           "interleaved batches, kinematics included\n", SOADYN_VERSION, mj_peer_version(), batches);
#else
    printf("soadyn %s: median ns per call of %d batches, kinematics included; MuJoCo not built (CMake did not find "
           "libmujoco-dev)\n", SOADYN_VERSION, batches);
#endif
    printf("soadyn built with %s\nmachine code run: %s (%s)\nclock: %s\n\nmodels:\n", SOADYN_BENCH_BUILD,
           sd_cpu_level(), sd_cpu_note(), use_cpu_time ? "thread CPU time (--cpu-time)" : "monotonic (wall)");

    const char *files[3] = {SOADYN_SOURCE_DIR "/models/iiwa14.urdf", "hyq/hyq_no_sensors.urdf",
                            "talos/talos_reduced.urdf"};
    for (int r = 0; r < 4; ++r) {
        char path[1100], copy[1100], generated[1100] = "";
        sd_model *m = NULL;
        void *peer = NULL;
        const char *note = "not built";
        const int floating = r == 1 || r == 2;
        if (r == 0) {
            snprintf(path, sizeof path, "%s", files[0]);
        } else if (r < 3) {
            snprintf(path, sizeof path, "%s/%s", shared, files[r]);
        } else {
            sd_model *chain = chain_model(1000);
            snprintf(path, sizeof path, "%s/chain1000.urdf", tmpdir);
            if (write_chain_urdf(chain, path) != 0) fail(path, "cannot write");
            snprintf(generated, sizeof generated, "%s", path);
            sd_model_free(chain);
        }
        if (access(path, R_OK) != 0) {
            printf("  %s: left out, %s not found\n", rows[r].label, path);
            continue;
        }
        snprintf(copy, sizeof copy, "%s/model%d.urdf", tmpdir, r);
        sd_urdf_options opt;
        memset(&opt, 0, sizeof opt);
        opt.floating_base = floating;
#ifdef SOADYN_BENCH_MUJOCO
        char msg[2048] = "", changed[1024] = "";
        mj_peer *check = NULL;
        peer = mj_peer_load_urdf(path, floating, copy, changed, sizeof changed, &check, msg, sizeof msg);
        if (peer == NULL) {
            printf("  %s: MuJoCo: %s\n", rows[r].label, msg);
            note = "not loaded";
        } else {
            snprintf(path, sizeof path, "%s", copy); /* soadyn reads MuJoCo's copy; its free joint is in it */
            opt.floating_base = 0;
            if (changed[0]) printf("  %s: inertia balanced (isotropic, trace/3) for MuJoCo and soadyn alike: %s\n",
                                   rows[r].label, changed);
        }
#endif
        sd_error err;
        if (sd_urdf_load_file(path, &opt, &m, &err) != SD_OK) fail(path, err.message);
        remove(copy);
        if (generated[0]) remove(generated);
#ifdef SOADYN_BENCH_MUJOCO
        if (peer != NULL && (mj_peer_bind(peer, m, msg, sizeof msg) != 0 || mj_peer_bind(check, m, msg, sizeof msg) != 0)) {
            printf("  %s: MuJoCo not compared: %s\n", rows[r].label, msg);
            mj_peer_free(peer);
            peer = NULL;
            note = "not matched";
        }
#endif
        if (r == 2) { /* say which joints the reduced Talos has */
            printf("  %s joints:", rows[r].label);
            for (int k = 0; k < sd_model_nbodies(m); ++k)
                if (sd_model_hinge_nv(m, k) > 0) printf(" %s", sd_model_joint_name(m, k));
            printf("\n");
        }
        /* --compiled: a copy of the model running its generated code (default compiler, flags and cache) */
        sd_model *compiled = NULL;
        const char *compiled_note = "not offered";
        if (compiled_mode) {
            compiled = sd_model_copy(m, &err);
            if (compiled && sd_model_compile(compiled, NULL, &err) == SD_OK) {
                sd_compile_info info;
                sd_model_compile_info(compiled, &info);
                printf("  %s: generated code %s (%s; compiled in %.1f s, self-check %.2g)\n", rows[r].label,
                       info.cache_hit ? "from the cache" : "compiled now", info.path, info.compile_seconds,
                       info.self_check_error);
            } else {
                printf("  %s: generated code not offered: %s\n", rows[r].label, err.message);
                sd_model_free(compiled);
                compiled = NULL;
            }
        }
#ifdef SOADYN_BENCH_MUJOCO
        model_row(&rows[r], m, peer, check, note, batches, compiled, compiled_note);
        mj_peer_free(peer);
        mj_peer_free(check);
#else
        model_row(&rows[r], m, peer, NULL, note, batches, compiled, compiled_note);
#endif
        sd_model_free(compiled);
        sd_model_free(m);
    }
    rmdir(tmpdir);
    if (compiled_mode) {
        printf("\n| model | | library (ns) | generated (ns) | MuJoCo (ns) | library / MuJoCo | generated / MuJoCo | "
               "target | met |\n|---|---|--:|--:|--:|--:|--:|--:|--|\n%s"
               "\nEach time: the median of 3 runs (each the median of its interleaved batches), in brackets the "
               "spread of the 3 (max - min) / median.\n", table);
        return 0;
    }
    printf("\n| model | | soadyn (ns) | MuJoCo (ns) | soadyn / MuJoCo | target (ns, issue 12) |\n"
           "|---|---|--:|--:|--:|--:|\n%s", table);
    return 0;
}
