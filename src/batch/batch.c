/*
 * src/batch/batch.c — the batch context of soadyn/batch.h: a pool of POSIX threads kept waiting
 * between calls, one sd_data (and one SIMD scratch) per thread, the split of the states among the
 * threads, the choice of SIMD kernel (lanes_dynamics.c at 8 states per step with AVX-512, at 4 with
 * AVX2, or none) and per group of states between it and the single-state calls of dynamics.h.
 *
 * The states are handed out in chunks of whole SIMD groups by an atomic counter, in ascending order,
 * to whichever thread is free (a static split into halves made the whole batch wait for a preempted
 * thread: this machine's two vCPUs are shared). A thread stops at its first failure and no thread
 * starts a chunk at or after the lowest failure seen so far; every chunk before the failing state
 * was handed out before it (the counter only ascends) and is finished by its thread, so the first
 * failing state of the batch is the lowest of the threads' first failures and every state before it
 * is done. A call allocates nothing: the threads, workspaces and messages are made by sd_batch_new().
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <soadyn/batch.h>
#include <soadyn/derivatives.h>

#include "batch_internal.h"
#include "dispatch/cpu_level.h"

typedef enum job_kind { JOB_FD, JOB_ID, JOB_M, JOB_MINV, JOB_FD_DERIV, JOB_ID_DERIV } job_kind;

/* One batched call: the stacked arrays as given (x is tau for FD, qdd for ID; out the result; the
 * derivative calls' nv x nv outputs in dx[], soadyn/derivatives.h's order). */
typedef struct batch_job {
    job_kind kind;
    long n;
    const double *q, *u, *x, *f_ext;
    double *out, *f;
    double *dx[3];
} batch_job;

/* A thread's share: its workspace, its SIMD scratch and its first failure. */
typedef struct batch_worker {
    struct sd_batch *batch;
    int id;
    pthread_t thread;
    sd_data *data;
    double *scratch; /* the sd_lanes_ws block, NULL without SIMD */
    sd_lanes_ws ws;
    double *gen;     /* the generated lane function's gather arrays (sd_batch_use_lanes), NULL without */
    int gen_status[8];
    long err_state; /* -1: none */
    sd_status err_status;
    char message[600];
} batch_worker;

struct sd_batch {
    const sd_model *model;
    int threads;
    const sd_lanes_kernel *widest; /* the widest kernel the processor and the model allow, or NULL */
    const sd_lanes_kernel *kernel; /* the one the mode chooses (the workers' scratch laid out for it), or NULL */
    sd_batch_lanes_fd gen_fd; /* the model's generated lane forward dynamics (sd_batch_use_lanes), or NULL */
    int gen_lanes;
    unsigned gen_params; /* the model's params_generation when it was given: its parameters are folded in */
    int spin;      /* waits spin before sleeping: no more threads than processors online */
    char note[200]; /* why there is no kernel, when widest is NULL */
    unsigned params_generation; /* the model's when the kernels' constants (M6) were laid out */
    batch_worker *workers;
    int started; /* threads running besides the caller's */
    pthread_mutex_t mutex;
    pthread_cond_t go, done;
    int quit;
    batch_job job;
    long chunk; /* states per chunk of the current call, a multiple of the kernel's lanes */
    /* The two counters every thread updates, on a cache line of their own (the pads) so that
     * taking a chunk does not evict the job and the workers' fields from the other core. */
    char pad0[64];
    atomic_long next_chunk; /* the next chunk to hand out */
    atomic_long fail_bound; /* the lowest failing state so far, n if none */
    char pad1[64];
    /* Written under the mutex, read also without it by the threads' spinning waits (spin_while_equal), on
     * a line of their own: the calls so far, and the started threads still in the current one. */
    atomic_uint generation;
    atomic_uint pending;
    char pad2[64];
    long err_state;
    char error[600];
};

/* ---------------------------------------------------------------- the SIMD kernel's scratch */

size_t sd_lanes_ws_doubles(const sd_model *m, int lanes)
{
    const size_t n = (size_t)m->n, nv = (size_t)m->nv;
    return (size_t)lanes * (12 * n + 6 * nv + 36 * n + 3 * 36 * n + 2 * 6 * nv + nv) + 36 * n + 3 * n;
}

