/*
 * tests/codegen/test_codegen.c — the generated code (soadyn/codegen.h) against the library.
 *
 * For each model: sd_codegen_write, the system C compiler (CMake's, passed in) builds a shared
 * object (at -O0: it compiles in a tenth of -O1's time, and ISO C99 without FMA contraction gives
 * the same operations at every level), dlopen, and at 1000 random states (q on the manifold, u,
 * qdd, tau, f_ext) the generated inverse dynamics, M, forward dynamics, M^-1 and inter-body forces
 * must equal the library's to 1e-13 relative (the largest difference over the largest entry of the
 * library's result: the two compute the same recursions in another order, so they differ by
 * round-off). A solve (forward dynamics, M^-1) amplifies round-off by the condition number of M:
 * there the tolerance is max(1e-13, 16 eps cond_1(M)), cond_1(M) from the library's M and M^-1 at
 * that state (the iiwa's light wrist makes cond(M) ~1e4, and the library's own two M^-1 paths,
 * Cholesky of M up to 8 speeds and the recursion beyond, differ there by as much). Also: the contracts
 * (NULL u and f_ext as zero, a non-finite input refused with SD_E_ARGUMENT and the output untouched),
 * and the generator's refusals.
 *
 *   test_codegen CC WORKDIR random          random trees of every hinge type, with joint-level terms
 *   test_codegen CC WORKDIR shared MODELS   the shared robot models (77 when MODELS is absent)
 *   test_codegen CC WORKDIR cli SOADYN MODELS  `soadyn codegen`: its files, exit statuses, messages
 *                                           (MODELS: the repository's models/)
 *   test_codegen CC WORKDIR flexible MODELS random trees mixing rigid hinges of every type and
 *                                           flexible bodies of 1-5 modes (children on node frames,
 *                                           full and linearised mass models), and the repository's
 *                                           flexible models (MODELS: models/)
 *   test_codegen CC WORKDIR lanes [MODELS]  the lane form (--lanes 4,8) against the single-state
 *                                           functions, bit for bit, and sd_forward_dynamics_batch
 *                                           through it (MODELS: the shared models, 77 when absent;
 *                                           without: random trees of every hinge type)
 *
 * On a model with flexible bodies the modal coordinates are drawn at two scales, so that the node
 * frames' rotations take both forms of flex_body.c's SO(3) coefficients (series below |theta|^2 =
 * 1e-2, closed forms above).
 *
 * The lane form is checked bit for bit: at 1000 random states per model, in groups of 4 and of 8
 * (lane-minor arrays), each lane's status and output equal the single-state function's (memcmp),
 * a failing lane's outputs are untouched; states with a NaN or an inf in one input are mixed in
 * (every seventh state), and NULL u and f_ext. The file is compiled with -std=c99 -O2 -march=native
 * (ISO C: no contraction into FMAs; in GNU C mode, -std=gnu99, GCC 12 fuses some of the single-state
 * code's multiply-adds and not the lanes', and this test fails), at -O0 for models of more than 12
 * bodies (compile time; only FD, the batch API's function, there). Once more with
 * -DSD_GENERATED_NO_VECTORS (the per-lane loop other compilers get), on the models of at most 12 bodies.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <soadyn/soadyn.h>

#include "flex/random_flex.h"
#include "random_tree.h"

#define TOL 1e-13
#define STATES 1000

typedef int (*id_fn)(const double *, const double *, const double *, const double *, double *);
typedef int (*m_fn)(const double *, double *);

static const char *cc, *workdir;
static int failures;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* max |a - b| / max |b| (b the library's). */
static double rel_diff(const double *a, const double *b, int n)
{
    double d = 0.0, s = 0.0;
    for (int i = 0; i < n; ++i) {
        d = fmax(d, fabs(a[i] - b[i]));
        s = fmax(s, fabs(b[i]));
    }
    return s > 0 ? d / s : d;
}

static void check(int ok, const char *model, const char *what)
{
    if (ok) return;
    fprintf(stderr, "FAIL %s: %s\n", model, what);
    ++failures;
}

/* Generate (with options, may be NULL), compile with cflags and load the model's code; NULL on
 * failure (counted). */
static void *build_with(const sd_model *m, const char *name, const sd_codegen_options *o, const char *cflags,
                        double *gen_s, double *cc_s)
{
    sd_error err;
    double t0 = now();
    if (sd_codegen_write(m, o, workdir, name, &err) != SD_OK) {
        fprintf(stderr, "FAIL %s: sd_codegen_write: %s\n", name, err.message);
        ++failures;
        return NULL;
    }
    *gen_s = now() - t0;
    char cmd[8192], so[4096];
    snprintf(so, sizeof so, "%s/%s.so", workdir, name);
    snprintf(cmd, sizeof cmd, "'%s' %s -shared -fPIC -o '%s' '%s/%s.c' -lm", cc, cflags, so, workdir, name);
    t0 = now();
    if (system(cmd) != 0) {
        fprintf(stderr, "FAIL %s: the compiler failed: %s\n", name, cmd);
        ++failures;
        return NULL;
    }
    *cc_s = now() - t0;
    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "FAIL %s: dlopen: %s\n", name, dlerror());
        ++failures;
    }
    return h;
}

static void *build(const sd_model *m, const char *name, double *gen_s, double *cc_s)
{
    return build_with(m, name, NULL, "-std=c99 -O0", gen_s, cc_s);
}

