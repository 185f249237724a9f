/*
 * tests/test_workspace_state.c — what the workspace holds belongs to one state, and the readers know
 * it:
 *   - after sd_forward_dynamics (whose body-frame recursion computes no world placements), world
 *     placements, frame placements and Jacobians equal those after sd_kinematics at the same q;
 *   - a reader of something no call has made current (a fresh workspace, the factors after
 *     sd_mass_matrix, velocities after sd_articulated_inertias, forces after sd_kinematics, the
 *     factors of a mixed forward dynamics) fails with a message naming the call that must come first;
 *     after that call it agrees with an independent computation;
 *   - every call given another model's workspace fails, and every body or frame index -1 or n fails
 *     with the index in the message.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "random_tree.h"
#include "test_util.h"

static double *vec(int n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(double)); }

/* status is SD_E_ARGUMENT and the message holds each of the strings (a NULL-terminated list). */
static void check_refused(sd_status st, const sd_data *d, const char *what, ...)
{
    const char *msg = sd_data_error(d);
    int ok = st == SD_E_ARGUMENT;
    va_list ap;
    va_start(ap, what);
    for (const char *s = va_arg(ap, const char *); s; s = va_arg(ap, const char *)) ok = ok && strstr(msg, s);
    va_end(ap);
    CHECK(ok);
    if (!ok) fprintf(stderr, "  %s: status '%s', message: %s\n", what, sd_status_name(st), msg);
}

static void world_quantities_after_forward_dynamics(uint64_t *rng)
{
    sd_model *m = random_tree(rng, 12, RT_FREE_ROOT);
    sd_data *d = sd_data_new(m);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
    double *q = vec(nq), *u = vec(nv), *tau = vec(nv), *qdd = vec(nv), *J1 = vec(6 * nv), *J2 = vec(6 * nv);
    random_state(m, rng, q, u, tau);
    const double point[3] = {0.1, -0.2, 0.3};
    CHECK(sd_kinematics(m, d, q, NULL, NULL) == SD_OK);
    CHECK(sd_jacobian_world(m, d, n - 1, point, J1) == SD_OK);
    sd_transform *X1 = malloc((size_t)n * sizeof *X1), X2;
    for (int k = 0; k < n; ++k) CHECK(sd_body_placement_world(m, d, k, &X1[k]) == SD_OK);
    double com1[3], com2[3], U1, U2;
    CHECK(sd_center_of_mass_world(m, d, com1) == SD_OK);
    CHECK(sd_potential_energy(m, d, &U1) == SD_OK);
    /* a call at another configuration, then forward dynamics back at q */
    double *q2 = vec(nq);
    random_state(m, rng, q2, NULL, NULL);
    CHECK(sd_kinematics(m, d, q2, NULL, NULL) == SD_OK);
    CHECK(sd_forward_dynamics(m, d, q, u, tau, NULL, qdd) == SD_OK);
    CHECK(sd_jacobian_world(m, d, n - 1, point, J2) == SD_OK);
    double norm = 0;
    for (int i = 0; i < 6 * nv; ++i) norm += J2[i] * J2[i];
    CHECK(norm > 0.1); /* not the zeros of never-computed placements */
    CHECK_ARRAY_CLOSE(J2, J1, 6 * nv, 1e-14, "Jacobian after sd_forward_dynamics vs after sd_kinematics");
    for (int k = 0; k < n; ++k) {
        CHECK(sd_body_placement_world(m, d, k, &X2) == SD_OK);
        CHECK_ARRAY_CLOSE(X2.R, X1[k].R, 9, 1e-14, "world rotation after sd_forward_dynamics");
        CHECK_ARRAY_CLOSE(X2.p, X1[k].p, 3, 1e-14, "world position after sd_forward_dynamics");
    }
    CHECK(sd_center_of_mass_world(m, d, com2) == SD_OK);
    CHECK_ARRAY_CLOSE(com2, com1, 3, 1e-14, "COM after sd_forward_dynamics");
    CHECK(sd_potential_energy(m, d, &U2) == SD_OK);
    CHECK_CLOSE(U2, U1, 1e-14);
    /* accelerations of forward dynamics are those of inverse dynamics at its qdd */
    double a1[6], a2[6];
    CHECK(sd_body_acceleration(m, d, n - 1, a1) == SD_OK);
    CHECK(sd_inverse_dynamics(m, d, q, u, qdd, NULL, tau) == SD_OK);
    CHECK(sd_body_acceleration(m, d, n - 1, a2) == SD_OK);
    CHECK_ARRAY_CLOSE(a1, a2, 6, 1e-10, "body acceleration after FD vs after ID at its qdd");
    free(q); free(q2); free(u); free(tau); free(qdd); free(J1); free(J2); free(X1);
    sd_data_free(d);
    sd_model_free(m);
}

