/*
 * tests/test_kinematics.c — kinematic quantities against finite differences and independent sums,
 * on random trees of every hinge type:
 *   sd_jacobian_world, column by column, vs central differences of the world position of a point on a
 *   body and of the body's world orientation along q (+) e_i h (angular rows: vee(dR R^T));
 *   sd_jacobian_world u vs the body twist of sd_kinematics;
 *   sd_center_of_mass_world vs the mass-weighted sum of body COMs;
 *   sd_spatial_momentum_world: linear part = total mass * COM velocity (COM velocity by central
 *   differences), both parts = sum over bodies from point Jacobians at the COMs, and for a free
 *   root the root rows of M u (the generalized momentum of the free hinge is the system momentum
 *   in the root frame);
 *   sd_kinetic_energy = 1/2 u^T M u (sd_mass_matrix);
 *   the gradient of sd_potential_energy along each speed direction = the gravity forces, C(q, 0)
 *   (sd_bias_forces at u = 0), for 1-dof trees (q-derivatives) and for every hinge type (along
 *   q (+) e_i h, the virtual work of gravity);
 *   sd_external_force_at_point: ID with point forces = ID without them - sum J_point^T F (003 Y^T F-bar);
 *   sd_body_acceleration after sd_kinematics(q, u, qdd) = d/dt V(k) along the motion, by the chain
 *   rule: central difference of V(k)(q (+) u h, u) plus V(k)(q, qdd).
 */
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "random_tree.h"
#include "test_util.h"
#include "workspace_read.h"

static double *vec(int n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(double)); }

/* world position of `point` on body k and world orientation at configuration q */
static void body_pose(const sd_model *m, sd_data *d, const double *q, int k, const double point[3], double p[3],
                      double R[9])
{
    sd_kinematics(m, d, q, NULL, NULL);
    const sd_transform X = world_placement(m, d, k);
    sd_transform_point(&X, point, p);
    memcpy(R, X.R, 9 * sizeof(double));
}

static void check_jacobian(const sd_model *m, sd_data *d, uint64_t *rng)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
    double *q = vec(nq), *qp = vec(nq), *qm = vec(nq), *u = vec(nv), *e = vec(nv), *J = vec(6 * nv),
           *Jfd = vec(6 * nv);
    const double h = 1e-6;
    random_state(m, rng, q, u, NULL);
    for (int trial = 0; trial < 3; ++trial) {
        const int k = (int)(sd_random_uniform(rng) * n);
        double point[3];
        random_vector(rng, point, 3, 0.5);
        sd_kinematics(m, d, q, NULL, NULL);
        CHECK(sd_jacobian_world(m, d, k, point, J) == SD_OK);
        for (int i = 0; i < nv; ++i) {
            double pp[3], pm[3], Rp[9], Rm[9], R0[9], p0[3], dR[9], W[9];
            memset(e, 0, (size_t)nv * sizeof(double));
            e[i] = 1.0;
            sd_configuration_integrate(m, q, e, h, qp);
            sd_configuration_integrate(m, q, e, -h, qm);
            body_pose(m, d, qp, k, point, pp, Rp);
            body_pose(m, d, qm, k, point, pm, Rm);
            body_pose(m, d, q, k, point, p0, R0);
            for (int r = 0; r < 9; ++r) dR[r] = (Rp[r] - Rm[r]) / (2 * h);
            sd_m3_mul_t(dR, R0, W); /* dR R^T = [omega_world x] */
            Jfd[0 * nv + i] = 0.5 * (W[7] - W[5]);
            Jfd[1 * nv + i] = 0.5 * (W[2] - W[6]);
            Jfd[2 * nv + i] = 0.5 * (W[3] - W[1]);
            for (int r = 0; r < 3; ++r) Jfd[(3 + r) * nv + i] = (pp[r] - pm[r]) / (2 * h);
        }
        if (!CHECK_ARRAY_CLOSE(J, Jfd, 6 * nv, 1e-7, "sd_jacobian_world vs finite differences"))
            fprintf(stderr, "  body %d (%s hinge)\n", k, sd_hinge_type_name(sd_model_hinge(m, k)));
        /* J u is the twist of sd_kinematics: omega in world axes, and the velocity of the point */
        CHECK(sd_kinematics(m, d, q, u, NULL) == SD_OK);
        double V[6] = {0};
        CHECK(sd_body_velocity(m, d, k, V) == SD_OK);
        const sd_transform X = world_placement(m, d, k);
        double wxp[3], vb[3], expect[6], Ju[6] = {0};
        sd_v3_cross(V, point, wxp);
        for (int r = 0; r < 3; ++r) vb[r] = V[3 + r] + wxp[r];
        sd_m3_mul_v(X.R, V, expect);
        sd_m3_mul_v(X.R, vb, expect + 3);
        for (int r = 0; r < 6; ++r)
            for (int c = 0; c < nv; ++c) Ju[r] += J[r * nv + c] * u[c];
        CHECK_ARRAY_CLOSE(Ju, expect, 6, 1e-12, "J u vs body twist");
        /* columns of hinges off the path to the body are zero */
        int zero_ok = 1;
        for (int c = 0; c < nv; ++c)
            if (!sd_model_is_ancestor(m, sd_model_v_body(m, c), k))
                for (int r = 0; r < 6; ++r)
                    if (J[r * nv + c] != 0.0) zero_ok = 0;
        CHECK(zero_ok);
    }
    CHECK(sd_jacobian_world(m, d, n, (const double[3]){0, 0, 0}, J) == SD_E_ARGUMENT);
    CHECK(sd_jacobian_world(m, d, -1, (const double[3]){0, 0, 0}, J) == SD_E_ARGUMENT);
    free(q); free(qp); free(qm); free(u); free(e); free(J); free(Jfd);
}

