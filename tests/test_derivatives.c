/*
 * tests/test_derivatives.c — the derivatives of soadyn/derivatives.h against independent
 * computations: on random trees of every hinge type (1 to 300 bodies, free root or not) with random
 * armature, damping, springs and external forces,
 *   - every column of d tau/dq, d tau/du, d qdd/dq, d qdd/du, d qdd/d tau equals a 4th-order central
 *     difference of sd_inverse_dynamics / sd_forward_dynamics, q moved on the tangent space by
 *     sd_configuration_integrate, to 1e-7 of the column's size;
 *   - M d qdd/dx = -d tau/dx (x = q, u) at qdd = FD(tau) and M d qdd/d tau = 1, with M from the
 *     composite-body algorithm (not the articulated-body M^-1 the implementation uses), to 1e-10;
 *   - the tangent map: Tinv T = 1, and T a central difference of q (+) delta;
 *   - NULL outputs skip only themselves; the batched calls give the single calls' numbers bit for bit;
 * and the refusals: a non-finite input (SD_E_ARGUMENT), a model with a closure constraint
 * (SD_E_NOT_SUPPORTED, saying why). Models with flexible bodies: test_derivatives_flex.c.
 */
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "derivative_differences.h"
#include "loops/random_loops.h"
#include "random_tree.h"
#include "test_util.h"

static void must(sd_status st, const sd_error *err, const char *what)
{
    if (st != SD_OK) {
        fprintf(stderr, "%s: %s\n", what, err ? err->message : "failed");
        exit(2);
    }
}

/* Random armature, damping and springs on the model's speeds, through the parameter setters (a
 * quarter of the speeds get none of a kind; springs only where the hinge takes one). */
static void add_joint_terms(sd_model *m, uint64_t *rng)
{
    sd_error err;
    for (int v = 0; v < sd_model_nv(m); ++v) {
        const int k = sd_model_v_body(m, v);
        const sd_hinge_type h = sd_model_hinge(m, k);
        if (sd_random_uniform(rng) < 0.75) must(sd_model_set_armature(m, v, 0.5 * sd_random_uniform(rng), &err), &err, "armature");
        if (sd_random_uniform(rng) < 0.75) must(sd_model_set_damping(m, v, 2.0 * sd_random_uniform(rng), &err), &err, "damping");
        if ((h == SD_HINGE_REVOLUTE || h == SD_HINGE_PRISMATIC || h == SD_HINGE_SPHERICAL) && sd_random_uniform(rng) < 0.75)
            must(sd_model_set_stiffness(m, v, 5.0 * sd_random_uniform(rng), &err), &err, "stiffness");
        if (h == SD_HINGE_REVOLUTE || h == SD_HINGE_PRISMATIC)
            must(sd_model_set_spring_ref(m, v, 2.0 * sd_random_uniform(rng) - 1.0, &err), &err, "spring_ref");
    }
}

/* Each column of J within tol of Jref's, relative to the column's largest entry (with a floor of
 * 1e-6 of the matrix's largest, for columns that are zero, e.g. a free base's position). */
/* The worst column error seen per derivative, printed at the end (docs/derivatives.md's table). */
static struct {
    const char *what;
    double worst;
} seen[10];

static void note_worst(const char *what, double worst)
{
    for (int i = 0; i < 10; ++i) {
        if (!seen[i].what) seen[i].what = what;
        if (strcmp(seen[i].what, what) == 0) {
            if (worst > seen[i].worst) seen[i].worst = worst;
            return;
        }
    }
}

static void check_columns(const sd_model *m, const double *J, const double *Jref, double tol, const char *what, int n)
{
    const int nv = sd_model_nv(m);
    int worst_j = -1;
    double big = 0.0;
    for (int i = 0; i < nv * nv; ++i) big = fabs(Jref[i]) > big ? fabs(Jref[i]) : big;
    double worst = 0.0;
    for (int j = 0; j < nv; ++j) {
        double scale = 1e-6 * big, err = 0.0;
        for (int i = 0; i < nv; ++i) scale = fabs(Jref[i * nv + j]) > scale ? fabs(Jref[i * nv + j]) : scale;
        for (int i = 0; i < nv; ++i) err = fabs(J[i * nv + j] - Jref[i * nv + j]) > err ? fabs(J[i * nv + j] - Jref[i * nv + j]) : err;
        if (scale > 0.0 && err / scale > worst) worst = err / scale, worst_j = j;
    }
    note_worst(what, worst);
    if (!(worst <= tol))
        fprintf(stderr, "%s (n = %d): worst column error %.3g > %.3g, column %d (a %s hinge)\n", what, n, worst, tol,
                worst_j, sd_hinge_type_name(sd_model_hinge(m, sd_model_v_body(m, worst_j))));
    CHECK(worst <= tol);
}