void sd_lanes_ws_layout(const sd_model *m, int lanes, double *block, sd_lanes_ws *ws)
{
    const size_t n = (size_t)m->n, nv = (size_t)m->nv, L = (size_t)lanes;
    double *p = block;
    ws->Xup = p; p += L * 12 * n;
    ws->S = p; p += L * 6 * nv;
    ws->V = p; p += L * 6 * n;
    ws->a = p; p += L * 6 * n;
    ws->b = p; p += L * 6 * n;
    ws->z = p; p += L * 6 * n;
    ws->zplus = p; p += L * 6 * n;
    ws->alpha = p; p += L * 6 * n;
    ws->P = p; p += L * 36 * n;
    ws->Pplus = p; p += L * 36 * n;
    ws->Dinv = p; p += L * 36 * n;
    ws->U = p; p += L * 6 * nv;
    ws->G = p; p += L * 6 * nv;
    ws->nu = p; p += L * nv;
    ws->M6 = p; p += 36 * n;
    ws->sgn = p; p += n;
    ws->sel = (int *)p; /* n ints in n doubles */
    p += n;
    ws->plane = (int *)p;
    for (size_t k = 0; k < n; ++k) {
        sd_rigid_inertia_to_sym6(m->rigid + 13 * k, ws->M6 + 36 * k);
        ws->sel[k] = sd_hinge_select(m, (int)k, &ws->sgn[k]);
        ws->plane[k] = sd_plane_axis(m, (int)k, ws->sel[k]);
    }
}

/* The widest kernel this build has and this processor runs (its instructions, and the operating
 * system's saving of their registers, which __builtin_cpu_supports checks too), or NULL; no wider
 * than the level of the single-state calls (soadyn/cpu.h), which SOADYN_CPU may have lowered. */
