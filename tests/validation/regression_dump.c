/*
 * tests/validation/regression_dump.c — the accuracy guard of issue 12: the rigid results of every
 * model of ../shared/models equal those of the previous version (f590bae) to 1e-12.
 *
 *   regression_dump dump  <shared models folder>                 > golden.txt   (then gzip -9)
 *   regression_dump check <shared models folder> <golden.txt[.gz]>
 *
 * dump loads every URDF, MJCF and SDF file of the folder that soadyn loads (the robots MODELS.md
 * calls "floating base: yes (implicit)" on a free hinge), draws a few seeded random states and
 * writes, per state, the state itself and what the algorithms give there (%.17g):
 *   M (sd_mass_matrix), C (sd_bias_forces), ID tau with an external force and every inter-body
 *   force of that pass, ABA qdd with an external force, ABA qdd with its inter-body forces
 *   (sd_forward_dynamics_ex), M^-1 (sd_mass_matrix_inverse), log det M, kinetic and potential
 *   energy, the centre of mass and the world Jacobian of a point on the last body.
 * For nv > 64 the dense M and M^-1 are written as their products with four fixed vectors
 * (M W), so that the 594-speed 22_humanoids.xml adds kilobytes rather than megabytes.
 *
 * check reads the states from the golden file (so it does not depend on how random states are
 * drawn), recomputes with the library it is linked with and compares each quantity, per state, to
 * 1e-12 relative to that quantity's largest magnitude (log det M: to 1e-12 absolute, i.e. det M
 * to 1e-12 relative). A call that failed then must fail now with the same status. It prints the
 * largest relative difference per quantity over all models, and each failure (model, state,
 * quantity, index, old, new). It uses only API that existed at f590bae, so the same source builds
 * the golden file against that version. Exit status: 0 equal, 1 differ, 77 folder absent.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <soadyn/soadyn.h>

#define NSTATES 3
#define DENSE_LIMIT 64 /* past this nv, M and M^-1 are written as M W (4 columns) */
#define NW 4
#define TOL 1e-12

/* The models: path under the shared folder and whether it floats (MODELS.md): a URDF root link on a
 * free hinge (floating_base), an SDF model with no joint to the world left free (else fixed_base);
 * MJCF files say it themselves (the flag is 1 where they have a free joint, for the reader only).
 * four_bar_loop.sdf is left out: libsdformat refuses it (MODELS.md). */
static const struct {
    const char *file;
    int floating;
} models[] = {
    {"acrobot/acrobot.urdf", 0},
    {"acrobot/acrobot.xml", 0},
    {"ant_mjcf/ant.xml", 1},
    {"anymal_b/anymal.urdf", 1},
    {"anymal_c/anymal.urdf", 1},
    {"atlas/atlas_convex_hull.urdf", 1},
    {"atlas/atlas_minimal_contact.urdf", 1},
    {"cassie_drake/cassie_v2.urdf", 1},
    {"cassie_mjcf/cassie.xml", 1},
    {"cassie_sdf/cassie_v2.sdf", 1},
    {"double_pendulum/double_pendulum.urdf", 0},
    {"four_bar_drake/four_bar.sdf", 0},
    {"half_cheetah_mjcf/half_cheetah.xml", 0},
    {"humanoid_mjcf/humanoid.xml", 1},
    {"humanoid_mjcf_debian/22_humanoids.xml", 1},
    {"humanoid_mjcf_debian/humanoid.xml", 1},
    {"hyq/hyq_no_sensors.urdf", 1},
    {"iiwa14/iiwa14.xml", 0},
    {"iiwa14/iiwa14_no_collision.sdf", 0},
    {"iiwa14/iiwa14_no_collision.urdf", 0},
    {"iiwa14/iiwa14_primitive_collision.urdf", 0},
    {"iiwa_benchmark/kuka_iiwa_robot.urdf", 0},
    {"panda/panda.urdf", 0},
    {"panda/panda.xml", 0},
    {"solo/solo.urdf", 1},
    {"solo/solo12.urdf", 1},
    {"talos/talos_full_v2.urdf", 1},
    {"talos/talos_reduced.urdf", 1},
    {"ur5/ur5_robot.urdf", 0},
    {"ur5/ur5e.xml", 0},
};
#define NMODELS ((int)(sizeof models / sizeof models[0]))

/* One quantity of one state: its name, status and values. */
typedef struct quantity {
    char name[32];
    sd_status status;
    int n;
    double *v;
} quantity;

