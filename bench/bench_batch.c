/*
 * bench/bench_batch.c — states per second of the batched forward dynamics (soadyn/batch.h,
 * issue 12): the iiwa 14 (models/iiwa14.urdf) and a Talos-like humanoid (../shared/models/talos/
 * talos_reduced.urdf on a free base when present, else the free + 31 humanoid that bench.c builds),
 * on 1 thread scalar, 1 thread SIMD (the widest kernel: AVX-512 where the processor has it),
 * 2 threads scalar and 2 threads SIMD (one context, its pool of threads), "2 independent" scalar
 * and SIMD: two threads each running its own 1-thread context on its half of the states at the same
 * time, sharing nothing, which is what this machine's two cores give for this work (two vCPUs of a
 * VM can slow each other down): the ceiling of the pool's speed-up, so that pool / ceiling is what
 * the pool itself loses; and 1 thread on the 4-lane AVX2 kernel. The seven settings are timed in
 * turns, batch after batch (so that a change of the machine's load hits all alike), and each
 * reports the median of its batches: wall-clock states per second, and the CPU time the process
 * spent per state (all threads), which a machine shared with other jobs inflates far less than the
 * wall clock. The ratios are the medians of the ratios within a round (the settings of one round
 * ran within milliseconds of each other). The last line per model is a summary to quote.
 * Usage: soadyn_bench_batch [STATES [BATCHES]] (defaults 4096 states, 31 batches).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/batch.h>
#include <soadyn/soadyn.h>

#include "timing.h"

/* CPU time of the whole process (every thread) in nanoseconds. */
static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

#ifndef SOADYN_SOURCE_DIR
#define SOADYN_SOURCE_DIR "."
#endif

static sd_model *load(const char *path, int floating)
{
    sd_urdf_options opt = {.floating_base = floating, .keep_fixed_joints = 0};
    sd_model *m = NULL;
    sd_error err;
    if (sd_urdf_load_file(path, &opt, &m, &err) != SD_OK) {
        fprintf(stderr, "bench_batch: %s\n", err.message);
        return NULL;
    }
    return m;
}

/* bench.c's humanoid (free pelvis, legs 2 x 6, waist 3, arms 2 x 7, neck 2), for when the shared
 * models are absent. */
static void add_link(sd_builder *b, const char *name, const char *parent, sd_hinge_type hinge, double z, double y,
                     int axis, double mass, double length)
{
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = name, d.parent = parent, d.hinge = hinge;
    d.placement.p[1] = y, d.placement.p[2] = z;
    d.axis[0] = axis == 0, d.axis[1] = axis == 1, d.axis[2] = axis == 2;
    d.mass = mass;
    d.com[2] = -0.5 * length;
    const double r = 0.05 + 0.02 * mass / 5.0;
    d.inertia[0] = d.inertia[4] = mass * (3 * r * r + length * length) / 12.0;
    d.inertia[8] = 0.5 * mass * r * r;
    sd_builder_add_body(b, &d, NULL);
}