static const sd_lanes_kernel *cpu_kernel(void)
{
#if defined(SOADYN_BATCH_SIMD) && (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return NULL;
    const sd_cpu_level_id level = sd_cpu_level_id_active();
    if (level == SD_CPU_BASELINE) return NULL;
    if (level != SD_CPU_AVX2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        return &sd_lanes_avx512;
    return &sd_lanes_avx2;
#else
    return NULL;
#endif
}

/* Whether the kernel covers the model; else why not, in note. The kernel is the SIMD copy of the rigid
 * node kind (docs/design.md): a model with flexible bodies, like any model it does not cover, runs the
 * node engine state by state on the thread pool (scalar_state), which is the single-state calls. */
static int model_has_simd(const sd_model *m, char *note, size_t size)
{
    if (m->nflex) {
        snprintf(note, size, "scalar path: the model has flexible bodies (the node engine, state by state)");
        return 0;
    }
    for (int k = 0; k < m->n; ++k) {
        if (m->hinge[k] == SD_HINGE_SPHERICAL && m->stiffness[m->v_index[k]] != 0.0) {
            snprintf(note, size, "scalar path: body '%s' has a spring on a spherical hinge", m->desc[k].name);
            return 0;
        }
        double free_armature = 0.0;
        for (int i = 0; m->hinge[k] == SD_HINGE_FREE && i < 6; ++i) free_armature += m->armature[m->v_index[k] + i];
        if (free_armature > 0.0) {
            snprintf(note, size, "scalar path: body '%s' has an armature on a free hinge (its velocity term)",
                     m->desc[k].name);
            return 0;
        }
        if (m->hinge[k] < 0 || m->hinge[k] >= SD_HINGE_TYPE_COUNT) {
            snprintf(note, size, "scalar path: body '%s' has a hinge type the kernel does not know", m->desc[k].name);
            return 0;
        }
    }
    return 1;
}

/* ---------------------------------------------------------------- one thread's share */

static void fail_state(batch_worker *w, long i, sd_status st)
{
    w->err_state = i;
    w->err_status = st;
    snprintf(w->message, sizeof w->message, "state %ld: %s", i, sd_data_error(w->data));
}

/* The inter-body forces of the last call, body frame, 6 per body. */
static sd_status read_forces(const sd_model *m, sd_data *d, double *f)
{
    for (int k = 0; k < m->n; ++k) {
        const sd_status st = sd_interbody_force(m, d, k, SD_FRAME_BODY, f + 6 * k);
        if (st != SD_OK) return st;
    }
    return SD_OK;
}

/* State i by the single-state calls. */
static sd_status scalar_state(const sd_model *m, sd_data *d, const batch_job *j, long i)
{
    const long nq = m->nq, nv = m->nv, nf = 6L * m->n, nvv = nv * nv;
    const double *q = j->q + i * nq, *u = j->u ? j->u + i * nv : NULL;
    const double *fe = j->f_ext ? j->f_ext + i * nf : NULL;
    double *f = j->f ? j->f + i * nf : NULL;
    sd_status st = SD_OK;
    switch (j->kind) {
    case JOB_FD:
        if (f) {
            const sd_fd_options opt = {.interbody_forces = 1, .prescribed = NULL};
            st = sd_forward_dynamics_ex(m, d, q, u, (double *)(j->x + i * nv), fe, j->out + i * nv, &opt);
        } else
            st = sd_forward_dynamics(m, d, q, u, j->x + i * nv, fe, j->out + i * nv);
        break;
    case JOB_ID:
        st = sd_inverse_dynamics(m, d, q, u, j->x + i * nv, fe, j->out + i * nv);
        break;
    case JOB_M:
        st = sd_mass_matrix(m, d, q, j->out + i * nvv);
        break;
    case JOB_MINV:
        st = sd_mass_matrix_inverse(m, d, q, j->out + i * nvv);
        break;
    case JOB_FD_DERIV:
    case JOB_ID_DERIV: {
        double *out = j->out ? j->out + i * nv : NULL, *dx[3];
        for (int k = 0; k < 3; ++k) dx[k] = j->dx[k] ? j->dx[k] + i * nvv : NULL;
        st = j->kind == JOB_ID_DERIV
                 ? sd_inverse_dynamics_derivatives(m, d, q, u, j->x + i * nv, fe, out, dx[0], dx[1])
                 : sd_forward_dynamics_derivatives(m, d, q, u, j->x + i * nv, fe, out, dx[0], dx[1], dx[2]);
        break;
    }
    }
    if (st == SD_OK && f) st = read_forces(m, d, f);
    return st;
}

/* Whether states i .. i+count-1 have finite inputs (else the scalar path names the bad one). */
static int group_inputs_finite(const sd_model *m, const batch_job *j, long i, int count)
{
    const size_t nq = (size_t)m->nq, nv = (size_t)m->nv, nf = 6 * (size_t)m->n, c = (size_t)count;
    return sd_all_finite(j->q + i * nq, c * nq) && (!j->u || sd_all_finite(j->u + i * nv, c * nv)) &&
           sd_all_finite(j->x + i * nv, c * nv) && (!j->f_ext || sd_all_finite(j->f_ext + i * nf, c * nf));
}

/* The SIMD kernel (FD or ID) on a group. */
static int lanes_fd(const sd_model *m, const sd_lanes_kernel *kernel, const sd_lanes_ws *ws, int count,
                    const batch_job *j, long i)
{
    const long nq = m->nq, nv = m->nv, nf = 6L * m->n;
    const double *u = j->u ? j->u + i * nv : NULL, *fe = j->f_ext ? j->f_ext + i * nf : NULL;
    double *f = j->f ? j->f + i * nf : NULL;
    if (j->kind == JOB_ID)
        return kernel->inverse_dynamics(m, ws, count, j->q + i * nq, u, j->x + i * nv, fe, j->out + i * nv, f);
    return kernel->forward_dynamics(m, ws, count, j->q + i * nq, u, j->x + i * nv, fe, j->out + i * nv, f);
}

/* Lowers fail_bound to state i (other threads may lower it at the same time). */
static void lower_fail_bound(sd_batch *b, long i)
{
    long seen = atomic_load_explicit(&b->fail_bound, memory_order_relaxed);
    while (i < seen && !atomic_compare_exchange_weak_explicit(&b->fail_bound, &seen, i, memory_order_relaxed,
                                                              memory_order_relaxed)) {
    }
}

/* State s by the single-state call (a group's fallback); 0, or -1 after recording its failure in w. */
static int redo_state(sd_batch *b, batch_worker *w, long s)
{
    const sd_status st = scalar_state(b->model, w->data, &b->job, s);
    if (st == SD_OK) return 0;
    fail_state(w, s, st);
    lower_fail_bound(b, s);
    return -1;
}

/* Whether the job runs the generated lane function: the forward dynamics without inter-body forces,
 * while the model's parameters are those the generated code folded in (a setter since then: the
 * library's kernels). */
static int job_generated(const sd_batch *b)
{
    return b->gen_fd && b->gen_params == b->model->params_generation && b->job.kind == JOB_FD && !b->job.f;
}

/* States per group: the generated function's or the kernel's lanes; the scalar path takes its
 * chunks as the AVX2 kernel's. */
static int group_lanes(const sd_batch *b)
{
    if (job_generated(b)) return b->gen_lanes;
    return b->kernel ? b->kernel->lanes : 4;
}

/* The generated lane function on states i .. i+count-1: gathered lane-minor into w->gen (lanes past
 * count repeat the last state), one call, each lane's qdd scattered back; 0, or -1 after recording
 * the first failure in w (a failing lane is redone by the single-state call, which names the error). */
static int generated_group(sd_batch *b, batch_worker *w, long i, int count)
{
    const sd_model *m = b->model;
    const batch_job *j = &b->job;
    const long nq = m->nq, nv = m->nv, nf = 6L * m->n, L = b->gen_lanes;
    double *q = w->gen, *u = q + L * nq, *tau = u + L * nv, *fe = tau + L * nv, *qdd = fe + L * nf;
    for (long l = 0; l < L; ++l) {
        const long s = i + (l < count ? l : count - 1);
        for (long k = 0; k < nq; ++k) q[k * L + l] = j->q[s * nq + k];
        for (long k = 0; k < nv; ++k) tau[k * L + l] = j->x[s * nv + k];
        for (long k = 0; j->u && k < nv; ++k) u[k * L + l] = j->u[s * nv + k];
        for (long k = 0; j->f_ext && k < nf; ++k) fe[k * L + l] = j->f_ext[s * nf + k];
    }
    b->gen_fd(q, j->u ? u : NULL, tau, j->f_ext ? fe : NULL, qdd, w->gen_status);
    for (long l = 0; l < count; ++l) {
        const long s = i + l;
        if (w->gen_status[l] == SD_OK) {
            for (long k = 0; k < nv; ++k) j->out[s * nv + k] = qdd[k * L + l];
        } else if (redo_state(b, w, s) != 0) {
            return -1;
        }
    }
    return 0;
}

/* States lo .. hi-1, SIMD group by group; 0, or -1 after recording the first failure in w. */
static int run_chunk(sd_batch *b, batch_worker *w, int simd, long lo, long hi)
{
    const sd_model *m = b->model;
    const batch_job *j = &b->job;
    const long L = group_lanes(b);
    const int generated = job_generated(b);
    for (long i = lo; i < hi; i += L) {
        const int count = (int)(hi - i < L ? hi - i : L);
        if (generated) {
            if (generated_group(b, w, i, count) != 0) return -1;
            continue;
        }
        if (simd && group_inputs_finite(m, j, i, count) && lanes_fd(m, b->kernel, &w->ws, count, j, i) == 0) continue;
        for (long s = i; s < i + count; ++s)
            if (redo_state(b, w, s) != 0) return -1;
    }
    return 0;
}

/* One thread's part of the call: chunks taken from the shared counter until none is left or the
 * rest lie after a failure. Relaxed atomics suffice: the counter's increments are atomic whatever
 * the order, a stale fail_bound only means a chunk done in vain, and the job and results are
 * published by the mutex of run_job. */
static void run_range(sd_batch *b, batch_worker *w)
{
    const batch_job *j = &b->job;
    const int simd = (j->kind == JOB_FD || j->kind == JOB_ID) && b->kernel;
    w->err_state = -1;
    for (;;) {
        const long lo = atomic_fetch_add_explicit(&b->next_chunk, 1, memory_order_relaxed) * b->chunk;
        if (lo >= j->n || lo >= atomic_load_explicit(&b->fail_bound, memory_order_relaxed)) return;
        if (run_chunk(b, w, simd, lo, lo + b->chunk < j->n ? lo + b->chunk : j->n) != 0) return;
    }
}

/* A thread that waits (a worker for the next call, the caller for the workers) first spins for up
 * to SPIN_NS, then sleeps on its condition variable: waking a sleeping thread takes tens of
 * microseconds on this project's VMs, a tenth of a 4096-state iiwa batch split over two threads,
 * while a spinning one sees the change within a cache-line transfer (bench/results/batch.md has the
 * measured gain). The price: a waiting thread keeps a core busy for at most SPIN_NS after a call.
 * A pool with more threads than processors online never spins (b->spin). */
enum { SPIN_NS = 50000 };

static double monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

/* Spins while *x == value, for at most SPIN_NS, when the pool spins at all (b->spin: with more
 * threads than processors a spinning thread would hold up one that works); the caller then checks
 * again under the mutex. */
static void spin_while_equal(const sd_batch *b, const atomic_uint *x, unsigned value)
{
    if (!b->spin) return;
    const double end = monotonic_ns() + SPIN_NS;
    for (unsigned i = 1; atomic_load_explicit(x, memory_order_relaxed) == value; ++i) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause(); /* ~25 ns here; tells the core a spin loop runs */
#endif
        if (i % 64 == 0 && monotonic_ns() > end) return;
    }
}

