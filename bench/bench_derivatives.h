/*
 * bench/bench_derivatives.h — soadyn_bench --derivatives (bench_derivatives.c): the derivatives' cost
 * beside soadyn's inverse and forward dynamics.
 */
#ifndef SOADYN_BENCH_DERIVATIVES_H
#define SOADYN_BENCH_DERIVATIVES_H

/* Runs the derivatives mode with bench.c's arguments; returns the exit status. */
int bench_derivatives(int argc, char **argv);

#endif /* SOADYN_BENCH_DERIVATIVES_H */
