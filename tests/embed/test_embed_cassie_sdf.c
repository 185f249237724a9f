/*
 * tests/embed/test_embed_cassie_sdf.c — one rank rule for both loop layers (src/loops/rank_rule.h),
 * on ../shared/models/cassie_sdf/cassie_v2.sdf with every loop embedded. Its plantar-rod loops are
 * planar only to the rounding of the file's axes (~7e-8 rad on the right foot): a ball closing
 * them has a third row that is nearly, not exactly, redundant. Judged on different matrices at
 * different thresholds, the embedded split (QR diagonals at 1e-10) found no independent speed in
 * the right plantar loop where the tree-augmented solve (pivoted Cholesky of G M^-1 G*) found
 * mobility 1: the embedded motion was then wrong (qdd relative error 1, a 3e10 N cut force).
 * Checked here, at 40 random consistent states (the tree assembled onto every row by
 * sd_assemble_configuration, speeds projected onto G's null space, random joint forces on every tree
 * joint and external forces):
 *   - the same mobility: the embedded speeds = nv - rank(G) (sd_constraint_rank) at every state,
 *     and the tree-augmented solve's rank is rank(G);
 *   - embedded = tree-augmented: qdd_tree, the multipliers and every body's inter-body force to
 *     1e-10 relative.
 * Usage: test_embed_cassie_sdf <shared models folder>; exits 77 when it is absent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/sdf.h>

#include "embed/embed_compare.h"

int main(int argc, char **argv)
{
    char path[1024];
    const int absent = ec_shared_model(argc, argv, "cassie_sdf/cassie_v2.sdf", path, sizeof path);
    if (absent) return absent;
    sd_model *m = NULL;
    sd_error err;
    if (sd_sdf_load_file(path, NULL, &m, &err) != SD_OK) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        return 1;
    }
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), nc = sd_model_nconstraint_rows(m), nb = sd_model_nbodies(m);
    sd_data *d = sd_data_new(m);
    double *q0 = malloc((size_t)nq * sizeof *q0), *q = malloc((size_t)nq * sizeof *q);
    double *u = malloc((size_t)nv * sizeof *u), *du = malloc((size_t)nv * sizeof *du);
    double *tau = malloc((size_t)nv * sizeof *tau), *fx = calloc((size_t)(6 * nb), sizeof *fx);
    double *G = malloc((size_t)(nc * nv) * sizeof *G), *qdd_ta = malloc((size_t)nv * sizeof *qdd_ta);
    double *qdd_t = malloc((size_t)nv * sizeof *qdd_t), *lam_ta = malloc((size_t)nc * sizeof *lam_ta);
    double *lam_e = malloc((size_t)nc * sizeof *lam_e), *f_ta = malloc((size_t)(6 * nb) * sizeof *f_ta);
    double *f_e = malloc((size_t)(6 * nb) * sizeof *f_e);
    sd_configuration_neutral(m, q0);
    double left = 1.0;
    CHECK(sd_assemble_configuration(m, d, q0, NULL, 1e-13, 100, q0, &left) == SD_OK && left <= 1e-13);

    sd_embed_options o;
    sd_embed_options_init(&o);
    o.loops = "all";
    o.q = q0;
    sd_embedding *e = sd_embedding_new(m, &o, &err);
    CHECK(e != NULL);
    if (!e) {
        fprintf(stderr, "embedding: %s\n", err.message);
        return test_summary("test_embed_cassie_sdf");
    }
    sd_embedded_data *ed = sd_embedded_data_new(e);
    const int ne = sd_embedding_nv(e);
    double *ue = malloc((size_t)(ne + 1) * sizeof *ue), *qdd_e = malloc((size_t)(ne + 1) * sizeof *qdd_e);
    char desc[4096];
    sd_embedding_describe(e, desc, sizeof desc);
    printf("cassie_v2.sdf, all loops embedded: %s\n", desc);

    uint64_t rng = 0xca551e2ULL;
    double worst_qdd = 0.0, worst_lam = 0.0, worst_f = 0.0, worst_gap = 0.0;
    int states = 0, same_mobility = 0;
    for (int s = 0; s < 40; ++s) {
        random_vector(&rng, du, nv, 0.05);
        sd_configuration_integrate(m, q0, du, 1.0, q);
        /* closed on every row the rule keeps; the right plantar loop's out-of-plane gap, which no
         * speed moves once the loop counts as planar, is left where the geometry puts it */
        const sd_status as = sd_assemble_configuration(m, d, q, NULL, 1e-13, 100, q, &left);
        worst_gap = fmax(worst_gap, left);
        if (!(as == SD_OK || (as == SD_E_SINGULAR && strstr(sd_data_error(d), "no free speed moves it"))) ||
            !(left <= 1e-8)) {
            fprintf(stderr, "state %d: assembly left %.3g: %s\n", s, left, sd_data_error(d));
            CHECK(0);
            continue;
        }
        int rank = -1, mobility = -1;
        CHECK(sd_constraint_rank(m, d, q, &rank, &mobility) == SD_OK);
        same_mobility += mobility == ne;
        if (mobility != ne) fprintf(stderr, "state %d: tree-augmented mobility %d, embedded speeds %d\n", s, mobility, ne);
        random_vector(&rng, u, nv, 1.0);
        CHECK(sd_constraint_jacobian(m, d, q, G) == SD_OK);
        project_on_nullspace(G, nc, nv, u);
        random_vector(&rng, tau, nv, 5.0);
        for (int k = 0; k < nb; k += 2) random_vector(&rng, fx + 6 * k, 6, 0.5);

        sd_closed_loop_options copt = {.interbody_forces = 1};
        CHECK(sd_closed_loop_forward_dynamics(m, d, q, u, tau, fx, qdd_ta, lam_ta, &copt) == SD_OK);
        CHECK(sd_closed_loop_rank(d) == rank);
        for (int k = 0; k < nb; ++k) CHECK(sd_interbody_force(m, d, k, SD_FRAME_WORLD, f_ta + 6 * k) == SD_OK);

        sd_embedded_speeds_of_tree(e, u, ue);
        sd_embedded_fd_options eopt = {.interbody_forces = 1, .tau_tree = tau};
        const sd_status st = sd_embedded_forward_dynamics(e, ed, q, ue, NULL, fx, qdd_e, qdd_t, &eopt);
        CHECK(st == SD_OK);
        if (st != SD_OK) {
            fprintf(stderr, "state %d: embedded FD: %s\n", s, sd_embedded_error(ed));
            continue;
        }
        sd_data *td = sd_embedded_tree_data(ed);
        for (int k = 0; k < nb; ++k) CHECK(sd_interbody_force(m, td, k, SD_FRAME_WORLD, f_e + 6 * k) == SD_OK);
        CHECK(sd_embedded_constraint_forces(e, ed, lam_e) == SD_OK);
        const double eq = ec_rel(qdd_t, qdd_ta, nv, 1.0), el = ec_rel(lam_e, lam_ta, nc, 1.0);
        const double ef = ec_rel(f_e, f_ta, 6 * nb, 1.0);
        if (eq >= 1e-10 || el >= 1e-10 || ef >= 1e-10)
            fprintf(stderr, "state %d: embedded vs tree-augmented: qdd %.3g, lambda %.3g, forces %.3g\n", s, eq, el, ef);
        CHECK(eq < 1e-10 && el < 1e-10 && ef < 1e-10);
        worst_qdd = fmax(worst_qdd, eq);
        worst_lam = fmax(worst_lam, el);
        worst_f = fmax(worst_f, ef);
        ++states;
    }
    int rank = -1, mobility = -1;
    CHECK(sd_constraint_rank(m, d, q0, &rank, &mobility) == SD_OK);
    printf("%d states (largest out-of-plane gap left %.2g m): tree nv %d, %d rows, rank %d; embedded speeds %d (the "
           "same mobility at %d of 40); worst relative: qdd %.2g, lambda %.2g, inter-body forces %.2g\n",
           states, worst_gap, nv, nc, rank, ne, same_mobility, worst_qdd, worst_lam, worst_f);
    CHECK(states == 40 && same_mobility == 40);
    CHECK(rank == 10 && ne == nv - 10); /* each plantar loop planar: one of its ball's rows redundant */
    free(ue); free(qdd_e);
    sd_embedded_data_free(ed);
    sd_embedding_free(e);
    free(q0); free(q); free(u); free(du); free(tau); free(fx); free(G); free(qdd_ta); free(qdd_t); free(lam_ta);
    free(lam_e); free(f_ta); free(f_e);
    sd_data_free(d);
    sd_model_free(m);
    return test_summary("test_embed_cassie_sdf");
}