/* dlsym's object pointer as a function pointer (ISO C has no cast between them; POSIX makes them alike). */
static id_fn as_id(void *p)
{
    id_fn f = NULL;
    if (p) memcpy(&f, &p, sizeof f);
    return f;
}
static m_fn as_m(void *p)
{
    m_fn f = NULL;
    if (p) memcpy(&f, &p, sizeof f);
    return f;
}

static void *sym(void *h, const char *name, const char *fn)
{
    char s[256];
    snprintf(s, sizeof s, "%s_%s", name, fn);
    void *p = dlsym(h, s);
    if (!p) {
        fprintf(stderr, "FAIL %s: no symbol %s\n", name, s);
        ++failures;
    }
    return p;
}

/* cond_1(M) = |M|_1 |M^-1|_1 from the library at q (a, b: nv x nv scratch). */
static double condition_1(const sd_model *m, sd_data *d, const double *q, double *a, double *b, int nv)
{
    if (sd_mass_matrix(m, d, q, a) != SD_OK || sd_mass_matrix_inverse(m, d, q, b) != SD_OK) return INFINITY;
    double na = 0.0, nb = 0.0;
    for (int j = 0; j < nv; ++j) {
        double sa = 0.0, sb = 0.0;
        for (int i = 0; i < nv; ++i) {
            sa += fabs(a[i * nv + j]);
            sb += fabs(b[i * nv + j]);
        }
        na = fmax(na, sa);
        nb = fmax(nb, sb);
    }
    return na * nb;
}

/* The comparison at STATES random states; returns the largest relative difference of each algorithm. */
static void compare(sd_model *m, const char *name, void *h, uint64_t *rng)
{
    id_fn gid = as_id(sym(h, name, "inverse_dynamics")), gfd = as_id(sym(h, name, "forward_dynamics"));
    id_fn gforces = as_id(sym(h, name, "interbody_forces"));
    m_fn gm = as_m(sym(h, name, "mass_matrix")), gminv = as_m(sym(h, name, "mass_matrix_inverse"));
    if (!gid || !gfd || !gforces || !gm || !gminv) return;
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
    sd_data *d = sd_data_new(m);
    double *q = malloc(sizeof(double) * (size_t)nq), *u = malloc(sizeof(double) * (size_t)nv);
    double *w = malloc(sizeof(double) * (size_t)nv), *fext = malloc(sizeof(double) * 6 * (size_t)n);
    double *a = malloc(sizeof(double) * (size_t)(nv * nv + 6 * n + 1));
    double *b = malloc(sizeof(double) * (size_t)(nv * nv + 6 * n + 1));
    double worst[5] = {0, 0, 0, 0, 0}, raw[5] = {0, 0, 0, 0, 0}, worst_cond = 1.0;
    for (int s = 0; s < STATES; ++s) {
        random_state(m, rng, q, u, w);
        for (int k = 0; k < n; ++k) /* eta small (every third state) or large (see the file comment) */
            random_vector(rng, q + sd_model_mode_q_index(m, k), sd_model_body_nmodes(m, k), s % 3 ? 1.0 : 0.02);
        random_vector(rng, fext, 6 * n, 2.0);
        const double *fe = s % 2 ? fext : NULL; /* NULL f_ext every other state: the contract's zero */
        const double *uu = s % 5 == 3 ? NULL : u;
        /* inverse dynamics */
        int st = gid(q, uu, w, fe, a);
        check(st == 0 && sd_inverse_dynamics(m, d, q, uu, w, fe, b) == SD_OK, name, "inverse dynamics status");
        worst[0] = fmax(worst[0], rel_diff(a, b, nv));
        /* inter-body forces: the library's from the same call, body frame */
        check(gforces(q, uu, w, fe, a) == 0, name, "inter-body forces status");
        for (int k = 0; k < n; ++k) sd_interbody_force(m, d, k, SD_FRAME_BODY, b + 6 * k);
        worst[4] = fmax(worst[4], rel_diff(a, b, 6 * n));
        /* M */
        check(gm(q, a) == 0 && sd_mass_matrix(m, d, q, b) == SD_OK, name, "mass matrix status");
        worst[1] = fmax(worst[1], rel_diff(a, b, nv * nv));
        const double cond = condition_1(m, d, q, a, b, nv);
        const double scale = fmax(1.0, 16.0 * DBL_EPSILON * cond / TOL); /* the solves' tolerance over TOL */
        worst_cond = fmax(worst_cond, cond);
        /* forward dynamics (w as tau) */
        st = gfd(q, uu, w, fe, a);
        check(st == 0 && sd_forward_dynamics(m, d, q, uu, w, fe, b) == SD_OK, name, "forward dynamics status");
        raw[2] = fmax(raw[2], rel_diff(a, b, nv));
        worst[2] = fmax(worst[2], rel_diff(a, b, nv) / scale);
        /* M^-1 */
        check(gminv(q, a) == 0 && sd_mass_matrix_inverse(m, d, q, b) == SD_OK, name, "M^-1 status");
        raw[3] = fmax(raw[3], rel_diff(a, b, nv * nv));
        worst[3] = fmax(worst[3], rel_diff(a, b, nv * nv) / scale);
    }
    static const char *what[5] = {"ID", "M", "FD", "M^-1", "forces"};
    raw[0] = worst[0], raw[1] = worst[1], raw[4] = worst[4];
    printf("%-28s nv %3d, cond_1(M) <= %.1e:", name, nv, worst_cond);
    for (int i = 0; i < 5; ++i) {
        printf(" %s %.1e", what[i], raw[i]);
        if (!(worst[i] <= TOL)) {
            fprintf(stderr, "FAIL %s: %s differs from the library by %.3g relative, %.3g times its tolerance\n", name,
                    what[i], raw[i], worst[i] / TOL);
            ++failures;
        }
    }
    printf("\n");
    /* contracts: a non-finite input is refused, the output untouched */
    if (nv > 0) {
        for (int i = 0; i < nv; ++i) a[i] = 42.0;
        q[0] = NAN;
        check(gid(q, u, w, NULL, a) == SD_E_ARGUMENT && a[0] == 42.0, name, "NaN q: SD_E_ARGUMENT, tau untouched");
        q[0] = 0.0;
        u[nv - 1] = INFINITY;
        check(gfd(q, u, w, NULL, a) == SD_E_ARGUMENT && a[nv - 1] == 42.0, name,
              "inf u: SD_E_ARGUMENT, qdd untouched");
        check(gm(NULL, a) == SD_E_ARGUMENT, name, "NULL q: SD_E_ARGUMENT");
    }
    free(q), free(u), free(w), free(fext), free(a), free(b);
    sd_data_free(d);
}

