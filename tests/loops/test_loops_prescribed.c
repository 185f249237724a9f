/*
 * tests/loops/test_loops_prescribed.c — prescribed hinges on models with closed loops, tree
 * augmentation (sd_closed_loop_options.prescribed; 000 Sec 3 with 000 Sec 4), against the
 * partitioned dense solve: with f the free speeds and p the prescribed ones,
 *     M_ff qdd_f - G_f* lambda = tau_f - C_f - M_fp qdd_p,   G_f qdd_f = -(G_p qdd_p + Gdot u)
 * solved as the descriptor system 000 Eq 44 of the free speeds (loops_oracle.h: Jacobi
 * pseudo-inverses, Gdot u by differences), then tau_p = M_pf qdd_f + M_pp qdd_p + C_p - G_p* lambda.
 * On random rigid trees (the compliance gather on the mixed factors) and random trees mixing rigid
 * and flexible bodies (the dense compliance), constraints of every kind, prescribed hinges drawn at
 * random. And on models/four_bar.urdf (argument: the models folder): the crank prescribed, its
 * torque and the pin force equal sd_constrained_inverse_dynamics' with the crank the only actuator.
 */
#include <soadyn/config.h>
#include <soadyn/urdf.h>

#include "loops/loops_oracle.h"
#include "loops/random_flex_loops.h"
#include "loops/random_loops.h"
#include "random_tree.h"
#include "test_util.h"

static double worst_qdd = 0, worst_tau = 0, worst_lambda = 0, worst_cond = 0;
static int cases = 0, refused = 0, kinds_seen[SD_CONSTRAINT_TYPE_COUNT];