static void com_of(const sd_model *m, sd_data *d, const double *q, double c[3])
{
    sd_kinematics(m, d, q, NULL, NULL);
    CHECK(sd_center_of_mass_world(m, d, c) == SD_OK);
}

static void check_com_momentum_energy(const sd_model *m, sd_data *d, uint64_t *rng)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
    double *q = vec(nq), *qp = vec(nq), *qm = vec(nq), *u = vec(nv), *M = vec(nv * nv), *Mu = vec(nv),
           *J = vec(6 * nv);
    random_state(m, rng, q, u, NULL);
    CHECK(sd_kinematics(m, d, q, u, NULL) == SD_OK);
    /* COM: mass-weighted sum */
    double total = 0, sum[3] = {0, 0, 0}, com[3];
    for (int k = 0; k < n; ++k) {
        double c[3];
        const sd_transform X = world_placement(m, d, k);
        sd_transform_point(&X, sd_model_body_com(m, k), c);
        for (int i = 0; i < 3; ++i) sum[i] += sd_model_body_mass(m, k) * c[i];
        total += sd_model_body_mass(m, k);
    }
    CHECK_CLOSE(sd_model_total_mass(m), total, 1e-14);
    for (int i = 0; i < 3; ++i) sum[i] /= total;
    CHECK(sd_center_of_mass_world(m, d, com) == SD_OK);
    CHECK_ARRAY_CLOSE(com, sum, 3, 1e-14, "COM vs mass-weighted sum");
    /* momentum from point Jacobians at each body's COM: linear sum m v_c, angular about the world
     * origin sum (R Ic R^T omega + c x m v_c) */
    double hexp[6] = {0, 0, 0, 0, 0, 0}, h[6];
    for (int k = 0; k < n; ++k) {
        const double mk = sd_model_body_mass(m, k);
        double vc[6] = {0}, c[3], Rw[3], IRw[3], Iw[3], cxl[3], l[3];
        sd_jacobian_world(m, d, k, sd_model_body_com(m, k), J);
        for (int r = 0; r < 6; ++r)
            for (int i = 0; i < nv; ++i) vc[r] += J[r * nv + i] * u[i];
        const sd_transform X = world_placement(m, d, k);
        sd_transform_point(&X, sd_model_body_com(m, k), c);
        sd_m3t_mul_v(X.R, vc, Rw);                   /* omega in body axes */
        sd_m3_mul_v(sd_model_body_inertia(m, k), Rw, IRw);
        sd_m3_mul_v(X.R, IRw, Iw);                   /* R Ic R^T omega */
        for (int i = 0; i < 3; ++i) l[i] = mk * vc[3 + i];
        sd_v3_cross(c, l, cxl);
        for (int i = 0; i < 3; ++i) hexp[i] += Iw[i] + cxl[i], hexp[3 + i] += l[i];
    }
    sd_kinematics(m, d, q, u, NULL);
    CHECK(sd_spatial_momentum_world(m, d, h) == SD_OK);
    CHECK_ARRAY_CLOSE(h, hexp, 6, 1e-12, "spatial momentum vs sum over bodies");
    /* linear momentum = total mass * COM velocity (central differences along q (+) u h) */
    const double hh = 1e-6;
    double cp[3], cm[3], vcom[3];
    sd_configuration_integrate(m, q, u, hh, qp);
    sd_configuration_integrate(m, q, u, -hh, qm);
    com_of(m, d, qp, cp);
    com_of(m, d, qm, cm);
    for (int i = 0; i < 3; ++i) vcom[i] = total * (cp[i] - cm[i]) / (2 * hh);
    CHECK_ARRAY_CLOSE(h + 3, vcom, 3, 1e-7, "linear momentum vs total mass * d/dt COM");
    /* kinetic energy = 1/2 u^T M u */
    CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
    double T = 0;
    for (int i = 0; i < nv; ++i) {
        Mu[i] = 0;
        for (int j = 0; j < nv; ++j) Mu[i] += M[i * nv + j] * u[j];
        T += 0.5 * u[i] * Mu[i];
    }
    sd_kinematics(m, d, q, u, NULL);
    CHECK_CLOSE(kinetic_energy(m, d), T, 1e-12);
    CHECK(kinetic_energy(m, d) >= 0);
    /* a free root: its six rows of M u are the system momentum in the root body frame */
    if (sd_model_hinge(m, 0) == SD_HINGE_FREE) {
        double hroot[6];
        const sd_transform X0 = world_placement(m, d, 0);
        sd_force_to_child(&X0, h, hroot);
        CHECK_ARRAY_CLOSE(Mu, hroot, 6, 1e-12, "free-root rows of M u vs spatial momentum");
    }
    free(q); free(qp); free(qm); free(u); free(M); free(Mu); free(J);
}

