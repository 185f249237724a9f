/*
 * tests/test_joint_dynamics.c — armature, joint damping and springs in every algorithm of the rigid
 * path, against an independent computation: the same random tree built without them gives M_rigid
 * and C_rigid, and the test forms M = M_rigid + diag(armature) and C = C_rigid - tau_passive
 * itself (tau_passive from its own formulas: a spherical spring's rotation vector by acos, a free
 * hinge's armature velocity term J (omega x v)), then
 * checks the mass matrix, bias forces, inverse dynamics, the articulated-body and Cholesky forward
 * dynamics (a dense solve with M), ID(FD(tau)) = tau, mixed dynamics, M^-1 x, the dense M^-1, det M,
 * the kinetic and spring energies; then energy: conserved without damping (sd_simulate, RK4), and
 * with damping lowered by exactly the damping work (Simpson's rule on the samples). Also the
 * builder's checks of the new fields.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "random_tree.h"
#include "test_util.h"

static double uniform(uint64_t *rng, double lo, double hi) { return lo + (hi - lo) * sd_random_uniform(rng); }

/* The model `rigid` rebuilt with random armature, damping and springs (springs on the hinges that
 * take them; a random quarter of the hinges get none of a kind, so zeros are mixed in). */
static sd_model *with_joint_terms(const sd_model *rigid, uint64_t *rng, int damped)
{
    sd_builder *b = sd_builder_new();
    double g[3];
    sd_model_gravity(rigid, g);
    sd_builder_set_gravity(b, g);
    sd_error err;
    for (int k = 0; k < sd_model_nbodies(rigid); ++k) {
        sd_body_desc d = *sd_model_body_desc(rigid, k);
        const sd_hinge_type h = d.hinge;
        d.armature = sd_random_uniform(rng) < 0.75 ? uniform(rng, 0.0, 0.5) : 0.0;
        d.damping = damped && sd_random_uniform(rng) < 0.75 ? uniform(rng, 0.0, 2.0) : 0.0;
        const int springy = h == SD_HINGE_REVOLUTE || h == SD_HINGE_PRISMATIC || h == SD_HINGE_SPHERICAL;
        d.stiffness = springy && sd_random_uniform(rng) < 0.75 ? uniform(rng, 0.0, 5.0) : 0.0;
        d.spring_ref = h == SD_HINGE_SPHERICAL ? 0.0 : uniform(rng, -1.0, 1.0);
        if (sd_builder_add_body(b, &d, &err) != SD_OK) {
            fprintf(stderr, "add_body: %s\n", err.message);
            exit(2);
        }
    }
    sd_model *m = NULL;
    if (sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "build: %s\n", err.message);
        exit(2);
    }
    sd_builder_free(b);
    return m;
}

/* The rotation vector of a quaternion (w, x, y, z), the shorter way round: theta = 2 acos|w|. */
static void rotvec_ref(const double *qk, double r[3])
{
    const double n = sqrt(qk[0] * qk[0] + qk[1] * qk[1] + qk[2] * qk[2] + qk[3] * qk[3]);
    const double w = qk[0] / n, s = w < 0 ? -1.0 : 1.0;
    double x[3];
    for (int i = 0; i < 3; ++i) x[i] = s * qk[1 + i] / n;
    const double sn = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    const double theta = 2.0 * acos(fmin(1.0, s * w));
    for (int i = 0; i < 3; ++i) r[i] = sn > 0 ? theta * x[i] / sn : 0.0;
}

/* tau_passive by the test's own formulas, from the descriptions (not the model's per-speed arrays). */
static void passive_reference(const sd_model *m, const double *q, const double *u, double *tp)
{
    for (int k = 0; k < sd_model_nbodies(m); ++k) {
        const sd_body_desc *d = sd_model_body_desc(m, k);
        const int v = sd_model_v_index(m, k), nk = sd_model_hinge_nv(m, k);
        const double *qk = q + sd_model_q_index(m, k);
        for (int i = 0; i < nk; ++i) tp[v + i] = -d->damping * u[v + i];
        if (d->hinge == SD_HINGE_FREE) { /* the armature's velocity term -J (omega x v), dynamics.h */
            const double *w = u + v, *vl = u + v + 3;
            tp[v + 3] -= d->armature * (w[1] * vl[2] - w[2] * vl[1]);
            tp[v + 4] -= d->armature * (w[2] * vl[0] - w[0] * vl[2]);
            tp[v + 5] -= d->armature * (w[0] * vl[1] - w[1] * vl[0]);
        }
        if (d->hinge == SD_HINGE_REVOLUTE || d->hinge == SD_HINGE_PRISMATIC) {
            tp[v] -= d->stiffness * (qk[0] - d->spring_ref);
        } else if (d->hinge == SD_HINGE_SPHERICAL) {
            double r[3];
            rotvec_ref(qk, r);
            for (int i = 0; i < 3; ++i) tp[v + i] -= d->stiffness * r[i];
        }
    }
}