static void frames_after_forward_dynamics(void)
{
    sd_builder *b = sd_builder_new();
    sd_error err;
    sd_body_desc desc;
    sd_body_desc_init(&desc);
    desc.name = "arm";
    desc.hinge = SD_HINGE_REVOLUTE;
    desc.mass = 1.0;
    desc.com[0] = 0.3;
    desc.inertia[0] = desc.inertia[4] = desc.inertia[8] = 0.02;
    CHECK(sd_builder_add_body(b, &desc, &err) == SD_OK);
    sd_transform tool;
    sd_transform_identity(&tool);
    tool.p[0] = 0.6;
    CHECK(sd_builder_add_frame(b, "tool", "arm", &tool, &err) == SD_OK);
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    if (!m) return;
    sd_data *d = sd_data_new(m);
    const double q = 0.7, u = 0.0, tau = 0.0;
    double qdd;
    sd_transform X;
    check_refused(sd_frame_placement_world(m, d, 0, &X), d, "frame placement of a fresh workspace",
                  "sd_frame_placement_world", "sd_kinematics", (const char *)NULL);
    CHECK(sd_forward_dynamics(m, d, &q, &u, &tau, NULL, &qdd) == SD_OK);
    CHECK(sd_frame_placement_world(m, d, 0, &X) == SD_OK);
    CHECK_CLOSE(X.p[0], 0.6 * cos(0.7), 1e-15);
    CHECK_CLOSE(X.p[1], 0.6 * sin(0.7), 1e-15);
    check_refused(sd_frame_placement_world(m, d, 1, &X), d, "frame 1 of 1", "sd_frame_placement_world", "1",
                  (const char *)NULL);
    check_refused(sd_frame_placement_world(m, d, -1, &X), d, "frame -1", "-1", (const char *)NULL);
    sd_data_free(d);
    sd_model_free(m);
}