/* Turn every spherical hinge at least 0.2 rad short of a half turn: there its spring's rotation
 * vector (the shorter way round) jumps, so the spring force has no derivative and the differences
 * straddling it mean nothing. */
static void away_from_half_turn(const sd_model *m, double *q)
{
    for (int k = 0; k < sd_model_nbodies(m); ++k) {
        if (sd_model_hinge(m, k) != SD_HINGE_SPHERICAL) continue;
        double *w = q + sd_model_q_index(m, k);
        if (fabs(w[0]) >= 0.1) continue;
        w[0] = w[0] < 0 ? -0.5 : 0.5;
        const double n = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2] + w[3] * w[3]);
        for (int i = 0; i < 4; ++i) w[i] /= n;
    }
}

static void check_model(sd_model *m, uint64_t *rng, int n)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), nb = sd_model_nbodies(m);
    const size_t vv = (size_t)nv * (size_t)nv;
    sd_data *d = sd_data_new(m);
    double *q = malloc(sizeof(double) * (size_t)nq), *u = malloc(sizeof(double) * (size_t)nv);
    double *qdd = malloc(sizeof(double) * (size_t)nv), *tau = malloc(sizeof(double) * (size_t)nv);
    double *f_ext = malloc(sizeof(double) * 6 * (size_t)nb), *out = malloc(sizeof(double) * (size_t)nv);
    double *A = malloc(sizeof(double) * vv), *B = malloc(sizeof(double) * vv), *C = malloc(sizeof(double) * vv);
    double *D = malloc(sizeof(double) * vv), *E = malloc(sizeof(double) * vv), *R = malloc(sizeof(double) * vv);
    double *M = malloc(sizeof(double) * vv);
    random_state(m, rng, q, u, qdd);
    away_from_half_turn(m, q);
    random_vector(rng, f_ext, 6 * nb, 2.0);
    random_vector(rng, tau, nv, 3.0);
    /* tau and qdd are quadratic in u and linear in qdd and tau, where the 4th-order difference is
     * exact at any step: a long one keeps the rounding small. Along q the step balances the
     * truncation (h^4) against the rounding (eps |tau| / h): 4e-3 gave the smallest errors of
     * 1e-3 .. 1e-2 (about 1.5e-8 of a column's largest entry). */
    const double h = 4e-3, h_ux = 0.1;

    /* inverse dynamics */
    problem id = {m, d, f_ext, 0, 4};
    CHECK(sd_inverse_dynamics_derivatives(m, d, q, u, qdd, f_ext, out, A, B) == SD_OK);
    double *tau_ref = malloc(sizeof(double) * (size_t)nv);
    evaluate(&id, q, u, qdd, tau_ref);
    CHECK(memcmp(out, tau_ref, sizeof(double) * (size_t)nv) == 0); /* tau is sd_inverse_dynamics' own */
    difference(&id, 0, q, u, qdd, h, R);
    check_columns(m, A, R, 1e-7, "dtau/dq", n);
    difference(&id, 1, q, u, qdd, h_ux, R);
    check_columns(m, B, R, 1e-7, "dtau/du", n);
    /* one output alone: the same numbers */
    CHECK(sd_inverse_dynamics_derivatives(m, d, q, u, qdd, f_ext, NULL, NULL, C) == SD_OK);
    CHECK(memcmp(B, C, sizeof(double) * vv) == 0);

    /* forward dynamics */
    problem fd = {m, d, f_ext, 1, 4};
    CHECK(sd_forward_dynamics_derivatives(m, d, q, u, tau, f_ext, out, A, B, C) == SD_OK);
    difference(&fd, 0, q, u, tau, h, R);
    check_columns(m, A, R, 1e-7, "dqdd/dq", n);
    difference(&fd, 1, q, u, tau, h_ux, R);
    check_columns(m, B, R, 1e-7, "dqdd/du", n);
    difference(&fd, 2, q, u, tau, h_ux, R);
    check_columns(m, C, R, 1e-7, "dqdd/dtau", n);
    /* the identities, with the composite-body M */
    CHECK(sd_inverse_dynamics_derivatives(m, d, q, u, out, f_ext, NULL, D, E) == SD_OK);
    CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
    const double r_q = residual(M, A, D, nv, 0), r_u = residual(M, B, E, nv, 0), r_t = residual(M, C, NULL, nv, 1);
    if (r_q > 1e-10 || r_u > 1e-10 || r_t > 1e-10)
        fprintf(stderr, "identities (n = %d): M dqdd/dq + dtau/dq %.3g, M dqdd/du + dtau/du %.3g, M dqdd/dtau - 1 %.3g\n",
                n, r_q, r_u, r_t);
    CHECK(r_q <= 1e-10 && r_u <= 1e-10 && r_t <= 1e-10);
    note_worst("M dqdd/dq + dtau/dq", r_q);
    note_worst("M dqdd/du + dtau/du", r_u);
    note_worst("M dqdd/dtau - 1", r_t);
    /* skipping outputs changes nothing else */
    CHECK(sd_forward_dynamics_derivatives(m, d, q, u, tau, f_ext, NULL, NULL, D, NULL) == SD_OK);
    CHECK(memcmp(B, D, sizeof(double) * vv) == 0);
    /* every subset of the outputs: the call solves those asked for side by side in one block,
     * each at its own offset, and each must come out as in the full call (M^-1 alone is the
     * articulated-body recursion's, checked against the differences above) */
    for (int mask = 1; mask < 8; ++mask) {
        if (mask == 4) continue;
        double *const full[3] = {A, B, C};
        double *sub[3] = {mask & 1 ? D : NULL, mask & 2 ? E : NULL, mask & 4 ? R : NULL};
        CHECK(sd_forward_dynamics_derivatives(m, d, q, u, tau, f_ext, NULL, sub[0], sub[1], sub[2]) == SD_OK);
        for (int b = 0; b < 3; ++b) CHECK(!sub[b] || memcmp(sub[b], full[b], sizeof(double) * vv) == 0);
    }

    free(q), free(u), free(qdd), free(tau), free(f_ext), free(out), free(tau_ref);
    free(A), free(B), free(C), free(D), free(E), free(R), free(M);
    sd_data_free(d);
}