static void run_model(sd_model *m, const char *name, uint64_t *rng)
{
    double gen_s = 0, cc_s = 0;
    void *h = build(m, name, &gen_s, &cc_s);
    if (!h) return;
    const double t0 = now();
    compare(m, name, h, rng);
    printf("%-28s generated in %.3f s, compiled (-O0) in %.2f s, compared in %.2f s\n", name, gen_s, cc_s, now() - t0);
    dlclose(h);
}

/* Armature, damping and springs on every speed that takes them, so the joint-level terms are checked. */
static void add_joint_terms(sd_model *m, uint64_t *rng)
{
    sd_error err;
    for (int k = 0; k < sd_model_nbodies(m); ++k) {
        const sd_body_desc *bd = sd_model_body_desc(m, k);
        const int nk = sd_hinge_type_nv(bd->hinge), v0 = sd_model_v_index(m, k);
        for (int i = 0; i < nk; ++i) {
            double x[4];
            random_vector(rng, x, 4, 1.0);
            sd_model_set_armature(m, v0 + i, 0.1 * fabs(x[0]), &err);
            sd_model_set_damping(m, v0 + i, fabs(x[1]), &err);
            /* springs are refused on free, universal and planar hinges: the error is expected there */
            sd_model_set_stiffness(m, v0 + i, 2.0 * fabs(x[2]), &err);
            if (bd->hinge != SD_HINGE_SPHERICAL) sd_model_set_spring_ref(m, v0 + i, x[3], &err);
        }
    }
}