static void *worker_main(void *arg)
{
    batch_worker *w = arg;
    sd_batch *b = w->batch;
    unsigned seen = 0;
    for (;;) {
        spin_while_equal(b, &b->generation, seen);
        pthread_mutex_lock(&b->mutex); /* publishes the job (written before the increment) */
        while (atomic_load_explicit(&b->generation, memory_order_relaxed) == seen && !b->quit)
            pthread_cond_wait(&b->go, &b->mutex);
        const int quit = b->quit;
        seen = atomic_load_explicit(&b->generation, memory_order_relaxed);
        pthread_mutex_unlock(&b->mutex);
        if (quit) return NULL;
        run_range(b, w);
        pthread_mutex_lock(&b->mutex); /* publishes this thread's results */
        if (atomic_fetch_sub_explicit(&b->pending, 1, memory_order_relaxed) == 1) pthread_cond_signal(&b->done);
        pthread_mutex_unlock(&b->mutex);
    }
}

/* After a parameter setter (soadyn/params.h): the SIMD kernel's copies of the spatial inertias laid
 * out anew, or the scalar path from now on when the model no longer fits the kernel (a spring set on a
 * spherical hinge). The scratch was sized for the model's layout, which setters never change. */
static void refresh_parameters(sd_batch *b)
{
    if (b->params_generation == b->model->params_generation) return;
    b->params_generation = b->model->params_generation;
    if (!b->widest) return;
    if (!model_has_simd(b->model, b->note, sizeof b->note)) {
        b->widest = b->kernel = NULL;
        return;
    }
    if (b->kernel)
        for (int t = 0; t < b->threads; ++t)
            sd_lanes_ws_layout(b->model, b->kernel->lanes, b->workers[t].scratch, &b->workers[t].ws);
}