static void check_tangent_map(const sd_model *m, uint64_t *rng)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *q = malloc(sizeof(double) * (size_t)nq), *u = malloc(sizeof(double) * (size_t)nv);
    double *w = malloc(sizeof(double) * (size_t)nv), *e = calloc((size_t)nv, sizeof(double));
    double *qp = malloc(sizeof(double) * (size_t)nq), *qm = malloc(sizeof(double) * (size_t)nq);
    double *T = malloc(sizeof(double) * (size_t)nq * nv), *Ti = malloc(sizeof(double) * (size_t)nq * nv);
    random_state(m, rng, q, u, w);
    sd_configuration_tangent_map(m, q, T, Ti);
    double worst = 0.0;
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j) {
            double s = i == j ? -1.0 : 0.0;
            for (int k = 0; k < nq; ++k) s += Ti[i * nq + k] * T[k * nv + j];
            worst = fabs(s) > worst ? fabs(s) : worst;
        }
    CHECK(worst <= 1e-14);
    const double h = 1e-6; /* second-order difference: error ~h^2 */
    double worst_T = 0.0;
    for (int j = 0; j < nv; ++j) {
        e[j] = h;
        sd_configuration_integrate(m, q, e, 1.0, qp);
        e[j] = -h;
        sd_configuration_integrate(m, q, e, 1.0, qm);
        e[j] = 0.0;
        for (int k = 0; k < nq; ++k) {
            const double diff = fabs((qp[k] - qm[k]) / (2 * h) - T[k * nv + j]);
            worst_T = diff > worst_T ? diff : worst_T;
        }
    }
    if (worst_T > 1e-8) fprintf(stderr, "tangent map vs difference: %.3g\n", worst_T);
    CHECK(worst_T <= 1e-8);
    free(q), free(u), free(w), free(e), free(qp), free(qm), free(T), free(Ti);
}