static double potential_at(const sd_model *m, sd_data *d, const double *q)
{
    sd_kinematics(m, d, q, NULL, NULL);
    return potential_energy(m, d);
}

/* dPE along each speed direction = C(q, 0) */
static void check_gravity_gradient(const sd_model *m, sd_data *d, uint64_t *rng, int plain_q)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *q = vec(nq), *qp = vec(nq), *qm = vec(nq), *e = vec(nv), *g = vec(nv), *grad = vec(nv);
    const double h = 1e-5;
    random_state(m, rng, q, NULL, NULL);
    CHECK(sd_bias_forces(m, d, q, NULL, NULL, g) == SD_OK);
    for (int i = 0; i < nv; ++i) {
        if (plain_q) { /* 1-dof hinges: coordinates are the speed directions */
            memcpy(qp, q, (size_t)nq * sizeof(double));
            memcpy(qm, q, (size_t)nq * sizeof(double));
            qp[i] += h;
            qm[i] -= h;
        } else {
            memset(e, 0, (size_t)nv * sizeof(double));
            e[i] = 1.0;
            sd_configuration_integrate(m, q, e, h, qp);
            sd_configuration_integrate(m, q, e, -h, qm);
        }
        grad[i] = (potential_at(m, d, qp) - potential_at(m, d, qm)) / (2 * h);
    }
    CHECK_ARRAY_CLOSE(grad, g, nv, 1e-7, plain_q ? "dPE/dq vs C(q, 0)" : "dPE along e_i vs C(q, 0)");
    /* an explicit zero u gives the same as NULL */
    double *g2 = vec(nv);
    memset(e, 0, (size_t)nv * sizeof(double));
    CHECK(sd_bias_forces(m, d, q, e, NULL, g2) == SD_OK);
    CHECK_ARRAY_CLOSE(g2, g, nv, 1e-15, "bias forces at u = 0 vs u = NULL");
    free(q); free(qp); free(qm); free(e); free(g); free(grad); free(g2);
}

static void check_point_forces(const sd_model *m, sd_data *d, uint64_t *rng)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
    double *q = vec(nq), *u = vec(nv), *qdd = vec(nv), *tau0 = vec(nv), *tau1 = vec(nv), *expect = vec(nv),
           *J = vec(6 * nv), *fext = vec(6 * n);
    random_state(m, rng, q, u, qdd);
    CHECK(sd_inverse_dynamics(m, d, q, u, qdd, NULL, tau0) == SD_OK);
    memcpy(expect, tau0, (size_t)nv * sizeof(double));
    sd_kinematics(m, d, q, NULL, NULL);
    for (int f = 0; f < 3; ++f) {
        const int k = (int)(sd_random_uniform(rng) * n);
        double point[3], F[3];
        random_vector(rng, point, 3, 0.5);
        random_vector(rng, F, 3, 3.0);
        CHECK(sd_external_force_at_point(m, d, k, point, F, fext) == SD_OK);
        CHECK(sd_jacobian_world(m, d, k, point, J) == SD_OK);
        for (int i = 0; i < nv; ++i)
            for (int r = 0; r < 3; ++r) expect[i] -= J[(3 + r) * nv + i] * F[r];
    }
    CHECK(sd_inverse_dynamics(m, d, q, u, qdd, fext, tau1) == SD_OK);
    CHECK_ARRAY_CLOSE(tau1, expect, nv, 1e-12, "ID with point forces vs ID - J^T F");
    free(q); free(u); free(qdd); free(tau0); free(tau1); free(expect); free(J); free(fext);
}