/* Run the job on every thread (the caller's is thread 0) and report the first failing state. */
static sd_status run_job(sd_batch *b)
{
    atomic_store_explicit(&b->next_chunk, 0, memory_order_relaxed);
    atomic_store_explicit(&b->fail_bound, b->job.n, memory_order_relaxed);
    if (b->started) {
        pthread_mutex_lock(&b->mutex);
        atomic_store_explicit(&b->pending, (unsigned)b->started, memory_order_relaxed);
        atomic_fetch_add_explicit(&b->generation, 1, memory_order_relaxed);
        pthread_cond_broadcast(&b->go);
        pthread_mutex_unlock(&b->mutex);
    }
    run_range(b, &b->workers[0]);
    if (b->started) {
        /* spins while the count is unchanged or drops without reaching 0, then waits */
        for (unsigned left; (left = atomic_load_explicit(&b->pending, memory_order_relaxed)) > 0;) {
            spin_while_equal(b, &b->pending, left);
            if (atomic_load_explicit(&b->pending, memory_order_relaxed) == left) break;
        }
        pthread_mutex_lock(&b->mutex); /* the workers' results, published by their unlocks */
        while (atomic_load_explicit(&b->pending, memory_order_relaxed) > 0) pthread_cond_wait(&b->done, &b->mutex);
        pthread_mutex_unlock(&b->mutex);
    }
    const batch_worker *first = NULL; /* the lowest of the threads' first failures */
    for (int t = 0; t < b->threads; ++t)
        if (b->workers[t].err_state >= 0 && (!first || b->workers[t].err_state < first->err_state))
            first = &b->workers[t];
    if (!first) {
        b->err_state = -1;
        b->error[0] = '\0';
        return SD_OK;
    }
    b->err_state = first->err_state;
    memcpy(b->error, first->message, sizeof b->error);
    return first->err_status;
}

