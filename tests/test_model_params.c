/*
 * tests/test_model_params.c — the parameter setters (soadyn/params.h) against rebuilding the model
 * from scratch with the new parameters: on random trees of every hinge type and on random trees with
 * flexible bodies, a copy of the model (the original freed at once, so that a shared array would show
 * under the sanitizers) gets random gravity, inertias and joint terms through the setters; the
 * builder then makes the same model from the copy's descriptions. The inverse dynamics, the forward
 * dynamics and M at random states agree bit for bit, evaluated with workspaces and a batch context
 * made before the setters ran (so a stale cache would show). The modal setter against physics: a
 * cantilever beam of bending stiffness EI given the frequencies of the beam of 2 EI (omega scales
 * with sqrt(EI), the mode shapes do not change) and new damping ratios is that beam, to round-off.
 * And the refusals: the builder's messages, file:line, the model unchanged.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "flex/flex_body.h"
#include "flex/random_flex.h"
#include "internal.h"
#include "random_tree.h"
#include "test_util.h"

static double uniform(uint64_t *rng, double lo, double hi) { return lo + (hi - lo) * sd_random_uniform(rng); }

/* The model made anew by the builder from m's descriptions, gravity and flexible bodies. */
static sd_model *rebuild(const sd_model *m)
{
    sd_builder *b = sd_builder_new();
    double g[3];
    sd_model_gravity(m, g);
    sd_builder_set_gravity(b, g);
    sd_error err;
    for (int k = 0; k < sd_model_nbodies(m); ++k) {
        if (sd_builder_add_body(b, sd_model_body_desc(m, k), &err) != SD_OK) {
            fprintf(stderr, "rebuild: add_body: %s\n", err.message);
            exit(2);
        }
        if (m->nflex && m->flex[k] &&
            sd_builder_set_flexible(b, m->desc[k].name, sd_flex_body_desc(m->flex[k]), &err) != SD_OK) {
            fprintf(stderr, "rebuild: set_flexible: %s\n", err.message);
            exit(2);
        }
    }
    sd_model *out = NULL;
    if (sd_builder_build(b, &out, &err) != SD_OK) {
        fprintf(stderr, "rebuild: build: %s\n", err.message);
        exit(2);
    }
    sd_builder_free(b);
    return out;
}

static void must(sd_status st, const sd_error *err, const char *what)
{
    if (st != SD_OK) {
        fprintf(stderr, "%s: %s\n", what, err->message);
        exit(2);
    }
}

/* Random new parameters for every body and hinge of m, through the setters. Every speed of a hinge
 * gets the same terms (what a description can hold, for the rebuild). */
static void disperse(sd_model *m, uint64_t *rng)
{
    sd_error err;
    const double g[3] = {uniform(rng, -2, 2), uniform(rng, -2, 2), uniform(rng, -12, -8)};
    must(sd_model_set_gravity(m, g, &err), &err, "gravity");
    for (int k = 0; k < sd_model_nbodies(m); ++k) {
        const double s = uniform(rng, 0.5, 1.5), mass = sd_model_body_mass(m, k) * s;
        const double *c0 = sd_model_body_com(m, k), *I0 = sd_model_body_inertia(m, k);
        double com[3], I[9];
        for (int i = 0; i < 3; ++i) com[i] = mass > 0 ? c0[i] + uniform(rng, -0.05, 0.05) : 0.0;
        for (int i = 0; i < 9; ++i) I[i] = I0[i] * s;
        must(sd_model_set_body_inertia(m, k, mass, com, I, &err), &err, "body inertia");
        const sd_hinge_type h = sd_model_hinge(m, k);
        const int v0 = sd_model_v_index(m, k), nk = sd_model_hinge_nv(m, k);
        const double arm = uniform(rng, 0, 0.3), damp = uniform(rng, 0, 1.0), stiff = uniform(rng, 0, 4.0),
                     ref = uniform(rng, -1, 1);
        for (int i = 0; i < nk; ++i) {
            must(sd_model_set_armature(m, v0 + i, arm, &err), &err, "armature");
            must(sd_model_set_damping(m, v0 + i, damp, &err), &err, "damping");
        }
        if (h == SD_HINGE_REVOLUTE || h == SD_HINGE_PRISMATIC) {
            must(sd_model_set_stiffness(m, v0, stiff, &err), &err, "stiffness");
            must(sd_model_set_spring_ref(m, v0, ref, &err), &err, "spring_ref");
        } else if (h == SD_HINGE_SPHERICAL) {
            must(sd_model_set_stiffness(m, v0 + nk - 1, stiff, &err), &err, "stiffness"); /* sets all three */
        }
    }
}