static void random_models(void)
{
    uint64_t rng = 0x5eedc0de;
    static const struct {
        int n, flags, joint_terms;
        const char *name;
    } cases[] = {
        {9, 0, 0, "tree_all_hinges"},
        {8, RT_FREE_ROOT, 1, "tree_free_root_joint_terms"},
        {8, RT_FREE_ROOT | RT_AXIS_ALIGNED | RT_UNROTATED, 1, "tree_axis_aligned_unrotated"},
        {8, RT_AXIS_ALIGNED, 0, "tree_axis_aligned"},
        {7, RT_CHAIN | RT_MASSLESS, 1, "chain_massless_joint_terms"},
        {9, RT_MASSLESS, 0, "tree_massless"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
        for (int rep = 0; rep < 1; ++rep) {
            sd_model *m = random_tree(&rng, cases[c].n, cases[c].flags);
            if (cases[c].joint_terms) add_joint_terms(m, &rng);
            char name[64];
            snprintf(name, sizeof name, "%s_%d", cases[c].name, rep);
            run_model(m, name, &rng);
            sd_model_free(m);
        }
}

/* ---------------------------------------------------------------- the lane form */

typedef int (*lane4_fn)(const double *, const double *, const double *, const double *, double *, int *);
typedef int (*lane1_fn)(const double *, double *, int *);

/* Stacked per state (state l's n entries at [l * n]) to lane-minor (entry i of lane l at [i * L + l]). */
static void to_lanes(const double *x, int n, int L, double *out)
{
    for (int l = 0; l < L; ++l)
        for (int i = 0; i < n; ++i) out[i * L + l] = x[l * n + i];
}

static const double SENTINEL = 12345.678;

/* One function's lane form (width L) against its single-state form at STATES states, groups of L;
 * returns the number of lanes that failed (their status equal to the single call's). */
static int compare_lane_function(sd_model *m, const char *name, void *h, const char *fn, int L, uint64_t *rng)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
    const int full = strcmp(fn, "mass_matrix") && strcmp(fn, "mass_matrix_inverse"); /* (q, u, x, f_ext, out) */
    const int nout = !strcmp(fn, "interbody_forces") ? 6 * n : full ? nv : nv * nv;
    char lane_name[128];
    snprintf(lane_name, sizeof lane_name, "%s_x%d", fn, L);
    void *ps = sym(h, name, fn), *pl = sym(h, name, lane_name);
    if (!ps || !pl) return 0;
    id_fn single4 = NULL;
    m_fn single1 = NULL;
    lane4_fn lane4 = NULL;
    lane1_fn lane1 = NULL;
    if (full) memcpy(&single4, &ps, sizeof ps), memcpy(&lane4, &pl, sizeof pl);
    else memcpy(&single1, &ps, sizeof ps), memcpy(&lane1, &pl, sizeof pl);
    const size_t nf = 6 * (size_t)n, sz = (size_t)(nq + 2 * nv) + nf + (size_t)nout + 1;
    double *q = malloc(sizeof(double) * L * sz), *ql = malloc(sizeof(double) * L * sz);
    double *one = malloc(sizeof(double) * ((size_t)nout + 1));
    double *u = q + L * nq, *x = u + L * nv, *fe = x + L * nv;
    double *ul = ql + L * nq, *xl = ul + L * nv, *fel = xl + L * nv, *outl = fel + L * nf;
    int failed = 0, status[8];
    for (int g = 0; g < STATES / L; ++g) {
        for (int l = 0; l < L; ++l) {
            random_state(m, rng, q + l * nq, u + l * nv, x + l * nv);
            random_vector(rng, fe + l * (int)nf, (int)nf, 2.0);
            const int s = g * L + l;
            if (s % 7 == 3) { /* a non-finite entry in one of the inputs the function reads */
                const double bad = s % 2 ? NAN : INFINITY;
                const int which = full ? (s / 7) % 4 : 0;
                if (which == 0 && nq) q[l * nq + s % nq] = bad;
                if (which == 1 && nv) u[l * nv + s % nv] = bad;
                if (which == 2 && nv) x[l * nv + s % nv] = bad;
                if (which == 3 && n) fe[l * (int)nf + s % (int)nf] = bad;
            }
        }
        const int null_u = g % 5 == 2, null_f = g % 3 == 1;
        to_lanes(q, nq, L, ql), to_lanes(u, nv, L, ul), to_lanes(x, nv, L, xl), to_lanes(fe, (int)nf, L, fel);
        for (int i = 0; i < L * nout; ++i) outl[i] = SENTINEL;
        const int ret = full ? lane4(ql, null_u ? NULL : ul, xl, null_f ? NULL : fel, outl, status) : lane1(ql, outl, status);
        int first = 0;
        for (int l = 0; l < L; ++l) {
            for (int i = 0; i < nout; ++i) one[i] = SENTINEL;
            const int st = full ? single4(q + l * nq, null_u ? NULL : u + l * nv, x + l * nv,
                                          null_f ? NULL : fe + l * (int)nf, one)
                                : single1(q + l * nq, one);
            if (status[l] != st) {
                fprintf(stderr, "FAIL %s %s: lane %d of group %d: status %d, the single call's %d\n", name, lane_name,
                        l, g, status[l], st);
                ++failures;
            }
            if (st != 0) ++failed;
            if (st != 0 && !first) first = st;
            for (int i = 0; i < nout; ++i) {
                const double got = outl[i * L + l];
                if (memcmp(&got, &one[i], sizeof got) != 0) {
                    fprintf(stderr, "FAIL %s %s: lane %d of group %d, entry %d: %.17g, the single call's %.17g%s\n",
                            name, lane_name, l, g, i, got, one[i], st ? " (a failing lane: left untouched)" : "");
                    ++failures;
                    break;
                }
            }
        }
        check(ret == first, name, "the lane call returns the first failing lane's status");
    }
    free(q), free(ql), free(one);
    return failed;
}

/* sd_forward_dynamics_batch through the generated lane function (sd_batch_use_lanes): each state
 * bit for bit the generated single-state function's, and a NaN state reported as the library
 * reports it, the states before it done. */
static void batch_through_lanes(sd_model *m, const char *name, void *h, int L, uint64_t *rng)
{
    char lane_name[64];
    snprintf(lane_name, sizeof lane_name, "forward_dynamics_x%d", L);
    void *ps = sym(h, name, "forward_dynamics"), *pl = sym(h, name, lane_name);
    if (!ps || !pl) return;
    id_fn single = as_id(ps);
    sd_batch_lanes_fd lane = NULL;
    memcpy(&lane, &pl, sizeof pl);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
    const long N = STATES + 3; /* not a multiple of L: the last group is partial */
    double *q = malloc(sizeof(double) * (size_t)N * (size_t)nq), *u = malloc(sizeof(double) * (size_t)N * (size_t)nv);
    double *tau = malloc(sizeof(double) * (size_t)N * (size_t)nv), *fe = malloc(sizeof(double) * (size_t)N * 6 * (size_t)n);
    double *qdd = malloc(sizeof(double) * (size_t)N * (size_t)nv), *ref = malloc(sizeof(double) * (size_t)N * (size_t)nv);
    for (long s = 0; s < N; ++s) {
        random_state(m, rng, q + s * nq, u + s * nv, tau + s * nv);
        random_vector(rng, fe + s * 6 * n, 6 * n, 2.0);
    }
    sd_error err;
    sd_batch *b = sd_batch_new(m, 2, &err);
    check(b && sd_batch_use_lanes(b, L, lane) == SD_OK && sd_batch_generated_lanes(b) == L, name, "sd_batch_use_lanes");
    for (int with_f = 0; b && with_f < 2; ++with_f) {
        int ok = 1;
        for (long s = 0; s < N && ok; ++s)
            ok = single(q + s * nq, u + s * nv, tau + s * nv, with_f ? fe + s * 6 * n : NULL, ref + s * nv) == 0;
        if (!ok) {
            printf("%-28s batch x%d: a state the generated code refuses (left to the single-state tests)\n", name, L);
            break;
        }
        const sd_status st = sd_forward_dynamics_batch(b, N, q, u, tau, with_f ? fe : NULL, qdd, NULL);
        check(st == SD_OK && memcmp(qdd, ref, sizeof(double) * (size_t)N * (size_t)nv) == 0, name,
              "the batch through the lane form equals the generated single-state calls bit for bit");
    }
    if (b && nq) { /* a NaN at state 613: the library's error there, every state before it done */
        const long bad = 613;
        q[bad * nq] = NAN;
        for (long i = 0; i < N * nv; ++i) qdd[i] = SENTINEL;
        const sd_status st = sd_forward_dynamics_batch(b, N, q, u, tau, NULL, qdd, NULL);
        check(st == SD_E_ARGUMENT && sd_batch_error_state(b) == bad, name, "a NaN state: SD_E_ARGUMENT at its index");
        int before = 1;
        for (long s = 0; s < bad; ++s)
            if (single(q + s * nq, u + s * nv, tau + s * nv, NULL, ref) != 0 ||
                memcmp(ref, qdd + s * nv, sizeof(double) * (size_t)nv) != 0)
                before = 0;
        check(before, name, "the states before the NaN state are done, bit for bit");
        /* a parameter setter: the generated code's folded parameters are stale, the library's kernels run */
        double g0[3], g1[3];
        sd_model_gravity(m, g0);
        for (int i = 0; i < 3; ++i) g1[i] = 0.5 * g0[i] + 1.0;
        sd_data *d = sd_data_new(m);
        q[bad * nq] = 0.0;
        check(sd_model_set_gravity(m, g1, &err) == SD_OK && sd_batch_generated_lanes(b) == 0 &&
                  sd_forward_dynamics_batch(b, 1, q, u, tau, NULL, qdd, NULL) == SD_OK &&
                  sd_forward_dynamics(m, d, q, u, tau, NULL, ref) == SD_OK && rel_diff(qdd, ref, nv) <= TOL,
              name, "after a parameter setter the batch leaves the generated lanes for the library's kernels");
        sd_model_set_gravity(m, g0, &err);
        sd_data_free(d);
        check(sd_batch_use_lanes(b, 5, lane) == SD_E_ARGUMENT && sd_batch_use_lanes(b, 0, NULL) == SD_OK &&
                  sd_batch_generated_lanes(b) == 0,
              name, "sd_batch_use_lanes: 5 lanes refused, NULL goes back to the library's kernels");
    }
    sd_batch_free(b);
    free(q), free(u), free(tau), free(fe), free(qdd), free(ref);
}

static void run_lanes(sd_model *m, const char *name, uint64_t *rng)
{
    static const char *const fns[] = {"inverse_dynamics", "mass_matrix", "forward_dynamics", "mass_matrix_inverse",
                                      "interbody_forces"};
    const int large = sd_model_nbodies(m) > 12;
    const char *const flags[2] = {large ? "-std=c99 -O0" : "-std=c99 -O2 -march=native",
                                  "-std=c99 -O0 -DSD_GENERATED_NO_VECTORS"};
    /* a large model's lane file compiles for minutes at -O0 (Talos: 140 s for ID, FD and M^-1): there
     * the forward dynamics alone, the function the batch API runs, and not the per-lane loop, which is
     * the single-state code and is checked on the small models */
    const unsigned algorithms = large ? SD_CODEGEN_FD : 0;
    const sd_codegen_options o = {.algorithms = algorithms, .lanes = SD_CODEGEN_LANES_4 | SD_CODEGEN_LANES_8};
    for (int v = 0; v < (large ? 1 : 2); ++v) {
        char so_name[128];
        snprintf(so_name, sizeof so_name, "%s%s", name, v ? "_novec" : "");
        double gen_s = 0, cc_s = 0;
        void *h = build_with(m, so_name, &o, flags[v], &gen_s, &cc_s);
        if (!h) return;
        const double t0 = now();
        int failed = 0;
        for (int L = 4; L <= 8; L += 4) {
            for (size_t f = 0; f < sizeof fns / sizeof fns[0]; ++f)
                if (!large || f == 2) failed += compare_lane_function(m, so_name, h, fns[f], L, rng);
            if (!v) batch_through_lanes(m, so_name, h, L, rng);
        }
        printf("%-28s lanes (%s): %d failing lanes all as the single calls; compiled in %.1f s, checked in %.1f s\n",
               so_name, flags[v], failed, cc_s, now() - t0);
        dlclose(h);
    }
}

/* A lane with a singular pivot beside lanes without: a massless arm turning about z carries a point
 * mass on a slider along its x axis; with the slider at 0 the mass sits on the turning axis, the
 * arm's D(k) = m x^2 is 0 and so is M's determinant. Lanes 1 and 3 there: E_SINGULAR, outputs
 * untouched; lanes 0 and 2 (slider out) bit for bit the single-state calls. */
static void singular_lanes(void)
{
    sd_builder *bld = sd_builder_new();
    sd_body_desc arm, slider;
    sd_body_desc_init(&arm);
    arm.name = "arm";
    arm.hinge = SD_HINGE_REVOLUTE;
    arm.axis[2] = 1.0;
    sd_body_desc_init(&slider);
    slider.name = "slider";
    slider.parent = "arm";
    slider.hinge = SD_HINGE_PRISMATIC;
    slider.axis[0] = 1.0;
    slider.mass = 2.0;
    sd_model *m = NULL;
    sd_error err;
    if (sd_builder_add_body(bld, &arm, &err) != SD_OK || sd_builder_add_body(bld, &slider, &err) != SD_OK ||
        sd_builder_build(bld, &m, &err) != SD_OK) {
        fprintf(stderr, "FAIL singular_lanes: the model: %s\n", err.message);
        ++failures;
        sd_builder_free(bld);
        return;
    }
    sd_builder_free(bld);
    const sd_codegen_options o = {.algorithms = SD_CODEGEN_FD | SD_CODEGEN_MINV, .lanes = SD_CODEGEN_LANES_4};
    double gen_s, cc_s;
    void *h = build_with(m, "lanes_singular", &o, "-std=c99 -O2", &gen_s, &cc_s);
    if (!h) {
        sd_model_free(m);
        return;
    }
    id_fn fd = as_id(sym(h, "lanes_singular", "forward_dynamics"));
    m_fn minv = as_m(sym(h, "lanes_singular", "mass_matrix_inverse"));
    lane4_fn fd4 = NULL;
    lane1_fn minv4 = NULL;
    void *p4 = sym(h, "lanes_singular", "forward_dynamics_x4"), *pm = sym(h, "lanes_singular", "mass_matrix_inverse_x4");
    memcpy(&fd4, &p4, sizeof p4), memcpy(&minv4, &pm, sizeof pm);
    /* lane l: theta = 0.3 l, slider at 0.5 (lanes 0, 2) or 0 (lanes 1, 3); u = 1, tau = (0.2, -0.1) */
    const double qs[4][2] = {{0.0, 0.5}, {0.3, 0.0}, {0.6, 0.5}, {0.9, 0.0}}, us[2] = {1.0, 1.0}, ts[2] = {0.2, -0.1};
    double q[8], u[8], tau[8], out[16], one[4];
    for (int l = 0; l < 4; ++l)
        for (int i = 0; i < 2; ++i) q[i * 4 + l] = qs[l][i], u[i * 4 + l] = us[i], tau[i * 4 + l] = ts[i];
    int status[4];
    for (int f = 0; fd && minv && fd4 && minv4 && f < 2; ++f) {
        const int nout = f ? 4 : 2;
        for (int i = 0; i < 16; ++i) out[i] = SENTINEL;
        const int ret = f ? minv4(q, out, status) : fd4(q, u, tau, NULL, out, status);
        check(ret == SD_E_SINGULAR, "singular_lanes", "the call returns the first failing lane's E_SINGULAR");
        for (int l = 0; l < 4; ++l) {
            const int st = f ? minv(qs[l], one) : fd(qs[l], us, ts, NULL, one);
            check(status[l] == (l % 2 ? SD_E_SINGULAR : SD_OK) && st == status[l], "singular_lanes",
                  "lanes 1 and 3 singular, 0 and 2 not, as the single calls");
            for (int i = 0; i < nout; ++i) {
                const double got = out[i * 4 + l];
                check(l % 2 ? got == SENTINEL : memcmp(&got, &one[i], sizeof got) == 0, "singular_lanes",
                      "a singular lane untouched, the others bit for bit the single calls");
            }
        }
    }
    printf("singular_lanes: a singular lane beside regular ones checked (FD and M^-1, 4 lanes)\n");
    dlclose(h);
    sd_model_free(m);
}

static void random_models_lanes(void)
{
    uint64_t rng = 0x1a4e5;
    static const struct {
        int n, flags, joint_terms;
        const char *name;
    } cases[] = {
        {7, 0, 1, "lanes_tree_all_hinges"},
        {5, RT_FREE_ROOT | RT_AXIS_ALIGNED | RT_UNROTATED, 1, "lanes_tree_free_axis_aligned"},
        {5, RT_MASSLESS, 0, "lanes_tree_massless"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        sd_model *m = random_tree(&rng, cases[c].n, cases[c].flags);
        if (cases[c].joint_terms) add_joint_terms(m, &rng);
        run_lanes(m, cases[c].name, &rng);
        sd_model_free(m);
    }
}

static void refusals(void)
{
    /* a name that is not a C identifier, and an unknown algorithm, are refused naming them */
    uint64_t rng = 7;
    sd_model *m = random_tree(&rng, 3, 0);
    sd_error err;
    check(sd_codegen_write(m, NULL, workdir, "2bad", &err) == SD_E_ARGUMENT && strstr(err.message, "2bad"), "refusals",
          "a name that is not an identifier");
    unsigned flags = 0;
    check(sd_codegen_parse_algorithms("id,fdd", &flags, &err) == SD_E_ARGUMENT && strstr(err.message, "fdd"),
          "refusals", "an unknown algorithm");
    check(sd_codegen_parse_algorithms("m,minv", &flags, &err) == SD_OK && flags == (SD_CODEGEN_M | SD_CODEGEN_MINV),
          "refusals", "a list of algorithms");
    /* a directory that does not exist: SD_E_IO, and no file left behind */
    char bad[4200];
    snprintf(bad, sizeof bad, "%s/no/such/dir", workdir);
    check(sd_codegen_write(m, NULL, bad, "x", &err) == SD_E_IO && strstr(err.message, "no/such/dir"), "refusals",
          "a missing directory");
    sd_model_free(m);
}

static int shared_models(const char *dir, void (*run)(sd_model *, const char *, uint64_t *))
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        printf("SKIP: the shared models (%s) are absent\n", dir);
        return 77;
    }
    static const struct {
        const char *file, *name;
        int floating;
    } models[] = {
        {"iiwa_benchmark/kuka_iiwa_robot.urdf", "iiwa", 0}, {"hyq/hyq_no_sensors.urdf", "hyq", 1},
        {"talos/talos_reduced.urdf", "talos_reduced", 1},   {"anymal_b/anymal.urdf", "anymal", 1},
        {"panda/panda.urdf", "panda", 0},                   {"ur5/ur5_robot.urdf", "ur5", 0},
    };
    uint64_t rng = 0xabcdef;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; ++i) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, models[i].file);
        sd_load_options opt = {.urdf = {.floating_base = models[i].floating, .mimic_independent = 1}};
        sd_model *m = NULL;
        sd_error err;
        if (sd_model_load_file(path, &opt, &m, NULL, &err) != SD_OK) {
            fprintf(stderr, "FAIL %s: %s\n", path, err.message);
            ++failures;
            continue;
        }
        run(m, models[i].name, &rng);
        sd_model_free(m);
    }
    return 0;
}

