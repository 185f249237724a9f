/*
 * src/dispatch/cpu_level.h — the level the dispatched entry points run (soadyn/cpu.h), for the rest
 * of the library: the batch layer narrows its SIMD kernel to it, so that SOADYN_CPU fixes the
 * batched results as it fixes the single-state ones.
 */
#ifndef SOADYN_DISPATCH_CPU_LEVEL_H
#define SOADYN_DISPATCH_CPU_LEVEL_H

typedef enum sd_cpu_level_id {
    SD_CPU_BUILD_TARGET = -1, /* no dispatch in this build: its code runs as compiled */
    SD_CPU_BASELINE = 0,      /* any x86-64 (SSE2) */
    SD_CPU_AVX2 = 1,          /* x86-64-v3: AVX2, FMA */
    SD_CPU_AVX512 = 2         /* x86-64-v4: AVX-512 F, BW, CD, DQ, VL */
} sd_cpu_level_id;

/* Chosen once at load (src/dispatch/dispatch.c); constant afterwards. */
sd_cpu_level_id sd_cpu_level_id_active(void);
/* The level, chosen on the first call (dispatch.c's constructor, or dispatch_components.c's if it
 * runs first: the order of two constructors of one library is not defined). */
sd_cpu_level_id sd_dispatch_choose_level(void);

#endif /* SOADYN_DISPATCH_CPU_LEVEL_H */