static double spring_energy_reference(const sd_model *m, const double *q)
{
    double e = 0.0;
    for (int k = 0; k < sd_model_nbodies(m); ++k) {
        const sd_body_desc *d = sd_model_body_desc(m, k);
        const double *qk = q + sd_model_q_index(m, k);
        if (d->hinge == SD_HINGE_REVOLUTE || d->hinge == SD_HINGE_PRISMATIC) {
            e += 0.5 * d->stiffness * (qk[0] - d->spring_ref) * (qk[0] - d->spring_ref);
        } else if (d->hinge == SD_HINGE_SPHERICAL) {
            double r[3];
            rotvec_ref(qk, r);
            e += 0.5 * d->stiffness * (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
        }
    }
    return e;
}

/* Dense Cholesky (lower, in place) and solve, the test's own. Returns 0 if not positive definite. */
static int chol(double *A, int n)
{
    for (int j = 0; j < n; ++j) {
        double s = A[j * n + j];
        for (int k = 0; k < j; ++k) s -= A[j * n + k] * A[j * n + k];
        if (!(s > 0)) return 0;
        A[j * n + j] = sqrt(s);
        for (int i = j + 1; i < n; ++i) {
            double t = A[i * n + j];
            for (int k = 0; k < j; ++k) t -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = t / A[j * n + j];
        }
    }
    return 1;
}
static void chol_solve(const double *L, int n, double *x)
{
    for (int i = 0; i < n; ++i) {
        double s = x[i];
        for (int k = 0; k < i; ++k) s -= L[i * n + k] * x[k];
        x[i] = s / L[i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) {
        double s = x[i];
        for (int k = i + 1; k < n; ++k) s -= L[k * n + i] * x[k];
        x[i] = s / L[i * n + i];
    }
}

static double worst_fd = 0, worst_minv = 0, worst_det = 0, worst_id = 0;

static void check_tree(uint64_t *rng, int n, int flags)
{
    sd_model *rigid = random_tree(rng, n, flags);
    sd_model *m = with_joint_terms(rigid, rng, 1);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    sd_data *dr = sd_data_new(rigid), *d = sd_data_new(m);
    double *q = malloc(sizeof(double) * (size_t)nq), *u = malloc(sizeof(double) * (size_t)nv);
    double *w = malloc(sizeof(double) * (size_t)nv), *tp = malloc(sizeof(double) * (size_t)nv);
    double *M = malloc(sizeof(double) * (size_t)(nv * nv + 1)), *Mref = malloc(sizeof(double) * (size_t)(nv * nv + 1));
    double *L = malloc(sizeof(double) * (size_t)(nv * nv + 1)), *Minv = malloc(sizeof(double) * (size_t)(nv * nv + 1));
    double *C = malloc(sizeof(double) * (size_t)nv), *Cref = malloc(sizeof(double) * (size_t)nv);
    double *x = malloc(sizeof(double) * (size_t)nv), *y = malloc(sizeof(double) * (size_t)nv);
    double *qdd = malloc(sizeof(double) * (size_t)nv), *tau = malloc(sizeof(double) * (size_t)nv);
    random_state(m, rng, q, u, w);

    /* the reference M and C */
    CHECK(sd_mass_matrix(rigid, dr, q, Mref) == SD_OK);
    for (int v = 0; v < nv; ++v) Mref[v * nv + v] += sd_model_body_desc(m, sd_model_v_body(m, v))->armature;
    CHECK(sd_bias_forces(rigid, dr, q, u, NULL, Cref) == SD_OK);
    passive_reference(m, q, u, tp);
    for (int v = 0; v < nv; ++v) Cref[v] -= tp[v];

    CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
    CHECK_ARRAY_CLOSE(M, Mref, nv * nv, 1e-13, "M with armature");
    CHECK(sd_bias_forces(m, d, q, u, NULL, C) == SD_OK);
    CHECK_ARRAY_CLOSE(C, Cref, nv, 1e-12, "C with -tau_passive");
    CHECK(sd_passive_forces(m, d, q, u, x) == SD_OK);
    CHECK_ARRAY_CLOSE(x, tp, nv, 1e-13, "sd_passive_forces");
    double es = -1;
    CHECK(sd_spring_energy(m, d, q, &es) == SD_OK);
    CHECK_CLOSE(es, spring_energy_reference(m, q), 1e-13);

    /* inverse dynamics = M qdd + C */
    CHECK(sd_inverse_dynamics(m, d, q, u, w, NULL, tau) == SD_OK);
    for (int i = 0; i < nv; ++i) {
        double s = Cref[i];
        for (int j = 0; j < nv; ++j) s += Mref[i * nv + j] * w[j];
        y[i] = s;
    }
    CHECK_ARRAY_CLOSE(tau, y, nv, 1e-11, "ID = M qdd + C");

    /* forward dynamics = M^-1 (tau - C), ABA and Cholesky */
    random_vector(rng, tau, nv, 3.0);
    memcpy(L, Mref, sizeof(double) * (size_t)(nv * nv));
    CHECK(chol(L, nv));
    const double cond = test_cond_estimate(Mref, L, nv);
    for (int i = 0; i < nv; ++i) y[i] = tau[i] - Cref[i];
    chol_solve(L, nv, y);
    CHECK(sd_forward_dynamics(m, d, q, u, tau, NULL, qdd) == SD_OK);
    double e = test_rel_diff(qdd, y, nv) / fmax(1.0, cond / 1e5);
    worst_fd = fmax(worst_fd, e);
    CHECK_ARRAY_CLOSE(qdd, y, nv, test_cond_tolerance(1e-11, cond), "ABA qdd = solve(M + J, tau - C)");
    /* M^-1 x with the factors just made (armature in D(k)) */
    random_vector(rng, x, nv, 1.0);
    CHECK(sd_mass_matrix_solve(m, d, x, y) == SD_OK);
    {
        double *z = malloc(sizeof(double) * (size_t)nv);
        memcpy(z, x, sizeof(double) * (size_t)nv);
        chol_solve(L, nv, z);
        CHECK_ARRAY_CLOSE(y, z, nv, test_cond_tolerance(1e-11, cond), "M^-1 x from the innovations factors");
        free(z);
    }
    CHECK(sd_inverse_dynamics(m, d, q, u, qdd, NULL, x) == SD_OK);
    e = test_rel_diff(x, tau, nv);
    worst_id = fmax(worst_id, e);
    CHECK_ARRAY_CLOSE(x, tau, nv, 1e-10, "ID(FD(tau)) = tau");
    CHECK(sd_forward_dynamics_cholesky(m, d, q, u, tau, NULL, x) == SD_OK);
    CHECK_ARRAY_CLOSE(x, qdd, nv, test_cond_tolerance(1e-11, cond), "Cholesky qdd = ABA qdd");

    /* mixed dynamics: prescribe a random half of the hinges at the accelerations found above */
    {
        unsigned char *pres = calloc((size_t)n, 1);
        double *t2 = malloc(sizeof(double) * (size_t)nv), *a2 = malloc(sizeof(double) * (size_t)nv);
        for (int k = 0; k < n; ++k) pres[k] = sd_random_uniform(rng) < 0.5;
        for (int v = 0; v < nv; ++v) {
            const int k = sd_model_v_body(m, v);
            t2[v] = pres[k] ? 1e300 : tau[v];
            a2[v] = pres[k] ? qdd[v] : 1e300;
        }
        sd_fd_options o = {0};
        o.prescribed = pres;
        CHECK(sd_forward_dynamics_ex(m, d, q, u, t2, NULL, a2, &o) == SD_OK);
        CHECK_ARRAY_CLOSE(t2, tau, nv, test_cond_tolerance(1e-10, cond), "mixed: tau of prescribed hinges");
        CHECK_ARRAY_CLOSE(a2, qdd, nv, test_cond_tolerance(1e-10, cond), "mixed: qdd of free hinges");
        free(pres), free(t2), free(a2);
    }

    /* dense M^-1 and det M */
    CHECK(sd_mass_matrix_inverse(m, d, q, Minv) == SD_OK);
    double ierr = 0.0;
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j) {
            double s = 0.0;
            for (int k = 0; k < nv; ++k) s += Mref[i * nv + k] * Minv[k * nv + j];
            ierr = fmax(ierr, fabs(s - (i == j)));
        }
    worst_minv = fmax(worst_minv, ierr / fmax(1.0, cond / 1e5));
    CHECK(ierr <= test_cond_tolerance(1e-10, cond));
    double logdet = 0.0, ld = 0.0;
    for (int i = 0; i < nv; ++i) logdet += 2.0 * log(L[i * nv + i]);
    CHECK(sd_mass_matrix_determinant(m, d, q, NULL, &ld) == SD_OK);
    worst_det = fmax(worst_det, fabs(ld - logdet) / fmax(1.0, fabs(logdet)));
    CHECK_CLOSE(ld, logdet, 1e-11);

    /* kinetic energy 1/2 u^T (M + J) u */
    double T = 0.0, Tref = 0.0;
    CHECK(sd_kinematics(m, d, q, u, NULL) == SD_OK);
    CHECK(sd_kinetic_energy(m, d, &T) == SD_OK);
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j) Tref += 0.5 * u[i] * Mref[i * nv + j] * u[j];
    CHECK_CLOSE(T, Tref, 1e-12);

    free(q), free(u), free(w), free(tp), free(M), free(Mref), free(L), free(Minv), free(C), free(Cref);
    free(x), free(y), free(qdd), free(tau);
    sd_data_free(dr);
    sd_data_free(d);
    sd_model_free(rigid);
    sd_model_free(m);
}

