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

/* Median ns per call of a (and of b when not NULL) over their batches, interleaved a b b a ... while
 * both have batches left; *ka, *kb: the number of batches of each. */
static void time_cell(call_fn a, void *ca, call_fn b, void *cb, int batches, double *ma, double *mb, int *ka,
                      int *kb)
{
    double call_a, call_b = 0;
    const long na = batch_size(a, ca, &call_a), nb = b ? batch_size(b, cb, &call_b) : 0;
    *ka = batches_for(call_a, batches);
    *kb = b ? batches_for(call_b, batches) : 0;
    double *sa = malloc((size_t)*ka * sizeof(double)), *sb = malloc((size_t)(*kb ? *kb : 1) * sizeof(double));
    for (int i = 0, ia = 0, ib = 0; ia < *ka || ib < *kb; ++i) {
        if (i % 2 == 0) {
            if (ia < *ka) sa[ia++] = time_batch(a, ca, na);
            if (ib < *kb) sb[ib++] = time_batch(b, cb, nb);
        } else {
            if (ib < *kb) sb[ib++] = time_batch(b, cb, nb);
            if (ia < *ka) sa[ia++] = time_batch(a, ca, na);
        }
    }
    qsort(sa, (size_t)*ka, sizeof(double), compare_doubles);
    *ma = sa[*ka / 2];
    if (b) {
        qsort(sb, (size_t)*kb, sizeof(double), compare_doubles);
        *mb = sb[*kb / 2];
    }
    free(sa);
    free(sb);
}

/* Issue 12's targets (ns): half the fastest peer of its table. */
typedef struct row_spec {
    const char *label;
    double target[NCELLS];
} row_spec;
static const row_spec rows[] = {
    {"iiwa 7", {250, 270, 680, 690}},
    {"HyQ, free + 12", {495, 500, 1530, 1740}},
    {"Talos reduced, free + 32", {1270, 1600, 3560, 5000}},
    {"1000-link chain", {43e3, 0.32e6, 109e3, 2.8e6}},
};

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
static char table[8192];
static size_t table_len = 0;

/* Time one model's row into the table; `peer` may be NULL (MuJoCo not built or not loaded). */
static void model_row(const row_spec *row, const sd_model *m, void *peer, void *check, const char *peer_note,
                      int batches)
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
    for (int c = 0; c < NCELLS; ++c) {
        double t_sd = 0, t_mj = 0;
        int k_sd = 0, k_mj = 0;
        s.cell = (bench_cell)c;
#ifdef SOADYN_BENCH_MUJOCO
        ms.cell = (bench_cell)c;
        if (peer) time_cell(sd_run, &s, mj_run, &ms, batches, &t_sd, &t_mj, &k_sd, &k_mj);
        else
#endif
            time_cell(sd_run, &s, NULL, NULL, batches, &t_sd, &t_mj, &k_sd, &k_mj);
        char sd_text[48], mj_text[48], ratio[32];
        if (k_sd < batches) snprintf(sd_text, sizeof sd_text, "%.0f (%d batches)", t_sd, k_sd);
        else snprintf(sd_text, sizeof sd_text, "%.0f", t_sd);
        if (peer) {
            if (k_mj < batches) snprintf(mj_text, sizeof mj_text, "%.0f (%d batches)", t_mj, k_mj);
            else snprintf(mj_text, sizeof mj_text, "%.0f", t_mj);
            snprintf(ratio, sizeof ratio, "%.3g", t_sd / t_mj);
        } else {
            snprintf(mj_text, sizeof mj_text, "%s", peer_note);
            snprintf(ratio, sizeof ratio, "-");
        }
        table_len += (size_t)snprintf(table + table_len, sizeof table - table_len, "| %s | %s | %s | %s | %s | %.0f |\n",
                                      row->label, cell_names[c], sd_text, mj_text, ratio, row->target[c]);
        fprintf(stderr, "soadyn_bench: %s %s done\n", row->label, cell_names[c]);
    }
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
        else if (strcmp(argv[i], "--peers") != 0) {
            fprintf(stderr, "usage: soadyn_bench --peers [--batches N (>= 31)] [--shared DIR] [--cpu-time]\n");
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
#ifdef SOADYN_BENCH_MUJOCO
        model_row(&rows[r], m, peer, check, note, batches);
        mj_peer_free(peer);
        mj_peer_free(check);
#else
        model_row(&rows[r], m, peer, NULL, note, batches);
#endif
        sd_model_free(m);
    }
    rmdir(tmpdir);
    printf("\n| model | | soadyn (ns) | MuJoCo (ns) | soadyn / MuJoCo | target (ns, issue 12) |\n"
           "|---|---|--:|--:|--:|--:|\n%s", table);
    return 0;
}