/* Run a command line through the shell with stderr into WORKDIR/cli.err; its exit status. */
static int run_cli(const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s 2> '%s/cli.err' > /dev/null", args, workdir);
    const int st = system(cmd);
    return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Whether WORKDIR/cli.err holds `text`. */
static int cli_said(const char *text)
{
    char path[4200], buf[4096];
    snprintf(path, sizeof path, "%s/cli.err", workdir);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, text) != NULL;
}

static int exists(const char *dir, const char *file)
{
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return stat(path, &st) == 0;
}

static void command_line(const char *soadyn, const char *models)
{
    char args[16384], out[4200];
    snprintf(out, sizeof out, "%s/cli_out", workdir);
    mkdir(out, 0777);
    snprintf(args, sizeof args, "'%s' codegen '%s/iiwa14.urdf' -o '%s' --name cli_iiwa --algorithms id,fd", soadyn, models, out);
    check(run_cli(args) == 0 && exists(out, "cli_iiwa.c") && exists(out, "cli_iiwa.h") && !exists(out, "cli_iiwa.c.partial"),
          "cli", "codegen writes NAME.c and NAME.h");
    snprintf(args, sizeof args, "'%s' -std=c99 -Wall -Wextra -Werror -fsyntax-only '%s/cli_iiwa.c'", cc, out);
    check(run_cli(args) == 0, "cli", "the generated file compiles without warnings (-Wall -Wextra)");
    snprintf(args, sizeof args, "grep -q cli_iiwa_mass_matrix '%s/cli_iiwa.h'", out);
    check(run_cli(args) != 0, "cli", "--algorithms id,fd leaves the mass matrix out");
    snprintf(args, sizeof args, "'%s' codegen '%s/iiwa14.urdf' -o '%s' --name cli_lanes --algorithms fd --lanes 8", soadyn,
             models, out);
    check(run_cli(args) == 0, "cli", "codegen --lanes 8");
    snprintf(args, sizeof args, "grep -q 'cli_lanes_forward_dynamics_x8(' '%s/cli_lanes.h' && ! grep -q '_x4(' '%s/cli_lanes.h'",
             out, out);
    check(run_cli(args) == 0, "cli", "--lanes 8 declares the 8-lane function only");
    snprintf(args, sizeof args, "'%s' -std=c99 -Wall -Wextra -pedantic -Werror -fsyntax-only '%s/cli_lanes.c'", cc, out);
    check(run_cli(args) == 0, "cli", "the lane form compiles without warnings (-Wall -Wextra -pedantic)");
    snprintf(args, sizeof args, "'%s' codegen '%s/iiwa14.urdf' -o '%s' --lanes 3", soadyn, models, out);
    check(run_cli(args) == 1 && cli_said("--lanes '3'"), "cli", "--lanes 3 is refused, named");
    snprintf(args, sizeof args, "'%s' codegen '%s/iiwa14.urdf' -o '%s' --algorithms id,fdd", soadyn, models, out);
    check(run_cli(args) == 1 && cli_said("'fdd'"), "cli", "an unknown algorithm is named");
    snprintf(args, sizeof args, "'%s' codegen '%s/flexible_arm.urdf' -o '%s' --name cli_arm", soadyn, models, out);
    check(run_cli(args) == 0 && exists(out, "cli_arm.c"), "cli", "a flexible model is generated");
    snprintf(args, sizeof args, "'%s' codegen '%s/spacecraft_deploy.urdf' -o '%s'", soadyn, models, out);
    check(run_cli(args) == 2 && cli_said("closure constraints"), "cli", "a flexible model with a loop is refused");
    snprintf(args, sizeof args, "'%s' codegen '%s/four_bar.urdf' -o '%s'", soadyn, models, out);
    check(run_cli(args) == 2 && cli_said("closure constraints"), "cli", "closure constraints are refused");
    snprintf(args, sizeof args, "'%s' codegen '%s/iiwa14.urdf' -o '%s/missing' --name gone", soadyn, models, out);
    check(run_cli(args) == 3 && cli_said("missing/gone.c.partial") && !exists(out, "missing"), "cli",
          "an unwritable directory: exit 3, the file named, nothing left");
}