static int same_bits(const double *a, const double *b, size_t n) { return memcmp(a, b, n * sizeof(double)) == 0; }

/* ID, FD and M of a and b at random states, bit for bit; da was made for a before its setters. */
static void compare_models(sd_model *a, sd_data *da, sd_batch *ba, const sd_model *b, uint64_t *rng,
                           int flexible, const char *what)
{
    const int nq = sd_model_nq(a), nv = sd_model_nv(a);
    CHECK(nq == sd_model_nq(b) && nv == sd_model_nv(b));
    CHECK_CLOSE(sd_model_total_mass(a), sd_model_total_mass(b), 1e-15);
    sd_data *db = sd_data_new(b);
    double *q = malloc((size_t)nq * sizeof(double)), *u = malloc((size_t)nv * sizeof(double)),
           *w = malloc((size_t)nv * sizeof(double)), *x1 = malloc((size_t)nv * sizeof(double)),
           *x2 = malloc((size_t)nv * sizeof(double)), *M1 = malloc((size_t)nv * nv * sizeof(double)),
           *M2 = malloc((size_t)nv * nv * sizeof(double));
    int id_ok = 1, fd_ok = 1, m_ok = 1;
    for (int s = 0; s < 4; ++s) {
        if (flexible) random_flex_state(a, rng, 0.1, q, u, w);
        else random_state(a, rng, q, u, w);
        id_ok &= sd_inverse_dynamics(a, da, q, u, w, NULL, x1) == SD_OK &&
                 sd_inverse_dynamics(b, db, q, u, w, NULL, x2) == SD_OK && same_bits(x1, x2, (size_t)nv);
        fd_ok &= sd_forward_dynamics(a, da, q, u, w, NULL, x1) == SD_OK &&
                 sd_forward_dynamics(b, db, q, u, w, NULL, x2) == SD_OK && same_bits(x1, x2, (size_t)nv);
        m_ok &= sd_mass_matrix(a, da, q, M1) == SD_OK && sd_mass_matrix(b, db, q, M2) == SD_OK &&
                same_bits(M1, M2, (size_t)nv * nv);
        if (ba) { /* the batch made before the setters against one made for the rebuilt model */
            sd_error err;
            sd_batch *bb = sd_batch_new(b, 1, &err);
            fd_ok &= sd_forward_dynamics_batch(ba, 1, q, u, w, NULL, x1, NULL) == SD_OK &&
                     sd_forward_dynamics_batch(bb, 1, q, u, w, NULL, x2, NULL) == SD_OK && same_bits(x1, x2, (size_t)nv);
            CHECK(sd_batch_simd_lanes(ba) == sd_batch_simd_lanes(bb)); /* a spherical spring: both scalar */
            sd_batch_free(bb);
        }
    }
    if (!id_ok || !fd_ok || !m_ok) fprintf(stderr, "%s: ID %d FD %d M %d (1: bit for bit)\n", what, id_ok, fd_ok, m_ok);
    CHECK(id_ok);
    CHECK(fd_ok);
    CHECK(m_ok);
    free(q), free(u), free(w), free(x1), free(x2), free(M1), free(M2);
    sd_data_free(db);
}

static void test_random_trees(void)
{
    uint64_t rng = 0x5eed1234abcdull;
    const int flags[] = {0, RT_FREE_ROOT, RT_CHAIN | RT_MASSLESS, RT_AXIS_ALIGNED | RT_UNROTATED, RT_FREE_ROOT | RT_MASSLESS};
    const int sizes[] = {1, 3, 8, 20, 40};
    for (int f = 0; f < 5; ++f)
        for (int s = 0; s < 5; ++s) {
            sd_model *original = random_tree(&rng, sizes[s], flags[f]);
            sd_error err;
            sd_model *m = sd_model_copy(original, &err);
            CHECK(m != NULL);
            sd_model_free(original); /* nothing of the copy may live in it */
            sd_data *d = sd_data_new(m);
            sd_batch *batch = sd_batch_new(m, 1, &err);
            const size_t nv = (size_t)sd_model_nv(m);
            double *q = malloc((size_t)sd_model_nq(m) * sizeof(double)), *qdd = malloc(nv * sizeof(double)),
                   *tau = calloc(nv, sizeof(double));
            random_state(m, &rng, q, NULL, NULL);
            CHECK(sd_forward_dynamics(m, d, q, NULL, tau, NULL, qdd) == SD_OK); /* results held before the change */
            CHECK(sd_forward_dynamics_batch(batch, 1, q, NULL, tau, NULL, qdd, NULL) == SD_OK);
            disperse(m, &rng);
            /* a reader of the old results is told to evaluate again */
            double fk[6];
            CHECK(sd_interbody_force(m, d, 0, SD_FRAME_BODY, fk) == SD_E_ARGUMENT);
            CHECK(strstr(sd_data_error(d), "parameters changed") != NULL);
            sd_model *fresh = rebuild(m);
            char what[64];
            snprintf(what, sizeof what, "random tree n=%d flags=%d", sizes[s], flags[f]);
            compare_models(m, d, batch, fresh, &rng, 0, what);
            free(q), free(qdd), free(tau);
            sd_batch_free(batch);
            sd_data_free(d);
            sd_model_free(m);
            sd_model_free(fresh);
        }
}

