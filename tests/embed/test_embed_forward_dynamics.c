/*
 * tests/embed/test_embed_forward_dynamics.c — the articulated-body forward dynamics over the nodes
 * of an embedding (000 Eq 62-69; embed_forward_dynamics.c) against independent computations at the
 * same consistent state (the loops closed, the speeds projected by sd_project_velocities and then
 * read as embedded speeds, the tree's joint forces zero on the dependent speeds, since the embedded
 * system knows only the independent speeds' forces):
 *   - the tree-augmented sd_closed_loop_forward_dynamics (000 Eq 45-46, tree recursions and
 *     Lagrange multipliers): the tree accelerations X qdd + Xdot u, every body's acceleration and
 *     inter-body force, every multiplier (minimum norm on redundant rows) and constraint force;
 *   - M_e = N^T M N from the tree's sd_mass_matrix and N read through sd_embedded_tree_speeds:
 *     M_e^-1 (ours, 004 Eq 51) times it is I, and log det M_e (004 Cor 6.1) its Cholesky log det;
 * on the four-bar and slider-crank of models/, a geared motor (sd_builder_add_geared_motor on a
 * turning base link, a link beyond), a 10-link chain with a four-bar at its tip (armature, damping,
 * a spring), and random trees of every hinge type with up to four random loops of every kind
 * (tests/loops/random_loops.h), armature, damping and springs on every hinge. Tolerance 1e-10
 * relative (scaled by cond(M_e) past 1e5 for M^-1 and log det, and by cond(Y1) past 100 for the
 * rest: the worst are printed relative to 1e-10 at the tolerance used); the random models also with only
 * their first loop embedded and the others tree-augmented on top (embed_mixed.c: the corrected
 * accelerations, forces and multipliers). Usage: test <models folder>.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>
#include <soadyn/embed.h>

#include "loops/random_loops.h"
#include "random_tree.h"
#include "test_util.h"

static const double TOL = 1e-10;
static const double HALF_PI = 1.57079632679489661923;

typedef struct worst {
    double qdd, acc, force, lambda, cforce, minv, logdet;
    double cond;       /* the largest cond(Y1) of a split met */
    int states;
    int indeterminate; /* states whose multipliers were not compared (redundant rows across methods) */
} worst;

static double maxabs(const double *x, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; ++i) s = fmax(s, fabs(x[i]));
    return s;
}

/* max |a - b| / max(1, max |b|) */
static double rel(const double *a, const double *b, int n)
{
    double num = 0.0;
    for (int i = 0; i < n; ++i) {
        const double d = fabs(a[i] - b[i]);
        if (isnan(d)) return INFINITY;
        num = fmax(num, d);
    }
    return num / fmax(1.0, maxabs(b, n));
}

/* Cholesky of the SPD n x n A into L; log det A, NAN when not SPD. */
static double cholesky_logdet(const double *A, int n, double *L)
{
    double ld = 0.0;
    memset(L, 0, (size_t)n * n * sizeof *L);
    for (int j = 0; j < n; ++j) {
        double s = A[j * n + j];
        for (int k = 0; k < j; ++k) s -= L[j * n + k] * L[j * n + k];
        if (!(s > 0.0)) return NAN;
        L[j * n + j] = sqrt(s);
        ld += log(s);
        for (int i = j + 1; i < n; ++i) {
            double t = A[i * n + j];
            for (int k = 0; k < j; ++k) t -= L[i * n + k] * L[j * n + k];
            L[i * n + j] = t / L[j * n + j];
        }
    }
    return ld;
}

