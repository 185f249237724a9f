/*
 * tests/test_configuration.c — the configuration manifold, on random trees of every hinge type:
 *   q1 (-) q0 inverts q0 (+) u dt (u dt back to 1e-12), and q0 (+) (q1 (-) q0) = q1 for
 *   configurations far apart (compared through the body placements);
 *   integration keeps quaternions unit over many steps, in place or not;
 *   normalisation returns the largest deviation and keeps the rotation;
 *   random configurations respect joint limits (and the default ranges), quaternions unit;
 *   the neutral configuration has identity quaternions and puts every body frame on its joint frame;
 *   the reference configuration is the neutral one unless the bodies carry one, then theirs (by
 *   body, whatever order they were added in; quaternions normalised; wrong ones refused);
 *   the derivative of q (+) u h at h = 0 moves every body with the twist sd_body_velocity reports:
 *   central differences of the world placements give omega = vee(R^T dR/dt), v = R^T dp/dt, which
 *   must equal V(k) = phi* V(parent) + H*(k) u(k). This checks H*(k) against the joint transform
 *   and the integrator's tangent map for every hinge type.
 */
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "random_tree.h"
#include "test_util.h"
#include "workspace_read.h"

#define PI 3.14159265358979323846

/* offset of the quaternion inside body k's coordinates, or -1 */
static int quat_offset(const sd_model *m, int k)
{
    const sd_hinge_type t = sd_model_hinge(m, k);
    return t == SD_HINGE_SPHERICAL ? 0 : (t == SD_HINGE_FREE ? 3 : -1);
}

static double worst_quat_norm_error(const sd_model *m, const double *q)
{
    double worst = 0;
    for (int k = 0; k < sd_model_nbodies(m); ++k) {
        const int o = quat_offset(m, k);
        if (o < 0) continue;
        const double *x = q + sd_model_q_index(m, k) + o;
        worst = fmax(worst, fabs(sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]) - 1.0));
    }
    return worst;
}

/* max difference of the world placements of all bodies at q1 and q2 */
static double placement_distance(const sd_model *m, sd_data *d, const double *q1, const double *q2)
{
    const int n = sd_model_nbodies(m);
    sd_transform *X = malloc((size_t)(n + 1) * sizeof *X);
    sd_kinematics(m, d, q1, NULL, NULL);
    for (int k = 0; k < n; ++k) X[k] = world_placement(m, d, k);
    sd_kinematics(m, d, q2, NULL, NULL);
    double dist = 0;
    for (int k = 0; k < n; ++k) {
        const sd_transform Y = world_placement(m, d, k);
        for (int i = 0; i < 9; ++i) dist = fmax(dist, fabs(X[k].R[i] - Y.R[i]));
        for (int i = 0; i < 3; ++i) dist = fmax(dist, fabs(X[k].p[i] - Y.p[i]));
    }
    free(X);
    return dist;
}

