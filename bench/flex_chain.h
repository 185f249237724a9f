/*
 * bench/flex_chain.h — 001 Sec 6's model: a serial chain of nbodies flexible bodies on revolute
 * hinges, nm modes each. Body k is a 1 m link along its x axis (1 kg rigid part) with 8 lumped nodes
 * of 0.25 kg at x = 0.125 .. 1 and cantilever shapes w_j(x) = 1 - cos((2j - 1) pi x / 2) bending
 * alternately in the x-y and x-z planes (with the matching slopes as node rotations), stiffness
 * diag(100 (r + 1)^2); body k + 1 rides on body k's tip node. Exits on a builder error.
 */
#ifndef SOADYN_BENCH_FLEX_CHAIN_H
#define SOADYN_BENCH_FLEX_CHAIN_H

#include <soadyn/flex.h>
#include <soadyn/soadyn.h>

enum { BENCH_FLEX_CHAIN_MAX_MODES = 10, BENCH_FLEX_CHAIN_MAX_BODIES = 64 };

/* 1 <= nbodies <= BENCH_FLEX_CHAIN_MAX_BODIES, 1 <= nm <= BENCH_FLEX_CHAIN_MAX_MODES. */
sd_model *bench_flexible_chain(int nbodies, int nm, sd_flex_mass_model mass_model);

#endif
