/*
 * tests/loops/test_flexible_loops.c — closed loops by tree augmentation (000 Sec 4) on models with
 * flexible bodies, against computations that do not share the closed-loop code:
 *   - random trees mixing rigid and flexible bodies (children riding on nodes, full and linearised
 *     mass models, free roots, joint dynamics) closed by random constraints of every kind: the
 *     checks of closed_loop_check.h (G vs the time derivative of the position residuals, which
 *     see the nodes' deflection through the placements; qdd and lambda vs the dense descriptor
 *     solve of 000 Eq 44 built from the engine's M and C; the equations; the inter-body forces vs
 *     Newton-Euler with the cut-joint forces as external forces);
 *   - the velocity projection: G u+ = 0, and u+ - u = M^-1 G* mu (the kinetic-energy metric);
 *   - models/flexible_four_bar.urdf (argument: the models folder, io component): the same checks at
 *     its assembled pose, its mobility (crank and two modes), and 0.5 s of RK4 with constraint
 *     projection: the loop stays closed, the modal damping only removes energy, the beam bends;
 *     without the damping the energy is conserved to RK4's error.
 */
#include <soadyn/config.h>
#include <soadyn/sim.h>
#include <soadyn/urdf.h>

#include "loops/closed_loop_check.h"
#include "loops/random_flex_loops.h"

static double worst_projection = 0.0;

/* sd_project_velocities against its definition: the result keeps the loops closed and differs
 * from u by M^-1 G* mu (M (u+ - u) in the range of G*, by least squares). */
static void check_projection(const sd_model *m, uint64_t *rng, const double *q0)
{
    const int nv = sd_model_nv(m), nc = sd_model_nconstraint_rows(m);
    sd_data *d = sd_data_new(m);
    double *u = calloc((size_t)nv, 8), *up = calloc((size_t)nv, 8), *M = calloc((size_t)(nv * nv), 8),
           *G = calloc((size_t)(nc * nv), 8), *r = calloc((size_t)nv, 8), *Gr = calloc((size_t)nc, 8),
           *GGt = calloc((size_t)(nc * nc), 8), *mu = calloc((size_t)nc, 8), *vel = calloc((size_t)nc, 8);
    random_vector(rng, u, nv, 1.0);
    CHECK(sd_project_velocities(m, d, q0, u, up) == SD_OK);
    CHECK(sd_constraint_residuals(m, d, q0, up, NULL, vel) == SD_OK);
    double umax = 1.0, vmax = 0.0;
    for (int j = 0; j < nv; ++j) umax = fmax(umax, fabs(u[j]));
    for (int i = 0; i < nc; ++i) vmax = fmax(vmax, fabs(vel[i]));
    CHECK(vmax < 1e-10 * umax);
    CHECK(sd_mass_matrix(m, d, q0, M) == SD_OK);
    CHECK(sd_constraint_jacobian(m, d, q0, G) == SD_OK);
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j) r[i] += M[i * nv + j] * (up[j] - u[j]);
    for (int a = 0; a < nc; ++a) {
        for (int j = 0; j < nv; ++j) Gr[a] += G[a * nv + j] * r[j];
        for (int b = 0; b < nc; ++b)
            for (int j = 0; j < nv; ++j) GGt[a * nc + b] += G[a * nv + j] * G[b * nv + j];
    }
    oracle_pinv_solve(GGt, nc, Gr, mu, 1e-12, 1.0);
    double worst = 0.0, scale = 1e-300;
    for (int j = 0; j < nv; ++j) {
        double s = r[j];
        for (int a = 0; a < nc; ++a) s -= G[a * nv + j] * mu[a];
        worst = fmax(worst, fabs(s));
        scale = fmax(scale, fabs(r[j]));
    }
    if (scale > 1e-12) {
        worst_projection = fmax(worst_projection, worst / scale);
        CHECK(worst <= 1e-8 * scale);
    }
    free(u); free(up); free(M); free(G); free(r); free(Gr); free(GGt); free(mu); free(vel);
    sd_data_free(d);
}