static void check_prescribed(const sd_model *m, uint64_t *rng, const double *q0)
{
    const int nv = sd_model_nv(m), n = sd_model_nbodies(m), nc = sd_model_nconstraint_rows(m);
    sd_data *d = sd_data_new(m), *d2 = sd_data_new(m);
    double *u = calloc((size_t)nv, 8), *tau = calloc((size_t)nv, 8), *tau_out = calloc((size_t)nv, 8),
           *qdd = calloc((size_t)nv, 8), *qdd_p = calloc((size_t)nv, 8), *c = calloc((size_t)nv, 8),
           *M = calloc((size_t)(nv * nv), 8), *G = calloc((size_t)(nc * nv), 8), *gdu = calloc((size_t)nc, 8),
           *lam = calloc((size_t)nc, 8), *lam_o = calloc((size_t)nc, 8), *fext = calloc(6 * (size_t)n, 8),
           *Mff = calloc((size_t)(nv * nv), 8), *Gf = calloc((size_t)(nc * nv), 8), *rhs = calloc((size_t)nv, 8),
           *gdu_f = calloc((size_t)nc, 8), *qf = calloc((size_t)nv, 8), *qdd_o = calloc((size_t)nv, 8),
           *tau_o = calloc((size_t)nv, 8);
    unsigned char *pres = calloc((size_t)n, 1), *held = calloc((size_t)nv, 1);
    int *fi = calloc((size_t)nv, sizeof(int)), nf = 0, np = 0;
    for (int k = 0; k < n; ++k) {
        const int nk = sd_model_hinge_nv(m, k), vk = sd_model_v_index(m, k);
        pres[k] = nk > 0 && sd_random_uniform(rng) < 0.35;
        for (int i = 0; i < nk && pres[k]; ++i) held[vk + i] = 1, ++np;
    }
    for (int j = 0; j < nv; ++j)
        if (!held[j]) fi[nf++] = j;
    /* a consistent velocity, random forces and prescribed accelerations */
    CHECK(sd_constraint_jacobian(m, d2, q0, G) == SD_OK);
    random_vector(rng, u, nv, 1.0);
    project_on_nullspace(G, nc, nv, u);
    random_vector(rng, tau, nv, 2.0);
    random_vector(rng, fext, 6 * n, 1.0);
    /* prescribed accelerations the loops can follow (those of the closed system under other forces),
     * or, one case in five, any (then usually refused, as the dense solve shows) */
    random_vector(rng, qdd_p, nv, 3.0);
    if (sd_random_uniform(rng) < 0.8) {
        random_vector(rng, tau_out, nv, 2.0);
        if (sd_closed_loop_forward_dynamics(m, d, q0, u, tau_out, fext, qdd_p, NULL, NULL) != SD_OK)
            random_vector(rng, qdd_p, nv, 3.0);
    }
    for (int j = 0; j < nv; ++j) qdd[j] = held[j] ? qdd_p[j] : 0.0;
    sd_closed_loop_options opt = {.prescribed = pres, .tau_out = tau_out};
    const sd_status st = sd_closed_loop_forward_dynamics(m, d, q0, u, tau, fext, qdd, lam, &opt);
    /* the partitioned dense solve */
    CHECK(sd_mass_matrix(m, d2, q0, M) == SD_OK);
    CHECK(sd_bias_forces(m, d2, q0, u, fext, c) == SD_OK);
    CHECK(oracle_gdot_u(m, d2, q0, u, 1e-3, gdu));
    for (int a = 0; a < nf; ++a) {
        double s = tau[fi[a]] - c[fi[a]];
        for (int j = 0; j < nv; ++j)
            if (held[j]) s -= M[fi[a] * nv + j] * qdd_p[j];
        rhs[a] = s;
        for (int b = 0; b < nf; ++b) Mff[a * nf + b] = M[fi[a] * nv + fi[b]];
    }
    for (int i = 0; i < nc; ++i) {
        double s = gdu[i];
        for (int j = 0; j < nv; ++j)
            if (held[j]) s += G[i * nv + j] * qdd_p[j];
        gdu_f[i] = s;
        for (int a = 0; a < nf; ++a) Gf[i * nf + a] = G[i * nv + fi[a]];
    }
    double resid, cond;
    int ambiguous;
    oracle_descriptor_solve(Mff, rhs, Gf, gdu_f, nf, nc, qf, lam_o, &resid, &cond, &ambiguous);
    ++cases;
    if (st != SD_OK) { /* prescribed motion the loops cannot follow: the dense solve cannot either */
        ++refused;
        if (!(st == SD_E_SINGULAR && resid > 1e-6))
            fprintf(stderr, "refused (%d): %s; dense residual %.3g, cond %.3g\n", (int)st, sd_data_error(d), resid, cond);
        CHECK(st == SD_E_SINGULAR && resid > 1e-6);
        goto done;
    }
    CHECK(resid < 1e-6);
    for (int j = 0; j < nv; ++j) qdd_o[j] = held[j] ? qdd_p[j] : 0.0;
    for (int a = 0; a < nf; ++a) qdd_o[fi[a]] = qf[a];
    for (int j = 0; j < nv; ++j) { /* tau_p = (M qdd + C - G* lambda)_p; the free ones are tau */
        double s = c[j];
        for (int i = 0; i < nv; ++i) s += M[j * nv + i] * qdd_o[i];
        for (int i = 0; i < nc; ++i) s -= G[i * nv + j] * lam_o[i];
        tau_o[j] = held[j] ? s : tau[j];
    }
    const double tol = test_cond_tolerance(1e-10, cond * 100.0);
    worst_cond = fmax(worst_cond, cond);
    worst_qdd = fmax(worst_qdd, test_rel_diff(qdd, qdd_o, nv));
    worst_tau = fmax(worst_tau, test_rel_diff(tau_out, tau_o, nv));
    CHECK_ARRAY_CLOSE(qdd, qdd_o, nv, tol, "qdd (the prescribed ones kept) vs the partitioned dense solve");
    CHECK_ARRAY_CLOSE(tau_out, tau_o, nv, tol, "tau_out (the prescribed hinges' forces) vs the partitioned solve");
    if (!ambiguous) {
        worst_lambda = fmax(worst_lambda, test_rel_diff(lam, lam_o, nc));
        CHECK_ARRAY_CLOSE(lam, lam_o, nc, tol, "lambda vs the partitioned solve's minimum-norm multipliers");
    }
    (void)np;
done:
    free(u); free(tau); free(tau_out); free(qdd); free(qdd_p); free(c); free(M); free(G); free(gdu); free(lam);
    free(lam_o); free(fext); free(Mff); free(Gf); free(rhs); free(gdu_f); free(qf); free(qdd_o); free(tau_o);
    free(pres); free(held); free(fi);
    sd_data_free(d);
    sd_data_free(d2);
}

/* The four-bar with its crank prescribed: one degree of freedom, so the motion is the crank's and
 * the crank torque is what the inverse dynamics with the crank alone actuated needs. */