static sd_model *humanoid(void)
{
    sd_builder *b = sd_builder_new();
    add_link(b, "pelvis", NULL, SD_HINGE_FREE, 1.0, 0, 2, 10.0, 0.2);
    static const int leg_axes[6] = {2, 0, 1, 1, 1, 0}, arm_axes[7] = {1, 0, 2, 1, 2, 1, 0};
    static const double leg_len[6] = {0.05, 0.05, 0.4, 0.4, 0.05, 0.05}, leg_mass[6] = {1.5, 1.5, 8, 4, 1, 1.5};
    static const double arm_len[7] = {0.05, 0.05, 0.3, 0.25, 0.05, 0.05, 0.1}, arm_mass[7] = {1.5, 1.5, 2.5, 1.5, 0.8, 0.5, 0.7};
    char name[64], parent[64];
    for (int side = 0; side < 2; ++side) {
        snprintf(parent, sizeof parent, "pelvis");
        for (int j = 0; j < 6; ++j) {
            snprintf(name, sizeof name, "%s_leg%d", side ? "r" : "l", j);
            add_link(b, name, parent, SD_HINGE_REVOLUTE, j ? -leg_len[j - 1] : -0.1, j ? 0 : (side ? -0.1 : 0.1),
                     leg_axes[j], leg_mass[j], leg_len[j]);
            snprintf(parent, sizeof parent, "%s", name);
        }
    }
    static const int waist_axes[3] = {2, 1, 0};
    snprintf(parent, sizeof parent, "pelvis");
    for (int j = 0; j < 3; ++j) {
        snprintf(name, sizeof name, "torso%d", j);
        add_link(b, name, parent, SD_HINGE_REVOLUTE, j ? 0.05 : 0.1, 0, waist_axes[j], j == 2 ? 15.0 : 2.0, -0.05);
        snprintf(parent, sizeof parent, "%s", name);
    }
    for (int side = 0; side < 2; ++side) {
        snprintf(parent, sizeof parent, "torso2");
        for (int j = 0; j < 7; ++j) {
            snprintf(name, sizeof name, "%s_arm%d", side ? "r" : "l", j);
            add_link(b, name, parent, SD_HINGE_REVOLUTE, j ? -arm_len[j - 1] : 0.35, j ? 0 : (side ? -0.2 : 0.2),
                     arm_axes[j], arm_mass[j], arm_len[j]);
            snprintf(parent, sizeof parent, "%s", name);
        }
    }
    add_link(b, "neck", "torso2", SD_HINGE_REVOLUTE, 0.4, 0, 2, 0.5, -0.05);
    add_link(b, "head", "neck", SD_HINGE_REVOLUTE, 0.05, 0, 1, 3.0, -0.2);
    sd_model *m = NULL;
    sd_error err;
    if (sd_builder_build(b, &m, &err) != SD_OK) fprintf(stderr, "bench_batch: %s\n", err.message);
    sd_builder_free(b);
    return m;
}

/* The 1-minute load average (the machine is shared; the figures mean little above ~1). */
static double load_average(void)
{
    double load = -1.0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1) load = -1.0;
        fclose(f);
    }
    return load;
}

/* The "2 independent" setting: a helper thread kept waiting at a barrier between batches (as the
 * pool's threads wait on a condition variable), and two 1-thread contexts per path, one per half. */
typedef struct half_job {
    sd_batch *batch;
    long n;
    const double *q, *u, *tau;
    double *qdd;
    sd_status status;
} half_job;

typedef struct independent_pair {
    pthread_t thread;
    pthread_barrier_t start, end;
    int quit;
    half_job half[2];
} independent_pair;

static void run_half(half_job *h)
{
    h->status = sd_forward_dynamics_batch(h->batch, h->n, h->q, h->u, h->tau, NULL, h->qdd, NULL);
}

static void *helper_main(void *arg)
{
    independent_pair *p = arg;
    for (;;) {
        pthread_barrier_wait(&p->start);
        if (p->quit) return NULL;
        run_half(&p->half[1]);
        pthread_barrier_wait(&p->end);
    }
}

/* Settings 0-5 in pairs (even: scalar, odd: the widest SIMD kernel); 6 the 4-lane AVX2 kernel on 1
 * thread, which is setting 1 itself on a processor without AVX-512. */
enum { SETTINGS = 7 };
static const char *names[SETTINGS] = {"1 thread scalar",      "1 thread SIMD",      "2 threads scalar",
                                      "2 threads SIMD",       "2 independent scalar", "2 independent SIMD",
                                      "1 thread SIMD AVX2"};

/* One batch of setting s; exits on a failure (the random states must not fail). */
static void one_batch(int s, sd_batch **b, sd_batch *(*own)[2], independent_pair *p, long states,
                      const double *q, const double *u, const double *tau, double *qdd)
{
    sd_status st;
    const char *msg;
    if (s < 4 || s == 6) {
        sd_batch *one = b[s < 4 ? s : 4];
        st = sd_forward_dynamics_batch(one, states, q, u, tau, NULL, qdd, NULL);
        msg = sd_batch_error(one);
    } else {
        p->half[0].batch = own[s % 2][0], p->half[1].batch = own[s % 2][1];
        pthread_barrier_wait(&p->start);
        run_half(&p->half[0]);
        pthread_barrier_wait(&p->end);
        const int bad = p->half[0].status != SD_OK ? 0 : 1;
        st = p->half[bad].status;
        msg = sd_batch_error(p->half[bad].batch);
    }
    if (st != SD_OK) {
        fprintf(stderr, "bench_batch: %s: %s\n", names[s], msg);
        exit(1);
    }
}

