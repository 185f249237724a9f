/*
 * tests/loops/random_flex_loops.h — random trees mixing rigid and flexible bodies (random_flex.h)
 * closed by the random constraints of random_loops.h, which hold at a random q0.
 */
#ifndef SOADYN_TEST_RANDOM_FLEX_LOOPS_H
#define SOADYN_TEST_RANDOM_FLEX_LOOPS_H

#include <stdint.h>

#include "flex/random_flex.h"

/* The closed model (NULL when no constraint could be added) and its q0 (*q0_out, malloc'd, nq;
 * modal coordinates within 0.05); kinds_seen (may be NULL) counts the kinds added. */
sd_model *random_closed_flex(uint64_t *rng, const random_flex_spec *spec, double **q0_out, int *kinds_seen);

#endif
