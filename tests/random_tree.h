/*
 * tests/random_tree.h — random models and states for the tests: trees of every hinge type with
 * random placements, axes and inertias, massless intermediate bodies, added in shuffled order so
 * that the builder's parent-first sort is exercised too.
 */
#ifndef SOADYN_TEST_RANDOM_TREE_H
#define SOADYN_TEST_RANDOM_TREE_H

#include <stdint.h>

#include <soadyn/soadyn.h>

enum {
    RT_CHAIN = 1,       /* a serial chain instead of a random tree */
    RT_MASSLESS = 2,    /* some bodies with children are massless */
    RT_FREE_ROOT = 4,   /* the first body hangs from the inertial frame by a free hinge */
    RT_ONLY_1DOF = 8,   /* revolute and prismatic hinges only */
    RT_AXIS_ALIGNED = 16, /* revolute and prismatic axes are +-x, +-y or +-z (the rigid fast path's
                             selecting hinges); the draws, and so the rest of the model, unchanged */
    RT_AXIS_NUDGED = 32,  /* with RT_AXIS_ALIGNED: each such axis tilted by 1e-300, the same physics
                             through the generic-axis path (the reference for the fast one) */
    RT_UNROTATED = 64     /* every placement's rotation is the identity (with RT_AXIS_ALIGNED, the
                             plane kernels' case, sd_plane_axis); the draws unchanged */
};

/* A random model of n bodies; aborts the test on a builder error (which is then a bug). */
sd_model *random_tree(uint64_t *rng, int n, int flags);
/* x[i] uniform in [-scale, scale]. */
void random_vector(uint64_t *rng, double *x, int n, double scale);
/* A random state: q on the manifold, u, and a third vector (tau or qdd), each scaled. */
void random_state(const sd_model *m, uint64_t *rng, double *q, double *u, double *w);

#endif