/* One state near q_ref: returns 0 when it could not be made (the closure failed from there). */
static int check_state(const sd_model *m, const sd_embedding *e, sd_embedded_data *ed, sd_data *d, uint64_t *rng,
                       const double *q_ref, double scale, worst *w, const char *label)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), nc = sd_model_nconstraint_rows(m), nb = sd_model_nbodies(m);
    const int ne = sd_embedding_nv(e), ncons = sd_model_nconstraints(m);
    double *q = malloc((size_t)nq * sizeof *q), *du = malloc((size_t)nv * sizeof *du);
    double *u0 = malloc((size_t)nv * sizeof *u0), *ut = malloc((size_t)nv * sizeof *ut);
    double *ue = calloc((size_t)ne + 1, sizeof *ue), *tau_t = calloc((size_t)nv, sizeof *tau_t);
    double *tau_e = calloc((size_t)ne + 1, sizeof *tau_e), *f_ext = calloc(6 * (size_t)nb, sizeof *f_ext);
    double *qdd_ta = malloc((size_t)nv * sizeof *qdd_ta), *qdd_t = malloc((size_t)nv * sizeof *qdd_t);
    double *qdd_e = calloc((size_t)ne + 1, sizeof *qdd_e);
    double *lam_ta = calloc((size_t)nc + 1, sizeof *lam_ta), *lam_e = calloc((size_t)nc + 1, sizeof *lam_e);
    double *f_ta = malloc(6 * (size_t)nb * sizeof *f_ta), *f_e = malloc(6 * (size_t)nb * sizeof *f_e);
    double *a_ta = malloc(6 * (size_t)nb * sizeof *a_ta), *a_e = malloc(6 * (size_t)nb * sizeof *a_e);
    double *cf_ta = calloc(6 * (size_t)ncons + 1, sizeof *cf_ta), *cf_e = calloc(6 * (size_t)ncons + 1, sizeof *cf_e);
    double *N = calloc((size_t)nv * ne + 1, sizeof *N), *M = malloc((size_t)nv * nv * sizeof *M);
    double *NMN = calloc((size_t)ne * ne + 1, sizeof *NMN), *L = calloc((size_t)ne * ne + 1, sizeof *L);
    double *Minv = calloc((size_t)ne * ne + 1, sizeof *Minv), *col = calloc((size_t)ne + 1, sizeof *col);
    int ok = 0;

    /* the state: q closed by the embedding from a random step off q_ref (tree-augmented loops
     * assembled first); u projected on G's null
     * space in the kinetic metric and read back through N; tau on the independent speeds only */
    random_vector(rng, du, nv, scale);
    sd_configuration_integrate(m, q_ref, du, 1.0, q);
    int all = 1;
    for (int c = 0; c < ncons; ++c) all &= sd_embedding_constraint_embedded(e, c) == 1;
    if (!all && sd_assemble_configuration(m, d, q, NULL, 1e-13, 100, q, NULL) != SD_OK) goto done;
    double res = 1.0;
    if (sd_embedded_close(e, ed, q, q, &res) != SD_OK || !(res < 1e-12)) goto done;
    random_vector(rng, u0, nv, 1.0);
    CHECK(sd_project_velocities(m, d, q, u0, ut) == SD_OK);
    sd_embedded_speeds_of_tree(e, ut, ue);
    CHECK(sd_embedded_tree_speeds(e, ed, q, ue, ut) == SD_OK);
    random_vector(rng, tau_e, ne, 1.0);
    for (int i = 0; i < ne; ++i) tau_t[sd_embedding_speed_index(e, i)] = tau_e[i];
    for (int k = 0; k < nb; k += 2) random_vector(rng, f_ext + 6 * k, 6, 0.5);

    /* the tree-augmented side */
    sd_closed_loop_options copt = {.interbody_forces = 1};
    CHECK(sd_closed_loop_forward_dynamics(m, d, q, ut, tau_t, f_ext, qdd_ta, lam_ta, &copt) == SD_OK);
    for (int k = 0; k < nb; ++k) {
        CHECK(sd_interbody_force(m, d, k, SD_FRAME_BODY, f_ta + 6 * k) == SD_OK);
        CHECK(sd_body_acceleration(m, d, k, a_ta + 6 * k) == SD_OK);
    }
    for (int c = 0; c < ncons; ++c) CHECK(sd_constraint_force(m, d, c, SD_CONSTRAINT_FRAME_WORLD, cf_ta + 6 * c) == SD_OK);

    /* the embedded side */
    sd_embedded_fd_options eopt = {.interbody_forces = 1};
    const sd_status st = sd_embedded_forward_dynamics(e, ed, q, ue, tau_e, f_ext, qdd_e, qdd_t, &eopt);
    CHECK(st == SD_OK);
    if (st != SD_OK) {
        fprintf(stderr, "%s: %s\n", label, sd_embedded_error(ed));
        goto done;
    }
    sd_data *td = sd_embedded_tree_data(ed);
    for (int k = 0; k < nb; ++k) {
        CHECK(sd_interbody_force(m, td, k, SD_FRAME_BODY, f_e + 6 * k) == SD_OK);
        CHECK(sd_body_acceleration(m, td, k, a_e + 6 * k) == SD_OK);
    }
    CHECK(sd_embedded_constraint_forces(e, ed, lam_e) == SD_OK);
    for (int c = 0; c < ncons; ++c) CHECK(sd_constraint_force(m, td, c, SD_CONSTRAINT_FRAME_WORLD, cf_e + 6 * c) == SD_OK);
    for (int i = 0; i < ne; ++i) CHECK(qdd_e[i] == qdd_t[sd_embedding_speed_index(e, i)]);
    const double eq = rel(qdd_t, qdd_ta, nv), ea = rel(a_e, a_ta, 6 * nb);
    double ef = rel(f_e, f_ta, 6 * nb), el = rel(lam_e, lam_ta, nc), ec = rel(cf_e, cf_ta, 6 * ncons);
    /* Multipliers are unique when the rows are independent; with redundant rows both sides give the
     * minimum-norm ones, which the embedding finds aggregate by aggregate (their rows act on disjoint
     * speeds) but not across an embedded and a tree-augmented loop that share a redundancy: there the
     * forces are statically indeterminate and only the motion is compared. */
    if (!all && sd_closed_loop_rank(d) < nc) {
        ef = el = ec = 0.0;
        w->indeterminate++;
    }
    /* an ill-conditioned split (cond(Y1) of some aggregate) amplifies round-off on both sides */
    double cmax = 1.0;
    for (int a = 0; a < sd_embedding_naggregates(e); ++a) cmax = fmax(cmax, sd_embedded_split_condition(ed, a));
    const double tol = TOL * fmax(1.0, cmax / 100.0);
    CHECK(eq < tol);
    CHECK(ea < tol);
    CHECK(ef < tol);
    CHECK(el < tol);
    CHECK(ec < tol);
    if (!(eq < tol && ea < tol && ef < tol && el < tol && ec < tol))
        fprintf(stderr, "%s: qdd %.3g, accelerations %.3g, forces %.3g, lambda %.3g, constraint forces %.3g (tol %.3g)\n",
                label, eq, ea, ef, el, ec, tol);
    double *wv[5] = {&w->qdd, &w->acc, &w->force, &w->lambda, &w->cforce}, ev[5] = {eq, ea, ef, el, ec};
    for (int i = 0; i < 5; ++i) /* the worst at cond(Y1) <= 100, and the worst relative to tol above */
        *wv[i] = fmax(*wv[i], cmax <= 100.0 ? ev[i] : ev[i] * TOL / tol);
    w->cond = fmax(w->cond, cmax);

    /* M_e^-1 N^T M N = I, log det M_e = log det N^T M N */
    for (int j = 0; j < ne; ++j) {
        memset(col, 0, (size_t)ne * sizeof *col);
        col[j] = 1.0;
        CHECK(sd_embedded_tree_speeds(e, ed, q, col, ut) == SD_OK);
        for (int i = 0; i < nv; ++i) N[i * ne + j] = ut[i];
    }
    CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
    for (int a = 0; a < ne; ++a)
        for (int b = 0; b < ne; ++b) {
            double s = 0.0;
            for (int i = 0; i < nv; ++i)
                for (int j = 0; j < nv; ++j) s += N[i * ne + a] * M[i * nv + j] * N[j * ne + b];
            NMN[a * ne + b] = s;
        }
    const double ld_ref = cholesky_logdet(NMN, ne, L);
    const double ctol = test_cond_tolerance(TOL, ne ? test_cond_estimate(NMN, L, ne) : 1.0);
    double ld = NAN, ei = 0.0;
    CHECK(sd_embedded_log_det(e, ed, q, &ld) == SD_OK);
    CHECK(sd_embedded_mass_matrix_inverse(e, ed, q, Minv) == SD_OK);
    for (int a = 0; a < ne; ++a)
        for (int b = 0; b < ne; ++b) {
            double s = 0.0;
            for (int k = 0; k < ne; ++k) s += Minv[a * ne + k] * NMN[k * ne + b];
            ei = fmax(ei, fabs(s - (a == b)));
        }
    const double el2 = fabs(ld - ld_ref) / fmax(1.0, fabs(ld_ref));
    CHECK(ei < ctol);
    CHECK(el2 < ctol);
    if (!(ei < ctol && el2 < ctol)) fprintf(stderr, "%s: |M^-1 M - I| %.3g, log det %.3g (tol %.3g)\n", label, ei, el2, ctol);
    w->minv = fmax(w->minv, ei);
    w->logdet = fmax(w->logdet, el2);
    w->states++;
    ok = 1;