static void readers_need_their_call(uint64_t *rng)
{
    sd_model *m = random_tree(rng, 9, RT_FREE_ROOT);
    sd_data *d = sd_data_new(m);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
    double *q = vec(nq), *u = vec(nv), *x = vec(nv), *y = vec(nv), *yref = vec(nv), *Minv = vec(nv * nv),
           *qdd = vec(nv), *tau = vec(nv), *M = vec(nv * nv);
    random_state(m, rng, q, u, x);
    double V[6], acc[6], f[6], T;
    sd_transform X;
    /* a fresh workspace holds nothing */
    check_refused(sd_mass_matrix_solve(m, d, x, y), d, "solve on a fresh workspace", "sd_mass_matrix_solve",
                  "sd_articulated_inertias", (const char *)NULL);
    check_refused(sd_innovations_apply(m, d, SD_FACTOR_NE, x, y), d, "factor on a fresh workspace",
                  "sd_innovations_apply", "sd_articulated_inertias", (const char *)NULL);
    check_refused(sd_body_placement_world(m, d, 0, &X), d, "placement on a fresh workspace", "sd_kinematics",
                  (const char *)NULL);
    check_refused(sd_body_velocity(m, d, 0, V), d, "velocity on a fresh workspace", "sd_kinematics",
                  (const char *)NULL);
    check_refused(sd_interbody_force(m, d, 0, SD_FRAME_BODY, f), d, "force on a fresh workspace",
                  "sd_inverse_dynamics", (const char *)NULL);
    /* the mass matrix computes placements only */
    CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
    check_refused(sd_mass_matrix_solve(m, d, x, y), d, "solve after sd_mass_matrix", "sd_articulated_inertias",
                  (const char *)NULL);
    check_refused(sd_body_velocity(m, d, 0, V), d, "velocity after sd_mass_matrix", "sd_kinematics",
                  (const char *)NULL);
    check_refused(sd_kinetic_energy(m, d, &T), d, "energy after sd_mass_matrix", "sd_kinematics",
                  (const char *)NULL);
    CHECK(sd_body_placement_world(m, d, n - 1, &X) == SD_OK);
    /* the factors of sd_articulated_inertias: solve = M^-1 x */
    CHECK(sd_mass_matrix_inverse(m, d, q, Minv) == SD_OK);
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j) yref[i] += Minv[i * nv + j] * x[j];
    CHECK(sd_articulated_inertias(m, d, q) == SD_OK);
    check_refused(sd_body_acceleration(m, d, 0, acc), d, "acceleration after sd_articulated_inertias",
                  "sd_kinematics", (const char *)NULL);
    CHECK(sd_mass_matrix_solve(m, d, x, y) == SD_OK);
    CHECK_ARRAY_CLOSE(y, yref, nv, 1e-10, "sd_mass_matrix_solve after sd_articulated_inertias vs M^-1 x");
    /* forward dynamics leaves the same factors; the solve's scratch leaves no accelerations */
    for (int i = 0; i < nv; ++i) tau[i] = 0.1 * i;
    CHECK(sd_forward_dynamics(m, d, q, u, tau, NULL, qdd) == SD_OK);
    CHECK(sd_body_acceleration(m, d, n - 1, acc) == SD_OK);
    memset(y, 0, (size_t)nv * sizeof(double));
    CHECK(sd_mass_matrix_solve(m, d, x, y) == SD_OK);
    CHECK_ARRAY_CLOSE(y, yref, nv, 1e-10, "sd_mass_matrix_solve after sd_forward_dynamics vs M^-1 x");
    check_refused(sd_body_acceleration(m, d, n - 1, acc), d, "acceleration after sd_mass_matrix_solve",
                  "sd_forward_dynamics", (const char *)NULL);
    /* forward dynamics with a prescribed hinge skips its D(k): no factors of M */
    unsigned char *pres = calloc((size_t)n, 1);
    pres[n - 1] = 1;
    sd_fd_options opt = {0};
    opt.prescribed = pres;
    CHECK(sd_forward_dynamics_ex(m, d, q, u, tau, NULL, qdd, &opt) == SD_OK);
    check_refused(sd_mass_matrix_solve(m, d, x, y), d, "solve after mixed dynamics", "prescribed",
                  (const char *)NULL);
    /* inter-body forces: only from the calls that compute them */
    CHECK(sd_kinematics(m, d, q, u, NULL) == SD_OK);
    check_refused(sd_interbody_force(m, d, 0, SD_FRAME_WORLD, f), d, "force after sd_kinematics",
                  "interbody_forces", (const char *)NULL);
    check_refused(sd_constraint_force_components(m, d, 0, f, NULL, NULL), d, "components after sd_kinematics",
                  "sd_inverse_dynamics", (const char *)NULL);
    CHECK(sd_forward_dynamics(m, d, q, u, tau, NULL, qdd) == SD_OK);
    check_refused(sd_interbody_force(m, d, 0, SD_FRAME_BODY, f), d, "force after plain forward dynamics",
                  "interbody_forces", (const char *)NULL);
    opt.prescribed = NULL;
    opt.interbody_forces = 1;
    CHECK(sd_forward_dynamics_ex(m, d, q, u, tau, NULL, qdd, &opt) == SD_OK);
    CHECK(sd_interbody_force(m, d, n - 1, SD_FRAME_WORLD, f) == SD_OK);
    CHECK(sd_inverse_dynamics(m, d, q, u, qdd, NULL, tau) == SD_OK);
    CHECK(sd_interbody_force(m, d, n - 1, SD_FRAME_JOINT, f) == SD_OK);
    check_refused(sd_interbody_force(m, d, 0, (sd_force_frame)7, f), d, "an unknown frame", "7",
                  (const char *)NULL);
    free(pres);
    free(q); free(u); free(x); free(y); free(yref); free(Minv); free(qdd); free(tau); free(M);
    sd_data_free(d);
    sd_model_free(m);
}