static void check_batch(const sd_model *m, uint64_t *rng)
{
    enum { N = 5 };
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), nb = sd_model_nbodies(m);
    double *q = malloc(sizeof(double) * N * (size_t)nq), *u = malloc(sizeof(double) * N * (size_t)nv);
    double *x = malloc(sizeof(double) * N * (size_t)nv), *fe = malloc(sizeof(double) * N * 6 * (size_t)nb);
    double *out = malloc(sizeof(double) * N * (size_t)nv), *J = malloc(sizeof(double) * N * (size_t)nv * (size_t)nv);
    for (int i = 0; i < N; ++i) random_state(m, rng, q + i * nq, u + i * nv, x + i * nv);
    random_vector(rng, fe, N * 6 * nb, 1.0);
    sd_error err;
    sd_batch *b = sd_batch_new(m, 2, &err);
    CHECK(batch_matches_single(m, b, N, q, u, x, fe));
    /* a NaN in state 3: that state's error */
    q[3 * nq] = NAN;
    CHECK(sd_batch_forward_dynamics_derivatives(b, N, q, u, x, fe, out, J, NULL, NULL) == SD_E_ARGUMENT);
    CHECK(sd_batch_error_state(b) == 3);
    sd_batch_free(b);
    free(q), free(u), free(x), free(fe), free(out), free(J);
}

static void check_refusals(uint64_t *rng)
{
    sd_model *m = random_tree(rng, 4, RT_FREE_ROOT);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    sd_data *d = sd_data_new(m);
    double q[64], u[64], x[64], J[64 * 64];
    random_state(m, rng, q, u, x);
    u[2] = NAN;
    CHECK(sd_inverse_dynamics_derivatives(m, d, q, u, x, NULL, NULL, J, NULL) == SD_E_ARGUMENT);
    CHECK(strstr(sd_data_error(d), "u[2]") != NULL);
    u[2] = 0.0;
    x[nv - 1] = INFINITY;
    CHECK(sd_forward_dynamics_derivatives(m, d, q, u, x, NULL, NULL, J, NULL, NULL) == SD_E_ARGUMENT);
    CHECK(strstr(sd_data_error(d), "tau") != NULL);
    CHECK(sd_forward_dynamics_derivatives(m, d, q, u, NULL, NULL, NULL, J, NULL, NULL) == SD_E_ARGUMENT);
    (void)nq;
    sd_data_free(d);
    sd_model_free(m);

    /* a closed loop: a random tree closed by random constraints (tests/loops/random_loops.c) */
    sd_model *loop = NULL;
    while (!loop) {
        sd_model *tree = random_tree(rng, 6, RT_ONLY_1DOF);
        double q0[8];
        sd_configuration_neutral(tree, q0);
        loop = close_randomly(tree, rng, q0, NULL);
        sd_model_free(tree);
    }
    sd_data *dl = sd_data_new(loop);
    random_state(loop, rng, q, u, x);
    CHECK(sd_forward_dynamics_derivatives(loop, dl, q, u, x, NULL, NULL, J, NULL, NULL) == SD_E_NOT_SUPPORTED);
    CHECK(strstr(sd_data_error(dl), "closure constraints") != NULL);
    CHECK(sd_inverse_dynamics_derivatives(loop, dl, q, u, x, NULL, NULL, J, NULL) == SD_E_NOT_SUPPORTED);
    sd_data_free(dl);
    sd_model_free(loop);
}

/* A forest: a free root with a revolute child, and a second root (revolute) carrying a spherical
 * and a universal hinge. The recursion works in body 0's axes and places another root through
 * body 0's inverse placement; random_tree's models have one root. */
static sd_model *forest(uint64_t *rng)
{
    static const struct {
        const char *name, *parent;
        sd_hinge_type hinge;
    } bodies[5] = {{"a", NULL, SD_HINGE_FREE},
                   {"b", "a", SD_HINGE_REVOLUTE},
                   {"c", NULL, SD_HINGE_REVOLUTE},
                   {"d", "c", SD_HINGE_SPHERICAL},
                   {"e", "d", SD_HINGE_UNIVERSAL}};
    sd_builder *b = sd_builder_new();
    const double g[3] = {0.3, -0.2, -9.81};
    sd_builder_set_gravity(b, g);
    for (int k = 0; k < 5; ++k) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        d.name = bodies[k].name;
        d.parent = bodies[k].parent;
        d.hinge = bodies[k].hinge;
        const double angle = 0.3 + k, c = cos(angle), s = sin(angle); /* a turn about z */
        const double R[9] = {c, -s, 0, s, c, 0, 0, 0, 1};
        memcpy(d.placement.R, R, sizeof R);
        random_vector(rng, d.placement.p, 3, 0.5);
        random_vector(rng, d.axis, 3, 1.0);
        random_vector(rng, d.axis2, 3, 1.0);
        d.mass = 0.5 + k;
        random_vector(rng, d.com, 3, 0.3);
        d.inertia[0] = d.inertia[4] = d.inertia[8] = 0.1 * d.mass;
        sd_error err;
        must(sd_builder_add_body(b, &d, &err), &err, "forest body");
    }
    sd_model *m = NULL;
    sd_error err;
    must(sd_builder_build(b, &m, &err), &err, "forest");
    sd_builder_free(b);
    return m;
}