/* ---------------------------------------------------------------- energy */

typedef struct work_log {
    const sd_model *m;
    int count;
    double dt, *power; /* sum damping u^2 at each sample */
    double e0, e_last;
} work_log;

static int observe(void *user, const sd_sim_sample *s)
{
    work_log *w = user;
    double p = 0.0;
    for (int v = 0; v < sd_model_nv(w->m); ++v) p += sd_model_damping(w->m, v) * s->u[v] * s->u[v];
    if (w->count == 0) w->e0 = s->kinetic + s->potential;
    w->power[w->count++] = p;
    w->e_last = s->kinetic + s->potential;
    return 0;
}

/* Simulate 1 s with RK4 at dt 1 ms; returns E(0) - E(1) and the damping work by Simpson's rule. */
static void energy_run(const sd_model *m, uint64_t *rng, double *lost, double *work, double *scale)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), steps = 1000;
    double *q = malloc(sizeof(double) * (size_t)nq), *u = malloc(sizeof(double) * (size_t)nv);
    double *w = malloc(sizeof(double) * (size_t)nv);
    random_state(m, rng, q, u, w);
    work_log log = {m, 0, 1e-3, calloc(steps + 2, sizeof(double)), 0, 0};
    sd_sim_options o;
    sd_sim_options_init(&o);
    o.duration = 1.0;
    o.dt = 1e-3;
    o.observer = observe;
    o.observer_user = &log;
    sd_sim_stats st;
    sd_error err;
    CHECK(sd_simulate(m, &o, q, u, &st, &err) == SD_OK);
    CHECK(log.count == steps + 1);
    double s = log.power[0] + log.power[steps];
    for (int i = 1; i < steps; ++i) s += (i % 2 ? 4.0 : 2.0) * log.power[i];
    *work = s * log.dt / 3.0;
    *lost = log.e0 - log.e_last;
    sd_data *d = sd_data_new(m);
    double T0 = 0.0, V0 = 0.0;
    sd_sim_energy(m, d, q, u, &T0, &V0);
    *scale = fabs(T0) + fabs(V0) + fabs(log.e0);
    sd_data_free(d);
    free(log.power), free(q), free(u), free(w);
}

