/*
 * src/batch/lanes_dynamics_avx512.c — the SIMD kernel at 8 states per step: lanes_dynamics.c's text
 * compiled for AVX-512 (F, DQ, VL; src/batch/sources.cmake) under the name sd_lanes_avx512. batch.c
 * chooses it over the 4-lane AVX2 kernel when the processor has those instructions.
 */
#define SD_LANES_WIDTH 8
#define SD_LANES_KERNEL sd_lanes_avx512
#include "lanes_dynamics.c"
