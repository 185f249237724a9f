/*
 * bench/timing.h — the clock and the sort order both benchmark programs time with.
 */
#ifndef SOADYN_BENCH_TIMING_H
#define SOADYN_BENCH_TIMING_H

#include <time.h>

/* Monotonic time in nanoseconds. */
static inline double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

/* qsort order of doubles, for medians. */
static inline int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif /* SOADYN_BENCH_TIMING_H */