static void test_flexible_trees(void)
{
    uint64_t rng = 0xf1e8b0d1e5ull;
    const int flags[] = {RF_JOINT_DYNAMICS, RF_JOINT_DYNAMICS | RF_FREE_ROOT | RF_ALL_FLEXIBLE,
                         RF_JOINT_DYNAMICS | RF_MIXED_MASS | RF_ON_NODES, RF_JOINT_DYNAMICS | RF_LINEARISED};
    for (int f = 0; f < 4; ++f)
        for (int n = 2; n <= 8; n += 3) {
            const random_flex_spec spec = {n, 4, flags[f], 0.2};
            sd_model *original = random_flex_tree(&rng, &spec);
            sd_error err;
            sd_model *m = sd_model_copy(original, &err);
            CHECK(m != NULL);
            sd_model_free(original);
            sd_data *d = sd_data_new(m);
            disperse(m, &rng);
            sd_model *fresh = rebuild(m);
            char what[64];
            snprintf(what, sizeof what, "flexible tree n=%d flags=%d", n, flags[f]);
            compare_models(m, d, NULL, fresh, &rng, 1, what);
            sd_data_free(d);
            sd_model_free(m);
            sd_model_free(fresh);
        }
}

/* A revolute hinge carrying a cantilever beam along x, bending in both planes. */
static sd_model *beam_model(double EI, double zeta)
{
    sd_beam_spec spec;
    sd_beam_spec_init(&spec);
    spec.length = 2.0;
    spec.EI = EI;
    spec.mass_per_length = 3.0;
    spec.elements = 8;
    spec.modes = 4;
    spec.damping_ratio = zeta;
    sd_flex_data *data = NULL;
    sd_error err;
    must(sd_beam_modes(&spec, &data, &err), &err, "beam");
    sd_builder *b = sd_builder_new();
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "arm";
    d.hinge = SD_HINGE_REVOLUTE;
    d.axis[0] = 0, d.axis[1] = 1, d.axis[2] = 0;
    d.mass = 0.5;
    d.inertia[0] = d.inertia[4] = d.inertia[8] = 0.01;
    must(sd_builder_add_body(b, &d, &err), &err, "beam body");
    must(sd_builder_set_flexible(b, "arm", sd_flex_data_desc(data), &err), &err, "beam flexible");
    sd_model *m = NULL;
    must(sd_builder_build(b, &m, &err), &err, "beam build");
    sd_builder_free(b);
    sd_flex_data_free(data);
    return m;
}