static sd_model *spring_pendulum(double damping)
{
    sd_builder *b = sd_builder_new();
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "link";
    d.hinge = SD_HINGE_REVOLUTE;
    d.axis[0] = 1, d.axis[2] = 0;
    d.mass = 1.3;
    d.com[2] = -0.4;
    d.inertia[0] = d.inertia[4] = d.inertia[8] = 0.02;
    d.armature = 0.15;
    d.damping = damping;
    d.stiffness = 7.0;
    d.spring_ref = 0.3;
    sd_error err;
    sd_model *m = NULL;
    CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    return m;
}

static void check_energy(uint64_t *rng)
{
    double lost, work, scale;
    sd_model *p = spring_pendulum(0.0);
    energy_run(p, rng, &lost, &work, &scale);
    printf("spring pendulum, no damping: energy drift %.3g (of %.3g)\n", lost, scale);
    CHECK(fabs(lost) <= 1e-9 * scale);
    sd_model_free(p);
    p = spring_pendulum(0.8);
    energy_run(p, rng, &lost, &work, &scale);
    printf("spring pendulum, damping 0.8: energy lost %.10g, damping work %.10g\n", lost, work);
    CHECK(lost > 0);
    CHECK(fabs(lost - work) <= 1e-8 * scale);
    sd_model_free(p);
    for (int t = 0; t < 4; ++t) { /* random trees: every hinge type, springs on the spherical ones too */
        sd_model *rigid = random_tree(rng, 6, t % 2 ? RT_FREE_ROOT : 0);
        sd_model *m = with_joint_terms(rigid, rng, 0);
        energy_run(m, rng, &lost, &work, &scale);
        printf("random tree %d, no damping: energy drift %.3g (of %.3g)\n", t, lost, scale);
        CHECK(fabs(lost) <= 1e-6 * scale);
        sd_model_free(m);
        m = with_joint_terms(rigid, rng, 1);
        energy_run(m, rng, &lost, &work, &scale);
        printf("random tree %d, damped: energy lost %.10g, damping work %.10g\n", t, lost, work);
        CHECK(fabs(lost - work) <= 1e-6 * scale);
        sd_model_free(m);
        sd_model_free(rigid);
    }
}

