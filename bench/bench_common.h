/*
 * bench/bench_common.h — what the benchmark programs share: the model folders' defaults (CMake passes
 * the real ones) and the attribute that keeps a counted function's name for callgrind.
 */
#ifndef SOADYN_BENCH_COMMON_H
#define SOADYN_BENCH_COMMON_H

#ifndef SOADYN_SOURCE_DIR
#define SOADYN_SOURCE_DIR "."
#endif
#ifndef SOADYN_SHARED_MODELS_DIR
#define SOADYN_SHARED_MODELS_DIR SOADYN_SOURCE_DIR "/../shared/models"
#endif

/* The counted functions keep their names (callgrind's --toggle-collect finds them by name). */
#if defined(__GNUC__)
#define BENCH_NOINLINE __attribute__((noinline))
#else
#define BENCH_NOINLINE
#endif

#endif /* SOADYN_BENCH_COMMON_H */