/* Every call given model b and the workspace of model a. The arrays are sized for b. */
static void foreign_workspace(uint64_t *rng)
{
    sd_model *a = random_tree(rng, 5, 0), *b = random_tree(rng, 7, RT_FREE_ROOT);
    sd_data *da = sd_data_new(a);
    const int nq = sd_model_nq(b), nv = sd_model_nv(b), n = sd_model_nbodies(b);
    double *q = vec(nq), *u = vec(nv), *w = vec(nv), *out = vec(nv * nv + 36), *fext = vec(6 * n);
    random_state(b, rng, q, u, w);
    const double zero3[3] = {0, 0, 0};
    double six[6], r;
    sd_transform X;
    sd_fd_options opt = {0};
    const sd_task_frame tf = {0, {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 0, 0}}};
    const struct {
        const char *name;
        sd_status st;
    } calls[] = {
        {"sd_kinematics", sd_kinematics(b, da, q, u, w)},
        {"sd_inverse_dynamics", sd_inverse_dynamics(b, da, q, u, w, NULL, out)},
        {"sd_bias_forces", sd_bias_forces(b, da, q, u, NULL, out)},
        {"sd_mass_matrix", sd_mass_matrix(b, da, q, out)},
        {"sd_forward_dynamics", sd_forward_dynamics(b, da, q, u, w, NULL, out)},
        {"sd_forward_dynamics_ex", sd_forward_dynamics_ex(b, da, q, u, w, NULL, out, &opt)},
        {"sd_forward_dynamics_cholesky", sd_forward_dynamics_cholesky(b, da, q, u, w, NULL, out)},
        {"sd_articulated_inertias", sd_articulated_inertias(b, da, q)},
        {"sd_innovations_apply", sd_innovations_apply(b, da, SD_FACTOR_INV, w, out)},
        {"sd_mass_matrix_solve", sd_mass_matrix_solve(b, da, w, out)},
        {"sd_mass_matrix_inverse", sd_mass_matrix_inverse(b, da, q, out)},
        {"sd_mass_matrix_determinant", sd_mass_matrix_determinant(b, da, q, &r, &r)},
        {"sd_operational_space_compliance", sd_operational_space_compliance(b, da, q, 1, &tf, out)},
        {"sd_operational_space_inertia", sd_operational_space_inertia(b, da, q, 1, &tf, out)},
        {"sd_body_placement_world", sd_body_placement_world(b, da, 0, &X)},
        {"sd_frame_placement_world", sd_frame_placement_world(b, da, 0, &X)},
        {"sd_body_velocity", sd_body_velocity(b, da, 0, six)},
        {"sd_body_acceleration", sd_body_acceleration(b, da, 0, six)},
        {"sd_jacobian_world", sd_jacobian_world(b, da, 0, zero3, out)},
        {"sd_center_of_mass_world", sd_center_of_mass_world(b, da, six)},
        {"sd_spatial_momentum_world", sd_spatial_momentum_world(b, da, six)},
        {"sd_kinetic_energy", sd_kinetic_energy(b, da, &r)},
        {"sd_potential_energy", sd_potential_energy(b, da, &r)},
        {"sd_external_force_at_point", sd_external_force_at_point(b, da, 0, zero3, zero3, fext)},
        {"sd_interbody_force", sd_interbody_force(b, da, 0, SD_FRAME_BODY, six)},
        {"sd_constraint_force_components", sd_constraint_force_components(b, da, 0, six, six, NULL)},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; ++i) {
        const int ok = calls[i].st == SD_E_ARGUMENT;
        CHECK(ok);
        if (!ok) fprintf(stderr, "  %s accepted another model's workspace (status '%s')\n", calls[i].name,
                         sd_status_name(calls[i].st));
    }
    CHECK(strstr(sd_data_error(da), "another model") != NULL);
    free(q); free(u); free(w); free(out); free(fext);
    sd_data_free(da);
    sd_model_free(a);
    sd_model_free(b);
}