static void test_modal_setter(void)
{
    sd_model *soft = beam_model(1.0, 0.01), *stiff = beam_model(2.0, 0.03);
    const int nm = sd_model_body_nmodes(soft, 0), nq = sd_model_nq(soft), nv = sd_model_nv(soft);
    double omega[8], omega2[8], zeta[8], got[8];
    sd_error err;
    must(sd_model_flex_frequencies(soft, 0, omega, &err), &err, "frequencies");
    must(sd_model_flex_damping_ratios(soft, 0, zeta, &err), &err, "damping ratios");
    for (int r = 0; r < nm; ++r) CHECK_CLOSE(zeta[r], 0.01, 1e-13);
    for (int r = 0; r < nm; ++r) omega2[r] = omega[r] * sqrt(2.0), zeta[r] = 0.03;
    sd_data *d = sd_data_new(soft), *ds = sd_data_new(stiff);
    double q[16], u[16], w[16], x1[16], x2[16], M1[256], M2[256];
    uint64_t rng = 77;
    random_flex_state(soft, &rng, 0.05, q, u, w);
    CHECK(sd_inverse_dynamics(soft, d, q, u, w, NULL, x1) == SD_OK);
    CHECK(sd_inverse_dynamics(stiff, ds, q, u, w, NULL, x2) == SD_OK);
    CHECK(test_rel_diff(x1, x2, nv) > 1e-3); /* the two beams differ before the change */
    must(sd_model_set_flex_modes(soft, 0, omega2, zeta, &err), &err, "set modes");
    must(sd_model_flex_frequencies(soft, 0, got, &err), &err, "frequencies after");
    CHECK_ARRAY_CLOSE(got, omega2, nm, 1e-13, "frequencies after the setter");
    must(sd_model_flex_damping_ratios(soft, 0, got, &err), &err, "damping ratios after");
    CHECK_ARRAY_CLOSE(got, zeta, nm, 1e-13, "damping ratios after the setter");
    for (int s = 0; s < 3; ++s) {
        random_flex_state(soft, &rng, 0.05, q, u, w);
        CHECK(sd_inverse_dynamics(soft, d, q, u, w, NULL, x1) == SD_OK);
        CHECK(sd_inverse_dynamics(stiff, ds, q, u, w, NULL, x2) == SD_OK);
        CHECK_ARRAY_CLOSE(x1, x2, nv, 1e-12, "ID of the beam given 2 EI's modes vs the beam of 2 EI");
        CHECK(sd_forward_dynamics(soft, d, q, u, w, NULL, x1) == SD_OK);
        CHECK(sd_forward_dynamics(stiff, ds, q, u, w, NULL, x2) == SD_OK);
        CHECK_ARRAY_CLOSE(x1, x2, nv, 1e-11, "FD of the beam given 2 EI's modes vs the beam of 2 EI");
        CHECK(sd_mass_matrix(soft, d, q, M1) == SD_OK && sd_mass_matrix(stiff, ds, q, M2) == SD_OK);
        CHECK_ARRAY_CLOSE(M1, M2, nv * nv, 1e-13, "M (the mode shapes of the two beams agree to round-off)");
    }
    (void)nq;
    /* refusals leave the body as it was */
    omega2[1] = -1.0;
    CHECK(sd_model_set_flex_modes(soft, 0, omega2, zeta, &err) == SD_E_MODEL);
    CHECK(strstr(err.message, "flexible body 'arm': natural frequency omega[1] = -1 rad/s") != NULL);
    omega2[1] = 1e20; /* K = omega^2 beyond the bound of modal coefficients */
    CHECK(sd_model_set_flex_modes(soft, 0, omega2, zeta, &err) == SD_E_MODEL);
    CHECK(strstr(err.message, "arm") != NULL);
    must(sd_model_flex_frequencies(soft, 0, got, &err), &err, "frequencies after refusals");
    CHECK_CLOSE(got[1], omega[1] * sqrt(2.0), 1e-13);
    CHECK(sd_model_set_flex_modes(soft, 0, NULL, zeta, &err) == SD_E_ARGUMENT);
    sd_data_free(d);
    sd_data_free(ds);
    sd_model_free(soft);
    sd_model_free(stiff);
}

/* A closed chain (a distance constraint from the last body to a world point) copied, the original
 * freed: the copy's closed-loop forward dynamics is the original's, bit for bit, and its constraint
 * names and source are its own. */
static void test_copy_with_loops(void)
{
    sd_builder *b = sd_builder_new();
    sd_error err;
    const char *names[3] = {"l1", "l2", "l3"};
    for (int k = 0; k < 3; ++k) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        d.name = names[k];
        d.parent = k ? names[k - 1] : NULL;
        d.hinge = SD_HINGE_REVOLUTE;
        d.placement.p[0] = k ? 1.0 : 0.0;
        d.mass = 1.0 + k;
        d.com[0] = 0.5;
        d.inertia[0] = d.inertia[4] = d.inertia[8] = 0.1;
        must(sd_builder_add_body(b, &d, &err), &err, "loop body");
    }
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = "tie";
    c.type = SD_CONSTRAINT_DISTANCE;
    c.body_a = "l3";
    c.frame_a.p[0] = 1.0;
    c.frame_b.p[0] = 2.5;
    c.distance = 1.2;
    c.source_file = "loop.urdf";
    c.source_line = 9;
    must(sd_builder_add_constraint(b, &c, &err), &err, "constraint");
    sd_model *original = NULL;
    must(sd_builder_build(b, &original, &err), &err, "loop build");
    sd_builder_free(b);
    const double q[3] = {0.3, -0.7, 0.4}, u[3] = {0.1, 0.2, -0.3}, tau[3] = {0.5, 0, -0.2};
    double qdd1[3], qdd2[3], lambda1[1], lambda2[1];
    sd_data *d1 = sd_data_new(original);
    CHECK(sd_closed_loop_forward_dynamics(original, d1, q, u, tau, NULL, qdd1, lambda1, NULL) == SD_OK);
    sd_data_free(d1);
    sd_model *copy = sd_model_copy(original, &err);
    CHECK(copy != NULL);
    sd_model_free(original);
    sd_data *d2 = sd_data_new(copy);
    CHECK(sd_closed_loop_forward_dynamics(copy, d2, q, u, tau, NULL, qdd2, lambda2, NULL) == SD_OK);
    CHECK(same_bits(qdd1, qdd2, 3) && same_bits(lambda1, lambda2, 1));
    CHECK(sd_model_nconstraints(copy) == 1 && strcmp(sd_model_constraint_name(copy, 0), "tie") == 0);
    sd_data_free(d2);
    sd_model_free(copy);
}