static void check_manifold(const sd_model *m, uint64_t *rng)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
    sd_data *d = sd_data_new(m);
    double *q0 = malloc((size_t)(nq + 1) * sizeof(double)), *q1 = malloc((size_t)(nq + 1) * sizeof(double)),
           *q2 = malloc((size_t)(nq + 1) * sizeof(double)), *u = malloc((size_t)(nv + 1) * sizeof(double)),
           *u2 = malloc((size_t)(nv + 1) * sizeof(double)), *udt = malloc((size_t)(nv + 1) * sizeof(double));
    const double dts[] = {1e-6, 1e-3, 0.1, 1.0};
    for (int t = 0; t < 3; ++t) {
        random_state(m, rng, q0, u, NULL);
        for (size_t s = 0; s < sizeof dts / sizeof dts[0]; ++s) {
            const double dt = dts[s];
            sd_configuration_integrate(m, q0, u, dt, q1);
            CHECK(worst_quat_norm_error(m, q1) <= 1e-14);
            sd_configuration_difference(m, q0, q1, u2);
            for (int i = 0; i < nv; ++i) udt[i] = u[i] * dt;
            /* absolute in u dt units: the difference of coordinates of size ~pi loses ~1e-16 pi */
            double err = 0;
            for (int i = 0; i < nv; ++i) err = fmax(err, fabs(u2[i] - udt[i]));
            if (err > 1e-12 * fmax(dt, 1e-3)) {
                ++test_failed_count;
                fprintf(stderr, "difference(q0, integrate(q0, u, %g)) - u dt: max error %.3g\n", dt, err);
            } else {
                ++test_passed_count;
            }
            /* in place gives the same */
            memcpy(q2, q0, (size_t)nq * sizeof(double));
            sd_configuration_integrate(m, q2, u, dt, q2);
            CHECK_ARRAY_CLOSE(q2, q1, nq, 0.0, "integrate in place");
        }
        /* difference of a configuration with itself is zero */
        sd_configuration_difference(m, q0, q0, u2);
        double z = 0;
        for (int i = 0; i < nv; ++i) z = fmax(z, fabs(u2[i]));
        CHECK(z <= 1e-15);
        /* two unrelated configurations: q0 (+) (q1 (-) q0) = q1 (as placements: quaternion signs
         * are free) */
        random_state(m, rng, q1, NULL, NULL);
        sd_configuration_difference(m, q0, q1, u2);
        sd_configuration_integrate(m, q0, u2, 1.0, q2);
        CHECK(placement_distance(m, d, q1, q2) <= 1e-12 * (1 + n));
        /* many small steps keep the quaternions unit up to rounding: each Hamilton product with
         * exp(w dt) may move the norm by an ulp or so (measured drift ~6e-17 per step, no
         * renormalisation), so 2000 steps stay within 2000 eps; a non-unit exp would drift by
         * O(dt^2) per step, far more */
        memcpy(q2, q0, (size_t)nq * sizeof(double));
        for (int step = 0; step < 2000; ++step) sd_configuration_integrate(m, q2, u, 0.01, q2);
        CHECK(worst_quat_norm_error(m, q2) <= 2000 * 2.2e-16);
    }
    /* normalisation: scale each quaternion by a different factor; the largest deviation comes back */
    random_state(m, rng, q0, NULL, NULL);
    memcpy(q1, q0, (size_t)nq * sizeof(double));
    double expect = 0;
    for (int k = 0; k < n; ++k) {
        const int o = quat_offset(m, k);
        if (o < 0) continue;
        const double f = 1.0 + 0.2 * (2 * sd_random_uniform(rng) - 1);
        expect = fmax(expect, fabs(1.0 - f));
        for (int i = 0; i < 4; ++i) q1[sd_model_q_index(m, k) + o + i] *= f;
    }
    const double got = sd_configuration_normalize(m, q1);
    CHECK_CLOSE(got, expect, 1e-14);
    CHECK(worst_quat_norm_error(m, q1) <= 1e-15);
    CHECK_ARRAY_CLOSE(q1, q0, nq, 1e-15, "normalize restores the unit quaternion");
    CHECK(sd_configuration_normalize(m, q1) <= 1e-15); /* already unit: deviation ~ 0 */
    free(q0); free(q1); free(q2); free(u); free(u2); free(udt);
    sd_data_free(d);
}

/* Twist of body k from central differences of its world placement along q (+) u h. */
static void fd_twist(const sd_transform *Xm, const sd_transform *X0, const sd_transform *Xp, double h, double V[6])
{
    double dR[9], RtdR[9], dp[3];
    for (int i = 0; i < 9; ++i) dR[i] = (Xp->R[i] - Xm->R[i]) / (2 * h);
    for (int i = 0; i < 3; ++i) dp[i] = (Xp->p[i] - Xm->p[i]) / (2 * h);
    sd_m3t_mul(X0->R, dR, RtdR); /* = [omega x] in body axes */
    V[0] = 0.5 * (RtdR[7] - RtdR[5]);
    V[1] = 0.5 * (RtdR[2] - RtdR[6]);
    V[2] = 0.5 * (RtdR[3] - RtdR[1]);
    sd_m3t_mul_v(X0->R, dp, V + 3);
}

