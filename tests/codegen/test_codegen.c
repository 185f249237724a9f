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
 * On a model with flexible bodies the modal coordinates are drawn at two scales, so that the node
 * frames' rotations take both forms of flex_body.c's SO(3) coefficients (series below |theta|^2 =
 * 1e-2, closed forms above).
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

/* Generate, compile and load the model's code; NULL on failure (counted). */
static void *build(const sd_model *m, const char *name, double *gen_s, double *cc_s)
{
    sd_error err;
    double t0 = now();
    if (sd_codegen_write(m, NULL, workdir, name, &err) != SD_OK) {
        fprintf(stderr, "FAIL %s: sd_codegen_write: %s\n", name, err.message);
        ++failures;
        return NULL;
    }
    *gen_s = now() - t0;
    char cmd[8192], so[4096];
    snprintf(so, sizeof so, "%s/%s.so", workdir, name);
    snprintf(cmd, sizeof cmd, "'%s' -std=c99 -O0 -shared -fPIC -o '%s' '%s/%s.c' -lm", cc, so, workdir, name);
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

static int shared_models(const char *dir)
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
        run_model(m, models[i].name, &rng);
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
    char args[8192], out[4200];
    snprintf(out, sizeof out, "%s/cli_out", workdir);
    mkdir(out, 0777);
    snprintf(args, sizeof args, "'%s' codegen '%s/iiwa14.urdf' -o '%s' --name cli_iiwa --algorithms id,fd", soadyn, models, out);
    check(run_cli(args) == 0 && exists(out, "cli_iiwa.c") && exists(out, "cli_iiwa.h") && !exists(out, "cli_iiwa.c.partial"),
          "cli", "codegen writes NAME.c and NAME.h");
    snprintf(args, sizeof args, "'%s' -std=c99 -Wall -Wextra -Werror -fsyntax-only '%s/cli_iiwa.c'", cc, out);
    check(run_cli(args) == 0, "cli", "the generated file compiles without warnings (-Wall -Wextra)");
    snprintf(args, sizeof args, "grep -q cli_iiwa_mass_matrix '%s/cli_iiwa.h'", out);
    check(run_cli(args) != 0, "cli", "--algorithms id,fd leaves the mass matrix out");
    snprintf(args, sizeof args, "'%s' codegen '%s/iiwa14.urdf' -o '%s' --lanes 4", soadyn, models, out);
    check(run_cli(args) == 1 && cli_said("--lanes is not offered"), "cli", "--lanes says it is not offered");
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
        fprintf(stderr, "usage: test_codegen CC WORKDIR random | shared MODELS | cli SOADYN MODELS | flexible MODELS\n");
        return 2;
    }
    cc = argv[1];
    workdir = argv[2];
    mkdir(workdir, 0777);
    if (!strcmp(argv[3], "cli") && argc > 5) {
        command_line(argv[4], argv[5]);
    } else if (!strcmp(argv[3], "flexible") && argc > 4) {
        flexible_models(argv[4]);
    } else if (!strcmp(argv[3], "shared")) {
        const int r = shared_models(argc > 4 ? argv[4] : "");
        if (r) return r;
    } else {
        refusals();
        random_models();
    }
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("ok\n");
    return failures ? 1 : 0;
}