#define MAXQ 16
typedef struct result {
    int count;
    quantity q[MAXQ];
} result;

static double *alloc_or_die(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof(double));
    if (p == NULL) {
        fprintf(stderr, "regression_dump: out of memory\n");
        exit(2);
    }
    return p;
}

static quantity *add(result *r, const char *name, int n)
{
    if (r->count == MAXQ) {
        fprintf(stderr, "regression_dump: more than %d quantities\n", MAXQ);
        exit(2);
    }
    quantity *x = &r->q[r->count++];
    snprintf(x->name, sizeof x->name, "%s", name);
    x->status = SD_OK;
    x->n = n;
    x->v = alloc_or_die((size_t)n);
    return x;
}

static void free_result(result *r)
{
    for (int i = 0; i < r->count; ++i) free(r->q[i].v);
    r->count = 0;
}

/* The fixed vectors W of M W for large models: smooth, nonzero, independent of any RNG. */
static double w_entry(int i, int j) { return sin(1.0 + 0.37 * i + 1.3 * j); }

/* A dense nv x nv matrix as itself (small nv) or as its product with W (large nv). */
static void add_dense(result *r, const char *name, sd_status st, const double *A, int nv)
{
    char label[32];
    if (nv <= DENSE_LIMIT) {
        quantity *x = add(r, name, nv * nv);
        x->status = st;
        if (st == SD_OK) memcpy(x->v, A, (size_t)nv * nv * sizeof(double));
        return;
    }
    snprintf(label, sizeof label, "%s*W", name);
    quantity *x = add(r, label, nv * NW);
    x->status = st;
    if (st != SD_OK) return;
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < NW; ++j) {
            double s = 0;
            for (int k = 0; k < nv; ++k) s += A[(size_t)i * nv + k] * w_entry(k, j);
            x->v[(size_t)i * NW + j] = s;
        }
}

/* Every inter-body force of the last call, 6 per body, in the body frame. */
static void add_forces(result *r, const char *name, sd_status call, const sd_model *m, sd_data *d)
{
    const int nb = sd_model_nbodies(m);
    quantity *x = add(r, name, 6 * nb);
    x->status = call;
    for (int k = 0; k < nb && x->status == SD_OK; ++k) x->status = sd_interbody_force(m, d, k, SD_FRAME_BODY, x->v + 6 * k);
}

/* Everything of one state. f_ext is the external force of ID and the plain ABA call. */
static void evaluate(const sd_model *m, sd_data *d, const double *q, const double *u, const double *qdd,
                     const double *tau, const double *f_ext, result *r)
{
    const int nv = sd_model_nv(m), nb = sd_model_nbodies(m);
    double *A = alloc_or_die((size_t)nv * nv);
    sd_status st = sd_mass_matrix(m, d, q, A);
    add_dense(r, "M", st, A, nv);

    quantity *x = add(r, "C", nv);
    x->status = sd_bias_forces(m, d, q, u, NULL, x->v);

    x = add(r, "ID", nv);
    x->status = sd_inverse_dynamics(m, d, q, u, qdd, f_ext, x->v);
    add_forces(r, "ID_f", x->status, m, d);

    x = add(r, "FD_fext", nv);
    x->status = sd_forward_dynamics(m, d, q, u, tau, f_ext, x->v);

    double *tau_copy = alloc_or_die((size_t)nv);
    memcpy(tau_copy, tau, (size_t)nv * sizeof(double));
    const sd_fd_options opt = {.interbody_forces = 1, .prescribed = NULL};
    x = add(r, "FD", nv);
    x->status = sd_forward_dynamics_ex(m, d, q, u, tau_copy, NULL, x->v, &opt);
    add_forces(r, "FD_f", x->status, m, d);
    free(tau_copy);

    st = sd_mass_matrix_inverse(m, d, q, A);
    add_dense(r, "Minv", st, A, nv);

    x = add(r, "logdetM", 1);
    x->status = sd_mass_matrix_determinant(m, d, q, NULL, &x->v[0]);

    /* Energies, centre of mass and a Jacobian need the kinematics with velocities. */
    const sd_status kin = sd_kinematics(m, d, q, u, NULL);
    x = add(r, "energy", 2);
    x->status = kin;
    if (kin == SD_OK) x->status = sd_kinetic_energy(m, d, &x->v[0]);
    if (x->status == SD_OK) x->status = sd_potential_energy(m, d, &x->v[1]);
    x = add(r, "com", 3);
    x->status = kin == SD_OK ? sd_center_of_mass_world(m, d, x->v) : kin;
    static const double point[3] = {0.1, -0.2, 0.3};
    x = add(r, "J_last", 6 * nv);
    x->status = kin == SD_OK ? sd_jacobian_world(m, d, nb - 1, point, x->v) : kin;
    free(A);
}