static void check_body_acceleration(const sd_model *m, sd_data *d, uint64_t *rng)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
    double *q = vec(nq), *qp = vec(nq), *qm = vec(nq), *u = vec(nv), *qdd = vec(nv), *Vp = vec(6 * n),
           *Vm = vec(6 * n), *Vq = vec(6 * n), *tau = vec(nv);
    const double h = 1e-6;
    random_state(m, rng, q, u, qdd);
    sd_configuration_integrate(m, q, u, h, qp);
    sd_configuration_integrate(m, q, u, -h, qm);
    sd_kinematics(m, d, qp, u, NULL);
    for (int k = 0; k < n; ++k) CHECK(sd_body_velocity(m, d, k, Vp + 6 * k) == SD_OK);
    sd_kinematics(m, d, qm, u, NULL);
    for (int k = 0; k < n; ++k) CHECK(sd_body_velocity(m, d, k, Vm + 6 * k) == SD_OK);
    sd_kinematics(m, d, q, qdd, NULL); /* V is linear in u: this is J_k qdd */
    for (int k = 0; k < n; ++k) CHECK(sd_body_velocity(m, d, k, Vq + 6 * k) == SD_OK);
    CHECK(sd_kinematics(m, d, q, u, qdd) == SD_OK);
    for (int k = 0; k < n; ++k) {
        double acc[6], fd[6];
        CHECK(sd_body_acceleration(m, d, k, acc) == SD_OK);
        for (int r = 0; r < 6; ++r) fd[r] = (Vp[6 * k + r] - Vm[6 * k + r]) / (2 * h) + Vq[6 * k + r];
        if (!CHECK_ARRAY_CLOSE(acc, fd, 6, 1e-7, "body acceleration vs d/dt V"))
            fprintf(stderr, "  body %d (%s hinge)\n", k, sd_hinge_type_name(sd_model_hinge(m, k)));
    }
    /* after inverse dynamics (whose recursion carries gravity in alpha), the reported acceleration
     * is still gravity-free */
    double *acc1 = vec(6 * n);
    for (int k = 0; k < n; ++k) CHECK(sd_body_acceleration(m, d, k, acc1 + 6 * k) == SD_OK);
    CHECK(sd_inverse_dynamics(m, d, q, u, qdd, NULL, tau) == SD_OK);
    for (int k = 0; k < n; ++k) {
        double acc[6];
        CHECK(sd_body_acceleration(m, d, k, acc) == SD_OK);
        CHECK_ARRAY_CLOSE(acc, acc1 + 6 * k, 6, 1e-12, "body acceleration after inverse dynamics");
    }
    free(q); free(qp); free(qm); free(u); free(qdd); free(Vp); free(Vm); free(Vq); free(tau); free(acc1);
}

int main(void)
{
    uint64_t rng = 2024;
    const int sizes[] = {1, 2, 3, 5, 9, 16, 30};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (int trial = 0; trial < 6; ++trial) {
            const int flags = (trial & 1 ? RT_FREE_ROOT : 0) | (trial & 2 ? RT_MASSLESS : 0) |
                              (trial == 2 ? RT_CHAIN : 0) | (trial >= 4 ? RT_ONLY_1DOF : 0);
            sd_model *m = random_tree(&rng, sizes[s], flags);
            sd_data *d = sd_data_new(m);
            const int before = test_failed_count;
            check_jacobian(m, d, &rng);
            check_com_momentum_energy(m, d, &rng);
            check_gravity_gradient(m, d, &rng, 0);
            if ((flags & RT_ONLY_1DOF) && !(flags & RT_FREE_ROOT)) check_gravity_gradient(m, d, &rng, 1);
            check_point_forces(m, d, &rng);
            check_body_acceleration(m, d, &rng);
            if (test_failed_count != before) fprintf(stderr, "  (model of %d bodies, flags %d)\n", sizes[s], flags);
            sd_data_free(d);
            sd_model_free(m);
        }
    return test_summary("test_kinematics");
}