static void check_velocity_fd(const sd_model *m, uint64_t *rng)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
    sd_data *d = sd_data_new(m);
    double *q = malloc((size_t)(nq + 1) * sizeof(double)), *qp = malloc((size_t)(nq + 1) * sizeof(double)),
           *qm = malloc((size_t)(nq + 1) * sizeof(double)), *u = malloc((size_t)(nv + 1) * sizeof(double)),
           *V = malloc(6 * (size_t)n * sizeof(double));
    sd_transform *Xp = malloc((size_t)n * sizeof *Xp), *Xm = malloc((size_t)n * sizeof *Xm),
                 *X0 = malloc((size_t)n * sizeof *X0);
    const double h = 1e-6;
    for (int t = 0; t < 3; ++t) {
        random_state(m, rng, q, u, NULL);
        sd_configuration_integrate(m, q, u, h, qp);
        sd_configuration_integrate(m, q, u, -h, qm);
        sd_kinematics(m, d, qp, NULL, NULL);
        for (int k = 0; k < n; ++k) Xp[k] = world_placement(m, d, k);
        sd_kinematics(m, d, qm, NULL, NULL);
        for (int k = 0; k < n; ++k) Xm[k] = world_placement(m, d, k);
        CHECK(sd_kinematics(m, d, q, u, NULL) == SD_OK);
        for (int k = 0; k < n; ++k) {
            X0[k] = world_placement(m, d, k);
            CHECK(sd_body_velocity(m, d, k, V + 6 * k) == SD_OK);
        }
        for (int k = 0; k < n; ++k) {
            double Vfd[6];
            fd_twist(&Xm[k], &X0[k], &Xp[k], h, Vfd);
            if (!CHECK_ARRAY_CLOSE(V + 6 * k, Vfd, 6, 1e-7, "body twist vs d/dh placement(q (+) u h)"))
                fprintf(stderr, "  body %d (%s hinge, parent %d)\n", k, sd_hinge_type_name(sd_model_hinge(m, k)),
                        sd_model_parent(m, k));
        }
    }
    free(q); free(qp); free(qm); free(u); free(V); free(Xp); free(Xm); free(X0);
    sd_data_free(d);
}

/* Each hinge type alone on one body under a random placement: the smallest failing case. */
static void check_each_hinge(uint64_t *rng)
{
    for (int type = 1; type < SD_HINGE_TYPE_COUNT; ++type) {
        sd_builder *b = sd_builder_new();
        sd_body_desc d;
        sd_body_desc_init(&d);
        d.name = "base";
        d.hinge = SD_HINGE_REVOLUTE;
        sd_m3_rpy(0.4, -0.3, 1.2, d.placement.R);
        sd_v3_set(d.placement.p, 0.1, 0.2, 0.3);
        sd_v3_set(d.axis, 0.2, 1.0, -0.4);
        d.mass = 1;
        sd_v3_set(d.inertia, 0.1, 0, 0);
        d.inertia[4] = d.inertia[8] = 0.1;
        sd_error err;
        CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
        d.name = "body";
        d.parent = "base";
        d.hinge = (sd_hinge_type)type;
        sd_m3_rpy(-1.0, 0.7, 0.2, d.placement.R);
        sd_v3_set(d.placement.p, 0.5, -0.2, 0.1);
        sd_v3_set(d.axis, 1.0, 0.3, 0.5);
        sd_v3_set(d.axis2, -0.2, 1.0, 0.1);
        CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
        sd_model *m = NULL;
        CHECK(sd_builder_build(b, &m, &err) == SD_OK);
        sd_builder_free(b);
        if (!m) continue;
        const int before = test_failed_count;
        check_velocity_fd(m, rng);
        check_manifold(m, rng);
        if (test_failed_count != before) fprintf(stderr, "  (single %s hinge)\n", sd_hinge_type_name((sd_hinge_type)type));
        sd_model_free(m);
    }
}

static void check_neutral(const sd_model *m)
{
    const int nq = sd_model_nq(m), n = sd_model_nbodies(m);
    sd_data *d = sd_data_new(m);
    double *q = malloc((size_t)(nq + 1) * sizeof(double));
    for (int i = 0; i < nq; ++i) q[i] = 123.0; /* every entry must be written */
    sd_configuration_neutral(m, q);
    int ok = 1;
    for (int k = 0; k < n; ++k) {
        const int o = quat_offset(m, k), qi = sd_model_q_index(m, k);
        for (int i = 0; i < sd_model_hinge_nq(m, k); ++i) {
            const double expect = (o >= 0 && i == o) ? 1.0 : 0.0;
            if (q[qi + i] != expect) ok = 0;
        }
    }
    CHECK(ok);
    CHECK(worst_quat_norm_error(m, q) == 0.0);
    /* at the neutral configuration every body frame is its joint frame: the world placement is the
     * product of the joint placements along the path */
    sd_kinematics(m, d, q, NULL, NULL);
    double dist = 0;
    for (int k = 0; k < n; ++k) {
        sd_transform X = *sd_model_placement(m, k);
        for (int j = sd_model_parent(m, k); j >= 0; j = sd_model_parent(m, j))
            sd_transform_compose(sd_model_placement(m, j), &X, &X);
        const sd_transform W = world_placement(m, d, k);
        for (int i = 0; i < 9; ++i) dist = fmax(dist, fabs(W.R[i] - X.R[i]));
        for (int i = 0; i < 3; ++i) dist = fmax(dist, fabs(W.p[i] - X.p[i]));
    }
    CHECK(dist <= 1e-13 * (1 + n));
    free(q);
    sd_data_free(d);
}