/* States per chunk: whole SIMD groups, about 8 chunks per thread so that a thread slowed by the
 * machine leaves its share to the others, at most 8 groups (32 states at 4 lanes, 64 at 8: about
 * 20 us of work for the iiwa on the SIMD path, 280 us for Talos on the scalar one at 4) so that the
 * wait at the end is short, and at least one group. One atomic increment per chunk costs nothing
 * against that. */
static long chunk_states(long n, int threads, long L)
{
    const long groups = (n + L - 1) / L, per = groups / (8L * threads);
    return L * (per < 1 ? 1 : per > 8 ? 8 : per);
}

static sd_status fail_call(sd_batch *b, const char *fn, const char *what)
{
    b->err_state = -1;
    snprintf(b->error, sizeof b->error, "%s: %s", fn, what);
    return SD_E_ARGUMENT;
}

/* Checks of every call, then the job. */
static sd_status start_job(sd_batch *b, const char *fn, batch_job *job)
{
    if (!b) return SD_E_ARGUMENT;
    if (job->n < 0) return fail_call(b, fn, "negative number of states");
    if (job->n == 0) {
        b->err_state = -1;
        b->error[0] = '\0';
        return SD_OK;
    }
    const int deriv = job->kind == JOB_FD_DERIV || job->kind == JOB_ID_DERIV; /* outputs optional */
    if (!job->q || (!deriv && !job->out) || ((job->kind == JOB_FD || job->kind == JOB_ID || deriv) && !job->x))
        return fail_call(b, fn, job->kind == JOB_FD         ? "NULL q, tau or qdd"
                                : job->kind == JOB_ID       ? "NULL q, qdd or tau"
                                : job->kind == JOB_FD_DERIV ? "NULL q or tau"
                                : job->kind == JOB_ID_DERIV ? "NULL q or qdd"
                                                            : "NULL q or output");
    b->job = *job;
    refresh_parameters(b);
    b->chunk = chunk_states(job->n, b->threads, group_lanes(b));
    return run_job(b);
}

/* ---------------------------------------------------------------- the API */

static void stop_threads(sd_batch *b)
{
    if (!b->started) return;
    pthread_mutex_lock(&b->mutex);
    b->quit = 1;
    atomic_fetch_add_explicit(&b->generation, 1, memory_order_relaxed); /* ends the workers' spins now */
    pthread_cond_broadcast(&b->go);
    pthread_mutex_unlock(&b->mutex);
    for (int t = 1; t <= b->started; ++t) pthread_join(b->workers[t].thread, NULL);
    b->started = 0;
}

void sd_batch_free(sd_batch *b)
{
    if (!b) return;
    stop_threads(b);
    if (b->workers)
        for (int t = 0; t < b->threads; ++t) {
            sd_data_free(b->workers[t].data);
            free(b->workers[t].scratch);
            free(b->workers[t].gen);
        }
    free(b->workers);
    pthread_cond_destroy(&b->go);
    pthread_cond_destroy(&b->done);
    pthread_mutex_destroy(&b->mutex);
    free(b);
}