done:
    free(q); free(du); free(u0); free(ut); free(ue); free(tau_t); free(tau_e); free(f_ext); free(qdd_ta);
    free(qdd_t); free(qdd_e); free(lam_ta); free(lam_e); free(f_ta); free(f_e); free(a_ta); free(a_e);
    free(cf_ta); free(cf_e); free(N); free(M); free(NMN); free(L); free(Minv); free(col);
    return ok;
}

/* The constraints `loops` embedded (sd_embed_options.loops), the others tree-augmented, split at q_ref (closed by sd_assemble_configuration), `states`
 * random states near it (the first at q_ref itself). Returns the states checked. */
static int check_model(const sd_model *m, uint64_t *rng, const double *q_guess, const char *loops, int states, worst *w,
                       const char *label)
{
    const int nq = sd_model_nq(m);
    sd_data *d = sd_data_new(m);
    double *q_ref = malloc((size_t)nq * sizeof *q_ref);
    int done = 0;
    sd_embedding *e = NULL;
    sd_embedded_data *ed = NULL;
    if (sd_assemble_configuration(m, d, q_guess, NULL, 1e-13, 100, q_ref, NULL) != SD_OK) goto out;
    sd_embed_options opt;
    sd_embed_options_init(&opt);
    opt.loops = loops;
    opt.q = q_ref;
    sd_error err;
    if (!(e = sd_embedding_new(m, &opt, &err))) {
        printf("  %s: not embedded: %s\n", label, err.message);
        goto out;
    }
    ed = sd_embedded_data_new(e);
    CHECK(ed != NULL);
    for (int s = 0; ed && s < states; ++s) {
        double scale = s == 0 ? 0.0 : 0.3;
        for (int tries = 0; tries < 6; ++tries, scale *= 0.5)
            if (check_state(m, e, ed, d, rng, q_ref, scale, w, label)) {
                ++done;
                break;
            }
    }
out:
    sd_embedded_data_free(ed);
    sd_embedding_free(e);
    sd_data_free(d);
    free(q_ref);
    return done;
}