static sd_status load(const char *folder, int i, sd_model **m, char *msg, size_t msg_size)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", folder, models[i].file);
    sd_load_options opt;
    memset(&opt, 0, sizeof opt);
    opt.urdf.floating_base = models[i].floating;
    opt.sdf.fixed_base = !models[i].floating;
    sd_error err;
    const sd_status st = sd_model_load_file(path, &opt, m, NULL, &err);
    if (st != SD_OK) snprintf(msg, msg_size, "%s", err.message);
    return st;
}

/* A state of the model drawn from the seeded generator; f_ext per body. */
static void draw_state(const sd_model *m, uint64_t *rng, double *q, double *u, double *qdd, double *tau,
                       double *f_ext)
{
    const int nv = sd_model_nv(m), nb = sd_model_nbodies(m);
    sd_configuration_random(m, rng, q);
    for (int i = 0; i < nv; ++i) {
        u[i] = 2 * sd_random_uniform(rng) - 1;
        qdd[i] = 2 * sd_random_uniform(rng) - 1;
        tau[i] = 2 * sd_random_uniform(rng) - 1;
    }
    for (int i = 0; i < 6 * nb; ++i) f_ext[i] = 2 * sd_random_uniform(rng) - 1;
}

static void print_vector(const char *name, const double *v, int n)
{
    printf("%s %d", name, n);
    for (int i = 0; i < n; ++i) printf(" %.17g", v[i]);
    printf("\n");
}

static int dump(const char *folder)
{
    printf("# soadyn regression golden file (tests/validation/regression_dump.c), soadyn %s\n", SOADYN_VERSION);
    for (int i = 0; i < NMODELS; ++i) {
        sd_model *m = NULL;
        char msg[1024];
        if (load(folder, i, &m, msg, sizeof msg) != SD_OK) {
            fprintf(stderr, "%s: not loaded, left out: %s\n", models[i].file, msg);
            continue;
        }
        const int nq = sd_model_nq(m), nv = sd_model_nv(m), nb = sd_model_nbodies(m);
        printf("model %s %d %d %d %d\n", models[i].file, models[i].floating, nq, nv, nb);
        sd_data *d = sd_data_new(m);
        double *q = alloc_or_die((size_t)nq), *u = alloc_or_die((size_t)nv), *qdd = alloc_or_die((size_t)nv),
               *tau = alloc_or_die((size_t)nv), *f_ext = alloc_or_die(6 * (size_t)nb);
        uint64_t rng = 20260 + (uint64_t)i;
        for (int s = 0; s < NSTATES; ++s) {
            draw_state(m, &rng, q, u, qdd, tau, f_ext);
            printf("state %d\n", s);
            print_vector("q", q, nq);
            print_vector("u", u, nv);
            print_vector("qdd", qdd, nv);
            print_vector("tau", tau, nv);
            print_vector("f_ext", f_ext, 6 * nb);
            result r = {0};
            evaluate(m, d, q, u, qdd, tau, f_ext, &r);
            for (int k = 0; k < r.count; ++k) {
                if (r.q[k].status != SD_OK)
                    printf("%s ERR %d\n", r.q[k].name, (int)r.q[k].status);
                else
                    print_vector(r.q[k].name, r.q[k].v, r.q[k].n);
            }
            free_result(&r);
        }
        free(q); free(u); free(qdd); free(tau); free(f_ext);
        sd_data_free(d);
        sd_model_free(m);
        fprintf(stderr, "%s: nq %d nv %d, %d states\n", models[i].file, nq, nv, NSTATES);
    }
    return 0;
}

/* ---------------------------------------------------------------- check */

/* The golden file, read one whitespace-separated token at a time through zlib (plain text too). */
typedef struct reader {
    gzFile f;
    char tok[512];
    long line;
} reader;

static const char *next_token(reader *rd)
{
    int c;
    do {
        c = gzgetc(rd->f);
        if (c == '\n') ++rd->line;
        if (c == '#') { /* comment to end of line */
            while (c != -1 && c != '\n') c = gzgetc(rd->f);
            if (c == '\n') ++rd->line;
        }
    } while (c == ' ' || c == '\n' || c == '\t' || c == '\r');
    if (c == -1) return NULL;
    size_t n = 0;
    while (c != -1 && c != ' ' && c != '\n' && c != '\t' && c != '\r') {
        if (n + 1 < sizeof rd->tok) rd->tok[n++] = (char)c;
        c = gzgetc(rd->f);
    }
    if (c == '\n') gzungetc(c, rd->f);
    rd->tok[n] = '\0';
    return rd->tok;
}