static void indices_out_of_range(uint64_t *rng)
{
    sd_model *m = random_tree(rng, 6, 0);
    sd_data *d = sd_data_new(m);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m);
    double *q = vec(nq), *u = vec(nv), *w = vec(nv), *J = vec(6 * nv), *fext = vec(6 * n), six[6];
    random_state(m, rng, q, u, w);
    CHECK(sd_inverse_dynamics(m, d, q, u, w, NULL, J) == SD_OK); /* everything current */
    const double zero3[3] = {0, 0, 0};
    const sd_task_frame bad = {n, {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 0, 0}}};
    char n_text[16];
    snprintf(n_text, sizeof n_text, "%d", n);
    const int idx[2] = {-1, n};
    for (int t = 0; t < 2; ++t) {
        const int k = idx[t];
        const char *text = t ? n_text : "-1";
        sd_transform X;
        check_refused(sd_body_placement_world(m, d, k, &X), d, "sd_body_placement_world", text, (const char *)NULL);
        check_refused(sd_body_velocity(m, d, k, six), d, "sd_body_velocity", text, (const char *)NULL);
        check_refused(sd_body_acceleration(m, d, k, six), d, "sd_body_acceleration", text, (const char *)NULL);
        check_refused(sd_jacobian_world(m, d, k, zero3, J), d, "sd_jacobian_world", text, (const char *)NULL);
        check_refused(sd_external_force_at_point(m, d, k, zero3, zero3, fext), d, "sd_external_force_at_point",
                      text, (const char *)NULL);
        check_refused(sd_interbody_force(m, d, k, SD_FRAME_BODY, six), d, "sd_interbody_force", text,
                      (const char *)NULL);
        check_refused(sd_constraint_force_components(m, d, k, six, six, NULL), d, "sd_constraint_force_components",
                      text, (const char *)NULL);
        check_refused(sd_frame_placement_world(m, d, k, &X), d, "sd_frame_placement_world", text,
                      (const char *)NULL);
        /* model queries answer what no valid index can */
        CHECK(sd_model_body_name(m, k) == NULL && sd_model_parent(m, k) == -1 && sd_model_hinge_nv(m, k) == -1 &&
              sd_model_hinge_nq(m, k) == -1 && isnan(sd_model_body_mass(m, k)) && sd_model_body_com(m, k) == NULL &&
              sd_model_placement(m, k) == NULL && sd_model_frame_name(m, k) == NULL && sd_model_v_body(m, t ? nv : -1) == -1);
    }
    check_refused(sd_operational_space_compliance(m, d, q, 1, &bad, J), d, "task frame body n", n_text,
                  (const char *)NULL);
    free(q); free(u); free(w); free(J); free(fext);
    sd_data_free(d);
    sd_model_free(m);
}

int main(void)
{
    uint64_t rng = 4242;
    world_quantities_after_forward_dynamics(&rng);
    frames_after_forward_dynamics();
    readers_need_their_call(&rng);
    foreign_workspace(&rng);
    indices_out_of_range(&rng);
    return test_summary("test_workspace_state");
}