static sd_model *load_urdf(const char *folder, const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", folder, file);
    sd_model *m = NULL;
    sd_error err;
    if (sd_urdf_load_file(path, NULL, &m, &err) != SD_OK) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        return NULL;
    }
    return m;
}

static sd_model *build(sd_builder *b)
{
    sd_model *m = NULL;
    sd_error err;
    if (sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "build: %s\n", err.message);
        abort();
    }
    sd_builder_free(b);
    return m;
}

static void add_body(sd_builder *b, const sd_body_desc *d)
{
    sd_error err;
    if (sd_builder_add_body(b, d, &err) != SD_OK) {
        fprintf(stderr, "add_body: %s\n", err.message);
        abort();
    }
}

/* A link of mass `mass` along x of length len (com at mid-length, slender-bar inertia). */
static void link_desc(sd_body_desc *d, const char *name, const char *parent, double mass, double len)
{
    sd_body_desc_init(d);
    d->name = name;
    d->parent = parent;
    d->hinge = SD_HINGE_REVOLUTE;
    d->mass = mass;
    d->com[0] = 0.5 * len;
    d->inertia[0] = 1e-3 * mass;
    d->inertia[4] = d->inertia[8] = mass * len * len / 12.0 + 1e-3 * mass;
}

/* A base link turning about z, a geared motor on it (rotor and link, q_rotor = 20 q_link), a link
 * beyond the motor's link. */
