/*
 * bench/bench_batch.c — states per second of the batched forward dynamics (soadyn/batch.h,
 * issue 12): the iiwa 14 (models/iiwa14.urdf) and a Talos-like humanoid (../shared/models/talos/
 * talos_reduced.urdf on a free base when present, else the free + 31 humanoid that bench.c builds),
 * on 1 thread scalar, 1 thread SIMD, 2 threads scalar and 2 threads SIMD. The four settings are
 * timed in turns, batch after batch (so that a change of the machine's load hits all alike), and
 * each reports the median of its batches: wall-clock states per second, and the CPU time the
 * process spent per state (all threads), which a machine shared with other jobs inflates far less
 * than the wall clock: on a busy machine, CPU(1 thread) / CPU(2 threads) is the share of the second
 * thread's work that is useful, i.e. the 2-thread speed-up an idle machine would show, halved.
 * Usage: soadyn_bench_batch [STATES [BATCHES]] (defaults 4096 states, 31 batches).
 */
#define _POSIX_C_SOURCE 200809L
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

static void run(const char *label, const sd_model *m, long states, int batches)
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
    enum { SETTINGS = 4 };
    static const char *names[SETTINGS] = {"1 thread scalar", "1 thread SIMD", "2 threads scalar", "2 threads SIMD"};
    sd_batch *b[SETTINGS];
    for (int s = 0; s < SETTINGS; ++s) {
        b[s] = sd_batch_new(m, s < 2 ? 1 : 2, NULL);
        sd_batch_set_simd(b[s], s % 2 ? SD_BATCH_SIMD_AUTO : SD_BATCH_SIMD_OFF);
    }
    double *t = malloc((size_t)(SETTINGS * batches) * sizeof(double)),
           *c = malloc((size_t)(SETTINGS * batches) * sizeof(double));
    for (int r = -2; r < batches; ++r) /* two warm-up rounds */
        for (int s = 0; s < SETTINGS; ++s) {
            const double t0 = now_ns(), c0 = cpu_ns();
            if (sd_forward_dynamics_batch(b[s], states, q, u, tau, NULL, qdd, NULL) != SD_OK) {
                fprintf(stderr, "bench_batch: %s\n", sd_batch_error(b[s]));
                exit(1);
            }
            if (r >= 0) {
                t[s * batches + r] = now_ns() - t0;
                c[s * batches + r] = cpu_ns() - c0;
            }
        }
    printf("%s (nv %ld), FD, %ld states per batch, median of %d batches; %s\n", label, nv, states, batches,
           sd_batch_simd_note(b[1]));
    double rate[SETTINGS], cpu[SETTINGS];
    for (int s = 0; s < SETTINGS; ++s) {
        qsort(t + s * batches, (size_t)batches, sizeof(double), compare_doubles);
        qsort(c + s * batches, (size_t)batches, sizeof(double), compare_doubles);
        const double med = t[s * batches + batches / 2], lo = t[s * batches], hi = t[s * batches + batches - 1];
        rate[s] = states / (med * 1e-9);
        cpu[s] = c[s * batches + batches / 2] / states;
        printf("  %-17s %10.0f states/s  %7.1f ns/state wall (batch min %.2f ms, max %.2f ms)  %7.1f ns/state CPU\n",
               names[s], rate[s], med / states, lo * 1e-6, hi * 1e-6, cpu[s]);
    }
    printf("  wall: SIMD / scalar on 1 thread %.2fx; 2 threads / 1 thread: scalar %.2fx, SIMD %.2fx\n",
           rate[1] / rate[0], rate[2] / rate[0], rate[3] / rate[1]);
    printf("  CPU:  SIMD / scalar on 1 thread %.2fx; CPU(1 thread) / CPU(2 threads): scalar %.3f, SIMD %.3f\n",
           cpu[0] / cpu[1], cpu[0] / cpu[2], cpu[1] / cpu[3]);
    for (int s = 0; s < SETTINGS; ++s) sd_batch_free(b[s]);
    free(t), free(c), free(q), free(u), free(tau), free(qdd);
}

int main(int argc, char **argv)
{
    const long states = argc > 1 ? atol(argv[1]) : 4096;
    const int batches = argc > 2 ? atoi(argv[2]) : 31;
    if (states < 1 || batches < 1) {
        fprintf(stderr, "usage: soadyn_bench_batch [STATES [BATCHES]]\n");
        return 1;
    }
    sd_model *iiwa = load(SOADYN_SOURCE_DIR "/models/iiwa14.urdf", 0);
    if (!iiwa) return 1;
    run("iiwa 14", iiwa, states, batches);
    sd_model_free(iiwa);
    FILE *f = fopen(SOADYN_SOURCE_DIR "/../shared/models/talos/talos_reduced.urdf", "r");
    sd_model *talos = NULL;
    if (f) {
        fclose(f);
        talos = load(SOADYN_SOURCE_DIR "/../shared/models/talos/talos_reduced.urdf", 1);
    }
    if (talos) run("Talos reduced (../shared/models, free base)", talos, states, batches);
    else {
        printf("../shared/models/talos absent: the humanoid of bench.c instead\n");
        talos = humanoid();
        if (talos) run("humanoid (free + 31)", talos, states, batches);
    }
    sd_model_free(talos);
    return 0;
}
