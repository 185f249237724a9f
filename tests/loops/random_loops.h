/*
 * tests/loops/random_loops.h — random closure constraints of every kind that hold at a given
 * configuration (frames that coincide there, distances and coupling offsets measured there), and
 * velocities that keep them closed.
 */
#ifndef SOADYN_TEST_RANDOM_LOOPS_H
#define SOADYN_TEST_RANDOM_LOOPS_H

#include <stdint.h>

#include <soadyn/embed.h>
#include <soadyn/soadyn.h>

/* The tree `tree` closed by up to four random constraints (at most nv - 1 rows) that hold at q0;
 * NULL if none could be added. kinds_seen (may be NULL) counts the kinds added. Aborts on a
 * builder error (a bug). */
sd_model *close_randomly(const sd_model *tree, uint64_t *rng, const double *q0, int *kinds_seen);
/* The constraints of close_randomly added to a builder that holds the tree's bodies (by the same
 * names); returns how many. */
int add_random_constraints(sd_builder *b, const sd_model *tree, uint64_t *rng, const double *q0, int *kinds_seen);
/* A random nonempty proper subset of m's constraints (m has at least two) as a comma-separated list
 * of names (sd_embed_options.loops) into out. */
void random_loop_subset(const sd_model *m, uint64_t *rng, char *out, size_t size);
/* A random tree of n bodies (random_tree's flags) closed by random loops and every loop embedded at
 * the random configuration they were closed at (into q0 when not NULL: room for the model's nq), its
 * model in *m; NULL (*m NULL) when no loop could be added or the embedding is refused or holds no
 * aggregate. The caller frees both. */
sd_embedding *embed_randomly(uint64_t *rng, int n, int flags, sd_model **m, double *q0);
/* u <- u - G* (G G*)^+ G u (Euclidean projection, written independently of the library's). */
void project_on_nullspace(const double *G, int nc, int nv, double *u);

#endif