static sd_model *geared_motor_model(void)
{
    sd_builder *b = sd_builder_new();
    sd_body_desc d;
    link_desc(&d, "base", NULL, 2.0, 0.5);
    d.armature = 0.01;
    add_body(b, &d);
    sd_geared_motor_desc g;
    sd_geared_motor_desc_init(&g);
    g.name = "arm";
    g.parent = "base";
    g.placement.p[0] = 0.5;
    sd_v3_set(g.axis, 0, 1, 0);
    g.mass = 1.0;
    g.com[0] = 0.2;
    g.inertia[0] = 1e-3;
    g.inertia[4] = g.inertia[8] = 0.02;
    g.rotor_placement.p[0] = 0.3;
    sd_v3_set(g.rotor_axis, 0, 1, 0);
    g.rotor_mass = 0.3;
    g.rotor_inertia[0] = g.rotor_inertia[4] = 2e-5;
    g.rotor_inertia[8] = 4e-5;
    g.ratio = 20.0;
    g.damping = 0.05;
    sd_error err;
    if (sd_builder_add_geared_motor(b, &g, &err) != SD_OK) {
        fprintf(stderr, "geared motor: %s\n", err.message);
        abort();
    }
    link_desc(&d, "forearm", "arm", 0.5, 0.3);
    d.placement.p[0] = 0.4;
    sd_v3_set(d.axis, 0, 1, 0);
    add_body(b, &d);
    return build(b);
}

/* An n-link spatial chain (axes z, y alternating, a spring on link 3) and at its tip a
 * parallelogram four-bar in the tip's x-y plane: crank (armature) and rocker on the tip, the
 * coupler (damping) on the crank, closed by a revolute constraint between the coupler's end and the
 * rocker's end; a pendulum hangs on the coupler. massless: the four-bar's links without mass, no
 * armature and no pendulum (its aggregate's D is then zero: SD_E_SINGULAR). */
static sd_model *chain_four_bar_model(int n, int massless)
{
    sd_builder *b = sd_builder_new();
    char name[32], parent[32];
    sd_body_desc d;
    for (int i = 0; i < n; ++i) {
        snprintf(name, sizeof name, "l%d", i);
        snprintf(parent, sizeof parent, "l%d", i - 1);
        link_desc(&d, name, i ? parent : NULL, 1.0 - 0.5 * i / n, 0.3);
        if (i) d.placement.p[0] = 0.3;
        if (i & 1) sd_v3_set(d.axis, 0, 1, 0);
        if (i == 3) {
            d.stiffness = 5.0;
            d.spring_ref = 0.1;
        }
        add_body(b, &d);
    }
    snprintf(parent, sizeof parent, "l%d", n - 1);
    const double zax[3] = {0, 0, 1}, mscale = massless ? 0.0 : 1.0;
    link_desc(&d, "crank", parent, 0.3 * mscale, 0.3); /* along the tip's y at q = 0 */
    d.placement.p[0] = 0.3;
    sd_m3_axis_angle(zax, HALF_PI, d.placement.R);
    d.armature = 0.02 * mscale;
    add_body(b, &d);
    link_desc(&d, "coupler", "crank", 0.4 * mscale, 0.4); /* along the tip's x */
    d.placement.p[0] = 0.3;
    sd_m3_axis_angle(zax, -HALF_PI, d.placement.R);
    d.damping = 0.1;
    add_body(b, &d);
    link_desc(&d, "rocker", parent, 0.3 * mscale, 0.3); /* along the tip's y, 0.4 further along x */
    d.placement.p[0] = 0.7;
    sd_m3_axis_angle(zax, HALF_PI, d.placement.R);
    add_body(b, &d);
    if (!massless) {
        link_desc(&d, "pendulum", "coupler", 0.2, 0.25);
        d.placement.p[0] = 0.2;
        sd_v3_set(d.axis, 1, 0, 0);
        add_body(b, &d);
    }
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = "four_bar";
    c.type = SD_CONSTRAINT_REVOLUTE;
    c.body_a = "coupler";
    c.frame_a.p[0] = 0.4;
    c.body_b = "rocker";
    c.frame_b.p[0] = 0.3;
    sd_m3_axis_angle(zax, -HALF_PI, c.frame_b.R);
    c.embed = 1;
    sd_error err;
    if (sd_builder_add_constraint(b, &c, &err) != SD_OK) {
        fprintf(stderr, "four-bar: %s\n", err.message);
        abort();
    }
    return build(b);
}

static void print_worst(const char *name, const worst *w)
{
    printf("%-24s %3d states | qdd %.1e  alpha %.1e  f %.1e  lambda %.1e  constraint f %.1e | M^-1 M - I %.1e  "
           "log det %.1e | cond(Y1) <= %.1e, forces not compared in %d\n",
           name, w->states, w->qdd, w->acc, w->force, w->lambda, w->cforce, w->minv, w->logdet, w->cond,
           w->indeterminate);
}