sd_batch *sd_batch_new(const sd_model *m, int threads, sd_error *err)
{
    if (!m || threads < 1 || threads > 256) {
        sd_error_set(err, SD_E_ARGUMENT, "sd_batch_new: %s", !m ? "NULL model" : "threads must be 1 .. 256");
        return NULL;
    }
    sd_batch *b = calloc(1, sizeof *b);
    if (!b) {
        sd_error_set(err, SD_E_MEMORY, "sd_batch_new: out of memory");
        return NULL;
    }
    b->model = m;
    b->threads = threads;
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    b->spin = threads > 1 && (online < 1 || threads <= online);
    b->err_state = -1;
    atomic_init(&b->next_chunk, 0);
    atomic_init(&b->fail_bound, 0);
    atomic_init(&b->generation, 0u);
    atomic_init(&b->pending, 0u);
    pthread_mutex_init(&b->mutex, NULL);
    pthread_cond_init(&b->go, NULL);
    pthread_cond_init(&b->done, NULL);
    b->params_generation = m->params_generation;
    const sd_lanes_kernel *cpu = cpu_kernel();
    if (!cpu)
        snprintf(b->note, sizeof b->note, "scalar path: this build or processor has no AVX2 + FMA kernel%s",
                 sd_cpu_level_id_active() == SD_CPU_BASELINE ? " (or SOADYN_CPU=baseline)" : "");
    else if (model_has_simd(m, b->note, sizeof b->note))
        b->widest = b->kernel = cpu;
    b->workers = calloc((size_t)threads, sizeof *b->workers);
    if (!b->workers) goto out_of_memory;
    const size_t doubles = b->widest ? sd_lanes_ws_doubles(m, b->widest->lanes) : 0,
                 bytes = (doubles * sizeof(double) + 63) / 64 * 64;
    for (int t = 0; t < threads; ++t) {
        batch_worker *w = &b->workers[t];
        w->batch = b;
        w->id = t;
        w->err_state = -1;
        if (!(w->data = sd_data_new(m))) goto out_of_memory;
        if (b->widest) {
            if (!(w->scratch = aligned_alloc(64, bytes))) goto out_of_memory;
            sd_lanes_ws_layout(m, b->widest->lanes, w->scratch, &w->ws);
        }
    }
    for (int t = 1; t < threads; ++t) {
        const int rc = pthread_create(&b->workers[t].thread, NULL, worker_main, &b->workers[t]);
        if (rc != 0) {
            sd_error_set(err, SD_E_MEMORY, "sd_batch_new: thread %d of %d could not be started (%s)", t + 1, threads,
                         strerror(rc));
            sd_batch_free(b);
            return NULL;
        }
        b->started = t;
    }
    return b;
out_of_memory:
    sd_error_set(err, SD_E_MEMORY, "sd_batch_new: out of memory for %d workspaces", threads);
    sd_batch_free(b);
    return NULL;
}

sd_status sd_batch_set_simd(sd_batch *b, sd_batch_simd mode)
{
    if (!b) return SD_E_ARGUMENT;
    if (mode != SD_BATCH_SIMD_AUTO && mode != SD_BATCH_SIMD_OFF && mode != SD_BATCH_SIMD_AVX2)
        return fail_call(b, "sd_batch_set_simd", "unknown mode");
    const sd_lanes_kernel *k = NULL;
#ifdef SOADYN_BATCH_SIMD
    if (b->widest && mode != SD_BATCH_SIMD_OFF) k = mode == SD_BATCH_SIMD_AVX2 ? &sd_lanes_avx2 : b->widest;
#endif
    if (k && k != b->kernel) /* the scratch holds the widest kernel's layout, so any narrower one fits */
        for (int t = 0; t < b->threads; ++t)
            sd_lanes_ws_layout(b->model, k->lanes, b->workers[t].scratch, &b->workers[t].ws);
    b->kernel = k;
    return SD_OK;
}