static void bad_file(const reader *rd, const char *what)
{
    fprintf(stderr, "regression_dump: golden file line %ld: expected %s, found '%s'\n", rd->line + 1, what, rd->tok);
    exit(2);
}

static long read_long(reader *rd, const char *what)
{
    const char *t = next_token(rd);
    char *end;
    const long v = t ? strtol(t, &end, 10) : 0;
    if (t == NULL || *end != '\0') bad_file(rd, what);
    return v;
}

static void expect(reader *rd, const char *word)
{
    const char *t = next_token(rd);
    if (t == NULL || strcmp(t, word) != 0) bad_file(rd, word);
}

static void read_vector(reader *rd, const char *name, double *v, int n)
{
    expect(rd, name);
    if (read_long(rd, "a count") != n) bad_file(rd, "the model's size");
    for (int i = 0; i < n; ++i) {
        const char *t = next_token(rd);
        char *end;
        if (t == NULL) bad_file(rd, "a number");
        v[i] = strtod(t, &end);
        if (*end != '\0') bad_file(rd, "a number");
    }
}

/* Largest relative difference seen per quantity name, over every model and state. */
static struct {
    char name[32];
    double worst;
    char where[600];
} summary[MAXQ];
static int nsummary = 0;

static void note_worst(const char *name, double rel, const char *where)
{
    int i = 0;
    while (i < nsummary && strcmp(summary[i].name, name) != 0) ++i;
    if (i == nsummary) {
        if (nsummary == MAXQ) return;
        snprintf(summary[nsummary].name, sizeof summary[0].name, "%s", name);
        summary[nsummary].worst = -1;
        ++nsummary;
    }
    if (rel > summary[i].worst) {
        summary[i].worst = rel;
        snprintf(summary[i].where, sizeof summary[0].where, "%s", where);
    }
}

/* Compare one recomputed quantity with the next line of the golden file; returns failures. */
static int compare_quantity(reader *rd, const quantity *x, const char *model, int state)
{
    expect(rd, x->name);
    const char *t = next_token(rd);
    char where[600]; /* a model name of up to 512 characters and its state */
    snprintf(where, sizeof where, "%s state %d", model, state);
    if (t != NULL && strcmp(t, "ERR") == 0) {
        const long old_status = read_long(rd, "a status");
        if (x->status == (sd_status)old_status) return 0;
        fprintf(stderr, "%s: %s: failed with %s at f590bae, now %s\n", where, x->name,
                sd_status_name((sd_status)old_status), sd_status_name(x->status));
        return 1;
    }
    char *end;
    const long n = t ? strtol(t, &end, 10) : -1;
    if (t == NULL || *end != '\0' || n != x->n) bad_file(rd, "the quantity's size");
    double *old = alloc_or_die((size_t)n);
    for (long i = 0; i < n; ++i) {
        t = next_token(rd);
        if (t == NULL) bad_file(rd, "a number");
        old[i] = strtod(t, &end);
        if (*end != '\0') bad_file(rd, "a number");
    }
    int failed = 0;
    if (x->status != SD_OK) {
        fprintf(stderr, "%s: %s: ok at f590bae, now %s\n", where, x->name, sd_status_name(x->status));
        failed = 1;
    } else {
        double norm = 0, worst = 0;
        long at = 0;
        for (long i = 0; i < n; ++i) norm = fmax(norm, fabs(old[i]));
        if (strcmp(x->name, "logdetM") == 0) norm = fmax(norm, 1.0); /* det M to 1e-12 relative */
        for (long i = 0; i < n; ++i) {
            const double diff = fabs(x->v[i] - old[i]);
            if (!(diff <= worst)) { worst = diff; at = i; } /* NaN counts as worst */
        }
        const double rel = norm > 0 ? worst / norm : (worst == 0 ? 0 : INFINITY);
        note_worst(x->name, isnan(rel) ? INFINITY : rel, where);
        if (!(rel <= TOL)) {
            fprintf(stderr, "%s: %s[%ld] = %.17g, was %.17g (difference %.3g of the largest |entry| %.3g, tolerance %g)\n",
                    where, x->name, at, x->v[at], old[at], rel, norm, TOL);
            failed = 1;
        }
    }
    free(old);
    return failed;
}