/* The reference configuration: on a model built without references it is the neutral one (every
 * entry written); the same tree rebuilt from its descriptions in reverse order, each body given the
 * coordinates of a random configuration as its reference (quaternions scaled off unit by up to
 * 1e-7), answers exactly that configuration with its quaternions normalised, placed by body
 * whatever order the builder saw them in; a reference quaternion of norm 1.1 or a NaN coordinate is
 * refused naming the joint. */
static void check_reference(const sd_model *m, uint64_t *rng)
{
    const int nq = sd_model_nq(m), n = sd_model_nbodies(m);
    double *q = malloc((size_t)(nq + 1) * sizeof(double)), *r = malloc((size_t)(nq + 1) * sizeof(double));
    for (int i = 0; i < nq; ++i) q[i] = r[i] = 123.0;
    sd_configuration_neutral(m, q);
    sd_configuration_reference(m, r);
    CHECK(nq == 0 || memcmp(q, r, (size_t)nq * sizeof(double)) == 0);
    sd_configuration_random(m, rng, q);
    sd_builder *b = sd_builder_new();
    sd_error err;
    int built = 1;
    for (int k = n - 1; k >= 0; --k) {
        sd_body_desc d = *sd_model_body_desc(m, k);
        CHECK(d.has_reference == 0);
        d.has_reference = 1;
        const double *qk = q + sd_model_q_index(m, k);
        const double scale = 1.0 + 1e-7 * (2 * sd_random_uniform(rng) - 1);
        for (int i = 0; i < sd_model_hinge_nq(m, k); ++i)
            d.reference[i] = (quat_offset(m, k) >= 0 && i >= quat_offset(m, k)) ? scale * qk[i] : qk[i];
        if (sd_builder_add_body(b, &d, &err) != SD_OK) built = 0;
    }
    sd_model *m2 = NULL;
    CHECK(built && sd_builder_build(b, &m2, &err) == SD_OK);
    if (m2) {
        CHECK(sd_model_nq(m2) == nq);
        for (int i = 0; i < nq; ++i) r[i] = 123.0;
        sd_configuration_reference(m2, r);
        double worst = 0.0;
        for (int k = 0; k < n; ++k) { /* body k of m2 is the body of m of that name */
            const int j = sd_model_body_index(m, sd_model_body_name(m2, k));
            for (int i = 0; i < sd_model_hinge_nq(m2, k); ++i)
                worst = fmax(worst, fabs(r[sd_model_q_index(m2, k) + i] - q[sd_model_q_index(m, j) + i]));
        }
        CHECK(worst <= 1e-15);
        CHECK(worst_quat_norm_error(m2, r) <= 4e-16);
        sd_model_free(m2);
    }
    sd_builder_free(b);
    for (int k = 0; k < n; ++k) { /* a wrong reference is refused, naming the joint */
        const int o = quat_offset(m, k);
        if (sd_model_hinge_nq(m, k) == 0) continue;
        sd_body_desc d = *sd_model_body_desc(m, k);
        d.has_reference = 1;
        memset(d.reference, 0, sizeof d.reference);
        if (o >= 0) d.reference[o] = 1.1;
        else d.reference[0] = NAN;
        b = sd_builder_new();
        CHECK(sd_builder_add_body(b, &d, &err) == SD_E_MODEL);
        CHECK(strstr(err.message, d.joint_name) != NULL && strstr(err.message, "reference") != NULL);
        sd_builder_free(b);
        break;
    }
    free(q);
    free(r);
}

