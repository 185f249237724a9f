/*
 * bench/bench_codegen.h — soadyn_bench --codegen (bench_codegen.c): the library beside its generated
 * code (soadyn/codegen.h), same model, same state, same run.
 */
#ifndef SOADYN_BENCH_CODEGEN_H
#define SOADYN_BENCH_CODEGEN_H

/* Where the sources, the shared models and the compiler are (bench/CMakeLists.txt defines them). */
#ifndef SOADYN_SOURCE_DIR
#define SOADYN_SOURCE_DIR "."
#endif
#ifndef SOADYN_SHARED_MODELS_DIR
#define SOADYN_SHARED_MODELS_DIR "../shared/models"
#endif
#ifndef SOADYN_BENCH_BUILD
#define SOADYN_BENCH_BUILD "unknown flags"
#endif
#ifndef SOADYN_BENCH_CC
#define SOADYN_BENCH_CC "cc"
#endif

/* Compiles DIR/SRC.c with `CC cflags -std=c99 -shared -fPIC` into DIR/SO.so and loads it; the handle,
 * or NULL (said on stderr). *cc_s: the compile's wall time. */
void *bench_codegen_compile(const char *dir, const char *src, const char *so, const char *cflags, double *cc_s);

/* Runs the codegen mode with bench.c's arguments; returns the exit status. */
int bench_codegen(int argc, char **argv);
/* soadyn_bench --codegen --lanes: the batched forward dynamics through the generated lane form beside
 * the library's SIMD kernel and single-state calls (bench_lanes.c). */
int bench_codegen_lanes(int argc, char **argv);

#endif /* SOADYN_BENCH_CODEGEN_H */