static int check(const char *folder, const char *golden)
{
    reader rd = {gzopen(golden, "rb"), "", 0};
    if (rd.f == NULL) {
        fprintf(stderr, "regression_dump: cannot open %s\n", golden);
        return 2;
    }
    int failures = 0, models_checked = 0, states_checked = 0;
    const char *t = next_token(&rd);
    while (t != NULL) {
        if (strcmp(t, "model") != 0) bad_file(&rd, "model");
        char file[512];
        t = next_token(&rd);
        if (t == NULL) bad_file(&rd, "a file name");
        snprintf(file, sizeof file, "%s", t);
        const int floating = (int)read_long(&rd, "floating"), nq = (int)read_long(&rd, "nq"),
                  nv = (int)read_long(&rd, "nv"), nb = (int)read_long(&rd, "nbodies");
        int i = 0;
        while (i < NMODELS && strcmp(models[i].file, file) != 0) ++i;
        if (i == NMODELS || models[i].floating != floating) bad_file(&rd, "a model of the list");
        sd_model *m = NULL;
        char msg[1024];
        const sd_status st = load(folder, i, &m, msg, sizeof msg);
        if (st == SD_E_NOT_SUPPORTED) {
            printf("%s: skipped, this build does not load it: %s\n", file, msg);
        } else if (st != SD_OK) {
            fprintf(stderr, "%s: loaded at f590bae, now fails: %s\n", file, msg);
            ++failures;
        } else if (sd_model_nq(m) != nq || sd_model_nv(m) != nv || sd_model_nbodies(m) != nb) {
            fprintf(stderr, "%s: nq %d nv %d bodies %d, were %d %d %d\n", file, sd_model_nq(m), sd_model_nv(m),
                    sd_model_nbodies(m), nq, nv, nb);
            return 1;
        }
        sd_data *d = m ? sd_data_new(m) : NULL;
        double *q = alloc_or_die((size_t)nq), *u = alloc_or_die((size_t)nv), *qdd = alloc_or_die((size_t)nv),
               *tau = alloc_or_die((size_t)nv), *f_ext = alloc_or_die(6 * (size_t)nb);
        t = next_token(&rd);
        while (t != NULL && strcmp(t, "state") == 0) {
            const int s = (int)read_long(&rd, "a state number");
            read_vector(&rd, "q", q, nq);
            read_vector(&rd, "u", u, nv);
            read_vector(&rd, "qdd", qdd, nv);
            read_vector(&rd, "tau", tau, nv);
            read_vector(&rd, "f_ext", f_ext, 6 * nb);
            if (m != NULL) {
                result r = {0};
                evaluate(m, d, q, u, qdd, tau, f_ext, &r);
                for (int k = 0; k < r.count; ++k) failures += compare_quantity(&rd, &r.q[k], file, s);
                free_result(&r);
                ++states_checked;
            } else { /* skip this state's lines */
                while ((t = next_token(&rd)) != NULL && strcmp(t, "state") != 0 && strcmp(t, "model") != 0) {
                }
                continue;
            }
            t = next_token(&rd);
        }
        if (m != NULL) ++models_checked;
        free(q); free(u); free(qdd); free(tau); free(f_ext);
        sd_data_free(d);
        sd_model_free(m);
    }
    gzclose(rd.f);
    printf("largest difference per quantity, relative to its largest |entry| (tolerance %g):\n", TOL);
    for (int i = 0; i < nsummary; ++i)
        printf("  %-8s %9.3g  (%s)\n", summary[i].name, summary[i].worst, summary[i].where);
    printf("%d models, %d states compared with f590bae: %d differences\n", models_checked, states_checked, failures);
    return failures == 0 && models_checked > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "dump") != 0 && strcmp(argv[1], "check") != 0) ||
        (strcmp(argv[1], "check") == 0 && argc < 4)) {
        fprintf(stderr, "usage: regression_dump dump FOLDER > golden.txt | check FOLDER golden.txt[.gz]\n");
        return 2;
    }
    char probe[1024];
    snprintf(probe, sizeof probe, "%s/MODELS.md", argv[2]);
    FILE *f = fopen(probe, "r");
    if (f == NULL) {
        printf("skipped: %s not found (the shared models are absent)\n", probe);
        return 77;
    }
    fclose(f);
    return strcmp(argv[1], "dump") == 0 ? dump(argv[2]) : check(argv[2], argv[3]);
}