/* ---------------------------------------------------------------- the builder's checks */

static sd_status try_body(sd_hinge_type h, double armature, double damping, double stiffness, double ref)
{
    sd_builder *b = sd_builder_new();
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "b";
    d.hinge = h;
    d.mass = 1;
    d.inertia[0] = d.inertia[4] = d.inertia[8] = 1;
    d.armature = armature, d.damping = damping, d.stiffness = stiffness, d.spring_ref = ref;
    sd_error err = {0};
    sd_model *m = NULL;
    sd_status st = sd_builder_add_body(b, &d, &err);
    if (st == SD_OK) st = sd_builder_build(b, &m, &err);
    if (st != SD_OK) printf("  refused as it should be: %s\n", err.message);
    sd_model_free(m);
    sd_builder_free(b);
    return st;
}

static void check_builder(void)
{
    CHECK(try_body(SD_HINGE_REVOLUTE, 0.1, 0.2, 3, 0.5) == SD_OK);
    CHECK(try_body(SD_HINGE_SPHERICAL, 0.1, 0.2, 3, 0) == SD_OK);
    CHECK(try_body(SD_HINGE_FREE, 0.1, 0.2, 0, 0) == SD_OK);
    CHECK(try_body(SD_HINGE_REVOLUTE, -0.1, 0, 0, 0) == SD_E_MODEL);
    CHECK(try_body(SD_HINGE_REVOLUTE, NAN, 0, 0, 0) == SD_E_MODEL);
    CHECK(try_body(SD_HINGE_REVOLUTE, 0, 0, -1, 0) == SD_E_MODEL);
    CHECK(try_body(SD_HINGE_REVOLUTE, 0, 0, INFINITY, 0) == SD_E_MODEL);
    CHECK(try_body(SD_HINGE_REVOLUTE, 1e40, 0, 0, 0) == SD_E_MODEL);
    CHECK(try_body(SD_HINGE_PRISMATIC, 0, 0, 1, 1e7) == SD_E_MODEL);
    CHECK(try_body(SD_HINGE_FREE, 0, 0, 1, 0) == SD_E_NOT_SUPPORTED);
    CHECK(try_body(SD_HINGE_UNIVERSAL, 0, 0, 1, 0) == SD_E_NOT_SUPPORTED);
    CHECK(try_body(SD_HINGE_PLANAR, 0, 0, 1, 0) == SD_E_NOT_SUPPORTED);
    CHECK(try_body(SD_HINGE_SPHERICAL, 0, 0, 1, 0.2) == SD_E_NOT_SUPPORTED);
    /* the queries */
    sd_model *p = spring_pendulum(0.8);
    CHECK(sd_model_armature(p, 0) == 0.15 && sd_model_damping(p, 0) == 0.8);
    CHECK(sd_model_stiffness(p, 0) == 7.0 && sd_model_spring_ref(p, 0) == 0.3);
    CHECK(isnan(sd_model_armature(p, 1)) && isnan(sd_model_stiffness(NULL, 0)));
    sd_model_free(p);
}

int main(void)
{
    uint64_t rng = 0x5eed10u;
    check_builder();
    const int flags[] = {0, RT_CHAIN, RT_FREE_ROOT, RT_MASSLESS, RT_ONLY_1DOF | RT_CHAIN};
    for (int t = 0; t < 40; ++t) check_tree(&rng, 2 + t % 13, flags[t % 5]);
    printf("worst relative differences (scaled by max(1, cond/1e5)): ABA qdd %.3g, M^-1 M - I %.3g, "
           "log det %.3g, ID(FD) %.3g\n",
           worst_fd, worst_minv, worst_det, worst_id);
    check_energy(&rng);
    return test_summary("test_joint_dynamics");
}