static void check_random_configuration_ranges(const sd_model *m, uint64_t *rng)
{
    const int nq = sd_model_nq(m), n = sd_model_nbodies(m);
    double *q = malloc((size_t)(nq + 1) * sizeof(double));
    int ok = 1;
    for (int t = 0; t < 200; ++t) {
        sd_configuration_random(m, rng, q);
        if (worst_quat_norm_error(m, q) > 1e-15) ok = 0;
        for (int k = 0; k < n; ++k) {
            const double *qk = q + sd_model_q_index(m, k);
            const sd_hinge_type h = sd_model_hinge(m, k);
            const sd_body_desc *desc = sd_model_body_desc(m, k);
            if ((h == SD_HINGE_REVOLUTE || h == SD_HINGE_PRISMATIC) && desc->has_limits && desc->upper > desc->lower) {
                if (!(qk[0] >= desc->lower && qk[0] <= desc->upper)) ok = 0;
            } else if (h == SD_HINGE_REVOLUTE || h == SD_HINGE_UNIVERSAL) {
                for (int i = 0; i < sd_model_hinge_nq(m, k); ++i)
                    if (!(fabs(qk[i]) <= PI)) ok = 0;
            } else if (h == SD_HINGE_PRISMATIC || h == SD_HINGE_PLANAR) {
                if (!(fabs(qk[0]) <= 1.0)) ok = 0;
                if (h == SD_HINGE_PLANAR && !(fabs(qk[1]) <= 1.0 && fabs(qk[2]) <= PI)) ok = 0;
            } else if (h == SD_HINGE_FREE) {
                for (int i = 0; i < 3; ++i)
                    if (!(fabs(qk[i]) <= 1.0)) ok = 0;
            }
        }
    }
    CHECK(ok);
    /* reproducible: the same seed gives the same configuration */
    uint64_t s1 = 99, s2 = 99;
    double *q2 = malloc((size_t)(nq + 1) * sizeof(double));
    sd_configuration_random(m, &s1, q);
    sd_configuration_random(m, &s2, q2);
    CHECK_ARRAY_CLOSE(q, q2, nq, 0.0, "random configuration reproducible");
    CHECK(s1 == s2 && s1 != 99);
    free(q);
    free(q2);
}

/* A chain with joint limits on its revolute and prismatic hinges (random_tree sets none). */
static void check_limits(uint64_t *rng)
{
    sd_builder *b = sd_builder_new();
    const char *names[6] = {"l0", "l1", "l2", "l3", "l4", "l5"};
    const double lo[6] = {-0.5, 0.1, 2.0, -3.0, -0.01, 0.0}, hi[6] = {0.3, 0.2, 2.5, -2.9, 0.01, 0.0};
    sd_error err;
    for (int k = 0; k < 6; ++k) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        d.name = names[k];
        d.parent = k ? names[k - 1] : NULL;
        d.hinge = k % 2 ? SD_HINGE_PRISMATIC : SD_HINGE_REVOLUTE;
        /* lower == upper: no usable range; soadyn treats it as no limits (as the URDF loader does,
         * which sets has_limits only when lower < upper), so the default range [-pi, pi] applies */
        if (k == 5) d.hinge = SD_HINGE_REVOLUTE;
        d.has_limits = 1;
        d.lower = lo[k];
        d.upper = hi[k];
        d.mass = 1;
        d.inertia[0] = d.inertia[4] = d.inertia[8] = 0.01;
        CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    }
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    if (!m) return;
    check_random_configuration_ranges(m, rng);
    /* the limited ones are really spread over their range (not stuck at one end) */
    double q[6], mn[6], mx[6];
    for (int i = 0; i < 6; ++i) mn[i] = INFINITY, mx[i] = -INFINITY;
    for (int t = 0; t < 500; ++t) {
        sd_configuration_random(m, rng, q);
        for (int i = 0; i < 6; ++i) mn[i] = fmin(mn[i], q[i]), mx[i] = fmax(mx[i], q[i]);
    }
    int spread = 1;
    for (int i = 0; i < 5; ++i)
        if (mn[i] < lo[i] || mx[i] > hi[i] || mx[i] - mn[i] < 0.9 * (hi[i] - lo[i])) spread = 0;
    CHECK(spread);
    sd_model_free(m);
}

int main(void)
{
    uint64_t rng = 4242;
    check_each_hinge(&rng);
    check_limits(&rng);
    const int sizes[] = {1, 2, 4, 7, 12, 25};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (int trial = 0; trial < 4; ++trial) {
            const int flags = (trial & 1 ? RT_FREE_ROOT : 0) | (trial & 2 ? RT_MASSLESS : 0) | (trial == 2 ? RT_CHAIN : 0);
            sd_model *m = random_tree(&rng, sizes[s], flags);
            const int before = test_failed_count;
            check_neutral(m);
            check_reference(m, &rng);
            check_random_configuration_ranges(m, &rng);
            check_manifold(m, &rng);
            check_velocity_fd(m, &rng);
            if (test_failed_count != before) fprintf(stderr, "  (model of %d bodies, flags %d)\n", sizes[s], flags);
            sd_model_free(m);
        }
    return test_summary("test_configuration");
}