/* The forward dynamics derivatives read the velocities, accelerations and forces of the
 * articulated-body recursion run with its inter-body forces, in place of an inverse dynamics at
 * qdd: their qdd is sd_forward_dynamics' own, bit for bit, and the workspace's readers then see the
 * inverse dynamics at (q, u, qdd) (soadyn/derivatives.h), to round-off. */
static void check_forward_state(const sd_model *m, uint64_t *rng)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), nb = sd_model_nbodies(m);
    sd_data *d = sd_data_new(m);
    double *q = malloc(sizeof(double) * (size_t)nq), *u = malloc(sizeof(double) * (size_t)nv);
    double *tau = malloc(sizeof(double) * (size_t)nv), *qdd = malloc(sizeof(double) * (size_t)nv);
    double *qdd_ref = malloc(sizeof(double) * (size_t)nv), *J = malloc(sizeof(double) * (size_t)nv * (size_t)nv);
    double *f_ext = malloc(sizeof(double) * 6 * (size_t)nb), *x = malloc(sizeof(double) * 12 * (size_t)nb);
    random_state(m, rng, q, u, tau);
    random_vector(rng, f_ext, 6 * nb, 2.0);
    CHECK(sd_forward_dynamics(m, d, q, u, tau, f_ext, qdd_ref) == SD_OK);
    /* the readers after the inverse dynamics at the reference qdd */
    CHECK(sd_inverse_dynamics(m, d, q, u, qdd_ref, f_ext, x) == SD_OK);
    for (int k = 0; k < nb; ++k) {
        CHECK(sd_body_acceleration(m, d, k, x + 12 * k) == SD_OK);
        CHECK(sd_interbody_force(m, d, k, SD_FRAME_BODY, x + 12 * k + 6) == SD_OK);
    }
    CHECK(sd_forward_dynamics_derivatives(m, d, q, u, tau, f_ext, qdd, J, NULL, NULL) == SD_OK);
    CHECK(memcmp(qdd, qdd_ref, sizeof(double) * (size_t)nv) == 0);
    double worst = 0.0;
    for (int k = 0; k < nb; ++k) {
        double y[12];
        CHECK(sd_body_acceleration(m, d, k, y) == SD_OK);
        CHECK(sd_interbody_force(m, d, k, SD_FRAME_BODY, y + 6) == SD_OK);
        double size = 1.0;
        for (int r = 0; r < 12; ++r) size = fmax(size, fabs(x[12 * k + r]));
        for (int r = 0; r < 12; ++r) worst = fmax(worst, fabs(y[r] - x[12 * k + r]) / size);
    }
    CHECK(worst <= 1e-10);
    note_worst("readers after FD deriv", worst);
    free(q), free(u), free(tau), free(qdd), free(qdd_ref), free(J), free(f_ext), free(x);
    sd_data_free(d);
}

int main(void)
{
    uint64_t rng = 0x5eed5eedULL;
    static const int sizes[] = {1, 2, 5, 12, 40, 300};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (int variant = 0; variant < 3; ++variant) {
            const int n = sizes[s];
            if (n == 300 && variant > 0) continue; /* one large tree keeps the test quick */
            const int flags = (variant == 1 ? RT_FREE_ROOT : 0) | (variant == 2 ? RT_MASSLESS | RT_CHAIN : 0);
            sd_model *m = random_tree(&rng, n, flags);
            if (variant != 2 || n < 40) add_joint_terms(m, &rng);
            check_model(m, &rng, n);
            check_tangent_map(m, &rng);
            check_forward_state(m, &rng);
            if (n == 12) check_batch(m, &rng);
            sd_model_free(m);
        }
    sd_model *m = forest(&rng);
    add_joint_terms(m, &rng);
    check_model(m, &rng, 5);
    check_forward_state(m, &rng);
    sd_model_free(m);
    check_refusals(&rng);
    for (int i = 0; i < 10 && seen[i].what; ++i) printf("worst relative error, %-27s %.2g\n", seen[i].what, seen[i].worst);
    return test_summary("test_derivatives");
}
