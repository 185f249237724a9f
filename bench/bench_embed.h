/*
 * bench/bench_embed.h — soadyn_bench --embed (bench_embed.c): constraint embedding against the
 * tree-augmented method (issue 11, "Cost").
 */
#ifndef SOADYN_BENCH_EMBED_H
#define SOADYN_BENCH_EMBED_H

/* Runs the embedding mode with bench.c's arguments; returns the exit status. */
int bench_embed(int argc, char **argv);

#endif /* SOADYN_BENCH_EMBED_H */