/* A massless four-bar: the forward dynamics, M^-1 and log det are SD_E_SINGULAR naming the loop; a
 * 3000-link chain with the four-bar at its tip (P's scale grows as N^3 against D's: the cheap
 * singularity test alone may refuse it) is not singular, and its qdd_tree is the tree-augmented one. */
static void check_singular_and_long(uint64_t *rng)
{
    sd_model *m = chain_four_bar_model(10, 1);
    const int nq = sd_model_nq(m);
    double *q = calloc((size_t)nq, sizeof *q);
    sd_configuration_neutral(m, q);
    sd_embed_options opt;
    sd_embed_options_init(&opt);
    opt.loops = "all";
    opt.q = q;
    sd_error err;
    sd_embedding *e = sd_embedding_new(m, &opt, &err);
    CHECK(e != NULL);
    if (e) {
        sd_embedded_data *ed = sd_embedded_data_new(e);
        const int ne = sd_embedding_nv(e);
        double *x = calloc((size_t)ne * ne + 1, sizeof *x), *y = calloc((size_t)ne + 1, sizeof *y), ld = 0.0;
        CHECK(sd_embedded_forward_dynamics(e, ed, q, x, x, NULL, y, NULL, NULL) == SD_E_SINGULAR);
        CHECK(strstr(sd_embedded_error(ed), "four_bar") != NULL);
        printf("massless four-bar: %s\n", sd_embedded_error(ed));
        CHECK(sd_embedded_mass_matrix_inverse(e, ed, q, x) == SD_E_SINGULAR);
        CHECK(sd_embedded_log_det(e, ed, q, &ld) == SD_E_SINGULAR);
        free(x);
        free(y);
        sd_embedded_data_free(ed);
        sd_embedding_free(e);
    }
    free(q);
    sd_model_free(m);
    /* the long chain: the embedded qdd_tree against the tree-augmented one (O(N) both; the dense
     * checks of check_state would be O(N^4) here) */
    m = chain_four_bar_model(3000, 0);
    const int nv = sd_model_nv(m);
    q = calloc((size_t)sd_model_nq(m), sizeof *q);
    sd_configuration_neutral(m, q);
    opt.q = q;
    e = sd_embedding_new(m, &opt, &err);
    CHECK(e != NULL);
    if (e) {
        sd_embedded_data *ed = sd_embedded_data_new(e);
        sd_data *d = sd_data_new(m);
        const int ne = sd_embedding_nv(e);
        double *ue = calloc((size_t)ne, sizeof *ue), *tau_e = calloc((size_t)ne, sizeof *tau_e);
        double *qdd_e = calloc((size_t)ne, sizeof *qdd_e), *qt = calloc((size_t)nv, sizeof *qt);
        double *ut = calloc((size_t)nv, sizeof *ut), *tau_t = calloc((size_t)nv, sizeof *tau_t);
        double *qdd_ta = calloc((size_t)nv, sizeof *qdd_ta), ld = NAN;
        random_vector(rng, ue, ne, 0.1);
        random_vector(rng, tau_e, ne, 1.0);
        for (int i = 0; i < ne; ++i) tau_t[sd_embedding_speed_index(e, i)] = tau_e[i];
        CHECK(sd_embedded_tree_speeds(e, ed, q, ue, ut) == SD_OK);
        const sd_status st = sd_embedded_forward_dynamics(e, ed, q, ue, tau_e, NULL, qdd_e, qt, NULL);
        CHECK(st == SD_OK);
        if (st != SD_OK) fprintf(stderr, "3000-link chain: %s\n", sd_embedded_error(ed));
        CHECK(sd_closed_loop_forward_dynamics(m, d, sd_embedded_configuration(ed), ut, tau_t, NULL, qdd_ta, NULL, NULL) ==
              SD_OK);
        const double eq = rel(qt, qdd_ta, nv);
        CHECK(eq < 1e-8);
        CHECK(sd_embedded_log_det(e, ed, q, &ld) == SD_OK && isfinite(ld));
        printf("3000-link chain + four-bar: qdd_tree vs tree-augmented %.1e, log det M_e %.6g\n", eq, ld);
        free(ue); free(tau_e); free(qdd_e); free(qt); free(ut); free(tau_t); free(qdd_ta);
        sd_data_free(d);
        sd_embedded_data_free(ed);
        sd_embedding_free(e);
    }
    free(q);
    sd_model_free(m);
}