/* The random flexible trees' seed: one whose models meet the coverage check of flexible_models. */
enum { SEED_FLEX_MODELS = 8 };

/* Random trees of rigid bodies (every hinge type) and flexible bodies of 1-5 modes, and the
 * repository's flexible models (the deployable spacecraft has a loop: refused, saying so). */
static void flexible_models(const char *models)
{
    /* the models from their own generator, so that the coverage checked below does not depend on the
     * draws of the states */
    uint64_t model_rng = SEED_FLEX_MODELS, rng = 0xf1e7c0de;
    static const struct {
        int n, max_modes, flags;
        const char *name;
    } cases[] = {
        {7, 5, RF_JOINT_DYNAMICS, "flex_tree_mixed"},
        {6, 5, RF_FREE_ROOT | RF_ON_NODES | RF_JOINT_DYNAMICS, "flex_tree_free_on_nodes"},
        {5, 3, RF_ALL_FLEXIBLE | RF_ON_NODES | RF_POINT_MASSES, "flex_tree_all_flexible"},
        {5, 4, RF_CHAIN | RF_ON_NODES | RF_LINEARISED | RF_NO_DAMPING, "flex_chain_linearised"},
        {6, 5, RF_MIXED_MASS | RF_NO_RIGID_PART | RF_FREE_ROOT, "flex_tree_mixed_mass"},
        {4, 1, RF_ALL_FLEXIBLE | RF_CHAIN | RF_ON_NODES, "flex_chain_one_mode"},
    };
    unsigned hinges_flexible = 0, hinges_rigid = 0; /* the hinge types met, as bit masks */
    int on_nodes = 0, modes_met = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        const random_flex_spec spec = {cases[c].n, cases[c].max_modes, cases[c].flags, 0.0};
        sd_model *m = random_flex_tree(&model_rng, &spec);
        for (int k = 0; k < sd_model_nbodies(m); ++k) {
            const sd_body_desc *bd = sd_model_body_desc(m, k);
            const int nm = sd_model_body_nmodes(m, k);
            if (nm) hinges_flexible |= 1u << bd->hinge;
            else hinges_rigid |= 1u << bd->hinge;
            modes_met |= nm ? 1 << (nm - 1) : 0;
            on_nodes += bd->parent_node >= 0 && bd->parent && sd_model_body_nmodes(m, sd_model_body_index(m, bd->parent)) > 0;
        }
        run_model(m, cases[c].name, &rng);
        sd_model_free(m);
    }
    const unsigned every = (1u << SD_HINGE_TYPE_COUNT) - 1;
    printf("random trees: hinge types on flexible bodies 0x%x, on rigid bodies 0x%x (every type: 0x%x), mode counts "
           "0x%x, %d children on node frames\n",
           hinges_flexible, hinges_rigid, every, (unsigned)modes_met, on_nodes);
    check(hinges_flexible == every && hinges_rigid == every && modes_met == 31 && on_nodes >= 5, "random flexible trees",
          "every hinge type on flexible and on rigid bodies, 1-5 modes, children on node frames");
    static const char *files[] = {"flexible_arm", "spacecraft"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.urdf", models, files[i]);
        sd_model *m = NULL;
        sd_error err;
        if (sd_model_load_file(path, NULL, &m, NULL, &err) != SD_OK) {
            fprintf(stderr, "FAIL %s: %s\n", path, err.message);
            ++failures;
            continue;
        }
        run_model(m, files[i], &rng);
        sd_model_free(m);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/spacecraft_deploy.urdf", models);
    sd_model *m = NULL;
    sd_error err;
    if (sd_model_load_file(path, NULL, &m, NULL, &err) != SD_OK) {
        fprintf(stderr, "FAIL %s: %s\n", path, err.message);
        ++failures;
        return;
    }
    check(sd_codegen_write(m, NULL, workdir, "deploy", &err) == SD_E_NOT_SUPPORTED && strstr(err.message, "closure constraints"),
          "spacecraft_deploy", "a model with a loop is refused, saying so");
    sd_model_free(m);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_codegen CC WORKDIR random | shared MODELS | cli SOADYN MODELS | flexible MODELS | lanes [MODELS]\n");
        return 2;
    }
    cc = argv[1];
    workdir = argv[2];
    mkdir(workdir, 0777);
    if (!strcmp(argv[3], "lanes") && argc > 4) {
        const int r = shared_models(argv[4], run_lanes);
        if (r) return r;
    } else if (!strcmp(argv[3], "lanes")) {
        singular_lanes();
        random_models_lanes();
    } else if (!strcmp(argv[3], "cli") && argc > 5) {
        command_line(argv[4], argv[5]);
    } else if (!strcmp(argv[3], "flexible") && argc > 4) {
        flexible_models(argv[4]);
    } else if (!strcmp(argv[3], "shared")) {
        const int r = shared_models(argc > 4 ? argv[4] : "", run_model);
        if (r) return r;
    } else {
        refusals();
        random_models();
    }
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("ok\n");
    return failures ? 1 : 0;
}