/* The median of ratio num / den over the rounds (t holds `batches` times per setting, unsorted). */
static double median_ratio(const double *t, int num, int den, int batches, double *work)
{
    for (int r = 0; r < batches; ++r) work[r] = t[num * batches + r] / t[den * batches + r];
    qsort(work, (size_t)batches, sizeof(double), compare_doubles);
    return work[batches / 2];
}

static void run(const char *label, const char *name, const sd_model *m, long states, int batches)
{
    const long nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *q = malloc((size_t)(states * nq) * 8), *u = malloc((size_t)(states * nv) * 8),
           *tau = malloc((size_t)(states * nv) * 8), *qdd = malloc((size_t)(states * nv) * 8);
    uint64_t rng = 7;
    for (long i = 0; i < states; ++i) {
        sd_configuration_random(m, &rng, q + i * nq);
        for (long j = 0; j < nv; ++j) {
            u[i * nv + j] = 2 * sd_random_uniform(&rng) - 1;
            tau[i * nv + j] = 2 * sd_random_uniform(&rng) - 1;
        }
    }
    sd_batch *b[5], *own[2][2];
    for (int s = 0; s < 4; ++s) {
        b[s] = sd_batch_new(m, s < 2 ? 1 : 2, NULL);
        sd_batch_set_simd(b[s], s % 2 ? SD_BATCH_SIMD_AUTO : SD_BATCH_SIMD_OFF);
    }
    b[4] = sd_batch_new(m, 1, NULL);
    sd_batch_set_simd(b[4], SD_BATCH_SIMD_AVX2);
    for (int simd = 0; simd < 2; ++simd)
        for (int h = 0; h < 2; ++h) {
            own[simd][h] = sd_batch_new(m, 1, NULL);
            sd_batch_set_simd(own[simd][h], simd ? SD_BATCH_SIMD_AUTO : SD_BATCH_SIMD_OFF);
        }
    /* the halves: whole SIMD groups of 8 (and so of 4) */
    const long first = (states / 2 + 7) / 8 * 8 < states ? (states / 2 + 7) / 8 * 8 : states;
    independent_pair pair = {.quit = 0};
    pair.half[0] = (half_job){NULL, first, q, u, tau, qdd, SD_OK};
    pair.half[1] = (half_job){NULL, states - first, q + first * nq, u + first * nv, tau + first * nv,
                              qdd + first * nv, SD_OK};
    pthread_barrier_init(&pair.start, NULL, 2);
    pthread_barrier_init(&pair.end, NULL, 2);
    if (pthread_create(&pair.thread, NULL, helper_main, &pair) != 0) {
        fprintf(stderr, "bench_batch: no second thread\n");
        exit(1);
    }
    double *t = malloc((size_t)(SETTINGS * batches) * sizeof(double)),
           *c = malloc((size_t)(SETTINGS * batches) * sizeof(double)), *work = malloc((size_t)batches * sizeof(double));
    for (int r = -2; r < batches; ++r) /* two warm-up rounds */
        for (int s = 0; s < SETTINGS; ++s) {
            const double t0 = now_ns(), c0 = cpu_ns();
            one_batch(s, b, own, &pair, states, q, u, tau, qdd);
            if (r >= 0) {
                t[s * batches + r] = now_ns() - t0;
                c[s * batches + r] = cpu_ns() - c0;
            }
        }
    pair.quit = 1;
    pthread_barrier_wait(&pair.start);
    pthread_join(pair.thread, NULL);
    pthread_barrier_destroy(&pair.start);
    pthread_barrier_destroy(&pair.end);
    printf("%s (nv %ld), FD, %ld states per batch, median of %d batches; %s\n", label, nv, states, batches,
           sd_batch_simd_note(b[1]));
    /* ratios of times within a round, before the sort below */
    const double simd1 = median_ratio(t, 0, 1, batches, work), pool_s = median_ratio(t, 0, 2, batches, work),
                 pool_v = median_ratio(t, 1, 3, batches, work), ind_s = median_ratio(t, 0, 4, batches, work),
                 ind_v = median_ratio(t, 1, 5, batches, work), wide = median_ratio(t, 6, 1, batches, work);
    double rate[SETTINGS], cpu[SETTINGS];
    for (int s = 0; s < SETTINGS; ++s) {
        qsort(t + s * batches, (size_t)batches, sizeof(double), compare_doubles);
        qsort(c + s * batches, (size_t)batches, sizeof(double), compare_doubles);
        const double med = t[s * batches + batches / 2], lo = t[s * batches], hi = t[s * batches + batches - 1];
        rate[s] = states / (med * 1e-9);
        cpu[s] = c[s * batches + batches / 2] / states;
        printf("  %-20s %10.0f states/s  %7.1f ns/state wall (batch min %.2f ms, max %.2f ms)  %7.1f ns/state CPU\n",
               names[s], rate[s], med / states, lo * 1e-6, hi * 1e-6, cpu[s]);
    }
    printf("  wall, medians of the ratios within a round: SIMD / scalar on 1 thread %.2fx; 2 threads / 1 thread:\n"
           "    scalar: pool %.2fx, 2 independent %.2fx (pool / ceiling %.0f%%);\n"
           "    SIMD:   pool %.2fx, 2 independent %.2fx (pool / ceiling %.0f%%)\n",
           simd1, pool_s, ind_s, 100 * pool_s / ind_s, pool_v, ind_v, 100 * pool_v / ind_v);
    printf("  %s / AVX2 on 1 thread: %.2fx wall, %.2fx CPU\n", sd_batch_simd_lanes(b[1]) == 8 ? "AVX-512" : "SIMD",
           wide, cpu[6] / cpu[1]);
    printf("  CPU:  SIMD / scalar on 1 thread %.2fx; CPU(1 thread) / CPU(2 threads): scalar pool %.3f, "
           "independent %.3f;\n        SIMD pool %.3f, independent %.3f\n",
           cpu[0] / cpu[1], cpu[0] / cpu[2], cpu[0] / cpu[4], cpu[1] / cpu[3], cpu[1] / cpu[5]);
    /* SIMD / scalar by CPU time, which a loaded machine's preemptions do not inflate (on an idle one it
     * is the wall clock's); the threads' gains can only be wall-clock figures */
    printf("  summary: %s FD (load %.1f): 1 core SIMD / scalar %.2fx (%.0f -> %.0f ns CPU per state); 2 threads "
           "SIMD %.0fk states/s, %.2fx 1 thread, two independent threads %.2fx (the pool keeps %.0f%% of what 2 "
           "cores give here)\n",
           name, load_average(), cpu[0] / cpu[1], cpu[0], cpu[1], rate[3] * 1e-3, pool_v, ind_v,
           100 * pool_v / ind_v);
    for (int s = 0; s < 5; ++s) sd_batch_free(b[s]);
    for (int simd = 0; simd < 2; ++simd) sd_batch_free(own[simd][0]), sd_batch_free(own[simd][1]);
    free(t), free(c), free(work), free(q), free(u), free(tau), free(qdd);
}