/* The tree rebuilt with armature, damping and (revolute, prismatic) springs on every hinge. */
static sd_model *with_joint_dynamics(const sd_model *tree, uint64_t *rng)
{
    sd_builder *b = sd_builder_new();
    double g[3];
    sd_model_gravity(tree, g);
    sd_builder_set_gravity(b, g);
    for (int k = 0; k < sd_model_nbodies(tree); ++k) {
        sd_body_desc d = *sd_model_body_desc(tree, k);
        d.armature = 0.05 * sd_random_uniform(rng);
        d.damping = 0.2 * sd_random_uniform(rng);
        if (d.hinge == SD_HINGE_REVOLUTE || d.hinge == SD_HINGE_PRISMATIC) {
            d.stiffness = 2.0 * sd_random_uniform(rng);
            d.spring_ref = 0.3 * (sd_random_uniform(rng) - 0.5);
        }
        add_body(b, &d);
    }
    return build(b);
}


int main(int argc, char **argv)
{
    const char *folder = argc > 1 ? argv[1] : "models";
    uint64_t rng = 20261126;
    static const char *urdfs[] = {"four_bar.urdf", "slider_crank.urdf"};
    for (int i = 0; i < 2; ++i) {
        worst w = {0};
        sd_model *m = load_urdf(folder, urdfs[i]);
        CHECK(m != NULL);
        if (!m) continue;
        double *q0 = calloc((size_t)sd_model_nq(m), sizeof *q0);
        sd_configuration_reference(m, q0);
        CHECK(check_model(m, &rng, q0, "all", 8, &w, urdfs[i]) == 8);
        print_worst(urdfs[i], &w);
        free(q0);
        sd_model_free(m);
    }
    sd_model *mech[2] = {geared_motor_model(), chain_four_bar_model(10, 0)};
    static const char *mech_names[2] = {"geared motor", "chain + four-bar"};
    for (int i = 0; i < 2; ++i) {
        worst w = {0};
        double *q0 = calloc((size_t)sd_model_nq(mech[i]), sizeof *q0);
        sd_configuration_neutral(mech[i], q0);
        CHECK(check_model(mech[i], &rng, q0, "all", 8, &w, mech_names[i]) == 8);
        print_worst(mech_names[i], &w);
        free(q0);
        sd_model_free(mech[i]);
    }
    check_singular_and_long(&rng);
    /* random trees of every hinge type with random loops */
    worst w = {0}, wm = {0};
    int models = 0, embedded = 0, mixed_models = 0, mixed = 0;
    for (int trial = 0; trial < 60; ++trial) {
        const int n = 3 + (int)(sd_random_uniform(&rng) * 10);
        const int flags = (trial % 3 == 1 ? RT_MASSLESS : 0) | (trial % 5 == 2 ? RT_FREE_ROOT : 0) |
                          (trial % 7 == 3 ? RT_CHAIN : 0);
        sd_model *tree0 = random_tree(&rng, n, flags);
        sd_model *tree = with_joint_dynamics(tree0, &rng);
        double *q0 = malloc((size_t)sd_model_nq(tree) * sizeof *q0);
        sd_configuration_random(tree, &rng, q0);
        sd_model *m = close_randomly(tree, &rng, q0, NULL);
        if (m) {
            char label[64];
            snprintf(label, sizeof label, "random tree %d (n %d)", trial, n);
            ++models;
            if (check_model(m, &rng, q0, "all", 3, &w, label) > 0) ++embedded;
            if (sd_model_nconstraints(m) > 1) { /* c0 embedded, the others tree-augmented on top */
                ++mixed_models;
                if (check_model(m, &rng, q0, "c0", 3, &wm, label) > 0) ++mixed;
            }
        }
        sd_model_free(m);
        sd_model_free(tree);
        sd_model_free(tree0);
        free(q0);
    }
    print_worst("random trees + loops", &w);
    print_worst("  c0 embedded, rest TA", &wm);
    printf("random models %d, embedded and checked %d; with several loops %d, mixed and checked %d\n", models,
           embedded, mixed_models, mixed);
    CHECK(embedded >= models / 2 && embedded >= 20);
    CHECK(mixed >= mixed_models / 2 && mixed >= 10);
    return test_summary("test_embed_forward_dynamics");
}