static void check_four_bar(const char *models)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/four_bar.urdf", models);
    sd_model *m = NULL;
    sd_error err;
    if (sd_urdf_load_file(path, NULL, &m, &err) != SD_OK) {
        fprintf(stderr, "%s\n", err.message);
        CHECK(0);
        return;
    }
    const int nv = sd_model_nv(m), nc = sd_model_nconstraint_rows(m), crank = sd_model_body_index(m, "crank");
    sd_data *d = sd_data_new(m);
    double q[3] = {0, 0, 0}, u[3] = {2.0, 0, 0}, tau[3] = {0, 0.3, -0.2}, tau_out[3], qdd[3] = {5.0, 0, 0};
    double tau_id[3], lam[5], lam_id[5];
    CHECK(nv == 3 && nc == 5 && crank == 0);
    CHECK(sd_project_velocities(m, d, q, u, u) == SD_OK);
    const double u_crank = u[0];
    for (int j = 0; j < 3; ++j) u[j] *= 2.0 / u_crank; /* crank at 2 rad/s */
    unsigned char pres[3] = {1, 0, 0}, actuated[3] = {1, 0, 0};
    /* the other hinges' torques act too: the ID's unactuated ones are zero, so apply none here */
    tau[1] = tau[2] = 0.0;
    sd_closed_loop_options opt = {.prescribed = pres, .tau_out = tau_out};
    CHECK(sd_closed_loop_forward_dynamics(m, d, q, u, tau, NULL, qdd, lam, &opt) == SD_OK);
    CHECK(qdd[0] == 5.0);
    CHECK(sd_constrained_inverse_dynamics(m, d, q, u, qdd, NULL, actuated, tau_id, lam_id) == SD_OK);
    printf("four_bar, crank prescribed (qdd 5 rad/s^2 at 2 rad/s): crank torque %.12g N m (inverse dynamics "
           "%.12g)\n", tau_out[0], tau_id[0]);
    CHECK_CLOSE(tau_out[0], tau_id[0], 1e-10 * fmax(1.0, fabs(tau_id[0])));
    CHECK_ARRAY_CLOSE(lam, lam_id, nc, 1e-10, "pin force: prescribed forward vs constrained inverse dynamics");
    CHECK(tau_out[1] == 0.0 && tau_out[2] == 0.0);
    /* tau_out is required */
    opt.tau_out = NULL;
    CHECK(sd_closed_loop_forward_dynamics(m, d, q, u, tau, NULL, qdd, lam, &opt) == SD_E_ARGUMENT);
    CHECK(strstr(sd_data_error(d), "tau_out") != NULL);
    sd_data_free(d);
    sd_model_free(m);
}

int main(int argc, char **argv)
{
    uint64_t rng = 0x9e5c41bedULL;
    for (int trial = 0; trial < 60; ++trial) { /* rigid trees: the gather on the mixed factors */
        const int n = 2 + trial % 13;
        const int flags = (trial % 3 == 1 ? RT_FREE_ROOT : 0) | (trial % 5 == 3 ? RT_CHAIN : 0);
        sd_model *tree = random_tree(&rng, n, flags);
        double *q0 = malloc((size_t)sd_model_nq(tree) * sizeof(double));
        sd_configuration_random(tree, &rng, q0);
        sd_model *m = close_randomly(tree, &rng, q0, kinds_seen);
        if (m) check_prescribed(m, &rng, q0);
        sd_model_free(m);
        sd_model_free(tree);
        free(q0);
    }
    const int rigid_cases = cases;
    for (int trial = 0; trial < 30; ++trial) { /* rigid and flexible bodies: the dense compliance */
        random_flex_spec spec = {.n_bodies = 2 + trial % 6, .max_modes = 3, .mode_scale = 0.2};
        spec.flags = (trial % 3 == 1 ? RF_FREE_ROOT : 0) | (trial % 4 == 2 ? RF_CHAIN : 0) |
                     (trial % 7 == 4 ? RF_JOINT_DYNAMICS : 0) | (trial % 2 == 0 ? RF_ON_NODES : 0);
        double *q0 = NULL;
        sd_model *m = random_closed_flex(&rng, &spec, &q0, kinds_seen);
        if (m) check_prescribed(m, &rng, q0);
        sd_model_free(m);
        free(q0);
    }
    printf("cases %d (%d rigid), %d refused as the dense solve (prescribed motion the loops cannot follow); "
           "worst relative: qdd %.2g, tau %.2g, lambda %.2g; largest cond %.2g\n",
           cases, rigid_cases, refused, worst_qdd, worst_tau, worst_lambda, worst_cond);
    CHECK(rigid_cases >= 40 && cases - rigid_cases >= 20 && refused <= cases / 4);
    if (argc > 1 && SOADYN_HAS_IO) check_four_bar(argv[1]);
    else printf("four_bar.urdf not checked: %s\n", argc > 1 ? "no URDF reader (SOADYN_WITH_IO=OFF)" : "no models folder given");
    return test_summary("test_loops_prescribed");
}