static void check_four_bar(const char *models)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/flexible_four_bar.urdf", models);
    sd_model *m = NULL;
    sd_error err;
    if (sd_urdf_load_file(path, NULL, &m, &err) != SD_OK) {
        fprintf(stderr, "%s\n", err.message);
        CHECK(0);
        return;
    }
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    CHECK(nq == 5 && nv == 5 && sd_model_nflexible(m) == 1);
    double *q0 = calloc((size_t)nq, 8), *u = calloc((size_t)nv, 8);
    sd_data *d = sd_data_new(m);
    int rank = -1, mobility = -1;
    CHECK(sd_constraint_rank(m, d, q0, &rank, &mobility) == SD_OK);
    CHECK(rank == 2 && mobility == 3); /* planar loop: the crank and the two in-plane modes */
    uint64_t rng = 0xf1e4b4ULL;
    check_model(m, &rng, q0);
    check_projection(m, &rng, q0);
    /* RK4 with projection from the crank turning at 3 rad/s */
    sd_sim_options opt;
    sd_sim_options_init(&opt);
    opt.duration = 0.5;
    opt.dt = 5e-4;
    u[0] = 3.0;
    sd_sim_stats stats;
    CHECK(sd_simulate(m, &opt, q0, u, &stats, &err) == SD_OK);
    printf("flexible_four_bar: 0.5 s of RK4: energy %.6f -> %.6f J, loop residuals %.2g (position) %.2g "
           "(velocity), %ld projections, eta = (%.3g, %.3g)\n",
           stats.energy_start, stats.energy_end, stats.max_position_residual, stats.max_velocity_residual,
           stats.projections, q0[2], q0[3]);
    CHECK(stats.max_position_residual < 1e-10 && stats.max_velocity_residual < 1e-10);
    CHECK(stats.energy_end <= stats.energy_start + 1e-6); /* 2% modal damping, no actuation */
    CHECK(fabs(q0[2]) + fabs(q0[3]) > 1e-6);              /* the beam bends */
    free(q0);
    free(u);
    sd_data_free(d);
    sd_model_free(m);
    /* without the modal damping the closed system conserves energy: RK4's error only (dt^4) */
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f) return;
    char *xml = calloc(1 << 16, 1), *cut;
    const size_t len = fread(xml, 1, (1 << 16) - 1, f);
    fclose(f);
    const char *attr = " damping_ratio=\"0.02\"";
    CHECK((cut = strstr(xml, attr)) != NULL);
    if (cut) memmove(cut, cut + strlen(attr), len - (size_t)(cut - xml) - strlen(attr) + 1);
    CHECK(sd_urdf_load_string(xml, strlen(xml), "flexible_four_bar (undamped)", NULL, &m, &err) == SD_OK);
    free(xml);
    if (!m) return;
    q0 = calloc((size_t)nq, 8);
    u = calloc((size_t)nv, 8);
    u[0] = 3.0;
    opt.dt = 1e-4;
    CHECK(sd_simulate(m, &opt, q0, u, &stats, &err) == SD_OK);
    const double drift = (stats.energy_end - stats.energy_start) / stats.energy_start;
    printf("flexible_four_bar undamped: 0.5 s of RK4 at dt 1e-4: energy drift %.2g, eta = (%.3g, %.3g)\n", drift,
           q0[2], q0[3]);
    CHECK(fabs(drift) < 1e-6 && stats.max_position_residual < 1e-10);
    free(q0);
    free(u);
    sd_model_free(m);
}

int main(int argc, char **argv)
{
    uint64_t rng = 0xf1e7100bULL;
    int flexible_cases = 0;
    for (int trial = 0; trial < 48; ++trial) {
        random_flex_spec spec = {.n_bodies = 2 + trial % 6, .max_modes = 3, .mode_scale = 0.2};
        spec.flags = (trial % 3 == 1 ? RF_FREE_ROOT : 0) | (trial % 4 == 2 ? RF_CHAIN : 0) |
                     (trial % 5 == 3 ? RF_MIXED_MASS : 0) | (trial % 7 == 4 ? RF_JOINT_DYNAMICS : 0) |
                     (trial % 2 == 0 ? RF_ON_NODES : 0);
        double *q0 = NULL;
        sd_model *m = random_closed_flex(&rng, &spec, &q0, kinds_seen);
        if (m) {
            flexible_cases += sd_model_nflexible(m) > 0;
            check_model(m, &rng, q0);
            check_projection(m, &rng, q0);
        }
        sd_model_free(m);
        free(q0);
    }
    printf("cases %d (%d with flexible bodies, %d with redundant rows, %d near the rank threshold); kinds:", cases,
           flexible_cases, redundant_cases, ambiguous_cases);
    for (int t = 0; t < SD_CONSTRAINT_TYPE_COUNT; ++t) printf(" %s %d", sd_constraint_type_name(t), kinds_seen[t]);
    printf("\nworst relative: qdd %.2g, lambda %.2g, equations %.2g, inter-body forces %.2g, G vs differences %.2g, "
           "projection %.2g; largest cond(G M^-1 G*) %.2g\n",
           worst_qdd, worst_lambda, worst_eq, worst_force, worst_jac, worst_projection, worst_cond);
    CHECK(cases >= 30 && flexible_cases >= 20 && ambiguous_cases <= cases / 10);
    for (int t = 0; t < SD_CONSTRAINT_TYPE_COUNT; ++t) CHECK(kinds_seen[t] > 0);
    if (argc > 1 && SOADYN_HAS_IO) check_four_bar(argv[1]);
    else printf("flexible_four_bar.urdf not checked: %s\n", argc > 1 ? "no URDF reader (SOADYN_WITH_IO=OFF)" : "no models folder given");
    return test_summary("test_flexible_loops");
}
