/*
 * tests/loops/test_closed_loop_dynamics.c — closed-loop forward dynamics (000 Eq 45-46) on random
 * trees of every hinge type closed by random constraints of every kind, against the dense
 * descriptor solve of 000 Eq 44 (the checks of closed_loop_check.h); the constraints are built
 * so that the loops are closed at a random q0 (frames that coincide there, the distance and
 * coupling offset measured there).
 */
#include "loops/closed_loop_check.h"

int main(void)
{
    uint64_t rng = 0x5eed10025ULL;
    for (int trial = 0; trial < 80; ++trial) {
        const int n = 2 + trial % 17;
        const int flags = (trial % 3 == 1 ? RT_FREE_ROOT : 0) | (trial % 4 == 2 ? RT_MASSLESS : 0) |
                          (trial % 5 == 3 ? RT_CHAIN : 0);
        sd_model *tree = random_tree(&rng, n, flags);
        double *q0 = malloc((size_t)sd_model_nq(tree) * sizeof(double));
        sd_configuration_random(tree, &rng, q0);
        sd_model *m = close_randomly(tree, &rng, q0, kinds_seen);
        if (m) check_model(m, &rng, q0);
        sd_model_free(m);
        sd_model_free(tree);
        free(q0);
    }
    printf("cases %d (%d with redundant rows, %d near the rank threshold); kinds:", cases, redundant_cases,
           ambiguous_cases);
    for (int t = 0; t < SD_CONSTRAINT_TYPE_COUNT; ++t) printf(" %s %d", sd_constraint_type_name(t), kinds_seen[t]);
    printf("\nworst relative: qdd %.2g, lambda %.2g, equations %.2g, inter-body forces %.2g, G vs differences %.2g; "
           "largest cond(G M^-1 G*) %.2g\n", worst_qdd, worst_lambda, worst_eq, worst_force, worst_jac, worst_cond);
    CHECK(cases >= 40 && ambiguous_cases <= cases / 10);
    for (int t = 0; t < SD_CONSTRAINT_TYPE_COUNT; ++t) CHECK(kinds_seen[t] > 0);
    return test_summary("test_closed_loop_dynamics");
}