int main(int argc, char **argv)
{
    const long states = argc > 1 ? atol(argv[1]) : 4096;
    const int batches = argc > 2 ? atoi(argv[2]) : 31;
    if (states < 1 || batches < 1) {
        fprintf(stderr, "usage: soadyn_bench_batch [STATES [BATCHES]]\n");
        return 1;
    }
    printf("load average %.2f at the start\n", load_average());
    sd_model *iiwa = load(SOADYN_SOURCE_DIR "/models/iiwa14.urdf", 0);
    if (!iiwa) return 1;
    run("iiwa 14", "iiwa 14", iiwa, states, batches);
    sd_model_free(iiwa);
    FILE *f = fopen(SOADYN_SOURCE_DIR "/../shared/models/talos/talos_reduced.urdf", "r");
    sd_model *talos = NULL;
    if (f) {
        fclose(f);
        talos = load(SOADYN_SOURCE_DIR "/../shared/models/talos/talos_reduced.urdf", 1);
    }
    if (talos) run("Talos reduced (../shared/models, free base)", "Talos", talos, states, batches);
    else {
        printf("../shared/models/talos absent: the humanoid of bench.c instead\n");
        talos = humanoid();
        if (talos) run("humanoid (free + 31)", "humanoid", talos, states, batches);
    }
    sd_model_free(talos);
    printf("load average %.2f at the end\n", load_average());
    return 0;
}