static void test_refusals(void)
{
    sd_builder *b = sd_builder_new();
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "base";
    d.hinge = SD_HINGE_FREE;
    d.mass = 2.0;
    d.inertia[0] = d.inertia[4] = d.inertia[8] = 0.1;
    d.source_file = "robot.urdf";
    d.source_line = 12;
    sd_error err;
    must(sd_builder_add_body(b, &d, &err), &err, "base");
    d.name = "link";
    d.parent = "base";
    d.hinge = SD_HINGE_REVOLUTE;
    d.source_line = 30;
    must(sd_builder_add_body(b, &d, &err), &err, "link");
    sd_model *m = NULL;
    must(sd_builder_build(b, &m, &err), &err, "build");
    sd_builder_free(b);
    const double com[3] = {0, 0, 0}, I[9] = {0.1, 0, 0, 0, 0.1, 0, 0, 0, 0.1};

    CHECK(sd_model_set_body_inertia(m, 1, -1.0, com, I, &err) == SD_E_MODEL);
    CHECK(strstr(err.message, "robot.urdf:30: body 'link': negative mass -1") != NULL);
    CHECK(sd_model_body_mass(m, 1) == 2.0);
    const double indefinite[9] = {0.1, 0, 0, 0, -0.1, 0, 0, 0, 0.1};
    CHECK(sd_model_set_body_inertia(m, 1, 1.0, com, indefinite, &err) == SD_E_MODEL);
    CHECK(strstr(err.message, "not positive semi-definite") != NULL);
    CHECK(sd_model_set_body_inertia(m, 1, 0.0, com, I, &err) == SD_E_MODEL); /* zero mass, nonzero inertia */
    CHECK(sd_model_set_body_inertia(m, 2, 1.0, com, I, &err) == SD_E_ARGUMENT);
    CHECK(strstr(err.message, "body index 2") != NULL);
    CHECK(sd_model_set_stiffness(m, 0, 1.0, &err) == SD_E_NOT_SUPPORTED); /* speed 0: the free hinge */
    CHECK(strstr(err.message, "robot.urdf:12: joint 'base': a spring") != NULL);
    CHECK(sd_model_stiffness(m, 0) == 0.0);
    CHECK(sd_model_set_damping(m, 6, -0.5, &err) == SD_E_MODEL);
    CHECK(strstr(err.message, "joint 'link': negative damping") != NULL);
    CHECK(sd_model_set_armature(m, 7, 1.0, &err) == SD_E_ARGUMENT);
    CHECK(sd_model_set_spring_ref(m, 6, NAN, &err) == SD_E_MODEL);
    CHECK(sd_model_spring_ref(m, 6) == 0.0);
    const double g_bad[3] = {0, 0, INFINITY}, g_huge[3] = {8e6, 8e6, 0}, g_ok[3] = {0, 0, -1.62};
    CHECK(sd_model_set_gravity(m, g_bad, &err) == SD_E_ARGUMENT);
    CHECK(sd_model_set_gravity(m, g_huge, &err) == SD_E_ARGUMENT);
    double g[3];
    sd_model_gravity(m, g);
    CHECK(g[2] == -9.81);
    CHECK(sd_model_set_gravity(m, g_ok, &err) == SD_OK);
    sd_model_gravity(m, g);
    CHECK(g[2] == -1.62);
    CHECK(sd_model_set_flex_modes(m, 1, g, g, &err) == SD_E_ARGUMENT);
    CHECK(strstr(err.message, "body 'link' is not flexible") != NULL);
    CHECK(sd_model_copy(NULL, &err) == NULL && err.status == SD_E_ARGUMENT);
    sd_model_free(m);
}

int main(void)
{
    test_random_trees();
    test_flexible_trees();
    test_modal_setter();
    test_copy_with_loops();
    test_refusals();
    return test_summary("test_model_params");
}
