/*
 * bench/bench_codegen.h — soadyn_bench --codegen (bench_codegen.c): the library beside its generated
 * code (soadyn/codegen.h), same model, same state, same run.
 */
#ifndef SOADYN_BENCH_CODEGEN_H
#define SOADYN_BENCH_CODEGEN_H

/* Runs the codegen mode with bench.c's arguments; returns the exit status. */
int bench_codegen(int argc, char **argv);
/* soadyn_bench --codegen --lanes: the batched forward dynamics through the generated lane form beside
 * the library's SIMD kernel and single-state calls (bench_lanes.c). */
int bench_codegen_lanes(int argc, char **argv);

#endif /* SOADYN_BENCH_CODEGEN_H */
