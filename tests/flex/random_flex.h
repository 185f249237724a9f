/*
 * tests/flex/random_flex.h — random trees mixing rigid bodies (every hinge type) and flexible bodies
 * (1 to max_modes modes, random lumped nodes, masses, rotary inertias, mode shapes, stiffness and
 * damping), children riding on random nodes of flexible parents, full or linearised mass models;
 * and random states with the modal coordinates at a chosen scale. Bodies are added in shuffled
 * order, so the builder's sort is exercised too. Used by tests/flex/test_node_engine.c and
 * test_flex_articulated.c.
 */
#ifndef SOADYN_TEST_RANDOM_FLEX_H
#define SOADYN_TEST_RANDOM_FLEX_H

#include <stdint.h>

#include <soadyn/flex.h>
#include <soadyn/soadyn.h>

enum {
    RF_CHAIN = 1,          /* a serial chain instead of a random tree */
    RF_POINT_MASSES = 2,   /* FE nodes without rotary inertia */
    RF_LINEARISED = 4,     /* every flexible body SD_FLEX_LINEARISED (default: full) */
    RF_MIXED_MASS = 8,     /* each flexible body full or linearised at random */
    RF_NO_DAMPING = 16,    /* D_m = 0 (default: random PSD damping on about half the bodies) */
    RF_FREE_ROOT = 32,     /* the first body hangs from the inertial frame by a free hinge */
    RF_ALL_FLEXIBLE = 64,  /* every body flexible (default: each with probability 1/2) */
    RF_ON_NODES = 128,     /* every child of a flexible body rides on one of its nodes (default: 2/3) */
    RF_NO_RIGID_PART = 256, /* flexible bodies have no rigid part (mass only in the nodes) */
    RF_JOINT_DYNAMICS = 512, /* random armature, joint damping and springs (where the hinge takes one) */
    RF_ALL_RIGID = 1024      /* no flexible body (a rigid model, e.g. for the engine vs the fast path) */
};

typedef struct random_flex_spec {
    int n_bodies;   /* >= 1 */
    int max_modes;  /* flexible bodies get 1 .. max_modes modes */
    int flags;      /* RF_* */
    double mode_scale; /* entries of the mode shapes, uniform in [-scale, scale] (default 0.2) */
} random_flex_spec;

/* A random model; aborts the test on a builder error (which is then a bug). */
sd_model *random_flex_tree(uint64_t *rng, const random_flex_spec *spec);
/* The builder random_flex_tree builds, holding the bodies and their flexible descriptions (the same
 * draws from rng): for a caller that adds to the model (closure constraints) before building. */
sd_builder *random_flex_builder(uint64_t *rng, const random_flex_spec *spec);
/* A random state: q (hinges on the manifold, eta uniform in [-eta_scale, eta_scale]), u (each speed
 * uniform in [-1, 1]) and a third vector w (same); any of u, w may be NULL. */
void random_flex_state(const sd_model *m, uint64_t *rng, double eta_scale, double *q, double *u, double *w);

#endif
