/*
 * bench/bench_codegen.h — soadyn_bench --codegen (bench_codegen.c): the library beside its generated
 * code (soadyn/codegen.h), same model, same state, same run.
 */
#ifndef SOADYN_BENCH_CODEGEN_H
#define SOADYN_BENCH_CODEGEN_H

#include <stddef.h>

#include <soadyn/model.h>

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

/* Loads the URDF FILE, under the shared models' directory `shared` or the source tree
 * (in_shared 0), with a free base or not, into *m; its path in path (size bytes). 1 when loaded,
 * 0 when the file is absent (*m NULL), -1 when it does not load (said on stderr). */
int bench_codegen_load(const char *shared, const char *file, int in_shared, int floating, sd_model **m, char *path,
                       size_t size);

/* Runs the codegen mode with bench.c's arguments; returns the exit status. */
int bench_codegen(int argc, char **argv);
/* soadyn_bench --codegen --lanes: the batched forward dynamics through the generated lane form beside
 * the library's SIMD kernel and single-state calls (bench_lanes.c). */
int bench_codegen_lanes(int argc, char **argv);

#endif /* SOADYN_BENCH_CODEGEN_H */
