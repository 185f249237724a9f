/*
 * tests/loops/random_flex_loops.c — random trees of rigid and flexible bodies closed by random
 * constraints (see random_flex_loops.h).
 */
#include "loops/random_flex_loops.h"

#include <stdio.h>
#include <stdlib.h>

#include "loops/random_loops.h"

/* A random tree of rigid and flexible bodies closed by random constraints that hold at q0 (the
 * same draws give the tree, for the constraints' geometry, and the builder they are added to). */
sd_model *random_closed_flex(uint64_t *rng, const random_flex_spec *spec, double **q0_out, int *kinds_seen)
{
    uint64_t draws = *rng;
    sd_model *tree = random_flex_tree(rng, spec);
    sd_builder *b = random_flex_builder(&draws, spec);
    double *q0 = malloc((size_t)sd_model_nq(tree) * sizeof(double));
    random_flex_state(tree, rng, 0.05, q0, NULL, NULL);
    sd_model *m = NULL;
    sd_error err;
    if (add_random_constraints(b, tree, rng, q0, kinds_seen) > 0 && sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "random_closed_flex: %s\n", err.message);
        abort();
    }
    sd_builder_free(b);
    sd_model_free(tree);
    *q0_out = q0;
    return m;
}
