/*
 * bench/bench_peers.h — soadyn_bench --peers (bench_peers.c): issue 12's table, soadyn beside MuJoCo.
 */
#ifndef SOADYN_BENCH_PEERS_H
#define SOADYN_BENCH_PEERS_H

/* Runs the table mode with bench.c's arguments; returns the exit status. */
int bench_peers(int argc, char **argv);

#endif /* SOADYN_BENCH_PEERS_H */
