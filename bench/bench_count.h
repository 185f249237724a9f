/*
 * bench/bench_count.h — soadyn_bench --count: instruction counts per call for callgrind (bench_count.c).
 */
#ifndef SOADYN_BENCH_COUNT_H
#define SOADYN_BENCH_COUNT_H

int bench_count(int argc, char **argv);

#endif /* SOADYN_BENCH_COUNT_H */