sd_status sd_batch_use_lanes(sd_batch *b, int lanes, sd_batch_lanes_fd fd)
{
    if (!b) return SD_E_ARGUMENT;
    if (fd && lanes != 4 && lanes != 8) return fail_call(b, "sd_batch_use_lanes", "lanes must be 4 or 8");
    const sd_model *m = b->model;
    const size_t doubles = (size_t)(fd ? lanes : 0) * ((size_t)m->nq + 3 * (size_t)m->nv + 6 * (size_t)m->n);
    double *fresh[256] = {NULL}; /* every thread's arrays, or none: a failure leaves the old setting */
    for (int t = 0; doubles && t < b->threads; ++t)
        if (!(fresh[t] = malloc(doubles * sizeof(double)))) {
            for (int s = 0; s < t; ++s) free(fresh[s]);
            b->err_state = -1;
            snprintf(b->error, sizeof b->error, "sd_batch_use_lanes: out of memory");
            return SD_E_MEMORY;
        }
    for (int t = 0; t < b->threads; ++t) {
        free(b->workers[t].gen);
        b->workers[t].gen = fresh[t];
    }
    b->gen_fd = fd;
    b->gen_lanes = fd ? lanes : 0;
    b->gen_params = m->params_generation;
    return SD_OK;
}

int sd_batch_generated_lanes(const sd_batch *b)
{
    return b && b->gen_fd && b->gen_params == b->model->params_generation ? b->gen_lanes : 0;
}

int sd_batch_threads(const sd_batch *b) { return b ? b->threads : 0; }

int sd_batch_simd_lanes(const sd_batch *b) { return b && b->kernel ? b->kernel->lanes : 0; }

const char *sd_batch_simd_note(const sd_batch *b)
{
    if (!b) return "";
    if (!b->widest) return b->note;
    if (!b->kernel) return "scalar path: SIMD switched off (sd_batch_set_simd)";
    return b->kernel->lanes == 8 ? "SIMD: 8 states per AVX-512 step" : "SIMD: 4 states per AVX2 step";
}

const char *sd_batch_error(const sd_batch *b) { return b ? b->error : ""; }
long sd_batch_error_state(const sd_batch *b) { return b ? b->err_state : -1; }

sd_status sd_forward_dynamics_batch(sd_batch *b, long n, const double *q, const double *u, const double *tau,
                                    const double *f_ext, double *qdd, double *f)
{
    batch_job j = {JOB_FD, n, q, u, tau, f_ext, qdd, f, {NULL, NULL, NULL}};
    return start_job(b, "sd_forward_dynamics_batch", &j);
}

sd_status sd_inverse_dynamics_batch(sd_batch *b, long n, const double *q, const double *u, const double *qdd,
                                    const double *f_ext, double *tau, double *f)
{
    batch_job j = {JOB_ID, n, q, u, qdd, f_ext, tau, f, {NULL, NULL, NULL}};
    return start_job(b, "sd_inverse_dynamics_batch", &j);
}

sd_status sd_mass_matrix_batch(sd_batch *b, long n, const double *q, double *M)
{
    batch_job j = {JOB_M, n, q, NULL, NULL, NULL, M, NULL, {NULL, NULL, NULL}};
    return start_job(b, "sd_mass_matrix_batch", &j);
}

sd_status sd_mass_matrix_inverse_batch(sd_batch *b, long n, const double *q, double *Minv)
{
    batch_job j = {JOB_MINV, n, q, NULL, NULL, NULL, Minv, NULL, {NULL, NULL, NULL}};
    return start_job(b, "sd_mass_matrix_inverse_batch", &j);
}

sd_status sd_batch_inverse_dynamics_derivatives(sd_batch *b, long n, const double *q, const double *u,
                                                const double *qdd, const double *f_ext, double *tau,
                                                double *dtau_dq, double *dtau_du)
{
    batch_job j = {JOB_ID_DERIV, n, q, u, qdd, f_ext, tau, NULL, {dtau_dq, dtau_du, NULL}};
    return start_job(b, "sd_batch_inverse_dynamics_derivatives", &j);
}

sd_status sd_batch_forward_dynamics_derivatives(sd_batch *b, long n, const double *q, const double *u,
                                                const double *tau, const double *f_ext, double *qdd,
                                                double *dqdd_dq, double *dqdd_du, double *dqdd_dtau)
{
    batch_job j = {JOB_FD_DERIV, n, q, u, tau, f_ext, qdd, NULL, {dqdd_dq, dqdd_du, dqdd_dtau}};
    return start_job(b, "sd_batch_forward_dynamics_derivatives", &j);
}
